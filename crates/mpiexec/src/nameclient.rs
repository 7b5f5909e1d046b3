//! The client side of the standalone name server (`oxmpi-nameserver`): a
//! [`NameService`] that forwards each publish, lookup and unpublish request of the job
//! to the server named by `-nameserver HOST:PORT` or `OXMPI_NAMESERVER`.
//!
//! One short connection per request, with bounded connect, write and read times, so an
//! unreachable or silent server costs a request at most [`TIMEOUT`] per step and fails
//! it with [`NameError::Unreachable`] (mpiexec prints the address and the reason); the
//! PMI server runs the request inline, so the job's event loop waits that long at most.

use oxmpi_pmi::names::{NameError, NameService};
use oxmpi_pmi::namewire::{self, Request};
use std::io::{BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Longest wait for each of connecting, sending and receiving.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// The name server at `addr` (`HOST:PORT`).
#[derive(Debug)]
pub struct RemoteNames {
    addr: String,
}

impl RemoteNames {
    pub fn new(addr: String) -> Self {
        RemoteNames { addr }
    }

    fn ask(&self, req: &Request) -> namewire::Reply {
        self.exchange(req).unwrap_or_else(|why| {
            eprintln!("mpiexec: name server {}: {why}", self.addr);
            Err(NameError::Unreachable)
        })
    }

    fn exchange(&self, req: &Request) -> Result<namewire::Reply, String> {
        let mut last = format!("{}: no address", self.addr);
        let addrs = self
            .addr
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve: {e}"))?;
        for a in addrs {
            match TcpStream::connect_timeout(&a, TIMEOUT) {
                Ok(mut s) => {
                    s.set_read_timeout(Some(TIMEOUT))
                        .map_err(|e| e.to_string())?;
                    s.set_write_timeout(Some(TIMEOUT))
                        .map_err(|e| e.to_string())?;
                    s.write_all(req.encode().as_bytes())
                        .map_err(|e| format!("cannot send the request: {e}"))?;
                    let line = namewire::read_line(&mut BufReader::new(s))
                        .map_err(|e| format!("no answer: {e}"))?;
                    return namewire::parse_reply(&line)
                        .ok_or_else(|| format!("not a name server answer: {line:?}"));
                }
                Err(e) => last = format!("cannot connect to {a}: {e}"),
            }
        }
        Err(last)
    }
}

impl NameService for RemoteNames {
    fn publish(&mut self, service: &str, port: &str) -> Result<(), NameError> {
        self.ask(&Request::Publish {
            service: service.into(),
            port: port.into(),
        })
        .map(|_| ())
    }
    fn lookup(&mut self, service: &str) -> Result<String, NameError> {
        match self.ask(&Request::Lookup {
            service: service.into(),
        })? {
            Some(p) => Ok(p),
            None => {
                eprintln!(
                    "mpiexec: name server {}: lookup answered without a port",
                    self.addr
                );
                Err(NameError::Unreachable)
            }
        }
    }
    fn unpublish(&mut self, service: &str) -> Result<(), NameError> {
        self.ask(&Request::Unpublish {
            service: service.into(),
        })
        .map(|_| ())
    }
}
