//! The XFabric rack as a scenario fabric, against what theory says a flow-level run must give:
//! a lone flow's FCT on one circuit, processor sharing on it, and a rack that rewires itself
//! into direct circuits for a permutation.

use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits};
use shoal_workload::{Flow, IterSource};
use shoal_xfabric::fabric::XFabricRack;
use shoal_xfabric::scenario::{Topology, XFabricSpec};

fn spec(topology: Topology, socs: u16, ports: u8) -> XFabricSpec {
    XFabricSpec {
        topology,
        socs,
        ports_per_soc: ports,
        uplinks: 1,
        link_rate: Rate::gbps(8),
        hop_delay: Dur::from_ns(1_000),
        period: Dur::from_us(1_000),
        subflows: 64,
        seed: 3,
    }
}

fn flow(id: u64, src: u16, dst: u16, bytes: u64, start_ns: u64) -> Flow {
    Flow {
        id,
        src: NodeId(src),
        dst: NodeId(dst),
        bytes,
        start: Time(start_ns * 1_000),
        class: 0,
    }
}

fn fcts(spec: XFabricSpec, flows: Vec<Flow>) -> Vec<Dur> {
    let out = XFabricRack::new(spec)
        .run(
            &mut IterSource::new(flows),
            RunLimits::default(),
            &mut NoProgress,
        )
        .unwrap();
    out.records
        .iter()
        .map(|r| r.finish.expect("every flow completes") - r.start)
        .collect()
}

#[test]
fn one_circuit_is_shared_as_processor_sharing() {
    // Two SoCs with one port each: the random 1-regular graph is one circuit, 8 Gb/s (a byte per
    // ns) each way. A lone 8,000-byte flow: 8 µs plus one 1 µs hop.
    let two = spec(Topology::Random, 2, 1);
    assert_eq!(
        fcts(two.clone(), vec![flow(0, 0, 1, 8_000, 0)]),
        [Dur::from_ns(9_000)]
    );
    // With a second of 4,000 bytes at the same time both go at half rate until the small one
    // has sent its 4,000 (8 µs), then the large one its last 4,000 alone (4 µs more); a flow
    // the other way has the other direction to itself.
    assert_eq!(
        fcts(
            two,
            vec![
                flow(0, 0, 1, 8_000, 0),
                flow(1, 0, 1, 4_000, 0),
                flow(2, 1, 0, 8_000, 0),
            ]
        ),
        [
            Dur::from_ns(13_000),
            Dur::from_ns(9_000),
            Dur::from_ns(9_000)
        ]
    );
}

#[test]
fn the_rack_rewires_a_permutation_into_direct_circuits() {
    // 16 SoCs, each sending to its partner in a fixed permutation, 1 MB flows back to back for
    // 20 ms. After the first period (1 ms) Algorithm 1 gives every pair with demand a direct
    // circuit (each SoC has two such peers and d = 4 ports), so a flow that starts after it
    // takes at most its bytes over one 8 Gb/s circuit plus one hop, 1,001 µs, and at best
    // over d / 2 = 2 circuits, 501 µs; on the first, random, circuits it took longer.
    let socs = 16u16;
    let partner = |s: u16| (s * 5 + 3) % socs;
    let mut flows = Vec::new();
    for k in 0..20u64 {
        for s in 0..socs {
            if partner(s) != s {
                flows.push(flow(
                    flows.len() as u64,
                    s,
                    partner(s),
                    1_000_000,
                    k * 1_000_000,
                ));
            }
        }
    }
    let starts: Vec<Time> = flows.iter().map(|f| f.start).collect();
    let fct = fcts(spec(Topology::XFabric, socs, 4), flows);
    let mean = |from: Time, to: Time| {
        let v: Vec<u64> = fct
            .iter()
            .zip(&starts)
            .filter(|&(_, &s)| s >= from && s < to)
            .map(|(d, _)| d.0)
            .collect();
        v.iter().sum::<u64>() / v.len() as u64
    };
    let before = mean(Time::ZERO, Time(1_000_000_000));
    let after = mean(Time(5_000_000_000), Time(20_000_000_000));
    assert!(
        (501_000_000..=1_001_000_000).contains(&after),
        "{after} ps after rewiring"
    );
    assert!(after < before, "{after} ps after, {before} ps before");
}
