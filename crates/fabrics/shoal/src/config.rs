//! A Shoal rack's parameters (§3.4, §4, §6.1, §7.1), checked for consistency once.

use rules::{
    CELL_BYTES, CHANNELS, CLASSES, DELAY_SLOTS, HEADER_BYTES, LOW_CLASS_QUEUE_CELLS,
    MAX_DELAY_LINE_CELLS, NODES, PACKET_BYTES, SWITCH_PORTS,
};
use serde::Serialize;
use shoal_base::{ChannelId, Dur, NodeId, Rate, Time};
use shoal_fabric::config::{ConfigError, Keys, value};
use shoal_metrics::IdealFct;
use shoal_schedule::{
    Arrangement, ClosShape, Component, FabricSchedule, FabricSpec, LeafId, ScheduleError, SpineId,
};

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
    /// Which engine simulates the rack (not a property of the rack: both give identical
    /// results where both run).
    pub engine: Engine,
    /// Record where each completed short flow's time went (`breakdown.csv`, see
    /// `breakdown.rs`): observation only, off by default, fast engine only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub breakdown: bool,
}

/// The simulator's rack engines (`rack.engine`). `Node` drives one sans-IO `shoal_node::Node`
/// per rack node, the protocol's reference model; `Fast` keeps the same protocol's state in the
/// rack, laid out for the slot loop (`fast.rs`), and is kept equal to `Node` by the
/// differential harness. A run asking for `Fast` with a feature it lacks runs on `Node` and
/// says so; `Auto`, the default, takes `Fast` wherever it covers the rack and `Node` elsewhere,
/// silently, since both give identical results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Engine {
    #[default]
    Auto,
    Node,
    Fast,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Auto => "auto",
            Engine::Node => "node",
            Engine::Fast => "fast",
        }
    }
}

impl RackConfig {
    /// The rack the paper simulates (§7.1, Fig. 12), with `nodes` nodes: 4 channels of 25 Gb/s,
    /// 23.25 ns slots with a 2.75 ns guard band, 64 B cells with an 8 B header, the
    /// propagation-aware schedule (App. A) on 64-port switches (§5), both §3.3.3 optimisations,
    /// 1,500 B packets. The node-to-node delay is not in §7: we take 2 slots (scenario files
    /// explain it). Not verified when built: callers that want the proof set `verify_schedule`.
    pub fn paper(nodes: u16) -> RackConfig {
        use crate::defaults as d;
        RackConfig {
            nodes,
            channels: d::CHANNELS as u8,
            channel_rate: Rate((d::CHANNEL_GBPS * 1e9) as u64),
            slot: Dur::from_ns_f64(d::SLOT_NS).expect("a slot the simulator counts"),
            guard: Dur::from_ns_f64(d::GUARD_NS).expect("a guard band the simulator counts"),
            cell_bytes: d::CELL_BYTES as u16,
            header_bytes: d::HEADER_BYTES as u16,
            overhead_bytes: d::OVERHEAD_BYTES as u16,
            delay_slots: d::DELAY_SLOTS as u32,
            switch_ports: d::SWITCH_PORTS as u16,
            arrangement: d::ARRANGEMENT.parse().expect("a known arrangement"),
            classes: d::CLASSES as u8,
            low_class_queue_cells: d::LOW_CLASS_QUEUE_CELLS as u32,
            ready_queue: true,
            age_rule: true,
            packet_bytes: d::PACKET_BYTES as u32,
            interleave_flows: true,
            failures: Vec::new(),
            header_bit_error_rate: 0.0,
            verify_schedule: false,
            engine: Engine::Auto,
            breakdown: false,
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

    /// Checks every rule the rack's parameters obey (the one place they are written), naming
    /// the scenario key to blame: of two keys that conflict, the one the file gives (`keys`;
    /// [`shoal_fabric::config::NO_KEYS`] for a rack built in code). Returns the fabric schedule, built to prove that
    /// the nodes, channels and delay fit an arrangement, and the Clos shape of its planes.
    pub fn validate(&self, keys: &Keys<'_>) -> Result<(FabricSchedule, ClosShape), ConfigError> {
        NODES.check(self.nodes as i64)?;
        CHANNELS.check(self.channels as i64)?;
        if self.channel_rate.0 == 0 {
            return Err(value(
                "rack.channel_gbps",
                "below 1 b/s: a channel must carry something",
            ));
        }
        if self.guard >= self.slot {
            return Err(value(
                keys.blame(&["rack.guard_ns", "rack.slot_ns"]),
                format!(
                    "the guard band ({}) must be shorter than the slot ({})",
                    self.guard, self.slot
                ),
            ));
        }
        HEADER_BYTES.check(self.header_bytes as i64)?;
        CELL_BYTES.check(self.cell_bytes as i64)?;
        if self.header_bytes >= self.cell_bytes {
            return Err(value(
                keys.blame(&["rack.header_bytes", "rack.cell_bytes"]),
                format!(
                    "a {} B cell (rack.cell_bytes) leaves no payload after a {} B header \
                     (rack.header_bytes): the header must be smaller",
                    self.cell_bytes, self.header_bytes
                ),
            ));
        }
        let on_wire = self
            .channel_rate
            .serialize((self.cell_bytes as u64) + self.overhead_bytes as u64);
        let usable = Dur(self.slot.0 - self.guard.0);
        if on_wire > usable {
            // Blame the key the user set: the cell size first, then the framing, else the slot.
            let key = if keys.given("rack.cell_bytes") {
                "rack.cell_bytes"
            } else if self.overhead_bytes > 0 && keys.given("rack.overhead_bytes") {
                "rack.overhead_bytes"
            } else {
                "rack.slot_ns"
            };
            return Err(value(
                key,
                format!(
                    "a {} B cell plus {} B of framing takes {on_wire} at {} Gb/s, more than the \
                     {usable} a slot leaves after its guard band",
                    self.cell_bytes,
                    self.overhead_bytes,
                    self.channel_rate.as_gbps_f64(),
                ),
            ));
        }
        let delay_key = keys.blame(&["rack.latency_ns", "rack.delay_slots"]);
        DELAY_SLOTS
            .check(self.delay_slots as i64)
            .map_err(|e| value(delay_key, e.reason))?;
        // The delay line holds every cell on the wire: (delay + 1) slots of one landing per
        // node and channel, about 20 B each (measured: 10⁷ slots of an 8-node rack took
        // 1.6 GB). Bounded so that it stays near 1 GB; a longer delay is no rack's.
        let landings = (self.delay_slots as u64 + 1) * self.nodes as u64 * self.channels as u64;
        if landings > MAX_DELAY_LINE_CELLS {
            return Err(value(
                delay_key,
                format!(
                    "a delay of {} slots ({}) over {} nodes and {} channels puts {landings} \
                     cells on the wire, above the {MAX_DELAY_LINE_CELLS} the simulator holds \
                     (about 1 GB): far longer than any rack's propagation delay",
                    self.delay_slots,
                    Dur(self.slot.0.saturating_mul(self.delay_slots as u64)),
                    self.nodes,
                    self.channels
                ),
            ));
        }
        SWITCH_PORTS.check(self.switch_ports as i64)?;
        CLASSES.check(self.classes as i64)?;
        LOW_CLASS_QUEUE_CELLS.check(self.low_class_queue_cells as i64)?;
        PACKET_BYTES.check(self.packet_bytes as i64)?;
        let ber = self.header_bit_error_rate;
        if !(0.0..=0.5).contains(&ber) {
            return Err(value(
                "rack.header_bit_error_rate",
                format!("{ber} is not a probability in [0, 0.5]"),
            ));
        }
        if ber > 0.0 && (self.nodes > 1024 || self.payload_bytes() > 63) {
            return Err(value(
                "rack.header_bit_error_rate",
                format!(
                    "corruption is modelled on the 8-byte wire header, which addresses 1,024 nodes \
                     and 63 payload bytes; this rack has {} nodes and {} B of payload per cell",
                    self.nodes,
                    self.payload_bytes()
                ),
            ));
        }
        let schedule = FabricSchedule::new(FabricSpec {
            nodes: self.nodes as usize,
            channels: self.channels as usize,
            arrangement: self.arrangement,
            // App. A's rearrangement exists to absorb the delay, so demand it; the plain cyclic
            // schedule runs with whatever delay it gets (the prototype, Fig. 9).
            delay_slots: (self.arrangement == Arrangement::PropagationAware)
                .then_some(self.delay_slots),
        })
        .map_err(|e| {
            let key = match e {
                ScheduleError::TooFewNodes { .. } | ScheduleError::TooManyNodes { .. } => {
                    "rack.nodes"
                }
                // The epoch is too short for the delay: name the delay if the file sets it.
                ScheduleError::DelayTooLarge { .. } => {
                    keys.blame(&[delay_key, "rack.channels", "rack.nodes"])
                }
                _ => "rack.channels",
            };
            value(key, e.to_string())
        })?;
        let shape = ClosShape::new(
            self.nodes as usize,
            self.channels as usize,
            self.switch_ports as usize,
        )
        .map_err(|e| value("rack.switch_ports", e.to_string()))?;
        for (i, f) in self.failures.iter().enumerate() {
            check_failure(i, f.component, self.nodes, self.channels, &shape)?;
        }
        if self.breakdown {
            // The stamps are taken by the fast engine only (`breakdown.rs`).
            let why = match (self.engine, crate::fast::unsupported(self)) {
                (Engine::Node, _) => Some("rack.engine = \"node\""),
                (_, Some(why)) => Some(why),
                _ => None,
            };
            if let Some(why) = why {
                return Err(value(
                    keys.blame(&["rack.breakdown", "rack.engine"]),
                    format!(
                        "the breakdown of flow completion times is taken by the fast engine, \
                         which does not run this rack ({why}); drop rack.breakdown or {why}"
                    ),
                ));
            }
        }
        Ok((schedule, shape))
    }
}

/// The integer keys' ranges: applied when a scenario file is read (before a value is narrowed
/// to its field) and by [`RackConfig::validate`].
pub(crate) mod rules {
    use shoal_fabric::config::IntRule;
    use shoal_node::{MAX_LOW_CLASS_QUEUE_CELLS, MAX_NODES};
    use shoal_schedule::MAX_PORTS;

    pub const NODES: IntRule = IntRule::new("rack.nodes", 2, MAX_NODES as i64);
    pub const CHANNELS: IntRule = IntRule::new("rack.channels", 1, u8::MAX as i64);
    pub const HEADER_BYTES: IntRule = IntRule::new("rack.header_bytes", 1, u16::MAX as i64);
    pub const CELL_BYTES: IntRule = IntRule::new("rack.cell_bytes", 2, u16::MAX as i64);
    pub const OVERHEAD_BYTES: IntRule = IntRule::new("rack.overhead_bytes", 0, u16::MAX as i64);
    /// See `RackConfig::validate`: the delay line's bound.
    pub const MAX_DELAY_LINE_CELLS: u64 = 50_000_000;
    pub const DELAY_SLOTS: IntRule = IntRule::new("rack.delay_slots", 1, u32::MAX as i64);
    pub const SWITCH_PORTS: IntRule = IntRule::new("rack.switch_ports", 4, MAX_PORTS as i64);
    pub const CLASSES: IntRule = IntRule::new("rack.classes", 1, 4);
    pub const LOW_CLASS_QUEUE_CELLS: IntRule = IntRule::new(
        "rack.low_class_queue_cells",
        1,
        MAX_LOW_CLASS_QUEUE_CELLS as i64,
    );
    pub const PACKET_BYTES: IntRule = IntRule::new("rack.packet_bytes", 1, u32::MAX as i64);
}

/// A failed component must exist: its node, plane, leaf, spine and link ids in range.
fn check_failure(
    i: usize,
    c: Component,
    nodes: u16,
    channels: u8,
    shape: &ClosShape,
) -> Result<(), ConfigError> {
    let at = |k: &str| format!("rack.failures[{i}].{k}");
    let within = |k: &str, v: usize, count: usize| {
        if v >= count {
            Err(value(
                &at(k),
                format!("{v} is out of range: must be 0 to {}", count as i64 - 1),
            ))
        } else {
            Ok(())
        }
    };
    let node = |n: NodeId| within("node", n.idx(), nodes as usize);
    let plane = |p: ChannelId| within("plane", p.0 as usize, channels as usize);
    let leaf = |l: LeafId| within("leaf", l.0 as usize, shape.leaves());
    let spine = |s: SpineId| within("spine", s.0 as usize, shape.spines());
    match c {
        Component::Node(n) => node(n),
        Component::NodeLink(p, n) => plane(p).and(node(n)),
        Component::Leaf(p, l) => plane(p).and(leaf(l)),
        Component::LeafSpineLink(p, l, s, q) => plane(p).and(leaf(l)).and(spine(s)).and(within(
            "link",
            q as usize,
            shape.links_per_leaf_spine(),
        )),
        Component::Spine(p, s) => plane(p).and(spine(s)),
    }
}
