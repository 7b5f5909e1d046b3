//! Runs the real `mpiexec` binary on `pmi-probe` and shell one-liners: KVS exchange at
//! several sizes, exit-code conventions, labels, stdin, failure handling (SIGKILL, abort,
//! exit before finalize, timeout, protocol garbage), argument errors, bad and good
//! `OXMPI_*` variables, /dev/shm cleanup, and the probe under MPICH's Hydra when it is
//! installed.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const MPIEXEC: &str = env!("CARGO_BIN_EXE_mpiexec");
const PROBE: &str = env!("CARGO_BIN_EXE_pmi-probe");
/// Safety net so that a broken mpiexec fails the test instead of hanging it.
const TEST_LIMIT: Duration = Duration::from_secs(120);

fn wait_limited(mut child: Child) -> Output {
    let start = Instant::now();
    // Read pipes on threads so a chatty child cannot block on a full pipe.
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_end(&mut v);
        }
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_end(&mut v);
        }
        v
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > TEST_LIMIT {
            let _ = child.kill();
            panic!("mpiexec did not finish within {TEST_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

fn run_with_stdin(args: &[&str], input: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(MPIEXEC);
    cmd.args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start mpiexec");
    if let Some(data) = input {
        let mut sin = child.stdin.take().unwrap();
        sin.write_all(data).unwrap();
    }
    wait_limited(child)
}

fn run(args: &[&str]) -> Output {
    run_with_stdin(args, None)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn code(o: &Output) -> i32 {
    o.status.code().expect("mpiexec ended by a signal")
}

/// The lines mpiexec itself wrote to stderr.
fn own_messages(o: &Output) -> Vec<String> {
    text(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("mpiexec:"))
        .map(str::to_owned)
        .collect()
}

fn check_exchange(o: &Output, n: u32) {
    assert_eq!(code(o), 0, "stderr: {}", text(&o.stderr));
    let out = text(&o.stdout);
    let mut lines: Vec<&str> = out.lines().filter(|l| l.starts_with("rank ")).collect();
    lines.sort_by_key(|l| l[5..].split('/').next().unwrap().parse::<u32>().unwrap());
    assert_eq!(lines.len(), n as usize, "{out}");
    let expected_got: Vec<String> = (0..n).map(|r| format!("{r}:hello-{r}")).collect();
    let mut kvs = None;
    for (r, l) in lines.iter().enumerate() {
        assert!(
            l.starts_with(&format!("rank {r}/{n} appnum=0 kvs=oxmpi-")),
            "{l}"
        );
        assert!(
            l.ends_with(&format!("got {}", expected_got.join(" "))),
            "{l}"
        );
        let k = l.split(" kvs=").nth(1).unwrap().split(' ').next().unwrap();
        assert_eq!(*kvs.get_or_insert(k.to_owned()), k);
    }
}

#[test]
fn kvs_exchange_1_2_4_8_ranks() {
    for n in [1u32, 2, 4, 8] {
        let o = run(&["--timeout", "60", "-n", &n.to_string(), PROBE]);
        check_exchange(&o, n);
    }
}

#[test]
fn pmi2_binary_values_and_mapping() {
    let o = run(&[
        "--timeout",
        "60",
        "-genv",
        "OXMPI_PMI",
        "2",
        "-n",
        "4",
        PROBE,
        "--binary",
        "--mapping",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for r in 0..4 {
        assert!(out.contains(&format!("rank {r}/4 appnum=0")), "{out}");
        assert!(
            out.contains(&format!("rank {r} nodes [0, 0, 0, 0]")),
            "{out}"
        );
    }
    assert_eq!(
        out.matches("got 0:bin256 1:bin256 2:bin256 3:bin256")
            .count(),
        4
    );
}

#[test]
fn mpmd_sections_get_appnums() {
    let o = run(&["--timeout", "60", "-n", "1", PROBE, ":", "-n", "2", PROBE]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("rank 0/3 appnum=0"), "{out}");
    assert!(out.contains("rank 1/3 appnum=1"), "{out}");
    assert!(out.contains("rank 2/3 appnum=1"), "{out}");
}

#[test]
fn exit_codes() {
    let o = run(&["-n", "3", "true"]);
    assert_eq!(code(&o), 0);
    assert!(own_messages(&o).is_empty());

    let o = run(&["-n", "2", "sh", "-c", "exit 3"]);
    assert_eq!(code(&o), 3);
    let m = own_messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains(") exited with code 3; terminating the job"),
        "{m:?}"
    );

    // A rank that ignores SIGTERM is killed after the grace period.
    let o = run(&[
        "-n",
        "1",
        "sh",
        "-c",
        "exit 4",
        ":",
        "-n",
        "1",
        "sh",
        "-c",
        "trap '' TERM; sleep 60",
    ]);
    assert_eq!(code(&o), 4);
    assert_eq!(own_messages(&o).len(), 1);

    let o = run(&["-n", "1", "sh", "-c", "kill -9 $$"]);
    assert_eq!(code(&o), 137);
    let m = own_messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].starts_with("mpiexec: rank 0 (pid "), "{m:?}");
    assert!(
        m[0].ends_with(") was killed by signal 9 (SIGKILL); terminating the job"),
        "{m:?}"
    );
}

#[test]
fn environment_of_ranks() {
    let o = run(&[
        "-genv",
        "FOO",
        "global",
        "-n",
        "2",
        "-env",
        "BAR",
        "local",
        "sh",
        "-c",
        "echo $PMI_RANK $PMI_SIZE $PMI_SPAWNED ${#OXMPI_JOB_SECRET} $FOO $BAR $OXMPI_KVSNAME",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort();
    assert_eq!(lines.len(), 2);
    let kvs: Vec<&str> = lines
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap())
        .collect();
    assert_eq!(kvs[0], kvs[1]);
    assert!(kvs[0].starts_with("oxmpi-"));
    assert!(lines[0].starts_with("0 2 0 32 global local "), "{out}");
    assert!(lines[1].starts_with("1 2 0 32 global local "), "{out}");
}

#[test]
fn labels_and_partial_lines() {
    let o = run(&["-l", "-n", "3", "sh", "-c", "echo a; echo b >&2; printf c"]);
    assert_eq!(code(&o), 0);
    let out = text(&o.stdout);
    for r in 0..3 {
        assert!(out.contains(&format!("[{r}] a\n")), "{out}");
        assert!(out.contains(&format!("[{r}] c\n")), "{out}");
        assert!(text(&o.stderr).contains(&format!("[{r}] b\n")));
    }
    assert_eq!(out.lines().count(), 6);

    let o = run(&["-n", "1", "printf", "abc"]);
    assert_eq!(text(&o.stdout), "abc");
}

#[test]
fn output_of_quickly_exiting_ranks_is_complete() {
    let o = run(&["-n", "8", "sh", "-c", "seq 1 3000"]);
    assert_eq!(code(&o), 0);
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 8 * 3000);
    assert_eq!(out.lines().filter(|l| *l == "3000").count(), 8);
}

#[test]
fn stdin_goes_to_rank_0_only() {
    let o = run_with_stdin(&["-n", "3", "cat"], Some(b"x\ny\n"));
    assert_eq!(code(&o), 0);
    assert_eq!(text(&o.stdout), "x\ny\n");

    let o = run_with_stdin(
        &["--timeout", "60", "-n", "2", PROBE, "--stdin"],
        Some(b"hello probe\n"),
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("stdin: hello probe\n"));
}

fn pid_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // A zombie is dead (it only waits to be reaped by whoever inherited it).
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

fn wait_dead(pids: &[u32]) {
    let start = Instant::now();
    while pids.iter().any(|&p| pid_alive(p)) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "ranks {pids:?} survived"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn pids_of(out: &str) -> Vec<u32> {
    out.lines()
        .filter_map(|l| l.strip_prefix("pid "))
        .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
        .collect()
}

#[test]
fn sigkill_of_one_rank_ends_the_job() {
    let o = run(&[
        "--timeout",
        "60",
        "-n",
        "4",
        PROBE,
        "--pid",
        "--hang",
        "--kill-self",
        "2",
    ]);
    assert_eq!(code(&o), 137, "{}", text(&o.stderr));
    let m = own_messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].starts_with("mpiexec: rank 2 (pid "), "{m:?}");
    assert!(m[0].ends_with("was killed by signal 9 (SIGKILL); terminating the job"));
    let pids = pids_of(&text(&o.stdout));
    assert_eq!(pids.len(), 4);
    wait_dead(&pids);
}

#[test]
fn abort_code_and_message() {
    for pmi in ["1", "2"] {
        let o = run(&[
            "--timeout",
            "60",
            "-genv",
            "OXMPI_PMI",
            pmi,
            "-n",
            "3",
            PROBE,
            "--hang",
            "--abort",
            "1",
            "3",
            "bad input",
        ]);
        assert_eq!(code(&o), 3, "{}", text(&o.stderr));
        assert_eq!(
            own_messages(&o),
            ["mpiexec: rank 1 called MPI_Abort(code 3): bad input; terminating the job"]
        );
    }
}

#[test]
fn exit_before_finalize() {
    let o = run(&[
        "--timeout",
        "60",
        "-n",
        "2",
        PROBE,
        "--hang",
        "--no-finalize",
        "0",
        "0",
    ]);
    assert_eq!(code(&o), 1);
    let m = own_messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].starts_with("mpiexec: rank 0 (pid "));
    assert!(m[0].ends_with(") exited with code 0 before MPI_Finalize; terminating the job"));
}

#[test]
fn rank_leaving_a_fence_partner_behind() {
    let o = run(&["--timeout", "60", "-n", "1", PROBE, ":", "-n", "1", "true"]);
    assert_eq!(code(&o), 1);
    let m = own_messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].contains("rank 1 (pid "));
    assert!(m[0].contains("while the other ranks wait for it in a PMI fence"));
}

#[test]
fn timeout() {
    let o = run(&["--timeout", "1", "-n", "2", "sleep", "60"]);
    assert_eq!(code(&o), 124);
    assert_eq!(
        own_messages(&o),
        ["mpiexec: timeout after 1 s; terminating the job"]
    );
}

#[test]
fn garbage_on_the_pmi_socket_fails_the_rank() {
    let o = run(&[
        "--timeout",
        "60",
        "-n",
        "2",
        "sh",
        "-c",
        "printf 'garbage\\n' >&$PMI_FD; sleep 60",
    ]);
    assert_eq!(code(&o), 1);
    let m = own_messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].contains("broke the PMI protocol"), "{m:?}");
}

#[test]
fn bad_arguments() {
    let dir = std::env::temp_dir().join(format!("oxmpi-mpiexec-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let noexec = dir.join("noexec");
    std::fs::write(&noexec, "#!/bin/sh\n").unwrap();
    let noexec = noexec.to_str().unwrap().to_owned();
    for (args, needle) in [
        (vec!["-n", "0", "true"], "at least one rank"),
        (vec![], "missing program"),
        (vec!["-n", "2"], "missing program"),
        (vec!["-frob", "true"], "unknown option -frob"),
        (vec!["-n", "1", "no-such-program-oxmpi"], "not found"),
        (vec!["./no/such/file"], "not found"),
        (vec![noexec.as_str()], "not executable"),
        (vec!["--timeout", "x", "true"], "not a positive number"),
    ] {
        let o = run(&args);
        assert_eq!(code(&o), 2, "{args:?}");
        let err = text(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(o.stdout.is_empty());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs mpiexec with `env` added to (or, with None, removed from) the environment.
fn run_env(args: &[&str], env: &[(&str, Option<&str>)]) -> Output {
    let mut cmd = Command::new(MPIEXEC);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    wait_limited(cmd.spawn().expect("start mpiexec"))
}

#[test]
fn bad_variables_are_usage_errors() {
    for (var, value, reason) in [
        (
            "OXMPI_LAUNCH_TIMEOUT",
            "abc",
            "not an integer (expected 1 to 86400)",
        ),
        (
            "OXMPI_LAUNCH_TIMEOUT",
            "0",
            "out of range (expected 1 to 86400)",
        ),
        (
            "OXMPI_MPIEXEC_VERBOSE",
            "maybe",
            "not a boolean (1, yes, true, on or 0, no, false, off)",
        ),
        (
            "OXMPI_TCP_ADDR",
            "10.0.0",
            "not an IPv4 address (expected four numbers 0 to 255 such as 10.0.0.5, or auto)",
        ),
    ] {
        let o = run_env(&["-n", "1", "sh", "-c", "echo ran"], &[(var, Some(value))]);
        assert_eq!(code(&o), 2, "{var}={value}");
        assert_eq!(
            own_messages(&o),
            [
                format!("mpiexec: {var}={value:?}: {reason}"),
                "mpiexec: try 'mpiexec --help' for usage".to_string()
            ],
            "{var}={value}"
        );
        assert!(o.stdout.is_empty(), "{var}={value}: the job ran");
    }
    // Neither --help nor --version reads them.
    let o = run_env(&["--version"], &[("OXMPI_LAUNCH_TIMEOUT", Some("abc"))]);
    assert_eq!(code(&o), 0);
}

#[test]
fn good_variables_still_work() {
    let verbose = |o: &Output| text(&o.stderr).contains("mpiexec(verbose): ");
    for (value, on) in [
        ("1", true),
        (" yes ", true),
        ("0", false),
        ("off", false),
        ("", false),
    ] {
        let o = run_env(
            &["-n", "1", "sh", "-c", "echo ran"],
            &[
                ("OXMPI_MPIEXEC_VERBOSE", Some(value)),
                ("OXMPI_LAUNCH_TIMEOUT", Some("5")),
                ("OXMPI_TCP_ADDR", Some("auto")),
            ],
        );
        assert_eq!(code(&o), 0, "{value:?}: {}", text(&o.stderr));
        assert_eq!(text(&o.stdout), "ran\n");
        assert_eq!(verbose(&o), on, "{value:?}: {}", text(&o.stderr));
    }
    // A variable only the library reads is the library's to check (at MPI_Init).
    let o = run_env(
        &["-n", "1", "sh", "-c", "echo ran"],
        &[("OXMPI_YIELD", Some("x")), ("OXMPI_MPIEXEC_VERBOSE", None)],
    );
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
}

#[test]
fn help_and_version() {
    let o = run(&["--help"]);
    assert_eq!(code(&o), 0);
    assert!(text(&o.stdout).contains("Usage: mpiexec"));
    let o = run(&["--version"]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        text(&o.stdout),
        format!("mpiexec (oxmpi) {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn shm_leftovers_are_removed() {
    let o = run(&["--timeout", "60", "-n", "2", PROBE, "--shm"]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let files: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("created "))
        .collect();
    assert_eq!(files.len(), 2, "{out}");
    for f in files {
        assert!(f.starts_with("/dev/shm/oxmpi.oxmpi-"));
        assert!(!std::path::Path::new(f).exists(), "{f} was left behind");
    }
}

fn spawn_hanging_job(n: u32) -> (Child, Vec<u32>) {
    let mut child = Command::new(MPIEXEC)
        .args([
            "--timeout",
            "60",
            "-n",
            &n.to_string(),
            PROBE,
            "--pid",
            "--hang",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut pids = Vec::new();
    let mut line = String::new();
    while pids.len() < n as usize {
        line.clear();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "mpiexec output ended early"
        );
        pids.extend(pids_of(&line));
    }
    // Wait for every rank to pass the fence: each prints its summary line.
    let mut summaries = 0;
    while summaries < n {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0);
        if line.starts_with("rank ") {
            summaries += 1;
        }
    }
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = reader.read_to_end(&mut sink);
    });
    (child, pids)
}

#[test]
fn sigterm_to_mpiexec_is_forwarded() {
    let (child, pids) = spawn_hanging_job(3);
    nix_kill(child.id(), libc_sig::SIGTERM);
    let o = wait_limited(child);
    assert_eq!(code(&o), 128 + libc_sig::SIGTERM);
    assert_eq!(
        own_messages(&o),
        ["mpiexec: received signal 15 (SIGTERM); terminating the job"]
    );
    wait_dead(&pids);
}

#[test]
fn sigkill_of_mpiexec_kills_the_ranks() {
    let (mut child, pids) = spawn_hanging_job(2);
    nix_kill(child.id(), libc_sig::SIGKILL);
    let _ = child.wait();
    wait_dead(&pids);
}

mod libc_sig {
    pub const SIGTERM: i32 = 15;
    pub const SIGKILL: i32 = 9;
}

fn nix_kill(pid: u32, sig: i32) {
    let st = Command::new("kill")
        .args([format!("-{sig}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn hydra_runs_the_probe() {
    let hydra = ["mpiexec.mpich", "mpiexec.hydra"].into_iter().find(|p| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(hydra) = hydra else {
        eprintln!("SKIPPED hydra_runs_the_probe: MPICH's mpiexec.mpich is not installed");
        return;
    };
    for n in [1u32, 4] {
        let child = Command::new(hydra)
            .args(["-n", &n.to_string(), PROBE])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait_limited(child);
        assert_eq!(code(&o), 0, "{}", text(&o.stderr));
        let out = text(&o.stdout);
        for r in 0..n {
            let want = format!("rank {r}/{n} appnum=0 kvs=");
            assert!(out.contains(&want), "{out}");
        }
        let all: Vec<String> = (0..n).map(|r| format!("{r}:hello-{r}")).collect();
        assert_eq!(
            out.matches(&format!("got {}", all.join(" "))).count(),
            n as usize
        );
    }
    // PMI-2 through Hydra as well.
    let child = Command::new(hydra)
        .args(["-n", "2", "-genv", "OXMPI_PMI", "2", PROBE, "--mapping"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_limited(child);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout).matches("got 0:hello-0 1:hello-1").count(),
        2
    );
}

/// A program built with MPICH's own compiler wrapper uses MPICH's PMI-1 client: it must
/// start, exchange addresses through our PMI server, communicate and abort correctly.
#[test]
fn mpich_program_runs_under_our_mpiexec() {
    let have_mpicc = Command::new("mpicc.mpich")
        .arg("-show")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_mpicc {
        eprintln!("SKIPPED mpich_program_runs_under_our_mpiexec: mpicc.mpich is not installed");
        return;
    }
    let dir = std::env::temp_dir().join(format!("oxmpi-mpich-prog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("hello.c");
    std::fs::write(
        &src,
        r#"#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (argc > 1 && rank == 1) MPI_Abort(MPI_COMM_WORLD, 5);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d of %d sum %d\n", rank, size, sum);
    MPI_Finalize();
    return 0;
}
"#,
    )
    .unwrap();
    let exe = dir.join("hello");
    let st = Command::new("mpicc.mpich")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success(), "mpicc.mpich failed");
    let exe = exe.to_str().unwrap().to_owned();
    let o = run(&["--timeout", "60", "-n", "4", &exe]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for r in 0..4 {
        assert!(out.contains(&format!("rank {r} of 4 sum 6\n")), "{out}");
    }
    let o = run(&["--timeout", "60", "-n", "3", &exe, "abort"]);
    assert_eq!(code(&o), 5, "{}", text(&o.stderr));
    assert_eq!(
        own_messages(&o),
        ["mpiexec: rank 1 called MPI_Abort(code 5); terminating the job"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// PMI spawn: rank 0 starts a job of 3 copies of the probe on both wires; the children
/// see `PMI_SPAWNED=1`, their own world of 3, the preput key in their key-value space, and
/// the spawning mpiexec waits for them.
#[test]
fn spawn_starts_a_job_with_its_own_world() {
    for wire in ["1", "2"] {
        let o = run(&[
            "--timeout",
            "60",
            "-genv",
            "OXMPI_PMI",
            wire,
            "-n",
            "2",
            PROBE,
            "--spawn",
            "3",
        ]);
        assert_eq!(code(&o), 0, "PMI-{wire}: {}", text(&o.stderr));
        let out = text(&o.stdout);
        assert_eq!(out.matches("spawned 3").count(), 1, "{out}");
        let parent_kvs = out
            .lines()
            .find(|l| l.starts_with("rank 0/2 "))
            .and_then(|l| l.split(" kvs=").nth(1))
            .and_then(|k| k.split(' ').next())
            .unwrap_or_else(|| panic!("{out}"))
            .to_owned();
        for r in 0..3 {
            assert!(
                out.contains(&format!("child {r}/3 spawned=true parent={parent_kvs}\n")),
                "PMI-{wire}: {out}"
            );
            // The children's world has its own key-value space.
            let line = out
                .lines()
                .find(|l| l.starts_with(&format!("rank {r}/3 ")))
                .unwrap_or_else(|| panic!("{out}"));
            assert!(line.contains(&format!(" kvs={parent_kvs}-s1 ")), "{line}");
        }
    }
}

/// A spawn of a program that does not exist is refused at once; the job goes on.
#[test]
fn spawn_of_a_missing_program_is_refused() {
    let o = run(&["--timeout", "60", "-n", "1", PROBE, "--spawn-missing"]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("spawn refused"),
        "{}",
        text(&o.stdout)
    );
}

/// A spawned job that fails fails the job that spawned it.
#[test]
fn a_failing_spawned_job_fails_the_spawner() {
    let o = run(&[
        "--timeout",
        "60",
        "-n",
        "1",
        PROBE,
        "--spawn",
        "2",
        "--no-finalize",
        "1",
        "3",
    ]);
    assert_ne!(code(&o), 0, "{}", text(&o.stdout));
    let msgs = own_messages(&o).join("\n");
    assert!(msgs.contains("spawned job"), "{msgs}");
}

/// A spawned rank killed by SIGKILL ends its job, which ends the spawning job: every
/// process of both jobs is gone within seconds.
#[test]
fn sigkill_in_a_spawned_job_ends_both_jobs() {
    let o = run(&[
        "--timeout",
        "60",
        "-n",
        "1",
        PROBE,
        "--spawn",
        "2",
        "--pid",
        "--hang",
        "--kill-self",
        "1",
    ]);
    assert_eq!(code(&o), 137, "{}", text(&o.stderr));
    let msgs = own_messages(&o).join("\n");
    assert!(msgs.contains("rank 1 (pid "), "{msgs}");
    assert!(msgs.contains("the spawned job "), "{msgs}");
    let pids = pids_of(&text(&o.stdout));
    assert_eq!(pids.len(), 3, "{}", text(&o.stdout));
    wait_dead(&pids);
}

/// Many spawns from one job: each is a job of its own with its own name, every child
/// runs, and nothing is left when the spawner's mpiexec returns.
#[test]
fn spawns_in_a_loop_leave_nothing_behind() {
    let o = run(&[
        "--timeout",
        "60",
        "-n",
        "2",
        PROBE,
        "--spawn",
        "1",
        "--spawn-times",
        "12",
        "--pid",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert_eq!(out.matches("spawned 1\n").count(), 12, "{out}");
    assert_eq!(out.matches("child 0/1 spawned=true").count(), 12, "{out}");
    for i in 1..=12 {
        assert!(out.contains(&format!("-s{i} ")), "job -s{i} missing: {out}");
    }
    let pids = pids_of(&out);
    assert_eq!(pids.len(), 14, "{out}");
    wait_dead(&pids);
}
