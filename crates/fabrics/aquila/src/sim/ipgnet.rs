//! IP over GNet at the hosts and their TiNs' egress (§3.3): the ingress announces packets by
//! RTS and cuts them into data cells once granted; the egress (`crate::ipgnet::Egress`,
//! sans-IO) grants by CTS or drops by CTD and releases packets in RTS order; a dropped packet
//! is announced again. The destination acknowledges each flow or RPC packet, and the
//! acknowledgement's return is the packet's fabric RTT, which Swift learns. Raw cells (no
//! RTS/CTS) are reassembled here too.

use super::*;

impl HostDriver<'_> {
    /// Sends the host's next IP data cell if it has one and credit for it; true if it did.
    pub(super) fn send_ip_data(
        &mut self,
        cx: &mut Ctx<'_>,
        now: Time,
        host: u32,
        source: Option<&Source>,
    ) -> bool {
        let rts_cts = self.spec.injection == Injection::RtsCts;
        let h = &mut self.hosts[host as usize];
        if h.cutting.is_none() {
            if rts_cts {
                let Some(packet) = h.granted.pop_front() else {
                    return false;
                };
                h.cutting = Some((packet, self.packets[packet as usize].wire));
                self.packets[packet as usize].data_at = now;
            } else {
                let Some(packet) = self.new_packet(cx, now, host, source) else {
                    return false;
                };
                self.hosts[host as usize].cutting =
                    Some((packet, self.packets[packet as usize].wire));
                self.packets[packet as usize].data_at = now;
            }
        }
        let h = &self.hosts[host as usize];
        let (packet, left) = h.cutting.expect("a packet");
        let mut words = 0u8;
        let per = (crate::wire::MAX_CELL_LEN - crate::wire::HEADER_LEN) as u32;
        let carried = left.min(per);
        Spec::cell_words(carried, |w| words = w);
        let class = self.data_class as usize;
        if h.credits[class] < words as u32 {
            // A credit from the TiN will call again.
            self.hosts[host as usize].credit_wait |= 1 << class;
            return false;
        }
        let left = left - carried;
        let h = &mut self.hosts[host as usize];
        h.credits[class] -= words as u32;
        h.cutting = (left > 0).then_some((packet, left));
        if left == 0 && rts_cts {
            h.announced -= 1; // the ingress buffer has sent it all
        }
        let p = self.packets[packet as usize];
        let hash = route_hash(host, p.dst_host, 0);
        self.inject(
            cx,
            now,
            host,
            Kind::Data,
            carried as u8,
            packet,
            p.dst_host,
            hash,
            words,
        );
        true
    }

    /// The ingress announces its acknowledgements, then, while it holds fewer than its limit,
    /// the packets waiting for their connection's window that it now lets go, then new
    /// packets (of flows, as their windows let them go).
    pub(super) fn announce(
        &mut self,
        cx: &mut Ctx<'_>,
        now: Time,
        host: u32,
        source: Option<&Source>,
    ) {
        let h = &mut self.hosts[host as usize];
        while let Some(ack) = h.ahead.pop_front() {
            h.announced += 1;
            h.control.push_back((Kind::Rts, ack));
        }
        let mut i = 0;
        while self.hosts[host as usize].announced < self.spec.ingress_packets
            && let Some(&packet) = self.hosts[host as usize].waiting.get(i)
        {
            let p = self.packets[packet as usize];
            match self.admit_ip(now, host, p.dst_host, p.wire) {
                Ok(()) => {
                    let h = &mut self.hosts[host as usize];
                    h.waiting.remove(i);
                    h.announced += 1;
                    h.control.push_back((Kind::Rts, packet));
                }
                Err(at) => {
                    self.pace(cx, host, at);
                    i += 1;
                }
            }
        }
        while self.hosts[host as usize].announced < self.spec.ingress_packets {
            let Some(packet) = self.new_packet(cx, now, host, source) else {
                return;
            };
            let h = &mut self.hosts[host as usize];
            h.announced += 1;
            h.control.push_back((Kind::Rts, packet));
        }
    }

    /// Admits a packet of `wire` bytes on the IP connection from `src` to `dst`.
    fn admit_ip(&mut self, now: Time, src: u32, dst: u32, wire: u32) -> Result<(), Option<Time>> {
        let (cfg, mtu) = (&self.spec.swift_ip, self.spec.mtu_bytes);
        admit(&mut self.conns, cfg, mtu, (src, dst), now, wire)
    }

    /// A new packet of the host's traffic, if it has one: synthetic traffic's at once, a
    /// flow's when its connection's window lets it go (the flows take turns).
    fn new_packet(
        &mut self,
        cx: &mut Ctx<'_>,
        now: Time,
        host: u32,
        source: Option<&Source>,
    ) -> Option<u32> {
        let spec = self.spec;
        let (flow, seq, payload, dst_host) = match source {
            Some(Source::Saturate { pattern, packets }) => {
                let h = &mut self.hosts[host as usize];
                if packets.is_some_and(|n| h.sent_packets >= n) {
                    return None;
                }
                h.sent_packets += 1;
                let n = self.hosts.len() as u32;
                let df = &spec.dragonfly;
                let hpt = spec.hosts_per_tin;
                let h = &mut self.hosts[host as usize];
                let dst = match pattern {
                    Pattern::UniformRandom => {
                        let d = h.rng.random_range(0..n - 1);
                        if d >= host { d + 1 } else { d }
                    }
                    Pattern::PodShift => {
                        let pod = (df.pod_of(h.tin) + 1) % df.pods;
                        let per_pod = df.tins_per_pod * hpt;
                        pod * per_pod + h.rng.random_range(0..per_pod)
                    }
                };
                (NONE, 0, spec.mss(), dst)
            }
            None => {
                let (flow, payload) = self.next_flow(cx, now, host)?;
                let h = &mut self.hosts[host as usize];
                let f = &mut self.flows[flow as usize];
                f.unsent -= payload as u64;
                let seq = f.next_seq;
                f.next_seq += 1;
                if f.unsent > 0 {
                    h.flows.push_back(flow);
                }
                (flow, seq, payload, f.dst_host)
            }
        };
        let wire = payload + spec.header_bytes;
        let packet = Packet {
            src_host: host,
            rts_at: Time::ZERO,
            ack_for: None,
            data_at: Time::ZERO,
            ack_data_at: Time::ZERO,
            acked_wire: 0,
            desc: NONE,
            flow,
            seq,
            payload,
            wire,
            cells_left: Spec::cells_of(wire),
            dst_host,
            rpc: NONE,
        };
        Some(self.alloc_packet(packet))
    }

    /// The first of the host's flows, in turn, whose connection admits its next packet, taken
    /// off the turn with that packet's payload; flows whose windows are closed keep their
    /// order. Raw cells have no acknowledgements, so no window: the next flow goes.
    fn next_flow(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32) -> Option<(u32, u32)> {
        let mss = u64::from(self.spec.mss());
        let windowed = self.spec.injection == Injection::RtsCts;
        for _ in 0..self.hosts[host as usize].flows.len() {
            let flow = self.hosts[host as usize].flows.pop_front()?;
            let f = self.flows[flow as usize];
            let payload = f.unsent.min(mss) as u32;
            let wire = payload + self.spec.header_bytes;
            if !windowed {
                return Some((flow, payload));
            }
            match self.admit_ip(now, host, f.dst_host, wire) {
                Ok(()) => return Some((flow, payload)),
                Err(at) => {
                    self.hosts[host as usize].flows.push_back(flow);
                    self.pace(cx, host, at);
                }
            }
        }
        None
    }

    pub(super) fn alloc_packet(&mut self, packet: Packet) -> u32 {
        if let Some(id) = self.free_packets.pop() {
            self.packets[id as usize] = packet;
            id
        } else {
            self.packets.push(packet);
            self.packets.len() as u32 - 1
        }
    }

    /// A CTD reached the ingress of host `host`: it drops `packet`. The transport sends it
    /// again: a packet of a connection when its window, cut by Swift's decrease for a loss,
    /// lets it go; an acknowledgement, which no window holds, after a retransmission delay of
    /// one base target (ours: sent again at once, acknowledgements to a congested port would
    /// keep its host's control cells ahead of the data that drains that port). Synthetic
    /// traffic's packets are lost.
    pub(super) fn dropped(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32, packet: u32) {
        cx.counters.ctd_drops += 1;
        self.hosts[host as usize].announced -= 1;
        let p = self.packets[packet as usize];
        if p.ack_for.is_some() {
            cx.counters.resent_packets += 1;
            let at = now + self.spec.swift_ip.base_target;
            cx.q.schedule(at, Ev::Resend { host, packet });
            return;
        } else if p.flow != NONE || p.rpc != NONE {
            cx.counters.resent_packets += 1;
            let c = self
                .conns
                .get_mut(&(host, p.dst_host))
                .expect("an admitted packet's connection");
            c.swift.on_loss(&self.spec.swift_ip, now);
            c.inflight_bytes -= u64::from(p.wire);
            self.hosts[host as usize].waiting.push_front(packet);
        } else {
            self.free_packets.push(packet);
        }
        self.wake_host(cx, now, host);
    }

    /// Raw-cell mode: a packet is complete when its last cell is in, and leaves in its flow's
    /// order.
    pub(super) fn reassemble_raw(&mut self, cx: &mut Ctx<'_>, packet: u32) {
        let p = &mut self.packets[packet as usize];
        p.cells_left -= 1;
        if p.cells_left > 0 {
            return;
        }
        let p = *p;
        self.free_packets.push(packet);
        cx.counters.packets_delivered += 1;
        if p.flow == NONE {
            return;
        }
        // In order within the flow: hold a packet until those before it have left.
        let f = &mut self.flows[p.flow as usize];
        if p.seq != f.deliver_seq {
            self.held.insert((p.flow, p.seq), p.payload);
            return;
        }
        f.deliver_seq += 1;
        self.delivered.push((p.flow, p.payload));
        while let Some(bytes) = self
            .held
            .remove(&(p.flow, self.flows[p.flow as usize].deliver_seq))
        {
            self.flows[p.flow as usize].deliver_seq += 1;
            self.delivered.push((p.flow, bytes));
        }
    }

    /// Sends the grants TiN `tin`'s egress has issued (each from the port of the packet's
    /// destination) and hands its released packets to their hosts.
    pub(super) fn pump_egress(&mut self, cx: &mut Ctx<'_>, now: Time, tin: u32) {
        while let Some(g) = self.egress[tin as usize].poll_grant() {
            let (kind, slot) = match g {
                Grant::Cts { slot, desc, .. } => {
                    self.packets[slot as usize].desc = desc;
                    (Kind::Cts, slot)
                }
                Grant::Ctd { slot, .. } => (Kind::Ctd, slot),
            };
            let port_host = self.packets[slot as usize].dst_host;
            self.hosts[port_host as usize]
                .control
                .push_back((kind, slot));
            self.wake_host(cx, now, port_host);
        }
        while let Some(r) = self.egress[tin as usize].poll_release() {
            let p = self.packets[r.rts.slot as usize];
            self.free_packets.push(r.rts.slot);
            cx.counters.packets_delivered += 1;
            if r.ecn {
                cx.counters.ecn_marks += 1;
            }
            if p.flow != NONE {
                self.delivered.push((p.flow, p.payload));
                self.acknowledge(cx, now, &p);
            }
            if p.rpc != NONE {
                self.acknowledge(cx, now, &p);
                self.rpc_packet_in(cx, now, &p);
            }
            if let Some(start) = p.ack_for {
                if start >= self.measure_from {
                    self.rtts.record(now - start);
                    self.data_rtts.record(now - p.ack_data_at);
                    let ack_wait = p.data_at - p.rts_at;
                    self.admissions.record(p.ack_data_at - start + ack_wait);
                }
                self.acknowledged(cx, now, &p, start);
            }
        }
    }

    /// An acknowledgement `ack` is back at the packet's sender: its connection's Swift learns
    /// the packet's fabric RTT (its RTS leaving to the acknowledgement's release) and the
    /// packet leaves the window.
    fn acknowledged(&mut self, cx: &mut Ctx<'_>, now: Time, ack: &Packet, rts_at: Time) {
        let (sender, receiver) = (ack.dst_host, ack.src_host);
        let cfg = &self.spec.swift_ip;
        let mtu = f64::from(self.spec.mtu_bytes);
        let c = self
            .conns
            .get_mut(&(sender, receiver))
            .expect("an acknowledged packet's connection");
        c.swift
            .on_ack(cfg, now, now - rts_at, f64::from(ack.acked_wire) / mtu);
        c.inflight_bytes -= u64::from(ack.acked_wire);
        self.wake_host(cx, now, sender);
    }

    /// The destination acknowledges a flow's or an RPC's packet at once (no host processing: the fabric
    /// RTT of §5 excludes it) by a one-cell IP packet of the headers alone, as the transports
    /// under the paper's workloads do; it goes through RTS/CTS like any packet, so a round
    /// trip is §3.4's six GNet half round trips.
    fn acknowledge(&mut self, cx: &mut Ctx<'_>, now: Time, p: &Packet) {
        let wire = self.spec.header_bytes.max(WORD as u32);
        let ack = self.alloc_packet(Packet {
            src_host: p.dst_host,
            rts_at: Time::ZERO,
            ack_for: Some(p.rts_at),
            data_at: Time::ZERO,
            ack_data_at: p.data_at,
            acked_wire: p.wire,
            desc: NONE,
            flow: NONE,
            seq: 0,
            payload: 0,
            wire,
            cells_left: Spec::cells_of(wire),
            dst_host: p.src_host,
            rpc: NONE,
        });
        self.hosts[p.dst_host as usize].ahead.push_back(ack);
        self.wake_host(cx, now, p.dst_host);
    }
}
