//! Gives the C library MPICH's soname, so binaries linked against `libmpi.so.12`
//! (or Debian's `libmpich.so.12`, via a link at staging) load it.
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi.so.12");
}
