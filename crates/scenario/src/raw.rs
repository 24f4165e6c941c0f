//! The shared tables as serde sees them: every table rejects unknown keys, every key is
//! optional here (defaults and cross-key rules are applied in `resolve.rs`). Numbers are read
//! wide (`i64`, `f64`) so that range checks can say what the range is. The fabrics read their
//! own tables (`[rack]`, `[network]`, ...); which top-level tables may appear at all is
//! checked against the registry (`lib.rs`), since serde cannot both skip them and refuse the
//! unknown.

use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(expecting = "a scenario: tables such as [scenario], [rack], [workload], [run]")]
pub(crate) struct RawFile {
    pub scenario: Option<RawMeta>,
    pub workload: Option<RawWorkload>,
    pub run: Option<RawRun>,
    pub sweep: Option<RawSweep>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of scenario keys (name, description, seed, fabric)"
)]
pub(crate) struct RawMeta {
    pub name: Option<String>,
    pub description: Option<String>,
    pub seed: Option<i64>,
    pub fabric: Option<String>,
    /// Written by `resolved_toml`; informational only.
    #[allow(dead_code)]
    pub tool_version: Option<String>,
}

/// One flat table for every workload kind; `resolve.rs` refuses keys the kind does not use.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of workload keys")]
pub(crate) struct RawWorkload {
    pub kind: Option<String>,
    pub pairs: Option<i64>,
    pub flow_bytes: Option<i64>,
    pub start_us: Option<f64>,
    /// An integer count or an array of node ids.
    pub senders: Option<toml::Value>,
    pub dst: Option<i64>,
    pub flows: Option<i64>,
    pub distinct_pairs: Option<bool>,
    pub src: Option<i64>,
    pub probe_bytes: Option<i64>,
    pub period_us: Option<f64>,
    pub probes: Option<i64>,
    pub first_us: Option<f64>,
    pub background: Option<RawBackground>,
    pub load: Option<f64>,
    pub load_node_gbps: Option<f64>,
    pub mean_gap_ns: Option<f64>,
    pub matrix: Option<String>,
    pub hot: Option<i64>,
    pub among: Option<Vec<i64>>,
    pub weights: Option<Vec<Vec<i64>>>,
    pub hot_fraction: Option<f64>,
    pub size: Option<RawSize>,
    pub per_source: Option<i64>,
    pub flows_per_source: Option<i64>,
    pub app: Option<String>,
    pub file: Option<String>,
    /// `kind = "chakra"`: `DIR/PREFIX` of the per-rank trace files.
    pub traces: Option<String>,
    /// `kind = "chakra"`: `"order"` or `"ignore"`.
    pub ctrl_deps: Option<String>,
    pub op: Option<String>,
    pub algorithm: Option<String>,
    /// `"all"` or an array of node ids.
    pub ranks: Option<toml::Value>,
    pub message_bytes: Option<i64>,
    pub chunks: Option<i64>,
    pub group_size: Option<i64>,
    pub iterations: Option<i64>,
    pub compute_us: Option<f64>,
    pub placement: Option<String>,
    pub placement_level: Option<String>,
    pub jobs: Option<Vec<RawJob>>,
}

/// One `[[workload.jobs]]` entry of `kind = "collective"`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of collective job keys")]
pub(crate) struct RawJob {
    pub name: Option<String>,
    pub op: Option<String>,
    pub algorithm: Option<String>,
    /// A count of nodes to place, or an array of node ids.
    pub ranks: Option<toml::Value>,
    pub message_bytes: Option<i64>,
    pub chunks: Option<i64>,
    pub group_size: Option<i64>,
    pub iterations: Option<i64>,
    pub compute_us: Option<f64>,
    pub start_us: Option<f64>,
}

/// `workload.size`: a flow-size distribution.
#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an inline table such as { dist = \"fixed\", bytes = 1000 }"
)]
pub(crate) struct RawSize {
    pub dist: Option<String>,
    pub bytes: Option<i64>,
    pub shape: Option<f64>,
    pub mean_bytes: Option<f64>,
    pub cap_bytes: Option<f64>,
    pub cdf: Option<String>,
}

impl RawWorkload {
    /// The keys present, for the per-kind check.
    pub fn present(&self) -> Vec<&'static str> {
        let mut keys = Vec::new();
        let mut note = |present: bool, key: &'static str| {
            if present {
                keys.push(key);
            }
        };
        note(self.pairs.is_some(), "pairs");
        note(self.flow_bytes.is_some(), "flow_bytes");
        note(self.start_us.is_some(), "start_us");
        note(self.senders.is_some(), "senders");
        note(self.dst.is_some(), "dst");
        note(self.flows.is_some(), "flows");
        note(self.distinct_pairs.is_some(), "distinct_pairs");
        note(self.src.is_some(), "src");
        note(self.probe_bytes.is_some(), "probe_bytes");
        note(self.period_us.is_some(), "period_us");
        note(self.probes.is_some(), "probes");
        note(self.first_us.is_some(), "first_us");
        note(self.background.is_some(), "background");
        note(self.load.is_some(), "load");
        note(self.load_node_gbps.is_some(), "load_node_gbps");
        note(self.mean_gap_ns.is_some(), "mean_gap_ns");
        note(self.matrix.is_some(), "matrix");
        note(self.hot.is_some(), "hot");
        note(self.among.is_some(), "among");
        note(self.weights.is_some(), "weights");
        note(self.hot_fraction.is_some(), "hot_fraction");
        note(self.size.is_some(), "size");
        note(self.per_source.is_some(), "per_source");
        note(self.flows_per_source.is_some(), "flows_per_source");
        note(self.app.is_some(), "app");
        note(self.file.is_some(), "file");
        note(self.traces.is_some(), "traces");
        note(self.ctrl_deps.is_some(), "ctrl_deps");
        note(self.op.is_some(), "op");
        note(self.algorithm.is_some(), "algorithm");
        note(self.ranks.is_some(), "ranks");
        note(self.message_bytes.is_some(), "message_bytes");
        note(self.chunks.is_some(), "chunks");
        note(self.group_size.is_some(), "group_size");
        note(self.iterations.is_some(), "iterations");
        note(self.compute_us.is_some(), "compute_us");
        note(self.placement.is_some(), "placement");
        note(self.placement_level.is_some(), "placement_level");
        note(self.jobs.is_some(), "jobs");
        keys
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an inline table such as { flows = 100, flow_bytes = 20000 }"
)]
pub(crate) struct RawBackground {
    pub kind: Option<String>,
    pub flows: Option<i64>,
    pub flow_bytes: Option<i64>,
    pub start_us: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of run keys")]
pub(crate) struct RawRun {
    pub until_us: Option<f64>,
    pub completed_flows: Option<i64>,
    pub measured_flows: Option<i64>,
    pub measure_from_us: Option<f64>,
    pub sample_every_us: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table with parameter and values")]
pub(crate) struct RawSweep {
    pub parameter: Option<String>,
    pub values: Option<Vec<toml::Value>>,
}
