//! A malformed or out-of-range `OXMPI_*` tunable makes initialisation fail with an error
//! naming the variable and the value (the `hello` example, run as a singleton).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `<target dir>/<profile>/examples/<name>` (the test binary lives in `<profile>/deps`).
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    let p = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test binary is in <target>/<profile>/deps")
        .join("examples")
        .join(name);
    assert!(p.is_file(), "example {name} not built at {}", p.display());
    p
}

fn hello_with(var: &str, value: &str) -> (bool, String) {
    let out = Command::new(example("hello"))
        .env(var, value)
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT")
        .output()
        .expect("run the hello example");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_tunable_fails_initialize_naming_it() {
    for (var, value, why) in [
        ("OXMPI_SHM_EAGER_LIMIT", "12x", "not a byte size"),
        (
            "OXMPI_TCP_CONNECT_TIMEOUT",
            "0",
            "out of range (expected 1 to 86400)",
        ),
        ("OXMPI_COLL_SHM", "maybe", "not a boolean"),
        (
            "OXMPI_COLL_GATHER_ALGO",
            "tree",
            "unknown algorithm for MPI_Gather",
        ),
    ] {
        let (ok, stderr) = hello_with(var, value);
        assert!(!ok, "{var}={value} was accepted; stderr:\n{stderr}");
        for part in [var, value, why] {
            assert!(
                stderr.contains(part),
                "{var}={value}: no {part:?} in:\n{stderr}"
            );
        }
    }
    // Valid values, `auto` and an empty value are accepted.
    for (var, value) in [
        ("OXMPI_SHM_EAGER_LIMIT", "8k"),
        ("OXMPI_SHM_EAGER_LIMIT", "auto"),
        ("OXMPI_COLL_SHM", ""),
        ("OXMPI_COLL_GATHER_ALGO", "Linear"),
    ] {
        let (ok, stderr) = hello_with(var, value);
        assert!(ok, "{var}={value:?} was refused; stderr:\n{stderr}");
    }
}
