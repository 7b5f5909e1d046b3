//! In-process test of the whole life cycle as a singleton (no launcher): MPI can be
//! initialised once per process, so this file holds a single test that walks through
//! initialisation, self-communication, errors, finalization and use afterwards.

use oxmpi::point_to_point::send_receive_replace_into;
use oxmpi::request;
use oxmpi::traits::*;
use oxmpi::ErrorClass;

#[test]
fn singleton_life_cycle() {
    assert!(!oxmpi::is_initialized());
    let (universe, provided) =
        oxmpi::initialize_with_threading(oxmpi::Threading::Multiple).expect("initialize");
    assert!(provided <= oxmpi::Threading::Multiple);
    // The truth: the engine's highest level, as MPI_INFO_ENV reports it too.
    assert_eq!(
        provided.name(),
        oxmpi_core::runtime::MAX_THREAD_LEVEL.name()
    );
    assert_eq!(universe.threading_support(), provided);
    let env = oxmpi::info::Info::environment();
    assert_eq!(
        env.get("thread_level").unwrap().as_deref(),
        Some(provided.name())
    );
    assert_eq!(env.get("maxprocs").unwrap().as_deref(), Some("1"));
    assert!(oxmpi::is_initialized() && !oxmpi::is_finalized());
    let world = universe.world();
    assert_eq!((world.rank(), world.size()), (0, 1));
    let me = world.this_process();

    // Messages to oneself, in every representation.
    me.send_with_tag(&[1.5f64, 2.5], 3).unwrap();
    let (v, s) = me.receive_with_tag::<[f64; 2]>(3).unwrap();
    assert_eq!(v, [1.5, 2.5]);
    assert_eq!((s.source_rank(), s.tag(), s.count_of::<f64>()), (0, 3, 2));

    let words: Vec<u16> = (0..1000).collect();
    me.send(&words[..]).unwrap();
    let (got, _) = world.any_process().receive_vec::<u16>().unwrap();
    assert_eq!(got, words);

    let mut x = [7i32, 8, 9];
    let s = send_receive_replace_into(&mut x[..], &me, &me).unwrap();
    assert_eq!((x, s.count_of::<i32>()), ([7, 8, 9], 3));

    // Immediate operations and the scope.
    let mut inbox = [0u64; 4];
    let outbox = [11u64, 12, 13, 14];
    request::scope(|scope| {
        let r = me.immediate_receive_into(scope, &mut inbox).unwrap();
        let s = me.immediate_synchronous_send(scope, &outbox).unwrap();
        let mut all = vec![s, r];
        let st = request::wait_all(&mut all).unwrap();
        assert_eq!(st[1].count_of::<u64>(), 4);
    });
    assert_eq!(inbox, outbox);

    // Self communicator.
    let solo = universe.self_comm();
    solo.process_at_rank(0).send(&true).unwrap();
    let (b, _) = solo.any_process().receive::<bool>().unwrap();
    assert!(b);
    // Messages do not cross communicators.
    assert!(world.any_process().immediate_probe().unwrap().is_none());

    // Errors.
    let e = world.process_at_rank(1).send(&0u8).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Rank);
    assert_eq!(
        e.message(),
        "send: MPI_ERR_RANK: invalid rank 1 (communicator size 1)"
    );
    let e = oxmpi::initialize().unwrap_err();
    assert_eq!(e.class(), ErrorClass::Other);

    // Finalize; afterwards calls fail cleanly instead of misbehaving.
    universe.finalize().expect("finalize");
    assert!(oxmpi::is_finalized());
    let e = me.send(&1u8).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Other);
    assert!(
        e.message()
            .starts_with("send: MPI_ERR_OTHER: MPI has already been finalized"),
        "{e}"
    );
    let e = oxmpi::initialize().unwrap_err();
    assert!(e.message().contains("already initialized"), "{e}");
    let e = oxmpi::buffer::BufferAttachment::new(16).unwrap_err();
    assert_eq!(e.class(), ErrorClass::Other);
}
