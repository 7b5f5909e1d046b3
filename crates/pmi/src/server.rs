//! The PMI server as a sans-IO state machine: it takes the bytes each connection sent and
//! gives back the bytes to send to it, plus [`Event`]s for the driver (`mpiexec`).
//!
//! It holds the job's key-value space, answers PMI-1 and PMI-2 requests (the wire of each
//! connection is detected from its first bytes; a PMI-1 `init` asking for version 2
//! switches the connection to the PMI-2 wire), and gates fences: a `barrier_in` or
//! `kvs-fence` is answered once every rank of the job has entered it, whichever wire each
//! rank speaks. Puts are visible to gets at once, so in particular after the fence.
//!
//! Malformed or unknown requests make the connection dead and produce
//! [`Event::ProtocolError`]; the driver treats that rank as failed. Known requests that the
//! server does not implement (job connect) get an error response instead. Name
//! publishing is answered from the job's [`NameTable`]. A spawn request ([`crate::spawn`])
//! becomes [`Event::Spawn`]; the driver starts the new job (or fails to) and answers with
//! [`Server::spawn_done`].

use crate::client::PmiVersion;
use crate::decoder::{StreamDecoder, Wire};
use crate::limits::{MAX_KEY_LEN, MAX_KVSNAME_LEN, MAX_VALUE_LEN};
use crate::mapping::format_process_mapping;
use crate::message::Message;
use crate::names::{NameService, NameTable};
use crate::spawn::{self, SpawnOutcome, SpawnRequest};
use crate::{v1, v2};
use std::collections::{HashMap, VecDeque};

/// Index of a connection inside a [`Server`].
pub type ConnId = usize;

/// Bytes of responses a client may leave unread before it is treated as broken.
const MAX_PENDING_OUTPUT: usize = 1 << 20;
/// Total bytes of keys and values the job's KVS and node attributes may hold.
const MAX_KVS_BYTES: usize = 64 << 20;
/// Pending `info-getnodeattr wait=TRUE` requests per connection.
const MAX_PENDING_NODEATTR: usize = 16;

/// What the server needs to know about the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobConfig {
    /// Name of the job's KVS (also the PMI-2 job id).
    pub kvsname: String,
    /// Number of ranks.
    pub size: u32,
    /// Reported as the universe size.
    pub universe_size: u32,
    /// Application number of each rank (MPMD), `size` entries.
    pub appnums: Vec<i32>,
    /// The `PMI_process_mapping` job attribute.
    pub process_mapping: String,
    /// Pairs in the key-value space from the start (a spawned job's preput pairs).
    pub preput: Vec<(String, String)>,
}

impl JobConfig {
    /// A single-application, single-node job of `size` ranks.
    pub fn new(kvsname: impl Into<String>, size: u32) -> Self {
        JobConfig {
            kvsname: kvsname.into(),
            size,
            universe_size: size,
            appnums: vec![0; size as usize],
            process_mapping: format_process_mapping(size),
            preput: Vec::new(),
        }
    }
}

/// Something the driver must know about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The rank initialized PMI (PMI-1 `init` or PMI-2 `fullinit`, whichever came first).
    Initialized {
        conn: ConnId,
        rank: u32,
        version: PmiVersion,
    },
    /// The rank finalized PMI.
    Finalized { conn: ConnId, rank: u32 },
    /// The rank asked to abort the job.
    Aborted {
        conn: ConnId,
        rank: Option<u32>,
        code: i32,
        message: String,
    },
    /// Every rank entered a fence and all were released.
    FenceCompleted { epoch: u64 },
    /// The rank asked for a new job to be started (`MPI_Comm_spawn`); the driver answers
    /// with [`Server::spawn_done`] on `conn`.
    Spawn {
        conn: ConnId,
        rank: u32,
        request: SpawnRequest,
    },
    /// The connection sent something malformed or unknown; it is now ignored.
    ProtocolError {
        conn: ConnId,
        rank: Option<u32>,
        reason: String,
    },
}

/// What the server knows about one rank.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RankState {
    pub connected: bool,
    pub initialized: bool,
    pub finalized: bool,
    pub in_fence: bool,
    pub aborted: bool,
}

#[derive(Debug)]
struct Conn {
    rank: Option<u32>,
    decoder: StreamDecoder,
    out: Vec<u8>,
    dead: bool,
    pending_nodeattr: Vec<(String, Option<String>)>,
    /// A spawn being received (PMI-1 blocks so far) or waiting for the driver.
    spawn: Option<PendingSpawn>,
}

/// A spawn request of one connection.
#[derive(Debug)]
struct PendingSpawn {
    request: SpawnRequest,
    /// PMI-1: blocks still to come; 0 once the driver has it.
    blocks_left: usize,
    wire: Wire,
    thrid: Option<String>,
}

/// The PMI server state machine for one job.
#[derive(Debug)]
pub struct Server {
    cfg: JobConfig,
    conns: Vec<Conn>,
    rank_conn: Vec<Option<ConnId>>,
    ranks: Vec<RankState>,
    kvs: HashMap<String, String>,
    node_attrs: HashMap<String, String>,
    stored_bytes: usize,
    fence: Vec<(ConnId, Wire, Option<String>)>,
    fence_epoch: u64,
    events: VecDeque<Event>,
    /// The name service of the job (`MPI_Publish_name`): its own table unless the driver
    /// set another ([`Server::set_name_service`]).
    names: Box<dyn NameService + Send>,
}

fn v1_get_result_not_found() -> Message {
    Message::new("get_result")
        .with("rc", -1)
        .with("msg", "key_not_found")
}

impl Server {
    /// A server for the job described by `cfg`.
    pub fn new(cfg: JobConfig) -> Result<Self, String> {
        if cfg.size == 0 {
            return Err("a PMI job needs at least one rank".into());
        }
        if cfg.appnums.len() != cfg.size as usize {
            return Err(format!(
                "{} application numbers given for {} ranks",
                cfg.appnums.len(),
                cfg.size
            ));
        }
        if cfg.kvsname.is_empty()
            || cfg.kvsname.len() > MAX_KVSNAME_LEN
            || !cfg
                .kvsname
                .bytes()
                .all(|b| b.is_ascii_graphic() && b != b';' && b != b'=' && b != b'\\')
        {
            return Err(format!("unusable KVS name {:?}", cfg.kvsname));
        }
        let n = cfg.size as usize;
        let preput = cfg.preput.clone();
        let mut s = Server {
            cfg,
            conns: Vec::new(),
            rank_conn: vec![None; n],
            ranks: vec![RankState::default(); n],
            kvs: HashMap::new(),
            node_attrs: HashMap::new(),
            stored_bytes: 0,
            fence: Vec::new(),
            fence_epoch: 0,
            events: VecDeque::new(),
            names: Box::new(NameTable::default()),
        };
        for (k, v) in preput {
            s.store(false, k.clone(), v)
                .map_err(|e| format!("preput key {k:?}: {e}"))?;
        }
        Ok(s)
    }

    /// The job configuration.
    pub fn config(&self) -> &JobConfig {
        &self.cfg
    }

    /// Answers name publishing from `names` instead of the job's own table (a standalone
    /// name server shared by several jobs).
    pub fn set_name_service(&mut self, names: Box<dyn NameService + Send>) {
        self.names = names;
    }

    /// Registers a new connection. `rank` is known for a connection handed to a child at
    /// launch (`PMI_FD`); `None` for one that will identify itself with `initack` or
    /// `fullinit`.
    pub fn add_connection(&mut self, rank: Option<u32>) -> Result<ConnId, String> {
        let id = self.conns.len();
        if let Some(r) = rank {
            let slot = self
                .rank_conn
                .get_mut(r as usize)
                .ok_or_else(|| format!("rank {r} is outside the job"))?;
            if slot.is_some() {
                return Err(format!("rank {r} already has a PMI connection"));
            }
            *slot = Some(id);
            self.ranks[r as usize].connected = true;
        }
        self.conns.push(Conn {
            rank,
            decoder: StreamDecoder::new(Wire::Detect),
            out: Vec::new(),
            dead: false,
            pending_nodeattr: Vec::new(),
            spawn: None,
        });
        Ok(id)
    }

    /// Feeds bytes received on `conn`. Input on a dead or unknown connection is ignored.
    pub fn receive(&mut self, conn: ConnId, bytes: &[u8]) {
        match self.conns.get_mut(conn) {
            Some(c) if !c.dead => c.decoder.push(bytes),
            _ => return,
        }
        loop {
            let next = match self.conns.get_mut(conn) {
                Some(c) if !c.dead => c.decoder.next_message(),
                _ => return,
            };
            match next {
                Ok(Some(d)) => self.handle(conn, d.wire, d.msg, d.multi_line),
                Ok(None) => return,
                Err(e) => {
                    self.protocol_error(conn, format!("malformed PMI message: {e}"));
                    return;
                }
            }
        }
    }

    /// The peer closed `conn` (end of file or error). Its rank stays as it was (for
    /// instance still counted as inside a fence).
    pub fn close(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.get_mut(conn) {
            c.dead = true;
            c.out.clear();
            c.pending_nodeattr.clear();
            if let Some(r) = c.rank {
                self.ranks[r as usize].connected = false;
            }
        }
    }

    /// Bytes waiting to be sent on `conn`.
    pub fn output(&self, conn: ConnId) -> &[u8] {
        self.conns.get(conn).map_or(&[], |c| &c.out)
    }

    /// Marks the first `n` bytes of [`Server::output`] as sent.
    pub fn consume_output(&mut self, conn: ConnId, n: usize) {
        if let Some(c) = self.conns.get_mut(conn) {
            let n = n.min(c.out.len());
            c.out.drain(..n);
        }
    }

    /// The next event for the driver.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// State of `rank`, `None` if outside the job.
    pub fn rank_state(&self, rank: u32) -> Option<RankState> {
        self.ranks.get(rank as usize).copied()
    }

    /// The rank `conn` speaks for, once known.
    pub fn conn_rank(&self, conn: ConnId) -> Option<u32> {
        self.conns.get(conn).and_then(|c| c.rank)
    }

    /// Ranks currently waiting inside a fence.
    pub fn ranks_in_fence(&self) -> Vec<u32> {
        (0..self.cfg.size)
            .filter(|&r| self.ranks[r as usize].in_fence)
            .collect()
    }

    /// Value stored under `key` in the job's KVS.
    pub fn kvs_value(&self, key: &str) -> Option<&str> {
        self.kvs.get(key).map(String::as_str)
    }

    fn protocol_error(&mut self, conn: ConnId, reason: String) {
        let rank = self.conn_rank(conn);
        if let Some(c) = self.conns.get_mut(conn) {
            if c.dead {
                return;
            }
            c.dead = true;
            c.pending_nodeattr.clear();
        }
        self.events
            .push_back(Event::ProtocolError { conn, rank, reason });
    }

    fn reply(&mut self, conn: ConnId, wire: Wire, mut msg: Message, thrid: Option<&str>) {
        if self.conns[conn].dead {
            return;
        }
        let encoded = match wire {
            Wire::V2 => {
                if let Some(t) = thrid {
                    msg.push("thrid", t);
                }
                v2::encode(&msg)
            }
            _ => v1::encode(&msg),
        };
        let c = &mut self.conns[conn];
        match encoded {
            Ok(bytes) => {
                c.out.extend_from_slice(&bytes);
                if c.out.len() > MAX_PENDING_OUTPUT {
                    self.protocol_error(conn, "the client does not read its PMI responses".into());
                }
            }
            Err(e) => {
                let reason = format!("cannot encode a response: {e}");
                self.protocol_error(conn, reason);
            }
        }
    }

    /// The rank of `conn`, or a protocol error if it is not known yet.
    fn need_rank(&mut self, conn: ConnId, cmd: &str) -> Option<u32> {
        let r = self.conns[conn].rank;
        if r.is_none() {
            self.protocol_error(
                conn,
                format!("cmd={cmd} before the connection identified its rank"),
            );
        }
        r
    }

    fn claim_rank(&mut self, conn: ConnId, rank: i64, cmd: &str) -> Option<u32> {
        let ok =
            rank >= 0 && rank < i64::from(self.cfg.size) && self.rank_conn[rank as usize].is_none();
        if !ok {
            self.protocol_error(
                conn,
                format!("cmd={cmd}: rank {rank} is outside the job or already connected"),
            );
            return None;
        }
        let r = rank as u32;
        self.rank_conn[r as usize] = Some(conn);
        self.ranks[r as usize].connected = true;
        self.conns[conn].rank = Some(r);
        Some(r)
    }

    fn mark_initialized(&mut self, conn: ConnId, rank: u32, version: PmiVersion) {
        let st = &mut self.ranks[rank as usize];
        if !st.initialized {
            st.initialized = true;
            self.events.push_back(Event::Initialized {
                conn,
                rank,
                version,
            });
        }
    }

    fn handle(&mut self, conn: ConnId, wire: Wire, msg: Message, multi_line: bool) {
        if multi_line {
            if msg.cmd() != "spawn" {
                let name = format!("{}_result", msg.cmd());
                self.reply(
                    conn,
                    Wire::V1,
                    Message::new(name)
                        .with("rc", -1)
                        .with("msg", "unknown_multi_line_command"),
                    None,
                );
                return;
            }
            return self.spawn_block(conn, &msg);
        }
        match wire {
            Wire::V2 => self.handle_v2(conn, msg),
            _ => self.handle_v1(conn, msg),
        }
    }

    /// One PMI-1 `mcmd=spawn` block; the last one hands the request to the driver.
    fn spawn_block(&mut self, conn: ConnId, msg: &Message) {
        let Some(rank) = self.need_rank(conn, "spawn") else {
            return;
        };
        let (app, (sofar, total), preput) = match spawn::parse_v1_block(msg) {
            Ok(b) => b,
            Err(e) => return self.bad_request(conn, msg, e),
        };
        let c = &mut self.conns[conn];
        match &mut c.spawn {
            None if sofar == 1 => {
                c.spawn = Some(PendingSpawn {
                    request: SpawnRequest {
                        apps: vec![app],
                        preput,
                    },
                    blocks_left: total - 1,
                    wire: Wire::V1,
                    thrid: None,
                })
            }
            Some(p)
                if p.blocks_left > 0
                    && sofar == p.request.apps.len() + 1
                    && sofar + p.blocks_left - 1 == total =>
            {
                p.request.apps.push(app);
                p.blocks_left -= 1;
            }
            _ => {
                return self
                    .protocol_error(conn, format!("spawn block {sofar} of {total} out of order"))
            }
        }
        let p = self.conns[conn].spawn.as_ref().expect("just set");
        if p.blocks_left == 0 {
            let request = p.request.clone();
            if request.total_procs() > spawn::MAX_SPAWN_PROCS {
                self.conns[conn].spawn = None;
                let m = spawn::v1_result(&Err("too_many_processes".into()), &request);
                return self.reply(conn, Wire::V1, m, None);
            }
            self.events.push_back(Event::Spawn {
                conn,
                rank,
                request,
            });
        }
    }

    /// Answers the spawn request of `conn` (see [`Event::Spawn`]): the new job and the
    /// processes of each command that started, or why it could not be started.
    pub fn spawn_done(&mut self, conn: ConnId, outcome: SpawnOutcome) {
        let Some(p) = self.conns.get_mut(conn).and_then(|c| c.spawn.take()) else {
            return;
        };
        let m = match p.wire {
            Wire::V2 => spawn::v2_result(&outcome, &p.request),
            _ => spawn::v1_result(&outcome, &p.request),
        };
        self.reply(conn, p.wire, m, p.thrid.as_deref());
    }

    fn bad_request(&mut self, conn: ConnId, msg: &Message, e: impl std::fmt::Display) {
        self.protocol_error(conn, format!("invalid cmd={}: {e}", msg.cmd()));
    }

    fn handle_v1(&mut self, conn: ConnId, msg: Message) {
        let cmd = msg.cmd().to_owned();
        match cmd.as_str() {
            "initack" => {
                if self.conns[conn].rank.is_some() {
                    self.protocol_error(conn, "initack on a connection whose rank is known".into());
                    return;
                }
                let id = match msg.require_num::<i64>("pmiid") {
                    Ok(id) => id,
                    Err(e) => return self.bad_request(conn, &msg, e),
                };
                let Some(rank) = self.claim_rank(conn, id, "initack") else {
                    return;
                };
                let size = self.cfg.size;
                self.reply(conn, Wire::V1, Message::new("initack").with("rc", 0), None);
                self.reply(conn, Wire::V1, Message::new("set").with("size", size), None);
                self.reply(conn, Wire::V1, Message::new("set").with("rank", rank), None);
                self.reply(conn, Wire::V1, Message::new("set").with("debug", 0), None);
            }
            "init" => {
                let Some(rank) = self.need_rank(conn, &cmd) else {
                    return;
                };
                let ver = msg.get_num::<i32>("pmi_version");
                let sub = msg.get_num::<i32>("pmi_subversion");
                let (ver, sub) = match (ver, sub) {
                    (Ok(Some(v)), Ok(s)) => (v, s.unwrap_or(0)),
                    _ => return self.bad_request(conn, &msg, "pmi_version missing or invalid"),
                };
                if ver == 1 && sub <= 1 {
                    self.reply(
                        conn,
                        Wire::V1,
                        Message::new("response_to_init")
                            .with("pmi_version", 1)
                            .with("pmi_subversion", 1)
                            .with("rc", 0),
                        None,
                    );
                    self.mark_initialized(conn, rank, PmiVersion::V1);
                } else if ver == 2 && sub == 0 {
                    self.reply(
                        conn,
                        Wire::V1,
                        Message::new("response_to_init")
                            .with("pmi_version", 2)
                            .with("pmi_subversion", 0)
                            .with("rc", 0),
                        None,
                    );
                    self.conns[conn].decoder.set_wire(Wire::V2);
                    self.mark_initialized(conn, rank, PmiVersion::V2);
                } else {
                    self.reply(
                        conn,
                        Wire::V1,
                        Message::new("response_to_init")
                            .with("pmi_version", 1)
                            .with("pmi_subversion", 1)
                            .with("rc", -1)
                            .with("msg", format!("unsupported_PMI_version_{ver}.{sub}")),
                        None,
                    );
                }
            }
            "get_maxes" => self.reply(
                conn,
                Wire::V1,
                Message::new("maxes")
                    .with("kvsname_max", MAX_KVSNAME_LEN)
                    .with("keylen_max", MAX_KEY_LEN)
                    .with("vallen_max", MAX_VALUE_LEN),
                None,
            ),
            "get_appnum" => {
                let Some(rank) = self.need_rank(conn, &cmd) else {
                    return;
                };
                let appnum = self.cfg.appnums[rank as usize];
                self.reply(
                    conn,
                    Wire::V1,
                    Message::new("appnum").with("appnum", appnum),
                    None,
                );
            }
            "get_my_kvsname" => {
                let name = self.cfg.kvsname.clone();
                self.reply(
                    conn,
                    Wire::V1,
                    Message::new("my_kvsname").with("kvsname", name),
                    None,
                );
            }
            "get_universe_size" => {
                let n = self.cfg.universe_size;
                self.reply(
                    conn,
                    Wire::V1,
                    Message::new("universe_size").with("size", n),
                    None,
                );
            }
            "put" => {
                if self.need_rank(conn, &cmd).is_none() {
                    return;
                }
                let (key, value) = match (msg.require("key"), msg.require("value")) {
                    (Ok(k), Ok(v)) => (k.to_owned(), v.to_owned()),
                    (Err(e), _) | (_, Err(e)) => return self.bad_request(conn, &msg, e),
                };
                let resp = match self.check_kvsname(msg.get("kvsname")) {
                    Err(why) => Err(why),
                    Ok(()) => self.store(false, key, value),
                };
                let m = match resp {
                    Ok(()) => Message::new("put_result")
                        .with("rc", 0)
                        .with("msg", "success"),
                    Err(why) => Message::new("put_result").with("rc", -1).with("msg", why),
                };
                self.reply(conn, Wire::V1, m, None);
            }
            "get" => {
                let key = match msg.require("key") {
                    Ok(k) => k.to_owned(),
                    Err(e) => return self.bad_request(conn, &msg, e),
                };
                let m = match self.check_kvsname(msg.get("kvsname")) {
                    Err(why) => Message::new("get_result").with("rc", -1).with("msg", why),
                    Ok(()) => match self.lookup_v1(&key) {
                        Some(v) => Message::new("get_result")
                            .with("rc", 0)
                            .with("msg", "success")
                            .with("value", v),
                        None => v1_get_result_not_found(),
                    },
                };
                self.reply(conn, Wire::V1, m, None);
            }
            "barrier_in" => self.enter_fence(conn, Wire::V1, None),
            "finalize" => {
                let Some(rank) = self.need_rank(conn, &cmd) else {
                    return;
                };
                self.reply(conn, Wire::V1, Message::new("finalize_ack"), None);
                self.mark_finalized(conn, rank);
            }
            "abort" => self.abort(conn, &msg, &["message", "error_msg", "msg"]),
            "publish_name" | "unpublish_name" | "lookup_name" => {
                if self.need_rank(conn, &cmd).is_none() {
                    return;
                }
                let service = match msg.require("service") {
                    Ok(s) => s.to_owned(),
                    Err(e) => return self.bad_request(conn, &msg, e),
                };
                let name = format!("{}_result", cmd.trim_end_matches("_name"));
                let result = match cmd.as_str() {
                    "publish_name" => match msg.require("port") {
                        Ok(port) => self.names.publish(&service, port).map(|()| None),
                        Err(e) => return self.bad_request(conn, &msg, e),
                    },
                    "lookup_name" => self.names.lookup(&service).map(Some),
                    _ => self.names.unpublish(&service).map(|()| None),
                };
                // MPICH's client reads `info`; `rc` is what oxmpi's client checks.
                let m = match result {
                    Ok(port) => {
                        let m = Message::new(name).with("rc", 0).with("info", "ok");
                        match port {
                            Some(p) => m.with("port", p),
                            None => m,
                        }
                    }
                    Err(e) => Message::new(name)
                        .with("rc", 1)
                        .with("info", e.token())
                        .with("msg", e.token()),
                };
                self.reply(conn, Wire::V1, m, None);
            }
            _ => self.protocol_error(conn, format!("unknown PMI-1 command {cmd:?}")),
        }
    }

    fn handle_v2(&mut self, conn: ConnId, msg: Message) {
        let cmd = msg.cmd().to_owned();
        let thrid = msg.get("thrid").map(str::to_owned);
        let thrid = thrid.as_deref();
        match cmd.as_str() {
            "fullinit" => {
                let claimed = match msg.get_num::<i64>("pmirank") {
                    Ok(r) => r,
                    Err(e) => return self.bad_request(conn, &msg, e),
                };
                let rank = match (self.conns[conn].rank, claimed) {
                    (Some(r), Some(c)) if c >= 0 && i64::from(r) != c => {
                        return self.bad_request(
                            conn,
                            &msg,
                            format!("pmirank={c} but the connection belongs to rank {r}"),
                        )
                    }
                    (Some(r), _) => r,
                    (None, Some(c)) => match self.claim_rank(conn, c, "fullinit") {
                        Some(r) => r,
                        None => return,
                    },
                    (None, None) => {
                        return self.bad_request(
                            conn,
                            &msg,
                            "pmirank missing on a connection of unknown rank",
                        )
                    }
                };
                let m = Message::new("fullinit-response")
                    .with("pmi-version", 2)
                    .with("pmi-subversion", 0)
                    .with("rank", rank)
                    .with("size", self.cfg.size)
                    .with("appnum", self.cfg.appnums[rank as usize])
                    .with("debugged", "FALSE")
                    .with("pmiverbose", "FALSE")
                    .with("rc", 0);
                self.reply(conn, Wire::V2, m, thrid);
                self.mark_initialized(conn, rank, PmiVersion::V2);
            }
            "job-getid" => {
                let m = Message::new("job-getid-response")
                    .with("jobid", &self.cfg.kvsname)
                    .with("rc", 0);
                self.reply(conn, Wire::V2, m, thrid);
            }
            "kvs-put" => {
                if self.need_rank(conn, &cmd).is_none() {
                    return;
                }
                let (key, value) = match (msg.require("key"), msg.require("value")) {
                    (Ok(k), Ok(v)) => (k.to_owned(), v.to_owned()),
                    (Err(e), _) | (_, Err(e)) => return self.bad_request(conn, &msg, e),
                };
                let m = match self.store(false, key, value) {
                    Ok(()) => Message::new("kvs-put-response").with("rc", 0),
                    Err(why) => Message::new("kvs-put-response")
                        .with("rc", -1)
                        .with("errmsg", why),
                };
                self.reply(conn, Wire::V2, m, thrid);
            }
            "kvs-get" => {
                let key = match msg.require("key") {
                    Ok(k) => k.to_owned(),
                    Err(e) => return self.bad_request(conn, &msg, e),
                };
                let m = match self.check_kvsname(msg.get("jobid")) {
                    Err(why) => Message::new("kvs-get-response")
                        .with("found", "FALSE")
                        .with("rc", -1)
                        .with("errmsg", why),
                    Ok(()) => found_response("kvs-get-response", self.kvs.get(&key).cloned()),
                };
                self.reply(conn, Wire::V2, m, thrid);
            }
            "kvs-fence" => self.enter_fence(conn, Wire::V2, thrid.map(str::to_owned)),
            "info-getjobattr" => {
                let key = match msg.require("key") {
                    Ok(k) => k.to_owned(),
                    Err(e) => return self.bad_request(conn, &msg, e),
                };
                let v = self.job_attr(&key).or_else(|| self.kvs.get(&key).cloned());
                self.reply(
                    conn,
                    Wire::V2,
                    found_response("info-getjobattr-response", v),
                    thrid,
                );
            }
            "info-putnodeattr" => {
                let (key, value) = match (msg.require("key"), msg.require("value")) {
                    (Ok(k), Ok(v)) => (k.to_owned(), v.to_owned()),
                    (Err(e), _) | (_, Err(e)) => return self.bad_request(conn, &msg, e),
                };
                let m = match self.store(true, key.clone(), value.clone()) {
                    Ok(()) => Message::new("info-putnodeattr-response").with("rc", 0),
                    Err(why) => Message::new("info-putnodeattr-response")
                        .with("rc", -1)
                        .with("errmsg", why),
                };
                self.reply(conn, Wire::V2, m, thrid);
                self.wake_nodeattr_waiters(&key, &value);
            }
            "info-getnodeattr" => {
                let key = match msg.require("key") {
                    Ok(k) => k.to_owned(),
                    Err(e) => return self.bad_request(conn, &msg, e),
                };
                let v = self.node_attrs.get(&key).cloned();
                if v.is_none() && msg.get_bool("wait") == Some(true) {
                    let c = &mut self.conns[conn];
                    if c.pending_nodeattr.len() >= MAX_PENDING_NODEATTR {
                        return self.protocol_error(
                            conn,
                            "too many waiting info-getnodeattr requests".into(),
                        );
                    }
                    c.pending_nodeattr.push((key, thrid.map(str::to_owned)));
                } else {
                    self.reply(
                        conn,
                        Wire::V2,
                        found_response("info-getnodeattr-response", v),
                        thrid,
                    );
                }
            }
            "finalize" => {
                let Some(rank) = self.need_rank(conn, &cmd) else {
                    return;
                };
                self.reply(
                    conn,
                    Wire::V2,
                    Message::new("finalize-response").with("rc", 0),
                    thrid,
                );
                self.mark_finalized(conn, rank);
            }
            "abort" => self.abort(conn, &msg, &["message", "msg", "error_msg"]),
            "name-publish" | "name-unpublish" | "name-lookup" => {
                if self.need_rank(conn, &cmd).is_none() {
                    return;
                }
                let service = match msg.require("name") {
                    Ok(s) => s.to_owned(),
                    Err(e) => return self.bad_request(conn, &msg, e),
                };
                let result = match cmd.as_str() {
                    "name-publish" => match msg.require("port") {
                        Ok(port) => self.names.publish(&service, port).map(|()| None),
                        Err(e) => return self.bad_request(conn, &msg, e),
                    },
                    "name-lookup" => self.names.lookup(&service).map(Some),
                    _ => self.names.unpublish(&service).map(|()| None),
                };
                let name = format!("{cmd}-response");
                let m = match result {
                    Ok(Some(port)) => Message::new(name).with("rc", 0).with("value", port),
                    Ok(None) => Message::new(name).with("rc", 0),
                    Err(e) => Message::new(name).with("rc", 1).with("errmsg", e.token()),
                };
                self.reply(conn, Wire::V2, m, thrid);
            }
            "spawn" => {
                let Some(rank) = self.need_rank(conn, &cmd) else {
                    return;
                };
                if self.conns[conn].spawn.is_some() {
                    return self.protocol_error(conn, "spawn while a spawn is pending".into());
                }
                let request = match spawn::parse_v2(&msg) {
                    Ok(r) => r,
                    Err(e) => return self.bad_request(conn, &msg, e),
                };
                self.conns[conn].spawn = Some(PendingSpawn {
                    request: request.clone(),
                    blocks_left: 0,
                    wire: Wire::V2,
                    thrid: thrid.map(str::to_owned),
                });
                self.events.push_back(Event::Spawn {
                    conn,
                    rank,
                    request,
                });
            }
            "job-connect" | "job-disconnect" => {
                let m = Message::new(format!("{cmd}-response"))
                    .with("rc", -1)
                    .with("errmsg", format!("{cmd} is not supported by oxmpi mpiexec"));
                self.reply(conn, Wire::V2, m, thrid);
            }
            _ => self.protocol_error(conn, format!("unknown PMI-2 command {cmd:?}")),
        }
    }

    fn check_kvsname(&self, given: Option<&str>) -> Result<(), String> {
        match given {
            Some(k) if !k.is_empty() && k != self.cfg.kvsname => Err("unknown_kvsname".into()),
            _ => Ok(()),
        }
    }

    fn job_attr(&self, key: &str) -> Option<String> {
        match key {
            "PMI_process_mapping" => Some(self.cfg.process_mapping.clone()),
            "universeSize" => Some(self.cfg.universe_size.to_string()),
            _ => None,
        }
    }

    fn lookup_v1(&self, key: &str) -> Option<String> {
        self.kvs.get(key).cloned().or_else(|| match key {
            "PMI_process_mapping" => self.job_attr(key),
            _ => None,
        })
    }

    fn store(&mut self, node_attr: bool, key: String, value: String) -> Result<(), String> {
        if key.is_empty() || key.len() > MAX_KEY_LEN {
            return Err(format!("key_length_must_be_1_to_{MAX_KEY_LEN}"));
        }
        if value.len() > MAX_VALUE_LEN {
            return Err(format!("value_longer_than_{MAX_VALUE_LEN}"));
        }
        if key
            .bytes()
            .chain(value.bytes())
            .any(|b| b < 0x20 || b == 0x7f)
        {
            return Err("control_characters_in_key_or_value".into());
        }
        let map = if node_attr {
            &mut self.node_attrs
        } else {
            &mut self.kvs
        };
        let old = map.get(&key).map_or(0, |v| key.len() + v.len());
        let new_total = self.stored_bytes - old + key.len() + value.len();
        if new_total > MAX_KVS_BYTES {
            return Err("kvs_full".into());
        }
        self.stored_bytes = new_total;
        map.insert(key, value);
        Ok(())
    }

    fn wake_nodeattr_waiters(&mut self, key: &str, value: &str) {
        for conn in 0..self.conns.len() {
            if self.conns[conn].dead {
                continue;
            }
            let pending = std::mem::take(&mut self.conns[conn].pending_nodeattr);
            let (hit, keep): (Vec<_>, Vec<_>) = pending.into_iter().partition(|(k, _)| k == key);
            self.conns[conn].pending_nodeattr = keep;
            for (_, thrid) in hit {
                let m = found_response("info-getnodeattr-response", Some(value.to_owned()));
                self.reply(conn, Wire::V2, m, thrid.as_deref());
            }
        }
    }

    fn mark_finalized(&mut self, conn: ConnId, rank: u32) {
        let st = &mut self.ranks[rank as usize];
        if !st.finalized {
            st.finalized = true;
            self.events.push_back(Event::Finalized { conn, rank });
        }
    }

    fn abort(&mut self, conn: ConnId, msg: &Message, message_keys: &[&str]) {
        let code = match msg.get_num::<i64>("exitcode") {
            Ok(Some(c)) => i32::try_from(c).unwrap_or(1),
            _ => 1,
        };
        let message = message_keys
            .iter()
            .find_map(|k| msg.get(k))
            .unwrap_or("")
            .chars()
            .take(crate::limits::MAX_ABORT_MESSAGE_LEN)
            .collect::<String>();
        let rank = self.conn_rank(conn);
        if let Some(r) = rank {
            self.ranks[r as usize].aborted = true;
        }
        let c = &mut self.conns[conn];
        c.dead = true;
        c.pending_nodeattr.clear();
        self.events.push_back(Event::Aborted {
            conn,
            rank,
            code,
            message,
        });
    }

    fn enter_fence(&mut self, conn: ConnId, wire: Wire, thrid: Option<String>) {
        let cmd = if wire == Wire::V2 {
            "kvs-fence"
        } else {
            "barrier_in"
        };
        let Some(rank) = self.need_rank(conn, cmd) else {
            return;
        };
        if self.ranks[rank as usize].in_fence {
            self.protocol_error(conn, format!("rank {rank} entered the fence twice"));
            return;
        }
        self.ranks[rank as usize].in_fence = true;
        self.fence.push((conn, wire, thrid));
        if self.fence.len() == self.cfg.size as usize {
            let waiting = std::mem::take(&mut self.fence);
            for (c, w, t) in waiting {
                if let Some(r) = self.conns[c].rank {
                    self.ranks[r as usize].in_fence = false;
                }
                if self.conns[c].dead {
                    continue;
                }
                match w {
                    Wire::V2 => self.reply(
                        c,
                        w,
                        Message::new("kvs-fence-response").with("rc", 0),
                        t.as_deref(),
                    ),
                    _ => self.reply(c, w, Message::new("barrier_out"), None),
                }
            }
            self.fence_epoch += 1;
            self.events.push_back(Event::FenceCompleted {
                epoch: self.fence_epoch,
            });
        }
    }
}

fn found_response(name: &str, v: Option<String>) -> Message {
    match v {
        Some(v) => Message::new(name)
            .with("found", "TRUE")
            .with("value", v)
            .with("rc", 0),
        None => Message::new(name).with("found", "FALSE").with("rc", 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoder::Decoded;

    /// A simulated client: encodes requests, decodes whatever the server sent it.
    struct Sim {
        conn: ConnId,
        dec: StreamDecoder,
    }

    impl Sim {
        fn new(server: &mut Server, rank: Option<u32>) -> Sim {
            Sim {
                conn: server.add_connection(rank).unwrap(),
                dec: StreamDecoder::new(Wire::V1),
            }
        }
        fn send1(&self, s: &mut Server, line: &str) {
            s.receive(self.conn, format!("{line}\n").as_bytes());
        }
        fn send2(&self, s: &mut Server, m: Message) {
            s.receive(self.conn, &v2::encode(&m).unwrap());
        }
        fn recv_all(&mut self, s: &mut Server, wire: Wire) -> Vec<Message> {
            let out = s.output(self.conn).to_vec();
            s.consume_output(self.conn, out.len());
            self.dec.set_wire(wire);
            self.dec.push(&out);
            let mut v = Vec::new();
            while let Some(Decoded { msg, .. }) = self.dec.next_message().unwrap() {
                v.push(msg);
            }
            v
        }
        fn one(&mut self, s: &mut Server, wire: Wire) -> Message {
            let mut v = self.recv_all(s, wire);
            assert_eq!(v.len(), 1, "expected one reply, got {v:?}");
            v.pop().unwrap()
        }
    }

    fn events(s: &mut Server) -> Vec<Event> {
        std::iter::from_fn(|| s.poll_event()).collect()
    }

    #[test]
    fn pmi1_job_of_three() {
        let mut s = Server::new(JobConfig::new("kvs-test", 3)).unwrap();
        let mut sims: Vec<Sim> = (0..3).map(|r| Sim::new(&mut s, Some(r))).collect();
        for (r, c) in sims.iter_mut().enumerate() {
            c.send1(&mut s, "cmd=init pmi_version=1 pmi_subversion=1");
            let m = c.one(&mut s, Wire::V1);
            assert_eq!(m.cmd(), "response_to_init");
            assert_eq!(m.get("rc"), Some("0"));
            c.send1(&mut s, "cmd=get_maxes");
            assert_eq!(c.one(&mut s, Wire::V1).get("vallen_max"), Some("1024"));
            c.send1(&mut s, "cmd=get_my_kvsname");
            assert_eq!(c.one(&mut s, Wire::V1).get("kvsname"), Some("kvs-test"));
            c.send1(&mut s, "cmd=get_universe_size");
            assert_eq!(c.one(&mut s, Wire::V1).get("size"), Some("3"));
            c.send1(&mut s, "cmd=get_appnum");
            assert_eq!(c.one(&mut s, Wire::V1).get("appnum"), Some("0"));
            c.send1(
                &mut s,
                &format!("cmd=put kvsname=kvs-test key=card{r} value=v{r}"),
            );
            assert_eq!(c.one(&mut s, Wire::V1).get("rc"), Some("0"));
        }
        let ev = events(&mut s);
        assert_eq!(ev.len(), 3);
        assert!(matches!(
            ev[2],
            Event::Initialized {
                rank: 2,
                version: PmiVersion::V1,
                ..
            }
        ));
        // Fence: nobody is released until the last rank enters.
        sims[0].send1(&mut s, "cmd=barrier_in");
        sims[1].send1(&mut s, "cmd=barrier_in");
        assert!(sims[0].recv_all(&mut s, Wire::V1).is_empty());
        assert_eq!(s.ranks_in_fence(), vec![0, 1]);
        sims[2].send1(&mut s, "cmd=barrier_in");
        for c in sims.iter_mut() {
            assert_eq!(c.one(&mut s, Wire::V1).cmd(), "barrier_out");
        }
        assert_eq!(events(&mut s), vec![Event::FenceCompleted { epoch: 1 }]);
        for c in sims.iter_mut() {
            for r in 0..3 {
                c.send1(&mut s, &format!("cmd=get kvsname=kvs-test key=card{r}"));
                let m = c.one(&mut s, Wire::V1);
                assert_eq!(m.get("rc"), Some("0"));
                assert_eq!(m.get("value"), Some(format!("v{r}").as_str()));
            }
            c.send1(&mut s, "cmd=get kvsname=kvs-test key=nothing");
            assert_eq!(c.one(&mut s, Wire::V1).get("rc"), Some("-1"));
            c.send1(&mut s, "cmd=get kvsname=kvs-test key=PMI_process_mapping");
            assert_eq!(
                c.one(&mut s, Wire::V1).get("value"),
                Some("(vector,(0,1,3))")
            );
            c.send1(&mut s, "cmd=finalize");
            assert_eq!(c.one(&mut s, Wire::V1).cmd(), "finalize_ack");
        }
        assert_eq!(events(&mut s).len(), 3);
        assert!(s.rank_state(1).unwrap().finalized);
    }

    #[test]
    fn mixed_pmi1_and_pmi2_in_one_fence() {
        let mut cfg = JobConfig::new("mixed", 2);
        cfg.appnums = vec![0, 1];
        let mut s = Server::new(cfg).unwrap();
        let mut a = Sim::new(&mut s, Some(0));
        let mut b = Sim::new(&mut s, Some(1));
        a.send1(&mut s, "cmd=init pmi_version=1 pmi_subversion=1");
        a.one(&mut s, Wire::V1);
        // b: PMI-1 init asking for version 2, then PMI-2 frames.
        b.send1(&mut s, "cmd=init pmi_version=2 pmi_subversion=0");
        assert_eq!(b.one(&mut s, Wire::V1).get("pmi_version"), Some("2"));
        b.send2(
            &mut s,
            Message::new("fullinit")
                .with("pmirank", 1)
                .with("threaded", "FALSE"),
        );
        let m = b.one(&mut s, Wire::V2);
        assert_eq!(m.cmd(), "fullinit-response");
        assert_eq!(m.get("rank"), Some("1"));
        assert_eq!(m.get("size"), Some("2"));
        assert_eq!(m.get("appnum"), Some("1"));
        b.send2(
            &mut s,
            Message::new("kvs-put")
                .with("key", "kb")
                .with("value", "x;y"),
        );
        assert_eq!(b.one(&mut s, Wire::V2).get("rc"), Some("0"));
        a.send1(&mut s, "cmd=put kvsname=mixed key=ka value=hello\\ world");
        a.one(&mut s, Wire::V1);
        b.send2(&mut s, Message::new("kvs-fence").with("thrid", "0x1234"));
        assert!(b.recv_all(&mut s, Wire::V2).is_empty());
        a.send1(&mut s, "cmd=barrier_in");
        assert_eq!(a.one(&mut s, Wire::V1).cmd(), "barrier_out");
        let f = b.one(&mut s, Wire::V2);
        assert_eq!(f.cmd(), "kvs-fence-response");
        assert_eq!(f.get("thrid"), Some("0x1234"));
        a.send1(&mut s, "cmd=get kvsname=mixed key=kb");
        assert_eq!(a.one(&mut s, Wire::V1).get("value"), Some("x;y"));
        b.send2(
            &mut s,
            Message::new("kvs-get")
                .with("jobid", "mixed")
                .with("key", "ka"),
        );
        let g = b.one(&mut s, Wire::V2);
        assert_eq!(g.get("found"), Some("TRUE"));
        assert_eq!(g.get("value"), Some("hello world"));
        b.send2(&mut s, Message::new("kvs-get").with("key", "none"));
        assert_eq!(b.one(&mut s, Wire::V2).get("found"), Some("FALSE"));
        b.send2(
            &mut s,
            Message::new("info-getjobattr").with("key", "PMI_process_mapping"),
        );
        assert_eq!(
            b.one(&mut s, Wire::V2).get("value"),
            Some("(vector,(0,1,2))")
        );
        b.send2(&mut s, Message::new("job-getid"));
        assert_eq!(b.one(&mut s, Wire::V2).get("jobid"), Some("mixed"));
        b.send2(&mut s, Message::new("finalize"));
        assert_eq!(b.one(&mut s, Wire::V2).cmd(), "finalize-response");
        let ev = events(&mut s);
        assert!(ev.contains(&Event::Finalized {
            conn: b.conn,
            rank: 1
        }));
        assert!(ev.contains(&Event::Initialized {
            conn: b.conn,
            rank: 1,
            version: PmiVersion::V2
        }));
    }

    #[test]
    fn pure_pmi2_stream_is_detected() {
        let mut s = Server::new(JobConfig::new("j", 1)).unwrap();
        let mut c = Sim::new(&mut s, Some(0));
        c.send2(&mut s, Message::new("fullinit").with("pmirank", 0));
        assert_eq!(c.one(&mut s, Wire::V2).get("rc"), Some("0"));
        c.send2(&mut s, Message::new("kvs-fence"));
        assert_eq!(c.one(&mut s, Wire::V2).cmd(), "kvs-fence-response");
    }

    #[test]
    fn initack_assigns_the_rank() {
        let mut s = Server::new(JobConfig::new("j", 2)).unwrap();
        let mut c = Sim::new(&mut s, None);
        c.send1(&mut s, "cmd=initack pmiid=1");
        let v = c.recv_all(&mut s, Wire::V1);
        let cmds: Vec<_> = v.iter().map(|m| m.cmd()).collect();
        assert_eq!(cmds, ["initack", "set", "set", "set"]);
        assert_eq!(v[1].get("size"), Some("2"));
        assert_eq!(v[2].get("rank"), Some("1"));
        assert_eq!(s.conn_rank(c.conn), Some(1));
        // A second connection cannot take the same rank.
        let d = Sim::new(&mut s, None);
        d.send1(&mut s, "cmd=initack pmiid=1");
        assert!(matches!(events(&mut s)[..], [Event::ProtocolError { .. }]));
    }

    #[test]
    fn abort_is_reported() {
        let mut s = Server::new(JobConfig::new("j", 2)).unwrap();
        let a = Sim::new(&mut s, Some(0));
        let b = Sim::new(&mut s, Some(1));
        a.send1(&mut s, "cmd=abort exitcode=7 message=it\\ broke");
        b.send2(
            &mut s,
            Message::new("abort")
                .with("isworld", "TRUE")
                .with("msg", "m2"),
        );
        let ev = events(&mut s);
        assert_eq!(
            ev,
            vec![
                Event::Aborted {
                    conn: a.conn,
                    rank: Some(0),
                    code: 7,
                    message: "it broke".into()
                },
                Event::Aborted {
                    conn: b.conn,
                    rank: Some(1),
                    code: 1,
                    message: "m2".into()
                },
            ]
        );
        assert!(s.rank_state(0).unwrap().aborted);
        // Input after an abort is ignored.
        a.send1(&mut s, "cmd=get_maxes");
        assert!(s.output(a.conn).is_empty());
    }

    #[test]
    fn malformed_and_unknown_requests_are_protocol_errors() {
        let cases: &[&[u8]] = &[
            b"hello\n",
            b"cmd=frobnicate\n",
            b"cmd=put key=a\n",
            b"000005cmd=x",
            b"    10cmd=nonsense",
            b"cmd=init pmi_version=abc\n",
            b"\xff\xfe\n",
        ];
        for bytes in cases {
            let mut s = Server::new(JobConfig::new("j", 1)).unwrap();
            let c = s.add_connection(Some(0)).unwrap();
            s.receive(c, bytes);
            let ev = events(&mut s);
            assert!(
                matches!(ev[..], [Event::ProtocolError { rank: Some(0), .. }]),
                "{:?} gave {ev:?}",
                String::from_utf8_lossy(bytes)
            );
            // Later input is ignored, no further events.
            s.receive(c, b"cmd=get_maxes\n");
            assert!(s.poll_event().is_none());
        }
    }

    #[test]
    fn unsupported_commands_get_error_replies() {
        let mut s = Server::new(JobConfig::new("j", 1)).unwrap();
        let mut c = Sim::new(&mut s, Some(0));
        s.receive(c.conn, b"mcmd=frobnicate\nx=1\nendcmd\n");
        assert_eq!(c.one(&mut s, Wire::V1).cmd(), "frobnicate_result");
        c.send1(&mut s, "cmd=init pmi_version=3 pmi_subversion=0");
        assert_eq!(c.one(&mut s, Wire::V1).get("rc"), Some("-1"));
        c.send1(&mut s, "cmd=init pmi_version=2 pmi_subversion=0");
        c.one(&mut s, Wire::V1);
        c.send2(&mut s, Message::new("job-connect").with("jobid", "x"));
        assert_eq!(c.one(&mut s, Wire::V2).get("rc"), Some("-1"));
        assert!(events(&mut s)
            .iter()
            .all(|e| !matches!(e, Event::ProtocolError { .. })));
    }

    #[test]
    fn names_are_published_to_the_whole_job_on_both_wires() {
        let mut s = Server::new(JobConfig::new("j", 2)).unwrap();
        let mut a = Sim::new(&mut s, Some(0));
        let mut b = Sim::new(&mut s, Some(1));
        a.send1(&mut s, "cmd=publish_name service=ocean port=127.0.0.1:4000");
        let m = a.one(&mut s, Wire::V1);
        assert_eq!(
            (m.cmd(), m.get("rc"), m.get("info")),
            ("publish_result", Some("0"), Some("ok"))
        );
        a.send1(&mut s, "cmd=publish_name service=ocean port=other");
        let m = a.one(&mut s, Wire::V1);
        assert_eq!(m.get("rc"), Some("1"));
        assert_eq!(m.get("info"), Some("service_already_published"));
        // The other rank speaks PMI-2.
        b.send1(&mut s, "cmd=init pmi_version=2 pmi_subversion=0");
        b.one(&mut s, Wire::V1);
        b.send2(&mut s, Message::new("name-lookup").with("name", "ocean"));
        let m = b.one(&mut s, Wire::V2);
        assert_eq!(m.cmd(), "name-lookup-response");
        assert_eq!(
            (m.get("rc"), m.get("value")),
            (Some("0"), Some("127.0.0.1:4000"))
        );
        b.send2(&mut s, Message::new("name-unpublish").with("name", "ocean"));
        assert_eq!(b.one(&mut s, Wire::V2).get("rc"), Some("0"));
        b.send2(&mut s, Message::new("name-unpublish").with("name", "ocean"));
        let m = b.one(&mut s, Wire::V2);
        assert_eq!(
            (m.get("rc"), m.get("errmsg")),
            (Some("1"), Some("unknown_service"))
        );
        a.send1(&mut s, "cmd=lookup_name service=ocean");
        let m = a.one(&mut s, Wire::V1);
        assert_eq!(
            (m.cmd(), m.get("rc"), m.get("port")),
            ("lookup_result", Some("1"), None)
        );
        b.send2(
            &mut s,
            Message::new("name-publish")
                .with("name", "sea")
                .with("port", "p2"),
        );
        assert_eq!(b.one(&mut s, Wire::V2).get("rc"), Some("0"));
        a.send1(&mut s, "cmd=lookup_name service=sea");
        assert_eq!(a.one(&mut s, Wire::V1).get("port"), Some("p2"));
        a.send1(&mut s, "cmd=unpublish_name service=sea");
        assert_eq!(a.one(&mut s, Wire::V1).get("info"), Some("ok"));
        // A request without its service name is malformed.
        a.send1(&mut s, "cmd=lookup_name");
        assert!(matches!(
            events(&mut s)[..],
            [.., Event::ProtocolError { rank: Some(0), .. }]
        ));
    }

    #[test]
    fn spawn_requests_reach_the_driver_and_get_its_answer() {
        let mut s = Server::new(JobConfig::new("j", 2)).unwrap();
        let mut a = Sim::new(&mut s, Some(0));
        let mut b = Sim::new(&mut s, Some(1));
        // PMI-1, two commands in two blocks: one event after the second.
        s.receive(
            a.conn,
            b"mcmd=spawn\nnprocs=2\nexecname=w\ntotspawns=2\nspawnssofar=1\nargcnt=0\n\
preput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=p\ninfo_num=0\nendcmd\n",
        );
        assert!(s.poll_event().is_none());
        s.receive(
            a.conn,
            b"mcmd=spawn\nnprocs=1\nexecname=v\ntotspawns=2\nspawnssofar=2\nargcnt=1\narg1=x\n\
preput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=p\ninfo_num=0\nendcmd\n",
        );
        let ev = events(&mut s);
        let [Event::Spawn {
            conn,
            rank: 0,
            request,
        }] = &ev[..]
        else {
            panic!("{ev:?}")
        };
        assert_eq!(*conn, a.conn);
        assert_eq!(request.apps.len(), 2);
        assert_eq!(request.total_procs(), 3);
        assert_eq!(request.apps[1].args, ["x"]);
        assert!(a.recv_all(&mut s, Wire::V1).is_empty());
        s.spawn_done(a.conn, Ok("j_spawn_1".into()));
        let m = a.one(&mut s, Wire::V1);
        assert_eq!(
            (m.cmd(), m.get("rc"), m.get("errcodes")),
            ("spawn_result", Some("0"), Some("0,0,0"))
        );
        // PMI-2: refused by the driver.
        b.send1(&mut s, "cmd=init pmi_version=2 pmi_subversion=0");
        b.one(&mut s, Wire::V1);
        b.send2(
            &mut s,
            Message::new("spawn")
                .with("thrid", "t1")
                .with("ncmds", 1)
                .with("preputcount", 0)
                .with("subcmd", "nowhere")
                .with("maxprocs", 1)
                .with("argc", 0)
                .with("infokeycount", 0),
        );
        let ev = events(&mut s);
        assert!(
            matches!(
                ev[..],
                [Event::Initialized { .. }, Event::Spawn { rank: 1, .. }]
            ),
            "{ev:?}"
        );
        s.spawn_done(b.conn, Err("no such program nowhere".into()));
        let m = b.one(&mut s, Wire::V2);
        assert_eq!(
            (m.cmd(), m.get("rc"), m.get("thrid")),
            ("spawn-response", Some("1"), Some("t1"))
        );
        // A block out of order is a protocol error.
        s.receive(
            a.conn,
            b"mcmd=spawn\nnprocs=1\nexecname=v\ntotspawns=2\nspawnssofar=2\nendcmd\n",
        );
        assert!(matches!(
            events(&mut s)[..],
            [Event::ProtocolError { rank: Some(0), .. }]
        ));
    }

    #[test]
    fn put_limits_and_kvsname_checks() {
        let mut s = Server::new(JobConfig::new("j", 1)).unwrap();
        let mut c = Sim::new(&mut s, Some(0));
        let long = "v".repeat(MAX_VALUE_LEN + 1);
        c.send1(&mut s, &format!("cmd=put kvsname=j key=k value={long}"));
        assert_eq!(c.one(&mut s, Wire::V1).get("rc"), Some("-1"));
        let longkey = "k".repeat(MAX_KEY_LEN + 1);
        c.send1(&mut s, &format!("cmd=put kvsname=j key={longkey} value=v"));
        assert_eq!(c.one(&mut s, Wire::V1).get("rc"), Some("-1"));
        c.send1(&mut s, "cmd=put kvsname=other key=k value=v");
        assert_eq!(c.one(&mut s, Wire::V1).get("rc"), Some("-1"));
        c.send1(&mut s, "cmd=put key=k value=v");
        assert_eq!(c.one(&mut s, Wire::V1).get("rc"), Some("0"));
        assert_eq!(s.kvs_value("k"), Some("v"));
    }

    #[test]
    fn double_fence_entry_is_an_error() {
        let mut s = Server::new(JobConfig::new("j", 2)).unwrap();
        let c = Sim::new(&mut s, Some(0));
        c.send1(&mut s, "cmd=barrier_in");
        c.send1(&mut s, "cmd=barrier_in");
        assert!(matches!(
            events(&mut s)[..],
            [Event::ProtocolError { rank: Some(0), .. }]
        ));
    }

    #[test]
    fn nodeattr_wait_is_released_by_put() {
        let mut s = Server::new(JobConfig::new("j", 2)).unwrap();
        let mut a = Sim::new(&mut s, Some(0));
        let mut b = Sim::new(&mut s, Some(1));
        for c in [&a, &b] {
            c.send2(&mut s, Message::new("fullinit"));
        }
        a.recv_all(&mut s, Wire::V2);
        b.recv_all(&mut s, Wire::V2);
        a.send2(
            &mut s,
            Message::new("info-getnodeattr")
                .with("key", "shm")
                .with("wait", "TRUE"),
        );
        assert!(a.recv_all(&mut s, Wire::V2).is_empty());
        b.send2(
            &mut s,
            Message::new("info-putnodeattr")
                .with("key", "shm")
                .with("value", "seg1"),
        );
        assert_eq!(b.one(&mut s, Wire::V2).get("rc"), Some("0"));
        let m = a.one(&mut s, Wire::V2);
        assert_eq!(m.get("found"), Some("TRUE"));
        assert_eq!(m.get("value"), Some("seg1"));
    }

    #[test]
    fn commands_need_a_rank_on_anonymous_connections() {
        let mut s = Server::new(JobConfig::new("j", 1)).unwrap();
        let c = Sim::new(&mut s, None);
        c.send1(&mut s, "cmd=barrier_in");
        assert!(matches!(
            events(&mut s)[..],
            [Event::ProtocolError { rank: None, .. }]
        ));
    }

    #[test]
    fn config_validation() {
        assert!(Server::new(JobConfig::new("j", 0)).is_err());
        assert!(Server::new(JobConfig::new("a b", 1)).is_err());
        let mut cfg = JobConfig::new("j", 2);
        cfg.appnums.pop();
        assert!(Server::new(cfg).is_err());
        let mut s = Server::new(JobConfig::new("j", 1)).unwrap();
        assert!(s.add_connection(Some(1)).is_err());
        s.add_connection(Some(0)).unwrap();
        assert!(s.add_connection(Some(0)).is_err());
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

            /// Random bytes, in random chunks, never panic the server and never make it
            /// emit more than one protocol error per connection.
            #[test]
            fn random_bytes(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 1..8)) {
                let mut s = Server::new(JobConfig::new("fz", 2)).unwrap();
                let c = s.add_connection(Some(0)).unwrap();
                for ch in &chunks {
                    s.receive(c, ch);
                }
                let errs = events(&mut s).iter().filter(|e| matches!(e, Event::ProtocolError { .. })).count();
                prop_assert!(errs <= 1);
            }

            /// Plausible-looking lines built from PMI vocabulary.
            #[test]
            fn random_commands(lines in proptest::collection::vec(
                ("(init|initack|put|get|barrier_in|finalize|abort|get_maxes|fullinit|kvs-put|kvs-get|kvs-fence|info-getnodeattr)",
                 proptest::collection::vec(("[a-z_]{1,8}", "[ -~]{0,12}"), 0..4)), 0..12),
                v2 in any::<bool>()) {
                let mut s = Server::new(JobConfig::new("fz", 2)).unwrap();
                let c = s.add_connection(Some(1)).unwrap();
                for (cmd, attrs) in lines {
                    let mut m = Message::new(cmd);
                    for (k, v) in attrs {
                        m.push(k, v);
                    }
                    let bytes = if v2 { v2::encode(&m) } else { v1::encode(&m) };
                    if let Ok(b) = bytes {
                        s.receive(c, &b);
                    }
                }
                while s.poll_event().is_some() {}
            }
        }
    }
}
