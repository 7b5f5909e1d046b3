//! Generalized requests in C: `MPI_Grequest_start`, `MPI_Grequest_complete`, and the
//! completion calls on lists that hold generalized requests.
//!
//! The rules (when each callback runs, in which order, what becomes of the request and
//! of its errors) are the engine's (`oxmpi_core::grequest`); this module adapts the
//! program's C callbacks to the engine's `GrequestHooks` (statuses in C layout, error
//! codes handed back unchanged) and writes the engine's outcomes into the caller's
//! handles and statuses.

use crate::convert::{self, get_count, is_cancelled, request, request_handle, STATUS_IGNORE};
use crate::errors::{code_for, passthrough};
use crate::export::Target;
use crate::handles::{self, MPI_Request, MPI_Status};
use crate::mpi_fn;
use crate::p2p::nth;
use oxmpi_core::device::{ReqId, Status};
use oxmpi_core::grequest::{self as core_greq, GrequestHooks, Outcome};
use oxmpi_core::{Error, ErrorClass, Result, UNDEFINED};
use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Arc;

pub use core_greq::{involved, is_generalized};

/// `MPI_Grequest_query_function`.
pub type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
/// `MPI_Grequest_free_function`.
pub type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `MPI_Grequest_cancel_function`.
pub type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// The program's callbacks of one generalized request.
struct CHooks {
    query: QueryFn,
    free: FreeFn,
    cancel: CancelFn,
    extra: usize,
}

fn callback_result(rc: c_int, what: &str) -> Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(passthrough(rc, what))
    }
}

impl GrequestHooks for CHooks {
    fn query(&self, status: &mut Status) -> Result<()> {
        let mut st = empty_status();
        // SAFETY: a user callback with the standard's signature, called with the extra
        // state given to MPI_Grequest_start and a valid status; no lock is held.
        let rc = unsafe { (self.query)(self.extra as *mut c_void, &mut st) };
        *status = Status {
            source: st.MPI_SOURCE,
            tag: st.MPI_TAG,
            error: oxmpi_core::device::Outcome::Success,
            bytes: get_count(&st),
            cancelled: is_cancelled(&st),
        };
        callback_result(rc, "the query function of the generalized request")
    }

    fn free(&self) -> Result<()> {
        // SAFETY: as above; the engine runs it once.
        let rc = unsafe { (self.free)(self.extra as *mut c_void) };
        callback_result(rc, "the free function of the generalized request")
    }

    fn cancel(&self, complete: bool) -> Result<()> {
        // SAFETY: as above.
        let rc = unsafe { (self.cancel)(self.extra as *mut c_void, complete as c_int) };
        callback_result(rc, "the cancel function of the generalized request")
    }
}

/// The status a query function starts from: the empty status.
fn empty_status() -> MPI_Status {
    MPI_Status::new(handles::MPI_ANY_SOURCE, handles::MPI_ANY_TAG, 0, 0)
}

// ----- writing outcomes ---------------------------------------------------------------------

/// The error a single-completion call reports for `o`.
pub(crate) fn error_of(o: Outcome) -> Result<()> {
    let comm = o.comm;
    match o.error {
        Some(e) => Err(e.on_comm(comm)),
        None => convert::status_error(&o.status).map_err(|e| e.on_comm(comm)),
    }
}

/// The code an all/some call stores in `MPI_ERROR` for `o` (0 when it succeeded).
fn code_of(call: &str, o: &Outcome) -> c_int {
    match &o.error {
        Some(e) => code_for(call, e),
        None => ErrorClass::from(o.status.error) as c_int,
    }
}

/// Writes an outcome's status to `dst` (unless ignored); `MPI_ERROR` is set to `code`
/// when given.
///
/// # Safety
/// `dst` is null, `MPI_STATUS_IGNORE` or points to a writable status.
pub(crate) unsafe fn deliver(dst: *mut MPI_Status, o: &Outcome, code: Option<c_int>) {
    // SAFETY: per the contract.
    unsafe { convert::write_status(dst, &o.status, false) };
    if let Some(c) = code {
        if !dst.is_null() && dst as usize != STATUS_IGNORE {
            // SAFETY: per the contract.
            unsafe { (*dst).MPI_ERROR = c };
        }
    }
}

/// # Safety
/// `r` points to the caller's handle.
unsafe fn settle(r: *mut MPI_Request, o: &Outcome) {
    if o.freed {
        // SAFETY: per the contract.
        unsafe { *r = handles::MPI_REQUEST_NULL };
    }
}

/// `MPI_ERR_IN_STATUS`, reported to the handler of the first failed request.
fn in_status(first_failed: Option<&Outcome>) -> Error {
    let e = Error::new(
        ErrorClass::InStatus,
        "one or more requests failed; see the MPI_ERROR field of their statuses",
    );
    match first_failed {
        Some(o) => e.on_comm(o.comm),
        None => e,
    }
}

// ----- completion calls involving generalized requests -------------------------------------

/// `MPI_Wait` on generalized request `id`.
///
/// # Safety
/// `r` points to the handle; `st` is a status or `MPI_STATUS_IGNORE`.
pub unsafe fn wait(r: *mut MPI_Request, id: ReqId, st: *mut MPI_Status) -> Result<()> {
    let o = core_greq::wait(id)?;
    // SAFETY: per the contract.
    unsafe {
        settle(r, &o);
        deliver(st, &o, None);
    }
    error_of(o)
}

/// `MPI_Test` on generalized request `id`.
///
/// # Safety
/// As for [`wait`]; `flag` is writable.
pub unsafe fn test(
    r: *mut MPI_Request,
    id: ReqId,
    flag: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let Some(o) = core_greq::test(id)? else {
        // SAFETY: flag checked by the caller.
        unsafe { *flag = 0 };
        return Ok(());
    };
    // SAFETY: per the contract.
    unsafe {
        *flag = 1;
        settle(r, &o);
        deliver(st, &o, None);
    }
    error_of(o)
}

/// Writes the result of a wait/test-any.
///
/// # Safety
/// `rs` holds the handles; `index` writable; `st` a status or ignore.
pub(crate) unsafe fn any_done(
    rs: *mut MPI_Request,
    index: *mut c_int,
    st: *mut MPI_Status,
    done: Option<(usize, Outcome)>,
) -> Result<()> {
    let Some((i, o)) = done else {
        // SAFETY: per the contract.
        unsafe {
            *index = UNDEFINED;
            deliver(st, &Outcome::empty(), None);
        }
        return Ok(());
    };
    // SAFETY: i < n; per the contract.
    unsafe {
        *index = i as c_int;
        settle(rs.add(i), &o);
        deliver(st, &o, None);
    }
    error_of(o)
}

/// `MPI_Waitany` with generalized requests among `ids`.
///
/// # Safety
/// As for [`any_done`].
pub unsafe fn waitany(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    index: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let done = core_greq::waitany(ids)?;
    // SAFETY: forwarded contract.
    unsafe { any_done(rs, index, st, done) }
}

/// `MPI_Testany` with generalized requests among `ids`.
///
/// # Safety
/// As for [`any_done`]; `flag` writable.
pub unsafe fn testany(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    index: *mut c_int,
    flag: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let (f, which) = core_greq::testany(ids)?;
    // SAFETY: per the contract.
    unsafe {
        *flag = f as c_int;
        if !f {
            *index = UNDEFINED;
            return Ok(());
        }
        any_done(rs, index, st, which)
    }
}

/// Writes the outcomes of an all/some call (`(request index, status slot, outcome)`);
/// `MPI_ERR_IN_STATUS` when any failed.
///
/// # Safety
/// `rs` holds the handles named by the request indices; `st` is an array with the
/// status slots or ignore.
unsafe fn report(
    call: &str,
    rs: *mut MPI_Request,
    st: *mut MPI_Status,
    outcomes: &[(usize, usize, &Outcome)],
) -> Result<()> {
    let first_failed = outcomes.iter().map(|x| x.2).find(|o| o.failed());
    for &(i, k, o) in outcomes {
        let code = first_failed.map(|_| code_of(call, o));
        // SAFETY: per the contract.
        unsafe {
            settle(rs.add(i), o);
            deliver(nth(st, k), o, code);
        }
    }
    match first_failed {
        Some(o) => Err(in_status(Some(o))),
        None => Ok(()),
    }
}

/// Writes the outcomes of a wait/test-all (`None`: a null handle, empty status).
///
/// # Safety
/// `rs` and `st` (unless ignore) hold `done.len()` entries.
pub(crate) unsafe fn report_all(
    call: &str,
    rs: *mut MPI_Request,
    st: *mut MPI_Status,
    done: &[Option<Outcome>],
) -> Result<()> {
    let empty = Outcome::empty();
    let outcomes: Vec<(usize, usize, &Outcome)> = done
        .iter()
        .enumerate()
        .map(|(i, o)| (i, i, o.as_ref().unwrap_or(&empty)))
        .collect();
    // SAFETY: forwarded contract.
    unsafe { report(call, rs, st, &outcomes) }
}

/// `MPI_Waitall` with generalized requests among `ids`.
///
/// # Safety
/// `rs` and `st` (unless ignore) hold `ids.len()` entries.
pub unsafe fn waitall(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    st: *mut MPI_Status,
) -> Result<()> {
    let done = core_greq::waitall(ids)?;
    // SAFETY: forwarded contract.
    unsafe { report_all("MPI_Waitall", rs, st, &done) }
}

/// `MPI_Testall` with generalized requests among `ids`.
///
/// # Safety
/// As for [`waitall`]; `flag` writable.
pub unsafe fn testall(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    flag: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let Some(done) = core_greq::testall(ids)? else {
        // SAFETY: per the contract.
        unsafe { *flag = 0 };
        return Ok(());
    };
    // SAFETY: per the contract.
    unsafe {
        *flag = 1;
        report_all("MPI_Testall", rs, st, &done)
    }
}

/// Writes the result of a wait/test-some.
///
/// # Safety
/// `outcount` writable; `indices` and `st` (unless ignore) hold the request count.
pub(crate) unsafe fn some_done(
    call: &str,
    rs: *mut MPI_Request,
    outcount: *mut c_int,
    indices: *mut c_int,
    st: *mut MPI_Status,
    done: Option<Vec<(usize, Outcome)>>,
) -> Result<()> {
    let Some(done) = done else {
        // SAFETY: per the contract.
        unsafe { *outcount = UNDEFINED };
        return Ok(());
    };
    let outcomes: Vec<(usize, usize, &Outcome)> = done
        .iter()
        .enumerate()
        .map(|(k, (i, o))| (*i, k, o))
        .collect();
    // SAFETY: per the contract; done.len() <= the request count.
    unsafe {
        *outcount = done.len() as c_int;
        for (k, (i, _)) in done.iter().enumerate() {
            *indices.add(k) = *i as c_int;
        }
        report(call, rs, st, &outcomes)
    }
}

/// `MPI_Waitsome` with generalized requests among `ids`.
///
/// # Safety
/// As for [`some_done`].
pub unsafe fn waitsome(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    outcount: *mut c_int,
    indices: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let done = core_greq::waitsome(ids)?;
    // SAFETY: forwarded contract.
    unsafe { some_done("MPI_Waitsome", rs, outcount, indices, st, done) }
}

/// `MPI_Testsome` with generalized requests among `ids`.
///
/// # Safety
/// As for [`some_done`].
pub unsafe fn testsome(
    rs: *mut MPI_Request,
    ids: &[Option<ReqId>],
    outcount: *mut c_int,
    indices: *mut c_int,
    st: *mut MPI_Status,
) -> Result<()> {
    let done = core_greq::testsome(ids)?;
    // SAFETY: forwarded contract.
    unsafe { some_done("MPI_Testsome", rs, outcount, indices, st, done) }
}

/// `MPI_Request_get_status` on generalized request `id`: calls only `query_fn`.
///
/// # Safety
/// `flag` writable; `st` a status or ignore.
pub unsafe fn get_status(id: ReqId, flag: *mut c_int, st: *mut MPI_Status) -> Result<()> {
    let o = core_greq::get_status(id)?;
    // SAFETY: flag checked by the caller.
    unsafe { *flag = o.is_some() as c_int };
    let Some(o) = o else {
        return Ok(());
    };
    // SAFETY: per the contract.
    unsafe { deliver(st, &o, None) };
    error_of(o)
}

/// `MPI_Request_free` on generalized request `id`.
pub fn request_free(id: ReqId) -> Result<()> {
    core_greq::request_free(id)
}

/// `MPI_Cancel` on generalized request `id`.
pub fn cancel(id: ReqId) -> Result<()> {
    core_greq::cancel(id)
}

// ----- entry points -----------------------------------------------------------------------------

mpi_fn! { MPI_Grequest_start / PMPI_Grequest_start (query: Option<QueryFn>, free: Option<FreeFn>, cancel: Option<CancelFn>,
        extra: *mut c_void, r: *mut MPI_Request) target(Target::None) {
    let r = convert::out(r, "request")?;
    let missing = |what: &str| Error::new(ErrorClass::Arg, format!("null {what} function"));
    let hooks = CHooks {
        query: query.ok_or_else(|| missing("query"))?,
        free: free.ok_or_else(|| missing("free"))?,
        cancel: cancel.ok_or_else(|| missing("cancel"))?,
        extra: extra as usize,
    };
    let id = core_greq::start(Arc::new(hooks))?;
    // SAFETY: checked non-null.
    unsafe { *r = request_handle(id) };
    Ok(())
}}

mpi_fn! { MPI_Grequest_complete / PMPI_Grequest_complete (r: MPI_Request) target(Target::None) {
    let Some(id) = request(r)? else {
        return Err(Error::new(ErrorClass::Request, "cannot complete MPI_REQUEST_NULL"));
    };
    if !is_generalized(id) {
        return Err(Error::new(
            ErrorClass::Request,
            format!("request {r:#x} is not a generalized request (made by MPI_Grequest_start)"),
        ));
    }
    core_greq::complete(id)
}}
