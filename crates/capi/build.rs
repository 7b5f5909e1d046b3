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
    // The entry points call each C function by the module that defines it; pending lines
    // of the table are bound once a module defines their function.
    let src = dir.join("src");
    println!("cargo:rerun-if-changed={}", src.display());
    let sources =
        oxmpi_fortran::defined::sources(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let code = oxmpi_fortran::entry_points(&read(&table), &read(&header), &sources)
        .unwrap_or_else(|e| panic!("generating the Fortran bindings: {e}"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    std::fs::write(out.join("fortran_entry_points.rs"), code).unwrap();
}
