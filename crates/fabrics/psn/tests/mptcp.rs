//! MPTCP on the packet network: with its subflows pinned to distinct paths (`path = "pinned"`,
//! as htsim's MPTCP), a fat-tree permutation runs near line rate where a single-path TCP on one
//! random path per flow loses throughput to collisions (the effect behind MPTCP's datacenter
//! paper and Stardust's Fig. 10(a)).

mod common;

use common::{fat_tree, flow, run_window};
use shoal_base::Time;
use shoal_psn::{Discipline, NetConfig, PacketFabric, PathChoice};
use shoal_transport::{Mptcp, MptcpConfig, Tcp, TcpConfig, Transport};
use shoal_workload::{Flow, IterSource};

const MSS: u32 = 8960;

/// Drop-tail queues of 100 packets, 9000 B packets with 40 B headers, pinned paths.
fn net() -> NetConfig {
    NetConfig {
        discipline: Discipline::DropTail,
        path: PathChoice::Pinned,
        ..NetConfig::ecn(100, 20)
    }
}

fn newreno() -> TcpConfig {
    TcpConfig {
        mss: MSS,
        initial_ssthresh: Some(15),
        ..TcpConfig::newreno()
    }
}

/// Mean payload rate per host (Gb/s) of a permutation on the k = 4 fat-tree (host i sends to
/// host i + 8, so every flow leaves its pod and has 4 paths) over [2 ms, 8 ms].
fn permutation_gbps<T: Transport>(transport: T) -> f64 {
    let topo = fat_tree(4);
    let hosts = topo.hosts() as u32;
    let mut fabric = PacketFabric::new(topo, net(), transport).expect("valid");
    let flows: Vec<Flow> = (0..hosts)
        .map(|i| flow(i as u64, i, (i + hosts / 2) % hosts, 1 << 40, Time::ZERO))
        .collect();
    let (warm, end) = (Time(2_000_000_000), Time(8_000_000_000));
    let (_, gbps) = run_window(&mut fabric, &mut IterSource::new(flows), (warm, end), None);
    gbps.iter().sum::<f64>() / hosts as f64
}

#[test]
fn subflows_on_distinct_paths_fill_a_permutation_that_one_path_per_flow_does_not() {
    // Fixed before the first run: MPTCP with 4 subflows at least 85% of the payload line rate;
    // NewReno on one pinned path per flow below 90% of it and below MPTCP.
    let line = 10.0 * MSS as f64 / 9000.0;
    let mptcp = permutation_gbps(Mptcp(MptcpConfig {
        subflow: newreno(),
        subflows: 4,
    }));
    assert!(
        mptcp >= 0.85 * line,
        "MPTCP permutation at {mptcp:.2} Gb/s per host"
    );
    let tcp = permutation_gbps(Tcp(newreno()));
    assert!(
        tcp < 0.9 * line && tcp < mptcp,
        "one path per flow at {tcp:.2} Gb/s per host against MPTCP's {mptcp:.2}"
    );
}
