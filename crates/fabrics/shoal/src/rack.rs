//! The Shoal rack as a [`Fabric`]: builds the schedule and its Clos, the nodes and the engine,
//! then runs flows slot by slot.

use crate::breakdown::Rows;
use crate::config::{Engine, Failure, RackConfig};
use crate::endpoint::{Endpoint, Fabric as Medium, PeerTable};
use crate::fast::FastRack;
use crate::host::{FlowTag, Hosts};
use shoal_base::{NodeId, Time, rng};
use shoal_engine::SlottedEngine;
use shoal_fabric::config::{ConfigError, ErrorKind, NO_KEYS, value};
use shoal_fabric::{Fabric, FabricError, Progress, QueueStats, RunLimits, RunOutput};
use shoal_node::{Event, Node, NodeConfig, NodeStats};
use shoal_schedule::{Clos, Component, FabricSchedule, verify};
use shoal_workload::FlowSource;
use std::collections::BTreeMap;

/// How often (in slots) the rack reports progress.
const CHECK_EVERY: u64 = 4096;

/// From this many nodes on, the engine issues prefetch hints. A node keeps a 64-byte record per
/// peer, so the rack holds N² of them: at 128 nodes (1 MiB) they mostly stay in cache and the
/// hints cost about as much as they save, at 256 (4 MiB) the hints make the rack 28% faster
/// (measured on a 2-core AMD EPYC with 512 KiB of L2 per core, BENCHMARKS.md).
pub(crate) const HINTS_FROM_NODES: usize = 192;

/// A built rack, ready to run.
pub struct ShoalRack {
    cfg: RackConfig,
    seed: u64,
    schedule: FabricSchedule,
    clos: Clos,
    pub(crate) table: PeerTable,
    /// Threads a run of the fast engine may use (`Fabric::set_threads`); outputs do not
    /// depend on it.
    threads: usize,
}

impl ShoalRack {
    /// Validates `cfg`, builds its schedule and Clos and, if asked, verifies them.
    pub fn new(cfg: RackConfig, seed: u64) -> Result<ShoalRack, ConfigError> {
        let (schedule, _) = cfg.validate(&NO_KEYS)?;
        let clos = Clos::new(&schedule, cfg.switch_ports as usize)
            .map_err(|e| value("rack.switch_ports", e.to_string()))?;
        if cfg.verify_schedule {
            verify(&schedule, &clos).map_err(|v| ConfigError {
                key: "rack".into(),
                kind: ErrorKind::Build,
                reason: format!("the schedule failed verification: {v}"),
            })?;
        }
        let table = PeerTable::new(&schedule);
        Ok(ShoalRack {
            cfg,
            seed,
            schedule,
            clos,
            table,
            threads: 1,
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
            interleave_messages: c.interleave_flows,
            // The bounds hold only without corruption (App. D), link or switch failures
            // (rerouted cells travel outside their subflow) and tail drops of lower classes
            // (the retransmission that answers a drop resends the last cell sent, which may be
            // another one by then).
            check_bounds: c.header_bit_error_rate == 0.0 && c.failures.is_empty() && c.classes == 1,
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
    into.max_transit_total = into.max_transit_total.max(s.max_transit_total);
    into.max_reorder_bytes = into.max_reorder_bytes.max(s.max_reorder_bytes);
}

/// The engine of one run: a sans-IO node per rack node driven by the slotted engine (the
/// reference model), or the fast engine's rack-owned state.
enum Core {
    Node {
        endpoints: Vec<Endpoint>,
        medium: Medium,
        engine: SlottedEngine<shoal_node::Rx<FlowTag>>,
    },
    Fast(Box<FastRack>),
}

impl Core {
    fn slot(&self) -> u64 {
        match self {
            Core::Node { engine, .. } => engine.slot(),
            Core::Fast(f) => f.slot(),
        }
    }
}

/// One run in progress: the engine and the hosts between two slots. `Fabric::run` steps it to
/// the end; the benchmark steps it itself, to time a window of slots.
pub(crate) struct Sim<'r> {
    rack: &'r ShoalRack,
    core: Core,
    hosts: Hosts,
    /// Failures still to come, latest first.
    failures: Vec<Failure>,
    failed_parts: Vec<Component>,
    aborted: u64,
    quiet_since: Option<u64>,
    /// The scenario asked for the fast engine, which lacks one of its features.
    fell_back: bool,
    /// With `rack.breakdown`: the rows of `breakdown.csv` so far.
    rows: Option<Rows>,
    /// Flows completed in this slot, as (destination, tag), for their breakdown.
    completed: Vec<(u16, u32)>,
}

impl ShoalRack {
    /// The engine a run of this rack uses, and whether that is a fallback from a fast engine
    /// asked for by name (which then writes a note to stderr naming the missing feature).
    pub fn engine_used(&self) -> (Engine, bool) {
        match (self.cfg.engine, crate::fast::unsupported(&self.cfg)) {
            (Engine::Fast | Engine::Auto, None) => (Engine::Fast, false),
            (Engine::Fast, Some(_)) => (Engine::Node, true),
            (Engine::Auto, Some(_)) | (Engine::Node, _) => (Engine::Node, false),
        }
    }

    /// Builds the engine for a run under `limits`.
    pub(crate) fn start(&self, limits: RunLimits) -> Result<Sim<'_>, FabricError> {
        let n = self.cfg.nodes as usize;
        let (engine, fell_back) = self.engine_used();
        if let Some(why) = crate::fast::unsupported(&self.cfg).filter(|_| fell_back) {
            eprintln!(
                "note: rack.engine = \"fast\" does not cover {why} yet; this run uses the node \
                 engine (counter engine_fallback = 1)"
            );
        }
        let core = match engine {
            // `engine_used` resolves `Auto` to one of the two.
            Engine::Fast | Engine::Auto => {
                let slot = |i: usize, j: usize| {
                    self.schedule
                        .slot_of(NodeId(i as u16), NodeId(j as u16))
                        .map_or(u16::MAX, |(s, _)| s.0 as u16)
                };
                let fast =
                    FastRack::new(&self.cfg, &self.table, slot, self.threads).map_err(|e| {
                        FabricError(format!(
                            "cannot start the fast engine's {} threads: {e}",
                            self.threads
                        ))
                    })?;
                Core::Fast(Box::new(fast))
            }
            Engine::Node => {
                let endpoints: Vec<Endpoint> = (0..n)
                    .map(|i| {
                        Node::new(self.node_config(i))
                            .map(|node| Endpoint { node, dead: false })
                            .map_err(|e| FabricError(e.to_string()))
                    })
                    .collect::<Result<_, _>>()?;
                let medium = Medium::new(
                    &self.table,
                    self.cfg.header_bit_error_rate,
                    rng::stream(self.seed, "shoal.corruption", 0),
                );
                let engine =
                    SlottedEngine::new(n, self.cfg.channels as usize, self.cfg.delay_slots as u64)
                        .with_hints(n >= HINTS_FROM_NODES);
                Core::Node {
                    endpoints,
                    medium,
                    engine,
                }
            }
        };
        let hosts = Hosts::new(n, limits);
        let mut failures = self.cfg.failures.clone();
        // Stable sort, then reversed: popping from the end takes them in time order, ties in
        // configuration order.
        failures.sort_by_key(|f| f.at);
        failures.reverse();
        Ok(Sim {
            rack: self,
            core,
            hosts,
            failures,
            failed_parts: Vec::new(),
            aborted: 0,
            quiet_since: None,
            fell_back,
            rows: self.cfg.breakdown.then(|| Rows::new(self.cfg.slot.0)),
            completed: Vec::new(),
        })
    }
}

/// Whether a run goes on after a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Running,
    Done,
}

impl Sim<'_> {
    /// Runs one slot, taking from `flows` those that start by its beginning.
    pub(crate) fn step(
        &mut self,
        flows: &mut dyn FlowSource,
        progress: &mut dyn Progress,
    ) -> Result<Step, FabricError> {
        let cfg = &self.rack.cfg;
        let slot = self.core.slot();
        let now = Time(slot * cfg.slot.0);
        if self.hosts.book.stops_at(now) {
            return Ok(Step::Done);
        }
        match &mut self.core {
            Core::Node {
                endpoints,
                medium,
                engine,
            } => {
                while self.failures.last().is_some_and(|f| f.at <= now) {
                    let f = self.failures.pop().expect("checked");
                    match f.component {
                        Component::Node(x) => endpoints[x.idx()].dead = true,
                        other => {
                            self.failed_parts.push(other);
                            medium.set_failed(&self.rack.clos, &self.failed_parts);
                        }
                    }
                }
                // A flow starting within (slot − 1, slot] is handed over at this slot boundary.
                while let Some(flow) = flows.next_due(now) {
                    // The book checks the ends before the node is looked up.
                    let hosts = &mut self.hosts;
                    hosts.inject(&flow, |tag| {
                        let ep = endpoints.get_mut(flow.src.idx());
                        ep.filter(|e| !e.dead).is_some_and(|e| {
                            e.node
                                .submit(
                                    slot,
                                    flow.dst,
                                    flow.class,
                                    flow.bytes,
                                    cfg.packet_bytes,
                                    tag,
                                )
                                .is_ok()
                        })
                    })?;
                }
                engine.step(&self.rack.table, endpoints, medium);
                for ep in endpoints.iter_mut().filter(|e| e.node.has_deliveries()) {
                    let dst = ep.node.id();
                    while let Some(d) = ep.node.poll_delivered() {
                        self.hosts.on_delivery(dst, d, now, flows);
                    }
                }
                for ep in endpoints.iter_mut() {
                    while let Some(e) = ep.node.poll_event() {
                        if let Event::FlowAborted { .. } = e {
                            self.aborted += 1;
                        }
                    }
                }
            }
            Core::Fast(fast) => {
                // The fast engine runs only racks without failures (`fast::unsupported`).
                while let Some(flow) = flows.next_due(now) {
                    self.hosts
                        .inject(&flow, |tag| fast.submit(slot, &flow, cfg.packet_bytes, tag))?;
                }
                fast.step(&self.rack.table);
                for (dst, d) in fast.take_delivered() {
                    let tag = d.payload.0;
                    if self.hosts.on_delivery(NodeId(dst), d, now, flows) && self.rows.is_some() {
                        self.completed.push((dst, tag));
                    }
                }
                if let Some(rows) = self.rows.as_mut() {
                    for (dst, tag) in self.completed.drain(..) {
                        rows.add(self.hosts.book.record(tag), fast.take_last(dst, tag));
                    }
                }
            }
        }
        if self.hosts.book.sample_due(now) {
            self.take_sample(now);
        }
        if (slot + 1).is_multiple_of(CHECK_EVERY) {
            self.hosts.book.report(now, progress);
        }
        // Nothing queued and nothing left to submit: once the cells on the wire have
        // landed, no flow can make progress any more.
        if (slot + 1).is_multiple_of(self.rack.table.epoch())
            && flows.is_exhausted()
            && self.failures.is_empty()
        {
            let quiet = match &self.core {
                Core::Node { endpoints, .. } => {
                    endpoints.iter().all(|e| e.dead || e.node.is_quiet())
                }
                Core::Fast(fast) => fast.is_quiet(),
            };
            match (quiet, self.quiet_since) {
                (false, _) => self.quiet_since = None,
                (true, None) => self.quiet_since = Some(slot),
                (true, Some(since)) if slot >= since + cfg.delay_slots as u64 => {
                    return Ok(Step::Done);
                }
                (true, Some(_)) => {}
            }
        }
        Ok(Step::Running)
    }

    /// Records the queues and progress at `now`. Finding the longest queue visits every queue
    /// of every node, which is why sampling is periodic and optional.
    fn take_sample(&mut self, now: Time) {
        let cfg = &self.rack.cfg;
        let cell = cfg.cell_bytes as u64;
        let (queued, longest) = match &self.core {
            Core::Node { endpoints, .. } => {
                let mut queued = 0;
                let mut longest = 0;
                for ep in endpoints {
                    queued += ep.node.queued_cells();
                    for class in 0..cfg.classes {
                        for k in 0..cfg.nodes {
                            longest = longest.max(ep.node.queue_len(class, NodeId(k)) as u64);
                        }
                    }
                }
                (queued, longest)
            }
            Core::Fast(fast) => fast.queues(),
        };
        let active = self.hosts.active();
        self.hosts
            .book
            .sample(now, queued * cell, longest * cell, active);
    }

    /// Every node's counters added up.
    pub(crate) fn totals(&self) -> NodeStats {
        let mut total = NodeStats::default();
        match &self.core {
            Core::Node { endpoints, .. } => {
                for ep in endpoints {
                    add_stats(&mut total, ep.node.stats());
                }
            }
            Core::Fast(fast) => {
                for s in fast.stats() {
                    add_stats(&mut total, s);
                }
            }
        }
        total
    }

    /// The run's results at this point.
    pub(crate) fn finish(self) -> RunOutput {
        let cfg = &self.rack.cfg;
        let total = self.totals();
        let slots = self.core.slot();
        let (lost, corrupted) = match &self.core {
            Core::Node { medium, .. } => (medium.cells_lost, medium.cells_corrupted),
            Core::Fast(_) => (0, 0),
        };
        let mut counters: BTreeMap<String, u64> = BTreeMap::new();
        for (k, v) in [
            ("slots", slots),
            (
                "node_channel_slots",
                slots * cfg.nodes as u64 * cfg.channels as u64,
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
            ("flows_aborted", self.aborted),
            ("flows_refused", self.hosts.refused),
            ("cells_lost_in_fabric", lost),
            ("cells_corrupted_in_fabric", corrupted),
        ] {
            counters.insert(k.to_string(), v);
        }
        if self.fell_back {
            counters.insert("engine_fallback".to_string(), 1);
        }
        let mut tables = BTreeMap::new();
        if let Some(rows) = self.rows {
            // Should stay 0: a short flow completed without the stamps of its critical cell.
            counters.insert("breakdown_missing".to_string(), rows.missing);
            tables.insert("breakdown.csv".to_string(), rows.into_text());
        }
        let queues = QueueStats {
            max_queue: total.max_queue as u64,
            max_node_queue: total.max_queued_total,
            max_node_transit: total.max_transit_total,
            max_reorder_bytes: total.max_reorder_bytes,
        };
        RunOutput {
            tables,
            ..self
                .hosts
                .book
                .finish(Time(slots * cfg.slot.0), queues, counters)
        }
    }
}

impl Fabric for ShoalRack {
    fn name(&self) -> &str {
        "shoal"
    }

    fn nodes(&self) -> usize {
        self.cfg.nodes as usize
    }

    fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    fn run(
        &mut self,
        flows: &mut dyn FlowSource,
        limits: RunLimits,
        progress: &mut dyn Progress,
    ) -> Result<RunOutput, FabricError> {
        let mut sim = self.start(limits)?;
        while sim.step(flows, progress)? == Step::Running {}
        Ok(sim.finish())
    }
}
