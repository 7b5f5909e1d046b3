//! PMI-1 ("simple PMI") wire format: one message per line, `cmd=NAME key=value ...\n`.
//!
//! Attributes are separated by spaces. In values a backslash escapes the next byte (the
//! convention of current MPICH), so a value may contain spaces; this encoder escapes
//! spaces, tabs and backslashes and nothing else, so ordinary values travel unchanged and older
//! peers that know no escaping read them as written. Newlines and NUL bytes cannot be
//! carried at all.
//!
//! The multi-line form used for spawn (`mcmd=spawn\nkey=value\n...endcmd\n`) is parsed by
//! [`parse_mcmd`]; each line after the first holds one attribute whose value runs to the
//! end of the line.

use crate::error::CodecError;
use crate::limits::{MAX_ATTRS, MAX_MESSAGE_LEN};
use crate::message::{check_attr_name, Message};

/// Encodes `msg` as one PMI-1 line, including the trailing newline.
pub fn encode(msg: &Message) -> Result<Vec<u8>, CodecError> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"cmd=");
    push_value(&mut out, msg.cmd())?;
    for (k, v) in msg.attrs() {
        check_attr_name(k)?;
        out.push(b' ');
        out.extend_from_slice(k.as_bytes());
        out.push(b'=');
        push_value(&mut out, v)?;
    }
    out.push(b'\n');
    if out.len() > MAX_MESSAGE_LEN {
        return Err(CodecError::new(format!(
            "PMI-1 line of {} bytes exceeds the limit of {MAX_MESSAGE_LEN}",
            out.len()
        )));
    }
    Ok(out)
}

fn push_value(out: &mut Vec<u8>, v: &str) -> Result<(), CodecError> {
    for &b in v.as_bytes() {
        match b {
            b'\n' | b'\r' | 0 => {
                return Err(CodecError::new(format!(
                    "value {v:?} contains a byte (0x{b:02x}) that PMI-1 cannot carry"
                )))
            }
            b' ' | b'\t' | b'\\' => {
                out.push(b'\\');
                out.push(b);
            }
            _ => out.push(b),
        }
    }
    Ok(())
}

fn utf8(bytes: Vec<u8>, what: &str) -> Result<String, CodecError> {
    String::from_utf8(bytes).map_err(|_| CodecError::new(format!("{what} is not valid UTF-8")))
}

/// Parses one PMI-1 line (without its newline; a trailing `\r` is tolerated).
pub fn parse_line(line: &[u8]) -> Result<Message, CodecError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > MAX_MESSAGE_LEN {
        return Err(CodecError::new("PMI-1 line too long"));
    }
    if !line.starts_with(b"cmd=") {
        return Err(CodecError::new(format!(
            "PMI-1 line does not start with \"cmd=\": {:?}",
            preview(line)
        )));
    }
    let mut msg: Option<Message> = None;
    let mut i = 0;
    while i < line.len() {
        if line[i] == b' ' || line[i] == b'\t' {
            i += 1;
            continue;
        }
        // One token: bytes up to the next unescaped space.
        let mut key = Vec::new();
        while i < line.len() && line[i] != b'=' && line[i] != b' ' && line[i] != b'\t' {
            if line[i] == 0 {
                return Err(CodecError::new("NUL byte in PMI-1 line"));
            }
            key.push(line[i]);
            i += 1;
        }
        let mut value = Vec::new();
        if i < line.len() && line[i] == b'=' {
            i += 1;
            while i < line.len() && line[i] != b' ' && line[i] != b'\t' {
                match line[i] {
                    0 => return Err(CodecError::new("NUL byte in PMI-1 line")),
                    b'\\' if i + 1 < line.len() => {
                        value.push(line[i + 1]);
                        i += 2;
                    }
                    b => {
                        value.push(b);
                        i += 1;
                    }
                }
            }
        }
        let key = utf8(key, "attribute name")?;
        check_attr_name(&key)?;
        let value = utf8(value, "attribute value")?;
        match msg.as_mut() {
            None => {
                // The first token is cmd=NAME (checked by the prefix test above).
                if value.is_empty() {
                    return Err(CodecError::new("empty command name"));
                }
                msg = Some(Message::new(value));
            }
            Some(m) => {
                if m.attrs().len() >= MAX_ATTRS {
                    return Err(CodecError::new("too many attributes in PMI-1 line"));
                }
                m.push(key, value);
            }
        }
    }
    msg.ok_or_else(|| CodecError::new("empty PMI-1 line"))
}

/// Parses a whole `mcmd=` block: the text from `mcmd=` up to and including the line
/// `endcmd` (newlines included, the final one optional).
pub fn parse_mcmd(block: &[u8]) -> Result<Message, CodecError> {
    if block.len() > MAX_MESSAGE_LEN {
        return Err(CodecError::new("PMI-1 mcmd block too long"));
    }
    let mut lines = block.split(|&b| b == b'\n');
    let first = lines.next().unwrap_or_default();
    let first = first.strip_suffix(b"\r").unwrap_or(first);
    let name = first
        .strip_prefix(b"mcmd=")
        .ok_or_else(|| CodecError::new("mcmd block does not start with \"mcmd=\""))?;
    let name = utf8(name.to_vec(), "command name")?;
    if name.is_empty() || name.contains(' ') {
        return Err(CodecError::new(format!("bad mcmd command name {name:?}")));
    }
    let mut msg = Message::new(name);
    let mut ended = false;
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if ended {
            if line.is_empty() {
                continue;
            }
            return Err(CodecError::new("data after endcmd in mcmd block"));
        }
        if line == b"endcmd" {
            ended = true;
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let eq = line.iter().position(|&b| b == b'=').ok_or_else(|| {
            CodecError::new(format!("mcmd line without '=': {:?}", preview(line)))
        })?;
        let key = utf8(line[..eq].to_vec(), "attribute name")?;
        check_attr_name(&key)?;
        if line.contains(&0) {
            return Err(CodecError::new("NUL byte in mcmd block"));
        }
        let value = utf8(line[eq + 1..].to_vec(), "attribute value")?;
        if msg.attrs().len() >= MAX_ATTRS {
            return Err(CodecError::new("too many attributes in mcmd block"));
        }
        msg.push(key, value);
    }
    if !ended {
        return Err(CodecError::new("mcmd block without endcmd"));
    }
    Ok(msg)
}

/// A short printable rendering of hostile bytes for error messages.
pub(crate) fn preview(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(48)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if bytes.len() > cut.len() {
        s.push_str("...");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_simple() {
        let m = Message::new("put")
            .with("kvsname", "kvs_1")
            .with("key", "k0")
            .with("value", "v0");
        assert_eq!(
            encode(&m).unwrap(),
            b"cmd=put kvsname=kvs_1 key=k0 value=v0\n".to_vec()
        );
    }

    #[test]
    fn parse_hydra_responses() {
        let m = parse_line(b"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024").unwrap();
        assert_eq!(m.cmd(), "maxes");
        assert_eq!(m.get_num::<u32>("vallen_max"), Ok(Some(1024)));
        let m = parse_line(b"cmd=get_result rc=0 msg=success value=(vector,(0,1,1))").unwrap();
        assert_eq!(m.get("value"), Some("(vector,(0,1,1))"));
        let m = parse_line(b"cmd=barrier_out").unwrap();
        assert_eq!(m.cmd(), "barrier_out");
        assert!(m.attrs().is_empty());
        // Values may contain '=' and ';' and runs of spaces separate attributes.
        let m = parse_line(b"cmd=x   a=b=c  d=;e\r").unwrap();
        assert_eq!(m.get("a"), Some("b=c"));
        assert_eq!(m.get("d"), Some(";e"));
    }

    #[test]
    fn escapes_round_trip() {
        let m = Message::new("abort")
            .with("exitcode", 3)
            .with("message", "bad thing \\ happened");
        let wire = encode(&m).unwrap();
        assert_eq!(
            wire,
            b"cmd=abort exitcode=3 message=bad\\ thing\\ \\\\\\ happened\n".to_vec()
        );
        assert_eq!(parse_line(&wire[..wire.len() - 1]).unwrap(), m);
    }

    #[test]
    fn rejects_bad_lines() {
        assert!(parse_line(b"").is_err());
        assert!(parse_line(b"foo=bar").is_err());
        assert!(parse_line(b"cmd=").is_err());
        assert!(parse_line(b"cmd=put a\0=b").is_err());
        assert!(parse_line(b"cmd=put =b").is_err());
        assert!(parse_line(b"cmd=put k=\xff").is_err());
        assert!(encode(&Message::new("put").with("value", "a\nb")).is_err());
        assert!(encode(&Message::new("put").with("bad key", "v")).is_err());
    }

    #[test]
    fn key_without_value() {
        let m = parse_line(b"cmd=x flag").unwrap();
        assert_eq!(m.get("flag"), Some(""));
    }

    #[test]
    fn mcmd_block() {
        let b = b"mcmd=spawn\nnprocs=2\nexecname=./a b\ntotspawns=1\nendcmd\n";
        let m = parse_mcmd(b).unwrap();
        assert_eq!(m.cmd(), "spawn");
        assert_eq!(m.get("execname"), Some("./a b"));
        assert!(parse_mcmd(b"mcmd=spawn\nnprocs=2\n").is_err());
        assert!(parse_mcmd(b"mcmd=spawn\nnoequals\nendcmd\n").is_err());
        assert!(parse_mcmd(b"cmd=spawn\nendcmd\n").is_err());
    }
}
