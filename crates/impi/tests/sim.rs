//! N simulated clients against the server, in memory: the whole startup exchange, the
//! spec's examples, shutdown, and the faults each side must report.

use std::net::{IpAddr, Ipv4Addr};

use oxmpi_impi::job::ipv6_bytes;
use oxmpi_impi::label::{self, u32s, Collated, Version};
use oxmpi_impi::wire::{encode_cmd, CmdHeader, CMD_AUTH, CMD_COLL, CMD_DONE, CMD_FINI, CMD_IMPI};
use oxmpi_impi::*;

fn ip(last: u8) -> [u8; 16] {
    ipv6_bytes(IpAddr::V4(Ipv4Addr::new(10, 0, 0, last)))
}

/// A client with `procs_per_host[h]` procs on host h.
fn local(client: u8, procs_per_host: &[u32], datalen: u32) -> LocalClient {
    let hosts = procs_per_host
        .iter()
        .enumerate()
        .map(|(h, &np)| LocalHost {
            ipv6: ip(client * 10 + h as u8),
            port: 5000 + 1000 * client as u32 + h as u32,
            ackmark: 4,
            hiwater: 16,
            procs: (0..np)
                .map(|p| LocalProc {
                    ipv6: ip(client * 10 + h as u8),
                    pid: 100 + p as i64,
                })
                .collect(),
        })
        .collect();
    LocalClient {
        versions: vec![Version::V0_0],
        datalen,
        tagub: 32767 + client as i32,
        coll_xsize: -1,
        coll_maxlinear: -1,
        hosts,
        extra_labels: Vec::new(),
        host_auth: false,
    }
}

fn key_auth(k: u64) -> AuthConfig {
    AuthConfig {
        none: false,
        key: Some(k),
    }
}

/// What happened to one simulated client.
#[derive(Debug)]
enum End {
    Ready(Box<Job>),
    Error(String),
    Rejected(String),
}

struct Sim {
    server: Server,
    clients: Vec<Client>,
    open: Vec<bool>,
    rejected: Vec<Option<String>>,
    errors: Vec<Option<String>>,
    warnings: Vec<String>,
    abort: Option<String>,
    finished: bool,
}

impl Sim {
    fn new(server: ServerConfig, clients: Vec<ClientConfig>) -> Sim {
        let mut s = Server::new(server).unwrap();
        let n = clients.len();
        for i in 0..n {
            s.connected(i as ConnId, format!("10.9.9.{i}:4000"));
        }
        Sim {
            server: s,
            clients: clients
                .into_iter()
                .map(|c| Client::new(c).unwrap())
                .collect(),
            open: vec![true; n],
            rejected: vec![None; n],
            errors: vec![None; n],
            warnings: Vec::new(),
            abort: None,
            finished: false,
        }
    }

    /// Moves bytes until nothing moves; `raw[i]` replaces client i's output once.
    fn run(&mut self) {
        loop {
            let mut moved = false;
            for i in 0..self.clients.len() {
                if !self.open[i] {
                    continue;
                }
                let out = self.clients[i].take_output();
                if !out.is_empty() {
                    moved = true;
                    self.server.received(i as ConnId, &out);
                }
            }
            while let Some(a) = self.server.poll_action() {
                moved = true;
                match a {
                    Action::Send(c, bytes) => {
                        let c = c as usize;
                        if self.open[c] {
                            if let Err(e) = self.clients[c].received(&bytes) {
                                self.errors[c] = Some(e.0);
                                self.open[c] = false;
                                self.server.closed(c as ConnId);
                            }
                        }
                    }
                    Action::Reject { conn, reason } => {
                        let c = conn as usize;
                        self.open[c] = false;
                        self.errors[c] = Some(self.clients[c].closed().0);
                        self.rejected[c] = Some(reason);
                    }
                    Action::Warn(w) => self.warnings.push(w),
                    Action::Abort(m) => {
                        self.abort = Some(m);
                        for c in 0..self.clients.len() {
                            if self.open[c] {
                                self.open[c] = false;
                                self.errors[c] = Some(self.clients[c].closed().0);
                            }
                        }
                    }
                    Action::Finished => self.finished = true,
                }
            }
            if !moved {
                return;
            }
        }
    }

    fn end(&self, i: usize) -> End {
        if let Some(r) = &self.rejected[i] {
            return End::Rejected(r.clone());
        }
        if let Some(e) = &self.errors[i] {
            return End::Error(e.clone());
        }
        match self.clients[i].job() {
            Some(j) => End::Ready(Box::new(j.clone())),
            None => End::Error(format!("stuck at {:?}", self.clients[i].stage())),
        }
    }

    fn job(&self, i: usize) -> Job {
        match self.end(i) {
            End::Ready(j) => *j,
            e => panic!("client {i}: {e:?} (server abort: {:?})", self.abort),
        }
    }
}

fn server_cfg(n: u32, auth: AuthConfig) -> ServerConfig {
    ServerConfig {
        nclients: n,
        auth,
        preference: None,
    }
}

/// The spec's three-client job: 3 hosts x 2 procs, 2 x 3, 2 x 4 (client ranks given out
/// of connection order), data lengths 8000/4000/4000.
#[test]
fn three_clients_of_the_spec_example() {
    let cfgs = vec![
        ClientConfig {
            rank: 2,
            auth: key_auth(5678),
            local: local(2, &[4, 4], 4000),
        },
        ClientConfig {
            rank: 0,
            auth: key_auth(5678),
            local: local(0, &[2, 2, 2], 8000),
        },
        ClientConfig {
            rank: 1,
            auth: key_auth(5678),
            local: local(1, &[3, 3], 4000),
        },
    ];
    let mut sim = Sim::new(server_cfg(3, key_auth(5678)), cfgs);
    sim.run();
    assert_eq!(sim.abort, None);
    let jobs: Vec<Job> = (0..3).map(|i| sim.job(i)).collect();
    // Every client derives the same job (but its own rank).
    for j in &jobs[1..] {
        assert_eq!(
            Job {
                my_client: 0,
                ..j.clone()
            },
            Job {
                my_client: 0,
                ..jobs[0].clone()
            }
        );
    }
    assert_eq!(jobs[0].my_client, 2);
    let j = &jobs[1];
    assert_eq!(j.nclients, 3);
    assert_eq!(j.version, Version::V0_0);
    assert_eq!(j.maxdatalen, 4000);
    assert_eq!(j.tag_ub, 32767);
    assert_eq!((j.coll_xsize, j.coll_maxlinear), (1024, 4));
    assert_eq!(
        j.clients.iter().map(|c| c.nhosts).collect::<Vec<_>>(),
        [3, 2, 2]
    );
    assert_eq!(
        j.clients.iter().map(|c| c.first_proc).collect::<Vec<_>>(),
        [0, 6, 12]
    );
    assert_eq!(j.hosts.len(), 7);
    assert_eq!(
        j.hosts.iter().map(|h| h.port).collect::<Vec<_>>(),
        [5000, 5001, 5002, 6000, 6001, 7000, 7001]
    );
    assert_eq!(j.procs.len(), 20);
    assert_eq!(j.procs[6].client, 1);
    assert_eq!(j.procs[6].host, 3);
    assert_eq!(j.procs[19].id.pid, 103);
    // The server broadcast IMPI_H_PORT as in the spec's figure: mask 0x7, 7 ports.
    let ports = j.labels.iter().find(|c| c.label == label::H_PORT).unwrap();
    assert_eq!(ports.client_mask, 0x7);
    assert_eq!(CmdHeader::decode(&ports.encode()).len, 36);
    // The dance: host 3 (client 1's first) connects to 0,1,2 and accepts from 5,6.
    assert_eq!(j.dance(3), (vec![0, 1, 2], vec![5, 6]));
    assert_eq!(j.dance(0), (vec![], vec![3, 4, 5, 6]));
    // Shutdown: FINI from all ends the server.
    for c in sim.clients.iter_mut() {
        c.finish().unwrap();
    }
    sim.run();
    assert!(sim.finished);
    assert_eq!(sim.abort, None);
}

#[test]
fn auth_none_warns_with_the_client_address() {
    let none = AuthConfig {
        none: true,
        key: None,
    };
    let cfgs = vec![ClientConfig {
        rank: 0,
        auth: none.clone(),
        local: local(0, &[1], 100),
    }];
    let mut sim = Sim::new(
        server_cfg(
            1,
            AuthConfig {
                none: true,
                key: Some(1),
            },
        ),
        cfgs,
    );
    sim.run();
    assert_eq!(sim.job(0).nclients, 1);
    assert_eq!(sim.clients[0].method(), Some(auth::AUTH_NONE));
    assert!(sim
        .warnings
        .iter()
        .any(|w| w.contains("10.9.9.0:4000") && w.contains("IMPI_AUTH_NONE")));
}

#[test]
fn wrong_key_is_rejected_and_the_job_goes_on() {
    // Client 0 has the wrong key; a third connection with the right key takes rank 0.
    let cfgs = vec![
        ClientConfig {
            rank: 0,
            auth: key_auth(1234),
            local: local(0, &[1], 100),
        },
        ClientConfig {
            rank: 1,
            auth: key_auth(5678),
            local: local(1, &[1], 100),
        },
        ClientConfig {
            rank: 0,
            auth: key_auth(5678),
            local: local(0, &[1], 100),
        },
    ];
    let mut sim = Sim::new(server_cfg(2, key_auth(5678)), cfgs);
    sim.run();
    match sim.end(0) {
        End::Rejected(r) => assert!(r.contains("wrong authentication key"), "{r}"),
        e => panic!("{e:?}"),
    }
    assert!(sim.errors[0]
        .as_deref()
        .unwrap()
        .starts_with("Server disconnected (wrong authentication key?"));
    assert_eq!(sim.job(1).nclients, 2);
    assert_eq!(sim.job(2).my_client, 0);
}

#[test]
fn no_common_method() {
    let cfgs = vec![ClientConfig {
        rank: 0,
        auth: AuthConfig {
            none: true,
            key: None,
        },
        local: local(0, &[1], 100),
    }];
    let mut sim = Sim::new(server_cfg(1, key_auth(5)), cfgs);
    sim.run();
    match sim.end(0) {
        End::Rejected(r) => assert!(r.contains("no common authentication method"), "{r}"),
        e => panic!("{e:?}"),
    }
    // Neither side starts without a method.
    assert!(Server::new(server_cfg(1, AuthConfig::default())).is_err());
    assert!(Server::new(ServerConfig {
        nclients: 1,
        auth: AuthConfig {
            none: true,
            key: None
        },
        preference: Some(vec![1])
    })
    .is_err());
    assert!(Client::new(ClientConfig {
        rank: 0,
        auth: AuthConfig::default(),
        local: local(0, &[1], 1)
    })
    .err()
    .unwrap()
    .contains("No authentication methods available"));
}

/// A client that sends an extension label: the server relays it (mask of that client
/// only), the oxmpi clients ignore it and keep it in the job's label list.
#[test]
fn unknown_label_is_relayed_and_ignored() {
    let mut l1 = local(1, &[2], 100);
    l1.extra_labels.push((0x2150, vec![1, 2, 3]));
    l1.extra_labels.push((0x7000, vec![9; 5]));
    let cfgs = vec![
        ClientConfig {
            rank: 0,
            auth: key_auth(1),
            local: local(0, &[1], 100),
        },
        ClientConfig {
            rank: 1,
            auth: key_auth(1),
            local: l1,
        },
    ];
    let mut sim = Sim::new(server_cfg(2, key_auth(1)), cfgs);
    sim.run();
    let j0 = sim.job(0);
    let x = j0.labels.iter().find(|c| c.label == 0x2150).unwrap();
    assert_eq!((x.client_mask, x.data.clone()), (0x2, vec![1, 2, 3]));
    let y = j0.labels.iter().find(|c| c.label == 0x7000).unwrap();
    assert_eq!(y.client_mask, 0x2);
    assert!(j0
        .describe()
        .contains("label 0x7000: client_mask 0x2, 5 bytes"));
    assert_eq!(j0.procs.len(), 3);
}

/// A raw client drives the server byte by byte: the spec's message sequences.
struct Raw {
    server: Server,
}

impl Raw {
    fn new(n: u32, auth: AuthConfig) -> Raw {
        Raw {
            server: Server::new(server_cfg(n, auth)).unwrap(),
        }
    }
    fn send(&mut self, c: ConnId, bytes: &[u8]) -> Vec<Action> {
        // One byte at a time: the server must cope with any split.
        for b in bytes {
            self.server.received(c, std::slice::from_ref(b));
        }
        std::iter::from_fn(|| self.server.poll_action()).collect()
    }
}

fn auth_key_cmd(key: u64) -> Vec<u8> {
    let mut v = encode_cmd(CMD_AUTH, &2u32.to_be_bytes());
    v.extend_from_slice(&key.to_be_bytes());
    v
}

#[test]
fn server_messages_match_the_spec_examples() {
    let mut r = Raw::new(3, key_auth(5678));
    for c in 0..3 {
        r.server.connected(c, format!("peer{c}"));
    }
    // Client1 sends IMPI_Cmd {AUTH, 4}, {0x0002}; server sends IMPI_Server_auth {1, 0}.
    let a = r.send(0, &encode_cmd(CMD_AUTH, &2u32.to_be_bytes()));
    assert_eq!(a, vec![Action::Send(0, vec![0, 0, 0, 1, 0, 0, 0, 0])]);
    assert!(r.send(0, &5678u64.to_be_bytes()).is_empty());
    r.send(1, &auth_key_cmd(5678));
    r.send(2, &auth_key_cmd(5678));
    // IMPI: the size goes to everyone only after the last rank.
    assert!(r
        .send(0, &encode_cmd(CMD_IMPI, &0i32.to_be_bytes()))
        .is_empty());
    assert!(r
        .send(2, &encode_cmd(CMD_IMPI, &2i32.to_be_bytes()))
        .is_empty());
    let a = r.send(1, &encode_cmd(CMD_IMPI, &1i32.to_be_bytes()));
    let size = encode_cmd(CMD_IMPI, &3i32.to_be_bytes());
    assert_eq!(
        a,
        vec![
            Action::Send(0, size.clone()),
            Action::Send(1, size.clone()),
            Action::Send(2, size)
        ]
    );
    // C_DATALEN from clients 0 and 2; client 1 skips it (sends C_TAGUB): mask 0x5, len 16.
    assert!(r
        .send(
            0,
            &label::encode_client_coll(label::C_DATALEN, &u32s(&[8000]))
        )
        .is_empty());
    assert!(r
        .send(
            2,
            &label::encode_client_coll(label::C_DATALEN, &u32s(&[4000]))
        )
        .is_empty());
    let a = r.send(
        1,
        &label::encode_client_coll(label::C_TAGUB, &u32s(&[40000])),
    );
    let expect = Collated {
        label: label::C_DATALEN,
        client_mask: 0x5,
        data: u32s(&[8000, 4000]),
    }
    .encode();
    assert_eq!(CmdHeader::decode(&expect).len, 16);
    assert_eq!(a.len(), 3);
    assert!(a
        .iter()
        .all(|x| matches!(x, Action::Send(_, b) if *b == expect)));
    // DONE: the pending C_TAGUB of client 1 is broadcast once 0 and 2 are done; then DONE.
    assert!(r.send(0, &encode_cmd(CMD_DONE, &[])).is_empty());
    let a = r.send(2, &encode_cmd(CMD_DONE, &[]));
    let tag = Collated {
        label: label::C_TAGUB,
        client_mask: 0x2,
        data: u32s(&[40000]),
    }
    .encode();
    assert_eq!(a.len(), 3);
    assert!(a
        .iter()
        .all(|x| matches!(x, Action::Send(_, b) if *b == tag)));
    let a = r.send(1, &encode_cmd(CMD_DONE, &[]));
    let done = encode_cmd(CMD_DONE, &[]);
    assert_eq!(
        a,
        (0..3)
            .map(|c| Action::Send(c, done.clone()))
            .collect::<Vec<_>>()
    );
    // Unknown commands are discarded with a warning; FINI from all finishes.
    let a = r.send(0, &encode_cmd(0x5858_5858, &[1, 2, 3]));
    assert!(
        matches!(&a[..], [Action::Warn(w)] if w.contains("discarded unknown command 0x58585858"))
    );
    assert!(r.send(0, &encode_cmd(CMD_FINI, &[])).is_empty());
    r.server.closed(0);
    assert!(r.send(1, &encode_cmd(CMD_FINI, &[])).is_empty());
    assert_eq!(
        r.send(2, &encode_cmd(CMD_FINI, &[])),
        vec![Action::Finished]
    );
}

fn joined(n: u32) -> Raw {
    let mut r = Raw::new(n, key_auth(7));
    for c in 0..n as ConnId {
        r.server.connected(c, format!("peer{c}"));
        r.send(c, &auth_key_cmd(7));
        r.send(c, &encode_cmd(CMD_IMPI, &(c as i32).to_be_bytes()));
    }
    r
}

fn abort_of(a: &[Action]) -> String {
    match a.iter().find(|x| matches!(x, Action::Abort(_))) {
        Some(Action::Abort(m)) => m.clone(),
        _ => panic!("no abort in {a:?}"),
    }
}

#[test]
fn server_faults_end_the_job_with_a_named_cause() {
    // Out-of-order labels.
    let mut r = joined(2);
    r.send(0, &label::encode_client_coll(label::C_NPROCS, &u32s(&[1])));
    let m = abort_of(&r.send(0, &label::encode_client_coll(label::C_NHOSTS, &u32s(&[1]))));
    assert!(
        m.contains("client 0 (peer0)") && m.contains("IMPI_C_NHOSTS after IMPI_C_NPROCS"),
        "{m}"
    );
    // Malformed commands.
    for (bytes, what) in [
        (encode_cmd(CMD_IMPI, &[0, 0]), "IMPI with len 2"),
        (encode_cmd(CMD_DONE, &[0]), "DONE with len 1"),
        (encode_cmd(CMD_COLL, &[0, 0]), "has no label"),
        (label::encode_client_coll(0, &[]), "IMPI_NO_LABEL"),
        (encode_cmd(CMD_IMPI, &1i32.to_be_bytes()), "second IMPI"),
        (
            encode_cmd(CMD_FINI, &[]),
            "FINI before the startup exchange completed",
        ),
        (
            CmdHeader {
                cmd: CMD_COLL,
                len: -4,
            }
            .encode()
            .to_vec(),
            "len -4",
        ),
        (
            CmdHeader {
                cmd: CMD_COLL,
                len: 0x7fff_ffff,
            }
            .encode()
            .to_vec(),
            "len 2147483647",
        ),
        (auth_key_cmd(7), "second AUTH"),
    ] {
        let mut r = joined(2);
        let m = abort_of(&r.send(1, &bytes));
        assert!(m.contains("client 1") && m.contains(what), "{what}: {m}");
    }
    // A rank out of range or taken.
    let mut r = Raw::new(2, key_auth(7));
    for c in 0..2 {
        r.server.connected(c, format!("peer{c}"));
        r.send(c, &auth_key_cmd(7));
    }
    r.send(0, &encode_cmd(CMD_IMPI, &1i32.to_be_bytes()));
    let m = abort_of(&r.send(1, &encode_cmd(CMD_IMPI, &1i32.to_be_bytes())));
    assert!(m.contains("IMPI rank 1 is already taken by peer0"), "{m}");
    let mut r = joined(1);
    r.server.connected(5, "late");
    r.send(5, &auth_key_cmd(7));
    let m = abort_of(&r.send(5, &encode_cmd(CMD_IMPI, &3i32.to_be_bytes())));
    assert!(m.contains("IMPI rank 3 out of range"), "{m}");
    // A client vanishing mid-command, and before FINI.
    let mut r = joined(2);
    r.send(0, &encode_cmd(CMD_COLL, &[0, 0, 0x11, 0, 0, 0, 0, 1])[..10]);
    r.server.closed(0);
    let a: Vec<Action> = std::iter::from_fn(|| r.server.poll_action()).collect();
    assert!(abort_of(&a)
        .contains("client 0 (peer0) disconnected in the middle of a command before sending FINI"));
}

#[test]
fn unauthenticated_garbage_only_drops_the_connection() {
    let mut r = Raw::new(1, key_auth(7));
    for (c, bytes, what) in [
        (
            0,
            encode_cmd(CMD_IMPI, &0i32.to_be_bytes()),
            "first command is IMPI",
        ),
        (1, encode_cmd(CMD_AUTH, &[]), "AUTH with len 0"),
        (2, encode_cmd(CMD_AUTH, &[0, 0, 0]), "AUTH with len 3"),
        (3, b"GET / HTTP/1.0\r\n\r\n".to_vec(), "not AUTH"),
    ] {
        r.server.connected(c, format!("peer{c}"));
        let a = r.send(c, &bytes);
        assert!(
            matches!(&a[..], [Action::Reject { conn, reason }] if *conn == c && reason.contains(what)),
            "{what}: {a:?}"
        );
    }
    // The job is still there for a real client.
    r.server.connected(9, "real");
    r.send(9, &auth_key_cmd(7));
    let a = r.send(9, &encode_cmd(CMD_IMPI, &0i32.to_be_bytes()));
    assert_eq!(
        a,
        vec![Action::Send(9, encode_cmd(CMD_IMPI, &1i32.to_be_bytes()))]
    );
}

/// Clients check what they derive: a mandated label missing, disagreeing thresholds,
/// duplicate proc identifiers.
#[test]
fn client_side_faults() {
    // Disagreeing IMPI_C_COLL_XSIZE (but -1 agrees with an explicit 1024).
    let mut a = local(0, &[1], 100);
    let mut b = local(1, &[1], 100);
    a.coll_xsize = 1024;
    let cfgs = vec![
        ClientConfig {
            rank: 0,
            auth: key_auth(1),
            local: a.clone(),
        },
        ClientConfig {
            rank: 1,
            auth: key_auth(1),
            local: b.clone(),
        },
    ];
    let mut sim = Sim::new(server_cfg(2, key_auth(1)), cfgs);
    sim.run();
    assert_eq!(sim.job(0).coll_xsize, 1024);
    b.coll_xsize = 10;
    let cfgs = vec![
        ClientConfig {
            rank: 0,
            auth: key_auth(1),
            local: a.clone(),
        },
        ClientConfig {
            rank: 1,
            auth: key_auth(1),
            local: b,
        },
    ];
    let mut sim = Sim::new(server_cfg(2, key_auth(1)), cfgs);
    sim.run();
    match sim.end(0) {
        End::Error(e) => assert!(e.contains("disagree on IMPI_C_COLL_XSIZE"), "{e}"),
        e => panic!("{e:?}"),
    }
    // Same proc identifier in two clients.
    let cfgs = vec![
        ClientConfig {
            rank: 0,
            auth: key_auth(1),
            local: a.clone(),
        },
        ClientConfig {
            rank: 1,
            auth: key_auth(1),
            local: a,
        },
    ];
    let mut sim = Sim::new(server_cfg(2, key_auth(1)), cfgs);
    sim.run();
    match sim.end(1) {
        End::Error(e) => assert!(e.contains("same IMPI_P_IPV6"), "{e}"),
        e => panic!("{e:?}"),
    }
}

/// A foreign client that omits IMPI_C_DATALEN: the server relays a mask without it,
/// and the oxmpi client reports the mandated label as missing.
#[test]
fn missing_mandated_label_named() {
    let mut r = joined(1);
    // Use a real client as client 1 of a 2-client job... simpler: derive directly.
    let labels = local(0, &[1], 100).labels();
    let collated: Vec<Collated> = labels
        .into_iter()
        .filter(|(l, _)| *l != label::C_DATALEN)
        .map(|(l, d)| Collated {
            label: l,
            client_mask: 1,
            data: d,
        })
        .collect();
    let e = Job::from_collated(collated, 0, 1).unwrap_err();
    assert!(e.0.contains("never broadcast IMPI_C_DATALEN"), "{e}");
    let _ = r.send(0, &[]);
    // Versions are split at each 0.0: the spec's example negotiates 0.1.
    let v = |major, minor| Version { major, minor };
    let mut labels: Vec<Collated> = Vec::new();
    for (l, d) in local(0, &[1], 100).labels() {
        let data = match l {
            label::C_VERSION => label::versions(&[
                v(0, 0),
                v(0, 1),
                v(0, 0),
                v(0, 1),
                v(0, 2),
                v(0, 0),
                v(0, 1),
                v(0, 2),
            ]),
            label::H_IPV6
            | label::H_PORT
            | label::H_NPROCS
            | label::H_ACKMARK
            | label::H_HIWATER
            | label::C_NHOSTS
            | label::C_NPROCS
            | label::C_DATALEN
            | label::C_TAGUB
            | label::C_COLL_XSIZE
            | label::C_COLL_MAXLINEAR => [d.clone(), d.clone(), d].concat(),
            _ => {
                // Procs need distinct pids per client.
                if l == label::P_PID {
                    label::i64s(&[1, 2, 3])
                } else {
                    [d.clone(), d.clone(), d].concat()
                }
            }
        };
        labels.push(Collated {
            label: l,
            client_mask: 0x7,
            data,
        });
    }
    let j = Job::from_collated(labels, 1, 3).unwrap();
    assert_eq!(j.version, v(0, 1));
    assert_eq!(j.clients[1].versions, vec![v(0, 0), v(0, 1), v(0, 2)]);
}

/// A client may send its labels ahead (all of them and DONE at once): the server queues
/// them and still broadcasts label by label as the other clients catch up.
#[test]
fn pipelined_client_is_queued() {
    let mut r = joined(2);
    let mut ahead = label::encode_client_coll(label::C_NHOSTS, &u32s(&[1]));
    ahead.extend_from_slice(&label::encode_client_coll(label::H_PORT, &u32s(&[80])));
    ahead.extend_from_slice(&encode_cmd(CMD_DONE, &[]));
    assert!(r.send(0, &ahead).is_empty());
    let a = r.send(1, &label::encode_client_coll(label::C_NHOSTS, &u32s(&[2])));
    let nh = Collated {
        label: label::C_NHOSTS,
        client_mask: 0x3,
        data: u32s(&[1, 2]),
    }
    .encode();
    assert_eq!(a, vec![Action::Send(0, nh.clone()), Action::Send(1, nh)]);
    // Client 1 skips IMPI_H_PORT: its next label is higher, so H_PORT goes out with 0x1.
    let a = r.send(
        1,
        &label::encode_client_coll(label::H_NPROCS, &u32s(&[2, 2])),
    );
    let hp = Collated {
        label: label::H_PORT,
        client_mask: 0x1,
        data: u32s(&[80]),
    }
    .encode();
    let hn = Collated {
        label: label::H_NPROCS,
        client_mask: 0x2,
        data: u32s(&[2, 2]),
    }
    .encode();
    assert_eq!(
        a,
        vec![
            Action::Send(0, hp.clone()),
            Action::Send(1, hp),
            Action::Send(0, hn.clone()),
            Action::Send(1, hn)
        ]
    );
    let a = r.send(1, &encode_cmd(CMD_DONE, &[]));
    let done = encode_cmd(CMD_DONE, &[]);
    assert_eq!(
        a,
        vec![Action::Send(0, done.clone()), Action::Send(1, done)]
    );
}

/// oxmpi's host-authentication label: set by clients that ask for it, flagged only when
/// the server chose IMPI_AUTH_KEY; clients without it (other implementations) are not
/// authenticated.
#[test]
fn host_auth_extension_label() {
    use oxmpi_impi::extension::{host_auth_clients, LABEL_HOST_AUTH};
    let mut a = local(0, &[1], 100);
    a.host_auth = true;
    let mut b = local(1, &[1], 100);
    b.host_auth = true;
    let c = local(2, &[1], 100);
    let cfgs = vec![
        ClientConfig {
            rank: 0,
            auth: key_auth(1),
            local: a.clone(),
        },
        ClientConfig {
            rank: 1,
            auth: key_auth(1),
            local: b.clone(),
        },
        ClientConfig {
            rank: 2,
            auth: key_auth(1),
            local: c,
        },
    ];
    let mut sim = Sim::new(server_cfg(3, key_auth(1)), cfgs);
    sim.run();
    let j = sim.job(2);
    assert_eq!(host_auth_clients(&j), vec![true, true, false]);
    let l = j
        .labels
        .iter()
        .find(|c| c.label == LABEL_HOST_AUTH)
        .unwrap();
    assert_eq!(l.client_mask, 0x3);
    // With IMPI_AUTH_NONE there is no shared key: the flag is clear.
    let none = AuthConfig {
        none: true,
        key: None,
    };
    let cfgs = vec![
        ClientConfig {
            rank: 0,
            auth: none.clone(),
            local: a,
        },
        ClientConfig {
            rank: 1,
            auth: none.clone(),
            local: b,
        },
    ];
    let mut sim = Sim::new(server_cfg(2, none), cfgs);
    sim.run();
    assert_eq!(host_auth_clients(&sim.job(0)), vec![false, false]);
}
