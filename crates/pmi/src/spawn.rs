//! Spawn requests (`MPI_Comm_spawn`, `MPI_Comm_spawn_multiple`) as the process manager
//! receives them, in the two forms MPICH's Hydra defines:
//!
//! - PMI-1: one multi-line block per command of the spawn
//!   (`mcmd=spawn`, `nprocs`, `execname`, `totspawns`, `spawnssofar` counting from 1,
//!   `argcnt` with `arg1`..`argN`, `preput_num` with `preput_key_i`/`preput_val_i`,
//!   `info_num` with `info_key_i`/`info_val_i`, `endcmd`); the server answers
//!   `cmd=spawn_result` once, after the last block.
//! - PMI-2: one `spawn` command: `ncmds`, `preputcount` with `ppkeyI`/`ppvalI`, then per
//!   command `subcmd`, `maxprocs`, `argc` with `argvI`, `infokeycount` with
//!   `infokeyI`/`infovalI`; answered by `spawn-response`.
//!
//! The preput pairs go into the new job's key-value space before it starts (MPICH's
//! parents pass the address their root listens on this way). Sans-IO: parsing and the
//! answers only.

use crate::error::CodecError;
use crate::message::Message;

/// Most commands of one spawn and most processes it may ask for.
pub const MAX_SPAWN_COMMANDS: usize = 1024;
/// Most processes of one spawn.
pub const MAX_SPAWN_PROCS: u64 = 1 << 16;
/// Most arguments, info pairs or preput pairs per command.
const MAX_LIST: usize = 4096;

/// One command of a spawn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpawnApp {
    /// The program, as given (a path or a name to find in `PATH`).
    pub command: String,
    /// Number of processes to start.
    pub maxprocs: u32,
    /// Arguments after the program name.
    pub args: Vec<String>,
    /// Info pairs (`host`, `wdir`, `path`, `soft`, ...).
    pub info: Vec<(String, String)>,
}

impl SpawnApp {
    /// The value of info key `key`.
    pub fn info_value(&self, key: &str) -> Option<&str> {
        self.info
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// A whole spawn request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpawnRequest {
    pub apps: Vec<SpawnApp>,
    /// Pairs to put into the new job's key-value space before it starts.
    pub preput: Vec<(String, String)>,
}

impl SpawnRequest {
    /// Processes asked for, over all commands.
    pub fn total_procs(&self) -> u64 {
        self.apps.iter().map(|a| u64::from(a.maxprocs)).sum()
    }
}

fn bad(what: impl Into<String>) -> CodecError {
    CodecError(what.into())
}

fn count(msg: &Message, key: &str) -> Result<usize, CodecError> {
    let n: usize = msg.require_num(key)?;
    if n > MAX_LIST {
        return Err(bad(format!("{key}={n} is more than {MAX_LIST}")));
    }
    Ok(n)
}

fn procs(n: i64) -> Result<u32, CodecError> {
    if n < 1 || n as u64 > MAX_SPAWN_PROCS {
        return Err(bad(format!(
            "a spawn of {n} processes (1 to {MAX_SPAWN_PROCS})"
        )));
    }
    Ok(n as u32)
}

/// One PMI-1 `mcmd=spawn` block: the command it describes, `(spawnssofar, totspawns)`
/// and the preput pairs.
pub type V1Block = (SpawnApp, (usize, usize), Vec<(String, String)>);

/// Parses one PMI-1 `mcmd=spawn` block.
pub fn parse_v1_block(msg: &Message) -> Result<V1Block, CodecError> {
    let total: usize = msg.require_num("totspawns")?;
    let sofar: usize = msg.require_num("spawnssofar")?;
    if total == 0 || total > MAX_SPAWN_COMMANDS || sofar == 0 || sofar > total {
        return Err(bad(format!(
            "spawnssofar={sofar} of totspawns={total} (1 to {MAX_SPAWN_COMMANDS})"
        )));
    }
    let mut app = SpawnApp {
        command: msg.require("execname")?.to_owned(),
        maxprocs: procs(msg.require_num("nprocs")?)?,
        ..SpawnApp::default()
    };
    if app.command.is_empty() {
        return Err(bad("empty execname"));
    }
    let argc = msg.get_num::<usize>("argcnt")?.unwrap_or(0);
    if argc > MAX_LIST {
        return Err(bad(format!("argcnt={argc} is more than {MAX_LIST}")));
    }
    for i in 1..=argc {
        app.args.push(msg.require(&format!("arg{i}"))?.to_owned());
    }
    let mut preput = Vec::new();
    if msg.get("preput_num").is_some() {
        for i in 0..count(msg, "preput_num")? {
            preput.push((
                msg.require(&format!("preput_key_{i}"))?.to_owned(),
                msg.require(&format!("preput_val_{i}"))?.to_owned(),
            ));
        }
    }
    if msg.get("info_num").is_some() {
        for i in 0..count(msg, "info_num")? {
            app.info.push((
                msg.require(&format!("info_key_{i}"))?.to_owned(),
                msg.require(&format!("info_val_{i}"))?.to_owned(),
            ));
        }
    }
    Ok((app, (sofar, total), preput))
}

/// A PMI-2 `spawn` command. Keys repeat from one command to the next (`subcmd`,
/// `maxprocs`, ...), so the attributes are read in order.
pub fn parse_v2(msg: &Message) -> Result<SpawnRequest, CodecError> {
    let attrs = msg.attrs();
    let mut i = 0;
    let mut next = |key: &str| -> Result<&str, CodecError> {
        // Skip the thread id and anything the client adds that we do not read.
        while let Some((k, v)) = attrs.get(i) {
            i += 1;
            if k == key {
                return Ok(v);
            }
            if k == "subcmd" {
                return Err(bad(format!("spawn: subcmd before {key}")));
            }
        }
        Err(bad(format!("spawn: missing {key}")))
    };
    let num = |s: &str, key: &str| -> Result<usize, CodecError> {
        let n: usize = s
            .trim()
            .parse()
            .map_err(|_| bad(format!("spawn: {key}={s:?} is not a count")))?;
        if n > MAX_LIST {
            return Err(bad(format!("spawn: {key}={n} is more than {MAX_LIST}")));
        }
        Ok(n)
    };
    let ncmds = num(next("ncmds")?, "ncmds")?;
    if ncmds == 0 || ncmds > MAX_SPAWN_COMMANDS {
        return Err(bad(format!(
            "spawn: ncmds={ncmds} (1 to {MAX_SPAWN_COMMANDS})"
        )));
    }
    let mut req = SpawnRequest::default();
    let npre = num(next("preputcount")?, "preputcount")?;
    for j in 0..npre {
        let k = next(&format!("ppkey{j}"))?.to_owned();
        let v = next(&format!("ppval{j}"))?.to_owned();
        req.preput.push((k, v));
    }
    for _ in 0..ncmds {
        let mut app = SpawnApp {
            command: next("subcmd")?.to_owned(),
            ..SpawnApp::default()
        };
        if app.command.is_empty() {
            return Err(bad("spawn: empty subcmd"));
        }
        let mp = next("maxprocs")?;
        app.maxprocs = procs(
            mp.trim()
                .parse()
                .map_err(|_| bad(format!("spawn: maxprocs={mp:?}")))?,
        )?;
        let argc = num(next("argc")?, "argc")?;
        for j in 0..argc {
            app.args.push(next(&format!("argv{j}"))?.to_owned());
        }
        let ninfo = num(next("infokeycount")?, "infokeycount")?;
        for j in 0..ninfo {
            let k = next(&format!("infokey{j}"))?.to_owned();
            let v = next(&format!("infoval{j}"))?.to_owned();
            app.info.push((k, v));
        }
        req.apps.push(app);
    }
    if req.total_procs() > MAX_SPAWN_PROCS {
        return Err(bad(format!(
            "spawn: {} processes in all (at most {MAX_SPAWN_PROCS})",
            req.total_procs()
        )));
    }
    Ok(req)
}

fn check_line(what: &str, s: &str) -> Result<(), CodecError> {
    if s.bytes().any(|b| b == b'\n' || b == b'\r' || b == 0) {
        return Err(bad(format!("{what} {s:?} contains a line break or NUL")));
    }
    Ok(())
}

/// The PMI-1 form of `req`: one `mcmd=spawn` block per command, as MPICH sends them.
pub fn v1_blocks(req: &SpawnRequest) -> Result<Vec<u8>, CodecError> {
    if req.apps.is_empty() || req.apps.len() > MAX_SPAWN_COMMANDS {
        return Err(bad(format!(
            "a spawn of {} commands (1 to {MAX_SPAWN_COMMANDS})",
            req.apps.len()
        )));
    }
    let mut out = String::new();
    for (i, app) in req.apps.iter().enumerate() {
        check_line("program", &app.command)?;
        out.push_str(&format!(
            "mcmd=spawn\nnprocs={}\nexecname={}\ntotspawns={}\nspawnssofar={}\n",
            app.maxprocs,
            app.command,
            req.apps.len(),
            i + 1
        ));
        for (j, a) in app.args.iter().enumerate() {
            check_line("argument", a)?;
            out.push_str(&format!("arg{}={a}\n", j + 1));
        }
        out.push_str(&format!(
            "argcnt={}\npreput_num={}\n",
            app.args.len(),
            req.preput.len()
        ));
        for (j, (k, v)) in req.preput.iter().enumerate() {
            check_line("preput key", k)?;
            check_line("preput value", v)?;
            out.push_str(&format!("preput_key_{j}={k}\npreput_val_{j}={v}\n"));
        }
        out.push_str(&format!("info_num={}\n", app.info.len()));
        for (j, (k, v)) in app.info.iter().enumerate() {
            check_line("info key", k)?;
            check_line("info value", v)?;
            out.push_str(&format!("info_key_{j}={k}\ninfo_val_{j}={v}\n"));
        }
        out.push_str("endcmd\n");
    }
    if out.len() > crate::limits::MAX_MESSAGE_LEN {
        return Err(bad("the spawn request is too long for PMI"));
    }
    Ok(out.into_bytes())
}

/// The PMI-2 form of `req`.
pub fn v2_request(req: &SpawnRequest) -> Message {
    let mut m = Message::new("spawn")
        .with("ncmds", req.apps.len())
        .with("preputcount", req.preput.len());
    for (j, (k, v)) in req.preput.iter().enumerate() {
        m.push(format!("ppkey{j}"), k);
        m.push(format!("ppval{j}"), v);
    }
    for app in &req.apps {
        m.push("subcmd", &app.command);
        m.push("maxprocs", app.maxprocs);
        m.push("argc", app.args.len());
        for (j, a) in app.args.iter().enumerate() {
            m.push(format!("argv{j}"), a);
        }
        m.push("infokeycount", app.info.len());
        for (j, (k, v)) in app.info.iter().enumerate() {
            m.push(format!("infokey{j}"), k);
            m.push(format!("infoval{j}"), v);
        }
    }
    m
}

/// `req` as one word of [`crate::encode_value`]'s alphabet (its PMI-2 form), for an
/// environment variable: a singleton hands its spawn request so to the launcher it
/// starts.
pub fn to_word(req: &SpawnRequest) -> Result<String, CodecError> {
    Ok(crate::encode_value(&crate::v2::encode(&v2_request(req))?))
}

/// The request [`to_word`] wrote.
pub fn from_word(w: &str) -> Result<SpawnRequest, CodecError> {
    let b = crate::decode_value(w).map_err(|e| CodecError::new(e.to_string()))?;
    let h = crate::v2::HEADER_LEN;
    if b.len() < h || crate::v2::parse_header(&b[..h])? != b.len() - h {
        return Err(CodecError::new("truncated spawn request"));
    }
    parse_v2(&crate::v2::parse_body(&b[h..])?)
}

/// A spawn that started: the new job's name and how many processes of each command
/// started (the process manager may start fewer than asked for, as the `soft` info key
/// allows: [`crate::spawn_info::Soft`]); empty `started`: all of them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Spawned {
    pub jobid: String,
    pub started: Vec<u32>,
}

impl From<&str> for Spawned {
    fn from(jobid: &str) -> Spawned {
        Spawned {
            jobid: jobid.to_owned(),
            started: Vec::new(),
        }
    }
}

/// What became of a spawn: the new job, or why it could not start.
pub type SpawnOutcome = Result<Spawned, String>;

/// The code in the answer for a process asked for but not started.
pub const NOT_STARTED: i32 = -1;

/// One code per process asked for in `req`, command after command: 0 for a process
/// started, [`NOT_STARTED`] for the rest of its command.
pub fn errcodes(req: &SpawnRequest, started: &[u32]) -> Vec<i32> {
    let mut out = Vec::new();
    for (i, app) in req.apps.iter().enumerate() {
        let s = started
            .get(i)
            .copied()
            .unwrap_or(app.maxprocs)
            .min(app.maxprocs);
        out.extend(std::iter::repeat_n(0, s as usize));
        out.extend(std::iter::repeat_n(
            NOT_STARTED,
            (app.maxprocs - s) as usize,
        ));
    }
    out
}

fn join_codes(codes: &[i32]) -> String {
    codes
        .iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The PMI-1 answer: `errcodes` has one code per process asked for ([`errcodes`]).
pub fn v1_result(outcome: &SpawnOutcome, req: &SpawnRequest) -> Message {
    match outcome {
        Ok(s) => {
            let mut codes = errcodes(req, &s.started);
            codes.truncate(MAX_SPAWN_PROCS as usize);
            Message::new("spawn_result")
                .with("rc", 0)
                .with("errcodes", join_codes(&codes))
        }
        Err(why) => Message::new("spawn_result")
            .with("rc", 1)
            .with("msg", token(why)),
    }
}

/// The PMI-2 answer: `nerrs` counts the processes not started; when there are any,
/// `errcodes` lists one code per process as in PMI-1.
pub fn v2_result(outcome: &SpawnOutcome, req: &SpawnRequest) -> Message {
    match outcome {
        Ok(s) => {
            let codes = errcodes(req, &s.started);
            let nerrs = codes.iter().filter(|&&c| c != 0).count();
            let m = Message::new("spawn-response")
                .with("rc", 0)
                .with("jobid", &s.jobid)
                .with("nerrs", nerrs);
            if nerrs > 0 {
                m.with("errcodes", join_codes(&codes))
            } else {
                m
            }
        }
        Err(why) => Message::new("spawn-response")
            .with("rc", 1)
            .with("errmsg", token(why)),
    }
}

/// The codes of an answer ([`v1_result`], [`v2_result`]) for `req`: one per process
/// asked for, 0 where it started; all 0 when the answer has none (MPICH's Hydra sends
/// none: it starts every process or fails).
pub fn answer_codes(answer: &Message, req: &SpawnRequest) -> Result<Vec<i32>, CodecError> {
    let n = req.total_procs() as usize;
    let Some(list) = answer.get("errcodes").filter(|l| !l.is_empty()) else {
        return Ok(vec![0; n]);
    };
    let codes = list
        .split(',')
        .map(|c| c.trim().parse::<i32>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| bad(format!("spawn answer: malformed errcodes {list:?}")))?;
    if codes.len() != n {
        return Err(bad(format!(
            "spawn answer: {} errcodes for {n} processes",
            codes.len()
        )));
    }
    Ok(codes)
}

/// A reason as one PMI-1 token (no spaces, `=`, `;`).
fn token(why: &str) -> String {
    why.chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '=' && c != ';' && c != '\\' {
                c
            } else {
                '_'
            }
        })
        .take(512)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1;

    #[test]
    fn pmi1_blocks_as_mpich_sends_them() {
        let block = b"mcmd=spawn\nnprocs=2\nexecname=./worker\ntotspawns=2\nspawnssofar=1\n\
arg1=--do it=yes\narg2=-x\nargcnt=2\npreput_num=1\npreput_key_0=PARENT_ROOT_PORT_NAME\n\
preput_val_0=tag#0$port#4$\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/tmp\nendcmd";
        let msg = v1::parse_mcmd(block).unwrap();
        let (app, (sofar, total), preput) = parse_v1_block(&msg).unwrap();
        assert_eq!((sofar, total), (1, 2));
        assert_eq!(app.command, "./worker");
        assert_eq!(app.maxprocs, 2);
        assert_eq!(app.args, ["--do it=yes", "-x"]);
        assert_eq!(app.info_value("wdir"), Some("/tmp"));
        assert_eq!(
            preput,
            [(
                "PARENT_ROOT_PORT_NAME".to_string(),
                "tag#0$port#4$".to_string()
            )]
        );
        let minimal =
            v1::parse_mcmd(b"mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=1\nspawnssofar=1\nendcmd")
                .unwrap();
        let (app, _, preput) = parse_v1_block(&minimal).unwrap();
        assert!(app.args.is_empty() && app.info.is_empty() && preput.is_empty());
    }

    #[test]
    fn requests_survive_a_word() {
        let req = SpawnRequest {
            apps: vec![SpawnApp {
                command: "./w;x".into(),
                maxprocs: 3,
                args: vec!["a b".into(), "".into(), "k=v;".into()],
                info: vec![("wdir".into(), "/tmp".into())],
            }],
            preput: vec![("PARENT_ROOT_PORT_NAME".into(), "oxmpi-port:1".into())],
        };
        let w = to_word(&req).unwrap();
        assert!(!w.contains(' ') && !w.contains('='));
        assert_eq!(from_word(&w).unwrap(), req);
        assert!(from_word("zz").is_err());
        assert!(from_word(&w[..w.len() - 2]).is_err());
    }

    #[test]
    fn bad_pmi1_blocks() {
        for block in [
            &b"mcmd=spawn\nnprocs=0\nexecname=a\ntotspawns=1\nspawnssofar=1\nendcmd"[..],
            b"mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=1\nspawnssofar=2\nendcmd",
            b"mcmd=spawn\nnprocs=1\ntotspawns=1\nspawnssofar=1\nendcmd",
            b"mcmd=spawn\nnprocs=1\nexecname=a\ntotspawns=1\nspawnssofar=1\nargcnt=1\nendcmd",
            b"mcmd=spawn\nnprocs=99999999\nexecname=a\ntotspawns=1\nspawnssofar=1\nendcmd",
        ] {
            let msg = v1::parse_mcmd(block).unwrap();
            assert!(
                parse_v1_block(&msg).is_err(),
                "{}",
                String::from_utf8_lossy(block)
            );
        }
    }

    #[test]
    fn pmi2_spawn_with_two_commands() {
        let m = Message::new("spawn")
            .with("thrid", "7")
            .with("ncmds", 2)
            .with("preputcount", 1)
            .with("ppkey0", "PARENT_ROOT_PORT_NAME")
            .with("ppval0", "p")
            .with("subcmd", "a")
            .with("maxprocs", 1)
            .with("argc", 1)
            .with("argv0", "x")
            .with("infokeycount", 0)
            .with("subcmd", "b")
            .with("maxprocs", 3)
            .with("argc", 0)
            .with("infokeycount", 1)
            .with("infokey0", "host")
            .with("infoval0", "localhost");
        let r = parse_v2(&m).unwrap();
        assert_eq!(r.apps.len(), 2);
        assert_eq!((r.apps[0].command.as_str(), r.apps[0].maxprocs), ("a", 1));
        assert_eq!(r.apps[0].args, ["x"]);
        assert_eq!((r.apps[1].command.as_str(), r.apps[1].maxprocs), ("b", 3));
        assert_eq!(r.apps[1].info_value("host"), Some("localhost"));
        assert_eq!(r.total_procs(), 4);
        assert_eq!(r.preput.len(), 1);
        // A command missing its argument count is malformed.
        let short = Message::new("spawn")
            .with("ncmds", 1)
            .with("preputcount", 0)
            .with("subcmd", "a")
            .with("maxprocs", 1)
            .with("infokeycount", 0);
        assert!(parse_v2(&short).is_err());
    }

    #[test]
    fn requests_round_trip() {
        let req = SpawnRequest {
            apps: vec![
                SpawnApp {
                    command: "./w".into(),
                    maxprocs: 2,
                    args: vec!["a b".into(), "c=d".into()],
                    info: vec![("wdir".into(), "/tmp".into())],
                },
                SpawnApp {
                    command: "v".into(),
                    maxprocs: 1,
                    ..SpawnApp::default()
                },
            ],
            preput: vec![("PARENT_ROOT_PORT_NAME".into(), "x".into())],
        };
        let bytes = v1_blocks(&req).unwrap();
        let mut d = crate::StreamDecoder::new(crate::Wire::Detect);
        d.push(&bytes);
        let mut back = SpawnRequest::default();
        while let Some(m) = d.next_message().unwrap() {
            assert!(m.multi_line);
            let (app, _, preput) = parse_v1_block(&m.msg).unwrap();
            back.apps.push(app);
            back.preput = preput;
        }
        assert_eq!(back, req);
        assert_eq!(parse_v2(&v2_request(&req)).unwrap(), req);
        let mut nl = req.clone();
        nl.apps[0].args[0] = "a\nb".into();
        assert!(v1_blocks(&nl).is_err());
    }

    #[test]
    fn answers() {
        let req = SpawnRequest {
            apps: vec![
                SpawnApp {
                    command: "a".into(),
                    maxprocs: 3,
                    ..SpawnApp::default()
                },
                SpawnApp {
                    command: "b".into(),
                    maxprocs: 2,
                    ..SpawnApp::default()
                },
            ],
            preput: vec![],
        };
        let ok = v1_result(&Ok("kvs_1_1".into()), &req);
        assert_eq!(
            (ok.get("rc"), ok.get("errcodes")),
            (Some("0"), Some("0,0,0,0,0"))
        );
        assert_eq!(answer_codes(&ok, &req).unwrap(), [0; 5]);
        let part = Ok(Spawned {
            jobid: "kvs_1_2".into(),
            started: vec![2, 1],
        });
        let p1 = v1_result(&part, &req);
        assert_eq!(p1.get("errcodes"), Some("0,0,-1,0,-1"));
        let p2 = v2_result(&part, &req);
        assert_eq!(
            (p2.get("nerrs"), p2.get("jobid")),
            (Some("2"), Some("kvs_1_2"))
        );
        assert_eq!(answer_codes(&p2, &req).unwrap(), [0, 0, -1, 0, -1]);
        // Hydra's answers carry no codes.
        let hydra = Message::new("spawn-response")
            .with("rc", 0)
            .with("nerrs", 0);
        assert_eq!(answer_codes(&hydra, &req).unwrap(), [0; 5]);
        let short = Message::new("spawn_result")
            .with("rc", 0)
            .with("errcodes", "0,0");
        assert!(answer_codes(&short, &req).is_err());
        let no = v1_result(&Err("no such program: ./x y".into()), &req);
        assert_eq!(no.get("rc"), Some("1"));
        assert_eq!(no.get("msg"), Some("no_such_program:_./x_y"));
        let ok2 = v2_result(&Ok("kvs_1_1".into()), &req);
        assert_eq!(ok2.get("jobid"), Some("kvs_1_1"));
        assert_eq!(ok2.get("errcodes"), None);
        assert_eq!(v2_result(&Err("x".into()), &req).get("rc"), Some("1"));
    }
}
