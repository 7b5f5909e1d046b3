//! Group algebra (`MPI_Group_*`): building groups from others by union, intersection,
//! difference, inclusion and exclusion (by rank list or range triplets), comparing them
//! and translating ranks; and the table of group objects behind `MPI_Group` handles.
//!
//! Everything here is plain data: a [`Group`] is an ordered list of distinct world
//! ranks. Error messages name the argument and value; the bindings prefix the call.

use crate::comm::Group;
use crate::error::{err, ErrorClass, Result};
use crate::{PROC_NULL, UNDEFINED};
use std::collections::HashMap;
use std::sync::Arc;

/// Result of comparing two groups or communicators (`MPI_IDENT` ... `MPI_UNEQUAL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Ident = 0,
    Congruent = 1,
    Similar = 2,
    Unequal = 3,
}

/// Index of a group in the runtime's group table.
pub type GroupId = u32;
/// `MPI_GROUP_EMPTY`'s index.
pub const GROUP_EMPTY: GroupId = 0;

fn position_map(g: &Group) -> HashMap<u32, i32> {
    g.members()
        .iter()
        .enumerate()
        .map(|(i, &w)| (w, i as i32))
        .collect()
}

/// `MPI_Group_compare`: same members in the same order, same members in another
/// order, or different members.
pub fn compare(a: &Group, b: &Group) -> Comparison {
    if a.members() == b.members() {
        return Comparison::Ident;
    }
    if a.size() != b.size() {
        return Comparison::Unequal;
    }
    let mut x = a.members().to_vec();
    let mut y = b.members().to_vec();
    x.sort_unstable();
    y.sort_unstable();
    if x == y {
        Comparison::Similar
    } else {
        Comparison::Unequal
    }
}

/// `MPI_Group_union`: the members of `a`, then those of `b` not in `a`, each in their
/// group's order.
pub fn union(a: &Group, b: &Group) -> Group {
    let in_a = position_map(a);
    let mut v = a.members().to_vec();
    v.extend(b.members().iter().filter(|w| !in_a.contains_key(w)));
    Group::new(v).in_session(a.session().or(b.session()))
}

/// `MPI_Group_intersection`: the members of `a` that are also in `b`, in `a`'s order.
pub fn intersection(a: &Group, b: &Group) -> Group {
    let in_b = position_map(b);
    Group::new(
        a.members()
            .iter()
            .copied()
            .filter(|w| in_b.contains_key(w))
            .collect(),
    )
    .in_session(a.session())
}

/// `MPI_Group_difference`: the members of `a` that are not in `b`, in `a`'s order.
pub fn difference(a: &Group, b: &Group) -> Group {
    let in_b = position_map(b);
    Group::new(
        a.members()
            .iter()
            .copied()
            .filter(|w| !in_b.contains_key(w))
            .collect(),
    )
    .in_session(a.session())
}

/// Checks a list of distinct valid ranks of a group of `size` processes.
fn check_rank_list(ranks: &[i32], size: i32) -> Result<()> {
    let mut seen = vec![usize::MAX; size.max(0) as usize];
    for (i, &r) in ranks.iter().enumerate() {
        if !(0..size).contains(&r) {
            return err(
                ErrorClass::Rank,
                format!("invalid rank {r} in ranks[{i}] (group size {size})"),
            );
        }
        let s = &mut seen[r as usize];
        if *s != usize::MAX {
            return err(
                ErrorClass::Rank,
                format!(
                    "rank {r} appears twice in ranks (ranks[{}] and ranks[{i}])",
                    *s
                ),
            );
        }
        *s = i;
    }
    Ok(())
}

/// `MPI_Group_incl`: the processes of `g` at `ranks`, in that order.
pub fn incl(g: &Group, ranks: &[i32]) -> Result<Group> {
    check_rank_list(ranks, g.size())?;
    Ok(
        Group::new(ranks.iter().map(|&r| g.members()[r as usize]).collect())
            .in_session(g.session()),
    )
}

/// `MPI_Group_excl`: the processes of `g` not at `ranks`, in `g`'s order.
pub fn excl(g: &Group, ranks: &[i32]) -> Result<Group> {
    check_rank_list(ranks, g.size())?;
    let mut drop = vec![false; g.size() as usize];
    for &r in ranks {
        drop[r as usize] = true;
    }
    Ok(Group::new(
        g.members()
            .iter()
            .enumerate()
            .filter(|(i, _)| !drop[*i])
            .map(|(_, &w)| w)
            .collect(),
    )
    .in_session(g.session()))
}

/// Expands range triplets `(first, last, stride)` into the ranks they name, checking
/// that each triplet is well formed and every rank is valid and named once.
pub fn expand_ranges(ranges: &[[i32; 3]], size: i32) -> Result<Vec<i32>> {
    let mut out = Vec::new();
    let mut seen = vec![usize::MAX; size.max(0) as usize];
    for (i, &[first, last, stride]) in ranges.iter().enumerate() {
        if stride == 0 {
            return err(ErrorClass::Arg, format!("invalid stride 0 in ranges[{i}]"));
        }
        for (what, r) in [("first", first), ("last", last)] {
            if !(0..size).contains(&r) {
                return err(
                    ErrorClass::Rank,
                    format!("invalid {what} rank {r} in ranges[{i}] (group size {size})"),
                );
            }
        }
        if (stride > 0 && first > last) || (stride < 0 && first < last) {
            return err(
                ErrorClass::Arg,
                format!(
                    "invalid range ranges[{i}] = ({first}, {last}, {stride}): the stride does not lead from first to last"
                ),
            );
        }
        let count = (last as i64 - first as i64) / stride as i64 + 1;
        for k in 0..count {
            let r = (first as i64 + k * stride as i64) as i32;
            let s = &mut seen[r as usize];
            if *s != usize::MAX {
                return err(
                    ErrorClass::Rank,
                    format!(
                        "rank {r} is named twice by the ranges (ranges[{}] and ranges[{i}])",
                        *s
                    ),
                );
            }
            *s = i;
            out.push(r);
        }
    }
    Ok(out)
}

/// `MPI_Group_range_incl`.
pub fn range_incl(g: &Group, ranges: &[[i32; 3]]) -> Result<Group> {
    let ranks = expand_ranges(ranges, g.size())?;
    Ok(
        Group::new(ranks.iter().map(|&r| g.members()[r as usize]).collect())
            .in_session(g.session()),
    )
}

/// `MPI_Group_range_excl`.
pub fn range_excl(g: &Group, ranges: &[[i32; 3]]) -> Result<Group> {
    let ranks = expand_ranges(ranges, g.size())?;
    excl(g, &ranks)
}

/// `MPI_Group_translate_ranks`: the rank in `b` of each process at `ranks` in `a`
/// (`MPI_UNDEFINED` where it is not in `b`; `MPI_PROC_NULL` stays itself).
pub fn translate_ranks(a: &Group, ranks: &[i32], b: &Group) -> Result<Vec<i32>> {
    let in_b = position_map(b);
    ranks
        .iter()
        .enumerate()
        .map(|(i, &r)| {
            if r == PROC_NULL {
                return Ok(PROC_NULL);
            }
            match a.world_of(r) {
                Some(w) => Ok(in_b.get(&w).copied().unwrap_or(UNDEFINED)),
                None => err(
                    ErrorClass::Rank,
                    format!("invalid rank {r} in ranks1[{i}] (group1 size {})", a.size()),
                ),
            }
        })
        .collect()
}

/// The groups that `MPI_Group` handles name. Index 0 is `MPI_GROUP_EMPTY`.
pub struct GroupTable {
    slots: Vec<Option<Arc<Group>>>,
    free: Vec<GroupId>,
}

impl Default for GroupTable {
    fn default() -> Self {
        GroupTable {
            slots: vec![Some(Arc::new(Group::new(Vec::new())))],
            free: Vec::new(),
        }
    }
}

impl GroupTable {
    /// Stores a group and returns its index (`GROUP_EMPTY` for an empty group).
    pub fn insert(&mut self, g: Arc<Group>) -> GroupId {
        if g.size() == 0 {
            return GROUP_EMPTY;
        }
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(g);
                i
            }
            None => {
                self.slots.push(Some(g));
                (self.slots.len() - 1) as GroupId
            }
        }
    }

    pub fn get(&self, id: GroupId) -> Result<&Arc<Group>> {
        match self.slots.get(id as usize).and_then(|s| s.as_ref()) {
            Some(g) => Ok(g),
            None => err(
                ErrorClass::Group,
                format!("invalid group (index {id}, freed or never created)"),
            ),
        }
    }

    /// `MPI_Group_free`: releases the handle (`MPI_GROUP_EMPTY` stays valid).
    pub fn free(&mut self, id: GroupId) -> Result<()> {
        self.get(id)?;
        if id != GROUP_EMPTY {
            self.slots[id as usize] = None;
            self.free.push(id);
        }
        Ok(())
    }

    /// Number of created groups that have not been freed.
    pub fn live(&self) -> usize {
        self.slots.iter().skip(1).filter(|s| s.is_some()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn g(v: &[u32]) -> Group {
        Group::new(v.to_vec())
    }

    #[test]
    fn set_operations_keep_the_standard_order() {
        let a = g(&[5, 1, 3, 7]);
        let b = g(&[7, 2, 5, 9]);
        assert_eq!(union(&a, &b).members(), &[5, 1, 3, 7, 2, 9]);
        assert_eq!(intersection(&a, &b).members(), &[5, 7]);
        assert_eq!(intersection(&b, &a).members(), &[7, 5]);
        assert_eq!(difference(&a, &b).members(), &[1, 3]);
        assert_eq!(difference(&b, &a).members(), &[2, 9]);
    }

    #[test]
    fn compare_results() {
        assert_eq!(compare(&g(&[1, 2, 3]), &g(&[1, 2, 3])), Comparison::Ident);
        assert_eq!(compare(&g(&[1, 2, 3]), &g(&[3, 1, 2])), Comparison::Similar);
        assert_eq!(compare(&g(&[1, 2, 3]), &g(&[1, 2, 4])), Comparison::Unequal);
        assert_eq!(compare(&g(&[1, 2]), &g(&[1, 2, 3])), Comparison::Unequal);
        assert_eq!(compare(&g(&[]), &g(&[])), Comparison::Ident);
    }

    #[test]
    fn incl_and_excl() {
        let a = g(&[10, 11, 12, 13]);
        assert_eq!(incl(&a, &[3, 0]).unwrap().members(), &[13, 10]);
        assert_eq!(excl(&a, &[3, 0]).unwrap().members(), &[11, 12]);
        assert_eq!(incl(&a, &[]).unwrap().size(), 0);
        let e = incl(&a, &[0, 7]).unwrap_err();
        assert_eq!(e.class, ErrorClass::Rank);
        assert_eq!(e.message, "invalid rank 7 in ranks[1] (group size 4)");
        assert_eq!(excl(&a, &[1, 1]).unwrap_err().class, ErrorClass::Rank);
        assert_eq!(incl(&a, &[-1]).unwrap_err().class, ErrorClass::Rank);
        assert_eq!(
            incl(&a, &[0, 1, 2, 3, 0]).unwrap_err().class,
            ErrorClass::Rank
        );
    }

    #[test]
    fn range_triplets() {
        assert_eq!(expand_ranges(&[[0, 6, 2]], 8).unwrap(), vec![0, 2, 4, 6]);
        assert_eq!(expand_ranges(&[[7, 0, -3]], 8).unwrap(), vec![7, 4, 1]);
        assert_eq!(expand_ranges(&[[3, 3, 5]], 8).unwrap(), vec![3]);
        assert_eq!(
            expand_ranges(&[[0, 1, 1], [5, 4, -1]], 8).unwrap(),
            vec![0, 1, 5, 4]
        );
        assert_eq!(expand_ranges(&[], 8).unwrap(), Vec::<i32>::new());
        assert_eq!(
            expand_ranges(&[[0, 6, 0]], 8).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            expand_ranges(&[[0, 8, 1]], 8).unwrap_err().class,
            ErrorClass::Rank
        );
        assert_eq!(
            expand_ranges(&[[5, 1, 1]], 8).unwrap_err().class,
            ErrorClass::Arg
        );
        assert_eq!(
            expand_ranges(&[[0, 4, 2], [4, 5, 1]], 8).unwrap_err().class,
            ErrorClass::Rank
        );
        let a = g(&[10, 11, 12, 13, 14]);
        assert_eq!(
            range_incl(&a, &[[4, 0, -2]]).unwrap().members(),
            &[14, 12, 10]
        );
        assert_eq!(range_excl(&a, &[[4, 0, -2]]).unwrap().members(), &[11, 13]);
    }

    #[test]
    fn translate() {
        let a = g(&[4, 5, 6]);
        let b = g(&[6, 4]);
        assert_eq!(
            translate_ranks(&a, &[0, 1, 2, PROC_NULL], &b).unwrap(),
            vec![1, UNDEFINED, 0, PROC_NULL]
        );
        assert_eq!(
            translate_ranks(&a, &[3], &b).unwrap_err().class,
            ErrorClass::Rank
        );
    }

    #[test]
    fn table_reuses_slots_and_keeps_empty() {
        let mut t = GroupTable::default();
        assert_eq!(t.insert(Arc::new(g(&[]))), GROUP_EMPTY);
        let x = t.insert(Arc::new(g(&[1])));
        assert_eq!(x, 1);
        t.free(x).unwrap();
        assert_eq!(t.get(x).unwrap_err().class, ErrorClass::Group);
        assert_eq!(t.free(x).unwrap_err().class, ErrorClass::Group);
        assert_eq!(t.insert(Arc::new(g(&[2]))), x);
        t.free(GROUP_EMPTY).unwrap();
        assert!(t.get(GROUP_EMPTY).is_ok());
        assert_eq!(t.live(), 1);
    }

    fn arb_group() -> impl Strategy<Value = Group> {
        proptest::sample::subsequence((0u32..24).collect::<Vec<_>>(), 0..24)
            .prop_shuffle()
            .prop_map(Group::new)
    }

    proptest! {
        #[test]
        fn algebra_identities(a in arb_group(), b in arb_group()) {
            let u = union(&a, &b);
            let i = intersection(&a, &b);
            let d = difference(&a, &b);
            // |A ∪ B| = |A| + |B| - |A ∩ B|; A = (A \ B) ∪ (A ∩ B) as sets.
            prop_assert_eq!(u.size(), a.size() + b.size() - i.size());
            prop_assert_eq!(d.size() + i.size(), a.size());
            prop_assert_ne!(compare(&union(&d, &i), &a), Comparison::Unequal);
            // Union starts with A in A's order; intersection and difference are A-ordered.
            prop_assert_eq!(&u.members()[..a.members().len()], a.members());
            prop_assert_eq!(compare(&union(&a, &a), &a), Comparison::Ident);
            prop_assert_eq!(intersection(&a, &Group::new(vec![])).size(), 0);
            prop_assert_ne!(compare(&intersection(&a, &b), &intersection(&b, &a)), Comparison::Unequal);
            // incl of a permutation and translate_ranks invert each other.
            let n = a.size();
            let rev: Vec<i32> = (0..n).rev().collect();
            let r = incl(&a, &rev).unwrap();
            prop_assert_eq!(translate_ranks(&a, &(0..n).collect::<Vec<_>>(), &r).unwrap(), rev);
            prop_assert_eq!(excl(&a, &(0..n).collect::<Vec<_>>()).unwrap().size(), 0);
        }
    }
}
