//! The protocol-neutral PMI message: a command name and an ordered list of attributes.
//! Both wire formats ([`crate::v1`], [`crate::v2`]) encode and decode this type.

use crate::error::CodecError;
use std::str::FromStr;

/// One PMI request or response, e.g. `cmd=put kvsname=k key=a value=b`.
///
/// Attribute order is kept (PMI-1 `mcmd=spawn` blocks and PMI-2 `spawn` depend on it);
/// lookups return the first attribute with a given name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    cmd: String,
    attrs: Vec<(String, String)>,
}

impl Message {
    /// A message with command `cmd` and no attributes.
    pub fn new(cmd: impl Into<String>) -> Self {
        Message {
            cmd: cmd.into(),
            attrs: Vec::new(),
        }
    }

    /// Builder form of [`Message::push`].
    pub fn with(mut self, key: impl Into<String>, value: impl ToString) -> Self {
        self.push(key, value);
        self
    }

    /// Appends an attribute.
    pub fn push(&mut self, key: impl Into<String>, value: impl ToString) {
        self.attrs.push((key.into(), value.to_string()));
    }

    /// The command name (the value of `cmd=`).
    pub fn cmd(&self) -> &str {
        &self.cmd
    }

    /// All attributes except `cmd`, in wire order.
    pub fn attrs(&self) -> &[(String, String)] {
        &self.attrs
    }

    /// The value of the first attribute named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `key`, or an error naming the command and the missing attribute.
    pub fn require(&self, key: &str) -> Result<&str, CodecError> {
        self.get(key)
            .ok_or_else(|| CodecError::new(format!("cmd={} lacks the attribute {key:?}", self.cmd)))
    }

    /// `key` parsed as a number; `Ok(None)` when absent, an error when present but invalid.
    pub fn get_num<T: FromStr>(&self, key: &str) -> Result<Option<T>, CodecError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.trim().parse::<T>().map(Some).map_err(|_| {
                CodecError::new(format!(
                    "cmd={}: attribute {key}={v:?} is not a valid number",
                    self.cmd
                ))
            }),
        }
    }

    /// `key` parsed as a number, required.
    pub fn require_num<T: FromStr>(&self, key: &str) -> Result<T, CodecError> {
        self.get_num(key)?
            .ok_or_else(|| CodecError::new(format!("cmd={} lacks the attribute {key:?}", self.cmd)))
    }

    /// `key` as a PMI boolean (`TRUE`/`FALSE`, any case; also `1`/`0`, `yes`/`no`).
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        let v = self.get(key)?;
        if v.eq_ignore_ascii_case("true") || v == "1" || v.eq_ignore_ascii_case("yes") {
            Some(true)
        } else if v.eq_ignore_ascii_case("false") || v == "0" || v.eq_ignore_ascii_case("no") {
            Some(false)
        } else {
            None
        }
    }
}

/// Checks an attribute name for either wire: non-empty, bounded, and free of the
/// separators of both formats.
pub(crate) fn check_attr_name(name: &str) -> Result<(), CodecError> {
    if name.is_empty() {
        return Err(CodecError::new("empty attribute name"));
    }
    if name.len() > crate::limits::MAX_ATTR_NAME_LEN {
        return Err(CodecError::new(format!(
            "attribute name of {} bytes exceeds the limit of {}",
            name.len(),
            crate::limits::MAX_ATTR_NAME_LEN
        )));
    }
    if let Some(c) = name
        .bytes()
        .find(|&c| !(0x21..=0x7e).contains(&c) || c == b'=' || c == b';' || c == b'\\')
    {
        return Err(CodecError::new(format!(
            "attribute name {name:?} contains the forbidden byte 0x{c:02x}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors() {
        let m = Message::new("put")
            .with("key", "a")
            .with("n", 42)
            .with("b", "TRUE");
        assert_eq!(m.cmd(), "put");
        assert_eq!(m.get("key"), Some("a"));
        assert_eq!(m.get_num::<u32>("n"), Ok(Some(42)));
        assert_eq!(m.get_num::<u32>("missing"), Ok(None));
        assert!(m.get_num::<u32>("key").is_err());
        assert_eq!(m.get_bool("b"), Some(true));
        assert!(m.require("nope").unwrap_err().0.contains("nope"));
    }

    #[test]
    fn attr_names() {
        assert!(check_attr_name("pmi_version").is_ok());
        assert!(check_attr_name("spawner-jobid").is_ok());
        assert!(check_attr_name("").is_err());
        assert!(check_attr_name("a b").is_err());
        assert!(check_attr_name("a;b").is_err());
        assert!(check_attr_name("a=b").is_err());
        assert!(check_attr_name(&"k".repeat(65)).is_err());
    }
}
