//! Info objects (`MPI_Info`): ordered lists of (key, value) string pairs, and the
//! predefined `MPI_INFO_ENV` describing how the process was started.
//!
//! Info objects live in their own table, outside the runtime state, because the
//! standard lets programs use them before `MPI_Init` and after `MPI_Finalize`. Keys
//! and values are byte strings (C strings without their terminator): the standard
//! does not restrict them to any character set. Entries keep the order in which keys
//! were first set (what `MPI_Info_get_nthkey` enumerates).
//!
//! Locking: reading `MPI_INFO_ENV` consults the runtime (`runtime::with`), so never call
//! these functions from inside a `runtime::with` closure; read hints before entering it.

use crate::error::{err, Error, ErrorClass, Result};
use std::sync::{Mutex, MutexGuard};

/// `MPI_MAX_INFO_KEY`: a key with its terminating NUL fits in this many bytes, so a
/// key has at most `MAX_KEY - 1` bytes (programs size their buffers by the constant).
pub const MAX_KEY: usize = 255;
/// `MPI_MAX_INFO_VAL`: likewise for values (at most `MAX_VALUE - 1` bytes).
pub const MAX_VALUE: usize = 1024;

/// Index of an info object in the table.
pub type InfoId = u32;

/// The table index of `MPI_INFO_ENV` (read-only; its contents are computed on use).
pub const ENV: InfoId = 0;

/// One info object: keys in the order they were first set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
}

fn check_key(key: &[u8]) -> Result<()> {
    if key.is_empty() {
        return err(ErrorClass::InfoKey, "invalid info key: the key is empty");
    }
    if key.len() >= MAX_KEY {
        return err(
            ErrorClass::InfoKey,
            format!(
                "invalid info key: {} bytes long (at most MPI_MAX_INFO_KEY - 1 = {})",
                key.len(),
                MAX_KEY - 1
            ),
        );
    }
    Ok(())
}

fn check_value(value: &[u8]) -> Result<()> {
    if value.is_empty() {
        return err(
            ErrorClass::InfoValue,
            "invalid info value: the value is empty",
        );
    }
    if value.len() >= MAX_VALUE {
        return err(
            ErrorClass::InfoValue,
            format!(
                "invalid info value: {} bytes long (at most MPI_MAX_INFO_VAL - 1 = {})",
                value.len(),
                MAX_VALUE - 1
            ),
        );
    }
    Ok(())
}

fn show(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

impl Info {
    /// An empty info object.
    pub fn new() -> Info {
        Info::default()
    }

    /// `MPI_Info_set`: adds the key, or replaces its value in place.
    pub fn set(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        check_key(key)?;
        check_value(value)?;
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value.to_vec(),
            None => self.entries.push((key.to_vec(), value.to_vec())),
        }
        Ok(())
    }

    /// `MPI_Info_get`: the value of `key`, if set.
    pub fn get(&self, key: &[u8]) -> Result<Option<&[u8]>> {
        check_key(key)?;
        Ok(self
            .entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice()))
    }

    /// `MPI_Info_delete`: `MPI_ERR_INFO_NOKEY` when the key is not set.
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        check_key(key)?;
        match self.entries.iter().position(|(k, _)| k == key) {
            Some(i) => {
                self.entries.remove(i);
                Ok(())
            }
            None => err(
                ErrorClass::InfoNokey,
                format!("info key \"{}\" is not set", show(key)),
            ),
        }
    }

    /// `MPI_Info_get_nkeys`.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `MPI_Info_get_nthkey`: key number `n` (0-based).
    pub fn nth_key(&self, n: i64) -> Result<&[u8]> {
        usize::try_from(n)
            .ok()
            .and_then(|i| self.entries.get(i))
            .map(|(k, _)| k.as_slice())
            .ok_or_else(|| {
                Error::new(
                    ErrorClass::Arg,
                    format!(
                        "invalid key number {n} (the info object has {} keys)",
                        self.entries.len()
                    ),
                )
            })
    }

    /// The (key, value) pairs in order.
    pub fn entries(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.entries
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_slice()))
    }
}

// ----- the table --------------------------------------------------------------------------

/// Slots of created info objects; slot `i` is table index `i + 1` (index 0 is
/// `MPI_INFO_ENV`).
struct Table {
    slots: Vec<Option<Info>>,
    free: Vec<usize>,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    slots: Vec::new(),
    free: Vec::new(),
});

fn table() -> MutexGuard<'static, Table> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner())
}

fn bad_id(id: InfoId) -> Error {
    Error::new(
        ErrorClass::Info,
        format!("invalid info object (index {id}: never created or already freed)"),
    )
}

impl Table {
    fn get(&self, id: InfoId) -> Result<&Info> {
        (id as usize)
            .checked_sub(1)
            .and_then(|s| self.slots.get(s))
            .and_then(|s| s.as_ref())
            .ok_or_else(|| bad_id(id))
    }

    fn get_mut(&mut self, id: InfoId) -> Result<&mut Info> {
        if id == ENV {
            return err(
                ErrorClass::Info,
                "MPI_INFO_ENV is read-only (duplicate it to modify a copy)",
            );
        }
        (id as usize)
            .checked_sub(1)
            .and_then(|s| self.slots.get_mut(s))
            .and_then(|s| s.as_mut())
            .ok_or_else(|| bad_id(id))
    }

    fn insert(&mut self, info: Info) -> InfoId {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s] = Some(info);
                s
            }
            None => {
                self.slots.push(Some(info));
                self.slots.len() - 1
            }
        };
        (slot + 1) as InfoId
    }
}

/// Runs `f` on a snapshot of info object `id` (`MPI_INFO_ENV` included).
fn read<R>(id: InfoId, f: impl FnOnce(&Info) -> Result<R>) -> Result<R> {
    if id == ENV {
        // Computed outside the table lock: it consults the runtime.
        return f(&environment());
    }
    f(table().get(id)?)
}

/// `MPI_Info_create`.
pub fn create() -> InfoId {
    table().insert(Info::new())
}

/// `MPI_Info_create_env`: a new info object with the contents of `MPI_INFO_ENV`.
pub fn create_env() -> InfoId {
    let env = environment();
    table().insert(env)
}

/// `MPI_Info_dup`.
pub fn dup(id: InfoId) -> Result<InfoId> {
    let copy = read(id, |i| Ok(i.clone()))?;
    Ok(table().insert(copy))
}

/// `MPI_Info_free`.
pub fn free(id: InfoId) -> Result<()> {
    if id == ENV {
        return err(
            ErrorClass::Info,
            "MPI_INFO_ENV is predefined and cannot be freed",
        );
    }
    let mut t = table();
    t.get(id)?;
    let slot = id as usize - 1;
    t.slots[slot] = None;
    t.free.push(slot);
    Ok(())
}

/// Checks that `id` names a live info object.
pub fn check(id: InfoId) -> Result<()> {
    if id == ENV {
        return Ok(());
    }
    table().get(id).map(|_| ())
}

/// `MPI_Info_set`.
pub fn set(id: InfoId, key: &[u8], value: &[u8]) -> Result<()> {
    table().get_mut(id)?.set(key, value)
}

/// `MPI_Info_get`: a copy of the value of `key`, if set.
pub fn get(id: InfoId, key: &[u8]) -> Result<Option<Vec<u8>>> {
    read(id, |i| Ok(i.get(key)?.map(<[u8]>::to_vec)))
}

/// `MPI_Info_delete`.
pub fn delete(id: InfoId, key: &[u8]) -> Result<()> {
    table().get_mut(id)?.delete(key)
}

/// `MPI_Info_get_nkeys`.
pub fn nkeys(id: InfoId) -> Result<usize> {
    read(id, |i| Ok(i.len()))
}

/// `MPI_Info_get_nthkey`.
pub fn nth_key(id: InfoId, n: i64) -> Result<Vec<u8>> {
    read(id, |i| i.nth_key(n).map(<[u8]>::to_vec))
}

/// A copy of every (key, value) pair, for layers that read hints.
pub fn entries(id: InfoId) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    read(id, |i| {
        Ok(i.entries().map(|(k, v)| (k.to_vec(), v.to_vec())).collect())
    })
}

/// Number of created info objects still alive (for leak checks in tests).
pub fn live() -> usize {
    table().slots.iter().filter(|s| s.is_some()).count()
}

// ----- MPI_INFO_ENV -----------------------------------------------------------------------

/// The command line of this process from `/proc/self/cmdline` (the program's own
/// `argv`, whatever it passed to `MPI_Init`).
fn command_line() -> Vec<Vec<u8>> {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(<[u8]>::to_vec)
                .collect()
        })
        .unwrap_or_default()
}

/// The contents of `MPI_INFO_ENV`: the keys of the standard that this process can
/// know — `command`, `argv`, `maxprocs`, `host`, `arch`, `wdir` and, once MPI is
/// initialised, `thread_level`. (`soft` and `file` describe `mpiexec` options that
/// oxmpi's launcher does not have, so they are absent.)
pub fn environment() -> Info {
    let mut info = Info::new();
    let mut put = |k: &str, v: &[u8]| {
        // Values that do not fit an info value (or are empty) are left out.
        let _ = info.set(k.as_bytes(), v);
    };
    let args = command_line();
    if let Some(cmd) = args.first() {
        put("command", cmd);
    }
    if args.len() > 1 {
        put("argv", &args[1..].join(&b' '));
    }
    let running =
        crate::runtime::with(|rt| Ok((rt.world_size, rt.thread_level, rt.processor_name.clone())))
            .ok();
    let maxprocs = match &running {
        Some((n, _, _)) => Some(n.to_string()),
        None => std::env::var("PMI_SIZE")
            .ok()
            .filter(|s| s.parse::<u32>().is_ok()),
    };
    if let Some(n) = maxprocs {
        put("maxprocs", n.as_bytes());
    }
    let host = match &running {
        Some((_, _, h)) => h.clone(),
        None => crate::bootstrap::processor_name(),
    };
    put("host", host.as_bytes());
    put("arch", std::env::consts::ARCH.as_bytes());
    if let Ok(d) = std::env::current_dir() {
        use std::os::unix::ffi::OsStrExt;
        put("wdir", d.as_os_str().as_bytes());
    }
    if let Some((_, level, _)) = running {
        put("thread_level", level.name().as_bytes());
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests that use the process-wide table run one at a time (a freed slot must not
    /// be taken by another test before a stale-handle check).
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[test]
    fn set_get_replace_keep_order() {
        let mut i = Info::new();
        i.set(b"b", b"1").unwrap();
        i.set(b"a", b"2").unwrap();
        i.set(b"b", b"3").unwrap();
        assert_eq!(i.len(), 2);
        assert_eq!(i.nth_key(0).unwrap(), b"b");
        assert_eq!(i.nth_key(1).unwrap(), b"a");
        assert_eq!(i.get(b"b").unwrap(), Some(&b"3"[..]));
        assert_eq!(i.get(b"zz").unwrap(), None);
        assert_eq!(i.nth_key(2).unwrap_err().class, ErrorClass::Arg);
        assert_eq!(i.nth_key(-1).unwrap_err().class, ErrorClass::Arg);
    }

    #[test]
    fn delete_and_limits() {
        let mut i = Info::new();
        i.set(b"k", b"v").unwrap();
        i.delete(b"k").unwrap();
        assert!(i.is_empty());
        assert_eq!(i.delete(b"k").unwrap_err().class, ErrorClass::InfoNokey);
        assert_eq!(i.set(b"", b"v").unwrap_err().class, ErrorClass::InfoKey);
        assert_eq!(
            i.set(&[b'k'; MAX_KEY], b"v").unwrap_err().class,
            ErrorClass::InfoKey
        );
        i.set(&[b'k'; MAX_KEY - 1], &[b'v'; MAX_VALUE - 1]).unwrap();
        assert_eq!(
            i.set(b"k", &[b'v'; MAX_VALUE]).unwrap_err().class,
            ErrorClass::InfoValue
        );
        assert_eq!(i.set(b"k", b"").unwrap_err().class, ErrorClass::InfoValue);
    }

    #[test]
    fn table_life_cycle() {
        let _g = serial();
        let a = create();
        set(a, b"x", b"1").unwrap();
        let b = dup(a).unwrap();
        set(b, b"x", b"2").unwrap();
        assert_eq!(get(a, b"x").unwrap().unwrap(), b"1");
        assert_eq!(get(b, b"x").unwrap().unwrap(), b"2");
        free(a).unwrap();
        assert_eq!(free(a).unwrap_err().class, ErrorClass::Info);
        assert_eq!(get(a, b"x").unwrap_err().class, ErrorClass::Info);
        free(b).unwrap();
        assert_eq!(free(ENV).unwrap_err().class, ErrorClass::Info);
        assert_eq!(set(ENV, b"x", b"1").unwrap_err().class, ErrorClass::Info);
        assert_eq!(check(9999).unwrap_err().class, ErrorClass::Info);
    }

    #[test]
    fn environment_has_the_knowable_keys() {
        let _g = serial();
        let n = nkeys(ENV).unwrap();
        assert!(n >= 3, "{n}");
        assert!(get(ENV, b"command").unwrap().is_some());
        assert_eq!(
            get(ENV, b"arch").unwrap().unwrap(),
            std::env::consts::ARCH.as_bytes()
        );
        assert!(get(ENV, b"host").unwrap().is_some());
        let e = create_env();
        assert_eq!(nkeys(e).unwrap(), n);
        free(e).unwrap();
    }
}
