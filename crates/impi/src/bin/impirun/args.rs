//! Command lines of `impirun` (spec 2.2.1, 2.2.2 and 2.3.3's `-auth`).

use std::net::IpAddr;

use oxmpi_impi::auth::parse_preference;

pub const HELP: &str = "\
Usage: impirun -server COUNT [-port PORT] [-auth LIST] [-bind ADDR] [-timeout SECONDS]
       impirun -client RANK HOST:PORT [client options] [mpiexec options] PROGRAM [ARGS...]

IMPI (Interoperable MPI 0.0): several MPI jobs, of oxmpi or other implementations,
joined into one MPI_COMM_WORLD through a rendezvous server.

Server:
  -server COUNT     serve COUNT clients (1 to 32); prints IP:PORT as the only line of
                    standard output, then waits for every client's FINI
  -port PORT        listen on PORT (default: any free port)
  -auth LIST        authentication methods in order of preference, e.g. 1,0 or 3,1-0
                    (0 = IMPI_AUTH_NONE, 1 = IMPI_AUTH_KEY); methods not listed are refused
  -bind ADDR        listen on ADDR only, and print it (default: all addresses; the host's
                    first non-loopback IPv4 address is printed)
  -timeout SECONDS  abort when the startup exchange is not complete after SECONDS

Client:
  -client RANK      this client's place among the clients (0 to COUNT-1); its procs follow
                    those of the lower-ranked clients in MPI_COMM_WORLD
  HOST:PORT         the server's address as it printed it
  -startup-only     run the startup and shutdown protocols only (the program is not
                    started); each proc's MPI_COMM_WORLD rank is printed
  -datalen N        IMPI_C_DATALEN, most user bytes per packet (default 65536)
  -ackmark N        IMPI_H_ACKMARK (default 64)
  -hiwater N        IMPI_H_HIWATER (default 1024)
  -coll-xsize N     IMPI_C_COLL_XSIZE (default: -1, the protocol's default 1024)
  -coll-maxlinear N IMPI_C_COLL_MAXLINEAR (default: -1, the protocol's default 4)
  mpiexec options   as for mpiexec; -n/-np give the number of procs, -v prints the job,
                    --timeout SECONDS bounds the startup exchange (exit status 124)

Authentication (both sides): IMPI_AUTH_KEY=<64-bit number> offers IMPI_AUTH_KEY;
IMPI_AUTH_NONE (set to anything) offers IMPI_AUTH_NONE, for trusted networks only.

Exit status: 0 after a clean shutdown; 1 when the job failed (a message says why);
2 for usage errors; 124 when a client's --timeout expired.
";

pub struct ServerArgs {
    pub count: u32,
    pub port: u16,
    pub auth: Option<Vec<u32>>,
    pub bind: Option<IpAddr>,
    pub timeout_secs: Option<u64>,
}

pub struct ClientArgs {
    pub rank: u32,
    pub server: String,
    pub startup_only: bool,
    pub datalen: u32,
    pub ackmark: u32,
    pub hiwater: u32,
    pub coll_xsize: i32,
    pub coll_maxlinear: i32,
    /// Procs of the job section by section (`-n`, default 1 each).
    pub nprocs: u32,
    pub verbose: bool,
    /// mpiexec's `--timeout`: the startup exchange must complete within it.
    pub timeout_secs: Option<u64>,
    pub program: String,
    /// What follows `HOST:PORT` except the client options above: mpiexec's command line.
    pub mpiexec_args: Vec<String>,
}

pub enum Request {
    Help,
    Server(ServerArgs),
    Client(ClientArgs),
}

fn number<T: std::str::FromStr>(opt: &str, v: Option<&String>, what: &str) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("{opt} needs {what}"))?;
    v.parse().map_err(|_| format!("{opt} {v}: not {what}"))
}

pub fn parse(argv: &[String]) -> Result<Request, String> {
    match argv.first().map(String::as_str) {
        None => Err("missing -server or -client".into()),
        Some("-h" | "-help" | "--help") => Ok(Request::Help),
        Some("-server") => parse_server(&argv[1..]).map(Request::Server),
        Some("-client") => parse_client(&argv[1..]).map(Request::Client),
        Some(a) => Err(format!(
            "unknown first argument {a:?} (expected -server or -client)"
        )),
    }
}

fn parse_server(a: &[String]) -> Result<ServerArgs, String> {
    let count: u32 = number("-server", a.first(), "a number of clients")?;
    if count == 0 || count > oxmpi_impi::server::MAX_CLIENTS {
        return Err(format!(
            "-server {count}: the number of clients must be 1 to {}",
            oxmpi_impi::server::MAX_CLIENTS
        ));
    }
    let mut s = ServerArgs {
        count,
        port: 0,
        auth: None,
        bind: None,
        timeout_secs: None,
    };
    let mut it = a[1..].iter();
    while let Some(opt) = it.next() {
        match opt.as_str() {
            "-port" => s.port = number("-port", it.next(), "a TCP port (0 to 65535)")?,
            "-auth" => {
                let v = it.next().ok_or("-auth needs a list of methods")?;
                s.auth = Some(parse_preference(v)?);
            }
            "-bind" => s.bind = Some(number("-bind", it.next(), "an IP address")?),
            "-timeout" => {
                let t: u64 = number("-timeout", it.next(), "a number of seconds")?;
                if t == 0 {
                    return Err("-timeout 0: must be at least 1 second".into());
                }
                s.timeout_secs = Some(t);
            }
            _ => return Err(format!("-server: unknown option {opt:?}")),
        }
    }
    Ok(s)
}

/// mpiexec options that take one value (two for -env/-genv); the rest are flags.
fn mpiexec_values(name: &str) -> Option<usize> {
    match name {
        "env" | "genv" => Some(2),
        "n" | "np" | "envlist" | "genvlist" | "wdir" | "timeout" | "hosts" | "host" | "f"
        | "hostfile" | "machinefile" | "ppn" | "launcher" | "launcher-exec" => Some(1),
        "genvall" | "genvnone" | "envall" | "envnone" | "l" | "label" | "prepend-rank" | "v"
        | "verbose" | "rr" => Some(0),
        _ => None,
    }
}

fn parse_client(a: &[String]) -> Result<ClientArgs, String> {
    let rank: u32 = number("-client", a.first(), "a client rank")?;
    let server = a.get(1).ok_or("-client RANK needs HOST:PORT")?.clone();
    if !server.contains(':') {
        return Err(format!(
            "-client {rank} {server}: expected HOST:PORT as the server printed it"
        ));
    }
    let mut c = ClientArgs {
        rank,
        server,
        startup_only: false,
        datalen: 65536,
        // Each rank reads every packet as it comes (docs/impi.md reading 35), so a
        // wide window costs its receiver nothing and keeps its senders from stalling.
        ackmark: 64,
        hiwater: 1024,
        coll_xsize: -1,
        coll_maxlinear: -1,
        nprocs: 0,
        verbose: false,
        timeout_secs: None,
        program: String::new(),
        mpiexec_args: Vec::new(),
    };
    let mut it = a[2..].iter().peekable();
    let mut section_np: Option<u32> = None;
    let mut in_program = false;
    let mut total: u64 = 0;
    while let Some(arg) = it.next() {
        c.mpiexec_args.push(arg.clone());
        if arg == ":" {
            if !in_program {
                return Err("a section before ':' has no program".into());
            }
            total += u64::from(section_np.take().unwrap_or(1));
            in_program = false;
            continue;
        }
        if in_program {
            continue;
        }
        if !arg.starts_with('-') || arg.len() < 2 {
            in_program = true;
            if c.program.is_empty() {
                c.program = arg.clone();
            }
            continue;
        }
        if matches!(
            arg.as_str(),
            "-startup-only"
                | "-datalen"
                | "-ackmark"
                | "-hiwater"
                | "-coll-xsize"
                | "-coll-maxlinear"
        ) {
            c.mpiexec_args.pop();
        }
        match arg.as_str() {
            "-startup-only" => {
                c.startup_only = true;
                continue;
            }
            "-datalen" => {
                c.datalen = number(arg, it.next(), "a positive number of bytes")?;
                if c.datalen == 0 {
                    return Err("-datalen 0: must be at least 1".into());
                }
                continue;
            }
            "-ackmark" => {
                c.ackmark = number(arg, it.next(), "a positive number of packets")?;
                continue;
            }
            "-hiwater" => {
                c.hiwater = number(arg, it.next(), "a positive number of packets")?;
                continue;
            }
            "-coll-xsize" | "-coll-maxlinear" => {
                let v: i32 = number(arg, it.next(), "a number >= 0 (or -1 for the default)")?;
                if v < -1 {
                    return Err(format!("{arg} {v}: must be >= 0, or -1 for the default"));
                }
                if arg == "-coll-xsize" {
                    c.coll_xsize = v;
                } else {
                    c.coll_maxlinear = v;
                }
                continue;
            }
            _ => {}
        }
        let body = arg.strip_prefix("--").unwrap_or(&arg[1..]);
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let Some(nvals) = mpiexec_values(name) else {
            return Err(format!("unknown option {arg}"));
        };
        let mut vals: Vec<String> = inline.into_iter().collect();
        while vals.len() < nvals {
            let next = it
                .next()
                .ok_or_else(|| format!("option {arg} needs a value"))?
                .clone();
            c.mpiexec_args.push(next.clone());
            vals.push(next);
        }
        match name {
            "n" | "np" => {
                let n: u32 = vals[0]
                    .parse()
                    .map_err(|_| format!("{arg} {}: not a number of procs", vals[0]))?;
                if n == 0 {
                    return Err(format!("{arg} 0: at least one proc is needed"));
                }
                section_np = Some(n);
            }
            "v" | "verbose" => c.verbose = true,
            "timeout" => {
                let t: u64 = vals[0].parse().ok().filter(|&t| t > 0).ok_or_else(|| {
                    format!("{arg} {}: not a positive number of seconds", vals[0])
                })?;
                c.timeout_secs = Some(t);
            }
            _ => {}
        }
    }
    if !in_program {
        return Err("missing program to run".into());
    }
    total += u64::from(section_np.unwrap_or(1));
    if total > 65536 {
        return Err(format!("{total} procs: at most 65536 per client"));
    }
    if c.ackmark == 0 || c.ackmark > c.hiwater {
        return Err(format!(
            "-ackmark {} -hiwater {}: needs 1 <= ackmark <= hiwater",
            c.ackmark, c.hiwater
        ));
    }
    c.nprocs = total as u32;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn server_lines() {
        let Ok(Request::Server(s)) = parse(&v("-server 2 -port 5678 -auth 3,1-0")) else {
            panic!()
        };
        assert_eq!((s.count, s.port, s.auth), (2, 5678, Some(vec![3, 1, 0])));
        assert!(parse(&v("-server 0")).is_err());
        assert!(parse(&v("-server 33")).is_err());
        assert!(parse(&v("-server 2 -port 70000")).is_err());
        assert!(parse(&v("-server 2 -bogus")).is_err());
    }

    #[test]
    fn client_lines() {
        let Ok(Request::Client(c)) = parse(&v(
            "-client 1 1.2.3.4:5 -startup-only -np 4 -genv A B ./a.out -np 9",
        )) else {
            panic!()
        };
        assert_eq!(
            (c.rank, c.server.as_str(), c.nprocs, c.program.as_str()),
            (1, "1.2.3.4:5", 4, "./a.out")
        );
        assert!(c.startup_only);
        assert_eq!(c.mpiexec_args, v("-np 4 -genv A B ./a.out -np 9"));
        let Ok(Request::Client(c)) = parse(&v("-client 0 h:1 -n 2 a : -n 3 b : c")) else {
            panic!()
        };
        assert_eq!(c.nprocs, 6);
        assert!(parse(&v("-client 0 h:1 -n 2")).is_err());
        assert!(parse(&v("-client 0 h:1 -n 0 a")).is_err());
        assert!(parse(&v("-client 0 host a")).is_err());
        assert!(parse(&v("-client 0 h:1 -frob a")).is_err());
        assert!(parse(&v("-client 0 h:1 -ackmark 9 -hiwater 8 a")).is_err());
    }
}
