//! The source of `libmpichfort.so.12`'s `mpi_f08` part: the symbols a program compiled
//! with MPICH's `mpi_f08` module (Debian's `mpif90.mpich`) calls, so that such a binary
//! runs on oxmpi. MPICH's module compiles a call `MPI_Send(...)` into a call of the
//! external procedure `mpi_send_f08ts_` (choice buffers as `TYPE(*), DIMENSION(..)`:
//! gfortran's descriptor), `mpi_comm_rank_f08_` (no buffer), `mpi_send_f08ts_large_` /
//! `mpi_type_size_f08_large_` (the `_c` forms), all with an optional IERROR (a null
//! address when absent), and a call of `PMPI_Send` into `pmpir_send_f08ts_` (each
//! wrapper is defined under both names); `==` and `/=` on handles into `mpi_f08_types`' module
//! procedures; and `MPI_IN_PLACE`, `MPI_BOTTOM`, `MPI_STATUS(ES)_IGNORE` into the C
//! objects `MPIR_F08_*`. This file defines each of them in Fortran (compiled by gfortran
//! at staging, so the descriptors are the compiler's own): a wrapper takes the buffer's
//! address, maps MPICH's sentinels to oxmpi's, and calls the library's `pmpi_name_`
//! entry point. A noncontiguous array section as the buffer of a blocking call is copied
//! to a contiguous temporary (and a received one back) through the C descriptor
//! gfortran builds for a `BIND(C)` call (`oxmpi_f08_cdesc_*` in `libmpi.so.12`); as the
//! buffer of a nonblocking, persistent or one-sided call it goes, with the program's
//! descriptors, to the library's `pmpi_name_fts` entry point, which describes it by a
//! derived datatype (MPICH's `MPI_BOTTOM`/`MPI_IN_PLACE` named to it first); a call with
//! another argument the wrapper maps or a CHARACTER argument refuses it with an error of
//! class `MPI_ERR_BUFFER`. `MPI_ARGV(S)_NULL`,
//! `MPI_ERRCODES_IGNORE` and `MPI_UNWEIGHTED`/`MPI_WEIGHTS_EMPTY` are module variables of
//! MPICH's `mpi_f08_link_constants` (the program holds copies of them, through copy
//! relocations, so they are defined here with MPICH's sizes), mapped to oxmpi's by
//! address; the predefined attribute callbacks (`MPI_COMM_DUP_FN`, ...) are module
//! procedures of `mpi_f08_callbacks`, defined here with the standard's semantics.

use crate::api::{Base, Func, Mode};
use crate::fortran::F08_HANDLES;
use crate::fortran::{dummy_f08, heading, is_nonblocking, removed_in_mpi3, result_decl};
use std::fmt::Write;

/// MPICH's `mpi_f08_link_constants` (the sentinels of spawning, error codes and graph
/// weights; sizes as MPICH's, since a program's copy relocations copy them) and
/// `mpi_f08_callbacks` (the predefined attribute callbacks, called by the library with
/// Fortran's conventions like any Fortran callback).
const LINK_CONSTANTS: &str = "module mpi_f08_link_constants
  implicit none
  integer, target :: MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY, MPI_ERRCODES_IGNORE(1)
  character(len=1), target :: MPI_ARGV_NULL(1), MPI_ARGVS_NULL(1, 1)
end module mpi_f08_link_constants

module mpi_f08_callbacks
  use mpi_f08, only: MPI_Comm, MPI_Datatype, MPI_Win, MPI_ADDRESS_KIND, MPI_SUCCESS
  implicit none
contains
";

/// The glue module: MPICH's sentinel objects and the mapping to oxmpi's.
const GLUE: &str = "module oxmpi_mpich_glue
  use, intrinsic :: iso_c_binding, only: c_ptr, c_loc, c_associated, c_intptr_t
  use mpi_f08, only: MPI_Status, MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS_IGNORE, &
    MPI_STATUSES_IGNORE, MPI_ERR_BUFFER, MPI_COMM_SELF, MPI_Comm, MPI_Win, &
    MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY, MPI_ERRCODES_IGNORE
  use mpi_f08_link_constants, only: lc_unweighted => MPI_UNWEIGHTED, &
    lc_weights_empty => MPI_WEIGHTS_EMPTY, lc_errcodes_ignore => MPI_ERRCODES_IGNORE, &
    lc_argv_null => MPI_ARGV_NULL, lc_argvs_null => MPI_ARGVS_NULL
  implicit none
  private
  public :: f08_buf, f08_status, f08_statuses, f08_noncontig
  public :: f08_weights, f08_errcodes, f08_is_argv_null, f08_is_argvs_null, addr
  public :: oxmpi_f08_cdesc_bytes, oxmpi_f08_cdesc_copy, oxmpi_f08_mpich_sentinels
  ! Public, or gfortran keeps the symbols local to the library.
  public :: mpich_bottom, mpich_in_place, mpich_status_ignore, mpich_statuses_ignore
  integer, bind(C, name='MPIR_F08_MPI_BOTTOM'), target :: mpich_bottom
  integer, bind(C, name='MPIR_F08_MPI_IN_PLACE'), target :: mpich_in_place
  type(MPI_Status), bind(C, name='MPIR_F08_MPI_STATUS_IGNORE_OBJ'), target :: mpich_status_ignore
  type(MPI_Status), bind(C, name='MPIR_F08_MPI_STATUSES_IGNORE_OBJ'), target :: &
    mpich_statuses_ignore(1)
  integer, save :: noncontig_code = -1
  ! libmpi.so.12 (capi's fortran_cdesc.rs): the size of an array section and copies
  ! between it and a contiguous buffer, through the C descriptor gfortran builds.
  interface
    function oxmpi_f08_cdesc_bytes(buf) bind(C) result(n)
      import :: c_intptr_t
      type(*), dimension(..) :: buf
      integer(c_intptr_t) :: n
    end function oxmpi_f08_cdesc_bytes
    subroutine oxmpi_f08_cdesc_copy(buf, tmp, to_tmp) bind(C)
      import :: c_ptr
      type(*), dimension(..) :: buf
      type(c_ptr), value :: tmp
      integer, value :: to_tmp
    end subroutine oxmpi_f08_cdesc_copy
    ! Names MPICH's MPI_BOTTOM / MPI_IN_PLACE to the library's _fts entry points.
    subroutine oxmpi_f08_mpich_sentinels(bottom, in_place) bind(C)
      import :: c_ptr
      type(c_ptr), value :: bottom, in_place
    end subroutine oxmpi_f08_mpich_sentinels
  end interface
contains
  function addr(i) result(p)
    integer(c_intptr_t), intent(in) :: i
    type(c_ptr) :: p
    p = transfer(i, p)
  end function addr

  ! `p`, or `ours` where `p` is MPICH's sentinel `theirs`.
  function swap(p, theirs, ours) result(q)
    type(c_ptr), intent(in) :: p, theirs, ours
    type(c_ptr) :: q
    q = p
    if (c_associated(p, theirs)) q = ours
  end function swap

  ! A buffer address: MPICH's MPI_BOTTOM / MPI_IN_PLACE become oxmpi's.
  function f08_buf(p) result(q)
    type(c_ptr), intent(in) :: p
    type(c_ptr) :: q
    q = swap(swap(p, c_loc(mpich_in_place), addr(loc(MPI_IN_PLACE))), &
             c_loc(mpich_bottom), addr(loc(MPI_BOTTOM)))
  end function f08_buf

  function f08_status(p) result(q)
    type(c_ptr), intent(in) :: p
    type(c_ptr) :: q
    q = swap(p, c_loc(mpich_status_ignore), addr(loc(MPI_STATUS_IGNORE)))
  end function f08_status

  ! MPICH's MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY become oxmpi's.
  function f08_weights(p) result(q)
    type(c_ptr), intent(in) :: p
    type(c_ptr) :: q
    q = swap(swap(p, c_loc(lc_unweighted), addr(loc(MPI_UNWEIGHTED))), &
             c_loc(lc_weights_empty), addr(loc(MPI_WEIGHTS_EMPTY)))
  end function f08_weights

  function f08_errcodes(p) result(q)
    type(c_ptr), intent(in) :: p
    type(c_ptr) :: q
    q = swap(p, c_loc(lc_errcodes_ignore), addr(loc(MPI_ERRCODES_IGNORE)))
  end function f08_errcodes

  ! Whether an argument list at address `i` is MPICH's MPI_ARGV_NULL (MPI_ARGVS_NULL).
  logical function f08_is_argv_null(i)
    integer(c_intptr_t), intent(in) :: i
    f08_is_argv_null = i == loc(lc_argv_null)
  end function f08_is_argv_null

  logical function f08_is_argvs_null(i)
    integer(c_intptr_t), intent(in) :: i
    f08_is_argvs_null = i == loc(lc_argvs_null)
  end function f08_is_argvs_null

  function f08_statuses(p) result(q)
    type(c_ptr), intent(in) :: p
    type(c_ptr) :: q
    q = swap(p, c_loc(mpich_statuses_ignore), addr(loc(MPI_STATUSES_IGNORE)))
  end function f08_statuses

  ! A noncontiguous buffer: raises an error of class MPI_ERR_BUFFER through the error
  ! handler of `obj` (a communicator, or a window when `is_win`).
  subroutine f08_noncontig(name, obj, is_win, ierror)
    character(len=*), intent(in) :: name
    integer, intent(in) :: obj
    logical, intent(in) :: is_win
    integer, intent(out) :: ierror
    integer :: ierr
    if (noncontig_code < 0) then
      call pmpi_add_error_code(MPI_ERR_BUFFER, noncontig_code, ierr)
      call pmpi_add_error_string(noncontig_code, 'a noncontiguous array section as a &
        &buffer (oxmpi runs MPICH-built mpi_f08 programs with contiguous buffers only)', ierr)
    end if
    print '(a,a)', name, ': a noncontiguous array section as a buffer is not supported'
    ierror = noncontig_code
    if (is_win) then
      call pmpi_win_call_errhandler(MPI_Win(obj), noncontig_code, ierr)
    else
      call pmpi_comm_call_errhandler(MPI_Comm(obj), noncontig_code, ierr)
    end if
  end subroutine f08_noncontig
end module oxmpi_mpich_glue
";

/// `mpi_f08_callbacks`' procedures: `MPI_<KIND>_NULL_COPY_FN` (no copy), `_DUP_FN`
/// (copies the value), `_NULL_DELETE_FN` (nothing to do), for communicators, datatypes
/// and windows.
fn callbacks(s: &mut String) {
    s.push_str(LINK_CONSTANTS);
    for (kind, ty) in [
        ("comm", "MPI_Comm"),
        ("type", "MPI_Datatype"),
        ("win", "MPI_Win"),
    ] {
        for (name, body) in [
            ("null_copy_fn", "flag = .false."),
            (
                "dup_fn",
                "attribute_val_out = attribute_val_in\n    flag = .true.",
            ),
        ] {
            writeln!(
                s,
                "  subroutine mpi_{kind}_{name}(old, keyval, extra_state, attribute_val_in, &\n      attribute_val_out, flag, ierror)\n    type({ty}) :: old\n    integer :: keyval, ierror\n    integer(kind=MPI_ADDRESS_KIND) :: extra_state, attribute_val_in, attribute_val_out\n    logical :: flag\n    {body}\n    ierror = MPI_SUCCESS\n  end subroutine mpi_{kind}_{name}"
            )
            .unwrap();
        }
        writeln!(
            s,
            "  subroutine mpi_{kind}_null_delete_fn(obj, keyval, attribute_val, extra_state, ierror)\n    type({ty}) :: obj\n    integer :: keyval, ierror\n    integer(kind=MPI_ADDRESS_KIND) :: attribute_val, extra_state\n    ierror = MPI_SUCCESS\n  end subroutine mpi_{kind}_null_delete_fn"
        )
        .unwrap();
    }
    s.push_str("end module mpi_f08_callbacks\n\n");
}

/// `mpi_f08_types`' comparison procedures (module procedures of that name in MPICH).
fn types_module(s: &mut String) {
    s.push_str("\nmodule mpi_f08_types\n  use mpi_f08, only: ");
    let names: Vec<&str> = F08_HANDLES
        .iter()
        .map(|(t, _)| *t)
        .filter(|t| *t != "MPI_File")
        .collect();
    writeln!(
        s,
        "{}, &\n    MPI_Status, MPI_STATUS_SIZE",
        names.join(", &\n    ")
    )
    .unwrap();
    s.push_str("  implicit none\ncontains\n");
    for t in &names {
        let l = t.to_ascii_lowercase();
        for (suffix, op) in [("eq", "=="), ("neq", "/=")] {
            writeln!(
                s,
                "  logical function {l}_{suffix}(x, y)\n    type({t}), intent(in) :: x, y\n    {l}_{suffix} = x%MPI_VAL {op} y%MPI_VAL\n  end function {l}_{suffix}\n\
                 \x20 logical function {l}_f08_{suffix}_f(x, y)\n    type({t}), intent(in) :: x\n    integer, intent(in) :: y\n    {l}_f08_{suffix}_f = x%MPI_VAL {op} y\n  end function {l}_f08_{suffix}_f\n\
                 \x20 logical function {l}_f_{suffix}_f08(x, y)\n    integer, intent(in) :: x\n    type({t}), intent(in) :: y\n    {l}_f_{suffix}_f08 = x {op} y%MPI_VAL\n  end function {l}_f_{suffix}_f08"
            )
            .unwrap();
        }
    }
    s.push_str(
        "  subroutine mpi_status_f2f08(f_status, f08_status, ierror)
    integer, intent(in) :: f_status(MPI_STATUS_SIZE)
    type(MPI_Status), intent(out) :: f08_status
    integer, optional, intent(out) :: ierror
    f08_status = transfer(f_status, f08_status)
    if (present(ierror)) ierror = 0
  end subroutine mpi_status_f2f08
  subroutine mpi_status_f082f(f08_status, f_status, ierror)
    type(MPI_Status), intent(in) :: f08_status
    integer, intent(out) :: f_status(MPI_STATUS_SIZE)
    integer, optional, intent(out) :: ierror
    f_status = transfer(f08_status, f_status)
    if (present(ierror)) ierror = 0
  end subroutine mpi_status_f082f
end module mpi_f08_types
",
    );
}

/// MPICH's external name of `f` (without gfortran's trailing underscore).
pub fn mpich_name(f: &Func) -> String {
    let large = f.is_large_count();
    let base = if large {
        &f.name[..f.name.len() - 2]
    } else {
        f.name.as_str()
    };
    let ts = if f.args.iter().any(|a| a.kind.base == Base::Buf) {
        "ts"
    } else {
        ""
    };
    format!(
        "mpi_{}_f08{ts}{}",
        base.to_ascii_lowercase(),
        if large { "_large" } else { "" }
    )
}

/// Whether a wrapper is written for `f`: MPI-3's removed calls have no `mpi_f08` form.
fn wrapped(f: &Func) -> bool {
    !removed_in_mpi3(&f.name) && !matches!(f.name.as_str(), "Status_f082f" | "Status_f2f08")
}

/// The source compiled into `libmpichfort.so.12`: the glue, `mpi_f08_types` and one
/// external procedure per function.
pub fn source(funcs: &[Func]) -> String {
    let mut s = String::new();
    s.push_str(
        "! MPICH's mpi_f08 entry points over oxmpi (libmpichfort.so.12). Generated by\n\
         ! oxmpi-fortran-gen from crates/fortran/api/mpi.api; do not edit.\n",
    );
    callbacks(&mut s);
    s.push_str(GLUE);
    types_module(&mut s);
    let types: Vec<&str> = F08_HANDLES.iter().map(|(t, _)| *t).collect();
    // Each procedure twice: `mpi_send_f08ts_`, and `pmpir_send_f08ts_`, which MPICH's
    // module compiles a call of PMPI_Send into (a profiling library's, say).
    let names = funcs.iter().filter(|f| wrapped(f)).flat_map(|f| {
        let name = mpich_name(f);
        let pmpir = format!("pmpir{}", &name[3..]);
        [(f, name), (f, pmpir)]
    });
    for (f, name) in names {
        let entry = format!("pmpi_{}", f.name.to_ascii_lowercase());
        s.push('\n');
        let end = heading(&mut s, f, &name, "");
        writeln!(
            s,
            "  use, intrinsic :: iso_c_binding, only: c_ptr, c_loc, c_int8_t, c_intptr_t\n  use mpi_f08, only: {}, MPI_Status, MPI_ADDRESS_KIND, MPI_COUNT_KIND, &\n    MPI_COMM_SELF, oxmpi_argv_null => MPI_ARGV_NULL, oxmpi_argvs_null => MPI_ARGVS_NULL\n  use oxmpi_mpich_glue\n  implicit none",
            types.join(", &\n    ")
        )
        .unwrap();
        // The library's entry point, with addresses where the wrapper maps them.
        writeln!(s, "  interface").unwrap();
        heading(&mut s, f, &entry, "    ");
        writeln!(s, "      import\n      implicit none").unwrap();
        s.push_str(&result_decl(f, &entry, "      "));
        for a in f.fortran_args() {
            if by_address(a) {
                writeln!(s, "      type(c_ptr), value :: {}", a.name).unwrap();
            } else {
                writeln!(s, "{}", dummy_f08(a, false)).unwrap();
            }
        }
        if f.has_ierror() {
            writeln!(s, "      integer :: ierror").unwrap();
        }
        writeln!(s, "    end {end} {entry}\n  end interface").unwrap();
        let nb = is_nonblocking(&f.name);
        s.push_str(&result_decl(f, &name, "  "));
        for a in f.fortran_args() {
            let n = &a.name;
            match (a.kind.base, &a.kind.mode) {
                (Base::Buf, mode) => writeln!(
                    s,
                    "  type(*), dimension(..), target{}{} :: {n}",
                    if *mode == Mode::In {
                        ", intent(in)"
                    } else {
                        ""
                    },
                    if nb { ", asynchronous" } else { "" }
                )
                .unwrap(),
                (Base::Status, Mode::Out) => {
                    writeln!(s, "  type(MPI_Status), target :: {n}").unwrap()
                }
                (Base::Weights, _) => writeln!(
                    s,
                    "  !GCC$ ATTRIBUTES NO_ARG_CHECK :: {n}\n  integer, dimension(*), target :: {n}"
                )
                .unwrap(),
                (Base::Errcodes, _) => writeln!(s, "  integer, target :: {n}(*)").unwrap(),
                (Base::Status, Mode::OutArray(_)) => {
                    writeln!(s, "  type(MPI_Status), target :: {n}(*)").unwrap()
                }
                _ => writeln!(
                    s,
                    "{}",
                    dummy_f08(a, nb)
                        .replace("\n      ", "\n  ")
                        .replacen("      ", "  ", 1)
                )
                .unwrap(),
            }
        }
        let args: Vec<String> = f
            .fortran_args()
            .map(|a| {
                let n = &a.name;
                match (a.kind.base, &a.kind.mode) {
                    (Base::Buf, _) => format!("f08_buf(p_{n})"),
                    (Base::Status, Mode::Out) => format!("f08_status(c_loc({n}))"),
                    (Base::Status, Mode::OutArray(_)) => format!("f08_statuses(c_loc({n}(1)))"),
                    (Base::Weights, _) => format!("f08_weights(c_loc({n}))"),
                    (Base::Errcodes, _) => format!("f08_errcodes(c_loc({n}))"),
                    _ => n.clone(),
                }
            })
            .collect();
        if !f.has_ierror() {
            if f.is_function() {
                writeln!(s, "  {name} = {entry}({})", args.join(", ")).unwrap();
            } else {
                writeln!(s, "  call {entry}({})", args.join(", ")).unwrap();
            }
            writeln!(s, "end {end} {name}").unwrap();
            continue;
        }
        writeln!(
            s,
            "  integer, optional, intent(out) :: ierror\n  integer :: ierror_c"
        )
        .unwrap();
        for a in f.fortran_args().filter(|a| a.kind.base == Base::Buf) {
            let b = &a.name;
            writeln!(
                s,
                "  integer(c_int8_t), allocatable, target :: t_{b}(:)\n  type(c_ptr) :: p_{b}"
            )
            .unwrap();
        }
        let bufs: Vec<&str> = f
            .fortran_args()
            .filter(|a| a.kind.base == Base::Buf)
            .map(|a| a.name.as_str())
            .collect();
        let cond: Vec<String> = bufs
            .iter()
            .map(|b| format!(".not. is_contiguous({b})"))
            .collect();
        if nb && through_fts(f) {
            // The operation outlives the call: a noncontiguous section goes, with the
            // program's descriptors, to the library's `_fts` entry point, which describes
            // it by a derived datatype (or refuses what none describes).
            let fts = format!("{entry}_fts");
            writeln!(s, "  interface").unwrap();
            heading(&mut s, f, &fts, "    ");
            let at = s.trim_end().len();
            s.truncate(at);
            writeln!(
                s,
                " bind(C, name='{fts}')\n      import\n      implicit none"
            )
            .unwrap();
            for a in f.fortran_args() {
                if a.kind.base == Base::Buf {
                    writeln!(
                        s,
                        "      type(*), dimension(..){}, asynchronous :: {}",
                        if a.kind.mode == Mode::In {
                            ", intent(in)"
                        } else {
                            ""
                        },
                        a.name
                    )
                    .unwrap();
                } else {
                    writeln!(s, "{}", dummy_f08(a, false)).unwrap();
                }
            }
            writeln!(
                s,
                "      integer :: ierror\n    end subroutine {fts}\n  end interface"
            )
            .unwrap();
            let names: Vec<&str> = f.fortran_args().map(|a| a.name.as_str()).collect();
            writeln!(
                s,
                "  if ({}) then\n    call oxmpi_f08_mpich_sentinels(c_loc(mpich_bottom), c_loc(mpich_in_place))\n    call {fts}({}, &\n      ierror_c)\n    if (present(ierror)) ierror = ierror_c\n    return\n  end if",
                cond.join(" .or. "),
                names.join(", &\n      ")
            )
            .unwrap();
        } else if !bufs.is_empty() && nb {
            // The buffer must stay where it is until the operation completes: a
            // noncontiguous section is refused, through the error handler of the call's
            // communicator or window.
            let obj = f
                .fortran_args()
                .find(|a| matches!(a.kind.base, Base::Handle("Comm") | Base::Handle("Win")));
            let (obj, is_win) = match obj {
                Some(a) => (
                    format!("{}%MPI_VAL", a.name),
                    a.kind.base == Base::Handle("Win"),
                ),
                None => ("MPI_COMM_SELF%MPI_VAL".to_string(), false),
            };
            writeln!(
                s,
                "  if ({}) then\n    call f08_noncontig('MPI_{}', {obj}, {}, ierror_c)\n    if (present(ierror)) ierror = ierror_c\n    return\n  end if",
                cond.join(" .or. "),
                f.name.to_ascii_uppercase(),
                if is_win { ".true." } else { ".false." }
            )
            .unwrap();
        }
        let mut after = String::new();
        for b in &bufs {
            if nb {
                writeln!(s, "  p_{b} = c_loc({b})").unwrap();
                continue;
            }
            // A blocking call: a noncontiguous section travels through a contiguous copy.
            writeln!(
                s,
                "  if (is_contiguous({b})) then\n    p_{b} = c_loc({b})\n  else\n    allocate(t_{b}(max(1_c_intptr_t, oxmpi_f08_cdesc_bytes({b}))))\n    call oxmpi_f08_cdesc_copy({b}, c_loc(t_{b}), 1)\n    p_{b} = c_loc(t_{b})\n  end if"
            )
            .unwrap();
            let out = f
                .fortran_args()
                .any(|a| a.name == *b && a.kind.mode != Mode::In);
            if out {
                writeln!(
                    after,
                    "  if (allocated(t_{b})) call oxmpi_f08_cdesc_copy({b}, c_loc(t_{b}), 0)"
                )
                .unwrap();
            }
        }
        let call_with = |args: &[String]| {
            let mut call = format!("call {entry}(");
            for a in args {
                write!(call, "{a}, &\n      ").unwrap();
            }
            call.push_str("ierror_c)");
            call
        };
        // MPICH's MPI_ARGV_NULL / MPI_ARGVS_NULL (CHARACTER arrays, passed with a hidden
        // length) become oxmpi's by a second call.
        let argv = f
            .fortran_args()
            .enumerate()
            .find(|(_, a)| matches!(a.kind.base, Base::Argv | Base::Argvs));
        match argv {
            Some((i, a)) => {
                let (n, base) = (&a.name, a.kind.base);
                let (test, ours) = if base == Base::Argv {
                    ("f08_is_argv_null", "oxmpi_argv_null")
                } else {
                    ("f08_is_argvs_null", "oxmpi_argvs_null")
                };
                let mut mapped = args.clone();
                mapped[i] = ours.to_string();
                writeln!(
                    s,
                    "  if ({test}(loc({n}))) then\n    {}\n  else\n    {}\n  end if",
                    call_with(&mapped),
                    call_with(&args)
                )
                .unwrap();
            }
            None => writeln!(s, "  {}", call_with(&args)).unwrap(),
        }
        s.push_str(&after);
        writeln!(
            s,
            "  if (present(ierror)) ierror = ierror_c\nend {end} {name}"
        )
        .unwrap();
    }
    s
}

/// Whether a nonblocking wrapper hands noncontiguous sections to the library's
/// `pmpi_name_fts` (which only maps the buffers' sentinels, so no other argument may
/// need mapping) rather than refusing them.
fn through_fts(f: &Func) -> bool {
    crate::rust::has_ts_entry(f)
        && f.has_ierror()
        && f.fortran_args()
            .all(|a| a.kind.base == Base::Buf || !by_address(a))
}

/// Arguments the wrapper passes as a mapped address (`TYPE(C_PTR), VALUE` in the entry
/// point's interface): choice buffers and output statuses.
fn by_address(a: &crate::api::Arg) -> bool {
    matches!(
        (a.kind.base, &a.kind.mode),
        (Base::Buf | Base::Weights | Base::Errcodes, _)
            | (Base::Status, Mode::Out)
            | (Base::Status, Mode::OutArray(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_mpich() {
        let funcs = crate::api::parse(crate::API_TABLE).unwrap();
        let src = source(&funcs);
        for name in [
            "subroutine mpi_send_f08ts(",
            "subroutine pmpir_send_f08ts(",
            "subroutine pmpir_comm_rank_f08(",
            "subroutine mpi_send_f08ts_large(",
            "subroutine mpi_comm_rank_f08(",
            "subroutine mpi_type_size_f08_large(",
            "function mpi_wtime_f08(",
            "logical function mpi_comm_eq(",
        ] {
            assert!(src.contains(name), "no {name}");
        }
        // MPICH's link-time sentinels and predefined callbacks, and the calls that take
        // the sentinels.
        for name in [
            "module mpi_f08_link_constants",
            "module mpi_f08_callbacks",
            "subroutine mpi_comm_dup_fn(",
            "subroutine mpi_win_null_delete_fn(",
            "subroutine mpi_comm_spawn_f08(",
            "subroutine mpi_dist_graph_create_adjacent_f08(",
            "if (f08_is_argv_null(loc(argv))) then",
            // Sections in nonblocking calls go to the library's _fts entry points.
            "    call pmpi_isend_fts(buf, &",
            "    call oxmpi_f08_mpich_sentinels(c_loc(mpich_bottom), c_loc(mpich_in_place))",
            "f08_weights(c_loc(sourceweights))",
            "f08_errcodes(c_loc(array_of_errcodes))",
        ] {
            assert!(src.contains(name), "no {name}");
        }
        for l in src.lines() {
            assert!(l.len() <= 132, "too long for free form: {l}");
        }
    }
}
