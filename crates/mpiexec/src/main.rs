//! `mpiexec`: starts an MPI job and serves PMI to its ranks.
fn main() {}
