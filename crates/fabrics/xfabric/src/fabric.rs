//! The XFabric rack as a `shoal_fabric::Fabric`: flows of any workload run on the flow-level
//! engine (`shoal_engine::FluidNet`) over the rack's circuits, routed as §6.2's simulator routes
//! them, while the controller rewires the rack every period for the demand it measured (§4), so
//! that `shoal run` and `shoal compare` put XFabric beside OSA, the torus, the random graph and
//! every other fabric on identical flows.
//!
//! - Routing (§6.2): a flow is split into f subflows, each on the less congested of two random
//!   shortest paths, congestion being the number of subflows of flows in progress on a path's
//!   most loaded link direction. The flow then loads each link direction with the share of its
//!   subflows that cross it, and the engine gives the flows their max-min fair rates over those
//!   fixed shares, recomputed at every arrival, departure and rewiring.
//! - Every circuit carries `link_rate` each way; a hop adds `hop_delay`. A flow completes once
//!   its last bit has gone at its rates plus its path's hops times the hop delay (every
//!   shortest path has the same hops); its bytes count as delivered when it completes.
//! - The controller (`"xfabric"`, `"osa"`): the rack starts on Algorithm 1 (or OSA's
//!   b-matching) of no demand, a random connected structure. Every `period` the SoCs' bytes sent
//!   to each other since the last period are their reports (§4: "the SoCs periodically report
//!   the traffic they sent"), smoothed into the demand estimate (`Demand::update`, the default
//!   moving average), the uplinks placed for it (no uplink traffic in a scenario: a run's flows
//!   stay in the rack), and Algorithm 1 (or OSA on the same `dm_all`) gives the new circuits.
//!   Rewiring is atomic and loses nothing: at flow level the §4 protocol's 20 ns switching cut
//!   and the milliseconds its messages take are not modelled (`crate::reconfig` measures them);
//!   every flow in progress is routed again on the new circuits at once.
//! - Static topologies (`"torus"`, `"random"`) never rewire.
//! - A fluid model has no queues: the run's queue statistics are zero.
//!
//! The run loop (flows due, samples, stop) is the one every event-driven fabric shares
//! (`shoal_fabric::event_loop`); the engine moves to each event's time before it is handled.

use crate::baselines::{random_regular, torus_3d, torus_sides};
use crate::demand::{Demand, DemandMatrix, DemandReport, Smoothing};
use crate::flowsim::{LoadMeasure, Router};
use crate::forwarding::ForwardingTables;
use crate::generate::generate_topology;
use crate::graph::SocGraph;
use crate::osa::osa_topology;
use crate::rack::Rack;
use crate::scenario::{Topology, XFabricSpec};
use crate::uplink::place_uplinks;
use shoal_base::{Dur, Time, rng};
use shoal_engine::FluidNet;
use shoal_fabric::{Calendar, EventFabric, Fabric, event_loop};
use shoal_fabric::{FabricError, FlowBook, Progress, QueueStats, RunLimits, RunOutput};
use shoal_workload::{Flow, FlowSource};
use std::collections::BTreeMap;

/// A built rack, ready to run.
pub struct XFabricRack {
    spec: XFabricSpec,
}

impl XFabricRack {
    pub fn new(spec: XFabricSpec) -> XFabricRack {
        XFabricRack { spec }
    }
}

impl Fabric for XFabricRack {
    fn name(&self) -> &str {
        shoal_fabric::ResolvedFabric::name(&self.spec)
    }

    fn nodes(&self) -> usize {
        self.spec.socs as usize
    }

    fn run(
        &mut self,
        flows: &mut dyn FlowSource,
        limits: RunLimits,
        progress: &mut dyn Progress,
    ) -> Result<RunOutput, FabricError> {
        event_loop::run(Sim::new(&self.spec, limits)?, flows, progress)
    }
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// A flow may have finished in the engine.
    Finish,
    /// Flow `record`'s last bit has arrived.
    Delivered {
        record: u32,
    },
    Rewire,
}

/// A flow in progress.
struct Active {
    src: shoal_base::NodeId,
    dst: shoal_base::NodeId,
    bytes: u64,
    /// Bytes already in the controller's measured demand.
    counted: u64,
    /// Its subflows' paths (link directions) on the present circuits.
    paths: Vec<Vec<usize>>,
    /// Its path draws, continued at every rewiring.
    rng: rng::StreamRng,
}

fn fail(what: &str) -> impl Fn(crate::Error) -> FabricError + '_ {
    move |e| FabricError(format!("xfabric: {what}: {e}"))
}

struct Sim<'a> {
    spec: &'a XFabricSpec,
    q: Calendar<Ev>,
    book: FlowBook,
    router: Router<SocGraph, ForwardingTables>,
    net: FluidNet,
    flows: Vec<Option<Active>>,
    finished: Vec<u32>,
    finish_at: Option<Time>,
    /// In the engine or on their last hops.
    in_flight: u64,
    rack: Rack,
    demand: Demand,
    /// Bytes sent per ordered SoC pair since the last rewiring.
    measured: Vec<u64>,
    rewirings: u64,
    subflows: u64,
}

impl<'a> Sim<'a> {
    fn new(spec: &'a XFabricSpec, limits: RunLimits) -> Result<Sim<'a>, FabricError> {
        let n = spec.socs as usize;
        let rack = spec
            .rack()
            .map_err(|e| FabricError(format!("xfabric: {e}")))?;
        let demand = Demand::zeros(n).map_err(fail("demand"))?;
        let none = DemandMatrix::zeros(n).map_err(fail("demand"))?;
        let d = spec.ports_per_soc as usize;
        let graph = match spec.topology {
            Topology::XFabric => generate_topology(&rack, &none, spec.seed)
                .map_err(fail("Algorithm 1"))?
                .graph()
                .clone(),
            Topology::Osa => osa_topology(&none, d, spec.seed).map_err(fail("OSA"))?,
            Topology::Torus => {
                let (x, y, z) = torus_sides(n);
                torus_3d(x, y, z).map_err(fail("torus"))?
            }
            Topology::Random => random_regular(n, d, spec.seed).map_err(fail("random graph"))?,
        };
        let mut sim = Sim {
            spec,
            q: Calendar::new(),
            book: FlowBook::new(n, limits),
            router: Router::new(
                graph.clone(),
                ForwardingTables::new(&graph),
                LoadMeasure::Subflows,
            ),
            net: FluidNet::new(Vec::new()),
            flows: Vec::new(),
            finished: Vec::new(),
            finish_at: None,
            in_flight: 0,
            rack,
            demand,
            measured: vec![0; n * n],
            rewirings: 0,
            subflows: 0,
        };
        sim.net.set_capacity(sim.capacities());
        Ok(sim)
    }

    /// Every link direction of the present circuits at the link rate, in bits per second.
    fn capacities(&self) -> Vec<f64> {
        vec![self.spec.link_rate.0 as f64; 2 * self.router.graph().links().len()]
    }
}

impl EventFabric for Sim<'_> {
    type Event = Ev;

    fn calendar_and_book(&mut self) -> (&mut Calendar<Ev>, &mut FlowBook) {
        (&mut self.q, &mut self.book)
    }

    fn start(&mut self) -> Result<(), FabricError> {
        if self.spec.topology.reconfigurable() {
            self.q.schedule(Time::ZERO + self.spec.period, Ev::Rewire);
        }
        Ok(())
    }

    fn advance(&mut self, now: Time) {
        self.advance_to(now);
    }

    fn handle(
        &mut self,
        now: Time,
        ev: Ev,
        source: &mut dyn FlowSource,
    ) -> Result<(), FabricError> {
        match ev {
            Ev::Finish => {}
            Ev::Delivered { record } => {
                let bytes = self.book.record(record).bytes;
                self.in_flight -= 1;
                if self.book.deliver(record, bytes, now, source) {
                    self.q.arm_flows(&mut self.book, source);
                }
            }
            Ev::Rewire => {
                self.rewire()?;
                if self.more_to_come(source) {
                    self.q.schedule(now + self.spec.period, Ev::Rewire);
                }
            }
        }
        Ok(())
    }

    fn add_flow(&mut self, _now: Time, record: u32, flow: &Flow) -> Result<(), FabricError> {
        self.flows.push(None);
        if flow.bytes == 0 {
            return Ok(());
        }
        let r = rng::stream(self.spec.seed, "xfabric.fabric.paths", flow.id);
        let mut active = Active {
            src: flow.src,
            dst: flow.dst,
            bytes: flow.bytes,
            counted: 0,
            paths: Vec::new(),
            rng: r,
        };
        let route = self.route(&mut active)?;
        self.net.start(record, route, flow.bytes);
        self.flows[record as usize] = Some(active);
        self.in_flight += 1;
        Ok(())
    }

    fn sample(&mut self, now: Time, source: &mut dyn FlowSource) -> bool {
        self.book.sample(now, 0, 0, self.in_flight);
        self.more_to_come(source)
    }

    fn settle(&mut self) {
        self.arm_finish();
    }

    fn finish(self, events: u64) -> RunOutput {
        let counters: BTreeMap<String, u64> = [
            ("events", events),
            ("rewirings", self.rewirings),
            ("subflows_placed", self.subflows),
            ("flows_unfinished", self.in_flight),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        self.book
            .finish(self.q.now(), QueueStats::default(), counters)
    }
}

impl<'a> Sim<'a> {
    /// Whether anything can still happen: flows to come or in progress.
    fn more_to_come(&mut self, source: &mut dyn FlowSource) -> bool {
        self.in_flight > 0 || !source.is_exhausted()
    }

    /// Schedules a `Finish` event at the engine's next finish, unless one is pending for it.
    /// A pending one for another time finds nothing to do when it comes.
    fn arm_finish(&mut self) {
        let next = self.net.next_finish();
        if let Some(t) = next
            && next != self.finish_at
        {
            self.q.schedule(t, Ev::Finish);
        }
        self.finish_at = next;
    }

    /// Moves the engine to `now`; flows that finished leave their links and arrive after their
    /// hops.
    fn advance_to(&mut self, now: Time) {
        let mut done = std::mem::take(&mut self.finished);
        done.clear();
        self.net.advance(now, &mut done);
        for &record in &done {
            let f = self.flows[record as usize]
                .take()
                .expect("a flow in progress");
            self.measure(&f, f.bytes);
            self.unload(&f);
            let hops = self
                .router
                .tables()
                .hops(f.src, f.dst)
                .expect("routed flows are reachable");
            let arrive = now + Dur(self.spec.hop_delay.0 * u64::from(hops));
            self.q.schedule(arrive, Ev::Delivered { record });
        }
        self.finished = done;
    }

    /// Adds what flow `f` sent beyond what was counted, up to `sent` bytes, to the demand.
    fn measure(&mut self, f: &Active, sent: u64) {
        let n = self.spec.socs as usize;
        let e = &mut self.measured[f.src.idx() * n + f.dst.idx()];
        *e = e.saturating_add(sent.saturating_sub(f.counted));
    }

    /// The bytes of subflow `i` of a flow of `bytes`: an even split, the first `bytes % f` one
    /// byte more.
    fn share(&self, bytes: u64, i: usize) -> u64 {
        let f = u64::from(self.spec.subflows);
        bytes / f + u64::from((i as u64) < bytes % f)
    }

    fn unload(&mut self, f: &Active) {
        for (i, path) in f.paths.iter().enumerate() {
            let share = self.share(f.bytes, i);
            self.router.unload(path, share);
        }
    }

    /// Places the flow's subflows on the present circuits and returns the share of the flow on
    /// each link direction.
    fn route(&mut self, f: &mut Active) -> Result<Vec<(u32, f64)>, FabricError> {
        if self.router.tables().hops(f.src, f.dst).is_none() {
            return Err(FabricError(format!(
                "xfabric: no path from SoC {} to SoC {} on the {} circuits",
                f.src.0,
                f.dst.0,
                self.spec.topology.name()
            )));
        }
        let subflows = self.spec.subflows as usize;
        f.paths.clear();
        let mut on: BTreeMap<u32, u32> = BTreeMap::new();
        for i in 0..subflows {
            let share = self.share(f.bytes, i);
            let path = self.router.place(f.src, f.dst, share, &mut f.rng).to_vec();
            for &l in &path {
                *on.entry(l as u32).or_default() += 1;
            }
            f.paths.push(path);
        }
        self.subflows += subflows as u64;
        Ok(on
            .into_iter()
            .map(|(l, k)| (l, f64::from(k) / subflows as f64))
            .collect())
    }

    /// The controller's period: reports, demand, uplinks, new circuits, every flow routed again.
    fn rewire(&mut self) -> Result<(), FabricError> {
        let n = self.spec.socs as usize;
        for &record in self.net.active() {
            let sent = self.net.sent_bytes(record).expect("an active flow");
            let f = self.flows[record as usize]
                .as_mut()
                .expect("an active flow");
            let e = &mut self.measured[f.src.idx() * n + f.dst.idx()];
            *e = e.saturating_add(sent.saturating_sub(f.counted));
            f.counted = sent;
        }
        let reports: Vec<DemandReport> = self
            .measured
            .chunks(n)
            .map(|row| DemandReport {
                sent_to: row.to_vec(),
                sent_external: 0,
                received_external: 0,
            })
            .collect();
        self.measured.fill(0);
        self.demand = self
            .demand
            .update(&reports, Smoothing::default())
            .map_err(fail("demand"))?;
        let uplinks = place_uplinks(&self.rack, &self.demand).map_err(fail("uplinks"))?;
        let graph = match self.spec.topology {
            Topology::Osa => osa_topology(
                uplinks.dm_all(),
                self.spec.ports_per_soc as usize,
                self.spec.seed,
            )
            .map_err(fail("OSA"))?,
            _ => generate_topology(&self.rack, uplinks.dm_all(), self.spec.seed)
                .map_err(fail("Algorithm 1"))?
                .graph()
                .clone(),
        };
        let tables = ForwardingTables::new(&graph);
        self.router = Router::new(graph, tables, LoadMeasure::Subflows);
        self.net.set_capacity(self.capacities());
        let active = self.net.active().to_vec();
        for record in active {
            let mut f = self.flows[record as usize].take().expect("an active flow");
            let route = self.route(&mut f)?;
            self.net.reroute(record, route);
            self.flows[record as usize] = Some(f);
        }
        self.rewirings += 1;
        Ok(())
    }
}
