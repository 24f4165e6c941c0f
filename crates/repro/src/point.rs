//! Running one scenario point and reading what the figures plot from its output.

use crate::{Options, ReproError};
use shoal_fabric::{NoProgress, RunOutput};
use shoal_rack::{RackConfig, RackSpec};
use shoal_scenario::Scenario;

/// The scenario files of the experiments, embedded so that `shoal repro` runs anywhere.
const SCENARIOS: &[(&str, &str)] = &[
    (
        "fig09-prototype-throughput",
        include_str!("../../../scenarios/fig09-prototype-throughput.toml"),
    ),
    (
        "fig10-prototype-incast",
        include_str!("../../../scenarios/fig10-prototype-incast.toml"),
    ),
    (
        "fig12-permutation-throughput",
        include_str!("../../../scenarios/fig12-permutation-throughput.toml"),
    ),
    ("fairness", include_str!("../../../scenarios/fairness.toml")),
    (
        "fig13-incast",
        include_str!("../../../scenarios/fig13-incast.toml"),
    ),
    (
        "fig14-detour-optimisations",
        include_str!("../../../scenarios/fig14-detour-optimisations.toml"),
    ),
    (
        "fig15-datacenter",
        include_str!("../../../scenarios/fig15-datacenter.toml"),
    ),
    (
        "fig15-dctcp",
        include_str!("../../../scenarios/fig15-dctcp.toml"),
    ),
    (
        "fig15-dcqcn",
        include_str!("../../../scenarios/fig15-dcqcn.toml"),
    ),
    (
        "fig15-ndp",
        include_str!("../../../scenarios/fig15-ndp.toml"),
    ),
    (
        "fig15-r2c2",
        include_str!("../../../scenarios/fig15-r2c2.toml"),
    ),
    (
        "fig18-disaggregated",
        include_str!("../../../scenarios/fig18-disaggregated.toml"),
    ),
    (
        "epoch-size",
        include_str!("../../../scenarios/epoch-size.toml"),
    ),
    (
        "aquila-fig6-uniform",
        include_str!("../../../scenarios/aquila-fig6-uniform.toml"),
    ),
    (
        "aquila-fig9-full",
        include_str!("../../../scenarios/aquila-fig9-full.toml"),
    ),
    (
        "aquila-fig9-half",
        include_str!("../../../scenarios/aquila-fig9-half.toml"),
    ),
    (
        "aquila-bootstrap",
        include_str!("../../../scenarios/aquila-bootstrap.toml"),
    ),
    (
        "aquila-failure",
        include_str!("../../../scenarios/aquila-failure.toml"),
    ),
    (
        "stardust-fig9",
        include_str!("../../../scenarios/stardust-fig9.toml"),
    ),
    (
        "fig17-node-failures",
        include_str!("../../../scenarios/fig17-node-failures.toml"),
    ),
];

/// The embedded scenario `name`.
pub(crate) fn scenario(name: &str) -> Result<Scenario, ReproError> {
    let (_, text) = SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| ReproError(format!("no embedded scenario {name:?}")))?;
    shoal_scenario::parse(text, &format!("scenarios/{name}.toml"))
        .map_err(|e| ReproError(e.to_string()))
}

/// The points of the scenario's sweep, or the scenario itself if it has none.
pub(crate) fn points(s: &Scenario) -> Result<Vec<Scenario>, ReproError> {
    if s.sweep.is_none() {
        return Ok(vec![s.clone()]);
    }
    Ok(s.sweep_points()
        .map_err(|e| ReproError(e.to_string()))?
        .into_iter()
        .map(|(_, p)| p)
        .collect())
}

/// The numeric values the scenario's sweep takes, or `default` without a sweep.
pub(crate) fn swept_numbers(s: &Scenario, default: f64) -> Vec<f64> {
    s.sweep.as_ref().map_or_else(
        || vec![default],
        |w| w.values.iter().filter_map(|v| v.as_f64()).collect(),
    )
}

/// `base` (an open-loop workload at a load) on `nodes` nodes at `load`, stopping once `flows`
/// flows have completed, without its sweep: how the datacenter experiments scale down.
pub(crate) fn at_load(
    base: &Scenario,
    nodes: u16,
    load: f64,
    flows: u64,
) -> Result<Scenario, ReproError> {
    let mut s = base
        .with_settings(&[
            ("rack.nodes", toml::Value::Integer(nodes.into())),
            ("workload.load", toml::Value::Float(load)),
            ("run.completed_flows", toml::Value::Integer(flows as i64)),
        ])
        .map_err(|e| ReproError(e.to_string()))?;
    s.sweep = None;
    Ok(s)
}

/// The rack of a Shoal experiment's scenario (the embedded files of those experiments are
/// Shoal racks; the quick tests run every one).
pub(crate) fn rack(s: &Scenario) -> &RackConfig {
    &s.spec::<RackSpec>()
        .expect("a Shoal experiment's embedded scenario is a Shoal rack")
        .config
}

/// The rack of a Shoal experiment's scenario, to scale it down.
pub(crate) fn rack_mut(s: &mut Scenario) -> &mut RackConfig {
    &mut s
        .spec_mut::<RackSpec>()
        .expect("a Shoal experiment's embedded scenario is a Shoal rack")
        .config
}

/// Builds and runs a scenario point, on `opts.threads` threads where its fabric can use them
/// (the fast Shoal engine's parts; outputs do not depend on the count).
pub(crate) fn run(s: &Scenario, opts: &Options) -> Result<RunOutput, ReproError> {
    let mut fabric = s.build_fabric().map_err(|e| ReproError(e.to_string()))?;
    fabric.set_threads(opts.threads.max(1));
    let (mut flows, _) = s.source().map_err(|e| ReproError(e.to_string()))?;
    fabric
        .run(flows.as_mut(), s.limits, &mut NoProgress)
        .map_err(|e| ReproError(e.to_string()))
}

/// Payload bits per second one node can move: every channel, every slot, a full cell's payload.
pub(crate) fn payload_rate_bps(rack: &RackConfig) -> f64 {
    rack.channels as f64 * rack.payload_bytes() as f64 * 8.0 / (rack.slot.0 as f64 / 1e12)
}

/// Length of the measurement window of a run, in seconds.
pub(crate) fn window_s(s: &Scenario, out: &RunOutput) -> f64 {
    let from = s.limits.measure_from.map_or(0, |t| t.0);
    (out.sim_time.0 - from) as f64 / 1e12
}

/// Percent with one decimal.
pub(crate) fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// Slots in one epoch of the scenario's rack.
pub(crate) fn epoch_slots(s: &Scenario) -> Result<u64, ReproError> {
    let spec = s
        .spec::<RackSpec>()
        .ok_or_else(|| ReproError(format!("{}: not a Shoal rack", s.origin)))?;
    Ok(spec
        .build_rack()
        .map_err(|e| ReproError(e.to_string()))?
        .epoch_slots())
}
