//! Hostile input: arbitrary bytes, cut anywhere, never make a decoder or state machine
//! panic, and a server fed garbage never reports the job finished.

use oxmpi_impi::packet::PacketStream;
use oxmpi_impi::wire::encode_cmd;
use oxmpi_impi::*;
use proptest::prelude::*;

fn local() -> LocalClient {
    LocalClient {
        versions: vec![Version::V0_0],
        datalen: 100,
        tagub: 32767,
        coll_xsize: -1,
        coll_maxlinear: -1,
        hosts: vec![LocalHost {
            ipv6: [1; 16],
            port: 5000,
            ackmark: 1,
            hiwater: 2,
            procs: vec![LocalProc {
                ipv6: [1; 16],
                pid: 1,
            }],
        }],
        extra_labels: Vec::new(),
        host_auth: false,
    }
}

/// Well-formed prefixes, so that the garbage reaches the later stages too.
fn prefix(kind: u8) -> Vec<u8> {
    let mut v = encode_cmd(wire::CMD_AUTH, &2u32.to_be_bytes());
    if kind > 0 {
        v.extend_from_slice(&7u64.to_be_bytes());
    }
    if kind > 1 {
        v.extend_from_slice(&encode_cmd(wire::CMD_IMPI, &0i32.to_be_bytes()));
    }
    v
}

proptest! {
    #[test]
    fn server_survives_garbage(kind in 0u8..3, junk in proptest::collection::vec(any::<u8>(), 0..600), cut in 0usize..700) {
        let mut s = Server::new(ServerConfig { nclients: 2, auth: AuthConfig { none: true, key: Some(7) }, preference: None }).unwrap();
        s.connected(0, "fuzz");
        let mut bytes = prefix(kind);
        bytes.extend_from_slice(&junk);
        let cut = cut.min(bytes.len());
        s.received(0, &bytes[..cut]);
        s.received(0, &bytes[cut..]);
        s.closed(0);
        while let Some(a) = s.poll_action() {
            prop_assert!(a != Action::Finished);
        }
    }

    #[test]
    fn client_survives_garbage(junk in proptest::collection::vec(any::<u8>(), 0..600), cut in 0usize..700, impi in any::<bool>()) {
        let mut c = Client::new(ClientConfig { rank: 0, auth: AuthConfig { none: true, key: Some(7) }, local: local() }).unwrap();
        let mut bytes = vec![0, 0, 0, 1, 0, 0, 0, 0];
        if impi {
            bytes.extend_from_slice(&encode_cmd(wire::CMD_IMPI, &1i32.to_be_bytes()));
        }
        bytes.extend_from_slice(&junk);
        let cut = cut.min(bytes.len());
        if c.received(&bytes[..cut]).is_ok() {
            let _ = c.received(&bytes[cut..]);
        }
        let _ = c.closed();
    }

    #[test]
    fn packet_stream_survives_garbage(junk in proptest::collection::vec(any::<u8>(), 0..1000), cut in 0usize..1000) {
        let mut p = PacketStream::new(64);
        let cut = cut.min(junk.len());
        for part in [&junk[..cut], &junk[cut..]] {
            p.push(part);
            while let Ok(Some((h, data))) = p.next_packet() {
                prop_assert_eq!(data.len(), h.payload_len());
                prop_assert!(data.len() <= 64);
            }
        }
    }

    #[test]
    fn job_from_arbitrary_broadcasts(labels in proptest::collection::vec((0x1000i32..0x3200, any::<u32>(), proptest::collection::vec(any::<u8>(), 0..64)), 0..16), n in 1u32..40) {
        let labels: Vec<Collated> = labels.into_iter().map(|(label, client_mask, data)| Collated { label, client_mask, data }).collect();
        let _ = Job::from_collated(labels, 0, n);
    }
}
