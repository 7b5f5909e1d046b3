//! In-process test of the tool information interface as a singleton: a control variable
//! written before `MPI_Init` is the value MPI runs with, a run-time write changes the
//! algorithm collectives use, and a session counts the messages and bytes this process
//! sends to itself exactly. MPI can be initialised once per process, so this file holds
//! a single test.

use oxmpi::tools::{Class, CvarValue, PvarValue, Tools};
use oxmpi::traits::*;

#[test]
fn tools_before_during_and_after_mpi() {
    let tools = Tools::init().expect("MPI_T_init_thread");
    let cvars = tools.cvars();
    assert!(cvars.iter().any(|c| c.name == "OXMPI_SHM_EAGER_LIMIT"));
    assert!(cvars.iter().all(|c| !c.description.is_empty()));
    let pvars = tools.pvars();
    let sent = pvars
        .iter()
        .find(|p| p.name == "p2p_bytes_sent")
        .expect("p2p_bytes_sent");
    assert!(sent.per_rank && sent.class == Class::Counter && !sent.continuous);

    // Before MPI_Init.
    assert_eq!(tools.read_cvar("OXMPI_YIELD").unwrap(), CvarValue::U64(200));
    tools
        .write_cvar("OXMPI_YIELD", &CvarValue::U64(33))
        .expect("write before MPI_Init");
    assert!(tools
        .write_cvar("no_such_variable", &CvarValue::U64(1))
        .is_err());
    let universe = oxmpi::initialize().expect("initialize");
    let world = universe.world();
    assert_eq!(tools.read_cvar("OXMPI_YIELD").unwrap(), CvarValue::U64(33));
    // A variable MPI_Init reads cannot change now.
    let e = tools
        .write_cvar("OXMPI_SHM_NO_CMA", &CvarValue::Int(1))
        .unwrap_err();
    assert_eq!(e.code(), 68, "{e}");

    let session = tools.session().expect("session");
    let msgs = session
        .pvar("p2p_messages_sent", Some(&world))
        .expect("handle");
    let bytes = session
        .pvar("p2p_bytes_sent", Some(&world))
        .expect("handle");
    let recvd = session
        .pvar("p2p_bytes_received", Some(&world))
        .expect("handle");
    assert_eq!(msgs.count(), 1);
    for p in [&msgs, &bytes, &recvd] {
        p.start().unwrap();
    }
    let me = world.this_process();
    me.send(&[1u32, 2, 3][..]).unwrap();
    let (_, _) = me.receive_vec::<u32>().unwrap();
    me.send(&[9u8; 5][..]).unwrap();
    let (_, _) = me.receive_vec::<u8>().unwrap();
    for p in [&msgs, &bytes, &recvd] {
        p.stop().unwrap();
    }
    assert_eq!(msgs.read().unwrap(), PvarValue::U64(vec![2]));
    assert_eq!(bytes.read().unwrap(), PvarValue::U64(vec![17]));
    assert_eq!(recvd.read().unwrap(), PvarValue::U64(vec![17]));
    // Stopped: nothing more counts.
    me.send(&[0u8; 3][..]).unwrap();
    let (_, _) = me.receive_vec::<u8>().unwrap();
    assert_eq!(bytes.read().unwrap(), PvarValue::U64(vec![17]));
    bytes.reset().unwrap();
    assert_eq!(bytes.read().unwrap(), PvarValue::U64(vec![0]));
    let queue = session
        .pvar("p2p_unexpected_queue_length", None)
        .expect("handle");
    assert_eq!(queue.read().unwrap(), PvarValue::U64(vec![0]));
    assert!(queue.start().is_err());
    drop(session);
    drop(universe);
    // After MPI_Finalize: readable, no longer writable (MPI_T_ERR_CVAR_SET_NEVER).
    assert_eq!(tools.read_cvar("OXMPI_YIELD").unwrap(), CvarValue::U64(33));
    let e = tools
        .write_cvar("OXMPI_YIELD", &CvarValue::U64(1))
        .unwrap_err();
    assert_eq!(e.code(), 69, "{e}");
}
