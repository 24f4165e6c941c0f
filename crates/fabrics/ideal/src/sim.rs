//! One run of the ideal switch on the discrete-event engine. Each host link and each switch
//! output port has at most one pending event (its packet on the wire), so the event list grows
//! with ports, not with packets.

use crate::SwitchSpec;
use shoal_base::{Dur, Time};
use shoal_engine::EventQueue;
use shoal_fabric::{FabricError, FlowBook, Progress, QueueStats, RunLimits, RunOutput};
use shoal_workload::FlowSource;
use std::collections::{BTreeMap, VecDeque};

/// Progress is reported every this many events.
const PROGRESS_EVERY: u64 = 1 << 16;

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// Host `host`'s link finished serializing its packet.
    HostDone {
        host: u32,
    },
    /// A packet of `payload` bytes of flow `flow` has arrived whole at the switch.
    AtSwitch {
        flow: u32,
        payload: u32,
    },
    /// Output port `port` finished serializing its packet.
    PortDone {
        port: u32,
    },
    /// A packet of flow `flow` has arrived whole at its destination.
    Delivered {
        flow: u32,
        payload: u32,
    },
    /// New flows are due.
    Flows,
    Sample,
    Stop,
}

/// A packet waiting at an output port.
#[derive(Clone, Copy, Debug)]
struct Queued {
    flow: u32,
    payload: u32,
}

/// A host's link: the flows with bytes left to send, served a packet each in turn.
#[derive(Default)]
struct Host {
    flows: VecDeque<u32>,
    busy: bool,
}

/// A switch output port: its FIFO and whether a packet is on its wire.
#[derive(Default)]
struct Port {
    fifo: VecDeque<Queued>,
    busy: bool,
    bytes: u64,
}

pub(crate) struct Sim<'a> {
    spec: &'a SwitchSpec,
    limits: RunLimits,
    q: EventQueue<Ev>,
    book: FlowBook,
    /// Payload bytes each flow has yet to put on its host's link.
    unsent: Vec<u64>,
    hosts: Vec<Host>,
    ports: Vec<Port>,
    active: u64,
    /// Wire bytes queued at the output ports, and the most ever queued at one.
    queued_bytes: u64,
    max_port_bytes: u64,
    max_queued_bytes: u64,
    packets: u64,
}

impl<'a> Sim<'a> {
    pub(crate) fn new(spec: &'a SwitchSpec, limits: RunLimits) -> Sim<'a> {
        let n = spec.hosts as usize;
        Sim {
            spec,
            limits,
            q: EventQueue::new(),
            book: FlowBook::new(n, limits),
            unsent: Vec::new(),
            hosts: (0..n).map(|_| Host::default()).collect(),
            ports: (0..n).map(|_| Port::default()).collect(),
            active: 0,
            queued_bytes: 0,
            max_port_bytes: 0,
            max_queued_bytes: 0,
            packets: 0,
        }
    }

    pub(crate) fn run(
        mut self,
        source: &mut dyn FlowSource,
        progress: &mut dyn Progress,
    ) -> Result<RunOutput, FabricError> {
        self.arm_flows(source);
        if let Some(until) = self.limits.until {
            self.q.schedule(until, Ev::Stop);
        }
        if self.limits.sample_every.is_some() {
            self.q.schedule(Time::ZERO, Ev::Sample);
        }
        let mut events = 0u64;
        while let Some((now, ev)) = self.q.pop() {
            events += 1;
            if events.is_multiple_of(PROGRESS_EVERY) {
                self.book.report(now, progress);
            }
            match ev {
                Ev::HostDone { host } => {
                    self.hosts[host as usize].busy = false;
                    self.host_send(now, host);
                }
                Ev::AtSwitch { flow, payload } => self.at_switch(now, flow, payload),
                Ev::PortDone { port } => {
                    self.ports[port as usize].busy = false;
                    self.port_send(now, port);
                }
                Ev::Delivered { flow, payload } => {
                    if self.book.deliver(flow, payload as u64, now, source) {
                        self.active -= 1;
                        self.arm_flows(source);
                    }
                }
                Ev::Flows => {
                    self.book.arrival_fired();
                    // Every flow due now joins its host's round before any host sends, so
                    // flows that start together share their link from the first packet.
                    let mut kick = Vec::new();
                    while let Some(flow) = source.next_due(now) {
                        let record = self.book.open(&flow, now)?;
                        self.unsent.push(flow.bytes);
                        if flow.bytes == 0 {
                            self.book.complete(record, now, source);
                            continue;
                        }
                        self.active += 1;
                        let host = flow.src.0 as u32;
                        self.hosts[host as usize].flows.push_back(record);
                        kick.push(host);
                    }
                    for host in kick {
                        self.host_send(now, host);
                    }
                    self.arm_flows(source);
                }
                Ev::Sample => self.sample(now, source),
                Ev::Stop => break,
            }
            if self.book.enough_completed() {
                break;
            }
        }
        self.book.report(self.q.now(), progress);
        Ok(self.finish(events))
    }

    /// Schedules the next `Flows` event if the source knows of a flow earlier than the one
    /// already scheduled.
    fn arm_flows(&mut self, source: &mut dyn FlowSource) {
        if let Some(t) = self.book.arm_arrival(source, self.q.now()) {
            self.q.schedule(t, Ev::Flows);
        }
    }

    fn wire(&self, payload: u32) -> Dur {
        self.spec
            .link_rate
            .serialize(payload as u64 + self.spec.header_bytes as u64)
    }

    /// Puts the next packet of the host's next flow on its link, if the link is free.
    fn host_send(&mut self, now: Time, host: u32) {
        let h = &mut self.hosts[host as usize];
        if h.busy {
            return;
        }
        let Some(flow) = h.flows.pop_front() else {
            return;
        };
        let left = &mut self.unsent[flow as usize];
        let payload = (*left).min(self.spec.mss() as u64) as u32;
        *left -= payload as u64;
        if *left > 0 {
            h.flows.push_back(flow);
        }
        h.busy = true;
        let done = now + self.wire(payload);
        self.q.schedule(done, Ev::HostDone { host });
        self.q
            .schedule(done + self.spec.link_delay, Ev::AtSwitch { flow, payload });
        self.packets += 1;
    }

    /// The switch moves the packet to its output port at once (no blocking inside it).
    fn at_switch(&mut self, now: Time, flow: u32, payload: u32) {
        let port = self.book.record(flow).dst.0 as u32;
        let wire = payload as u64 + self.spec.header_bytes as u64;
        let p = &mut self.ports[port as usize];
        p.fifo.push_back(Queued { flow, payload });
        p.bytes += wire;
        self.queued_bytes += wire;
        self.max_port_bytes = self.max_port_bytes.max(p.bytes);
        self.max_queued_bytes = self.max_queued_bytes.max(self.queued_bytes);
        self.port_send(now, port);
    }

    /// Starts the output port's next packet, if its link is free.
    fn port_send(&mut self, now: Time, port: u32) {
        let p = &mut self.ports[port as usize];
        if p.busy {
            return;
        }
        let Some(Queued { flow, payload }) = p.fifo.pop_front() else {
            return;
        };
        let wire = payload as u64 + self.spec.header_bytes as u64;
        p.bytes -= wire;
        self.queued_bytes -= wire;
        p.busy = true;
        let done = now + self.wire(payload);
        self.q.schedule(done, Ev::PortDone { port });
        self.q
            .schedule(done + self.spec.link_delay, Ev::Delivered { flow, payload });
    }

    fn sample(&mut self, now: Time, source: &mut dyn FlowSource) {
        let longest = self.ports.iter().map(|p| p.bytes).max().unwrap_or(0);
        self.book
            .sample(now, self.queued_bytes, longest, self.active);
        let period = self.limits.sample_every.unwrap_or(Dur(1));
        // Keep sampling while anything can still happen.
        if !self.q.is_empty() || !source.is_exhausted() || self.active > 0 {
            self.q.schedule(now + period, Ev::Sample);
        }
    }

    fn finish(self, events: u64) -> RunOutput {
        let mtu = self.spec.packet_bytes as u64;
        let counters: BTreeMap<String, u64> = [
            ("events", events),
            ("packets_sent", self.packets),
            ("flows_unfinished", self.active),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let queues = QueueStats {
            // In full-size packets, rounded up, as the packet baselines report them.
            max_queue: self.max_port_bytes.div_ceil(mtu),
            max_node_queue: self.max_queued_bytes.div_ceil(mtu),
            max_node_transit: 0,
            max_reorder_bytes: 0,
        };
        self.book.finish(self.q.now(), queues, counters)
    }
}
