//! Fortran kinds through the safe API (a process of its own: MPI is initialised once):
//! `match_size` and the `f90_*` datatypes, their sizes, their caching, their errors,
//! and a message described with one.

use oxmpi::datatype::{
    f90_complex, f90_integer, f90_real, match_size, MutView, TypeClass, UserDatatype, View,
};
use oxmpi::traits::*;
use oxmpi::ErrorClass;

#[test]
fn fortran_kinds() {
    // Pure lookups work without MPI.
    assert_eq!(match_size(TypeClass::Integer, 2).unwrap().engine_size(), 2);
    assert_eq!(
        match_size(TypeClass::Complex, 16).unwrap().engine_size(),
        16
    );
    assert_eq!(
        match_size(TypeClass::Real, 5).unwrap_err().class(),
        ErrorClass::Arg
    );

    let universe = oxmpi::initialize().expect("initialize");
    let world = universe.world();

    let i9 = f90_integer(9).unwrap();
    assert_eq!(i9.engine_size(), 4);
    assert_eq!(f90_integer(9).unwrap().type_id(), i9.type_id());
    assert_eq!(f90_integer(18).unwrap().engine_size(), 8);
    assert_eq!(f90_real(Some(6), Some(30)).unwrap().engine_size(), 4);
    assert_eq!(f90_real(Some(15), None).unwrap().engine_size(), 8);
    assert_eq!(f90_complex(None, Some(300)).unwrap().engine_size(), 16);
    assert_eq!(f90_integer(40).unwrap_err().class(), ErrorClass::Arg);
    assert_eq!(f90_real(None, None).unwrap_err().class(), ErrorClass::Arg);

    // Three INTEGER(SELECTED_INT_KIND(9)) values, sent to oneself through a view.
    let three = UserDatatype::contiguous(3, &i9).unwrap();
    let out = [7i32, -8, 9];
    let mut got = [0i32; 3];
    let me = world.this_process();
    me.send(&View::with_count_and_datatype(&out[..], 1, &three).unwrap())
        .unwrap();
    me.receive_into(&mut MutView::with_count_and_datatype(&mut got[..], 1, &three).unwrap())
        .unwrap();
    assert_eq!(got, out);
}
