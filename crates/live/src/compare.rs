//! The same scenario in the simulator and on the live rack, side by side.
//!
//! The simulator (`shoal-rack`) and the live driver run the same `Node` in the same order per
//! slot (flows handed over at the slot's start, receptions of what was sent `d` slots before,
//! transmissions, deliveries), and the live rack runs in lock-step, waiting for late cells
//! rather than losing them. So in *slots* the two must agree exactly: every flow's completion,
//! every queue. What differs is wall time: the live slots are paced by a loaded host and run
//! late, so completion times in microseconds stretch by the ratio of the effective to the
//! nominal slot. The table shows both and says how far apart they are.

use crate::fabric::RackSpec;
use crate::flows::LiveFlow;
use crate::loopback::{LoopbackRun, run_loopback};
use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits};
use shoal_rack::{RackConfig, ShoalRack};
use shoal_schedule::Arrangement;
use shoal_workload::{Flow, IterSource};
use std::fmt::Write as _;
use std::io;
use std::time::Duration;

/// One scenario for both.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub rack: RackSpec,
    pub slot_ns: u64,
    pub flows: Vec<LiveFlow>,
    pub packet_bytes: u32,
}

/// The scenario of `docs/results/live.md`: the prototype's 8-node rack; every node sends 30 kB
/// to the node four places on (a permutation) from slot 5, three nodes send 6 kB each to node 0
/// from slot 40 (an incast), and node 7 sends 1.5 kB to node 2 at slot 60 (a short flow among
/// long ones).
pub fn default_scenario(slot_ns: u64) -> Scenario {
    let f = |id, src, dst, bytes, start_slot| LiveFlow {
        id,
        src: NodeId(src),
        dst: NodeId(dst),
        bytes,
        start_slot,
    };
    let mut flows: Vec<LiveFlow> = (0..8u16)
        .map(|i| f(i as u32, i, (i + 4) % 8, 30_000, 5))
        .collect();
    flows.extend((1..4u16).map(|i| f(10 + i as u32, i, 0, 6_000, 40)));
    flows.push(f(20, 7, 2, 1_500, 60));
    Scenario {
        rack: RackSpec::prototype(),
        slot_ns,
        flows,
        packet_bytes: 1500,
    }
}

/// One flow in both runs.
#[derive(Clone, Debug)]
pub struct FlowRow {
    pub flow: LiveFlow,
    pub sim_fct_slots: Option<u64>,
    pub live_fct_slots: Option<u64>,
    pub live_fct_wall_us: Option<f64>,
}

/// Both runs.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub scenario: Scenario,
    pub rows: Vec<FlowRow>,
    pub sim_max_queue: u64,
    pub live_max_queue: u64,
    pub live_late_slots: u64,
    pub live_slots: u64,
    pub live_max_late_us: f64,
    /// Wall time per live slot, averaged over the run.
    pub effective_slot_us: f64,
    pub live_violations: u64,
    pub live_mismatches: u64,
}

/// The simulator's rack for the scenario: the paper's node defaults on the prototype's fabric,
/// with the slot scaled as the live rack's (channel rate and guard band do not change slot
/// counts; they only have to fit the cell in the slot).
fn rack_config(s: &Scenario) -> RackConfig {
    RackConfig {
        nodes: s.rack.nodes,
        channels: s.rack.channels,
        channel_rate: Rate::gbps(25),
        slot: Dur::from_ps(s.slot_ns * 1_000),
        guard: Dur::from_ps(2_750),
        delay_slots: s.rack.delay_slots,
        switch_ports: s.rack.switch_ports,
        arrangement: Arrangement::PropagationAware,
        packet_bytes: s.packet_bytes,
        verify_schedule: true,
        engine: shoal_rack::Engine::Node,
        ..RackConfig::paper(s.rack.nodes)
    }
}

/// Runs the scenario in both and lines the results up.
pub fn compare(s: &Scenario, seed: u64) -> io::Result<Comparison> {
    let err = |e: String| io::Error::other(e);
    let slot_ps = s.slot_ns * 1_000;
    let mut rack = ShoalRack::new(rack_config(s), seed).map_err(|e| err(e.to_string()))?;
    let mut flows: Vec<Flow> = s
        .flows
        .iter()
        .map(|f| Flow {
            id: f.id as u64,
            src: f.src,
            dst: f.dst,
            bytes: f.bytes,
            start: Time(f.start_slot * slot_ps),
            class: 0,
        })
        .collect();
    flows.sort_by_key(|f| (f.start, f.id));
    let sim = rack
        .run(
            &mut IterSource::new(flows),
            RunLimits::default(),
            &mut NoProgress,
        )
        .map_err(|e| err(e.to_string()))?;

    let live = run_loopback(&LoopbackRun {
        rack: s.rack.clone(),
        slot_ns: s.slot_ns,
        grace_ns: 2_000_000_000,
        flows: s.flows.clone(),
        packet_bytes: s.packet_bytes,
        corrupt_prob: 0.0,
        seed,
        crash: None,
        timeout: Duration::from_secs(300),
        slots: None,
        dir: None,
        pcap: false,
    })?;

    let rows = s
        .flows
        .iter()
        .map(|f| {
            let sim_rec = sim.records.iter().find(|r| r.id == f.id as u64);
            let live_rec = live.records.iter().find(|r| r.flow.id == f.id);
            FlowRow {
                flow: *f,
                sim_fct_slots: sim_rec.and_then(|r| r.fct()).map(|d| d.0 / slot_ps),
                live_fct_slots: live_rec
                    .and_then(|r| r.finish_slot)
                    .map(|end| end - f.start_slot),
                live_fct_wall_us: live_rec.and_then(|r| match (r.submit_ns, r.finish_ns) {
                    (Some(a), Some(b)) => Some((b - a) as f64 / 1e3),
                    _ => None,
                }),
            }
        })
        .collect();
    Ok(Comparison {
        scenario: s.clone(),
        rows,
        sim_max_queue: sim.queues.max_queue,
        live_max_queue: live
            .nodes
            .iter()
            .map(|n| n.stats.max_queue as u64)
            .max()
            .unwrap_or(0),
        live_late_slots: live.nodes.iter().map(|n| n.counters.late_slots).sum(),
        live_slots: live.nodes.iter().map(|n| n.counters.slot).sum(),
        live_max_late_us: live
            .nodes
            .iter()
            .map(|n| n.counters.max_late_ns)
            .max()
            .unwrap_or(0) as f64
            / 1e3,
        effective_slot_us: live.wall_ns as f64 / live.slots.max(1) as f64 / 1e3,
        live_violations: live.nodes.iter().map(|n| n.counters.violations).sum(),
        live_mismatches: live.nodes.iter().map(|n| n.mismatches).sum(),
    })
}

fn opt(v: Option<u64>) -> String {
    v.map_or("—".into(), |v| v.to_string())
}

impl Comparison {
    /// Whether every flow completed in both with the same completion slot and the longest queue
    /// agrees: the live rack computed what the simulator computed.
    pub fn slots_agree(&self) -> bool {
        self.rows
            .iter()
            .all(|r| r.sim_fct_slots.is_some() && r.sim_fct_slots == r.live_fct_slots)
            && self.sim_max_queue == self.live_max_queue
    }

    /// The comparison as Markdown tables.
    pub fn markdown(&self) -> String {
        let s = &self.scenario;
        let slot_us = s.slot_ns as f64 / 1e3;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "Rack: {} nodes, {} channel(s), {}-port switches, delay {} slots, App. A schedule; \
             slot {slot_us} µs nominal; packets of {} B.\n",
            s.rack.nodes, s.rack.channels, s.rack.switch_ports, s.rack.delay_slots, s.packet_bytes
        );
        out.push_str(
            "| flow | src → dst | bytes | start slot | FCT sim (slots) | FCT live (slots) | \
             FCT sim (µs, nominal slot) | FCT live (µs, wall) | goodput sim (Mb/s) | goodput live (Mb/s, wall) |\n\
             |---|---|---|---|---|---|---|---|---|---|\n",
        );
        let mbps = |bytes: u64, us: f64| bytes as f64 * 8.0 / us;
        for r in &self.rows {
            let f = &r.flow;
            let sim_us = r.sim_fct_slots.map(|k| k as f64 * slot_us);
            let _ = writeln!(
                out,
                "| {} | {} → {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                f.id,
                f.src.0,
                f.dst.0,
                f.bytes,
                f.start_slot,
                opt(r.sim_fct_slots),
                opt(r.live_fct_slots),
                sim_us.map_or("—".into(), |v| format!("{v:.0}")),
                r.live_fct_wall_us.map_or("—".into(), |v| format!("{v:.0}")),
                sim_us.map_or("—".into(), |v| format!("{:.2}", mbps(f.bytes, v))),
                r.live_fct_wall_us
                    .map_or("—".into(), |v| format!("{:.2}", mbps(f.bytes, v))),
            );
        }
        let fcts = |f: &dyn Fn(&FlowRow) -> Option<f64>| -> (f64, f64) {
            let v: Vec<f64> = self.rows.iter().filter_map(f).collect();
            let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
            (mean, v.iter().cloned().fold(0.0, f64::max))
        };
        let (sim_mean, sim_max) = fcts(&|r| r.sim_fct_slots.map(|k| k as f64 * slot_us));
        let (live_mean, live_max) = fcts(&|r| r.live_fct_wall_us);
        let _ = write!(
            out,
            "\n| summary | simulator | live |\n|---|---|---|\n\
             | mean FCT (µs) | {sim_mean:.0} | {live_mean:.0} |\n\
             | max FCT (µs) | {sim_max:.0} | {live_max:.0} |\n\
             | longest queue `Q_ij` (cells) | {} | {} |\n\
             | flows with the same completion slot | {} of {} | |\n\
             | slot time (µs) | {slot_us} (nominal) | {:.1} (wall per slot, averaged) |\n\
             | late slots (all nodes) | — | {} of {} (worst {:.0} µs late) |\n\
             | schedule violations / corrupted bytes | — | {} / {} |\n",
            self.sim_max_queue,
            self.live_max_queue,
            self.rows
                .iter()
                .filter(|r| r.sim_fct_slots.is_some() && r.sim_fct_slots == r.live_fct_slots)
                .count(),
            self.rows.len(),
            self.effective_slot_us,
            self.live_late_slots,
            self.live_slots,
            self.live_max_late_us,
            self.live_violations,
            self.live_mismatches,
        );
        out
    }
}
