//! The whole fabric against what can be worked out by hand: a lone flow pays its bytes at the
//! port rate plus a fixed latency; an incast is admitted at exactly the port's rate and
//! drained evenly from every source; a permutation runs every port at its rate; random
//! traffic loses nothing (no cell dropped, no packet given up, every byte delivered in order)
//! and the egress buffer never holds more than the credits allow; runs are deterministic.

mod common;

use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_stardust::config::{AdapterConfig, IngressFull, LowLatency};
use shoal_stardust::hosts::HostTransport;
use shoal_stardust::reachability::ReachConfig;
use shoal_stardust::{NetParams, Network, Stardust};
use shoal_topology::CellClos;
use shoal_transport::TcpConfig;
use shoal_workload::{Flow, IterSource};

const PORT: Rate = Rate::gbps(50);

fn adapter(fas: u32, ports: u16) -> AdapterConfig {
    AdapterConfig {
        fas,
        ports,
        port_rate: PORT,
        egress_buffer_bytes: 256 * 1024,
        ingress_buffer_bytes: 32 << 20,
        ingress_full: IngressFull::Pause,
        ..common::adapter_config()
    }
}

/// The reachability protocol of Appendix E's Table 4 and §5.9.
fn reach() -> ReachConfig {
    ReachConfig {
        interval: Dur::from_us(10),
        bitmap: 128,
        confirm: 3,
        error_window: 64,
        error_limit: 4,
    }
}

/// A single tier: `fas` adapters of `ports` ports, one link to each of `fes` elements.
fn single_tier(fas: u32, fes: u32, link: Rate, a: AdapterConfig) -> Network {
    let topo = CellClos {
        fas,
        fas_per_pod: fas,
        fe1_per_pod: fes,
        parallel: 1,
        fe2: 0,
        rate: link,
        link_delay: Dur::from_ns(500),
    }
    .build()
    .unwrap();
    let p = common::net_params(7, reach());
    Network::new(topo, a, p)
}

fn flow(id: u64, src: u16, dst: u16, bytes: u64, start: Time) -> Flow {
    Flow {
        id,
        src: NodeId(src),
        dst: NodeId(dst),
        bytes,
        start,
        class: 0,
    }
}

fn run(net: Network, flows: Vec<Flow>, limits: RunLimits) -> RunOutput {
    let mut src = IterSource::new(flows);
    Stardust::new(net)
        .run(&mut src, limits, &mut NoProgress)
        .expect("runs")
}

fn fct(out: &RunOutput, i: usize) -> u64 {
    let r = &out.records[i];
    r.finish.expect("completed").0 - r.start.0
}

fn c(out: &RunOutput, k: &str) -> u64 {
    out.counters[k]
}

/// Nothing lost anywhere in the fabric.
fn assert_lossless(out: &RunOutput) {
    for k in [
        "fe_drops",
        "ingress_drops",
        "reassembly_drops",
        "lost_cells",
        "late_cells",
        "unroutable_cells",
    ] {
        assert_eq!(c(out, k), 0, "{k}");
    }
    assert_eq!(c(out, "packets_in"), c(out, "packets_out"));
}

/// Wire bytes of a flow of `bytes` in 1500 B packets with 40 B headers.
fn wire(bytes: u64) -> u64 {
    bytes + bytes.div_ceil(1460) * 40
}

#[test]
fn a_lone_flow_runs_at_the_port_rate_after_one_credit_round_trip() {
    let net = single_tier(4, 3, PORT, adapter(4, 2));
    for bytes in [1_000u64, 100_000, 1_000_000] {
        let out = run(
            single_tier(4, 3, PORT, adapter(4, 2)),
            vec![flow(0, 0, 7, bytes, Time::ZERO)],
            RunLimits::default(),
        );
        assert_lossless(&out);
        let t = fct(&out, 0);
        // At least: the bytes at the port rate, both host links and the shortest fabric path.
        let floor = PORT.serialize(wire(bytes)).0 + 2 * 100_000 + 2 * 500_000;
        assert!(t >= floor, "{bytes} B: {t} ps under the floor {floor}");
        // At most a few microseconds more: the status and credit round trip (two crossings
        // of the fabric), one credit's burst in cells and one packet's store and forward at
        // either end.
        assert!(t <= floor + 6_000_000, "{bytes} B: {t} ps, floor {floor}");
    }
    drop(net);
}

#[test]
fn an_incast_is_admitted_at_the_port_rate_and_drained_evenly() {
    // §5.3 in small: 15 adapters send 400 KB each to one 50 Gb/s port at once. (Fairness is
    // among VOQs, so among source adapters: one sending port each.)
    let mut flows = Vec::new();
    let bytes = 400_000u64;
    for s in 1..16u16 {
        flows.push(flow(s as u64, s, 0, bytes, Time::ZERO));
    }
    let out = run(
        single_tier(16, 5, PORT, adapter(16, 1)),
        flows,
        RunLimits::default(),
    );
    assert_lossless(&out);
    let finish: Vec<u64> = (0..15).map(|i| fct(&out, i)).collect();
    let last = *finish.iter().max().unwrap();
    let first = *finish.iter().min().unwrap();
    let drain = PORT.serialize(15 * wire(bytes)).0;
    // The port never idles once the credits flow: the last byte lands within a few µs of
    // the port's time for all the bytes ...
    assert!(last >= drain, "faster than the port: {last} < {drain}");
    assert!(last <= drain + drain / 50 + 10_000_000, "{last} vs {drain}");
    // ... and the egress scheduler's round robin drains every source evenly: the first
    // finishes within a few credits' rounds of the last.
    assert!(
        last - first <= 15 * 2 * PORT.serialize(4096 + 1500).0,
        "first {first}, last {last}"
    );
    // The excess waited at the sources, not at the egress: its buffer stayed within the
    // credits it handed out.
    assert!(c(&out, "max_egress_bytes") <= 256 * 1024);
    // Each source's host sends at 50 Gb/s while its VOQ drains at a fifteenth of that: most
    // of each flow (14/15 of its wire bytes, less what left while it arrived) waits there.
    assert!(c(&out, "max_ingress_bytes") > wire(bytes) * 13 / 15);
}

#[test]
fn a_permutation_runs_every_port_at_its_rate() {
    // 8 adapters x 4 ports, 5 elements: 5 links for 4 ports, 1.17 after cell headers.
    let n = 32u16;
    let bytes = 2_000_000u64;
    let flows: Vec<Flow> = (0..n)
        .map(|i| flow(i as u64, i, (i + 9) % n, bytes, Time::ZERO))
        .collect();
    let out = run(
        single_tier(8, 5, PORT, adapter(8, 4)),
        flows,
        RunLimits::default(),
    );
    assert_lossless(&out);
    let alone = PORT.serialize(wire(bytes)).0;
    for i in 0..n as usize {
        let t = fct(&out, i);
        // Within 3% of the port rate plus the fixed latency of the lone flow.
        assert!(
            t <= alone + alone * 3 / 100 + 6_000_000,
            "flow {i}: {t} vs {alone}"
        );
    }
    assert_eq!(
        c(&out, "fe_fci_marked"),
        0,
        "an underloaded fabric never marks"
    );
}

#[test]
fn random_traffic_loses_nothing_and_respects_the_egress_buffer() {
    // Uniform random pairs with sizes from 1 B to 3 MB, some tiny (packing many per cell).
    let mut flows = Vec::new();
    let mut x = 12345u64;
    let mut t = 0u64;
    for id in 0..600u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let src = (x >> 33) % 32;
        let mut dst = (x >> 13) % 32;
        if dst == src {
            dst = (dst + 1) % 32;
        }
        let bytes = match id % 4 {
            0 => 1 + (x >> 40) % 100,
            1 => 1 + (x >> 30) % 20_000,
            2 => 1 + (x >> 20) % 300_000,
            _ => 1 + (x >> 10) % 3_000_000,
        };
        t += (x >> 50) % 2_000_000;
        flows.push(flow(id, src as u16, dst as u16, bytes, Time(t)));
    }
    let mut a = adapter(8, 4);
    // A small egress buffer: the scheduler must stop and restart.
    a.egress_buffer_bytes = 4096 + 1500 + 8192;
    let out = run(
        single_tier(8, 5, PORT, a),
        flows.clone(),
        RunLimits::default(),
    );
    assert_lossless(&out);
    for (i, f) in flows.iter().enumerate() {
        assert!(out.records[i].finish.is_some(), "flow {i} of {} B", f.bytes);
    }
    assert!(c(&out, "max_egress_bytes") <= a.egress_buffer_bytes);
    // Same seed, same everything.
    let again = run(single_tier(8, 5, PORT, a), flows, RunLimits::default());
    assert_eq!(again.records, out.records);
    assert_eq!(again.counters, out.counters);
}

#[test]
fn an_oversubscribed_fabric_marks_fci_throttles_credits_and_drops_nothing() {
    // Adapter 0's 4 ports of 50 Gb/s each receive from another adapter, over 3 links of
    // 40 Gb/s: the last stage towards adapter 0 is asked for 204 Gb/s of credits and carries
    // 120 (less cell headers), so its queues build and FCI must slow adapter 0's credits. The
    // senders' own uplinks carry one port each, well within their 120 Gb/s.
    let flows: Vec<Flow> = (1..5u16)
        .map(|f| flow(f as u64, f * 4, f - 1, 2_000_000, Time::ZERO))
        .collect();
    let out = run(
        single_tier(8, 3, Rate::gbps(40), adapter(8, 4)),
        flows,
        RunLimits::default(),
    );
    assert_lossless(&out);
    assert!(c(&out, "fe_fci_marked") > 0);
    assert!(c(&out, "fci_cells_received") > 0);
    assert_eq!(out.records.iter().filter(|r| r.finish.is_none()).count(), 0);
    // The four flows share what the last stage carries: 3 x 40 Gb/s of cells, 240 B of
    // payload in every 256 B. FCI keeps the queues short rather than the rate high, so allow
    // the credit rate's cuts to leave up to a third of it unused.
    let last = out.records.iter().filter_map(|r| r.finish).max().unwrap().0;
    let carried = Rate::gbps(120).serialize(4 * wire(2_000_000) * 256 / 240).0;
    assert!(last >= carried, "{last} < {carried}");
    assert!(last <= carried * 3 / 2, "{last} vs {carried}");
}

#[test]
fn a_low_latency_flow_skips_the_credit_round_trip() {
    // One packet in class 1 (low latency) against the same packet in class 0 (credited): the
    // credited one pays a status and a credit across the fabric (two crossings, at least 2 us
    // of links); the low-latency one leaves at once and arrives within a few cell times of the
    // floor.
    let mut a = adapter(4, 2);
    a.classes = 2;
    a.low_latency = LowLatency {
        classes: 0b10,
        rate: Rate::gbps(5),
        burst_bytes: 4096,
    };
    let fcts: Vec<u64> = [0u8, 1]
        .into_iter()
        .map(|class| {
            let mut f = flow(0, 0, 7, 1460, Time::ZERO);
            f.class = class;
            let out = run(single_tier(4, 3, PORT, a), vec![f], RunLimits::default());
            assert_lossless(&out);
            fct(&out, 0)
        })
        .collect();
    let floor = PORT.serialize(wire(1460)).0 + 2 * 100_000 + 2 * 500_000;
    assert!(
        fcts[1] >= floor && fcts[1] <= floor + 1_000_000,
        "{fcts:?}, floor {floor}"
    );
    assert!(fcts[0] >= fcts[1] + 2 * 2 * 500_000, "{fcts:?}");
}

fn with_tcp(mut net: Network) -> Network {
    net.transport = HostTransport::Tcp(TcpConfig {
        mss: 1460,
        ..TcpConfig::newreno()
    });
    net
}

#[test]
fn tcp_over_the_fabric_delivers_every_byte_without_a_timeout() {
    // §6.3's "unmodified TCP (New Reno) on top of Stardust": a lone flow, and a 15-to-1
    // incast whose excess waits at the sources. Acks cross the fabric as packets of their
    // own, so every data packet has its ack: packets in = out (none lost, none given up), no
    // retransmission timer fires, and the incast still runs the port at its rate.
    let out = run(
        with_tcp(single_tier(4, 3, PORT, adapter(4, 2))),
        vec![flow(0, 0, 7, 1_000_000, Time::ZERO)],
        RunLimits::default(),
    );
    assert_lossless(&out);
    assert_eq!(c(&out, "tcp_timeouts"), 0);
    let floor = PORT.serialize(wire(1_000_000)).0 + 2 * 100_000 + 2 * 500_000;
    assert!(fct(&out, 0) >= floor);
    let data_packets = 1_000_000u64.div_ceil(1460);
    assert!(
        c(&out, "packets_in") > data_packets,
        "acks crossed the fabric"
    );

    let bytes = 400_000u64;
    let flows = (1..16u16)
        .map(|s| flow(s as u64, s, 0, bytes, Time::ZERO))
        .collect();
    let out = run(
        with_tcp(single_tier(16, 5, PORT, adapter(16, 1))),
        flows,
        RunLimits::default(),
    );
    assert_lossless(&out);
    assert_eq!(c(&out, "tcp_timeouts"), 0);
    let last = (0..15).map(|i| fct(&out, i)).max().unwrap();
    let drain = PORT.serialize(15 * wire(bytes)).0;
    assert!(
        last >= drain && last <= drain + drain / 50 + 10_000_000,
        "{last} vs {drain}"
    );
}

#[test]
fn the_stages_account_for_every_cell_and_fci_mark_of_the_elements() {
    // Two tiers (2 pods of 4 adapters x 2 links, 2 + 2 first-tier elements, 2 second-tier),
    // traffic within and between the pods measured from 20 us, FCI above one cell so that
    // every stage may mark: the stages are the element outputs up, down to the first tier and
    // down to the adapters, in that order; the last one's cells and links are those of Fig.
    // 9's queue, and the adapters' sum is its own; every FCI mark of the elements is one
    // stage's, in the window or before it.
    let topo = CellClos {
        fas: 8,
        fas_per_pod: 4,
        fe1_per_pod: 2,
        parallel: 1,
        fe2: 2,
        rate: Rate::gbps(40),
        link_delay: Dur::from_ns(500),
    }
    .build()
    .unwrap();
    let params = NetParams {
        fci_threshold: 1,
        ..common::net_params(3, reach())
    };
    let net = Network::new(topo, adapter(8, 1), params);
    let flows: Vec<Flow> = (0..8u16)
        .flat_map(|s| (1..4u16).map(move |k| (s, (s + 2 * k) % 8)))
        .enumerate()
        .map(|(i, (s, d))| flow(i as u64, s, d, 300_000, Time::ZERO))
        .collect();
    let mut src = IterSource::new(flows);
    let mut fabric = Stardust::new(net);
    let limits = RunLimits {
        measure_from: Some(Time(20_000_000)),
        ..RunLimits::default()
    };
    let out = fabric.run(&mut src, limits, &mut NoProgress).unwrap();
    assert_lossless(&out);
    let o = fabric.observations();
    let names: Vec<String> = o.stages.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["1->2", "2->1", "1->0"]);
    let last = &o.stages[2];
    assert_eq!(
        (last.links, last.cells),
        (o.last_stage_links, o.last_stage_cells)
    );
    assert_eq!(o.into_adapters.cells, last.cells);
    assert_eq!(o.into_adapters.links, 8);
    assert!(o.stages.iter().all(|s| s.cells > 0));
    let marks: u64 = o
        .stages
        .iter()
        .map(|s| s.fci_marked + s.fci_marked_before)
        .sum();
    assert!(marks > 0);
    assert_eq!(marks, c(&out, "fe_fci_marked"));
    // A cell found at most the longest queue of its stage, and the last stage's is Fig. 9's.
    assert_eq!(last.longest as usize + 1, o.last_stage_queue.len());
}
