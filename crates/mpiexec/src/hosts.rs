//! Hosts of a multi-host job and where each rank runs: `-hosts h1,h2:4`, hostfiles
//! (`host[:slots]` per line, `#` comments), block placement by slots (or `-ppn`) and
//! round-robin placement, and the PMI `process_mapping` that describes the result.
//! Sans-IO.

/// One host as the user named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    pub name: String,
    /// Ranks to place there in one block; None = 1.
    pub slots: Option<u32>,
}

/// Largest slot count accepted on one host.
const MAX_SLOTS: u32 = 65536;

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 253
        && !n.starts_with('-')
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
}

/// Parses `host` or `host:slots`.
pub fn parse_entry(s: &str) -> Result<HostSpec, String> {
    let s = s.trim();
    let (name, slots) = match s.split_once(':') {
        Some((n, k)) => {
            let k: u32 = k
                .trim()
                .parse()
                .ok()
                .filter(|&k| (1..=MAX_SLOTS).contains(&k))
                .ok_or_else(|| format!("{s:?}: slots must be a number from 1 to {MAX_SLOTS}"))?;
            (n.trim(), Some(k))
        }
        None => (s, None),
    };
    if !valid_name(name) {
        return Err(format!(
            "{s:?}: a host name may only contain letters, digits, '.', '-' and '_'"
        ));
    }
    Ok(HostSpec {
        name: name.to_string(),
        slots,
    })
}

/// Parses the value of `-hosts`: comma-separated entries.
pub fn parse_list(v: &str) -> Result<Vec<HostSpec>, String> {
    let hosts = v
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(parse_entry)
        .collect::<Result<Vec<_>, _>>()?;
    if hosts.is_empty() {
        return Err("the host list is empty".into());
    }
    Ok(hosts)
}

/// Parses a hostfile: one `host[:slots]` per line; `#` starts a comment.
pub fn parse_hostfile(text: &str) -> Result<Vec<HostSpec>, String> {
    let mut hosts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        hosts.push(parse_entry(line).map_err(|e| format!("line {}: {e}", i + 1))?);
    }
    if hosts.is_empty() {
        return Err("no hosts in the file".into());
    }
    Ok(hosts)
}

/// How ranks are spread over the hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Consecutive ranks fill a host's slots (or `ppn`) before the next host; when
    /// every host is full the cycle starts again.
    Block { ppn: Option<u32> },
    /// Rank r goes to host r mod hosts.
    RoundRobin,
}

/// The host index of each of `n` ranks.
pub fn place(hosts: &[HostSpec], n: u32, how: Placement) -> Vec<usize> {
    let mut out = Vec::with_capacity(n as usize);
    if hosts.is_empty() {
        return out;
    }
    match how {
        Placement::RoundRobin => {
            for r in 0..n as usize {
                out.push(r % hosts.len());
            }
        }
        Placement::Block { ppn } => {
            let mut h = 0;
            while out.len() < n as usize {
                let k = ppn.or(hosts[h].slots).unwrap_or(1) as usize;
                for _ in 0..k.min(n as usize - out.len()) {
                    out.push(h);
                }
                h = (h + 1) % hosts.len();
            }
        }
    }
    out
}

/// The PMI `process_mapping` of a placement: `(vector,(node,count,ranks),...)` where
/// each triple says `count` consecutive nodes starting at `node` hold `ranks`
/// consecutive ranks each. Node numbers are the order of first use.
pub fn process_mapping(assign: &[usize]) -> String {
    // Renumber hosts by first appearance so node ids are dense.
    let mut order: Vec<usize> = Vec::new();
    let node: Vec<usize> = assign
        .iter()
        .map(|h| match order.iter().position(|x| x == h) {
            Some(i) => i,
            None => {
                order.push(*h);
                order.len() - 1
            }
        })
        .collect();
    // Runs of equal nodes.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &n in &node {
        match runs.last_mut() {
            Some((m, c)) if *m == n => *c += 1,
            _ => runs.push((n, 1)),
        }
    }
    // Merge runs of equal length on consecutive nodes.
    let mut triples: Vec<(usize, usize, usize)> = Vec::new();
    for (n, c) in runs {
        match triples.last_mut() {
            Some((start, count, len)) if *len == c && *start + *count == n => *count += 1,
            _ => triples.push((n, 1, c)),
        }
    }
    let body: Vec<String> = triples
        .iter()
        .map(|(s, k, c)| format!("({s},{k},{c})"))
        .collect();
    format!("(vector,{})", body.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(list: &str) -> Vec<HostSpec> {
        parse_list(list).unwrap()
    }

    #[test]
    fn entries_and_errors() {
        assert_eq!(
            parse_entry("node1:4").unwrap(),
            HostSpec {
                name: "node1".into(),
                slots: Some(4)
            }
        );
        assert_eq!(parse_entry(" a-b.c ").unwrap().slots, None);
        for bad in ["", "a:0", "a:x", "a b", "-oProxyCommand=x", "a;b", "a:"] {
            assert!(parse_entry(bad).is_err(), "{bad:?}");
        }
        assert!(parse_list(",,").is_err());
    }

    #[test]
    fn hostfile() {
        let f = "# cluster\nh1:2\n\n  h2   # second\nh3:1\n";
        let hs = parse_hostfile(f).unwrap();
        assert_eq!(hs.len(), 3);
        assert_eq!(hs[0].slots, Some(2));
        assert_eq!(hs[1].name, "h2");
        let e = parse_hostfile("h1\nbad host\n").unwrap_err();
        assert!(e.starts_with("line 2:"), "{e}");
        assert!(parse_hostfile("# nothing\n").is_err());
    }

    #[test]
    fn placements() {
        let hs = h("a:2,b");
        assert_eq!(
            place(&hs, 5, Placement::Block { ppn: None }),
            [0, 0, 1, 0, 0]
        );
        assert_eq!(
            place(&hs, 5, Placement::Block { ppn: Some(3) }),
            [0, 0, 0, 1, 1]
        );
        assert_eq!(place(&hs, 5, Placement::RoundRobin), [0, 1, 0, 1, 0]);
        assert_eq!(place(&hs, 1, Placement::RoundRobin), [0]);
    }

    #[test]
    fn mappings() {
        assert_eq!(process_mapping(&[0, 0, 1, 1]), "(vector,(0,2,2))");
        assert_eq!(process_mapping(&[0, 1, 0, 1]), "(vector,(0,2,1),(0,2,1))");
        assert_eq!(process_mapping(&[0, 0, 1]), "(vector,(0,1,2),(1,1,1))");
        assert_eq!(process_mapping(&[1, 1, 0]), "(vector,(0,1,2),(1,1,1))");
        assert_eq!(process_mapping(&[0, 0, 0]), "(vector,(0,1,3))");
    }
}
