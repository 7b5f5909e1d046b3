//! Constructor errors: the right class and a message naming the argument and value;
//! overflow detection; the nesting limit; deep types on a small stack.

use oxmpi_datatype::{
    mpich, pack, Datatype, Distribution, Error, ErrorClass, Order, Predefined as P, MAX_DEPTH,
};

fn int() -> Datatype {
    Datatype::from(P::Int)
}

fn fails(r: oxmpi_datatype::Result<Datatype>, class: ErrorClass, words: &[&str]) {
    let e = r.expect_err("constructor should fail");
    assert_eq!(e.class(), class, "{e}");
    let msg = e.to_string();
    for w in words {
        assert!(msg.contains(w), "message {msg:?} lacks {w:?}");
    }
}

#[test]
fn negative_counts_and_lengths() {
    fails(
        Datatype::contiguous(-1, &int()),
        ErrorClass::ErrCount,
        &["count", "-1"],
    );
    fails(
        Datatype::vector(-2, 1, 1, &int()),
        ErrorClass::ErrCount,
        &["count", "-2"],
    );
    fails(
        Datatype::vector(2, -3, 1, &int()),
        ErrorClass::ErrArg,
        &["blocklength", "-3"],
    );
    fails(
        Datatype::hvector(2, -3, 1, &int()),
        ErrorClass::ErrArg,
        &["blocklength", "-3"],
    );
    fails(
        Datatype::indexed(&[1, -5], &[0, 1], &int()),
        ErrorClass::ErrArg,
        &["array_of_blocklengths[1]", "-5"],
    );
    fails(
        Datatype::hindexed(&[-1], &[0], &int()),
        ErrorClass::ErrArg,
        &["array_of_blocklengths[0]", "-1"],
    );
    fails(
        Datatype::indexed_block(-4, &[0], &int()),
        ErrorClass::ErrArg,
        &["blocklength", "-4"],
    );
    fails(
        Datatype::hindexed_block(-4, &[0], &int()),
        ErrorClass::ErrArg,
        &["blocklength", "-4"],
    );
    fails(
        Datatype::create_struct(&[1, 1, -7], &[0, 4, 8], &[int(), int(), int()]),
        ErrorClass::ErrArg,
        &["array_of_blocklengths[2]", "-7"],
    );
    fails(
        Datatype::indexed(&[1, 1], &[0], &int()),
        ErrorClass::ErrArg,
        &["array_of_displacements", "1", "2"],
    );
    fails(
        Datatype::create_struct(&[1], &[0], &[]),
        ErrorClass::ErrArg,
        &["array_of_types"],
    );
}

#[test]
fn overflow_is_an_error_not_a_wrap() {
    let big = Datatype::contiguous(1 << 30, &Datatype::from(P::Double)).unwrap();
    fails(
        Datatype::contiguous(1 << 30, &big),
        ErrorClass::ErrArg,
        &["64-bit"],
    );
    fails(
        Datatype::vector(2, 1, i64::MAX / 2, &int()),
        ErrorClass::ErrArg,
        &["stride"],
    );
    fails(
        Datatype::hvector(3, 1, i64::MAX / 2, &int()),
        ErrorClass::ErrArg,
        &["64-bit"],
    );
    fails(
        Datatype::indexed(&[1], &[i64::MAX / 2], &int()),
        ErrorClass::ErrArg,
        &["array_of_displacements[0]"],
    );
    fails(
        Datatype::hindexed(&[1, 1], &[i64::MAX - 2, 0], &int()),
        ErrorClass::ErrArg,
        &["64-bit"],
    );
    fails(
        Datatype::resized(&int(), i64::MAX, 1),
        ErrorClass::ErrArg,
        &["extent"],
    );
    fails(
        Datatype::resized(&int(), i64::MIN, -1),
        ErrorClass::ErrArg,
        &["extent"],
    );
    let ok = Datatype::resized(&int(), i64::MIN + 10, 5).unwrap();
    fails(
        Datatype::contiguous(2, &Datatype::resized(&int(), 0, i64::MAX).unwrap()),
        ErrorClass::ErrArg,
        &[],
    );
    fails(
        Datatype::create_struct(
            &[1, 1],
            &[0, 0],
            &[ok, Datatype::resized(&int(), 0, i64::MAX).unwrap()],
        ),
        ErrorClass::ErrArg,
        &[],
    );
    fails(
        Datatype::subarray(&[1 << 40, 1 << 40], &[1, 1], &[0, 0], Order::C, &int()),
        ErrorClass::ErrArg,
        &[],
    );
    assert_eq!(oxmpi_datatype::pack_size(&big, usize::MAX), None);
}

#[test]
fn subarray_arguments() {
    let c = Order::C;
    fails(
        Datatype::subarray(&[], &[], &[], c, &int()),
        ErrorClass::ErrDims,
        &["ndims", "0"],
    );
    fails(
        Datatype::subarray(&[4, 0], &[1, 0], &[0, 0], c, &int()),
        ErrorClass::ErrArg,
        &["array_of_sizes[1]", "0"],
    );
    fails(
        Datatype::subarray(&[4], &[5], &[0], c, &int()),
        ErrorClass::ErrArg,
        &["array_of_subsizes[0]", "5"],
    );
    fails(
        Datatype::subarray(&[4], &[-1], &[0], c, &int()),
        ErrorClass::ErrArg,
        &["array_of_subsizes[0]", "-1"],
    );
    fails(
        Datatype::subarray(&[4], &[2], &[3], c, &int()),
        ErrorClass::ErrArg,
        &["array_of_starts[0]", "3"],
    );
    fails(
        Datatype::subarray(&[4], &[2], &[-1], c, &int()),
        ErrorClass::ErrArg,
        &["array_of_starts[0]", "-1"],
    );
    fails(
        Datatype::subarray(&[4, 4], &[2], &[0, 0], c, &int()),
        ErrorClass::ErrArg,
        &["array_of_subsizes"],
    );
}

#[test]
fn darray_arguments() {
    let dflt = i64::from(mpich::DISTRIBUTE_DFLT_DARG);
    let b = Distribution::Block;
    let c = Order::C;
    let i = int();
    fails(
        Datatype::darray(0, 0, &[4], &[b], &[dflt], &[1], c, &i),
        ErrorClass::ErrArg,
        &["size", "0"],
    );
    fails(
        Datatype::darray(2, 2, &[4], &[b], &[dflt], &[2], c, &i),
        ErrorClass::ErrRank,
        &["rank", "2"],
    );
    fails(
        Datatype::darray(2, -1, &[4], &[b], &[dflt], &[2], c, &i),
        ErrorClass::ErrRank,
        &["-1"],
    );
    fails(
        Datatype::darray(1, 0, &[], &[], &[], &[], c, &i),
        ErrorClass::ErrDims,
        &["ndims"],
    );
    fails(
        Datatype::darray(2, 0, &[0], &[b], &[dflt], &[2], c, &i),
        ErrorClass::ErrArg,
        &["array_of_gsizes[0]"],
    );
    fails(
        Datatype::darray(2, 0, &[4], &[b], &[dflt], &[0], c, &i),
        ErrorClass::ErrArg,
        &["array_of_psizes[0]"],
    );
    fails(
        Datatype::darray(3, 0, &[4], &[b], &[dflt], &[2], c, &i),
        ErrorClass::ErrArg,
        &["array_of_psizes", "3"],
    );
    fails(
        Datatype::darray(2, 0, &[4], &[b], &[-3], &[2], c, &i),
        ErrorClass::ErrArg,
        &["array_of_dargs[0]", "-3"],
    );
    fails(
        Datatype::darray(2, 0, &[4], &[Distribution::None], &[dflt], &[2], c, &i),
        ErrorClass::ErrArg,
        &["array_of_psizes[0]", "MPI_DISTRIBUTE_NONE"],
    );
    // Block with darg * psize < gsize.
    fails(
        Datatype::darray(2, 0, &[10], &[b], &[4], &[2], c, &i),
        ErrorClass::ErrArg,
        &["array_of_dargs[0]", "4"],
    );
    fails(
        Datatype::darray(2, 0, &[4], &[b], &[dflt, 1], &[2], c, &i),
        ErrorClass::ErrArg,
        &["array_of_dargs"],
    );
}

#[test]
fn depth_limit() {
    // Wrapping in 1-element structs with an extra byte keeps real nesting at every level.
    let byte = Datatype::from(P::Byte);
    let mut t = byte.clone();
    for level in 1..=MAX_DEPTH {
        t = Datatype::create_struct(&[1, 1], &[0, -(level as i64)], &[t, byte.clone()]).unwrap();
        assert_eq!(t.depth(), level);
    }
    let e = Datatype::contiguous(1, &t).unwrap_err();
    assert_eq!(
        e,
        Error::TooDeep {
            depth: MAX_DEPTH + 1
        }
    );
    assert_eq!(e.class(), ErrorClass::ErrOther);
    // Dups do not count.
    assert_eq!(t.dup().dup().depth(), MAX_DEPTH);
}

#[test]
fn deepest_types_work_on_a_small_stack() {
    // Commit, pack, count elements and drop a type at the nesting limit on a 1 MiB
    // thread stack (Rust's default for spawned threads is 2 MiB).
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(|| {
            let byte = Datatype::from(P::Byte);
            let int = Datatype::from(P::Int);
            let mut t = byte.clone();
            for level in 1..=MAX_DEPTH as i64 {
                // Alternate constructors so the compiler cannot flatten everything.
                t = match level % 3 {
                    0 => {
                        Datatype::create_struct(&[1, 1], &[0, -level], &[t, byte.clone()]).unwrap()
                    }
                    1 => Datatype::create_struct(&[1, 1], &[8, 0], &[t, int.clone()]).unwrap(),
                    _ => Datatype::hvector(1, 1, 0, &t).unwrap(),
                };
            }
            t.commit();
            let size = t.size();
            let span = t.true_extent() as usize;
            let src: Vec<u8> = (0..span).map(|i| i as u8).collect();
            let mut out = vec![0u8; size];
            let base = src.as_ptr().wrapping_offset(-t.true_lb());
            // SAFETY: the type map lies within `src` (true bounds).
            let n = unsafe { pack(&t, base, 1, 0, &mut out) };
            assert_eq!(n, size);
            assert_eq!(t.elements_in(size as u64), t.element_count());
            // A long chain of dups is also fine to drop.
            let mut d = t.clone();
            for _ in 0..100_000 {
                d = d.dup();
            }
            drop(t);
            assert_eq!(d.size(), size);
            drop(d);
        })
        .unwrap()
        .join()
        .unwrap();
}
