//! Aquila's SDN control plane (§4) as event simulations: the in-band bootstrap of a clique in
//! waves ([`bootstrap`](mod@bootstrap)) and its `[bootstrap]` scenario table ([`table`]); links failing
//! under load, avoided by adaptive routing and then removed by the SDN ([`failure`]), and its
//! `[failure]` table ([`failure_table`]).

pub mod bootstrap;
pub mod failure;
pub mod failure_table;
pub mod table;

pub use bootstrap::{Bootstrap, Plan, Timing, TinBoot, bootstrap};
