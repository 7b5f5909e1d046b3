//! Nonblocking duplication (`MPI_Comm_idup`, `MPI_Comm_idup_with_info`): a request in a
//! [`Scope`] that yields the new communicator once it completes. Until then the
//! duplicate exists only inside the request, so it cannot be used too early.

use super::{free_comm, SimpleCommunicator};
use crate::error::{engine, Result};
use crate::info::Info;
use crate::raw::Fixup;
use crate::request::{Request, Scope};
use oxmpi_core::comm::CommId;
use oxmpi_core::idup;

/// A duplication under way; [`wait`](DuplicateRequest::wait) or a successful
/// [`test`](DuplicateRequest::test) gives the communicator. Dropping it unfinished
/// waits for the duplication (every member must take part) and frees the duplicate.
#[must_use = "dropping a duplication request waits for it and frees the duplicate"]
#[derive(Debug)]
pub struct DuplicateRequest<'a, S: Scope<'a>> {
    /// Taken by `wait`/`test`; `None` only while those consume the value.
    req: Option<Request<'a, S>>,
    comm: CommId,
}

impl<'a, S: Scope<'a>> DuplicateRequest<'a, S> {
    fn start(
        scope: S,
        r: oxmpi_core::Result<(CommId, oxmpi_core::device::ReqId)>,
        m: &'static str,
    ) -> Result<Self> {
        let (comm, id) = r.map_err(engine(m))?;
        Ok(DuplicateRequest {
            req: Some(Request::new(id, scope, Fixup::none(), m)),
            comm,
        })
    }

    /// The request and the duplicate's id, leaving `self` empty (its `Drop` then does
    /// nothing).
    fn take(&mut self) -> Option<(Request<'a, S>, CommId)> {
        self.req.take().map(|r| (r, self.comm))
    }

    /// Blocks until the duplication completes (`MPI_Wait`) and returns the new
    /// communicator.
    pub fn wait(mut self) -> Result<SimpleCommunicator> {
        let Some((req, comm)) = self.take() else {
            unreachable!("a duplication request is finished only once");
        };
        adopt(req.wait().map(drop), comm)
    }

    /// Checks whether the duplication has completed (`MPI_Test`): `Ok(Ok(comm))` when
    /// it has, `Ok(Err(self))` when not.
    pub fn test(mut self) -> Result<std::result::Result<SimpleCommunicator, Self>> {
        let Some((req, comm)) = self.take() else {
            unreachable!("a duplication request is finished only once");
        };
        match req.test() {
            Ok(Err(req)) => Ok(Err(DuplicateRequest {
                req: Some(req),
                comm,
            })),
            Ok(Ok(_)) => adopt(Ok(()), comm).map(Ok),
            Err(e) => adopt(Err(e), comm).map(Ok),
        }
    }
}

/// The duplicate once its request finished with `r` (freed when that failed).
fn adopt(r: Result<()>, comm: CommId) -> Result<SimpleCommunicator> {
    match r {
        Ok(()) => SimpleCommunicator::adopt("immediate_duplicate", comm),
        Err(e) => {
            free_comm(comm);
            Err(e)
        }
    }
}

impl<'a, S: Scope<'a>> Drop for DuplicateRequest<'a, S> {
    fn drop(&mut self) {
        if let Some((req, comm)) = self.take() {
            let _ = req.wait();
            free_comm(comm);
        }
    }
}

impl SimpleCommunicator {
    /// Starts a duplication (`MPI_Comm_idup`): same group, topology and hints, attributes
    /// copied when it completes. Collective: every member must start it, in the same
    /// order as their other collectives on this communicator.
    pub fn immediate_duplicate<'a, S: Scope<'a>>(
        &self,
        scope: S,
    ) -> Result<DuplicateRequest<'a, S>> {
        const M: &str = "immediate_duplicate";
        DuplicateRequest::start(scope, idup::comm_idup(self.id, None), M)
    }

    /// [`immediate_duplicate`](Self::immediate_duplicate) whose hints are those of
    /// `info` instead of this communicator's (`MPI_Comm_idup_with_info`).
    pub fn immediate_duplicate_with_info<'a, S: Scope<'a>>(
        &self,
        scope: S,
        info: &Info,
    ) -> Result<DuplicateRequest<'a, S>> {
        const M: &str = "immediate_duplicate_with_info";
        DuplicateRequest::start(
            scope,
            idup::comm_idup_with_info(self.id, Some(info.info_id())),
            M,
        )
    }
}
