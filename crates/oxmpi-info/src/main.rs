//! `oxmpi-info`: describes this oxmpi build (version, MPI version, ABI, thread support,
//! transports, process managers) and every environment variable it reads, with its
//! default, its meaning and the value in effect now (like `ompi_info` / `mpichversion`),
//! and the performance variables of the tools interface (`MPI_T`).
//!
//! The variables come from the tunables registry (`oxmpi_core::tunables`), the one
//! place that declares and parses them, so this list cannot drift from the code that
//! reads them. `--parsable` prints `key:value` lines for scripts; `--markdown-tunables`
//! prints the README's table and `--update-readme FILE` rewrites it in place.

use oxmpi_core::config::Config;
use oxmpi_core::mpit::pvars;
use oxmpi_core::placement::Bind;
use oxmpi_core::runtime::MAX_THREAD_LEVEL;
use oxmpi_core::tunables::{self, Settings, ALL};
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

/// The value of `t` in this environment: None when unset, else the text set and
/// whether it is valid (the error's reason if not).
fn current(t: &tunables::Tunable) -> Option<(String, Result<(), String>)> {
    let raw = std::env::var_os(t.name)?;
    let raw = raw.to_string_lossy().into_owned();
    let check = t.parse(&raw).map(|_| ()).map_err(|e| e.reason);
    Some((raw, check))
}

fn usage() -> &'static str {
    "usage: oxmpi-info [--parsable] [--markdown-tunables] [--update-readme FILE] [--help] [--version]\n\
     \n\
     Describes this oxmpi build and lists every environment variable it reads with its\n\
     default, the values it takes, its meaning and (when set) the value in the current\n\
     environment. Exits with 1 when a variable the library reads has a value MPI_Init\n\
     would refuse.\n\
     \n\
       --parsable            key:value lines for scripts\n\
       --markdown-tunables   the README's table of tunables (Markdown)\n\
       --update-readme FILE  replace the generated tunables section of FILE\n\
       --version             only the version\n"
}

/// The text to print and whether every variable set is valid.
fn render(parsable: bool) -> (String, bool) {
    let settings = Settings::from_env();
    let cfg = Config::from_settings(settings.as_ref().unwrap_or(&Settings::defaults()));
    let mut valid = true;
    let mut out = String::new();
    let width = 30;
    if parsable {
        for i in build_items().iter().chain(threshold_items(&cfg).iter()) {
            let _ = writeln!(out, "{}:{}", i.key, i.value);
        }
        for t in ALL {
            let _ = writeln!(out, "var:{}:category:{}", t.name, t.category.name());
            let _ = writeln!(out, "var:{}:default:{}", t.name, t.default_text());
            let _ = writeln!(out, "var:{}:values:{}", t.name, t.values_text());
            if let Some((now, check)) = current(t) {
                let _ = writeln!(out, "var:{}:set:{}", t.name, now);
                if let Err(why) = check {
                    valid &= !t.reader.library();
                    let _ = writeln!(out, "var:{}:invalid:{}", t.name, why);
                }
            }
            let _ = writeln!(out, "var:{}:meaning:{}", t.name, t.meaning());
        }
        for p in pvars::table() {
            let _ = writeln!(out, "pvar:{}:class:{:?}", p.name, p.class);
            let _ = writeln!(out, "pvar:{}:meaning:{}", p.name, p.desc);
        }
        return (out, valid);
    }
    for i in build_items() {
        let _ = writeln!(out, "{:>width$}: {}", i.label, i.value);
    }
    if let Err(e) = &settings {
        let _ = writeln!(
            out,
            "\nMPI_Init would fail in this environment: {e}\n(the thresholds below are the defaults)"
        );
    }
    let _ = writeln!(out, "\nThresholds in effect (this environment):");
    for i in threshold_items(&cfg) {
        let _ = writeln!(out, "{:>width$}: {}", i.label, i.value);
    }
    let _ = writeln!(
        out,
        "\nEnvironment variables (name, default, values, meaning):"
    );
    for t in ALL {
        let set = match current(t) {
            Some((now, Ok(()))) => format!("  [set: {now}]"),
            Some((now, Err(why))) => {
                valid &= !t.reader.library();
                format!("  [set: {now:?}, INVALID: {why}]")
            }
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "  {}  (default {}; {}){set}\n      {}",
            t.name,
            t.default_text(),
            t.values_text(),
            t.meaning()
        );
    }
    let _ = writeln!(out, "\nInternal variables (not tunables):");
    for (name, what) in tunables::INTERNAL {
        let _ = writeln!(out, "  {name}\n      {what}");
    }
    let _ = writeln!(
        out,
        "\nPerformance variables (MPI_T_pvar_*; the variables above are the control variables):"
    );
    for p in pvars::table() {
        let _ = writeln!(out, "  {}  ({:?})\n      {}", p.name, p.class, p.desc);
    }
    (out, valid)
}

/// Rewrites the generated tunables section of the file at `path`.
fn update_readme(path: &str) -> Result<bool, String> {
    let old = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let new = tunables::splice_readme(&old).ok_or_else(|| {
        format!(
            "{path}: no generated section (a line {} and a line {})",
            tunables::README_BEGIN,
            tunables::README_END
        )
    })?;
    let changed = new != old;
    if changed {
        std::fs::write(path, new).map_err(|e| format!("{path}: {e}"))?;
    }
    Ok(changed)
}

fn main() -> ExitCode {
    let mut parsable = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
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
            "--markdown-tunables" => {
                print!("{}", tunables::markdown());
                return ExitCode::SUCCESS;
            }
            "--update-readme" => {
                let Some(path) = args.next() else {
                    eprint!("oxmpi-info: --update-readme needs a file\n{}", usage());
                    return ExitCode::from(2);
                };
                return match update_readme(&path) {
                    Ok(changed) => {
                        let what = if changed {
                            "updated"
                        } else {
                            "already up to date"
                        };
                        println!("{path}: tunables table {what}");
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("oxmpi-info: {e}");
                        ExitCode::FAILURE
                    }
                };
            }
            other => {
                eprint!("oxmpi-info: unknown argument {other:?}\n{}", usage());
                return ExitCode::from(2);
            }
        }
    }
    let (text, valid) = render(parsable);
    print!("{text}");
    if valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tunable_is_listed() {
        let (text, _) = render(false);
        for t in ALL {
            assert!(text.contains(t.name), "{} missing", t.name);
        }
        for (n, _) in tunables::INTERNAL {
            assert!(text.contains(n), "{n} missing");
        }
        assert!(text.contains("OXMPI_COLL_ALLREDUCE_ALGO"));
        for p in pvars::table() {
            assert!(text.contains(p.name), "pvar {} missing", p.name);
        }
        assert!(text.contains("recursive_doubling"));
        assert!(text.contains(MAX_THREAD_LEVEL.name()));
    }

    #[test]
    fn parsable_lines_have_keys() {
        let (text, _) = render(true);
        assert!(text.lines().all(|l| l.contains(':')));
        assert!(text.contains("mpi_version:4.1"));
        assert!(text.contains("var:OXMPI_SHM_EAGER_LIMIT:default:auto"));
        assert!(text.contains("var:OXMPI_YIELD:default:200"));
        assert!(text.contains("var:OXMPI_COLL_SHM_MAX:values:bytes, 0 to 2k"));
    }
}
