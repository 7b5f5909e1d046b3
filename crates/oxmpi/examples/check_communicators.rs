//! Test program: communicators and groups. Duplicates (separate message spaces),
//! splits by color and key, subgroups (collective and group-only creation), the group
//! algebra and rank translation, intercommunicators (point-to-point, collectives,
//! merge), Cartesian grids (coordinates, shifts, sub-grids), typed attributes, names
//! and error classes.

use oxmpi::attribute::AttributeKey;
use oxmpi::collective::SystemOperation;
use oxmpi::topology::{dims_create, Color, CommunicatorRelation, GroupRelation, UserGroup};
use oxmpi::traits::*;
use oxmpi::ErrorClass;

mod common;
use common::ok;

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());

    // Duplicates: same group, own message space.
    let dup = ok(rank, world.duplicate(), "duplicate");
    check_eq!(
        rank,
        (dup.rank(), dup.size()),
        (rank, size),
        "dup rank/size"
    );
    check_eq!(
        rank,
        ok(rank, world.compare(&dup), "compare"),
        CommunicatorRelation::Congruent,
        "world vs dup"
    );
    check_eq!(
        rank,
        ok(rank, world.compare(&world), "compare"),
        CommunicatorRelation::Identical,
        "world vs world"
    );
    dup.this_process().send_with_tag(&[rank; 2], 3)?;
    check!(
        rank,
        world.any_process().immediate_probe()?.is_none(),
        "a message on the duplicate is not visible on world"
    );
    let (v, _) = dup.any_process().receive_with_tag::<[i32; 2]>(3)?;
    check_eq!(rank, v, [rank; 2], "message on dup");
    ok(rank, dup.set_name("the duplicate"), "set_name");
    check_eq!(
        rank,
        ok(rank, dup.get_name(), "get_name"),
        "the duplicate".to_string(),
        "name"
    );
    check!(rank, !ok(rank, dup.is_inter(), "is_inter"), "dup is intra");
    drop(dup);

    // Typed attributes: cloned into duplicates, dropped with their communicator.
    let key = ok(
        rank,
        AttributeKey::<Vec<String>>::new(),
        "AttributeKey::new",
    );
    let other = ok(rank, AttributeKey::<i32>::new(), "AttributeKey::new");
    let value = vec!["a".to_string(), format!("rank {rank}")];
    ok(
        rank,
        world.set_attribute(&key, value.clone()),
        "set_attribute",
    );
    check_eq!(
        rank,
        ok(rank, world.get_attribute(&key), "get_attribute"),
        Some(value.clone()),
        "attribute"
    );
    check_eq!(
        rank,
        ok(rank, world.get_attribute(&other), "get_attribute"),
        None,
        "unset attribute"
    );
    let d2 = ok(rank, world.duplicate(), "duplicate with attributes");
    check_eq!(
        rank,
        ok(rank, d2.get_attribute(&key), "get on dup"),
        Some(value.clone()),
        "copied attribute"
    );
    check_eq!(rank, key.cached_values(), 2, "two copies");
    ok(rank, d2.set_attribute(&key, Vec::new()), "replace");
    check_eq!(rank, key.cached_values(), 2, "replaced, not added");
    check_eq!(
        rank,
        ok(rank, d2.get_attribute(&key), "get replaced"),
        Some(Vec::new()),
        "replaced attribute"
    );
    drop(d2);
    check_eq!(rank, key.cached_values(), 1, "dropped with the duplicate");
    ok(rank, world.delete_attribute(&key), "delete_attribute");
    check_eq!(rank, key.cached_values(), 0, "deleted");
    check_eq!(
        rank,
        ok(rank, world.get_attribute(&key), "get deleted"),
        None,
        "deleted attribute"
    );
    ok(rank, world.set_attribute(&other, 5), "set on world");
    drop(other);

    // Split by parity, ranks reversed by the key.
    let half = ok(
        rank,
        world.split_by_color_with_key(Color::with_value(rank % 2), -rank),
        "split",
    )
    .expect("every rank has a color");
    let members: Vec<i32> = (0..size).filter(|r| r % 2 == rank % 2).rev().collect();
    check_eq!(rank, half.size(), members.len() as i32, "split size");
    check_eq!(
        rank,
        members[half.rank() as usize],
        rank,
        "split rank (reversed)"
    );
    let mut got = vec![0i32; members.len()];
    ok(
        rank,
        half.all_gather_into(&rank, &mut got[..]),
        "all_gather on split",
    );
    check_eq!(rank, got, members, "split members in key order");
    let none = ok(
        rank,
        world.split_by_color(if rank == 0 {
            Color::undefined()
        } else {
            Color::with_value(7)
        }),
        "split with undefined",
    );
    check_eq!(rank, none.is_none(), rank == 0, "undefined color");
    if let Some(c) = none {
        check_eq!(rank, (c.rank(), c.size()), (rank - 1, size - 1), "others");
    }
    // A bad color fails at that rank only; the others still get their communicator.
    let r = world.split_by_color(Color::with_value(if rank == 0 { -5 } else { 1 }));
    if rank == 0 {
        check_eq!(rank, r.unwrap_err().class(), ErrorClass::Arg, "bad color");
    } else {
        let c = ok(rank, r, "split next to a bad color").expect("color 1");
        check_eq!(rank, c.size(), size - 1, "split next to a bad color");
    }

    // Groups.
    let g = ok(rank, world.group(), "group");
    check_eq!(
        rank,
        (g.size(), g.rank()),
        (size, Some(rank)),
        "world group"
    );
    let reversed: Vec<i32> = (0..size).rev().collect();
    let rg = ok(rank, g.include(&reversed), "include");
    check_eq!(
        rank,
        rg.compare(&g),
        if size > 1 {
            GroupRelation::Similar
        } else {
            GroupRelation::Identical
        },
        "reversed group"
    );
    check_eq!(rank, rg.rank(), Some(size - 1 - rank), "rank in reversed");
    let evens: Vec<i32> = (0..size).step_by(2).collect();
    let odds: Vec<i32> = (1..size).step_by(2).collect();
    let ge = ok(rank, g.include(&evens), "include evens");
    let go = ok(rank, g.exclude(&evens), "exclude evens");
    check_eq!(rank, go.size(), odds.len() as i32, "odds");
    check_eq!(
        rank,
        ge.union(&go).compare(&g),
        if size > 2 {
            GroupRelation::Similar
        } else {
            GroupRelation::Identical
        },
        "union"
    );
    check_eq!(rank, ge.intersection(&go).size(), 0, "intersection");
    check_eq!(
        rank,
        g.difference(&go).compare(&ge),
        GroupRelation::Identical,
        "difference"
    );
    check_eq!(
        rank,
        ge.compare(&UserGroup::empty()),
        GroupRelation::Unequal,
        "empty"
    );
    let t = ok(rank, g.translate_ranks(&[0, size - 1], &rg), "translate");
    check_eq!(rank, t, vec![Some(size - 1), Some(0)], "translate");
    if size > 1 {
        check_eq!(
            rank,
            ok(rank, g.translate_rank(1, &ge), "translate one"),
            None,
            "odd rank not among evens"
        );
    }
    check_eq!(
        rank,
        g.include(&[size]).unwrap_err().class(),
        ErrorClass::Rank,
        "include out of range"
    );

    // Communicators from subgroups.
    let ce = ok(rank, world.split_by_subgroup_collective(&ge), "create");
    check_eq!(rank, ce.is_some(), rank % 2 == 0, "collective subgroup");
    if let Some(c) = &ce {
        check_eq!(
            rank,
            (c.rank(), c.size()),
            (rank / 2, ge.size()),
            "evens comm"
        );
        let mut s = 0i32;
        ok(
            rank,
            c.all_reduce_into(&rank, &mut s, SystemOperation::sum()),
            "sum on evens",
        );
        check_eq!(rank, s, evens.iter().sum::<i32>(), "sum on evens");
    }
    if rank % 2 == 1 {
        let co = ok(rank, world.split_by_subgroup(&go), "create_group").expect("member");
        check_eq!(
            rank,
            (co.rank(), co.size()),
            (rank / 2, go.size()),
            "odds comm"
        );
        ok(rank, co.barrier(), "barrier on odds");
    }

    // Intercommunicators between the even and the odd ranks.
    if size >= 2 {
        let local = ok(
            rank,
            world.split_by_color(Color::with_value(rank % 2)),
            "halves",
        )
        .expect("half");
        let remote_leader = if rank % 2 == 0 { 1 } else { 0 };
        let ic = ok(
            rank,
            local.intercommunicator_create(0, &world, remote_leader, 42),
            "intercommunicator_create",
        );
        let (mine, theirs) = if rank % 2 == 0 {
            (&evens, &odds)
        } else {
            (&odds, &evens)
        };
        check!(rank, ok(rank, ic.is_inter(), "is_inter"), "is inter");
        check_eq!(rank, ic.size(), mine.len() as i32, "local size");
        check_eq!(
            rank,
            ok(rank, ic.remote_size(), "remote_size"),
            theirs.len() as i32,
            "remote size"
        );
        let rgp = ok(rank, ic.remote_group(), "remote_group");
        let want = ok(rank, g.include(theirs), "theirs");
        check_eq!(
            rank,
            rgp.compare(&want),
            GroupRelation::Identical,
            "remote group"
        );
        // Local rank 0 of each side talks to remote rank 0.
        if ic.rank() == 0 {
            let (v, s) = ok(
                rank,
                oxmpi::point_to_point::send_receive::<i32, _, _, _>(
                    &(rank * 10),
                    &ic.process_at_rank(0),
                    &ic.process_at_rank(0),
                ),
                "inter send_receive",
            );
            check_eq!(rank, (v, s.source_rank()), (theirs[0] * 10, 0), "inter p2p");
        }
        // All-reduce gives each side the other side's sum.
        let mut s = 0i64;
        ok(
            rank,
            ic.all_reduce_into(&(rank as i64), &mut s, SystemOperation::sum()),
            "inter all_reduce",
        );
        check_eq!(
            rank,
            s,
            theirs.iter().map(|&r| r as i64).sum::<i64>(),
            "inter all_reduce"
        );
        // Broadcast from the even side's rank 0 to the odd side.
        let mut x = [0u16; 3];
        if rank % 2 == 0 {
            let root = if ic.rank() == 0 {
                oxmpi::ROOT
            } else {
                oxmpi::PROC_NULL
            };
            if ic.rank() == 0 {
                x = [1, 2, 3];
            }
            ok(
                rank,
                ic.process_at_rank(root).broadcast_into(&mut x),
                "inter broadcast (root side)",
            );
        } else {
            ok(
                rank,
                ic.process_at_rank(0).broadcast_into(&mut x),
                "inter broadcast",
            );
            check_eq!(rank, x, [1, 2, 3], "inter broadcast");
        }
        let ic2 = ok(rank, ic.duplicate(), "inter duplicate");
        ok(rank, ic2.barrier(), "inter barrier");
        // Merge: the evens (high = false) first.
        let merged = ok(rank, ic.merge(rank % 2 == 1), "merge");
        check_eq!(rank, merged.size(), size, "merged size");
        let order: Vec<i32> = evens.iter().chain(odds.iter()).copied().collect();
        check_eq!(rank, order[merged.rank() as usize], rank, "merged order");
    }

    // Cartesian grids.
    let mut dims = [0, 0];
    ok(rank, dims_create(size, &mut dims), "dims_create");
    check_eq!(rank, dims[0] * dims[1], size, "dims product {dims:?}");
    check!(
        rank,
        dims[0] >= dims[1],
        "dims in decreasing order {dims:?}"
    );
    let cart = ok(
        rank,
        world.create_cartesian_communicator(&dims, &[true, false], false),
        "cart_create",
    )
    .expect("every rank is in the grid");
    check_eq!(rank, ok(rank, cart.num_dimensions(), "ndims"), 2, "ndims");
    let layout = ok(rank, cart.get_layout(), "layout");
    let coords = vec![cart.rank() / dims[1], cart.rank() % dims[1]];
    check_eq!(rank, layout.coords, coords, "row-major coordinates");
    check_eq!(rank, layout.periods, vec![true, false], "periods");
    check_eq!(
        rank,
        ok(rank, cart.rank_to_coordinates(cart.rank()), "coords"),
        coords,
        "rank_to_coordinates"
    );
    check_eq!(
        rank,
        ok(rank, cart.coordinates_to_rank(&coords), "rank"),
        cart.rank(),
        "coordinates_to_rank"
    );
    // Dimension 0 wraps, dimension 1 does not.
    let (src, dst) = ok(rank, cart.shift(0, 1), "shift 0");
    let up = |d: i32| ((coords[0] + d).rem_euclid(dims[0])) * dims[1] + coords[1];
    check_eq!(
        rank,
        (src, dst),
        (Some(up(-1)), Some(up(1))),
        "periodic shift"
    );
    let (src, dst) = ok(rank, cart.shift(1, 1), "shift 1");
    let at = |c: i32| (0..dims[1]).contains(&c).then(|| coords[0] * dims[1] + c);
    check_eq!(
        rank,
        (src, dst),
        (at(coords[1] - 1), at(coords[1] + 1)),
        "open shift"
    );
    // Data moves along the periodic dimension.
    let (s0, d0) = ok(rank, cart.shift(0, 1), "shift");
    let (v, _) = ok(
        rank,
        oxmpi::point_to_point::send_receive::<i32, _, _, _>(
            &cart.rank(),
            &cart.process_at_rank(d0.expect("periodic")),
            &cart.process_at_rank(s0.expect("periodic")),
        ),
        "shift exchange",
    );
    check_eq!(rank, v, s0.expect("periodic"), "shifted value");
    let column = ok(rank, cart.subgroup(&[true, false]), "cart_sub");
    check_eq!(rank, column.size(), dims[0], "sub-grid size");
    check_eq!(rank, column.rank(), coords[0], "sub-grid rank");
    check_eq!(
        rank,
        ok(rank, column.get_layout(), "sub layout").dims,
        vec![dims[0]],
        "sub-grid dims"
    );
    check_eq!(
        rank,
        cart.coordinates_to_rank(&[0, dims[1]]).unwrap_err().class(),
        ErrorClass::Arg,
        "outside an open dimension"
    );
    if size > 1 {
        let partial = ok(
            rank,
            world.create_cartesian_communicator(&[size - 1], &[false], true),
            "smaller grid",
        );
        check_eq!(rank, partial.is_none(), rank == size - 1, "beyond the grid");
    }
    check_eq!(
        rank,
        world
            .create_cartesian_communicator(&[size + 1], &[false], false)
            .unwrap_err()
            .class(),
        ErrorClass::Arg,
        "grid too large"
    );

    ok(rank, world.barrier(), "barrier");
    if rank == 0 {
        println!("check_communicators: passed on {size} ranks");
    }
    Ok(())
}
