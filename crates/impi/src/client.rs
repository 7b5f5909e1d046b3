//! The IMPI client's side of the startup and shutdown protocols as a sans-IO state
//! machine: AUTH (offering the enabled methods, answering the server's choice), IMPI (its
//! rank; the job size comes back), COLL (one label at a time in ascending order, each
//! sent once the previous one's broadcast has arrived), DONE, and at the end FINI.
//!
//! The driver writes [`Client::take_output`] to the server, feeds what it reads to
//! [`Client::received`], and reports the end of the stream with [`Client::closed`].

use crate::auth::{self, AuthConfig, ServerAuth, AUTH_KEY, AUTH_NONE, SERVER_AUTH_LEN};
use crate::job::{Job, LocalClient};
use crate::label::{encode_client_coll, label_name, Collated};
use crate::wire::{
    command_name, encode_cmd, CmdHeader, Inbox, ProtocolError, CMD_COLL, CMD_DONE, CMD_HEADER_LEN,
    CMD_IMPI, MAX_SERVER_PAYLOAD,
};

/// The client's settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// This client's rank in the job (`impirun -client R`).
    pub rank: u32,
    pub auth: AuthConfig,
    pub local: LocalClient,
}

/// Where the exchange stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// AUTH sent, waiting for `IMPI_Server_auth`.
    Auth,
    /// Skipping the server's protocol-specific follow-on bytes.
    AuthFollowOn(usize),
    /// IMPI sent, waiting for the job size.
    Impi,
    /// Sending labels and reading broadcasts.
    Coll,
    /// DONE sent, waiting for the server's DONE.
    Done,
    /// The job is known ([`Client::job`]).
    Ready,
    /// FINI sent.
    Finished,
}

/// The client state machine.
pub struct Client {
    cfg: ClientConfig,
    out: Vec<u8>,
    inbox: Inbox,
    stage: Stage,
    method: Option<u32>,
    size: Option<u32>,
    labels: Vec<(i32, Vec<u8>)>,
    /// Index in `labels` of the label whose broadcast is awaited.
    pending: usize,
    received: Vec<Collated>,
    job: Option<Job>,
    ignored_commands: Vec<String>,
}

impl Client {
    /// Starts the exchange (the AUTH command is queued). Fails when no authentication
    /// method is available or the local description breaks the spec's rules.
    pub fn new(cfg: ClientConfig) -> Result<Client, String> {
        if cfg.auth.available().is_empty() {
            return Err("No authentication methods available for negotiation (set IMPI_AUTH_KEY, or IMPI_AUTH_NONE where the network is trusted).".into());
        }
        if cfg.rank >= crate::server::MAX_CLIENTS {
            return Err(format!(
                "client rank {} (a job has at most {} clients)",
                cfg.rank,
                crate::server::MAX_CLIENTS
            ));
        }
        cfg.local.validate()?;
        let labels = cfg.local.labels();
        let masks: Vec<u8> = cfg
            .auth
            .masks()
            .iter()
            .flat_map(|m| m.to_be_bytes())
            .collect();
        let out = encode_cmd(crate::wire::CMD_AUTH, &masks);
        Ok(Client {
            cfg,
            out,
            inbox: Inbox::default(),
            stage: Stage::Auth,
            method: None,
            size: None,
            labels,
            pending: 0,
            received: Vec::new(),
            job: None,
            ignored_commands: Vec::new(),
        })
    }

    /// Bytes to write to the server now.
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// The method the server chose, once known.
    pub fn method(&self) -> Option<u32> {
        self.method
    }

    /// The job, once the server's DONE has arrived.
    pub fn job(&self) -> Option<&Job> {
        self.job.as_ref()
    }

    /// Commands from the server this client did not understand and skipped.
    pub fn ignored_commands(&self) -> &[String] {
        &self.ignored_commands
    }

    /// Queues FINI: all of this client's procs have exited successfully and its host
    /// connections are closed (spec 2.4).
    pub fn finish(&mut self) -> Result<(), ProtocolError> {
        if self.stage != Stage::Ready {
            return Err(ProtocolError::new(
                "FINI before the startup exchange completed",
            ));
        }
        self.out
            .extend_from_slice(&encode_cmd(crate::wire::CMD_FINI, &[]));
        self.stage = Stage::Finished;
        Ok(())
    }

    /// What the server closing the connection means now.
    pub fn closed(&self) -> ProtocolError {
        ProtocolError::new(match self.stage {
            Stage::Finished => {
                return ProtocolError::new("server closed the connection after FINI (normal)")
            }
            Stage::Auth | Stage::AuthFollowOn(_) => {
                "Server disconnected during authentication (no common authentication method?)"
                    .to_string()
            }
            Stage::Impi if self.method == Some(AUTH_KEY) => {
                "Server disconnected (wrong authentication key? or the job was aborted)".to_string()
            }
            Stage::Ready => {
                "Server disconnected while the job was running (the job was aborted)".to_string()
            }
            s => format!("Server disconnected during startup ({s:?})"),
        })
    }

    /// Bytes arrived from the server.
    pub fn received(&mut self, bytes: &[u8]) -> Result<(), ProtocolError> {
        self.inbox.push(bytes);
        loop {
            match self.stage {
                Stage::Auth => {
                    let Some(b) = self.inbox.take(SERVER_AUTH_LEN) else {
                        return Ok(());
                    };
                    let sa = ServerAuth::decode(&b);
                    let which = u32::try_from(sa.which)
                        .ok()
                        .filter(|m| self.cfg.auth.available().contains(m));
                    let Some(which) = which else {
                        return Err(ProtocolError::new(format!(
                            "server chose authentication method {}, which this client did not offer",
                            sa.which
                        )));
                    };
                    if sa.len < 0 || sa.len as usize > auth::MAX_AUTH_PAYLOAD {
                        return Err(ProtocolError::new(format!(
                            "IMPI_Server_auth with len {}",
                            sa.len
                        )));
                    }
                    self.method = Some(which);
                    self.stage = Stage::AuthFollowOn(sa.len as usize);
                }
                Stage::AuthFollowOn(n) => {
                    // Neither mandated method has follow-on messages; skip any.
                    if self.inbox.take(n).is_none() {
                        return Ok(());
                    }
                    match self.method {
                        Some(AUTH_KEY) => {
                            let key = self.cfg.auth.key.expect("KEY offered without a key");
                            self.out.extend_from_slice(&key.to_be_bytes());
                        }
                        Some(AUTH_NONE) => {}
                        _ => unreachable!(),
                    }
                    if self.cfg.local.host_auth {
                        let data = crate::extension::label_data(self.method == Some(AUTH_KEY));
                        let at = self
                            .labels
                            .partition_point(|(l, _)| *l < crate::extension::LABEL_HOST_AUTH);
                        self.labels
                            .insert(at, (crate::extension::LABEL_HOST_AUTH, data));
                    }
                    self.out.extend_from_slice(&encode_cmd(
                        CMD_IMPI,
                        &(self.cfg.rank as i32).to_be_bytes(),
                    ));
                    self.stage = Stage::Impi;
                }
                Stage::Impi | Stage::Coll | Stage::Done | Stage::Ready | Stage::Finished => {
                    let Some(h) = self.inbox.peek(CMD_HEADER_LEN) else {
                        return Ok(());
                    };
                    let h = CmdHeader::decode(h);
                    if h.len < 0 || h.len as usize > MAX_SERVER_PAYLOAD {
                        return Err(ProtocolError::new(format!(
                            "server sent {} with len {}",
                            command_name(h.cmd),
                            h.len
                        )));
                    }
                    let Some(all) = self.inbox.take(CMD_HEADER_LEN + h.len as usize) else {
                        return Ok(());
                    };
                    self.command(h.cmd, &all[CMD_HEADER_LEN..])?;
                }
            }
        }
    }

    fn send_next_label(&mut self) {
        let (l, d) = &self.labels[self.pending];
        self.out.extend_from_slice(&encode_client_coll(*l, d));
    }

    fn command(&mut self, cmd: i32, payload: &[u8]) -> Result<(), ProtocolError> {
        let bad = |what: String| Err(ProtocolError::new(what));
        match (cmd, self.stage) {
            (CMD_IMPI, Stage::Impi) => {
                if payload.len() != 4 {
                    return bad(format!(
                        "server's IMPI reply has len {} (must be 4)",
                        payload.len()
                    ));
                }
                let size = i32::from_be_bytes(payload.try_into().unwrap());
                if size <= 0
                    || size as u32 > crate::server::MAX_CLIENTS
                    || self.cfg.rank >= size as u32
                {
                    return bad(format!(
                        "server says the job has {size} clients (1 to {}, and more than this client's rank {})",
                        crate::server::MAX_CLIENTS,
                        self.cfg.rank
                    ));
                }
                self.size = Some(size as u32);
                self.stage = Stage::Coll;
                self.send_next_label();
            }
            (CMD_COLL, Stage::Coll | Stage::Done) => {
                let c = Collated::decode(payload)?;
                if let Some(prev) = self.received.last() {
                    if c.label <= prev.label {
                        return bad(format!(
                            "server broadcast {} after {} (labels must ascend)",
                            label_name(c.label),
                            label_name(prev.label)
                        ));
                    }
                }
                let n = self.size.unwrap();
                if n < 32 && c.client_mask >> n != 0 {
                    return bad(format!(
                        "server broadcast {} with client mask 0x{:x} for {n} clients",
                        label_name(c.label),
                        c.client_mask
                    ));
                }
                let mine = self.labels.get(self.pending).map(|l| l.0);
                if mine == Some(c.label) {
                    if c.client_mask & (1 << self.cfg.rank) == 0 {
                        return bad(format!(
                            "server broadcast {} without this client's bit in the mask 0x{:x}",
                            label_name(c.label),
                            c.client_mask
                        ));
                    }
                    self.pending += 1;
                    if self.pending < self.labels.len() {
                        self.send_next_label();
                    } else {
                        self.out.extend_from_slice(&encode_cmd(CMD_DONE, &[]));
                        self.stage = Stage::Done;
                    }
                } else if mine.is_some_and(|m| c.label > m) {
                    return bad(format!(
                        "server broadcast {} before {}, which this client submitted",
                        label_name(c.label),
                        label_name(mine.unwrap())
                    ));
                } else if c.client_mask & (1 << self.cfg.rank) != 0 {
                    return bad(format!(
                        "server broadcast {} with this client's bit set, but it never submitted it",
                        label_name(c.label)
                    ));
                }
                self.received.push(c);
            }
            (CMD_DONE, Stage::Done) => {
                if !payload.is_empty() {
                    return bad(format!(
                        "server's DONE has len {} (must be 0)",
                        payload.len()
                    ));
                }
                let labels = std::mem::take(&mut self.received);
                self.job = Some(Job::from_collated(
                    labels,
                    self.cfg.rank,
                    self.size.unwrap(),
                )?);
                self.stage = Stage::Ready;
            }
            (CMD_IMPI | CMD_COLL | CMD_DONE, s) => {
                return bad(format!(
                    "server sent {} while this client was at {s:?}",
                    command_name(cmd)
                ));
            }
            _ => {
                // Clients ignore commands they do not understand (spec 2.3.5).
                self.ignored_commands.push(format!(
                    "{} ({} bytes)",
                    command_name(cmd),
                    payload.len()
                ));
            }
        }
        Ok(())
    }
}
