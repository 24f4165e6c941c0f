//! The host NIC's order on a whole run: htsim's round-robin NIC lets a short flow's packets
//! alternate with a long flow's window where a FIFO NIC (ours, or htsim's priority NIC) sends
//! them after it, and every NIC leaves a lone flow exactly as it was.

mod common;

use common::{dumbbell, flow};
use shoal_base::{Dur, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits};
use shoal_psn::{HostNic, NetConfig, PacketFabric};
use shoal_transport::{Ndp, NdpConfig};
use shoal_workload::{Flow, IterSource};

/// 9000 B packets: 64 B of headers and 8936 B of payload.
const MSS: u32 = 8936;
const WINDOW: u32 = 20;

/// Each flow's finish time, in ps, on the dumbbell (10 Gb/s, 1 µs links) under NDP.
fn finishes(host_nic: HostNic, flows: Vec<Flow>) -> Vec<u64> {
    let net = NetConfig {
        header_bytes: 64,
        host_nic,
        ..NetConfig::ndp(8)
    };
    let mut fabric =
        PacketFabric::new(dumbbell(), net, Ndp(NdpConfig::new(MSS, WINDOW))).expect("valid");
    let out = fabric
        .run(
            &mut IterSource::new(flows),
            RunLimits::default(),
            &mut NoProgress,
        )
        .expect("runs");
    out.records
        .iter()
        .map(|r| r.finish.expect("finished").0)
        .collect()
}

#[test]
fn a_short_flow_alternates_with_a_long_flows_window_instead_of_waiting_for_it() {
    // Host 0 starts a 200-packet flow to host 1 (its window of 20 goes to the NIC at once),
    // then a 10-packet flow to host 2. Only the NIC is shared. FIFO: the short flow's last
    // packet leaves after 20 + 10 packet times (htsim's priority NIC likewise: one FIFO for
    // data). Round-robin: the long flow's first packet
    // starts alone; it was the highest flow id seen, so (as htsim's iterator wraps at the end
    // of its map) the next turn starts from the lowest id, the long flow again; then turns
    // alternate and the short flow takes slots 3, 5, ..., 21. Then 3 more hops of
    // serialization and 4 links of 1 µs to host 2.
    let flows = || {
        vec![
            flow(0, 0, 1, 200 * MSS as u64, Time::ZERO),
            flow(1, 0, 2, 10 * MSS as u64, Time::ZERO),
        ]
    };
    let t = Rate::gbps(10).serialize(9000).0;
    let expected = |k: u64| (k + 3) * t + 4 * Dur::from_us(1).0;
    for (nic, k) in [
        (HostNic::Fifo, 30),
        (HostNic::Priority, 30),
        (HostNic::RoundRobin, 21),
    ] {
        let short = finishes(nic, flows())[1];
        let want = expected(k);
        assert!(
            short.abs_diff(want) <= t / 2,
            "{nic:?}: the short flow finished at {short} ps, expected {want} ± {} ps",
            t / 2
        );
    }
}

#[test]
fn a_lone_flow_and_a_rerun_are_unchanged() {
    let lone = || vec![flow(0, 0, 2, 300 * MSS as u64, Time::ZERO)];
    for nic in [HostNic::RoundRobin, HostNic::Priority] {
        assert_eq!(
            finishes(HostNic::Fifo, lone()),
            finishes(nic, lone()),
            "{nic:?}"
        );
    }
    let many = || {
        (0..12)
            .map(|i| {
                flow(
                    i,
                    (i % 4) as u32,
                    ((i + 1) % 4) as u32,
                    50 * MSS as u64,
                    Time(i * 3_000_000),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        finishes(HostNic::RoundRobin, many()),
        finishes(HostNic::RoundRobin, many())
    );
}
