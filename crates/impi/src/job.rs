//! What a client contributes to the startup exchange ([`LocalClient`]: its hosts and
//! procs and its parameters, turned into the IMPI 0.0 labels in ascending order) and
//! what every client derives from the broadcasts ([`Job`]: the negotiated version,
//! maximum data length, tag bound, collective thresholds, and the global tables of
//! clients, hosts and procs in `MPI_COMM_WORLD` order).

use std::collections::{BTreeMap, HashSet};
use std::net::{IpAddr, Ipv6Addr};

use crate::label::*;
use crate::packet::Proc;
use crate::wire::{get_i64, get_u32, ProtocolError};

/// A proc of this client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalProc {
    /// `IMPI_P_IPV6`: identifies the proc together with `pid`.
    pub ipv6: [u8; 16],
    /// `IMPI_P_PID`.
    pub pid: i64,
}

/// A host of this client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalHost {
    /// `IMPI_H_IPV6`: where the host listens.
    pub ipv6: [u8; 16],
    /// `IMPI_H_PORT`.
    pub port: u32,
    /// `IMPI_H_ACKMARK`.
    pub ackmark: u32,
    /// `IMPI_H_HIWATER`.
    pub hiwater: u32,
    /// Its procs, in `MPI_COMM_WORLD` order.
    pub procs: Vec<LocalProc>,
}

/// Everything one client submits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalClient {
    /// `IMPI_C_VERSION`, strictly ascending, starting with 0.0.
    pub versions: Vec<Version>,
    /// `IMPI_C_DATALEN`.
    pub datalen: u32,
    /// `IMPI_C_TAGUB`.
    pub tagub: i32,
    /// `IMPI_C_COLL_XSIZE` (-1: the default).
    pub coll_xsize: i32,
    /// `IMPI_C_COLL_MAXLINEAR` (-1: the default).
    pub coll_maxlinear: i32,
    pub hosts: Vec<LocalHost>,
    /// Labels beyond IMPI 0.0 (extensions), with their data.
    pub extra_labels: Vec<(i32, Vec<u8>)>,
    /// Submit oxmpi's host-authentication label ([`crate::extension`]); its flag depends
    /// on the method the server chooses, so the client adds it after authenticating.
    pub host_auth: bool,
}

/// The IPv4-mapped IPv6 form of an address (`::ffff:a.b.c.d`); IPv6 stays as it is.
pub fn ipv6_bytes(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

/// The address in a 16-byte container: IPv4-mapped and IPv4-compatible forms give the
/// IPv4 address (RFC 2373, quoted in spec 1.2.3); anything else is IPv6.
pub fn ip_from_bytes(b: [u8; 16]) -> IpAddr {
    let v6 = Ipv6Addr::from(b);
    if let Some(v4) = v6.to_ipv4_mapped() {
        return IpAddr::V4(v4);
    }
    // IPv4-compatible: 96 zero bits, and not :: or ::1.
    if b[..12].iter().all(|&x| x == 0) && u32::from_be_bytes(b[12..].try_into().unwrap()) > 1 {
        return IpAddr::V4(std::net::Ipv4Addr::new(b[12], b[13], b[14], b[15]));
    }
    IpAddr::V6(v6)
}

impl LocalClient {
    /// Total procs over the hosts.
    pub fn nprocs(&self) -> usize {
        self.hosts.iter().map(|h| h.procs.len()).sum()
    }

    /// Checks the values against the spec's rules before anything is sent.
    pub fn validate(&self) -> Result<(), String> {
        if self.versions.first() != Some(&Version::V0_0) {
            return Err("the IMPI versions must start with 0.0".into());
        }
        if !self.versions.windows(2).all(|w| w[0] < w[1]) {
            return Err("the IMPI versions must be strictly ascending".into());
        }
        if self.hosts.is_empty() {
            return Err("a client needs at least one host".into());
        }
        if self.nprocs() == 0 {
            return Err("a client needs at least one proc".into());
        }
        if self.datalen == 0 {
            return Err("IMPI_C_DATALEN must be at least 1".into());
        }
        if self.tagub < 32767 {
            return Err(format!("IMPI_C_TAGUB {} is below 32767", self.tagub));
        }
        for (name, v) in [
            ("IMPI_C_COLL_XSIZE", self.coll_xsize),
            ("IMPI_C_COLL_MAXLINEAR", self.coll_maxlinear),
        ] {
            if v < -1 {
                return Err(format!("{name} {v}: -1 (default) or a value >= 0"));
            }
        }
        for (i, h) in self.hosts.iter().enumerate() {
            if h.ackmark == 0 || h.ackmark > h.hiwater {
                return Err(format!(
                    "host {i}: needs 1 <= ackmark ({}) <= hiwater ({})",
                    h.ackmark, h.hiwater
                ));
            }
            if h.port == 0 || h.port > 65535 {
                return Err(format!("host {i}: port {} is not a TCP port", h.port));
            }
        }
        for &(l, _) in &self.extra_labels {
            if l == NO_LABEL || MANDATED.contains(&l) || l == crate::extension::LABEL_HOST_AUTH {
                return Err(format!(
                    "extension label {} collides with IMPI 0.0",
                    label_name(l)
                ));
            }
        }
        Ok(())
    }

    /// The labels to submit, in strictly ascending label order.
    pub fn labels(&self) -> Vec<(i32, Vec<u8>)> {
        let hosts = &self.hosts;
        let procs = || hosts.iter().flat_map(|h| h.procs.iter());
        let mut v: BTreeMap<i32, Vec<u8>> = BTreeMap::new();
        v.insert(C_VERSION, versions(&self.versions));
        v.insert(C_NHOSTS, u32s(&[hosts.len() as u32]));
        v.insert(C_NPROCS, u32s(&[self.nprocs() as u32]));
        v.insert(C_DATALEN, u32s(&[self.datalen]));
        v.insert(C_TAGUB, self.tagub.to_be_bytes().to_vec());
        v.insert(C_COLL_XSIZE, self.coll_xsize.to_be_bytes().to_vec());
        v.insert(C_COLL_MAXLINEAR, self.coll_maxlinear.to_be_bytes().to_vec());
        v.insert(H_IPV6, hosts.iter().flat_map(|h| h.ipv6).collect());
        v.insert(
            H_PORT,
            u32s(&hosts.iter().map(|h| h.port).collect::<Vec<_>>()),
        );
        v.insert(
            H_NPROCS,
            u32s(
                &hosts
                    .iter()
                    .map(|h| h.procs.len() as u32)
                    .collect::<Vec<_>>(),
            ),
        );
        v.insert(
            H_ACKMARK,
            u32s(&hosts.iter().map(|h| h.ackmark).collect::<Vec<_>>()),
        );
        v.insert(
            H_HIWATER,
            u32s(&hosts.iter().map(|h| h.hiwater).collect::<Vec<_>>()),
        );
        v.insert(P_IPV6, procs().flat_map(|p| p.ipv6).collect());
        v.insert(P_PID, i64s(&procs().map(|p| p.pid).collect::<Vec<_>>()));
        for (l, d) in &self.extra_labels {
            v.insert(*l, d.clone());
        }
        v.into_iter().collect()
    }
}

/// One client of the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientEntry {
    pub versions: Vec<Version>,
    pub nhosts: u32,
    pub nprocs: u32,
    /// Global number of its first host.
    pub first_host: u32,
    /// `MPI_COMM_WORLD` rank of its first proc.
    pub first_proc: u32,
}

/// One host of the job (hosts are numbered client by client, in client-rank order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostEntry {
    pub client: u32,
    pub ipv6: [u8; 16],
    pub port: u32,
    pub nprocs: u32,
    pub ackmark: u32,
    pub hiwater: u32,
    /// `MPI_COMM_WORLD` rank of its first proc.
    pub first_proc: u32,
}

/// One proc of the job; its index in [`Job::procs`] is its `MPI_COMM_WORLD` rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcEntry {
    pub client: u32,
    pub host: u32,
    pub id: Proc,
}

/// The job as every client derives it from the server's broadcasts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub nclients: u32,
    /// This client's rank.
    pub my_client: u32,
    /// The highest version every client supports.
    pub version: Version,
    /// `IMPI_Pk_maxdatalen`: the smallest `IMPI_C_DATALEN`.
    pub maxdatalen: u32,
    /// `IMPI_Tag_ub`: the smallest `IMPI_C_TAGUB`.
    pub tag_ub: i32,
    /// The agreed `IMPI_C_COLL_XSIZE` (default resolved).
    pub coll_xsize: i32,
    /// The agreed `IMPI_C_COLL_MAXLINEAR` (default resolved).
    pub coll_maxlinear: i32,
    pub clients: Vec<ClientEntry>,
    pub hosts: Vec<HostEntry>,
    pub procs: Vec<ProcEntry>,
    /// Every label broadcast, known or not, in the order received.
    pub labels: Vec<Collated>,
}

fn err(msg: String) -> ProtocolError {
    ProtocolError::new(msg)
}

/// The broadcast of a mandated label, which every client must have submitted.
fn mandated<'a>(
    by_label: &BTreeMap<i32, &'a Collated>,
    label: i32,
    n: u32,
) -> Result<&'a Collated, ProtocolError> {
    let c = by_label
        .get(&label)
        .ok_or_else(|| err(format!("the server never broadcast {}", label_name(label))))?;
    if !c.from_all(n) {
        let missing: Vec<String> = (0..n)
            .filter(|i| c.client_mask & (1 << i) == 0)
            .map(|i| i.to_string())
            .collect();
        return Err(err(format!(
            "{} is mandated in IMPI 0.0 but client(s) {} did not submit it (client mask 0x{:x})",
            label_name(label),
            missing.join(","),
            c.client_mask
        )));
    }
    Ok(c)
}

/// One 4-byte value per client.
fn per_client_u32(c: &Collated, n: u32) -> Result<Vec<u32>, ProtocolError> {
    Ok(c.split(n, |_| 4)?
        .into_iter()
        .map(|p| get_u32(p.unwrap(), 0))
        .collect())
}

/// The agreed value of a collective threshold: -1 means the default; every client's
/// value, defaults resolved, must be the same.
fn agreed(c: &Collated, n: u32, default: i32) -> Result<i32, ProtocolError> {
    let vals: Vec<i32> = per_client_u32(c, n)?
        .into_iter()
        .map(|v| v as i32)
        .collect();
    let mut agreed = None;
    for (i, &v) in vals.iter().enumerate() {
        if v < -1 {
            return Err(err(format!(
                "{} of client {i} is {v} (-1 or >= 0)",
                label_name(c.label)
            )));
        }
        let v = if v == -1 { default } else { v };
        match agreed {
            None => agreed = Some(v),
            Some(a) if a != v => {
                return Err(err(format!(
                    "the clients disagree on {}: {:?} (-1 = default {default})",
                    label_name(c.label),
                    vals
                )))
            }
            Some(_) => {}
        }
    }
    Ok(agreed.unwrap_or(default))
}

impl Job {
    /// Derives the job from the broadcasts. `nclients` is the size the server sent.
    pub fn from_collated(
        labels: Vec<Collated>,
        my_client: u32,
        nclients: u32,
    ) -> Result<Job, ProtocolError> {
        let n = nclients;
        if n == 0 || n > crate::server::MAX_CLIENTS {
            return Err(err(format!(
                "a job of {n} clients (1 to {})",
                crate::server::MAX_CLIENTS
            )));
        }
        let by_label: BTreeMap<i32, &Collated> = labels.iter().map(|c| (c.label, c)).collect();

        // Versions: each client's array is strictly ascending and starts with 0.0, so in
        // the concatenation every 0.0 begins the next client's array.
        let vc = mandated(&by_label, C_VERSION, n)?;
        if vc.data.len() % 8 != 0 {
            return Err(err(format!(
                "IMPI_C_VERSION data of {} bytes is not a whole number of IMPI_Version",
                vc.data.len()
            )));
        }
        let all: Vec<Version> = vc
            .data
            .chunks(8)
            .map(|c| Version {
                major: get_u32(c, 0),
                minor: get_u32(c, 4),
            })
            .collect();
        let mut arrays: Vec<Vec<Version>> = Vec::new();
        for v in all {
            if v == Version::V0_0 {
                arrays.push(Vec::new());
            }
            match arrays.last_mut() {
                Some(a) => a.push(v),
                None => return Err(err(format!("IMPI_C_VERSION of client 0 starts with {v}, not 0.0 (every client must support 0.0)"))),
            }
        }
        if arrays.len() != n as usize {
            return Err(err(format!(
                "IMPI_C_VERSION holds {} version lists (each starting with 0.0) for {n} clients",
                arrays.len()
            )));
        }
        for (i, a) in arrays.iter().enumerate() {
            if !a.windows(2).all(|w| w[0] < w[1]) {
                return Err(err(format!(
                    "IMPI_C_VERSION of client {i} is not strictly ascending"
                )));
            }
        }
        let version = arrays[0]
            .iter()
            .rev()
            .find(|v| arrays.iter().all(|a| a.contains(v)))
            .copied()
            .unwrap_or(Version::V0_0);

        let nhosts = per_client_u32(mandated(&by_label, C_NHOSTS, n)?, n)?;
        let nprocs = per_client_u32(mandated(&by_label, C_NPROCS, n)?, n)?;
        for i in 0..n as usize {
            if nhosts[i] == 0 || nprocs[i] == 0 {
                return Err(err(format!(
                    "client {i} has {} hosts and {} procs (both must be >= 1)",
                    nhosts[i], nprocs[i]
                )));
            }
        }
        let total_hosts: u64 = nhosts.iter().map(|&x| u64::from(x)).sum();
        let total_procs: u64 = nprocs.iter().map(|&x| u64::from(x)).sum();
        if total_hosts > 1 << 20 || total_procs > 1 << 24 {
            return Err(err(format!("{total_hosts} hosts and {total_procs} procs is more than this implementation handles")));
        }
        let datalen = per_client_u32(mandated(&by_label, C_DATALEN, n)?, n)?;
        if let Some(i) = datalen.iter().position(|&d| d == 0) {
            return Err(err(format!(
                "IMPI_C_DATALEN of client {i} is 0 (must be >= 1)"
            )));
        }
        let maxdatalen = *datalen.iter().min().unwrap();
        let tags: Vec<i32> = per_client_u32(mandated(&by_label, C_TAGUB, n)?, n)?
            .into_iter()
            .map(|v| v as i32)
            .collect();
        let tag_ub = *tags.iter().min().unwrap();
        if tag_ub < 32767 {
            return Err(err(format!(
                "IMPI_C_TAGUB {:?}: the smallest, {tag_ub}, is below 32767",
                tags
            )));
        }
        let coll_xsize = agreed(mandated(&by_label, C_COLL_XSIZE, n)?, n, DEFAULT_COLL_XSIZE)?;
        let coll_maxlinear = agreed(
            mandated(&by_label, C_COLL_MAXLINEAR, n)?,
            n,
            DEFAULT_COLL_MAXLINEAR,
        )?;

        // Per-host arrays, client after client.
        let host_array = |label: i32, size: usize| -> Result<Vec<u8>, ProtocolError> {
            let c = mandated(&by_label, label, n)?;
            c.split(n, |i| size * nhosts[i as usize] as usize)?;
            Ok(c.data.clone())
        };
        let h_ipv6 = host_array(H_IPV6, 16)?;
        let h_port = host_array(H_PORT, 4)?;
        let h_nprocs = host_array(H_NPROCS, 4)?;
        let h_ack = host_array(H_ACKMARK, 4)?;
        let h_hi = host_array(H_HIWATER, 4)?;
        let mut clients = Vec::with_capacity(n as usize);
        let mut hosts = Vec::with_capacity(total_hosts as usize);
        let (mut first_host, mut first_proc) = (0u32, 0u32);
        for c in 0..n {
            let mut sum = 0u64;
            for _ in 0..nhosts[c as usize] {
                let h = hosts.len();
                let port = get_u32(&h_port, 4 * h);
                let ackmark = get_u32(&h_ack, 4 * h);
                let hiwater = get_u32(&h_hi, 4 * h);
                let np = get_u32(&h_nprocs, 4 * h);
                if port == 0 || port > 65535 {
                    return Err(err(format!(
                        "IMPI_H_PORT of host {h} (client {c}) is {port}, not a TCP port"
                    )));
                }
                if ackmark == 0 || ackmark > hiwater {
                    return Err(err(format!(
                        "host {h} (client {c}): IMPI_H_ACKMARK {ackmark} and IMPI_H_HIWATER {hiwater} break 1 <= ackmark <= hiwater"
                    )));
                }
                hosts.push(HostEntry {
                    client: c,
                    ipv6: h_ipv6[16 * h..16 * h + 16].try_into().unwrap(),
                    port,
                    nprocs: np,
                    ackmark,
                    hiwater,
                    first_proc: first_proc + sum as u32,
                });
                sum += u64::from(np);
            }
            if sum != u64::from(nprocs[c as usize]) {
                return Err(err(format!(
                    "client {c}: IMPI_H_NPROCS adds up to {sum}, IMPI_C_NPROCS says {}",
                    nprocs[c as usize]
                )));
            }
            clients.push(ClientEntry {
                versions: arrays[c as usize].clone(),
                nhosts: nhosts[c as usize],
                nprocs: nprocs[c as usize],
                first_host,
                first_proc,
            });
            first_host += nhosts[c as usize];
            first_proc += nprocs[c as usize];
        }

        // Per-proc arrays.
        let proc_array = |label: i32, size: usize| -> Result<Vec<u8>, ProtocolError> {
            let c = mandated(&by_label, label, n)?;
            c.split(n, |i| size * nprocs[i as usize] as usize)?;
            Ok(c.data.clone())
        };
        let p_ipv6 = proc_array(P_IPV6, 16)?;
        let p_pid = proc_array(P_PID, 8)?;
        let mut procs = Vec::with_capacity(total_procs as usize);
        let mut seen = HashSet::with_capacity(total_procs as usize);
        for (h, host) in hosts.iter().enumerate() {
            for _ in 0..host.nprocs {
                let r = procs.len();
                let id = Proc {
                    hostid: p_ipv6[16 * r..16 * r + 16].try_into().unwrap(),
                    pid: get_i64(&p_pid, 8 * r),
                };
                if !seen.insert(id) {
                    return Err(err(format!(
                        "proc {r} (client {}) has the same IMPI_P_IPV6 {} and IMPI_P_PID {} as an earlier proc",
                        host.client,
                        ip_from_bytes(id.hostid),
                        id.pid
                    )));
                }
                procs.push(ProcEntry {
                    client: host.client,
                    host: h as u32,
                    id,
                });
            }
        }
        Ok(Job {
            nclients: n,
            my_client,
            version,
            maxdatalen,
            tag_ub,
            coll_xsize,
            coll_maxlinear,
            clients,
            hosts,
            procs,
            labels,
        })
    }

    /// The hosts this client's host `my_host` connects to (lower-ranked hosts of other
    /// clients) and the hosts it accepts from (higher-ranked hosts of other clients),
    /// per the connect/accept order of spec 2.3.8. Hosts of one client talk natively.
    pub fn dance(&self, my_host: u32) -> (Vec<u32>, Vec<u32>) {
        let me = self.hosts[my_host as usize].client;
        let mut connect = Vec::new();
        let mut accept = Vec::new();
        for (i, h) in self.hosts.iter().enumerate() {
            let i = i as u32;
            if h.client == me {
                continue;
            }
            if i < my_host {
                connect.push(i);
            } else {
                accept.push(i);
            }
        }
        (connect, accept)
    }

    /// A one-line-per-entry description of the job, for `impirun -v` and tests.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "IMPI job: {} clients, version {}, maxdatalen {}, tag_ub {}, coll_xsize {}, coll_maxlinear {}\n",
            self.nclients, self.version, self.maxdatalen, self.tag_ub, self.coll_xsize, self.coll_maxlinear
        );
        for (i, c) in self.clients.iter().enumerate() {
            let v: Vec<String> = c.versions.iter().map(|v| v.to_string()).collect();
            s += &format!(
                "client {i}: versions {} hosts {} procs {} first_rank {}\n",
                v.join(","),
                c.nhosts,
                c.nprocs,
                c.first_proc
            );
        }
        for (i, h) in self.hosts.iter().enumerate() {
            s += &format!(
                "host {i}: client {} address {} port {} procs {} ackmark {} hiwater {}\n",
                h.client,
                ip_from_bytes(h.ipv6),
                h.port,
                h.nprocs,
                h.ackmark,
                h.hiwater
            );
        }
        for (r, p) in self.procs.iter().enumerate() {
            s += &format!(
                "proc {r}: client {} host {} address {} pid {}\n",
                p.client,
                p.host,
                ip_from_bytes(p.id.hostid),
                p.id.pid
            );
        }
        for c in &self.labels {
            if !MANDATED.contains(&c.label) {
                s += &format!(
                    "label 0x{:x}: client_mask 0x{:x}, {} bytes (not an IMPI 0.0 label; ignored)\n",
                    c.label as u32,
                    c.client_mask,
                    c.data.len()
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn addresses_in_16_bytes() {
        let v4 = IpAddr::V4(Ipv4Addr::new(128, 162, 19, 8));
        let mapped = ipv6_bytes(v4);
        assert_eq!(mapped[..12], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);
        assert_eq!(ip_from_bytes(mapped), v4);
        let mut compatible = [0u8; 16];
        compatible[12..].copy_from_slice(&[128, 162, 19, 8]);
        assert_eq!(ip_from_bytes(compatible), v4);
        // :: and ::1 stay IPv6.
        let mut one = [0u8; 16];
        one[15] = 1;
        assert_eq!(ip_from_bytes(one), IpAddr::V6(Ipv6Addr::LOCALHOST));
        assert_eq!(ip_from_bytes([0; 16]), IpAddr::V6(Ipv6Addr::UNSPECIFIED));
        let v6: Ipv6Addr = "2001:db8::7".parse().unwrap();
        assert_eq!(ip_from_bytes(ipv6_bytes(IpAddr::V6(v6))), IpAddr::V6(v6));
    }

    #[test]
    fn local_client_rules() {
        let host = |ack, hi, port| LocalHost {
            ipv6: [0; 16],
            port,
            ackmark: ack,
            hiwater: hi,
            procs: vec![LocalProc {
                ipv6: [0; 16],
                pid: 1,
            }],
        };
        let ok = LocalClient {
            versions: vec![Version::V0_0, Version { major: 0, minor: 1 }],
            datalen: 1,
            tagub: 32767,
            coll_xsize: -1,
            coll_maxlinear: 0,
            hosts: vec![host(1, 1, 1)],
            extra_labels: vec![(0x7000, vec![])],
            host_auth: false,
        };
        assert_eq!(ok.validate(), Ok(()));
        let labels = ok.labels();
        assert!(labels.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(labels.len(), MANDATED.len() + 1);
        for (bad, what) in [
            (
                LocalClient {
                    versions: vec![Version { major: 0, minor: 1 }],
                    ..ok.clone()
                },
                "start with 0.0",
            ),
            (
                LocalClient {
                    versions: vec![Version::V0_0, Version::V0_0],
                    ..ok.clone()
                },
                "strictly ascending",
            ),
            (
                LocalClient {
                    datalen: 0,
                    ..ok.clone()
                },
                "IMPI_C_DATALEN",
            ),
            (
                LocalClient {
                    tagub: 32766,
                    ..ok.clone()
                },
                "below 32767",
            ),
            (
                LocalClient {
                    coll_xsize: -2,
                    ..ok.clone()
                },
                "IMPI_C_COLL_XSIZE",
            ),
            (
                LocalClient {
                    hosts: vec![host(2, 1, 1)],
                    ..ok.clone()
                },
                "ackmark",
            ),
            (
                LocalClient {
                    hosts: vec![host(1, 1, 70000)],
                    ..ok.clone()
                },
                "not a TCP port",
            ),
            (
                LocalClient {
                    hosts: vec![],
                    ..ok.clone()
                },
                "at least one host",
            ),
            (
                LocalClient {
                    extra_labels: vec![(H_PORT, vec![])],
                    ..ok.clone()
                },
                "collides",
            ),
        ] {
            let e = bad.validate().unwrap_err();
            assert!(e.contains(what), "{what}: {e}");
        }
    }
}
