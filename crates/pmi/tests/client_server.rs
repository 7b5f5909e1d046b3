//! The blocking [`Client`] against the sans-IO [`Server`] driven by a tiny in-process
//! driver (one thread per connection): PMI-1 and PMI-2 clients in one job, the
//! `PMI_PORT`/`initack` start-up over TCP, environment handling and argument checks.

use oxmpi_pmi::client::ConnectParams;
use oxmpi_pmi::{decode_value, encode_value, Client, JobConfig, PmiError, PmiVersion, Server};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::fd::{IntoRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};

type Writer = Box<dyn Write + Send>;

/// The server plus a writer for every connection.
struct Hub {
    server: Server,
    writers: Vec<Option<Writer>>,
}

impl Hub {
    fn flush(&mut self) {
        for (conn, w) in self.writers.iter_mut().enumerate() {
            let out = self.server.output(conn).to_vec();
            if let (Some(w), false) = (w.as_mut(), out.is_empty()) {
                if w.write_all(&out).is_ok() {
                    self.server.consume_output(conn, out.len());
                }
            }
        }
    }
}

/// Serves one connection: reads until EOF, feeding the shared server.
fn serve<R: Read + Send + 'static>(hub: Arc<Mutex<Hub>>, conn: usize, mut r: R) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            let n = r.read(&mut buf).unwrap_or(0);
            let mut h = hub.lock().unwrap();
            if n == 0 {
                h.server.close(conn);
                return;
            }
            h.server.receive(conn, &buf[..n]);
            h.flush();
        }
    });
}

fn hub(cfg: JobConfig) -> Arc<Mutex<Hub>> {
    Arc::new(Mutex::new(Hub {
        server: Server::new(cfg).unwrap(),
        writers: Vec::new(),
    }))
}

/// A connected socket pair whose server side is already being served for `rank`.
fn attach(h: &Arc<Mutex<Hub>>, rank: Option<u32>) -> OwnedFd {
    let (ours, theirs) = UnixStream::pair().unwrap();
    let conn = {
        let mut g = h.lock().unwrap();
        let c = g.server.add_connection(rank).unwrap();
        g.writers.push(Some(Box::new(ours.try_clone().unwrap())));
        c
    };
    serve(h.clone(), conn, ours);
    OwnedFd::from(theirs)
}

fn params(version: PmiVersion, rank: u32, size: u32) -> ConnectParams {
    ConnectParams {
        version: Some(version),
        rank: Some(rank),
        size: Some(size),
        ..ConnectParams::default()
    }
}

#[test]
fn mixed_versions_exchange_business_cards() {
    let size = 6u32;
    let mut cfg = JobConfig::new("job-mixed", size);
    cfg.appnums = vec![0, 0, 0, 1, 1, 1];
    let h = hub(cfg);
    let threads: Vec<_> = (0..size)
        .map(|r| {
            let fd = attach(&h, Some(r));
            std::thread::spawn(move || {
                let v = if r % 2 == 0 {
                    PmiVersion::V1
                } else {
                    PmiVersion::V2
                };
                let mut c = Client::connect(fd, &params(v, r, size)).unwrap();
                assert_eq!((c.rank(), c.size()), (r, size));
                assert_eq!(c.kvsname(), "job-mixed");
                assert_eq!(c.appnum(), if r < 3 { 0 } else { 1 });
                assert_eq!(c.universe_size(), Some(size));
                assert_eq!(c.version(), v);
                let card: Vec<u8> = (0..700u32).map(|i| (i * 7 + r) as u8).collect();
                c.put(&format!("card-{r}"), &encode_value(&card)).unwrap();
                c.fence().unwrap();
                for p in 0..size {
                    let got = decode_value(&c.get(&format!("card-{p}")).unwrap()).unwrap();
                    let want: Vec<u8> = (0..700u32).map(|i| (i * 7 + p) as u8).collect();
                    assert_eq!(got, want);
                }
                assert!(matches!(
                    c.get("missing"),
                    Err(PmiError::KeyNotFound { .. })
                ));
                assert_eq!(c.node_ids().unwrap(), Some(vec![0; size as usize]));
                // A second fence works too.
                c.put(&format!("second-{r}"), "x").unwrap();
                c.fence().unwrap();
                assert_eq!(c.get(&format!("second-{}", (r + 1) % size)).unwrap(), "x");
                c.finalize().unwrap();
                assert!(matches!(c.put("k", "v"), Err(PmiError::Finalized)));
                assert!(matches!(c.finalize(), Err(PmiError::Finalized)));
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let g = h.lock().unwrap();
    for r in 0..size {
        let st = g.server.rank_state(r).unwrap();
        assert!(st.initialized && st.finalized && !st.in_fence);
    }
}

#[test]
fn name_service_between_a_pmi1_and_a_pmi2_rank() {
    let h = hub(JobConfig::new("job-names", 2));
    let fds: Vec<_> = (0..2).map(|r| attach(&h, Some(r))).collect();
    let mut clients: Vec<Client> = fds
        .into_iter()
        .enumerate()
        .map(|(r, fd)| {
            let v = [PmiVersion::V1, PmiVersion::V2][r];
            Client::connect(fd, &params(v, r as u32, 2)).unwrap()
        })
        .collect();
    for (publisher, looker) in [(0, 1), (1, 0)] {
        let svc = format!("svc-{publisher}");
        clients[publisher]
            .publish_name(&svc, "tcp#127.0.0.1:9$x")
            .unwrap();
        assert!(matches!(
            clients[looker].publish_name(&svc, "other"),
            Err(PmiError::Server { .. })
        ));
        assert_eq!(
            clients[looker].lookup_name(&svc).unwrap(),
            "tcp#127.0.0.1:9$x"
        );
        clients[looker].unpublish_name(&svc).unwrap();
        assert!(matches!(
            clients[publisher].lookup_name(&svc),
            Err(PmiError::Server { .. })
        ));
        assert!(matches!(
            clients[publisher].unpublish_name(&svc),
            Err(PmiError::Server { .. })
        ));
    }
    assert!(matches!(
        clients[0].publish_name("has space", "p"),
        Err(PmiError::InvalidArgument(_))
    ));
}

#[test]
fn argument_checks() {
    let h = hub(JobConfig::new("j", 1));
    let mut c = Client::connect(attach(&h, Some(0)), &params(PmiVersion::V1, 0, 1)).unwrap();
    for (k, v) in [
        ("", "v"),
        ("k", ""),
        ("a key", "v"),
        ("k", "a value"),
        ("k", "a=b"),
        ("k", "a;b"),
        ("k", "a\\b"),
        ("k", "é"),
    ] {
        assert!(
            matches!(c.put(k, v), Err(PmiError::InvalidArgument(_))),
            "{k:?} {v:?}"
        );
    }
    assert!(c.put(&"k".repeat(65), "v").is_err());
    assert!(c.put("k", &"v".repeat(1025)).is_err());
    c.put(&"k".repeat(64), &"v".repeat(1024)).unwrap();
    assert_eq!(c.get(&"k".repeat(64)).unwrap(), "v".repeat(1024));
    assert!(c.get("bad key").is_err());
}

#[test]
fn pmi_port_initack_over_tcp() {
    let h = hub(JobConfig::new("tcpjob", 2));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hh = h.clone();
    std::thread::spawn(move || {
        for _ in 0..2 {
            let (s, _) = listener.accept().unwrap();
            let conn = {
                let mut g = hh.lock().unwrap();
                let c = g.server.add_connection(None).unwrap();
                g.writers.push(Some(Box::new(s.try_clone().unwrap())));
                c
            };
            serve(hh.clone(), conn, s);
        }
    });
    let threads: Vec<_> = (0..2u32)
        .map(|id| {
            std::thread::spawn(move || {
                let vars = move |k: &str| match k {
                    "PMI_PORT" => Some(format!("127.0.0.1:{port}")),
                    "PMI_ID" => Some(id.to_string()),
                    _ => None,
                };
                let mut c = Client::from_vars(vars).unwrap().unwrap();
                assert_eq!((c.rank(), c.size()), (id, 2));
                c.put(&format!("k{id}"), &format!("v{id}")).unwrap();
                c.fence().unwrap();
                assert_eq!(
                    c.get(&format!("k{}", 1 - id)).unwrap(),
                    format!("v{}", 1 - id)
                );
                c.finalize().unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}

#[test]
fn environment_selection() {
    // No PMI variables: singleton.
    assert!(Client::from_vars(|_| None).unwrap().is_none());
    // Bad values are reported with the variable's name.
    let e = Client::from_vars(|k| (k == "PMI_FD").then(|| "x".to_owned())).unwrap_err();
    assert!(e.to_string().contains("PMI_FD"), "{e}");
    let e = Client::from_vars(|k| (k == "PMI_FD").then(|| "987654".to_owned())).unwrap_err();
    assert!(e.to_string().contains("not an open file descriptor"), "{e}");
    let e = Client::from_vars(|k| match k {
        "PMI_FD" => Some("0".into()),
        "OXMPI_PMI" => Some("3".into()),
        _ => None,
    })
    .unwrap_err();
    assert!(e.to_string().contains("OXMPI_PMI"), "{e}");

    // PMI_FD with Slurm variables selects PMI-2; OXMPI_PMI=1 overrides.
    for (slurm, force, want) in [
        (true, None, PmiVersion::V2),
        (true, Some("1"), PmiVersion::V1),
        (false, None, PmiVersion::V1),
        (false, Some("2"), PmiVersion::V2),
    ] {
        let h = hub(JobConfig::new("envjob", 1));
        let fd = attach(&h, Some(0)).into_raw_fd();
        let vars = move |k: &str| match k {
            "PMI_FD" => Some(fd.to_string()),
            "PMI_RANK" => Some("0".into()),
            "PMI_SIZE" => Some("1".into()),
            "SLURM_JOB_ID" if slurm => Some("77".into()),
            "PMI_JOBID" => Some("77.0".into()),
            "OXMPI_PMI" => force.map(str::to_owned),
            _ => None,
        };
        let mut c = Client::from_vars(vars).unwrap().unwrap();
        assert_eq!(c.version(), want);
        // The descriptor cannot be taken twice while this client owns it.
        assert!(Client::from_vars(vars).is_err());
        c.finalize().unwrap();
    }
}

#[test]
fn server_closing_the_connection_is_an_error() {
    let (ours, theirs) = UnixStream::pair().unwrap();
    drop(ours);
    let e = Client::connect(OwnedFd::from(theirs), &params(PmiVersion::V1, 0, 1)).unwrap_err();
    assert!(matches!(e, PmiError::Closed), "{e:?}");
}

#[test]
fn garbage_from_the_server_is_a_protocol_error() {
    let (mut ours, theirs) = UnixStream::pair().unwrap();
    std::thread::spawn(move || {
        let mut b = [0u8; 256];
        let _ = ours.read(&mut b);
        let _ = ours.write_all(b"cmd=something_else rc=0\n");
        let _ = ours.read(&mut b);
    });
    let e = Client::connect(OwnedFd::from(theirs), &params(PmiVersion::V1, 0, 1)).unwrap_err();
    assert!(
        e.to_string().contains("expected cmd=response_to_init"),
        "{e}"
    );
}
