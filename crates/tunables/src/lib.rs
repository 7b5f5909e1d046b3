//! The registry of tunables: every `OXMPI_*` environment variable oxmpi reads, declared
//! once ([`ALL`]) with its type ([`Kind`]: boolean, integer, byte size with `k`/`m`/`g`
//! suffixes, one of a list of words, free text, an IPv4 address, or a collective's
//! algorithm), its default (and for automatic defaults, the rule that picks the value),
//! its category, who reads it ([`Reader`]) and a one-line description; and the one
//! parser for all of them ([`Tunable::parse`]).
//!
//! The registry is plain data and depends on nothing but `std`, so that every program
//! that reads a variable uses it: `MPI_Init` (through `oxmpi_core::tunables`) reads every
//! variable the library reads into [`Settings`] before it starts anything, and
//! `mpiexec` reads its own the same way ([`Program`]); a malformed or out-of-range value
//! is an error naming the variable, the value and what was expected. Limits, words and
//! defaults that mirror a constant or a parser elsewhere (the TCP transport's largest
//! eager message, the collective decision table's defaults and algorithm names, the
//! words of `OXMPI_BIND` and `OXMPI_SHM_STREAM_STORES`) are checked against it by tests
//! in the crates that own them. `oxmpi-info` and the README's table are rendered from
//! this registry ([`markdown`]); a test fails when the README's copy drifts, and another
//! when the sources mention an `OXMPI_*` variable that is neither declared here nor
//! listed as internal ([`INTERNAL`]).
//!
//! Values: surrounding white space is ignored and an empty value counts as unset;
//! booleans are `1`/`yes`/`true`/`on` or `0`/`no`/`false`/`off`; words and algorithm
//! names are case-insensitive; variables with an automatic default also take `auto`.

use std::fmt::{self, Write as _};
use std::net::Ipv4Addr;

/// What a tunable is about (the README groups them in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// Shared-memory transport.
    Shm,
    /// How a blocked rank waits.
    Wait,
    /// Oversubscription and CPU binding.
    Placement,
    /// Network transport.
    Tcp,
    /// Process management: node identity, PMI.
    Process,
    /// Collective algorithms.
    Coll,
    /// `mpiexec`.
    Launch,
    /// The compiler wrappers.
    Wrapper,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Shm => "shm",
            Category::Wait => "wait",
            Category::Placement => "placement",
            Category::Tcp => "tcp",
            Category::Process => "process",
            Category::Coll => "coll",
            Category::Launch => "launch",
            Category::Wrapper => "wrapper",
        }
    }
}

/// Who reads a tunable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// The library, at `MPI_Init` (validated there).
    Library,
    /// The library at `MPI_Init` and `mpiexec`.
    LibraryAndMpiexec,
    /// `mpiexec` only (the library ignores it).
    Mpiexec,
    /// The compiler wrappers `mpicc` and `mpicxx` only.
    Wrapper,
}

impl Reader {
    /// Read (and so validated) by `MPI_Init`.
    pub fn library(self) -> bool {
        matches!(self, Reader::Library | Reader::LibraryAndMpiexec)
    }

    /// Read (and so validated) by `mpiexec` when it starts a job.
    pub fn mpiexec(self) -> bool {
        matches!(self, Reader::Mpiexec | Reader::LibraryAndMpiexec)
    }

    /// Whether `program` reads the variable.
    pub fn read_by(self, program: Program) -> bool {
        match program {
            Program::Library => self.library(),
            Program::Mpiexec => self.mpiexec(),
        }
    }
}

/// A program that reads its tunables into [`Settings`] when it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    /// The MPI library, at `MPI_Init`.
    Library,
    /// `mpiexec`, before it starts a job.
    Mpiexec,
}

/// The type of a tunable's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `1`, `yes`, `true`, `on` or `0`, `no`, `false`, `off`.
    Bool,
    /// A decimal integer in `min..=max`.
    Int { min: u64, max: u64 },
    /// A byte count in `min..=max`; a `k`, `m` or `g` suffix multiplies by 1024, 1024²,
    /// 1024³.
    Bytes { min: u64, max: u64 },
    /// One of these words (case-insensitive).
    Choice(&'static [&'static str]),
    /// Any text (an interface, a command, a path).
    Text,
    /// An IPv4 address in dotted decimal.
    Ipv4,
    /// The name of one of the algorithms of the collective `call` (an MPI function
    /// name): one of `names`, the collective library's names for them.
    Algorithm {
        call: &'static str,
        names: &'static [&'static str],
    },
}

/// A default value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Initial {
    /// Chosen at run time by the rule in [`Tunable::rule`].
    Auto,
    Bool(bool),
    Int(u64),
    Text(&'static str),
}

/// A tunable's value: parsed from the environment, or its default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// The automatic default (see [`Tunable::rule`]).
    Auto,
    Bool(bool),
    Int(u64),
    /// A word of a [`Kind::Choice`] or an algorithm name (lower case), free text, or an
    /// address as [`Ipv4Addr`] writes it.
    Text(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Auto => f.write_str("auto"),
            Value::Bool(b) => f.write_str(if *b { "1" } else { "0" }),
            Value::Int(n) => write!(f, "{n}"),
            Value::Text(s) => f.write_str(s),
        }
    }
}

/// One declared tunable.
#[derive(Debug)]
pub struct Tunable {
    /// The environment variable.
    pub name: &'static str,
    pub category: Category,
    pub reader: Reader,
    pub kind: Kind,
    /// `auto` is accepted (and means the automatic default, as if unset).
    pub auto: bool,
    pub default: Initial,
    /// How an automatic default is chosen (empty when the default is not automatic).
    pub rule: &'static str,
    /// One line: what the variable does.
    pub doc: &'static str,
}

/// A variable with a value that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunableError {
    pub name: &'static str,
    pub value: String,
    pub reason: String,
}

impl fmt::Display for TunableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?}: {}", self.name, self.value, self.reason)
    }
}

impl std::error::Error for TunableError {}

/// Defines [`Id`] and [`ALL`] from one list, so that an id is its entry's index.
macro_rules! registry {
    ($( $id:ident = $decl:expr ; )*) => {
        /// Names a tunable; `id as usize` is its index in [`ALL`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Id { $($id),* }

        /// Every tunable, in the order of [`Id`] (grouped by category).
        pub static ALL: &[Tunable] = &[ $( $decl ),* ];

        /// Every id, in order (`IDS[i] as usize == i`).
        pub static IDS: &[Id] = &[ $( Id::$id ),* ];
    };
}

use Category as C;
use Initial as I;
use Kind as K;
use Reader as R;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
/// Largest value of a tunable that has no limit of its own.
const UNLIMITED: u64 = usize::MAX as u64;

/// `auto` or one of the algorithm `names` of the collective `call`.
const fn algo(name: &'static str, call: &'static str, names: &'static [&'static str]) -> Tunable {
    Tunable {
        name,
        category: C::Coll,
        reader: R::Library,
        kind: K::Algorithm { call, names },
        auto: true,
        default: I::Auto,
        rule: "the decision table's choice by communicator and message size",
        doc: "a choice unsuitable for a call falls back to auto, the decision table's choice",
    }
}

/// A threshold of the collective decision table in bytes.
const fn coll_bytes(name: &'static str, default: u64, doc: &'static str) -> Tunable {
    Tunable {
        name,
        category: C::Coll,
        reader: R::Library,
        kind: K::Bytes {
            min: 0,
            max: UNLIMITED,
        },
        auto: false,
        default: I::Int(default),
        rule: "",
        doc,
    }
}

/// A threshold of the collective decision table in ranks.
const fn coll_procs(name: &'static str, default: u64, doc: &'static str) -> Tunable {
    Tunable {
        name,
        category: C::Coll,
        reader: R::Library,
        kind: K::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        auto: false,
        default: I::Int(default),
        rule: "",
        doc,
    }
}

registry! {
    ShmEagerLimit = Tunable {
        name: "OXMPI_SHM_EAGER_LIMIT", category: C::Shm, reader: R::Library,
        kind: K::Bytes { min: 0, max: 32 * MIB }, auto: true, default: I::Auto,
        rule: "64 KiB on a node with more ranks than CPUs (rings of 256 KiB or more), else 32 KiB with rings of 512 KiB or more (nodes of up to 11 ranks), else 16 KiB",
        doc: "largest message (bytes) sent eagerly through shared memory (at most what half a ring holds); larger ones use rendezvous",
    };
    ShmRingBytes = Tunable {
        name: "OXMPI_SHM_RING_BYTES", category: C::Shm, reader: R::Library,
        kind: K::Bytes { min: 4 * KIB, max: 64 * MIB }, auto: true, default: I::Auto,
        rule: "2 MiB for up to 6 ranks on a node, 1 MiB for 7-8, shrinking to 64 KiB at 32 (all rings within 64 MiB), less beyond; at most 256 KiB on a node with more ranks than CPUs whose ranks may read each other's memory (not with OXMPI_SHM_NO_CMA=1 or Yama ptrace_scope >= 1)",
        doc: "size of each sender-to-receiver shared-memory ring (rounded up to a power of two)",
    };
    ShmNoCma = Tunable {
        name: "OXMPI_SHM_NO_CMA", category: C::Shm, reader: R::Library,
        kind: K::Bool, auto: false, default: I::Bool(false), rule: "",
        doc: "1 disables single-copy rendezvous (process_vm_readv) and uses the pipelined copy",
    };
    ShmChunkBytes = Tunable {
        name: "OXMPI_SHM_CHUNK_BYTES", category: C::Shm, reader: R::Library,
        kind: K::Bytes { min: 256, max: 32 * MIB }, auto: true, default: I::Auto,
        rule: "pieces grow from 32 KiB to an eighth of the ring (16-256 KiB) and to at most a quarter of the message",
        doc: "piece size of the pipelined rendezvous copy; a value set fixes every piece at that size (at most what half a ring holds)",
    };
    ShmStreamStores = Tunable {
        name: "OXMPI_SHM_STREAM_STORES", category: C::Shm, reader: R::Library,
        kind: K::Choice(&["cached", "nt", "non-temporal"]), auto: false,
        default: I::Text("cached"), rule: "",
        doc: "stores that write the pieces of contiguous messages of 256 KiB and more into the ring in the pipelined copy: cached, or nt (non-temporal: through memory; several times faster where cache-to-cache transfers between the cores are slow, about half as fast where they are fast)",
    };
    Spin = Tunable {
        name: "OXMPI_SPIN", category: C::Wait, reader: R::Library,
        kind: K::Int { min: 0, max: 1_000_000_000 }, auto: true, default: I::Auto,
        rule: "2000, or 0 on a node with more ranks than CPUs",
        doc: "polling iterations before a blocked rank starts to yield the CPU",
    };
    Yield = Tunable {
        name: "OXMPI_YIELD", category: C::Wait, reader: R::Library,
        kind: K::Int { min: 0, max: 1_000_000_000 }, auto: false, default: I::Int(200),
        rule: "",
        doc: "sched_yield rounds before a blocked rank sleeps on its futex doorbell",
    };
    SpinThreads = Tunable {
        name: "OXMPI_SPIN_THREADS", category: C::Wait, reader: R::Library,
        kind: K::Int { min: 1, max: 1_000_000 }, auto: true, default: I::Auto,
        rule: "the CPUs the rank may run on, at most its share of the node's; 1 on a node with more ranks than CPUs",
        doc: "threads of a rank that may spin at once while they wait under MPI_THREAD_MULTIPLE; more waiting threads yield and sleep instead",
    };
    AsyncProgress = Tunable {
        name: "OXMPI_ASYNC_PROGRESS", category: C::Wait, reader: R::Library,
        kind: K::Bool, auto: false, default: I::Bool(false), rule: "",
        doc: "1 starts a progress thread per rank that moves rendezvous transfers and nonblocking or persistent collectives on while the application computes; it sleeps on the rank's doorbell when there is nothing to do (every packet to a sleeping rank then costs its sender a wake-up)",
    };
    Oversubscribed = Tunable {
        name: "OXMPI_OVERSUBSCRIBED", category: C::Placement, reader: R::Library,
        kind: K::Bool, auto: true, default: I::Auto,
        rule: "more ranks on the node than the CPUs their CPU sets cover together",
        doc: "1 or 0 forces the oversubscribed waiting policy and ring size on or off",
    };
    Bind = Tunable {
        name: "OXMPI_BIND", category: C::Placement, reader: R::Library,
        kind: K::Choice(&["block", "none", "auto", "off", "0"]), auto: false,
        default: I::Text("block"), rule: "",
        doc: "block (or auto): on a node with more ranks than CPUs each rank binds itself to one CPU of the set it inherited, consecutive local ranks in blocks (8 ranks on 2 CPUs: 0-3 and 4-7); none (or off, 0): the kernel places ranks",
    };
    Netmod = Tunable {
        name: "OXMPI_NETMOD", category: C::Tcp, reader: R::Library,
        kind: K::Choice(&["tcp"]), auto: true, default: I::Auto,
        rule: "shared memory within a node, TCP between nodes",
        doc: "tcp: reach every other rank over TCP, even on this node",
    };
    TcpEagerLimit = Tunable {
        name: "OXMPI_TCP_EAGER_LIMIT", category: C::Tcp, reader: R::Library,
        kind: K::Bytes { min: 0, max: MIB }, auto: false,
        default: I::Int(64 * KIB), rule: "",
        doc: "largest message (bytes) sent eagerly over TCP; larger ones use rendezvous",
    };
    TcpChunkBytes = Tunable {
        name: "OXMPI_TCP_CHUNK_BYTES", category: C::Tcp, reader: R::Library,
        kind: K::Bytes { min: 4 * KIB, max: GIB }, auto: false, default: I::Int(MIB),
        rule: "",
        doc: "piece size of a rendezvous message streamed over TCP",
    };
    TcpAddr = Tunable {
        name: "OXMPI_TCP_ADDR", category: C::Tcp, reader: R::LibraryAndMpiexec,
        kind: K::Ipv4, auto: true, default: I::Auto,
        rule: "listen on every address, publish the first non-loopback IPv4 address that is up",
        doc: "IPv4 address to listen on and publish (also where mpiexec waits for its proxies)",
    };
    TcpIf = Tunable {
        name: "OXMPI_TCP_IF", category: C::Tcp, reader: R::LibraryAndMpiexec,
        kind: K::Text, auto: true, default: I::Auto,
        rule: "the first non-loopback interface that is up",
        doc: "network interface whose IPv4 address is used for TCP (ignored when OXMPI_TCP_ADDR is set)",
    };
    TcpConnectTimeout = Tunable {
        name: "OXMPI_TCP_CONNECT_TIMEOUT", category: C::Tcp, reader: R::Library,
        kind: K::Int { min: 1, max: 86_400 }, auto: false, default: I::Int(30), rule: "",
        doc: "seconds to wait for a peer to accept and authenticate a TCP connection before the job fails",
    };
    DpmConnectTimeout = Tunable {
        name: "OXMPI_DPM_CONNECT_TIMEOUT", category: C::Process, reader: R::Library,
        kind: K::Int { min: 1, max: 86_400 }, auto: false, default: I::Int(60), rule: "",
        doc: "seconds MPI_Comm_connect waits for the port's owner to accept (info key \"timeout\" overrides it) before it fails with MPI_ERR_PORT; also how long MPI_Comm_spawn waits for the children to connect before it fails with MPI_ERR_SPAWN",
    };
    TcpDebug = Tunable {
        name: "OXMPI_TCP_DEBUG", category: C::Tcp, reader: R::Library,
        kind: K::Bool, auto: false, default: I::Bool(false), rule: "",
        doc: "1 logs TCP listening addresses and connection events to stderr",
    };
    NodeId = Tunable {
        name: "OXMPI_NODE_ID", category: C::Process, reader: R::Library,
        kind: K::Text, auto: false, default: I::Auto,
        rule: "host name, kernel boot id and network namespace",
        doc: "ranks with equal node ids share memory",
    };
    Pmi = Tunable {
        name: "OXMPI_PMI", category: C::Process, reader: R::Library,
        kind: K::Choice(&["1", "2"]), auto: false, default: I::Auto,
        rule: "PMI-2 with PMI_VERSION=2 or under Slurm's PMI2 variables, else PMI-1",
        doc: "1 or 2 forces the PMI wire protocol",
    };
    RmaTransport = Tunable {
        name: "OXMPI_RMA_TRANSPORT", category: C::Shm, reader: R::Library,
        kind: K::Choice(&["am"]), auto: true, default: I::Auto,
        rule: "one-sided operations through shared memory when every member of a window is on this node, else active messages",
        doc: "am: one-sided operations of every window travel as messages served by the target's progress, even on one node (any member asking for it decides)",
    };
    CollShm = Tunable {
        name: "OXMPI_COLL_SHM", category: C::Coll, reader: R::Library,
        kind: K::Bool, auto: false, default: I::Bool(true), rule: "",
        doc: "0 turns off the shared-memory path of collectives on single-node communicators",
    };
    CollShmMax = Tunable {
        name: "OXMPI_COLL_SHM_MAX", category: C::Coll, reader: R::Library,
        kind: K::Bytes { min: 0, max: 2 * KIB }, auto: false,
        default: I::Int(2 * KIB), rule: "",
        doc: "largest contribution (bytes per rank; per rank in total for Scatter and Alltoall) a collective sends through the shared-memory path's slots",
    };
    CollShmLargeMax = Tunable {
        name: "OXMPI_COLL_SHM_LARGE_MAX", category: C::Coll, reader: R::Library,
        kind: K::Bytes { min: 0, max: UNLIMITED }, auto: true, default: I::Auto,
        rule: "1 MiB on nodes with more ranks than CPUs, and for a two-member Reduce (pipelined); with a core per rank the point-to-point algorithms are faster",
        doc: "largest single-node Bcast/Reduce/Allreduce (bytes; Alltoall: all of a rank's blocks) moved through shared staging areas; a value set applies at any load (0 turns them off)",
    };
    CollBcastShortMsg = coll_bytes("OXMPI_COLL_BCAST_SHORT_MSG", 12_288, "bcast messages below this many bytes use a binomial tree");
    CollBcastMinProcs = coll_procs("OXMPI_COLL_BCAST_MIN_PROCS", 8, "bcast on fewer ranks than this uses a binomial tree");
    CollReduceShortMsg = coll_bytes("OXMPI_COLL_REDUCE_SHORT_MSG", 2048, "commutative reduce from this many bytes uses Rabenseifner's algorithm");
    CollAllreduceShortMsg = coll_bytes("OXMPI_COLL_ALLREDUCE_SHORT_MSG", 2048, "commutative allreduce from this many bytes uses Rabenseifner's algorithm");
    CollAllreduceLongMsg = coll_bytes("OXMPI_COLL_ALLREDUCE_LONG_MSG", 262_144, "allreduce from this many bytes uses a ring (non-power-of-two sizes) or reduce+bcast (non-commutative ops)");
    CollReduceScatterLongMsg = coll_bytes("OXMPI_COLL_REDUCE_SCATTER_LONG_MSG", 524_288, "commutative reduce-scatter from this many bytes in total uses a ring");
    CollGatherLongMsg = coll_bytes("OXMPI_COLL_GATHER_LONG_MSG", 65_536, "gather with blocks of this many bytes or more is linear");
    CollScatterLongMsg = coll_bytes("OXMPI_COLL_SCATTER_LONG_MSG", 65_536, "scatter with blocks of this many bytes or more is linear");
    CollAllgatherShortMsg = coll_bytes("OXMPI_COLL_ALLGATHER_SHORT_MSG", 81_920, "allgather below this many bytes in total uses recursive doubling (power of two) or Bruck");
    CollAllgatherLongMsg = coll_bytes("OXMPI_COLL_ALLGATHER_LONG_MSG", 524_288, "allgather below this many bytes in total on a power of two uses recursive doubling, else a ring");
    CollAlltoallShortMsg = coll_bytes("OXMPI_COLL_ALLTOALL_SHORT_MSG", 256, "alltoall blocks up to this many bytes (with enough ranks) use Bruck");
    CollAlltoallMediumMsg = coll_bytes("OXMPI_COLL_ALLTOALL_MEDIUM_MSG", 32_768, "alltoall blocks up to this many bytes are linear, larger ones pairwise");
    CollAlltoallBruckMinProcs = coll_procs("OXMPI_COLL_ALLTOALL_BRUCK_MIN_PROCS", 8, "fewest ranks for a Bruck alltoall");
    CollAlltoallvPairwiseMinProcs = coll_procs("OXMPI_COLL_ALLTOALLV_PAIRWISE_MIN_PROCS", 64, "alltoallv on this many ranks or more is pairwise, fewer linear");
    CollBarrierAlgo = algo("OXMPI_COLL_BARRIER_ALGO", "MPI_Barrier", &["dissemination"]);
    CollBcastAlgo = algo("OXMPI_COLL_BCAST_ALGO", "MPI_Bcast", &["binomial", "scatter_ring_allgather"]);
    CollReduceAlgo = algo("OXMPI_COLL_REDUCE_ALGO", "MPI_Reduce", &["binomial", "rabenseifner"]);
    CollAllreduceAlgo = algo("OXMPI_COLL_ALLREDUCE_ALGO", "MPI_Allreduce", &["recursive_doubling", "rabenseifner", "ring", "reduce_bcast"]);
    CollReduceScatterBlockAlgo = algo("OXMPI_COLL_REDUCE_SCATTER_BLOCK_ALGO", "MPI_Reduce_scatter_block", &["recursive_halving", "ring", "reduce_scatterv"]);
    CollReduceScatterAlgo = algo("OXMPI_COLL_REDUCE_SCATTER_ALGO", "MPI_Reduce_scatter", &["recursive_halving", "ring", "reduce_scatterv"]);
    CollScanAlgo = algo("OXMPI_COLL_SCAN_ALGO", "MPI_Scan", &["recursive_doubling"]);
    CollExscanAlgo = algo("OXMPI_COLL_EXSCAN_ALGO", "MPI_Exscan", &["recursive_doubling"]);
    CollGatherAlgo = algo("OXMPI_COLL_GATHER_ALGO", "MPI_Gather", &["binomial", "linear"]);
    CollGathervAlgo = algo("OXMPI_COLL_GATHERV_ALGO", "MPI_Gatherv", &["linear"]);
    CollScatterAlgo = algo("OXMPI_COLL_SCATTER_ALGO", "MPI_Scatter", &["binomial", "linear"]);
    CollScattervAlgo = algo("OXMPI_COLL_SCATTERV_ALGO", "MPI_Scatterv", &["linear"]);
    CollAllgatherAlgo = algo("OXMPI_COLL_ALLGATHER_ALGO", "MPI_Allgather", &["recursive_doubling", "bruck", "ring"]);
    CollAllgathervAlgo = algo("OXMPI_COLL_ALLGATHERV_ALGO", "MPI_Allgatherv", &["ring"]);
    CollAlltoallAlgo = algo("OXMPI_COLL_ALLTOALL_ALGO", "MPI_Alltoall", &["bruck", "linear", "pairwise"]);
    CollAlltoallvAlgo = algo("OXMPI_COLL_ALLTOALLV_ALGO", "MPI_Alltoallv", &["linear", "pairwise"]);
    Launcher = Tunable {
        name: "OXMPI_LAUNCHER", category: C::Launch, reader: R::Mpiexec,
        kind: K::Text, auto: false, default: I::Text("ssh -x -o BatchMode=yes {host}"),
        rule: "",
        doc: "command template mpiexec runs to start its proxy on another host, {host} replaced by the host name (also -launcher-exec)",
    };
    LaunchTimeout = Tunable {
        name: "OXMPI_LAUNCH_TIMEOUT", category: C::Launch, reader: R::Mpiexec,
        kind: K::Int { min: 1, max: 86_400 }, auto: false, default: I::Int(60), rule: "",
        doc: "seconds mpiexec waits for every proxy to connect",
    };
    ProxyPath = Tunable {
        name: "OXMPI_PROXY_PATH", category: C::Launch, reader: R::Mpiexec,
        kind: K::Text, auto: false, default: I::Auto, rule: "this mpiexec's own path",
        doc: "the mpiexec to run as proxy on the other hosts",
    };
    MpiexecVerbose = Tunable {
        name: "OXMPI_MPIEXEC_VERBOSE", category: C::Launch, reader: R::Mpiexec,
        kind: K::Bool, auto: false, default: I::Bool(false), rule: "",
        doc: "1 makes mpiexec print what it does (as -verbose)",
    };
    Nameserver = Tunable {
        name: "OXMPI_NAMESERVER", category: C::Launch, reader: R::Mpiexec,
        kind: K::Text, auto: false, default: I::Auto, rule: "the job's own name table",
        doc: "HOST:PORT of an oxmpi-nameserver that answers the job's MPI_Publish_name, MPI_Lookup_name and MPI_Unpublish_name (as -nameserver), so that separately started jobs see each other's names",
    };
    Cc = Tunable {
        name: "OXMPI_CC", category: C::Wrapper, reader: R::Wrapper,
        kind: K::Text, auto: false, default: I::Auto, rule: "MPICH_CC, else cc",
        doc: "the C compiler mpicc runs (also -cc=)",
    };
    Cxx = Tunable {
        name: "OXMPI_CXX", category: C::Wrapper, reader: R::Wrapper,
        kind: K::Text, auto: false, default: I::Auto, rule: "MPICH_CXX, else c++",
        doc: "the C++ compiler mpicxx runs (also -cxx=)",
    };
    Fc = Tunable {
        name: "OXMPI_FC", category: C::Wrapper, reader: R::Wrapper,
        kind: K::Text, auto: false, default: I::Auto, rule: "MPICH_FC, else gfortran",
        doc: "the Fortran compiler mpifort (mpif77, mpif90) runs (also -fc=); staging builds the modules with it",
    };
}

/// `OXMPI_*` variables that are not tunables: set by oxmpi's own tools for each other,
/// or read only by tests and examples. Nothing validates them at `MPI_Init`.
pub const INTERNAL: &[(&str, &str)] = &[
    (
        "OXMPI_PREFIX",
        "read by the IMPI tests (crates/impi/tests): the staged prefix whose impirun and mpicc they run, target/oxmpi when unset",
    ),
    (
        "OXMPI_IMPI",
        "set by impirun -client for its ranks: the unix socket that hands each rank its IMPI job description and host channels",
    ),
    (
        "OXMPI_KVSNAME",
        "set by mpiexec for each rank: the job's key-value space name, which shared-memory names carry",
    ),
    (
        "OXMPI_JOB_SECRET",
        "set by mpiexec for each rank: the secret TCP connections prove",
    ),
    (
        "OXMPI_SPAWN_KVSNAME",
        "set by mpiexec for the mpiexec it starts for a spawned job: that job's name",
    ),
    (
        "OXMPI_SPAWN_SECRET",
        "set by mpiexec for the mpiexec it starts for a spawned job: the parent job's secret",
    ),
    (
        "OXMPI_SPAWN_PREPUT",
        "set by mpiexec for the mpiexec it starts for a spawned job: the parent's preput keys",
    ),
    (
        "OXMPI_SPAWN_PLACE",
        "set by a multi-host mpiexec for the mpiexec it starts for a spawned job: each rank's host",
    ),
    (
        "OXMPI_SPAWN_READY_FD",
        "set by a multi-host mpiexec for the mpiexec it starts for a spawned job: the pipe on which that one reports its proxies up",
    ),
    (
        "OXMPI_SPAWN_SLOTS",
        "set by mpiexec for the mpiexec it starts for a spawned job of a family with a universe size: the shared count of the family's processes (descriptor:universe size), which the soft info key fits into",
    ),
    (
        "OXMPI_SPAWN_REQUEST",
        "set by a singleton for the mpiexec it starts to spawn: the spawn request",
    ),
    (
        "OXMPI_WRAPPER_ACTIVE",
        "set by mpicc/mpicxx/mpifort while they run, to detect a wrapper calling itself",
    ),
    (
        "OXMPI_TEST_MPIEXEC",
        "test suites only: the launcher the Rust API's tests use",
    ),
    (
        "OXMPI_TEST_GO",
        "network tests only: a file whose appearance lets tests/net/wait_go.c go on",
    ),
    ("OXMPI_EXAMPLE_FAIL", "examples only: make an example fail"),
    ("OXMPI_EXAMPLE_PANIC", "examples only: make an example panic"),
];

impl Id {
    /// The id of the tunable named `name`, if declared.
    pub fn find(name: &str) -> Option<Id> {
        ALL.iter().position(|t| t.name == name).map(|i| IDS[i])
    }

    /// The declaration.
    pub fn tunable(self) -> &'static Tunable {
        &ALL[self as usize]
    }

    /// The environment variable.
    pub fn name(self) -> &'static str {
        self.tunable().name
    }
}

/// The tunable named `name`, if declared.
pub fn find(name: &str) -> Option<&'static Tunable> {
    ALL.iter().find(|t| t.name == name)
}

/// Parses a byte size: digits with an optional `k`, `m` or `g` suffix (any case).
/// None when malformed or larger than `u64`.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, mult) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], KIB),
        b'm' | b'M' => (&s[..s.len() - 1], MIB),
        b'g' | b'G' => (&s[..s.len() - 1], GIB),
        _ => (s, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

/// A byte count as the registry writes it: with the largest suffix that divides it.
pub fn format_bytes(n: u64) -> String {
    if n == UNLIMITED {
        return "unlimited".into();
    }
    for (unit, suffix) in [(GIB, "g"), (MIB, "m"), (KIB, "k")] {
        if n >= unit && n % unit == 0 {
            return format!("{}{suffix}", n / unit);
        }
    }
    n.to_string()
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "1" | "yes" | "true" | "on" => Some(true),
        "0" | "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

impl Tunable {
    /// Parses a value of this variable. `Ok(None)`: as if unset (an empty value, or
    /// `auto` where accepted). The error text says what was expected.
    pub fn parse(&self, raw: &str) -> Result<Option<Value>, TunableError> {
        let v = raw.trim();
        if v.is_empty() || self.auto && v.eq_ignore_ascii_case("auto") {
            return Ok(None);
        }
        let fail = |reason: String| TunableError {
            name: self.name,
            value: raw.to_string(),
            reason,
        };
        let value = match self.kind {
            K::Bool => Value::Bool(parse_bool(v).ok_or_else(|| {
                fail("not a boolean (1, yes, true, on or 0, no, false, off)".into())
            })?),
            K::Int { min, max } => {
                if !v.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(fail(format!(
                        "not an integer (expected {min} to {max}{})",
                        self.auto_hint()
                    )));
                }
                let n = v.parse::<u64>().ok().filter(|n| (min..=max).contains(n));
                Value::Int(
                    n.ok_or_else(|| fail(format!("out of range (expected {min} to {max})")))?,
                )
            }
            K::Bytes { min, max } => {
                let range = format!("{} to {}", format_bytes(min), format_bytes(max));
                let n = parse_bytes(v).ok_or_else(|| {
                    // Well-formed but too large for 64 bits, or malformed.
                    let digits = v
                        .strip_suffix(|c: char| "kKmMgG".contains(c))
                        .unwrap_or(v);
                    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                        fail(format!("out of range (expected {range})"))
                    } else {
                        fail(format!(
                            "not a byte size (expected a count of bytes, {range}, optionally with a k, m or g suffix{})",
                            self.auto_hint()
                        ))
                    }
                })?;
                if !(min..=max).contains(&n) {
                    return Err(fail(format!("out of range (expected {range})")));
                }
                Value::Int(n)
            }
            K::Choice(words) => {
                let w = v.to_ascii_lowercase();
                match words.iter().find(|&&x| x == w) {
                    Some(_) => Value::Text(w),
                    None => {
                        return Err(fail(format!(
                            "expected {}{}",
                            words.join(", "),
                            self.auto_hint()
                        )))
                    }
                }
            }
            K::Text => Value::Text(v.to_string()),
            K::Ipv4 => match v.parse::<Ipv4Addr>() {
                Ok(ip) => Value::Text(ip.to_string()),
                Err(_) => {
                    return Err(fail(format!(
                        "not an IPv4 address (expected four numbers 0 to 255 such as 10.0.0.5{})",
                        self.auto_hint()
                    )))
                }
            },
            K::Algorithm { call, names } => {
                let w = v.to_ascii_lowercase();
                match names.iter().find(|&&n| n == w) {
                    Some(n) => Value::Text(n.to_string()),
                    None => {
                        return Err(fail(format!(
                            "unknown algorithm for {call}; expected auto or one of {}",
                            names.join(", ")
                        )));
                    }
                }
            }
        };
        Ok(Some(value))
    }

    fn auto_hint(&self) -> &'static str {
        if self.auto {
            ", or auto"
        } else {
            ""
        }
    }

    /// The default as a value.
    pub fn default_value(&self) -> Value {
        match self.default {
            I::Auto => Value::Auto,
            I::Bool(b) => Value::Bool(b),
            I::Int(n) => Value::Int(n),
            I::Text(s) => Value::Text(s.to_string()),
        }
    }

    /// The default as text (`auto` for an automatic one).
    pub fn default_text(&self) -> String {
        self.default_value().to_string()
    }

    /// What values the variable takes, in words.
    pub fn values_text(&self) -> String {
        let auto = if self.auto { ", auto" } else { "" };
        match self.kind {
            K::Bool => format!("0, 1{auto}"),
            K::Int { min, max } => format!("{min} to {max}{auto}"),
            K::Bytes { min, max } => format!(
                "bytes, {} to {} (k, m, g suffixes){auto}",
                format_bytes(min),
                format_bytes(max)
            ),
            K::Choice(words) => format!("{}{auto}", words.join(", ")),
            K::Text => format!("text{auto}"),
            K::Ipv4 => format!("IPv4 address{auto}"),
            K::Algorithm { names, .. } => format!("auto, {}", names.join(", ")),
        }
    }

    /// The description, with the rule of an automatic default and, for variables the
    /// library does not read, who does.
    pub fn meaning(&self) -> String {
        let mut s = String::new();
        match self.reader {
            R::Mpiexec => s.push_str("mpiexec: "),
            R::Wrapper => s.push_str("mpicc/mpicxx/mpifort: "),
            R::Library | R::LibraryAndMpiexec => {}
        }
        if let K::Algorithm { call, .. } = self.kind {
            // The rule is the same for all of them and said by the doc line.
            let _ = write!(s, "force the algorithm of {call}; {}", self.doc);
            return s;
        }
        s.push_str(self.doc);
        if !self.rule.is_empty() {
            let _ = write!(s, "; auto: {}", self.rule);
        }
        s
    }
}

/// The values of one program's tunables for this process: those it reads that are set
/// in the environment (validated) and the defaults of all others.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// By [`Id`]; None = unset (the default applies).
    set: Vec<Option<Value>>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            set: vec![None; ALL.len()],
        }
    }
}

impl Settings {
    /// Every tunable at its default.
    pub fn defaults() -> Settings {
        Settings::default()
    }

    /// Reads every variable the library reads from the environment; the first
    /// malformed or out-of-range value is an error naming it (what `MPI_Init` reports).
    pub fn from_env() -> Result<Settings, TunableError> {
        Settings::from_env_for(Program::Library)
    }

    /// Reads every variable `program` reads from the environment; the first malformed
    /// or out-of-range value is an error naming it.
    pub fn from_env_for(program: Program) -> Result<Settings, TunableError> {
        let mut s = Settings::default();
        for (i, t) in ALL
            .iter()
            .enumerate()
            .filter(|(_, t)| t.reader.read_by(program))
        {
            let Some(raw) = std::env::var_os(t.name) else {
                continue;
            };
            match raw.to_str() {
                Some(v) => s.set[i] = t.parse(v)?,
                None => {
                    return Err(TunableError {
                        name: t.name,
                        value: raw.to_string_lossy().into_owned(),
                        reason: "not valid UTF-8".into(),
                    })
                }
            }
        }
        Ok(s)
    }

    /// [`Settings::from_env`] with the variables looked up through `lookup`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Settings, TunableError> {
        Settings::from_lookup_for(Program::Library, lookup)
    }

    /// [`Settings::from_env_for`] with the variables looked up through `lookup`.
    pub fn from_lookup_for(
        program: Program,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, TunableError> {
        let mut s = Settings::default();
        for (i, t) in ALL
            .iter()
            .enumerate()
            .filter(|(_, t)| t.reader.read_by(program))
        {
            if let Some(v) = lookup(t.name) {
                s.set[i] = t.parse(&v)?;
            }
        }
        Ok(s)
    }

    /// Sets `id` from text, as if read from the environment.
    pub fn set(&mut self, id: Id, raw: &str) -> Result<(), TunableError> {
        self.set[id as usize] = id.tunable().parse(raw)?;
        Ok(())
    }

    /// Whether `id` has a value of its own (not its default).
    pub fn is_set(&self, id: Id) -> bool {
        self.set[id as usize].is_some()
    }

    /// The value in effect: the one set, else the default.
    pub fn get(&self, id: Id) -> Value {
        self.set[id as usize]
            .clone()
            .unwrap_or_else(|| id.tunable().default_value())
    }

    /// An integer or byte tunable's value; None when automatic.
    pub fn int(&self, id: Id) -> Option<u64> {
        match self.set[id as usize] {
            Some(Value::Int(n)) => Some(n),
            Some(_) => None,
            None => match id.tunable().default {
                I::Int(n) => Some(n),
                _ => None,
            },
        }
    }

    /// [`Settings::int`] as a `usize` (every range fits one).
    pub fn size(&self, id: Id) -> Option<usize> {
        self.int(id)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// A boolean tunable's value; None when automatic.
    pub fn flag(&self, id: Id) -> Option<bool> {
        match self.get(id) {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// A word, algorithm name or text; None when automatic.
    pub fn text(&self, id: Id) -> Option<String> {
        match self.get(id) {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// An address tunable's value; None when automatic.
    pub fn ipv4(&self, id: Id) -> Option<Ipv4Addr> {
        self.text(id).and_then(|a| a.parse().ok())
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The README's tunables section: a table of every tunable and the list of internal
/// variables, in Markdown.
pub fn markdown() -> String {
    let mut out = String::new();
    out.push_str("| variable | values | default | meaning |\n|---|---|---|---|\n");
    for t in ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            t.name,
            md_cell(&t.values_text()),
            md_cell(&t.default_text()),
            md_cell(&t.meaning())
        );
    }
    out.push_str("\nInternal variables (not tunables; nothing checks them at `MPI_Init`) - ");
    let internal: Vec<String> = INTERNAL
        .iter()
        .map(|(n, what)| format!("`{n}`: {what}"))
        .collect();
    out.push_str(&internal.join("; "));
    out.push_str(".\n");
    out
}

/// The line that opens the generated section of the README.
pub const README_BEGIN: &str = "<!-- BEGIN tunables: generated from crates/tunables/src/lib.rs; regenerate with `cargo run -q -p oxmpi-info -- --update-readme README.md` -->";
/// The line that closes it.
pub const README_END: &str = "<!-- END tunables -->";

/// `readme` with its generated section replaced by [`markdown`]; None when the markers
/// are missing.
pub fn splice_readme(readme: &str) -> Option<String> {
    let begin = readme.find(README_BEGIN)?;
    let body = begin + README_BEGIN.len();
    let end = body + readme[body..].find(README_END)?;
    Some(format!(
        "{}\n{}{}",
        &readme[..body],
        markdown(),
        &readme[end..]
    ))
}

/// A lookup over a fixed list of (name, value) pairs, as if the environment held just
/// them: for [`Settings::from_lookup`] in tools and tests.
pub fn lookup_in<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |k| {
        pairs
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_indices_and_names_are_unique() {
        assert_eq!(IDS.len(), ALL.len());
        for (i, t) in ALL.iter().enumerate() {
            assert_eq!(IDS[i] as usize, i);
            assert_eq!(Id::find(t.name), Some(IDS[i]));
            assert!(t.name.starts_with("OXMPI_"), "{}", t.name);
            assert!(
                std::ptr::eq(find(t.name).unwrap(), &ALL[i]),
                "{} twice",
                t.name
            );
            assert!(!t.doc.is_empty(), "{}", t.name);
            // `auto` is accepted only where the default is automatic, and an automatic
            // default says how it is chosen.
            if t.auto {
                assert_eq!(t.default, I::Auto, "{}", t.name);
            }
            if t.default == I::Auto {
                assert!(!t.rule.is_empty(), "{}", t.name);
            }
            // The default is a value of the declared type.
            match (t.kind, t.default) {
                (K::Bool, I::Bool(_)) | (_, I::Auto) | (K::Text, I::Text(_)) => {}
                (K::Int { min, max }, I::Int(n)) | (K::Bytes { min, max }, I::Int(n)) => {
                    assert!((min..=max).contains(&n), "{}", t.name)
                }
                (K::Choice(words), I::Text(w)) => assert!(words.contains(&w), "{}", t.name),
                _ => panic!("{}: default of another type", t.name),
            }
            assert!(!INTERNAL.iter().any(|(n, _)| *n == t.name), "{}", t.name);
        }
        assert!(find("OXMPI_NO_SUCH").is_none());
        assert!(Id::find("OXMPI_NO_SUCH").is_none());
    }

    #[test]
    fn ids_name_their_entries() {
        assert_eq!(Id::ShmEagerLimit.name(), "OXMPI_SHM_EAGER_LIMIT");
        assert_eq!(Id::CollShmLargeMax.name(), "OXMPI_COLL_SHM_LARGE_MAX");
        assert_eq!(Id::CollAlltoallvAlgo.name(), "OXMPI_COLL_ALLTOALLV_ALGO");
        assert_eq!(Id::Cxx.name(), "OXMPI_CXX");
        assert_eq!(Id::Fc.name(), "OXMPI_FC");
        assert_eq!(Id::Fc as usize, ALL.len() - 1);
    }

    #[test]
    fn algorithm_variables_name_their_collective() {
        let mut n = 0;
        for t in ALL {
            if let K::Algorithm { call, names } = t.kind {
                n += 1;
                assert!(call.starts_with("MPI_"), "{}", t.name);
                let want = format!("OXMPI_COLL_{}_ALGO", call[4..].to_ascii_uppercase());
                assert_eq!(t.name, want);
                assert!(!names.is_empty(), "{}", t.name);
                assert!(!names.contains(&"auto"), "{}", t.name);
            }
        }
        assert_eq!(n, 16);
    }

    #[test]
    fn booleans() {
        let t = Id::ShmNoCma.tunable();
        for v in ["1", "yes", "TRUE", " on "] {
            assert_eq!(t.parse(v).unwrap(), Some(Value::Bool(true)), "{v}");
        }
        for v in ["0", "No", "false", "off"] {
            assert_eq!(t.parse(v).unwrap(), Some(Value::Bool(false)), "{v}");
        }
        assert_eq!(t.parse("").unwrap(), None);
        let e = t.parse("maybe").unwrap_err();
        assert_eq!(
            e.to_string(),
            "OXMPI_SHM_NO_CMA=\"maybe\": not a boolean (1, yes, true, on or 0, no, false, off)"
        );
        // `auto` only where the default is automatic.
        assert!(t.parse("auto").is_err());
        assert_eq!(Id::Oversubscribed.tunable().parse("auto").unwrap(), None);
    }

    #[test]
    fn integers_and_ranges() {
        let t = Id::TcpConnectTimeout.tunable();
        assert_eq!(t.parse(" 45 ").unwrap(), Some(Value::Int(45)));
        let e = t.parse("0").unwrap_err();
        assert_eq!(e.reason, "out of range (expected 1 to 86400)");
        assert!(t
            .parse("99999999999999999999999")
            .unwrap_err()
            .reason
            .starts_with("out of range"));
        let e = t.parse("-3").unwrap_err();
        assert!(e.reason.starts_with("not an integer"), "{e}");
        assert!(t
            .parse("1k")
            .unwrap_err()
            .reason
            .starts_with("not an integer"));
        let spin = Id::Spin.tunable();
        assert_eq!(spin.parse("auto").unwrap(), None);
        assert_eq!(spin.parse("0").unwrap(), Some(Value::Int(0)));
        assert!(spin.parse("x").unwrap_err().reason.ends_with(", or auto)"));
    }

    #[test]
    fn byte_sizes_take_suffixes() {
        assert_eq!(parse_bytes("64k"), Some(64 << 10));
        assert_eq!(parse_bytes("2M"), Some(2 << 20));
        assert_eq!(parse_bytes("1g"), Some(1 << 30));
        assert_eq!(parse_bytes("4096"), Some(4096));
        for bad in [
            "",
            "k",
            "12x",
            "-5",
            "1.5m",
            "+3",
            "1kb",
            "99999999999999999999g",
        ] {
            assert_eq!(parse_bytes(bad), None, "{bad}");
        }
        assert_eq!(format_bytes(64 << 20), "64m");
        assert_eq!(format_bytes(1536), "1536");
        assert_eq!(format_bytes(3 << 10), "3k");
        assert_eq!(format_bytes(0), "0");

        let t = Id::ShmEagerLimit.tunable();
        assert_eq!(t.parse("32k").unwrap(), Some(Value::Int(32 << 10)));
        assert_eq!(t.parse("Auto").unwrap(), None);
        let e = t.parse("12x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "OXMPI_SHM_EAGER_LIMIT=\"12x\": not a byte size (expected a count of bytes, 0 to 32m, optionally with a k, m or g suffix, or auto)"
        );
        let e = t.parse("33m").unwrap_err();
        assert_eq!(e.reason, "out of range (expected 0 to 32m)");
        let e = t.parse("99999999999999999999").unwrap_err();
        assert_eq!(e.reason, "out of range (expected 0 to 32m)");
        for bad in ["k", "12kk", "1 k", "0x10"] {
            let e = t.parse(bad).unwrap_err();
            assert!(e.reason.starts_with("not a byte size"), "{bad}: {e}");
        }
        let ring = Id::ShmRingBytes.tunable();
        assert!(ring.parse("1k").is_err());
        assert_eq!(ring.parse("4k").unwrap(), Some(Value::Int(4096)));
    }

    #[test]
    fn choices_and_algorithms() {
        let t = Id::ShmStreamStores.tunable();
        assert_eq!(t.parse("NT").unwrap(), Some(Value::Text("nt".into())));
        let e = t.parse("fast").unwrap_err();
        assert_eq!(e.reason, "expected cached, nt, non-temporal");
        let e = Id::Netmod.tunable().parse("udp").unwrap_err();
        assert_eq!(e.reason, "expected tcp, or auto");
        let g = Id::CollGatherAlgo.tunable();
        assert_eq!(
            g.parse("Linear").unwrap(),
            Some(Value::Text("linear".into()))
        );
        assert_eq!(g.parse("auto").unwrap(), None);
        let e = g.parse("tree").unwrap_err();
        assert_eq!(
            e.to_string(),
            "OXMPI_COLL_GATHER_ALGO=\"tree\": unknown algorithm for MPI_Gather; expected auto or one of binomial, linear"
        );
        // An algorithm of another collective is refused.
        assert!(g.parse("ring").is_err());
    }

    #[test]
    fn addresses() {
        let t = Id::TcpAddr.tunable();
        assert_eq!(
            t.parse(" 10.1.2.3 ").unwrap(),
            Some(Value::Text("10.1.2.3".into()))
        );
        assert_eq!(t.parse("auto").unwrap(), None);
        for bad in ["10.1.2", "host.example", "10.1.2.256", "::1", "10.1.2.3:80"] {
            let e = t.parse(bad).unwrap_err();
            assert!(e.reason.starts_with("not an IPv4 address"), "{bad}: {e}");
        }
        let mut s = Settings::defaults();
        assert_eq!(s.ipv4(Id::TcpAddr), None);
        s.set(Id::TcpAddr, "192.168.0.7").unwrap();
        assert_eq!(s.ipv4(Id::TcpAddr), Some(Ipv4Addr::new(192, 168, 0, 7)));
    }

    #[test]
    fn each_program_reads_its_own_variables() {
        let env = [
            ("OXMPI_LAUNCH_TIMEOUT", "abc"),
            ("OXMPI_YIELD", "7"),
            ("OXMPI_TCP_ADDR", "10.0.0.1"),
        ];
        // The library ignores mpiexec's variable...
        let s = Settings::from_lookup(lookup_in(&env)).unwrap();
        assert_eq!(s.int(Id::Yield), Some(7));
        assert_eq!(s.int(Id::LaunchTimeout), Some(60));
        // ...and mpiexec the library's, but not the one both read.
        let e = Settings::from_lookup_for(Program::Mpiexec, lookup_in(&env)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "OXMPI_LAUNCH_TIMEOUT=\"abc\": not an integer (expected 1 to 86400)"
        );
        let s = Settings::from_lookup_for(
            Program::Mpiexec,
            lookup_in(&[
                ("OXMPI_YIELD", "x"),
                ("OXMPI_LAUNCH_TIMEOUT", "5"),
                ("OXMPI_TCP_ADDR", "10.0.0.1"),
                ("OXMPI_MPIEXEC_VERBOSE", "yes"),
            ]),
        )
        .unwrap();
        assert_eq!(s.int(Id::LaunchTimeout), Some(5));
        assert_eq!(s.int(Id::Yield), Some(200));
        assert_eq!(s.ipv4(Id::TcpAddr), Some(Ipv4Addr::new(10, 0, 0, 1)));
        assert_eq!(s.flag(Id::MpiexecVerbose), Some(true));
        assert_eq!(
            s.text(Id::Launcher).as_deref(),
            Some("ssh -x -o BatchMode=yes {host}")
        );
        assert_eq!(s.text(Id::ProxyPath), None);
        assert!(Settings::from_lookup_for(
            Program::Mpiexec,
            lookup_in(&[("OXMPI_TCP_ADDR", "nowhere")])
        )
        .is_err());
        for t in ALL {
            assert_eq!(
                t.reader.read_by(Program::Mpiexec),
                matches!(t.reader, R::Mpiexec | R::LibraryAndMpiexec),
                "{}",
                t.name
            );
        }
    }

    #[test]
    fn settings_resolve_defaults_and_report_the_first_bad_value() {
        let d = Settings::defaults();
        assert_eq!(d.get(Id::Yield), Value::Int(200));
        assert_eq!(d.int(Id::ShmEagerLimit), None);
        assert_eq!(d.get(Id::ShmEagerLimit), Value::Auto);
        assert_eq!(d.flag(Id::CollShm), Some(true));
        assert_eq!(d.text(Id::Bind).as_deref(), Some("block"));
        assert!(!d.is_set(Id::Yield));

        let s = Settings::from_lookup(lookup_in(&[
            ("OXMPI_YIELD", "7"),
            ("OXMPI_SHM_EAGER_LIMIT", "8k"),
            ("OXMPI_TCP_ADDR", " auto "),
            ("OXMPI_LAUNCH_TIMEOUT", "not read by the library"),
        ]))
        .unwrap();
        assert_eq!(s.int(Id::Yield), Some(7));
        assert_eq!(s.size(Id::ShmEagerLimit), Some(8192));
        assert!(s.is_set(Id::ShmEagerLimit));
        assert!(!s.is_set(Id::TcpAddr));
        assert_eq!(s.text(Id::TcpAddr), None);

        let e = Settings::from_lookup(lookup_in(&[("OXMPI_COLL_SHM", "2")])).unwrap_err();
        assert_eq!(e.name, "OXMPI_COLL_SHM");
        assert!(e.to_string().starts_with("OXMPI_COLL_SHM=\"2\": "), "{e}");
    }

    #[test]
    fn markdown_lists_every_tunable() {
        let md = markdown();
        for t in ALL {
            assert!(md.contains(&format!("| `{}` |", t.name)), "{}", t.name);
        }
        for (n, _) in INTERNAL {
            assert!(md.contains(n), "{n}");
        }
        let readme = format!("intro\n{README_BEGIN}\nold\n{README_END}\nrest\n");
        let new = splice_readme(&readme).unwrap();
        assert!(new.starts_with(&format!("intro\n{README_BEGIN}\n| variable |")));
        assert!(new.ends_with(&format!(".\n{README_END}\nrest\n")));
        assert_eq!(splice_readme(&new).unwrap(), new);
        assert_eq!(splice_readme("no markers"), None);
    }

    fn repo_root() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    #[test]
    fn readme_table_is_generated_from_the_registry() {
        let path = repo_root().join("README.md");
        let readme = std::fs::read_to_string(&path).expect("README.md");
        let want = splice_readme(&readme).expect("README.md lacks the tunables markers");
        assert!(
            readme == want,
            "README.md's tunables table differs from the registry in crates/tunables/src/lib.rs; \
             regenerate it with `cargo run -q -p oxmpi-info -- --update-readme README.md`"
        );
    }

    /// Every `"OXMPI_..."` string literal in the Rust sources names a declared tunable
    /// or an internal variable.
    #[test]
    fn the_sources_read_no_undeclared_variable() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = e.path();
                if p.is_dir() {
                    if p.file_name().is_some_and(|n| n != "target") {
                        walk(&p, out);
                    }
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        walk(&repo_root().join("crates"), &mut files);
        files.retain(|f| !f.ends_with("tunables/src/lib.rs"));
        assert!(files.len() > 20);
        let mut unknown = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let mut rest = text.as_str();
            while let Some(i) = rest.find("\"OXMPI_") {
                let name: String = rest[i + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                let after = rest[i + 1 + name.len()..].chars().next();
                if after == Some('"')
                    && !name.ends_with('_')
                    && find(&name).is_none()
                    && !INTERNAL.iter().any(|(n, _)| *n == name)
                {
                    unknown.push(format!("{}: {name}", f.display()));
                }
                rest = &rest[i + 1..];
            }
        }
        assert!(unknown.is_empty(), "undeclared variables: {unknown:?}");
    }
}
