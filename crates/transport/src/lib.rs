//! Transports for the packet-switched baselines, as sans-IO state machines: the driver passes
//! time and received segments in and drains segments to send and the next wake-up out
//! ([`endpoint`]), exactly as the Shoal node is driven, so the discrete-event simulator, tests
//! and a live emulator run the same code.
//!
//! - [`segment`]: the header fields a transport puts on the wire (no payload bytes).
//! - [`reorder`]: in-order delivery at receivers.
//! - [`tcp`]: TCP NewReno and DCTCP.
//! - [`dcqcn`]: DCQCN (rate-based RoCEv2 congestion control with go-back-N).
//! - [`mptcp`]: MPTCP, NewReno subflows under RFC 6356's coupled increase (LIA).
//! - [`ndp`]: NDP (trimming, per-packet acks and nacks, receiver-paced pulls).

#![forbid(unsafe_code)]

pub mod dcqcn;
pub mod endpoint;
pub mod mptcp;
pub mod ndp;
pub mod r2c2;
pub mod reorder;
pub mod segment;
pub mod tcp;

pub use dcqcn::{Dcqcn, DcqcnConfig, DcqcnReceiver, DcqcnSender};
pub use endpoint::{Receiver, Sender, Transport};
pub use mptcp::{Mptcp, MptcpConfig, MptcpReceiver, MptcpSender};
pub use ndp::{Ndp, NdpConfig, NdpReceiver, NdpSender};
pub use r2c2::{R2c2, R2c2Config, R2c2Receiver, R2c2Sender};
pub use segment::{Kind, Segment};
pub use tcp::{Tcp, TcpConfig, TcpReceiver, TcpSender};
