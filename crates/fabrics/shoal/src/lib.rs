//! The Shoal rack as a fabric (§3, §7): N sans-IO nodes from `shoal-node`, the static schedule
//! and its Clos of circuit switches from `shoal-schedule`, driven slot by slot by the slotted
//! engine. Failures of nodes, links and switches, and header corruption, are injected here.

#![forbid(unsafe_code)]

pub mod bench;
pub mod bench_datacenter;
mod breakdown;
pub mod config;
mod endpoint;
mod fast;
mod host;
mod rack;
pub mod scenario;

pub use breakdown::{HEADER as BREAKDOWN_HEADER, Parts};
pub use config::{Engine, Failure, RackConfig};
pub use rack::ShoalRack;
pub use scenario::{RackSpec, RandomFailures, defaults};
pub use shoal_node::{MAX_LOW_CLASS_QUEUE_CELLS, MAX_NODES};
