//! The blocking PMI client the MPI library uses: it finds the process manager through the
//! environment (`PMI_FD`, or `PMI_PORT` + `PMI_ID`), initializes PMI-1 or PMI-2, and offers
//! put / fence / get on the job's key-value space, abort and finalize.
//!
//! The PMI-2 start-up follows MPICH and Slurm: a PMI-1 `init` line asking for version 2,
//! then `fullinit` in the PMI-2 wire.

use crate::decoder::{StreamDecoder, Wire};
use crate::error::PmiError;
use crate::limits::{MAX_ABORT_MESSAGE_LEN, MAX_KEY_LEN, MAX_KVSNAME_LEN, MAX_VALUE_LEN};
use crate::mapping::parse_process_mapping;
use crate::message::Message;
use crate::{v1, v2};
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Mutex;

/// The PMI protocol version spoken on a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmiVersion {
    V1,
    V2,
}

/// Descriptors taken over from `PMI_FD` by live clients, so that no descriptor is owned
/// twice.
static TAKEN_FDS: Mutex<Vec<RawFd>> = Mutex::new(Vec::new());

/// How to start PMI on an already connected stream (see [`Client::connect`]).
#[derive(Debug, Clone, Default)]
pub struct ConnectParams {
    /// Protocol to speak; `None` means PMI-1.
    pub version: Option<PmiVersion>,
    /// The rank as told by the launcher (`PMI_RANK`); required for PMI-1 without `pmi_id`.
    pub rank: Option<u32>,
    /// The job size as told by the launcher (`PMI_SIZE`); required for PMI-1 without `pmi_id`.
    pub size: Option<u32>,
    /// `PMI_ID`: when set, the `initack` handshake runs first and gives rank and size.
    pub pmi_id: Option<i64>,
    /// `PMI_JOBID`, sent in the PMI-2 `fullinit` (Slurm requires it).
    pub jobid: Option<String>,
    /// `PMI_SPAWNED`.
    pub spawned: bool,
}

/// A PMI connection to the process manager, initialized.
#[derive(Debug)]
pub struct Client {
    stream: OwnedFd,
    decoder: StreamDecoder,
    version: PmiVersion,
    rank: u32,
    size: u32,
    appnum: i32,
    universe_size: Option<u32>,
    kvsname: String,
    spawned: bool,
    finalized: bool,
    registered_fd: Option<RawFd>,
    max_key: usize,
    max_value: usize,
}

fn env_err(var: &'static str, value: &str, reason: impl Into<String>) -> PmiError {
    PmiError::Env {
        var,
        value: value.to_owned(),
        reason: reason.into(),
    }
}

fn parse_env<T: std::str::FromStr>(
    vars: &impl Fn(&str) -> Option<String>,
    var: &'static str,
) -> Result<Option<T>, PmiError> {
    match vars(var) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<T>()
            .map(Some)
            .map_err(|_| env_err(var, &v, "not a valid number")),
    }
}

impl Client {
    /// Reads the environment. `Ok(None)` when no PMI environment is present (singleton:
    /// rank 0 of 1). `PMI_FD` (+`PMI_RANK`, `PMI_SIZE`) or `PMI_PORT` (+`PMI_ID`) select the
    /// process manager. PMI-2 is used when `OXMPI_PMI=2`, or when `OXMPI_PMI` is unset and
    /// either `PMI_VERSION=2` or (`SLURM_JOBID`/`SLURM_JOB_ID` and `PMI_FD` are set);
    /// `OXMPI_PMI=1` forces PMI-1.
    ///
    /// The client takes ownership of the `PMI_FD` descriptor (and marks it close-on-exec).
    pub fn from_env() -> Result<Option<Client>, PmiError> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// [`Client::from_env`] with the variables looked up through `vars`.
    pub fn from_vars(vars: impl Fn(&str) -> Option<String>) -> Result<Option<Client>, PmiError> {
        let fd_var = vars("PMI_FD");
        let port_var = vars("PMI_PORT");
        if fd_var.is_none() && port_var.is_none() {
            return Ok(None);
        }
        let slurm = vars("SLURM_JOBID").is_some() || vars("SLURM_JOB_ID").is_some();
        let version = match vars("OXMPI_PMI").as_deref().map(str::trim) {
            Some("1") => PmiVersion::V1,
            Some("2") => PmiVersion::V2,
            Some(other) => return Err(env_err("OXMPI_PMI", other, "must be 1 or 2")),
            None => {
                if vars("PMI_VERSION").as_deref().map(str::trim) == Some("2")
                    || (slurm && fd_var.is_some())
                {
                    PmiVersion::V2
                } else {
                    PmiVersion::V1
                }
            }
        };
        let mut params = ConnectParams {
            version: Some(version),
            rank: parse_env(&vars, "PMI_RANK")?,
            size: parse_env(&vars, "PMI_SIZE")?,
            pmi_id: None,
            jobid: vars("PMI_JOBID"),
            spawned: parse_env::<i64>(&vars, "PMI_SPAWNED")?.unwrap_or(0) != 0,
        };
        if let Some(fdv) = fd_var {
            let fd: RawFd = fdv
                .trim()
                .parse()
                .ok()
                .filter(|&fd| fd >= 0)
                .ok_or_else(|| env_err("PMI_FD", &fdv, "not a file descriptor number"))?;
            let owned = take_fd(fd, &fdv)?;
            let mut client = Self::connect(owned, &params);
            if let Ok(c) = client.as_mut() {
                c.registered_fd = Some(fd);
            } else {
                release_fd(fd);
            }
            return client.map(Some);
        }
        let port = port_var.unwrap_or_default();
        let (host, num) = port
            .rsplit_once(':')
            .ok_or_else(|| env_err("PMI_PORT", &port, "expected HOST:PORT"))?;
        let num: u16 = num
            .parse()
            .map_err(|_| env_err("PMI_PORT", &port, "bad port number"))?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        params.pmi_id = parse_env(&vars, "PMI_ID")?;
        if params.pmi_id.is_none() && (params.rank.is_none() || params.size.is_none()) {
            return Err(env_err(
                "PMI_ID",
                "",
                "PMI_PORT is set but neither PMI_ID nor PMI_RANK and PMI_SIZE are",
            ));
        }
        let tcp = TcpStream::connect((host, num)).map_err(|source| PmiError::Io {
            op: "connecting to PMI_PORT",
            source,
        })?;
        let _ = tcp.set_nodelay(true);
        Self::connect(OwnedFd::from(tcp), &params).map(Some)
    }

    /// Starts PMI on an already connected stream (a socket to the process manager).
    pub fn connect(stream: OwnedFd, params: &ConnectParams) -> Result<Client, PmiError> {
        let mut c = Client {
            stream,
            decoder: StreamDecoder::new(Wire::V1),
            version: params.version.unwrap_or(PmiVersion::V1),
            rank: 0,
            size: 1,
            appnum: 0,
            universe_size: None,
            kvsname: String::new(),
            spawned: params.spawned,
            finalized: false,
            registered_fd: None,
            max_key: MAX_KEY_LEN,
            max_value: MAX_VALUE_LEN,
        };
        c.handshake(params)?;
        Ok(c)
    }

    fn handshake(&mut self, p: &ConnectParams) -> Result<(), PmiError> {
        let (mut rank, mut size) = (p.rank, p.size);
        if let Some(id) = p.pmi_id {
            let (r, s) = self.initack(id)?;
            rank = Some(r);
            size = Some(s);
        }
        match self.version {
            PmiVersion::V1 => {
                let r = rank.ok_or_else(|| env_err("PMI_RANK", "", "not set"))?;
                let s = size.ok_or_else(|| env_err("PMI_SIZE", "", "not set"))?;
                let resp = self.request(
                    Wire::V1,
                    Message::new("init")
                        .with("pmi_version", 1)
                        .with("pmi_subversion", 1),
                    "response_to_init",
                )?;
                check_rc(&resp)?;
                if resp.get("pmi_version").is_some_and(|v| v != "1") {
                    return Err(PmiError::Protocol(format!(
                        "server answered init with pmi_version={}",
                        resp.get("pmi_version").unwrap_or("")
                    )));
                }
                self.rank = r;
                self.size = s;
                let maxes = self.request(Wire::V1, Message::new("get_maxes"), "maxes")?;
                check_rc(&maxes)?;
                // Respect smaller limits of the server; never exceed our own.
                if let Some(k) = maxes.get_num::<usize>("keylen_max")?.filter(|&k| k > 0) {
                    self.max_key = self.max_key.min(k);
                }
                if let Some(v) = maxes.get_num::<usize>("vallen_max")?.filter(|&v| v > 0) {
                    self.max_value = self.max_value.min(v);
                }
                let appnum = self.request(Wire::V1, Message::new("get_appnum"), "appnum")?;
                check_rc(&appnum)?;
                self.appnum = appnum.require_num("appnum")?;
                let kvs = self.request(Wire::V1, Message::new("get_my_kvsname"), "my_kvsname")?;
                check_rc(&kvs)?;
                self.kvsname = kvs.require("kvsname")?.to_owned();
                let uni =
                    self.request(Wire::V1, Message::new("get_universe_size"), "universe_size")?;
                check_rc(&uni)?;
                let n: i64 = uni.require_num("size")?;
                self.universe_size = u32::try_from(n).ok().filter(|&n| n > 0);
            }
            PmiVersion::V2 => {
                let resp = self.request(
                    Wire::V1,
                    Message::new("init")
                        .with("pmi_version", 2)
                        .with("pmi_subversion", 0),
                    "response_to_init",
                )?;
                check_rc(&resp)?;
                if resp.get("pmi_version") != Some("2") {
                    return Err(PmiError::Protocol(format!(
                        "the process manager does not speak PMI-2 (answered pmi_version={})",
                        resp.get("pmi_version").unwrap_or("<none>")
                    )));
                }
                let mut m = Message::new("fullinit");
                if let Some(j) = &p.jobid {
                    m.push("pmijobid", j);
                }
                if let Some(r) = rank {
                    m.push("pmirank", r);
                }
                m.push("threaded", "FALSE");
                let full = self.request(Wire::V2, m, "fullinit-response")?;
                check_rc(&full)?;
                let r: u32 = full.require_num("rank")?;
                if let Some(expected) = rank {
                    if expected != r {
                        return Err(PmiError::Protocol(format!(
                            "fullinit gave rank {r} but PMI_RANK is {expected}"
                        )));
                    }
                }
                self.rank = r;
                self.size = full.require_num("size")?;
                self.appnum = full.get_num("appnum")?.unwrap_or(0);
                let id = self.request(Wire::V2, Message::new("job-getid"), "job-getid-response")?;
                check_rc(&id)?;
                self.kvsname = id.require("jobid")?.to_owned();
                let uni = self.request(
                    Wire::V2,
                    Message::new("info-getjobattr").with("key", "universeSize"),
                    "info-getjobattr-response",
                )?;
                check_rc(&uni)?;
                if uni.get_bool("found") == Some(true) {
                    self.universe_size = uni
                        .get_num::<i64>("value")?
                        .and_then(|n| u32::try_from(n).ok())
                        .filter(|&n| n > 0);
                }
            }
        }
        if self.size == 0 || self.rank >= self.size {
            return Err(PmiError::Protocol(format!(
                "rank {} is not inside a job of size {}",
                self.rank, self.size
            )));
        }
        if self.kvsname.is_empty() || self.kvsname.len() > MAX_KVSNAME_LEN {
            return Err(PmiError::Protocol(format!(
                "unusable KVS name of {} bytes",
                self.kvsname.len()
            )));
        }
        Ok(())
    }

    /// The `initack` handshake of a `PMI_PORT` connection: returns (rank, size).
    fn initack(&mut self, id: i64) -> Result<(u32, u32), PmiError> {
        let ack = self.request(
            Wire::V1,
            Message::new("initack").with("pmiid", id),
            "initack",
        )?;
        check_rc(&ack)?;
        let mut rank: Option<u32> = ack.get_num("rank")?;
        let mut size: Option<u32> = ack.get_num("size")?;
        // Classic servers follow with `cmd=set size=`, `cmd=set rank=`, `cmd=set debug=`.
        let mut seen_debug = rank.is_some() && size.is_some();
        let mut lines = 0;
        while !seen_debug {
            lines += 1;
            if lines > 8 {
                return Err(PmiError::Protocol("initack: too many set lines".into()));
            }
            let m = self.recv()?;
            if m.cmd() != "set" {
                return Err(PmiError::Protocol(format!(
                    "initack: expected cmd=set, got cmd={}",
                    m.cmd()
                )));
            }
            if let Some(v) = m.get_num("rank")? {
                rank = Some(v);
            }
            if let Some(v) = m.get_num("size")? {
                size = Some(v);
            }
            if m.get("debug").is_some() {
                seen_debug = true;
            }
        }
        match (rank, size) {
            (Some(r), Some(s)) => Ok((r, s)),
            _ => Err(PmiError::Protocol(
                "initack did not give rank and size".into(),
            )),
        }
    }

    /// This process's rank in the job.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// Number of ranks in the job.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Application number (index of the MPMD section this rank belongs to).
    pub fn appnum(&self) -> i32 {
        self.appnum
    }

    /// The universe size, if the process manager reported one.
    pub fn universe_size(&self) -> Option<u32> {
        self.universe_size
    }

    /// Name of the job's key-value space (unique per job).
    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }

    /// Protocol version in use.
    pub fn version(&self) -> PmiVersion {
        self.version
    }

    /// Whether this process was started by a spawn (`PMI_SPAWNED`).
    pub fn spawned(&self) -> bool {
        self.spawned
    }

    /// Longest key [`Client::put`] and [`Client::get`] accept: [`MAX_KEY_LEN`], or less if
    /// the process manager said so.
    pub fn max_key_len(&self) -> usize {
        self.max_key
    }

    /// Longest value [`Client::put`] accepts: [`MAX_VALUE_LEN`], or less if the process
    /// manager said so.
    pub fn max_value_len(&self) -> usize {
        self.max_value
    }

    /// Stores `value` under `key`. Keys have 1 to [`Client::max_key_len`] and values 1 to
    /// [`Client::max_value_len`] printable ASCII characters other than space, `=`, `;` and `\`
    /// (use [`crate::encode_value`] for anything else). Other ranks see it after the next
    /// [`Client::fence`].
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        self.live()?;
        check_token("key", key, self.max_key)?;
        check_token("value", value, self.max_value)?;
        let resp = match self.version {
            PmiVersion::V1 => self.request(
                Wire::V1,
                Message::new("put")
                    .with("kvsname", &self.kvsname)
                    .with("key", key)
                    .with("value", value),
                "put_result",
            )?,
            PmiVersion::V2 => self.request(
                Wire::V2,
                Message::new("kvs-put")
                    .with("key", key)
                    .with("value", value),
                "kvs-put-response",
            )?,
        };
        check_rc(&resp)
    }

    /// Commits this rank's puts and waits until every rank of the job has done the same.
    pub fn fence(&mut self) -> Result<(), PmiError> {
        self.live()?;
        let resp = match self.version {
            PmiVersion::V1 => self.request(Wire::V1, Message::new("barrier_in"), "barrier_out")?,
            PmiVersion::V2 => {
                self.request(Wire::V2, Message::new("kvs-fence"), "kvs-fence-response")?
            }
        };
        check_rc(&resp)
    }

    /// The value stored under `key` by any rank of the job.
    pub fn get(&mut self, key: &str) -> Result<String, PmiError> {
        self.live()?;
        check_token("key", key, self.max_key)?;
        match self.version {
            PmiVersion::V1 => {
                let resp = self.request(
                    Wire::V1,
                    Message::new("get")
                        .with("kvsname", &self.kvsname)
                        .with("key", key),
                    "get_result",
                )?;
                if resp.get("rc").is_some_and(|rc| rc != "0")
                    || resp.get_bool("found") == Some(false)
                {
                    let msg = resp.get("msg").unwrap_or("");
                    if msg.contains("not_found") || msg.contains("not found") || msg.is_empty() {
                        return Err(PmiError::KeyNotFound { key: key.into() });
                    }
                    check_rc(&resp)?;
                }
                Ok(resp.require("value")?.to_owned())
            }
            PmiVersion::V2 => {
                let resp = self.request(
                    Wire::V2,
                    Message::new("kvs-get")
                        .with("jobid", &self.kvsname)
                        .with("srcid", -1)
                        .with("key", key),
                    "kvs-get-response",
                )?;
                check_rc(&resp)?;
                match resp.get_bool("found") {
                    Some(true) => Ok(resp.require("value")?.to_owned()),
                    _ => Err(PmiError::KeyNotFound { key: key.into() }),
                }
            }
        }
    }

    /// A job attribute the process manager provides (such as `PMI_process_mapping`);
    /// `Ok(None)` if it has none by that name.
    pub fn job_attr(&mut self, key: &str) -> Result<Option<String>, PmiError> {
        self.live()?;
        check_token("key", key, self.max_key)?;
        match self.version {
            PmiVersion::V1 => match self.get(key) {
                Ok(v) => Ok(Some(v)),
                Err(PmiError::KeyNotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            },
            PmiVersion::V2 => {
                let resp = self.request(
                    Wire::V2,
                    Message::new("info-getjobattr").with("key", key),
                    "info-getjobattr-response",
                )?;
                check_rc(&resp)?;
                Ok(match resp.get_bool("found") {
                    Some(true) => Some(resp.require("value")?.to_owned()),
                    _ => None,
                })
            }
        }
    }

    /// Publishes `port` under `service` in the process manager's name service.
    /// Both are tokens as for [`Client::put`] (at most [`crate::names::MAX_NAME_LEN`]
    /// characters). A refusal (the name is published already, or the process manager
    /// has no name service) is [`PmiError::Server`].
    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<(), PmiError> {
        self.live()?;
        check_token("service name", service, crate::names::MAX_NAME_LEN)?;
        check_token("port name", port, crate::names::MAX_NAME_LEN)?;
        let resp = match self.version {
            PmiVersion::V1 => self.request(
                Wire::V1,
                Message::new("publish_name")
                    .with("service", service)
                    .with("port", port),
                "publish_result",
            )?,
            PmiVersion::V2 => self.request(
                Wire::V2,
                Message::new("name-publish")
                    .with("name", service)
                    .with("port", port)
                    .with("info-count", 0),
                "name-publish-response",
            )?,
        };
        check_name_rc(&resp)
    }

    /// The port published under `service`. A name that is not published (or a process
    /// manager without name service) is [`PmiError::Server`].
    pub fn lookup_name(&mut self, service: &str) -> Result<String, PmiError> {
        self.live()?;
        check_token("service name", service, crate::names::MAX_NAME_LEN)?;
        match self.version {
            PmiVersion::V1 => {
                let resp = self.request(
                    Wire::V1,
                    Message::new("lookup_name").with("service", service),
                    "lookup_result",
                )?;
                check_name_rc(&resp)?;
                Ok(resp.require("port")?.to_owned())
            }
            PmiVersion::V2 => {
                let resp = self.request(
                    Wire::V2,
                    Message::new("name-lookup")
                        .with("name", service)
                        .with("info-count", 0),
                    "name-lookup-response",
                )?;
                check_name_rc(&resp)?;
                Ok(resp.require("value")?.to_owned())
            }
        }
    }

    /// Withdraws `service` from the name service. A name that is not published is
    /// [`PmiError::Server`].
    pub fn unpublish_name(&mut self, service: &str) -> Result<(), PmiError> {
        self.live()?;
        check_token("service name", service, crate::names::MAX_NAME_LEN)?;
        let resp = match self.version {
            PmiVersion::V1 => self.request(
                Wire::V1,
                Message::new("unpublish_name").with("service", service),
                "unpublish_result",
            )?,
            PmiVersion::V2 => self.request(
                Wire::V2,
                Message::new("name-unpublish")
                    .with("name", service)
                    .with("info-count", 0),
                "name-unpublish-response",
            )?,
        };
        check_name_rc(&resp)
    }

    /// Asks the process manager to start a new job (`MPI_Comm_spawn`); returns when it
    /// has answered, with one code per process asked for (0: started; see
    /// [`crate::spawn::answer_codes`]). A refusal (a program that does not exist, a
    /// process manager that cannot spawn) is [`PmiError::Server`].
    pub fn spawn(&mut self, req: &crate::spawn::SpawnRequest) -> Result<Vec<i32>, PmiError> {
        self.live()?;
        let resp = match self.version {
            PmiVersion::V1 => {
                let bytes =
                    crate::spawn::v1_blocks(req).map_err(|e| PmiError::InvalidArgument(e.0))?;
                self.send_bytes(&bytes)?;
                self.decoder.set_wire(Wire::V1);
                let resp = self.recv()?;
                if resp.cmd() != "spawn_result" {
                    return Err(PmiError::Protocol(format!(
                        "expected cmd=spawn_result in answer to a spawn, got cmd={}",
                        resp.cmd()
                    )));
                }
                resp
            }
            PmiVersion::V2 => {
                self.request(Wire::V2, crate::spawn::v2_request(req), "spawn-response")?
            }
        };
        check_rc(&resp)?;
        crate::spawn::answer_codes(&resp, req).map_err(|e| PmiError::Protocol(e.0))
    }

    /// The node index of every rank, from `PMI_process_mapping`; `Ok(None)` if the
    /// process manager does not provide the mapping.
    pub fn node_ids(&mut self) -> Result<Option<Vec<u32>>, PmiError> {
        match self.job_attr("PMI_process_mapping")? {
            None => Ok(None),
            Some(m) => parse_process_mapping(&m, self.size).map(Some),
        }
    }

    /// Tells the process manager that the job must be aborted with exit code `code`, then
    /// exits this process with that code. `msg` is shown by the launcher (control
    /// characters become spaces; at most [`MAX_ABORT_MESSAGE_LEN`] characters are sent).
    pub fn abort(&mut self, code: i32, msg: &str) -> ! {
        let text: String = msg
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(MAX_ABORT_MESSAGE_LEN)
            .collect();
        let text = text.trim();
        let mut m = Message::new("abort");
        if self.version == PmiVersion::V2 {
            m.push("isworld", "TRUE");
        }
        m.push("exitcode", code);
        if !text.is_empty() {
            m.push("message", text);
        }
        let wire = match self.version {
            PmiVersion::V1 => Wire::V1,
            PmiVersion::V2 => Wire::V2,
        };
        // Best effort: the process exits whatever happens to the message.
        let _ = self.send(wire, &m);
        let _ = io::stdout().flush();
        let _ = io::stderr().flush();
        std::process::exit(code)
    }

    /// Finalizes PMI. Afterwards every other operation fails with [`PmiError::Finalized`].
    pub fn finalize(&mut self) -> Result<(), PmiError> {
        self.live()?;
        let resp = match self.version {
            PmiVersion::V1 => self.request(Wire::V1, Message::new("finalize"), "finalize_ack")?,
            PmiVersion::V2 => {
                self.request(Wire::V2, Message::new("finalize"), "finalize-response")?
            }
        };
        check_rc(&resp)?;
        self.finalized = true;
        Ok(())
    }

    fn live(&self) -> Result<(), PmiError> {
        if self.finalized {
            Err(PmiError::Finalized)
        } else {
            Ok(())
        }
    }

    fn send(&mut self, wire: Wire, msg: &Message) -> Result<(), PmiError> {
        let bytes = match wire {
            Wire::V2 => v2::encode(msg),
            _ => v1::encode(msg),
        }
        .map_err(|e| PmiError::InvalidArgument(e.0))?;
        self.send_bytes(&bytes)
    }

    fn send_bytes(&mut self, bytes: &[u8]) -> Result<(), PmiError> {
        write_all_nosignal(self.stream.as_raw_fd(), bytes).map_err(|source| {
            if source.kind() == io::ErrorKind::BrokenPipe {
                PmiError::Closed
            } else {
                PmiError::Io {
                    op: "sending a PMI request",
                    source,
                }
            }
        })
    }

    fn recv(&mut self) -> Result<Message, PmiError> {
        let mut buf = [0u8; 4096];
        loop {
            if let Some(d) = self.decoder.next_message()? {
                return Ok(d.msg);
            }
            let mut f = FdReader(self.stream.as_raw_fd());
            match f.read(&mut buf) {
                Ok(0) => return Err(PmiError::Closed),
                Ok(n) => self.decoder.push(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {
                    return Err(PmiError::Closed)
                }
                Err(source) => {
                    return Err(PmiError::Io {
                        op: "reading a PMI response",
                        source,
                    })
                }
            }
        }
    }

    fn request(&mut self, wire: Wire, msg: Message, expect: &str) -> Result<Message, PmiError> {
        self.send(wire, &msg)?;
        self.decoder.set_wire(wire);
        let resp = self.recv()?;
        if resp.cmd() != expect {
            return Err(PmiError::Protocol(format!(
                "expected cmd={expect} in answer to cmd={}, got cmd={}",
                msg.cmd(),
                resp.cmd()
            )));
        }
        Ok(resp)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(fd) = self.registered_fd {
            release_fd(fd);
        }
    }
}

fn check_rc(m: &Message) -> Result<(), PmiError> {
    match m.get("rc").map(str::trim) {
        None | Some("0") => Ok(()),
        Some(rc) => Err(PmiError::Server {
            cmd: m.cmd().to_owned(),
            rc: rc.to_owned(),
            msg: m
                .get("msg")
                .or_else(|| m.get("errmsg"))
                .unwrap_or("")
                .to_owned(),
        }),
    }
}

/// The answer to a name-service request: `rc` (oxmpi, PMI-2) or, from a PMI-1 server
/// that sends none, `info` other than `ok` (MPICH's Hydra) is a refusal.
fn check_name_rc(m: &Message) -> Result<(), PmiError> {
    check_rc(m)?;
    match m.get("info") {
        Some(i) if i != "ok" => Err(PmiError::Server {
            cmd: m.cmd().to_owned(),
            rc: "1".into(),
            msg: i.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Keys and values the client accepts: printable ASCII without space, `=`, `;` or `\`.
fn check_token(what: &str, s: &str, max: usize) -> Result<(), PmiError> {
    if s.is_empty() || s.len() > max {
        return Err(PmiError::InvalidArgument(format!(
            "{what} must have 1 to {max} characters, got {}",
            s.len()
        )));
    }
    if let Some(c) = s
        .bytes()
        .find(|&c| !(0x21..=0x7e).contains(&c) || matches!(c, b'=' | b';' | b'\\'))
    {
        return Err(PmiError::InvalidArgument(format!(
            "{what} {:?} contains the byte 0x{c:02x}; only printable ASCII without space, '=', ';' and '\\' is allowed (use encode_value)",
            s.chars().take(40).collect::<String>()
        )));
    }
    Ok(())
}

fn take_fd(fd: RawFd, shown: &str) -> Result<OwnedFd, PmiError> {
    let mut taken = TAKEN_FDS.lock().unwrap_or_else(|p| p.into_inner());
    if taken.contains(&fd) {
        return Err(env_err(
            "PMI_FD",
            shown,
            "already owned by another PMI client in this process",
        ));
    }
    // SAFETY: F_GETFD only inspects the descriptor table entry; an invalid fd yields -1.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    if flags < 0 {
        return Err(env_err("PMI_FD", shown, "not an open file descriptor"));
    }
    // SAFETY: setting FD_CLOEXEC on a descriptor that was just checked to be open.
    unsafe { libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC) };
    taken.push(fd);
    // SAFETY: the launcher handed this open descriptor to the process for PMI; the
    // registry above guarantees that no other Client owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn release_fd(fd: RawFd) {
    let mut taken = TAKEN_FDS.lock().unwrap_or_else(|p| p.into_inner());
    taken.retain(|&f| f != fd);
}

/// `read(2)` on a borrowed descriptor.
struct FdReader(RawFd);

impl Read for FdReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: buf is a valid writable buffer of buf.len() bytes; the fd is owned by
        // the Client for the duration of the call.
        let n = unsafe { libc::read(self.0, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

/// Writes everything, using `send(MSG_NOSIGNAL)` on sockets so that a vanished launcher
/// gives an error instead of killing the process with SIGPIPE.
fn write_all_nosignal(fd: RawFd, mut bytes: &[u8]) -> io::Result<()> {
    let mut use_send = true;
    while !bytes.is_empty() {
        let n = if use_send {
            // SAFETY: bytes points to bytes.len() readable bytes.
            unsafe { libc::send(fd, bytes.as_ptr().cast(), bytes.len(), libc::MSG_NOSIGNAL) }
        } else {
            // SAFETY: as above.
            unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) }
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ENOTSOCK) if use_send => {
                    use_send = false;
                    continue;
                }
                _ => return Err(e),
            }
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "wrote 0 bytes"));
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}
