//! The one place that decides which algorithm runs a collective call, from the
//! communicator size, the message size and the operation's commutativity, with every
//! threshold and a per-collective forced choice overridable through [`Tuning`].
//!
//! Every rank of a communicator must make the same choice, so decisions only use
//! quantities that MPI requires to agree on all ranks (size, the root's and the
//! senders' type signatures, the operation); the tuning environment must be the same on
//! all ranks (`mpiexec` passes it to every rank).
//!
//! The thresholds and forced choices are plain data here; the environment variables
//! that set them (`OXMPI_COLL_<COLL>_ALGO`, `OXMPI_COLL_*_MSG`, `OXMPI_COLL_*_PROCS`,
//! `OXMPI_COLL_SHM*`) are declared and parsed by the core's tunables registry
//! (`oxmpi_core::tunables`), which fills a [`Tuning`]. The defaults are
//! [`Tuning::DEFAULT`].
//!
//! The shared-memory path of single-node communicators is part of the same table:
//! [`choose_shm`] says whether a call runs through the communicator's shared segment
//! and which of its variants ([`ShmPath`]) moves the data; the point-to-point schedules
//! of [`choose`] run otherwise.

use crate::schedule::{build, Algorithm, Collective, Member, Schedule, ScheduleError, Spec};

/// Default of [`Tuning::bcast_short_msg`].
pub const DEFAULT_BCAST_SHORT_MSG: usize = 12288;
/// Default of [`Tuning::bcast_min_procs`].
pub const DEFAULT_BCAST_MIN_PROCS: usize = 8;

/// Bytes of one member's slot in a communicator's shared segment: the largest
/// per-rank contribution (per-rank total for Scatter and Alltoall) the slots carry.
pub const SHM_SLOT: usize = 2048;
/// Largest communicator that uses the shared-memory path.
pub const SHM_MAX_MEMBERS: usize = 64;
/// Bytes of each member's staging area for calls larger than a slot.
pub const SHM_STAGE: usize = 128 * 1024;
/// Bytes of a piece of the pipelined two-member Reduce (a quarter of a staging area).
pub const SHM_PIPELINE_PIECE: usize = SHM_STAGE / 4;

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

/// Thresholds (bytes unless named `procs`), forced algorithms and the limits of the
/// shared-memory path.
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
    /// The shared-memory path is used at all (`OXMPI_COLL_SHM`).
    pub shm_enabled: bool,
    /// Largest per-rank contribution carried by the slots (bytes, at most [`SHM_SLOT`];
    /// `OXMPI_COLL_SHM_MAX`).
    pub shm_max: usize,
    /// Largest Bcast/Reduce/Allreduce vector (Alltoall: all of a member's blocks)
    /// moved through the staging areas (bytes; 0 disables them;
    /// `OXMPI_COLL_SHM_LARGE_MAX`).
    pub shm_large_max: usize,
    /// The staging areas serve calls at any load (`OXMPI_COLL_SHM_LARGE_MAX` was set).
    /// By default they serve only oversubscribed nodes and the pipelined two-member
    /// Reduce; with a core per rank the point-to-point schedules over the pipelined
    /// rings move large vectors faster.
    pub shm_large_any_load: bool,
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning::DEFAULT
    }
}

impl Tuning {
    /// Every threshold at its default, no forced algorithm.
    pub const DEFAULT: Tuning = Tuning {
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
        shm_enabled: true,
        shm_max: SHM_SLOT,
        shm_large_max: 1 << 20,
        shm_large_any_load: false,
    };

    /// The environment variable that forces `coll`'s algorithm, e.g.
    /// `OXMPI_COLL_ALLREDUCE_ALGO`.
    pub fn algo_var(coll: Collective) -> String {
        format!("OXMPI_COLL_{}_ALGO", COLLECTIVES[slot(coll)].1)
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

/// How a call that takes the shared-memory path moves its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShmPath {
    /// Through the members' slots in one step (the contribution fits [`SHM_SLOT`]).
    Slots,
    /// Bcast, Reduce, Allreduce, Alltoall through the staging areas in pieces of at
    /// most [`SHM_STAGE`] bytes (all blocks of an Alltoall together).
    Staged,
    /// Reduce on two members: the non-root copies pieces of [`SHM_PIPELINE_PIECE`]
    /// bytes while the root folds them.
    PipelinedReduce,
}

/// A call on a single-node communicator, as the shared-memory rows of the table see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShmCall {
    pub collective: Collective,
    /// Bytes of one rank's contribution (for Scatter and Alltoall: one block).
    pub bytes: usize,
    /// Bytes of one element (reductions split vectors only between elements).
    pub elem: usize,
    /// Members of the communicator.
    pub size: usize,
    /// More ranks on the node than CPUs (every member reaches the same answer).
    pub oversubscribed: bool,
}

/// The collectives with a shared-memory variant.
pub fn has_shm(c: Collective) -> bool {
    matches!(
        c,
        Collective::Barrier
            | Collective::Bcast
            | Collective::Reduce
            | Collective::Allreduce
            | Collective::Scan
            | Collective::Exscan
            | Collective::Allgather
            | Collective::Gather
            | Collective::Scatter
            | Collective::Alltoall
    )
}

/// Bytes a member's slot must hold for `c` with blocks of `bytes` on `n` members.
#[inline]
pub fn shm_slot_bytes(c: Collective, bytes: usize, n: usize) -> usize {
    match c {
        Collective::Scatter | Collective::Alltoall => bytes.saturating_mul(n),
        _ => bytes,
    }
}

/// The collectives whose vectors may move through the staging areas.
#[inline]
pub fn has_shm_staged(c: Collective) -> bool {
    matches!(
        c,
        Collective::Bcast | Collective::Reduce | Collective::Allreduce | Collective::Alltoall
    )
}

/// Whether a large Reduce on `n` members with elements of `elem` bytes is pipelined.
#[inline]
pub fn shm_pipelined_reduce(n: usize, elem: usize) -> bool {
    n == 2 && elem.max(1) <= SHM_PIPELINE_PIECE
}

/// The variant that moves a call the table sent down the shared-memory path: the
/// slots when the contribution fits one, else the staging areas (pipelined for a
/// two-member Reduce).
#[inline]
pub fn shm_path(c: Collective, bytes: usize, elem: usize, n: usize) -> ShmPath {
    if shm_slot_bytes(c, bytes, n) <= SHM_SLOT {
        ShmPath::Slots
    } else if c == Collective::Reduce && shm_pipelined_reduce(n, elem) {
        ShmPath::PipelinedReduce
    } else {
        ShmPath::Staged
    }
}

/// The shared-memory rows of the table: whether `call` on a communicator whose members
/// all share this node runs through its shared segment (and how), or `None` for the
/// point-to-point schedules of [`choose`].
///
/// - off with `shm_enabled` false, below two members or above [`SHM_MAX_MEMBERS`], and
///   for collectives without a shared-memory variant;
/// - the slots take contributions up to `shm_max` (at most [`SHM_SLOT`]);
/// - Bcast, Reduce, Allreduce and Alltoall up to `shm_large_max` (elements of at most
///   [`SHM_STAGE`] bytes) go through the staging areas on oversubscribed nodes, at any
///   load when `shm_large_any_load`, and for a two-member Reduce always (pipelined).
#[inline]
pub fn choose_shm(t: &Tuning, call: &ShmCall) -> Option<ShmPath> {
    let (c, n) = (call.collective, call.size);
    if !t.shm_enabled || !has_shm(c) || !(2..=SHM_MAX_MEMBERS).contains(&n) {
        return None;
    }
    let slots = t.shm_max.min(SHM_SLOT);
    let staged = has_shm_staged(c)
        && shm_slot_bytes(c, call.elem, n) <= SHM_STAGE
        && (call.oversubscribed
            || t.shm_large_any_load
            || c == Collective::Reduce && shm_pipelined_reduce(n, call.elem));
    let limit = if staged {
        t.shm_large_max.max(slots)
    } else {
        slots
    };
    if shm_slot_bytes(c, call.bytes, n) > limit {
        return None;
    }
    Some(shm_path(c, call.bytes, call.elem, n))
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
    fn forced_choices_and_moved_thresholds() {
        let mut t = Tuning {
            bcast_short_msg: 65536,
            ..Tuning::default()
        };
        t.force(Collective::Allreduce, Some(Algorithm::AllreduceRing));
        // A choice for another collective is refused.
        t.force(Collective::Bcast, Some(Algorithm::AllreduceRing));
        assert_eq!(t.forced(Collective::Bcast), None);
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
        let bc = |bytes| Spec::Bcast { root: 0, bytes };
        assert_eq!(choose(&t, &bc(32768), 16), Algorithm::BcastBinomial);
        assert_eq!(
            choose(&Tuning::default(), &bc(32768), 16),
            Algorithm::BcastScatterRingAllgather
        );
    }

    fn shm(c: Collective, bytes: usize, elem: usize, size: usize, over: bool) -> ShmCall {
        ShmCall {
            collective: c,
            bytes,
            elem,
            size,
            oversubscribed: over,
        }
    }

    #[test]
    fn shm_rows() {
        use Collective as C;
        let t = Tuning::default();
        let slots = Some(ShmPath::Slots);
        // Small calls of every collective with a shared-memory variant use the slots.
        for c in [
            C::Barrier,
            C::Bcast,
            C::Reduce,
            C::Allreduce,
            C::Scan,
            C::Exscan,
            C::Allgather,
            C::Gather,
            C::Scatter,
            C::Alltoall,
        ] {
            assert_eq!(choose_shm(&t, &shm(c, 8, 8, 4, false)), slots, "{c:?}");
            assert_eq!(choose_shm(&t, &shm(c, 8, 8, 2, false)), slots, "{c:?}");
            assert_eq!(choose_shm(&t, &shm(c, 8, 8, 64, true)), slots, "{c:?}");
            // One member, or more than the segment has slots for: point-to-point.
            assert_eq!(choose_shm(&t, &shm(c, 8, 8, 1, false)), None, "{c:?}");
            assert_eq!(choose_shm(&t, &shm(c, 8, 8, 65, false)), None, "{c:?}");
        }
        for c in [
            C::Gatherv,
            C::Scatterv,
            C::Allgatherv,
            C::Alltoallv,
            C::ReduceScatter,
            C::ReduceScatterBlock,
        ] {
            assert_eq!(choose_shm(&t, &shm(c, 8, 8, 4, false)), None, "{c:?}");
        }
        // The slot limit is per rank, and per rank total for Scatter and Alltoall.
        assert_eq!(choose_shm(&t, &shm(C::Allgather, 2048, 8, 4, false)), slots);
        assert_eq!(choose_shm(&t, &shm(C::Allgather, 2049, 1, 4, true)), None);
        assert_eq!(choose_shm(&t, &shm(C::Alltoall, 512, 8, 4, false)), slots);
        assert_eq!(choose_shm(&t, &shm(C::Alltoall, 513, 1, 4, false)), None);
        assert_eq!(choose_shm(&t, &shm(C::Scatter, 600, 8, 4, true)), None);
        // Large Bcast/Allreduce: staging areas on oversubscribed nodes only, up to 1 MiB.
        let staged = Some(ShmPath::Staged);
        for c in [C::Bcast, C::Allreduce, C::Reduce] {
            assert_eq!(choose_shm(&t, &shm(c, 4096, 8, 4, false)), None, "{c:?}");
            assert_eq!(choose_shm(&t, &shm(c, 4096, 8, 4, true)), staged, "{c:?}");
            assert_eq!(choose_shm(&t, &shm(c, 1 << 20, 8, 8, true)), staged);
            assert_eq!(choose_shm(&t, &shm(c, (1 << 20) + 8, 8, 8, true)), None);
            // Elements larger than a staging area never go there.
            assert_eq!(choose_shm(&t, &shm(c, 1 << 20, 256 << 10, 4, true)), None);
        }
        // Alltoall: all of a member's blocks together, up to 1 MiB.
        assert_eq!(choose_shm(&t, &shm(C::Alltoall, 4096, 1, 8, false)), None);
        assert_eq!(choose_shm(&t, &shm(C::Alltoall, 4096, 1, 8, true)), staged);
        assert_eq!(
            choose_shm(&t, &shm(C::Alltoall, 1 << 17, 1, 8, true)),
            staged
        );
        assert_eq!(
            choose_shm(&t, &shm(C::Alltoall, (1 << 17) + 1, 1, 8, true)),
            None
        );
        // Reduce on two members: pipelined at any load.
        let piped = Some(ShmPath::PipelinedReduce);
        assert_eq!(choose_shm(&t, &shm(C::Reduce, 4096, 8, 2, false)), piped);
        assert_eq!(choose_shm(&t, &shm(C::Reduce, 1 << 20, 8, 2, true)), piped);
        assert_eq!(
            choose_shm(&t, &shm(C::Reduce, 1 << 20, 64 << 10, 2, false)),
            None
        );
        assert_eq!(
            choose_shm(&t, &shm(C::Reduce, 1 << 20, 64 << 10, 2, true)),
            staged
        );
        assert_eq!(choose_shm(&t, &shm(C::Allreduce, 4096, 8, 2, false)), None);

        // OXMPI_COLL_SHM=0: never.
        let off = Tuning {
            shm_enabled: false,
            ..Tuning::default()
        };
        assert_eq!(choose_shm(&off, &shm(C::Barrier, 0, 1, 4, false)), None);
        // OXMPI_COLL_SHM_MAX lowers the slot limit (and cannot raise it).
        let small = Tuning {
            shm_max: 64,
            ..Tuning::default()
        };
        assert_eq!(
            choose_shm(&small, &shm(C::Allgather, 64, 8, 4, false)),
            slots
        );
        assert_eq!(
            choose_shm(&small, &shm(C::Allgather, 72, 8, 4, false)),
            None
        );
        // Staged calls still carry contributions up to a slot through the slots.
        assert_eq!(choose_shm(&small, &shm(C::Bcast, 72, 8, 4, true)), slots);
        // OXMPI_COLL_SHM_LARGE_MAX set: staging areas at any load, up to that size.
        let any = Tuning {
            shm_large_any_load: true,
            shm_large_max: 8192,
            ..Tuning::default()
        };
        assert_eq!(choose_shm(&any, &shm(C::Bcast, 8192, 8, 4, false)), staged);
        assert_eq!(choose_shm(&any, &shm(C::Bcast, 8200, 8, 4, false)), None);
        let none = Tuning {
            shm_large_any_load: true,
            shm_large_max: 0,
            ..Tuning::default()
        };
        assert_eq!(choose_shm(&none, &shm(C::Bcast, 4096, 8, 4, true)), None);
        assert_eq!(choose_shm(&none, &shm(C::Bcast, 2048, 8, 4, true)), slots);
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
