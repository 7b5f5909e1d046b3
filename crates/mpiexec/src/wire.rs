//! The protocol between the head `mpiexec` and its proxies, after authentication:
//! frames of `u32 LE length | u8 type | body`. Sans-IO; the decoder treats input as
//! hostile (bounded lengths, truncation and unknown types are errors, never panics).

use std::fmt;

/// Largest frame body accepted.
pub const MAX_FRAME: usize = 8 << 20;

/// What a proxy runs: sent once by the head after authentication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxySpec {
    pub kvsname: String,
    pub secret: String,
    pub size: u32,
    pub apps: Vec<AppRun>,
    /// (world rank, application index), in the order to start them.
    pub ranks: Vec<(u32, u32)>,
    /// Rank 0 runs here and reads mpiexec's stdin.
    pub stdin_rank0: bool,
    /// The job was started by a spawn (its ranks see `PMI_SPAWNED=1`).
    pub spawned: bool,
}

/// One application section as a proxy needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppRun {
    pub program: String,
    pub args: Vec<String>,
    /// The complete environment of its ranks (before the PMI variables).
    pub env: Vec<(String, String)>,
    pub wdir: Option<String>,
}

/// One message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// Head → proxy: the job.
    Spec(ProxySpec),
    /// Either way: bytes of a rank's PMI connection.
    Pmi { rank: u32, data: Vec<u8> },
    /// Proxy → head: output of a rank (stream 1 stdout, 2 stderr).
    Out {
        rank: u32,
        stream: u8,
        data: Vec<u8>,
    },
    /// Proxy → head: a rank started.
    Started { rank: u32, pid: i32 },
    /// Proxy → head: a rank ended (signal: killed by that signal, else exit code).
    Exited {
        rank: u32,
        signaled: bool,
        code: i32,
    },
    /// Proxy → head: a rank could not be started.
    LaunchFailed { rank: u32, error: String },
    /// Head → proxy: send `signal` to the local ranks.
    Kill { signal: i32 },
    /// Head → proxy: input for rank 0 (empty: end of input).
    Stdin { data: Vec<u8> },
}

/// A protocol violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

struct R<'a>(&'a [u8]);

impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.0.len() < n {
            return Err(WireError("truncated frame".into()));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn i32(&mut self) -> Result<i32, WireError> {
        Ok(self.u32()? as i32)
    }
    fn bytes(&mut self) -> Result<Vec<u8>, WireError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn str(&mut self) -> Result<String, WireError> {
        String::from_utf8(self.bytes()?).map_err(|_| WireError("string is not UTF-8".into()))
    }
    /// A count of items each taking at least `min` bytes (bounds allocations).
    fn count(&mut self, min: usize) -> Result<usize, WireError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.0.len() {
            return Err(WireError("count exceeds the frame".into()));
        }
        Ok(n)
    }
}

/// Encodes one frame.
pub fn encode(m: &Msg) -> Vec<u8> {
    let mut w = W(vec![0, 0, 0, 0]);
    match m {
        Msg::Spec(s) => {
            w.u8(1);
            w.str(&s.kvsname);
            w.str(&s.secret);
            w.u32(s.size);
            w.u8(s.stdin_rank0 as u8 | (s.spawned as u8) << 1);
            w.u32(s.apps.len() as u32);
            for a in &s.apps {
                w.str(&a.program);
                w.u32(a.args.len() as u32);
                for x in &a.args {
                    w.str(x);
                }
                w.u32(a.env.len() as u32);
                for (k, v) in &a.env {
                    w.str(k);
                    w.str(v);
                }
                match &a.wdir {
                    Some(d) => {
                        w.u8(1);
                        w.str(d);
                    }
                    None => w.u8(0),
                }
            }
            w.u32(s.ranks.len() as u32);
            for (r, a) in &s.ranks {
                w.u32(*r);
                w.u32(*a);
            }
        }
        Msg::Pmi { rank, data } => {
            w.u8(2);
            w.u32(*rank);
            w.bytes(data);
        }
        Msg::Out { rank, stream, data } => {
            w.u8(3);
            w.u32(*rank);
            w.u8(*stream);
            w.bytes(data);
        }
        Msg::Started { rank, pid } => {
            w.u8(4);
            w.u32(*rank);
            w.i32(*pid);
        }
        Msg::Exited {
            rank,
            signaled,
            code,
        } => {
            w.u8(5);
            w.u32(*rank);
            w.u8(*signaled as u8);
            w.i32(*code);
        }
        Msg::LaunchFailed { rank, error } => {
            w.u8(6);
            w.u32(*rank);
            w.str(error);
        }
        Msg::Kill { signal } => {
            w.u8(7);
            w.i32(*signal);
        }
        Msg::Stdin { data } => {
            w.u8(8);
            w.bytes(data);
        }
    }
    let n = (w.0.len() - 4) as u32;
    w.0[..4].copy_from_slice(&n.to_le_bytes());
    w.0
}

fn decode_body(b: &[u8]) -> Result<Msg, WireError> {
    let mut r = R(b);
    let m = match r.u8()? {
        1 => {
            let kvsname = r.str()?;
            let secret = r.str()?;
            let size = r.u32()?;
            let flags = r.u8()?;
            let (stdin_rank0, spawned) = (flags & 1 != 0, flags & 2 != 0);
            let napps = r.count(13)?;
            let mut apps = Vec::with_capacity(napps);
            for _ in 0..napps {
                let program = r.str()?;
                let nargs = r.count(4)?;
                let args = (0..nargs).map(|_| r.str()).collect::<Result<_, _>>()?;
                let nenv = r.count(8)?;
                let env = (0..nenv)
                    .map(|_| Ok((r.str()?, r.str()?)))
                    .collect::<Result<_, WireError>>()?;
                let wdir = if r.u8()? != 0 { Some(r.str()?) } else { None };
                apps.push(AppRun {
                    program,
                    args,
                    env,
                    wdir,
                });
            }
            let nranks = r.count(8)?;
            let mut ranks = Vec::with_capacity(nranks);
            for _ in 0..nranks {
                let rank = r.u32()?;
                let app = r.u32()?;
                if rank >= size || app as usize >= apps.len() {
                    return Err(WireError(format!(
                        "rank {rank} / application {app} out of range"
                    )));
                }
                ranks.push((rank, app));
            }
            Msg::Spec(ProxySpec {
                kvsname,
                secret,
                size,
                apps,
                ranks,
                stdin_rank0,
                spawned,
            })
        }
        2 => Msg::Pmi {
            rank: r.u32()?,
            data: r.bytes()?,
        },
        3 => Msg::Out {
            rank: r.u32()?,
            stream: r.u8()?,
            data: r.bytes()?,
        },
        4 => Msg::Started {
            rank: r.u32()?,
            pid: r.i32()?,
        },
        5 => Msg::Exited {
            rank: r.u32()?,
            signaled: r.u8()? != 0,
            code: r.i32()?,
        },
        6 => Msg::LaunchFailed {
            rank: r.u32()?,
            error: r.str()?,
        },
        7 => Msg::Kill { signal: r.i32()? },
        8 => Msg::Stdin { data: r.bytes()? },
        t => return Err(WireError(format!("unknown message type {t}"))),
    };
    if !r.0.is_empty() {
        return Err(WireError("trailing bytes in frame".into()));
    }
    Ok(m)
}

/// Accumulates received bytes and cuts them into messages.
#[derive(Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    pub fn push(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    /// The next complete message, if any.
    pub fn next(&mut self) -> Result<Option<Msg>, WireError> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let n = u32::from_le_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if n == 0 || n > MAX_FRAME {
            return Err(WireError(format!("frame length {n} out of range")));
        }
        if self.buf.len() < 4 + n {
            return Ok(None);
        }
        let m = decode_body(&self.buf[4..4 + n]);
        self.buf.drain(..4 + n);
        m.map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Msg> {
        vec![
            Msg::Spec(ProxySpec {
                kvsname: "kvs".into(),
                secret: "s3".into(),
                size: 4,
                apps: vec![AppRun {
                    program: "./a".into(),
                    args: vec!["x".into(), "".into()],
                    env: vec![("A".into(), "1=2".into())],
                    wdir: Some("/tmp".into()),
                }],
                ranks: vec![(1, 0), (3, 0)],
                stdin_rank0: false,
                spawned: true,
            }),
            Msg::Pmi {
                rank: 2,
                data: b"cmd=barrier_in\n".to_vec(),
            },
            Msg::Out {
                rank: 1,
                stream: 2,
                data: vec![0, 255],
            },
            Msg::Started { rank: 1, pid: 77 },
            Msg::Exited {
                rank: 1,
                signaled: true,
                code: 9,
            },
            Msg::LaunchFailed {
                rank: 0,
                error: "nope".into(),
            },
            Msg::Kill { signal: 15 },
            Msg::Stdin { data: vec![] },
        ]
    }

    #[test]
    fn round_trip_in_pieces() {
        let mut bytes = Vec::new();
        for m in all() {
            bytes.extend(encode(&m));
        }
        let mut d = Decoder::default();
        let mut got = Vec::new();
        for chunk in bytes.chunks(3) {
            d.push(chunk);
            while let Some(m) = d.next().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got, all());
    }

    #[test]
    fn hostile_frames() {
        let mut d = Decoder::default();
        d.push(&[0, 0, 0, 0]);
        assert!(d.next().is_err());
        let mut d = Decoder::default();
        d.push(&u32::MAX.to_le_bytes());
        assert!(d.next().is_err());
        // Truncated body, unknown type, huge counts.
        for body in [
            vec![2u8, 1, 0],
            vec![99u8],
            vec![
                1u8, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 255, 255, 255, 255,
            ],
        ] {
            let mut f = (body.len() as u32).to_le_bytes().to_vec();
            f.extend(body);
            let mut d = Decoder::default();
            d.push(&f);
            assert!(d.next().is_err());
        }
        // Random garbage never panics.
        let mut x: u32 = 12345;
        for _ in 0..2000 {
            let mut f = Vec::new();
            for _ in 0..40 {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                f.push((x >> 16) as u8);
            }
            f[..4].copy_from_slice(&36u32.to_le_bytes());
            let mut d = Decoder::default();
            d.push(&f);
            let _ = d.next();
        }
    }
}
