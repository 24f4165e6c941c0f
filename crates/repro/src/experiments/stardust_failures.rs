//! Stardust §5.9 and Appendix E, failures in a running fabric: on Fig. 9's two-tier setup at a
//! utilisation of 0.8, a link between the element tiers fails, and in another run a
//! second-tier element fails whole, 100 us into the run. The devices learn it only from the
//! silence of their reachability messages (Table 4's: every 10,000 clocks of 1 GHz, 128
//! adapters a message, three to agree). The paper: recovery takes the propagation time of
//! Appendix E, "around hundreds of microseconds", and a failure costs only the cells on the
//! failed link.
//!
//! Claims, fixed before the first run:
//! - every forwarding-table change the failure causes is done within our local detection
//!   (three silent intervals and half of one) plus Appendix E's (2n − 1) · (t + pd) · M · th
//!   for this fabric (two tiers, 100 m links, M = ⌈adapters / 128⌉);
//! - the data cells lost are exactly those on the failed link or in the failed element: the
//!   destinations give up as lost exactly the cells the failure took, and nothing else is
//!   dropped, given up, late or unroutable;
//! - after recovery (from 250 us after the failure, past detection, propagation and the 50 us
//!   reassembly timer) every adapter receives at least 0.97 of what it receives without the
//!   failure (the fabric keeps 15/16 of its capacity between the tiers, for 0.8 of it).
//!
//! Full scale: 256 adapters x 32 links, measured for 1 ms after recovery. Quick: Fig. 9's
//! quick network (32 adapters x 8 links), measured for 150 us. `--threads 3` runs the three
//! simulations (no failure, the link, the element) at once.

use crate::at_once;
use crate::experiments::stardust_fig9::{link_data_bps, quick_settings, set, spec};
use crate::point;
use crate::{Claim, Options, ReproError};
use shoal_base::Time;
use shoal_fabric::{Fabric, NoProgress, RunOutput};
use shoal_scenario::Scenario;
use shoal_stardust::models::Reachability as Model;
use shoal_stardust::scenario::Shape;
use shoal_stardust::{Failure, Stardust};
use toml::Value;

const FIG: &str = "Stardust §5.9, App. E";
const UTILISATION: f64 = 0.8;
const FAIL_AT_US: u64 = 100;
/// Measuring starts this long after the failure.
const SETTLED_US: u64 = 250;
const KEPT: f64 = 0.97;

fn run_one(base: &Scenario, failure: Option<Failure>) -> Result<RunOutput, ReproError> {
    let spec = spec(base)?;
    let net = spec.network().map_err(|e| ReproError(e.to_string()))?;
    let mut fabric = Stardust::new(net);
    if let Some(f) = failure {
        let at = Time(FAIL_AT_US * 1_000_000);
        fabric.fail(at, f).map_err(|e| ReproError(e.to_string()))?;
    }
    let (mut flows, _) = base.source().map_err(|e| ReproError(e.to_string()))?;
    fabric
        .run(flows.as_mut(), base.limits, &mut NoProgress)
        .map_err(|e| ReproError(e.to_string()))
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let mut base = point::scenario("stardust-fig9")?;
    let measured_us = if opts.quick {
        base = set(&base, &quick_settings())?;
        150.0
    } else {
        1000.0
    };
    let b = spec(&base)?;
    let topo = b.topology().map_err(|e| ReproError(e.to_string()))?;
    let port_gbps = UTILISATION * topo.ports(0) as f64 * link_data_bps(b) / 1e9;
    let from = (FAIL_AT_US + SETTLED_US) as f64;
    base = set(
        &base,
        &[
            ("stardust.port_gbps", Value::Float(port_gbps)),
            ("run.measure_from_us", Value::Float(from)),
            ("run.until_us", Value::Float(from + measured_us)),
        ],
    )?;
    let spec = spec(&base)?;
    let Shape::CellClos {
        fas,
        fas_per_pod: per_pod,
        fe1_per_pod,
        parallel,
        fe2,
    } = spec.shape
    else {
        return Err(ReproError("needs a cell Clos".into()));
    };
    if fe2 == 0 {
        return Err(ReproError("needs two tiers".into()));
    }
    let fe1_total = fas / per_pod * fe1_per_pod;
    // First-tier element 0's first link up (its down links come first), and second-tier
    // element 0.
    let failures = [
        (
            "a link between the tiers",
            Failure::Link {
                dev: fas,
                port: per_pod * parallel,
            },
        ),
        (
            "a second-tier element",
            Failure::Device {
                dev: fas + fe1_total,
            },
        ),
    ];
    let r = spec.reach;
    let model = Model {
        f: 1e9,
        c: r.interval.0 as f64 / 1e3,
        bytes: spec.adapter.control_bytes as f64,
        b: r.bitmap as f64,
        h: 1.0,
        hosts: fas as f64,
        n: 2,
        th: r.confirm as f64,
        pd: vec![spec.link_delay.0 as f64 * 1e-12; 3],
        s: spec.link_rate.0 as f64,
    };
    let bound_us = model.recovery() * 1e6 + r.timeout().0 as f64 / 1e6;

    // The run without a failure and the two with one are independent simulations (at full
    // scale each takes over half an hour of CPU): with `--threads` they run at once, and each
    // reports when it ends; the results do not depend on it.
    let runs = [
        (None, "without a failure".to_string()),
        (
            Some(failures[0].1),
            format!("where {} fails", failures[0].0),
        ),
        (
            Some(failures[1].1),
            format!("where {} fails", failures[1].0),
        ),
    ];
    let outs = at_once::map(
        &runs,
        opts.threads,
        |(failure, what)| {
            let out = run_one(&base, *failure)?;
            Ok((out, format!("the run {what} ended")))
        },
        progress,
    )?;
    let [baseline, with_failure @ ..]: [RunOutput; 3] = outs
        .try_into()
        .unwrap_or_else(|_| unreachable!("three runs in, three out"));
    let mut claims = Vec::new();
    for ((what, _), run) in failures.into_iter().zip(with_failure) {
        let c = |k: &str| run.counters[k];
        let rerouted_us = c("failure_rerouted_ps") as f64 / 1e6;
        let kept = run
            .delivered_bytes
            .iter()
            .zip(&baseline.delivered_bytes)
            // An adapter the run without the failure delivered nothing to measured no share.
            .filter(|&(_, &b)| b > 0)
            .map(|(&o, &b)| o as f64 / b as f64)
            .fold(f64::NAN, f64::min);
        let other_losses: u64 = [
            "fe_drops",
            "late_cells",
            "unroutable_cells",
            "ingress_drops",
        ]
        .iter()
        .map(|k| c(k))
        .sum();
        progress(&format!(
            "{what}: tables settled {rerouted_us:.1} us after the failure \
             (bound {bound_us:.1} us), last cell into it after {:.1} us, {} data and {} control \
             cells lost with it, {} given up by reassembly, {} packets dropped, other losses \
             {other_losses}, least share kept {kept:.3}, FCI marks {}",
            c("failure_last_use_ps") as f64 / 1e6,
            c("failure_data_lost"),
            c("failure_control_lost"),
            c("lost_cells"),
            c("reassembly_drops"),
            c("fe_fci_marked"),
        ));
        claims.push(Claim::new(
            FIG,
            &format!("{what} failed: rerouted within App. E's propagation time"),
            format!("<= {bound_us:.1} us (detection + App. E for this fabric)"),
            format!("{rerouted_us:.1} us"),
            "<= bound",
            rerouted_us > 0.0 && rerouted_us <= bound_us,
        ));
        claims.push(Claim::new(
            FIG,
            &format!("{what} failed: only the cells on it are lost"),
            "cells on the failed part",
            format!(
                "{} lost with it, {} given up at the destinations, {other_losses} other",
                c("failure_data_lost"),
                c("lost_cells")
            ),
            "equal, no other loss",
            c("failure_data_lost") == c("lost_cells") && other_losses == 0,
        ));
        let throughput = format!("{what} failed: every adapter's throughput after recovery");
        let paper = "unchanged (the fabric keeps 15/16 of its capacity for 0.8)";
        claims.push(if kept.is_nan() {
            Claim::not_checked(
                FIG,
                &throughput,
                paper,
                "the run without the failure delivered nothing",
            )
        } else {
            Claim::new(
                FIG,
                &throughput,
                paper,
                format!("{kept:.3} of the run without the failure (least adapter)"),
                format!(">= {KEPT}"),
                kept >= KEPT,
            )
        });
    }
    Ok(claims)
}
