//! One run of a packet-switched network: the event loop that moves packets between ports,
//! switches and hosts, and drives one transport state machine pair per flow.
//!
//! Events carry 4-byte ids (a port, a packet slot, a flow record), never closures; the `match`
//! in [`Sim::run`] is the whole dispatcher. Each port has at most one pending wake-up, each flow
//! at most one pending timer (an earlier-due timer replaces nothing: a stale one is recognised by
//! its time and ignored), so the event list grows with packets in flight, not with flows. The
//! run loop (flows due, samples, stop) is the one every event-driven fabric shares
//! (`shoal_fabric::event_loop`).

use crate::config::{Discipline, HostNic, NetConfig, PathChoice, TrimRule};
use crate::nic::RoundRobinNic;
use crate::packet::{NO_PORT, Packet, PacketSlab};
use crate::port::Ports;
use crate::queue::{Admit, OnWire};
use crate::r2c2::{R2c2State, Routing, next_solve};
use crate::rewire::{Rewiring, check_shape, check_staged};
use crate::source_route::{PathCycle, path_count, take_hop};
use shoal_base::rng::StreamRng;
use shoal_base::{Dur, Time};
use shoal_fabric::{Calendar, EventFabric};
use shoal_fabric::{FabricError, FlowBook, QueueStats, RunLimits, RunOutput};
use shoal_topology::Topology;
use shoal_transport::segment::{CE, TRIMMED};
use shoal_transport::{Kind, Receiver, Segment, Sender, Transport};
use shoal_workload::{Flow, FlowSource};
use std::borrow::Cow;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// Packet `pkt` arrives at node `node` (through the port its `ingress` names).
    Arrive { node: u32, pkt: u32 },
    /// Port `port` finished serializing and has packets waiting.
    Wake { port: u32 },
    /// The flow with record `flow` asked to be woken.
    Timer { flow: u32 },
    /// Host `host`'s pull pacer may send the next pull.
    Pull { host: u32 },
    /// A PFC PAUSE (`pause`) or RESUME reaches output port `port`.
    Pfc { port: u32, pause: bool },
    /// R2C2: the broadcast of flow `flow`'s start has reached every node.
    R2c2Start { flow: u32 },
    /// R2C2: the broadcast of flow `flow`'s finish has reached every node.
    R2c2Finish { flow: u32 },
    /// R2C2: recompute the rates after the flow events of the interval.
    R2c2Solve,
    /// The rewiring controller's turn.
    Rewire,
    /// Step `step` of staged rewiring `stage` is due (see [`crate::rewire::Staged`]).
    Stage { stage: u32, step: u32 },
}

/// A staged rewiring under way: the new topology, which nodes forward by it already, and the
/// steps not yet applied.
struct Staging {
    new: Topology,
    fresh: Vec<bool>,
    steps: Vec<Option<Step>>,
    pending: usize,
}

/// One step of a staged rewiring.
#[derive(Clone, Copy)]
enum Step {
    /// Node, port: the port takes its new link.
    Circuit(u32, u32),
    /// The node forwards by the new tables.
    Tables(u32),
}

/// Marks a record whose flow state has been freed.
const GONE: u32 = u32::MAX;

struct Live<T: Transport> {
    sender: T::Sender,
    receiver: T::Receiver,
    /// The pending timer event's time, if one is pending.
    timer_at: Option<Time>,
    received_all: bool,
    /// Waiting in its destination's pull queue.
    pull_queued: bool,
    /// `path = "source"`: the sender's and the receiver's path cycles (`None` otherwise).
    routes: Option<Box<[PathCycle; 2]>>,
    /// `path = "pinned"`: each subflow's path from the sender and from the receiver.
    pinned: Option<Box<[Box<[u32]>; 2]>>,
}

/// A host's pull pacer (NDP): flows with pulls to send, served round-robin, one pull per
/// full-size packet time at the host's link rate (scaled by `NetConfig::pull_pacing`).
#[derive(Default)]
struct Pacer {
    flows: std::collections::VecDeque<u32>,
    next: Time,
    wake_pending: bool,
}

/// SplitMix64's finaliser: a fixed, portable mixer for path hashing.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub(crate) struct Sim<'a, T: Transport> {
    /// The running topology: the one given, or the last one a rewiring controller returned.
    topo: Cow<'a, Topology>,
    net: NetConfig,
    transport: &'a T,
    limits: RunLimits,
    q: Calendar<Ev>,
    ports: Ports,
    pkts: PacketSlab,
    mtu: u64,
    /// Per flow record: its slot in `live`, or `GONE`.
    slot_of: Vec<u32>,
    live: Vec<Option<Live<T>>>,
    free: Vec<u32>,
    /// Records, delivered bytes, completions and samples (the bookkeeping every fabric shares).
    book: FlowBook,
    active: u64,
    /// Bytes queued at each switch, and the most at one switch over the run.
    node_bytes: Vec<u64>,
    max_node_bytes: u64,
    /// The most bytes queued at one switch port over the run (both lanes).
    max_port_bytes: u64,
    max_reorder: u64,
    drops: u64,
    marks: u64,
    trims: u64,
    hops: u64,
    timeouts: u64,
    sprayed: u64,
    pauses: u64,
    pacers: Vec<Pacer>,
    /// R2C2's rate control, only when the transport is R2C2 (`None` costs other runs nothing).
    r2c2: Option<Box<R2c2State>>,
    /// Forward by dimension order (R2C2 with `PathChoice::Ecmp` on a torus) instead of hashing.
    dimension_order: bool,
    rewiring: Option<&'a mut dyn Rewiring>,
    /// Data wire bytes sent per (src, dst) host pair since the last rewiring (empty without one).
    sent: Vec<u64>,
    rewirings: u64,
    lost_rewiring: u64,
    /// A staged rewiring under way (`None` once every step is applied).
    staging: Option<Box<Staging>>,
    /// Staged rewirings started, so that a step of an earlier one is recognised.
    stages: u32,
    lost_stale: u64,
    /// Data packet transmissions and data packets reaching their destination, both counted from
    /// `RunLimits::measure_from`: their ratio is the mean path length in links.
    data_hops: u64,
    data_arrivals: u64,
    /// RED's marking draws: one stream for the whole network, drawn in event order.
    red_rng: StreamRng,
    /// The discipline and byte limit of switch queues and of host NICs, fixed for the run.
    switch_queues: (Discipline, u64),
    host_queues: (Discipline, u64),
    /// htsim's round-robin NIC of each host, by host id (empty with FIFO NICs, which queue in
    /// their port like a switch).
    nics: Vec<RoundRobinNic>,
    /// The NICs give each flow its turn (htsim's default); else each class is one FIFO (its
    /// `-host_queue_type prio`): every packet queues as one flow, 0.
    nic_turns: bool,
    /// htsim's trimming: the packet each port is sending (valid while the port is busy), and
    /// the coin that picks what a full queue trims (empty and unused otherwise).
    on_wire: Vec<OnWire>,
    htsim_trim: bool,
    trim_rng: StreamRng,
}

impl<'a, T: Transport> Sim<'a, T> {
    pub(crate) fn new(
        topo: &'a Topology,
        net: NetConfig,
        transport: &'a T,
        limits: RunLimits,
        rewiring: Option<&'a mut dyn Rewiring>,
    ) -> Self {
        // R2C2 on a torus: `PathChoice::Ecmp` means dimension-order routing, `Spray` multipath
        // (per-packet spraying over the minimal next hops). Elsewhere, R2C2 assumes spraying.
        let r2c2 = transport.rate_controlled().then(|| {
            let torus = matches!(topo.kind(), shoal_topology::Kind::Torus { .. });
            let routing = if torus && net.path == PathChoice::Ecmp {
                Routing::DimensionOrder
            } else {
                Routing::Multipath
            };
            Box::new(R2c2State::new(topo, routing, net.control_bytes))
        });
        let dimension_order = r2c2
            .as_ref()
            .is_some_and(|r| r.ctl.routing() == Routing::DimensionOrder);
        let hosts = topo.hosts();
        let mtu = net.mtu(transport.mss()) as u64;
        let switch_limit = match net.pfc {
            Some(_) => u64::MAX, // lossless: PFC holds the senders back instead
            None => net.queue_packets as u64 * mtu,
        };
        // Host NICs queue without limit (the transport's window bounds them), like htsim; under
        // NDP they too send control packets first (a trimming queue never trims without limit).
        let host_discipline = match net.discipline {
            Discipline::Trim => Discipline::Trim,
            _ => Discipline::DropTail,
        };
        let htsim_trim = net.discipline == Discipline::Trim && net.trim == TrimRule::Htsim;
        let ports = Ports::new(topo, net.pfc.is_some());
        let ports_total = ports.ports.len();
        Sim {
            topo: Cow::Borrowed(topo),
            net,
            transport,
            limits,
            q: Calendar::new(),
            ports,
            pkts: PacketSlab::default(),
            mtu,
            slot_of: Vec::new(),
            live: Vec::new(),
            free: Vec::new(),
            book: FlowBook::new(topo.hosts(), limits),
            active: 0,
            node_bytes: vec![0; topo.nodes()],
            max_node_bytes: 0,
            max_port_bytes: 0,
            max_reorder: 0,
            drops: 0,
            marks: 0,
            trims: 0,
            hops: 0,
            timeouts: 0,
            sprayed: 0,
            pauses: 0,
            pacers: (0..topo.hosts()).map(|_| Pacer::default()).collect(),
            r2c2,
            dimension_order,
            sent: if rewiring.is_some() {
                vec![0; hosts * hosts]
            } else {
                Vec::new()
            },
            rewiring,
            rewirings: 0,
            lost_rewiring: 0,
            staging: None,
            stages: 0,
            lost_stale: 0,
            data_hops: 0,
            data_arrivals: 0,
            red_rng: shoal_base::rng::stream(net.seed, "psn.red", 0),
            switch_queues: (net.discipline, switch_limit),
            host_queues: (host_discipline, u64::MAX),
            nics: match net.host_nic {
                HostNic::RoundRobin | HostNic::Priority => {
                    (0..hosts).map(|_| RoundRobinNic::default()).collect()
                }
                HostNic::Fifo => Vec::new(),
            },
            nic_turns: net.host_nic == HostNic::RoundRobin,
            on_wire: if htsim_trim {
                vec![
                    OnWire {
                        bytes: 0,
                        prio: false
                    };
                    ports_total
                ]
            } else {
                Vec::new()
            },
            htsim_trim,
            trim_rng: shoal_base::rng::stream(net.seed, "psn.trim", 0),
        }
    }
}

impl<T: Transport> EventFabric for Sim<'_, T> {
    type Event = Ev;

    fn calendar_and_book(&mut self) -> (&mut Calendar<Ev>, &mut FlowBook) {
        (&mut self.q, &mut self.book)
    }

    fn start(&mut self) -> Result<(), FabricError> {
        if let Some(r) = &self.rewiring {
            if self.r2c2.is_some() || self.net.pfc.is_some() {
                return Err(FabricError(
                    "rewiring a network under R2C2 or PFC is not modelled: their state is tied \
                     to the links"
                        .into(),
                ));
            }
            if let Some(at) = r.first() {
                self.q.schedule(at, Ev::Rewire);
            }
        }
        Ok(())
    }

    fn handle(
        &mut self,
        now: Time,
        ev: Ev,
        source: &mut dyn FlowSource,
    ) -> Result<(), FabricError> {
        match ev {
            Ev::Arrive { node, pkt } => self.arrive(now, node, pkt, source),
            Ev::Wake { port } => {
                self.ports.ports[port as usize].wake_pending = false;
                if !self.port_empty(port) {
                    self.start_tx(now, port);
                }
            }
            Ev::Timer { flow } => self.timer(now, flow),
            Ev::Pfc { port, pause } => {
                self.ports.pfc[port as usize].paused = pause;
                if !pause {
                    self.kick(now, port);
                }
            }
            Ev::Pull { host } => {
                self.pacers[host as usize].wake_pending = false;
                self.pull(now, host);
            }
            Ev::R2c2Start { flow } => self.r2c2_event(now, flow, true),
            Ev::R2c2Finish { flow } => self.r2c2_event(now, flow, false),
            Ev::R2c2Solve => self.r2c2_solve(now),
            Ev::Rewire => self.rewire(now, source)?,
            Ev::Stage { stage, step } => self.stage_step(stage, step),
        }
        Ok(())
    }

    fn add_flow(&mut self, now: Time, record: u32, flow: &Flow) -> Result<(), FabricError> {
        self.start_flow(now, record, flow);
        Ok(())
    }

    fn sample(&mut self, now: Time, source: &mut dyn FlowSource) -> bool {
        let mut queued = 0;
        let mut longest = 0;
        let nics = self.nics.iter().map(RoundRobinNic::bytes);
        for b in self.ports.ports.iter().map(|p| p.queue.bytes()).chain(nics) {
            queued += b;
            longest = longest.max(b);
        }
        self.book.sample(now, queued, longest, self.active);
        // Keep sampling while anything can still happen.
        !self.q.is_empty() || !source.is_exhausted() || self.active > 0
    }

    fn finish(mut self, events: u64) -> RunOutput {
        for live in self.live.iter().flatten() {
            self.timeouts += live.sender.timeouts();
        }
        // Queues in full-size packets (bytes / MTU, rounded up), so that acks and trimmed
        // headers count for what they occupy and the figure compares with `queue_packets`.
        let max_queue = self.max_port_bytes.div_ceil(self.mtu);
        let counters: BTreeMap<String, u64> = [
            ("events", events),
            ("packet_hops", self.hops),
            ("packets_dropped", self.drops),
            ("packets_marked", self.marks),
            ("packets_trimmed", self.trims),
            ("pfc_pauses", self.pauses),
            ("retransmission_timeouts", self.timeouts),
            ("flows_unfinished", self.active),
            ("data_packet_hops", self.data_hops),
            ("data_packets_arrived", self.data_arrivals),
            ("rewirings", self.rewirings),
            ("packets_lost_rewiring", self.lost_rewiring),
            ("packets_lost_stale_tables", self.lost_stale),
        ]
        .into_iter()
        .chain(self.r2c2.as_ref().map(|r| ("r2c2_solves", r.solves)))
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let queues = QueueStats {
            max_queue,
            max_node_queue: self.max_node_bytes.div_ceil(self.mtu),
            max_node_transit: 0,
            max_reorder_bytes: self.max_reorder,
        };
        self.book.finish(self.q.now(), queues, counters)
    }
}

impl<'a, T: Transport> Sim<'a, T> {
    /// Starts the flow's transport (a flow of no bytes has none: the loop completes it).
    fn start_flow(&mut self, now: Time, record: u32, flow: &Flow) {
        if flow.bytes == 0 {
            self.slot_of.push(GONE);
            return;
        }
        let routes = (self.net.path == PathChoice::Source).then(|| {
            let (src, dst) = (flow.src.0 as u32, flow.dst.0 as u32);
            let key = |end: u64| mix(self.net.seed ^ (record as u64) << 2 ^ end);
            Box::new([
                PathCycle::new(path_count(&self.topo, src, dst), key(1)),
                PathCycle::new(path_count(&self.topo, dst, src), key(2)),
            ])
        });
        let pinned = (self.net.path == PathChoice::Pinned).then(|| {
            let (src, dst) = (flow.src.0 as u32, flow.dst.0 as u32);
            let subflows = self.transport.subflows();
            let draw = |from: u32, to: u32, end: u64| -> Box<[u32]> {
                let key = mix(self.net.seed ^ (record as u64) << 2 ^ end);
                let mut cycle = PathCycle::new(path_count(&self.topo, from, to), key);
                (0..subflows).map(|_| cycle.next_path()).collect()
            };
            Box::new([draw(src, dst, 1), draw(dst, src, 2)])
        });
        let state = Live {
            sender: self.transport.sender(flow.bytes, now),
            receiver: self.transport.receiver(flow.bytes),
            timer_at: None,
            received_all: false,
            pull_queued: false,
            routes,
            pinned,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.live[s as usize] = Some(state);
                s
            }
            None => {
                self.live.push(Some(state));
                (self.live.len() - 1) as u32
            }
        };
        self.slot_of.push(slot);
        self.active += 1;
        if self.r2c2.is_some() {
            self.r2c2_start(now, record);
        }
        self.pump(now, record);
    }

    /// R2C2: the source gives the new flow a rate at once, from the last computation, and
    /// broadcasts the start.
    fn r2c2_start(&mut self, now: Time, record: u32) {
        let rec = *self.book.record(record);
        let r = self.r2c2.as_mut().expect("R2C2 run");
        let route = r.ctl.route(&self.topo, rec.src.0 as u32, rec.dst.0 as u32);
        let rate = r.ctl.start_rate(&route) as u64;
        r.pending.insert(record, route);
        r.told.tell(record, rate);
        let at = now + r.delay;
        self.q.schedule(at, Ev::R2c2Start { flow: record });
        let slot = self.slot_of[record as usize];
        if let Some(live) = self.live[slot as usize].as_mut() {
            live.sender.set_rate(now, shoal_base::Rate(rate));
        }
    }

    /// R2C2: a flow event reached every node; the rates are recomputed at the next point of the
    /// broadcast-delay grid, once for all the events before it.
    fn r2c2_event(&mut self, now: Time, record: u32, start: bool) {
        let r = self.r2c2.as_mut().expect("R2C2 run");
        if start {
            let route = r.pending.remove(&record).expect("a broadcast start");
            r.ctl.insert(record, route);
        } else {
            r.ctl.remove(record);
            r.told.forget(record);
        }
        if r.solve_at.is_none() {
            let at = next_solve(now, r.delay);
            r.solve_at = Some(at);
            self.q.schedule(at, Ev::R2c2Solve);
        }
    }

    /// R2C2: every node computes the max-min rates; senders whose rate changed are told.
    fn r2c2_solve(&mut self, now: Time) {
        let r = self.r2c2.as_mut().expect("R2C2 run");
        r.solve_at = None;
        r.solves += 1;
        let mut changed = Vec::new();
        for &(flow, rate) in r.ctl.solve() {
            let rate = rate as u64;
            if r.told.tell(flow, rate) {
                changed.push((flow, rate));
            }
        }
        for (record, rate) in changed {
            let slot = self.slot_of[record as usize];
            if slot == GONE {
                continue;
            }
            let Some(live) = self.live[slot as usize].as_mut() else {
                continue;
            };
            live.sender.set_rate(now, shoal_base::Rate(rate));
            self.pump(now, record);
        }
    }

    /// Sends what the flow's sender allows now and re-arms its timer.
    fn pump(&mut self, now: Time, record: u32) {
        let slot = self.slot_of[record as usize];
        let rec = *self.book.record(record);
        loop {
            let Some(live) = self.live[slot as usize].as_mut() else {
                return;
            };
            let Some(seg) = live.sender.poll_transmit(now) else {
                break;
            };
            self.send(now, record, rec.src.0 as u32, rec.dst.0 as u32, seg);
        }
        self.arm_timer(now, record);
    }

    fn arm_timer(&mut self, now: Time, record: u32) {
        let slot = self.slot_of[record as usize];
        let Some(live) = self.live[slot as usize].as_mut() else {
            return;
        };
        if let Some(want) = live.sender.timeout() {
            let want = want.max(now);
            if live.timer_at.is_none_or(|a| want < a) {
                live.timer_at = Some(want);
                self.q.schedule(want, Ev::Timer { flow: record });
            }
        }
    }

    fn timer(&mut self, now: Time, record: u32) {
        let slot = self.slot_of[record as usize];
        if slot == GONE {
            return;
        }
        let Some(live) = self.live[slot as usize].as_mut() else {
            return;
        };
        if live.timer_at != Some(now) {
            return; // superseded by an earlier one that already fired
        }
        live.timer_at = None;
        if live.sender.timeout().is_some_and(|t| t <= now) {
            live.sender.handle_timeout(now);
            // A transport that still wants waking now would spin the clock in place.
            debug_assert!(
                live.sender.timeout().is_none_or(|t| t > now),
                "flow {record}: the timer did not move past {now} after handle_timeout"
            );
        }
        self.pump(now, record);
    }

    /// Puts a segment of flow `record` on the wire at host `from`, towards host `to`.
    fn send(&mut self, now: Time, record: u32, from: u32, to: u32, seg: Segment) {
        let wire = match seg.kind {
            Kind::Data => seg.payload + self.net.header_bytes,
            _ => self.net.control_bytes,
        };
        if !self.sent.is_empty() && seg.kind == Kind::Data {
            self.sent[from as usize * self.topo.hosts() + to as usize] += u64::from(wire);
        }
        let flow_hash = mix(self.net.seed ^ (record as u64) << 1);
        let entropy = match self.net.path {
            // A subflow hashes as a connection of its own (other ports, another 5-tuple).
            PathChoice::Ecmp if seg.path != 0 => mix(flow_hash ^ (seg.path as u64) << 48) as u32,
            PathChoice::Ecmp => flow_hash as u32,
            PathChoice::Spray => {
                self.sprayed += 1;
                mix(flow_hash ^ self.sprayed) as u32
            }
            PathChoice::Source => {
                self.sprayed += 1;
                let slot = self.slot_of[record as usize];
                let live = (slot != GONE)
                    .then(|| self.live[slot as usize].as_mut())
                    .flatten();
                match live.and_then(|l| l.routes.as_mut()) {
                    // The sender's end, or the receiver's (acks, nacks, pulls).
                    Some(r) => {
                        r[usize::from(from != self.book.record(record).src.0 as u32)].next_path()
                    }
                    // A reply after the flow's state is gone: any path will do.
                    None => flow_hash as u32,
                }
            }
            PathChoice::Pinned => {
                let slot = self.slot_of[record as usize];
                let live = (slot != GONE)
                    .then(|| self.live[slot as usize].as_ref())
                    .flatten();
                match live.and_then(|l| l.pinned.as_ref()) {
                    Some(p) => {
                        let end = &p[usize::from(from != self.book.record(record).src.0 as u32)];
                        end[seg.path as usize % end.len()]
                    }
                    None => flow_hash as u32,
                }
            }
        };
        let pkt = self.pkts.insert(Packet {
            seg,
            flow: record,
            src: from,
            dst: to,
            wire,
            entropy,
            ingress: NO_PORT,
            link_gen: 0,
            hops: 0,
        });
        self.forward(now, from, pkt);
    }

    /// Chooses node `n`'s output port towards the packet's destination and queues it there.
    fn forward(&mut self, now: Time, n: u32, pkt: u32) {
        let p = self.pkts.get_mut(pkt);
        let (dst, entropy, hops_before) = (p.dst, p.entropy, p.hops);
        p.hops += 1;
        let topo: &Topology = match &self.staging {
            Some(s) if s.fresh[n as usize] => &s.new,
            _ => &self.topo,
        };
        if self.staging.is_some() && hops_before as usize > topo.nodes() {
            // Looping between nodes on tables of two versions.
            self.pkts.remove(pkt);
            self.lost_stale += 1;
            return;
        }
        let hops = topo.next_hops(n, dst);
        let port = if hops.len() == 1 {
            hops[0]
        } else if self.dimension_order {
            self.topo.dimension_order_hop(n, dst).expect("a torus hop")
        } else if matches!(self.net.path, PathChoice::Source | PathChoice::Pinned) {
            let route = &mut self.pkts.get_mut(pkt).entropy;
            hops[take_hop(route, hops.len())]
        } else {
            let h = mix(entropy as u64 ^ (n as u64) << 32);
            hops[(h % hops.len() as u64) as usize]
        };
        self.enqueue(now, self.ports.global(n, port), pkt);
    }

    fn enqueue(&mut self, now: Time, gp: u32, pkt: u32) {
        let (wire, control) = {
            let p = self.pkts.get(pkt);
            (p.wire, p.seg.kind != Kind::Data || p.seg.has(TRIMMED))
        };
        let port = &mut self.ports.ports[gp as usize];
        let (node, switch) = (port.node(), port.switch);
        if !switch && !self.nics.is_empty() {
            let p = self.pkts.get(pkt);
            // htsim's priorities: NDP's nacks are low, with the data (ndppacket.h).
            let high = control && p.seg.kind != Kind::Nack;
            let turn = if self.nic_turns { p.flow } else { 0 };
            self.nics[node as usize].push(high, turn, pkt, wire);
            self.kick(now, gp);
            return;
        }
        if switch && self.htsim_trim {
            self.enqueue_htsim(now, gp, pkt, wire, control);
            return;
        }
        let (discipline, limit) = if switch {
            self.switch_queues
        } else {
            self.host_queues
        };
        let outcome = port.queue.admit(
            pkt,
            wire,
            control,
            discipline,
            limit,
            self.mtu,
            self.net.control_bytes,
            &mut self.red_rng,
            &mut self.pkts.links,
        );
        match outcome {
            Admit::Dropped => {
                self.drops += 1;
                self.pkts.remove(pkt);
                return;
            }
            Admit::Marked => {
                self.marks += 1;
                self.pkts.get_mut(pkt).seg.flags |= CE;
            }
            Admit::Trimmed => {
                self.trims += 1;
                let p = self.pkts.get_mut(pkt);
                p.seg.flags |= TRIMMED;
                p.wire = self.net.control_bytes;
            }
            Admit::Queued => {}
        }
        if switch {
            self.max_port_bytes = self.max_port_bytes.max(port.queue.bytes());
            // Trimming may have cut the packet since `wire` was read.
            let wire = self.pkts.get(pkt).wire as u64;
            let q = &mut self.node_bytes[node as usize];
            *q += wire;
            self.max_node_bytes = self.max_node_bytes.max(*q);
            if let Some(pfc) = self.net.pfc {
                let (ingress, wire) = {
                    let p = self.pkts.get(pkt);
                    (p.ingress, p.wire)
                };
                let inp = &mut self.ports.pfc[ingress as usize];
                inp.ingress_bytes += wire as u64;
                if !inp.pausing && inp.ingress_bytes >= pfc.xoff_bytes {
                    inp.pausing = true;
                    self.pauses += 1;
                    let link = &self.ports.ports[ingress as usize];
                    let (at, upstream) = (now + link.delay, link.peer);
                    self.q.schedule(
                        at,
                        Ev::Pfc {
                            port: upstream,
                            pause: true,
                        },
                    );
                }
            }
        }
        self.kick(now, gp);
    }

    /// Starts port `gp` now if its link is free, else makes sure it wakes when it is.
    // Inlined into each packet-hop's `enqueue`: as a call its register saves cost about 9
    // instructions a hop.
    #[inline(always)]
    fn kick(&mut self, now: Time, gp: u32) {
        // One index into the ports (not `port_empty`'s second): this runs at every hop.
        let port = &mut self.ports.ports[gp as usize];
        let empty = if port.switch || self.nics.is_empty() {
            port.queue.is_empty()
        } else {
            self.nics[port.node() as usize].is_empty()
        };
        if port.wake_pending || empty {
            return;
        }
        if now >= port.busy_until {
            self.start_tx(now, gp);
        } else {
            port.wake_pending = true;
            let at = port.busy_until;
            self.q.schedule(at, Ev::Wake { port: gp });
        }
    }

    /// Port `gp` has nothing waiting (in its queue, or in its host's round-robin NIC).
    #[inline]
    fn port_empty(&self, gp: u32) -> bool {
        let port = &self.ports.ports[gp as usize];
        if !port.switch && !self.nics.is_empty() {
            self.nics[port.node() as usize].is_empty()
        } else {
            port.queue.is_empty()
        }
    }

    /// An arrival at switch port `gp` under htsim's trimming ([`TrimRule::Htsim`]): the
    /// arriving packet, or the data lane's last one in its place, may be trimmed, and a header
    /// that finds the priority lane full is dropped.
    // Kept out of `enqueue`, which every other run takes at every hop.
    #[inline(never)]
    fn enqueue_htsim(&mut self, now: Time, gp: u32, pkt: u32, wire: u32, control: bool) {
        let limit = self.switch_queues.1;
        let port = &mut self.ports.ports[gp as usize];
        let on_wire = (now < port.busy_until).then(|| self.on_wire[gp as usize]);
        let (slots, links) = self.pkts.split();
        let out = port.queue.admit_htsim(
            pkt,
            wire,
            control,
            limit,
            self.net.control_bytes,
            on_wire,
            &mut self.trim_rng,
            links,
            |p| slots[p as usize].wire,
        );
        let node = port.node() as usize;
        self.max_port_bytes = self.max_port_bytes.max(port.queue.bytes());
        if let Some((victim, outcome)) = out.victim {
            self.trims += 1;
            let was = u64::from(self.pkts.get(victim).wire);
            self.node_bytes[node] -= was;
            if outcome == Admit::Dropped {
                self.drops += 1;
                self.pkts.remove(victim);
            } else {
                self.cut(victim);
                self.node_bytes[node] += u64::from(self.net.control_bytes);
            }
        }
        match out.arriving {
            Admit::Dropped => {
                self.drops += 1;
                self.pkts.remove(pkt);
                return;
            }
            Admit::Trimmed => {
                self.trims += 1;
                self.cut(pkt);
            }
            Admit::Queued | Admit::Marked => {}
        }
        let q = &mut self.node_bytes[node];
        *q += u64::from(self.pkts.get(pkt).wire);
        self.max_node_bytes = self.max_node_bytes.max(*q);
        self.kick(now, gp);
    }

    /// Cuts packet `pkt` to its header.
    fn cut(&mut self, pkt: u32) {
        let p = self.pkts.get_mut(pkt);
        p.seg.flags |= TRIMMED;
        p.wire = self.net.control_bytes;
    }

    /// Starts sending the next queued packet of an idle port.
    fn start_tx(&mut self, now: Time, gp: u32) {
        if self.net.pfc.is_some() && self.ports.pfc[gp as usize].paused {
            return; // RESUME kicks it again
        }
        let port = &mut self.ports.ports[gp as usize];
        let nic = (!port.switch && !self.nics.is_empty()).then(|| port.node() as usize);
        let popped = match nic {
            Some(n) => self.nics[n].pop().map(|pkt| (pkt, false)),
            None => port.queue.pop(&self.pkts.links),
        };
        let Some((pkt, prio)) = popped else {
            return;
        };
        let p = self.pkts.get_mut(pkt);
        match nic {
            Some(n) => self.nics[n].account_sent(p.wire),
            None => port.queue.account_sent(p.wire, prio),
        }
        if self.htsim_trim {
            self.on_wire[gp as usize] = OnWire {
                bytes: p.wire,
                prio,
            };
        }
        let (ingress, wire) = (p.ingress, p.wire);
        if p.seg.kind == Kind::Data && self.limits.measure_from.is_none_or(|m| now >= m) {
            self.data_hops += 1;
        }
        let switch = port.switch;
        let mark = !prio
            && p.seg.kind == Kind::Data
            && switch
            && match self.net.discipline {
                Discipline::Ecn {
                    k,
                    at_dequeue: true,
                } => port.queue.data_bytes() >= k as u64 * self.mtu,
                Discipline::Red(red) if red.at_dequeue => {
                    red.marks(port.queue.data_bytes(), &mut self.red_rng)
                }
                _ => false,
            };
        if mark {
            p.seg.flags |= CE;
            self.marks += 1;
        }
        let done = now + crate::port::serialize(port, &self.ports.rates, gp, p.wire as u64);
        port.busy_until = done;
        let (peer, arrival, node) = (port.peer, done + port.delay, port.node());
        let more = match nic {
            Some(n) => !self.nics[n].is_empty(),
            None => !port.queue.is_empty(),
        };
        port.wake_pending |= more;
        // The packet enters the next node through the far port (`ingress` was read above).
        p.ingress = peer;
        if self.rewiring.is_some() {
            // Without a rewiring every generation stays 0.
            p.link_gen = self.ports.link_gen[peer as usize];
        }
        let at = port.peer_node();
        self.q.schedule(arrival, Ev::Arrive { node: at, pkt });
        self.hops += 1;
        if switch {
            self.node_bytes[node as usize] -= wire as u64;
        }
        if more {
            self.q.schedule(done, Ev::Wake { port: gp });
        }
        if let Some(pfc) = self.net.pfc
            && switch
        {
            let inp = &mut self.ports.pfc[ingress as usize];
            inp.ingress_bytes -= wire as u64;
            if inp.pausing && inp.ingress_bytes <= pfc.xon_bytes {
                inp.pausing = false;
                let link = &self.ports.ports[ingress as usize];
                let (at, upstream) = (now + link.delay, link.peer);
                self.q.schedule(
                    at,
                    Ev::Pfc {
                        port: upstream,
                        pause: false,
                    },
                );
            }
        }
    }

    fn arrive(&mut self, now: Time, node: u32, pkt: u32, source: &mut dyn FlowSource) {
        // Without a rewiring every generation stays 0 (`start_tx`).
        if self.rewiring.is_some() && {
            let p = self.pkts.get(pkt);
            p.link_gen != self.ports.link_gen[p.ingress as usize]
        } {
            // The link was rewired under the packet: the crosspoint cut it.
            self.pkts.remove(pkt);
            self.lost_rewiring += 1;
            return;
        }
        if self.pkts.get(pkt).dst != node {
            self.forward(now, node, pkt);
            return;
        }
        let p = self.pkts.remove(pkt);
        let slot = self.slot_of[p.flow as usize];
        if slot == GONE {
            return; // a late duplicate or ack of a finished flow
        }
        let Some(live) = self.live[slot as usize].as_mut() else {
            return;
        };
        if p.seg.kind == Kind::Data {
            if self.limits.measure_from.is_none_or(|m| now >= m) {
                self.data_arrivals += 1;
            }
            let before = live.receiver.delivered();
            let reply = live.receiver.handle(now, &p.seg);
            let after = live.receiver.delivered();
            self.max_reorder = self.max_reorder.max(live.receiver.held_out_of_order());
            // The book completes the flow (and tells the source) with its last bytes.
            let finished_now =
                after > before && self.book.deliver(p.flow, after - before, now, source);
            if finished_now {
                live.received_all = true;
            }
            let wants_pull = live.receiver.pulls_pending() > 0 && !live.pull_queued;
            if wants_pull {
                live.pull_queued = true;
                self.pacers[node as usize].flows.push_back(p.flow);
            }
            if finished_now {
                self.active -= 1;
                if let Some(r) = &self.r2c2 {
                    let at = now + r.delay;
                    self.q.schedule(at, Ev::R2c2Finish { flow: p.flow });
                }
                self.q.arm_flows(&mut self.book, source);
            }
            if let Some(reply) = reply {
                self.send(now, p.flow, node, p.src, reply);
            }
            if wants_pull {
                self.kick_pacer(now, node);
            }
        } else {
            live.sender.handle(now, &p.seg);
            self.pump(now, p.flow);
        }
        self.retire(p.flow);
    }

    /// The rewiring controller's turn: it gets the traffic since its last turn and returns the new
    /// topology, which replaces the running one at once or step by step (see [`crate::rewire`]).
    fn rewire(&mut self, now: Time, source: &mut dyn FlowSource) -> Result<(), FabricError> {
        // A staging still under way completes first.
        if let Some(staging) = self.staging.take() {
            self.finish_staging(*staging);
        }
        let ctl = self.rewiring.as_mut().expect("a rewiring run");
        let fail = |e: String| FabricError(format!("rewiring at {now}: {e}"));
        let out = ctl.rewire(now, &self.sent).map_err(fail)?;
        check_shape(&self.topo, &out.topology).map_err(fail)?;
        self.sent.fill(0);
        self.rewirings += 1;
        match out.staged {
            None => {
                for n in 0..out.topology.nodes() as u32 {
                    for p in 0..out.topology.ports(n) as u32 {
                        self.take_link(&out.topology, n, p);
                    }
                }
                self.topo = Cow::Owned(out.topology);
            }
            Some(staged) => {
                check_staged(&self.topo, &out.topology, &staged, now).map_err(fail)?;
                self.stages += 1;
                let mut steps = Vec::with_capacity(staged.circuits.len() + staged.tables.len());
                steps.extend(
                    staged
                        .circuits
                        .iter()
                        .map(|&(at, n, p)| (at, Step::Circuit(n, p))),
                );
                steps.extend(staged.tables.iter().map(|&(at, n)| (at, Step::Tables(n))));
                for (i, &(at, _)) in steps.iter().enumerate() {
                    if at > now {
                        self.q.schedule(
                            at,
                            Ev::Stage {
                                stage: self.stages,
                                step: i as u32,
                            },
                        );
                    }
                }
                let mut staging = Staging {
                    fresh: vec![false; out.topology.nodes()],
                    pending: steps.len(),
                    steps: steps.iter().map(|&(_, s)| Some(s)).collect(),
                    new: out.topology,
                };
                // Steps due now apply now, so that a staging without delays is the atomic change.
                for (i, &(at, _)) in steps.iter().enumerate() {
                    if at == now {
                        self.apply_step(&mut staging, i);
                    }
                }
                if staging.pending == 0 {
                    self.finish_staging(staging);
                } else {
                    self.staging = Some(Box::new(staging));
                }
            }
        }
        // Once no flow can come or is running, rewiring again would only keep the clock going.
        if let Some(at) = out.next
            && (self.active > 0 || !source.is_exhausted())
        {
            self.q.schedule(at.max(now), Ev::Rewire);
        }
        Ok(())
    }

    /// Port `p` of node `n` takes its link in `topo`: if the peer changes, the old link is cut
    /// (changes come in pairs, since links are symmetric, so both directions are cut).
    fn take_link(&mut self, topo: &Topology, n: u32, p: u32) {
        let link = topo.link(n, p);
        let gp = self.ports.global(n, p);
        let peer = self.ports.global(link.peer, link.peer_port);
        self.ports.connect(gp, peer, link.peer);
        self.ports.ports[gp as usize].delay = link.delay;
        self.ports.set_rate(gp, link.rate);
    }

    /// Applies one due step of the staging under way (a step of an earlier staging, completed
    /// when the next rewiring came, is ignored).
    fn stage_step(&mut self, stage: u32, step: u32) {
        if stage != self.stages {
            return;
        }
        let Some(mut staging) = self.staging.take() else {
            return;
        };
        self.apply_step(&mut staging, step as usize);
        if staging.pending == 0 {
            self.finish_staging(*staging);
        } else {
            self.staging = Some(staging);
        }
    }

    /// Applies step `i` of `staging`, if it is still pending.
    fn apply_step(&mut self, staging: &mut Staging, i: usize) {
        match staging.steps[i].take() {
            Some(Step::Circuit(n, p)) => self.take_link(&staging.new, n, p),
            Some(Step::Tables(n)) => staging.fresh[n as usize] = true,
            None => return,
        }
        staging.pending -= 1;
    }

    /// Applies every step still pending and makes the new topology the running one.
    fn finish_staging(&mut self, mut staging: Staging) {
        for step in staging.steps.iter_mut().filter_map(Option::take) {
            if let Step::Circuit(n, p) = step {
                self.take_link(&staging.new, n, p);
            }
        }
        self.topo = Cow::Owned(staging.new);
    }

    /// Sends a pull now if host `host`'s pacer is free, else makes sure it wakes when it is.
    fn kick_pacer(&mut self, now: Time, host: u32) {
        let pacer = &mut self.pacers[host as usize];
        if pacer.wake_pending {
            return;
        }
        if now >= pacer.next {
            self.pull(now, host);
        } else {
            pacer.wake_pending = true;
            let at = pacer.next;
            self.q.schedule(at, Ev::Pull { host });
        }
    }

    /// Host `host`'s pacer sends one pull for the flow at the head of its queue.
    fn pull(&mut self, now: Time, host: u32) {
        while let Some(record) = self.pacers[host as usize].flows.pop_front() {
            let slot = self.slot_of[record as usize];
            let Some(live) = (slot != GONE)
                .then(|| self.live[slot as usize].as_mut())
                .flatten()
            else {
                continue;
            };
            let Some(seg) = live.receiver.next_pull(now) else {
                live.pull_queued = false;
                continue;
            };
            if live.receiver.pulls_pending() > 0 {
                self.pacers[host as usize].flows.push_back(record);
            } else {
                live.pull_queued = false;
            }
            let src = self.book.record(record).src.0 as u32;
            self.send(now, record, host, src, seg);
            let nic = self.ports.global(host, 0);
            let gap = self.ports.serialize(nic, self.mtu).0 * 100 / self.net.pull_pacing as u64;
            let pacer = &mut self.pacers[host as usize];
            pacer.next = now + Dur(gap);
            if !pacer.flows.is_empty() {
                pacer.wake_pending = true;
                let at = pacer.next;
                self.q.schedule(at, Ev::Pull { host });
            }
            return;
        }
    }

    /// Frees a flow's state once both ends are done.
    fn retire(&mut self, record: u32) {
        let slot = self.slot_of[record as usize];
        if slot == GONE {
            return;
        }
        let done = self.live[slot as usize]
            .as_ref()
            .is_some_and(|l| l.received_all && l.sender.is_finished());
        if done {
            let live = self.live[slot as usize].take().expect("checked");
            self.timeouts += live.sender.timeouts();
            self.free.push(slot);
            self.slot_of[record as usize] = GONE;
        }
    }
}
