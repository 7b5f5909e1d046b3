//! oxmpi's extension beyond IMPI 0.0: authenticated host connections between oxmpi
//! clients. IMPI 0.0 host connections carry no authentication: anyone who reaches a host's
//! port first can claim to be another host. An oxmpi client submits the label
//! [`LABEL_HOST_AUTH`], which other implementations relay and ignore; when both ends of a
//! host connection belong to clients that submitted it with [`FLAG_KEY`] (they
//! authenticated to the server with `IMPI_AUTH_KEY`, so they share its key), the
//! connecting host follows its 4-byte rank with the challenge-response of `oxmpi-auth`
//! keyed by the job key, over the two host ranks. Connections with other implementations'
//! hosts stay exactly as the specification says.

use oxmpi_auth::Scheme;

use crate::job::Job;
use crate::wire::get_u32;

/// The label: ASCII "OXHA", above every IMPI 0.0 label.
pub const LABEL_HOST_AUTH: i32 = 0x4F58_4841;
/// Version of the extension's data and handshake.
pub const VERSION: u32 = 1;
/// The client authenticated with `IMPI_AUTH_KEY` and authenticates its host connections.
pub const FLAG_KEY: u32 = 1;

/// The challenge-response of a host connection; its context is the two host ranks.
pub const SCHEME: Scheme<8> = Scheme::new(
    *b"OXIMPIH1",
    b"oxmpi-impi-host-connect",
    b"oxmpi-impi-host-accept",
);

/// The label's data for this client: `IMPI_Uint4` version, `IMPI_Uint4` flags.
pub fn label_data(keyed: bool) -> Vec<u8> {
    let mut v = VERSION.to_be_bytes().to_vec();
    v.extend_from_slice(&(if keyed { FLAG_KEY } else { 0 }).to_be_bytes());
    v
}

/// For each client of the job: whether its host connections with another such client are
/// authenticated (it submitted the label, version 1, with [`FLAG_KEY`]).
pub fn host_auth_clients(job: &Job) -> Vec<bool> {
    let n = job.nclients;
    let mut out = vec![false; n as usize];
    let Some(c) = job.labels.iter().find(|c| c.label == LABEL_HOST_AUTH) else {
        return out;
    };
    // Malformed data from some client disables the extension for the whole job rather
    // than guessing where each client's piece is.
    let Ok(parts) = c.split(n, |_| 8) else {
        return out;
    };
    for (i, p) in parts.into_iter().enumerate() {
        if let Some(p) = p {
            out[i] = get_u32(p, 0) == VERSION && get_u32(p, 4) & FLAG_KEY != 0;
        }
    }
    out
}

/// The handshake's context: connecting host rank, accepting host rank.
pub fn context(connector: u32, acceptor: u32) -> [u8; 8] {
    let mut c = [0u8; 8];
    c[..4].copy_from_slice(&connector.to_be_bytes());
    c[4..].copy_from_slice(&acceptor.to_be_bytes());
    c
}

/// The secret: the job key as its 8 wire bytes.
pub fn secret(key: u64) -> [u8; 8] {
    key.to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::sync::mpsc;

    /// An in-memory duplex pipe for the blocking handshake functions.
    struct End {
        tx: mpsc::Sender<Vec<u8>>,
        rx: mpsc::Receiver<Vec<u8>>,
        buf: Vec<u8>,
    }

    impl Read for End {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            while self.buf.is_empty() {
                match self.rx.recv() {
                    Ok(b) => self.buf = b,
                    Err(_) => return Ok(0),
                }
            }
            let n = out.len().min(self.buf.len());
            out[..n].copy_from_slice(&self.buf[..n]);
            self.buf.drain(..n);
            Ok(n)
        }
    }

    impl Write for End {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let _ = self.tx.send(b.to_vec());
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn pipe() -> (End, End) {
        let (a, b) = (mpsc::channel(), mpsc::channel());
        (
            End {
                tx: a.0,
                rx: b.1,
                buf: Vec::new(),
            },
            End {
                tx: b.0,
                rx: a.1,
                buf: Vec::new(),
            },
        )
    }

    #[test]
    fn same_key_authenticates_and_a_wrong_one_does_not() {
        for (k1, k2, ok) in [(5678u64, 5678u64, true), (5678, 1234, false)] {
            let (mut a, mut b) = pipe();
            let t = std::thread::spawn(move || SCHEME.accept(&mut b, &secret(k2)));
            let r = SCHEME.initiate(&mut a, &secret(k1), &context(3, 1));
            drop(a);
            let acc = t.join().unwrap();
            assert_eq!(r.is_ok() && acc.is_ok(), ok);
            if ok {
                assert_eq!(acc.unwrap(), context(3, 1));
            }
        }
        assert_eq!(label_data(true), vec![0, 0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(label_data(false), vec![0, 0, 0, 1, 0, 0, 0, 0]);
        assert_eq!(&LABEL_HOST_AUTH.to_be_bytes(), b"OXHA");
    }
}
