//! The Shoal rack as a scenario names it (`fabric = "shoal"`, the `[rack]` table): the raw
//! keys, their defaults (the paper's §7.1 rack), how they become a [`RackConfig`], and the
//! resolved `[rack]` written back. Every rule the values obey is in
//! [`RackConfig::validate`]; here are only the conversions from the file's units and forms
//! (nanoseconds, `"fill"`, a latency in place of a delay, failures by component name).

use crate::config::rules::{
    CELL_BYTES, CHANNELS, CLASSES, DELAY_SLOTS, HEADER_BYTES, LOW_CLASS_QUEUE_CELLS, NODES,
    OVERHEAD_BYTES, PACKET_BYTES, SWITCH_PORTS,
};
use crate::{Engine, Failure, RackConfig, ShoalRack};
use serde::Deserialize;
use shoal_base::{ChannelId, Dur, NodeId, Rate, Time, rng};
use shoal_fabric::config::{ConfigError, ErrorKind, Keys, TableError, TomlOut, read_table};
use shoal_fabric::config::{dur_ns, float, text, time_us};
use shoal_fabric::{Fabric, FabricKind, ResolvedFabric, Resolving};
use shoal_metrics::IdealFct;
use shoal_schedule::{Arrangement, Component, LeafId, SpineId};

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
    /// Not in the paper (a simulator choice): the fast engine wherever it covers the rack, the
    /// sans-IO node engine (the reference model) elsewhere; both give identical results.
    pub const ENGINE: &str = "auto";
}

/// `[rack]` as serde sees it: every key optional (defaults are applied in [`resolve`]).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of rack keys")]
struct RawRack {
    nodes: Option<i64>,
    channels: Option<i64>,
    channel_gbps: Option<f64>,
    slot_ns: Option<f64>,
    guard_ns: Option<f64>,
    /// An integer or the string "fill".
    cell_bytes: Option<toml::Value>,
    header_bytes: Option<i64>,
    overhead_bytes: Option<i64>,
    delay_slots: Option<i64>,
    latency_ns: Option<f64>,
    switch_ports: Option<i64>,
    arrangement: Option<String>,
    classes: Option<i64>,
    low_class_queue_cells: Option<i64>,
    ready_queue: Option<bool>,
    age_rule: Option<bool>,
    packet_bytes: Option<i64>,
    interleave_flows: Option<bool>,
    header_bit_error_rate: Option<f64>,
    verify_schedule: Option<bool>,
    engine: Option<String>,
    breakdown: Option<bool>,
    failures: Option<Vec<RawFailure>>,
    random_node_failures: Option<RawRandomFailures>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a failure: a table such as { component = \"node\", node = 3, at_us = 10.0 }"
)]
struct RawFailure {
    component: Option<String>,
    node: Option<i64>,
    plane: Option<i64>,
    leaf: Option<i64>,
    spine: Option<i64>,
    link: Option<i64>,
    at_us: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { fraction = 0.2, at_us = 0.0 }"
)]
struct RawRandomFailures {
    fraction: Option<f64>,
    at_us: Option<f64>,
}

/// A fraction of the nodes failed at random (Fig. 17), drawn from the seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomFailures {
    /// Fraction of the nodes; `round(fraction * nodes)` fail.
    pub fraction: f64,
    pub at: Time,
}

/// The rack a scenario describes: its configuration (`config.failures` lists the explicit
/// failures and then the random ones, drawn from `seed`) and the seed of its random parts.
/// Two specs are equal when they build the same rack (the same configuration and seed), however
/// their failures were given: the resolved form lists drawn failures explicitly.
#[derive(Clone, Debug)]
pub struct RackSpec {
    pub config: RackConfig,
    pub seed: u64,
    explicit_failures: Vec<Failure>,
    random_failures: Option<RandomFailures>,
}

impl PartialEq for RackSpec {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config && self.seed == other.seed
    }
}

impl RackSpec {
    /// Failures the file lists (without the random ones).
    pub fn explicit_failures(&self) -> &[Failure] {
        &self.explicit_failures
    }

    pub fn random_failures(&self) -> Option<RandomFailures> {
        self.random_failures
    }

    /// Builds the rack: the schedule, its Clos and (unless `verify_schedule = false`) the
    /// verifier's proof.
    pub fn build_rack(&self) -> Result<ShoalRack, ConfigError> {
        ShoalRack::new(self.config.clone(), self.seed)
    }
}

/// The registry's entry for the Shoal rack.
pub struct Kind;

impl FabricKind for Kind {
    fn names(&self) -> &'static [&'static str] {
        &["shoal"]
    }

    fn tables(&self) -> &'static [&'static str] {
        &["rack"]
    }

    fn resolve(&self, input: &Resolving<'_>) -> Result<Box<dyn ResolvedFabric>, TableError> {
        let raw: RawRack = read_table(input.text, "rack")?.unwrap_or_default();
        Ok(Box::new(resolve(input.keys, raw, input.seed)?))
    }
}

impl ResolvedFabric for RackSpec {
    fn name(&self) -> &str {
        "shoal"
    }

    fn nodes(&self) -> usize {
        self.config.nodes as usize
    }

    fn node_rate(&self) -> Rate {
        self.config.node_rate()
    }

    fn ideal_fct(&self) -> Result<IdealFct, ConfigError> {
        Ok(self.config.ideal_fct())
    }

    fn queue_unit(&self) -> &'static str {
        "cells"
    }

    fn tick(&self) -> Option<Dur> {
        Some(self.config.slot)
    }

    fn reseed(&mut self, seed: u64) {
        self.seed = seed;
        self.config.failures = all_failures(
            &self.explicit_failures,
            self.random_failures,
            self.config.nodes,
            seed,
        );
    }

    fn write_toml(&self, t: &mut TomlOut) {
        write(t, &self.config);
    }

    fn build(&self) -> Result<Box<dyn Fabric>, ConfigError> {
        Ok(Box::new(self.build_rack()?))
    }
}

/// Explicit failures followed by the random node failures drawn from `seed`.
fn all_failures(
    explicit: &[Failure],
    random: Option<RandomFailures>,
    nodes: u16,
    seed: u64,
) -> Vec<Failure> {
    let mut all = explicit.to_vec();
    if let Some(r) = random {
        let count = ((r.fraction * nodes as f64).round() as usize).min(nodes as usize);
        let mut rng = rng::stream(seed, "scenario.failures", 0);
        let mut ids: Vec<u16> = (0..nodes).collect();
        // A partial Fisher-Yates shuffle: the first `count` entries are a uniform sample.
        for i in 0..count {
            let j = rand::RngExt::random_range(&mut rng, i..ids.len());
            ids.swap(i, j);
        }
        let mut chosen = ids[..count].to_vec();
        chosen.sort_unstable();
        all.extend(chosen.into_iter().map(|n| Failure {
            component: Component::Node(NodeId(n)),
            at: r.at,
        }));
    }
    all
}

fn resolve(keys: &Keys<'_>, raw: RawRack, seed: u64) -> Result<RackSpec, ConfigError> {
    use defaults as d;
    let nodes = NODES.read(raw.nodes, d::NODES)?;
    let channels = CHANNELS.read(raw.channels, d::CHANNELS)?;
    let channel_rate = keys.gbps(
        "rack.channel_gbps",
        raw.channel_gbps.unwrap_or(d::CHANNEL_GBPS),
    )?;
    let slot = keys.ns("rack.slot_ns", raw.slot_ns.unwrap_or(d::SLOT_NS), true)?;
    let guard = keys.ns("rack.guard_ns", raw.guard_ns.unwrap_or(d::GUARD_NS), false)?;
    let header_bytes = HEADER_BYTES.read(raw.header_bytes, d::HEADER_BYTES)?;
    let overhead_bytes = OVERHEAD_BYTES.read(raw.overhead_bytes, d::OVERHEAD_BYTES)?;
    let cell_bytes = match &raw.cell_bytes {
        None => d::CELL_BYTES as u16,
        Some(toml::Value::Integer(v)) => CELL_BYTES.read(Some(*v), 0)?,
        Some(toml::Value::String(s)) if s == "fill" => {
            fill(channel_rate, slot, guard, header_bytes, overhead_bytes)?
        }
        Some(other) => {
            return Err(keys.err(
                "rack.cell_bytes",
                ErrorKind::Type,
                format!("expected an integer or \"fill\", got {other}"),
            ));
        }
    };
    let delay_slots = match (raw.delay_slots, raw.latency_ns) {
        (Some(_), Some(_)) => {
            return Err(keys.value(
                "rack.latency_ns",
                "give either delay_slots or latency_ns, not both",
            ));
        }
        (_, Some(latency)) => {
            let latency = keys.ns("rack.latency_ns", latency, true)?;
            let slots = latency.0.div_ceil(slot.0.max(1));
            u32::try_from(slots).map_err(|_| {
                keys.value(
                    "rack.latency_ns",
                    format!("{latency} is {slots} slots, more than the simulator allows"),
                )
            })?
        }
        (v, None) => DELAY_SLOTS.read(v, d::DELAY_SLOTS)?,
    };
    let arrangement: Arrangement = raw
        .arrangement
        .as_deref()
        .unwrap_or(d::ARRANGEMENT)
        .parse()
        .map_err(|e: shoal_schedule::UnknownArrangement| {
            keys.value("rack.arrangement", e.to_string())
        })?;
    let header_bit_error_rate = raw.header_bit_error_rate.unwrap_or(0.0);
    if !header_bit_error_rate.is_finite() {
        return Err(keys.value("rack.header_bit_error_rate", "must be a finite probability"));
    }
    let explicit_failures = raw
        .failures
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, f)| resolve_failure(keys, i, f))
        .collect::<Result<Vec<_>, _>>()?;
    let random_failures = raw
        .random_node_failures
        .map(|r| resolve_random(keys, r))
        .transpose()?;
    let mut config = RackConfig {
        nodes,
        channels,
        channel_rate,
        slot,
        guard,
        cell_bytes,
        header_bytes,
        overhead_bytes,
        delay_slots,
        switch_ports: SWITCH_PORTS.read(raw.switch_ports, d::SWITCH_PORTS)?,
        arrangement,
        classes: CLASSES.read(raw.classes, d::CLASSES)?,
        low_class_queue_cells: LOW_CLASS_QUEUE_CELLS
            .read(raw.low_class_queue_cells, d::LOW_CLASS_QUEUE_CELLS)?,
        ready_queue: raw.ready_queue.unwrap_or(true),
        age_rule: raw.age_rule.unwrap_or(true),
        packet_bytes: PACKET_BYTES.read(raw.packet_bytes, d::PACKET_BYTES)?,
        interleave_flows: raw.interleave_flows.unwrap_or(true),
        failures: explicit_failures.clone(),
        header_bit_error_rate,
        verify_schedule: raw.verify_schedule.unwrap_or(true),
        engine: match raw.engine.as_deref().unwrap_or(d::ENGINE) {
            "auto" => Engine::Auto,
            "node" => Engine::Node,
            "fast" => Engine::Fast,
            other => {
                return Err(keys.value(
                    "rack.engine",
                    format!("unknown engine {other:?}; known: auto, node, fast"),
                ));
            }
        },
        breakdown: raw.breakdown.unwrap_or(false),
    };
    config.validate(keys)?;
    config.failures = all_failures(&explicit_failures, random_failures, nodes, seed);
    Ok(RackSpec {
        config,
        seed,
        explicit_failures,
        random_failures,
    })
}

/// `cell_bytes = "fill"`: the largest cell the usable part of a slot carries.
fn fill(
    rate: Rate,
    slot: Dur,
    guard: Dur,
    header_bytes: u16,
    overhead_bytes: u16,
) -> Result<u16, ConfigError> {
    let key = "rack.cell_bytes";
    let usable = Dur(slot.0.saturating_sub(guard.0));
    let fits = rate.bytes_in(usable);
    let fill = fits.saturating_sub(overhead_bytes as u64);
    let gbps = rate.as_gbps_f64();
    if fill <= header_bytes as u64 {
        return Err(shoal_fabric::config::value(
            key,
            format!(
                "\"fill\": {usable} at {gbps} Gb/s carries {fits} B; less {overhead_bytes} B \
                 of framing leaves {fill} B, no room for payload after the {header_bytes} B \
                 header"
            ),
        ));
    }
    u16::try_from(fill).map_err(|_| {
        shoal_fabric::config::value(
            key,
            format!("\"fill\" gives {fill} B, more than the 65535 B a cell can have"),
        )
    })
}

const FAILURE_KEYS: [(&str, &[&str]); 5] = [
    ("node", &["node"]),
    ("node-link", &["node", "plane"]),
    ("leaf", &["plane", "leaf"]),
    ("leaf-spine-link", &["plane", "leaf", "spine", "link"]),
    ("spine", &["plane", "spine"]),
];

/// A failure as the file gives it; the ids are checked against the rack by
/// [`RackConfig::validate`].
fn resolve_failure(keys: &Keys<'_>, i: usize, f: RawFailure) -> Result<Failure, ConfigError> {
    let at = |k: &str| format!("rack.failures[{i}].{k}");
    let component = f
        .component
        .as_deref()
        .ok_or_else(|| keys.missing(&at("component")))?;
    let Some((_, takes)) = FAILURE_KEYS.iter().find(|(c, _)| *c == component) else {
        return Err(keys.value(
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
        if v.is_some() && !takes.contains(&key) {
            return Err(keys.err(
                &at(key),
                ErrorKind::UnknownKey,
                format!(
                    "unknown key for a {component} failure (it takes {} and at_us)",
                    takes.join(", ")
                ),
            ));
        }
    }
    // An id the 16-bit (8-bit for planes) field cannot hold; the rack checks the rest.
    let id = |k: &str, v: Option<i64>, max: i64| keys.int_req(&at(k), v, 0, max);
    let node = || id("node", f.node, u16::MAX as i64).map(|v| NodeId(v as u16));
    let plane = || id("plane", f.plane, u8::MAX as i64).map(|v| ChannelId(v as u8));
    let leaf = || id("leaf", f.leaf, u16::MAX as i64).map(|v| LeafId(v as u16));
    let spine = || id("spine", f.spine, u16::MAX as i64).map(|v| SpineId(v as u16));
    let component = match component {
        "node" => Component::Node(node()?),
        "node-link" => Component::NodeLink(plane()?, node()?),
        "leaf" => Component::Leaf(plane()?, leaf()?),
        "leaf-spine-link" => Component::LeafSpineLink(
            plane()?,
            leaf()?,
            spine()?,
            id("link", f.link, u16::MAX as i64)? as u16,
        ),
        _ => Component::Spine(plane()?, spine()?),
    };
    let at = Time(keys.us(&at("at_us"), f.at_us.unwrap_or(0.0), false)?);
    Ok(Failure { component, at })
}

fn resolve_random(keys: &Keys<'_>, r: RawRandomFailures) -> Result<RandomFailures, ConfigError> {
    let key = "rack.random_node_failures.fraction";
    let fraction = r.fraction.ok_or_else(|| keys.missing(key))?;
    if !(0.0..=1.0).contains(&fraction) {
        return Err(keys.value(key, format!("{fraction} is out of range: must be 0 to 1")));
    }
    let at = Time(keys.us(
        "rack.random_node_failures.at_us",
        r.at_us.unwrap_or(0.0),
        false,
    )?);
    Ok(RandomFailures { fraction, at })
}

/// `[rack]` with every key, and every failure (random ones drawn) as `[[rack.failures]]`.
fn write(t: &mut TomlOut, r: &RackConfig) {
    t.header("[rack]");
    t.kv("nodes", r.nodes);
    t.kv("channels", r.channels);
    t.kv("channel_gbps", float(r.channel_rate.0 as f64 / 1e9));
    t.kv("slot_ns", dur_ns(r.slot));
    t.kv("guard_ns", dur_ns(r.guard));
    t.kv("cell_bytes", r.cell_bytes);
    t.kv("header_bytes", r.header_bytes);
    t.kv("overhead_bytes", r.overhead_bytes);
    t.kv("delay_slots", r.delay_slots);
    t.kv("switch_ports", r.switch_ports);
    t.kv("arrangement", text(r.arrangement.name()));
    t.kv("classes", r.classes);
    t.kv("low_class_queue_cells", r.low_class_queue_cells);
    t.kv("ready_queue", r.ready_queue);
    t.kv("age_rule", r.age_rule);
    t.kv("packet_bytes", r.packet_bytes);
    t.kv("interleave_flows", r.interleave_flows);
    t.kv("header_bit_error_rate", float(r.header_bit_error_rate));
    t.kv("verify_schedule", r.verify_schedule);
    t.kv("engine", text(r.engine.name()));
    // Written only when on: an observation, and resolved files of earlier runs stay as they were.
    if r.breakdown {
        t.kv("breakdown", true);
    }
    for failure in &r.failures {
        t.header("[[rack.failures]]");
        match failure.component {
            Component::Node(n) => {
                t.kv("component", text("node"));
                t.kv("node", n.0);
            }
            Component::NodeLink(c, n) => {
                t.kv("component", text("node-link"));
                t.kv("node", n.0);
                t.kv("plane", c.0);
            }
            Component::Leaf(c, l) => {
                t.kv("component", text("leaf"));
                t.kv("plane", c.0);
                t.kv("leaf", l.0);
            }
            Component::LeafSpineLink(c, l, sp, q) => {
                t.kv("component", text("leaf-spine-link"));
                t.kv("plane", c.0);
                t.kv("leaf", l.0);
                t.kv("spine", sp.0);
                t.kv("link", q);
            }
            Component::Spine(c, sp) => {
                t.kv("component", text("spine"));
                t.kv("plane", c.0);
                t.kv("spine", sp.0);
            }
        }
        t.kv("at_us", time_us(failure.at));
    }
}
