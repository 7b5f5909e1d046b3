//! In-process tests of the TCP transport: two ranks' transports on loopback exchange
//! eager packets and a large streamed piece (written from and read into buffers
//! directly, across many partial writes), and a stranger is refused.

use super::*;
use std::io::{Read, Write};

#[derive(Default)]
struct Rec {
    packets: Vec<(u32, Header, Vec<u8>)>,
    target: Vec<u8>,
    landed: u64,
}

impl Sink for Rec {
    fn packet(&mut self, from: u32, hdr: Header, payload: &[u8]) {
        if hdr.kind == Kind::Data {
            let off = hdr.addr as usize;
            self.target[off..off + payload.len()].copy_from_slice(payload);
            self.landed += payload.len() as u64;
        } else {
            self.packets.push((from, hdr, payload.to_vec()));
        }
    }
    fn data_target(&mut self, _from: u32, hdr: &Header) -> Option<*mut u8> {
        let end = hdr.addr.checked_add(hdr.len)? as usize;
        (end <= self.target.len()).then(|| {
            // SAFETY: addr < end <= target.len().
            unsafe { self.target.as_mut_ptr().add(hdr.addr as usize) }
        })
    }
    fn data_landed(&mut self, _from: u32, hdr: &Header) {
        self.landed += hdr.len;
    }
}

fn settings() -> TcpSettings {
    TcpSettings {
        connect_timeout: Duration::from_secs(10),
        debug: false,
    }
}

fn pair() -> (TcpNet, TcpNet) {
    let la = Listener::open(Some("127.0.0.1"), None).unwrap();
    let lb = Listener::open(Some("127.0.0.1"), None).unwrap();
    let (aa, _) = parse_card(&la.card()).unwrap();
    let (ab, _) = parse_card(&lb.card()).unwrap();
    let peers = vec![Some(aa), Some(ab)];
    let a = TcpNet::new(0, 2, b"k".to_vec(), la, peers.clone(), None, settings()).unwrap();
    let b = TcpNet::new(1, 2, b"k".to_vec(), lb, peers, None, settings()).unwrap();
    (a, b)
}

fn until(mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(20), "no progress");
    }
}

#[test]
fn eager_packets_both_ways_in_order() {
    let (mut a, mut b) = pair();
    let (mut ra, mut rb) = (Rec::default(), Rec::default());
    let mut h = Header::new(Kind::Eager);
    for i in 0..100u64 {
        h.tag = i as i32;
        h.len = i;
        let payload = vec![i as u8; i as usize];
        until(|| {
            a.poll(&mut ra);
            b.poll(&mut rb);
            a.try_send(1, &h, &payload)
        });
    }
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        rb.packets.len() == 100
    });
    for (i, (from, hdr, p)) in rb.packets.iter().enumerate() {
        assert_eq!((*from, hdr.tag, p.len()), (0, i as i32, i));
        assert!(p.iter().all(|&x| x == i as u8));
    }
    // The reply uses the connection rank 0 opened.
    h.tag = 7;
    h.len = 3;
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        b.try_send(0, &h, b"abc")
    });
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        !ra.packets.is_empty()
    });
    assert_eq!(ra.packets[0].2, b"abc");
    assert_eq!(a.conns.iter().flatten().count(), 1);
    assert!(!a.has_outgoing());
}

#[test]
fn large_piece_streams_between_buffers() {
    let (mut a, mut b) = pair();
    let (mut ra, mut rb) = (Rec::default(), Rec::default());
    let n = 24 << 20;
    let src: Vec<u8> = (0..n).map(|i| (i * 7 + i / 4096) as u8).collect();
    rb.target = vec![0; n];
    let mut h = Header::new(Kind::Data);
    h.len = n as u64;
    h.rreq = 5;
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        // SAFETY: src outlives the loop, which runs until the transport lets go of it.
        unsafe { a.try_send_borrowed(1, &h, src.as_ptr(), n, 99) }
    });
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        !a.holds(1, 99) && rb.landed == n as u64
    });
    assert!(rb.target == src, "streamed bytes differ");
    assert!(!a.has_outgoing());
}

#[test]
fn stranger_is_refused_and_the_rank_goes_on() {
    let (mut a, mut b) = pair();
    let (mut ra, mut rb) = (Rec::default(), Rec::default());
    let addr = b.listener.local_addr().unwrap();
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.write_all(b"GET / HTTP/1.0\r\n\r\nxxxxxxxxxxxxxxxxxxxx")
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    until(|| {
        b.poll(&mut rb);
        b.refused == 1 && b.unauthenticated == 0 && b.conns.iter().flatten().count() == 0
    });
    let mut buf = [0u8; 8];
    assert_eq!(
        s.read(&mut buf).unwrap_or(0),
        0,
        "the stranger got an answer"
    );
    // A real peer still gets through.
    let mut h = Header::new(Kind::Fin);
    h.sreq = 3;
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        a.try_send(1, &h, &[])
    });
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        rb.packets.len() == 1
    });
    assert_eq!(rb.packets[0].1.sreq, 3);
}

#[test]
fn simultaneous_dials_keep_order_per_direction() {
    let (mut a, mut b) = pair();
    let (mut ra, mut rb) = (Rec::default(), Rec::default());
    let mut h = Header::new(Kind::Eager);
    h.len = 1;
    // Both ranks dial before either polls: two connections, one per direction.
    assert!(!a.try_send(1, &h, b"x"));
    assert!(!b.try_send(0, &h, b"y"));
    let (mut sa, mut sb) = (0, 0);
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        h.tag = sa;
        if sa < 50 && a.try_send(1, &h, b"x") {
            sa += 1;
        }
        h.tag = sb;
        if sb < 50 && b.try_send(0, &h, b"y") {
            sb += 1;
        }
        ra.packets.len() == 50 && rb.packets.len() == 50
    });
    assert_eq!(a.conns.iter().flatten().count(), 2);
    for (i, p) in rb.packets.iter().enumerate() {
        assert_eq!((p.0, p.1.tag, p.2.as_slice()), (0, i as i32, &b"x"[..]));
    }
    for (i, p) in ra.packets.iter().enumerate() {
        assert_eq!((p.0, p.1.tag, p.2.as_slice()), (1, i as i32, &b"y"[..]));
    }
}

#[test]
fn a_peer_that_closes_is_a_failure_taken_once() {
    let (mut a, mut b) = pair();
    let (mut ra, mut rb) = (Rec::default(), Rec::default());
    let h = Header::new(Kind::Eager);
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        a.try_send(1, &h, b"")
    });
    until(|| {
        a.poll(&mut ra);
        b.poll(&mut rb);
        !rb.packets.is_empty()
    });
    assert_eq!(a.take_failure(), None);
    drop(b);
    let mut failure = None;
    until(|| {
        a.poll(&mut ra);
        failure = a.take_failure();
        failure.is_some()
    });
    let msg = failure.expect("failed");
    assert!(
        msg.starts_with("rank 1 (127.0.0.1:")
            && msg.ends_with(") closed its TCP connection unexpectedly (did it exit or crash?)"),
        "{msg}"
    );
    assert_eq!(a.take_failure(), None, "reported once");
}

#[test]
fn a_rank_without_an_address_is_a_failure_not_an_exit() {
    let la = Listener::open(Some("127.0.0.1"), None).unwrap();
    let (aa, _) = parse_card(&la.card()).unwrap();
    let mut a = TcpNet::new(
        0,
        2,
        b"k".to_vec(),
        la,
        vec![Some(aa), None],
        None,
        settings(),
    )
    .unwrap();
    assert!(!a.try_send(1, &Header::new(Kind::Eager), b"x"));
    assert_eq!(
        a.take_failure().as_deref(),
        Some("rank 1 cannot be reached: its business card has no TCP address")
    );
}

#[test]
fn dials_given_up_by_their_dialer_are_told_from_failed_handshakes() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let _dialer = std::net::TcpStream::connect(addr).unwrap();
    let (sock, from) = l.accept().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut c = Conn::new(sock, from, None, Phase::AwaitHello { deadline });
    // Nothing received: the dialer said nothing and claimed nothing.
    assert!(c.abandoned_dial(2));
    // Part of a greeting received: a failed handshake, reported.
    c.make_room(1);
    c.rx_end = 1;
    assert!(!c.abandoned_dial(2));
    let (ni, na) = ([0u8; 16], [0u8; 16]);
    // A dialer of this job that stops before its proof is reported; one of another job
    // (rank 2 or above in a job of 2) may have exited.
    c.phase = Phase::AwaitProof {
        from: 1,
        ni,
        na,
        deadline,
    };
    assert!(!c.abandoned_dial(2));
    c.phase = Phase::AwaitProof {
        from: 2,
        ni,
        na,
        deadline,
    };
    assert!(c.abandoned_dial(2));
    c.phase = Phase::Open;
    assert!(!c.abandoned_dial(2));
}
