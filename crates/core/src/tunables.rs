//! The tunables registry as the engine uses it: everything of `oxmpi_tunables` (the
//! declarations of every `OXMPI_*` variable and the one parser, re-exported here so that
//! `crate::tunables` names them), plus what is the engine's own: the conversion of a bad
//! value into the error `MPI_Init` returns, and the collective decision table's
//! [`Tuning`] filled from validated [`Settings`] ([`coll_tuning`]).
//!
//! The registry is plain data; the tests here keep the limits, defaults and words it
//! mirrors from the engine (the TCP transport's largest eager message, the decision
//! table's defaults and algorithm names, the words `Policy::parse` and `Bind::parse`
//! take) equal to the engine's.

pub use oxmpi_tunables::*;

use crate::error::{Error, ErrorClass};
use oxmpi_coll::decision::Tuning;
use oxmpi_coll::schedule::Algorithm;

impl From<TunableError> for Error {
    fn from(e: TunableError) -> Error {
        Error::new(ErrorClass::Other, e.to_string())
    }
}

/// The collective decision table's tuning from validated settings: thresholds, forced
/// algorithms and the limits of the shared-memory path.
pub fn coll_tuning(s: &Settings) -> Tuning {
    let mut t = Tuning::DEFAULT;
    let n = |id: Id| s.size(id).unwrap_or(0);
    t.bcast_short_msg = n(Id::CollBcastShortMsg);
    t.bcast_min_procs = n(Id::CollBcastMinProcs);
    t.reduce_short_msg = n(Id::CollReduceShortMsg);
    t.allreduce_short_msg = n(Id::CollAllreduceShortMsg);
    t.allreduce_long_msg = n(Id::CollAllreduceLongMsg);
    t.reduce_scatter_long_msg = n(Id::CollReduceScatterLongMsg);
    t.gather_long_msg = n(Id::CollGatherLongMsg);
    t.scatter_long_msg = n(Id::CollScatterLongMsg);
    t.allgather_short_msg = n(Id::CollAllgatherShortMsg);
    t.allgather_long_msg = n(Id::CollAllgatherLongMsg);
    t.alltoall_short_msg = n(Id::CollAlltoallShortMsg);
    t.alltoall_medium_msg = n(Id::CollAlltoallMediumMsg);
    t.alltoall_bruck_min_procs = n(Id::CollAlltoallBruckMinProcs);
    t.alltoallv_pairwise_min_procs = n(Id::CollAlltoallvPairwiseMinProcs);
    // A forced algorithm: the registry has validated the name against its collective's.
    for &a in Algorithm::ALL {
        let coll = a.collective();
        let forced = Id::find(&Tuning::algo_var(coll)).and_then(|id| s.text(id));
        if forced.as_deref() == Some(a.name()) {
            t.force(coll, Some(a));
        }
    }
    t.shm_enabled = s.flag(Id::CollShm).unwrap_or(Tuning::DEFAULT.shm_enabled);
    t.shm_max = n(Id::CollShmMax);
    t.shm_large_any_load = s.is_set(Id::CollShmLargeMax);
    t.shm_large_max = s
        .size(Id::CollShmLargeMax)
        .unwrap_or(Tuning::DEFAULT.shm_large_max);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::stream_stores::Policy;
    use crate::placement::Bind;
    use oxmpi_coll::decision::SHM_SLOT;
    use oxmpi_coll::schedule::Collective;

    #[test]
    fn a_bad_value_is_an_mpi_error() {
        let e = Settings::from_lookup(lookup_in(&[("OXMPI_COLL_SHM", "2")])).unwrap_err();
        let engine: Error = e.into();
        assert_eq!(engine.class, ErrorClass::Other);
        assert!(
            engine.message.starts_with("OXMPI_COLL_SHM=\"2\": "),
            "{}",
            engine.message
        );
    }

    #[test]
    fn the_registry_mirrors_the_engine_limits() {
        assert_eq!(
            Id::TcpEagerLimit.tunable().kind,
            Kind::Bytes {
                min: 0,
                max: crate::transport::tcp::MAX_EAGER as u64
            }
        );
        assert_eq!(
            Id::CollShmMax.tunable().kind,
            Kind::Bytes {
                min: 0,
                max: SHM_SLOT as u64
            }
        );
        assert_eq!(
            Id::CollShm.tunable().default,
            Initial::Bool(Tuning::DEFAULT.shm_enabled)
        );
        // Every threshold's default is the decision table's.
        assert_eq!(coll_tuning(&Settings::defaults()), Tuning::DEFAULT);
    }

    #[test]
    fn the_registry_words_are_the_parsers_words() {
        let words = |id: Id| match id.tunable().kind {
            Kind::Choice(w) => w,
            k => panic!("{}: {k:?}", id.name()),
        };
        // Every word the registry accepts parses, and other words (near ones, and the
        // other variable's) are refused by both.
        for w in words(Id::ShmStreamStores) {
            assert!(Policy::parse(w).is_some(), "{w}");
        }
        for w in words(Id::Bind) {
            assert!(Bind::parse(w).is_some(), "{w}");
        }
        let accepts = |id: Id, w: &str| matches!(id.tunable().parse(w), Ok(Some(_)));
        let others = [
            "x",
            "yes",
            "1",
            "on",
            "non_temporal",
            "blocks",
            "cache",
            "nt2",
        ];
        for w in others
            .iter()
            .chain(words(Id::Bind))
            .chain(words(Id::ShmStreamStores))
        {
            assert_eq!(
                Policy::parse(w).is_some(),
                accepts(Id::ShmStreamStores, w),
                "{w}"
            );
            assert_eq!(Bind::parse(w).is_some(), accepts(Id::Bind, w), "{w}");
        }
        for (id, all) in [
            (
                Id::ShmStreamStores,
                ["cached", "nt", "non-temporal"].as_slice(),
            ),
            (Id::Bind, ["block", "none", "auto", "off", "0"].as_slice()),
        ] {
            assert_eq!(words(id), all);
        }
        assert_eq!(
            Policy::parse("nt"),
            Policy::parse("non-temporal"),
            "nt is short for non-temporal"
        );
        assert_eq!(Bind::parse("auto"), Some(Bind::Block));
        assert_eq!(Bind::parse("off"), Some(Bind::None));
    }

    #[test]
    fn every_collective_has_its_algorithm_names() {
        let mut seen = Vec::new();
        for a in Algorithm::ALL {
            let c = a.collective();
            if seen.contains(&c) {
                continue;
            }
            seen.push(c);
            let want = Tuning::algo_var(c);
            let t = find(&want).unwrap_or_else(|| panic!("{want} not declared"));
            let names: Vec<&str> = Algorithm::ALL
                .iter()
                .filter(|x| x.collective() == c)
                .map(|x| x.name())
                .collect();
            let Kind::Algorithm { call, names: got } = t.kind else {
                panic!("{want}: {:?}", t.kind);
            };
            assert_eq!(call, c.name(), "{want}");
            assert_eq!(got, names.as_slice(), "{want}");
        }
        let declared = ALL
            .iter()
            .filter(|t| matches!(t.kind, Kind::Algorithm { .. }))
            .count();
        assert_eq!(declared, seen.len());
    }

    #[test]
    fn collective_settings_fill_the_decision_table() {
        let s = Settings::from_lookup(lookup_in(&[
            ("OXMPI_COLL_ALLREDUCE_ALGO", "Ring"),
            ("OXMPI_COLL_BARRIER_ALGO", "auto"),
            ("OXMPI_COLL_REDUCE_SCATTER_ALGO", "ring"),
            ("OXMPI_COLL_BCAST_SHORT_MSG", "64k"),
            ("OXMPI_COLL_SHM", "0"),
            ("OXMPI_COLL_SHM_MAX", "512"),
        ]))
        .unwrap();
        let t = coll_tuning(&s);
        assert_eq!(t.bcast_short_msg, 65536);
        assert_eq!(
            t.forced(Collective::Allreduce),
            Some(Algorithm::AllreduceRing)
        );
        // The same name forces only its own collective's algorithm.
        assert_eq!(
            t.forced(Collective::ReduceScatter),
            Some(Algorithm::ReduceScatterRing)
        );
        assert_eq!(t.forced(Collective::ReduceScatterBlock), None);
        assert_eq!(t.forced(Collective::Barrier), None);
        assert!(!t.shm_enabled);
        assert_eq!(t.shm_max, 512);
        assert!(!t.shm_large_any_load);
        assert_eq!(t.shm_large_max, Tuning::DEFAULT.shm_large_max);
        assert!(Settings::from_lookup(lookup_in(&[("OXMPI_COLL_SHM_MAX", "4096")])).is_err());

        let s = Settings::from_lookup(lookup_in(&[("OXMPI_COLL_SHM_LARGE_MAX", "0")])).unwrap();
        let t = coll_tuning(&s);
        assert!(t.shm_large_any_load);
        assert_eq!(t.shm_large_max, 0);

        // Each threshold variable moves exactly its own field.
        let base = format!("{:?}", Tuning::DEFAULT);
        for d in ALL.iter().filter(|d| {
            d.category == Category::Coll
                && !d.name.starts_with("OXMPI_COLL_SHM")
                && matches!(d.kind, Kind::Int { .. } | Kind::Bytes { .. })
        }) {
            let s = Settings::from_lookup(lookup_in(&[(d.name, "12345")])).unwrap();
            let got = format!("{:?}", coll_tuning(&s));
            assert_ne!(got, base, "{} moved nothing", d.name);
            let changed = got
                .split(", ")
                .zip(base.split(", "))
                .filter(|(a, b)| a != b)
                .count();
            assert_eq!(changed, 1, "{}: {got}", d.name);
        }
    }
}
