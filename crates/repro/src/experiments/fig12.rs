//! Fig. 12 (§7.2): on the 512-node rack, average destination throughput for a permutation with
//! 1..512 communicating pairs starts at the single-flow peak and falls monotonically to half of
//! it when all pairs communicate: each flow's cells are detoured through every node, so the
//! detoured traffic grows with the number of pairs.
//!
//! Quick mode runs a 128-node rack (same slot, channels and switches) with 1, 4, 16, 64 and 128
//! pairs; it checks the same three claims.

use crate::plot::emit;
use crate::point::{self, payload_rate_bps, pct, window_s};
use crate::{Claim, Options, ReproError};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::WorkloadSpec;

const FIG: &str = "Shoal Fig. 12";

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let base = point::scenario("fig12-permutation-throughput")?;
    let mut pts = point::points(&base)?;
    if opts.quick {
        pts = [1, 4, 16, 64, 128]
            .iter()
            .map(|&pairs| {
                let mut p = pts[0].clone();
                point::rack_mut(&mut p).nodes = 128;
                if let WorkloadSpec::Permutation {
                    pairs: ref mut x, ..
                } = p.workload
                {
                    *x = pairs;
                }
                p
            })
            .collect();
    }
    let mut series = Vec::new();
    for p in &pts {
        let out = point::run(p, opts)?;
        let w = window_s(p, &out);
        let active: Vec<f64> = out
            .delivered_bytes
            .iter()
            .filter(|&&b| b > 0)
            .map(|&b| b as f64 * 8.0 / w)
            .collect();
        // No destination received anything: nothing was measured (NaN, never a zero rate).
        let avg = if active.is_empty() {
            f64::NAN
        } else {
            active.iter().sum::<f64>() / active.len() as f64
        };
        progress(&format!(
            "{} nodes, {} pairs: {} per destination",
            point::rack(p).nodes,
            active.len(),
            if avg.is_nan() {
                "nothing delivered".to_owned()
            } else {
                format!("{:.2} Gb/s", avg / 1e9)
            }
        ));
        series.push((active.len(), avg));
    }
    if series.iter().any(|(_, g)| g.is_nan()) {
        let why = "a point delivered nothing";
        return Ok(vec![
            Claim::not_checked(
                FIG,
                "a single flow reaches the node's payload rate",
                "peak",
                why,
            ),
            Claim::not_checked(
                FIG,
                "throughput falls monotonically with the number of pairs",
                "monotone",
                why,
            ),
            Claim::not_checked(
                FIG,
                "all pairs communicating halve it",
                "1/2 of the peak",
                why,
            ),
        ]);
    }
    let fig = Figure {
        title: "Shoal Fig. 12: permutation throughput against communicating pairs".into(),
        x: Axis::log("Communicating pairs"),
        y: Axis::linear("Throughput per destination (Gb/s)"),
        series: vec![Series::new(
            "Shoal",
            series.iter().map(|&(p, g)| (p as f64, g / 1e9)).collect(),
        )],
        kind: Kind::Lines,
    };
    emit(opts, fig, "fig12-permutation-throughput", progress)?;
    let capacity = payload_rate_bps(point::rack(&pts[0]));
    let (_, peak) = series[0];
    let (all, full) = *series.last().expect("points");
    let worst_rise = series
        .windows(2)
        .map(|w| (w[1].1 - w[0].1) / w[0].1)
        .fold(f64::NEG_INFINITY, f64::max);
    let curve: Vec<String> = series
        .iter()
        .map(|(p, g)| format!("{p}:{:.1}", g / 1e9))
        .collect();
    let half = full / peak;
    Ok(vec![
        Claim::new(
            FIG,
            "a single flow reaches the node's payload rate",
            "peak",
            format!(
                "{:.1} Gb/s = {} of {:.1}",
                peak / 1e9,
                pct(peak / capacity),
                capacity / 1e9
            ),
            ">= 95% of the payload rate",
            peak >= 0.95 * capacity,
        ),
        Claim::new(
            FIG,
            "throughput falls monotonically with the number of pairs",
            "monotone",
            format!("pairs:Gb/s {}", curve.join(" ")),
            "no rise above 2%",
            worst_rise <= 0.02,
        ),
        Claim::new(
            FIG,
            &format!("all {all} pairs communicating halve it"),
            "1/2 of the peak",
            format!("{:.3} of the peak", half),
            "0.45 to 0.55",
            (0.45..=0.55).contains(&half),
        ),
    ])
}
