//! The hosts, the one driver of their protocols ([`HostDriver`]): each host's link into its
//! TiN (control cells first, then 1RMA's Resp and IP's data cells in turns, under the
//! endpoint port's credits), the cells the fabric delivers to a host handed to IP over GNet
//! or 1RMA (`eject`), Swift's pacing, and the workloads that feed them: flows, synthetic
//! traffic, CliqueMap lookups by 1RMA or IP RPC, bulk IP. The driver owns the hosts' state
//! and reaches the rest of the simulator only through a [`Ctx`]: the calendar, the counters,
//! and the switch's cells and endpoint ports.

use super::*;

impl HostDriver<'_> {
    /// Hosts in the clique.
    pub(crate) fn hosts(&self) -> u32 {
        self.hosts.len() as u32
    }

    /// Handles one of the hosts' events.
    pub(super) fn handle(&mut self, cx: &mut Ctx<'_>, now: Time, ev: Ev, source: Option<&Source>) {
        match ev {
            Ev::HostSend { host } => {
                self.hosts[host as usize].busy = false;
                self.host_send(cx, now, host, source);
            }
            Ev::Eject { cell } => self.eject(cx, now, cell),
            Ev::HostCredit { host } => {
                let h = &mut self.hosts[host as usize];
                if h.credit_wake == Some(now) {
                    h.credit_wake = None;
                }
                self.host_send(cx, now, host, source);
            }
            Ev::Lookup { host } => self.lookup(cx, now, host),
            Ev::Completion { read } => {
                let target = self.reads[read as usize].target;
                self.hosts[target as usize].resps.push_back(read);
                self.wake_host(cx, now, target);
            }
            Ev::Serve { rpc } => self.respond(cx, now, rpc),
            Ev::Pace { host } => {
                if self.hosts[host as usize].pace_at == Some(now) {
                    self.hosts[host as usize].pace_at = None;
                }
                self.issue_reads(cx, now, host);
                self.wake_host(cx, now, host);
            }
            Ev::Resend { host, packet } => {
                self.hosts[host as usize].ahead.push_back(packet);
                self.wake_host(cx, now, host);
            }
            Ev::Bulk { host } => self.bulk_message(cx, now, host),
            _ => unreachable!("a switch event: Sim::handle takes those"),
        }
    }

    /// Space for `words` of class `class` freed in host `host`'s endpoint FIFO: the credit is
    /// the host's at once (the host's link into its own TiN).
    pub(super) fn credit(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32, class: u8, words: u8) {
        self.hosts[host as usize].credits[class as usize] += words as u32;
        self.wake_host(cx, now, host);
    }

    /// Space for `words` of class `class` freed at `at` in host `host`'s endpoint FIFO: the
    /// credit lands then, waking the host if it waits for that class.
    pub(super) fn credit_at(
        &mut self,
        cx: &mut Ctx<'_>,
        host: u32,
        at: Time,
        class: u8,
        words: u8,
    ) {
        self.landings.push(host, at, class, u32::from(words));
        if self.hosts[host as usize].credit_wait & 1 << class != 0 {
            self.wake_for_credit(cx, host, at);
        }
    }

    /// A `HostCredit` of host `host` at `at`, unless one is queued no later.
    fn wake_for_credit(&mut self, cx: &mut Ctx<'_>, host: u32, at: Time) {
        let h = &mut self.hosts[host as usize];
        if h.credit_wake.is_none_or(|a| at < a) {
            h.credit_wake = Some(at);
            cx.q.schedule(at, Ev::HostCredit { host });
        }
    }

    /// Hands host `host` a flow (record `flow`, `bytes` of payload for host `dst`) to send.
    pub(crate) fn add_flow(
        &mut self,
        cx: &mut Ctx<'_>,
        now: Time,
        host: u32,
        flow: u32,
        bytes: u64,
        dst: u32,
    ) {
        if self.flows.len() <= flow as usize {
            self.flows.resize(flow as usize + 1, FlowState::default());
        }
        self.flows[flow as usize].unsent = bytes;
        self.flows[flow as usize].dst_host = dst;
        self.hosts[host as usize].flows.push_back(flow);
        self.host_send(cx, now, host, None);
    }

    /// Starts every host on synthetic traffic.
    pub(crate) fn start_saturation(&mut self, cx: &mut Ctx<'_>, source: &Source) {
        for h in 0..self.hosts() {
            self.host_send(cx, Time::ZERO, h, Some(source));
        }
    }

    /// Puts the host's next cell on its link into the TiN, if the link is free and the
    /// endpoint port's FIFO has credit for it. Control cells (IP over GNet's, 1RMA's Req) go
    /// first; then 1RMA's Resp cells and IP data cells take turns, a cell each; with IP over
    /// GNet, data only of packets granted.
    pub(super) fn host_send(
        &mut self,
        cx: &mut Ctx<'_>,
        now: Time,
        host: u32,
        source: Option<&Source>,
    ) {
        if self.hosts[host as usize].busy {
            return;
        }
        let h = &mut self.hosts[host as usize];
        self.landings
            .land(host, now, |c, n| h.credits[c as usize] += n);
        h.credit_wait = 0;
        self.try_host_send(cx, now, host, source);
        // Nothing sent for want of credit: the first credit landing for a class it waits for
        // is its next try.
        let h = &self.hosts[host as usize];
        if !h.busy
            && h.credit_wait != 0
            && let Some(at) = self.landings.next_for(host, h.credit_wait)
        {
            self.wake_for_credit(cx, host, at);
        }
    }

    /// One try of host `host` to put a cell on its link: control first, then 1RMA's Resp and
    /// IP data in turns.
    fn try_host_send(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32, source: Option<&Source>) {
        if self.spec.injection == Injection::RtsCts {
            self.announce(cx, now, host, source);
        }
        if self.send_control(cx, now, host) {
            return;
        }
        // Resp and IP data in one class take turns a cell each; with Resp in the low-latency
        // class and IP data in the bulk one, Resp goes first up to HIGH_CELLS_PER_BULK cells.
        let split = self.resp_class != self.data_class;
        let h = &self.hosts[host as usize];
        let resp_first = if split {
            h.high_run < HIGH_CELLS_PER_BULK
        } else {
            h.resp_turn
        };
        if resp_first && self.send_resp(cx, now, host) {
            let h = &mut self.hosts[host as usize];
            h.resp_turn = false;
            h.high_run = h.high_run.saturating_add(1);
            return;
        }
        if self.send_ip_data(cx, now, host, source) {
            let h = &mut self.hosts[host as usize];
            h.resp_turn = true;
            h.high_run = 0;
            return;
        }
        if self.send_resp(cx, now, host) {
            let h = &mut self.hosts[host as usize];
            h.high_run = h.high_run.saturating_add(1);
        }
    }

    /// Sends the host's next control cell if its class has credit; true if it did.
    fn send_control(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32) -> bool {
        let h = &self.hosts[host as usize];
        let Some(&(kind, id)) = h.control.front() else {
            return false;
        };
        let class = kind.class() as usize;
        let words = if kind == Kind::RmaReq {
            REQ_WORDS
        } else {
            CONTROL_WORDS
        };
        if h.credits[class] < u32::from(words) {
            self.hosts[host as usize].credit_wait |= 1 << class;
            return false;
        }
        let h = &mut self.hosts[host as usize];
        h.control.pop_front();
        h.credits[class] -= u32::from(words);
        // An RTS goes to the packet's destination, a grant back to its source, both routed
        // deterministically by the flow-invariant fields (§3.3); a Req to the read's target,
        // routed like data (the hash serves the deterministic modes).
        let (to, hash) = match kind {
            Kind::RmaReq => {
                let r = self.reads[id as usize];
                cx.counters.rma_req_cells += 1;
                (r.target, route_hash(r.initiator, r.target, 0))
            }
            Kind::Rts => {
                self.packets[id as usize].rts_at = now;
                let p = self.packets[id as usize];
                cx.counters.control_cells += 1;
                (p.dst_host, route_hash(p.src_host, p.dst_host, 0))
            }
            _ => {
                let p = self.packets[id as usize];
                cx.counters.control_cells += 1;
                (p.src_host, route_hash(p.dst_host, p.src_host, 0))
            }
        };
        self.inject(cx, now, host, kind, 0, id, to, hash, words);
        true
    }

    /// Starts CliqueMap lookups on every host: each its own Poisson process.
    pub(crate) fn start_lookups(&mut self, cx: &mut Ctx<'_>, lookups: Lookups) {
        self.lookups = Some(lookups);
        for h in 0..self.hosts() {
            let mut client = Client::new(self.spec.seed, h);
            let at = client.next_arrival(lookups.qps_per_client);
            self.hosts[h as usize].client = Some(client);
            if at < lookups.until {
                cx.q.schedule(at, Ev::Lookup { host: h });
            }
        }
    }

    /// Starts bulk IP beside the lookups: IP's data cells move to the bulk class, 1RMA's Resp
    /// cells with them if they share its VCs; every host draws its messages' arrivals and
    /// destinations from a stream of its own.
    pub(crate) fn start_bulk(&mut self, cx: &mut Ctx<'_>, bulk: Bulk, until: Time) {
        self.bulk = Some(bulk);
        self.data_class = BULK_CLASS;
        self.resp_class = if bulk.rma_shares_bulk_vcs {
            BULK_CLASS
        } else {
            Kind::RmaResp.class()
        };
        for h in 0..self.hosts() {
            let mut c = Client::on_stream(self.spec.seed, "aquila.bulk", h);
            let at = c.next_arrival(bulk.qps_per_host);
            self.bulk_clients.push(c);
            if at < until {
                cx.q.schedule(at, Ev::Bulk { host: h });
            }
        }
    }

    /// Host `host`'s bulk message arrives: a flow to a uniformly drawn other host; the next
    /// is drawn.
    pub(super) fn bulk_message(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32) {
        let bulk = self.bulk.expect("bulk traffic was started");
        let until = self.lookups.expect("bulk runs beside lookups").until;
        let hosts = self.hosts();
        let c = &mut self.bulk_clients[host as usize];
        let dst = c.backend(host, hosts);
        let next = c.next_arrival(bulk.qps_per_host);
        if next < until {
            cx.q.schedule(next, Ev::Bulk { host });
        }
        let flow = self.flows.len() as u32;
        self.add_flow(cx, now, host, flow, u64::from(bulk.bytes), dst);
    }

    /// Client `host`'s lookup arrives: a 1RMA read of a value from a backend; the next one
    /// is drawn.
    pub(super) fn lookup(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32) {
        let lookups = self.lookups.expect("lookups were started");
        let hosts = self.hosts();
        let client = self.hosts[host as usize]
            .client
            .as_mut()
            .expect("every host is a client");
        let target = client.backend(host, hosts);
        let next = client.next_arrival(lookups.qps_per_client);
        if next < lookups.until {
            cx.q.schedule(next, Ev::Lookup { host });
        }
        match lookups.transport {
            Transport::Rma => {
                self.hosts[host as usize]
                    .pending_reads
                    .push_back(PendingRead {
                        target,
                        bytes: lookups.value_bytes,
                        arrived: now,
                    });
                self.issue_reads(cx, now, host);
            }
            Transport::IpRpc { .. } => self.issue_rpc(cx, now, host, target, lookups.value_bytes),
        }
    }

    /// A lookup by IP RPC: the request packet is announced at once.
    fn issue_rpc(&mut self, cx: &mut Ctx<'_>, now: Time, client: u32, server: u32, bytes: u32) {
        let id = self.rpcs.len() as u32;
        self.rpcs.push(Rpc {
            client,
            server,
            bytes,
            issued: now,
            packets_left: 0,
            received: 0,
            completions: 0,
            done: None,
        });
        cx.counters.rpcs_issued += 1;
        self.send_rpc_packet(cx, now, client, server, RPC_REQUEST_BYTES, id);
    }

    /// Announces an RPC packet of `payload` bytes from `src` to `dst`.
    fn send_rpc_packet(
        &mut self,
        cx: &mut Ctx<'_>,
        now: Time,
        src: u32,
        dst: u32,
        payload: u32,
        rpc: u32,
    ) {
        let wire = payload + self.spec.header_bytes;
        let packet = self.alloc_packet(Packet {
            src_host: src,
            rts_at: Time::ZERO,
            ack_for: None,
            data_at: Time::ZERO,
            ack_data_at: Time::ZERO,
            acked_wire: 0,
            desc: NONE,
            flow: NONE,
            seq: 0,
            payload,
            wire,
            cells_left: Spec::cells_of(wire),
            dst_host: dst,
            rpc,
        });
        self.hosts[src as usize].waiting.push_back(packet);
        self.wake_host(cx, now, src);
    }

    /// An RPC packet is released to its host: a request queues for the backend's software
    /// (one request at a time, each taking the transport's service time); a response brings
    /// its part of the value, and the last completes the lookup.
    pub(super) fn rpc_packet_in(&mut self, cx: &mut Ctx<'_>, now: Time, p: &Packet) {
        let Some(Lookups {
            transport: Transport::IpRpc { service },
            ..
        }) = self.lookups
        else {
            unreachable!("RPC packets only come from IP RPC lookups");
        };
        let r = &mut self.rpcs[p.rpc as usize];
        if p.dst_host == r.server {
            let h = &mut self.hosts[r.server as usize];
            h.serve_free = now.max(h.serve_free) + service;
            cx.q.schedule(h.serve_free, Ev::Serve { rpc: p.rpc });
            return;
        }
        r.received += p.payload;
        r.packets_left -= 1;
        if r.packets_left == 0 {
            r.completions += 1;
            r.done = Some(now);
            cx.counters.rpcs_completed += 1;
        }
    }

    /// The backend's software has served RPC `rpc`: the value goes back in full packets.
    pub(super) fn respond(&mut self, cx: &mut Ctx<'_>, now: Time, rpc: u32) {
        let r = self.rpcs[rpc as usize];
        let mss = self.spec.mss();
        self.rpcs[rpc as usize].packets_left = r.bytes.div_ceil(mss);
        let mut left = r.bytes;
        while left > 0 {
            let payload = left.min(mss);
            left -= payload;
            self.send_rpc_packet(cx, now, r.server, r.client, payload, rpc);
        }
    }

    /// The lookups by IP RPC issued at or after `from`, as records.
    pub(crate) fn rpc_records(&self, from: Time) -> Vec<RpcRecord> {
        self.rpcs
            .iter()
            .filter(|r| r.issued >= from)
            .map(|r| RpcRecord {
                client: r.client,
                server: r.server,
                bytes: r.bytes,
                received: r.received,
                completions: r.completions,
                issued: r.issued,
                done: r.done,
            })
            .collect()
    }

    /// Has host `host` try again at `at`, if pacing named a time.
    pub(super) fn pace(&mut self, cx: &mut Ctx<'_>, host: u32, at: Option<Time>) {
        let Some(t) = at else { return };
        let h = &mut self.hosts[host as usize];
        if h.pace_at.is_none_or(|p| t < p) {
            h.pace_at = Some(t);
            cx.q.schedule(t, Ev::Pace { host });
        }
    }

    /// Puts a cell from `host` on its link into the TiN.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn inject(
        &mut self,
        cx: &mut Ctx<'_>,
        now: Time,
        host: u32,
        kind: Kind,
        carried: u8,
        packet: u32,
        dst_host: u32,
        hash: u64,
        words: u8,
    ) {
        let cell = Cell {
            dst_host,
            dst_tin: dst_host / self.spec.hosts_per_tin,
            hash,
            words,
            class: match kind {
                Kind::Data => self.data_class,
                Kind::RmaResp => self.resp_class,
                _ => kind.class(),
            },
            level: 0,
            from: InKind::Endpoint,
            hops_left: self.spec.hop_limit,
            out: NONE,
            out_level: 0,
            ready: Time::ZERO,
            tail: Time::ZERO,
            non_minimal: false,
        };
        let id = cx.sw.alloc_cell(cell);
        let load = Load {
            kind,
            carried,
            packet,
            injected: now,
        };
        if id as usize == self.loads.len() {
            self.loads.push(load);
        } else {
            self.loads[id as usize] = load;
        }
        let h = &mut self.hosts[host as usize];
        h.busy = true;
        let port = h.port;
        let ser = self.spec.host_rate.serialize(words as u64 * WORD as u64);
        cx.q.schedule(now + ser, Ev::HostSend { host });
        cx.sw.launch(cx.q, now, port, id, ser);
        cx.counters.cells_injected += 1;
    }

    /// Has the host try to send now, unless its link is busy (it will try when free).
    pub(super) fn wake_host(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32) {
        let h = &mut self.hosts[host as usize];
        if !h.busy {
            h.busy = true;
            cx.q.schedule(now, Ev::HostSend { host });
        }
    }

    pub(super) fn eject(&mut self, cx: &mut Ctx<'_>, now: Time, id: u32) {
        let c = cx.sw.cells[id as usize];
        let l = self.loads[id as usize];
        cx.counters.cells_delivered += 1;
        if c.non_minimal {
            cx.counters.non_minimal_cells += 1;
        }
        cx.sw.free_cell(id);
        if l.kind == Kind::Data {
            cx.counters.cell_latency_sum += u128::from(now.0 - l.injected.0);
            if now >= self.measure_from {
                cx.counters.measured_wire_bytes += c.words as u64 * WORD as u64;
                if let Some(h) = &mut self.cell_latencies {
                    h.record(now - l.injected);
                }
            }
        }
        match l.kind {
            Kind::RmaReq => return self.rma_request(cx, now, l.packet),
            Kind::RmaResp => return self.rma_response(cx, now, l.packet, l.carried),
            _ => {}
        }
        let p = self.packets[l.packet as usize];
        match l.kind {
            Kind::Data if self.spec.injection == Injection::RawCells => {
                self.reassemble_raw(cx, l.packet)
            }
            Kind::Data => {
                self.egress[c.dst_tin as usize].on_data(p.desc, u32::from(l.carried));
                self.pump_egress(cx, now, c.dst_tin);
            }
            Kind::Rts => {
                let flow = if p.flow == NONE {
                    1 << 63 | u64::from(p.src_host) << 32 | u64::from(p.dst_host)
                } else {
                    u64::from(p.flow)
                };
                self.egress[c.dst_tin as usize].on_rts(Rts {
                    src: p.src_host,
                    slot: l.packet,
                    port: (p.dst_host % self.spec.hosts_per_tin) as u8,
                    cos: 0,
                    bytes: p.wire,
                    flow,
                });
                self.pump_egress(cx, now, c.dst_tin);
            }
            Kind::Cts => {
                self.hosts[c.dst_host as usize].granted.push_back(l.packet);
                self.wake_host(cx, now, c.dst_host);
            }
            Kind::RmaReq | Kind::RmaResp => unreachable!("handled above"),
            Kind::Ctd => self.dropped(cx, now, c.dst_host, l.packet),
        }
    }
}
