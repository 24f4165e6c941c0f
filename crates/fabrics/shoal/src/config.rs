//! A Shoal rack's parameters (§3.4, §4, §6.1, §7.1), checked for consistency once.

use serde::Serialize;
use shoal_base::{Dur, Rate, Time};
use shoal_metrics::IdealFct;
use shoal_node::{MAX_LOW_CLASS_QUEUE_CELLS, MAX_NODES};
use shoal_schedule::{Arrangement, Component};
use std::fmt;

/// A component failing at a given time (§3.5, Fig. 17).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Failure {
    pub component: Component,
    pub at: Time,
}

/// Everything needed to build a rack. Field docs name the paper's values.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RackConfig {
    /// Nodes in the rack (8 in the prototype, 512 in §7).
    pub nodes: u16,
    /// Parallel channels per node, each switched by its own Clos plane (4 × 25 Gb/s in §7.1).
    pub channels: u8,
    /// Rate of one channel.
    pub channel_rate: Rate,
    /// Slot length including the guard band (76.8 ns in the prototype, 23.25 ns in §7.1).
    pub slot: Dur,
    /// Guard band for reconfiguration and synchronisation error (6.4 ns; 2.75 ns).
    pub guard: Dur,
    /// Cell size (64 B).
    pub cell_bytes: u16,
    /// Cell header size (8 B): the cell carries `cell_bytes - header_bytes` of payload.
    pub header_bytes: u16,
    /// Framing sent with every cell outside it, e.g. the prototype's 24 B of MAC overhead.
    pub overhead_bytes: u16,
    /// Node-to-node latency in whole slots: a cell sent in slot `s` is received at `s + delay`.
    pub delay_slots: u32,
    /// Ports of each circuit switch (k): a two-tier Clos plane connects up to k²/2 nodes.
    pub switch_ports: u16,
    pub arrangement: Arrangement,
    /// Traffic classes (App. C).
    pub classes: u8,
    /// Tail-drop limit for queues of classes below the highest (App. C).
    pub low_class_queue_cells: u32,
    /// §3.3.3 ready queues at intermediates.
    pub ready_queue: bool,
    /// §3.3.3 2^age rule at sources.
    pub age_rule: bool,
    /// The host cuts flows into packets of this many bytes before handing them to the node.
    pub packet_bytes: u32,
    /// Flows between one pair share the node's flow for that pair packet by packet (on), or
    /// each waits for the ones submitted before it (off). See `NodeConfig::interleave_messages`.
    pub interleave_flows: bool,
    pub failures: Vec<Failure>,
    /// Probability that any one header bit is flipped in transit (App. D); 0 disables it.
    pub header_bit_error_rate: f64,
    /// Run the schedule verifier when the rack is built.
    pub verify_schedule: bool,
}

/// Why a rack cannot be built: the parameter (as the scenario names it) and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RackError {
    pub key: String,
    pub reason: String,
}

impl fmt::Display for RackError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.reason)
    }
}

impl std::error::Error for RackError {}

fn bad(key: &str, reason: String) -> RackError {
    RackError {
        key: key.to_string(),
        reason,
    }
}

impl RackConfig {
    /// The rack the paper simulates (§7.1, Fig. 12), with `nodes` nodes: 4 channels of 25 Gb/s,
    /// 23.25 ns slots with a 2.75 ns guard band, 64 B cells with an 8 B header, the
    /// propagation-aware schedule (App. A) on 64-port switches (§5), both §3.3.3 optimisations,
    /// 1,500 B packets. The node-to-node delay is not in §7: we take 2 slots (scenario files
    /// explain it). Not verified when built: callers that want the proof set `verify_schedule`.
    pub fn paper(nodes: u16) -> RackConfig {
        RackConfig {
            nodes,
            channels: 4,
            channel_rate: Rate::gbps(25),
            slot: Dur::from_ps(23_250),
            guard: Dur::from_ps(2_750),
            cell_bytes: 64,
            header_bytes: 8,
            overhead_bytes: 0,
            delay_slots: 2,
            switch_ports: 64,
            arrangement: Arrangement::PropagationAware,
            classes: 1,
            low_class_queue_cells: 64,
            ready_queue: true,
            age_rule: true,
            packet_bytes: 1500,
            interleave_flows: true,
            failures: Vec::new(),
            header_bit_error_rate: 0.0,
            verify_schedule: false,
        }
    }

    /// Payload bytes per cell.
    pub fn payload_bytes(&self) -> u16 {
        self.cell_bytes - self.header_bytes
    }

    /// Node bandwidth: all channels together.
    pub fn node_rate(&self) -> Rate {
        Rate(self.channel_rate.0 * self.channels as u64)
    }

    /// A lower bound on the completion time of a flow alone on the idle rack, for slowdowns
    /// (so a slowdown is never below 1). A node sends at most one cell per channel and slot,
    /// so a flow of k slots' worth of cells sends its last cell k − 1 slots after its first,
    /// at the earliest in the slot it starts; that cell arrives `delay_slots` slots later at
    /// the earliest (when it goes straight to its destination, which the node meets first).
    /// The FCT is therefore at least (k − 1 + delay) slots, and bytes / payload rate exceeds
    /// (k − 1) slots, so bytes / rate + (delay − 1) slots bounds it from below. The payload
    /// rate is a full cell's payload on every channel in every slot (headers and guard band
    /// excluded). Detour through an intermediate and waiting for the schedule are not counted:
    /// they are the part of an FCT the slowdown shows.
    pub fn ideal_fct(&self) -> IdealFct {
        let payload_bps =
            self.channels as f64 * self.payload_bytes() as f64 * 8.0 / (self.slot.0 as f64 / 1e12);
        IdealFct {
            rate_bps: payload_bps,
            base_latency: Dur((self.delay_slots as u64).saturating_sub(1) * self.slot.0),
            header_overhead: 0.0,
        }
    }

    pub fn validate(&self) -> Result<(), RackError> {
        if !(2..=MAX_NODES).contains(&self.nodes) {
            return Err(bad(
                "rack.nodes",
                format!("2 to {MAX_NODES} nodes, got {}", self.nodes),
            ));
        }
        if self.channels == 0 {
            return Err(bad("rack.channels", "at least one channel".into()));
        }
        if self.channel_rate.0 == 0 {
            return Err(bad("rack.channel_gbps", "must be positive".into()));
        }
        if self.header_bytes == 0 || self.header_bytes >= self.cell_bytes {
            return Err(bad(
                "rack.header_bytes",
                format!(
                    "must be at least 1 and below cell_bytes ({}), got {}",
                    self.cell_bytes, self.header_bytes
                ),
            ));
        }
        if self.guard >= self.slot {
            return Err(bad(
                "rack.guard_ns",
                format!(
                    "the guard band ({}) must be shorter than the slot ({})",
                    self.guard, self.slot
                ),
            ));
        }
        let on_wire = self
            .channel_rate
            .serialize((self.cell_bytes + self.overhead_bytes) as u64);
        let usable = Dur(self.slot.0 - self.guard.0);
        if on_wire > usable {
            return Err(bad(
                "rack.slot_ns",
                format!(
                    "a {} B cell plus {} B of framing takes {} at {} Gb/s, more than the {} a slot \
                     leaves after its guard band",
                    self.cell_bytes,
                    self.overhead_bytes,
                    on_wire,
                    self.channel_rate.as_gbps_f64(),
                    usable
                ),
            ));
        }
        if self.delay_slots == 0 {
            return Err(bad("rack.delay_slots", "at least 1 slot".into()));
        }
        if !(1..=4).contains(&self.classes) {
            return Err(bad(
                "rack.classes",
                format!("1 to 4 classes, got {}", self.classes),
            ));
        }
        if !(1..=MAX_LOW_CLASS_QUEUE_CELLS).contains(&self.low_class_queue_cells) {
            return Err(bad(
                "rack.low_class_queue_cells",
                format!(
                    "1 to {MAX_LOW_CLASS_QUEUE_CELLS} cells, got {}",
                    self.low_class_queue_cells
                ),
            ));
        }
        if self.packet_bytes == 0 {
            return Err(bad("rack.packet_bytes", "must be positive".into()));
        }
        if !(0.0..=0.5).contains(&self.header_bit_error_rate) {
            return Err(bad(
                "rack.header_bit_error_rate",
                format!(
                    "a probability in [0, 0.5], got {}",
                    self.header_bit_error_rate
                ),
            ));
        }
        if self.header_bit_error_rate > 0.0 && (self.nodes > 1024 || self.payload_bytes() > 63) {
            return Err(bad(
                "rack.header_bit_error_rate",
                format!(
                    "corruption is modelled on the 8-byte wire header, which addresses 1,024 nodes \
                     and 63 payload bytes; this rack has {} nodes and {} B of payload per cell",
                    self.nodes,
                    self.payload_bytes()
                ),
            ));
        }
        Ok(())
    }
}
