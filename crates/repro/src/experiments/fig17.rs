//! Fig. 17 (§7.3): the datacenter workload at load 1 with 0-50% of the nodes failed from the
//! start. Paper: long-flow goodput falls linearly, to half at 50% (the slots to failed nodes
//! are wasted); the short-flow 99.9th percentile FCT grows by 1.2x at 20% and 1.5x at 40%.
//!
//! The workload is the one without failures minus the flows from or to failed nodes (the
//! scenario file explains why).
//! Full scale: the scenario file (512 nodes, one million completed flows per point). Quick mode:
//! 128 nodes, 0%, 20%, 40% and 50% failed, 20,000 completed flows each (enough for a 99.9th
//! percentile of short flows and a few dozen completed long flows); same claims. Any other
//! scale through `Options::scale`, e.g. `--scale "fractions=0,0.2,0.4,0.5 flows=1000000"`
//! (keys `nodes`, `fractions`, `flows`, and `load`, the load of the run without failures;
//! unset keys keep the scenario file's values); the claims need the 0% point and are made for
//! whichever of 20%, 40% and 50% were run, so `fractions` must hold 0 and one of those.

use crate::plot::emit;
use crate::point;
use crate::scale::Settings;
use crate::{Claim, Options, ReproError, ScaleSpec};
use shoal_metrics::FlowSummary;
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::Scenario;
use shoal_schedule::Component;

const FIG: &str = "Shoal Fig. 17";
/// The failed fractions the claims are made at.
const CLAIMED: [f64; 3] = [0.2, 0.4, 0.5];

/// The size of a sweep: nodes, failed fractions, completed flows per point and the load
/// without failures.
#[derive(Debug, PartialEq)]
struct Scale {
    nodes: u16,
    fractions: Vec<f64>,
    flows: u64,
    load: f64,
}

/// `base` on `scale.nodes` nodes with `fraction` failed and its flows among the live ones,
/// stopping after `scale.flows` completions.
fn at(base: &Scenario, scale: &Scale, fraction: f64) -> Result<Scenario, ReproError> {
    let (nodes, flows) = (scale.nodes, scale.flows);
    let set = |s: &Scenario, settings: &[(&str, toml::Value)]| {
        s.with_settings(settings)
            .map_err(|e| ReproError(e.to_string()))
    };
    let s = set(
        base,
        &[
            ("rack.nodes", toml::Value::Integer(nodes.into())),
            (
                "rack.random_node_failures.fraction",
                toml::Value::Float(fraction),
            ),
        ],
    )?;
    let dead: Vec<u16> = point::rack(&s)
        .failures
        .iter()
        .filter_map(|f| match f.component {
            Component::Node(n) => Some(n.0),
            _ => None,
        })
        .collect();
    let live: Vec<toml::Value> = (0..nodes)
        .filter(|n| !dead.contains(n))
        .map(|n| toml::Value::Integer(n.into()))
        .collect();
    let live_count = live.len();
    // The same workload with the flows from or to failed nodes removed: a fraction
    // (N_live/N)² of them remain, so L = F/(R·N·τ), with N every node, shrinks by that factor
    // (each live node offers L·N_live/N, against a capacity that its wasted slots shrink alike).
    let live_share = live_count as f64 / nodes as f64;
    let load = scale.load * live_share * live_share;
    let mut s = set(
        &s,
        &[
            ("workload.matrix", toml::Value::String("among".into())),
            ("workload.among", toml::Value::Array(live)),
            ("workload.load", toml::Value::Float(load)),
            ("run.completed_flows", toml::Value::Integer(flows as i64)),
        ],
    )?;
    s.sweep = None;
    Ok(s)
}

/// The `load` the scenario file gives.
fn base_load(base: &Scenario) -> Result<f64, ReproError> {
    let doc: toml::Table =
        toml::from_str(&base.document_toml()).map_err(|e| ReproError(e.to_string()))?;
    doc.get("workload")
        .and_then(|w| w.get("load"))
        .and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
        .ok_or_else(|| ReproError("the scenario gives no workload.load".into()))
}

struct Point {
    fraction: f64,
    short_p999_us: f64,
    long_gbps: Option<f64>,
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let base = point::scenario("fig17-node-failures")?;
    let scale = if opts.quick {
        Scale {
            nodes: 128,
            fractions: vec![0.0, 0.2, 0.4, 0.5],
            flows: 20_000,
            load: base_load(&base)?,
        }
    } else {
        full_scale(&base, opts.scale.as_deref())?
    };
    let mut pts = Vec::new();
    for &fraction in &scale.fractions {
        let s = at(&base, &scale, fraction)?;
        let out = point::run(&s, opts)?;
        let fs = FlowSummary::of(&out.records);
        let short = fs
            .short_fct_us
            .ok_or_else(|| ReproError(format!("no short flow completed at {fraction} failed")))?;
        let p = Point {
            fraction,
            short_p999_us: short.p999,
            long_gbps: fs.long_goodput_gbps.map(|g| g.mean),
        };
        progress(&format!(
            "fig17: {:.0}% failed: short p99.9 FCT {:.2} us, long goodput {} ({} long flows)",
            fraction * 100.0,
            p.short_p999_us,
            p.long_gbps
                .map_or_else(|| "-".to_owned(), |g| format!("{g:.2} Gb/s")),
            fs.long_goodput_gbps.map_or(0, |g| g.count)
        ));
        pts.push(p);
    }
    plot(opts, &pts, progress)?;

    let find = |f: f64| pts.iter().find(|p| (p.fraction - f).abs() < 1e-9);
    let none = find(0.0).ok_or_else(|| ReproError("no point without failures".into()))?;
    let mut claims = Vec::new();
    for (f, paper) in [(0.2, 1.2), (0.4, 1.5)] {
        if let Some(p) = find(f) {
            let ratio = p.short_p999_us / none.short_p999_us;
            claims.push(
                Claim::new(
                    FIG,
                    &format!("short-flow p99.9 FCT at {:.0}% failed", f * 100.0),
                    format!("{paper:.1}x"),
                    format!(
                        "{ratio:.2}x ({:.2} vs {:.2} us)",
                        p.short_p999_us, none.short_p999_us
                    ),
                    format!("{:.2}x to {:.2}x (paper ± 25%)", paper * 0.75, paper * 1.25),
                    (paper * 0.75..=paper * 1.25).contains(&ratio),
                )
                .because(format!(
                    "p99.9 {:.2} us against {:.2} us without failures ({ratio:.2}x): a \
                 bandwidth-bound short flow can use only the {:.0}% of its slots that reach live \
                 nodes, so its FCT grows at least 1/(1 - f) = {:.2}x before any queueing, and at \
                 load {} (a live node carries up to about 0.77) backlogs grow through the run \
                 (docs/results/shoal-datacenter.md, 'Fig. 17')",
                    p.short_p999_us,
                    none.short_p999_us,
                    (1.0 - f) * 100.0,
                    1.0 / (1.0 - f),
                    scale.load
                )),
            );
        }
    }
    if let (Some(half), Some(g0)) = (find(0.5), none.long_gbps) {
        let ratio = half.long_gbps.map(|g| g / g0);
        claims.push(Claim::new(
            FIG,
            "long-flow goodput at 50% failed, relative to none",
            "0.5 (linear decrease)",
            ratio.map_or_else(
                || "no long flow completed".to_owned(),
                |r| format!("{r:.2}"),
            ),
            "0.35 to 0.65",
            ratio.is_some_and(|r| (0.35..=0.65).contains(&r)),
        ));
    }
    Ok(claims)
}

/// The `--scale` settings fig17 takes.
pub(crate) const SCALE: ScaleSpec = ScaleSpec {
    keys: &["nodes", "fractions", "flows", "load"],
    check: check_scale,
};

fn check_scale(text: &str) -> Result<(), ReproError> {
    full_scale(&point::scenario("fig17-node-failures")?, Some(text)).map(drop)
}

/// The scenario file's scale, with `settings` (`--scale`) applied.
fn full_scale(base: &Scenario, settings: Option<&str>) -> Result<Scale, ReproError> {
    let mut scale = Scale {
        nodes: point::rack(base).nodes,
        fractions: point::swept_numbers(base, 0.0),
        flows: base.limits.completed_flows.unwrap_or(1_000_000),
        load: base_load(base)?,
    };
    if let Some(text) = settings {
        let set = Settings::new(text, SCALE.keys);
        for (key, value) in set.pairs()? {
            match key {
                "nodes" => {
                    scale.nodes = u16::try_from(set.int(key, value)?)
                        .ok()
                        .filter(|&n| n >= 2)
                        .ok_or_else(|| set.bad("nodes must be 2 to 65535"))?
                }
                "flows" => {
                    scale.flows =
                        set.at_least(key, value, 1, "each point runs until that many complete")?
                }
                "load" => scale.load = set.number(key, value)?,
                _ => scale.fractions = set.fractions(key, value)?,
            }
        }
        // Every claim compares against the run without failures: refuse before hours of runs.
        if !scale.fractions.contains(&0.0) {
            return Err(set.bad("fractions must include 0, the run every claim compares with"));
        }
        // The claims are made at 20%, 40% and 50% failed: without one of them, hours of runs
        // would check nothing.
        if !CLAIMED.iter().any(|f| scale.fractions.contains(f)) {
            return Err(set.bad(
                "fractions must include 0.2, 0.4 or 0.5 besides 0: the claims are made there, \
                 and no other point is checked",
            ));
        }
    }
    Ok(scale)
}

/// Fig. 17: tail FCT and goodput against the fraction failed.
fn plot(opts: &Options, pts: &[Point], progress: &mut dyn FnMut(&str)) -> Result<(), ReproError> {
    let pct = |p: &Point| p.fraction * 100.0;
    let figures = [
        (
            "fig17a-short-fct",
            Figure {
                title: "Fig. 17: short flows (<= 100 KB) under node failures".into(),
                x: Axis::linear("Failed nodes (%)"),
                y: Axis::linear("99.9th percentile FCT (µs)"),
                series: vec![Series::new(
                    "shoal",
                    pts.iter().map(|p| (pct(p), p.short_p999_us)).collect(),
                )],
                kind: Kind::Lines,
            },
        ),
        (
            "fig17b-long-goodput",
            Figure {
                title: "Fig. 17: long flows (>= 1 MB) under node failures".into(),
                x: Axis::linear("Failed nodes (%)"),
                y: Axis::linear("Average goodput (Gb/s)"),
                series: vec![Series::new(
                    "shoal",
                    pts.iter()
                        .filter_map(|p| p.long_gbps.map(|g| (pct(p), g)))
                        .collect(),
                )],
                kind: Kind::Lines,
            },
        ),
    ];
    for (stem, fig) in figures {
        emit(opts, fig, stem, progress)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_settings_override_the_scenario_and_need_the_point_without_failures() {
        let base = point::scenario("fig17-node-failures").unwrap();
        let scale = full_scale(&base, Some("nodes=64 fractions=0,0.5 flows=300 load=0.4")).unwrap();
        let want = Scale {
            nodes: 64,
            fractions: vec![0.0, 0.5],
            flows: 300,
            load: 0.4,
        };
        assert_eq!(scale, want);
        let scale = full_scale(&base, None).unwrap();
        assert_eq!(
            (scale.nodes, scale.flows, scale.load),
            (512, 1_000_000, 1.0)
        );
        let err = full_scale(&base, Some("fractions=0.2,0.4")).unwrap_err();
        assert!(err.0.contains("must include 0"), "{}", err.0);
        let err = full_scale(&base, Some("fractions=0,0.1")).unwrap_err();
        assert!(err.0.contains("must include 0.2, 0.4 or 0.5"), "{}", err.0);
        let err = full_scale(&base, Some("load=0.4,0.5")).unwrap_err();
        assert!(err.0.contains("load wants one number"), "{}", err.0);
        let err = full_scale(&base, Some("flows=0")).unwrap_err();
        assert!(err.0.contains("flows must be at least 1"), "{}", err.0);
    }
}
