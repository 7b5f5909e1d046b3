//! Sessions and the world model in one process (a singleton: no launcher): who starts
//! the runtime, what each model sees, re-initialisation, and the errors on the way.

use oxmpi_core::comm::{Errhandler, Group, SELF, WORLD};
use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_core::session::{self, PSETS, PSET_SELF, PSET_SHARED, PSET_WORLD};
use oxmpi_core::{commops, dpm, ErrorClass};

#[test]
fn sessions_share_the_runtime_with_the_world_model() {
    assert!(!runtime::is_running());
    let s = session::init(ThreadLevel::Multiple, Errhandler::Return).unwrap();
    // A session starts the runtime but not the world model.
    assert!(runtime::is_running());
    assert!(!runtime::initialized());
    assert!(!runtime::finalized());
    assert_eq!(
        commops::snapshot(WORLD).unwrap_err().class,
        ErrorClass::Comm
    );
    assert_eq!(commops::snapshot(SELF).unwrap_err().class, ErrorClass::Comm);
    assert_eq!(
        session::thread_level(s).unwrap(),
        runtime::MAX_THREAD_LEVEL.min(ThreadLevel::Multiple)
    );
    assert_eq!(
        session::info(s).unwrap(),
        vec![(
            "thread_level".to_string(),
            runtime::MAX_THREAD_LEVEL.name().to_string()
        )]
    );
    assert_eq!(session::psets(s).unwrap(), &PSETS);
    for p in [PSET_WORLD, PSET_SELF, PSET_SHARED] {
        assert_eq!(session::pset_members(s, p).unwrap(), vec![0], "{p}");
        assert_eq!(
            session::pset_info(s, p).unwrap(),
            vec![("mpi_size".to_string(), "1".to_string())]
        );
    }
    let e = session::pset_members(s, "mpi://NOWHERE").unwrap_err();
    assert_eq!(e.class, ErrorClass::Arg);
    assert!(e.message.contains("mpi://NOWHERE"), "{}", e.message);
    assert_eq!(dpm::parent().unwrap(), None);

    // A communicator from the WORLD group, on a context that is not WORLD's or SELF's.
    let g = session::group_from_pset(s, PSET_WORLD).unwrap();
    let c = session::comm_create_from_group(&g, "core.test", Errhandler::Return).unwrap();
    let comm = commops::snapshot(c).unwrap();
    assert!(comm.ctx >= 4, "context {}", comm.ctx);
    assert_eq!(comm.errhandler, Errhandler::Return);
    assert_eq!(comm.rank, 0);
    let e =
        session::comm_create_from_group(&Group::new(vec![]), "x", Errhandler::Return).unwrap_err();
    assert_eq!(e.class, ErrorClass::Group);
    dpm::disconnect(c).unwrap();
    assert_eq!(commops::snapshot(c).unwrap_err().class, ErrorClass::Comm);
    assert_eq!(dpm::disconnect(WORLD).unwrap_err().class, ErrorClass::Comm);

    session::finalize(s).unwrap();
    assert_eq!(session::finalize(s).unwrap_err().class, ErrorClass::Session);
    assert_eq!(session::check(s).unwrap_err().class, ErrorClass::Session);
    // The runtime stays up, dormant, for the next user.
    assert!(runtime::is_running());

    // Re-initialisation: a session again, then the world model joins it.
    let s2 = session::init(ThreadLevel::Single, Errhandler::Fatal).unwrap();
    assert_eq!(session::thread_level(s2).unwrap(), ThreadLevel::Single);
    assert_eq!(
        runtime::init(ThreadLevel::Single).unwrap(),
        ThreadLevel::Single
    );
    assert!(runtime::initialized());
    assert_eq!(commops::snapshot(WORLD).unwrap().ctx, 0);
    assert_eq!(commops::snapshot(SELF).unwrap().ctx, 2);
    assert_eq!(
        runtime::init(ThreadLevel::Single).unwrap_err().class,
        ErrorClass::Other
    );

    // MPI_Finalize with a session open ends the world model only.
    runtime::finalize().unwrap();
    assert!(runtime::finalized());
    assert!(runtime::is_running());
    assert_eq!(
        commops::snapshot(WORLD).unwrap_err().class,
        ErrorClass::Comm
    );
    let g = session::group_from_pset(s2, PSET_SELF).unwrap();
    let c = session::comm_create_from_group(&g, "core.test.after", Errhandler::Return).unwrap();
    assert!(commops::snapshot(c).unwrap().ctx >= 4);
    commops::comm_free(c).unwrap();
    session::finalize(s2).unwrap();
    // The world model cannot start again; sessions can.
    assert_eq!(
        runtime::init(ThreadLevel::Single).unwrap_err().class,
        ErrorClass::Other
    );
    assert_eq!(runtime::finalize().unwrap_err().class, ErrorClass::Other);
    let s3 = session::init(ThreadLevel::Funneled, Errhandler::Return).unwrap();
    assert_eq!(session::pset_members(s3, PSET_WORLD).unwrap(), vec![0]);
    session::finalize(s3).unwrap();
}
