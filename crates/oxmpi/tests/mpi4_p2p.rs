//! In-process (singleton) test of the MPI-4 point-to-point additions of the Rust API:
//! immediate send-receive (with and without replace), reading a request's status
//! without finishing it, communicator hints and what they refuse, and flushing the
//! buffered-send buffer. MPI can be initialised once per process, so this file holds a
//! single test.

use oxmpi::buffer::{buffered_size, BufferAttachment};
use oxmpi::info::Info;
use oxmpi::point_to_point::{immediate_send_receive_into, immediate_send_receive_replace_into};
use oxmpi::request;
use oxmpi::traits::*;
use oxmpi::ErrorClass;

#[test]
fn mpi4_point_to_point() {
    let universe = oxmpi::initialize().expect("initialize");
    let world = universe.world();
    let me = world.this_process();

    // Immediate send-receive: the request's status is the receive's.
    let out = [1u32, 2, 3];
    let mut got = [0u32; 3];
    request::scope(|scope| {
        let r = immediate_send_receive_into(scope, &out[..], &me, 5, &mut got[..], &me, 5).unwrap();
        let s = r.wait().unwrap();
        assert_eq!((s.source_rank(), s.tag(), s.count_of::<u32>()), (0, 5, 3));
    });
    assert_eq!(got, out);

    // With replace, finished by polling test().
    let mut buf = [10i64, 20, 30, 40];
    request::scope(|scope| {
        let mut r =
            immediate_send_receive_replace_into(scope, &mut buf[..], &me, 6, &me, 6).unwrap();
        let s = loop {
            match r.test().unwrap() {
                Ok(s) => break s,
                Err(again) => r = again,
            }
        };
        assert_eq!((s.tag(), s.count_of::<i64>()), (6, 4));
    });
    assert_eq!(buf, [10, 20, 30, 40]);

    // A receive buffer too short: truncation when the request is finished.
    let big = [7u8; 16];
    let mut small = [0u8; 4];
    request::scope(|scope| {
        let r =
            immediate_send_receive_into(scope, &big[..], &me, 8, &mut small[..], &me, 8).unwrap();
        assert_eq!(r.wait().unwrap_err().class(), ErrorClass::Truncate);
    });

    // get_status reads the status without finishing the request.
    let mut inbox = [0u16; 2];
    request::scope(|scope| {
        let r = me
            .immediate_receive_into_with_tag(scope, &mut inbox[..], 9)
            .unwrap();
        assert!(r.get_status().unwrap().is_none());
        me.send_with_tag(&[4u16, 5][..], 9).unwrap();
        let s = loop {
            if let Some(s) = r.get_status().unwrap() {
                break s;
            }
        };
        assert_eq!((s.tag(), s.count_of::<u16>()), (9, 2));
        let again = r.get_status().unwrap().expect("still complete");
        assert_eq!(again, s);
        assert_eq!(r.wait().unwrap(), s);
    });
    assert_eq!(inbox, [4, 5]);

    // Communicator hints: defaults, a duplicate with assertions, what they refuse.
    let h = world.hints().unwrap();
    assert!(!h.no_any_tag && !h.no_any_source && !h.exact_length && !h.allow_overtaking);
    let mut info = Info::new();
    info.set("mpi_assert_no_any_source", "true").unwrap();
    info.set("mpi_assert_no_any_tag", "true").unwrap();
    let asserted = world.duplicate_with_info(&info).unwrap();
    let h = asserted.hints().unwrap();
    assert!(h.no_any_tag && h.no_any_source && !h.exact_length);
    let used = asserted.info().unwrap();
    assert_eq!(
        used.get("mpi_assert_no_any_source").unwrap().as_deref(),
        Some("true")
    );
    assert_eq!(
        used.get("mpi_assert_allow_overtaking").unwrap().as_deref(),
        Some("false")
    );
    assert!(world.duplicate().unwrap().hints().unwrap() == world.hints().unwrap());
    assert!(asserted.duplicate().unwrap().hints().unwrap().no_any_tag);
    let e = asserted
        .any_process()
        .immediate_probe_with_tag(0)
        .unwrap_err();
    assert_eq!(e.class(), ErrorClass::Rank);
    let e = asserted.this_process().immediate_probe().unwrap_err();
    assert_eq!(e.class(), ErrorClass::Tag);
    asserted.this_process().send_with_tag(&3u8, 2).unwrap();
    let (v, _) = asserted.this_process().receive_with_tag::<u8>(2).unwrap();
    assert_eq!(v, 3);
    let mut lift = Info::new();
    lift.set("mpi_assert_no_any_source", "false").unwrap();
    asserted.set_info(&lift).unwrap();
    let h = asserted.hints().unwrap();
    assert!(h.no_any_tag && !h.no_any_source);
    assert!(asserted
        .any_process()
        .immediate_probe_with_tag(0)
        .unwrap()
        .is_none());

    // Flushing the buffered-send buffer keeps it attached.
    let buffer = BufferAttachment::new(buffered_size::<u64>(8) * 2).unwrap();
    me.buffered_send_with_tag(&[1u64; 8][..], 12).unwrap();
    let (v, _) = me.receive_vec_with_tag::<u64>(12).unwrap();
    assert_eq!(v, vec![1u64; 8]);
    buffer.flush().unwrap();
    me.buffered_send_with_tag(&[2u64; 8][..], 13).unwrap();
    let (v, _) = me.receive_vec_with_tag::<u64>(13).unwrap();
    assert_eq!(v, vec![2u64; 8]);
    buffer.detach().unwrap();
}
