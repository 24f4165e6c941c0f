//! What a rack run must achieve whatever the configuration: flows complete through corruption,
//! through priorities with tail drops, and around failed nodes and switches; the flows of one
//! pair share it.

use shoal_base::rng::stream;
use shoal_base::{ChannelId, NodeId, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_rack::{Failure, RackConfig, ShoalRack};
use shoal_schedule::{Component, SpineId};
use shoal_workload::{Flow, IterSource, patterns};

/// The paper's rack on 16-port switches (enough for 128 nodes), its schedule verified.
fn rack(nodes: u16) -> RackConfig {
    RackConfig {
        switch_ports: 16,
        verify_schedule: true,
        engine: shoal_rack::Engine::Node,
        ..RackConfig::paper(nodes)
    }
}

fn run(cfg: RackConfig, flows: &[Flow]) -> RunOutput {
    let limits = RunLimits {
        until: Some(Time(20_000_000_000)),
        ..RunLimits::default()
    };
    ShoalRack::new(cfg, 3)
        .expect("valid rack")
        .run(
            &mut IterSource::new(flows.iter().copied()),
            limits,
            &mut NoProgress,
        )
        .expect("run")
}

fn completed(out: &RunOutput) -> usize {
    out.records.iter().filter(|r| r.finish.is_some()).count()
}

#[test]
fn every_flow_completes_through_header_corruption() {
    let mut cfg = rack(32);
    cfg.header_bit_error_rate = 1e-3; // about 6% of cells hit
    let flows = patterns::random_pairs(32, 100, 20_000, Time::ZERO, &mut stream(1, "t", 0));
    let out = run(cfg, &flows);
    assert_eq!(completed(&out), flows.len(), "{:?}", out.counters);
    assert!(out.counters["corrupt_received"] > 100);
    assert!(out.counters["retransmissions"] > 0);
}

#[test]
fn lower_class_flows_complete_behind_the_higher_class_despite_tail_drops() {
    let mut cfg = rack(16);
    cfg.classes = 2;
    cfg.low_class_queue_cells = 4;
    let mut flows = patterns::random_pairs(16, 80, 20_000, Time::ZERO, &mut stream(2, "t", 0));
    for f in flows.iter_mut().filter(|f| f.id % 2 == 1) {
        f.class = 1;
    }
    let out = run(cfg, &flows);
    assert_eq!(completed(&out), flows.len(), "{:?}", out.counters);
    assert!(out.counters["tail_drops"] > 0, "the test must drop cells");
    let mean = |class: u8| {
        let fcts: Vec<f64> = out
            .records
            .iter()
            .zip(&flows)
            .filter(|(_, f)| f.class == class)
            .filter_map(|(r, _)| r.fct().map(|d| d.as_us_f64()))
            .collect();
        fcts.iter().sum::<f64>() / fcts.len() as f64
    };
    assert!(
        mean(0) < mean(1),
        "class 0 {} us, class 1 {} us",
        mean(0),
        mean(1)
    );
}

#[test]
fn flows_between_live_nodes_complete_after_a_node_dies() {
    let mut cfg = rack(32);
    cfg.failures = vec![Failure {
        component: Component::Node(NodeId(5)),
        at: Time::ZERO,
    }];
    // Flows start once detection and notices have settled (a few epochs of 8 slots).
    let flows: Vec<Flow> =
        patterns::random_pairs(32, 200, 20_000, Time(3_000_000), &mut stream(3, "t", 0));
    let out = run(cfg, &flows);
    for (r, f) in out.records.iter().zip(&flows) {
        let touches_dead = f.src == NodeId(5) || f.dst == NodeId(5);
        assert_eq!(r.finish.is_some(), !touches_dead, "flow {f:?}");
    }
}

#[test]
fn flows_complete_around_a_failed_spine() {
    // A spine carries 1/S of a plane's cells: every pair whose slot crosses it stops talking
    // directly (§3.5) and detours through the others.
    let mut cfg = rack(32);
    cfg.failures = vec![Failure {
        component: Component::Spine(ChannelId(1), SpineId(0)),
        at: Time::ZERO,
    }];
    let flows = patterns::random_pairs(32, 200, 20_000, Time(3_000_000), &mut stream(4, "t", 0));
    let out = run(cfg, &flows);
    assert!(out.counters["peers_failed"] > 0);
    assert_eq!(completed(&out), flows.len(), "{:?}", out.counters);
}

/// A long flow and, a little later, a short one between the same pair: with the pair's flows
/// interleaved packet by packet the short one takes at most twice its time alone (it gets half
/// the node while both send; measured: 1.45x); first
/// come, first served holds it until the long one's last byte.
#[test]
fn a_short_flow_does_not_wait_for_a_long_one_of_the_same_pair() {
    let flow = |id, bytes, start_ns: u64| Flow {
        id,
        src: NodeId(0),
        dst: NodeId(1),
        bytes,
        start: Time(start_ns * 1000),
        class: 0,
    };
    let flows = [flow(0, 1_000_000, 0), flow(1, 3_000, 1_000)];
    let fct = |out: &RunOutput, i: usize| {
        let r = &out.records[i];
        r.finish.expect("completes").0 - r.start.0
    };
    let alone = run(rack(32), &flows[1..]);
    let alone = fct(&alone, 0);

    let shared = run(rack(32), &flows);
    let (long, short) = (fct(&shared, 0), fct(&shared, 1));
    assert!(short <= 2 * alone, "{short} ps against {alone} ps alone");
    assert!(
        short * 20 < long,
        "{short} ps against the long flow's {long} ps"
    );

    let fifo = RackConfig {
        interleave_flows: false,
        ..rack(32)
    };
    let out = run(fifo, &flows);
    let (long, short) = (&out.records[0], &out.records[1]);
    assert!(
        short.finish >= long.finish,
        "{:?} before {:?}",
        short.finish,
        long.finish
    );
}

/// A full permutation among nodes `0..live`: each sends `bytes` to the next, from time zero.
fn ring(live: u16, bytes: u64) -> Vec<Flow> {
    (0..live)
        .map(|i| Flow {
            id: i as u64,
            src: NodeId(i),
            dst: NodeId((i + 1) % live),
            bytes,
            start: Time::ZERO,
            class: 0,
        })
        .collect()
}

/// `cfg` with every node from `live` on dead from the start.
fn dead_from(live: u16, mut cfg: RackConfig) -> RackConfig {
    cfg.failures = (live..cfg.nodes)
        .map(|n| Failure {
            component: Component::Node(NodeId(n)),
            at: Time::ZERO,
        })
        .collect();
    cfg
}

/// A quarter of a 64-node rack dies at once. Every live node then has 16 unreachable notices
/// for every live peer; they must not take the data's slots (§3.5 wastes only the slots to the
/// dead nodes). Over the first 24 epochs the live nodes' flows deliver at least 40% of what they
/// deliver without the failures (measured: 53%; with every notice ahead of data, 5.5%). In the
/// healthy rack the other 16 nodes relay without sending, which is worth more than the 25% of
/// slots lost: the steady state is 60% (the test below compares like with like).
#[test]
fn notices_after_a_mass_failure_leave_the_data_its_slots() {
    let live = 48u16;
    let flows = ring(live, 10_000_000);
    let delivered = |cfg: RackConfig| {
        let slot = cfg.slot.0;
        let mut shoal = ShoalRack::new(cfg, 3).expect("valid rack");
        let limits = RunLimits {
            until: Some(Time(24 * shoal.epoch_slots() * slot)),
            ..RunLimits::default()
        };
        let out = shoal
            .run(
                &mut IterSource::new(flows.iter().copied()),
                limits,
                &mut NoProgress,
            )
            .expect("run");
        (
            out.delivered_bytes.iter().sum::<u64>(),
            out.counters["notices_sent"],
        )
    };
    let (healthy, _) = delivered(rack(64));
    let (failed, notices) = delivered(dead_from(live, rack(64)));
    assert!(notices > 0, "the failures were announced");
    assert!(
        failed * 5 >= healthy * 2,
        "{failed} B against {healthy} B without failures"
    );
}

/// Per-flow rate of a full permutation among the first `live` of `nodes` nodes, the others dead
/// from the start, over the second half of 2 ms.
fn permutation_rate_gbps(nodes: u16, live: u16) -> f64 {
    let flows = ring(live, 1 << 40);
    let cfg = dead_from(live, rack(nodes));
    let end = Time(2_000_000_000);
    let limits = RunLimits {
        until: Some(end),
        measure_from: Some(Time(end.0 / 2)),
        ..RunLimits::default()
    };
    let out = ShoalRack::new(cfg, 3)
        .expect("valid rack")
        .run(&mut IterSource::new(flows), limits, &mut NoProgress)
        .expect("run");
    let bytes: u64 = out.delivered_bytes.iter().sum();
    bytes as f64 * 8.0 / (end.0 as f64 / 2.0 / 1e12) / live as f64 / 1e9
}

/// §3.5 and §7.3: what failed nodes cost is their slots ("the slots corresponding to the failed
/// nodes are wasted"). A full permutation among the 48 live nodes of a 64-node rack gets 47/63 of
/// the per-flow rate of a full permutation on the healthy rack (measured: 0.750).
#[test]
fn dead_nodes_cost_exactly_their_slots() {
    let healthy = permutation_rate_gbps(64, 64);
    let failed = permutation_rate_gbps(64, 48);
    let ratio = failed / healthy;
    let slots = 47.0 / 63.0;
    assert!(
        (ratio / slots - 1.0).abs() < 0.02,
        "{failed:.2} Gb/s against {healthy:.2}: {ratio:.3}, slots {slots:.3}"
    );
}

/// `RackConfig::ideal_fct` is a lower bound: a lone flow of any size, starting at any phase of
/// the schedule, never beats it (slowdown >= 1), and the bound is close for some flows.
#[test]
fn no_lone_flow_beats_the_ideal_fct() {
    let mut best = f64::INFINITY;
    for (channels, delay_slots) in [(1u8, 1u32), (2, 3), (4, 2)] {
        let mut cfg = rack(16);
        cfg.channels = channels;
        cfg.delay_slots = delay_slots;
        let ideal = cfg.ideal_fct();
        for (i, bytes) in [1u64, 56, 57, 200, 5_000, 100_000].into_iter().enumerate() {
            for dst in [1u16, 7, 15] {
                let start = Time(i as u64 * 7_919 + dst as u64 * 23_250);
                let flow = Flow {
                    id: 0,
                    src: NodeId(0),
                    dst: NodeId(dst),
                    bytes,
                    start,
                    class: 0,
                };
                let out = run(cfg.clone(), &[flow]);
                let slowdown = ideal.slowdown(&out.records[0]).expect("completed");
                assert!(
                    slowdown >= 1.0,
                    "{channels} channels, delay {delay_slots}, {bytes} B to {dst}: {slowdown}"
                );
                best = best.min(slowdown);
            }
        }
    }
    assert!(
        best < 1.5,
        "the bound is loose everywhere: best slowdown {best}"
    );
}
