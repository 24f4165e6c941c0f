//! Fig. 13 (§7.2): synchronized incast of 130 KB flows from n senders to one node of the 512-node
//! rack. Paper: the slowest flow's FCT grows linearly with n and is the optimal maximum FCT for
//! the incast (the destination's links are the bottleneck and stay busy); the mean FCT coincides
//! with it, which shows Shoal's fair queueing.
//!
//! Quick mode runs a 64-node rack with 1, 8, 32 and 63 senders; same claims.

use crate::plot::emit;
use crate::point::{self, pct};
use crate::{Claim, Options, ReproError};
use shoal_base::NodeId;
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::WorkloadSpec;

const FIG: &str = "Shoal Fig. 13";

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let base = point::scenario("fig13-incast")?;
    let mut pts = point::points(&base)?;
    if opts.quick {
        pts = [1u16, 8, 32, 63]
            .iter()
            .map(|&n| {
                let mut p = pts[0].clone();
                point::rack_mut(&mut p).nodes = 64;
                if let WorkloadSpec::Incast {
                    ref mut senders, ..
                } = p.workload
                {
                    *senders = (1..=n).map(NodeId).collect();
                }
                p
            })
            .collect();
    }
    // (senders, slowest us, mean us, optimum us)
    let mut series = Vec::new();
    for p in &pts {
        let out = point::run(p, opts)?;
        let fcts: Vec<f64> = out
            .records
            .iter()
            .map(|r| r.fct().map(|d| d.as_us_f64()))
            .collect::<Option<_>>()
            .ok_or_else(|| ReproError("an incast flow did not complete".into()))?;
        let slowest = fcts.iter().copied().fold(f64::MIN, f64::max);
        let mean = fcts.iter().sum::<f64>() / fcts.len() as f64;
        // The destination receives one cell per peer per epoch: (N−1) cells per epoch.
        let epoch_s = point::epoch_slots(p)? as f64 * point::rack(p).slot.0 as f64 / 1e12;
        let into_dst_bps =
            (point::rack(p).nodes - 1) as f64 * point::rack(p).payload_bytes() as f64 * 8.0
                / epoch_s;
        let bytes: u64 = out.records.iter().map(|r| r.bytes).sum();
        let optimum = bytes as f64 * 8.0 / into_dst_bps * 1e6;
        progress(&format!(
            "{} senders: slowest {slowest:.1} us, mean {mean:.1} us, optimum {optimum:.1} us",
            fcts.len()
        ));
        series.push((fcts.len() as f64, slowest, mean, optimum));
    }
    let line = |name: &str, pick: fn(&(f64, f64, f64, f64)) -> f64| {
        Series::new(name, series.iter().map(|p| (p.0, pick(p))).collect())
    };
    let fig = Figure {
        title: "Shoal Fig. 13: incast completion time against senders".into(),
        x: Axis::linear("Senders"),
        y: Axis::linear("Flow completion time (us)"),
        series: vec![
            line("slowest", |p| p.1),
            line("mean", |p| p.2),
            line("optimum", |p| p.3),
        ],
        kind: Kind::Lines,
    };
    emit(opts, fig, "fig13-incast", progress)?;
    // Least-squares line through (senders, slowest) and its R².
    let k = series.len() as f64;
    let (sx, sy) = series
        .iter()
        .fold((0.0, 0.0), |(a, b), p| (a + p.0, b + p.1));
    let (mx, my) = (sx / k, sy / k);
    let sxy: f64 = series.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = series.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let slope = sxy / sxx;
    let ss_res: f64 = series
        .iter()
        .map(|p| (p.1 - (my + slope * (p.0 - mx))).powi(2))
        .sum();
    let ss_tot: f64 = series.iter().map(|p| (p.1 - my).powi(2)).sum();
    let r2 = 1.0 - ss_res / ss_tot;
    let &(n, slowest, mean, optimum) = series.last().expect("points");
    Ok(vec![
        Claim::new(
            FIG,
            "slowest FCT grows linearly with the number of senders",
            "linear",
            format!("R² = {r2:.4}, {slope:.2} us per sender"),
            "R² >= 0.99",
            r2 >= 0.99,
        ),
        Claim::new(
            FIG,
            &format!("slowest FCT is the optimum for {n} senders"),
            "optimal",
            format!(
                "{slowest:.1} us vs {optimum:.1} us ({} above)",
                pct(slowest / optimum - 1.0)
            ),
            "within 10% above the optimum",
            slowest <= 1.10 * optimum,
        ),
        Claim::new(
            FIG,
            &format!("mean FCT coincides with the slowest for {n} senders"),
            "coincide",
            format!("mean {mean:.1} us = {} of slowest", pct(mean / slowest)),
            ">= 90% of the slowest",
            mean >= 0.90 * slowest,
        ),
    ])
}
