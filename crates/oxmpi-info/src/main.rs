//! `oxmpi-info`: describes this oxmpi build (version, MPI version, ABI, thread support,
//! transports, process managers) and every environment variable it reads, with its
//! default, its meaning and the value in effect now (like `ompi_info` / `mpichversion`).
//!
//! The engine's tunables come from `oxmpi_core::config::TUNABLES` and the collective
//! decision table's from `oxmpi_coll::decision`, so this list cannot drift from the code
//! that reads them. `--parsable` prints `key:value` lines for scripts.

use oxmpi_coll::decision::Tuning;
use oxmpi_coll::schedule::{Algorithm, Collective};
use oxmpi_core::config::{Config, TUNABLES};
use oxmpi_core::placement::Bind;
use oxmpi_core::runtime::MAX_THREAD_LEVEL;
use std::fmt::Write as _;
use std::process::ExitCode;

/// One line of output: a key (for `--parsable`) and the text shown to people.
struct Item {
    key: String,
    label: String,
    value: String,
}

fn item(key: &str, label: &str, value: impl Into<String>) -> Item {
    Item {
        key: key.into(),
        label: label.into(),
        value: value.into(),
    }
}

fn build_items() -> Vec<Item> {
    vec![
        item("version", "oxmpi version", oxmpi_core::VERSION),
        item(
            "mpi_version",
            "MPI version",
            format!("{}.{}", oxmpi_core::MPI_VERSION.0, oxmpi_core::MPI_VERSION.1),
        ),
        item(
            "abi",
            "ABI",
            "MPICH (libmpi.so.12, also installed as libmpich.so.12): MPICH's handle values and MPI_Status layout",
        ),
        item(
            "thread_level",
            "Thread support",
            format!(
                "{} (MPI_Init_thread provides at most this; MPI_THREAD_MULTIPLE requests get it)",
                MAX_THREAD_LEVEL.name()
            ),
        ),
        item(
            "transports",
            "Transports",
            "self (a rank to itself); shm (shared-memory rings within a node, single-copy rendezvous with process_vm_readv); tcp (between nodes, or everywhere with OXMPI_NETMOD=tcp)",
        ),
        item(
            "process_managers",
            "Process managers",
            "PMI-1 and PMI-2 clients: oxmpi's mpiexec, MPICH's Hydra, Slurm srun --mpi=pmi2; singleton without PMI",
        ),
        item("wtime_is_global", "MPI_WTIME_IS_GLOBAL", "0 (per-node monotonic clocks)"),
    ]
}

/// The thresholds the engine uses with the current environment.
fn threshold_items(cfg: &Config) -> Vec<Item> {
    vec![
        item(
            "shm_eager_limit",
            "shm eager limit (bytes)",
            if cfg.shm_eager_set {
                cfg.shm_eager_limit.to_string()
            } else {
                "auto (65536 on a node with more ranks than CPUs, else 32768 with rings of 512 KiB or more, else 16384)".to_string()
            },
        ),
        item(
            "shm_ring_bytes",
            "shm ring size (bytes)",
            if cfg.shm_ring_set {
                cfg.shm_ring_bytes.to_string()
            } else {
                format!(
                    "auto (at most {}, by the node's rank count)",
                    cfg.shm_ring_bytes
                )
            },
        ),
        item(
            "shm_chunk_bytes",
            "shm rendezvous piece (bytes)",
            if cfg.shm_chunk_set {
                cfg.shm_chunk_bytes.to_string()
            } else {
                "auto (from 32768 up to an eighth of the ring, at most 262144)".to_string()
            },
        ),
        item(
            "shm_stream_stores",
            "shm stream stores",
            match cfg.shm_stream_stores {
                oxmpi_core::device::stream_stores::Policy::Cached => "cached",
                oxmpi_core::device::stream_stores::Policy::NonTemporal => "non-temporal",
            },
        ),
        item(
            "shm_cma",
            "shm single-copy rendezvous",
            if cfg.shm_no_cma {
                "off"
            } else {
                "on where the kernel permits"
            },
        ),
        item(
            "tcp_eager_limit",
            "tcp eager limit (bytes)",
            cfg.tcp_eager_limit.to_string(),
        ),
        item(
            "tcp_chunk_bytes",
            "tcp rendezvous piece (bytes)",
            cfg.tcp_chunk_bytes.to_string(),
        ),
        item(
            "spin",
            "spin rounds before yielding",
            format!(
                "{} ({} when oversubscribed)",
                cfg.effective_spin(false),
                cfg.effective_spin(true)
            ),
        ),
        item(
            "yield",
            "yield rounds before sleeping",
            cfg.yield_iters.to_string(),
        ),
        item(
            "bind",
            "cpu binding (oversubscribed)",
            match cfg.bind {
                Bind::Block => "one CPU per rank, consecutive ranks in blocks",
                Bind::None => "none (the kernel places ranks)",
            }
            .to_string(),
        ),
    ]
}

/// The collective thresholds in the order of `Tuning::THRESHOLD_VARS`.
fn coll_thresholds(t: &Tuning) -> [usize; 14] {
    [
        t.bcast_short_msg,
        t.bcast_min_procs,
        t.reduce_short_msg,
        t.allreduce_short_msg,
        t.allreduce_long_msg,
        t.reduce_scatter_long_msg,
        t.gather_long_msg,
        t.scatter_long_msg,
        t.allgather_short_msg,
        t.allgather_long_msg,
        t.alltoall_short_msg,
        t.alltoall_medium_msg,
        t.alltoall_bruck_min_procs,
        t.alltoallv_pairwise_min_procs,
    ]
}

/// What each collective threshold decides (same order).
const COLL_MEANINGS: [&str; 14] = [
    "bcast messages below this many bytes use a binomial tree",
    "bcast on fewer ranks than this uses a binomial tree",
    "commutative reduce from this many bytes uses Rabenseifner's algorithm",
    "commutative allreduce from this many bytes uses Rabenseifner's algorithm",
    "allreduce from this many bytes uses a ring (non-power-of-two sizes) or reduce+bcast (non-commutative ops)",
    "commutative reduce-scatter from this many bytes in total uses a ring",
    "gather with blocks of this many bytes or more is linear",
    "scatter with blocks of this many bytes or more is linear",
    "allgather below this many bytes in total uses recursive doubling (power of two) or Bruck",
    "allgather below this many bytes on a power of two uses recursive doubling, else a ring",
    "alltoall blocks up to this many bytes (with enough ranks) use Bruck",
    "alltoall blocks up to this many bytes are linear, larger ones pairwise",
    "fewest ranks for a Bruck alltoall",
    "alltoallv on this many ranks or more is pairwise, fewer linear",
];

/// One documented environment variable.
struct Var {
    name: String,
    default: String,
    meaning: String,
}

fn collectives() -> Vec<Collective> {
    let mut out: Vec<Collective> = Vec::new();
    for a in Algorithm::ALL {
        if !out.contains(&a.collective()) {
            out.push(a.collective());
        }
    }
    out
}

fn variables() -> Vec<Var> {
    let mut vars: Vec<Var> = TUNABLES
        .iter()
        .map(|t| Var {
            name: t.name.into(),
            default: t.default.into(),
            meaning: t.meaning.into(),
        })
        .collect();
    let known = |vars: &[Var], n: &str| vars.iter().any(|v| v.name == n);
    let defaults = coll_thresholds(&Tuning::default());
    for (i, name) in Tuning::THRESHOLD_VARS.iter().enumerate() {
        if !known(&vars, name) {
            vars.push(Var {
                name: name.to_string(),
                default: defaults[i].to_string(),
                meaning: format!("{} (sizes take a k, m or g suffix)", COLL_MEANINGS[i]),
            });
        }
    }
    for c in collectives() {
        let name = Tuning::algo_var(c);
        if known(&vars, &name) {
            continue;
        }
        let algos: Vec<&str> = Algorithm::ALL
            .iter()
            .filter(|a| a.collective() == c)
            .map(|a| a.name())
            .collect();
        vars.push(Var {
            name,
            default: "auto".into(),
            meaning: format!(
                "force the algorithm of {}: {} (unsuitable choices fall back to auto)",
                c.name(),
                algos.join(", ")
            ),
        });
    }
    vars
}

fn usage() -> &'static str {
    "usage: oxmpi-info [--parsable] [--help] [--version]\n\
     \n\
     Describes this oxmpi build and lists every environment variable it reads with its\n\
     default, its meaning and (when set) the value in the current environment.\n\
     \n\
       --parsable   key:value lines for scripts\n\
       --version    only the version\n"
}

fn render(parsable: bool) -> String {
    let cfg = Config::from_env();
    let mut out = String::new();
    let width = 30;
    if parsable {
        for i in build_items().iter().chain(threshold_items(&cfg).iter()) {
            let _ = writeln!(out, "{}:{}", i.key, i.value);
        }
        for v in variables() {
            let _ = writeln!(out, "var:{}:default:{}", v.name, v.default);
            if let Ok(now) = std::env::var(&v.name) {
                let _ = writeln!(out, "var:{}:set:{}", v.name, now);
            }
            let _ = writeln!(out, "var:{}:meaning:{}", v.name, v.meaning);
        }
        return out;
    }
    for i in build_items() {
        let _ = writeln!(out, "{:>width$}: {}", i.label, i.value);
    }
    let _ = writeln!(out, "\nThresholds in effect (this environment):");
    for i in threshold_items(&cfg) {
        let _ = writeln!(out, "{:>width$}: {}", i.label, i.value);
    }
    let _ = writeln!(out, "\nEnvironment variables (name, default, meaning):");
    for v in variables() {
        let set = match std::env::var(&v.name) {
            Ok(now) => format!("  [set: {now}]"),
            Err(_) => String::new(),
        };
        let _ = writeln!(
            out,
            "  {}  (default {}){set}\n      {}",
            v.name, v.default, v.meaning
        );
    }
    out
}

fn main() -> ExitCode {
    let mut parsable = false;
    for a in std::env::args().skip(1) {
        match a.as_str() {
            "--parsable" | "-p" => parsable = true,
            "--version" | "-V" => {
                println!("oxmpi {}", oxmpi_core::VERSION);
                return ExitCode::SUCCESS;
            }
            "--help" | "-h" => {
                print!("{}", usage());
                return ExitCode::SUCCESS;
            }
            other => {
                eprint!("oxmpi-info: unknown argument {other:?}\n{}", usage());
                return ExitCode::from(2);
            }
        }
    }
    print!("{}", render(parsable));
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_tunable_is_listed() {
        let text = render(false);
        for t in TUNABLES {
            assert!(text.contains(t.name), "{} missing", t.name);
        }
        for v in Tuning::THRESHOLD_VARS {
            assert!(text.contains(v), "{v} missing");
        }
        assert!(text.contains("OXMPI_COLL_ALLREDUCE_ALGO"));
        assert!(text.contains(MAX_THREAD_LEVEL.name()));
    }

    #[test]
    fn collective_defaults_match_the_decision_table() {
        let d = coll_thresholds(&Tuning::default());
        assert_eq!(d[0], oxmpi_coll::decision::DEFAULT_BCAST_SHORT_MSG);
        assert_eq!(d[1], oxmpi_coll::decision::DEFAULT_BCAST_MIN_PROCS);
        // Each threshold variable moves exactly its own field.
        for (i, var) in Tuning::THRESHOLD_VARS.iter().enumerate() {
            let t = Tuning::from_lookup(|k| (k == *var).then(|| "12345".to_string())).unwrap();
            let got = coll_thresholds(&t);
            assert_eq!(got[i], 12345, "{var}");
            for (j, v) in got.iter().enumerate() {
                if j != i {
                    assert_eq!(*v, d[j], "{var} changed field {j}");
                }
            }
        }
    }

    #[test]
    fn parsable_lines_have_keys() {
        let text = render(true);
        assert!(text.lines().all(|l| l.contains(':')));
        assert!(text.contains("mpi_version:3.1"));
        assert!(text.contains("var:OXMPI_SHM_EAGER_LIMIT:default:"));
    }
}
