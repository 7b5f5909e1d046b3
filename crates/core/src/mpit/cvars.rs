//! Control variables: one per tunable of the registry, in its order, with its name,
//! description, type and category.
//!
//! Types: words and algorithm names are `MPI_INT` with an enumeration (an `auto` item
//! first where the variable may be automatic), booleans `MPI_INT` 0/1, sizes and counts
//! `MPI_UNSIGNED_LONG_LONG`, text — and numbers whose default is chosen at run time,
//! which read `auto` until set — `MPI_CHAR` (at most [`TEXT_COUNT`] bytes with the NUL).
//!
//! Writing: the variables the library reads may be written before `MPI_Init`, which
//! then runs with them as if they were set in the environment; while MPI runs only
//! those it can change safely — the collective decision table's thresholds and forced
//! algorithms (scope `ALL_EQ`: every rank must write the same value between the same
//! collective calls) and the waiting policy (`LOCAL`: the spin and yield rounds, and
//! `OXMPI_ASYNC_PROGRESS`, which starts or stops the progress thread) — others
//! fail with `MPI_T_ERR_CVAR_SET_NOT_NOW`; after `MPI_Finalize` every write fails with
//! `MPI_T_ERR_CVAR_SET_NEVER`. Variables of `mpiexec` and the compiler wrappers are
//! `MPI_T_SCOPE_CONSTANT` and never writable.

use super::{decode, encode, with_tools, Scope, TErr, TResult, Tools, VarType, Verbosity};
use super::{Slots, TAG_CVAR};
use crate::runtime::Runtime;
use crate::tunables::{Category, Id, Kind, Settings, Value, ALL, IDS};
use std::sync::OnceLock;

/// Elements (bytes, with the terminating NUL) of a text variable.
pub const TEXT_COUNT: usize = 256;

/// The enumeration of a variable of words.
#[derive(Clone, Debug)]
pub struct Words {
    pub name: String,
    pub items: Vec<&'static str>,
}

/// One control variable.
#[derive(Clone, Debug)]
pub struct CvarDef {
    pub id: Id,
    pub name: &'static str,
    pub desc: String,
    pub verbosity: Verbosity,
    pub ty: VarType,
    pub words: Option<Words>,
    /// Index of [`Self::words`] among the interface's enumerations.
    pub enum_index: Option<usize>,
    pub scope: Scope,
    /// Elements of the value.
    pub count: usize,
    /// Writable while MPI runs.
    pub runtime: bool,
}

/// A control-variable handle.
pub(crate) struct Handle {
    var: usize,
}

/// A control variable's value in its C type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CvarValue {
    Int(i32),
    U64(u64),
    Text(String),
}

/// Whether the engine can take a new value of `id` while it runs: the decision table
/// is consulted afresh by every collective call (its schedule cache is keyed by the
/// algorithm), the waiting policy at every wait. The shared-memory path's limits are
/// not: its plans are reused without consulting them.
fn runtime_writable(id: Id) -> bool {
    let t = id.tunable();
    match t.category {
        Category::Coll => !matches!(id, Id::CollShm | Id::CollShmMax | Id::CollShmLargeMax),
        Category::Wait => true,
        _ => false,
    }
}

fn verbosity(id: Id) -> Verbosity {
    let t = id.tunable();
    match (t.category, t.kind) {
        (Category::Coll, Kind::Algorithm { .. }) => Verbosity::TunerBasic,
        (Category::Coll, _) => Verbosity::TunerDetail,
        (Category::Tcp, Kind::Bool) | (Category::Process, _) => Verbosity::MpidevBasic,
        (Category::Shm | Category::Wait | Category::Placement | Category::Tcp, _) => {
            Verbosity::TunerBasic
        }
        (Category::Launch | Category::Wrapper, _) => Verbosity::UserDetail,
    }
}

fn scope(id: Id) -> Scope {
    let t = id.tunable();
    if !t.reader.library() {
        return Scope::Constant;
    }
    match t.category {
        // Every rank must run the same collective algorithms and use rings of one size.
        Category::Coll => Scope::AllEq,
        Category::Shm if id == Id::ShmRingBytes => Scope::AllEq,
        Category::Tcp if id == Id::TcpConnectTimeout => Scope::Local,
        _ if id == Id::Netmod => Scope::AllEq,
        _ => Scope::Local,
    }
}

fn words(id: Id) -> Option<Words> {
    let t = id.tunable();
    let list: &'static [&'static str] = match t.kind {
        Kind::Choice(w) => w,
        Kind::Algorithm { names, .. } => names,
        _ => return None,
    };
    let mut items = Vec::with_capacity(list.len() + 1);
    let may_be_auto = t.auto || t.default == crate::tunables::Initial::Auto;
    if may_be_auto && !list.contains(&"auto") {
        items.push("auto");
    }
    items.extend_from_slice(list);
    Some(Words {
        name: t.name.to_ascii_lowercase(),
        items,
    })
}

fn var_type(id: Id, words: &Option<Words>) -> VarType {
    let t = id.tunable();
    if words.is_some() {
        return VarType::Int;
    }
    if t.default == crate::tunables::Initial::Auto {
        return VarType::Char;
    }
    match t.kind {
        Kind::Bool => VarType::Int,
        Kind::Int { .. } | Kind::Bytes { .. } => VarType::UnsignedLongLong,
        _ => VarType::Char,
    }
}

fn describe(id: Id, ty: VarType, runtime: bool) -> String {
    let t = id.tunable();
    let mut d = format!(
        "{}. Values: {}; default: {}.",
        t.meaning(),
        t.values_text(),
        t.default_text()
    );
    if ty == VarType::Char && matches!(t.kind, Kind::Int { .. } | Kind::Bytes { .. } | Kind::Bool) {
        d.push_str(" Read as text: auto until set, else the number.");
    }
    d.push_str(if !t.reader.library() {
        " Not read by the library: constant here."
    } else if runtime {
        " Writable at any time."
    } else {
        " Writable before MPI_Init only."
    });
    d
}

/// Every control variable, in the registry's order.
pub fn table() -> &'static [CvarDef] {
    static TABLE: OnceLock<Vec<CvarDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut enums = 0;
        IDS.iter()
            .map(|&id| {
                let t = id.tunable();
                let words = words(id);
                let ty = var_type(id, &words);
                let runtime = t.reader.library() && runtime_writable(id);
                let enum_index = words.as_ref().map(|_| {
                    enums += 1;
                    enums - 1
                });
                CvarDef {
                    id,
                    name: t.name,
                    desc: describe(id, ty, runtime),
                    verbosity: verbosity(id),
                    ty,
                    words,
                    enum_index,
                    scope: scope(id),
                    count: if ty == VarType::Char { TEXT_COUNT } else { 1 },
                    runtime,
                }
            })
            .collect()
    })
}

fn def(i: i32) -> TResult<&'static CvarDef> {
    usize::try_from(i)
        .ok()
        .and_then(|i| table().get(i))
        .ok_or(TErr::InvalidIndex)
}

/// `MPI_T_cvar_get_num`.
pub fn num() -> TResult<usize> {
    super::check_initialized()?;
    Ok(ALL.len())
}

/// `MPI_T_cvar_get_info`.
pub fn info(i: i32) -> TResult<&'static CvarDef> {
    super::check_initialized()?;
    def(i)
}

/// `MPI_T_cvar_get_index`.
pub fn index(name: &str) -> TResult<usize> {
    super::check_initialized()?;
    Id::find(name)
        .map(|id| id as usize)
        .ok_or(TErr::InvalidName)
}

/// `MPI_T_cvar_handle_alloc`: the handle and its element count.
pub fn handle_alloc(i: i32) -> TResult<(u64, usize)> {
    super::check_initialized()?;
    let d = def(i)?;
    super::with_state(|t| {
        let var = d.id as usize;
        let slot = t.cvar_handles.insert(Handle { var }, TErr::OutOfHandles)?;
        Ok((encode(TAG_CVAR, slot), d.count))
    })
}

/// `MPI_T_cvar_handle_free`.
pub fn handle_free(h: u64) -> TResult<()> {
    super::with_state(|t| {
        let slot = decode(TAG_CVAR, h).ok_or(TErr::InvalidHandle)?;
        t.cvar_handles
            .remove(slot)
            .map(|_| ())
            .ok_or(TErr::InvalidHandle)
    })
}

fn handle_var(handles: &Slots<Handle>, h: u64) -> TResult<&'static CvarDef> {
    let slot = decode(TAG_CVAR, h).ok_or(TErr::InvalidHandle)?;
    let var = handles.get(slot).ok_or(TErr::InvalidHandle)?.var;
    Ok(&table()[var])
}

/// The value of `id` now: what the engine runs with once `MPI_Init` has read the
/// tunables, before that what a tool wrote, else the environment's (a malformed value
/// reads as the default, as `MPI_Init` would refuse it), else the default.
fn current(t: &Tools, id: Id) -> Value {
    let tn = id.tunable();
    if tn.reader.library() {
        if let Some(s) = &t.in_use {
            return s.get(id);
        }
    }
    let parsed = |raw: &str| match tn.parse(raw) {
        Ok(Some(v)) => v,
        _ => tn.default_value(),
    };
    if let Some((_, raw)) = t.overlay.iter().rev().find(|(i, _)| *i == id) {
        return parsed(raw);
    }
    match std::env::var(tn.name) {
        Ok(raw) => parsed(&raw),
        Err(_) => tn.default_value(),
    }
}

fn to_c(d: &CvarDef, v: &Value) -> CvarValue {
    match (d.ty, v) {
        (VarType::Int, v) if d.words.is_some() => {
            let text = v.to_string();
            let items = &d.words.as_ref().expect("words").items;
            CvarValue::Int(items.iter().position(|w| *w == text).unwrap_or(0) as i32)
        }
        (VarType::Int, Value::Bool(b)) => CvarValue::Int(*b as i32),
        (VarType::UnsignedLongLong, Value::Int(n)) => CvarValue::U64(*n),
        (_, v) => CvarValue::Text(v.to_string()),
    }
}

/// The text a value written through the C binding stands for (validated by the caller).
fn from_c(d: &CvarDef, v: &CvarValue) -> TResult<String> {
    Ok(match (d.ty, v) {
        (VarType::Int, CvarValue::Int(i)) if d.words.is_some() => {
            let items = &d.words.as_ref().expect("words").items;
            let w = usize::try_from(*i)
                .ok()
                .and_then(|i| items.get(i))
                .ok_or(TErr::Invalid)?;
            // `auto` is the unset value (also for variables that do not accept the word).
            if *w == "auto" && !id_takes_word_auto(d.id) {
                String::new()
            } else {
                w.to_string()
            }
        }
        (VarType::Int, CvarValue::Int(i)) => match i {
            0 | 1 => i.to_string(),
            _ => return Err(TErr::Invalid),
        },
        (VarType::UnsignedLongLong, CvarValue::U64(n)) => n.to_string(),
        (VarType::Char, CvarValue::Text(s)) => s.clone(),
        _ => return Err(TErr::Invalid),
    })
}

fn id_takes_word_auto(id: Id) -> bool {
    match id.tunable().kind {
        Kind::Choice(w) => w.contains(&"auto"),
        _ => false,
    }
}

/// `MPI_T_cvar_read`: the variable's type and value.
pub fn read(h: u64) -> TResult<(VarType, CvarValue)> {
    with_tools(|t, _| {
        let d = handle_var(&t.cvar_handles, h)?;
        Ok((d.ty, to_c(d, &current(t, d.id))))
    })
}

/// `MPI_T_cvar_write` (see the module's rules).
pub fn write(h: u64, v: &CvarValue) -> TResult<()> {
    // The progress thread switched on or off while MPI runs: started or stopped once
    // the locks are released (a stop waits for the thread, which takes the runtime lock).
    let mut progress: Option<bool> = None;
    with_tools(|t, rt| {
        let d = handle_var(&t.cvar_handles, h)?;
        if d.scope == Scope::Constant {
            return Err(TErr::CvarSetNever);
        }
        let raw = from_c(d, v)?;
        d.id.tunable().parse(&raw).map_err(|_| TErr::Invalid)?;
        match rt {
            Some(rt) => {
                if !d.runtime {
                    return Err(TErr::CvarSetNotNow);
                }
                let s = t.in_use.as_mut().ok_or(TErr::CvarSetNotNow)?;
                s.set(d.id, &raw).map_err(|_| TErr::Invalid)?;
                apply(rt, s, d.id);
                if d.id == Id::AsyncProgress {
                    progress = Some(rt.config.async_progress);
                }
                Ok(())
            }
            None if t.consumed => Err(TErr::CvarSetNever),
            None => {
                t.overlay.push((d.id, raw));
                Ok(())
            }
        }
    })?;
    match progress {
        Some(true) => crate::async_progress::start().map_err(|_| TErr::Memory),
        Some(false) => {
            crate::async_progress::stop();
            Ok(())
        }
        None => Ok(()),
    }
}

/// Hands a value written while MPI runs to the part of the engine that uses it.
fn apply(rt: &mut Runtime, s: &Settings, id: Id) {
    match id.tunable().category {
        Category::Coll => rt.coll.tuning = crate::tunables::coll_tuning(s),
        Category::Wait => {
            let c = crate::config::Config::from_settings(s);
            rt.config.spin_iters = c.spin_iters;
            rt.config.yield_iters = c.yield_iters;
            rt.config.async_progress = c.async_progress;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tunable_is_a_variable_with_a_fitting_type() {
        let t = table();
        assert_eq!(t.len(), ALL.len());
        for (i, d) in t.iter().enumerate() {
            assert_eq!(d.id as usize, i);
            assert_eq!(Id::find(d.name), Some(d.id));
            assert!(!d.desc.is_empty());
            if !d.id.tunable().reader.library() {
                assert_eq!(d.scope, Scope::Constant, "{}", d.name);
                assert!(!d.runtime);
            }
            let default = to_c(d, &d.id.tunable().default_value());
            // A default converts to the variable's type, and back to text it parses.
            let raw = from_c(d, &default).unwrap();
            assert!(d.id.tunable().parse(&raw).is_ok(), "{}: {raw:?}", d.name);
        }
        let bind = &t[Id::Bind as usize];
        assert_eq!(bind.ty, VarType::Int);
        assert_eq!(bind.words.as_ref().unwrap().items[0], "block");
        let algo = &t[Id::CollAllreduceAlgo as usize];
        assert_eq!(algo.words.as_ref().unwrap().items[0], "auto");
        assert!(algo.runtime && algo.scope == Scope::AllEq);
        assert_eq!(t[Id::ShmEagerLimit as usize].ty, VarType::Char);
        assert_eq!(t[Id::Yield as usize].ty, VarType::UnsignedLongLong);
        assert_eq!(t[Id::ShmNoCma as usize].ty, VarType::Int);
        assert!(!t[Id::CollShmMax as usize].runtime);
    }

    #[test]
    fn auto_item_unsets_and_bool_range_is_checked() {
        let pmi = &table()[Id::Pmi as usize];
        assert_eq!(pmi.words.as_ref().unwrap().items, ["auto", "1", "2"]);
        assert_eq!(from_c(pmi, &CvarValue::Int(0)).unwrap(), "");
        assert_eq!(from_c(pmi, &CvarValue::Int(2)).unwrap(), "2");
        assert_eq!(from_c(pmi, &CvarValue::Int(3)), Err(TErr::Invalid));
        let cma = &table()[Id::ShmNoCma as usize];
        assert_eq!(from_c(cma, &CvarValue::Int(2)), Err(TErr::Invalid));
        assert_eq!(to_c(cma, &Value::Bool(true)), CvarValue::Int(1));
    }
}
