//! §7.2 fairness: random flows on the 512-node rack; each flow's throughput against its max-min
//! fair rate. The reference is our own water-filling over Shoal's virtual-link model
//! (`shoal_metrics::maxmin::shoal_maxmin`): every ordered pair of nodes is a virtual link of one
//! cell per epoch, every flow N−1 equal subflows over one or two of them. Paper: across workloads
//! of 50 to 1,024 flows, 99% of flows within 10% of their ideal.
//!
//! Quick mode runs a 128-node rack with 50 and 200 flows; the claim is the same.
//!
//! The paper does not say whether §7.2 ran with the §3.3.3 optimisations; the points run without
//! them (as `scenarios/fairness.toml`) and again with them, beside a permutation with them as
//! the control: with one flow per source the ready queue has nothing to share and changes no
//! flow's rate, so what the random workloads lose with it is the ready queue's doing.

use crate::point::{self, pct, window_s};
use crate::{Claim, Options, ReproError};
use shoal_base::Time;
use shoal_metrics::maxmin::shoal_maxmin;
use shoal_scenario::{Scenario, WorkloadSpec};

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
        let m = measure(opts, p, progress, "")?;
        claims.push(Claim::new(
            FIG,
            &format!(
                "{} random flows on {} nodes: share within 10% of max-min",
                m.flows, m.nodes
            ),
            "99%",
            pct(m.within),
            ">= 99%",
            m.within >= 0.99,
        ));
    }
    // §7.2 does not say whether the §3.3.3 optimisations were on. With them, every local flow
    // of a node shares one place in each Q_jk (Eq. 5); Eq. 6's feedback slows the remote
    // subflows but not to the local flows' share, so a flow's share falls with the number of
    // flows its source has (the breakdown in the progress lines). The same points run again
    // with them on, and a permutation (one flow per source) as the control.
    // Quick mode: the larger point only, to keep the default tests short.
    let mut optimised: Vec<Scenario> = if opts.quick {
        pts[pts.len() - 1..].to_vec()
    } else {
        pts.clone()
    };
    let mut control = pts[0].clone();
    control.workload = WorkloadSpec::Permutation {
        pairs: point::rack(&control).nodes as usize,
        flow_bytes: FLOW_BYTES,
        start: Time::ZERO,
    };
    optimised.push(control);
    for p in &mut optimised {
        let rack = point::rack_mut(p);
        rack.ready_queue = true;
        rack.age_rule = true;
    }
    let permutation = optimised.len() - 1;
    for (i, p) in optimised.iter().enumerate() {
        let m = measure(opts, p, progress, " with the §3.3.3 optimisations")?;
        let what = if i == permutation {
            format!(
                "a permutation of {} flows (one per source, the control)",
                m.flows
            )
        } else {
            format!("{} random flows", m.flows)
        };
        claims.push(
            Claim::new(
                FIG,
                &format!(
                    "{what} on {} nodes, §3.3.3 optimisations on: share within 10% of max-min",
                    m.nodes
                ),
                "99% (if §7.2 ran with them)",
                pct(m.within),
                ">= 99%",
                m.within >= 0.99,
            )
            .because(format!(
                "with the ready queue all local flows of a node toward k share one place in Q_jk \
             (Eq. 4-5) while each remote subflow has its own, so a flow's share falls with the \
             flows at its source: mean ratio to max-min by flows at the source {}, ratios \
             {:.3}..{:.3} (docs/results/shoal-core.md, 'Fairness with the §3.3.3 optimisations')",
                m.by_source, m.lo, m.hi
            )),
        );
    }
    Ok(claims)
}

/// Flows of a permutation: long enough to outlast the run.
const FLOW_BYTES: u64 = 100_000_000_000;

/// How fair one run was: the share of flows within 10% of their max-min rate.
struct Fairness {
    nodes: usize,
    flows: usize,
    within: f64,
    /// The lowest and highest ratio of a flow's rate to its max-min rate.
    lo: f64,
    hi: f64,
    /// The mean ratio per number of flows at the source, as `k:ratio` pairs.
    by_source: String,
}

/// Runs `p` and compares each flow's throughput in the measurement window with its max-min
/// rate; reports the range and, per number of flows at the source, the mean ratio.
fn measure(
    opts: &Options,
    p: &Scenario,
    progress: &mut dyn FnMut(&str),
    label: &str,
) -> Result<Fairness, ReproError> {
    let out = point::run(p, opts)?;
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
    let mut at_source = vec![0usize; n];
    for (src, _) in &pairs {
        at_source[src.idx()] += 1;
    }
    let most = at_source.iter().copied().max().unwrap_or(0);
    let by_source: Vec<String> = (1..=most)
        .filter_map(|k| {
            let of: Vec<f64> = pairs
                .iter()
                .zip(&ratios)
                .filter(|((src, _), _)| at_source[src.idx()] == k)
                .map(|(_, &r)| r)
                .collect();
            (!of.is_empty()).then(|| format!("{k}:{:.2}", of.iter().sum::<f64>() / of.len() as f64))
        })
        .collect();
    progress(&format!(
        "fairness{label}: {n} nodes, {} flows: {} within 10% (ratios {lo:.3}..{hi:.3}); \
         mean ratio by flows at the source {}",
        pairs.len(),
        pct(within),
        by_source.join(" ")
    ));
    Ok(Fairness {
        nodes: n,
        flows: pairs.len(),
        within,
        lo,
        hi,
        by_source: by_source.join(" "),
    })
}
