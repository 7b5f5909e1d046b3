//! The CPUs of a node: how many the node's ranks share, and which one each rank of an
//! oversubscribed node runs on.
//!
//! Each rank's business card carries the CPUs it may run on ([`cpu_card`]). The node's
//! CPU count is the size of the union of its ranks' sets, capped by a cgroup CPU quota
//! where one limits them: every rank of the node computes
//! the same value, so all agree whether the node is oversubscribed, which decides the
//! waiting policy and the ring size. A launcher that binds each rank to its own core no
//! longer makes every rank believe it shares a single CPU with the others.
//!
//! With more ranks on a node than CPUs, the kernel time-shares each CPU among several
//! ranks and keeps whatever split it started with. On the 2-CPU development VM an 8-rank
//! job ran with 5 or 6 ranks on one CPU and 3 or 2 on the other in about half the runs,
//! and a ring exchange then took 25-40% longer than with 4 and 4. So at `MPI_Init` each
//! rank of an oversubscribed node binds itself to one CPU of the set it may run on, in
//! blocks of consecutive local ranks (local ranks 0-3 on the first CPU and 4-7 on the
//! second, for 8 ranks on 2 CPUs): every CPU carries its share, and ranks that are
//! neighbours in rank order, which most programs talk to, share a CPU and its caches.
//!
//! Nothing changes when the node is not oversubscribed, when the rank may run on one
//! CPU only (a launcher bound it already), or with `OXMPI_BIND=none`. The binding
//! narrows the set the rank inherited, so it never leaves a CPU set that `taskset`,
//! a cgroup or the launcher gave it. It applies to the thread that calls `MPI_Init`
//! and the threads it starts afterwards.

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// `OXMPI_BIND`: what a rank of an oversubscribed node does about its CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bind {
    /// Bind to one CPU, in blocks of consecutive local ranks.
    Block,
    /// Leave placement to the kernel.
    None,
}

impl Bind {
    /// Parses a value of `OXMPI_BIND`.
    pub fn parse(v: &str) -> Option<Bind> {
        match v.trim().to_ascii_lowercase().as_str() {
            "block" | "auto" => Some(Bind::Block),
            "none" | "0" | "off" => Some(Bind::None),
            _ => None,
        }
    }
}

/// The CPU of local rank `index` of `nlocal` among `allowed` (in increasing order):
/// blocks of consecutive local ranks, as equal in size as the counts allow.
pub fn block_cpu(allowed: &[usize], index: usize, nlocal: usize) -> Option<usize> {
    if index >= nlocal {
        return None;
    }
    allowed.get(index * allowed.len() / nlocal).copied()
}

/// The CPUs this thread may run on, in increasing order.
pub fn allowed_cpus() -> Option<Vec<usize>> {
    let set = sched_getaffinity(Pid::from_raw(0)).ok()?;
    Some(
        (0..CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap_or(false))
            .collect(),
    )
}

/// This rank's card field: how many CPUs it may use, then its CPU set as ranges,
/// `<count>:<a>-<b>.<c>...` (for example `2:0-1`; commas separate card fields).
pub fn cpu_card() -> String {
    let cpus = allowed_cpus().unwrap_or_default();
    let mut ranges: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        ranges.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    format!("{}:{}", crate::sys::available_cpus(), ranges.join("."))
}

/// A rank's CPUs as its card gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardCpus {
    /// How many CPUs the rank may use (its set, lowered by a quota).
    pub count: usize,
    /// The CPUs of its set.
    pub set: Vec<usize>,
}

/// Parses a field written by [`cpu_card`].
pub fn parse_cpu_card(field: &str) -> Option<CardCpus> {
    let (count, list) = field.split_once(':')?;
    let count = count.parse().ok()?;
    let mut set = Vec::new();
    for part in list.split('.').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
        // Bounded: no kernel has this many CPUs, and a card must not make us allocate.
        if a > b || b >= 1 << 16 {
            return None;
        }
        set.extend(a..=b);
    }
    Some(CardCpus { count, set })
}

/// CPUs shared by the ranks whose cards are `cards` (at least 1): the size of the
/// union of their sets, capped by the quota that limits any of them (a rank that may use
/// fewer CPUs than its set holds is under a cgroup quota, normally the whole job's).
pub fn node_cpus<'a>(cards: impl IntoIterator<Item = &'a CardCpus>) -> usize {
    let mut union = std::collections::BTreeSet::new();
    let mut quota = usize::MAX;
    for c in cards {
        union.extend(c.set.iter().copied());
        if c.count < c.set.len() {
            quota = quota.min(c.count);
        }
    }
    union.len().min(quota).max(1)
}

/// Applies `bind` to the calling thread, local rank `index` of the `nlocal` ranks of
/// its node. Returns the CPU it is now bound to, or None where nothing changed (not
/// oversubscribed, a single CPU allowed already, `Bind::None`, or the kernel refused).
pub fn apply(bind: Bind, index: usize, nlocal: usize) -> Option<usize> {
    if bind == Bind::None {
        return None;
    }
    let allowed = allowed_cpus()?;
    if allowed.len() <= 1 || nlocal <= allowed.len() {
        return None;
    }
    let cpu = block_cpu(&allowed, index, nlocal)?;
    let mut one = CpuSet::new();
    one.set(cpu).ok()?;
    // A refusal (a seccomp filter, say) leaves the rank where the kernel put it.
    sched_setaffinity(Pid::from_raw(0), &one).ok()?;
    Some(cpu)
}

/// The hardware facts `MPI_Get_hw_resource_info` (MPI-4.1) returns, as info keys and
/// values, taken at the moment of the call: the hardware level oxmpi knows
/// (`mpi_hw_resource_type`, the one `MPI_Comm_split_type` groups by) and the CPUs the
/// calling thread may run on (`oxmpi_ncpus`, and `oxmpi_cpus` as ranges such as `0-3,8`).
pub fn hw_resource_entries() -> Vec<(String, String)> {
    let card = cpu_card();
    let (count, ranges) = card.split_once(':').unwrap_or(("0", ""));
    vec![
        (
            "mpi_hw_resource_type".to_string(),
            "mpi_shared_memory".to_string(),
        ),
        ("oxmpi_ncpus".to_string(), count.to_string()),
        ("oxmpi_cpus".to_string(), ranges.replace('.', ",")),
    ]
}

#[cfg(test)]
mod tests {

    #[test]
    fn hw_resource_entries_name_the_cpu_set() {
        let e = hw_resource_entries();
        assert_eq!(
            e[0],
            ("mpi_hw_resource_type".into(), "mpi_shared_memory".into())
        );
        let n: usize = e[1].1.parse().unwrap();
        assert_eq!(n, allowed_cpus().unwrap_or_default().len());
        let listed: usize = e[2]
            .1
            .split(',')
            .filter(|r| !r.is_empty())
            .map(|r| match r.split_once('-') {
                Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
                None => 1,
            })
            .sum();
        assert_eq!(listed, n);
    }

    use super::*;

    #[test]
    fn blocks_of_consecutive_ranks() {
        let got: Vec<_> = (0..8).map(|i| block_cpu(&[0, 1], i, 8).unwrap()).collect();
        assert_eq!(got, [0, 0, 0, 0, 1, 1, 1, 1]);
        let cpus = [2, 5, 7];
        let got: Vec<_> = (0..7).map(|i| block_cpu(&cpus, i, 7).unwrap()).collect();
        assert_eq!(got, [2, 2, 2, 5, 5, 7, 7]);
        let got: Vec<_> = (0..5).map(|i| block_cpu(&[0, 1], i, 5).unwrap()).collect();
        assert_eq!(got, [0, 0, 0, 1, 1]);
        assert_eq!(block_cpu(&cpus, 7, 7), None);
        assert_eq!(block_cpu(&[], 0, 3), None);
    }

    #[test]
    fn cards_round_trip_and_combine() {
        let mine = parse_cpu_card(&cpu_card()).unwrap();
        assert_eq!(mine.set, allowed_cpus().unwrap());
        assert_eq!(mine.count, crate::sys::available_cpus());
        let c = |s: &str| parse_cpu_card(s).unwrap();
        assert_eq!(
            c("4:0-2.5"),
            CardCpus {
                count: 4,
                set: vec![0, 1, 2, 5]
            }
        );
        // Two ranks bound to one core each share two CPUs.
        assert_eq!(node_cpus(&[c("1:0"), c("1:1")]), 2);
        // Unbound ranks of a 2-CPU machine.
        assert_eq!(node_cpus(&[c("2:0-1"), c("2:0-1"), c("2:0-1")]), 2);
        // A quota of 2 CPUs over a set of 8.
        assert_eq!(node_cpus(&[c("2:0-7"), c("2:0-7")]), 2);
        assert_eq!(node_cpus(&[]), 1);
        for bad in ["", "2", "x:0", "2:1-0", "2:a", "2:0-99999999"] {
            assert_eq!(parse_cpu_card(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parses_the_variable() {
        assert_eq!(Bind::parse("block"), Some(Bind::Block));
        assert_eq!(Bind::parse(" None "), Some(Bind::None));
        assert_eq!(Bind::parse("auto"), Some(Bind::Block));
        assert_eq!(Bind::parse("cores"), None);
    }

    #[test]
    fn leaves_a_rank_alone_when_not_oversubscribed() {
        let before = allowed_cpus().unwrap();
        assert_eq!(apply(Bind::Block, 0, 1), None);
        assert_eq!(apply(Bind::None, 0, 1000), None);
        assert_eq!(allowed_cpus().unwrap(), before);
    }
}
