//! The MPI tool information interface (MPI 4.1 chapter 15, `MPI_T_*`): its life cycle
//! (reference-counted `MPI_T_init_thread`/`MPI_T_finalize`, usable before `MPI_Init`
//! and after `MPI_Finalize`), the control variables ([`cvars`]: one per tunable of the
//! `oxmpi-tunables` registry), the performance variables and their sessions and
//! handles ([`pvars`]), the enumerations, categories and the one time source, all
//! behind one mutex so that any thread may call the interface.
//!
//! Errors are [`TErr`]s, whose codes are MPICH's `MPI_T_ERR_*` values: the interface
//! returns them as they are and never calls an error handler.
//!
//! Locking: the interface's own state ([`Tools`]) is taken inside the runtime lock
//! where both are needed ([`with_tools`]), never the other way round, so `MPI_Init`
//! (which holds the runtime lock when it reads the tunables) cannot deadlock with a
//! tool on another thread.

pub mod counters;
pub mod cvars;
pub mod pvars;

use crate::runtime::{self, Runtime};
use crate::tunables::{Category, Settings, ALL};
use std::sync::{LazyLock, Mutex, MutexGuard, OnceLock};

pub use counters::Counters;

/// An error of the tools interface; [`TErr::code`] is MPICH's `MPI_T_ERR_*` value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TErr {
    Memory,
    NotInitialized,
    CannotInit,
    InvalidIndex,
    InvalidItem,
    InvalidHandle,
    OutOfHandles,
    OutOfSessions,
    InvalidSession,
    CvarSetNotNow,
    CvarSetNever,
    PvarNoStartstop,
    PvarNoWrite,
    PvarNoAtomic,
    InvalidName,
    Invalid,
    NotSupported,
}

impl TErr {
    /// The error class as MPICH numbers it (`MPI_T_ERR_MEMORY` = 59 ...).
    pub fn code(self) -> i32 {
        match self {
            TErr::Memory => 59,
            TErr::NotInitialized => 60,
            TErr::CannotInit => 61,
            TErr::InvalidIndex => 62,
            TErr::InvalidItem => 63,
            TErr::InvalidHandle => 64,
            TErr::OutOfHandles => 65,
            TErr::OutOfSessions => 66,
            TErr::InvalidSession => 67,
            TErr::CvarSetNotNow => 68,
            TErr::CvarSetNever => 69,
            TErr::PvarNoStartstop => 70,
            TErr::PvarNoWrite => 71,
            TErr::PvarNoAtomic => 72,
            TErr::InvalidName => 73,
            TErr::Invalid => 74,
            TErr::NotSupported => 78,
        }
    }
}

pub type TResult<T> = std::result::Result<T, TErr>;

/// The C type of a variable's elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarType {
    /// `MPI_INT` (booleans, enumerations, states).
    Int,
    /// `MPI_UNSIGNED_LONG_LONG` (sizes, counts, counters).
    UnsignedLongLong,
    /// `MPI_DOUBLE` (timers, in seconds).
    Double,
    /// `MPI_CHAR` (text, NUL-terminated within the element count).
    Char,
}

/// `MPI_T_VERBOSITY_*` (the values are MPICH's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Verbosity {
    UserBasic = 221,
    UserDetail = 222,
    UserAll = 223,
    TunerBasic = 224,
    TunerDetail = 225,
    TunerAll = 226,
    MpidevBasic = 227,
    MpidevDetail = 228,
    MpidevAll = 229,
}

/// `MPI_T_SCOPE_*` (the values are MPICH's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Scope {
    Constant = 60438,
    Readonly = 60439,
    Local = 60440,
    Group = 60441,
    GroupEq = 60442,
    All = 60443,
    AllEq = 60444,
}

/// `MPI_T_BIND_*` used by oxmpi's variables (the values are MPICH's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Bind {
    NoObject = 9700,
    Comm = 9701,
}

/// Largest number of handles and sessions alive at once (each kind).
const MAX_OBJECTS: usize = 1 << 20;

/// Handle values: a kind tag above bit 40 and the slot (+1) below, so that a handle of
/// one kind passed where another is expected is refused, and none is 0 (`NULL`).
const TAG_SHIFT: u32 = 40;
const TAG_CVAR: u64 = 1;
const TAG_PVAR: u64 = 2;
const TAG_SESSION: u64 = 3;
const TAG_ENUM: u64 = 4;

/// `MPI_T_PVAR_ALL_HANDLES`: a pvar-tagged value no handle takes.
pub const ALL_HANDLES: u64 = (TAG_PVAR << TAG_SHIFT) | 0xFF_FFFF_FFFF;

fn encode(tag: u64, slot: usize) -> u64 {
    (tag << TAG_SHIFT) | (slot as u64 + 1)
}

fn decode(tag: u64, h: u64) -> Option<usize> {
    if h >> TAG_SHIFT != tag || h == ALL_HANDLES {
        return None;
    }
    let low = h & ((1 << TAG_SHIFT) - 1);
    (low >= 1).then(|| (low - 1) as usize)
}

/// Slots that are reused after a free.
struct Slots<T> {
    items: Vec<Option<T>>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots { items: Vec::new() }
    }
}

impl<T> Slots<T> {
    fn insert(&mut self, v: T, out_of: TErr) -> TResult<usize> {
        if let Some(i) = self.items.iter().position(|s| s.is_none()) {
            self.items[i] = Some(v);
            return Ok(i);
        }
        if self.items.len() >= MAX_OBJECTS {
            return Err(out_of);
        }
        self.items.push(Some(v));
        Ok(self.items.len() - 1)
    }
    fn get(&self, i: usize) -> Option<&T> {
        self.items.get(i).and_then(|s| s.as_ref())
    }
    fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.items.get_mut(i).and_then(|s| s.as_mut())
    }
    fn remove(&mut self, i: usize) -> Option<T> {
        self.items.get_mut(i).and_then(|s| s.take())
    }
    fn clear(&mut self) {
        self.items.clear();
    }
}

/// The interface's state.
pub struct Tools {
    /// `MPI_T_init_thread` calls not yet matched by `MPI_T_finalize`.
    refs: usize,
    cvar_handles: Slots<cvars::Handle>,
    sessions: Slots<pvars::Session>,
    pvar_handles: Slots<pvars::Handle>,
    /// Values tools set before `MPI_Init`, validated, in the order written (applied
    /// by it).
    overlay: Vec<(crate::tunables::Id, String)>,
    /// `MPI_Init` has read the tunables (later writes go to the running engine).
    consumed: bool,
    /// The tunables the engine runs with, from `MPI_Init` on.
    in_use: Option<Settings>,
}

static TOOLS: LazyLock<Mutex<Tools>> = LazyLock::new(|| {
    Mutex::new(Tools {
        refs: 0,
        cvar_handles: Slots::default(),
        sessions: Slots::default(),
        pvar_handles: Slots::default(),
        overlay: Vec::new(),
        consumed: false,
        in_use: None,
    })
});

fn lock() -> MutexGuard<'static, Tools> {
    // A panic while the lock was held left plain data behind; go on with it.
    TOOLS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` on the interface's state (which must be initialized) and, while MPI is
/// running, the runtime (taken first: see the module's locking rule).
pub(crate) fn with_tools<R>(
    mut f: impl FnMut(&mut Tools, Option<&mut Runtime>) -> TResult<R>,
) -> TResult<R> {
    let mut out: Option<TResult<R>> = None;
    let running = runtime::with_any_thread(|rt| {
        let mut t = lock();
        out = Some(if t.refs == 0 {
            Err(TErr::NotInitialized)
        } else {
            f(&mut t, Some(rt))
        });
        Ok(())
    });
    match (running, out) {
        (Ok(()), Some(r)) => r,
        _ => {
            let mut t = lock();
            if t.refs == 0 {
                return Err(TErr::NotInitialized);
            }
            f(&mut t, None)
        }
    }
}

/// Runs `f` on the interface's state alone (for calls that need no runtime).
fn with_state<R>(f: impl FnOnce(&mut Tools) -> TResult<R>) -> TResult<R> {
    let mut t = lock();
    if t.refs == 0 {
        return Err(TErr::NotInitialized);
    }
    f(&mut t)
}

/// Fails with `MPI_T_ERR_NOT_INITIALIZED` outside `MPI_T_init_thread`..`MPI_T_finalize`.
pub fn check_initialized() -> TResult<()> {
    with_state(|_| Ok(()))
}

/// `MPI_T_init_thread`: counts one more user of the interface. Every thread level is
/// provided (the interface serialises its calls itself).
pub fn init_thread() -> TResult<()> {
    let mut t = lock();
    t.refs = t.refs.checked_add(1).ok_or(TErr::CannotInit)?;
    Ok(())
}

/// `MPI_T_finalize`: one user fewer; the last one frees every handle and session.
pub fn finalize() -> TResult<()> {
    let mut t = lock();
    if t.refs == 0 {
        return Err(TErr::NotInitialized);
    }
    t.refs -= 1;
    if t.refs == 0 {
        t.cvar_handles.clear();
        t.pvar_handles.clear();
        t.sessions.clear();
    }
    Ok(())
}

/// The tunables `MPI_Init` runs with: the environment's, validated, with the values
/// tools wrote before it on top. Called by `MPI_Init` under the runtime lock.
pub(crate) fn settings_at_init() -> crate::Result<Settings> {
    let mut s = Settings::from_env()?;
    let mut t = lock();
    for (id, raw) in &t.overlay {
        s.set(*id, raw)?;
    }
    t.consumed = true;
    t.in_use = Some(s.clone());
    Ok(s)
}

// ----- enumerations ---------------------------------------------------------------------

/// An `MPI_T_enum`: a name and (value, name) items.
#[derive(Clone, Debug)]
pub struct EnumDef {
    pub name: String,
    pub items: Vec<(i32, String)>,
}

/// Every enumeration: one per control variable of words or algorithm names, then the
/// collective algorithms of the `coll_last_algorithm` performance variable.
pub(crate) fn enums() -> &'static [EnumDef] {
    static ENUMS: OnceLock<Vec<EnumDef>> = OnceLock::new();
    ENUMS.get_or_init(|| {
        let mut v: Vec<EnumDef> = cvars::table()
            .iter()
            .filter_map(|c| c.words.as_ref())
            .map(|w| EnumDef {
                name: w.name.clone(),
                items: w
                    .items
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (i as i32, s.to_string()))
                    .collect(),
            })
            .collect();
        v.push(pvars::algorithm_enum());
        v
    })
}

/// The index of the `coll_last_algorithm` enumeration.
pub(crate) fn algorithm_enum_index() -> usize {
    enums().len() - 1
}

/// The handle of enumeration `i`.
pub fn enum_handle(i: usize) -> u64 {
    encode(TAG_ENUM, i)
}

fn enum_def(h: u64) -> TResult<&'static EnumDef> {
    decode(TAG_ENUM, h)
        .and_then(|i| enums().get(i))
        .ok_or(TErr::InvalidHandle)
}

/// `MPI_T_enum_get_info`: the enumeration's name and item count.
pub fn enum_info(h: u64) -> TResult<(&'static str, usize)> {
    check_initialized()?;
    let e = enum_def(h)?;
    Ok((&e.name, e.items.len()))
}

/// `MPI_T_enum_get_item`: item `i`'s value and name.
pub fn enum_item(h: u64, i: i32) -> TResult<(i32, &'static str)> {
    check_initialized()?;
    let e = enum_def(h)?;
    let (v, name) = usize::try_from(i)
        .ok()
        .and_then(|i| e.items.get(i))
        .ok_or(TErr::InvalidIndex)?;
    Ok((*v, name))
}

// ----- categories -----------------------------------------------------------------------

/// A category: its variables and subcategories, by index.
#[derive(Clone, Debug)]
pub struct CategoryDef {
    pub name: &'static str,
    pub desc: &'static str,
    pub cvars: Vec<usize>,
    pub pvars: Vec<usize>,
    pub categories: Vec<usize>,
}

/// The registry's categories, in its order, then `p2p` and the root `oxmpi`.
const CATEGORIES: &[(Option<Category>, &str, &str)] = &[
    (Some(Category::Shm), "shm", "shared-memory transport"),
    (Some(Category::Wait), "wait", "how a blocked rank waits"),
    (
        Some(Category::Placement),
        "placement",
        "oversubscription and CPU binding",
    ),
    (Some(Category::Tcp), "tcp", "TCP transport between nodes"),
    (
        Some(Category::Process),
        "process",
        "process management: node identity, PMI",
    ),
    (
        Some(Category::Coll),
        "coll",
        "collective algorithms: thresholds of the decision table, forced algorithms, the shared-memory path; algorithms chosen",
    ),
    (
        Some(Category::Launch),
        "launch",
        "mpiexec (read by the launcher, constant in the library)",
    ),
    (
        Some(Category::Wrapper),
        "wrapper",
        "the compiler wrappers mpicc and mpicxx (constant in the library)",
    ),
    (
        None,
        "p2p",
        "point-to-point traffic: messages and bytes by peer, matching queues",
    ),
];

pub(crate) fn categories() -> &'static [CategoryDef] {
    static CATS: OnceLock<Vec<CategoryDef>> = OnceLock::new();
    CATS.get_or_init(|| {
        let mut v: Vec<CategoryDef> = CATEGORIES
            .iter()
            .map(|&(cat, name, desc)| CategoryDef {
                name,
                desc,
                cvars: match cat {
                    Some(c) => (0..ALL.len()).filter(|&i| ALL[i].category == c).collect(),
                    None => Vec::new(),
                },
                pvars: pvars::table()
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.category == name)
                    .map(|(i, _)| i)
                    .collect(),
                categories: Vec::new(),
            })
            .collect();
        let n = v.len();
        v.push(CategoryDef {
            name: "oxmpi",
            desc: "every oxmpi variable, by subject",
            cvars: Vec::new(),
            pvars: Vec::new(),
            categories: (0..n).collect(),
        });
        v
    })
}

fn category(i: i32) -> TResult<&'static CategoryDef> {
    usize::try_from(i)
        .ok()
        .and_then(|i| categories().get(i))
        .ok_or(TErr::InvalidIndex)
}

/// `MPI_T_category_get_num`.
pub fn category_num() -> TResult<usize> {
    check_initialized()?;
    Ok(categories().len())
}

/// `MPI_T_category_get_info` and the lists of `MPI_T_category_get_cvars/pvars/categories`.
pub fn category_info(i: i32) -> TResult<&'static CategoryDef> {
    check_initialized()?;
    category(i)
}

/// `MPI_T_category_get_index`.
pub fn category_index(name: &str) -> TResult<usize> {
    check_initialized()?;
    categories()
        .iter()
        .position(|c| c.name == name)
        .ok_or(TErr::InvalidName)
}

/// `MPI_T_category_changed`: the variables and categories never change, so neither
/// does the stamp.
pub fn category_changed() -> TResult<i32> {
    check_initialized()?;
    Ok(0)
}

// ----- sources --------------------------------------------------------------------------

/// The one time source: `CLOCK_MONOTONIC` in nanoseconds.
pub const SOURCE_NAME: &str = "oxmpi_monotonic";
pub const SOURCE_DESC: &str =
    "CLOCK_MONOTONIC of this process in nanoseconds (the clock of MPI_Wtime)";
pub const SOURCE_TICKS_PER_SECOND: i64 = 1_000_000_000;

/// `MPI_T_source_get_num`.
pub fn source_num() -> TResult<usize> {
    check_initialized()?;
    Ok(1)
}

/// Checks a source index.
pub fn source(i: i32) -> TResult<()> {
    check_initialized()?;
    if i != 0 {
        return Err(TErr::InvalidIndex);
    }
    Ok(())
}

/// `MPI_T_source_get_timestamp`.
pub fn source_timestamp(i: i32) -> TResult<i64> {
    source(i)?;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    Ok(ts.tv_sec * SOURCE_TICKS_PER_SECOND + ts.tv_nsec)
}

/// `MPI_T_event_get_num`: oxmpi defines no event type.
pub fn event_num() -> TResult<usize> {
    check_initialized()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_keep_their_kind() {
        let h = encode(TAG_CVAR, 3);
        assert_eq!(decode(TAG_CVAR, h), Some(3));
        assert_eq!(decode(TAG_PVAR, h), None);
        assert_eq!(decode(TAG_PVAR, ALL_HANDLES), None);
        assert_eq!(decode(TAG_CVAR, 0), None);
    }

    #[test]
    fn categories_cover_every_variable_once() {
        let cats = categories();
        let mut cv = vec![0; ALL.len()];
        let mut pv = vec![0; pvars::table().len()];
        for c in cats {
            c.cvars.iter().for_each(|&i| cv[i] += 1);
            c.pvars.iter().for_each(|&i| pv[i] += 1);
        }
        assert!(cv.iter().all(|&n| n == 1), "{cv:?}");
        assert!(pv.iter().all(|&n| n == 1), "{pv:?}");
        assert_eq!(cats.last().unwrap().categories.len(), cats.len() - 1);
    }

    #[test]
    fn error_codes_are_mpichs() {
        assert_eq!(TErr::Memory.code(), 59);
        assert_eq!(TErr::Invalid.code(), 74);
        assert_eq!(TErr::NotSupported.code(), 78);
    }
}
