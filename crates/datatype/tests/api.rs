//! The calls the core and bindings make: counting received data, the zero-copy path,
//! I/O vectors, MPI_BOTTOM, signatures, thread safety.

use oxmpi_datatype::{pack, unpack, Datatype, Predefined as P};

fn t(p: P) -> Datatype {
    Datatype::from(p)
}

#[test]
fn datatypes_are_send_and_sync() {
    fn check<T: Send + Sync + Clone>() {}
    check::<Datatype>();
    let v = Datatype::vector(3, 1, 2, &t(P::Int)).unwrap();
    let w = v.clone();
    std::thread::spawn(move || w.commit()).join().unwrap();
    assert!(v.is_committed());
}

#[test]
fn get_count_and_get_elements_like_mpich() {
    // Values measured with MPICH 4.0.2 (MPI_Get_count / MPI_Get_elements).
    let di = t(P::DoubleInt);
    assert_eq!((di.count_in(24), di.elements_in(24)), (Some(2), 4));
    assert_eq!((di.count_in(12), di.elements_in(12)), (Some(1), 2));
    assert_eq!(di.elements_in(8), 1);
    assert_eq!(di.elements_in(10), 1);
    assert_eq!(di.count_in(10), None);
    let c3 = Datatype::contiguous(3, &t(P::Int)).unwrap();
    assert_eq!((c3.count_in(20), c3.elements_in(20)), (None, 5));
    // Size-zero types count zero.
    let z = Datatype::contiguous(0, &t(P::Int)).unwrap();
    assert_eq!((z.count_in(0), z.elements_in(0)), (Some(0), 0));
    // A struct: partial second element.
    let s = Datatype::create_struct(&[2, 1], &[0, 8], &[t(P::Short), t(P::Double)]).unwrap();
    assert_eq!(s.element_count(), 3);
    assert_eq!(s.elements_in(12 + 2 + 2 + 7), 5);
}

#[test]
fn zero_copy_path() {
    let int = t(P::Int);
    let two = Datatype::create_struct(&[1, 1], &[0, 4], &[int.clone(), int.clone()]).unwrap();
    assert_eq!(two.contiguous_block(10), Some((0, 80)));
    assert!(two.is_contiguous());
    // MPI_DOUBLE_INT has no hole inside but is padded to 16: one element is one block.
    let di = t(P::DoubleInt);
    assert_eq!(di.contiguous_block(1), Some((0, 12)));
    assert_eq!(di.contiguous_block(2), None);
    assert!(!di.is_contiguous());
    // A resized int whose lower bound moved still tiles memory.
    let r = Datatype::resized(&int, -4, 4).unwrap();
    assert_eq!(r.contiguous_block(3), Some((0, 12)));
    // An indexed type whose blocks happen to be adjacent and in order.
    let x = Datatype::indexed(&[1, 2], &[3, 4], &int).unwrap();
    assert_eq!(x.contiguous_block(1), Some((12, 12)));
    // Out of order is not contiguous even though the bytes are.
    let y = Datatype::indexed(&[2, 1], &[1, 0], &int).unwrap();
    assert_eq!(y.contiguous_block(1), None);
    assert_eq!(y.block_count(), 2);
    assert_eq!(
        Datatype::contiguous(0, &int).unwrap().contiguous_block(5),
        Some((0, 0))
    );
}

#[test]
fn io_vectors_for_a_byte_range() {
    let dbl = t(P::Double);
    // 4 blocks of 2 doubles, stride 3 doubles.
    let v = Datatype::vector(4, 2, 3, &dbl).unwrap();
    v.commit();
    let all: Vec<(isize, usize)> = v.blocks(1, 0, usize::MAX).collect();
    assert_eq!(all, vec![(0, 16), (24, 16), (48, 16), (72, 16)]);
    // Bytes 10..40 of the packed stream.
    let part: Vec<(isize, usize)> = v.blocks(1, 10, 30).collect();
    assert_eq!(part, vec![(10, 6), (24, 16), (48, 8)]);
    // Bytes 56..80: the end of element 0's last block (80..88) runs into element 1's
    // first block (88..104), so they come back as one piece.
    let two: Vec<(isize, usize)> = v.blocks(2, 56, 24).collect();
    assert_eq!(two, vec![(80, 24)]);
    assert_eq!(v.blocks(2, 128, 10).count(), 0);
}

#[test]
fn mpi_bottom_uses_absolute_addresses() {
    let a = [1u32, 2, 3];
    let b = [40u32, 50];
    let addr = |p: *const u32| p as usize as i64;
    let ty = Datatype::hindexed(
        &[2, 1],
        &[addr(b.as_ptr()), addr(a[2..].as_ptr())],
        &t(P::Unsigned),
    )
    .unwrap();
    let mut out = [0u8; 12];
    // SAFETY: the displacements are the addresses of live elements of `a` and `b`.
    let n = unsafe { pack(&ty, std::ptr::null(), 1, 0, &mut out) };
    assert_eq!(n, 12);
    let words: Vec<u32> = out
        .chunks(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words, vec![40, 50, 3]);
    let mut c = vec![0u32; 3];
    let back = Datatype::hindexed(&[3], &[addr(c.as_ptr())], &t(P::Unsigned)).unwrap();
    // SAFETY: as above, for `c`.
    unsafe { unpack(&back, std::ptr::null_mut(), 1, 0, &out) };
    assert_eq!(c, vec![40, 50, 3]);
    c.clear();
}

#[test]
fn signatures_compare_type_maps_not_layouts() {
    let int = t(P::Int);
    let a = Datatype::contiguous(4, &int).unwrap();
    let b = Datatype::vector(2, 2, 5, &int).unwrap();
    let c = Datatype::contiguous(4, &t(P::Float)).unwrap();
    assert_eq!(a.signature(), b.signature());
    assert_ne!(a.signature(), c.signature());
    assert_eq!(a.signature(), int.signature().repeat(4));
    assert_eq!(
        Datatype::contiguous(2, &a).unwrap().signature(),
        b.signature().repeat(2)
    );
    assert_eq!(a.signature().bytes(), 16);
    assert_eq!(a.signature().elements(), 4);
    // MPI_INT and MPI_INT32_T share a primitive, hence a signature.
    assert_eq!(int.signature(), t(P::Int32).signature());
}

#[test]
fn empty_types_with_huge_counts_are_cheap() {
    let empty = Datatype::vector(i64::from(i32::MAX), 0, 1, &t(P::Double)).unwrap();
    let big = Datatype::contiguous(i64::from(i32::MAX), &empty).unwrap();
    assert_eq!(big.size(), 0);
    let mut out = [0u8; 4];
    // SAFETY: the type map is empty, so nothing is read from the NULL buffer.
    let packed = unsafe { oxmpi_datatype::pack_external(&big, std::ptr::null(), 1000, &mut out) };
    assert_eq!(packed, Ok(0));
    // SAFETY: the type map is empty, so nothing is read from the NULL buffer.
    let packed = unsafe { pack(&big, std::ptr::null(), 1000, 0, &mut out) };
    assert_eq!(packed, 0);
    assert_eq!(big.blocks(1000, 0, 100).count(), 0);
    assert_eq!(big.elements_in(0), 0);
}

#[test]
fn basic_type_for_reductions() {
    let int = t(P::Int);
    assert_eq!(int.basic_type(), Some(P::Int));
    assert_eq!(
        Datatype::vector(3, 2, 4, &int).unwrap().basic_type(),
        Some(P::Int)
    );
    let pairs = Datatype::contiguous(5, &t(P::DoubleInt)).unwrap();
    assert_eq!(pairs.basic_type(), Some(P::DoubleInt));
    let mixed = Datatype::create_struct(&[1, 1], &[0, 8], &[int.clone(), t(P::Double)]).unwrap();
    assert_eq!(mixed.basic_type(), None);
    let marked =
        Datatype::create_struct(&[1, 2, 1], &[-4, 0, 16], &[t(P::Lb), int.clone(), t(P::Ub)])
            .unwrap();
    assert_eq!(marked.basic_type(), Some(P::Int));
    assert_eq!(Datatype::contiguous(0, &int).unwrap().basic_type(), None);
    assert_eq!(
        Datatype::resized(&int, 0, 8).unwrap().dup().basic_type(),
        Some(P::Int)
    );
    // MPI_INT and MPI_INT32_T are different types.
    assert_eq!(
        Datatype::create_struct(&[1, 1], &[0, 4], &[int, t(P::Int32)])
            .unwrap()
            .basic_type(),
        None
    );
}
