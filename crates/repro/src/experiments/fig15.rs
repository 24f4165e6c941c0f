//! Fig. 15-16 (§7.3): the 512-node rack under the synthetic datacenter workload (Pareto flow
//! sizes, Poisson arrivals, uniform pairs) swept over the load. Paper, for Shoal itself: short
//! flows (≤ 100 KB) complete fast and long flows (≥ 1 MB) keep a high goodput across loads
//! (Fig. 15, where the numbers are relative to the baselines of the packet-switched issue); the
//! longest queue stays at 11 cells, the most queued at one node at 336 cells and the reordering
//! within a flow at 200 KB, even at high load (Fig. 16).
//!
//! Full scale: the scenario file (512 nodes, one million completed flows per load). Quick mode
//! runs a 128-node rack at loads 0.1, 0.5 and 0.9 until 2,000 flows complete; it checks the same
//! claims, which concern bounds that do not grow with the rack.

use crate::plot::emit;
use crate::point;
use crate::{Claim, Options, ReproError};
use shoal_metrics::FlowSummary;
use shoal_plot::{Axis, Figure, Kind, Series};

const FIG15: &str = "Shoal Fig. 15";
const FIG16: &str = "Shoal Fig. 16";

/// One load point's results.
struct Point {
    load: f64,
    short_mean_us: f64,
    short_p99_us: f64,
    long_gbps: Option<f64>,
    max_queue: u64,
    max_node_queue: u64,
    /// Of that, cells queued for other sources.
    max_node_transit: u64,
    max_reorder_kb: f64,
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let base = point::scenario("fig15-datacenter")?;
    let (nodes, loads, flows): (u16, Vec<f64>, u64) = if opts.quick {
        (128, vec![0.1, 0.5, 0.9], 2_000)
    } else {
        (
            point::rack(&base).nodes,
            point::swept_numbers(&base, 0.5),
            base.limits.completed_flows.unwrap_or(1_000_000),
        )
    };
    let mut pts = Vec::new();
    for &load in &loads {
        let s = point::at_load(&base, nodes, load, flows)?;
        let out = point::run(&s, opts)?;
        let fs = FlowSummary::of(&out.records);
        let short = fs
            .short_fct_us
            .ok_or_else(|| ReproError(format!("no short flow completed at load {load}")))?;
        let p = Point {
            load,
            short_mean_us: short.mean,
            short_p99_us: short.p99,
            long_gbps: fs.long_goodput_gbps.map(|g| g.mean),
            max_queue: out.queues.max_queue,
            max_node_queue: out.queues.max_node_queue,
            max_node_transit: out.queues.max_node_transit,
            max_reorder_kb: out.queues.max_reorder_bytes as f64 / 1e3,
        };
        progress(&format!(
            "load {load}: short FCT mean {:.2} us, p99 {:.2} us; long goodput {}; \
             max queue {} cells, {} at one node ({} in transit), reordering {:.1} KB",
            p.short_mean_us,
            p.short_p99_us,
            p.long_gbps
                .map_or_else(|| "-".to_owned(), |g| format!("{g:.1} Gb/s")),
            p.max_queue,
            p.max_node_queue,
            p.max_node_transit,
            p.max_reorder_kb
        ));
        pts.push(p);
    }
    plots(opts, &pts, progress)?;

    let (first, last) = (&pts[0], &pts[pts.len() - 1]);
    let max_q = pts.iter().map(|p| p.max_queue).max().unwrap_or(0);
    let max_node = pts.iter().map(|p| p.max_node_queue).max().unwrap_or(0);
    let max_transit = pts.iter().map(|p| p.max_node_transit).max().unwrap_or(0);
    let max_reorder = pts.iter().map(|p| p.max_reorder_kb).fold(0.0, f64::max);
    Ok(vec![
        Claim::new(
            FIG15,
            "short-flow p99 FCT grows with load",
            "grows",
            format!(
                "{:.2} us at {} -> {:.2} us at {}",
                first.short_p99_us, first.load, last.short_p99_us, last.load
            ),
            "higher at the highest load than at the lowest",
            last.short_p99_us > first.short_p99_us,
        ),
        Claim::new(
            FIG16,
            "max queue stays small at every load",
            "11 cells (704 B)",
            format!("{max_q} cells"),
            "<= 16 cells (11 + 50%)",
            max_q <= 16,
        ),
        Claim::new(
            FIG16,
            "max aggregate queue at one node",
            "336 cells (21 KB)",
            format!("{max_node} cells ({max_transit} of them in transit)"),
            "<= 504 cells (336 + 50%), all cells counted",
            max_node <= 504,
        ),
        Claim::new(
            FIG16,
            "max reordering within a flow",
            "200 KB",
            format!("{max_reorder:.1} KB"),
            "<= 300 KB (200 + 50%)",
            max_reorder <= 300.0,
        ),
    ])
}

/// Fig. 15a (FCT), 15b (goodput) and 16 (queues, reordering) against load.
fn plots(opts: &Options, pts: &[Point], progress: &mut dyn FnMut(&str)) -> Result<(), ReproError> {
    let line = |name: &str, f: &dyn Fn(&Point) -> Option<f64>| {
        Series::new(
            name,
            pts.iter()
                .filter_map(|p| f(p).map(|y| (p.load, y)))
                .collect(),
        )
    };
    let figures = [
        (
            "fig15a-short-fct",
            Figure {
                title: "Fig. 15a: short flows (<= 100 KB)".into(),
                x: Axis::linear("Load"),
                y: Axis::linear("FCT (µs)"),
                series: vec![
                    line("mean", &|p| Some(p.short_mean_us)),
                    line("99th percentile", &|p| Some(p.short_p99_us)),
                ],
                kind: Kind::Lines,
            },
        ),
        (
            "fig15b-long-goodput",
            Figure {
                title: "Fig. 15b: long flows (>= 1 MB)".into(),
                x: Axis::linear("Load"),
                y: Axis::linear("Average goodput (Gb/s)"),
                series: vec![line("shoal", &|p| p.long_gbps)],
                kind: Kind::Lines,
            },
        ),
        (
            "fig16-queues",
            Figure {
                title: "Fig. 16: max queue and reordering".into(),
                x: Axis::linear("Load"),
                y: Axis::log("Cells / KB"),
                series: vec![
                    line("max queue (cells)", &|p| Some(p.max_queue as f64)),
                    line("max at one node (cells)", &|p| {
                        Some(p.max_node_queue as f64)
                    }),
                    line("of which in transit (cells)", &|p| {
                        Some(p.max_node_transit as f64).filter(|&v| v > 0.0)
                    }),
                    line("max reordering (KB)", &|p| {
                        Some(p.max_reorder_kb.max(0.001))
                    }),
                ],
                kind: Kind::Lines,
            },
        ),
    ];
    for (stem, fig) in figures {
        emit(opts, fig, stem, progress)?;
    }
    Ok(())
}
