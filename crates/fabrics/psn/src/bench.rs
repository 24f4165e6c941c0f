//! `shoal bench --psn`: the packet simulator on htsim's published permutation examples, so its
//! speed can be set against htsim's on identical workloads.
//!
//! The setup of htsim's examples: a k = 12 fat-tree (432 hosts, 36 paths between pods), 10 Gb/s
//! links of 1 µs, 9000 B packets, every host sending one unending flow to a distinct host of a
//! random permutation. DCTCP: queues of 100 packets, ECN marked at dequeue above K = 15, g = 1/16,
//! initial window 10, ECMP. NDP: queues of 8 packets trimmed to 64 B headers, initial window 23,
//! per-packet spraying, pulls at 99% of the link. htsim takes 49.5 s for 210 ms of the DCTCP
//! run and 21.9 s for 10 ms of the NDP run on this kind of machine (issue 4).
//!
//! Next to it runs a reference loop in the same process: the same number of events through the
//! bare event queue (each event schedules one successor a fixed gap later), the floor any model
//! on this engine pays.

use crate::PacketFabric;
use crate::config::{Discipline, NetConfig};
use rand::seq::SliceRandom;
use serde::Serialize;
use shoal_base::rng::stream;
use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::bench::{hold_model, peak_rss_bytes, wall_seconds};
use shoal_fabric::{Fabric, FabricError, NoProgress, RunLimits, RunOutput};
use shoal_topology::FatTree;
use shoal_transport::{Ndp, NdpConfig, Tcp, TcpConfig};
use shoal_workload::{Flow, IterSource};
use std::fmt;

/// Which of htsim's examples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PsnBench {
    Dctcp,
    Ndp,
}

impl PsnBench {
    /// htsim's wall-clock seconds and simulated milliseconds for this example.
    pub fn htsim(self) -> (f64, u64) {
        match self {
            PsnBench::Dctcp => (49.5, 210),
            PsnBench::Ndp => (21.9, 10),
        }
    }
}

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PsnBenchOptions {
    pub which: PsnBench,
    /// Fat-tree parameter (12 in htsim's examples).
    pub k: u32,
    /// Simulated milliseconds (htsim's: 210 for DCTCP, 10 for NDP).
    pub sim_ms: u64,
    pub seed: u64,
}

impl PsnBenchOptions {
    pub fn htsim(which: PsnBench) -> Self {
        PsnBenchOptions {
            which,
            k: 12,
            sim_ms: which.htsim().1,
            seed: 1,
        }
    }
}

/// What the run measured; rates are per second of wall-clock time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PsnBenchReport {
    pub options: PsnBenchOptions,
    pub hosts: usize,
    pub wall_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    pub packet_hops_per_s: f64,
    /// Mean payload rate per host over the last 90% of the run, in Gb/s.
    pub goodput_gbps_per_host: f64,
    pub packets_dropped: u64,
    pub packets_trimmed: u64,
    pub reference_wall_s: f64,
    pub reference_events_per_s: f64,
    /// htsim's wall-clock seconds for the same simulated span (scaled from its published run).
    pub htsim_wall_s: f64,
    pub peak_rss_bytes: Option<u64>,
}

const PACKET: u32 = 9000;
const HEADER: u32 = 64;

/// Runs one example and the reference loop.
pub fn run(opts: &PsnBenchOptions) -> Result<PsnBenchReport, FabricError> {
    let topo = FatTree {
        k: opts.k,
        oversubscription: 1,
        rate: Rate::gbps(10),
        link_delay: Dur::from_us(1),
    }
    .build()
    .map_err(|e| FabricError(e.0))?;
    let hosts = topo.hosts();
    let flows = permutation(hosts, opts.seed);
    let end = Time(opts.sim_ms * 1_000_000_000);
    let limits = RunLimits {
        until: Some(end),
        measure_from: Some(Time(end.0 / 10)),
        ..RunLimits::default()
    };
    let mss = PACKET - HEADER;
    let mut outcome = Err(FabricError("not run".into()));
    let wall_s = match opts.which {
        PsnBench::Dctcp => {
            let net = NetConfig {
                discipline: Discipline::Ecn {
                    k: 15,
                    at_dequeue: true,
                },
                header_bytes: HEADER,
                seed: opts.seed,
                ..NetConfig::ecn(100, 15)
            };
            let tcp = TcpConfig {
                mss,
                initial_window: 10,
                ..TcpConfig::dctcp()
            };
            let mut fabric = PacketFabric::new(topo, net, Tcp(tcp))?;
            wall_seconds(|| {
                outcome = fabric.run(&mut IterSource::new(flows), limits, &mut NoProgress)
            })
        }
        PsnBench::Ndp => {
            let net = NetConfig {
                header_bytes: HEADER,
                control_bytes: HEADER,
                seed: opts.seed,
                ..NetConfig::ndp(8)
            };
            let mut fabric = PacketFabric::new(topo, net, Ndp(NdpConfig::new(mss, 23)))?;
            wall_seconds(|| {
                outcome = fabric.run(&mut IterSource::new(flows), limits, &mut NoProgress)
            })
        }
    };
    let out: RunOutput = outcome?;
    let events = out.counters["events"];
    let reference_wall_s = wall_seconds(|| {
        // As many pending as a busy network has (about one per host per hop in flight).
        hold_model(events, 4096, Dur(7_200_000))
    });
    let secs = (end.0 - end.0 / 10) as f64 * 1e-12;
    let goodput =
        out.measured_flow_bytes.iter().sum::<u64>() as f64 * 8.0 / secs / 1e9 / hosts as f64;
    let (htsim_s, htsim_ms) = opts.which.htsim();
    Ok(PsnBenchReport {
        options: *opts,
        hosts,
        wall_s,
        events,
        events_per_s: events as f64 / wall_s,
        packet_hops_per_s: out.counters["packet_hops"] as f64 / wall_s,
        goodput_gbps_per_host: goodput,
        packets_dropped: out.counters["packets_dropped"],
        packets_trimmed: out.counters["packets_trimmed"],
        reference_wall_s,
        reference_events_per_s: events as f64 / reference_wall_s,
        htsim_wall_s: htsim_s * opts.sim_ms as f64 / htsim_ms as f64,
        peak_rss_bytes: peak_rss_bytes(),
    })
}

/// Host i sends to host perm[i], a random permutation with no fixed point.
fn permutation(hosts: usize, seed: u64) -> Vec<Flow> {
    let mut rng = stream(seed, "bench.permutation", 0);
    let mut dst: Vec<usize> = (0..hosts).collect();
    dst.shuffle(&mut rng);
    // Swap each fixed point with its neighbour: still a permutation, now with none.
    for i in 0..hosts {
        if dst[i] == i {
            let j = (i + 1) % hosts;
            dst.swap(i, j);
        }
    }
    (0..hosts)
        .map(|i| Flow {
            id: i as u64,
            src: NodeId(i as u16),
            dst: NodeId(dst[i] as u16),
            bytes: 1 << 50,
            start: Time::ZERO,
            class: 0,
        })
        .collect()
}

impl fmt::Display for PsnBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.options;
        writeln!(
            f,
            "shoal bench --psn {:?}: fat-tree k={} ({} hosts), permutation, {} ms simulated",
            o.which, o.k, self.hosts, o.sim_ms
        )?;
        writeln!(
            f,
            "  simulator  {:>7.2} s  {:>6.2} M events/s  {:>6.2} M packet-hops/s  ({} events)",
            self.wall_s,
            self.events_per_s / 1e6,
            self.packet_hops_per_s / 1e6,
            self.events
        )?;
        writeln!(
            f,
            "  reference  {:>7.2} s  {:>6.2} M events/s (bare event queue); simulator/reference = {:.2}",
            self.reference_wall_s,
            self.reference_events_per_s / 1e6,
            self.wall_s / self.reference_wall_s
        )?;
        writeln!(
            f,
            "  htsim      {:>7.2} s for the same span: {:.1}x faster than htsim",
            self.htsim_wall_s,
            self.htsim_wall_s / self.wall_s
        )?;
        write!(
            f,
            "  goodput {:.2} Gb/s per host, {} dropped, {} trimmed",
            self.goodput_gbps_per_host, self.packets_dropped, self.packets_trimmed
        )?;
        if let Some(rss) = self.peak_rss_bytes {
            write!(f, ", peak RSS {:.0} MB", rss as f64 / 1e6)?;
        }
        Ok(())
    }
}
