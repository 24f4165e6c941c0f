//! Aquila (NSDI 2022): a ToR-in-NIC (TiN) chip that is both a NIC and a cell switch, TiNs wired
//! as a Dragonfly clique, GNet cells on credit-flow-controlled links.
//!
//! - [`bench`](mod@bench): `shoal bench --aquila`, cell-hops per second on a clique at full load.
//! - [`bounds`]: saturation bounds from the clique's own wiring (exact expected channel loads).
//! - [`cdg`]: the channel dependency graph of a routing mode, and a cycle finder.
//! - [`control`]: the SDN control plane (§4): the in-band bootstrap in waves, link failures.
//! - [`escape`]: the escape routes on VCs 30 and 31 for destinations a removed link cut off.
//! - [`cliquemap`]: CliqueMap-like key-value lookups (§5), by 1RMA or by IP RPC.
//! - [`ipgnet`]: IP over GNet (§3.3), the RTS/CTS/CTD ingress and egress, sans-IO.
//! - [`islip`]: the crossbar arbiter, one request per (input port, VC).
//! - [`rma`]: 1RMA (§3.4): Req and Resp cells, the PCIe model at the target.
//! - [`routing`]: the Dragonfly's table-based routes, VC levels and routing modes (§3.2).
//! - [`scenario`]: `fabric = "aquila"` and its `[clique]` table.
//! - [`swift`]: Swift, the delay-based congestion control of §5's workloads (sans-IO).
//! - [`spec`]: a clique's parameters; [`run`]: flows through it, or synthetic traffic at
//!   full load (the simulator itself, `sim`, is private).
//! - [`wire`]: the GNet cell and its 8-byte routing header (§3.1), zero-copy view and `Repr`.

#![forbid(unsafe_code)]

pub mod bench;
pub mod bounds;
pub mod cdg;
pub mod cliquemap;
pub mod control;
pub mod escape;
pub mod ipgnet;
pub mod islip;
pub mod rma;
pub mod routing;
pub mod run;
pub mod scenario;
mod sim;
pub mod spec;
pub mod swift;
pub mod wire;

pub use run::{
    Drained, LookupRun, Saturation, drain, lookups, lookups_beside, run_flows, saturate,
};
pub use sim::{Counters, EVENT_KINDS, Pattern, ReadRecord, RpcRecord};
pub use spec::Spec;
