//! §7.2 fairness: random flows on the 512-node rack; each flow's throughput against its max-min
//! fair rate. The reference is our own water-filling over Shoal's virtual-link model
//! (`shoal_metrics::maxmin::shoal_maxmin`): every ordered pair of nodes is a virtual link of one
//! cell per epoch, every flow N−1 equal subflows over one or two of them. Paper: across workloads
//! of 50 to 1,024 flows, 99% of flows within 10% of their ideal.
//!
//! Quick mode runs a 128-node rack with 50 and 200 flows; the claim is the same.

use crate::point::{self, pct, window_s};
use crate::{Claim, Options, ReproError};
use shoal_metrics::maxmin::shoal_maxmin;
use shoal_scenario::WorkloadSpec;

const FIG: &str = "Shoal §7.2";

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let base = point::scenario("fairness")?;
    let mut pts = point::points(&base)?;
    if opts.quick {
        pts = [50, 200]
            .iter()
            .map(|&flows| {
                let mut p = pts[0].clone();
                point::rack_mut(&mut p).nodes = 128;
                if let WorkloadSpec::RandomPairs {
                    flows: ref mut x, ..
                } = p.workload
                {
                    *x = flows;
                }
                p
            })
            .collect();
    }
    let mut claims = Vec::new();
    for p in &pts {
        let out = point::run(p)?;
        let w = window_s(p, &out);
        let n = point::rack(p).nodes as usize;
        let epoch_s = point::epoch_slots(p)? as f64 * point::rack(p).slot.0 as f64 / 1e12;
        let link_bps = point::rack(p).payload_bytes() as f64 * 8.0 / epoch_s;
        let pairs: Vec<_> = out.records.iter().map(|r| (r.src, r.dst)).collect();
        let ideal = shoal_maxmin(n, link_bps * (n - 1) as f64, &pairs)
            .map_err(|e| ReproError(format!("fairness reference: {e}")))?;
        let ratios: Vec<f64> = out
            .measured_flow_bytes
            .iter()
            .zip(&ideal)
            .map(|(&b, &r)| b as f64 * 8.0 / w / r)
            .collect();
        let within =
            ratios.iter().filter(|r| (*r - 1.0).abs() <= 0.10).count() as f64 / ratios.len() as f64;
        let (lo, hi) = ratios
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), &r| (a.min(r), b.max(r)));
        progress(&format!(
            "fairness: {n} nodes, {} flows: {} within 10% (ratios {lo:.3}..{hi:.3})",
            pairs.len(),
            pct(within)
        ));
        claims.push(Claim::new(
            FIG,
            &format!(
                "{} random flows on {n} nodes: share within 10% of max-min",
                pairs.len()
            ),
            "99%",
            pct(within),
            ">= 99%",
            within >= 0.99,
        ));
    }
    Ok(claims)
}
