//! The one place that decides which algorithm runs a collective call, from the
//! communicator size, the message size and the operation's commutativity, with every
//! threshold and a per-collective forced choice overridable through [`Tuning`].
//!
//! Every rank of a communicator must make the same choice, so decisions only use
//! quantities that MPI requires to agree on all ranks (size, the root's and the
//! senders' type signatures, the operation); the tuning environment must be the same on
//! all ranks (`mpiexec` passes it to every rank).
//!
//! Environment variables read by [`Tuning::from_lookup`] (sizes in bytes; a `k`, `m` or
//! `g` suffix multiplies by 1024, 1024², 1024³):
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `OXMPI_COLL_<COLL>_ALGO` | `auto` | force an algorithm (see below); unsuitable choices fall back to `auto` |
//! | `OXMPI_COLL_BCAST_SHORT_MSG` | 12288 | bcast below this: binomial tree |
//! | `OXMPI_COLL_BCAST_MIN_PROCS` | 8 | bcast on fewer ranks: binomial tree |
//! | `OXMPI_COLL_REDUCE_SHORT_MSG` | 2048 | commutative reduce from this size: Rabenseifner |
//! | `OXMPI_COLL_ALLREDUCE_SHORT_MSG` | 2048 | commutative allreduce from this size: Rabenseifner |
//! | `OXMPI_COLL_ALLREDUCE_LONG_MSG` | 262144 | from this size: ring (non-power-of-two sizes), reduce+bcast (non-commutative) |
//! | `OXMPI_COLL_REDUCE_SCATTER_LONG_MSG` | 524288 | commutative reduce-scatter (total bytes) from this size: ring |
//! | `OXMPI_COLL_GATHER_LONG_MSG` | 65536 | gather with blocks this large: linear |
//! | `OXMPI_COLL_SCATTER_LONG_MSG` | 65536 | scatter with blocks this large: linear |
//! | `OXMPI_COLL_ALLGATHER_SHORT_MSG` | 81920 | allgather total below this: recursive doubling (power of two) or Bruck |
//! | `OXMPI_COLL_ALLGATHER_LONG_MSG` | 524288 | allgather total below this on a power of two: recursive doubling; else ring |
//! | `OXMPI_COLL_ALLTOALL_SHORT_MSG` | 256 | alltoall blocks up to this (and enough ranks): Bruck |
//! | `OXMPI_COLL_ALLTOALL_MEDIUM_MSG` | 32768 | alltoall blocks up to this: linear; larger: pairwise |
//! | `OXMPI_COLL_ALLTOALL_BRUCK_MIN_PROCS` | 8 | fewest ranks for Bruck alltoall |
//! | `OXMPI_COLL_ALLTOALLV_PAIRWISE_MIN_PROCS` | 64 | alltoallv on this many ranks or more: pairwise; fewer: linear |
//!
//! `<COLL>` is one of `BARRIER`, `BCAST`, `REDUCE`, `ALLREDUCE`, `REDUCE_SCATTER_BLOCK`,
//! `REDUCE_SCATTER`, `SCAN`, `EXSCAN`, `GATHER`, `GATHERV`, `SCATTER`, `SCATTERV`,
//! `ALLGATHER`, `ALLGATHERV`, `ALLTOALL`, `ALLTOALLV`; the algorithm names are
//! [`Algorithm::name`]: `dissemination`; `binomial`, `scatter_ring_allgather`;
//! `binomial`, `rabenseifner`; `recursive_doubling`, `rabenseifner`, `ring`,
//! `reduce_bcast`; `recursive_halving`, `ring`, `reduce_scatterv`; `recursive_doubling`;
//! `binomial`, `linear`; `recursive_doubling`, `bruck`, `ring`; `bruck`, `linear`,
//! `pairwise`; `linear`, `pairwise`.

use std::fmt;

use crate::schedule::{build, Algorithm, Collective, Member, Schedule, ScheduleError, Spec};

/// Default of [`Tuning::bcast_short_msg`].
pub const DEFAULT_BCAST_SHORT_MSG: usize = 12288;
/// Default of [`Tuning::bcast_min_procs`].
pub const DEFAULT_BCAST_MIN_PROCS: usize = 8;

const COLLECTIVES: [(Collective, &str); 16] = [
    (Collective::Barrier, "BARRIER"),
    (Collective::Bcast, "BCAST"),
    (Collective::Reduce, "REDUCE"),
    (Collective::Allreduce, "ALLREDUCE"),
    (Collective::ReduceScatterBlock, "REDUCE_SCATTER_BLOCK"),
    (Collective::ReduceScatter, "REDUCE_SCATTER"),
    (Collective::Scan, "SCAN"),
    (Collective::Exscan, "EXSCAN"),
    (Collective::Gather, "GATHER"),
    (Collective::Gatherv, "GATHERV"),
    (Collective::Scatter, "SCATTER"),
    (Collective::Scatterv, "SCATTERV"),
    (Collective::Allgather, "ALLGATHER"),
    (Collective::Allgatherv, "ALLGATHERV"),
    (Collective::Alltoall, "ALLTOALL"),
    (Collective::Alltoallv, "ALLTOALLV"),
];

fn slot(c: Collective) -> usize {
    COLLECTIVES.iter().position(|&(x, _)| x == c).unwrap_or(0)
}

/// Thresholds (bytes unless named `procs`) and forced algorithms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tuning {
    forced: [Option<Algorithm>; 16],
    pub bcast_short_msg: usize,
    pub bcast_min_procs: usize,
    pub reduce_short_msg: usize,
    pub allreduce_short_msg: usize,
    pub allreduce_long_msg: usize,
    pub reduce_scatter_long_msg: usize,
    pub gather_long_msg: usize,
    pub scatter_long_msg: usize,
    pub allgather_short_msg: usize,
    pub allgather_long_msg: usize,
    pub alltoall_short_msg: usize,
    pub alltoall_medium_msg: usize,
    pub alltoall_bruck_min_procs: usize,
    pub alltoallv_pairwise_min_procs: usize,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            forced: [None; 16],
            bcast_short_msg: DEFAULT_BCAST_SHORT_MSG,
            bcast_min_procs: DEFAULT_BCAST_MIN_PROCS,
            reduce_short_msg: 2048,
            allreduce_short_msg: 2048,
            allreduce_long_msg: 262_144,
            reduce_scatter_long_msg: 524_288,
            gather_long_msg: 65_536,
            scatter_long_msg: 65_536,
            allgather_short_msg: 81_920,
            allgather_long_msg: 524_288,
            alltoall_short_msg: 256,
            alltoall_medium_msg: 32_768,
            alltoall_bruck_min_procs: 8,
            alltoallv_pairwise_min_procs: 64,
        }
    }
}

/// A tuning variable with a value that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuningError {
    pub var: String,
    pub value: String,
    pub reason: String,
}

impl fmt::Display for TuningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?}: {}", self.var, self.value, self.reason)
    }
}

impl std::error::Error for TuningError {}

fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (digits, mult) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 1usize << 10),
        b'm' | b'M' => (&s[..s.len() - 1], 1 << 20),
        b'g' | b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(mult)
}

impl Tuning {
    /// Names of the threshold variables, in the order of the fields.
    pub const THRESHOLD_VARS: [&'static str; 14] = [
        "OXMPI_COLL_BCAST_SHORT_MSG",
        "OXMPI_COLL_BCAST_MIN_PROCS",
        "OXMPI_COLL_REDUCE_SHORT_MSG",
        "OXMPI_COLL_ALLREDUCE_SHORT_MSG",
        "OXMPI_COLL_ALLREDUCE_LONG_MSG",
        "OXMPI_COLL_REDUCE_SCATTER_LONG_MSG",
        "OXMPI_COLL_GATHER_LONG_MSG",
        "OXMPI_COLL_SCATTER_LONG_MSG",
        "OXMPI_COLL_ALLGATHER_SHORT_MSG",
        "OXMPI_COLL_ALLGATHER_LONG_MSG",
        "OXMPI_COLL_ALLTOALL_SHORT_MSG",
        "OXMPI_COLL_ALLTOALL_MEDIUM_MSG",
        "OXMPI_COLL_ALLTOALL_BRUCK_MIN_PROCS",
        "OXMPI_COLL_ALLTOALLV_PAIRWISE_MIN_PROCS",
    ];

    fn threshold_mut(&mut self, i: usize) -> &mut usize {
        match i {
            0 => &mut self.bcast_short_msg,
            1 => &mut self.bcast_min_procs,
            2 => &mut self.reduce_short_msg,
            3 => &mut self.allreduce_short_msg,
            4 => &mut self.allreduce_long_msg,
            5 => &mut self.reduce_scatter_long_msg,
            6 => &mut self.gather_long_msg,
            7 => &mut self.scatter_long_msg,
            8 => &mut self.allgather_short_msg,
            9 => &mut self.allgather_long_msg,
            10 => &mut self.alltoall_short_msg,
            11 => &mut self.alltoall_medium_msg,
            12 => &mut self.alltoall_bruck_min_procs,
            _ => &mut self.alltoallv_pairwise_min_procs,
        }
    }

    /// The environment variable that forces `coll`'s algorithm, e.g.
    /// `OXMPI_COLL_ALLREDUCE_ALGO`.
    pub fn algo_var(coll: Collective) -> String {
        format!("OXMPI_COLL_{}_ALGO", COLLECTIVES[slot(coll)].1)
    }

    /// Reads every variable through `lookup` (the core passes `std::env::var`).
    /// Unset variables keep their defaults; the first unusable value is an error.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Tuning, TuningError> {
        let mut t = Tuning::default();
        for (i, var) in Self::THRESHOLD_VARS.iter().enumerate() {
            if let Some(value) = lookup(var) {
                *t.threshold_mut(i) = parse_size(&value).ok_or_else(|| TuningError {
                    var: var.to_string(),
                    value: value.clone(),
                    reason: "expected a non-negative integer, optionally with a k, m or g suffix"
                        .into(),
                })?;
            }
        }
        for (coll, _) in COLLECTIVES {
            let var = Self::algo_var(coll);
            if let Some(value) = lookup(&var) {
                let v = value.trim().to_ascii_lowercase();
                if v == "auto" || v.is_empty() {
                    continue;
                }
                let algo = Algorithm::ALL
                    .iter()
                    .copied()
                    .find(|a| a.collective() == coll && a.name() == v);
                match algo {
                    Some(a) => t.forced[slot(coll)] = Some(a),
                    None => {
                        let known: Vec<&str> = Algorithm::ALL
                            .iter()
                            .filter(|a| a.collective() == coll)
                            .map(|a| a.name())
                            .collect();
                        return Err(TuningError {
                            var,
                            value,
                            reason: format!(
                                "unknown algorithm; expected auto or one of {}",
                                known.join(", ")
                            ),
                        });
                    }
                }
            }
        }
        Ok(t)
    }

    /// Forces `algo` for its collective (where suitable), or `None` for automatic.
    pub fn force(&mut self, coll: Collective, algo: Option<Algorithm>) {
        self.forced[slot(coll)] = algo.filter(|a| a.collective() == coll);
    }

    /// The forced algorithm for `coll`, if any.
    pub fn forced(&self, coll: Collective) -> Option<Algorithm> {
        self.forced[slot(coll)]
    }
}

/// The algorithm to run `spec` on a communicator of `size` ranks: the forced one when
/// suitable, otherwise the table's choice. Always suitable for `spec`.
pub fn choose(t: &Tuning, spec: &Spec<'_>, size: u32) -> Algorithm {
    if let Some(a) = t.forced(spec.collective()) {
        if a.unsuitable(spec, size).is_none() {
            return a;
        }
    }
    automatic(t, spec, size as usize)
}

fn automatic(t: &Tuning, spec: &Spec<'_>, n: usize) -> Algorithm {
    use Algorithm as A;
    let pof2 = if n == 0 {
        1
    } else {
        1usize << (usize::BITS - 1 - n.leading_zeros())
    };
    match *spec {
        Spec::Barrier => A::BarrierDissemination,
        Spec::Bcast { bytes, .. } => {
            if bytes < t.bcast_short_msg || n < t.bcast_min_procs {
                A::BcastBinomial
            } else {
                A::BcastScatterRingAllgather
            }
        }
        Spec::Reduce {
            elems, commutative, ..
        } => {
            let bytes = elems.count.saturating_mul(elems.elem_size);
            if commutative && bytes >= t.reduce_short_msg && elems.count >= pof2 {
                A::ReduceRabenseifner
            } else {
                A::ReduceBinomial
            }
        }
        Spec::Allreduce {
            elems, commutative, ..
        } => {
            let bytes = elems.count.saturating_mul(elems.elem_size);
            if !commutative {
                if bytes >= t.allreduce_long_msg {
                    A::AllreduceReduceBcast
                } else {
                    A::AllreduceRecursiveDoubling
                }
            } else if bytes >= t.allreduce_long_msg && !n.is_power_of_two() && elems.count >= n {
                A::AllreduceRing
            } else if bytes >= t.allreduce_short_msg && elems.count >= pof2 {
                A::AllreduceRabenseifner
            } else {
                A::AllreduceRecursiveDoubling
            }
        }
        Spec::ReduceScatterBlock {
            elems, commutative, ..
        } => {
            let total = elems
                .count
                .saturating_mul(elems.elem_size)
                .saturating_mul(n);
            if !commutative {
                A::ReduceScatterBlockReduceScatterv
            } else if total >= t.reduce_scatter_long_msg {
                A::ReduceScatterBlockRing
            } else {
                A::ReduceScatterBlockRecursiveHalving
            }
        }
        Spec::ReduceScatter {
            counts,
            elem_size,
            commutative,
            ..
        } => {
            let total = counts
                .iter()
                .fold(0usize, |a, &c| a.saturating_add(c))
                .saturating_mul(elem_size);
            if !commutative {
                A::ReduceScatterReduceScatterv
            } else if total >= t.reduce_scatter_long_msg {
                A::ReduceScatterRing
            } else {
                A::ReduceScatterRecursiveHalving
            }
        }
        Spec::Scan { .. } => A::ScanRecursiveDoubling,
        Spec::Exscan { .. } => A::ExscanRecursiveDoubling,
        Spec::Gather { bytes, .. } => {
            if bytes >= t.gather_long_msg {
                A::GatherLinear
            } else {
                A::GatherBinomial
            }
        }
        Spec::Gatherv { .. } => A::GathervLinear,
        Spec::Scatter { bytes, .. } => {
            if bytes >= t.scatter_long_msg {
                A::ScatterLinear
            } else {
                A::ScatterBinomial
            }
        }
        Spec::Scatterv { .. } => A::ScattervLinear,
        Spec::Allgather { bytes, .. } => {
            let total = bytes.saturating_mul(n);
            if total < t.allgather_short_msg {
                if n.is_power_of_two() {
                    A::AllgatherRecursiveDoubling
                } else {
                    A::AllgatherBruck
                }
            } else if total < t.allgather_long_msg && n.is_power_of_two() {
                A::AllgatherRecursiveDoubling
            } else {
                A::AllgatherRing
            }
        }
        Spec::Allgatherv { .. } => A::AllgathervRing,
        Spec::Alltoall { bytes, .. } => {
            if bytes <= t.alltoall_short_msg && n >= t.alltoall_bruck_min_procs {
                A::AlltoallBruck
            } else if bytes <= t.alltoall_medium_msg {
                A::AlltoallLinear
            } else {
                A::AlltoallPairwise
            }
        }
        Spec::Alltoallv { .. } => {
            if n >= t.alltoallv_pairwise_min_procs {
                A::AlltoallvPairwise
            } else {
                A::AlltoallvLinear
            }
        }
    }
}

/// Chooses the algorithm and builds this rank's schedule in one call.
pub fn plan(
    t: &Tuning,
    spec: &Spec<'_>,
    me: Member,
) -> Result<(Algorithm, Schedule), ScheduleError> {
    let algo = choose(t, spec, me.size);
    build(spec, me, algo).map(|s| (algo, s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::Elems;

    #[test]
    fn env_overrides_and_errors() {
        let env = |k: &str| match k {
            "OXMPI_COLL_ALLREDUCE_ALGO" => Some("Ring".to_string()),
            "OXMPI_COLL_BCAST_SHORT_MSG" => Some("64k".to_string()),
            "OXMPI_COLL_BARRIER_ALGO" => Some("auto".to_string()),
            _ => None,
        };
        let t = Tuning::from_lookup(env).unwrap();
        assert_eq!(t.bcast_short_msg, 65536);
        assert_eq!(
            t.forced(Collective::Allreduce),
            Some(Algorithm::AllreduceRing)
        );
        let spec = Spec::Allreduce {
            elems: Elems::new(10, 8),
            commutative: true,
            in_place: false,
        };
        assert_eq!(choose(&t, &spec, 5), Algorithm::AllreduceRing);
        // Unsuitable forced choice (ring needs commutativity) falls back to the table.
        let nc = Spec::Allreduce {
            elems: Elems::new(10, 8),
            commutative: false,
            in_place: false,
        };
        assert_eq!(choose(&t, &nc, 5), Algorithm::AllreduceRecursiveDoubling);

        let bad =
            Tuning::from_lookup(|k| (k == "OXMPI_COLL_GATHER_ALGO").then(|| "tree".to_string()))
                .unwrap_err();
        assert_eq!(bad.var, "OXMPI_COLL_GATHER_ALGO");
        assert!(bad.to_string().contains("binomial, linear"), "{bad}");
        let bad = Tuning::from_lookup(|k| {
            (k == "OXMPI_COLL_ALLGATHER_LONG_MSG").then(|| "-5".to_string())
        })
        .unwrap_err();
        assert!(
            bad.to_string()
                .starts_with("OXMPI_COLL_ALLGATHER_LONG_MSG=\"-5\""),
            "{bad}"
        );
    }

    #[test]
    fn table_choices() {
        let t = Tuning::default();
        let e = |count| Elems::new(count, 8);
        let ar = |count, commutative| Spec::Allreduce {
            elems: e(count),
            commutative,
            in_place: false,
        };
        assert_eq!(
            choose(&t, &ar(4, true), 8),
            Algorithm::AllreduceRecursiveDoubling
        );
        assert_eq!(
            choose(&t, &ar(4096, true), 8),
            Algorithm::AllreduceRabenseifner
        );
        assert_eq!(choose(&t, &ar(1 << 20, true), 6), Algorithm::AllreduceRing);
        assert_eq!(
            choose(&t, &ar(1 << 20, true), 8),
            Algorithm::AllreduceRabenseifner
        );
        assert_eq!(
            choose(&t, &ar(4096, false), 8),
            Algorithm::AllreduceRecursiveDoubling
        );
        assert_eq!(
            choose(&t, &ar(1 << 20, false), 8),
            Algorithm::AllreduceReduceBcast
        );
        let ag = |bytes| Spec::Allgather {
            bytes,
            in_place: false,
        };
        assert_eq!(choose(&t, &ag(8), 8), Algorithm::AllgatherRecursiveDoubling);
        assert_eq!(choose(&t, &ag(8), 7), Algorithm::AllgatherBruck);
        assert_eq!(choose(&t, &ag(1 << 20), 8), Algorithm::AllgatherRing);
        let bc = |bytes| Spec::Bcast { root: 0, bytes };
        assert_eq!(choose(&t, &bc(100), 16), Algorithm::BcastBinomial);
        assert_eq!(
            choose(&t, &bc(1 << 20), 16),
            Algorithm::BcastScatterRingAllgather
        );
        assert_eq!(choose(&t, &bc(1 << 20), 4), Algorithm::BcastBinomial);
        let a2a = |bytes| Spec::Alltoall {
            bytes,
            in_place: false,
        };
        assert_eq!(choose(&t, &a2a(8), 16), Algorithm::AlltoallBruck);
        assert_eq!(choose(&t, &a2a(8), 4), Algorithm::AlltoallLinear);
        assert_eq!(choose(&t, &a2a(1 << 20), 4), Algorithm::AlltoallPairwise);
        for a in Algorithm::ALL {
            assert!(Tuning::algo_var(a.collective()).starts_with("OXMPI_COLL_"));
        }
        assert_eq!(
            Tuning::algo_var(Collective::ReduceScatterBlock),
            "OXMPI_COLL_REDUCE_SCATTER_BLOCK_ALGO"
        );
    }
}
