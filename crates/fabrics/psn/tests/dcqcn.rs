//! DCQCN on its own, against what the DCQCN paper promises: long flows through one bottleneck
//! converge to fair rates and keep it busy, and a short flow completes.

mod common;

use common::{dumbbell, flow, jain, run_window};
use shoal_base::{Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_psn::{Discipline, NetConfig, PacketFabric, Red};
use shoal_transport::{Dcqcn, DcqcnConfig};
use shoal_workload::IterSource;

fn config() -> DcqcnConfig {
    DcqcnConfig::paper(Rate::gbps(10))
}

/// The switch: 100-packet queues marking with the DCQCN paper's RED ramp (5 KB to 200 KB, 1%).
fn net() -> NetConfig {
    let net = NetConfig {
        discipline: Discipline::Red(Red::dcqcn_paper(true)),
        ..NetConfig::ecn(100, 20)
    };
    assert_eq!(
        net.header_bytes,
        config().header_bytes,
        "pacing assumes the network's headers"
    );
    net
}

/// Runs two long flows from hosts 0 and 1 to host 2 (they meet at the first leaf's uplink), the
/// second starting at `second_us`; returns each flow's payload rate (Gb/s) over [warm, end] with the run's counters.
fn two_flows(second_us: u64, warm_ms: u64, end_ms: u64) -> (Vec<f64>, RunOutput) {
    let mut fabric = PacketFabric::new(dumbbell(), net(), Dcqcn(config())).expect("valid");
    let big = 1 << 34;
    let mut flows = IterSource::new([
        flow(0, 0, 2, big, Time::ZERO),
        flow(1, 1, 2, big, Time(second_us * 1_000_000)),
    ]);
    let ms = 1_000_000_000;
    let (warm, end) = (Time(warm_ms * ms), Time(end_ms * ms));
    let (out, gbps) = run_window(&mut fabric, &mut flows, (warm, end), None);
    (gbps, out)
}

/// Payload rate ceiling of a 10 Gb/s link: 1000 of every 1040 bytes.
const CEILING: f64 = 10.0 * 1000.0 / 1040.0;

#[test]
fn two_long_flows_converge_to_fair_shares_and_keep_the_bottleneck_busy() {
    // The second flow joins at 0.5 ms, when the first has the whole link: both must meet in the
    // middle. With α = 1 at the start the first cuts halve the rates, and additive increase of
    // 10 Mb/s per 55 µs takes several milliseconds to refill the link, so measure from 10 ms.
    let (gbps, out) = two_flows(500, 10, 40);
    let total: f64 = gbps.iter().sum();
    eprintln!(
        "dcqcn shares {gbps:?}, utilisation {:.3}, jain {:.4}, counters {:?}",
        total / CEILING,
        jain(&gbps),
        out.counters
    );
    assert!(total > 0.85 * CEILING, "bottleneck underused: {gbps:?}");
    assert!(jain(&gbps) > 0.95, "unfair share {gbps:?}");
    assert!(out.counters["packets_marked"] > 0);
}

#[test]
fn a_short_flow_completes_at_line_rate() {
    // DCQCN starts at line rate: 100 packets take the path's propagation and serialization.
    let mut fabric = PacketFabric::new(dumbbell(), net(), Dcqcn(config())).expect("valid");
    let bytes = 100 * 1000;
    let mut flows = IterSource::new([flow(0, 0, 2, bytes, Time::ZERO)]);
    let out = fabric
        .run(&mut flows, RunLimits::default(), &mut NoProgress)
        .expect("runs");
    let fct = out.records[0].fct().expect("completes").0;
    let ser = Rate::gbps(10).serialize(1040).0;
    let expect = 4 * 1_000_000 + 4 * ser + 99 * ser;
    assert_eq!(fct, expect, "fct {fct} ps, expected {expect} ps");
    assert_eq!(out.counters["retransmission_timeouts"], 0);
}

#[test]
fn go_back_n_recovers_the_losses_of_a_shallow_queue() {
    // A 10-packet queue overflows before the first CNP can act: the receiver NACKs the first
    // gap and the senders go back; every byte still arrives.
    let net = NetConfig::ecn(10, 5);
    let mut fabric = PacketFabric::new(dumbbell(), net, Dcqcn(config())).expect("valid");
    let bytes = 2_000_000;
    let mut flows = IterSource::new([
        flow(0, 0, 2, bytes, Time::ZERO),
        flow(1, 1, 2, bytes, Time::ZERO),
    ]);
    let out = fabric
        .run(&mut flows, RunLimits::default(), &mut NoProgress)
        .expect("runs");
    eprintln!("shallow queue: {:?}", out.counters);
    assert!(out.counters["packets_dropped"] > 0, "{:?}", out.counters);
    assert!(
        out.records.iter().all(|r| r.fct().is_some()),
        "a flow did not finish"
    );
    assert_eq!(out.counters["flows_unfinished"], 0);
}
