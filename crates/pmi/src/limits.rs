//! Size limits shared by the codecs, the client and the server. Every length read from the
//! wire is checked against these before anything is allocated for it.

/// Longest KVS name the server hands out and the client accepts.
pub const MAX_KVSNAME_LEN: usize = 256;
/// Longest KVS key (the value advertised as `keylen_max`).
pub const MAX_KEY_LEN: usize = 64;
/// Longest KVS value in characters as stored (the value advertised as `vallen_max`).
pub const MAX_VALUE_LEN: usize = 1024;
/// Largest binary payload that [`crate::encode_value`] can turn into a value of at most
/// [`MAX_VALUE_LEN`] characters.
pub const MAX_BINARY_VALUE_LEN: usize = 767;
/// Longest single wire message: a PMI-1 line (or a whole `mcmd=` block) or a PMI-2 frame
/// body. Longer input is a protocol error.
pub const MAX_MESSAGE_LEN: usize = 65536;
/// Most attributes one message may carry.
pub const MAX_ATTRS: usize = 4096;
/// Longest attribute name on the wire.
pub const MAX_ATTR_NAME_LEN: usize = 64;
/// Longest abort message the client sends (longer ones are truncated).
pub const MAX_ABORT_MESSAGE_LEN: usize = 512;
