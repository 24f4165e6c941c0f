//! The leaf crate of shoal: simulated time as integer picoseconds, node/channel ids, link rates,
//! seeded random streams and the slab of FIFO queues the models share. Every other crate may depend on it; it depends on nothing of ours.
//!
//! Time is never a float (DESIGN.md, principle 2): a 64 B cell at 100 Gb/s is exactly 5,120 ps,
//! and u64 picoseconds cover 213 days of simulated time.

pub mod fifo;
pub mod hint;
pub mod ids;
pub mod par;
pub mod rate;
pub mod rng;
pub mod time;

pub use fifo::{Fifo, Slab};
pub use ids::{ChannelId, NodeId};
pub use rate::Rate;
pub use time::{Dur, Time};
