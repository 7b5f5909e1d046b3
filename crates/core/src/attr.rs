//! Attribute caching: attribute keys (`MPI_Comm_create_keyval` and its datatype and
//! window forms), the values cached on an object, and the predefined attributes of
//! the communicators (`MPI_TAG_UB`, `MPI_HOST`, ...).
//!
//! A key carries [`AttrHooks`]: the copy and delete callbacks, which the bindings
//! implement (the C library calls the user's C functions, the Rust API its closures).
//! The engine decides *when* they run — on duplication, on free, when a value is
//! replaced or deleted — and always runs them with the runtime lock released, so a
//! callback may call MPI itself. Values are opaque machine words (a C `void *`).
//!
//! Keys are reference counted: a key freed by the user stays alive (and its callbacks
//! callable) until the last value set with it is gone, as the standard requires.

use crate::error::{err, Error, ErrorClass, Result};
use std::sync::Arc;

/// Index of a user-created key in the key table.
pub type KeyvalId = u32;

/// The kind of object a key caches values on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrKind {
    Comm,
    Datatype,
    Win,
}

impl AttrKind {
    pub fn noun(self) -> &'static str {
        match self {
            AttrKind::Comm => "communicator",
            AttrKind::Datatype => "datatype",
            AttrKind::Win => "window",
        }
    }
}

/// The object a callback is called for (its engine index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrObject {
    Comm(u32),
    Datatype(u32),
    Win(u32),
}

/// Copy and delete callbacks of a key. `Err` from a callback makes the MPI call that
/// ran it fail with that error.
pub trait AttrHooks: Send + Sync {
    /// Called when the object is duplicated: `Ok(Some(v))` caches `v` on the copy,
    /// `Ok(None)` leaves the copy without this attribute.
    fn copy(&self, obj: AttrObject, key: KeyvalId, value: usize) -> Result<Option<usize>>;
    /// Called when a value is deleted, replaced, or its object freed.
    fn delete(&self, obj: AttrObject, key: KeyvalId, value: usize) -> Result<()>;
}

/// The predefined attributes of communicators (the values `MPI_COMM_WORLD` carries;
/// oxmpi answers them on every communicator, as MPICH does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predefined {
    TagUb,
    Host,
    Io,
    WtimeIsGlobal,
    UniverseSize,
    LastUsedCode,
    AppNum,
    /// IMPI 2.5: the number of IMPI clients with ranks in the communicator.
    ImpiClientSize,
    /// IMPI 2.5: which of them the calling rank's client is (0..size-1).
    ImpiClientColor,
    /// IMPI 2.5: the number of IMPI hosts with ranks in the communicator.
    ImpiHostSize,
    /// IMPI 2.5: which of them the calling rank's host is (0..size-1).
    ImpiHostColor,
}

impl Predefined {
    pub fn name(self) -> &'static str {
        match self {
            Predefined::TagUb => "MPI_TAG_UB",
            Predefined::Host => "MPI_HOST",
            Predefined::Io => "MPI_IO",
            Predefined::WtimeIsGlobal => "MPI_WTIME_IS_GLOBAL",
            Predefined::UniverseSize => "MPI_UNIVERSE_SIZE",
            Predefined::LastUsedCode => "MPI_LASTUSEDCODE",
            Predefined::AppNum => "MPI_APPNUM",
            Predefined::ImpiClientSize => "IMPI_CLIENT_SIZE",
            Predefined::ImpiClientColor => "IMPI_CLIENT_COLOR",
            Predefined::ImpiHostSize => "IMPI_HOST_SIZE",
            Predefined::ImpiHostColor => "IMPI_HOST_COLOR",
        }
    }
}

/// A key as the calls name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Predefined(Predefined),
    User(KeyvalId),
}

struct Keyval {
    kind: AttrKind,
    hooks: Arc<dyn AttrHooks>,
    /// The user's handle has not been freed.
    handle_live: bool,
    /// Values currently cached with this key.
    uses: usize,
}

/// The table of user-created keys.
#[derive(Default)]
pub struct KeyvalTable {
    slots: Vec<Option<Keyval>>,
    free: Vec<KeyvalId>,
}

impl KeyvalTable {
    /// `MPI_Comm_create_keyval` and friends.
    pub fn create(&mut self, kind: AttrKind, hooks: Arc<dyn AttrHooks>) -> KeyvalId {
        let k = Keyval {
            kind,
            hooks,
            handle_live: true,
            uses: 0,
        };
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(k);
                i
            }
            None => {
                self.slots.push(Some(k));
                (self.slots.len() - 1) as KeyvalId
            }
        }
    }

    fn entry(&self, id: KeyvalId) -> Option<&Keyval> {
        self.slots.get(id as usize).and_then(|s| s.as_ref())
    }

    /// Checks that `id` is a live key for objects of `kind` (one the user may name).
    pub fn check(&self, id: KeyvalId, kind: AttrKind) -> Result<()> {
        match self.entry(id) {
            Some(k) if k.handle_live && k.kind == kind => Ok(()),
            Some(k) if k.handle_live => err(
                ErrorClass::Keyval,
                format!(
                    "attribute key {id} was created for {}s, not {}s",
                    k.kind.noun(),
                    kind.noun()
                ),
            ),
            _ => err(
                ErrorClass::Keyval,
                format!("invalid attribute key {id} (freed or never created)"),
            ),
        }
    }

    /// Checks that `id` names a key for objects of `kind` that still exists: one whose
    /// handle is live, or one the program freed while values are still cached with it.
    /// Getting, setting and deleting values accept both: the standard keeps a freed key
    /// usable until its last value is deleted (a program may hold a copy of the handle).
    pub fn check_use(&self, id: KeyvalId, kind: AttrKind) -> Result<()> {
        match self.entry(id) {
            Some(k) if !k.handle_live && k.kind == kind => Ok(()),
            _ => self.check(id, kind),
        }
    }

    /// The callbacks of a key that still exists (also after its handle was freed).
    pub fn hooks(&self, id: KeyvalId) -> Option<Arc<dyn AttrHooks>> {
        self.entry(id).map(|k| k.hooks.clone())
    }

    /// `MPI_Comm_free_keyval`: the handle becomes invalid; the key itself lives until
    /// no object caches a value with it.
    pub fn free(&mut self, id: KeyvalId, kind: AttrKind) -> Result<()> {
        self.check(id, kind)?;
        let k = self.slots[id as usize].as_mut().expect("checked");
        k.handle_live = false;
        self.release_if_unused(id);
        Ok(())
    }

    fn release_if_unused(&mut self, id: KeyvalId) {
        if let Some(k) = self.slots.get(id as usize).and_then(|s| s.as_ref()) {
            if !k.handle_live && k.uses == 0 {
                self.slots[id as usize] = None;
                self.free.push(id);
            }
        }
    }

    /// Counts a value cached with `id`.
    pub fn add_use(&mut self, id: KeyvalId) {
        if let Some(Some(k)) = self.slots.get_mut(id as usize) {
            k.uses += 1;
        }
    }

    /// Forgets a value cached with `id` (the key may go away).
    pub fn drop_use(&mut self, id: KeyvalId) {
        if let Some(Some(k)) = self.slots.get_mut(id as usize) {
            k.uses = k.uses.saturating_sub(1);
        }
        self.release_if_unused(id);
    }

    /// Keys that exist (live handles or still in use).
    pub fn live(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }
}

/// The values cached on one object, most recently added first (the order in which
/// they are deleted when the object is freed).
#[derive(Clone, Debug, Default)]
pub struct AttrList {
    entries: Vec<(KeyvalId, usize)>,
}

impl AttrList {
    pub fn get(&self, key: KeyvalId) -> Option<usize> {
        self.entries
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    /// Sets a value; returns the value it replaces.
    pub fn set(&mut self, key: KeyvalId, value: usize) -> Option<usize> {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(e) => Some(std::mem::replace(&mut e.1, value)),
            None => {
                self.entries.insert(0, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: KeyvalId) -> Option<usize> {
        let i = self.entries.iter().position(|(k, _)| *k == key)?;
        Some(self.entries.remove(i).1)
    }

    /// The entries, most recent first.
    pub fn entries(&self) -> &[(KeyvalId, usize)] {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The error an attribute callback's failure turns into.
pub fn callback_error(which: &str, key: KeyvalId, code: i32) -> Error {
    let class = ErrorClass::from_code(code & 0xff)
        .filter(|c| *c != ErrorClass::Success)
        .unwrap_or(ErrorClass::Other);
    Error::new(
        class,
        format!("the {which} callback of attribute key {key} returned error code {code}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nop;
    impl AttrHooks for Nop {
        fn copy(&self, _: AttrObject, _: KeyvalId, v: usize) -> Result<Option<usize>> {
            Ok(Some(v))
        }
        fn delete(&self, _: AttrObject, _: KeyvalId, _: usize) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn keys_live_until_last_use() {
        let mut t = KeyvalTable::default();
        let k = t.create(AttrKind::Comm, Arc::new(Nop));
        assert!(t.check(k, AttrKind::Comm).is_ok());
        assert_eq!(
            t.check(k, AttrKind::Datatype).unwrap_err().class,
            ErrorClass::Keyval
        );
        t.add_use(k);
        t.free(k, AttrKind::Comm).unwrap();
        assert_eq!(
            t.check(k, AttrKind::Comm).unwrap_err().class,
            ErrorClass::Keyval
        );
        assert!(t.hooks(k).is_some());
        // Its values can still be read and deleted.
        assert!(t.check_use(k, AttrKind::Comm).is_ok());
        assert!(t.check_use(k, AttrKind::Datatype).is_err());
        assert_eq!(
            t.free(k, AttrKind::Comm).unwrap_err().class,
            ErrorClass::Keyval
        );
        t.drop_use(k);
        assert!(t.hooks(k).is_none());
        assert!(t.check_use(k, AttrKind::Comm).is_err());
        assert_eq!(t.live(), 0);
        assert_eq!(t.create(AttrKind::Win, Arc::new(Nop)), k);
    }

    #[test]
    fn list_order_is_most_recent_first() {
        let mut l = AttrList::default();
        assert_eq!(l.set(1, 10), None);
        assert_eq!(l.set(2, 20), None);
        assert_eq!(l.set(1, 11), Some(10));
        assert_eq!(l.entries(), &[(2, 20), (1, 11)]);
        assert_eq!(l.remove(2), Some(20));
        assert_eq!(l.get(1), Some(11));
        assert_eq!(l.get(2), None);
    }

    #[test]
    fn callback_errors_keep_the_class() {
        assert_eq!(callback_error("delete", 3, 15).class, ErrorClass::Other);
        assert_eq!(callback_error("copy", 3, 12).class, ErrorClass::Arg);
        assert_eq!(callback_error("copy", 3, 0).class, ErrorClass::Other);
        assert_eq!(callback_error("copy", 3, 1000).class, ErrorClass::Other);
    }
}
