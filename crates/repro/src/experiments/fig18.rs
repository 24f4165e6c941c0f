//! Fig. 18 (§7.4): the six disaggregated-rack applications, flows every 12.65 ns on average on
//! the 512-node rack. Paper: the longest queue is 10 cells across all applications; short-flow
//! FCT and long-flow goodput per application (plotted; the paper's comparisons are with the
//! packet-switched baselines).
//!
//! Full scale: the scenario file (512 nodes, one million completed flows per application).
//! Quick mode: 128 nodes with a 4x longer mean gap (the same flows per node per second), 3,000
//! completed flows per application; the same claim.

use crate::plot::emit;
use crate::point;
use crate::{Claim, Options, ReproError};
use shoal_metrics::FlowSummary;
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::SweepValue;

const FIG: &str = "Shoal Fig. 18";

struct Point {
    app: String,
    short_mean_us: Option<f64>,
    short_p99_us: Option<f64>,
    long_gbps: Option<f64>,
    max_queue: u64,
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let base = point::scenario("fig18-disaggregated")?;
    let apps: Vec<String> = base
        .sweep
        .as_ref()
        .map(|s| {
            s.values
                .iter()
                .filter_map(|v| match v {
                    SweepValue::Text(a) => Some(a.clone()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let mut pts = Vec::new();
    for app in &apps {
        let mut settings = vec![("workload.app", toml::Value::String(app.clone()))];
        if opts.quick {
            settings.extend([
                ("rack.nodes", toml::Value::Integer(128)),
                ("workload.mean_gap_ns", toml::Value::Float(12.65 * 4.0)),
                ("run.completed_flows", toml::Value::Integer(3_000)),
            ]);
        }
        let mut s = base
            .with_settings(&settings)
            .map_err(|e| ReproError(e.to_string()))?;
        s.sweep = None;
        let out = point::run(&s, opts)?;
        let fs = FlowSummary::of(&out.records);
        let p = Point {
            app: app.clone(),
            short_mean_us: fs.short_fct_us.map(|f| f.mean),
            short_p99_us: fs.short_fct_us.map(|f| f.p99),
            long_gbps: fs.long_goodput_gbps.map(|g| g.mean),
            max_queue: out.queues.max_queue,
        };
        let show = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"));
        progress(&format!(
            "{app}: short FCT mean {} us, p99 {} us; long goodput {} Gb/s; max queue {} \
             cells",
            show(p.short_mean_us),
            show(p.short_p99_us),
            show(p.long_gbps),
            p.max_queue
        ));
        pts.push(p);
    }
    if pts.is_empty() {
        return Err(ReproError("the scenario sweeps no application".into()));
    }
    plots(opts, &pts, progress)?;
    let max_q = pts.iter().map(|p| p.max_queue).max().unwrap_or(0);
    Ok(vec![Claim::new(
        FIG,
        "max queue across all six applications",
        "10 cells",
        format!("{max_q} cells"),
        "<= 15 cells (10 + 50%)",
        max_q <= 15,
    )])
}

/// Fig. 18a (FCT) and 18b (goodput) as bars per application.
fn plots(opts: &Options, pts: &[Point], progress: &mut dyn FnMut(&str)) -> Result<(), ReproError> {
    let categories: Vec<String> = pts.iter().map(|p| p.app.clone()).collect();
    let bars = |name: &str, f: &dyn Fn(&Point) -> Option<f64>| {
        Series::new(
            name,
            pts.iter()
                .enumerate()
                .filter_map(|(i, p)| f(p).map(|y| (i as f64, y)))
                .collect(),
        )
    };
    let figures = [
        (
            "fig18a-short-fct",
            Figure {
                title: "Fig. 18a: short flows (<= 100 KB), disaggregated applications".into(),
                x: Axis::linear("Application"),
                y: Axis::linear("FCT (µs)"),
                series: vec![
                    bars("mean", &|p| p.short_mean_us),
                    bars("99th percentile", &|p| p.short_p99_us),
                ],
                kind: Kind::Bars {
                    categories: categories.clone(),
                },
            },
        ),
        (
            "fig18b-long-goodput",
            Figure {
                title: "Fig. 18b: long flows (>= 1 MB), disaggregated applications".into(),
                x: Axis::linear("Application"),
                y: Axis::linear("Average goodput (Gb/s)"),
                series: vec![bars("shoal", &|p| p.long_gbps)],
                kind: Kind::Bars { categories },
            },
        ),
    ];
    for (stem, fig) in figures {
        emit(opts, fig, stem, progress)?;
    }
    Ok(())
}
