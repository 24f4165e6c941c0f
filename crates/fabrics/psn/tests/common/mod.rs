//! Helpers the packet-network tests share: flows, the dumbbell, fairness.
#![allow(dead_code)] // each test file uses its own subset

use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_topology::{FatTree, LeafSpine, Topology};
use shoal_workload::{Flow, FlowSource};

/// A flow of `bytes` from host `src` to host `dst` starting at `start`.
pub fn flow(id: u64, src: u32, dst: u32, bytes: u64, start: Time) -> Flow {
    Flow {
        id,
        src: NodeId(src as u16),
        dst: NodeId(dst as u16),
        bytes,
        start,
        class: 0,
    }
}

/// Two leaves of two hosts under one spine, all links 10 Gb/s, 1 µs each: hosts 0 and 1 sending
/// to host 2 meet at the first leaf's uplink.
pub fn dumbbell() -> Topology {
    LeafSpine {
        leaves: 2,
        spines: 1,
        hosts_per_leaf: 2,
        host_rate: Rate::gbps(10),
        fabric_rate: Rate::gbps(10),
        link_delay: Dur::from_us(1),
    }
    .build()
    .expect("valid")
}

/// The k-ary fat-tree with every link at 10 Gb/s and 1 µs (htsim's examples' links).
pub fn fat_tree(k: u32) -> Topology {
    FatTree {
        k,
        oversubscription: 1,
        rate: Rate::gbps(10),
        link_delay: Dur::from_us(1),
    }
    .build()
    .expect("valid")
}

/// Jain's fairness index: 1 when all shares are equal, 1/n when one takes everything.
pub fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    sum * sum / (x.len() as f64 * x.iter().map(|g| g * g).sum::<f64>())
}

/// Runs `fabric` on `flows` until `end`, counting delivered bytes from `warm` (sampling every
/// `sample_every` if given); returns the run and each flow's payload rate in Gb/s over
/// [warm, end].
pub fn run_window(
    fabric: &mut dyn Fabric,
    flows: &mut dyn FlowSource,
    (warm, end): (Time, Time),
    sample_every: Option<Dur>,
) -> (RunOutput, Vec<f64>) {
    let out = fabric
        .run(
            flows,
            RunLimits {
                until: Some(end),
                measure_from: Some(warm),
                sample_every,
                ..RunLimits::default()
            },
            &mut NoProgress,
        )
        .expect("runs");
    let secs = (end.0 - warm.0) as f64 * 1e-12;
    let gbps = out
        .measured_flow_bytes
        .iter()
        .map(|&b| b as f64 * 8.0 / secs / 1e9)
        .collect();
    (out, gbps)
}
