//! Process-management interface (PMI-1 "simple PMI" and PMI-2) for oxmpi: wire codecs,
//! the client the MPI library uses to learn its rank and exchange business cards, and
//! the server state machine `mpiexec` drives.
//!
//! Layout:
//! - [`message`]: the protocol-neutral [`Message`] (a command name plus ordered attributes).
//! - [`v1`] / [`v2`]: encoders and parsers for the PMI-1 line format and the PMI-2
//!   length-prefixed format.
//! - [`decoder`]: [`StreamDecoder`], which cuts a byte stream into messages (either wire,
//!   including detection of the wire from the first bytes and PMI-1 `mcmd=` blocks).
//! - [`value`]: [`encode_value`] / [`decode_value`] for storing binary data in the KVS.
//! - [`mapping`]: parsing of `PMI_process_mapping` (which node each rank runs on).
//! - [`client`]: the blocking [`Client`] used by the MPI library.
//! - [`server`]: the sans-IO [`Server`] state machine used by `mpiexec`.
//! - [`spawn`]: spawn requests (`MPI_Comm_spawn`) as the server receives them.
//! - [`names`]: the name service table the server answers name publishing from.
//! - [`namewire`]: the line protocol of the standalone name server (`oxmpi-nameserver`).
//!
//! Nothing in this crate except [`client`] performs I/O.

pub mod client;
pub mod decoder;
pub mod error;
pub mod limits;
pub mod mapping;
pub mod message;
pub mod names;
pub mod namewire;
pub mod server;
pub mod spawn;
pub mod spawn_info;
pub mod v1;
pub mod v2;
pub mod value;

pub use client::{Client, PmiVersion};
pub use decoder::{Decoded, StreamDecoder, Wire};
pub use error::{CodecError, PmiError};
pub use mapping::{format_process_mapping, parse_process_mapping};
pub use message::Message;
pub use server::{ConnId, Event, JobConfig, RankState, Server};
pub use value::{decode_value, encode_value};
