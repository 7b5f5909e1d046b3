//! COLL labels (spec 2.3.5): their values, the client's `COLL` payload (label followed by
//! its data) and the server's broadcast (`IMPI_Chdr` — label and client mask — followed by
//! the concatenated data of the clients whose bit is set, in client-rank order).
//!
//! The server relays any label without interpreting it; clients ignore labels they do
//! not know. The meaning of the IMPI 0.0 labels is in [`crate::job`].

use crate::wire::{encode_cmd, get_i32, get_u32, put_i32, ProtocolError, CMD_COLL};

/// `IMPI_NO_LABEL`: reserved, never sent.
pub const NO_LABEL: i32 = 0;
/// `IMPI_C_VERSION`: the IMPI versions a client supports (`IMPI_Version` array).
pub const C_VERSION: i32 = 0x1000;
/// `IMPI_C_NHOSTS`: number of hosts of the client (`IMPI_Uint4`).
pub const C_NHOSTS: i32 = 0x1100;
/// `IMPI_C_NPROCS`: number of procs of the client (`IMPI_Uint4`).
pub const C_NPROCS: i32 = 0x1200;
/// `IMPI_C_DATALEN`: largest user data in a packet (`IMPI_Uint4`).
pub const C_DATALEN: i32 = 0x1300;
/// `IMPI_C_TAGUB`: largest tag (`IMPI_Int4`).
pub const C_TAGUB: i32 = 0x1400;
/// `IMPI_C_COLL_XSIZE`: collective short/long crossover in bytes (`IMPI_Int4`, -1 = default).
pub const C_COLL_XSIZE: i32 = 0x1500;
/// `IMPI_C_COLL_MAXLINEAR`: host count from which collectives are logarithmic (`IMPI_Int4`, -1 = default).
pub const C_COLL_MAXLINEAR: i32 = 0x1600;
/// `IMPI_H_IPV6`: address of each host (16 bytes each).
pub const H_IPV6: i32 = 0x2000;
/// `IMPI_H_PORT`: listening port of each host (`IMPI_Uint4` each).
pub const H_PORT: i32 = 0x2100;
/// `IMPI_H_NPROCS`: procs of each host (`IMPI_Uint4` each).
pub const H_NPROCS: i32 = 0x2200;
/// `IMPI_H_ACKMARK`: `IMPI_Pk_ackmark` of each host (`IMPI_Uint4` each).
pub const H_ACKMARK: i32 = 0x2300;
/// `IMPI_H_HIWATER`: `IMPI_Pk_hiwater` of each host (`IMPI_Uint4` each).
pub const H_HIWATER: i32 = 0x2400;
/// `IMPI_P_IPV6`: host identifier of each proc (16 bytes each).
pub const P_IPV6: i32 = 0x3000;
/// `IMPI_P_PID`: process identifier of each proc (`IMPI_Int8` each).
pub const P_PID: i32 = 0x3100;

/// Every label an IMPI 0.0 client must send, in the ascending order they go out.
pub const MANDATED: [i32; 14] = [
    C_VERSION,
    C_NHOSTS,
    C_NPROCS,
    C_DATALEN,
    C_TAGUB,
    C_COLL_XSIZE,
    C_COLL_MAXLINEAR,
    H_IPV6,
    H_PORT,
    H_NPROCS,
    H_ACKMARK,
    H_HIWATER,
    P_IPV6,
    P_PID,
];

/// Default of `IMPI_C_COLL_XSIZE` in IMPI 0.0.
pub const DEFAULT_COLL_XSIZE: i32 = 1024;
/// Default of `IMPI_C_COLL_MAXLINEAR` in IMPI 0.0.
pub const DEFAULT_COLL_MAXLINEAR: i32 = 4;

/// The symbolic name of a label, or its value in hex.
pub fn label_name(label: i32) -> String {
    let n = match label {
        NO_LABEL => "IMPI_NO_LABEL",
        C_VERSION => "IMPI_C_VERSION",
        C_NHOSTS => "IMPI_C_NHOSTS",
        C_NPROCS => "IMPI_C_NPROCS",
        C_DATALEN => "IMPI_C_DATALEN",
        C_TAGUB => "IMPI_C_TAGUB",
        C_COLL_XSIZE => "IMPI_C_COLL_XSIZE",
        C_COLL_MAXLINEAR => "IMPI_C_COLL_MAXLINEAR",
        H_IPV6 => "IMPI_H_IPV6",
        H_PORT => "IMPI_H_PORT",
        H_NPROCS => "IMPI_H_NPROCS",
        H_ACKMARK => "IMPI_H_ACKMARK",
        H_HIWATER => "IMPI_H_HIWATER",
        P_IPV6 => "IMPI_P_IPV6",
        P_PID => "IMPI_P_PID",
        _ => return format!("label 0x{:x}", label as u32),
    };
    n.to_string()
}

/// `IMPI_Version`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl Version {
    /// IMPI 0.0, which every client must support.
    pub const V0_0: Version = Version { major: 0, minor: 0 };
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A whole client `COLL` command: header, label, data.
pub fn encode_client_coll(label: i32, data: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(4 + data.len());
    put_i32(&mut p, label);
    p.extend_from_slice(data);
    encode_cmd(CMD_COLL, &p)
}

/// Splits a client `COLL` payload into label and data.
pub fn decode_client_coll(payload: &[u8]) -> Result<(i32, &[u8]), ProtocolError> {
    if payload.len() < 4 {
        return Err(ProtocolError::new(format!(
            "COLL payload of {} bytes has no label (at least 4 bytes)",
            payload.len()
        )));
    }
    Ok((get_i32(payload, 0), &payload[4..]))
}

/// One label as the server broadcasts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collated {
    pub label: i32,
    /// Bit `i`: client rank `i` submitted data for this label.
    pub client_mask: u32,
    /// The submitted data, concatenated in client-rank order.
    pub data: Vec<u8>,
}

impl Collated {
    /// The whole server `COLL` command.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(8 + self.data.len());
        put_i32(&mut p, self.label);
        p.extend_from_slice(&self.client_mask.to_be_bytes());
        p.extend_from_slice(&self.data);
        encode_cmd(CMD_COLL, &p)
    }

    /// From a server `COLL` payload.
    pub fn decode(payload: &[u8]) -> Result<Collated, ProtocolError> {
        if payload.len() < 8 {
            return Err(ProtocolError::new(format!(
                "server COLL payload of {} bytes is shorter than its 8-byte IMPI_Chdr",
                payload.len()
            )));
        }
        Ok(Collated {
            label: get_i32(payload, 0),
            client_mask: get_u32(payload, 4),
            data: payload[8..].to_vec(),
        })
    }

    /// Whether every one of the `n` clients submitted this label.
    pub fn from_all(&self, n: u32) -> bool {
        let all = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        self.client_mask & all == all
    }

    /// Cuts the data into the pieces of the contributing clients, given the size each
    /// client's piece must have. Fails naming the label when the sizes do not add up.
    pub fn split(
        &self,
        nclients: u32,
        size_of: impl Fn(u32) -> usize,
    ) -> Result<Vec<Option<&[u8]>>, ProtocolError> {
        let mut out = Vec::with_capacity(nclients as usize);
        let mut off = 0usize;
        for c in 0..nclients {
            if c >= 32 || self.client_mask & (1 << c) == 0 {
                out.push(None);
                continue;
            }
            let n = size_of(c);
            if off + n > self.data.len() {
                return Err(self.size_error(nclients, &size_of));
            }
            out.push(Some(&self.data[off..off + n]));
            off += n;
        }
        if off != self.data.len() {
            return Err(self.size_error(nclients, &size_of));
        }
        Ok(out)
    }

    fn size_error(&self, nclients: u32, size_of: &impl Fn(u32) -> usize) -> ProtocolError {
        let expect: usize = (0..nclients.min(32))
            .filter(|c| self.client_mask & (1 << c) != 0)
            .map(size_of)
            .sum();
        ProtocolError::new(format!(
            "{} from the server has {} bytes of data for client mask 0x{:x}, expected {expect}",
            label_name(self.label),
            self.data.len(),
            self.client_mask
        ))
    }
}

/// Encodes an array of `IMPI_Uint4`.
pub fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// Encodes an array of `IMPI_Int8`.
pub fn i64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// Encodes an array of `IMPI_Version`.
pub fn versions(v: &[Version]) -> Vec<u8> {
    v.iter()
        .flat_map(|x| {
            x.major
                .to_be_bytes()
                .into_iter()
                .chain(x.minor.to_be_bytes())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{CmdHeader, CMD_HEADER_LEN};

    #[test]
    fn label_values_of_impi_0_0() {
        assert_eq!(
            MANDATED,
            [
                0x1000, 0x1100, 0x1200, 0x1300, 0x1400, 0x1500, 0x1600, 0x2000, 0x2100, 0x2200,
                0x2300, 0x2400, 0x3000, 0x3100
            ]
        );
        assert!(MANDATED.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(label_name(H_PORT), "IMPI_H_PORT");
        assert_eq!(label_name(0x7777), "label 0x7777");
    }

    /// The client half of the spec's IMPI_H_PORT example (client 0: len 16).
    #[test]
    fn spec_example_client_h_port() {
        let b = encode_client_coll(H_PORT, &u32s(&[5001, 5002, 5003]));
        let h = CmdHeader::decode(&b);
        assert_eq!((h.cmd, h.len), (CMD_COLL, 16));
        let (label, data) = decode_client_coll(&b[CMD_HEADER_LEN..]).unwrap();
        assert_eq!(label, H_PORT);
        assert_eq!(data, &u32s(&[5001, 5002, 5003])[..]);
        // IMPI_C_NHOSTS: {IMPI_CMD_COLL, 8}.
        assert_eq!(
            CmdHeader::decode(&encode_client_coll(C_NHOSTS, &u32s(&[3]))).len,
            8
        );
    }

    /// The server half of the spec's examples: lengths 20, 16 (a client missing), 36, 72.
    #[test]
    fn spec_example_broadcasts() {
        let nhosts = Collated {
            label: C_NHOSTS,
            client_mask: 0x7,
            data: u32s(&[3, 2, 2]),
        };
        let b = nhosts.encode();
        assert_eq!(CmdHeader::decode(&b).len, 20);
        let back = Collated::decode(&b[CMD_HEADER_LEN..]).unwrap();
        assert_eq!(back, nhosts);
        assert!(back.from_all(3));

        let datalen = Collated {
            label: C_DATALEN,
            client_mask: 0x5,
            data: u32s(&[8000, 4000]),
        };
        assert_eq!(CmdHeader::decode(&datalen.encode()).len, 16);
        assert!(!datalen.from_all(3));
        let parts = datalen.split(3, |_| 4).unwrap();
        assert_eq!(parts[0], Some(&8000u32.to_be_bytes()[..]));
        assert_eq!(parts[1], None);
        assert_eq!(parts[2], Some(&4000u32.to_be_bytes()[..]));

        let ports = Collated {
            label: H_PORT,
            client_mask: 0x7,
            data: u32s(&[5001, 5002, 5003, 6001, 6002, 7001, 7002]),
        };
        assert_eq!(CmdHeader::decode(&ports.encode()).len, 36);
        let nh = [3usize, 2, 2];
        let parts = ports.split(3, |c| 4 * nh[c as usize]).unwrap();
        assert_eq!(parts[1], Some(&u32s(&[6001, 6002])[..]));
        assert!(ports.split(3, |_| 8).is_err());

        let v = |major, minor| Version { major, minor };
        let vers = Collated {
            label: C_VERSION,
            client_mask: 0x7,
            data: versions(&[
                v(0, 0),
                v(0, 1),
                v(0, 0),
                v(0, 1),
                v(0, 2),
                v(0, 0),
                v(0, 1),
                v(0, 2),
            ]),
        };
        assert_eq!(CmdHeader::decode(&vers.encode()).len, 72);
    }

    #[test]
    fn short_payloads_are_errors() {
        assert!(decode_client_coll(&[0, 0, 1]).is_err());
        assert!(Collated::decode(&[0; 7]).is_err());
    }
}
