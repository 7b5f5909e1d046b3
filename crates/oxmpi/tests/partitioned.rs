//! In-process (singleton) test of partitioned communication in the Rust API: a send to
//! this process cut into 4 partitions, received in 2; partitions readied out of order,
//! `arrived` and `partition` before and after, the buffers lent out only when the
//! engine does not use them, restarts, and the errors of bad partition indices.

use oxmpi::partitioned::{PartitionedReceive, PartitionedSend};
use oxmpi::traits::*;
use oxmpi::ErrorClass;

#[test]
fn partitioned_to_self() {
    let universe = oxmpi::initialize().expect("initialize");
    let world = universe.world();
    let me = world.this_process();

    let mut out = [0i32; 8];
    let mut inbox = [0i32; 8];
    let mut send = PartitionedSend::new(&me, &mut out[..], 4, 11).unwrap();
    let mut recv = PartitionedReceive::new(&me, &mut inbox[..], 2, 11).unwrap();
    assert_eq!((send.partitions(), recv.partitions()), (4, 2));
    for run in 0..3 {
        send.buffer_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
            .for_each(|(k, v)| *v = 100 * run + k as i32);
        recv.start().unwrap();
        send.start().unwrap();
        assert!(send.buffer_mut().is_none() && recv.buffer().is_none());
        send.ready(3).unwrap();
        send.ready(2).unwrap();
        // Receive partition 1 is send partitions 2 and 3.
        while !recv.arrived(1).unwrap() {}
        assert_eq!(
            recv.partition(1).unwrap(),
            &[100 * run + 4, 100 * run + 5, 100 * run + 6, 100 * run + 7]
        );
        assert!(!recv.arrived(0).unwrap());
        assert!(recv.partition(0).is_none());
        assert!(send.partition_mut(3).is_none());
        assert!(send.partition_mut(0).is_some());
        assert_eq!(send.ready(2).unwrap_err().class(), ErrorClass::Request);
        assert_eq!(send.ready(4).unwrap_err().class(), ErrorClass::Arg);
        assert_eq!(recv.arrived(2).unwrap_err().class(), ErrorClass::Arg);
        send.ready_range(0, 1).unwrap();
        let s = recv.wait().unwrap();
        send.wait().unwrap();
        assert_eq!((s.source_rank(), s.tag(), s.count_of::<i32>()), (0, 11, 8));
        let want: Vec<i32> = (0..8).map(|k| 100 * run + k).collect();
        assert_eq!(recv.buffer().unwrap(), &want[..]);
        assert!(
            recv.arrived(0).unwrap(),
            "an inactive request's partitions have arrived"
        );
    }
    drop(send);
    drop(recv);

    // Bad shapes and wildcards.
    let mut b = [0u8; 10];
    assert_eq!(
        PartitionedSend::new(&me, &mut b[..], 3, 0)
            .err()
            .unwrap()
            .class(),
        ErrorClass::Arg
    );
    let any = world.any_process();
    assert_eq!(
        PartitionedReceive::new(&any, &mut b[..], 2, 0)
            .err()
            .unwrap()
            .class(),
        ErrorClass::Rank
    );
}
