//! The oxmpi MPI engine shared by the C library and the Rust API.
