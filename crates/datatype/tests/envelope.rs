//! `MPI_Type_get_envelope` / `MPI_Type_get_contents` for every combiner, and the
//! MPICH numbering of the combiners.

use oxmpi_datatype::{mpich, Combiner, Datatype, Distribution, Order, Predefined as P};

fn t(p: P) -> Datatype {
    Datatype::from(p)
}

/// Checks the envelope counts, the combiner, and the contents.
fn check(ty: &Datatype, combiner: Combiner, ints: &[i64], addrs: &[i64], types: &[&Datatype]) {
    let env = ty.envelope();
    assert_eq!(env.combiner, combiner);
    assert_eq!(ty.combiner(), combiner);
    assert_eq!(
        (env.num_integers, env.num_addresses, env.num_datatypes),
        (ints.len(), addrs.len(), types.len())
    );
    let c = ty.contents().expect("derived type has contents");
    assert_eq!(c.integers, ints);
    assert_eq!(c.addresses, addrs);
    assert_eq!(c.datatypes.len(), types.len());
    for (got, want) in c.datatypes.iter().zip(types) {
        assert!(
            Datatype::ptr_eq(got, want),
            "contents returned another type object"
        );
    }
}

#[test]
fn named_types_have_no_contents() {
    for p in [P::Int, P::DoubleInt, P::Lb, P::CxxLongDoubleComplex] {
        let ty = t(p);
        let env = ty.envelope();
        assert_eq!(
            (
                env.combiner,
                env.num_integers,
                env.num_addresses,
                env.num_datatypes
            ),
            (Combiner::Named, 0, 0, 0)
        );
        assert!(ty.contents().is_none());
        assert_eq!(ty.as_predefined(), Some(p));
    }
}

#[test]
fn every_combiner() {
    let int = t(P::Int);
    let dbl = t(P::Double);
    check(&int.dup(), Combiner::Dup, &[], &[], &[&int]);
    check(
        &Datatype::contiguous(5, &int).unwrap(),
        Combiner::Contiguous,
        &[5],
        &[],
        &[&int],
    );
    check(
        &Datatype::vector(3, 2, -4, &int).unwrap(),
        Combiner::Vector,
        &[3, 2, -4],
        &[],
        &[&int],
    );
    check(
        &Datatype::hvector(3, 2, -40, &int).unwrap(),
        Combiner::Hvector,
        &[3, 2],
        &[-40],
        &[&int],
    );
    check(
        &Datatype::indexed(&[1, 0, 3], &[7, -2, 9], &int).unwrap(),
        Combiner::Indexed,
        &[3, 1, 0, 3, 7, -2, 9],
        &[],
        &[&int],
    );
    check(
        &Datatype::hindexed(&[1, 2], &[-16, 64], &int).unwrap(),
        Combiner::Hindexed,
        &[2, 1, 2],
        &[-16, 64],
        &[&int],
    );
    check(
        &Datatype::indexed_block(4, &[0, 10, 5], &int).unwrap(),
        Combiner::IndexedBlock,
        &[3, 4, 0, 10, 5],
        &[],
        &[&int],
    );
    check(
        &Datatype::hindexed_block(4, &[0, 100], &int).unwrap(),
        Combiner::HindexedBlock,
        &[2, 4],
        &[0, 100],
        &[&int],
    );
    let lb = t(P::Lb);
    check(
        &Datatype::create_struct(
            &[1, 2, 1],
            &[-8, 0, 24],
            &[lb.clone(), int.clone(), dbl.clone()],
        )
        .unwrap(),
        Combiner::Struct,
        &[3, 1, 2, 1],
        &[-8, 0, 24],
        &[&lb, &int, &dbl],
    );
    check(
        &Datatype::resized(&int, -4, 12).unwrap(),
        Combiner::Resized,
        &[],
        &[-4, 12],
        &[&int],
    );
    check(
        &Datatype::subarray(&[4, 5], &[2, 3], &[1, 0], Order::Fortran, &dbl).unwrap(),
        Combiner::Subarray,
        &[2, 4, 5, 2, 3, 1, 0, i64::from(mpich::ORDER_FORTRAN)],
        &[],
        &[&dbl],
    );
    let dflt = i64::from(mpich::DISTRIBUTE_DFLT_DARG);
    check(
        &Datatype::darray(
            6,
            5,
            &[8, 9],
            &[Distribution::Cyclic, Distribution::Block],
            &[2, dflt],
            &[3, 2],
            Order::C,
            &dbl,
        )
        .unwrap(),
        Combiner::Darray,
        &[
            6,
            5,
            2,
            8,
            9,
            i64::from(mpich::DISTRIBUTE_CYCLIC),
            i64::from(mpich::DISTRIBUTE_BLOCK),
            2,
            dflt,
            3,
            2,
            i64::from(mpich::ORDER_C),
        ],
        &[],
        &[&dbl],
    );
}

#[test]
fn contents_of_derived_components_are_the_same_objects() {
    let int = t(P::Int);
    let v = Datatype::vector(2, 1, 3, &int).unwrap();
    let c = Datatype::contiguous(4, &v).unwrap();
    let got = c.contents().unwrap().datatypes.remove(0);
    assert!(Datatype::ptr_eq(&got, &v));
    assert_eq!(got.combiner(), Combiner::Vector);
}

#[test]
fn combiner_values_are_mpich_4_0_2() {
    // From /usr/include/x86_64-linux-gnu/mpich/mpi.h.
    let expected = [
        (Combiner::Named, 1),
        (Combiner::Dup, 2),
        (Combiner::Contiguous, 3),
        (Combiner::Vector, 4),
        (Combiner::HvectorInteger, 5),
        (Combiner::Hvector, 6),
        (Combiner::Indexed, 7),
        (Combiner::HindexedInteger, 8),
        (Combiner::Hindexed, 9),
        (Combiner::IndexedBlock, 10),
        (Combiner::StructInteger, 11),
        (Combiner::Struct, 12),
        (Combiner::Subarray, 13),
        (Combiner::Darray, 14),
        (Combiner::F90Real, 15),
        (Combiner::F90Complex, 16),
        (Combiner::F90Integer, 17),
        (Combiner::Resized, 18),
        (Combiner::HindexedBlock, 19),
    ];
    for (c, v) in expected {
        assert_eq!(c.combiner_mpich_value(), v, "{}", c.name());
        assert_eq!(Combiner::from_mpich(v), Some(c));
    }
    assert_eq!(Combiner::from_mpich(0), None);
    assert_eq!(Combiner::Vector.name(), "MPI_COMBINER_VECTOR");
    assert_eq!(Order::from_mpich(56), Some(Order::C));
    assert_eq!(Distribution::from_mpich(123), Some(Distribution::None));
    assert_eq!(Distribution::Cyclic.mpich_value(), 122);
}

/// A type made by a large-count (`_c`) constructor decodes its counts and
/// displacements as large counts; `ndims`, `order` and the darray's process grid stay
/// integers (MPI-4.1 section 5.1.13).
#[test]
fn large_count_types_decode_as_large_counts() {
    let int = t(P::Int);
    let decode = |ty: &Datatype| {
        ty.mark_large_counts();
        assert!(ty.has_large_counts());
        let env = ty.envelope();
        let c = ty.contents().unwrap();
        assert_eq!(
            (
                env.num_integers,
                env.num_addresses,
                env.num_large_counts,
                env.num_datatypes
            ),
            (
                c.integers.len(),
                c.addresses.len(),
                c.large_counts.len(),
                c.datatypes.len()
            )
        );
        (c.integers, c.addresses, c.large_counts)
    };
    let v = Datatype::vector(3, 2, 5, &int).unwrap();
    assert_eq!(v.envelope().num_large_counts, 0);
    assert_eq!(decode(&v), (vec![], vec![], vec![3, 2, 5]));
    let hv = Datatype::hvector(2, 1, 40, &int).unwrap();
    assert_eq!(decode(&hv), (vec![], vec![], vec![2, 1, 40]));
    let hi = Datatype::hindexed(&[1, 3], &[0, 8], &int).unwrap();
    assert_eq!(decode(&hi), (vec![], vec![], vec![2, 1, 3, 0, 8]));
    let st = Datatype::create_struct(&[1, 3], &[0, 8], &[int.clone(), int.clone()]).unwrap();
    assert_eq!(decode(&st), (vec![], vec![], vec![2, 1, 3, 0, 8]));
    let r = Datatype::resized(&int, -4, 16).unwrap();
    assert_eq!(decode(&r), (vec![], vec![], vec![-4, 16]));
    let sub = Datatype::subarray(&[4, 6], &[2, 3], &[1, 2], Order::C, &int).unwrap();
    assert_eq!(
        decode(&sub),
        (
            vec![2, i64::from(mpich::ORDER_C)],
            vec![],
            vec![4, 6, 2, 3, 1, 2]
        )
    );
    let d = Datatype::darray(
        2,
        1,
        &[10],
        &[Distribution::Block],
        &[i64::from(mpich::DISTRIBUTE_DFLT_DARG)],
        &[2],
        Order::C,
        &int,
    )
    .unwrap();
    assert_eq!(
        decode(&d),
        (
            vec![
                2,
                1,
                1,
                i64::from(mpich::DISTRIBUTE_BLOCK),
                i64::from(mpich::DISTRIBUTE_DFLT_DARG),
                2,
                i64::from(mpich::ORDER_C)
            ],
            vec![],
            vec![10]
        )
    );
    // Predefined types are never marked.
    int.mark_large_counts();
    assert!(!int.has_large_counts());
}
