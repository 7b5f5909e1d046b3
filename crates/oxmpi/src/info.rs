//! Info objects (`MPI_Info`): ordered key-value hints. [`Info`] owns one engine info
//! object and frees it when dropped; [`Info::environment`] is a copy of
//! `MPI_INFO_ENV` (command, argv, maxprocs, host, arch, wdir, thread level).
//!
//! Keys are at most 255 bytes and values at most 1024 (`MPI_MAX_INFO_KEY`,
//! `MPI_MAX_INFO_VAL`); longer or empty ones fail with class `MPI_ERR_INFO_KEY` /
//! `MPI_ERR_INFO_VALUE`.

use crate::error::{engine, Result};
use oxmpi_core::info::{self, InfoId};

/// An info object: keys with string values, in the order they were first set.
#[derive(Debug)]
pub struct Info {
    id: InfoId,
}

fn text(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

impl Info {
    /// An empty info object (`MPI_Info_create`).
    pub fn new() -> Info {
        Info { id: info::create() }
    }

    /// A copy of `MPI_INFO_ENV`, what the process knows of how it was started
    /// (`MPI_Info_create_env`).
    pub fn environment() -> Info {
        Info {
            id: info::create_env(),
        }
    }

    /// A copy with the same entries (`MPI_Info_dup`).
    pub fn duplicate(&self) -> Result<Info> {
        info::dup(self.id)
            .map(|id| Info { id })
            .map_err(engine("Info::duplicate"))
    }

    /// Sets `key` to `value`, replacing an earlier value (`MPI_Info_set`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        info::set(self.id, key.as_bytes(), value.as_bytes()).map_err(engine("Info::set"))
    }

    /// The value of `key`, `None` when it is not set (`MPI_Info_get`). Bytes that are not
    /// UTF-8 (possible in values set from C) are replaced.
    pub fn get(&self, key: &str) -> Result<Option<String>> {
        info::get(self.id, key.as_bytes())
            .map(|v| v.map(text))
            .map_err(engine("Info::get"))
    }

    /// Removes `key` (`MPI_Info_delete`); class `MPI_ERR_INFO_NOKEY` when it is not set.
    pub fn delete(&mut self, key: &str) -> Result<()> {
        info::delete(self.id, key.as_bytes()).map_err(engine("Info::delete"))
    }

    /// The keys in order (`MPI_Info_get_nkeys`, `MPI_Info_get_nthkey`).
    pub fn keys(&self) -> Result<Vec<String>> {
        Ok(self.entries()?.into_iter().map(|(k, _)| k).collect())
    }

    /// The (key, value) pairs in order.
    pub fn entries(&self) -> Result<Vec<(String, String)>> {
        info::entries(self.id)
            .map(|v| v.into_iter().map(|(k, v)| (text(k), text(v))).collect())
            .map_err(engine("Info::entries"))
    }

    /// Number of keys set (`MPI_Info_get_nkeys`).
    pub fn len(&self) -> usize {
        info::nkeys(self.id).unwrap_or(0)
    }

    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The engine's index of the object.
    pub fn info_id(&self) -> InfoId {
        self.id
    }

    /// Takes ownership of engine info object `id` (freed on drop).
    pub(crate) fn from_id(id: InfoId) -> Info {
        Info { id }
    }
}

impl Default for Info {
    fn default() -> Info {
        Info::new()
    }
}

impl Drop for Info {
    fn drop(&mut self) {
        // The object is ours and alive, so this cannot fail.
        let _ = info::free(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorClass;

    #[test]
    fn set_get_delete_and_keys() {
        let mut i = Info::new();
        assert!(i.is_empty());
        i.set("wdir", "/tmp").unwrap();
        i.set("host", "a").unwrap();
        i.set("wdir", "/srv").unwrap();
        assert_eq!(i.get("wdir").unwrap().as_deref(), Some("/srv"));
        assert_eq!(i.get("nope").unwrap(), None);
        assert_eq!(i.keys().unwrap(), ["wdir", "host"]);
        assert_eq!(i.len(), 2);
        let d = i.duplicate().unwrap();
        i.delete("wdir").unwrap();
        assert_eq!(i.keys().unwrap(), ["host"]);
        assert_eq!(d.keys().unwrap(), ["wdir", "host"]);
        let e = i.delete("wdir").unwrap_err();
        assert_eq!(e.class(), ErrorClass::InfoNokey);
        assert!(
            e.message()
                .starts_with("Info::delete: MPI_ERR_INFO_NOKEY: "),
            "{e}"
        );
        let e = i.set(&"k".repeat(300), "v").unwrap_err();
        assert_eq!(e.class(), ErrorClass::InfoKey);
        let e = i.set("k", &"v".repeat(2000)).unwrap_err();
        assert_eq!(e.class(), ErrorClass::InfoValue);
        assert_eq!(
            d.entries().unwrap(),
            [("wdir".into(), "/srv".into()), ("host".into(), "a".into())]
        );
    }

    #[test]
    fn environment_knows_the_command() {
        let env = Info::environment();
        assert!(env.get("command").unwrap().is_some());
        assert!(env.keys().unwrap().iter().any(|k| k == "host"));
    }
}
