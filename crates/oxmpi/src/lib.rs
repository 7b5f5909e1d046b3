//! The safe Rust API of oxmpi.
