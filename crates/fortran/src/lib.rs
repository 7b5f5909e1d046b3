//! The generator of oxmpi's Fortran bindings. One table (`api/mpi.api`) describes every
//! MPI function that has Fortran bindings and the kind of each argument; the constants
//! come from the C header. From them it writes the C-side entry points (Rust, compiled
//! into `libmpi.so.12` by `oxmpi-capi`'s build script), `mpif.h`, the `mpi` and `mpi_f08`
//! modules' sources and MPICH's `mpi_f08` entry points (`libmpichfort.so.12`; by the
//! `oxmpi-fortran-gen` tool at staging).

pub mod api;
pub mod coverage;
pub mod defined;
pub mod fortran;
pub mod header;
pub mod mpich_f08;
pub mod rust;

/// The table's text, as compiled into this crate.
pub const API_TABLE: &str = include_str!("../api/mpi.api");

/// The Rust source of the Fortran entry points, from the table, the text of mpi.h and
/// `oxmpi-capi`'s sources (module path, text; see [`defined`]).
pub fn entry_points(
    table: &str,
    mpi_h: &str,
    capi_sources: &[(String, String)],
) -> Result<String, String> {
    let funcs = api::parse(table).map_err(|e| e.to_string())?;
    let consts = header::constants(mpi_h);
    let defined = defined::scan(capi_sources);
    let funcs = defined::select(&funcs, &defined)?;
    rust::generate(&funcs, &consts, &defined)
}
