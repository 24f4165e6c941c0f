//! The schedule layer of shoal: static fabric schedules and the circuit switches that realise them.
//!
//! Shoal's fabric is a rack-wide circuit switch on a predefined schedule (§3.2): in every slot each
//! node is connected to one other node, and over an epoch every ordered pair is connected once.
//! This crate builds that schedule, decomposes it onto real hardware and proves the result sound:
//!
//! - [`FabricSchedule`] (`fabric.rs`): who transmits to whom in each (slot, channel), in the cyclic
//!   order of Fig. 3 or the propagation-aware order of Appendix A, with columns interleaved over
//!   the channels (§3.4). It refuses what it cannot serve, such as a propagation delay larger
//!   than the arrangement absorbs.
//! - [`Clos`] (`clos.rs`, `colour.rs`, `portmap.rs`): one two-tier folded Clos of k-port circuit
//!   switches per channel, every cell crossing both stages; each transmission gets an uplink by a
//!   fast rule or, failing that, by bipartite edge colouring; per-switch, per-slot [`PortMap`]s
//!   and per-transmission [`Path`]s.
//! - [`verify`] (`verify.rs`, `violation.rs`): an independent check, from the port maps and its own wiring rules,
//!   that every switch is contention-free and that composing them yields exactly the schedule.
//! - [`failure_cost`] (`failure.rs`): the slots a failed node, link or switch wastes (Table 1).
//! - [`ScheduleReport`] (`report.rs`): everything above as one serializable value.
//!
//! Everything is built once, validated, and then queried through typed ids; nothing here reads a
//! clock or draws a random number, so the same inputs give the same schedule, bit for bit.

#![forbid(unsafe_code)]

mod arrangement;
mod clos;
mod colour;
mod fabric;
mod failure;
mod ids;
mod portmap;
mod report;
mod verify;
mod violation;

pub use arrangement::{Arrangement, UnknownArrangement};
pub use clos::{Clos, ClosError, ClosShape, MAX_PORTS, Path, PortPeer, min_ports_for};
pub use fabric::{FabricSchedule, FabricSpec, MAX_CHANNELS, MAX_NODES, ScheduleError};
pub use failure::{
    Accounting, Component, ComponentKind, FailureCost, FailureError, NodeSlots,
    failed_slot_fraction, failure_cost, table1_formula,
};
pub use ids::{LeafId, PortId, Slot, SpineId, SwitchId, SwitchKind};
pub use portmap::{PlanePortMaps, PortMap};
pub use report::{
    BuildError, ChannelPeers, FabricSlot, ScheduleReport, SwitchSchedule, VerifiedFabric,
    schedule_report,
};
pub use verify::{Verdict, Violation, verify};
