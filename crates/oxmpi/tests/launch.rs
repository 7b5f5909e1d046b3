//! Runs the example programs of this crate under a launcher at 1, 2, 3, 4 and 8 ranks
//! and checks their output and exit status.
//!
//! The launcher is, in order: `$OXMPI_TEST_MPIEXEC` if set; our `mpiexec` next to the
//! test binary's profile directory (`<target dir>/<profile>/mpiexec`, present once the
//! workspace is built); MPICH's `mpiexec.mpich` (Hydra speaks PMI-1, which our library
//! understands). The choice is printed. Every run has a time limit, after which its whole
//! process group is killed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const SIZES: [u32; 5] = [1, 2, 3, 4, 8];
const LIMIT: Duration = Duration::from_secs(60);

/// `<target dir>/<profile>`: the test binary lives in its `deps/` folder.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("path of the test binary");
    exe.parent()
        .and_then(Path::parent)
        .expect("the test binary is in <target>/<profile>/deps")
        .to_path_buf()
}

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn launcher() -> &'static Path {
    static LAUNCHER: OnceLock<PathBuf> = OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let (path, why) = if let Some(p) = std::env::var_os("OXMPI_TEST_MPIEXEC") {
            (PathBuf::from(p), "from OXMPI_TEST_MPIEXEC")
        } else if profile_dir().join("mpiexec").is_file() {
            (profile_dir().join("mpiexec"), "oxmpi's own launcher")
        } else if let Some(p) = on_path("mpiexec.mpich") {
            (p, "MPICH's Hydra; oxmpi's mpiexec is not built in this target directory")
        } else {
            panic!(
                "no launcher: build oxmpi's mpiexec (cargo build -p oxmpi-mpiexec, expected at {}), \
                 install MPICH (mpiexec.mpich), or set OXMPI_TEST_MPIEXEC",
                profile_dir().join("mpiexec").display()
            );
        };
        eprintln!("launcher: {} ({why})", path.display());
        path
    })
}

fn example(name: &str) -> PathBuf {
    let p = profile_dir().join("examples").join(name);
    assert!(
        p.is_file(),
        "example {name} not built at {} (cargo test builds examples)",
        p.display()
    );
    p
}

struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` in its own process group; kills the group after `LIMIT`.
fn run_limited(mut cmd: Command, what: &str) -> Run {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for the launcher") {
            break s;
        }
        if start.elapsed() > LIMIT {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            let (o, e) = (
                t_out.join().unwrap_or_default(),
                t_err.join().unwrap_or_default(),
            );
            panic!("{what}: still running after {LIMIT:?}; killed\nstdout:\n{o}\nstderr:\n{e}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    }
}

/// Runs example `name` on `n` ranks and requires it to succeed.
fn mpirun(name: &str, n: u32, args: &[&str]) -> Run {
    let mut cmd = Command::new(launcher());
    cmd.arg("-n")
        .arg(n.to_string())
        .arg(example(name))
        .args(args);
    let what = format!("{name} on {n} ranks");
    let r = run_limited(cmd, &what);
    assert!(
        r.status.success(),
        "{what} failed ({})\nstdout:\n{}\nstderr:\n{}",
        r.status,
        r.stdout,
        r.stderr
    );
    r
}

/// Runs a self-checking test program at every size and requires its success line.
fn check_program(name: &str) {
    for n in SIZES {
        let r = mpirun(name, n, &[]);
        let want = format!("{name}: passed on {n} ranks");
        let want_alt = format!("{name}: all modes passed on {n} ranks");
        assert!(
            r.stdout.lines().any(|l| l == want || l == want_alt),
            "{name} on {n} ranks: no success line\nstdout:\n{}\nstderr:\n{}",
            r.stdout,
            r.stderr
        );
    }
}

#[test]
fn hello_prints_one_line_per_rank() {
    for n in SIZES {
        let r = mpirun("hello", n, &[]);
        let mut lines: Vec<&str> = r.stdout.lines().collect();
        lines.sort_unstable();
        let mut want: Vec<String> = (0..n)
            .map(|i| format!("Hello from rank {i} of {n}"))
            .collect();
        want.sort_unstable();
        assert_eq!(lines, want, "hello on {n} ranks");
    }
}

#[test]
fn hello_runs_as_a_singleton_without_a_launcher() {
    let r = run_limited(Command::new(example("hello")), "hello without a launcher");
    assert!(r.status.success(), "{}", r.stderr);
    assert_eq!(r.stdout, "Hello from rank 0 of 1\n");
}

#[test]
fn ring_passes_the_token_around() {
    for n in SIZES {
        let r = mpirun("ring", n, &[]);
        let sum = n * (n - 1) / 2;
        let want = format!("ring: the token went around {n} ranks and came back as {sum}");
        assert_eq!(r.stdout.trim_end(), want);
    }
}

#[test]
fn pingpong_reports_every_size() {
    let r = mpirun("pingpong", 2, &["3"]);
    let rows: Vec<&str> = r.stdout.lines().skip(1).collect();
    assert_eq!(
        rows.len(),
        11,
        "sizes 1 B .. 1 MiB by factors of 4:\n{}",
        r.stdout
    );
    assert!(rows[0].trim_start().starts_with("1 "), "{}", r.stdout);
    assert!(
        rows[10].trim_start().starts_with("1048576 "),
        "{}",
        r.stdout
    );
    let r = mpirun("pingpong", 3, &["2"]);
    assert_eq!(r.stdout.lines().count(), 12, "{}", r.stdout);
    let r = mpirun("pingpong", 1, &[]);
    assert!(r.stdout.contains("needs at least 2 ranks"), "{}", r.stdout);
}

#[test]
fn all_send_modes_deliver_data_and_status() {
    check_program("check_modes");
}

#[test]
fn wildcard_receives_keep_per_sender_order() {
    check_program("check_wildcards");
}

#[test]
fn probe_then_receive_vec() {
    check_program("check_probe");
}

#[test]
fn matched_probe_takes_the_message() {
    check_program("check_matched_probe");
}

#[test]
fn one_sided_counter_halo_and_shared_array() {
    check_program("rma_counter");
    check_program("rma_halo");
    check_program("rma_shared");
}

#[test]
fn scoped_immediates_and_persistent_requests() {
    check_program("check_immediate");
}

#[test]
fn tools_interface_counts_traffic_and_forces_algorithms() {
    check_program("check_tools");
}

#[test]
fn scoped_nonblocking_collectives() {
    check_program("check_immediate_collectives");
}

#[test]
fn errors_have_classes_and_messages() {
    check_program("check_errors");
}

#[test]
fn partitioned_send_and_receive() {
    check_program("check_partitioned");
}

#[test]
fn buffered_sends_with_an_attachment() {
    check_program("check_buffered");
}

#[test]
fn threads_on_duplicated_communicators() {
    check_program("check_threads");
}

#[test]
fn send_receive_and_environment() {
    check_program("check_sendrecv");
}

#[test]
fn a_spawned_worker_farm_computes_every_task() {
    for n in [1, 2] {
        let r = mpirun("spawn_farm", n, &["3"]);
        let want = format!("spawn_farm: passed on {n} ranks");
        assert!(
            r.stdout.lines().any(|l| l == want),
            "spawn_farm on {n} ranks: no success line\nstdout:\n{}\nstderr:\n{}",
            r.stdout,
            r.stderr
        );
    }
}

#[test]
fn sessions_next_to_the_world_model() {
    check_program("check_sessions");
}

#[test]
fn a_library_initialises_through_a_session() {
    for n in SIZES {
        let r = mpirun("session_library", n, &[]);
        let (w, l) = (n * (n - 1) / 2, 10 * n * (n - 1) / 2);
        let want = format!("world sum {w}, library sum {l} on {n} ranks");
        assert!(
            r.stdout.lines().any(|x| x == want),
            "session_library on {n} ranks: no line {want:?}\nstdout:\n{}\nstderr:\n{}",
            r.stdout,
            r.stderr
        );
    }
}

#[test]
fn collectives_deliver_the_right_values() {
    check_program("check_collectives");
}

#[test]
fn derived_and_user_datatypes() {
    check_program("check_datatypes");
}

#[test]
fn communicators_groups_and_topologies() {
    check_program("check_communicators");
}

#[test]
fn a_panicking_user_operation_ends_the_job() {
    let mut cmd = Command::new(launcher());
    cmd.args(["-n", "2"])
        .arg(example("check_collectives"))
        .env("OXMPI_EXAMPLE_PANIC", "1");
    let r = run_limited(cmd, "check_collectives with a panicking operation");
    assert!(
        !r.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        r.stdout,
        r.stderr
    );
    assert!(!r.stderr.contains("CHECK FAILED"), "{}", r.stderr);
    // Hydra may end the job before the aborting rank's message reaches it; our
    // launcher reports it.
    if launcher() == profile_dir().join("mpiexec") {
        assert!(
            r.stderr.contains("a user reduction operation panicked"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn a_failing_check_fails_the_job() {
    // The launcher must report a rank that exits non-zero; the test programs rely on it.
    let mut cmd = Command::new(launcher());
    cmd.args(["-n", "2"])
        .arg(example("check_sendrecv"))
        .env("OXMPI_EXAMPLE_FAIL", "1");
    let r = run_limited(cmd, "check_sendrecv told to fail");
    assert!(
        !r.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        r.stdout,
        r.stderr
    );
    assert!(r.stderr.contains("CHECK FAILED"), "{}", r.stderr);
}

/// CPU numbers of a `Cpus_allowed_list` value such as `0-3,8,10-11`.
fn parse_cpu_list(list: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.parse().expect("cpu"), b.parse().expect("cpu"));
        cpus.extend(a..=b);
    }
    cpus
}

/// The CPUs each rank of a `placement` run may use, by rank.
fn placement(n: u32, env: &[(&str, &str)]) -> Vec<Vec<usize>> {
    let mut cmd = Command::new(launcher());
    for (k, v) in env {
        cmd.args(["-genv", k, v]);
    }
    cmd.arg("-n").arg(n.to_string()).arg(example("placement"));
    let what = format!("placement on {n} ranks");
    let r = run_limited(cmd, &what);
    assert!(r.status.success(), "{what}: {}\n{}", r.status, r.stderr);
    let mut by_rank = vec![None; n as usize];
    for line in r.stdout.lines() {
        let rest = line.strip_prefix("rank ").expect("placement line");
        let (rank, rest) = rest.split_once(" of ").expect("rank R of N");
        let (_, list) = rest.split_once(" cpus ").expect("cpus LIST");
        by_rank[rank.parse::<usize>().unwrap()] = Some(parse_cpu_list(list));
    }
    by_rank
        .into_iter()
        .map(|c| c.expect("a line from every rank"))
        .collect()
}

#[test]
fn oversubscribed_ranks_bind_to_cpus_in_blocks() {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = parse_cpu_list(
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .expect("Cpus_allowed_list in /proc/self/status"),
    );
    if allowed.len() < 2 || allowed.len() > 16 {
        eprintln!(
            "skipped: {} CPUs allowed (the test wants 2-16)",
            allowed.len()
        );
        return;
    }
    // Twice as many ranks as CPUs: consecutive pairs of ranks share a CPU.
    let n = 2 * allowed.len() as u32;
    let got = placement(n, &[]);
    for (rank, cpus) in got.iter().enumerate() {
        assert_eq!(cpus, &[allowed[rank / 2]], "rank {rank} of {n}: {got:?}");
    }
    // Asked not to, or with a CPU per rank, ranks keep the whole set.
    for cpus in placement(n, &[("OXMPI_BIND", "none")]) {
        assert_eq!(cpus, allowed);
    }
    for cpus in placement(allowed.len() as u32, &[]) {
        assert_eq!(cpus, allowed);
    }
}

/// Killing the launcher during start-up (its ranks then die by `SIGKILL` at once, some
/// before they took their node's shared segment) leaves nothing of the job in
/// `/dev/shm` and no rank behind. Only for oxmpi's own launcher.
#[test]
fn launcher_killed_during_startup_leaves_nothing() {
    use std::os::unix::process::CommandExt;
    if launcher().file_name().and_then(|n| n.to_str()) != Some("mpiexec") {
        eprintln!(
            "skipped: needs oxmpi's mpiexec, not {}",
            launcher().display()
        );
        return;
    }
    for delay_ms in [5u64, 10, 15, 20, 25, 30, 40, 50, 60, 80] {
        let mut child = Command::new(launcher())
            .args(["-n", "8"])
            .arg(example("hello"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("start the launcher");
        let pgid = child.id();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        // The ranks die with their launcher (parent-death signal); wait for the group.
        let start = Instant::now();
        let alive = || {
            Command::new("kill")
                .args(["-0", "--", &format!("-{pgid}")])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        while alive() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            !alive(),
            "ranks of the launcher killed after {delay_ms} ms still run after 10 s"
        );
        let job = format!("oxmpi-{pgid}-");
        let left: Vec<String> = std::fs::read_dir("/dev/shm")
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.contains(&job))
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            left.is_empty(),
            "launcher killed after {delay_ms} ms left {left:?} in /dev/shm"
        );
    }
}
