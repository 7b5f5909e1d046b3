//! Read-only views of the device's queues for the MPI tools interface (`MPI_T`
//! performance variables): computed when a tool reads them, so the matching and
//! progress paths count nothing.

use super::Device;

impl Device {
    /// Messages that arrived before a matching receive was posted and still wait for
    /// one (all communicators; collective traffic included).
    pub fn unexpected_len(&self) -> usize {
        self.proto.matcher.unexpected_len()
    }

    /// Receives posted and not yet matched by an arrived message (all communicators;
    /// collective traffic included).
    pub fn posted_len(&self) -> usize {
        self.proto.matcher.posted_len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::matching::{Envelope, Matcher, Spec, ANY_SOURCE, ANY_TAG};

    #[test]
    fn queue_lengths_follow_posts_arrivals_and_matches() {
        let mut m: Matcher<u32, u32> = Matcher::new();
        assert_eq!((m.unexpected_len(), m.posted_len()), (0, 0));
        let env = |ctx, src, tag| Envelope { ctx, src, tag };
        m.push_unexpected(env(0, 1, 5), 10);
        m.push_unexpected(env(4, 2, 5), 11);
        m.post(
            Spec {
                ctx: 0,
                src: 3,
                tag: 1,
            },
            20,
        );
        m.post(
            Spec {
                ctx: 6,
                src: ANY_SOURCE,
                tag: ANY_TAG,
            },
            21,
        );
        assert_eq!((m.unexpected_len(), m.posted_len()), (2, 2));
        assert_eq!(m.take_posted(env(6, 0, 9)), Some(21));
        assert!(m
            .take_unexpected(Spec {
                ctx: 4,
                src: 2,
                tag: 5
            })
            .is_some());
        assert_eq!((m.unexpected_len(), m.posted_len()), (1, 1));
    }
}
