//! What a collective call looks like from one rank ([`Spec`]), the algorithms that can
//! run it ([`Algorithm`]), and [`build`], which checks the pair and generates the schedule.

use std::fmt;

use super::{allgather, alltoall, bcast, reduce, rooted, scan, BufRef, Schedule};

/// This rank's place in the communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Member {
    pub rank: u32,
    pub size: u32,
}

/// A reduction buffer: `count` elements of `elem_size` bytes each (packed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Elems {
    pub count: usize,
    pub elem_size: usize,
}

impl Elems {
    pub const fn new(count: usize, elem_size: usize) -> Elems {
        Elems { count, elem_size }
    }
}

/// One rank's block in a v-variant buffer: `len` bytes at byte offset `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Block {
    pub off: usize,
    pub len: usize,
}

/// A collective call as one rank sees it: every quantity in bytes (or elements of
/// `elem_size` bytes for reductions) of packed data. `in_place` means the C call passed
/// `MPI_IN_PLACE`; the schedule then never names [`BufRef::Send`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Spec<'a> {
    /// `MPI_Barrier`: zero-byte messages only.
    Barrier,
    /// `MPI_Bcast` of `bytes`: the one buffer is `Recv` on every rank, root included.
    Bcast { root: u32, bytes: usize },
    /// `MPI_Reduce`: input `Send` (`Recv` at an in-place root); result in `Recv` at the
    /// root only (other ranks' `Recv` is never touched). `in_place` only at the root.
    Reduce {
        root: u32,
        elems: Elems,
        commutative: bool,
        in_place: bool,
    },
    /// `MPI_Allreduce`: input `Send` (`Recv` when in place); result in `Recv`.
    Allreduce {
        elems: Elems,
        commutative: bool,
        in_place: bool,
    },
    /// `MPI_Reduce_scatter_block`: input `size * elems.count` elements in `Send` (`Recv`
    /// when in place); result `elems.count` elements at the start of `Recv`.
    ReduceScatterBlock {
        elems: Elems,
        commutative: bool,
        in_place: bool,
    },
    /// `MPI_Reduce_scatter`: `counts[i]` elements go to rank `i`; input is all of them
    /// in `Send` (`Recv` when in place); result `counts[rank]` elements at `Recv` start.
    ReduceScatter {
        counts: &'a [usize],
        elem_size: usize,
        commutative: bool,
        in_place: bool,
    },
    /// `MPI_Scan`: input `Send` (`Recv` when in place); result in `Recv`.
    Scan {
        elems: Elems,
        commutative: bool,
        in_place: bool,
    },
    /// `MPI_Exscan`: like `Scan`; rank 0's `Recv` is not touched.
    Exscan {
        elems: Elems,
        commutative: bool,
        in_place: bool,
    },
    /// `MPI_Gather`: `bytes` from each rank's `Send` into the root's `Recv` at
    /// `rank * bytes`. An in-place root's own block is already in place.
    Gather {
        root: u32,
        bytes: usize,
        in_place: bool,
    },
    /// `MPI_Gatherv`: `send_bytes` from `Send`; at the root `recv[i]` is rank `i`'s block
    /// in `Recv` (other ranks pass an empty slice).
    Gatherv {
        root: u32,
        send_bytes: usize,
        recv: &'a [Block],
        in_place: bool,
    },
    /// `MPI_Scatter`: the root's `Send` holds `size * bytes`; each rank receives `bytes`
    /// into `Recv`. An in-place root keeps its block where it is.
    Scatter {
        root: u32,
        bytes: usize,
        in_place: bool,
    },
    /// `MPI_Scatterv`: at the root `send[i]` is rank `i`'s block in `Send` (others pass
    /// an empty slice); each rank receives `recv_bytes` into `Recv`.
    Scatterv {
        root: u32,
        send: &'a [Block],
        recv_bytes: usize,
        in_place: bool,
    },
    /// `MPI_Allgather`: `bytes` from `Send` into everyone's `Recv` at `rank * bytes`
    /// (in place: already there).
    Allgather { bytes: usize, in_place: bool },
    /// `MPI_Allgatherv`: `blocks[i]` is rank `i`'s block in `Recv`; this rank sends
    /// `blocks[rank].len` bytes from `Send` (in place: already in its block).
    Allgatherv { blocks: &'a [Block], in_place: bool },
    /// `MPI_Alltoall`: block `i` of `Send` (`bytes` each) goes to rank `i`, block `j` of
    /// `Recv` comes from rank `j` (in place: both in `Recv`).
    Alltoall { bytes: usize, in_place: bool },
    /// `MPI_Alltoallv` (and `MPI_Alltoallw` once the core packs each peer's block):
    /// `send[i]` in `Send` goes to rank `i`, `recv[j]` in `Recv` comes from rank `j`.
    /// In place, the data sent to `i` is `recv[i]` of `Recv` and `send` is ignored.
    Alltoallv {
        send: &'a [Block],
        recv: &'a [Block],
        in_place: bool,
    },
}

/// The collective operations, for the decision table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    ReduceScatterBlock,
    ReduceScatter,
    Scan,
    Exscan,
    Gather,
    Gatherv,
    Scatter,
    Scatterv,
    Allgather,
    Allgatherv,
    Alltoall,
    Alltoallv,
}

impl Collective {
    /// The MPI function name, e.g. `"MPI_Allreduce"`.
    pub const fn name(self) -> &'static str {
        match self {
            Collective::Barrier => "MPI_Barrier",
            Collective::Bcast => "MPI_Bcast",
            Collective::Reduce => "MPI_Reduce",
            Collective::Allreduce => "MPI_Allreduce",
            Collective::ReduceScatterBlock => "MPI_Reduce_scatter_block",
            Collective::ReduceScatter => "MPI_Reduce_scatter",
            Collective::Scan => "MPI_Scan",
            Collective::Exscan => "MPI_Exscan",
            Collective::Gather => "MPI_Gather",
            Collective::Gatherv => "MPI_Gatherv",
            Collective::Scatter => "MPI_Scatter",
            Collective::Scatterv => "MPI_Scatterv",
            Collective::Allgather => "MPI_Allgather",
            Collective::Allgatherv => "MPI_Allgatherv",
            Collective::Alltoall => "MPI_Alltoall",
            Collective::Alltoallv => "MPI_Alltoallv",
        }
    }
}

impl Spec<'_> {
    /// Which collective this is.
    pub fn collective(&self) -> Collective {
        match self {
            Spec::Barrier => Collective::Barrier,
            Spec::Bcast { .. } => Collective::Bcast,
            Spec::Reduce { .. } => Collective::Reduce,
            Spec::Allreduce { .. } => Collective::Allreduce,
            Spec::ReduceScatterBlock { .. } => Collective::ReduceScatterBlock,
            Spec::ReduceScatter { .. } => Collective::ReduceScatter,
            Spec::Scan { .. } => Collective::Scan,
            Spec::Exscan { .. } => Collective::Exscan,
            Spec::Gather { .. } => Collective::Gather,
            Spec::Gatherv { .. } => Collective::Gatherv,
            Spec::Scatter { .. } => Collective::Scatter,
            Spec::Scatterv { .. } => Collective::Scatterv,
            Spec::Allgather { .. } => Collective::Allgather,
            Spec::Allgatherv { .. } => Collective::Allgatherv,
            Spec::Alltoall { .. } => Collective::Alltoall,
            Spec::Alltoallv { .. } => Collective::Alltoallv,
        }
    }

    /// Whether the reduction operation is commutative (true for non-reductions).
    pub fn commutative(&self) -> bool {
        match *self {
            Spec::Reduce { commutative, .. }
            | Spec::Allreduce { commutative, .. }
            | Spec::ReduceScatterBlock { commutative, .. }
            | Spec::ReduceScatter { commutative, .. }
            | Spec::Scan { commutative, .. }
            | Spec::Exscan { commutative, .. } => commutative,
            _ => true,
        }
    }
}

macro_rules! algorithms {
    ($($variant:ident = $coll:ident, $name:literal;)*) => {
        /// Every algorithm, named `collective_algorithm`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Algorithm { $($variant,)* }

        impl Algorithm {
            /// All algorithms.
            pub const ALL: &'static [Algorithm] = &[$(Algorithm::$variant,)*];

            /// The collective it implements.
            pub const fn collective(self) -> Collective {
                match self { $(Algorithm::$variant => Collective::$coll,)* }
            }

            /// Its name in `OXMPI_COLL_<COLLECTIVE>_ALGO` (e.g. `"recursive_doubling"`).
            pub const fn name(self) -> &'static str {
                match self { $(Algorithm::$variant => $name,)* }
            }
        }
    };
}

algorithms! {
    BarrierDissemination = Barrier, "dissemination";
    BcastBinomial = Bcast, "binomial";
    BcastScatterRingAllgather = Bcast, "scatter_ring_allgather";
    ReduceBinomial = Reduce, "binomial";
    ReduceRabenseifner = Reduce, "rabenseifner";
    AllreduceRecursiveDoubling = Allreduce, "recursive_doubling";
    AllreduceRabenseifner = Allreduce, "rabenseifner";
    AllreduceRing = Allreduce, "ring";
    AllreduceReduceBcast = Allreduce, "reduce_bcast";
    ReduceScatterBlockRecursiveHalving = ReduceScatterBlock, "recursive_halving";
    ReduceScatterBlockRing = ReduceScatterBlock, "ring";
    ReduceScatterBlockReduceScatterv = ReduceScatterBlock, "reduce_scatterv";
    ReduceScatterRecursiveHalving = ReduceScatter, "recursive_halving";
    ReduceScatterRing = ReduceScatter, "ring";
    ReduceScatterReduceScatterv = ReduceScatter, "reduce_scatterv";
    ScanRecursiveDoubling = Scan, "recursive_doubling";
    ExscanRecursiveDoubling = Exscan, "recursive_doubling";
    GatherBinomial = Gather, "binomial";
    GatherLinear = Gather, "linear";
    GathervLinear = Gatherv, "linear";
    ScatterBinomial = Scatter, "binomial";
    ScatterLinear = Scatter, "linear";
    ScattervLinear = Scatterv, "linear";
    AllgatherRecursiveDoubling = Allgather, "recursive_doubling";
    AllgatherBruck = Allgather, "bruck";
    AllgatherRing = Allgather, "ring";
    AllgathervRing = Allgatherv, "ring";
    AlltoallBruck = Alltoall, "bruck";
    AlltoallLinear = Alltoall, "linear";
    AlltoallPairwise = Alltoall, "pairwise";
    AlltoallvLinear = Alltoallv, "linear";
    AlltoallvPairwise = Alltoallv, "pairwise";
}

impl Algorithm {
    /// Why this algorithm cannot run `spec` on `size` ranks, if it cannot.
    pub fn unsuitable(self, spec: &Spec<'_>, size: u32) -> Option<&'static str> {
        if self.collective() != spec.collective() {
            return Some("it implements a different collective");
        }
        let needs_commutative = matches!(
            self,
            Algorithm::ReduceRabenseifner
                | Algorithm::AllreduceRabenseifner
                | Algorithm::AllreduceRing
                | Algorithm::ReduceScatterBlockRecursiveHalving
                | Algorithm::ReduceScatterBlockRing
                | Algorithm::ReduceScatterRecursiveHalving
                | Algorithm::ReduceScatterRing
        );
        if needs_commutative && !spec.commutative() {
            return Some("it needs a commutative operation");
        }
        if self == Algorithm::AllgatherRecursiveDoubling && !size.is_power_of_two() {
            return Some("it needs a power-of-two communicator size");
        }
        None
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.collective().name(), self.name())
    }
}

/// Why no schedule could be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScheduleError {
    /// `size` is 0 or `rank >= size`.
    BadMember { rank: u32, size: u32 },
    /// `root >= size` (`MPI_ERR_ROOT`).
    BadRoot { root: u32, size: u32 },
    /// A per-rank array has the wrong length.
    BadLength {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// The algorithm cannot run this call.
    Unsuitable {
        algorithm: Algorithm,
        reason: &'static str,
    },
    /// `MPI_IN_PLACE` where the collective does not allow it (e.g. a non-root of `MPI_Reduce`).
    InPlaceNotAllowed { collective: Collective },
    /// The root's own send and receive sizes differ.
    SizeMismatch {
        what: &'static str,
        send: usize,
        recv: usize,
    },
    /// A byte size overflows `usize`, or a reduction has elements of size 0.
    BadSize { what: &'static str },
}

impl ScheduleError {
    /// The name of the MPI error class this error maps to.
    pub const fn class_name(&self) -> &'static str {
        match self {
            ScheduleError::BadRoot { .. } => "MPI_ERR_ROOT",
            ScheduleError::InPlaceNotAllowed { .. } => "MPI_ERR_BUFFER",
            ScheduleError::SizeMismatch { .. } => "MPI_ERR_TRUNCATE",
            ScheduleError::BadLength { .. } | ScheduleError::BadSize { .. } => "MPI_ERR_COUNT",
            ScheduleError::BadMember { .. } | ScheduleError::Unsuitable { .. } => "MPI_ERR_INTERN",
        }
    }
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleError::BadMember { rank, size } => {
                write!(f, "rank {rank} is not in a communicator of size {size}")
            }
            ScheduleError::BadRoot { root, size } => {
                write!(f, "invalid root {root} (communicator size {size})")
            }
            ScheduleError::BadLength {
                what,
                expected,
                got,
            } => {
                write!(
                    f,
                    "{what} has {got} entries, the communicator needs {expected}"
                )
            }
            ScheduleError::Unsuitable { algorithm, reason } => {
                write!(f, "{algorithm} cannot run this call: {reason}")
            }
            ScheduleError::InPlaceNotAllowed { collective } => {
                write!(
                    f,
                    "{}: MPI_IN_PLACE is not allowed on this rank",
                    collective.name()
                )
            }
            ScheduleError::SizeMismatch { what, send, recv } => {
                write!(
                    f,
                    "{what}: the root sends itself {send} bytes but receives {recv}"
                )
            }
            ScheduleError::BadSize { what } => write!(f, "{what}: size out of range"),
        }
    }
}

impl std::error::Error for ScheduleError {}

fn bytes_of(e: Elems, what: &'static str) -> Result<usize, ScheduleError> {
    if e.count > 0 && e.elem_size == 0 {
        return Err(ScheduleError::BadSize { what });
    }
    e.count
        .checked_mul(e.elem_size)
        .ok_or(ScheduleError::BadSize { what })
}

fn mul(a: usize, b: usize, what: &'static str) -> Result<usize, ScheduleError> {
    a.checked_mul(b).ok_or(ScheduleError::BadSize { what })
}

fn blocks_len(blocks: &[Block], n: usize, what: &'static str) -> Result<(), ScheduleError> {
    if blocks.len() != n {
        return Err(ScheduleError::BadLength {
            what,
            expected: n,
            got: blocks.len(),
        });
    }
    if blocks.iter().any(|b| b.off.checked_add(b.len).is_none()) {
        return Err(ScheduleError::BadSize { what });
    }
    Ok(())
}

/// Builds the schedule of `algo` for this rank's view `spec` of a collective call.
/// A schedule depends only on `(spec, me, algo)`, so callers may cache it under that key.
pub fn build(spec: &Spec<'_>, me: Member, algo: Algorithm) -> Result<Schedule, ScheduleError> {
    let mut s = Schedule::new();
    build_into(spec, me, algo, &mut s)?;
    Ok(s)
}

/// Like [`build`], reusing `out`'s allocations (its previous content is discarded; on
/// error it is left empty).
pub fn build_into(
    spec: &Spec<'_>,
    me: Member,
    algo: Algorithm,
    out: &mut Schedule,
) -> Result<(), ScheduleError> {
    out.clear();
    generate(spec, me, algo, out)?;
    out.next_round();
    Ok(())
}

fn generate(
    spec: &Spec<'_>,
    me: Member,
    algo: Algorithm,
    b: &mut Schedule,
) -> Result<(), ScheduleError> {
    let (n, r) = (me.size as usize, me.rank as usize);
    if n == 0 || r >= n {
        return Err(ScheduleError::BadMember {
            rank: me.rank,
            size: me.size,
        });
    }
    if let Some(reason) = algo.unsuitable(spec, me.size) {
        return Err(ScheduleError::Unsuitable {
            algorithm: algo,
            reason,
        });
    }
    let root_ok = |root: u32| {
        if (root as usize) < n {
            Ok(root as usize)
        } else {
            Err(ScheduleError::BadRoot {
                root,
                size: me.size,
            })
        }
    };
    let input = |in_place: bool| if in_place { BufRef::Recv } else { BufRef::Send };
    let coll = spec.collective();
    match *spec {
        Spec::Barrier => super::bcast::barrier_dissemination(b, n, r),
        Spec::Bcast { root, bytes } => {
            let root = root_ok(root)?;
            match algo {
                Algorithm::BcastBinomial => bcast::binomial(b, n, r, root, BufRef::Recv, bytes),
                _ => bcast::scatter_ring_allgather(b, n, r, root, BufRef::Recv, bytes),
            }
        }
        Spec::Reduce {
            root,
            elems,
            commutative,
            in_place,
        } => {
            let root = root_ok(root)?;
            if in_place && r != root {
                return Err(ScheduleError::InPlaceNotAllowed { collective: coll });
            }
            let bytes = bytes_of(elems, coll.name())?;
            let io = reduce::Io {
                input: input(in_place),
                output: BufRef::Recv,
                bytes,
                elem_size: elems.elem_size,
            };
            match algo {
                Algorithm::ReduceBinomial => reduce::binomial(b, n, r, root, io, commutative),
                _ => reduce::rabenseifner_reduce(b, n, r, root, io, elems.count),
            }
        }
        Spec::Allreduce {
            elems,
            commutative,
            in_place,
        } => {
            let bytes = bytes_of(elems, coll.name())?;
            let io = reduce::Io {
                input: input(in_place),
                output: BufRef::Recv,
                bytes,
                elem_size: elems.elem_size,
            };
            match algo {
                Algorithm::AllreduceRecursiveDoubling => {
                    reduce::allreduce_recursive_doubling(b, n, r, io, commutative)
                }
                Algorithm::AllreduceRabenseifner => {
                    reduce::rabenseifner_allreduce(b, n, r, io, elems.count)
                }
                Algorithm::AllreduceRing => reduce::allreduce_ring(b, n, r, io, elems.count),
                _ => {
                    reduce::binomial(b, n, r, 0, io, commutative);
                    b.next_round();
                    if bytes < crate::decision::DEFAULT_BCAST_SHORT_MSG
                        || n < crate::decision::DEFAULT_BCAST_MIN_PROCS
                    {
                        bcast::binomial(b, n, r, 0, BufRef::Recv, bytes);
                    } else {
                        bcast::scatter_ring_allgather(b, n, r, 0, BufRef::Recv, bytes);
                    }
                }
            }
        }
        Spec::ReduceScatterBlock {
            elems,
            commutative,
            in_place,
        } => {
            let total = mul(elems.count, n, coll.name())?;
            bytes_of(Elems::new(total, elems.elem_size), coll.name())?;
            let counts = vec![elems.count; n];
            reduce::reduce_scatter(
                b,
                n,
                r,
                &counts,
                elems.elem_size,
                input(in_place),
                commutative,
                algo,
            );
        }
        Spec::ReduceScatter {
            counts,
            elem_size,
            commutative,
            in_place,
        } => {
            if counts.len() != n {
                return Err(ScheduleError::BadLength {
                    what: "recvcounts",
                    expected: n,
                    got: counts.len(),
                });
            }
            let total = counts
                .iter()
                .try_fold(0usize, |a, &c| a.checked_add(c))
                .ok_or(ScheduleError::BadSize { what: coll.name() })?;
            bytes_of(Elems::new(total, elem_size), coll.name())?;
            reduce::reduce_scatter(
                b,
                n,
                r,
                counts,
                elem_size,
                input(in_place),
                commutative,
                algo,
            );
        }
        Spec::Scan {
            elems,
            commutative,
            in_place,
        }
        | Spec::Exscan {
            elems,
            commutative,
            in_place,
        } => {
            let bytes = bytes_of(elems, coll.name())?;
            let exclusive = coll == Collective::Exscan;
            scan::recursive_doubling(b, n, r, input(in_place), bytes, commutative, exclusive);
        }
        Spec::Gather {
            root,
            bytes,
            in_place,
        } => {
            let root = root_ok(root)?;
            if in_place && r != root {
                return Err(ScheduleError::InPlaceNotAllowed { collective: coll });
            }
            mul(bytes, n, coll.name())?;
            let linear = algo == Algorithm::GatherLinear;
            rooted::gather(b, n, r, root, bytes, input(in_place), BufRef::Recv, linear);
        }
        Spec::Scatter {
            root,
            bytes,
            in_place,
        } => {
            let root = root_ok(root)?;
            if in_place && r != root {
                return Err(ScheduleError::InPlaceNotAllowed { collective: coll });
            }
            mul(bytes, n, coll.name())?;
            let linear = algo == Algorithm::ScatterLinear;
            let out = if in_place { None } else { Some(BufRef::Recv) };
            rooted::scatter(b, n, r, root, bytes, BufRef::Send, out, linear);
        }
        Spec::Gatherv {
            root,
            send_bytes,
            recv,
            in_place,
        } => {
            let root = root_ok(root)?;
            if in_place && r != root {
                return Err(ScheduleError::InPlaceNotAllowed { collective: coll });
            }
            if r == root {
                blocks_len(recv, n, "recvcounts/displs")?;
                if !in_place && recv[r].len != send_bytes {
                    return Err(ScheduleError::SizeMismatch {
                        what: coll.name(),
                        send: send_bytes,
                        recv: recv[r].len,
                    });
                }
            }
            rooted::gatherv(b, n, r, root, send_bytes, recv, in_place);
        }
        Spec::Scatterv {
            root,
            send,
            recv_bytes,
            in_place,
        } => {
            let root = root_ok(root)?;
            if in_place && r != root {
                return Err(ScheduleError::InPlaceNotAllowed { collective: coll });
            }
            if r == root {
                blocks_len(send, n, "sendcounts/displs")?;
                if !in_place && send[r].len != recv_bytes {
                    return Err(ScheduleError::SizeMismatch {
                        what: coll.name(),
                        send: send[r].len,
                        recv: recv_bytes,
                    });
                }
            }
            let out = if in_place { None } else { Some(BufRef::Recv) };
            rooted::scatterv(b, n, r, root, BufRef::Send, send, recv_bytes, out);
        }
        Spec::Allgather { bytes, in_place } => {
            mul(bytes, n, coll.name())?;
            let input = if in_place { None } else { Some(BufRef::Send) };
            match algo {
                Algorithm::AllgatherRecursiveDoubling => {
                    allgather::recursive_doubling(b, n, r, bytes, input)
                }
                Algorithm::AllgatherBruck => allgather::bruck(b, n, r, bytes, input),
                _ => allgather::ring(b, n, r, bytes, input),
            }
        }
        Spec::Allgatherv { blocks, in_place } => {
            blocks_len(blocks, n, "recvcounts/displs")?;
            let input = if in_place { None } else { Some(BufRef::Send) };
            allgather::ringv(b, n, r, blocks, input);
        }
        Spec::Alltoall { bytes, in_place } => {
            mul(bytes, n, coll.name())?;
            match algo {
                Algorithm::AlltoallBruck => alltoall::bruck(b, n, r, bytes, in_place),
                Algorithm::AlltoallLinear => alltoall::linear(b, n, r, bytes, in_place),
                _ => alltoall::pairwise(b, n, r, bytes, in_place),
            }
        }
        Spec::Alltoallv {
            send,
            recv,
            in_place,
        } => {
            if !in_place {
                blocks_len(send, n, "sendcounts/sdispls")?;
            }
            blocks_len(recv, n, "recvcounts/rdispls")?;
            let pairwise = algo == Algorithm::AlltoallvPairwise;
            alltoall::alltoallv(b, n, r, send, recv, in_place, pairwise);
        }
    }
    Ok(())
}
