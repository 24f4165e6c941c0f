//! From the raw file to validated values: the shared tables (`[scenario]`, `[workload]`,
//! `[run]`, `[sweep]`) here, the fabric's own tables by the fabric the registry names. Every
//! refusal names its dotted key.

use crate::error::{ScenarioError, line_of, span_of};
use crate::raw::{RawBackground, RawFile, RawWorkload};
use crate::registry;
use crate::workload::{Background, WorkloadSpec};
use crate::{Sweep, SweepValue};
use shoal_base::{Dur, NodeId, Time};
use shoal_fabric::RunLimits;
use shoal_fabric::config::{ConfigError, ErrorKind, Keys, TableError};
use shoal_fabric::{ResolvedFabric, Resolving};
use toml::de::DeTable;

mod collective;
mod traffic;

/// The most flows a list workload (drawn whole before the run: `random-pairs`, `probe` and its
/// background) may hold: 50 million flow records are 1.6 GB, held while the run's own records
/// grow beside them. Larger workloads stream: `open-loop` with `flows = N`.
pub const MAX_LIST_FLOWS: i64 = 50_000_000;

/// The run seed when the file gives none.
pub const DEFAULT_SEED: i64 = 1;

/// The tables every scenario may have, whatever its fabric.
pub(crate) const SHARED_TABLES: [&str; 4] = ["scenario", "workload", "run", "sweep"];

/// Where errors point: the origin, and the parsed document (which keys it gives, and their
/// lines unless `lines` is off: documents the tool generated, such as sweep points, have none
/// a user could look up).
pub(crate) struct Ctx<'a> {
    pub origin: &'a str,
    pub text: &'a str,
    pub doc: &'a DeTable<'a>,
    pub lines: bool,
}

impl Ctx<'_> {
    pub fn err(&self, key: &str, kind: ErrorKind, reason: impl Into<String>) -> ScenarioError {
        // The key's own line, or for a missing key the line of the table that lacks it.
        let line = self.lines.then_some(self.doc).and_then(|d| {
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

    /// A fabric's (or the shared checks') refusal, with the file and line added.
    pub fn wrap(&self, e: ConfigError) -> ScenarioError {
        self.err(&e.key, e.kind, e.reason)
    }

    /// Whether the file gives the dotted `key`.
    pub fn given(&self, key: &str) -> bool {
        span_of(self.doc, key).is_some()
    }

    /// Runs `f` with the shared checks of [`Keys`], adding the file and line to its error.
    pub(crate) fn keys<T>(
        &self,
        f: impl FnOnce(&Keys<'_>) -> Result<T, ConfigError>,
    ) -> Result<T, ScenarioError> {
        let given = |k: &str| self.given(k);
        f(&Keys::new(&given)).map_err(|e| self.wrap(e))
    }

    fn value(&self, key: &str, reason: impl Into<String>) -> ScenarioError {
        self.err(key, ErrorKind::Value, reason)
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
        self.keys(|k| k.int(key, v, default, min, max))
    }

    /// A required integer in `min..=max`.
    fn int_req(&self, key: &str, v: Option<i64>, min: i64, max: i64) -> Result<i64, ScenarioError> {
        self.keys(|k| k.int_req(key, v, min, max))
    }

    /// A finite number, at least `min` (or above it when `exclusive`).
    fn num(&self, key: &str, v: f64, min: f64, exclusive: bool) -> Result<f64, ScenarioError> {
        self.keys(|k| k.num(key, v, min, exclusive))
    }

    /// Microseconds to picoseconds; `positive` refuses zero.
    fn us(&self, key: &str, v: f64, positive: bool) -> Result<u64, ScenarioError> {
        self.keys(|k| k.us(key, v, positive))
    }
}

/// Everything resolved from one document.
pub(crate) struct Resolved {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub fabric: Box<dyn ResolvedFabric>,
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
    let seed = ctx.int("scenario.seed", meta.seed, DEFAULT_SEED, 0, i64::MAX)? as u64;
    let fabric = resolve_fabric(ctx, meta.fabric.as_deref().unwrap_or("shoal"), seed)?;
    let workload = raw.workload.ok_or_else(|| {
        ctx.err(
            "workload",
            ErrorKind::Missing,
            "the [workload] table is required",
        )
    })?;
    let workload = resolve_workload(ctx, workload, &*fabric)?;
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
        measured_flows: run
            .measured_flows
            .map(|v| ctx.int_req("run.measured_flows", Some(v), 1, i64::MAX))
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
    if workload.is_unbounded()
        && limits.until.is_none()
        && limits.completed_flows.is_none()
        && limits.measured_flows.is_none()
    {
        return Err(ctx.value(
            "run",
            format!(
                "the {} workload without workload.flows never ends: set run.completed_flows, \
                 run.measured_flows or run.until_us",
                workload.kind()
            ),
        ));
    }
    check_limits(ctx, &limits, &workload, fabric.tick())?;
    let sweep = raw
        .sweep
        .map(|s| resolve_sweep(ctx, s, fabric.as_ref()))
        .transpose()?;
    Ok(Resolved {
        name,
        description: meta.description.unwrap_or_default(),
        seed,
        fabric,
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
    if limits.completed_flows.is_some() && limits.measured_flows.is_some() {
        return Err(ctx.value(
            "run.measured_flows",
            "set run.completed_flows (stop after any N flows complete) or run.measured_flows \
             (measure the first N flows and stop when they have completed), not both"
                .to_owned(),
        ));
    }
    for (key, want) in [
        ("run.completed_flows", limits.completed_flows),
        ("run.measured_flows", limits.measured_flows),
    ] {
        if let (Some(want), Some(count)) = (want, workload.flow_count())
            && want > count
        {
            return Err(ctx.value(
                key,
                format!("{want} flows can never complete: the workload hands out {count}"),
            ));
        }
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

/// The fabric `name` resolved from its own tables, found in the registry. A table that belongs
/// to another fabric is refused.
fn resolve_fabric(
    ctx: &Ctx<'_>,
    name: &str,
    seed: u64,
) -> Result<Box<dyn ResolvedFabric>, ScenarioError> {
    let Some(kind) = registry::find(name) else {
        let known: Vec<String> = registry::names().map(|f| format!("{f:?}")).collect();
        return Err(ctx.value(
            "scenario.fabric",
            format!(
                "unknown fabric {name:?}; known fabrics: {}",
                known.join(", ")
            ),
        ));
    };
    for other in registry::FABRICS {
        for table in other.tables() {
            if !kind.tables().contains(table) && ctx.given(table) {
                return Err(ctx.value(
                    table,
                    format!(
                        "[{table}] configures the {} fabric{}; the {name} fabric takes {}",
                        other.names().join(", "),
                        if other.names().len() > 1 { "s" } else { "" },
                        tables_list(kind.tables()),
                    ),
                ));
            }
        }
    }
    let given = |k: &str| ctx.given(k);
    let keys = Keys::new(&given);
    let input = Resolving {
        fabric: name,
        text: ctx.text,
        keys: &keys,
        seed,
    };
    kind.resolve(&input).map_err(|e| match e {
        TableError::Config(e) => ctx.wrap(e),
        TableError::Toml(e) => crate::toml_error(ctx.origin, ctx.text, ctx.doc, ctx.lines, &e),
    })
}

fn tables_list(tables: &[&str]) -> String {
    if tables.is_empty() {
        return "no table of its own".to_owned();
    }
    tables
        .iter()
        .map(|t| format!("[{t}]"))
        .collect::<Vec<_>>()
        .join(" and ")
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
pub const WORKLOAD_KEYS: [(&str, &[&str]); 12] = [
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
    ("connection-matrix", &["file"]),
    ("dag", &["file"]),
    ("chakra", &["traces", "ranks", "ctrl_deps"]),
    (
        "collective",
        &[
            "op",
            "algorithm",
            "ranks",
            "message_bytes",
            "chunks",
            "group_size",
            "iterations",
            "compute_us",
            "start_us",
            "placement",
            "placement_level",
            "jobs",
        ],
    ),
];

fn resolve_workload(
    ctx: &Ctx<'_>,
    w: RawWorkload,
    fabric: &dyn ResolvedFabric,
) -> Result<WorkloadSpec, ScenarioError> {
    let (nodes, node_rate) = (fabric.nodes(), fabric.node_rate());
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
        "open-loop"
            | "closed-loop"
            | "disaggregated"
            | "trace"
            | "connection-matrix"
            | "dag"
            | "chakra"
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
    if kind == "collective" {
        return collective::resolve(ctx, w, fabric);
    }
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
            if w.flows.is_some_and(|f| f > MAX_LIST_FLOWS) {
                return Err(ctx.value(
                    "workload.flows",
                    format!(
                        "{} flows is more than the {MAX_LIST_FLOWS} a random-pairs list is drawn \
                         with before the run; kind = \"open-loop\" with flows = N streams them",
                        w.flows.unwrap_or_default()
                    ),
                ));
            }
            let max = if distinct_pairs {
                (n * (n - 1)).min(MAX_LIST_FLOWS)
            } else {
                MAX_LIST_FLOWS
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
            let probes = ctx.int_req("workload.probes", w.probes, 1, MAX_LIST_FLOWS)? as usize;
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
            let senders = node_list(ctx, key, &list, nodes, "senders")?;
            if let Some(i) = senders.iter().position(|&s| s == dst) {
                return Err(ctx.value(
                    &format!("{key}[{i}]"),
                    format!("node {} is the incast destination", dst.0),
                ));
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

/// A list of distinct node ids of a rack of `nodes` (the `what` of `key`): not empty, each an
/// integer in range and named once; an error names the element (`key[i]`).
pub(super) fn node_list(
    ctx: &Ctx<'_>,
    key: &str,
    list: &[toml::Value],
    nodes: usize,
    what: &str,
) -> Result<Vec<NodeId>, ScenarioError> {
    if list.is_empty() {
        return Err(ctx.value(key, format!("the list of {what} is empty")));
    }
    let mut ids = Vec::with_capacity(list.len());
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
        if ids.contains(&id) {
            return Err(ctx.value(&item_key, format!("node {} is listed twice", id.0)));
        }
        ids.push(id);
    }
    Ok(ids)
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
    let flows = ctx.int_req("workload.background.flows", b.flows, 0, MAX_LIST_FLOWS)? as usize;
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

/// A sweep varies a key of `[scenario]`, `[workload]`, `[run]` or one of the fabric's tables.
fn resolve_sweep(
    ctx: &Ctx<'_>,
    s: crate::raw::RawSweep,
    fabric: &dyn ResolvedFabric,
) -> Result<Sweep, ScenarioError> {
    let sweepable: Vec<&str> = ["scenario"]
        .into_iter()
        .chain(registry::tables_of(fabric.name()).iter().copied())
        .chain(["workload", "run"])
        .collect();
    let parameter = s.parameter.ok_or_else(|| ctx.missing("sweep.parameter"))?;
    let parts: Vec<&str> = parameter.split('.').collect();
    let valid_name = |p: &&str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    };
    if parts.len() < 2 || !sweepable.contains(&parts[0]) || !parts.iter().all(valid_name) {
        return Err(ctx.value(
            "sweep.parameter",
            format!(
                "{parameter:?} is not a dotted key of a scenario table (e.g. \"rack.slot_ns\"); \
                 sweepable tables: {}",
                sweepable.join(", ")
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
