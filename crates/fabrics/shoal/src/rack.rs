//! The Shoal rack as a [`Fabric`]: builds the schedule and its Clos, the nodes and the engine,
//! then runs flows slot by slot.

use crate::config::{RackConfig, RackError};
use crate::endpoint::{Endpoint, Fabric as Medium, PeerTable};
use crate::host::Hosts;
use shoal_base::{NodeId, Time, rng};
use shoal_engine::SlottedEngine;
use shoal_fabric::{Fabric, FabricError, Progress, QueueStats, RunLimits, RunOutput};
use shoal_node::{Event, Node, NodeConfig, NodeStats};
use shoal_schedule::{Arrangement, Clos, Component, FabricSchedule, FabricSpec, verify};
use shoal_workload::Flow;
use std::collections::BTreeMap;
use std::iter::Peekable;

/// How often (in slots) the rack reports progress.
const CHECK_EVERY: u64 = 4096;

/// A built rack, ready to run.
pub struct ShoalRack {
    cfg: RackConfig,
    seed: u64,
    schedule: FabricSchedule,
    clos: Clos,
    table: PeerTable,
}

impl ShoalRack {
    /// Builds (and, if asked, verifies) the schedule and Clos for `cfg`.
    pub fn new(cfg: RackConfig, seed: u64) -> Result<ShoalRack, RackError> {
        cfg.validate()?;
        let spec = FabricSpec {
            nodes: cfg.nodes as usize,
            channels: cfg.channels as usize,
            arrangement: cfg.arrangement,
            // App. A's rearrangement exists to absorb the delay, so demand it; the plain cyclic
            // schedule runs with whatever delay it gets (the prototype, Fig. 9).
            delay_slots: (cfg.arrangement == Arrangement::PropagationAware)
                .then_some(cfg.delay_slots),
        };
        let schedule = FabricSchedule::new(spec).map_err(|e| RackError {
            key: "rack".into(),
            reason: e.to_string(),
        })?;
        let clos = Clos::new(&schedule, cfg.switch_ports as usize).map_err(|e| RackError {
            key: "rack.switch_ports".into(),
            reason: e.to_string(),
        })?;
        if cfg.verify_schedule {
            verify(&schedule, &clos).map_err(|v| RackError {
                key: "rack".into(),
                reason: format!("the schedule failed verification: {v}"),
            })?;
        }
        for f in &cfg.failures {
            if let Component::Node(n) = f.component
                && n.idx() >= cfg.nodes as usize
            {
                return Err(RackError {
                    key: "failures".into(),
                    reason: format!("node {} is not in a rack of {}", n.0, cfg.nodes),
                });
            }
        }
        let table = PeerTable::new(&schedule);
        Ok(ShoalRack {
            cfg,
            seed,
            schedule,
            clos,
            table,
        })
    }

    pub fn config(&self) -> &RackConfig {
        &self.cfg
    }

    pub fn schedule(&self) -> &FabricSchedule {
        &self.schedule
    }

    /// Slots in one epoch.
    pub fn epoch_slots(&self) -> u64 {
        self.table.epoch()
    }

    fn node_config(&self, id: usize) -> NodeConfig {
        let c = &self.cfg;
        let me = NodeId(id as u16);
        let slot = |src: NodeId, dst: NodeId| {
            self.schedule
                .slot_of(src, dst)
                .map_or(u16::MAX, |(s, _)| s.0 as u16)
        };
        let peers = (0..c.nodes).map(NodeId);
        let tx_slot = peers.clone().map(|p| slot(me, p)).collect();
        let rx_slot = peers.map(|p| slot(p, me)).collect();
        NodeConfig {
            payload_bytes: c.payload_bytes(),
            classes: c.classes,
            low_class_queue_cells: c.low_class_queue_cells,
            ready_queue: c.ready_queue,
            age_rule: c.age_rule,
            // The bounds hold only without corruption (App. D) and link or switch failures
            // (rerouted cells travel outside their subflow).
            check_bounds: c.header_bit_error_rate == 0.0 && c.failures.is_empty(),
            ..NodeConfig::new(
                me,
                c.nodes,
                self.table.epoch() as u32,
                c.delay_slots,
                tx_slot,
                rx_slot,
            )
        }
    }
}

/// Adds every counter of one node's statistics into `into`.
fn add_stats(into: &mut NodeStats, s: &NodeStats) {
    into.data_cells_sent += s.data_cells_sent;
    into.idle_cells_sent += s.idle_cells_sent;
    into.notices_sent += s.notices_sent;
    into.retransmissions += s.retransmissions;
    into.cells_delivered += s.cells_delivered;
    into.bytes_delivered += s.bytes_delivered;
    into.transit_cells += s.transit_cells;
    into.corrupt_received += s.corrupt_received;
    into.duplicates += s.duplicates;
    into.tail_drops += s.tail_drops;
    into.discarded_for_failure += s.discarded_for_failure;
    into.rerouted += s.rerouted;
    into.protocol_errors += s.protocol_errors;
    into.peers_failed += s.peers_failed;
    into.max_queue = into.max_queue.max(s.max_queue);
    into.max_queued_total = into.max_queued_total.max(s.max_queued_total);
    into.max_reorder_bytes = into.max_reorder_bytes.max(s.max_reorder_bytes);
}

impl Fabric for ShoalRack {
    fn name(&self) -> &str {
        "shoal"
    }

    fn nodes(&self) -> usize {
        self.cfg.nodes as usize
    }

    fn run(
        &mut self,
        flows: &mut dyn Iterator<Item = Flow>,
        limits: RunLimits,
        progress: &mut dyn Progress,
    ) -> Result<RunOutput, FabricError> {
        let n = self.cfg.nodes as usize;
        let slot_ps = self.cfg.slot.0;
        let mut endpoints: Vec<Endpoint> = (0..n)
            .map(|i| {
                Node::new(self.node_config(i))
                    .map(|node| Endpoint { node, dead: false })
                    .map_err(|e| FabricError(e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let mut medium = Medium::new(
            &self.table,
            self.cfg.header_bit_error_rate,
            rng::stream(self.seed, "shoal.corruption", 0),
        );
        let mut engine =
            SlottedEngine::new(n, self.cfg.channels as usize, self.cfg.delay_slots as u64);
        let mut hosts = Hosts::new(
            n,
            self.cfg.classes,
            limits.measure_from.unwrap_or(Time::ZERO),
        );
        let mut failures = self.cfg.failures.clone();
        failures.sort_by_key(|f| f.at);
        let mut failures = failures.into_iter().peekable();
        let mut failed_parts: Vec<Component> = Vec::new();
        let mut flows: Peekable<&mut dyn Iterator<Item = Flow>> = flows.peekable();
        let mut last_start = Time::ZERO;
        let mut counters: BTreeMap<String, u64> = BTreeMap::new();
        let mut aborted = 0u64;
        let mut quiet_since: Option<u64> = None;

        loop {
            let slot = engine.slot();
            let now = Time(slot * slot_ps);
            if limits.until.is_some_and(|u| now >= u)
                || limits.completed_flows.is_some_and(|m| hosts.completed >= m)
            {
                break;
            }
            while let Some(f) = failures.next_if(|f| f.at <= now) {
                match f.component {
                    Component::Node(x) => endpoints[x.idx()].dead = true,
                    other => {
                        failed_parts.push(other);
                        medium.set_failed(&self.clos, &failed_parts);
                    }
                }
            }
            // A flow starting within (slot − 1, slot] is handed over at this slot boundary.
            while let Some(flow) = flows.next_if(|f| f.start <= now) {
                if flow.start < last_start {
                    return Err(FabricError(format!(
                        "flows must be sorted by start time: flow {} starts at {} after one at {}",
                        flow.id, flow.start, last_start
                    )));
                }
                last_start = flow.start;
                if flow.src.idx() >= n || flow.dst.idx() >= n || flow.src == flow.dst {
                    return Err(FabricError(format!(
                        "flow {} goes from node {} to node {} in a rack of {n}",
                        flow.id, flow.src.0, flow.dst.0
                    )));
                }
                let ep = &mut endpoints[flow.src.idx()];
                let node = (!ep.dead).then_some(&mut ep.node);
                hosts.inject(&flow, slot, node, self.cfg.packet_bytes);
            }
            engine.step(&self.table, &mut endpoints, &mut medium);
            for ep in endpoints.iter_mut().filter(|e| e.node.has_deliveries()) {
                let dst = ep.node.id();
                while let Some(d) = ep.node.poll_delivered() {
                    hosts.on_delivery(dst, d, now);
                }
            }
            for ep in endpoints.iter_mut() {
                while let Some(e) = ep.node.poll_event() {
                    if let Event::FlowAborted { .. } = e {
                        aborted += 1;
                    }
                }
            }
            if (slot + 1) % CHECK_EVERY == 0 {
                progress.update(now, hosts.completed);
            }
            // Nothing queued and nothing left to submit: once the cells on the wire have
            // landed, no flow can make progress any more.
            if (slot + 1) % self.table.epoch() == 0
                && flows.peek().is_none()
                && failures.peek().is_none()
            {
                let quiet = endpoints.iter().all(|e| e.dead || e.node.is_quiet());
                match (quiet, quiet_since) {
                    (false, _) => quiet_since = None,
                    (true, None) => quiet_since = Some(slot),
                    (true, Some(since)) if slot >= since + self.cfg.delay_slots as u64 => break,
                    (true, Some(_)) => {}
                }
            }
        }
        let mut total = NodeStats::default();
        for ep in &endpoints {
            add_stats(&mut total, ep.node.stats());
        }
        let sim_time = Time(engine.slot() * slot_ps);
        for (k, v) in [
            ("slots", engine.slot()),
            (
                "node_channel_slots",
                engine.slot() * n as u64 * self.cfg.channels as u64,
            ),
            ("data_cells_sent", total.data_cells_sent),
            ("idle_cells_sent", total.idle_cells_sent),
            ("transit_cells", total.transit_cells),
            ("cells_delivered", total.cells_delivered),
            ("notices_sent", total.notices_sent),
            ("retransmissions", total.retransmissions),
            ("corrupt_received", total.corrupt_received),
            ("duplicates", total.duplicates),
            ("tail_drops", total.tail_drops),
            ("discarded_for_failure", total.discarded_for_failure),
            ("rerouted", total.rerouted),
            ("protocol_errors", total.protocol_errors),
            ("peers_failed", total.peers_failed),
            ("flows_aborted", aborted),
            ("flows_refused", hosts.refused),
            ("cells_lost_in_fabric", medium.cells_lost),
            ("cells_corrupted_in_fabric", medium.cells_corrupted),
        ] {
            counters.insert(k.to_string(), v);
        }
        Ok(RunOutput {
            records: hosts.records,
            sim_time,
            queues: QueueStats {
                max_queue: total.max_queue as u64,
                max_node_queue: total.max_queued_total,
                max_reorder_bytes: total.max_reorder_bytes,
            },
            counters,
            delivered_bytes: hosts.delivered_bytes,
            measured_flow_bytes: hosts.measured_flow_bytes,
        })
    }
}
