//! The engine's error-handler and generalized-request rules, driven through the core
//! API in a singleton process (no launcher), as both bindings use them. MPI can be
//! initialised once per process, so this file holds a single test.

use oxmpi_core::comm::{Errhandler, NO_COMM, SELF, WORLD};
use oxmpi_core::device::Status;
use oxmpi_core::errhandler::{self, ErrObject, UserHandler};
use oxmpi_core::grequest::{self, GrequestHooks};
use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_core::{commops, Error, ErrorClass, Result};
use std::sync::{Arc, Mutex};

/// Records the callbacks a generalized request receives, in order.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

struct Hooks {
    log: Arc<Log>,
    name: &'static str,
    /// The code query returns (0: success).
    query_code: i32,
}

impl GrequestHooks for Hooks {
    fn query(&self, status: &mut Status) -> Result<()> {
        self.log
            .0
            .lock()
            .unwrap()
            .push(format!("{}:query", self.name));
        status.source = 7;
        status.tag = 9;
        status.bytes = 12;
        match self.query_code {
            0 => Ok(()),
            c => Err(Error::from_callback(c, ErrorClass::Io, "query failed")),
        }
    }
    fn free(&self) -> Result<()> {
        self.log
            .0
            .lock()
            .unwrap()
            .push(format!("{}:free", self.name));
        Ok(())
    }
    fn cancel(&self, complete: bool) -> Result<()> {
        self.log
            .0
            .lock()
            .unwrap()
            .push(format!("{}:cancel({complete})", self.name));
        Ok(())
    }
}

struct Count(Mutex<Vec<(u32, i32)>>);
impl UserHandler for Count {
    fn call(&self, comm: u32, code: i32) {
        self.0.lock().unwrap().push((comm, code));
    }
}

#[test]
fn handlers_and_generalized_requests() {
    runtime::init(ThreadLevel::Single).expect("init");

    // ----- which handler reports an error ------------------------------------------------
    // Nothing set: the default, fatal (reported as SELF's).
    assert_eq!(
        errhandler::handler_for(ErrObject::None),
        (SELF, Errhandler::Fatal)
    );
    // Set on WORLD only: WORLD's applies to errors with no object.
    errhandler::set_comm(WORLD, Errhandler::Return).unwrap();
    assert_eq!(
        errhandler::handler_for(ErrObject::None),
        (WORLD, Errhandler::Return)
    );
    // A communicator that does not exist counts as no object.
    assert_eq!(
        errhandler::handler_for(ErrObject::Comm(NO_COMM)),
        (WORLD, Errhandler::Return)
    );
    // Once set on SELF, SELF's wins.
    let seen = Arc::new(Count(Mutex::new(Vec::new())));
    let user = errhandler::create(seen.clone());
    errhandler::set_comm(SELF, user).unwrap();
    assert_eq!(errhandler::handler_for(ErrObject::None), (SELF, user));
    let e = Error::new(ErrorClass::Group, "invalid group");
    assert_eq!(
        errhandler::dispatch("MPI_Group_size", ErrObject::None, &e, 8),
        8
    );
    assert_eq!(*seen.0.lock().unwrap(), vec![(SELF, 8)]);

    // ----- reference counts ----------------------------------------------------------------
    // Freed by the program while set on a duplicate: lives until the duplicate goes.
    let dup = commops::comm_dup(WORLD).unwrap();
    errhandler::set_comm(dup, user).unwrap();
    errhandler::set_comm(SELF, Errhandler::Return).unwrap();
    errhandler::free(user).unwrap();
    let Errhandler::User(index) = user else {
        unreachable!()
    };
    assert!(errhandler::is_live(index));
    let got = errhandler::get_comm(dup).unwrap(); // a new reference
    commops::comm_free(dup).unwrap();
    assert!(errhandler::is_live(index));
    errhandler::free(got).unwrap();
    assert!(!errhandler::is_live(index));

    // ----- generalized requests ------------------------------------------------------------
    let log = Arc::new(Log::default());
    let hooks = |name, query_code| {
        Arc::new(Hooks {
            log: log.clone(),
            name,
            query_code,
        })
    };

    // Wait: query, then free; the request is gone; errors go to no object's handler.
    let a = grequest::start(hooks("a", 0)).unwrap();
    assert!(grequest::is_generalized(a));
    assert!(grequest::test(a).unwrap().is_none());
    grequest::cancel(a).unwrap();
    assert_eq!(log.take(), ["a:cancel(false)"]);
    grequest::complete(a).unwrap();
    assert_eq!(
        grequest::complete(a).unwrap_err().class,
        ErrorClass::Request
    );
    let o = grequest::get_status(a).unwrap().expect("complete");
    assert_eq!(log.take(), ["a:query"]);
    assert!(!o.freed);
    let o = grequest::wait(a).unwrap();
    assert_eq!(log.take(), ["a:query", "a:free"]);
    assert!(o.freed && o.error.is_none());
    assert_eq!((o.status.source, o.status.tag, o.status.bytes), (7, 9, 12));
    assert_eq!(o.comm, NO_COMM);
    assert!(!grequest::is_generalized(a));

    // Freed before it completes: free runs at MPI_Grequest_complete, no query.
    let b = grequest::start(hooks("b", 0)).unwrap();
    grequest::request_free(b).unwrap();
    assert!(log.take().is_empty());
    grequest::complete(b).unwrap();
    assert_eq!(log.take(), ["b:free"]);

    // Waitall over two: each query before its free; a query error keeps its code.
    let c = grequest::start(hooks("c", 0)).unwrap();
    let d = grequest::start(hooks("d", 1234)).unwrap();
    grequest::complete(c).unwrap();
    grequest::complete(d).unwrap();
    let ids = [Some(c), None, Some(d)];
    assert!(grequest::involved(&ids));
    let out = grequest::waitall(&ids).unwrap();
    assert_eq!(log.take(), ["c:query", "c:free", "d:query", "d:free"]);
    assert!(out[1].is_none());
    let (oc, od) = (out[0].as_ref().unwrap(), out[2].as_ref().unwrap());
    assert!(!oc.failed());
    assert!(od.failed());
    let err = od.error.as_ref().unwrap();
    assert_eq!((err.class, err.code), (ErrorClass::Io, Some(1234)));
    assert!(!grequest::involved(&ids));

    runtime::finalize().expect("finalize");
}
