//! Multi-host jobs with the `fork` launcher (every "host" is this machine, reached through
//! 127.0.0.1): proxies relay PMI, output, stdin and exit codes; placement and the PMI
//! process mapping; launcher and hostfile errors. The same paths with real hosts
//! (network namespaces, ssh) are exercised by tests/net/run.

use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const MPIEXEC: &str = env!("CARGO_BIN_EXE_mpiexec");
const PROBE: &str = env!("CARGO_BIN_EXE_pmi-probe");
const LIMIT: Duration = Duration::from_secs(120);

fn run_in(args: &[&str], input: Option<&[u8]>) -> Output {
    run_env(args, input, &[])
}

/// Runs mpiexec with `env` added to the test's environment.
fn run_env(args: &[&str], input: Option<&[u8]>, env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(MPIEXEC)
        .args(args)
        .env("OXMPI_TCP_ADDR", "127.0.0.1")
        .env_remove("OXMPI_LAUNCHER")
        .env_remove("OXMPI_LAUNCH_TIMEOUT")
        .envs(env.iter().copied())
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mpiexec");
    if let Some(d) = input {
        child.stdin.take().unwrap().write_all(d).unwrap();
    }
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let to = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let te = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("mpiexec did not finish within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: to.join().unwrap(),
        stderr: te.join().unwrap(),
    }
}

fn run(args: &[&str]) -> Output {
    run_in(args, None)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn kvs_exchange_through_proxies() {
    let o = run(&[
        "--timeout",
        "60",
        "-hosts",
        "a:2,b",
        "-launcher",
        "fork",
        "-n",
        "5",
        PROBE,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let want: Vec<String> = (0..5).map(|r| format!("{r}:hello-{r}")).collect();
    for r in 0..5 {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("rank {r}/5 ")))
            .unwrap_or_else(|| panic!("no line of rank {r}: {out}"));
        assert!(line.ends_with(&format!("got {}", want.join(" "))), "{line}");
    }
}

#[test]
fn round_robin_mapping_over_pmi2() {
    let o = run(&[
        "--timeout",
        "60",
        "-hosts",
        "x,y,z",
        "-rr",
        "-launcher",
        "fork",
        "-genv",
        "OXMPI_PMI",
        "2",
        "-n",
        "4",
        PROBE,
        "--mapping",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("rank 0 nodes [0, 1, 2, 0]"), "{out}");
    // -ppn 2 on the same hosts: blocks of two.
    let o = run(&[
        "--timeout",
        "60",
        "-hosts",
        "x,y,z",
        "-ppn",
        "2",
        "-launcher",
        "fork",
        "-genv",
        "OXMPI_PMI",
        "2",
        "-n",
        "5",
        PROBE,
        "--mapping",
    ]);
    assert!(
        text(&o.stdout).contains("rank 4 nodes [0, 0, 1, 1, 2]"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn output_labels_stdin_and_exit_codes() {
    let o = run_in(
        &[
            "--timeout",
            "60",
            "-l",
            "-hosts",
            "h1,h2",
            "-launcher",
            "fork",
            "-n",
            "2",
            "sh",
            "-c",
            "read x; echo \"got:$x\"; echo err >&2",
        ],
        Some(b"input-line\n"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("[0] got:input-line\n"), "{out}");
    assert!(out.contains("[1] got:\n"), "{out}");
    assert_eq!(text(&o.stderr).matches("] err\n").count(), 2);

    let o = run(&[
        "--timeout",
        "60",
        "-hosts",
        "h1,h2",
        "-launcher",
        "fork",
        "-n",
        "2",
        "sh",
        "-c",
        "[ \"$PMI_RANK\" = 1 ] && exit 3; sleep 30",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("rank 1 (pid"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn launcher_and_host_errors() {
    // A launcher that cannot run.
    let o = run(&[
        "-hosts",
        "h1",
        "-launcher-exec",
        "/nonexistent/launcher",
        "-n",
        "1",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("cannot start the proxy on host h1"),
        "{}",
        text(&o.stderr)
    );
    // A launcher that ends before its proxy connects (an unreachable host, say).
    let o = run(&[
        "-hosts",
        "h1,h2",
        "-launcher-exec",
        "false",
        "-n",
        "2",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("before the proxy connected"),
        "{}",
        text(&o.stderr)
    );
    // Bad host names and hostfiles.
    let o = run(&["-hosts", "a;b", "-n", "1", "true"]);
    assert_eq!(o.status.code(), Some(2));
    let f = std::env::temp_dir().join(format!("oxmpi-hosts-{}", std::process::id()));
    std::fs::write(&f, "# hosts\ngood:2\nbad:x\n").unwrap();
    let o = run(&["-f", f.to_str().unwrap(), "-n", "1", "true"]);
    std::fs::remove_file(&f).unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("line 3"), "{}", text(&o.stderr));
    let o = run(&["-f", "/nonexistent/hostfile", "-n", "1", "true"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn proxy_with_a_wrong_secret_is_refused() {
    // A launcher that hands its proxy a wrong secret: each side finds the other does not
    // prove the secret, the head logs the refused connection, and the job fails once the
    // launcher gives up.
    let script = std::env::temp_dir().join(format!("oxmpi-badlauncher-{}", std::process::id()));
    std::fs::write(
        &script,
        "#!/bin/sh\nread s\nshift\necho wrong-secret | \"$@\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = run(&[
        "-hosts",
        "h1",
        "-launcher-exec",
        script.to_str().unwrap(),
        "-n",
        "1",
        "true",
    ]);
    std::fs::remove_file(&script).unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("mpiexec: refused a connection from 127.0.0.1"),
        "{err}"
    );
    assert!(err.contains("did not prove the job secret"), "{err}");
}

#[test]
fn this_host_needs_no_ssh() {
    // localhost and loopback addresses are started directly even with the ssh launcher.
    let o = run(&[
        "--timeout",
        "60",
        "-hosts",
        "localhost,127.0.0.1",
        "-n",
        "3",
        PROBE,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout)
            .matches(" got 0:hello-0 1:hello-1 2:hello-2")
            .count(),
        3
    );
}

#[test]
fn launch_variables_are_read_through_the_registry() {
    // A launcher whose proxy never connects: OXMPI_LAUNCH_TIMEOUT bounds the wait.
    let script = std::env::temp_dir().join(format!("oxmpi-slowlauncher-{}", std::process::id()));
    std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let start = Instant::now();
    let o = run_env(
        &["-hosts", "h1", "-n", "1", "true"],
        None,
        &[
            ("OXMPI_LAUNCH_TIMEOUT", " 1 "),
            ("OXMPI_LAUNCHER", script.to_str().unwrap()),
        ],
    );
    std::fs::remove_file(&script).unwrap();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("no connection within 1 s"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(20));

    // Malformed values stop mpiexec before it starts anything.
    for (var, value, reason) in [
        (
            "OXMPI_LAUNCH_TIMEOUT",
            "abc",
            "not an integer (expected 1 to 86400)",
        ),
        (
            "OXMPI_TCP_ADDR",
            "head.example",
            "not an IPv4 address (expected four numbers 0 to 255 such as 10.0.0.5, or auto)",
        ),
    ] {
        let o = run_env(
            &["-hosts", "a,b", "-launcher", "fork", "-n", "2", PROBE],
            None,
            &[(var, value)],
        );
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.starts_with(&format!("mpiexec: {var}={value:?}: {reason}\n")),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }

    // Good values: the job runs.
    let o = run_env(
        &["-hosts", "a,b", "-launcher", "fork", "-n", "2", PROBE],
        None,
        &[
            ("OXMPI_LAUNCH_TIMEOUT", "30"),
            ("OXMPI_TCP_ADDR", " 127.0.0.1 "),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout).matches(" got 0:hello-0 1:hello-1").count(),
        2
    );
}
