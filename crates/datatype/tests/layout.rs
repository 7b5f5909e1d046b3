//! Size, bounds and true bounds of every constructor against hand-computed layouts,
//! the standard's examples, and values measured on MPICH 4.0.2 / Open MPI 4.1.4.

mod common;

use common::flatten;
use oxmpi_datatype::{mpich, Datatype, Distribution, Order, Predefined as P};

fn t(p: P) -> Datatype {
    Datatype::from(p)
}

/// (size, lb, extent, true_lb, true_extent)
type Shape = (usize, isize, isize, isize, isize);

fn shape(t: &Datatype) -> Shape {
    (t.size(), t.lb(), t.extent(), t.true_lb(), t.true_extent())
}

fn st(items: &[(i64, i64, Datatype)]) -> Datatype {
    let b: Vec<i64> = items.iter().map(|x| x.0).collect();
    let d: Vec<i64> = items.iter().map(|x| x.1).collect();
    let ty: Vec<Datatype> = items.iter().map(|x| x.2.clone()).collect();
    Datatype::create_struct(&b, &d, &ty).unwrap()
}

/// `{(double, 0), (char, 8)}`, the standard's running example (extent 16).
fn double_char() -> Datatype {
    st(&[(1, 0, t(P::Double)), (1, 8, t(P::Char))])
}

#[test]
fn predefined_types() {
    assert_eq!(shape(&t(P::Int)), (4, 0, 4, 0, 4));
    assert_eq!(shape(&t(P::LongDouble)), (16, 0, 16, 0, 16));
    assert_eq!(shape(&t(P::DoubleInt)), (12, 0, 16, 0, 12));
    assert_eq!(shape(&t(P::LongDoubleInt)), (20, 0, 32, 0, 20));
    assert_eq!(shape(&t(P::ShortInt)), (6, 0, 8, 0, 8));
    assert_eq!(shape(&t(P::Lb)), (0, 0, 0, 0, 0));
    assert!(t(P::Int).is_committed());
    assert!(t(P::Lb).has_explicit_lb() && !t(P::Lb).has_explicit_ub());
    assert_eq!(t(P::DoubleInt).element_count(), 2);
    assert_eq!(t(P::CDoubleComplex).element_count(), 1);
}

#[test]
fn struct_padding_matches_c_and_mpich() {
    // Values measured with MPICH 4.0.2 on x86-64 (same as the C compiler's sizeof).
    let c = || t(P::Char);
    let cases: Vec<(Datatype, Shape)> = vec![
        (st(&[(1, 0, c()), (1, 8, t(P::Double))]), (9, 0, 16, 0, 16)),
        (st(&[(1, 0, t(P::Double)), (1, 8, c())]), (9, 0, 16, 0, 9)),
        (
            st(&[(1, 0, c()), (1, 16, t(P::LongDouble))]),
            (17, 0, 32, 0, 32),
        ),
        (
            st(&[(1, 0, c()), (1, 8, t(P::CDoubleComplex))]),
            (17, 0, 24, 0, 24),
        ),
        (
            st(&[(1, 0, c()), (1, 4, t(P::CFloatComplex))]),
            (9, 0, 12, 0, 12),
        ),
        (
            st(&[(1, 0, c()), (1, 16, t(P::CLongDoubleComplex))]),
            (33, 0, 48, 0, 48),
        ),
        (
            st(&[(1, 0, c()), (1, 8, t(P::DoubleInt))]),
            (13, 0, 24, 0, 20),
        ),
        (
            st(&[(1, 0, c()), (1, 16, t(P::LongDoubleInt))]),
            (21, 0, 48, 0, 36),
        ),
        (
            st(&[(1, 0, c()), (1, 4, t(P::ShortInt))]),
            (7, 0, 12, 0, 12),
        ),
        // Negative displacement.
        (st(&[(1, -4, t(P::Int)), (1, 4, c())]), (5, -4, 12, -4, 9)),
        // Explicit markers: no padding after an upper bound.
        (
            st(&[(1, 0, t(P::Double)), (1, 9, t(P::Ub))]),
            (8, 0, 9, 0, 8),
        ),
        (st(&[(1, -3, t(P::Lb)), (1, 0, c())]), (1, -3, 4, 0, 1)),
        // A struct inside a struct keeps its padded extent.
        (
            st(&[(1, 0, double_char()), (1, 16, c())]),
            (10, 0, 24, 0, 17),
        ),
        // Components listed out of order.
        (st(&[(1, 8, c()), (1, 0, t(P::Double))]), (9, 0, 16, 0, 9)),
        // A zero-count type still contributes its bounds [0, 0], not data.
        (
            st(&[
                (1, 100, Datatype::contiguous(0, &t(P::Int)).unwrap()),
                (1, 0, t(P::Int)),
            ]),
            (4, 0, 100, 0, 4),
        ),
    ];
    for (i, (ty, want)) in cases.into_iter().enumerate() {
        assert_eq!(shape(&ty), want, "case {i}");
    }
}

#[test]
fn markers_are_sticky() {
    // MPI-1 semantics: the lb marker decides the lower bound even above the data...
    let s = st(&[(1, 0, t(P::Double)), (1, 2, t(P::Lb))]);
    assert_eq!((s.lb(), s.true_lb()), (2, 0));
    // ...and without an ub marker the extent (8 - 2) is padded to the alignment (8).
    assert_eq!(s.extent(), 8);
    // A marker with blocklength 0 is not part of the type map.
    let s = st(&[(1, 0, t(P::Int)), (0, 100, t(P::Ub))]);
    assert_eq!(shape(&s), (4, 0, 4, 0, 4));
    // Markers propagate through further constructors: the ub marker at 9 beats data at 16..24.
    let a = st(&[(1, 0, t(P::Double)), (1, 9, t(P::Ub))]);
    let s = st(&[(1, 0, a.clone()), (1, 16, t(P::Double))]);
    assert_eq!(shape(&s), (16, 0, 9, 0, 24));
    let c2 = Datatype::contiguous(2, &a).unwrap();
    assert_eq!(shape(&c2), (16, 0, 18, 0, 17));
    // Resized bounds are sticky too (as in Open MPI; MPICH 4 dropped stickiness).
    let r = Datatype::resized(&t(P::Int), -4, 16).unwrap();
    let s = st(&[(1, 0, r), (1, 16, t(P::Double))]);
    assert_eq!(shape(&s), (12, -4, 16, 0, 24));
    let r = Datatype::resized(&t(P::Double), -3, 9).unwrap();
    let s = st(&[(1, 0, r), (1, 20, t(P::Char))]);
    assert_eq!(shape(&s), (9, -3, 9, 0, 21));
}

#[test]
fn standard_examples() {
    let oldtype = double_char();
    assert_eq!(shape(&oldtype), (9, 0, 16, 0, 9));
    // MPI_TYPE_CONTIGUOUS(3, oldtype): extent 48.
    assert_eq!(
        shape(&Datatype::contiguous(3, &oldtype).unwrap()),
        (27, 0, 48, 0, 41)
    );
    // MPI_TYPE_VECTOR(2, 3, 4, oldtype): blocks at 0 and 64, three copies each.
    let v = Datatype::vector(2, 3, 4, &oldtype).unwrap();
    assert_eq!(shape(&v), (54, 0, 112, 0, 105));
    let disps: Vec<i64> = flatten(&v).iter().map(|e| e.disp).collect();
    assert_eq!(disps, vec![0, 8, 16, 24, 32, 40, 64, 72, 80, 88, 96, 104]);
    // MPI_TYPE_VECTOR(3, 1, -2, oldtype): negative stride.
    let v = Datatype::vector(3, 1, -2, &oldtype).unwrap();
    assert_eq!(shape(&v), (27, -64, 80, -64, 73));
    // MPI_TYPE_CREATE_HVECTOR(2, 3, 4, oldtype): overlapping copies.
    let h = Datatype::hvector(2, 3, 4, &oldtype).unwrap();
    assert_eq!(shape(&h), (54, 0, 52, 0, 45));
    // MPI_TYPE_INDEXED(2, B = (3, 1), D = (4, 0), oldtype).
    let x = Datatype::indexed(&[3, 1], &[4, 0], &oldtype).unwrap();
    assert_eq!(shape(&x), (36, 0, 112, 0, 105));
    let disps: Vec<i64> = flatten(&x).iter().map(|e| e.disp).collect();
    assert_eq!(disps, vec![64, 72, 80, 88, 96, 104, 0, 8]);
    // MPI_TYPE_CREATE_STRUCT(3, B = (2, 1, 3), D = (0, 16, 26), T = (MPI_FLOAT, type1, MPI_CHAR)).
    let s = st(&[
        (2, 0, t(P::Float)),
        (1, 16, oldtype.clone()),
        (3, 26, t(P::Char)),
    ]);
    assert_eq!(shape(&s), (20, 0, 32, 0, 29));
    let disps: Vec<i64> = flatten(&s).iter().map(|e| e.disp).collect();
    assert_eq!(disps, vec![0, 4, 16, 24, 26, 27, 28]);
    // resized(MPI_INT, -3, 9) then contiguous(2): {(lb,-3), (int,0), (int,9), (ub,15)}.
    let r = Datatype::resized(&t(P::Int), -3, 9).unwrap();
    let c = Datatype::contiguous(2, &r).unwrap();
    assert_eq!(shape(&c), (8, -3, 18, 0, 13));
}

#[test]
fn other_constructors() {
    let int = t(P::Int);
    assert_eq!(
        shape(&Datatype::indexed_block(2, &[5, -1], &int).unwrap()),
        (16, -4, 32, -4, 32)
    );
    assert_eq!(
        shape(&Datatype::hindexed_block(2, &[5, -1], &int).unwrap()),
        (16, -1, 14, -1, 14)
    );
    // MPICH does not pad hindexed: doubles at 0 and 3 give extent 11.
    assert_eq!(
        shape(&Datatype::hindexed(&[1, 1], &[0, 3], &t(P::Double)).unwrap()),
        (16, 0, 11, 0, 11)
    );
    assert_eq!(
        shape(&Datatype::hindexed(&[0, 2], &[-50, 8], &int).unwrap()),
        (8, 8, 8, 8, 8)
    );
    // Zero-length types.
    assert_eq!(
        shape(&Datatype::contiguous(0, &int).unwrap()),
        (0, 0, 0, 0, 0)
    );
    assert_eq!(
        shape(&Datatype::vector(3, 0, 2, &int).unwrap()),
        (0, 0, 0, 0, 0)
    );
    assert_eq!(
        shape(&Datatype::indexed(&[], &[], &int).unwrap()),
        (0, 0, 0, 0, 0)
    );
    assert_eq!(
        shape(&Datatype::create_struct(&[], &[], &[]).unwrap()),
        (0, 0, 0, 0, 0)
    );
    // Negative extent from resized, replicated (measured on MPICH 4.0.2).
    let r = Datatype::resized(&int, 0, -8).unwrap();
    assert_eq!(shape(&r), (4, 0, -8, 0, 4));
    assert_eq!(
        shape(&Datatype::contiguous(3, &r).unwrap()),
        (12, -16, 8, -16, 20)
    );
    // Dup keeps everything and the commit state.
    let v = Datatype::vector(3, 2, 5, &int).unwrap();
    assert!(!v.dup().is_committed());
    v.commit();
    let d = v.dup();
    assert!(d.is_committed());
    assert_eq!(shape(&d), shape(&v));
    assert!(!Datatype::ptr_eq(&d, &v));
    assert!(Datatype::ptr_eq(&v.clone(), &v));
    assert_eq!(d.as_predefined(), None);
    // Alignment is the largest of the components.
    assert_eq!(double_char().alignment(), 8);
    assert_eq!(
        Datatype::contiguous(2, &t(P::LongDouble))
            .unwrap()
            .alignment(),
        16
    );
}

fn ints_of(t: &Datatype, count: usize) -> Vec<i64> {
    flatten(t).iter().map(|e| e.disp / 4).take(count).collect()
}

#[test]
fn subarray_layouts() {
    let int = t(P::Int);
    // A 3x4 C array, the 2x2 box starting at (1, 1): elements 5, 6, 9, 10.
    let s = Datatype::subarray(&[3, 4], &[2, 2], &[1, 1], Order::C, &int).unwrap();
    assert_eq!(shape(&s), (16, 0, 48, 20, 24));
    assert_eq!(ints_of(&s, 8), vec![5, 6, 9, 10]);
    // The same box in Fortran order: element (i, j) is at i + 3 j.
    let s = Datatype::subarray(&[3, 4], &[2, 2], &[1, 1], Order::Fortran, &int).unwrap();
    assert_eq!(ints_of(&s, 8), vec![4, 5, 7, 8]);
    assert_eq!(s.extent(), 48);
    // Standard example (MPI 4.1 section 5.1.3): a 100x100 Fortran array, the 25x75
    // box at (0, 25): extent 100*100 doubles, 25*75 doubles of data.
    let s = Datatype::subarray(
        &[100, 100],
        &[25, 75],
        &[0, 25],
        Order::Fortran,
        &t(P::Double),
    )
    .unwrap();
    assert_eq!(
        (s.size(), s.lb(), s.extent(), s.true_lb()),
        (25 * 75 * 8, 0, 80_000, 25 * 100 * 8)
    );
    // Lower bound 0 even when the old type has another one.
    let r = Datatype::resized(&int, -4, 8).unwrap();
    let s = Datatype::subarray(&[4], &[2], &[1], Order::C, &r).unwrap();
    assert_eq!(shape(&s), (8, 0, 32, 8, 12));
    // Empty box.
    let s = Datatype::subarray(&[4, 4], &[0, 2], &[4, 0], Order::C, &int).unwrap();
    assert_eq!((s.size(), s.extent()), (0, 64));
}

#[test]
fn darray_layouts() {
    let int = t(P::Int);
    let dflt = i64::from(mpich::DISTRIBUTE_DFLT_DARG);
    // 1-D block over 4 processes, 10 elements: ranks own 3, 3, 3, 1.
    for (rank, want) in [(0, vec![0, 1, 2]), (1, vec![3, 4, 5]), (3, vec![9])] {
        let d = Datatype::darray(
            4,
            rank,
            &[10],
            &[Distribution::Block],
            &[dflt],
            &[4],
            Order::C,
            &int,
        )
        .unwrap();
        assert_eq!(ints_of(&d, 10), want, "rank {rank}");
        assert_eq!((d.lb(), d.extent()), (0, 40));
    }
    // 1-D cyclic(2) over 3 processes, 11 elements: rank 1 owns 2,3, 8,9.
    let d = Datatype::darray(
        3,
        1,
        &[11],
        &[Distribution::Cyclic],
        &[2],
        &[3],
        Order::C,
        &int,
    )
    .unwrap();
    assert_eq!(ints_of(&d, 11), vec![2, 3, 8, 9]);
    // rank 2 owns 4,5 and the short last block 10.
    let d = Datatype::darray(
        3,
        2,
        &[11],
        &[Distribution::Cyclic],
        &[2],
        &[3],
        Order::C,
        &int,
    )
    .unwrap();
    assert_eq!(ints_of(&d, 11), vec![4, 5, 10]);
    // 2-D: 4x6 C array, rows block over 2, columns cyclic over 3; rank 4 = grid (1, 1):
    // rows 2..4, columns 1 and 4.
    let d = Datatype::darray(
        6,
        4,
        &[4, 6],
        &[Distribution::Block, Distribution::Cyclic],
        &[dflt, dflt],
        &[2, 3],
        Order::C,
        &int,
    )
    .unwrap();
    assert_eq!(ints_of(&d, 24), vec![13, 16, 19, 22]);
    assert_eq!((d.size(), d.lb(), d.extent()), (16, 0, 96));
    // MPI_DISTRIBUTE_NONE keeps a whole dimension; Fortran order.
    let d = Datatype::darray(
        2,
        1,
        &[2, 3],
        &[Distribution::None, Distribution::Block],
        &[dflt, dflt],
        &[1, 2],
        Order::Fortran,
        &int,
    )
    .unwrap();
    // Columns 2.. (j >= 2) of a column-major 2x3 array: elements 4, 5.
    assert_eq!(ints_of(&d, 6), vec![4, 5]);
    // A process that owns nothing.
    let d = Datatype::darray(
        4,
        3,
        &[2],
        &[Distribution::Block],
        &[dflt],
        &[4],
        Order::C,
        &int,
    )
    .unwrap();
    assert_eq!((d.size(), d.extent()), (0, 8));
}
