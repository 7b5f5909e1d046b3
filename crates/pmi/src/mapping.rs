//! `PMI_process_mapping`: the job attribute that tells which node each rank runs on, in
//! MPICH's format `(vector,(first_node,node_count,ranks_per_node),...)`.
//!
//! Each block places `ranks_per_node` consecutive ranks on each of `node_count` nodes
//! numbered from `first_node`. When the blocks are used up before every rank is placed the
//! whole vector repeats (a cyclic placement).

use crate::error::PmiError;

/// Longest mapping string accepted.
const MAX_MAPPING_LEN: usize = 65536;

/// Formats the mapping for `size` ranks all on node 0.
pub fn format_process_mapping(size: u32) -> String {
    format!("(vector,(0,1,{size}))")
}

/// Returns the node id of each of the `size` ranks.
pub fn parse_process_mapping(s: &str, size: u32) -> Result<Vec<u32>, PmiError> {
    let bad = |why: &str| {
        let shown: String = s.chars().take(60).collect();
        PmiError::Protocol(format!("bad PMI_process_mapping {shown:?}: {why}"))
    };
    if s.len() > MAX_MAPPING_LEN {
        return Err(bad("too long"));
    }
    let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = compact
        .strip_prefix("(vector,")
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| bad("expected (vector,...)"))?;
    let mut blocks = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let r = rest.strip_prefix('(').ok_or_else(|| bad("expected '('"))?;
        let close = r.find(')').ok_or_else(|| bad("unclosed block"))?;
        let nums: Vec<&str> = r[..close].split(',').collect();
        if nums.len() != 3 {
            return Err(bad("a block must have three numbers"));
        }
        let mut v = [0u32; 3];
        for (slot, n) in v.iter_mut().zip(&nums) {
            *slot = n.parse().map_err(|_| bad("not a number"))?;
        }
        blocks.push(v);
        rest = &r[close + 1..];
        if let Some(r2) = rest.strip_prefix(',') {
            rest = r2;
            if rest.is_empty() {
                return Err(bad("trailing ','"));
            }
        } else if !rest.is_empty() {
            return Err(bad("expected ',' between blocks"));
        }
    }
    if blocks.is_empty() {
        return Err(bad("no blocks"));
    }
    let placed_per_round: u64 = blocks
        .iter()
        .map(|b| u64::from(b[1]) * u64::from(b[2]))
        .sum();
    if placed_per_round == 0 {
        return Err(bad("the blocks place no ranks"));
    }
    let mut nodes = Vec::with_capacity(size as usize);
    'outer: loop {
        for &[first, count, ppn] in &blocks {
            for n in 0..count {
                let node = first
                    .checked_add(n)
                    .ok_or_else(|| bad("node id overflow"))?;
                for _ in 0..ppn {
                    if nodes.len() == size as usize {
                        break 'outer;
                    }
                    nodes.push(node);
                }
            }
        }
        if nodes.len() == size as usize {
            break;
        }
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_node() {
        assert_eq!(
            parse_process_mapping(&format_process_mapping(3), 3).unwrap(),
            vec![0, 0, 0]
        );
    }

    #[test]
    fn blocks_and_cycles() {
        assert_eq!(
            parse_process_mapping("(vector,(0,2,2))", 4).unwrap(),
            vec![0, 0, 1, 1]
        );
        assert_eq!(
            parse_process_mapping("(vector,(0,2,1))", 5).unwrap(),
            vec![0, 1, 0, 1, 0]
        );
        assert_eq!(
            parse_process_mapping("(vector, (0,1,2), (1,1,1))", 3).unwrap(),
            vec![0, 0, 1]
        );
        // Hydra reports this for a single-node job of any size.
        assert_eq!(
            parse_process_mapping("(vector,(0,1,1))", 2).unwrap(),
            vec![0, 0]
        );
    }

    #[test]
    fn rejects() {
        for s in [
            "",
            "vector",
            "(vector,)",
            "(vector,(0,1))",
            "(vector,(0,0,0))",
            "(vector,(a,1,1))",
            "(vector,(0,1,1),)",
            "(vector,(0,1,1)(0,1,1))",
            "(vector,(4294967295,2,1))",
        ] {
            assert!(parse_process_mapping(s, 4).is_err(), "{s}");
        }
    }
}
