//! The registry of tunables: every `OXMPI_*` environment variable oxmpi reads, declared
//! once ([`ALL`]) with its type ([`Kind`]: boolean, integer, byte size with `k`/`m`/`g`
//! suffixes, one of a list of words, free text, or a collective's algorithm), its
//! default (and for automatic defaults, the rule that picks the value), its category,
//! who reads it ([`Reader`]) and a one-line description; and the one parser for all of
//! them ([`Tunable::parse`]).
//!
//! `MPI_Init` reads every variable the library reads into [`Settings`] before it starts
//! anything; a malformed or out-of-range value fails the call with a message naming
//! the variable, the value and what was expected. The engine's [`Config`] and the
//! collective decision table's [`Tuning`] are filled from those settings, so no other
//! code parses an `OXMPI_*` value. `oxmpi-info` and the README's table are rendered from
//! this registry ([`markdown`]); a test fails when the README's copy drifts, and another
//! when the sources mention an `OXMPI_*` variable that is neither declared here nor
//! listed as internal ([`INTERNAL`]).
//!
//! Values: surrounding white space is ignored and an empty value counts as unset;
//! booleans are `1`/`yes`/`true`/`on` or `0`/`no`/`false`/`off`; words and algorithm
//! names are case-insensitive; variables with an automatic default also take `auto`.
//!
//! [`Config`]: crate::config::Config

use crate::error::{Error, ErrorClass};
use oxmpi_coll::decision::{Tuning, SHM_SLOT};
use oxmpi_coll::schedule::{Algorithm, Collective};
use std::fmt::{self, Write as _};

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
    /// Any text (an address, an interface, a command).
    Text,
    /// The name of one of the collective's algorithms (`Algorithm::name`).
    Algorithm(Collective),
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
    /// A word of a [`Kind::Choice`] or an algorithm name (lower case), or free text.
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

impl From<TunableError> for Error {
    fn from(e: TunableError) -> Error {
        Error::new(ErrorClass::Other, e.to_string())
    }
}

/// Defines [`Id`] and [`ALL`] from one list, so that an id is its entry's index.
macro_rules! registry {
    ($( $id:ident = $decl:expr ; )*) => {
        /// Names a tunable; `id as usize` is its index in [`ALL`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Id { $($id),* }

        /// Every tunable, in the order of [`Id`] (grouped by category).
        pub static ALL: &[Tunable] = &[ $( $decl ),* ];
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

/// `auto` or one of the algorithm names of `coll`.
const fn algo(name: &'static str, coll: Collective) -> Tunable {
    Tunable {
        name,
        category: C::Coll,
        reader: R::Library,
        kind: K::Algorithm(coll),
        auto: true,
        default: I::Auto,
        rule: "the decision table's choice by communicator and message size",
        doc: "a choice unsuitable for a call falls back to auto, the decision table's choice",
    }
}

/// A threshold of the collective decision table in bytes.
const fn coll_bytes(name: &'static str, default: usize, doc: &'static str) -> Tunable {
    Tunable {
        name,
        category: C::Coll,
        reader: R::Library,
        kind: K::Bytes {
            min: 0,
            max: UNLIMITED,
        },
        auto: false,
        default: I::Int(default as u64),
        rule: "",
        doc,
    }
}

/// A threshold of the collective decision table in ranks.
const fn coll_procs(name: &'static str, default: usize, doc: &'static str) -> Tunable {
    Tunable {
        name,
        category: C::Coll,
        reader: R::Library,
        kind: K::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        auto: false,
        default: I::Int(default as u64),
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
        kind: K::Bytes { min: 0, max: crate::transport::tcp::MAX_EAGER as u64 }, auto: false,
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
        kind: K::Text, auto: true, default: I::Auto,
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
    CollShm = Tunable {
        name: "OXMPI_COLL_SHM", category: C::Coll, reader: R::Library,
        kind: K::Bool, auto: false, default: I::Bool(Tuning::DEFAULT.shm_enabled), rule: "",
        doc: "0 turns off the shared-memory path of collectives on single-node communicators",
    };
    CollShmMax = Tunable {
        name: "OXMPI_COLL_SHM_MAX", category: C::Coll, reader: R::Library,
        kind: K::Bytes { min: 0, max: SHM_SLOT as u64 }, auto: false,
        default: I::Int(Tuning::DEFAULT.shm_max as u64), rule: "",
        doc: "largest contribution (bytes per rank; per rank in total for Scatter and Alltoall) a collective sends through the shared-memory path's slots",
    };
    CollShmLargeMax = Tunable {
        name: "OXMPI_COLL_SHM_LARGE_MAX", category: C::Coll, reader: R::Library,
        kind: K::Bytes { min: 0, max: UNLIMITED }, auto: true, default: I::Auto,
        rule: "1 MiB on nodes with more ranks than CPUs, and for a two-member Reduce (pipelined); with a core per rank the point-to-point algorithms are faster",
        doc: "largest single-node Bcast/Reduce/Allreduce (bytes) moved through shared staging areas; a value set applies at any load (0 turns them off)",
    };
    CollBcastShortMsg = coll_bytes("OXMPI_COLL_BCAST_SHORT_MSG", Tuning::DEFAULT.bcast_short_msg, "bcast messages below this many bytes use a binomial tree");
    CollBcastMinProcs = coll_procs("OXMPI_COLL_BCAST_MIN_PROCS", Tuning::DEFAULT.bcast_min_procs, "bcast on fewer ranks than this uses a binomial tree");
    CollReduceShortMsg = coll_bytes("OXMPI_COLL_REDUCE_SHORT_MSG", Tuning::DEFAULT.reduce_short_msg, "commutative reduce from this many bytes uses Rabenseifner's algorithm");
    CollAllreduceShortMsg = coll_bytes("OXMPI_COLL_ALLREDUCE_SHORT_MSG", Tuning::DEFAULT.allreduce_short_msg, "commutative allreduce from this many bytes uses Rabenseifner's algorithm");
    CollAllreduceLongMsg = coll_bytes("OXMPI_COLL_ALLREDUCE_LONG_MSG", Tuning::DEFAULT.allreduce_long_msg, "allreduce from this many bytes uses a ring (non-power-of-two sizes) or reduce+bcast (non-commutative ops)");
    CollReduceScatterLongMsg = coll_bytes("OXMPI_COLL_REDUCE_SCATTER_LONG_MSG", Tuning::DEFAULT.reduce_scatter_long_msg, "commutative reduce-scatter from this many bytes in total uses a ring");
    CollGatherLongMsg = coll_bytes("OXMPI_COLL_GATHER_LONG_MSG", Tuning::DEFAULT.gather_long_msg, "gather with blocks of this many bytes or more is linear");
    CollScatterLongMsg = coll_bytes("OXMPI_COLL_SCATTER_LONG_MSG", Tuning::DEFAULT.scatter_long_msg, "scatter with blocks of this many bytes or more is linear");
    CollAllgatherShortMsg = coll_bytes("OXMPI_COLL_ALLGATHER_SHORT_MSG", Tuning::DEFAULT.allgather_short_msg, "allgather below this many bytes in total uses recursive doubling (power of two) or Bruck");
    CollAllgatherLongMsg = coll_bytes("OXMPI_COLL_ALLGATHER_LONG_MSG", Tuning::DEFAULT.allgather_long_msg, "allgather below this many bytes in total on a power of two uses recursive doubling, else a ring");
    CollAlltoallShortMsg = coll_bytes("OXMPI_COLL_ALLTOALL_SHORT_MSG", Tuning::DEFAULT.alltoall_short_msg, "alltoall blocks up to this many bytes (with enough ranks) use Bruck");
    CollAlltoallMediumMsg = coll_bytes("OXMPI_COLL_ALLTOALL_MEDIUM_MSG", Tuning::DEFAULT.alltoall_medium_msg, "alltoall blocks up to this many bytes are linear, larger ones pairwise");
    CollAlltoallBruckMinProcs = coll_procs("OXMPI_COLL_ALLTOALL_BRUCK_MIN_PROCS", Tuning::DEFAULT.alltoall_bruck_min_procs, "fewest ranks for a Bruck alltoall");
    CollAlltoallvPairwiseMinProcs = coll_procs("OXMPI_COLL_ALLTOALLV_PAIRWISE_MIN_PROCS", Tuning::DEFAULT.alltoallv_pairwise_min_procs, "alltoallv on this many ranks or more is pairwise, fewer linear");
    CollBarrierAlgo = algo("OXMPI_COLL_BARRIER_ALGO", Collective::Barrier);
    CollBcastAlgo = algo("OXMPI_COLL_BCAST_ALGO", Collective::Bcast);
    CollReduceAlgo = algo("OXMPI_COLL_REDUCE_ALGO", Collective::Reduce);
    CollAllreduceAlgo = algo("OXMPI_COLL_ALLREDUCE_ALGO", Collective::Allreduce);
    CollReduceScatterBlockAlgo = algo("OXMPI_COLL_REDUCE_SCATTER_BLOCK_ALGO", Collective::ReduceScatterBlock);
    CollReduceScatterAlgo = algo("OXMPI_COLL_REDUCE_SCATTER_ALGO", Collective::ReduceScatter);
    CollScanAlgo = algo("OXMPI_COLL_SCAN_ALGO", Collective::Scan);
    CollExscanAlgo = algo("OXMPI_COLL_EXSCAN_ALGO", Collective::Exscan);
    CollGatherAlgo = algo("OXMPI_COLL_GATHER_ALGO", Collective::Gather);
    CollGathervAlgo = algo("OXMPI_COLL_GATHERV_ALGO", Collective::Gatherv);
    CollScatterAlgo = algo("OXMPI_COLL_SCATTER_ALGO", Collective::Scatter);
    CollScattervAlgo = algo("OXMPI_COLL_SCATTERV_ALGO", Collective::Scatterv);
    CollAllgatherAlgo = algo("OXMPI_COLL_ALLGATHER_ALGO", Collective::Allgather);
    CollAllgathervAlgo = algo("OXMPI_COLL_ALLGATHERV_ALGO", Collective::Allgatherv);
    CollAlltoallAlgo = algo("OXMPI_COLL_ALLTOALL_ALGO", Collective::Alltoall);
    CollAlltoallvAlgo = algo("OXMPI_COLL_ALLTOALLV_ALGO", Collective::Alltoallv);
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
}

/// `OXMPI_*` variables that are not tunables: set by oxmpi's own tools for each other,
/// or read only by tests and examples. Nothing validates them at `MPI_Init`.
pub const INTERNAL: &[(&str, &str)] = &[
    (
        "OXMPI_KVSNAME",
        "set by mpiexec for each rank: the job's key-value space name, which shared-memory names carry",
    ),
    (
        "OXMPI_JOB_SECRET",
        "set by mpiexec for each rank: the secret TCP connections prove",
    ),
    (
        "OXMPI_WRAPPER_ACTIVE",
        "set by mpicc/mpicxx while they run, to detect a wrapper calling itself",
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

fn algorithms(coll: Collective) -> impl Iterator<Item = Algorithm> {
    Algorithm::ALL
        .iter()
        .copied()
        .filter(move |a| a.collective() == coll)
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
            K::Algorithm(coll) => {
                let w = v.to_ascii_lowercase();
                match algorithms(coll).find(|a| a.name() == w) {
                    Some(a) => Value::Text(a.name().to_string()),
                    None => {
                        let known: Vec<&str> = algorithms(coll).map(|a| a.name()).collect();
                        return Err(fail(format!(
                            "unknown algorithm for {}; expected auto or one of {}",
                            coll.name(),
                            known.join(", ")
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
            K::Algorithm(coll) => {
                let mut names: Vec<&str> = vec!["auto"];
                names.extend(algorithms(coll).map(|a| a.name()));
                names.join(", ")
            }
        }
    }

    /// The description, with the rule of an automatic default and, for variables the
    /// library does not read, who does.
    pub fn meaning(&self) -> String {
        let mut s = String::new();
        match self.reader {
            R::Mpiexec => s.push_str("mpiexec: "),
            R::Wrapper => s.push_str("mpicc/mpicxx: "),
            R::Library | R::LibraryAndMpiexec => {}
        }
        if let K::Algorithm(coll) = self.kind {
            // The rule is the same for all of them and said by the doc line.
            let _ = write!(s, "force the algorithm of {}; {}", coll.name(), self.doc);
            return s;
        }
        s.push_str(self.doc);
        if !self.rule.is_empty() {
            let _ = write!(s, "; auto: {}", self.rule);
        }
        s
    }
}

/// The values of the library's tunables for this process: those set in the
/// environment (validated) and the defaults of the others.
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
        let mut s = Settings::default();
        for (i, t) in ALL.iter().enumerate().filter(|(_, t)| t.reader.library()) {
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
        let mut s = Settings::default();
        for (i, t) in ALL.iter().enumerate().filter(|(_, t)| t.reader.library()) {
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

    /// The collective decision table's tuning: thresholds, forced algorithms and the
    /// limits of the shared-memory path.
    pub fn coll_tuning(&self) -> Tuning {
        let mut t = Tuning::DEFAULT;
        let n = |id: Id| self.size(id).unwrap_or(0);
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
        for (i, d) in ALL.iter().enumerate() {
            if let K::Algorithm(coll) = d.kind {
                let name = match &self.set[i] {
                    Some(Value::Text(w)) => Some(w.as_str()),
                    _ => None,
                };
                let algo = name.and_then(|w| algorithms(coll).find(|a| a.name() == w));
                t.force(coll, algo);
            }
        }
        t.shm_enabled = self
            .flag(Id::CollShm)
            .unwrap_or(Tuning::DEFAULT.shm_enabled);
        t.shm_max = n(Id::CollShmMax);
        t.shm_large_any_load = self.is_set(Id::CollShmLargeMax);
        t.shm_large_max = self
            .size(Id::CollShmLargeMax)
            .unwrap_or(Tuning::DEFAULT.shm_large_max);
        t
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
pub const README_BEGIN: &str = "<!-- BEGIN tunables: generated from crates/core/src/tunables.rs; regenerate with `cargo run -q -p oxmpi-info -- --update-readme README.md` -->";
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn ids_are_indices_and_names_are_unique() {
        for (i, t) in ALL.iter().enumerate() {
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
    }

    #[test]
    fn ids_name_their_entries() {
        assert_eq!(Id::ShmEagerLimit.name(), "OXMPI_SHM_EAGER_LIMIT");
        assert_eq!(Id::CollShmLargeMax.name(), "OXMPI_COLL_SHM_LARGE_MAX");
        assert_eq!(Id::CollAlltoallvAlgo.name(), "OXMPI_COLL_ALLTOALLV_ALGO");
        assert_eq!(Id::Cxx.name(), "OXMPI_CXX");
        assert_eq!(Id::Cxx as usize, ALL.len() - 1);
    }

    #[test]
    fn every_collective_has_an_algorithm_variable() {
        let mut seen = Vec::new();
        for a in Algorithm::ALL {
            let c = a.collective();
            if seen.contains(&c) {
                continue;
            }
            seen.push(c);
            let want = Tuning::algo_var(c);
            let t = find(&want).unwrap_or_else(|| panic!("{want} not declared"));
            assert_eq!(t.kind, K::Algorithm(c));
        }
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
    fn settings_resolve_defaults_and_report_the_first_bad_value() {
        let d = Settings::defaults();
        assert_eq!(d.get(Id::Yield), Value::Int(200));
        assert_eq!(d.int(Id::ShmEagerLimit), None);
        assert_eq!(d.get(Id::ShmEagerLimit), Value::Auto);
        assert_eq!(d.flag(Id::CollShm), Some(true));
        assert_eq!(d.text(Id::Bind).as_deref(), Some("block"));
        assert!(!d.is_set(Id::Yield));
        assert_eq!(d.coll_tuning(), Tuning::DEFAULT);

        let s = Settings::from_lookup(lookup(&[
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

        let e = Settings::from_lookup(lookup(&[("OXMPI_COLL_SHM", "2")])).unwrap_err();
        assert_eq!(e.name, "OXMPI_COLL_SHM");
        let engine: Error = e.into();
        assert_eq!(engine.class, ErrorClass::Other);
        assert!(
            engine.message.starts_with("OXMPI_COLL_SHM=\"2\": "),
            "{}",
            engine.message
        );
    }

    #[test]
    fn collective_settings_fill_the_decision_table() {
        let s = Settings::from_lookup(lookup(&[
            ("OXMPI_COLL_ALLREDUCE_ALGO", "Ring"),
            ("OXMPI_COLL_BARRIER_ALGO", "auto"),
            ("OXMPI_COLL_BCAST_SHORT_MSG", "64k"),
            ("OXMPI_COLL_SHM", "0"),
            ("OXMPI_COLL_SHM_MAX", "512"),
        ]))
        .unwrap();
        let t = s.coll_tuning();
        assert_eq!(t.bcast_short_msg, 65536);
        assert_eq!(
            t.forced(Collective::Allreduce),
            Some(Algorithm::AllreduceRing)
        );
        assert_eq!(t.forced(Collective::Barrier), None);
        assert!(!t.shm_enabled);
        assert_eq!(t.shm_max, 512);
        assert!(!t.shm_large_any_load);
        assert_eq!(t.shm_large_max, Tuning::DEFAULT.shm_large_max);
        assert!(Settings::from_lookup(lookup(&[("OXMPI_COLL_SHM_MAX", "4096")])).is_err());

        let s = Settings::from_lookup(lookup(&[("OXMPI_COLL_SHM_LARGE_MAX", "0")])).unwrap();
        let t = s.coll_tuning();
        assert!(t.shm_large_any_load);
        assert_eq!(t.shm_large_max, 0);

        // Each threshold variable moves exactly its own field.
        let base = format!("{:?}", Tuning::DEFAULT);
        for d in ALL.iter().filter(|d| {
            d.category == C::Coll
                && !d.name.starts_with("OXMPI_COLL_SHM")
                && matches!(d.kind, K::Int { .. } | K::Bytes { .. })
        }) {
            let s = Settings::from_lookup(lookup(&[(d.name, "12345")])).unwrap();
            let got = format!("{:?}", s.coll_tuning());
            assert_ne!(got, base, "{} moved nothing", d.name);
            let changed = got
                .split(", ")
                .zip(base.split(", "))
                .filter(|(a, b)| a != b)
                .count();
            assert_eq!(changed, 1, "{}: {got}", d.name);
        }
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
            "README.md's tunables table differs from the registry in crates/core/src/tunables.rs; \
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
        files.retain(|f| !f.ends_with("core/src/tunables.rs"));
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
