//! IMPI 0.0 (Interoperable MPI) for oxmpi: the wire formats and protocol state machines
//! of the specification's startup/shutdown (chapter 2) and data-transfer (chapter 3)
//! protocols, with no I/O. `impirun` (the binary of this package) drives them over TCP.
//! The readings chosen where the specification's text is garbled or ambiguous are in
//! `docs/impi.md`.
//!
//! - [`wire`]: the `IMPI_Cmd` header, command codes, big-endian helpers.
//! - [`auth`]: `IMPI_AUTH_NONE` / `IMPI_AUTH_KEY`, masks, the server's choice.
//! - [`label`]: COLL labels, the client payload and the server's collated broadcast.
//! - [`job`]: what a client submits, and the job every client derives.
//! - [`server`]: the server state machine.
//! - [`client`]: the client state machine.
//! - [`packet`]: the 128-byte `IMPI_Packet` header and the packet types.
//! - [`protocol`]: message segmentation and per-pair flow control (spec 3.6, 3.7).
//! - [`finalize`]: a host channel's finalization (spec 3.8).
//! - [`extension`]: oxmpi's authenticated host connections, negotiated by a label.

pub mod auth;
pub mod client;
pub mod extension;
pub mod finalize;
pub mod job;
pub mod label;
pub mod packet;
pub mod protocol;
pub mod server;
pub mod wire;

pub use auth::AuthConfig;
pub use client::{Client, ClientConfig, Stage};
pub use job::{Job, LocalClient, LocalHost, LocalProc};
pub use label::{Collated, Version};
pub use packet::{Packet, PacketType, Proc};
pub use server::{Action, ConnId, Server, ServerConfig};
pub use wire::ProtocolError;
