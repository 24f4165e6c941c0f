//! DCTCP on its own, against what the DCTCP paper and RFC 8257 promise: long flows through one
//! bottleneck share it fairly, keep it busy, and hold its queue near the marking threshold K
//! without loss.

mod common;

use common::{dumbbell, flow, jain, run_window};
use shoal_base::{Dur, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_psn::{Discipline, NetConfig, PacketFabric};
use shoal_transport::{Tcp, TcpConfig};
use shoal_workload::IterSource;

/// Runs two 1 GB DCTCP flows from hosts 0 and 1 (first leaf) to host 2 (second leaf): they meet
/// at the first leaf's uplink. Returns each flow's payload rate (Gb/s) over [warm, end] and the
/// mean bottleneck queue (packets) over the same span, with the run's counters.
fn two_flows(at_dequeue: bool, k: u32, warm_ms: u64, end_ms: u64) -> (Vec<f64>, f64, RunOutput) {
    let net = NetConfig {
        discipline: Discipline::Ecn { k, at_dequeue },
        ..NetConfig::ecn(100, k)
    };
    let mut fabric = PacketFabric::new(dumbbell(), net, Tcp(TcpConfig::dctcp())).expect("valid");
    let big = 1 << 30;
    let mut flows = IterSource::new([
        flow(0, 0, 2, big, Time::ZERO),
        flow(1, 1, 2, big, Time::ZERO),
    ]);
    let ms = 1_000_000_000;
    let (warm, end) = (Time(warm_ms * ms), Time(end_ms * ms));
    let (out, gbps) = run_window(&mut fabric, &mut flows, (warm, end), Some(Dur::from_us(5)));
    let after: Vec<f64> = out
        .series
        .samples
        .iter()
        .filter(|s| s.time >= warm)
        .map(|s| s.max_queue_bytes as f64 / 1500.0)
        .collect();
    let mean = after.iter().sum::<f64>() / after.len() as f64;
    (gbps, mean, out)
}

/// Payload rate ceiling of a 10 Gb/s link: 1460 of every 1500 bytes.
const CEILING: f64 = 10.0 * 1460.0 / 1500.0;

#[test]
fn two_long_flows_share_a_bottleneck_fairly_with_the_queue_near_k() {
    // Marking when a packet leaves (htsim's DCTCP queue): fair within a 10 ms window.
    let k = 20;
    let (gbps, queue, out) = two_flows(true, k, 2, 12);
    let total: f64 = gbps.iter().sum();
    assert!(total > 0.95 * CEILING, "bottleneck underused: {gbps:?}");
    assert!(jain(&gbps) > 0.99, "unfair share {gbps:?}");
    // DCTCP holds the queue around K (the paper's Fig. 13 oscillates within about ±K/2 of it)
    // and never lets it reach the 100-packet limit.
    let k = k as f64;
    assert!(
        (0.5 * k..=1.5 * k).contains(&queue),
        "mean bottleneck queue {queue:.1} packets, K = {k}"
    );
    assert_eq!(out.counters["packets_dropped"], 0, "{:?}", out.counters);
    assert!(out.counters["packets_marked"] > 0);
}

#[test]
fn marking_on_arrival_is_fair_on_average_though_it_swings() {
    // Marking on arrival (the DCTCP paper's switch) delays the signal by the queue itself; in a
    // noiseless simulation the two shares swing between about 60/40 and 40/60 over ~10 ms, so
    // fairness holds over a long window rather than every short one.
    let (gbps, queue, out) = two_flows(false, 20, 5, 45);
    assert!(gbps.iter().sum::<f64>() > 0.95 * CEILING, "{gbps:?}");
    assert!(jain(&gbps) > 0.98, "unfair share {gbps:?}");
    assert!((10.0..=30.0).contains(&queue), "mean queue {queue:.1}");
    assert_eq!(out.counters["packets_dropped"], 0);
}

#[test]
fn a_short_flow_completes_in_one_round_trip_plus_serialization() {
    // 10 segments fit the initial window: the FCT is the path's serialization and propagation.
    let mut fabric =
        PacketFabric::new(dumbbell(), NetConfig::ecn(100, 20), Tcp(TcpConfig::dctcp()))
            .expect("valid");
    let bytes = 10 * 1460;
    let mut flows = IterSource::new([flow(0, 0, 2, bytes, Time::ZERO)]);
    let out = fabric
        .run(&mut flows, RunLimits::default(), &mut NoProgress)
        .expect("runs");
    let fct = out.records[0].fct().expect("completes").0;
    // Four links of 1 µs; the first packet is serialized on each of the four hops and the
    // other nine follow back to back at the bottleneck.
    let ser = Rate::gbps(10).serialize(1500).0;
    let expect = 4 * 1_000_000 + 4 * ser + 9 * ser;
    assert_eq!(fct, expect, "fct {fct} ps, expected {expect} ps");
}
