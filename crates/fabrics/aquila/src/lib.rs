//! Aquila (NSDI 2022): a ToR-in-NIC (TiN) chip that is both a NIC and a cell switch, TiNs wired
//! as a Dragonfly clique, GNet cells on credit-flow-controlled links.
//!
//! - [`wire`]: the GNet cell and its 8-byte routing header (§3.1), zero-copy view and `Repr`.

#![forbid(unsafe_code)]

pub mod wire;
