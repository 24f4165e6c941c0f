//! NDP on its own and against ECMP: what the NDP paper shows at small scale. An incast of 100
//! senders completes at line rate without a single timeout (trimming turns overflow into
//! NACKs, and pulls clock the senders at the receiver's link rate); a permutation on a
//! fat-tree runs near line rate with spraying, where DCTCP's per-flow ECMP loses throughput to
//! hash collisions.

mod common;

use common::{fat_tree, flow, run_window};
use shoal_base::{Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits};
use shoal_psn::{NetConfig, PacketFabric};
use shoal_transport::{Ndp, NdpConfig, Tcp, TcpConfig};
use shoal_workload::{Flow, IterSource};

/// 9000 B packets: 64 B of headers (the trimmed size) and 8936 B of payload.
fn ndp_net() -> NetConfig {
    NetConfig {
        header_bytes: 64,
        ..NetConfig::ndp(8)
    }
}

const MSS: u32 = 8936;

#[test]
fn a_100_to_1_incast_completes_at_line_rate_without_a_timeout() {
    let topo = fat_tree(8); // 128 hosts
    let mut fabric =
        PacketFabric::new(topo, ndp_net(), Ndp(NdpConfig::new(MSS, 23))).expect("valid");
    let bytes = 10 * MSS as u64;
    let flows: Vec<Flow> = (1..=100)
        .map(|s| flow(s as u64, s, 0, bytes, Time::ZERO))
        .collect();
    let out = fabric
        .run(
            &mut IterSource::new(flows),
            RunLimits::default(),
            &mut NoProgress,
        )
        .expect("runs");
    assert!(
        out.records.iter().all(|r| r.finish.is_some()),
        "unfinished flows"
    );
    assert_eq!(
        out.counters["retransmission_timeouts"], 0,
        "{:?}",
        out.counters
    );
    assert!(
        out.counters["packets_trimmed"] > 0,
        "an incast this size must overflow"
    );
    // The receiver's link carries 100 × 10 packets of 9000 B plus trimmed headers: the last
    // flow ends within 5% of that serialization time (plus a few µs of propagation).
    let line = Rate::gbps(10).serialize(100 * 10 * 9000).0 as f64;
    let last = out
        .records
        .iter()
        .filter_map(|r| r.finish)
        .max()
        .expect("some")
        .0 as f64;
    assert!(
        last < 1.05 * line + 20e6,
        "last flow at {last} ps, line-rate bound {line} ps"
    );
}

/// Mean payload rate per host (Gb/s) of a permutation (host i sends to host i + hosts/2, so
/// every flow leaves its pod) over [1 ms, 6 ms].
fn permutation_gbps<T: shoal_transport::Transport>(net: NetConfig, transport: T) -> f64 {
    let topo = fat_tree(4); // 16 hosts, 4 paths between pods
    let hosts = topo.hosts() as u32;
    let mut fabric = PacketFabric::new(topo, net, transport).expect("valid");
    let flows: Vec<Flow> = (0..hosts)
        .map(|i| flow(i as u64, i, (i + hosts / 2) % hosts, 1 << 34, Time::ZERO))
        .collect();
    let (warm, end) = (Time(1_000_000_000), Time(6_000_000_000));
    let (_, gbps) = run_window(&mut fabric, &mut IterSource::new(flows), (warm, end), None);
    gbps.iter().sum::<f64>() / hosts as f64
}

#[test]
fn spraying_runs_a_permutation_near_line_rate_and_ecmp_does_not() {
    let ndp = permutation_gbps(ndp_net(), Ndp(NdpConfig::new(MSS, 23)));
    let payload_line = 10.0 * MSS as f64 / 9000.0;
    assert!(
        ndp > 0.9 * payload_line,
        "NDP permutation at {ndp:.2} Gb/s per host"
    );
    let dctcp = permutation_gbps(NetConfig::ecn(100, 20), Tcp(TcpConfig::dctcp()));
    let tcp_line = 10.0 * 1460.0 / 1500.0;
    assert!(
        (0.4 * tcp_line..0.9 * tcp_line).contains(&dctcp),
        "DCTCP with ECMP at {dctcp:.2} Gb/s per host: collisions should cost 10-60%"
    );
}
