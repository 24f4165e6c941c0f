//! Aquila Fig. 6 (§5): fabric RTT under uniform random IP traffic at growing offered load, 500
//! hosts. Paper: "below 40 µs even near the NIC line rate of 50 Gb/s per machine, and below
//! 20 µs at 70% load".
//!
//! The fabric RTT is a packet's RTS leaving its host to the release of its acknowledgement
//! back there (a one-cell IP packet sent at once: §5 excludes the remote host's processing),
//! so six GNet half round trips (§3.4). §5 measures "by NIC hardware timestamps ... the
//! transmission and queueing delays of GNet and the IP components" in the fabric: the IP
//! component's admission (RTS, CTS) is inside what it measures, so the claims count from the
//! RTS; the RTT from the first data cell and the admission's share of the mean are reported
//! beside it. Which statistic Fig. 6 plots is not said; we hold the 99th percentile to the
//! bounds, the stricter reading, and plot the median beside it. "Near the NIC line rate" is
//! a load carried, so the 90% point's carried load is a claim of its own.
//!
//! Full scale: `scenarios/aquila-fig6-uniform.toml` (512 hosts on 32 × 8 TiNs, loads 0.1-0.9,
//! each point 1 ms after 20 µs of warm-up: the definition of a point; the hosts' queues
//! take a few hundred µs to fill at load 0.7, and a shorter window measures that transient).
//! Quick mode: 72 hosts on 9 pods of 4 TiNs with 4 global links between pods (a pod's 32 global
//! links carry 816 Gb/s for 400 Gb/s of injection, about the full scenario's 2:1), loads 0.3,
//! 0.7 and 0.9, each 200 µs after 10 µs of warm-up: at 0.7 its p99 is within 4% of the same
//! clique's over 1 ms (docs/results/aquila-fig6.md), in a fifth of the time.
//!
//! Tolerances, fixed before the first run: the paper gives bounds, so each claim is one-sided:
//! the 99th percentile at load 0.7 at most 20 µs, at offered load 0.9 at most 40 µs; the load
//! carried at 0.9 within ±10% of it (the paper's "near line rate", added in issue 38). A miss names the data cells' own fabric latency beside it, and the two admission
//! parameters that the RTT's queueing depends on (measured in docs/results/aquila-fig6.md).

use crate::plot::emit;
use crate::point;
use crate::{Claim, Options, ReproError};
use shoal_aquila::scenario::CliqueSpec;
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::Scenario;
use toml::Value;

const FIG: &str = "Aquila Fig. 6";

/// The load of each claim and its bound on the 99th-percentile RTT, µs. The 90% point is
/// offered load: whether the fabric carries it ("near line rate") is a claim of its own.
const BOUNDS: [(f64, f64, &str); 2] = [
    (0.7, 20.0, "at 70% load"),
    (0.9, 40.0, "at 90% offered load"),
];

/// The offered load standing for the paper's "near the NIC line rate", and the tolerance on
/// the load carried there (±10%, as for every number the paper gives; fixed before the claim
/// first ran, though the carried loads of earlier runs, 0.74 and 0.75, were known).
const NEAR_LINE_RATE: f64 = 0.9;

/// The scenario points of a run.
fn points(base: &Scenario, quick: bool) -> Result<Vec<(f64, Scenario)>, ReproError> {
    if !quick {
        let loads = point::swept_numbers(base, 0.5);
        return Ok(loads.into_iter().zip(point::points(base)?).collect());
    }
    let int = |v: i64| Value::Integer(v);
    [0.3, 0.7, 0.9]
        .into_iter()
        .map(|load| {
            let mut s = base
                .with_settings(&[
                    ("clique.pods", int(9)),
                    ("clique.tins_per_pod", int(4)),
                    ("clique.global_links", int(4)),
                    ("clique.local_ports", int(6)),
                    ("clique.global_ports", int(8)),
                    ("workload.load", Value::Float(load)),
                    ("run.until_us", int(210)),
                    ("run.measure_from_us", int(10)),
                ])
                .map_err(|e| ReproError(e.to_string()))?;
            s.sweep = None;
            Ok((load, s))
        })
        .collect()
}

/// What one load point measured.
struct Point {
    load: f64,
    /// Fabric RTT median and 99th percentile, µs, from the packet's RTS leaving its host.
    p50: f64,
    p99: f64,
    /// The same from its first data cell leaving the host (after its CTS), µs.
    data_p50: f64,
    data_p99: f64,
    /// The admission's share of the mean RTT: the mean time from RTS to first data cell, of the
    /// packet and of its acknowledgement, over the mean RTT.
    admission_share: f64,
    /// The data cells' fabric latency, 99th percentile, µs.
    cell_p99: f64,
    /// Payload delivered over what the hosts could send in the window.
    carried: f64,
    /// The admission parameters the RTT's queueing depends on: packets a host's ingress
    /// announces ahead of sending them, packets an egress port grants at once.
    ingress_packets: u32,
    cts_window: u32,
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let base = point::scenario("aquila-fig6-uniform")?;
    let mut measured = Vec::new();
    for (load, s) in points(&base, opts.quick)? {
        progress(&format!("load {load} ({} hosts)", s.nodes()));
        let out = point::run(&s, opts)?;
        let c = &out.counters;
        let get = |k: &str| {
            c.get(k)
                .copied()
                .ok_or_else(|| ReproError(format!("load {load}: no {k} (no RTT measured)")))
        };
        let us = |k: &str| get(k).map(|ns| ns as f64 / 1e3);
        let clique = &s
            .spec::<CliqueSpec>()
            .ok_or_else(|| ReproError(format!("{}: not an Aquila clique", s.origin)))?
            .spec;
        // Payload delivered over what the hosts could send in the window: whether the fabric
        // carried the offered load or the hosts' queues grew (RTS/CTS keeps those out of the
        // fabric, and out of the RTT).
        let capacity = s.node_rate().0 as f64 * s.nodes() as f64 * point::window_s(&s, &out);
        let p = Point {
            load,
            p50: us("rtt_p50_ns")?,
            p99: us("rtt_p99_ns")?,
            data_p50: us("data_rtt_p50_ns")?,
            data_p99: us("data_rtt_p99_ns")?,
            admission_share: us("admission_mean_ns")? / us("rtt_mean_ns")?,
            cell_p99: us("cell_latency_p99_ns")?,
            carried: out.delivered_bytes.iter().sum::<u64>() as f64 * 8.0 / capacity,
            ingress_packets: clique.ingress_packets,
            cts_window: clique.cts_window,
        };
        progress(&format!(
            "load {load}: RTT median {:.2} us, p99 {:.2} us (from the first data cell: \
             median {:.2} us, p99 {:.2} us; the admission {:.0}% of the mean) ({} packets; \
             data cells' fabric latency p99 {:.2} us), carried {:.2} of line rate, {} ECN \
             marks, {} CTD, {} messages unfinished",
            p.p50,
            p.p99,
            p.data_p50,
            p.data_p99,
            100.0 * p.admission_share,
            get("rtt_samples")?,
            p.cell_p99,
            p.carried,
            c.get("ecn_marks").copied().unwrap_or(0),
            c.get("ctd_drops").copied().unwrap_or(0),
            c.get("flows_unfinished").copied().unwrap_or(0)
        ));
        measured.push(p);
    }
    let series = |what: &str, f: fn(&Point) -> f64| {
        Series::new(what, measured.iter().map(|p| (p.load, f(p))).collect())
    };
    let fig = Figure {
        title: String::new(),
        x: Axis::linear("offered load"),
        y: Axis::linear("fabric RTT (µs)"),
        series: vec![
            series("median", |p| p.p50),
            series("99th percentile", |p| p.p99),
            series("p99 from the first data cell", |p| p.data_p99),
        ],
        kind: Kind::Lines,
    };
    emit(opts, fig, "aquila-fig6", progress)?;
    let size = if opts.quick { " [quick: 72 hosts]" } else { "" };
    let mut claims: Vec<Claim> = BOUNDS
        .iter()
        .map(|&(load, bound, what)| {
            let at = measured.iter().find(|p| (p.load - load).abs() < 1e-9);
            let pass = at.is_some_and(|p| p.p99 <= bound);
            let claim = format!("99th-percentile fabric RTT {what} below {bound:.0} us{size}");
            let why = at.map_or("not run".to_owned(), |p| {
                format!(
                    "the data cells' own fabric latency has a p99 of {:.2} us; the \
                     RTT counts from the RTS, which a host's ingress sends up to {} packets \
                     ahead of their data, and each waits for its CTS (at most {} packets \
                     granted per egress port): the tail is IP over GNet's admission queues",
                    p.cell_p99, p.ingress_packets, p.cts_window
                )
            });
            Claim::new(
                FIG,
                &claim,
                format!("< {bound:.0} us"),
                at.map_or("not run".to_string(), |p| {
                    format!(
                        "{:.2} us (carried {:.2} of line rate; from the first data cell \
                         {:.2} us, the admission {:.0}% of the mean RTT)",
                        p.p99,
                        p.carried,
                        p.data_p99,
                        100.0 * p.admission_share
                    )
                }),
                format!("<= {bound:.0} us (one-sided)"),
                pass,
            )
            .because(why)
        })
        .collect();
    // "Near the NIC line rate": the RTT bound above is the paper's only at a load the fabric
    // carries, so the carried load is checked against the offered one.
    let claim = format!("near line rate: the fabric carries the 90% offered load{size}");
    claims.push(
        match measured
            .iter()
            .find(|p| (p.load - NEAR_LINE_RATE).abs() < 1e-9)
        {
            Some(p) => {
                Claim::relative(FIG, &claim, "of line rate", NEAR_LINE_RATE, p.carried, 0.10)
                    .because(
                        "the rest waits in the hosts: IP over GNet's admission holds it out of the \
                 fabric (docs/results/aquila-fig6.md), so the RTT bound at this point is not \
                 the paper's near-line-rate one",
                    )
            }
            None => Claim::not_checked(FIG, &claim, "0.90 of line rate", "not run"),
        },
    );
    Ok(claims)
}
