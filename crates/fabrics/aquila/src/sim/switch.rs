//! The TiN switch and the GNet links (§3.1-3.2): a cell's hop as the parent module's "A
//! cell's hop" describes it: arrival into its VC's input FIFO under the sender's credits,
//! routing once at the head (tables, VC levels, the modes, failed links left out), iSLIP
//! arbitration and the crossing into an output queue, output scheduling onto the link, and
//! the credit back upstream. The state is [`Switch`]; the behaviour is `Sim`'s methods here
//! (they read the tables, the calendar and the counters beside it). This is the part the
//! rebuilt data path replaces (issue 38).
//!
//! Its boundary with the hosts (the [`HostDriver`]): a host's cell comes in by
//! [`Switch::alloc_cell`] and [`Switch::launch`] onto its endpoint port (from
//! `HostDriver::inject`); a cell leaves by `Ev::Eject` at its tail's arrival at the host
//! (`HostDriver::eject` reads it and frees it), and space freed in an endpoint port's FIFO
//! goes back to the host as credit (`HostDriver::credit`, from `free_input`).

use super::*;

impl Sim<'_> {
    /// Words queued in all input FIFOs and output queues, and in the fullest output queue.
    pub(crate) fn queued_words(&self) -> (u64, u64) {
        let now = self.q.now();
        let ins = self.sw.vin.iter().map(|q| u64::from(q.words));
        let crossing = (0..self.sw.far.len())
            .filter(|&p| self.sw.in_busy[p] > now)
            .map(|p| u64::from(self.sw.crossing[p].1));
        let total = ins
            .chain(crossing)
            .chain(self.sw.vout.iter().map(|q| u64::from(q.words)))
            .sum();
        let most = self
            .sw
            .vout
            .iter()
            .map(|q| u64::from(q.words))
            .max()
            .unwrap_or(0);
        (total, most)
    }

    fn tin_of(&self, port: u32) -> u32 {
        self.sw.tin[port as usize]
    }

    pub(super) fn arrive(&mut self, now: Time, port: u32, id: u32) {
        if self.sw.down_links > 0 && self.sw.down[port as usize] {
            self.counters.link_failure_drops += 1;
            self.sw.free_cell(id);
            return;
        }
        let c = self.sw.cells[id as usize];
        let v = vc(c.class, c.level) as usize;
        let qi = port as usize * VCS + v;
        // The cell crossing out of this VC holds its space until its crossing ends.
        let (cv, cw) = self.sw.crossing[port as usize];
        let crossing = if self.sw.in_busy[port as usize] > now && usize::from(cv) == v {
            u32::from(cw)
        } else {
            0
        };
        let held = self.sw.vin[qi].words + crossing + c.words as u32;
        if held > self.sw.in_cap[port as usize] {
            self.counters.credit_overflows += 1;
            self.sw.free_cell(id);
            return;
        }
        self.sw.vin[qi].words += c.words as u32;
        self.counters.max_input_words = self.counters.max_input_words.max(held);
        let was_empty = self.sw.fifos.is_empty(qi as u32);
        self.sw.fifos.push_back(qi as u32, id);
        self.sw.in_mask[port as usize] |= 1 << v;
        self.sw.in_ports[port as usize / 64] |= 1 << (port % 64);
        if was_empty {
            self.sw.vin[qi].head = Head {
                ready: c.ready,
                oq: NONE,
                words: c.words,
            };
            let tin = self.tin_of(port);
            self.wake_arbiter(tin, c.ready.max(now));
        }
    }

    pub(super) fn wake_arbiter(&mut self, tin: u32, at: Time) {
        let a = &mut self.sw.arb_at[tin as usize];
        if a.is_none_or(|t| at < t) {
            *a = Some(at);
            let queued = &mut self.sw.arb_queued[tin as usize];
            if !queued.contains(&at) {
                queued.push(at);
                self.q.schedule(at, Ev::Arbitrate { tin });
            }
        }
    }

    /// A round of TiN `tin` at `at`, when a crossing ends (its input and crossbar output free).
    fn wake_at_crossing_end(&mut self, tin: u32, at: Time) {
        let done = &mut self.sw.arb_done[tin as usize];
        if !done.contains(&at) {
            done.push(at);
        }
        let queued = &mut self.sw.arb_queued[tin as usize];
        if !queued.contains(&at) {
            queued.push(at);
            self.q.schedule(at, Ev::Arbitrate { tin });
        }
    }

    /// Output queue (`port`, `v`) of TiN `tin` has sent a cell: a head its fullness held may
    /// go now.
    fn space_freed(&mut self, tin: u32, port: u32, v: usize, now: Time) {
        let wait = &mut self.sw.space_wait[port as usize];
        if *wait & 1 << v == 0 {
            return;
        }
        *wait &= !(1 << v);
        if self.sw.in_round == Some(tin) {
            self.sw.round_freed = true;
        } else {
            self.wake_arbiter(tin, now);
        }
    }

    /// Chooses the route of the head cell `id` at TiN `tin`, recording it in the cell.
    fn route(&mut self, tin: u32, id: u32) -> Routed {
        let c = self.sw.cells[id as usize];
        let mode = self.mode_of(&c);
        let allow = mode.non_minimal();
        let mut cand = std::mem::take(&mut self.sw.cand);
        self.router
            .candidates(tin, c.from, c.level, c.dst_tin, allow, &mut cand);
        let mut forced = false;
        if self.sw.down_links > 0 {
            if cand.minimal.is_empty() && cand.non_minimal.is_empty() {
                self.sw.cand = cand;
                return Routed::Stranded;
            }
            match self.avoid_failed(tin, &mut cand) {
                None => {
                    self.sw.cand = cand;
                    return Routed::Waits;
                }
                Some(f) => forced = f,
            }
        }
        let (hop, non_min) = self.choose(tin, &c, &cand);
        let non_min = non_min || forced;
        self.sw.cand = cand;
        let base = self.sw.base[tin as usize];
        let out = match hop.port {
            Some(p) => base + p,
            None => base + self.router.ports(tin) as u32 + c.dst_host % self.spec.hosts_per_tin,
        };
        let cell = &mut self.sw.cells[id as usize];
        cell.out = out;
        cell.out_level = hop.level;
        if non_min {
            cell.non_minimal = true;
        }
        Routed::Chosen
    }

    /// Data cells and 1RMA's Req and Resp (§3.4: freely reordered, adaptively routed) follow
    /// the clique's routing mode; RTS, CTS and CTD are routed minimally and
    /// deterministically, so that the RTSs of a flow arrive in the order sent (§3.3). Their
    /// classes are theirs alone, so the class tells (the switch never reads a cell's kind).
    fn mode_of(&self, c: &Cell) -> Mode {
        if c.class == Kind::Rts.class() || c.class == Kind::Cts.class() {
            Mode::MinimalDeterministic
        } else {
            self.spec.mode
        }
    }

    /// The routing mode's choice among the candidates; true if it is non-minimal.
    fn choose(&mut self, tin: u32, c: &Cell, cand: &Candidates) -> (Hop, bool) {
        let spec = self.spec;
        let mode = self.mode_of(c);
        match mode {
            Mode::Deterministic | Mode::MinimalDeterministic => {
                let hop = crate::cdg::deterministic(cand, mode, c.hash ^ u64::from(tin));
                let non_min = cand.non_minimal.contains(&hop);
                (hop, non_min)
            }
            Mode::Valiant => {
                let list = if cand.non_minimal.is_empty() {
                    &cand.minimal
                } else {
                    &cand.non_minimal
                };
                let hop = list[self.sw.rng.random_range(0..list.len())];
                (hop, !cand.non_minimal.is_empty())
            }
            Mode::FullyAdaptive | Mode::MinimalAdaptive => {
                let base = self.sw.base[tin as usize];
                let depth = |s: &Self, h: &Hop| match h.port {
                    Some(p) => {
                        s.sw.vout[(base + p) as usize * VCS + vc(c.class, h.level) as usize].words
                    }
                    None => 0,
                };
                let best_min = self.sample_best(&cand.minimal, 2, &depth);
                if cand.non_minimal.is_empty() {
                    return (best_min.0, false);
                }
                let best_non = self.sample_best(&cand.non_minimal, 3, &depth);
                let weighted = best_non.1 * spec.nonminimal_weight + spec.nonminimal_bias_words;
                if weighted < best_min.1 {
                    (best_non.0, true)
                } else {
                    (best_min.0, false)
                }
            }
        }
    }

    /// The least deep of `k` candidates drawn at random without replacement (all if fewer),
    /// the first drawn winning ties.
    fn sample_best(
        &mut self,
        list: &[Hop],
        k: usize,
        depth: &dyn Fn(&Self, &Hop) -> u32,
    ) -> (Hop, u32) {
        let n = list.len();
        let mut picked = [usize::MAX; 3];
        let mut best: Option<(Hop, u32)> = None;
        for i in 0..k.min(n) {
            let mut j = self.sw.rng.random_range(0..n - i);
            // The j-th index not yet picked.
            let mut sorted = picked;
            sorted[..i].sort_unstable();
            for &p in &sorted[..i] {
                if p <= j {
                    j += 1;
                }
            }
            picked[i] = j;
            let d = depth(self, &list[j]);
            if best.is_none_or(|(_, b)| d < b) {
                best = Some((list[j], d));
            }
        }
        best.expect("at least one candidate")
    }

    /// One arbitration round of TiN `tin` at `now`.
    pub(super) fn arbitrate(&mut self, now: Time, tin: u32) {
        let (lo, hi) = (self.sw.base[tin as usize], self.sw.base[tin as usize + 1]);
        self.sw.requests.clear();
        self.sw.req_ports.clear();
        let mut next_ready: Option<Time> = None;
        self.sw.in_round = Some(tin);
        self.sw.round_freed = false;
        self.release_xbar_waiters(now, tin, false);
        // The inputs holding a cell, a word of `in_ports` at a time (only the input being
        // visited can change its bit during the round: arrivals are events of their own).
        for w in lo / 64..hi.div_ceil(64) {
            let mut ports = self.sw.in_ports[w as usize] & span(w, lo, hi);
            while ports != 0 {
                let port = w * 64 + ports.trailing_zeros();
                ports &= ports - 1;
                if self.sw.in_busy[port as usize] > now {
                    continue;
                }
                let mut vcs = self.sw.in_mask[port as usize] & !self.sw.xbar_wait[port as usize];
                while vcs != 0 {
                    let v = vcs.trailing_zeros() as usize;
                    vcs &= vcs - 1;
                    let qi = port as usize * VCS + v;
                    let head = self.sw.vin[qi].head;
                    if head.ready > now {
                        next_ready = Some(next_ready.map_or(head.ready, |t| t.min(head.ready)));
                        continue;
                    }
                    let mut oq = head.oq;
                    if oq == NONE {
                        let id = self
                            .sw
                            .fifos
                            .front(qi as u32)
                            .expect("a VC in the mask holds a cell");
                        let c = self.sw.cells[id as usize];
                        if c.hops_left == 0 && c.dst_tin != tin {
                            self.counters.hop_limit_drops += 1;
                            self.drop_head(now, port, v as u8, id);
                            // The cell behind it, if any, is looked at in a round now.
                            next_ready = Some(now);
                            continue;
                        }
                        match self.route(tin, id) {
                            Routed::Chosen => {}
                            // Every candidate is on a failed link: the cell waits for the
                            // SDN's new tables, whose update wakes this TiN.
                            Routed::Waits => continue,
                            Routed::Stranded => {
                                self.counters.stranded_drops += 1;
                                self.drop_head(now, port, v as u8, id);
                                next_ready = Some(now);
                                continue;
                            }
                        }
                        let c = self.sw.cells[id as usize];
                        oq = c.out * VCS as u32 + u32::from(vc(c.class, c.out_level));
                        self.sw.vin[qi].head.oq = oq;
                    }
                    let out = oq / VCS as u32;
                    // A crossbar output busy is woken by its crossing's end; a full queue
                    // only by its output sending.
                    if self.sw.xbar_out_busy[out as usize] > now {
                        self.sw.xbar_wait[port as usize] |= 1 << v;
                        let waiters = &mut self.sw.xbar_waiters[out as usize];
                        if waiters.is_empty() {
                            self.sw.waiting_outs[tin as usize].push(out);
                        }
                        waiters.push(qi as u32);
                        continue;
                    }
                    if self.sw.vout[oq as usize].words + head.words as u32
                        > self.spec.output_vc_words
                    {
                        self.sw.space_wait[out as usize] |= 1 << (oq % VCS as u32);
                        continue;
                    }
                    let id = self
                        .sw
                        .fifos
                        .front(qi as u32)
                        .expect("a VC in the mask holds a cell");
                    self.sw.requests.push(Request {
                        input: (port - lo) as u16,
                        vc: v as u8,
                        output: (out - lo) as u16,
                    });
                    self.sw.req_ports.push((port, id));
                }
            }
        }
        if !self.sw.requests.is_empty() {
            self.sw.matched.clear();
            self.sw.islip[tin as usize].arbitrate(
                &self.sw.requests,
                self.spec.islip_iterations,
                &mut self.sw.matched,
            );
            let matched = std::mem::take(&mut self.sw.matched);
            for &m in &matched {
                let r = self.sw.requests[m];
                let (port, id) = self.sw.req_ports[m];
                self.cross(now, port, r.vc, id);
            }
            self.sw.matched = matched;
        }
        self.sw.in_round = None;
        if self.sw.round_freed {
            self.wake_arbiter(tin, now);
        }
        if let Some(t) = next_ready {
            self.wake_arbiter(tin, t);
        }
    }

    /// Releases the heads of TiN `tin` that wait for a crossbar output whose crossing has
    /// ended by `now` (every one, if `all`: their routes may change), so rounds look at them
    /// again.
    pub(super) fn release_xbar_waiters(&mut self, now: Time, tin: u32, all: bool) {
        let sw = &mut self.sw;
        let outs = &mut sw.waiting_outs[tin as usize];
        // The order of the outputs is of no consequence: releasing only clears bits.
        let mut i = 0;
        while i < outs.len() {
            let out = outs[i] as usize;
            if !all && sw.xbar_out_busy[out] > now {
                i += 1;
                continue;
            }
            for &qi in &sw.xbar_waiters[out] {
                sw.xbar_wait[qi as usize / VCS] &= !(1 << (qi as usize % VCS));
            }
            sw.xbar_waiters[out].clear();
            outs.swap_remove(i);
        }
    }

    /// Drops the head cell of an input FIFO (hop limit): its space and credit go back.
    fn drop_head(&mut self, now: Time, port: u32, v: u8, id: u32) {
        self.pop_input(port, v);
        let words = self.sw.cells[id as usize].words;
        self.free_input(now, port, v, words);
        self.sw.free_cell(id);
    }

    /// Moves cell `id` from input `port` across the crossbar into its output queue.
    fn cross(&mut self, now: Time, port: u32, v: u8, id: u32) {
        self.pop_input(port, v);
        let c = self.sw.cells[id as usize];
        let out = c.out;
        let xbar = self
            .spec
            .crossbar_rate
            .serialize(c.words as u64 * WORD as u64);
        let done = (now + xbar).max(c.tail);
        self.sw.in_busy[port as usize] = done;
        self.sw.crossing[port as usize] = (v, c.words);
        self.sw.xbar_out_busy[out as usize] = done;
        // The crossing's end is known now: the input FIFO's space goes back then, the
        // sender learns it one link delay later, and the TiN arbitrates then.
        let qi = port as usize * VCS + v as usize;
        self.sw.vin[qi].words -= c.words as u32;
        let up = self.sw.far[port as usize];
        if self.sw.is_endpoint[port as usize] {
            let (hd, mut cx) = self.driver();
            hd.credit_at(&mut cx, up, done, v / LEVELS, c.words);
        } else {
            self.credit_upstream(port, done, v, c.words);
        }
        let tin = self.tin_of(port);
        self.wake_at_crossing_end(tin, done);
        // On the next link the cell travels at its new level; its own tail must not leave
        // before it came in.
        let ser_out = self.sw.rate[out as usize].serialize(c.words as u64 * WORD as u64);
        let cell = &mut self.sw.cells[id as usize];
        if cell.out_level >= LEVELS && cell.level < LEVELS {
            self.counters.escaped_cells += 1;
        }
        cell.level = cell.out_level;
        cell.ready = now.max(Time(c.tail.0.saturating_sub(ser_out.0)));
        let oq = out as usize * VCS + vc(c.class, c.out_level) as usize;
        self.sw.vout[oq].words += c.words as u32;
        self.counters.max_output_words = self.counters.max_output_words.max(self.sw.vout[oq].words);
        self.sw.fifos.push_back(self.sw.out_queues + oq as u32, id);
        self.sw.out_mask[out as usize] |= 1 << vc(c.class, c.out_level);
        self.try_send(now, out);
    }

    /// Takes the head cell off input FIFO (`port`, `v`).
    fn pop_input(&mut self, port: u32, v: u8) {
        debug_assert!(
            self.sw.xbar_wait[port as usize] & 1 << v == 0,
            "a head waiting for a busy crossbar output leaves its FIFO"
        );
        let qi = port as usize * VCS + v as usize;
        self.sw.fifos.pop_front(qi as u32);
        match self.sw.fifos.front(qi as u32) {
            None => {
                self.sw.in_mask[port as usize] &= !(1 << v);
                if self.sw.in_mask[port as usize] == 0 {
                    self.sw.in_ports[port as usize / 64] &= !(1 << (port % 64));
                }
            }
            Some(id) => {
                let c = &self.sw.cells[id as usize];
                self.sw.vin[qi].head = Head {
                    ready: c.ready,
                    oq: NONE,
                    words: c.words,
                };
            }
        }
    }

    /// Frees `words` of input FIFO (`port`, `v`) now and returns the credit upstream.
    fn free_input(&mut self, now: Time, port: u32, v: u8, words: u8) {
        let qi = port as usize * VCS + v as usize;
        self.sw.vin[qi].words -= words as u32;
        let up = self.sw.far[port as usize];
        if self.sw.is_endpoint[port as usize] {
            let (hd, mut cx) = self.driver();
            hd.credit(&mut cx, now, up, v / LEVELS, words);
        } else {
            self.credit_upstream(port, now, v, words);
        }
    }

    /// Space for `words` of VC `v` freed at `at` in network input `port`: the credit lands at
    /// the sender one link delay later, and wakes it then if it waits for that VC's credit.
    fn credit_upstream(&mut self, port: u32, at: Time, v: u8, words: u8) {
        let up = self.sw.far[port as usize];
        let lands = at + self.sw.delay[port as usize];
        self.sw.landings.push(up, lands, v, u32::from(words));
        if self.sw.credit_wait[up as usize] & 1 << v != 0 {
            self.wake_output(up, lands);
        }
    }

    /// A `Send` of output `port` at `at`, unless one is queued no later.
    fn wake_output(&mut self, port: u32, at: Time) {
        let p = port as usize;
        if self.sw.send_at[p].is_none_or(|a| at < a) {
            self.sw.send_at[p] = Some(at);
            self.q.schedule(at, Ev::Send { port });
        }
    }

    /// Sends the next cell of output `port` if its link is free: the VCs of RTS, CTS and CTD
    /// first (§3.3: they travel at high priority), then the others, each group in round-robin
    /// order; a VC eligible when its head cell is ready and has credit downstream.
    pub(super) fn try_send(&mut self, now: Time, port: u32) {
        let p = port as usize;
        if self.sw.down[p] {
            return;
        }
        if self.sw.link_until[p] > now {
            // The link's end is the output's next look.
            if self.sw.out_mask[p] != 0 {
                self.wake_output(port, self.sw.link_until[p]);
            }
            return;
        }
        let vout = &mut self.sw.vout;
        self.sw
            .landings
            .land(port, now, |v, n| vout[p * VCS + v as usize].credits += n);
        let mut wake: Option<Time> = None;
        // The VCs holding a cell, in round-robin order from the pointer.
        let start = self.sw.rr[p] as u32;
        let mask = self.sw.out_mask[p];
        let (high, bulk) = (mask & !CONTROL_VCS & !BULK_VCS, mask & BULK_VCS);
        let data = if self.sw.high_run[p] < HIGH_CELLS_PER_BULK {
            [high, bulk]
        } else {
            [bulk, high]
        };
        for group in [mask & CONTROL_VCS, data[0], data[1]] {
            let mut vcs = group.rotate_right(start);
            while vcs != 0 {
                let k = vcs.trailing_zeros();
                vcs &= vcs - 1;
                let v = ((start + k) % VCS as u32) as usize;
                let oq = p * VCS + v;
                let q = self.sw.out_queues + oq as u32;
                let id = self
                    .sw
                    .fifos
                    .front(q)
                    .expect("a VC in the mask holds a cell");
                let c = self.sw.cells[id as usize];
                if c.ready > now {
                    wake = Some(wake.map_or(c.ready, |t| t.min(c.ready)));
                    continue;
                }
                if self.sw.vout[oq].credits < c.words as u32 {
                    self.sw.credit_wait[p] |= 1 << v;
                    if let Some(t) = self.sw.landings.next_for(port, 1 << v) {
                        wake = Some(wake.map_or(t, |w| w.min(t)));
                    }
                    continue;
                }
                self.sw.credit_wait[p] &= !(1 << v);
                self.sw.fifos.pop_front(q);
                if self.sw.fifos.is_empty(q) {
                    self.sw.out_mask[p] &= !(1 << v);
                }
                self.sw.vout[oq].words -= c.words as u32;
                if !self.sw.is_endpoint[p] {
                    self.sw.vout[oq].credits -= c.words as u32;
                }
                self.sw.rr[p] = ((v + 1) % VCS) as u8;
                if BULK_VCS & 1 << v != 0 {
                    self.sw.high_run[p] = 0;
                } else if CONTROL_VCS & 1 << v == 0 {
                    self.sw.high_run[p] = self.sw.high_run[p].saturating_add(1);
                }
                let ser = self.sw.rate[p].serialize(c.words as u64 * WORD as u64);
                self.sw.link_until[p] = now + ser;
                if self.sw.out_mask[p] != 0 {
                    self.wake_output(port, now + ser);
                }
                let tin = self.tin_of(port);
                self.space_freed(tin, port, v, now);
                if self.sw.is_endpoint[p] {
                    let at = now + self.sw.delay[p] + ser;
                    self.q.schedule(at, Ev::Eject { cell: id });
                } else {
                    self.counters.cell_hops += 1;
                    let cell = &mut self.sw.cells[id as usize];
                    cell.hops_left = cell.hops_left.saturating_sub(1);
                    cell.out = NONE;
                    cell.from = match self
                        .router
                        .far_end(tin, port - self.sw.base[tin as usize])
                        .2
                    {
                        InKind::Global => InKind::Global,
                        _ => InKind::Local,
                    };
                    let to = self.sw.far[p];
                    self.sw.launch(&mut self.q, now, to, id, ser);
                }
                return;
            }
        }
        // Nothing sendable: the link idles until a credit, a new cell or a head's ready time.
        if let Some(t) = wake {
            self.wake_output(port, t);
        }
    }

    /// Cells anywhere in the fabric: injected and neither delivered nor dropped.
    pub(crate) fn cells_in_flight(&self) -> u64 {
        self.counters.cells_injected
            - self.counters.cells_delivered
            - self.counters.credit_overflows
            - self.counters.hop_limit_drops
            - self.counters.link_failure_drops
            - self.counters.stranded_drops
    }
}

impl Switch {
    /// A handle for a new cell, its switch part `cell` stored; the host stores its own part
    /// under the same handle.
    pub(super) fn alloc_cell(&mut self, cell: Cell) -> u32 {
        let id = self.handles.alloc();
        if id as usize == self.cells.len() {
            self.cells.push(cell);
        } else {
            self.cells[id as usize] = cell;
        }
        id
    }

    /// Puts cell `id` on the wire towards input port `to`, starting now, taking `ser`.
    pub(super) fn launch(&mut self, q: &mut Calendar<Ev>, now: Time, to: u32, id: u32, ser: Dur) {
        let delay = self.delay[to as usize];
        let c = &mut self.cells[id as usize];
        c.tail = now + delay + ser;
        c.ready = now + delay + self.fall_through;
        q.schedule(now + delay, Ev::Arrive { port: to, cell: id });
    }

    pub(super) fn free_cell(&mut self, id: u32) {
        self.handles.free(id);
    }
}

/// The bits of word `w` of a port bitset that fall in ports `lo..hi`.
fn span(w: u32, lo: u32, hi: u32) -> u64 {
    let from = lo.saturating_sub(w * 64).min(64);
    let to = (hi - w * 64).min(64);
    let upto = if to == 64 { u64::MAX } else { (1u64 << to) - 1 };
    let below = if from == 64 {
        u64::MAX
    } else {
        (1u64 << from) - 1
    };
    upto & !below
}

#[cfg(test)]
mod span_tests {
    use super::span;

    /// Against the bit-by-bit reference, for every range of up to 200 ports.
    #[test]
    fn span_holds_exactly_the_ports_of_the_range_in_the_word() {
        for lo in 0..200u32 {
            for hi in lo + 1..=200 {
                for w in lo / 64..hi.div_ceil(64) {
                    let want = (0..64)
                        .filter(|b| (lo..hi).contains(&(w * 64 + b)))
                        .fold(0u64, |m, b| m | 1 << b);
                    assert_eq!(span(w, lo, hi), want, "word {w} of {lo}..{hi}");
                }
            }
        }
    }
}
