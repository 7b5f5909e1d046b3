//! The name service a process manager gives its jobs (`MPI_Publish_name`,
//! `MPI_Lookup_name`, `MPI_Unpublish_name`): a bounded table from service names to port
//! names, sans-IO. The [`crate::Server`] answers the PMI-1 `publish_name` /
//! `lookup_name` / `unpublish_name` and PMI-2 `name-publish` / `name-lookup` /
//! `name-unpublish` requests from it.
//!
//! A service name is published once: publishing it again before it is unpublished is
//! refused (MPI leaves this to the implementation; refusing keeps one answer per name).
//! Refusal reasons are single tokens, because PMI-1 values cannot hold spaces.
//!
//! [`NameService`] is what the server asks: this crate's [`NameTable`], or (in
//! `mpiexec` with a standalone name server) a client of the server, which speaks the
//! line protocol of [`crate::namewire`].

use crate::limits::MAX_VALUE_LEN;
use std::collections::HashMap;

/// Most names a table holds at once.
pub const MAX_NAMES: usize = 4096;
/// Longest service name and longest port name, in bytes.
pub const MAX_NAME_LEN: usize = MAX_VALUE_LEN;

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameError {
    /// Publish: the service name is published already.
    AlreadyPublished,
    /// Lookup or unpublish: the service name is not published.
    UnknownService,
    /// Empty or too long, or with control characters.
    BadName,
    /// The table holds [`MAX_NAMES`] names.
    Full,
    /// The standalone name server could not be reached or did not answer.
    Unreachable,
}

impl NameError {
    /// The reason as one wire token.
    pub fn token(self) -> &'static str {
        match self {
            NameError::AlreadyPublished => "service_already_published",
            NameError::UnknownService => "unknown_service",
            NameError::BadName => "invalid_service_or_port_name",
            NameError::Full => "name_table_full",
            NameError::Unreachable => "name_server_unreachable",
        }
    }

    /// The error a wire token names, if any.
    pub fn from_token(token: &str) -> Option<NameError> {
        [
            NameError::AlreadyPublished,
            NameError::UnknownService,
            NameError::BadName,
            NameError::Full,
            NameError::Unreachable,
        ]
        .into_iter()
        .find(|e| e.token() == token)
    }
}

/// A name service: where publish, lookup and unpublish requests are answered.
pub trait NameService: std::fmt::Debug {
    /// Publishes `port` under `service`.
    fn publish(&mut self, service: &str, port: &str) -> Result<(), NameError>;
    /// The port published under `service`.
    fn lookup(&mut self, service: &str) -> Result<String, NameError>;
    /// Withdraws `service`.
    fn unpublish(&mut self, service: &str) -> Result<(), NameError>;
}

impl NameService for NameTable {
    fn publish(&mut self, service: &str, port: &str) -> Result<(), NameError> {
        NameTable::publish(self, service, port)
    }
    fn lookup(&mut self, service: &str) -> Result<String, NameError> {
        NameTable::lookup(self, service).map(str::to_owned)
    }
    fn unpublish(&mut self, service: &str) -> Result<(), NameError> {
        NameTable::unpublish(self, service)
    }
}

/// Published service names and their ports.
#[derive(Debug, Default)]
pub struct NameTable {
    map: HashMap<String, String>,
}

fn usable(s: &str) -> bool {
    !s.is_empty() && s.len() <= MAX_NAME_LEN && !s.bytes().any(|b| b < 0x20 || b == 0x7f)
}

impl NameTable {
    /// Publishes `port` under `service`.
    pub fn publish(&mut self, service: &str, port: &str) -> Result<(), NameError> {
        if !usable(service) || !usable(port) {
            return Err(NameError::BadName);
        }
        if self.map.contains_key(service) {
            return Err(NameError::AlreadyPublished);
        }
        if self.map.len() >= MAX_NAMES {
            return Err(NameError::Full);
        }
        self.map.insert(service.to_owned(), port.to_owned());
        Ok(())
    }

    /// The port published under `service`.
    pub fn lookup(&self, service: &str) -> Result<&str, NameError> {
        self.map
            .get(service)
            .map(String::as_str)
            .ok_or(NameError::UnknownService)
    }

    /// Withdraws `service`.
    pub fn unpublish(&mut self, service: &str) -> Result<(), NameError> {
        self.map
            .remove(service)
            .map(|_| ())
            .ok_or(NameError::UnknownService)
    }

    /// Names published now.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// True when nothing is published.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_lookup_unpublish() {
        let mut t = NameTable::default();
        assert_eq!(t.lookup("svc"), Err(NameError::UnknownService));
        t.publish("svc", "127.0.0.1:5000").unwrap();
        assert_eq!(t.lookup("svc"), Ok("127.0.0.1:5000"));
        assert_eq!(t.publish("svc", "x"), Err(NameError::AlreadyPublished));
        t.unpublish("svc").unwrap();
        assert_eq!(t.unpublish("svc"), Err(NameError::UnknownService));
        assert_eq!(t.lookup("svc"), Err(NameError::UnknownService));
        assert!(t.is_empty());
    }

    #[test]
    fn bad_names_and_a_full_table_are_refused() {
        let mut t = NameTable::default();
        assert_eq!(t.publish("", "p"), Err(NameError::BadName));
        assert_eq!(t.publish("s", ""), Err(NameError::BadName));
        assert_eq!(t.publish("a\nb", "p"), Err(NameError::BadName));
        let long = "x".repeat(MAX_NAME_LEN + 1);
        assert_eq!(t.publish(&long, "p"), Err(NameError::BadName));
        for i in 0..MAX_NAMES {
            t.publish(&format!("s{i}"), "p").unwrap();
        }
        assert_eq!(t.publish("one-more", "p"), Err(NameError::Full));
        assert_eq!(t.len(), MAX_NAMES);
    }

    #[test]
    fn tokens_round_trip() {
        for e in [
            NameError::AlreadyPublished,
            NameError::UnknownService,
            NameError::BadName,
            NameError::Full,
            NameError::Unreachable,
        ] {
            assert_eq!(NameError::from_token(e.token()), Some(e));
        }
        assert_eq!(NameError::from_token("what"), None);
    }
}
