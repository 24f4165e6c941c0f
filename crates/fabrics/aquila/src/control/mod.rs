//! Aquila's SDN control plane (§4) as event simulations: the in-band bootstrap of a clique in
//! waves ([`bootstrap`]) and its `[bootstrap]` scenario table ([`table`]).

pub mod bootstrap;
pub mod table;

pub use bootstrap::{Bootstrap, Plan, Timing, TinBoot, bootstrap};
