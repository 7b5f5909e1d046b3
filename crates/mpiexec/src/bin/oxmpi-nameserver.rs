//! `oxmpi-nameserver`: a standalone name server, so that `MPI_Publish_name`,
//! `MPI_Lookup_name` and `MPI_Unpublish_name` work between separately started jobs
//! (each `mpiexec` given `-nameserver HOST:PORT` or `OXMPI_NAMESERVER=HOST:PORT`).
//!
//! ```text
//! oxmpi-nameserver [-bind ADDR] [-port P]
//! ```
//!
//! Listens on TCP (default 127.0.0.1, any free port), prints `HOST:PORT` as the first
//! line of its standard output, and answers the line protocol of
//! `oxmpi_pmi::namewire` from one `oxmpi_pmi::names::NameTable` until it is killed
//! (SIGTERM or SIGINT end it; it holds no files or other state to clean up). Names are
//! never withdrawn for a job that ended: only `MPI_Unpublish_name` removes them, as with
//! MPICH's Hydra name server.

use oxmpi_pmi::names::NameTable;
use oxmpi_pmi::namewire::{self, Request};
use std::io::{BufReader, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Longest wait for a client's request line or for the reply to be taken.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

fn usage(msg: &str) -> ! {
    eprintln!("oxmpi-nameserver: {msg}");
    eprintln!("usage: oxmpi-nameserver [-bind ADDR] [-port P]");
    std::process::exit(2);
}

fn main() {
    let mut bind = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let mut port = 0u16;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let opt = a.trim_start_matches('-');
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")))
        };
        match opt {
            "bind" => {
                let v = value();
                bind = v
                    .parse()
                    .unwrap_or_else(|_| usage(&format!("-bind {v:?}: not an IP address")));
            }
            "port" => {
                let v = value();
                port = v
                    .parse()
                    .unwrap_or_else(|_| usage(&format!("-port {v:?}: not a port number")));
            }
            "h" | "help" => {
                println!("usage: oxmpi-nameserver [-bind ADDR] [-port P]");
                return;
            }
            _ => usage(&format!("unknown option {a:?}")),
        }
    }
    let listener = TcpListener::bind((bind, port))
        .unwrap_or_else(|e| usage(&format!("cannot listen on {bind}:{port}: {e}")));
    let addr = listener
        .local_addr()
        .unwrap_or_else(|e| usage(&format!("cannot read the listening address: {e}")));
    {
        let mut out = std::io::stdout().lock();
        // A failed write means nobody can learn the address; there is no point running.
        if writeln!(out, "{addr}").and_then(|()| out.flush()).is_err() {
            std::process::exit(1);
        }
    }
    let table = Arc::new(Mutex::new(NameTable::default()));
    for conn in listener.incoming() {
        match conn {
            Ok(s) => {
                let table = Arc::clone(&table);
                // One short-lived thread per request, so a slow client delays nobody.
                if let Err(e) = std::thread::Builder::new().spawn(move || serve(s, &table)) {
                    eprintln!("oxmpi-nameserver: cannot start a thread: {e}");
                }
            }
            Err(e) => eprintln!("oxmpi-nameserver: accept failed: {e}"),
        }
    }
}

/// Reads one request from `s`, answers it, and closes the connection.
fn serve(s: TcpStream, table: &Mutex<NameTable>) {
    let peer = s
        .peer_addr()
        .map_or_else(|_| "?".to_owned(), |a| a.to_string());
    let _ = s.set_read_timeout(Some(CLIENT_TIMEOUT));
    let _ = s.set_write_timeout(Some(CLIENT_TIMEOUT));
    let mut reader = BufReader::new(&s);
    let reply = match namewire::read_line(&mut reader) {
        Ok(line) => match Request::parse(&line) {
            Some(req) => {
                // A panic elsewhere cannot leave the table half-changed: every change
                // is one map operation, so a poisoned lock still holds a usable table.
                let mut t = table.lock().unwrap_or_else(|p| p.into_inner());
                req.answer(&mut *t)
            }
            None => {
                eprintln!("oxmpi-nameserver: {peer}: not a request: {line:?}");
                return;
            }
        },
        Err(e) => {
            eprintln!("oxmpi-nameserver: {peer}: {e}");
            return;
        }
    };
    let _ = (&s).write_all(namewire::encode_reply(&reply).as_bytes());
}
