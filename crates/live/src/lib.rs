//! A live Shoal rack: the unchanged sans-IO [`shoal_node::Node`] driven in real time, its cells
//! on the wire in the paper's exact format, through a software circuit switch that forwards by
//! the verified schedule (DESIGN.md, principle 1: the node of the simulator runs over real
//! sockets).
//!
//! - [`driver`]: one node's slot loop, paced by `CLOCK_MONOTONIC` ([`clock`]), in the
//!   simulator's order (receive what was sent `d` slots ago, then transmit); late slots counted
//!   and caught up, never hidden.
//! - [`switch`]: the circuit switches as one process, forwarding by the port maps of
//!   `shoal-schedule` ([`fabric`]), counting schedule violations, injecting header corruption.
//! - [`datagram`]: a cell on a UDP link (a 16-byte shim, then the 64-byte cell).
//! - [`arena`]: the payload bytes behind the node's payload handles.
//! - [`flows`]: a host running a flow list and checking every byte.
//! - [`loopback`]: a rack on threads over loopback sockets.
//! - [`pcap`]: captures (DLT 147) of the cells on a node's link.

pub mod arena;
pub mod clock;
pub mod compare;
pub mod datagram;
pub mod demo;
pub mod driver;
pub mod events;
pub mod fabric;
pub mod flows;
pub mod loopback;
pub mod netns;
pub mod pcap;
pub mod switch;
pub mod tun;
