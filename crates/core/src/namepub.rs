//! Name publishing (`MPI_Publish_name`, `MPI_Lookup_name`, `MPI_Unpublish_name`): the
//! process manager's name service, reached through the PMI connection.
//!
//! oxmpi's `mpiexec` keeps one name table per job (`oxmpi_pmi::names`), so a name
//! published by a process of the job is seen by every process of the job. Under another
//! launcher the request goes to its PMI server (MPICH's Hydra answers it when it runs
//! with a name server). A process started without a launcher has no name service, and
//! the calls fail with the call's error class.
//!
//! Service and port names travel as PMI tokens: printable ASCII other than space, `=`,
//! `;` and `\`; other names are `MPI_ERR_ARG`.

use crate::error::{Error, ErrorClass, Result};
use crate::runtime;
use oxmpi_pmi::PmiError;

/// Runs `f` on the PMI connection; errors get `class` when the name service refused,
/// `MPI_ERR_ARG` for a name PMI cannot carry.
fn with_pmi<R>(
    call: &str,
    class: ErrorClass,
    what: &str,
    f: impl FnOnce(&mut oxmpi_pmi::Client) -> std::result::Result<R, PmiError>,
) -> Result<R> {
    runtime::with(|rt| {
        let Some(pmi) = rt.pmi.as_mut() else {
            return Err(Error::new(
                class,
                format!(
                    "{call}: no name service for {what}: this process was not started by a launcher"
                ),
            ));
        };
        f(pmi).map_err(|e| match e {
            PmiError::Server { msg, .. } => Error::new(
                class,
                format!(
                    "{call}: the name service refused {what}: {}",
                    if msg.is_empty() {
                        "no reason given"
                    } else {
                        &msg
                    }
                ),
            ),
            PmiError::InvalidArgument(m) => Error::new(ErrorClass::Arg, format!("{call}: {m}")),
            e => Error::new(ErrorClass::Other, format!("{call}: {what}: {e}")),
        })
    })
}

/// `MPI_Publish_name`: publishes `port` under `service`. A name published already is
/// `MPI_ERR_NAME` (the standard leaves the case to the implementation; MPICH's class).
pub fn publish(service: &str, port: &str) -> Result<()> {
    let what = format!("service name {service:?} (port {port:?})");
    with_pmi("MPI_Publish_name", ErrorClass::Name, &what, |p| {
        p.publish_name(service, port)
    })
}

/// `MPI_Lookup_name`: the port published under `service`; `MPI_ERR_NAME` when none is.
pub fn lookup(service: &str) -> Result<String> {
    let what = format!("service name {service:?}");
    with_pmi("MPI_Lookup_name", ErrorClass::Name, &what, |p| {
        p.lookup_name(service)
    })
}

/// `MPI_Unpublish_name`: withdraws `service`; `MPI_ERR_SERVICE` when it is not
/// published.
pub fn unpublish(service: &str) -> Result<()> {
    let what = format!("service name {service:?}");
    with_pmi("MPI_Unpublish_name", ErrorClass::Service, &what, |p| {
        p.unpublish_name(service)
    })
}
