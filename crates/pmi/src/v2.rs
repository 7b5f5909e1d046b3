//! PMI-2 wire format: a 6-character decimal length (space padded, either side), then that
//! many bytes of `cmd=NAME;key=value;...;`.
//!
//! A `;` inside a value is written as `;;`. Keys never contain `;` or `=`; the first `=`
//! after a key starts its value.

use crate::error::CodecError;
use crate::limits::{MAX_ATTRS, MAX_MESSAGE_LEN};
use crate::message::{check_attr_name, Message};
use crate::v1::preview;

/// Length of the decimal length header.
pub const HEADER_LEN: usize = 6;

/// Encodes `msg` as one PMI-2 frame (header and body).
pub fn encode(msg: &Message) -> Result<Vec<u8>, CodecError> {
    let mut body = Vec::with_capacity(64);
    body.extend_from_slice(b"cmd=");
    push_value(&mut body, msg.cmd())?;
    body.push(b';');
    for (k, v) in msg.attrs() {
        check_attr_name(k)?;
        body.extend_from_slice(k.as_bytes());
        body.push(b'=');
        push_value(&mut body, v)?;
        body.push(b';');
    }
    if body.len() > MAX_MESSAGE_LEN || body.len() > 999_999 {
        return Err(CodecError::new(format!(
            "PMI-2 message of {} bytes exceeds the limit of {MAX_MESSAGE_LEN}",
            body.len()
        )));
    }
    let mut out = format!("{:6}", body.len()).into_bytes();
    out.extend_from_slice(&body);
    Ok(out)
}

fn push_value(out: &mut Vec<u8>, v: &str) -> Result<(), CodecError> {
    for &b in v.as_bytes() {
        match b {
            0 => return Err(CodecError::new("value contains a NUL byte")),
            b';' => out.extend_from_slice(b";;"),
            _ => out.push(b),
        }
    }
    Ok(())
}

/// Parses the 6-byte length header. Accepts left- or right-justified numbers.
pub fn parse_header(h: &[u8]) -> Result<usize, CodecError> {
    if h.len() != HEADER_LEN {
        return Err(CodecError::new("PMI-2 header must be 6 bytes"));
    }
    let bad = || {
        CodecError::new(format!(
            "PMI-2 length header {:?} is not a space-padded decimal number",
            preview(h)
        ))
    };
    let start = h.iter().position(|&b| b != b' ').ok_or_else(bad)?;
    let end = h.iter().rposition(|&b| b != b' ').map_or(start, |e| e + 1);
    let digits = &h[start..end];
    if digits.is_empty() || !digits.iter().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // At most 6 digits: cannot overflow.
    let n = digits
        .iter()
        .fold(0usize, |acc, &b| acc * 10 + usize::from(b - b'0'));
    if n > MAX_MESSAGE_LEN {
        return Err(CodecError::new(format!(
            "PMI-2 message length {n} exceeds the limit of {MAX_MESSAGE_LEN}"
        )));
    }
    Ok(n)
}

/// Parses a PMI-2 body (the bytes after the header).
pub fn parse_body(body: &[u8]) -> Result<Message, CodecError> {
    if body.len() > MAX_MESSAGE_LEN {
        return Err(CodecError::new("PMI-2 message too long"));
    }
    if !body.starts_with(b"cmd=") {
        return Err(CodecError::new(format!(
            "PMI-2 message does not start with \"cmd=\": {:?}",
            preview(body)
        )));
    }
    let mut msg: Option<Message> = None;
    let mut i = 0;
    while i < body.len() {
        let key_start = i;
        while i < body.len() && body[i] != b'=' && body[i] != b';' {
            i += 1;
        }
        let key = std::str::from_utf8(&body[key_start..i])
            .map_err(|_| CodecError::new("attribute name is not valid UTF-8"))?
            .to_owned();
        check_attr_name(&key)?;
        let mut value = Vec::new();
        if i < body.len() && body[i] == b'=' {
            i += 1;
            loop {
                if i >= body.len() {
                    break;
                }
                match body[i] {
                    0 => return Err(CodecError::new("NUL byte in PMI-2 message")),
                    b';' if body.get(i + 1) == Some(&b';') => {
                        value.push(b';');
                        i += 2;
                    }
                    b';' => {
                        i += 1;
                        break;
                    }
                    b => {
                        value.push(b);
                        i += 1;
                    }
                }
            }
        } else if i < body.len() {
            // Key without value, terminated by ';'.
            i += 1;
        }
        let value = String::from_utf8(value)
            .map_err(|_| CodecError::new("attribute value is not valid UTF-8"))?;
        match msg.as_mut() {
            None => {
                if value.is_empty() {
                    return Err(CodecError::new("empty command name"));
                }
                msg = Some(Message::new(value));
            }
            Some(m) => {
                if m.attrs().len() >= MAX_ATTRS {
                    return Err(CodecError::new("too many attributes in PMI-2 message"));
                }
                m.push(key, value);
            }
        }
    }
    msg.ok_or_else(|| CodecError::new("empty PMI-2 message"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_matches_hydra_framing() {
        let m = Message::new("kvs-put-response").with("rc", 0);
        let w = encode(&m).unwrap();
        assert_eq!(w, b"    26cmd=kvs-put-response;rc=0;".to_vec());
    }

    #[test]
    fn headers() {
        assert_eq!(parse_header(b"    26"), Ok(26));
        assert_eq!(parse_header(b"26    "), Ok(26));
        assert_eq!(parse_header(b"000026"), Ok(26));
        assert!(parse_header(b"  2 6 ").is_err());
        assert!(parse_header(b"      ").is_err());
        assert!(parse_header(b"-00001").is_err());
        assert!(parse_header(b"999999").is_err());
        assert!(parse_header(b"\t   26").is_err());
    }

    #[test]
    fn parse_slurm_and_hydra() {
        let m = parse_body(
            b"cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;",
        )
        .unwrap();
        assert_eq!(m.cmd(), "fullinit-response");
        assert_eq!(m.get_num::<u32>("rank"), Ok(Some(1)));
        assert_eq!(m.get_bool("debugged"), Some(false));
        // Missing trailing ';' is tolerated.
        let m = parse_body(b"cmd=kvs-fence-response;rc=0").unwrap();
        assert_eq!(m.get("rc"), Some("0"));
    }

    #[test]
    fn semicolon_escape_round_trip() {
        let m = Message::new("kvs-put")
            .with("key", "a")
            .with("value", "x;y;;z;");
        let w = encode(&m).unwrap();
        assert!(w.ends_with(b"value=x;;y;;;;z;;;"));
        let n = parse_header(&w[..6]).unwrap();
        assert_eq!(n, w.len() - 6);
        assert_eq!(parse_body(&w[6..]).unwrap(), m);
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_body(b"").is_err());
        assert!(parse_body(b"cmd=;").is_err());
        assert!(parse_body(b"xcmd=a;").is_err());
        assert!(parse_body(b"cmd=a;=b;").is_err());
        assert!(parse_body(b"cmd=a;k=\0;").is_err());
    }
}
