//! Stardust §5.3, the incast example: 128 adapters send 1 MB each to one 50 Gb/s port. The
//! paper: the incast "will be admitted to the fabric at an aggregate rate of 50Gbps. The rest
//! (99%) accumulates in the ingress Fabric Adapters ... No packet is lost", and the egress
//! scheduler's even credits guarantee "an even draining rate of the VOQs, and an optimal flow
//! completion time of the incast event".
//!
//! Full scale: `scenarios/stardust-incast.toml` (128 adapters, 64 elements, 128 MB). Quick: 16
//! adapters over 8 elements, 1 MB each. Claims, fixed before the first run (n senders, all
//! starting at 0; B their bytes on the host links, headers included):
//! - admitted at the port rate: the last completion within [1, 1.02] of B at the port rate
//!   (the optimal completion; 2% for the credit round trip and the fabric's latency);
//! - the rest held at the sources: the most any adapter's ingress buffer held, as a share of
//!   one source's bytes, 1 − 1/n ± 0.01 (the paper's 99% at n = 128: each source sends at its
//!   port rate while its VOQ drains at 1/n of the destination's);
//! - nothing lost: no cell dropped, given up or unroutable, no packet dropped, every flow done;
//! - even draining: the first completion at least 0.99 of the last.

use crate::experiments::stardust_fig9::{LOSSES, set, spec};
use crate::plot::emit;
use crate::{Claim, Options, ReproError};
use shoal_fabric::{Fabric, NoProgress};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::Scenario;
use shoal_stardust::Stardust;
use toml::Value;

const FIG: &str = "Stardust §5.3";
const SCENARIO: &str = include_str!("../../../../scenarios/stardust-incast.toml");
const OPTIMAL_SLACK: f64 = 1.02;
const HELD_TOLERANCE: f64 = 0.01;
const EVEN: f64 = 0.99;

/// The quick version: 16 adapters over 8 elements, the same senders' pattern.
fn quick(base: &Scenario) -> Result<Scenario, ReproError> {
    let fas = 16i64;
    let senders = std::iter::once(1)
        .chain((1..fas).map(|f| 2 * f))
        .map(Value::Integer)
        .collect();
    set(
        base,
        &[
            ("stardust.fas", Value::Integer(fas)),
            ("stardust.fas_per_pod", Value::Integer(fas)),
            ("stardust.fe1_per_pod", Value::Integer(8)),
            ("workload.senders", Value::Array(senders)),
        ],
    )
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let mut base = shoal_scenario::parse(SCENARIO, "scenarios/stardust-incast.toml")
        .map_err(|e| ReproError(e.to_string()))?;
    if opts.quick {
        base = quick(&base)?;
    }
    let spec = spec(&base)?;
    let net = spec.network().map_err(|e| ReproError(e.to_string()))?;
    let (mut flows, _) = base.source().map_err(|e| ReproError(e.to_string()))?;
    let out = Stardust::new(net)
        .run(flows.as_mut(), base.limits, &mut NoProgress)
        .map_err(|e| ReproError(e.to_string()))?;

    let n = out.records.len();
    let mss = (spec.packet_bytes - spec.header_bytes) as u64;
    let wire = |bytes: u64| bytes + bytes.div_ceil(mss) * spec.header_bytes as u64;
    let total_wire: u64 = out.records.iter().map(|r| wire(r.bytes)).sum();
    let port_bps = spec.adapter.port_rate.0 as f64;
    let optimal_us = total_wire as f64 * 8.0 / port_bps * 1e6;
    let done: Vec<f64> = out
        .records
        .iter()
        .filter_map(|r| Some((r.finish?.0 - r.start.0) as f64 / 1e6))
        .collect();
    let c = |k: &str| out.counters[k];
    if done.len() < n || n == 0 {
        let lost: u64 = LOSSES.iter().map(|k| c(k)).sum();
        return Ok(vec![Claim::not_checked(
            FIG,
            "128 x 1 MB incast to one 50 Gb/s port",
            "admitted at 50 Gb/s, nothing lost",
            &format!(
                "{} of {n} flows finished ({lost} cells or packets lost)",
                done.len()
            ),
        )]);
    }
    let last = done.iter().cloned().fold(0.0, f64::max);
    let first = done.iter().cloned().fold(f64::INFINITY, f64::min);
    let per_source = wire(out.records[0].bytes) as f64;
    let held = c("max_ingress_bytes") as f64 / per_source;
    let expect_held = 1.0 - 1.0 / n as f64;
    let losses: u64 = LOSSES.iter().map(|k| c(k)).sum();
    progress(&format!(
        "{n} senders, completion {first:.1} to {last:.1} us (optimal \
         {optimal_us:.1} us), most held at a source {} B ({held:.4} of its bytes), egress \
         buffer at most {} B, element pool at most {} cells, FCI marks {}, losses {losses}",
        c("max_ingress_bytes"),
        c("max_egress_bytes"),
        c("fe_max_pool_cells"),
        c("fe_fci_marked"),
    ));

    let mut sorted = done.clone();
    sorted.sort_by(f64::total_cmp);
    let cdf = sorted
        .iter()
        .enumerate()
        .map(|(i, &t)| (t / 1e3, (i + 1) as f64 / n as f64))
        .collect();
    emit(
        opts,
        Figure {
            title: format!("Stardust §5.3: {n} x 1 MB incast to one 50 Gb/s port"),
            x: Axis::linear("Flow completion time (ms)"),
            y: Axis::linear("Fraction of sources done"),
            series: vec![
                Series::new("Stardust", cdf),
                Series::new(
                    "optimal (all bytes at the port rate)",
                    vec![(optimal_us / 1e3, 0.0), (optimal_us / 1e3, 1.0)],
                ),
            ],
            kind: Kind::Lines,
        },
        "stardust-incast",
        progress,
    )?;

    let ratio = last / optimal_us;
    Ok(vec![
        Claim::new(
            FIG,
            "admitted at the port's 50 Gb/s: the incast completes in the optimal time",
            "optimal (every byte at 50 Gb/s)",
            format!("{last:.1} us = {ratio:.4} x {optimal_us:.1} us"),
            format!("[1, {OPTIMAL_SLACK}] x optimal"),
            (1.0..=OPTIMAL_SLACK).contains(&ratio),
        ),
        Claim::new(
            FIG,
            "the rest held at the sources",
            format!("99% at 128 sources (1 - 1/n = {expect_held:.4} at n = {n})"),
            format!("{held:.4} of a source's bytes at most in one ingress buffer"),
            format!("± {HELD_TOLERANCE}"),
            (held - expect_held).abs() <= HELD_TOLERANCE,
        ),
        Claim::new(
            FIG,
            "no packet lost",
            "0",
            format!(
                "{losses} cells or packets lost, {} of {n} flows done",
                done.len()
            ),
            "0, every flow done",
            losses == 0 && c("packets_in") == c("packets_out"),
        ),
        Claim::new(
            FIG,
            "even draining: every source finishes with the last",
            "even draining rate of the VOQs",
            format!("first completion {:.4} of the last", first / last),
            format!(">= {EVEN}"),
            first / last >= EVEN,
        ),
    ])
}
