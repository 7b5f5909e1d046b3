//! Gives the C library MPICH's soname, so binaries linked against `libmpi.so.12`
//! (or Debian's `libmpich.so.12`, via a link at staging) load it; and generates the
//! Fortran entry points (`src/fortran.rs`) from `oxmpi-fortran`'s API table and mpi.h.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi.so.12");

    let dir = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let header = dir.join("include/mpi.h");
    let table = dir.join("../fortran/api/mpi.api");
    println!("cargo:rerun-if-changed={}", header.display());
    println!("cargo:rerun-if-changed={}", table.display());
    let read = |p: &std::path::Path| {
        std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let code = oxmpi_fortran::entry_points(&read(&table), &read(&header))
        .unwrap_or_else(|e| panic!("generating the Fortran bindings: {e}"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out.join("fortran_entry_points.rs"), code).unwrap();
}
