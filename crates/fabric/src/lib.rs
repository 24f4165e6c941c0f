//! The one trait every fabric implements (DESIGN.md, principle 3), so that any set of fabrics can
//! run the identical flow list and be reported the same way.
//!
//! - [`Fabric`]: flows in, records and statistics out ([`RunOutput`]).
//! - [`book`]: the flow bookkeeping every fabric's run shares.
//! - [`event_loop`]: the run loop every event-driven fabric shares ([`EventFabric`]).
//! - [`plugin`]: a fabric as a scenario names it: its own table, checks and resolved form.
//! - [`config`]: what a fabric needs to read and write its table.
//! - [`bench`](mod@bench): wall clock and peak memory for the benchmarks.

#![forbid(unsafe_code)]

pub mod bench;
pub mod book;
pub mod config;
pub mod event_loop;
pub mod plugin;

pub use book::FlowBook;
pub use event_loop::{Calendar, EventFabric};
pub use plugin::{FabricKind, NodeGroups, ResolvedFabric, Resolving};

use serde::Serialize;
use shoal_base::{Dur, Time};
use shoal_metrics::{FlowRecord, TimeSeries};
use shoal_workload::FlowSource;
use std::collections::BTreeMap;
use std::fmt;

/// When a run stops. With no limit at all, a run stops when every flow has completed (or can
/// never complete, e.g. because its destination failed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RunLimits {
    /// Stop at this simulated time.
    pub until: Option<Time>,
    /// Stop once this many flows have completed (§7.3 stops at one million): which flows
    /// those are depends on the fabric (the fastest to complete).
    pub completed_flows: Option<u64>,
    /// Measure exactly the first N flows in start order (ids 0 to N - 1: the same flows on
    /// every fabric given the same workload and seed) and stop once all of them have
    /// completed, or at twice the N-th flow's start time (when later than 0), those still in
    /// progress then counted as not completed; later flows still start and load the fabric
    /// meanwhile, unmeasured.
    pub measured_flows: Option<u64>,
    /// Count delivered bytes per destination only from this time on (warm-up exclusion for
    /// throughput measurements).
    pub measure_from: Option<Time>,
    /// Sample the fabric's queues and progress at this period into `RunOutput::series`.
    pub sample_every: Option<Dur>,
}

/// Queueing a fabric observed, in its own unit (cells for cell fabrics, packets otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct QueueStats {
    /// Longest single queue (for Shoal: one `Q_ij`).
    pub max_queue: u64,
    /// Most queued at one node over all its queues.
    pub max_node_queue: u64,
    /// Of that, the most queued at one node for other nodes (cells in transit), where a
    /// fabric distinguishes them; 0 otherwise.
    pub max_node_transit: u64,
    /// Most payload bytes of one flow held out of order at its destination.
    pub max_reorder_bytes: u64,
}

/// What a run produced.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunOutput {
    /// One record per flow handed to the fabric, in flow order.
    pub records: Vec<FlowRecord>,
    /// Simulated time at which the run stopped.
    pub sim_time: Time,
    pub queues: QueueStats,
    /// Fabric-specific counters (cells sent, drops, failures detected, ...), by name.
    pub counters: BTreeMap<String, u64>,
    /// Payload bytes delivered in order at each node since `RunLimits::measure_from`.
    pub delivered_bytes: Vec<u64>,
    /// Payload bytes of each flow (in `records` order) delivered since `RunLimits::measure_from`.
    pub measured_flow_bytes: Vec<u64>,
    /// Samples taken every `RunLimits::sample_every` (empty without it).
    pub series: TimeSeries,
    /// Further tables a fabric writes only when its scenario asks for them, by file name
    /// (e.g. Shoal's `breakdown.csv` with `rack.breakdown = true`): CSV text that `shoal run`
    /// writes beside flows.csv. Empty otherwise, so no existing output changes.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tables: BTreeMap<String, String>,
}

/// Why a fabric refused to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricError(pub String);

impl fmt::Display for FabricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FabricError {}

/// Receives progress from long runs: the simulated time reached and flows completed so far.
/// Fabrics call it at most every few thousand steps, never per event.
pub trait Progress {
    fn update(&mut self, now: Time, completed: u64);
}

/// Progress that goes nowhere.
pub struct NoProgress;

impl Progress for NoProgress {
    fn update(&mut self, _: Time, _: u64) {}
}

/// A network under test.
pub trait Fabric {
    /// A short name for tables and files ("shoal", "dctcp", ...).
    fn name(&self) -> &str;
    /// Nodes (hosts) the fabric connects; flows must name nodes below this.
    fn nodes(&self) -> usize;
    /// Lets a run use up to `threads` threads. A run's outputs are the same for every count;
    /// a fabric whose runs are single-threaded ignores it (the default).
    fn set_threads(&mut self, _threads: usize) {}
    /// Runs the flows of `flows` (pulled in start order as they fall due, each completion
    /// reported back to it) until `limits`.
    fn run(
        &mut self,
        flows: &mut dyn FlowSource,
        limits: RunLimits,
        progress: &mut dyn Progress,
    ) -> Result<RunOutput, FabricError>;
}
