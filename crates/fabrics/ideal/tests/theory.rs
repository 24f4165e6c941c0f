//! The ideal switch against what can be computed by hand: a lone flow's completion time, an
//! incast drained at exactly the output's rate, a permutation at the full link rate, and the
//! slowdown floor.

use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, ResolvedFabric, RunLimits, RunOutput};
use shoal_ideal::{IdealSwitch, SwitchSpec};
use shoal_workload::{Flow, IterSource};

fn spec(hosts: u16) -> SwitchSpec {
    SwitchSpec {
        hosts,
        link_rate: Rate(10_000_000_000),
        link_delay: Dur(500_000),
        packet_bytes: 1500,
        header_bytes: 40,
    }
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

fn run(spec: &SwitchSpec, flows: Vec<Flow>) -> RunOutput {
    let mut source = IterSource::new(flows);
    IdealSwitch::new(spec.clone())
        .run(&mut source, RunLimits::default(), &mut NoProgress)
        .expect("runs")
}

fn fct(out: &RunOutput, i: usize) -> u64 {
    let r = &out.records[i];
    r.finish.expect("completed").0 - r.start.0
}

#[test]
fn a_lone_flow_takes_its_first_packet_twice_and_every_packet_once() {
    // The output never idles once the first (largest) packet has arrived: the FCT is that
    // packet on the host link, every packet on the output link, and two propagation delays.
    let s = spec(4);
    let ser = |b: u64| s.link_rate.serialize(b).0;
    let mss = s.mss() as u64;
    for bytes in [1, 100, 1460, 1461, 2920, 10_000, 1_000_000] {
        let out = run(&s, vec![flow(0, 0, 3, bytes, Time(7))]);
        let sizes: Vec<u64> = (0..bytes.div_ceil(mss))
            .map(|i| (bytes - i * mss).min(mss) + 40)
            .collect();
        let expected =
            ser(sizes[0]) + sizes.iter().map(|&b| ser(b)).sum::<u64>() + 2 * s.link_delay.0;
        assert_eq!(fct(&out, 0), expected, "{bytes} B");
        let ideal = s
            .ideal_fct()
            .expect("model")
            .ideal_fct(bytes)
            .expect("fits");
        assert!(
            ideal.0 <= expected,
            "{bytes} B: the floor {ideal} exceeds the FCT {expected}"
        );
        assert!(
            expected - ideal.0 <= ser(mss + 40) + sizes.len() as u64,
            "{bytes} B: the floor is more than a packet below the FCT"
        );
    }
}

#[test]
fn an_incast_is_drained_at_exactly_the_output_rate() {
    // k senders of whole packets at once: the output port never idles after the first packet
    // arrives, so the last byte lands after one packet time, two delays and all the packets.
    let s = spec(9);
    let pkt = s.link_rate.serialize(1500).0;
    for k in 1..=8u16 {
        let packets = 20u64;
        let flows = (0..k)
            .map(|i| flow(i as u64, i + 1, 0, packets * s.mss() as u64, Time::ZERO))
            .collect();
        let out = run(&s, flows);
        let last = out
            .records
            .iter()
            .filter_map(|r| r.finish)
            .max()
            .expect("done");
        let expected = pkt + 2 * s.link_delay.0 + k as u64 * packets * pkt;
        assert_eq!(last.0, expected, "{k} senders");
        assert_eq!(out.delivered_bytes[0], k as u64 * packets * s.mss() as u64);
        // The output queue held at most all but one packet of each round of arrivals.
        assert!(out.queues.max_queue <= k as u64 * packets);
    }
}

#[test]
fn a_permutation_runs_every_flow_at_the_link_rate() {
    let s = spec(16);
    let bytes = 100 * s.mss() as u64;
    let flows = (0..16u16)
        .map(|i| flow(i as u64, i, (i + 5) % 16, bytes, Time::ZERO))
        .collect();
    let out = run(&s, flows);
    let lone = run(&s, vec![flow(0, 0, 5, bytes, Time::ZERO)]);
    for i in 0..16 {
        assert_eq!(fct(&out, i), fct(&lone, 0), "flow {i} waited for another");
    }
    assert_eq!(
        out.queues.max_queue, 1,
        "no output ever holds a second packet"
    );
}

#[test]
fn flows_of_one_host_share_its_link_packet_by_packet() {
    // Two equal flows from one host finish one packet apart; alone, each takes half as long.
    let s = spec(4);
    let bytes = 50 * s.mss() as u64;
    let out = run(
        &s,
        vec![
            flow(0, 0, 1, bytes, Time::ZERO),
            flow(1, 0, 2, bytes, Time::ZERO),
        ],
    );
    let pkt = s.link_rate.serialize(1500).0;
    assert_eq!(fct(&out, 1) - fct(&out, 0), pkt);
    let lone = run(&s, vec![flow(0, 0, 1, bytes, Time::ZERO)]);
    assert_eq!(fct(&out, 0), fct(&lone, 0) + 49 * pkt);
}
