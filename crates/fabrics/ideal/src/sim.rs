//! One run of the ideal switch on the discrete-event engine. Each host link and each switch
//! output port has at most one pending event (its packet on the wire), so the event list grows
//! with ports, not with packets. The run loop is the one every event-driven fabric shares
//! (`shoal_fabric::event_loop`); this module is how the switch moves bytes.

use crate::SwitchSpec;
use shoal_base::{Dur, Time};
use shoal_fabric::{Calendar, EventFabric};
use shoal_fabric::{FabricError, FlowBook, QueueStats, RunLimits, RunOutput};
use shoal_workload::{Flow, FlowSource};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// Host `host`'s link finished serializing its packet.
    HostDone { host: u32 },
    /// A packet of `payload` bytes of flow `flow` has arrived whole at the switch.
    AtSwitch { flow: u32, payload: u32 },
    /// Output port `port` finished serializing its packet.
    PortDone { port: u32 },
    /// A packet of flow `flow` has arrived whole at its destination.
    Delivered { flow: u32, payload: u32 },
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
    q: Calendar<Ev>,
    book: FlowBook,
    /// Payload bytes each flow has yet to put on its host's link.
    unsent: Vec<u64>,
    hosts: Vec<Host>,
    ports: Vec<Port>,
    /// Hosts with new flows, sent from once every flow due at the time has joined.
    kick: Vec<u32>,
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
            q: Calendar::new(),
            book: FlowBook::new(n, limits),
            unsent: Vec::new(),
            hosts: (0..n).map(|_| Host::default()).collect(),
            ports: (0..n).map(|_| Port::default()).collect(),
            kick: Vec::new(),
            active: 0,
            queued_bytes: 0,
            max_port_bytes: 0,
            max_queued_bytes: 0,
            packets: 0,
        }
    }
}

impl EventFabric for Sim<'_> {
    type Event = Ev;

    fn calendar_and_book(&mut self) -> (&mut Calendar<Ev>, &mut FlowBook) {
        (&mut self.q, &mut self.book)
    }

    fn handle(
        &mut self,
        now: Time,
        ev: Ev,
        source: &mut dyn FlowSource,
    ) -> Result<(), FabricError> {
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
                    self.q.arm_flows(&mut self.book, source);
                }
            }
        }
        Ok(())
    }

    fn add_flow(&mut self, _now: Time, record: u32, flow: &Flow) -> Result<(), FabricError> {
        self.unsent.push(flow.bytes);
        if flow.bytes > 0 {
            self.active += 1;
            let host = flow.src.0 as u32;
            self.hosts[host as usize].flows.push_back(record);
            self.kick.push(host);
        }
        Ok(())
    }

    /// Every flow due now has joined its host's round before any host sends, so flows that
    /// start together share their link from the first packet.
    fn flows_added(&mut self, now: Time) {
        for host in std::mem::take(&mut self.kick) {
            self.host_send(now, host);
        }
    }

    fn sample(&mut self, now: Time, source: &mut dyn FlowSource) -> bool {
        let longest = self.ports.iter().map(|p| p.bytes).max().unwrap_or(0);
        self.book
            .sample(now, self.queued_bytes, longest, self.active);
        // Keep sampling while anything can still happen.
        !self.q.is_empty() || !source.is_exhausted() || self.active > 0
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

impl<'a> Sim<'a> {
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
}
