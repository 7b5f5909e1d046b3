//! Runs `#[derive(Equivalence)]` against a stand-in for the `oxmpi` crate (this test crate
//! names itself `oxmpi`) whose `derive` support builds the struct type with the real
//! datatype engine, then checks the layout (size, bounds, extent) and packs and unpacks
//! values through it.

extern crate self as oxmpi;

use oxmpi_derive::Equivalence;

/// The items of `oxmpi::datatype` the generated code uses, implemented on the engine.
pub mod datatype {
    use oxmpi_datatype::{Datatype, Predefined};

    #[derive(Clone, Copy, Debug)]
    pub struct DatatypeRef {
        pub ty: &'static Datatype,
        pub multiplicity: usize,
    }

    /// # Safety
    /// As in `oxmpi`.
    pub unsafe trait Equivalence: Sized {
        fn equivalent_datatype() -> DatatypeRef;
        const NEEDS_REPAIR: bool = false;
        /// # Safety
        /// As in `oxmpi`.
        unsafe fn repair(elements: *mut Self, count: usize) {
            let _ = (elements, count);
        }
    }

    fn named(p: Predefined) -> DatatypeRef {
        DatatypeRef {
            ty: Box::leak(Box::new(Datatype::predefined(p))),
            multiplicity: 1,
        }
    }

    macro_rules! prim {
        ($($t:ty => $p:ident),*) => {$(
            // SAFETY: same size as the predefined type, every bit pattern valid.
            unsafe impl Equivalence for $t {
                fn equivalent_datatype() -> DatatypeRef {
                    named(Predefined::$p)
                }
            }
        )*};
    }
    prim!(u8 => Uint8, u16 => Uint16, i32 => Int32, u32 => Uint32, f64 => Double);

    // SAFETY: one byte; bytes other than 0 and 1 are repaired.
    unsafe impl Equivalence for bool {
        fn equivalent_datatype() -> DatatypeRef {
            named(Predefined::CBool)
        }
        const NEEDS_REPAIR: bool = true;
        unsafe fn repair(elements: *mut bool, count: usize) {
            let b = elements.cast::<u8>();
            for i in 0..count {
                // SAFETY: per the contract, `count` bytes are readable and writable.
                unsafe { *b.add(i) = (*b.add(i) != 0) as u8 };
            }
        }
    }

    // SAFETY: `N` values of `T` back to back.
    unsafe impl<T: Equivalence, const N: usize> Equivalence for [T; N] {
        fn equivalent_datatype() -> DatatypeRef {
            let d = T::equivalent_datatype();
            DatatypeRef {
                multiplicity: d.multiplicity * N,
                ..d
            }
        }
        const NEEDS_REPAIR: bool = T::NEEDS_REPAIR;
        unsafe fn repair(elements: *mut [T; N], count: usize) {
            // SAFETY: `count * N` values of `T`.
            unsafe { T::repair(elements.cast::<T>(), count * N) }
        }
    }

    pub mod derive {
        use super::DatatypeRef;
        use oxmpi_datatype::Datatype;
        use std::any::TypeId;
        use std::collections::HashMap;
        use std::sync::Mutex;

        pub struct Field {
            pub offset: usize,
            pub datatype: DatatypeRef,
        }

        pub fn struct_datatype(size: usize, fields: &[Field]) -> DatatypeRef {
            let bl: Vec<i64> = fields
                .iter()
                .map(|f| f.datatype.multiplicity as i64)
                .collect();
            let d: Vec<i64> = fields.iter().map(|f| f.offset as i64).collect();
            let t: Vec<Datatype> = fields.iter().map(|f| f.datatype.ty.clone()).collect();
            let s = Datatype::create_struct(&bl, &d, &t).unwrap();
            let r = Datatype::resized(&s, 0, size as i64).unwrap();
            r.commit();
            DatatypeRef {
                ty: Box::leak(Box::new(r)),
                multiplicity: 1,
            }
        }

        static CACHE: Mutex<Option<HashMap<TypeId, DatatypeRef>>> = Mutex::new(None);

        /// Looks up, then builds without the lock held (the build may recurse).
        pub fn cached<T: 'static>(build: impl FnOnce() -> DatatypeRef) -> DatatypeRef {
            let key = TypeId::of::<T>();
            if let Some(d) = CACHE.lock().unwrap().as_ref().and_then(|m| m.get(&key)) {
                return *d;
            }
            let d = build();
            *CACHE
                .lock()
                .unwrap()
                .get_or_insert_with(HashMap::new)
                .entry(key)
                .or_insert(d)
        }
    }
}

use datatype::Equivalence;

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Particle {
    kind: u8,
    x: f64,
    ids: [i32; 3],
    alive: bool,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Nested {
    p: Particle,
    n: u16,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Plain(u32, f64);

#[derive(Equivalence, Clone, Copy, Debug, PartialEq)]
#[repr(C, packed)]
struct Packed {
    a: u8,
    b: u32,
}

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Wrap<T: Copy> {
    value: T,
    tag: u8,
}

#[derive(Equivalence)]
struct Unit;

#[derive(Equivalence, Clone, Copy, Debug, PartialEq, Default)]
struct Outer<T: Copy> {
    inner: Wrap<T>,
    flags: [bool; 2],
}

fn layout<T: Equivalence>() -> (usize, isize, isize, isize) {
    let d = T::equivalent_datatype().ty;
    (d.size(), d.lb(), d.extent(), d.true_lb())
}

/// Packs `values` with the derived type.
fn pack<T: Equivalence>(values: &[T]) -> Vec<u8> {
    let d = T::equivalent_datatype().ty;
    let mut out = vec![0u8; d.size() * values.len()];
    // SAFETY: the type map lies inside the values (the derive's contract).
    let n = unsafe { oxmpi_datatype::pack(d, values.as_ptr().cast(), values.len(), 0, &mut out) };
    assert_eq!(n, out.len());
    out
}

fn unpack<T: Equivalence>(bytes: &[u8], into: &mut [T]) {
    let d = T::equivalent_datatype().ty;
    // SAFETY: as for `pack`; the values are then repaired.
    unsafe {
        oxmpi_datatype::unpack(d, into.as_mut_ptr().cast(), into.len(), 0, bytes);
        T::repair(into.as_mut_ptr(), into.len());
    }
}

#[test]
fn struct_layout_follows_the_rust_struct() {
    let (size, lb, extent, true_lb) = layout::<Particle>();
    assert_eq!(size, 1 + 8 + 12 + 1);
    assert_eq!((lb, extent), (0, std::mem::size_of::<Particle>() as isize));
    assert!(true_lb >= 0);
    const { assert!(Particle::NEEDS_REPAIR) };
    const { assert!(!Plain::NEEDS_REPAIR) };
    assert_eq!(layout::<Nested>().0, 22 + 2);
    assert_eq!(layout::<Nested>().2, std::mem::size_of::<Nested>() as isize);
    assert_eq!(layout::<Packed>(), (5, 0, 5, 0));
    assert_eq!(layout::<Plain>().0, 12);
    assert_eq!(layout::<Unit>(), (0, 0, 0, 0));
}

#[test]
fn values_round_trip_and_padding_is_not_data() {
    let v = [
        Particle {
            kind: 3,
            x: 1.5,
            ids: [1, -2, 3],
            alive: true,
        },
        Particle {
            kind: 250,
            x: -0.25,
            ids: [7, 8, 9],
            alive: false,
        },
    ];
    let bytes = pack(&v);
    // Packed order is field order: kind, x, ids, alive.
    assert_eq!(bytes[0], 3);
    assert_eq!(&bytes[1..9], &1.5f64.to_ne_bytes());
    assert_eq!(&bytes[9..13], &1i32.to_ne_bytes());
    assert_eq!(bytes[21], 1);
    assert_eq!(bytes[22], 250);
    let mut back = [Particle::default(); 2];
    unpack(&bytes, &mut back);
    assert_eq!(back, v);

    let n = [Nested { p: v[0], n: 513 }];
    let mut nb = [Nested::default()];
    unpack(&pack(&n), &mut nb);
    assert_eq!(nb, n);

    let k = [
        Packed {
            a: 1,
            b: 0x0102_0304,
        },
        Packed { a: 9, b: 7 },
    ];
    let kb = pack(&k);
    assert_eq!(kb.len(), 10);
    let mut kk = [Packed { a: 0, b: 0 }; 2];
    unpack(&kb, &mut kk);
    assert_eq!(kk, k);
}

#[test]
fn received_bools_are_repaired() {
    let mut bytes = pack(&[Particle {
        alive: true,
        ..Default::default()
    }]);
    bytes[21] = 0x7f; // not a valid bool
    let mut p = [Particle::default()];
    unpack(&bytes, &mut p);
    assert!(p[0].alive);
    // SAFETY: `alive` was repaired, so reading it as a byte gives 1.
    assert_eq!(unsafe { *std::ptr::addr_of!(p[0].alive).cast::<u8>() }, 1);
}

#[test]
fn generic_instantiations_get_their_own_types() {
    assert_eq!(layout::<Wrap<u32>>().0, 5);
    assert_eq!(layout::<Wrap<f64>>().0, 9);
    assert_eq!(layout::<Wrap<u32>>().0, 5);
    let w = [Wrap {
        value: 2.5f64,
        tag: 4,
    }];
    let mut b = [Wrap::<f64>::default()];
    unpack(&pack(&w), &mut b);
    assert_eq!(b, w);
    // A generic struct inside a generic struct (the cache is re-entered while building).
    assert_eq!(layout::<Outer<u16>>().0, 3 + 2);
    const { assert!(Outer::<u16>::NEEDS_REPAIR) };
    let o = [Outer {
        inner: Wrap {
            value: 9u16,
            tag: 1,
        },
        flags: [true, false],
    }];
    let mut ob = [Outer::<u16>::default()];
    unpack(&pack(&o), &mut ob);
    assert_eq!(ob, o);
    // The cache hands out the same type object for the same instantiation.
    assert!(std::ptr::eq(
        Wrap::<u32>::equivalent_datatype().ty,
        Wrap::<u32>::equivalent_datatype().ty
    ));
    assert!(std::ptr::eq(
        Particle::equivalent_datatype().ty,
        Particle::equivalent_datatype().ty
    ));
}
