//! One run of a Stardust fabric on the discrete-event engine (`docs/design/cell-datapath.md`
//! §2). The run owns the cells ([`Cells`]: handles into columns, with every directed link's
//! queues), the links' timing (`cellnet::Links`), the hosts and the clocks; the adapters and
//! elements are the sans-IO state machines, driven here. A cell-hop is one event, the cell's
//! [`Ev::Arrive`] at the far end (the handle in the event), plus a [`Ev::Depart`] only when a
//! cell waits for its link to free: a cell that finds its link idle leaves at once.
//!
//! Hosts hand their flows to their adapter packet by packet at the port rate, round-robin
//! among their flows: with no transport on top (the fabric's own scheduling is what is
//! measured), or as TCP lets them ([`crate::hosts`]: acks first, then data); an adapter whose
//! ingress buffer runs high pauses its hosts. The run loop (flows due,
//! samples, stop) is the one every event-driven fabric shares (`shoal_fabric::event_loop`).

use crate::adapter::{Adapter, AdapterStats, Timer};
use crate::cell::Packet;
use crate::cell_arena::{CellId, Cells};
use crate::element::{Element, ElementStats, Received};
use crate::hosts::{Ends, HostTransport, InFlight, Segments};
use crate::net::{Failure, Network};
use crate::observe::Observations;
use crate::reachability::{ReachMsg, ReachStats, Reachability};
use shoal_base::{Dur, Time};
use shoal_cellnet::Links;
use shoal_fabric::{Calendar, EventFabric};
use shoal_fabric::{FabricError, FlowBook, QueueStats, RunLimits, RunOutput};
use shoal_transport::Sender;
use shoal_workload::{Flow, FlowSource};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// Host `node`'s link to its adapter is free.
    HostDone {
        node: u32,
    },
    /// A packet of host `node` has arrived whole at its adapter.
    AtIngress {
        node: u32,
        record: u32,
        wire: u32,
    },
    /// Directed link `link` is free and cells wait for it: the next one departs. Armed only
    /// while a cell waits (option A of the design note: exact control-first departures).
    Depart {
        link: u32,
    },
    /// Cell `cell`, sent on directed link `link`, has arrived at the far end.
    Arrive {
        link: u32,
        cell: CellId,
    },
    /// Egress port `node` finished a packet.
    PortDone {
        node: u32,
    },
    Delivered {
        record: u32,
        payload: u32,
    },
    /// A deadline of adapter `fa` (a credit clock, reassembly, refresh, give-back,
    /// low-latency release).
    Timer {
        fa: u32,
        timer: Timer,
    },
    /// The element at the far end of `link` paused (or released) it.
    Pause {
        link: u32,
        on: bool,
    },
    /// Adapter `fa` paused (or released) its hosts.
    HostPause {
        fa: u32,
        on: bool,
    },
    /// Device `dev` sends its reachability messages, one per link.
    ReachTick {
        dev: u32,
    },
    /// The oldest reachability message on directed link `link` arrives.
    ReachArrive {
        link: u32,
    },
    /// Device `dev` looks for silent links.
    ReachCheck {
        dev: u32,
    },
    /// `Network::failures[index]` happens.
    Fail {
        index: u32,
    },
    /// The TCP sender of flow `flow` asked to be called now.
    TcpTimer {
        flow: u32,
    },
}

/// One directed link's port as the run sees it (its timing is in `Sim::links`, its waiting
/// cells in `Sim::cells`): what a cell-hop needs of the network's tables copied in, so that a
/// hop touches one record of its link rather than eight arrays.
#[derive(Clone, Copy)]
struct Wire {
    /// The device and port that send on it, and the device at its far end.
    owner: u32,
    port: u32,
    peer: u32,
    /// A [`Ev::Depart`] is armed for when the link frees.
    depart_armed: bool,
    /// The cell it sent last was a data cell (while the link is busy: the one being sent).
    sending_data: bool,
    /// Paused by the element at its far end.
    paused: bool,
    /// Failed: what is on it is lost.
    dead: bool,
}

/// What failures cost in a run.
#[derive(Default)]
struct FailStats {
    first: Option<Time>,
    data_lost: u64,
    control_lost: u64,
    /// The last forwarding-table change and the last cell sent into a failed link.
    rerouted: Option<Time>,
    last_use: Option<Time>,
}

#[derive(Default)]
struct Host {
    flows: VecDeque<u32>,
    /// TCP: acks (segment handles) waiting to go, before any data.
    acks: VecDeque<u32>,
    busy: bool,
    paused: bool,
}

pub(crate) struct Sim<'a> {
    net: &'a Network,
    obs: &'a mut Observations,
    /// Fig. 9's measurements start here.
    measure_from: Time,
    q: Calendar<Ev>,
    book: FlowBook,
    fas: Vec<Adapter>,
    fes: Vec<Element>,
    /// Per directed link (see `Network::link`).
    wires: Vec<Wire>,
    links: Links,
    /// Every cell from its packing to its destination adapter, and the links' queues.
    cells: Cells,
    hosts: Vec<Host>,
    port_busy: Vec<bool>,
    unsent: Vec<u64>,
    class: Vec<u8>,
    /// Hosts with new flows, sent from once every flow due at the time has joined.
    kick: Vec<u32>,
    active: u64,
    /// Reachability (§5.9) of every device, adapters first, the messages on each directed
    /// link, and each device's armed silence check.
    reach: Vec<Reachability>,
    reach_wire: Vec<VecDeque<ReachMsg>>,
    reach_armed: Vec<Option<Time>>,
    /// Per directed link: excluded by its owner's reachability.
    excluded: Vec<bool>,
    dead_dev: Vec<bool>,
    fail: FailStats,
    /// The time of the last event other than the reachability protocol's: when the run ends.
    last_event: Time,
    /// `last_event` before the event being handled (restored if that one is the protocol's).
    before_event: Time,
    /// Fabric traversal of data cells (adapter link to adapter), for Fig. 9.
    traversal_max: u64,
    traversal_sum: u128,
    traversal_cells: u64,
    /// Cells put on a fabric link, data and control (the benchmark's unit).
    cell_hops: u64,
    /// TCP at the hosts: each flow's ends (by record) and the segments on their way.
    ends: Vec<Option<Ends>>,
    segs: Segments,
}

impl<'a> Sim<'a> {
    pub(crate) fn new(net: &'a Network, obs: &'a mut Observations, limits: RunLimits) -> Sim<'a> {
        let links = net.directed_links();
        let measure_from = limits.measure_from.unwrap_or(Time::ZERO);
        let fas = net.fas() as u32;
        let tier = net.tiers();
        let tiers: Vec<(u32, u32)> = (0..links as u32)
            .map(|l| (tier[net.owner(l).0 as usize], tier[net.peer(l).0 as usize]))
            .collect();
        let by_element: Vec<bool> = (0..links as u32).map(|l| net.owner(l).0 >= fas).collect();
        let cell_ps: Vec<u64> = (0..links as u32)
            .map(|l| {
                net.rate_delay(l)
                    .0
                    .serialize(net.adapter.cell_bytes as u64)
                    .0
            })
            .collect();
        *obs = Observations::new(measure_from, &tiers, &by_element, &cell_ps);
        obs.last_stage_links = (0..links as u32)
            .filter(|&l| net.owner(l).0 >= fas && net.peer(l).0 < fas)
            .count() as u32;
        Sim {
            net,
            obs,
            measure_from,
            q: Calendar::new(),
            book: FlowBook::new(net.nodes(), limits),
            fas: net
                .adapters()
                .into_iter()
                .map(|a| {
                    let base = net.link(a.id(), 0);
                    a.at_links(base)
                })
                .collect(),
            fes: net
                .elements()
                .into_iter()
                .enumerate()
                .map(|(i, e)| e.at_links(net.link((net.fas() + i) as u32, 0)))
                .collect(),
            wires: (0..links as u32)
                .map(|l| {
                    let (owner, port) = net.owner(l);
                    Wire {
                        owner,
                        port,
                        peer: net.peer(l).0,
                        depart_armed: false,
                        sending_data: false,
                        paused: false,
                        dead: false,
                    }
                })
                .collect(),
            links: {
                let mut ls = Links::new();
                for l in 0..links as u32 {
                    let (rate, delay) = net.rate_delay(l);
                    ls.push(rate, delay);
                }
                ls
            },
            cells: Cells::new(links),
            hosts: (0..net.nodes()).map(|_| Host::default()).collect(),
            port_busy: vec![false; net.nodes()],
            unsent: Vec::new(),
            class: Vec::new(),
            kick: Vec::new(),
            active: 0,
            reach: net.reachability(),
            reach_wire: (0..links).map(|_| VecDeque::new()).collect(),
            reach_armed: vec![None; net.topo.nodes()],
            excluded: vec![false; links],
            dead_dev: vec![false; net.topo.nodes()],
            fail: FailStats::default(),
            last_event: Time::ZERO,
            before_event: Time::ZERO,
            traversal_max: 0,
            traversal_sum: 0,
            traversal_cells: 0,
            cell_hops: 0,
            ends: Vec::new(),
            segs: Segments::default(),
        }
    }
}

impl EventFabric for Sim<'_> {
    type Event = Ev;

    fn calendar_and_book(&mut self) -> (&mut Calendar<Ev>, &mut FlowBook) {
        (&mut self.q, &mut self.book)
    }

    /// The reachability protocol's first messages and silence checks, and the failures.
    fn start(&mut self) -> Result<(), FabricError> {
        // Devices send their messages spread over the interval, not all at once.
        let devs = self.reach.len() as u64;
        let interval = self.net.reach.interval.0;
        for dev in 0..devs {
            let at = Time((interval as u128 * dev as u128 / devs as u128) as u64);
            self.q.schedule(at, Ev::ReachTick { dev: dev as u32 });
            self.arm_reach(dev as u32);
        }
        for (index, &(at, _)) in self.net.failures.iter().enumerate() {
            self.q.schedule(
                at,
                Ev::Fail {
                    index: index as u32,
                },
            );
        }
        Ok(())
    }

    fn advance(&mut self, now: Time) {
        self.before_event = self.last_event;
        self.last_event = now;
    }

    fn handle(
        &mut self,
        now: Time,
        ev: Ev,
        source: &mut dyn FlowSource,
    ) -> Result<(), FabricError> {
        if matches!(
            ev,
            Ev::ReachTick { .. } | Ev::ReachArrive { .. } | Ev::ReachCheck { .. }
        ) {
            // The protocol runs on its own clock; the run ends with the last other event.
            self.last_event = self.before_event;
        }
        match ev {
            Ev::HostDone { node } => {
                self.hosts[node as usize].busy = false;
                self.host_send(now, node);
            }
            Ev::AtIngress { node, record, wire } => self.at_ingress(now, node, record, wire),
            Ev::Depart { link } => {
                self.wires[link as usize].depart_armed = false;
                self.start_next(now, link);
            }
            Ev::Arrive { link, cell } => self.arrive(now, link, cell),
            Ev::PortDone { node } => {
                self.port_busy[node as usize] = false;
                self.try_port(now, node);
                self.service(now, node / self.net.ports());
            }
            Ev::Delivered { record, .. } if self.tcp().is_some() => {
                self.tcp_delivered(now, record, source);
            }
            Ev::TcpTimer { flow } => self.tcp_timer(now, flow),
            Ev::Delivered { record, payload } => {
                if self.book.deliver(record, payload as u64, now, source) {
                    self.active -= 1;
                    self.q.arm_flows(&mut self.book, source);
                }
            }
            Ev::Timer { fa, timer } => {
                self.fas[fa as usize].handle_timer(&mut self.cells, now, timer);
                self.service(now, fa);
            }
            Ev::Pause { link, on } => {
                if !self.wires[link as usize].dead {
                    self.wires[link as usize].paused = on;
                    if !on {
                        self.try_send(now, link);
                    }
                }
            }
            Ev::ReachTick { dev } => {
                if !self.idle(source) {
                    self.reach_tick(now, dev);
                }
            }
            Ev::ReachArrive { link } => self.reach_arrive(now, link),
            Ev::ReachCheck { dev } => {
                // Once idle, the silence is the protocol's own end, not a failure.
                if self.reach_armed[dev as usize] == Some(now) {
                    self.reach_armed[dev as usize] = None;
                    if !self.idle(source) && !self.dead_dev[dev as usize] {
                        self.reach[dev as usize].handle_timeout(now);
                        self.reach_update(now, dev);
                        self.arm_reach(dev);
                    }
                }
            }
            Ev::Fail { index } => self.fail(now, index),
            Ev::HostPause { fa, on } => {
                let ports = self.net.ports();
                for node in fa * ports..(fa + 1) * ports {
                    self.hosts[node as usize].paused = on;
                    if !on {
                        self.host_send(now, node);
                    }
                }
            }
        }
        Ok(())
    }

    fn add_flow(&mut self, _now: Time, record: u32, flow: &Flow) -> Result<(), FabricError> {
        let classes = self.net.adapter.classes;
        if flow.class >= classes {
            return Err(FabricError(format!(
                "flow {} is in class {}, but the fabric has {classes} class(es)",
                flow.id, flow.class
            )));
        }
        self.unsent.push(flow.bytes);
        self.class.push(flow.class);
        if let Some(cfg) = self.tcp() {
            let mut ends = (flow.bytes > 0).then(|| Ends::new(cfg, flow.bytes));
            if let Some(e) = &mut ends {
                e.in_rotation = true;
            }
            self.ends.push(ends);
        }
        if flow.bytes > 0 {
            self.active += 1;
            let node = flow.src.0 as u32;
            self.hosts[node as usize].flows.push_back(record);
            self.kick.push(node);
        }
        Ok(())
    }

    fn flows_added(&mut self, now: Time) {
        for node in std::mem::take(&mut self.kick) {
            self.host_send(now, node);
        }
    }

    fn sample(&mut self, now: Time, source: &mut dyn FlowSource) -> bool {
        let cell = self.net.adapter.cell_bytes as u64;
        let ingress: u64 = self.fas.iter().map(|a| a.ingress_bytes()).sum();
        let fabric: u64 = self.fes.iter().map(|e| e.pool() as u64).sum::<u64>() * cell;
        let longest = self
            .fas
            .iter()
            .map(|a| a.ingress_bytes())
            .max()
            .unwrap_or(0);
        self.book
            .sample(now, ingress + fabric, longest, self.active);
        !self.q.is_empty() || !source.is_exhausted() || self.active > 0
    }

    fn finish(self, events: u64) -> RunOutput {
        self.output(events)
    }
}

impl<'a> Sim<'a> {
    /// Nothing left to carry: the protocol stops so that the run can end.
    fn idle(&self, source: &mut dyn FlowSource) -> bool {
        self.active == 0 && source.is_exhausted()
    }

    fn reach_tick(&mut self, now: Time, dev: u32) {
        if self.dead_dev[dev as usize] {
            return;
        }
        for p in 0..self.net.ports_of(dev) {
            let l = self.net.link(dev, p);
            let msg = self.reach[dev as usize].next_message(p);
            self.reach_wire[l as usize].push_back(msg);
            let (_, delay) = self.net.rate_delay(l);
            self.q.schedule(now + delay, Ev::ReachArrive { link: l });
        }
        self.q
            .schedule(now + self.net.reach.interval, Ev::ReachTick { dev });
    }

    fn reach_arrive(&mut self, now: Time, link: u32) {
        let msg = self.reach_wire[link as usize]
            .pop_front()
            .expect("an arrival has its message on the wire");
        let (dev, port) = self.net.peer(link);
        if self.wires[link as usize].dead || self.dead_dev[dev as usize] {
            return;
        }
        self.reach[dev as usize].handle_message(now, port, &msg);
        self.reach_update(now, dev);
        self.arm_reach(dev);
    }

    /// Arms device `dev`'s silence check if none is armed (messages only move it later).
    fn arm_reach(&mut self, dev: u32) {
        if self.reach_armed[dev as usize].is_some() {
            return;
        }
        if let Some(t) = self.reach[dev as usize].poll_timeout() {
            self.reach_armed[dev as usize] = Some(t);
            self.q.schedule(t, Ev::ReachCheck { dev });
        }
    }

    /// After device `dev`'s protocol took an input: a new table goes to its forwarding, and
    /// the cells waiting for a link it excluded go to the others.
    fn reach_update(&mut self, now: Time, dev: u32) {
        if !self.reach[dev as usize].poll_changed() {
            return;
        }
        if self.fail.first.is_some() {
            self.fail.rerouted = Some(now);
        }
        let fas = self.fas.len() as u32;
        let table = self.reach[dev as usize].table();
        if dev < fas {
            self.fas[dev as usize].set_reach(table);
        } else {
            self.fes[(dev - fas) as usize].set_reach(table);
        }
        for p in 0..self.net.ports_of(dev) {
            let l = self.net.link(dev, p);
            let valid = self.reach[dev as usize].is_valid(p);
            if self.excluded[l as usize] != valid {
                continue;
            }
            self.excluded[l as usize] = !valid;
            if valid {
                continue;
            }
            if dev < fas {
                self.fas[dev as usize].reroute(&mut self.cells, p);
                self.service(now, dev);
            } else {
                for out in self.fes[(dev - fas) as usize].reroute(&mut self.cells, p) {
                    self.try_send(now, self.net.link(dev, out));
                }
            }
        }
    }

    fn fail(&mut self, now: Time, index: u32) {
        self.fail.first.get_or_insert(now);
        match self.net.failures[index as usize].1 {
            Failure::Link { dev, port } => {
                let l = self.net.link(dev, port);
                self.wires[l as usize].dead = true;
                self.wires[self.net.reverse(l) as usize].dead = true;
            }
            Failure::Device { dev } => {
                self.dead_dev[dev as usize] = true;
                for p in 0..self.net.ports_of(dev) {
                    let l = self.net.link(dev, p);
                    self.wires[l as usize].dead = true;
                    self.wires[self.net.reverse(l) as usize].dead = true;
                }
                // What it held is lost with it.
                let fas = self.fas.len() as u32;
                let (data, control) = if dev < fas {
                    self.fas[dev as usize].queued_split(&self.cells)
                } else {
                    self.fes[(dev - fas) as usize].queued_split(&self.cells)
                };
                self.fail.data_lost += data;
                self.fail.control_lost += control;
            }
        }
    }

    /// The TCP configuration if the hosts run TCP.
    fn tcp(&self) -> Option<shoal_transport::TcpConfig> {
        match self.net.transport {
            HostTransport::None => None,
            HostTransport::Tcp(cfg) => Some(cfg),
        }
    }

    /// The host puts its next flow's next packet on its link to the adapter.
    fn host_send(&mut self, now: Time, node: u32) {
        if self.tcp().is_some() {
            return self.tcp_host_send(now, node);
        }
        let h = &mut self.hosts[node as usize];
        if h.busy || h.paused {
            return;
        }
        let Some(record) = h.flows.pop_front() else {
            return;
        };
        let left = &mut self.unsent[record as usize];
        let payload = (*left).min(self.net.mss() as u64) as u32;
        *left -= payload as u64;
        if *left > 0 {
            h.flows.push_back(record);
        }
        h.busy = true;
        let wire = payload + self.net.header_bytes;
        let done = now + self.net.adapter.port_rate.serialize(wire as u64);
        self.q.schedule(done, Ev::HostDone { node });
        self.q.schedule(
            done + self.net.host_delay,
            Ev::AtIngress { node, record, wire },
        );
    }

    fn at_ingress(&mut self, now: Time, node: u32, record: u32, wire: u32) {
        let fa = node / self.net.ports();
        // With TCP, `record` is the segment's handle.
        let tcp = self.tcp().is_some();
        let (dst, flow) = if tcp {
            let s = self.segs.get(record);
            (s.to, s.flow)
        } else {
            (self.book.record(record).dst.0 as u32, record)
        };
        let (dfa, dport) = (dst / self.net.ports(), (dst % self.net.ports()) as u16);
        let a = &mut self.fas[fa as usize];
        let was_paused = a.hosts_paused();
        let taken = a.handle_packet(
            &mut self.cells,
            now,
            dfa,
            dport,
            self.class[flow as usize],
            Packet { record, wire },
            self.net.pause_at,
        );
        if !taken && tcp {
            self.segs.remove(record);
        }
        if !was_paused && a.hosts_paused() {
            self.q
                .schedule(now + self.net.host_delay, Ev::HostPause { fa, on: true });
        }
        self.service(now, fa);
    }

    /// TCP: the host sends its next ack, or the next segment a flow's sender allows (its
    /// flows in turn; a flow the window holds leaves the turn until an ack or a timer).
    fn tcp_host_send(&mut self, now: Time, node: u32) {
        let h = &self.hosts[node as usize];
        if h.busy || h.paused {
            return;
        }
        let handle = if let Some(a) = self.hosts[node as usize].acks.pop_front() {
            a
        } else {
            loop {
                let Some(flow) = self.hosts[node as usize].flows.pop_front() else {
                    return;
                };
                let ends = self.ends[flow as usize]
                    .as_mut()
                    .expect("a flow in turn has its ends");
                let seg = ends.sender.poll_transmit(now);
                if seg.is_none() {
                    ends.in_rotation = false;
                }
                self.tcp_arm(now, flow);
                if let Some(seg) = seg {
                    self.hosts[node as usize].flows.push_back(flow);
                    let to = self.book.record(flow).dst.0 as u32;
                    break self.segs.insert(InFlight { flow, to, seg });
                }
            }
        };
        let payload = self.segs.get(handle).seg.payload;
        self.hosts[node as usize].busy = true;
        let wire = payload + self.net.header_bytes;
        let done = now + self.net.adapter.port_rate.serialize(wire as u64);
        self.q.schedule(done, Ev::HostDone { node });
        self.q.schedule(
            done + self.net.host_delay,
            Ev::AtIngress {
                node,
                record: handle,
                wire,
            },
        );
    }

    /// TCP: a segment left its egress port for its host.
    fn tcp_delivered(&mut self, now: Time, handle: u32, source: &mut dyn FlowSource) {
        let s = self.segs.remove(handle);
        let Some(ends) = self.ends[s.flow as usize].as_mut() else {
            return;
        };
        let (reply, bytes) = ends.arrive(now, &s.seg);
        let src = self.book.record(s.flow).src.0 as u32;
        if bytes > 0 && self.book.deliver(s.flow, bytes, now, source) {
            self.active -= 1;
            self.q.arm_flows(&mut self.book, source);
        }
        if let Some(seg) = reply {
            let h = self.segs.insert(InFlight {
                flow: s.flow,
                to: src,
                seg,
            });
            self.hosts[s.to as usize].acks.push_back(h);
            self.tcp_host_send(now, s.to);
        } else if s.seg.kind != shoal_transport::Kind::Data {
            self.tcp_wake(now, s.flow, src);
        }
    }

    /// TCP: flow `flow`'s sender may send again (an ack or its timer): back in its host's
    /// turn, timer re-armed, host kicked.
    fn tcp_wake(&mut self, now: Time, flow: u32, src: u32) {
        let ends = self.ends[flow as usize]
            .as_mut()
            .expect("a live flow has its ends");
        if !ends.in_rotation && !ends.sender.is_finished() {
            ends.in_rotation = true;
            self.hosts[src as usize].flows.push_back(flow);
        }
        self.tcp_arm(now, flow);
        self.tcp_host_send(now, src);
    }

    fn tcp_timer(&mut self, now: Time, flow: u32) {
        let Some(ends) = self.ends[flow as usize].as_mut() else {
            return;
        };
        if ends.armed != Some(now) {
            return;
        }
        ends.armed = None;
        ends.sender.handle_timeout(now);
        let src = self.book.record(flow).src.0 as u32;
        self.tcp_wake(now, flow, src);
    }

    /// Puts flow `flow`'s sender timer on the queue if it moved earlier or is not armed.
    fn tcp_arm(&mut self, now: Time, flow: u32) {
        let ends = self.ends[flow as usize]
            .as_mut()
            .expect("a live flow has its ends");
        let Some(t) = ends.sender.timeout() else {
            return;
        };
        let t = t.max(now);
        if ends.armed.is_none_or(|a| t < a) {
            ends.armed = Some(t);
            self.q.schedule(t, Ev::TcpTimer { flow });
        }
    }

    /// After any input to adapter `fa`: start the links and ports it gave work to, release
    /// its hosts if it may, and put the deadlines the input set on the calendar.
    fn service(&mut self, now: Time, fa: u32) {
        let base = self.net.link(fa, 0);
        while let Some(l) = self.fas[fa as usize].poll_link_kick() {
            self.try_send(now, base + l);
        }
        let ports = self.net.ports();
        while let Some(p) = self.fas[fa as usize].poll_port_kick() {
            self.try_port(now, fa * ports + p as u32);
        }
        if self.fas[fa as usize].maybe_resume_hosts(self.net.resume_at) {
            self.q
                .schedule(now + self.net.host_delay, Ev::HostPause { fa, on: false });
        }
        while let Some((t, timer)) = self.fas[fa as usize].poll_timer(now) {
            self.q.schedule(t, Ev::Timer { fa, timer });
        }
    }

    /// Directed link `link` has cells: the next departs now if the link is free, or a
    /// [`Ev::Depart`] is armed for when it frees (one per waiting link, not per cell).
    #[inline]
    fn try_send(&mut self, now: Time, link: u32) {
        if self.wires[link as usize].depart_armed {
            return;
        }
        let free = self.links.busy_until(link);
        if now < free {
            self.wires[link as usize].depart_armed = true;
            self.q.schedule(free, Ev::Depart { link });
        } else {
            self.start_next(now, link);
        }
    }

    /// Sends directed link `link`'s next cell (the link is free), and arms its next departure
    /// if another cell may go after it.
    #[inline(never)]
    fn start_next(&mut self, now: Time, link: u32) {
        let l = link as usize;
        let Wire {
            owner: dev,
            port,
            paused,
            ..
        } = self.wires[l];
        if self.dead_dev[dev as usize] {
            return;
        }
        let id = if (dev as usize) < self.fas.len() {
            let Some(id) = self.fas[dev as usize].next_tx(&mut self.cells, now, port, paused)
            else {
                return;
            };
            id
        } else {
            let fe = &mut self.fes[dev as usize - self.fas.len()];
            let marked = fe.stats().fci_marked;
            let Some(id) = fe.next_tx(&mut self.cells, port, paused) else {
                return;
            };
            if fe.stats().fci_marked > marked {
                self.obs.fci_marked(now, link);
            }
            id
        };
        self.cell_hops += 1;
        let a = &self.net.adapter;
        let (bytes, data) = self
            .cells
            .wire_bytes(id, a.cell_header_bytes, a.control_bytes);
        let d = self.links.send(link, now, bytes as u64);
        let w = &mut self.wires[l];
        w.sending_data = data;
        if w.dead {
            self.fail.last_use = Some(now);
        }
        self.q.schedule(d.arrive, Ev::Arrive { link, cell: id });
        let (ctrl, data) = self.cells.waiting(link);
        if ctrl > 0 || (data > 0 && !w.paused) {
            w.depart_armed = true;
            self.q.schedule(d.done, Ev::Depart { link });
        }
    }

    fn arrive(&mut self, now: Time, link: u32, id: CellId) {
        let Wire {
            peer: dev, dead, ..
        } = self.wires[link as usize];
        if dead {
            if self.cells.is_data(id) {
                self.fail.data_lost += 1;
            } else {
                self.fail.control_lost += 1;
            }
            self.cells.free(id);
            return;
        }
        let fas = self.fas.len() as u32;
        if dev < fas {
            if self.cells.is_data(id) {
                let t = now.0 - self.cells.sent_at(id);
                self.traversal_max = self.traversal_max.max(t);
                self.traversal_sum += t as u128;
                self.traversal_cells += 1;
                if now >= self.measure_from {
                    self.obs.traversed(Dur(t));
                }
            }
            self.fas[dev as usize].handle_cell(&mut self.cells, now, id);
            self.service(now, dev);
            return;
        }
        let fe = (dev - fas) as usize;
        match self.fes[fe].receive(&mut self.cells, id) {
            Received::Queued(out) => {
                let l = self.net.link(dev, out);
                if now >= self.measure_from {
                    self.entered(now, fe, out, l, id);
                }
                self.try_send(now, l);
            }
            // Counted by the element (full pool, or no link to the destination).
            Received::Dropped => self.cells.free(id),
        }
        if let Some(on) = self.fes[fe].poll_pause() {
            // Every link into this element is told, after its propagation delay.
            for p in 0..self.net.ports_of(dev) {
                let into = self.net.reverse(self.net.link(dev, p));
                let (_, delay) = self.net.rate_delay(into);
                self.q.schedule(now + delay, Ev::Pause { link: into, on });
            }
        }
    }

    /// A cell entered output `out` (directed link `l`) of element `fe`: if a data cell, what
    /// it found there (data cells waiting or being sent), for its stage and, on the last
    /// stage, for Fig. 9's queue; if a control cell on the last stage, counted (it takes the
    /// link's time too).
    fn entered(&mut self, now: Time, fe: usize, out: u32, l: u32, id: CellId) {
        if !self.cells.is_data(id) {
            if self.wires[l as usize].peer < self.fas.len() as u32 {
                self.obs.control_seen();
            }
            return;
        }
        let (bytes, src) = (self.cells.payload(id), self.cells.src(id));
        let w = &self.wires[l as usize];
        // A cell that arrives as the one ahead finishes leaving still finds it (the old
        // path's order at that tie: the arrival was scheduled before the departure ended).
        let sending = w.sending_data && now <= self.links.busy_until(l);
        let ahead = self.fes[fe].queue_len(&self.cells, out) as u32 - 1 + sending as u32;
        let to_adapter = (w.peer < self.fas.len() as u32).then_some(w.peer);
        self.obs.entered(now, l, src, ahead, to_adapter);
        if to_adapter.is_some() {
            self.obs.queue_seen(ahead, bytes);
        }
    }

    /// Starts egress port `node`'s next packet towards its host.
    fn try_port(&mut self, now: Time, node: u32) {
        if self.port_busy[node as usize] {
            return;
        }
        let ports = self.net.ports();
        let (fa, port) = (node / ports, (node % ports) as u16);
        let Some(p) = self.fas[fa as usize].next_packet(port) else {
            return;
        };
        self.port_busy[node as usize] = true;
        let done = now + self.net.adapter.port_rate.serialize(p.wire as u64);
        self.q.schedule(done, Ev::PortDone { node });
        self.q.schedule(
            done + self.net.host_delay,
            Ev::Delivered {
                record: p.record,
                payload: p.wire - self.net.header_bytes,
            },
        );
    }

    fn output(self, events: u64) -> RunOutput {
        self.obs.finish(self.last_event);
        let mut a = AdapterStats::default();
        for s in self.fas.iter().map(|f| *f.stats()) {
            a.packets_in += s.packets_in;
            a.ingress_drops += s.ingress_drops;
            a.data_cells += s.data_cells;
            a.control_cells += s.control_cells;
            a.credits += s.credits;
            a.credit_returned_bytes += s.credit_returned_bytes;
            a.frag_limited_cells += s.frag_limited_cells;
            a.unroutable_cells += s.unroutable_cells;
            a.packets_out += s.packets_out;
            a.status_refreshes += s.status_refreshes;
            a.reassembly_drops += s.reassembly_drops;
            a.lost_cells += s.lost_cells;
            a.late_cells += s.late_cells;
            a.fci_cells += s.fci_cells;
            a.max_egress_bytes = a.max_egress_bytes.max(s.max_egress_bytes);
            a.max_ingress_bytes = a.max_ingress_bytes.max(s.max_ingress_bytes);
            a.max_reorder_cells = a.max_reorder_cells.max(s.max_reorder_cells);
        }
        let mut e = ElementStats::default();
        for s in self.fes.iter().map(|f| *f.stats()) {
            e.data_cells += s.data_cells;
            e.control_cells += s.control_cells;
            e.fci_marked += s.fci_marked;
            e.dropped += s.dropped;
            e.unroutable += s.unroutable;
            e.pauses += s.pauses;
            e.max_queue = e.max_queue.max(s.max_queue);
            e.max_pool = e.max_pool.max(s.max_pool);
        }
        let written_off: u64 = self.fas.iter().map(Adapter::credit_written_off).sum();
        let outstanding: u64 = self.fas.iter().map(Adapter::credit_outstanding).sum();
        let mut r = ReachStats::default();
        for s in self.reach.iter().map(|d| *d.stats()) {
            r.messages_received += s.messages_received;
            r.updates += s.updates;
            r.silent += s.silent;
            r.faulty += s.faulty;
        }
        let first = self.fail.first;
        let since_failure = |t: Option<Time>| match (first, t) {
            (Some(f), Some(t)) => t.0.saturating_sub(f.0),
            _ => 0,
        };
        let mean = if self.traversal_cells > 0 {
            (self.traversal_sum / self.traversal_cells as u128) as u64
        } else {
            0
        };
        let counters: BTreeMap<String, u64> = [
            ("events", events),
            ("flows_unfinished", self.active),
            ("packets_in", a.packets_in),
            ("packets_out", a.packets_out),
            ("status_refreshes", a.status_refreshes),
            ("ingress_drops", a.ingress_drops),
            ("data_cells", a.data_cells),
            ("control_cells", a.control_cells),
            ("credits", a.credits),
            ("credit_returned_bytes", a.credit_returned_bytes),
            ("credit_written_off_bytes", written_off),
            ("credit_outstanding_end_bytes", outstanding),
            ("frag_limited_cells", a.frag_limited_cells),
            ("unroutable_cells", a.unroutable_cells + e.unroutable),
            ("reassembly_drops", a.reassembly_drops),
            ("lost_cells", a.lost_cells),
            ("late_cells", a.late_cells),
            ("fci_cells_received", a.fci_cells),
            ("fe_cell_hops", e.data_cells + e.control_cells),
            ("cell_hops", self.cell_hops),
            ("fe_fci_marked", e.fci_marked),
            ("fe_drops", e.dropped),
            ("fe_pauses", e.pauses),
            ("fe_max_pool_cells", e.max_pool),
            ("max_egress_bytes", a.max_egress_bytes),
            ("max_ingress_bytes", a.max_ingress_bytes),
            ("traversal_max_ps", self.traversal_max),
            ("traversal_mean_ps", mean),
            ("reach_messages", r.messages_received),
            ("reach_table_updates", r.updates),
            ("reach_links_excluded", r.silent + r.faulty),
            ("failure_data_lost", self.fail.data_lost),
            ("failure_control_lost", self.fail.control_lost),
            ("failure_rerouted_ps", since_failure(self.fail.rerouted)),
            ("failure_last_use_ps", since_failure(self.fail.last_use)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let mut counters = counters;
        if self.tcp().is_some() {
            let timeouts = self
                .ends
                .iter()
                .flatten()
                .map(|e| e.sender.timeouts())
                .sum();
            counters.insert("tcp_timeouts".to_string(), timeouts);
        }
        let queues = QueueStats {
            max_queue: e.max_queue,
            max_node_queue: e.max_pool,
            max_node_transit: 0,
            max_reorder_bytes: a.max_reorder_cells * self.net.adapter.cell_payload() as u64,
        };
        self.book.finish(self.last_event, queues, counters)
    }
}
