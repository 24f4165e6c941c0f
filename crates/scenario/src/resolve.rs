//! From the raw file to validated values: defaults (the paper's §7.1 rack), ranges, and the
//! rules that tie keys together. Every refusal names its dotted key.

use crate::error::{ErrorKind, ScenarioError, line_of, span_of};
use crate::raw::{RawBackground, RawFailure, RawFile, RawRack, RawRandomFailures, RawWorkload};
use crate::workload::{Background, WorkloadSpec};
use crate::{RandomFailures, Sweep, SweepValue};
use shoal_base::{ChannelId, Dur, NodeId, Rate, Time};
use shoal_fabric::RunLimits;
use shoal_rack::{Failure, RackConfig, RackError};
use shoal_schedule::{
    Arrangement, ClosShape, Component, FabricSchedule, FabricSpec, LeafId, ScheduleError, SpineId,
};
use toml::de::DeTable;

mod network;
mod traffic;

pub use network::{PACKET_FABRICS, defaults as network_defaults};

/// The paper's rack (§7.1) and the defaults of every `[rack]` key; see docs/scenarios.md.
pub mod defaults {
    /// §7.1: a 512-node rack.
    pub const NODES: i64 = 512;
    /// §3.4, §7.1: 100 Gb/s links as 4 × 25 Gb/s channels.
    pub const CHANNELS: i64 = 4;
    /// §7.1: 25 Gb/s per channel.
    pub const CHANNEL_GBPS: f64 = 25.0;
    /// §7.1: 23.25 ns slots (20.5 ns usable).
    pub const SLOT_NS: f64 = 23.25;
    /// §7.1: 2.5 ns reconfiguration + 0.25 ns propagation and synchronisation variability.
    pub const GUARD_NS: f64 = 2.75;
    /// §3.4, §7.1: 20.5 ns at 25 Gb/s is a 64 B cell.
    pub const CELL_BYTES: i64 = 64;
    /// §3.5, Fig. 5: the 8-byte cell header.
    pub const HEADER_BYTES: i64 = 8;
    /// §7.1 models no framing outside the cell (the prototype's MAC adds 24 B, §6.1).
    pub const OVERHEAD_BYTES: i64 = 0;
    /// Not in the paper: §3.4 puts propagation across a rack at 10-15 ns; two 23.25 ns slots
    /// cover it with serialization.
    pub const DELAY_SLOTS: i64 = 2;
    /// §5: 64-port circuit switches.
    pub const SWITCH_PORTS: i64 = 64;
    /// Appendix A: the schedule that absorbs the node-to-node delay.
    pub const ARRANGEMENT: &str = "propagation-aware";
    /// §3.3 (one class); App. C adds more.
    pub const CLASSES: i64 = 1;
    /// App. C leaves the tail-drop limit of low classes open: our choice.
    pub const LOW_CLASS_QUEUE_CELLS: i64 = 64;
    /// §7.3 baselines use 1500 B packets; hosts cut flows the same way.
    pub const PACKET_BYTES: i64 = 1500;
    /// The run seed when the file gives none.
    pub const SEED: i64 = 1;
}

/// Where errors point: the origin, and the parsed document for line numbers (none for
/// documents the tool generated, such as sweep points).
pub(crate) struct Ctx<'a> {
    pub origin: &'a str,
    pub text: &'a str,
    pub doc: Option<&'a DeTable<'a>>,
}

impl Ctx<'_> {
    pub fn err(&self, key: &str, kind: ErrorKind, reason: impl Into<String>) -> ScenarioError {
        // The key's own line, or for a missing key the line of the table that lacks it.
        let line = self.doc.and_then(|d| {
            let mut path = key;
            loop {
                if let Some(span) = span_of(d, path) {
                    return Some(line_of(self.text, span.start));
                }
                path = &path[..path.rfind('.')?];
            }
        });
        ScenarioError {
            origin: self.origin.to_owned(),
            line,
            key: key.to_owned(),
            kind,
            reason: reason.into(),
        }
    }

    fn value(&self, key: &str, reason: impl Into<String>) -> ScenarioError {
        self.err(key, ErrorKind::Value, reason)
    }

    /// Of keys whose values conflict, listed most likely culprit first, the one to name in the
    /// error: the first the file gives (a conflict with a default is the given key's), or the
    /// first when it gives none.
    fn blame<'k>(&self, keys: &[&'k str]) -> &'k str {
        let given = |k: &&&str| self.doc.is_some_and(|d| span_of(d, k).is_some());
        keys.iter().find(given).unwrap_or(&keys[0])
    }

    fn missing(&self, key: &str) -> ScenarioError {
        self.err(key, ErrorKind::Missing, "required key is missing")
    }

    /// An integer in `min..=max`, or `default` when absent.
    fn int(
        &self,
        key: &str,
        v: Option<i64>,
        default: i64,
        min: i64,
        max: i64,
    ) -> Result<i64, ScenarioError> {
        self.int_req(key, Some(v.unwrap_or(default)), min, max)
    }

    /// A required integer in `min..=max`.
    fn int_req(&self, key: &str, v: Option<i64>, min: i64, max: i64) -> Result<i64, ScenarioError> {
        let v = v.ok_or_else(|| self.missing(key))?;
        if v < min || v > max {
            return Err(self.value(key, format!("{v} is out of range: must be {min} to {max}")));
        }
        Ok(v)
    }

    /// A finite number, at least `min` (or above it when `exclusive`).
    fn num(&self, key: &str, v: f64, min: f64, exclusive: bool) -> Result<f64, ScenarioError> {
        if !v.is_finite() {
            return Err(self.value(key, format!("{v} is not a finite number")));
        }
        let ok = if exclusive { v > min } else { v >= min };
        if !ok {
            let bound = if exclusive { "above" } else { "at least" };
            return Err(self.value(key, format!("{v} is out of range: must be {bound} {min}")));
        }
        Ok(v)
    }

    /// Microseconds to picoseconds; `positive` refuses zero.
    fn us(&self, key: &str, v: f64, positive: bool) -> Result<u64, ScenarioError> {
        let v = self.num(key, v, 0.0, positive)?;
        let ps = (v * 1e6).round();
        if ps >= u64::MAX as f64 / 2.0 {
            return Err(self.value(
                key,
                format!("{v} us is longer than the simulator can count"),
            ));
        }
        if positive && ps < 1.0 {
            return Err(self.value(key, format!("{v} us is below one picosecond")));
        }
        Ok(ps as u64)
    }

    /// Nanoseconds to picoseconds; `positive` refuses zero.
    fn ns(&self, key: &str, v: f64, positive: bool) -> Result<Dur, ScenarioError> {
        let v = self.num(key, v, 0.0, positive)?;
        let d = Dur::from_ns_f64(v).ok_or_else(|| {
            self.value(
                key,
                format!("{v} ns is longer than the simulator can count"),
            )
        })?;
        if positive && d.0 == 0 {
            return Err(self.value(key, format!("{v} ns is below one picosecond")));
        }
        Ok(d)
    }
}

/// Everything resolved from one document.
pub(crate) struct Resolved {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub rack: RackConfig,
    pub network: Option<crate::network::NetworkSpec>,
    pub explicit_failures: Vec<Failure>,
    pub random_failures: Option<RandomFailures>,
    pub workload: WorkloadSpec,
    pub limits: RunLimits,
    pub sweep: Option<Sweep>,
}

pub(crate) fn resolve(
    ctx: &Ctx<'_>,
    raw: RawFile,
    default_name: &str,
) -> Result<Resolved, ScenarioError> {
    let meta = raw.scenario.unwrap_or_default();
    let name = meta.name.unwrap_or_else(|| default_name.to_owned());
    if name.trim().is_empty() {
        return Err(ctx.value("scenario.name", "must not be empty"));
    }
    let seed = ctx.int("scenario.seed", meta.seed, defaults::SEED, 0, i64::MAX)? as u64;
    let fabric = meta.fabric.unwrap_or_else(|| "shoal".to_owned());
    let network = if fabric == "shoal" {
        if raw.network.is_some() {
            return Err(ctx.value(
                "network",
                "[network] configures the packet-switched fabrics; the shoal fabric takes [rack]",
            ));
        }
        None
    } else if PACKET_FABRICS.contains(&fabric.as_str()) {
        if raw.rack.is_some() {
            return Err(ctx.value(
                "rack",
                format!("[rack] configures the shoal fabric; the {fabric} fabric takes [network]"),
            ));
        }
        let raw_net = raw.network.unwrap_or_default();
        Some(network::resolve(ctx, &fabric, raw_net, seed)?)
    } else {
        let known: Vec<String> = std::iter::once("shoal")
            .chain(PACKET_FABRICS)
            .map(|f| format!("{f:?}"))
            .collect();
        return Err(ctx.value(
            "scenario.fabric",
            format!(
                "unknown fabric {fabric:?}; known fabrics: {}",
                known.join(", ")
            ),
        ));
    };
    let (rack, explicit_failures, random_failures) =
        resolve_rack(ctx, raw.rack.unwrap_or_default())?;
    let workload = raw.workload.ok_or_else(|| {
        ctx.err(
            "workload",
            ErrorKind::Missing,
            "the [workload] table is required",
        )
    })?;
    let (nodes, node_rate) = match &network {
        Some(n) => (n.topology.hosts(), n.link_rate),
        None => (rack.nodes as usize, rack.node_rate()),
    };
    let workload = resolve_workload(ctx, workload, nodes, node_rate)?;
    let run = raw.run.unwrap_or_default();
    let limits = RunLimits {
        until: run
            .until_us
            .map(|v| ctx.us("run.until_us", v, true).map(Time))
            .transpose()?,
        completed_flows: run
            .completed_flows
            .map(|v| ctx.int_req("run.completed_flows", Some(v), 1, i64::MAX))
            .transpose()?
            .map(|v| v as u64),
        measure_from: run
            .measure_from_us
            .map(|v| ctx.us("run.measure_from_us", v, false).map(Time))
            .transpose()?,
        sample_every: run
            .sample_every_us
            .map(|v| ctx.us("run.sample_every_us", v, true).map(Dur))
            .transpose()?,
    };
    if workload.is_unbounded() && limits.until.is_none() && limits.completed_flows.is_none() {
        return Err(ctx.value(
            "run",
            format!(
                "the {} workload without workload.flows never ends: set run.completed_flows or \
                 run.until_us",
                workload.kind()
            ),
        ));
    }
    check_limits(
        ctx,
        &limits,
        &workload,
        network.is_none().then_some(rack.slot),
    )?;
    let sweep = raw.sweep.map(|s| resolve_sweep(ctx, s)).transpose()?;
    let mut rack = rack;
    rack.failures = crate::all_failures(&explicit_failures, random_failures, rack.nodes, seed);
    Ok(Resolved {
        name,
        description: meta.description.unwrap_or_default(),
        seed,
        rack,
        network,
        explicit_failures,
        random_failures,
        workload,
        limits,
        sweep,
    })
}

/// Limits that could never be met, or would measure nothing: refused rather than run.
fn check_limits(
    ctx: &Ctx<'_>,
    limits: &RunLimits,
    workload: &WorkloadSpec,
    slot: Option<Dur>,
) -> Result<(), ScenarioError> {
    if let (Some(from), Some(until)) = (limits.measure_from, limits.until)
        && from >= until
    {
        return Err(ctx.value(
            "run.measure_from_us",
            format!(
                "measuring from {from} while the run stops at {until} (run.until_us) measures \
                 nothing"
            ),
        ));
    }
    if let (Some(want), Some(count)) = (limits.completed_flows, workload.flow_count())
        && want > count
    {
        return Err(ctx.value(
            "run.completed_flows",
            format!("{want} flows can never complete: the workload hands out {count}"),
        ));
    }
    if let (Some(every), Some(slot)) = (limits.sample_every, slot)
        && every < slot
    {
        return Err(ctx.value(
            "run.sample_every_us",
            format!("{every} is shorter than a slot ({slot}): the rack changes state once a slot"),
        ));
    }
    Ok(())
}

type RackParts = (RackConfig, Vec<Failure>, Option<RandomFailures>);

fn resolve_rack(ctx: &Ctx<'_>, raw: RawRack) -> Result<RackParts, ScenarioError> {
    use defaults as d;
    let max_nodes = shoal_rack::MAX_NODES as i64;
    let nodes = ctx.int("rack.nodes", raw.nodes, d::NODES, 2, max_nodes)? as u16;
    let channels = ctx.int(
        "rack.channels",
        raw.channels,
        d::CHANNELS,
        1,
        u8::MAX as i64,
    )? as u8;
    let gbps = ctx.num(
        "rack.channel_gbps",
        raw.channel_gbps.unwrap_or(d::CHANNEL_GBPS),
        0.0,
        true,
    )?;
    if gbps > 1e9 {
        return Err(ctx.value(
            "rack.channel_gbps",
            format!("{gbps} Gb/s is not a channel rate"),
        ));
    }
    let channel_rate = Rate((gbps * 1e9).round() as u64);
    let slot = ctx.ns("rack.slot_ns", raw.slot_ns.unwrap_or(d::SLOT_NS), true)?;
    let guard = ctx.ns("rack.guard_ns", raw.guard_ns.unwrap_or(d::GUARD_NS), false)?;
    if guard >= slot {
        // Blame the key the user set (the guard band if both or neither).
        let key = if raw.slot_ns.is_some() && raw.guard_ns.is_none() {
            "rack.slot_ns"
        } else {
            "rack.guard_ns"
        };
        return Err(ctx.value(
            key,
            format!("the guard band ({guard}) must be shorter than the slot ({slot})"),
        ));
    }
    let header_bytes = ctx.int(
        "rack.header_bytes",
        raw.header_bytes,
        d::HEADER_BYTES,
        1,
        u16::MAX as i64,
    )? as u16;
    let overhead_bytes = ctx.int(
        "rack.overhead_bytes",
        raw.overhead_bytes,
        d::OVERHEAD_BYTES,
        0,
        u16::MAX as i64,
    )? as u16;
    let usable = Dur(slot.0 - guard.0);
    let cell_bytes = match &raw.cell_bytes {
        None => d::CELL_BYTES as u16,
        Some(toml::Value::Integer(v)) => {
            ctx.int_req("rack.cell_bytes", Some(*v), 2, u16::MAX as i64)? as u16
        }
        Some(toml::Value::String(s)) if s == "fill" => {
            let fits = channel_rate.bytes_in(usable);
            let fill = fits.saturating_sub(overhead_bytes as u64);
            if fill <= header_bytes as u64 {
                return Err(ctx.value(
                    "rack.cell_bytes",
                    format!(
                        "\"fill\": {usable} at {gbps} Gb/s carries {fits} B; less {overhead_bytes} B \
                         of framing leaves {fill} B, no room for payload after the \
                         {header_bytes} B header"
                    ),
                ));
            }
            if fill > u16::MAX as u64 {
                return Err(ctx.value(
                    "rack.cell_bytes",
                    format!("\"fill\" gives {fill} B, more than the 65535 B a cell can have"),
                ));
            }
            fill as u16
        }
        Some(other) => {
            return Err(ctx.err(
                "rack.cell_bytes",
                ErrorKind::Type,
                format!("expected an integer or \"fill\", got {other}"),
            ));
        }
    };
    if header_bytes >= cell_bytes {
        return Err(ctx.value(
            ctx.blame(&["rack.header_bytes", "rack.cell_bytes"]),
            format!(
                "a {cell_bytes} B cell (rack.cell_bytes) leaves no payload after a \
                 {header_bytes} B header (rack.header_bytes): the header must be smaller"
            ),
        ));
    }
    let on_wire = channel_rate.serialize(cell_bytes as u64 + overhead_bytes as u64);
    if on_wire > usable {
        // Blame the key the user set: the cell size first, then the framing, else the slot.
        let key = if matches!(raw.cell_bytes, Some(toml::Value::Integer(_))) {
            "rack.cell_bytes"
        } else if raw.overhead_bytes.is_some_and(|o| o > 0) {
            "rack.overhead_bytes"
        } else {
            "rack.slot_ns"
        };
        return Err(ctx.value(
            key,
            format!(
                "a {cell_bytes} B cell plus {overhead_bytes} B of framing takes {on_wire} at \
                 {gbps} Gb/s, more than the {usable} a slot leaves after its guard band"
            ),
        ));
    }
    let delay_key = if raw.latency_ns.is_some() {
        "rack.latency_ns"
    } else {
        "rack.delay_slots"
    };
    let delay_slots = match (raw.delay_slots, raw.latency_ns) {
        (Some(_), Some(_)) => {
            return Err(ctx.value(
                "rack.latency_ns",
                "give either delay_slots or latency_ns, not both",
            ));
        }
        (_, Some(latency)) => {
            let latency = ctx.ns("rack.latency_ns", latency, true)?;
            let slots = latency.0.div_ceil(slot.0);
            u32::try_from(slots).map_err(|_| {
                ctx.value(
                    "rack.latency_ns",
                    format!("{latency} is {slots} slots, more than the simulator allows"),
                )
            })?
        }
        (v, None) => ctx.int("rack.delay_slots", v, d::DELAY_SLOTS, 1, u32::MAX as i64)? as u32,
    };
    let switch_ports = ctx.int(
        "rack.switch_ports",
        raw.switch_ports,
        d::SWITCH_PORTS,
        4,
        shoal_schedule::MAX_PORTS as i64,
    )? as u16;
    let arrangement: Arrangement = raw
        .arrangement
        .as_deref()
        .unwrap_or(d::ARRANGEMENT)
        .parse()
        .map_err(|e: shoal_schedule::UnknownArrangement| {
            ctx.value("rack.arrangement", e.to_string())
        })?;
    let classes = ctx.int("rack.classes", raw.classes, d::CLASSES, 1, 4)? as u8;
    let low_class_queue_cells = ctx.int(
        "rack.low_class_queue_cells",
        raw.low_class_queue_cells,
        d::LOW_CLASS_QUEUE_CELLS,
        1,
        shoal_rack::MAX_LOW_CLASS_QUEUE_CELLS as i64,
    )? as u32;
    let packet_bytes = ctx.int(
        "rack.packet_bytes",
        raw.packet_bytes,
        d::PACKET_BYTES,
        1,
        u32::MAX as i64,
    )? as u32;
    let header_bit_error_rate = raw.header_bit_error_rate.unwrap_or(0.0);
    if !header_bit_error_rate.is_finite() {
        return Err(ctx.value("rack.header_bit_error_rate", "must be a finite probability"));
    }

    // The schedule and the Clos shape are cheap to size and refuse most impossible racks.
    let schedule_spec = FabricSpec {
        nodes: nodes as usize,
        channels: channels as usize,
        arrangement,
        delay_slots: (arrangement == Arrangement::PropagationAware).then_some(delay_slots),
    };
    if let Err(e) = FabricSchedule::new(schedule_spec) {
        let key = match e {
            ScheduleError::TooFewNodes { .. } | ScheduleError::TooManyNodes { .. } => "rack.nodes",
            // The epoch is too short for the delay: name the delay if the file sets it.
            ScheduleError::DelayTooLarge { .. } => {
                ctx.blame(&[delay_key, "rack.channels", "rack.nodes"])
            }
            _ => "rack.channels",
        };
        return Err(ctx.value(key, e.to_string()));
    }
    let shape = ClosShape::new(nodes as usize, channels as usize, switch_ports as usize)
        .map_err(|e| ctx.value("rack.switch_ports", e.to_string()))?;

    let failures = raw
        .failures
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, f)| resolve_failure(ctx, i, f, nodes, channels, &shape))
        .collect::<Result<Vec<_>, _>>()?;
    let random = raw
        .random_node_failures
        .map(|r| resolve_random(ctx, r))
        .transpose()?;

    let rack = RackConfig {
        nodes,
        channels,
        channel_rate,
        slot,
        guard,
        cell_bytes,
        header_bytes,
        overhead_bytes,
        delay_slots,
        switch_ports,
        arrangement,
        classes,
        low_class_queue_cells,
        ready_queue: raw.ready_queue.unwrap_or(true),
        age_rule: raw.age_rule.unwrap_or(true),
        packet_bytes,
        interleave_flows: raw.interleave_flows.unwrap_or(true),
        failures: failures.clone(),
        header_bit_error_rate,
        verify_schedule: raw.verify_schedule.unwrap_or(true),
    };
    rack.validate().map_err(|e| rack_error(ctx, e, delay_key))?;
    Ok((rack, failures, random))
}

/// Maps the rack's own refusal onto the scenario's keys.
pub(crate) fn rack_error(ctx: &Ctx<'_>, e: RackError, delay_key: &str) -> ScenarioError {
    let key = match e.key.as_str() {
        "failures" => "rack.failures",
        "rack.delay_slots" => delay_key,
        k => k,
    };
    let kind = if e.key == "rack" {
        ErrorKind::Build
    } else {
        ErrorKind::Value
    };
    ctx.err(key, kind, e.reason)
}

const FAILURE_KEYS: [(&str, &[&str]); 5] = [
    ("node", &["node"]),
    ("node-link", &["node", "plane"]),
    ("leaf", &["plane", "leaf"]),
    ("leaf-spine-link", &["plane", "leaf", "spine", "link"]),
    ("spine", &["plane", "spine"]),
];

fn resolve_failure(
    ctx: &Ctx<'_>,
    i: usize,
    f: RawFailure,
    nodes: u16,
    channels: u8,
    shape: &ClosShape,
) -> Result<Failure, ScenarioError> {
    let at = |k: &str| format!("rack.failures[{i}].{k}");
    let component = f
        .component
        .as_deref()
        .ok_or_else(|| ctx.missing(&at("component")))?;
    let Some((_, keys)) = FAILURE_KEYS.iter().find(|(c, _)| *c == component) else {
        return Err(ctx.value(
            &at("component"),
            format!(
                "unknown component {component:?}; known: node, node-link, leaf, \
                 leaf-spine-link, spine"
            ),
        ));
    };
    let given = [
        ("node", f.node),
        ("plane", f.plane),
        ("leaf", f.leaf),
        ("spine", f.spine),
        ("link", f.link),
    ];
    for (key, v) in given {
        if v.is_some() && !keys.contains(&key) {
            return Err(ctx.err(
                &at(key),
                ErrorKind::UnknownKey,
                format!(
                    "unknown key for a {component} failure (it takes {} and at_us)",
                    keys.join(", ")
                ),
            ));
        }
    }
    let node = || {
        ctx.int_req(&at("node"), f.node, 0, nodes as i64 - 1)
            .map(|v| NodeId(v as u16))
    };
    let plane = || {
        ctx.int_req(&at("plane"), f.plane, 0, channels as i64 - 1)
            .map(|v| ChannelId(v as u8))
    };
    let leaf = || {
        ctx.int_req(&at("leaf"), f.leaf, 0, shape.leaves() as i64 - 1)
            .map(|v| LeafId(v as u16))
    };
    let spine = || {
        ctx.int_req(&at("spine"), f.spine, 0, shape.spines() as i64 - 1)
            .map(|v| SpineId(v as u16))
    };
    let component = match component {
        "node" => Component::Node(node()?),
        "node-link" => Component::NodeLink(plane()?, node()?),
        "leaf" => Component::Leaf(plane()?, leaf()?),
        "leaf-spine-link" => Component::LeafSpineLink(
            plane()?,
            leaf()?,
            spine()?,
            ctx.int_req(
                &at("link"),
                f.link,
                0,
                shape.links_per_leaf_spine() as i64 - 1,
            )? as u16,
        ),
        _ => Component::Spine(plane()?, spine()?),
    };
    let at = Time(ctx.us(&at("at_us"), f.at_us.unwrap_or(0.0), false)?);
    Ok(Failure { component, at })
}

fn resolve_random(ctx: &Ctx<'_>, r: RawRandomFailures) -> Result<RandomFailures, ScenarioError> {
    let key = "rack.random_node_failures.fraction";
    let fraction = r.fraction.ok_or_else(|| ctx.missing(key))?;
    if !(0.0..=1.0).contains(&fraction) {
        return Err(ctx.value(key, format!("{fraction} is out of range: must be 0 to 1")));
    }
    let at = Time(ctx.us(
        "rack.random_node_failures.at_us",
        r.at_us.unwrap_or(0.0),
        false,
    )?);
    Ok(RandomFailures { fraction, at })
}

/// The traffic-matrix keys the streaming kinds (`open-loop`, `closed-loop`) take besides their
/// own in `WORKLOAD_KEYS`.
pub const MATRIX_KEYS: [&str; 8] = [
    "matrix",
    "pairs",
    "senders",
    "dst",
    "hot",
    "hot_fraction",
    "among",
    "weights",
];

/// The keys each workload kind takes besides `kind` (and, for the streaming kinds with a
/// traffic matrix, `MATRIX_KEYS`).
pub const WORKLOAD_KEYS: [(&str, &[&str]); 8] = [
    ("permutation", &["pairs", "flow_bytes", "start_us"]),
    ("incast", &["senders", "dst", "flow_bytes", "start_us"]),
    (
        "random-pairs",
        &["flows", "flow_bytes", "start_us", "distinct_pairs"],
    ),
    (
        "probe",
        &[
            "src",
            "dst",
            "probe_bytes",
            "period_us",
            "probes",
            "first_us",
            "background",
        ],
    ),
    (
        "open-loop",
        &[
            "flows",
            "load",
            "load_node_gbps",
            "mean_gap_ns",
            "size",
            "start_us",
        ],
    ),
    (
        "closed-loop",
        &[
            "flows",
            "flows_per_source",
            "per_source",
            "size",
            "start_us",
        ],
    ),
    ("disaggregated", &["app", "mean_gap_ns", "flows"]),
    ("trace", &["file"]),
];

fn resolve_workload(
    ctx: &Ctx<'_>,
    w: RawWorkload,
    nodes: usize,
    node_rate: Rate,
) -> Result<WorkloadSpec, ScenarioError> {
    let kind = w
        .kind
        .as_deref()
        .ok_or_else(|| ctx.missing("workload.kind"))?;
    let Some((_, own)) = WORKLOAD_KEYS.iter().find(|(k, _)| *k == kind) else {
        return Err(ctx.value(
            "workload.kind",
            format!(
                "unknown workload kind {kind:?}; known kinds: {}",
                WORKLOAD_KEYS.map(|(k, _)| k).join(", ")
            ),
        ));
    };
    let mut keys = own.to_vec();
    if matches!(kind, "open-loop" | "closed-loop") {
        keys.extend(MATRIX_KEYS);
    }
    for key in w.present() {
        if !keys.contains(&key) {
            return Err(ctx.err(
                &format!("workload.{key}"),
                ErrorKind::UnknownKey,
                format!(
                    "unknown key for workload kind {kind:?} (it takes {})",
                    keys.join(", ")
                ),
            ));
        }
    }
    if matches!(
        kind,
        "open-loop" | "closed-loop" | "disaggregated" | "trace"
    ) {
        let senders = w.senders.clone();
        let kind = kind.to_owned();
        return traffic::resolve(ctx, &kind, w, nodes, node_rate, |dst| {
            resolve_senders(ctx, senders, dst, nodes)
        });
    }
    let n = nodes as i64;
    let bytes = |key: &str, v: Option<i64>| -> Result<u64, ScenarioError> {
        Ok(ctx.int_req(key, v, 1, i64::MAX)? as u64)
    };
    let time = |key: &str, v: Option<f64>| ctx.us(key, v.unwrap_or(0.0), false).map(Time);
    let spec = match kind {
        "permutation" => WorkloadSpec::Permutation {
            pairs: ctx.int("workload.pairs", w.pairs, n, 1, n)? as usize,
            flow_bytes: bytes("workload.flow_bytes", w.flow_bytes)?,
            start: time("workload.start_us", w.start_us)?,
        },
        "incast" => {
            let dst = NodeId(ctx.int("workload.dst", w.dst, 0, 0, n - 1)? as u16);
            let senders = resolve_senders(ctx, w.senders, dst, nodes)?;
            WorkloadSpec::Incast {
                senders,
                dst,
                flow_bytes: bytes("workload.flow_bytes", w.flow_bytes)?,
                start: time("workload.start_us", w.start_us)?,
            }
        }
        "random-pairs" => {
            let distinct_pairs = w.distinct_pairs.unwrap_or(false);
            let max = if distinct_pairs {
                n * (n - 1)
            } else {
                i64::from(u32::MAX)
            };
            WorkloadSpec::RandomPairs {
                flows: ctx.int_req("workload.flows", w.flows, 1, max)? as usize,
                flow_bytes: bytes("workload.flow_bytes", w.flow_bytes)?,
                start: time("workload.start_us", w.start_us)?,
                distinct_pairs,
            }
        }
        _ => {
            let src = NodeId(ctx.int_req("workload.src", w.src, 0, n - 1)? as u16);
            let dst = NodeId(ctx.int_req("workload.dst", w.dst, 0, n - 1)? as u16);
            if src == dst {
                return Err(ctx.value(
                    "workload.dst",
                    format!(
                        "the probe's destination must differ from its source ({})",
                        src.0
                    ),
                ));
            }
            let period_key = "workload.period_us";
            let period = match w.period_us {
                Some(v) => Dur(ctx.us(period_key, v, true)?),
                None => return Err(ctx.missing(period_key)),
            };
            let background = w
                .background
                .map(|b| resolve_background(ctx, b, nodes))
                .transpose()?;
            let probes = ctx.int_req("workload.probes", w.probes, 1, i64::from(u32::MAX))? as usize;
            let first = time("workload.first_us", w.first_us)?;
            let last = (period.0 as u128) * (probes as u128 - 1) + first.0 as u128;
            if last >= u64::MAX as u128 / 2 {
                return Err(ctx.value(
                    "workload.probes",
                    format!(
                        "{probes} probes every {period} start later than the simulator can count"
                    ),
                ));
            }
            WorkloadSpec::Probe {
                src,
                dst,
                probe_bytes: bytes("workload.probe_bytes", w.probe_bytes)?,
                period,
                probes,
                first,
                background,
            }
        }
    };
    Ok(spec)
}

fn resolve_senders(
    ctx: &Ctx<'_>,
    v: Option<toml::Value>,
    dst: NodeId,
    nodes: usize,
) -> Result<Vec<NodeId>, ScenarioError> {
    let key = "workload.senders";
    match v {
        None => Err(ctx.missing(key)),
        Some(toml::Value::Integer(count)) => {
            let count = ctx.int_req(key, Some(count), 1, nodes as i64 - 1)? as usize;
            Ok((0..nodes)
                .map(|i| NodeId(i as u16))
                .filter(|&s| s != dst)
                .take(count)
                .collect())
        }
        Some(toml::Value::Array(list)) => {
            if list.is_empty() {
                return Err(ctx.value(key, "the list of senders is empty"));
            }
            let mut senders = Vec::with_capacity(list.len());
            for (i, item) in list.iter().enumerate() {
                let item_key = format!("{key}[{i}]");
                let Some(id) = item.as_integer() else {
                    return Err(ctx.err(
                        &item_key,
                        ErrorKind::Type,
                        format!("expected a node id, got {item}"),
                    ));
                };
                let id = NodeId(ctx.int_req(&item_key, Some(id), 0, nodes as i64 - 1)? as u16);
                if id == dst {
                    return Err(ctx.value(
                        &item_key,
                        format!("node {} is the incast destination", id.0),
                    ));
                }
                if senders.contains(&id) {
                    return Err(ctx.value(&item_key, format!("node {} is listed twice", id.0)));
                }
                senders.push(id);
            }
            Ok(senders)
        }
        Some(other) => Err(ctx.err(
            key,
            ErrorKind::Type,
            format!("expected a count or a list of node ids, got {other}"),
        )),
    }
}

fn resolve_background(
    ctx: &Ctx<'_>,
    b: RawBackground,
    nodes: usize,
) -> Result<Background, ScenarioError> {
    let kind = b.kind.as_deref().unwrap_or("random-pairs");
    if kind != "random-pairs" {
        return Err(ctx.value(
            "workload.background.kind",
            format!("unknown background kind {kind:?}; the only one is \"random-pairs\""),
        ));
    }
    let flows = ctx.int_req("workload.background.flows", b.flows, 0, i64::from(u32::MAX))? as usize;
    if flows > 0 && nodes < 4 {
        return Err(ctx.value(
            "workload.background.flows",
            format!(
                "background traffic runs among the nodes other than the probe's two, and a \
                 rack of {nodes} leaves fewer than 2"
            ),
        ));
    }
    Ok(Background {
        flows,
        flow_bytes: ctx.int_req("workload.background.flow_bytes", b.flow_bytes, 1, i64::MAX)?
            as u64,
        start: Time(ctx.us(
            "workload.background.start_us",
            b.start_us.unwrap_or(0.0),
            false,
        )?),
    })
}

/// The top-level tables a sweep may vary.
const SWEEPABLE: [&str; 4] = ["scenario", "rack", "workload", "run"];

fn resolve_sweep(ctx: &Ctx<'_>, s: crate::raw::RawSweep) -> Result<Sweep, ScenarioError> {
    let parameter = s.parameter.ok_or_else(|| ctx.missing("sweep.parameter"))?;
    let parts: Vec<&str> = parameter.split('.').collect();
    let valid_name = |p: &&str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if parts.len() < 2 || !SWEEPABLE.contains(&parts[0]) || !parts.iter().all(valid_name) {
        return Err(ctx.value(
            "sweep.parameter",
            format!(
                "{parameter:?} is not a dotted key of a scenario table (e.g. \"rack.slot_ns\"); \
                 sweepable tables: {}",
                SWEEPABLE.join(", ")
            ),
        ));
    }
    let values = s.values.ok_or_else(|| ctx.missing("sweep.values"))?;
    if values.is_empty() {
        return Err(ctx.value("sweep.values", "give at least one value"));
    }
    let values = values
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            SweepValue::from_toml(&v).ok_or_else(|| {
                ctx.err(
                    &format!("sweep.values[{i}]"),
                    ErrorKind::Type,
                    format!("a sweep value is a number, string or boolean, got {v}"),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Sweep { parameter, values })
}
