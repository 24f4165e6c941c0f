//! The Shoal node as a sans-IO state machine (§3.3, §3.5, App. C and D of the Shoal paper).
//!
//! A [`Node`] owns no clock, socket or simulator type. Its driver — the slotted simulator, a
//! unit test, or the live emulator — tells it the slot number and hands it what arrived; it
//! answers with exactly one cell per channel-slot and queues in-order deliveries and events for
//! the driver to drain:
//!
//! ```text
//!   submit(slot, dst, class, bytes, ..)   host data in
//!   handle_rx(slot, from, Rx)             one expected reception: a cell, a corrupt cell, or nothing
//!   poll_tx(slot, to) -> Option<Frame>    the cell for this channel-slot (None: the peer has failed)
//!   poll_tx_into(slot, to, &mut Rx)       the same, written in place (the simulator's delay line)
//!   poll_delivered() / poll_event()       in-order payload out; failures and aborted flows
//! ```
//!
//! Inside: per-destination FIFO queues `Q_ij`; detour of every local cell through the node it is
//! connected to next; the backpressure congestion control of Eq. 1-2 with per-subflow windows of
//! one cell; the ready queues and feedback of Eq. 4-6 and the 2^age rule (§3.3.3); reassembly by
//! sequence number; failure detection and the four reactions of §3.5; strict-priority traffic
//! classes with per-class feedback and tail drop (App. C); retransmission of the last cell after
//! corruption (App. D).

#![forbid(unsafe_code)]

pub mod config;
mod failure;
pub mod flow;
pub mod frame;
mod node;
mod peer;
pub mod reasm;
mod source;
pub mod stats;
pub mod wire;

pub use config::{ConfigError, MAX_LOW_CLASS_QUEUE_CELLS, MAX_NODES, NodeConfig};
pub use flow::Payload;
pub use frame::{CellRec, Frame, Kind, MAX_FEEDBACK, Rx, SEQ_MODULUS};
pub use node::{Delivery, Event, Node, SubmitError};
pub use stats::NodeStats;
