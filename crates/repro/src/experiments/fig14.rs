//! Fig. 14 (§7.2): 20 KB probe flows from node 511 to node 0 at regular intervals over random
//! background traffic among the other nodes, with and without the §3.3.3 optimisations (ready
//! queues at intermediate nodes and the 2^age rule at sources). Paper: with them, the probes'
//! FCT distribution is much lower and tighter.
//!
//! Quick mode runs a 128-node rack (probe 127 → 0 of 5 KB, so that as at 512 nodes each subflow
//! carries less than one cell; two background flows per node) for fewer probes; same claims.

use crate::plot::emit;
use crate::point;
use crate::{Claim, Options, ReproError};
use shoal_base::{NodeId, Time};
use shoal_metrics::Percentiles;
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::{Scenario, WorkloadSpec};

const FIG: &str = "Shoal Fig. 14";

/// Completion times (µs) of the probe flows, sorted, with their percentiles.
fn probe_fcts(opts: &Options, s: &Scenario) -> Result<(Vec<f64>, Percentiles), ReproError> {
    let WorkloadSpec::Probe { src, dst, .. } = s.workload else {
        return Err(ReproError("the scenario's workload must be a probe".into()));
    };
    let out = point::run(s, opts)?;
    let mut fcts: Vec<f64> = out
        .records
        .iter()
        .filter(|r| r.src == src && r.dst == dst)
        .filter_map(|r| r.fct().map(|d| d.as_us_f64()))
        .collect();
    fcts.sort_by(f64::total_cmp);
    let p = Percentiles::of(fcts.clone()).ok_or_else(|| ReproError("no probe completed".into()))?;
    Ok((fcts, p))
}

/// The empirical CDF of sorted `values`: (value, fraction at or below it).
fn cdf(values: &[f64]) -> Vec<(f64, f64)> {
    let n = values.len() as f64;
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| (v, (i + 1) as f64 / n))
        .collect()
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let mut opt = point::scenario("fig14-detour-optimisations")?;
    if opts.quick {
        point::rack_mut(&mut opt).nodes = 128;
        if let WorkloadSpec::Probe {
            ref mut src,
            ref mut probes,
            ref mut probe_bytes,
            ref mut background,
            ..
        } = opt.workload
        {
            *src = NodeId(127);
            *probes = 15;
            // A quarter of the nodes, a quarter of the bytes: each subflow still carries less
            // than one cell, so the probe measures queueing, as the 512-node one does.
            *probe_bytes = 5_000;
            if let Some(bg) = background {
                bg.flows = 252;
            }
        }
        opt.limits.until = Some(Time(350_000_000));
    }
    let mut plain = opt.clone();
    point::rack_mut(&mut plain).ready_queue = false;
    point::rack_mut(&mut plain).age_rule = false;
    let (with_fcts, with) = probe_fcts(opts, &opt)?;
    progress(&format!("with §3.3.3: {with:?}"));
    let (without_fcts, without) = probe_fcts(opts, &plain)?;
    progress(&format!("without: {without:?}"));
    let fig = Figure {
        title: "Shoal Fig. 14: probe FCT with and without the §3.3.3 optimisations".into(),
        x: Axis::linear("Probe flow completion time (us)"),
        y: Axis::linear("Fraction of probes"),
        series: vec![
            Series::new("with the optimisations", cdf(&with_fcts)),
            Series::new("without", cdf(&without_fcts)),
        ],
        kind: Kind::Curve,
    };
    emit(opts, fig, "fig14-detour-optimisations", progress)?;
    let spread = |p: &Percentiles| p.max - p.p50;
    Ok(vec![
        Claim::new(
            FIG,
            "the optimisations lower the probes' median FCT",
            "much lower",
            format!("{:.2} us vs {:.2} us without", with.p50, without.p50),
            "at least 1.5x lower",
            without.p50 >= 1.5 * with.p50,
        ),
        Claim::new(
            FIG,
            "the optimisations tighten the FCT distribution",
            "tighter",
            format!(
                "max - median {:.2} us vs {:.2} us without",
                spread(&with),
                spread(&without)
            ),
            "smaller spread",
            spread(&with) < spread(&without),
        ),
        Claim::new(
            FIG,
            "every probe completes",
            "all",
            format!("{} and {} probes", with.count, without.count),
            "equal counts",
            with.count == without.count,
        ),
    ])
}
