//! Priority flow control under DCQCN, against what lossless RoCE promises: an incast that would
//! overflow a drop-tail queue loses nothing (PFC pauses the senders' links), and once DCQCN has
//! cut the rates the pauses stop (no PFC storm) while the flows share the bottleneck fairly.

mod common;

use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_psn::{Discipline, NetConfig, PacketFabric, Pfc};
use shoal_topology::FatTree;
use shoal_transport::{Dcqcn, DcqcnConfig};
use shoal_workload::{Flow, IterSource};

const SENDERS: u16 = 8;

/// `SENDERS` hosts of a k = 4 fat-tree (16 hosts, 10 Gb/s, 1 µs links) each send one long DCQCN
/// flow to host 0, until `end_us`; measured from `warm_us`.
fn incast(pfc: Option<Pfc>, end_us: u64, warm_us: u64) -> RunOutput {
    let topo = FatTree {
        k: 4,
        oversubscription: 1,
        rate: Rate::gbps(10),
        link_delay: Dur::from_us(1),
    }
    .build()
    .expect("valid");
    let net = NetConfig {
        discipline: Discipline::Ecn {
            k: 20,
            at_dequeue: true,
        },
        pfc,
        ..NetConfig::ecn(30, 20)
    };
    let mut fabric =
        PacketFabric::new(topo, net, Dcqcn(DcqcnConfig::paper(Rate::gbps(10)))).expect("valid");
    let flows: Vec<Flow> = (1..=SENDERS)
        .map(|s| Flow {
            id: s as u64,
            src: NodeId(s + 7), // hosts 8..16: other pods than host 0
            dst: NodeId(0),
            bytes: 1 << 36,
            start: Time::ZERO,
            class: 0,
        })
        .collect();
    fabric
        .run(
            &mut IterSource::new(flows),
            RunLimits {
                until: Some(Time(end_us * 1_000_000)),
                measure_from: Some(Time(warm_us * 1_000_000)),
                ..RunLimits::default()
            },
            &mut NoProgress,
        )
        .expect("runs")
}

fn pfc() -> Option<Pfc> {
    let mtu = 1040;
    Some(Pfc {
        xoff_bytes: 20 * mtu,
        xon_bytes: 15 * mtu,
    })
}

#[test]
fn an_incast_that_drops_without_pfc_loses_nothing_with_it() {
    let lossy = incast(None, 2_000, 0);
    assert!(
        lossy.counters["packets_dropped"] > 0,
        "{:?}",
        lossy.counters
    );
    let lossless = incast(pfc(), 2_000, 0);
    eprintln!(
        "lossy {:?}\nlossless {:?}",
        lossy.counters, lossless.counters
    );
    assert_eq!(
        lossless.counters["packets_dropped"], 0,
        "{:?}",
        lossless.counters
    );
    assert!(
        lossless.counters["pfc_pauses"] > 0,
        "the first burst must pause"
    );
}

#[test]
fn pauses_stop_once_dcqcn_has_cut_the_rates_and_the_shares_are_fair() {
    // Same seed, same flows: the shorter run is a prefix of the longer one.
    let early = incast(pfc(), 20_000, 10_000);
    let late = incast(pfc(), 40_000, 20_000);
    let storm = late.counters["pfc_pauses"] - early.counters["pfc_pauses"];
    assert!(
        storm <= early.counters["pfc_pauses"] / 10,
        "{} pauses in the first 20 ms, {storm} in the next 20 ms",
        early.counters["pfc_pauses"]
    );
    let secs = 20e-3;
    let gbps: Vec<f64> = late
        .measured_flow_bytes
        .iter()
        .map(|&b| b as f64 * 8.0 / secs / 1e9)
        .collect();
    let total: f64 = gbps.iter().sum();
    eprintln!(
        "pauses {} then {storm}; shares {gbps:.2?} Gb/s",
        early.counters["pfc_pauses"]
    );
    let jain = common::jain(&gbps);
    assert!(total > 0.85 * 10.0 * 1000.0 / 1040.0, "{gbps:?}");
    assert!(jain > 0.95, "unfair: {gbps:?} (Jain {jain:.3})");
    assert_eq!(late.counters["packets_dropped"], 0);
}
