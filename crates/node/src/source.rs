//! The source side: when a subflow may release its next cell (Eq. 2, §3.3.3) and how released
//! cells reach the queues.
//!
//! Every subflow `i → j → k` has a window of one cell. After its cell leaves `Q_ij`, it waits for
//! the feedback `F = len(Q_jk)` that `j` embeds in its next cell to us; it may release the next
//! cell at slot `t` once `len(Q_ij(t)) + (t − T)/E ≥ F` (Eq. 2, T = arrival of the feedback,
//! E = epoch). That guarantees the previous cell has left both queues, so every queue holds at
//! most one cell per subflow (Eq. 3, 5).
//!
//! When the check runs is our choice (the paper's hardware evaluates it continuously): on the
//! feedback's arrival, and just before each transmission to `j`. Between those moments nothing
//! can make `Q_ij` transmit, so a cell released in between would leave at the same slot; the only
//! difference is its order relative to transit cells that arrived meanwhile, which we place
//! ahead of it.

use crate::flow::{LocalFlow, SubState};
use crate::node::{NONE, Node, Origin, Queued};
use crate::peer::ALIVE;
use shoal_base::NodeId;

/// The age rule stops mattering once 2^age exceeds any queue length; capping the exponent
/// keeps the shift in range.
const AGE_CAP: u64 = 31;

impl<P: crate::flow::Payload> Node<P> {
    pub(crate) fn alloc_flow(&mut self, dst: NodeId, class: u8, slot: u64) -> u32 {
        let f = match self.free_flows.pop() {
            Some(f) => f,
            None => {
                self.flows.push(LocalFlow::new(self.n));
                (self.flows.len() - 1) as u32
            }
        };
        self.flows[f as usize].reset(dst, class, slot);
        self.flow_of[class as usize * self.n + dst.idx()] = f;
        f
    }

    /// Gives a new flow one subflow per live intermediate (and the direct one). Returns false,
    /// leaving the flow untouched, when no intermediate can carry it.
    pub(crate) fn start_subflows(&mut self, f: u32, slot: u64) -> bool {
        let dst = self.flows[f as usize].dst;
        let usable = |node: &Self, j: usize| {
            node.peers[j].has(ALIVE) && !node.blocked.contains(&(j as u16, dst.0))
        };
        if !(0..self.n).any(|j| usable(self, j)) {
            return false;
        }
        // One pass in transmit order, which lists every peer once (our own subflow is never used).
        self.flows[f as usize].subs[self.me.idx()].state = SubState::Blocked;
        let start = self.next_tx_position(slot);
        for i in 0..self.tx_order.len() {
            let j = self.tx_order[(start + i) % self.tx_order.len()] as usize;
            if usable(self, j) {
                self.settle(f, j, slot);
            } else {
                self.flows[f as usize].subs[j].state = SubState::Blocked;
            }
        }
        true
    }

    /// The phase (slot within the epoch) of the next transmission from `slot` on. Subflows
    /// settle in transmit order from it, so a flow with fewer cells than intermediates detours
    /// them through the nodes it connects to next, as §3.2 has it ("sent to the next node the
    /// source is connected to"); in node-id order every short flow would load the same few
    /// low-numbered nodes. Peers of a slot already under way (a submission between two
    /// `poll_tx` calls of one slot; the rack never does this) are taken as if sent to.
    fn next_tx_phase(&self, slot: u64) -> u16 {
        let from = slot + (self.tx_slot_now == slot) as u64;
        (from % self.cfg.epoch_slots as u64) as u16
    }

    /// Where in `tx_order` the peers still to be sent to from `slot` on begin.
    fn next_tx_position(&self, slot: u64) -> usize {
        let phase = self.next_tx_phase(slot);
        let tx = &self.cfg.tx_slot;
        self.tx_order.partition_point(|&p| tx[p as usize] < phase) % self.tx_order.len().max(1)
    }

    /// New data for a flow: idle subflows may release again, the next connected first.
    pub(crate) fn wake_idle(&mut self, f: u32, slot: u64) {
        let mut idle = std::mem::take(&mut self.flows[f as usize].idle);
        let e = self.cfg.epoch_slots;
        let phase = self.next_tx_phase(slot) as u32;
        let tx = &self.cfg.tx_slot;
        idle.sort_unstable_by_key(|&j| ((tx[j as usize] as u32 + e - phase) % e, j));
        for &j in &idle {
            if self.flows[f as usize].subs[j as usize].state == SubState::Idle {
                self.settle(f, j as usize, slot);
            }
        }
        idle.clear();
        // Keep the allocation; anything settled back to idle was pushed meanwhile.
        let flow = &mut self.flows[f as usize];
        idle.append(&mut flow.idle);
        flow.idle = idle;
    }

    /// `len(Q_ij)` in Eq. 2 and the age rule: the cells certain to leave before a cell released
    /// now. Ready-queue entries are not counted: a ready flow may have run out of data by its
    /// turn and be skipped, so counting them could release a cell too early and put two cells
    /// of one subflow in the intermediate's queue.
    fn backlog(&self, c: usize, j: usize) -> u64 {
        self.lane(c, j).q_len as u64
    }

    /// §3.3.3: a new flow adds a cell to `Q_ij` only while `len(Q_ij) <= 2^age`.
    fn age_allows(&self, start_slot: u64, backlog: u64, slot: u64) -> bool {
        if !self.cfg.age_rule {
            return true;
        }
        let age = (slot.saturating_sub(start_slot) / self.cfg.epoch_slots as u64).min(AGE_CAP);
        backlog <= 1 << age
    }

    /// Decides what subflow `j` of flow `f` does next, given it holds no list entry, queued cell
    /// or in-flight record: go idle, wait in the pending list, or release.
    // Inlined, like `release`, `promote`, `queue_local_cell` and `push_q`: they form the
    // per-cell path, where call overhead was 4% of all instructions.
    #[inline(always)]
    pub(crate) fn settle(&mut self, f: u32, j: usize, slot: u64) {
        let flow = &self.flows[f as usize];
        if !flow.has_data() {
            let flow = &mut self.flows[f as usize];
            flow.subs[j].state = SubState::Idle;
            flow.idle.push(j as u16);
            return;
        }
        let c = flow.class as usize;
        if !self.age_allows(flow.start_slot, self.backlog(c, j), slot) {
            let flow = &mut self.flows[f as usize];
            flow.subs[j].state = SubState::Pending;
            flow.subs[j].feedback_at(0, slot);
            flow.refs += 1;
            self.flow_slab.push_back(&mut self.peers[j].pending, f);
            return;
        }
        self.release(f, j, c);
    }

    /// Lets subflow `j` of flow `f` put a cell towards `j`: through the ready queue (Eq. 4) or
    /// straight into `Q_ij`.
    #[inline(always)]
    fn release(&mut self, f: u32, j: usize, c: usize) {
        if self.cfg.ready_queue {
            let flow = &mut self.flows[f as usize];
            flow.subs[j].state = SubState::Ready;
            flow.refs += 1;
            let lane = if c == 0 {
                &mut self.peers[j].lane
            } else {
                &mut self.low[(c - 1) * self.n + j]
            };
            self.flow_slab.push_back(&mut lane.ready, f);
            lane.ready_len += 1;
            if !lane.local_in_q {
                self.promote(c, j);
            }
        } else {
            self.queue_local_cell(f, j, c);
        }
    }

    /// Cuts the flow's next cell into `Q_ij` for subflow `j`.
    #[inline(always)]
    fn queue_local_cell(&mut self, f: u32, j: usize, c: usize) {
        let seq_i =
            self.flows[f as usize].class as usize * self.n + self.flows[f as usize].dst.idx();
        let (cell, payload) = self.flows[f as usize].take_cell(
            self.me,
            self.cfg.payload_bytes,
            &mut self.next_seq[seq_i],
            self.cfg.interleave_messages,
        );
        let flow = &mut self.flows[f as usize];
        debug_assert_ne!(flow.subs[j].state, SubState::Queued);
        flow.subs[j].state = SubState::Queued;
        flow.refs += 1;
        if self.cfg.ready_queue {
            let lane = self.lane_mut(c, j);
            debug_assert!(!lane.local_in_q, "Eq. 5 allows one local cell in Q");
            lane.local_in_q = true;
        }
        self.push_q(
            c,
            j,
            Queued {
                cell,
                payload,
                origin: Origin::Local,
            },
        );
    }

    /// Moves the first ready flow that still has data from `R[c][j]` into `Q[c][j]` (Eq. 4-5: at
    /// most one local cell in `Q`).
    #[inline(always)]
    pub(crate) fn promote(&mut self, c: usize, j: usize) {
        loop {
            let lane = if c == 0 {
                &mut self.peers[j].lane
            } else {
                &mut self.low[(c - 1) * self.n + j]
            };
            if lane.local_in_q {
                return;
            }
            let Some(f) = self.flow_slab.pop_front(&mut lane.ready) else {
                return;
            };
            lane.ready_len -= 1;
            let flow = &mut self.flows[f as usize];
            flow.refs -= 1;
            if flow.subs[j].state != SubState::Ready {
                // Blocked while it waited.
                self.maybe_free(f);
                continue;
            }
            if !flow.has_data() {
                flow.subs[j].state = SubState::Idle;
                flow.idle.push(j as u16);
                self.maybe_free(f);
                continue;
            }
            self.queue_local_cell(f, j, c);
            return;
        }
    }

    /// Re-checks the subflows waiting on intermediate `j`, just before we transmit to it.
    pub(crate) fn check_pending(&mut self, slot: u64, j: usize) {
        let mut waiting = std::mem::take(&mut self.scratch);
        self.flow_slab
            .drain(&mut self.peers[j].pending, |f| waiting.push(f));
        for &f in &waiting {
            let flow = &self.flows[f as usize];
            let sub = flow.subs[j];
            if sub.state != SubState::Pending {
                self.flows[f as usize].refs -= 1;
                self.maybe_free(f);
                continue;
            }
            let backlog = self.backlog(flow.class as usize, j);
            let e = self.cfg.epoch_slots as u64;
            let eq2 = backlog * e + sub.waited(slot) >= sub.fb as u64 * e;
            if eq2 && self.age_allows(flow.start_slot, backlog, slot) {
                self.flows[f as usize].refs -= 1;
                self.settle(f, j, slot);
                self.maybe_free(f);
            } else {
                self.flow_slab.push_back(&mut self.peers[j].pending, f);
            }
        }
        waiting.clear();
        self.scratch = waiting;
    }

    /// Feedback `fb` arrived from `j` at `slot`. It describes the last of our cells that `j` had
    /// received when it transmitted, i.e. one sent at least two delays ago; older in-flight
    /// records are settled with it too (only possible when the delay exceeds the turnaround).
    #[inline(always)]
    pub(crate) fn apply_feedback(&mut self, slot: u64, j: usize, fb: u16) {
        // Most receptions find nothing of ours in flight to the peer: decide that inline.
        if !self.peers[j].inflight.is_empty() {
            self.settle_inflight(slot, j, fb);
        }
    }

    fn settle_inflight(&mut self, slot: u64, j: usize, fb: u16) {
        let horizon = 2 * self.cfg.delay_slots as u64;
        while let Some(&(sent, f)) = self.inflight_slab.front(&self.peers[j].inflight) {
            if sent + horizon > slot {
                break;
            }
            self.inflight_slab.pop_front(&mut self.peers[j].inflight);
            let flow = &mut self.flows[f as usize];
            if flow.subs[j].state != SubState::InFlight {
                flow.refs -= 1;
                self.maybe_free(f);
                continue;
            }
            flow.subs[j].feedback_at(fb, slot);
            let c = flow.class as usize;
            if self.backlog(c, j) >= fb as u64 {
                self.flows[f as usize].refs -= 1;
                self.settle(f, j, slot);
            } else {
                // The in-flight record's reference passes to the pending entry.
                self.flows[f as usize].subs[j].state = SubState::Pending;
                self.flow_slab.push_back(&mut self.peers[j].pending, f);
            }
            self.maybe_free(f);
        }
    }

    /// Recycles flow `f` once nothing refers to it and it has nothing left to send.
    pub(crate) fn maybe_free(&mut self, f: u32) {
        let flow = &self.flows[f as usize];
        if flow.refs == 0 && !flow.has_data() {
            let fi = flow.class as usize * self.n + flow.dst.idx();
            if self.flow_of[fi] == f {
                self.flow_of[fi] = NONE;
                self.free_flows.push(f);
            }
        }
    }
}
