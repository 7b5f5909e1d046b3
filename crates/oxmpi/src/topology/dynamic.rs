//! Dynamic processes: starting new jobs (`MPI_Comm_spawn`, `MPI_Comm_spawn_multiple`),
//! the parent of a spawned process (`MPI_Comm_get_parent`), ports and connecting
//! separately started jobs (`MPI_Open_port`, `MPI_Comm_accept`, `MPI_Comm_connect`),
//! and `MPI_Comm_disconnect`. Every one of them gives an [`InterCommunicator`] whose
//! remote group is the other job.

use super::{AsCommId, Communicator, InterCommunicator, Rank, SimpleCommunicator};
use crate::error::{engine, Error, ErrorClass, Result};
use oxmpi_core::dpm::{self, SpawnApp};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// One program to start: its path or name (looked up in `PATH`), arguments, number of
/// processes and info pairs (`wdir`, `path`, `host`, `soft`, `file`: see
/// `MPI_Comm_spawn` and the README). With `soft` the new job may have fewer processes
/// than asked for: the [`InterCommunicator`]'s remote group has those that started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    program: String,
    args: Vec<String>,
    processes: Rank,
    info: Vec<(String, String)>,
}

impl Command {
    /// `processes` copies of `program`, without arguments.
    pub fn new(program: impl Into<String>, processes: Rank) -> Command {
        Command {
            program: program.into(),
            args: Vec::new(),
            processes,
            info: Vec::new(),
        }
    }

    /// Adds an argument.
    pub fn arg(mut self, a: impl Into<String>) -> Command {
        self.args.push(a.into());
        self
    }

    /// Adds an info pair (`"wdir"`, `"path"`, `"host"`, `"soft"` such as `"1:8"`,
    /// `"file"` naming a file of further `key=value` lines).
    pub fn info(mut self, key: impl Into<String>, value: impl Into<String>) -> Command {
        self.info.push((key.into(), value.into()));
        self
    }

    fn app(&self, method: &'static str) -> Result<SpawnApp> {
        if self.processes < 1 {
            return Err(Error::new(
                method,
                ErrorClass::Arg,
                format!(
                    "{} processes of {:?}: must be at least 1",
                    self.processes, self.program
                ),
            ));
        }
        Ok(SpawnApp {
            command: self.program.clone(),
            maxprocs: self.processes as u32,
            args: self.args.clone(),
            info: self.info.clone(),
        })
    }
}

fn is_root(c: &SimpleCommunicator, root: Rank) -> bool {
    c.rank() == root
}

/// Root-only arguments as the engine takes them (an error found here reaches every
/// member through the engine).
fn root_apps(
    method: &'static str,
    c: &SimpleCommunicator,
    root: Rank,
    cmds: &[Command],
) -> dpm::RootArgs<Vec<SpawnApp>> {
    is_root(c, root).then(|| {
        cmds.iter()
            .map(|a| a.app(method))
            .collect::<Result<Vec<_>>>()
            .map_err(|e| oxmpi_core::Error::new(e.class(), e.to_string()))
    })
}

impl SimpleCommunicator {
    /// Starts `cmd` as a new job (`MPI_Comm_spawn`). Collective over this communicator;
    /// `cmd` matters only at `root`. The result's remote group is the new job, whose
    /// processes find this group with [`parent`]. A program that cannot be started is
    /// an error of class `ErrorClass::Spawn` at every member.
    pub fn spawn(&self, root: Rank, cmd: &Command) -> Result<InterCommunicator> {
        self.spawn_multiple(root, std::slice::from_ref(cmd))
    }

    /// Starts several programs as one new job (`MPI_Comm_spawn_multiple`): their
    /// processes share one `MPI_COMM_WORLD`, in the order given, and each sees its
    /// command's index as `MPI_APPNUM`.
    pub fn spawn_multiple(&self, root: Rank, cmds: &[Command]) -> Result<InterCommunicator> {
        const M: &str = "spawn";
        let args = root_apps(M, self, root, cmds);
        let id = dpm::spawn(args, root, self.comm_id()).map_err(engine(M))?;
        InterCommunicator::adopt(M, id)
    }

    /// Waits for a job to connect to `port` (`MPI_Comm_accept`; `port` matters at `root`,
    /// which must have opened it with [`Port::open`]).
    pub fn accept(&self, root: Rank, port: &Port) -> Result<InterCommunicator> {
        const M: &str = "accept";
        let args = is_root(self, root).then(|| Ok(port.name.clone()));
        let id = dpm::accept(args, root, self.comm_id()).map_err(engine(M))?;
        InterCommunicator::adopt(M, id)
    }

    /// Connects to the job that accepts on the port named `port` (`MPI_Comm_connect`;
    /// `port` and `timeout` matter at `root`). `None` waits `OXMPI_DPM_CONNECT_TIMEOUT`;
    /// nobody accepting in time is an error of class `ErrorClass::Port`.
    pub fn connect(
        &self,
        root: Rank,
        port: &str,
        timeout: Option<Duration>,
    ) -> Result<InterCommunicator> {
        const M: &str = "connect";
        let args = if is_root(self, root) {
            Some(match timeout {
                Some(t) => Ok((port.to_string(), t)),
                None => dpm::connect_timeout(None).map(|t| (port.to_string(), t)),
            })
        } else {
            None
        };
        let id = dpm::connect(args, root, self.comm_id()).map_err(engine(M))?;
        InterCommunicator::adopt(M, id)
    }
}

/// An open port (`MPI_Open_port`); closed when dropped (`MPI_Close_port`).
#[derive(Debug)]
pub struct Port {
    name: String,
}

impl Port {
    /// Opens a port of this process.
    pub fn open() -> Result<Port> {
        let name = dpm::open_port().map_err(engine("Port::open"))?;
        Ok(Port { name })
    }

    /// The name to give the connecting job (or to publish).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Port {
    fn drop(&mut self) {
        let _ = dpm::close_port(&self.name);
    }
}

impl InterCommunicator {
    /// `MPI_Comm_disconnect`: waits for the operations under way on this communicator
    /// and for the other group, then frees it. Collective over both groups.
    pub fn disconnect(self) -> Result<()> {
        const M: &str = "disconnect";
        let id = self.comm_id();
        // The engine frees it: the handle must not free it again.
        std::mem::forget(self);
        dpm::disconnect(id).map_err(engine(M))
    }
}

static PARENT_TAKEN: AtomicBool = AtomicBool::new(false);

/// The intercommunicator to the job that spawned this process (`MPI_Comm_get_parent`),
/// or None for a process that was not spawned. The first call hands it over (it is
/// freed when dropped, or disconnected); later calls give None.
pub fn parent() -> Result<Option<InterCommunicator>> {
    const M: &str = "parent";
    let Some(id) = dpm::parent().map_err(engine(M))? else {
        return Ok(None);
    };
    if PARENT_TAKEN.swap(true, Ordering::AcqRel) {
        return Ok(None);
    }
    InterCommunicator::adopt(M, id).map(Some)
}
