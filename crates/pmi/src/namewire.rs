//! The line protocol of the standalone name server (`oxmpi-nameserver`), sans-IO: one
//! request line and one reply line per connection.
//!
//! Fields are separated by a tab, which names cannot contain (the name table refuses
//! control characters), so names with spaces travel unchanged:
//! - requests: `publish\tSERVICE\tPORT`, `lookup\tSERVICE`, `unpublish\tSERVICE`;
//! - replies: `ok`, `ok\tPORT` (lookup), `err\tTOKEN` (a [`NameError::token`]).
//!
//! Every line ends with `\n` and is at most [`MAX_LINE`] bytes. [`read_line`] reads one
//! from whatever stream the caller owns (this module opens none).

use crate::names::{NameError, NameService, MAX_NAME_LEN};
use std::io::{self, BufRead, Read};

/// Longest line, newline included.
pub const MAX_LINE: usize = 2 * MAX_NAME_LEN + 32;

/// One request to the name server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Publish { service: String, port: String },
    Lookup { service: String },
    Unpublish { service: String },
}

/// What a request gets: the port for a lookup, nothing for the others.
pub type Reply = Result<Option<String>, NameError>;

impl Request {
    /// The request as one line.
    pub fn encode(&self) -> String {
        match self {
            Request::Publish { service, port } => format!("publish\t{service}\t{port}\n"),
            Request::Lookup { service } => format!("lookup\t{service}\n"),
            Request::Unpublish { service } => format!("unpublish\t{service}\n"),
        }
    }

    /// Parses a request line (without its newline); `None` when it is not one.
    pub fn parse(line: &str) -> Option<Request> {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["publish", s, p] => Some(Request::Publish {
                service: (*s).into(),
                port: (*p).into(),
            }),
            ["lookup", s] => Some(Request::Lookup {
                service: (*s).into(),
            }),
            ["unpublish", s] => Some(Request::Unpublish {
                service: (*s).into(),
            }),
            _ => None,
        }
    }

    /// Answers the request from `names`.
    pub fn answer(&self, names: &mut dyn NameService) -> Reply {
        match self {
            Request::Publish { service, port } => names.publish(service, port).map(|()| None),
            Request::Lookup { service } => names.lookup(service).map(Some),
            Request::Unpublish { service } => names.unpublish(service).map(|()| None),
        }
    }
}

/// A reply as one line.
pub fn encode_reply(r: &Reply) -> String {
    match r {
        Ok(None) => "ok\n".into(),
        Ok(Some(p)) => format!("ok\t{p}\n"),
        Err(e) => format!("err\t{}\n", e.token()),
    }
}

/// Parses a reply line (without its newline); `None` when it is not one.
pub fn parse_reply(line: &str) -> Option<Reply> {
    match line.split_once('\t') {
        None if line == "ok" => Some(Ok(None)),
        Some(("ok", p)) => Some(Ok(Some(p.to_owned()))),
        Some(("err", t)) => NameError::from_token(t).map(Err),
        _ => None,
    }
}

/// Reads one line of at most [`MAX_LINE`] bytes, returned without its newline; a longer
/// line, end of stream before the newline, or invalid UTF-8 is an error.
pub fn read_line(r: &mut impl BufRead) -> io::Result<String> {
    let mut buf = Vec::new();
    r.take(MAX_LINE as u64).read_until(b'\n', &mut buf)?;
    if buf.pop() != Some(b'\n') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "line too long or cut short",
        ));
    }
    String::from_utf8(buf).map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::NameTable;

    #[test]
    fn requests_and_replies_round_trip() {
        let mut t = NameTable::default();
        let reqs = [
            Request::Publish {
                service: "my service".into(),
                port: "tag#0$127.0.0.1:5000".into(),
            },
            Request::Lookup {
                service: "my service".into(),
            },
            Request::Unpublish {
                service: "my service".into(),
            },
            Request::Unpublish {
                service: "my service".into(),
            },
        ];
        let want = [
            Ok(None),
            Ok(Some("tag#0$127.0.0.1:5000".to_owned())),
            Ok(None),
            Err(NameError::UnknownService),
        ];
        for (r, w) in reqs.iter().zip(want) {
            let line = r.encode();
            let back = Request::parse(line.trim_end_matches('\n')).unwrap();
            assert_eq!(&back, r);
            let reply = back.answer(&mut t);
            assert_eq!(reply, w);
            let rl = encode_reply(&reply);
            assert_eq!(parse_reply(rl.trim_end_matches('\n')), Some(w));
        }
    }

    #[test]
    fn garbage_is_not_a_request_or_reply() {
        assert_eq!(Request::parse("publish\tonly"), None);
        assert_eq!(Request::parse("drop\tx"), None);
        assert_eq!(Request::parse(""), None);
        assert_eq!(parse_reply("err\tno_such_token"), None);
        assert_eq!(parse_reply("okay"), None);
        let mut r = io::Cursor::new(b"ok\tp\nrest".to_vec());
        assert_eq!(read_line(&mut r).unwrap(), "ok\tp");
        assert!(read_line(&mut r).is_err());
        let long = vec![b'x'; MAX_LINE + 1];
        assert!(read_line(&mut io::Cursor::new(long)).is_err());
    }
}
