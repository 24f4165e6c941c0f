//! 1RMA at the hosts (§3.4): a read's command issued as its (initiator, target) Swift window
//! lets it go, its Req cell, the target's PCIe read (`crate::rma::Pcie`) whose completions
//! become Resp cells, and the read's completion at the initiator.

use super::*;

impl HostDriver<'_> {
    /// Sends the host's next 1RMA Resp cell (one PCIe completion of a read it is the target
    /// of) if it has one and credit for it; true if it did.
    pub(super) fn send_resp(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32) -> bool {
        let h = &self.hosts[host as usize];
        let Some(&read) = h.resps.front() else {
            return false;
        };
        let r = self.reads[read as usize];
        let carried = r.unsent.min(self.spec.rma.completion_bytes);
        let words = Rma::resp_words(carried);
        let class = self.resp_class as usize;
        if h.credits[class] < u32::from(words) {
            self.hosts[host as usize].credit_wait |= 1 << class;
            return false;
        }
        let h = &mut self.hosts[host as usize];
        h.resps.pop_front();
        h.credits[class] -= u32::from(words);
        let r = &mut self.reads[read as usize];
        r.unsent -= carried;
        if r.unsent == 0 {
            r.last_sent = now;
        }
        let r = *r;
        cx.counters.rma_resp_cells += 1;
        let hash = route_hash(r.target, r.initiator, 0);
        let carried = u8::try_from(carried).expect("a completion fits a cell (Rma::check)");
        self.inject(
            cx,
            now,
            host,
            Kind::RmaResp,
            carried,
            read,
            r.initiator,
            hash,
            words,
        );
        true
    }

    /// Issues the client's lookups by 1RMA that their targets' windows let go, in order of
    /// arrival (a lookup to a target whose window is closed does not hold back the others).
    pub(super) fn issue_reads(&mut self, cx: &mut Ctx<'_>, now: Time, host: u32) {
        let mut i = 0;
        while let Some(&r) = self.hosts[host as usize].pending_reads.get(i) {
            let key = (host, r.target);
            let mtu = self.spec.mtu_bytes;
            match admit(
                &mut self.rma_conns,
                &self.spec.swift_rma,
                mtu,
                key,
                now,
                r.bytes,
            ) {
                Ok(()) => {
                    self.hosts[host as usize].pending_reads.remove(i);
                    self.start_read(cx, now, host, r, true);
                }
                Err(at) => {
                    self.pace(cx, host, at);
                    i += 1;
                }
            }
        }
    }

    /// The initiator's 1RMA engine receives a read command at once (no window): its Req joins
    /// the control cells.
    #[cfg(test)]
    pub(crate) fn issue_read(
        &mut self,
        cx: &mut Ctx<'_>,
        now: Time,
        initiator: u32,
        target: u32,
        bytes: u32,
    ) {
        let r = PendingRead {
            target,
            bytes,
            arrived: now,
        };
        self.start_read(cx, now, initiator, r, false);
    }

    /// The initiator's 1RMA engine receives the command of read `r`: its Req joins the control
    /// cells.
    fn start_read(
        &mut self,
        cx: &mut Ctx<'_>,
        now: Time,
        initiator: u32,
        r: PendingRead,
        windowed: bool,
    ) {
        let PendingRead {
            target,
            bytes,
            arrived,
        } = r;
        let id = self.reads.len() as u32;
        self.reads.push(Read {
            initiator,
            target,
            bytes,
            arrived,
            issued: now,
            windowed,
            at_target: Time::ZERO,
            pcie_done: Time::ZERO,
            last_sent: Time::ZERO,
            unsent: bytes,
            cells_left: self.spec.rma.completions(bytes),
            received: 0,
            completions: 0,
            done: None,
        });
        cx.counters.rma_reads_issued += 1;
        self.hosts[initiator as usize]
            .control
            .push_back((Kind::RmaReq, id));
        self.wake_host(cx, now, initiator);
    }

    /// A Req reaches its target: the engine reads the value over PCIe; each completion will
    /// wait for the host's link as a Resp cell.
    pub(super) fn rma_request(&mut self, cx: &mut Ctx<'_>, now: Time, read: u32) {
        let rma = self.spec.rma;
        let r = self.reads[read as usize];
        let mut last = now;
        let q = &mut cx.q;
        self.hosts[r.target as usize]
            .pcie
            .read(&rma, now, r.bytes, |at, _| {
                last = at;
                q.schedule(at, Ev::Completion { read });
            });
        let r = &mut self.reads[read as usize];
        r.at_target = now;
        r.pcie_done = last;
    }

    /// A Resp reaches the initiator: its bytes are written; with the last, the read completes
    /// and, for a lookup, its connection's Swift learns the read's fabric delay: the time
    /// since the command less what the target held it (its PCIe read, which the Resp reports,
    /// as Swift separates the remote end's delay from the fabric's).
    pub(super) fn rma_response(&mut self, cx: &mut Ctx<'_>, now: Time, read: u32, carried: u8) {
        let delay = self.spec.rma.completion_delay;
        let r = &mut self.reads[read as usize];
        r.received += u32::from(carried);
        r.cells_left -= 1;
        if r.cells_left > 0 {
            return;
        }
        r.completions += 1;
        r.done = Some(now + delay);
        cx.counters.rma_reads_completed += 1;
        let r = *r;
        if r.windowed {
            let fabric = Dur((now - r.issued).0 - (r.pcie_done - r.at_target).0);
            let cfg = &self.spec.swift_rma;
            let mtu = f64::from(self.spec.mtu_bytes);
            let c = self
                .rma_conns
                .get_mut(&(r.initiator, r.target))
                .expect("a windowed read's connection");
            c.swift.on_ack(cfg, now, fabric, f64::from(r.bytes) / mtu);
            c.inflight_bytes -= u64::from(r.bytes);
            self.issue_reads(cx, now, r.initiator);
        }
    }

    /// The reads issued at or after `from`, as records.
    pub(crate) fn read_records(&self, from: Time) -> Vec<ReadRecord> {
        let delay = self.spec.rma.completion_delay;
        self.reads
            .iter()
            .filter(|r| r.issued >= from)
            .map(|r| ReadRecord {
                initiator: r.initiator,
                target: r.target,
                bytes: r.bytes,
                received: r.received,
                completions: r.completions,
                arrived: r.arrived,
                issued: r.issued,
                done: r.done,
                pcie: (r.pcie_done - r.at_target) + delay,
                target_wait: Dur(r.last_sent.0.saturating_sub(r.pcie_done.0)),
            })
            .collect()
    }
}
