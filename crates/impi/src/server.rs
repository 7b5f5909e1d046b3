//! The IMPI server as a sans-IO state machine (spec 2.3): it authenticates each
//! connection, collects the clients' ranks (`IMPI`) and answers the job size, collates
//! `COLL` labels and broadcasts each as soon as every client has either submitted it or
//! moved past it, answers `DONE` once all clients sent it, and finishes when every client
//! has sent `FINI`.
//!
//! The driver reports connections, bytes and closures, and carries out the [`Action`]s.
//! Failures of a connection that has not authenticated only drop that connection (a
//! stray or hostile peer must not end the job); a protocol error from an authenticated
//! client, or its loss before `FINI`, ends the job ([`Action::Abort`]).

use std::collections::{HashMap, VecDeque};

use crate::auth::{
    self, AuthConfig, ServerAuth, AUTH_KEY, AUTH_KEY_LEN, AUTH_NONE, MAX_AUTH_PAYLOAD,
};
use crate::label::{decode_client_coll, label_name, Collated, NO_LABEL};
use crate::wire::{
    command_name, encode_cmd, CmdHeader, Inbox, CMD_AUTH, CMD_COLL, CMD_DONE, CMD_FINI,
    CMD_HEADER_LEN, CMD_IMPI, MAX_CLIENT_PAYLOAD,
};

/// The driver's name for a connection.
pub type ConnId = u64;

/// Most clients a job may have: `client_mask` is one `IMPI_Int4`.
pub const MAX_CLIENTS: u32 = 32;

/// The server's settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Number of clients expected.
    pub nclients: u32,
    /// Methods enabled on the server.
    pub auth: AuthConfig,
    /// The `-auth` preference list, if given.
    pub preference: Option<Vec<u32>>,
}

/// What the driver must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write these bytes to the connection.
    Send(ConnId, Vec<u8>),
    /// Close this connection (not authenticated); the job goes on.
    Reject { conn: ConnId, reason: String },
    /// Tell the operator (standard error).
    Warn(String),
    /// The job cannot go on: report, close every connection, exit with failure.
    Abort(String),
    /// Every client sent FINI: close everything and exit successfully.
    Finished,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the AUTH command.
    Auth,
    /// `IMPI_AUTH_KEY` chosen: waiting for the key.
    Key,
    /// Authenticated: commands.
    Commands,
    /// Rejected, finished or failed: input is ignored.
    Gone,
}

struct Conn {
    peer: String,
    inbox: Inbox,
    phase: Phase,
    rank: Option<u32>,
    last_label: Option<i32>,
    queue: VecDeque<(i32, Vec<u8>)>,
    done: bool,
    fini: bool,
}

/// The server state machine.
pub struct Server {
    cfg: ServerConfig,
    conns: HashMap<ConnId, Conn>,
    /// Connection of each client rank.
    ranks: Vec<Option<ConnId>>,
    all_joined: bool,
    done_sent: bool,
    finished: bool,
    aborted: bool,
    actions: VecDeque<Action>,
}

impl Server {
    /// Fails when the job size is out of range or no authentication method is available.
    pub fn new(cfg: ServerConfig) -> Result<Server, String> {
        if cfg.nclients == 0 || cfg.nclients > MAX_CLIENTS {
            return Err(format!(
                "-server {}: the number of clients must be 1 to {MAX_CLIENTS} (client_mask is 32 bits)",
                cfg.nclients
            ));
        }
        let usable = match &cfg.preference {
            Some(p) => cfg
                .auth
                .available()
                .into_iter()
                .filter(|m| p.contains(m))
                .count(),
            None => cfg.auth.available().len(),
        };
        if usable == 0 {
            return Err("No authentication methods available for negotiation (set IMPI_AUTH_KEY, or IMPI_AUTH_NONE where the network is trusted)".into());
        }
        let n = cfg.nclients as usize;
        Ok(Server {
            cfg,
            conns: HashMap::new(),
            ranks: vec![None; n],
            all_joined: false,
            done_sent: false,
            finished: false,
            aborted: false,
            actions: VecDeque::new(),
        })
    }

    /// The next action, if any.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// Whether the startup exchange is complete (DONE went out).
    pub fn startup_complete(&self) -> bool {
        self.done_sent
    }

    /// Whether a connection has authenticated (and is still in the job).
    pub fn authenticated(&self, id: ConnId) -> bool {
        self.conns
            .get(&id)
            .is_some_and(|c| c.phase == Phase::Commands)
    }

    /// A new connection from `peer` (an address, for messages).
    pub fn connected(&mut self, id: ConnId, peer: impl Into<String>) {
        self.conns.insert(
            id,
            Conn {
                peer: peer.into(),
                inbox: Inbox::default(),
                phase: Phase::Auth,
                rank: None,
                last_label: None,
                queue: VecDeque::new(),
                done: false,
                fini: false,
            },
        );
    }

    /// Bytes arrived on a connection.
    pub fn received(&mut self, id: ConnId, bytes: &[u8]) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        if c.phase == Phase::Gone || self.aborted {
            return;
        }
        c.inbox.push(bytes);
        if let Err(e) = self.process(id) {
            self.fail(id, e);
        }
    }

    /// The connection was closed by the peer (or broke).
    pub fn closed(&mut self, id: ConnId) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        let phase = std::mem::replace(&mut c.phase, Phase::Gone);
        if self.aborted || phase == Phase::Gone {
            return;
        }
        let who = describe(c);
        if phase != Phase::Commands {
            self.actions.push_back(Action::Warn(format!(
                "{who} disconnected before authenticating (ignored)"
            )));
            return;
        }
        if c.fini {
            return;
        }
        let partial = if c.inbox.is_empty() {
            ""
        } else {
            " in the middle of a command"
        };
        self.abort(format!("{who} disconnected{partial} before sending FINI"));
    }

    fn fail(&mut self, id: ConnId, msg: String) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        let who = describe(c);
        if c.phase == Phase::Commands {
            c.phase = Phase::Gone;
            self.abort(format!("{who}: {msg}"));
        } else {
            c.phase = Phase::Gone;
            self.actions.push_back(Action::Reject {
                conn: id,
                reason: format!("{who}: {msg}"),
            });
        }
    }

    fn abort(&mut self, msg: String) {
        if !self.aborted && !self.finished {
            self.aborted = true;
            self.actions.push_back(Action::Abort(msg));
        }
    }

    fn process(&mut self, id: ConnId) -> Result<(), String> {
        loop {
            if self.aborted {
                return Ok(());
            }
            let c = self.conns.get_mut(&id).unwrap();
            match c.phase {
                Phase::Gone => return Ok(()),
                Phase::Auth => {
                    let Some(h) = c.inbox.peek(CMD_HEADER_LEN) else {
                        return Ok(());
                    };
                    let h = CmdHeader::decode(h);
                    if h.cmd != CMD_AUTH {
                        return Err(format!(
                            "first command is {} (0x{:08x}), not AUTH",
                            command_name(h.cmd),
                            h.cmd as u32
                        ));
                    }
                    if h.len <= 0 || h.len % 4 != 0 || h.len as usize > MAX_AUTH_PAYLOAD {
                        return Err(format!(
                            "AUTH with len {} (a positive multiple of 4, at most {MAX_AUTH_PAYLOAD})",
                            h.len
                        ));
                    }
                    let Some(all) = c.inbox.take(CMD_HEADER_LEN + h.len as usize) else {
                        return Ok(());
                    };
                    let masks = auth::decode_masks(&all[CMD_HEADER_LEN..]).map_err(|e| e.0)?;
                    let chosen =
                        auth::choose(&self.cfg.auth, self.cfg.preference.as_deref(), &masks);
                    let peer = c.peer.clone();
                    match chosen {
                        None => {
                            return Err(format!(
                                "no common authentication method (client offers mask {}; server has {})",
                                masks.iter().map(|m| format!("0x{m:x}")).collect::<Vec<_>>().join(","),
                                self.cfg
                                    .auth
                                    .available()
                                    .iter()
                                    .map(|&m| auth::method_name(m))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ))
                        }
                        Some(AUTH_NONE) => {
                            c.phase = Phase::Commands;
                            self.actions.push_back(Action::Send(id, ServerAuth { which: 0, len: 0 }.encode().to_vec()));
                            self.actions.push_back(Action::Warn(format!(
                                "Warning: client {peer} has authenticated with IMPI_AUTH_NONE."
                            )));
                        }
                        Some(m) => {
                            debug_assert_eq!(m, AUTH_KEY);
                            c.phase = Phase::Key;
                            self.actions.push_back(Action::Send(id, ServerAuth { which: AUTH_KEY as i32, len: 0 }.encode().to_vec()));
                        }
                    }
                }
                Phase::Key => {
                    let Some(k) = c.inbox.take(AUTH_KEY_LEN) else {
                        return Ok(());
                    };
                    let key = u64::from_be_bytes(k.try_into().unwrap());
                    if Some(key) != self.cfg.auth.key {
                        return Err("wrong authentication key (IMPI_AUTH_KEY)".into());
                    }
                    c.phase = Phase::Commands;
                }
                Phase::Commands => {
                    let Some(h) = c.inbox.peek(CMD_HEADER_LEN) else {
                        return Ok(());
                    };
                    let h = CmdHeader::decode(h);
                    if h.len < 0 || h.len as usize > MAX_CLIENT_PAYLOAD {
                        return Err(format!(
                            "{} with len {} (0 to {MAX_CLIENT_PAYLOAD})",
                            command_name(h.cmd),
                            h.len
                        ));
                    }
                    let Some(all) = c.inbox.take(CMD_HEADER_LEN + h.len as usize) else {
                        return Ok(());
                    };
                    self.command(id, h.cmd, &all[CMD_HEADER_LEN..])?;
                }
            }
        }
    }

    fn command(&mut self, id: ConnId, cmd: i32, payload: &[u8]) -> Result<(), String> {
        let n = self.cfg.nclients;
        let c = self.conns.get_mut(&id).unwrap();
        let fixed = |want: usize| -> Result<(), String> {
            if payload.len() != want {
                return Err(format!(
                    "{} with len {} (must be {want})",
                    command_name(cmd),
                    payload.len()
                ));
            }
            Ok(())
        };
        match cmd {
            CMD_IMPI => {
                fixed(4)?;
                if let Some(r) = c.rank {
                    return Err(format!("second IMPI command (already client {r})"));
                }
                let r = i32::from_be_bytes(payload.try_into().unwrap());
                if r < 0 || r as u32 >= n {
                    return Err(format!(
                        "IMPI rank {r} out of range (the job has {n} clients: 0 to {})",
                        n - 1
                    ));
                }
                if let Some(other) = self.ranks[r as usize] {
                    let first = self
                        .conns
                        .get(&other)
                        .map(|o| o.peer.clone())
                        .unwrap_or_default();
                    return Err(format!("IMPI rank {r} is already taken by {first}"));
                }
                c.rank = Some(r as u32);
                self.ranks[r as usize] = Some(id);
                if self.ranks.iter().all(Option::is_some) {
                    self.all_joined = true;
                    let reply = encode_cmd(CMD_IMPI, &(n as i32).to_be_bytes());
                    for conn in self.ranks.clone().into_iter().flatten() {
                        self.actions.push_back(Action::Send(conn, reply.clone()));
                    }
                    self.collate();
                }
            }
            CMD_COLL => {
                if c.rank.is_none() {
                    return Err("COLL before IMPI".into());
                }
                if c.done {
                    return Err("COLL after DONE".into());
                }
                let (label, data) = decode_client_coll(payload).map_err(|e| e.0)?;
                if label == NO_LABEL {
                    return Err("COLL with IMPI_NO_LABEL (reserved, never sent)".into());
                }
                if let Some(last) = c.last_label {
                    if label <= last {
                        return Err(format!(
                            "{} after {}: labels must come in ascending order",
                            label_name(label),
                            label_name(last)
                        ));
                    }
                }
                c.last_label = Some(label);
                c.queue.push_back((label, data.to_vec()));
                self.collate();
            }
            CMD_DONE => {
                fixed(0)?;
                if c.rank.is_none() {
                    return Err("DONE before IMPI".into());
                }
                if c.done {
                    return Err("second DONE".into());
                }
                c.done = true;
                self.collate();
            }
            CMD_FINI => {
                fixed(0)?;
                if !self.done_sent {
                    return Err("FINI before the startup exchange completed".into());
                }
                let c = self.conns.get_mut(&id).unwrap();
                if c.fini {
                    return Err("second FINI".into());
                }
                c.fini = true;
                let all = self
                    .ranks
                    .iter()
                    .flatten()
                    .all(|r| self.conns.get(r).is_none_or(|c| c.fini));
                if all {
                    self.finished = true;
                    self.actions.push_back(Action::Finished);
                }
            }
            CMD_AUTH => return Err("second AUTH".into()),
            _ => {
                // Forward compatibility (spec 2.3.2): unknown commands are discarded.
                let who = describe(c);
                self.actions.push_back(Action::Warn(format!(
                    "{who}: discarded {} with {} bytes of payload",
                    command_name(cmd),
                    payload.len()
                )));
            }
        }
        Ok(())
    }

    /// Broadcasts every label that is complete: each client has submitted it, or moved
    /// past it (its next label is higher), or sent DONE. Then DONE once all are done.
    fn collate(&mut self) {
        if !self.all_joined {
            return;
        }
        let ids: Vec<ConnId> = self.ranks.iter().map(|r| r.unwrap()).collect();
        loop {
            let ready = ids.iter().all(|i| {
                let c = &self.conns[i];
                c.done || !c.queue.is_empty()
            });
            if !ready {
                return;
            }
            let next = ids
                .iter()
                .filter_map(|i| self.conns[i].queue.front().map(|q| q.0))
                .min();
            let Some(label) = next else {
                if !self.done_sent {
                    self.done_sent = true;
                    let done = encode_cmd(CMD_DONE, &[]);
                    for &i in &ids {
                        self.actions.push_back(Action::Send(i, done.clone()));
                    }
                }
                return;
            };
            let mut out = Collated {
                label,
                client_mask: 0,
                data: Vec::new(),
            };
            for (r, i) in ids.iter().enumerate() {
                let c = self.conns.get_mut(i).unwrap();
                if c.queue.front().is_some_and(|q| q.0 == label) {
                    let (_, d) = c.queue.pop_front().unwrap();
                    out.client_mask |= 1 << r;
                    out.data.extend_from_slice(&d);
                }
            }
            let bytes = out.encode();
            for &i in &ids {
                self.actions.push_back(Action::Send(i, bytes.clone()));
            }
        }
    }
}

fn describe(c: &Conn) -> String {
    match c.rank {
        Some(r) => format!("client {r} ({})", c.peer),
        None => format!("connection from {}", c.peer),
    }
}
