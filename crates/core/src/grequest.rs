//! Generalized requests (`MPI_Grequest_start` / `MPI_Grequest_complete`): requests
//! whose operation the program carries out itself and whose completion it announces.
//!
//! The engine only tracks whether such a request is complete, so that every
//! completion call (wait, test and their any/all/some forms) treats it like any other
//! request. Its status and its query/free/cancel callbacks belong to the binding that
//! created it, which calls them after the engine returns, never under the runtime lock.

use crate::comm::SELF;
use crate::device::ReqId;
use crate::error::{err, ErrorClass, Result};
use crate::runtime;

/// `MPI_Grequest_start`: a new pending generalized request. Errors it reports go to
/// the error handler of `MPI_COMM_SELF` (it belongs to no communicator).
pub fn start() -> Result<ReqId> {
    runtime::with(|rt| {
        let id = rt.device.generalized_request();
        if let Some(r) = rt.device.request_mut(id) {
            r.owner = SELF;
        }
        Ok(id)
    })
}

/// True when `id` names a generalized request.
pub fn is_generalized(id: ReqId) -> bool {
    runtime::with(|rt| Ok(rt.device.request(id).is_some_and(|r| r.is_generalized())))
        .unwrap_or(false)
}

/// `MPI_Grequest_complete`. Returns true when the request was released by this call
/// (the program had already freed it with `MPI_Request_free`), so its free callback
/// is due now.
pub fn complete(id: ReqId) -> Result<bool> {
    runtime::with(|rt| match rt.device.request(id) {
        None => err(ErrorClass::Request, format!("invalid request (index {id})")),
        Some(r) if !r.is_generalized() => err(
            ErrorClass::Request,
            "the request is not a generalized request (made by MPI_Grequest_start)",
        ),
        Some(r) if r.is_complete() => err(
            ErrorClass::Request,
            "MPI_Grequest_complete was already called for this generalized request",
        ),
        Some(_) => rt.device.grequest_complete(id).map_err(|_| {
            crate::Error::new(
                ErrorClass::Request,
                "cannot complete the generalized request",
            )
        }),
    })
}

/// True when the generalized request `id` exists and has been completed.
pub fn is_complete(id: ReqId) -> Result<bool> {
    runtime::with(|rt| match rt.device.request(id) {
        Some(r) => Ok(r.is_complete()),
        None => err(ErrorClass::Request, format!("invalid request (index {id})")),
    })
}
