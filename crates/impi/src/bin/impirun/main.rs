//! `impirun`: the IMPI command of oxmpi (spec 2.2).
//!
//! - `impirun -server N [-port P] [-auth LIST]` listens, prints `IP:port` as the only line
//!   of its standard output, serves the N clients' startup exchange and exits once every
//!   client has sent FINI (`server.rs`).
//! - `impirun -client R HOST:PORT [options] [mpiexec options] PROGRAM [ARGS]` is client R of
//!   the job: it authenticates, submits the labels of its host and procs, connects its
//!   host to the other clients' hosts, and shuts down (`client.rs`).
//!
//! The wire protocols are the sans-IO state machines of the `oxmpi_impi` library; this
//! binary only moves their bytes over TCP.

mod args;
mod client;
mod launch;
mod server;

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match args::parse(&argv) {
        Ok(args::Request::Help) => {
            print!("{}", args::HELP);
            ExitCode::SUCCESS
        }
        Ok(args::Request::Server(s)) => server::run(s),
        Ok(args::Request::Client(c)) => client::run(c),
        Err(e) => {
            eprintln!("impirun: {e}");
            eprintln!("Try 'impirun -help'.");
            ExitCode::from(2)
        }
    }
}
