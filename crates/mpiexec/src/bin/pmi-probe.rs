//! `pmi-probe`: a small PMI client test program (used by the mpiexec integration tests and to
//! check the client against other process managers such as MPICH's Hydra).
//!
//! Default behaviour: initialize PMI from the environment, put a value, fence, read every
//! rank's value, print one summary line, finalize. Options add failure modes:
//!
//! ```text
//! --binary              store binary values through encode_value/decode_value
//! --mapping             also print the node id of every rank
//! --stdin               rank 0 reads its standard input and prints it
//! --shm                 create /dev/shm/oxmpi.<kvsname>.probe<rank> and leave it behind
//! --pid                 print "pid R P" for this rank before the fence
//! --abort R CODE MSG    rank R calls abort after the fence
//! --no-finalize R CODE  rank R exits with CODE after the fence without finalizing
//! --kill-self R         rank R sends itself SIGKILL after the fence
//! --hang                after the fence, every rank not named above sleeps forever
//! --spawn N             rank 0 spawns N copies of this program (with --child and the
//!                       other options given here), putting its kvsname under
//!                       `probe-parent` in theirs; prints "spawned N"
//! --spawn-times K       with --spawn: K spawns one after the other
//! --spawn-missing       rank 0 asks to spawn a program that does not exist; prints
//!                       "spawn refused" when refused
//! --child               (spawned) prints "child R/S spawned=B parent=P"
//! ```

use oxmpi_pmi::{decode_value, encode_value, Client};
use std::io::{Read, Write};
use std::process::exit;

#[derive(Default)]
struct Opts {
    binary: bool,
    mapping: bool,
    stdin: bool,
    shm: bool,
    pid: bool,
    hang: bool,
    abort: Option<(u32, i32, String)>,
    no_finalize: Option<(u32, i32)>,
    kill_self: Option<u32>,
    spawn: Option<u32>,
    spawn_missing: bool,
    spawn_times: u32,
    child: bool,
}

fn usage(msg: &str) -> ! {
    eprintln!("pmi-probe: {msg}");
    exit(2)
}

fn parse_args() -> Opts {
    let mut o = Opts::default();
    let mut args = std::env::args().skip(1);
    let num = |v: Option<String>, what: &str| -> i64 {
        v.and_then(|s| s.parse().ok())
            .unwrap_or_else(|| usage(&format!("{what} needs a number")))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--binary" => o.binary = true,
            "--mapping" => o.mapping = true,
            "--stdin" => o.stdin = true,
            "--shm" => o.shm = true,
            "--pid" => o.pid = true,
            "--hang" => o.hang = true,
            "--abort" => {
                let r = num(args.next(), "--abort") as u32;
                let c = num(args.next(), "--abort") as i32;
                let m = args.next().unwrap_or_default();
                o.abort = Some((r, c, m));
            }
            "--no-finalize" => {
                let r = num(args.next(), "--no-finalize") as u32;
                let c = num(args.next(), "--no-finalize") as i32;
                o.no_finalize = Some((r, c));
            }
            "--kill-self" => o.kill_self = Some(num(args.next(), "--kill-self") as u32),
            "--spawn" => o.spawn = Some(num(args.next(), "--spawn") as u32),
            "--spawn-missing" => o.spawn_missing = true,
            "--spawn-times" => o.spawn_times = num(args.next(), "--spawn-times") as u32,
            "--child" => o.child = true,
            other => usage(&format!("unknown argument {other:?}")),
        }
    }
    o
}

/// This program's arguments without the spawn options, plus `--child`.
fn child_args() -> Vec<String> {
    let mut out = vec!["--child".to_string()];
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--spawn" | "--spawn-times" => {
                args.next();
            }
            "--spawn-missing" | "--child" => {}
            _ => out.push(a),
        }
    }
    out
}

fn fail(what: &str, e: impl std::fmt::Display) -> ! {
    eprintln!("pmi-probe: {what}: {e}");
    exit(1)
}

fn value_for(rank: u32, binary: bool) -> String {
    if binary {
        let bytes: Vec<u8> = (0..=255u8).map(|b| b ^ (rank as u8)).collect();
        encode_value(&bytes)
    } else {
        format!("hello-{rank}")
    }
}

fn main() {
    let opts = parse_args();
    let mut client = match Client::from_env() {
        Ok(Some(c)) => c,
        Ok(None) => {
            println!("singleton");
            return;
        }
        Err(e) => fail("PMI init", e),
    };
    let (rank, size) = (client.rank(), client.size());
    if opts.child {
        let parent = client
            .get("probe-parent")
            .unwrap_or_else(|e| fail("get probe-parent", e));
        println!(
            "child {rank}/{size} spawned={} parent={parent}",
            client.spawned()
        );
    }
    if rank == 0 && (opts.spawn.is_some() || opts.spawn_missing) {
        use oxmpi_pmi::spawn::{SpawnApp, SpawnRequest};
        let me = std::env::current_exe().unwrap_or_else(|e| fail("current_exe", e));
        let command = if opts.spawn_missing {
            "/nonexistent/oxmpi-probe-child".to_string()
        } else {
            me.to_string_lossy().into_owned()
        };
        let n = opts.spawn.unwrap_or(1);
        let req = SpawnRequest {
            apps: vec![SpawnApp {
                command,
                maxprocs: n,
                args: child_args(),
                info: vec![],
            }],
            preput: vec![("probe-parent".into(), client.kvsname().to_owned())],
        };
        for _ in 0..opts.spawn_times.max(1) {
            match client.spawn(&req) {
                Ok(_) if !opts.spawn_missing => println!("spawned {n}"),
                Ok(_) => fail("spawn", "a missing program was spawned"),
                Err(oxmpi_pmi::PmiError::Server { .. }) if opts.spawn_missing => {
                    println!("spawn refused")
                }
                Err(e) => fail("spawn", e),
            }
        }
    }
    if opts.pid {
        println!("pid {rank} {}", std::process::id());
        let _ = std::io::stdout().flush();
    }
    let key = format!("probe-{rank}");
    if let Err(e) = client.put(&key, &value_for(rank, opts.binary)) {
        fail("put", e);
    }
    if let Err(e) = client.fence() {
        fail("fence", e);
    }
    let mut got = Vec::new();
    for r in 0..size {
        let v = client
            .get(&format!("probe-{r}"))
            .unwrap_or_else(|e| fail("get", e));
        if opts.binary {
            let bytes = decode_value(&v).unwrap_or_else(|e| fail("decode", e));
            let expected: Vec<u8> = (0..=255u8).map(|b| b ^ (r as u8)).collect();
            if bytes != expected {
                fail(
                    "binary value",
                    format!("rank {r}'s value did not round-trip"),
                );
            }
            got.push(format!("{r}:bin{}", bytes.len()));
        } else {
            got.push(format!("{r}:{v}"));
        }
    }
    match client.get("no-such-key") {
        Err(oxmpi_pmi::PmiError::KeyNotFound { .. }) => {}
        other => fail("get of a missing key", format!("{other:?}")),
    }
    println!(
        "rank {rank}/{size} appnum={} kvs={} got {}",
        client.appnum(),
        client.kvsname(),
        got.join(" ")
    );
    if opts.mapping {
        match client.node_ids() {
            Ok(Some(ids)) => println!("rank {rank} nodes {ids:?}"),
            Ok(None) => println!("rank {rank} nodes unknown"),
            Err(e) => fail("process mapping", e),
        }
    }
    if opts.stdin && rank == 0 {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .unwrap_or_else(|e| fail("stdin", e));
        println!("stdin: {}", s.trim_end());
    }
    if opts.shm {
        let path = format!("/dev/shm/oxmpi.{}.probe{rank}", client.kvsname());
        std::fs::write(&path, b"x").unwrap_or_else(|e| fail("shm file", e));
        println!("created {path}");
    }
    let _ = std::io::stdout().flush();
    let mut named = false;
    if let Some((r, code, msg)) = &opts.abort {
        named |= *r == rank;
        if *r == rank {
            client.abort(*code, msg);
        }
    }
    if let Some((r, code)) = opts.no_finalize {
        named |= r == rank;
        if r == rank {
            exit(code);
        }
    }
    if let Some(r) = opts.kill_self {
        named |= r == rank;
        if r == rank {
            // SAFETY: raise() has no memory-safety preconditions.
            unsafe { libc::raise(libc::SIGKILL) };
        }
    }
    if opts.hang && !named {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
    if let Err(e) = client.finalize() {
        fail("finalize", e);
    }
}
