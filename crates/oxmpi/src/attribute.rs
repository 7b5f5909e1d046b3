//! Typed attributes cached on communicators (`MPI_Comm_create_keyval`,
//! `MPI_Comm_set_attr`, `MPI_Comm_get_attr`, `MPI_Comm_delete_attr`): an
//! [`AttributeKey<T>`] names a slot that holds a `T` on any communicator; duplicating
//! the communicator clones the value into the copy, freeing it drops the value.
//!
//! The engine stores a token per value; the values themselves live in the key's own
//! table, so a value is reachable only while the engine still holds its token, and
//! reading one clones it out under that table's lock.

use crate::error::{engine, Result};
use crate::topology::Communicator;
use oxmpi_core::attr::{AttrHooks, AttrKind, AttrObject, Key, KeyvalId};
use oxmpi_core::commops::{self, AttrValue};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The values of one key, by token.
struct Store<T> {
    next: AtomicUsize,
    values: Mutex<HashMap<usize, T>>,
}

impl<T> Store<T> {
    fn values(&self) -> MutexGuard<'_, HashMap<usize, T>> {
        self.values.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn insert(&self, v: T) -> usize {
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        self.values().insert(token, v);
        token
    }
}

impl<T: Clone + Send + Sync + 'static> AttrHooks for Store<T> {
    fn copy(&self, _: AttrObject, _: KeyvalId, token: usize) -> oxmpi_core::Result<Option<usize>> {
        let v = self.values().get(&token).cloned();
        Ok(v.map(|v| self.insert(v)))
    }

    fn delete(&self, _: AttrObject, _: KeyvalId, token: usize) -> oxmpi_core::Result<()> {
        self.values().remove(&token);
        Ok(())
    }
}

/// A key for attributes of type `T` on communicators; the key is freed when dropped
/// (values already cached stay until their communicators drop them).
pub struct AttributeKey<T> {
    keyval: KeyvalId,
    store: Arc<Store<T>>,
    _values: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for AttributeKey<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttributeKey")
            .field("keyval", &self.keyval)
            .finish()
    }
}

impl<T: Clone + Send + Sync + 'static> AttributeKey<T> {
    /// A new key (`MPI_Comm_create_keyval`); values are cloned into duplicates.
    pub fn new() -> Result<AttributeKey<T>> {
        let store = Arc::new(Store {
            next: AtomicUsize::new(1),
            values: Mutex::new(HashMap::new()),
        });
        let keyval = commops::create_keyval(AttrKind::Comm, store.clone())
            .map_err(engine("AttributeKey::new"))?;
        Ok(AttributeKey {
            keyval,
            store,
            _values: PhantomData,
        })
    }

    /// Number of values cached with this key on live communicators.
    pub fn cached_values(&self) -> usize {
        self.store.values().len()
    }

    fn key(&self) -> Key {
        Key::User(self.keyval)
    }
}

impl<T> Drop for AttributeKey<T> {
    fn drop(&mut self) {
        // Fails only after finalization, when the table is gone anyway.
        let _ = commops::free_keyval(self.keyval, AttrKind::Comm);
    }
}

/// Attribute access on any communicator; `use oxmpi::traits::*;` brings it in.
pub trait Attributes: Communicator {
    /// Caches `value` with `key` (`MPI_Comm_set_attr`), replacing (and dropping) a
    /// value cached before.
    fn set_attribute<T: Clone + Send + Sync + 'static>(
        &self,
        key: &AttributeKey<T>,
        value: T,
    ) -> Result<()> {
        let token = key.store.insert(value);
        let r = commops::attr_set(self.comm_id(), key.key(), token);
        if r.is_err() {
            key.store.values().remove(&token);
        }
        r.map_err(engine("set_attribute"))
    }

    /// A clone of the value cached with `key`, `None` when there is none
    /// (`MPI_Comm_get_attr`).
    fn get_attribute<T: Clone + Send + Sync + 'static>(
        &self,
        key: &AttributeKey<T>,
    ) -> Result<Option<T>> {
        match commops::attr_get(self.comm_id(), key.key()).map_err(engine("get_attribute"))? {
            Some(AttrValue::Word(token)) => Ok(key.store.values().get(&token).cloned()),
            _ => Ok(None),
        }
    }

    /// Removes (and drops) the value cached with `key`, if any
    /// (`MPI_Comm_delete_attr`).
    fn delete_attribute<T: Clone + Send + Sync + 'static>(
        &self,
        key: &AttributeKey<T>,
    ) -> Result<()> {
        commops::attr_delete(self.comm_id(), key.key()).map_err(engine("delete_attribute"))
    }
}

impl<C: Communicator + ?Sized> Attributes for C {}
