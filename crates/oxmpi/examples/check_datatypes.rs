//! Test program: user types. `#[derive(Equivalence)]` on structs with padding (named,
//! tuple, generic, nested) sent around a ring, broadcast, gathered and reduced with a
//! user operation; datatypes made at run time (contiguous, vector, indexed, structured,
//! resized) used through views to send a matrix column, transpose a matrix and pick
//! scattered values; and the checks on views.

use oxmpi::collective::{SystemOperation, UserOperation};
use oxmpi::datatype::{MutView, UserDatatype, View};
use oxmpi::point_to_point::send_receive_into;
use oxmpi::traits::*;
use oxmpi::ErrorClass;

mod common;
use common::ok;

/// Padding after `id` (7 bytes with C layout rules, whatever Rust picks) and around
/// `alive`.
#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Particle {
    id: u8,
    pos: [f64; 3],
    alive: bool,
    charge: i32,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Tagged<T> {
    tag: u16,
    value: T,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Pair(i8, Tagged<u64>);

fn particle(r: i32) -> Particle {
    Particle {
        id: r as u8 + 1,
        pos: [r as f64, 0.5 * r as f64, -(r as f64)],
        alive: r % 2 == 0,
        charge: -3 * r,
    }
}

fn main() -> Result<(), oxmpi::Error> {
    let universe = oxmpi::initialize()?;
    let world = universe.world();
    let (rank, size) = (world.rank(), world.size());
    let next = world.process_at_rank((rank + 1) % size);
    let prev = world.process_at_rank((rank + size - 1) % size);
    let p = prev.rank();

    // The derived type covers the data, not the padding.
    let d = Particle::equivalent_datatype();
    check_eq!(rank, d.value_size(), 1 + 24 + 1 + 4, "Particle data size");
    check!(
        rank,
        std::mem::size_of::<Particle>() > d.value_size(),
        "Particle has padding"
    );

    // Around the ring: one value, a vector, generic and nested structs.
    let mut got = [Particle::default(); 2];
    let s = ok(
        rank,
        send_receive_into(&[particle(rank); 2], &next, &mut got, &prev),
        "ring particles",
    );
    check_eq!(rank, got, [particle(p); 2], "ring particles");
    check_eq!(rank, s.count_of::<Particle>(), 2, "count of particles");
    let mut t = [Tagged::<f32>::default(); 1];
    let out = [Tagged {
        tag: 7,
        value: rank as f32 + 0.25,
    }];
    ok(
        rank,
        send_receive_into(&out, &next, &mut t, &prev),
        "ring generic",
    );
    check_eq!(
        rank,
        t[0],
        Tagged {
            tag: 7,
            value: p as f32 + 0.25
        },
        "ring generic"
    );
    let mut q = Pair::default();
    let out = Pair(
        -(rank as i8),
        Tagged {
            tag: 9,
            value: u64::MAX - rank as u64,
        },
    );
    ok(
        rank,
        send_receive_into(&out, &next, &mut q, &prev),
        "ring nested",
    );
    check_eq!(
        rank,
        q,
        Pair(
            -(p as i8),
            Tagged {
                tag: 9,
                value: u64::MAX - p as u64
            }
        ),
        "ring nested"
    );

    // Collectives on derived types.
    let root = world.process_at_rank(0);
    let mut all = if rank == 0 {
        (0..5).map(particle).collect()
    } else {
        vec![Particle::default(); 5]
    };
    ok(
        rank,
        root.broadcast_into(&mut all[..]),
        "broadcast particles",
    );
    check!(
        rank,
        all.iter()
            .enumerate()
            .all(|(i, x)| *x == particle(i as i32)),
        "broadcast particles {all:?}"
    );
    if rank == 0 {
        let mut g = vec![Particle::default(); size as usize];
        ok(
            rank,
            root.gather_into_root(&particle(rank), &mut g[..]),
            "gather",
        );
        check!(
            rank,
            g.iter().enumerate().all(|(i, x)| *x == particle(i as i32)),
            "gathered {g:?}"
        );
    } else {
        ok(rank, root.gather_into(&particle(rank)), "gather");
    }
    // A user operation on a struct with padding: sums positions and charges, keeps
    // the lowest id, ands `alive`.
    let combine = ok(
        rank,
        UserOperation::commutative(|x: &[Particle], y: &mut [Particle]| {
            for (a, b) in x.iter().zip(y.iter_mut()) {
                b.id = b.id.min(a.id);
                for k in 0..3 {
                    b.pos[k] += a.pos[k];
                }
                b.alive &= a.alive;
                b.charge += a.charge;
            }
        }),
        "UserOperation on Particle",
    );
    let mut sum = [Particle::default(); 3];
    ok(
        rank,
        world.all_reduce_into(&[particle(rank); 3][..], &mut sum[..], &combine),
        "all_reduce particles",
    );
    let s1 = (size * (size - 1) / 2) as f64;
    let want = Particle {
        id: 1,
        pos: [s1, 0.5 * s1, -s1],
        alive: size == 1,
        charge: -3 * (size * (size - 1) / 2),
    };
    check_eq!(rank, sum, [want; 3], "all_reduce particles");
    let e = world
        .all_reduce_into(
            &particle(0),
            &mut Particle::default(),
            SystemOperation::sum(),
        )
        .unwrap_err();
    check_eq!(
        rank,
        e.class(),
        ErrorClass::Op,
        "sum on a mixed struct: {e}"
    );

    // A 4x3 row-major matrix; column 1 sent through a vector type into column 2.
    let int = i32::equivalent_datatype();
    let column = ok(rank, UserDatatype::vector(4, 1, 3, &int), "vector");
    check_eq!(
        rank,
        (column.size(), column.extent()),
        (16, 40),
        "column size/extent"
    );
    let m: Vec<i32> = (0..12).map(|i| 100 * rank + i).collect();
    let mut r = vec![0i32; 12];
    {
        let send = ok(
            rank,
            View::with_count_and_datatype(&m[1..], 1, &column),
            "view",
        );
        let mut recv = ok(
            rank,
            MutView::with_count_and_datatype(&mut r[2..], 1, &column),
            "mut view",
        );
        ok(
            rank,
            send_receive_into(&send, &next, &mut recv, &prev),
            "send column",
        );
    }
    let want: Vec<i32> = (0..12)
        .map(|i| if i % 3 == 2 { 100 * p + i - 1 } else { 0 })
        .collect();
    check_eq!(rank, r, want, "column received into a column");

    // Transpose: the column type resized to one int, three of them back to back.
    let col_step = ok(rank, column.resized(0, 4), "resized");
    let mut tr = [0i32; 12];
    {
        let send = ok(
            rank,
            View::with_count_and_datatype(&m[..], 3, &col_step),
            "transpose view",
        );
        ok(
            rank,
            send_receive_into(&send, &next, &mut tr, &prev),
            "transpose",
        );
    }
    let want: Vec<i32> = (0..12).map(|k| 100 * p + (k % 4) * 3 + k / 4).collect();
    check_eq!(rank, tr.to_vec(), want, "transposed");

    // Contiguous, indexed and structured types.
    let triple = ok(
        rank,
        UserDatatype::contiguous(3, &f64::equivalent_datatype()),
        "contiguous",
    );
    let xs: Vec<f64> = (0..6).map(|i| rank as f64 + i as f64).collect();
    let mut ys = [0f64; 6];
    ok(
        rank,
        send_receive_into(
            &ok(
                rank,
                View::with_count_and_datatype(&xs[..], 2, &triple),
                "v",
            ),
            &next,
            &mut ys,
            &prev,
        ),
        "contiguous",
    );
    check_eq!(
        rank,
        ys.to_vec(),
        (0..6).map(|i| p as f64 + i as f64).collect::<Vec<_>>(),
        "contiguous"
    );
    let picks = ok(
        rank,
        UserDatatype::indexed(&[2, 1], &[0, 4], &u16::equivalent_datatype()),
        "indexed",
    );
    let words: Vec<u16> = (0..6).map(|i| (rank * 10 + i) as u16).collect();
    let mut three = [0u16; 3];
    let st = ok(
        rank,
        send_receive_into(
            &ok(
                rank,
                View::with_count_and_datatype(&words[..], 1, &picks),
                "v",
            ),
            &next,
            &mut three,
            &prev,
        ),
        "indexed",
    );
    let b = (p * 10) as u16;
    check_eq!(rank, three, [b, b + 1, b + 4], "indexed");
    check_eq!(rank, st.count_of::<u16>(), 3, "indexed count");
    let st = ok(
        rank,
        UserDatatype::structured(
            &[1, 2],
            &[0, 8],
            &[&u32::equivalent_datatype(), &u32::equivalent_datatype()],
        ),
        "structured",
    );
    let ws = [rank as u32, 1, 2 + rank as u32, 3 + rank as u32];
    let mut into = [9u32; 4];
    {
        let mut recv = ok(
            rank,
            MutView::with_count_and_datatype(&mut into, 1, &st),
            "structured recv",
        );
        ok(
            rank,
            send_receive_into(
                &ok(rank, View::with_count_and_datatype(&ws, 1, &st), "v"),
                &next,
                &mut recv,
                &prev,
            ),
            "structured",
        );
    }
    check_eq!(
        rank,
        into,
        [p as u32, 9, 2 + p as u32, 3 + p as u32],
        "structured"
    );
    // Arrays as the old type: a vector of [u8; 2] pairs, every other pair.
    let pairs = ok(
        rank,
        UserDatatype::vector(2, 1, 2, &<[u8; 2]>::equivalent_datatype()),
        "vector of arrays",
    );
    check_eq!(rank, pairs.size(), 4, "pairs size");
    let bytes: Vec<[u8; 2]> = (0..3).map(|i| [rank as u8, i]).collect();
    let mut two = [[0u8; 2]; 2];
    ok(
        rank,
        send_receive_into(
            &ok(
                rank,
                View::with_count_and_datatype(&bytes[..], 1, &pairs),
                "v",
            ),
            &next,
            &mut two,
            &prev,
        ),
        "vector of arrays",
    );
    check_eq!(rank, two, [[p as u8, 0], [p as u8, 2]], "vector of arrays");

    // Checks on views.
    let e = View::with_count_and_datatype(&m[..], 4, &column).unwrap_err();
    check_eq!(rank, e.class(), ErrorClass::Buffer, "view too long: {e}");
    let e = MutView::with_count_and_datatype(&mut r[3..], 1, &column).unwrap_err();
    check_eq!(
        rank,
        e.class(),
        ErrorClass::Buffer,
        "mut view too long: {e}"
    );
    let parts = [particle(0); 4];
    let e = View::with_count_and_datatype(&parts[..], 1, &column).unwrap_err();
    check_eq!(rank, e.class(), ErrorClass::Type, "view over padding: {e}");
    let view = ok(rank, View::with_count_and_datatype(&m[..], 1, &column), "v");
    let e = world
        .all_reduce_into(&view, &mut [0i32; 12][..], SystemOperation::sum())
        .unwrap_err();
    check_eq!(
        rank,
        e.class(),
        ErrorClass::Buffer,
        "reduction of a view: {e}"
    );
    let e = UserDatatype::vector(-1, 1, 1, &int).unwrap_err();
    check_eq!(rank, e.class(), ErrorClass::Count, "negative count: {e}");

    ok(rank, world.barrier(), "barrier");
    if rank == 0 {
        println!("check_datatypes: passed on {size} ranks");
    }
    Ok(())
}
