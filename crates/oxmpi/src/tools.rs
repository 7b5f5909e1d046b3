//! The MPI tool information interface (`MPI_T`): oxmpi's control variables (its
//! tunables, readable at any time and writable where the engine allows) and
//! performance variables (traffic by peer, queue lengths, time blocked, collective
//! algorithms run), by name.
//!
//! [`Tools::init`] opens the interface (before or after [`crate::initialize`]); the
//! [`Tools`] value closes it when dropped. Performance variables are read through a
//! [`Session`]'s [`Pvar`] handles, which count only while started (counters and timers;
//! levels and states always show the current value).
//!
//! ```no_run
//! use oxmpi::tools::{CvarValue, Tools};
//! use oxmpi::traits::*;
//!
//! let tools = Tools::init().unwrap();
//! // Before MPI_Init: MPI_Init then runs with the value written.
//! tools.write_cvar("OXMPI_COLL_SHM", &CvarValue::Int(0)).unwrap();
//! let universe = oxmpi::initialize().unwrap();
//! let world = universe.world();
//! let session = tools.session().unwrap();
//! let sent = session.pvar("p2p_messages_sent", Some(&world)).unwrap();
//! sent.start().unwrap();
//! // ... communicate ...
//! sent.stop().unwrap();
//! println!("messages sent by peer: {:?}", sent.read().unwrap());
//! ```

use crate::topology::AsCommId;
use oxmpi_core::mpit::{self, cvars, pvars};
use std::fmt;

pub use oxmpi_core::mpit::cvars::CvarValue;
pub use oxmpi_core::mpit::pvars::{Class, PvarValue};
pub use oxmpi_core::mpit::{Scope, VarType, Verbosity};

/// An error of the tool information interface: one of the `MPI_T_ERR_*` classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error(pub mpit::TErr);

impl Error {
    /// The class's value (`MPI_T_ERR_INVALID_NAME` = 73 ...).
    pub fn code(self) -> i32 {
        self.0.code()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MPI_T error {:?} ({})", self.0, self.0.code())
    }
}

impl std::error::Error for Error {}

impl From<mpit::TErr> for Error {
    fn from(e: mpit::TErr) -> Error {
        Error(e)
    }
}

/// A result of the tool information interface.
pub type Result<T> = std::result::Result<T, Error>;

/// A control variable's description.
#[derive(Clone, Debug)]
pub struct CvarInfo {
    /// Its name (an `OXMPI_*` environment variable).
    pub name: &'static str,
    /// What it does, its values and default, and when it may be written.
    pub description: String,
    /// The C type of its value.
    pub datatype: VarType,
    /// The words of an enumerated variable (the value is an index into them).
    pub items: Option<Vec<&'static str>>,
    /// Who may change it, and how.
    pub scope: Scope,
    /// Its verbosity level.
    pub verbosity: Verbosity,
}

/// A performance variable's description.
#[derive(Clone, Debug)]
pub struct PvarInfo {
    /// Its name.
    pub name: &'static str,
    /// What it measures.
    pub description: String,
    /// Its class (counter, level, timer, state).
    pub class: Class,
    /// The C type of its elements.
    pub datatype: VarType,
    /// Its handles are bound to a communicator (one element per rank).
    pub per_rank: bool,
    /// It cannot be written or reset.
    pub readonly: bool,
    /// It needs no start (and cannot be started or stopped).
    pub continuous: bool,
}

/// The algorithm a value of `coll_last_algorithm` names (`Allreduce:ring` ...; `none`
/// before the first collective that ran one).
pub fn algorithm_name(value: i32) -> Option<&'static str> {
    pvars::algorithm_item(value)
}

/// The open interface (`MPI_T_init_thread`); dropping it calls `MPI_T_finalize`.
#[derive(Debug)]
pub struct Tools {
    _private: (),
}

impl Tools {
    /// Opens the interface (it may be opened several times; each value closes its own).
    pub fn init() -> Result<Tools> {
        mpit::init_thread()?;
        Ok(Tools { _private: () })
    }

    /// Every control variable.
    pub fn cvars(&self) -> Vec<CvarInfo> {
        cvars::table()
            .iter()
            .map(|d| CvarInfo {
                name: d.name,
                description: d.desc.clone(),
                datatype: d.ty,
                items: d.words.as_ref().map(|w| w.items.clone()),
                scope: d.scope,
                verbosity: d.verbosity,
            })
            .collect()
    }

    fn with_cvar<R>(&self, name: &str, f: impl FnOnce(u64) -> Result<R>) -> Result<R> {
        let i = cvars::index(name)?;
        let (h, _) = cvars::handle_alloc(i as i32)?;
        let r = f(h);
        cvars::handle_free(h)?;
        r
    }

    /// The value of control variable `name`.
    pub fn read_cvar(&self, name: &str) -> Result<CvarValue> {
        self.with_cvar(name, |h| Ok(cvars::read(h)?.1))
    }

    /// Writes control variable `name` (before `MPI_Init` any variable the library
    /// reads; while MPI runs only those the engine can change then).
    pub fn write_cvar(&self, name: &str, value: &CvarValue) -> Result<()> {
        self.with_cvar(name, |h| Ok(cvars::write(h, value)?))
    }

    /// Every performance variable.
    pub fn pvars(&self) -> Vec<PvarInfo> {
        pvars::table()
            .iter()
            .map(|d| PvarInfo {
                name: d.name,
                description: d.desc.clone(),
                class: d.class,
                datatype: d.ty,
                per_rank: d.bind == mpit::Bind::Comm,
                readonly: d.readonly,
                continuous: d.continuous,
            })
            .collect()
    }

    /// A new performance-experiment session.
    pub fn session(&self) -> Result<Session<'_>> {
        Ok(Session {
            id: pvars::session_create()?,
            _tools: self,
        })
    }
}

impl Drop for Tools {
    fn drop(&mut self) {
        let _ = mpit::finalize();
    }
}

/// A performance-experiment session (`MPI_T_pvar_session`), freed on drop with its
/// handles.
#[derive(Debug)]
pub struct Session<'t> {
    id: u64,
    _tools: &'t Tools,
}

impl Session<'_> {
    /// A handle of performance variable `name`; `comm` is the communicator of a
    /// variable counted by rank (None for the others).
    pub fn pvar(&self, name: &str, comm: Option<&dyn AsCommId>) -> Result<Pvar<'_>> {
        let i = pvars::table()
            .iter()
            .position(|p| p.name == name)
            .ok_or(Error(mpit::TErr::InvalidName))?;
        let (id, count) = pvars::handle_alloc(self.id, i as i32, comm.map(|c| c.comm_id()))?;
        Ok(Pvar {
            session: self.id,
            id,
            count,
            _session: std::marker::PhantomData,
        })
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        let _ = pvars::session_free(self.id);
    }
}

/// A performance-variable handle (`MPI_T_pvar_handle`), valid while its session is.
#[derive(Debug)]
pub struct Pvar<'s> {
    session: u64,
    id: u64,
    count: usize,
    _session: std::marker::PhantomData<&'s ()>,
}

impl Pvar<'_> {
    /// Elements of its value.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Starts counting.
    pub fn start(&self) -> Result<()> {
        Ok(pvars::start(self.session, self.id)?)
    }

    /// Stops counting (the value stays).
    pub fn stop(&self) -> Result<()> {
        Ok(pvars::stop(self.session, self.id)?)
    }

    /// The value.
    pub fn read(&self) -> Result<PvarValue> {
        Ok(pvars::read(self.session, self.id)?)
    }

    /// Sets the value back to zero.
    pub fn reset(&self) -> Result<()> {
        Ok(pvars::reset(self.session, self.id)?)
    }

    /// Sets the value.
    pub fn write(&self, v: &PvarValue) -> Result<()> {
        Ok(pvars::write(self.session, self.id, v)?)
    }
}
