//! The support `#[derive(Equivalence)]` (crate `oxmpi-derive`) builds on: the generated
//! code describes a struct as [`Field`]s, turns them into a committed engine datatype
//! with [`struct_datatype`], and keeps it for the life of the process (a `static` for
//! plain structs, [`cached`] for generic ones).
//!
//! These items are public only for the generated code; programs have no need to call
//! them.

use super::DatatypeRef;
use oxmpi_core::types;
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// One field of a struct: its byte offset and the datatype of its value.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// `offset_of!` the field.
    pub offset: usize,
    /// The field type's `Equivalence` datatype.
    pub datatype: DatatypeRef,
}

/// The committed datatype of a struct of `size` bytes made of `fields`: one block per
/// field (the field's datatype repeated its multiplicity), lower bound 0, extent
/// `size`, padding outside every block.
///
/// # Panics
/// When MPI is not initialized (or already finalized): datatypes live in the engine,
/// so a derived type can only be described while MPI runs.
pub fn struct_datatype(size: usize, fields: &[Field]) -> DatatypeRef {
    let engine_fields: Vec<types::Field> = fields
        .iter()
        .map(|f| types::Field {
            offset: f.offset,
            ty: f.datatype.type_id(),
            count: f.datatype.multiplicity(),
        })
        .collect();
    let data: usize = fields.iter().map(|f| f.datatype.value_size()).sum();
    match types::rust_struct(size, &engine_fields) {
        // SAFETY: the engine committed the type; it is never freed, and its size is the
        // sum of the fields' data sizes. Lower bound 0 and extent `size` per
        // `rust_struct`.
        Ok(id) => unsafe { DatatypeRef::from_raw(id, data) },
        Err(e) => panic!(
            "#[derive(Equivalence)]: cannot build the datatype of a struct ({}: {}); \
             derived types can only be used while MPI is initialized",
            e.class.name(),
            e.message
        ),
    }
}

/// The datatype of `T`, built by `build` on first use and kept for the life of the
/// process (one per type, for generic structs). `build` runs without the cache locked,
/// so it may itself call `cached` for nested generic structs; if two threads build the
/// same type at once, the first value stored is kept.
pub fn cached<T: 'static>(build: impl FnOnce() -> DatatypeRef) -> DatatypeRef {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, DatatypeRef>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = TypeId::of::<T>();
    let found = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&key)
        .copied();
    if let Some(d) = found {
        return d;
    }
    let d = build();
    *cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(key)
        .or_insert(d)
}
