//! The node: its state and its public inputs and outputs.

use crate::config::{ConfigError, NodeConfig};
use crate::flow::{LocalFlow, Payload, SubState};
use crate::frame::{CellRec, Frame, Kind, MAX_FEEDBACK, Rx};
use crate::peer::{ALIVE, LCD_OUT, Lane, Peer};
use crate::reasm::{Held, Placed, Reassembly};
use crate::stats::NodeStats;
use shoal_base::{NodeId, Slab};
use std::collections::{BTreeSet, VecDeque};
use std::fmt;

pub(crate) const NONE: u32 = u32::MAX;

/// A slot that never came.
const NEVER: u64 = u64::MAX;
/// How often, in slots, a node frees the reassembly rings left idle (`Node::sweep_rings`):
/// rarely enough that the sweep costs nothing, often enough that a ring outlives its flow by
/// well under a millisecond of simulated time (two sweeps of 23.25 ns slots: 190 µs).
const SWEEP_SLOTS: u64 = 4096;

/// An unreachable notice (§3.5, ii) rides in a cell that would carry nothing; one may take a
/// data cell's place once per this many epochs per peer. The paper does not say how notices
/// travel. Ahead of all data, as we first had it, a node that finds many peers dead at once
/// (Fig. 17 fails 20-50% of a 512-node rack) spends one epoch per dead peer sending nothing but
/// notices to every live peer: 102 epochs (300 µs) without data at 20% failed. Every live node
/// detects a dead node itself, so delaying these notices costs nothing; a lone path failure is
/// still announced at once (the first notice may always go).
const NOTICE_EVERY_EPOCHS: u64 = 8;

/// How many local flows the prefetch hints cover: enough for a node with one or two long flows
/// (a permutation), few enough to cost nothing when there are many.
const HINTED_FLOWS: usize = 2;

/// `Peer::last_rx` packs (class, destination) as `class << 16 | destination`, so that reading it
/// needs no division.
#[inline]
fn join_last_rx(class: usize, dst: usize) -> u32 {
    (class << 16 | dst) as u32
}

#[inline]
fn split_last_rx(v: u32) -> (usize, usize) {
    ((v >> 16) as usize, (v & 0xffff) as usize)
}

/// Why a cell sits in a queue, which decides the bookkeeping when it leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Received from its source, to be forwarded to its destination (second hop).
    Transit,
    /// Released by one of our subflows (first hop, via the queue's node).
    Local,
    /// One of our cells moved off a failed or blocked path; no subflow waits for it.
    Orphan,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Queued<P> {
    pub cell: CellRec,
    pub payload: P,
    pub origin: Origin,
}

/// A cell of a flow destined to this node, handed to the host in sequence order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delivery<P> {
    pub src: NodeId,
    pub class: u8,
    pub len: u16,
    pub sop: bool,
    pub eop: bool,
    pub payload: P,
}

/// Something the driver should know about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// No cell arrived from this peer in its slot: the node treats it as failed (§3.5).
    PeerFailed(NodeId),
    /// A local flow to a failed node was abandoned with this many bytes never sent; the
    /// transport above must recover (§3.5).
    FlowAborted {
        dst: NodeId,
        class: u8,
        unsent_bytes: u64,
    },
}

/// Why `submit` refused data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitError {
    ToSelf,
    NoSuchNode(NodeId),
    NoSuchClass(u8),
    Empty,
    /// No path is left to the destination: it, or every path to it, has failed.
    Unreachable(NodeId),
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubmitError::ToSelf => write!(f, "a node cannot send to itself"),
            SubmitError::NoSuchNode(n) => write!(f, "no node {n} in this rack"),
            SubmitError::NoSuchClass(c) => write!(f, "no traffic class {c}"),
            SubmitError::Empty => write!(f, "nothing to send: zero bytes or zero-byte packets"),
            SubmitError::Unreachable(n) => write!(f, "no path is left to {n}"),
        }
    }
}

impl std::error::Error for SubmitError {}

/// A Shoal node. `P` is the payload handle carried with each cell (`()` in the simulator).
pub struct Node<P: Payload = ()> {
    pub(crate) cfg: NodeConfig,
    pub(crate) n: usize,
    pub(crate) me: NodeId,

    /// Per peer, class-0 lanes included (see `peer.rs` for why it is one record).
    pub(crate) peers: Vec<Peer>,
    /// Per peer: the payload handle of `Peer::last_tx` (kept apart; see `peer.rs`).
    pub(crate) last_tx_payload: Vec<P>,
    /// `[class − 1][peer]` lanes of the lower classes; empty with one class.
    pub(crate) low: Vec<Lane>,
    /// `[class − 1][peer]`: transit cells in each lower-class `Q`, the occupancy that tail drop
    /// limits (App. C). Our own cells wait there too but do not count: if they did, queues full
    /// of first-hop cells refused downstream would refuse the second-hop cells that drain them.
    pub(crate) low_transit: Vec<u32>,
    /// Entries of every `Q`.
    pub(crate) cells: Slab<Queued<P>>,
    /// Entries of every ready queue `R` and pending list: flow indices.
    pub(crate) flow_slab: Slab<u32>,
    /// Entries of every in-flight list: (slot sent, flow).
    pub(crate) inflight_slab: Slab<(u64, u32)>,

    pub(crate) flows: Vec<LocalFlow<P>>,
    pub(crate) free_flows: Vec<u32>,
    /// `[class][dst]` → index into `flows`, or `NONE`.
    pub(crate) flow_of: Vec<u32>,
    /// `[class][dst]` → next sequence number; survives the flow record being recycled.
    pub(crate) next_seq: Vec<u16>,

    /// Nodes we cannot reach, in the order we found out; each peer is told them in turn.
    pub(crate) unreachable: Vec<NodeId>,
    /// Per peer: how many entries of `unreachable` it has been told.
    pub(crate) notice_cursor: Vec<u16>,
    /// Per peer: the slot in which a notice last took a data cell's place, or `NEVER`.
    pub(crate) notice_over_data: Vec<u64>,
    /// (via, dst): `via` told us it cannot reach `dst`.
    pub(crate) blocked: BTreeSet<(u16, u16)>,
    /// The peers in the order this node transmits to them within an epoch (by `tx_slot`, then
    /// id): a flow hands its cells to the next connected nodes first (§3.2).
    pub(crate) tx_order: Vec<u16>,

    /// `[class][src]` → index into `reasm`, or `NONE` until the first cell from `src` arrives.
    pub(crate) reasm_of: Vec<u32>,
    /// Reassembly state of each (class, source) that has sent to this node, created on its first
    /// cell and kept (the expected sequence number outlives flows): O(pairs that talk), not
    /// O(N) per node.
    pub(crate) reasm: Vec<Reassembly<P>>,
    /// Indices into `reasm` of rings larger than `reasm::KEEP_SLOTS`, swept every
    /// `SWEEP_SLOTS` slots so that rings left large by flows that ended are freed.
    pub(crate) large_rings: Vec<u32>,

    pub(crate) delivered: VecDeque<Delivery<P>>,
    pub(crate) events: VecDeque<Event>,
    pub(crate) stats: NodeStats,
    pub(crate) queued_total: u64,
    /// Of `queued_total`, the transit cells (queued here for other sources).
    pub(crate) transit_total: u64,
    /// Scratch list for re-checking pending subflows without allocating.
    pub(crate) scratch: Vec<u32>,
    /// The slot of the latest `poll_tx`, and the peers sent to so far in it: whether our slot
    /// to a peer in this slot is still to come decides when a queued cell for it will leave.
    pub(crate) tx_slot_now: u64,
    pub(crate) sent_this_slot: Vec<u16>,
    /// Debug builds: `[dst][src]` bit set while a transit cell of subflow src→me→dst is queued
    /// in the highest class, to assert the per-subflow invariant behind Eq. 3 and 5.
    #[cfg(debug_assertions)]
    pub(crate) present: Vec<u64>,
}

impl<P: Payload> Node<P> {
    pub fn new(cfg: NodeConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let n = cfg.nodes as usize;
        let classes = cfg.classes as usize;
        let me = cfg.id;
        Ok(Node {
            me,
            n,
            peers: (0..n)
                .map(|j| Peer::new(j != me.idx(), cfg.tx_slot[j], cfg.rx_slot[j]))
                .collect(),
            last_tx_payload: vec![P::default(); n],
            low: vec![Lane::default(); (classes - 1) * n],
            low_transit: vec![0; (classes - 1) * n],
            cells: Slab::new(),
            flow_slab: Slab::new(),
            inflight_slab: Slab::new(),
            flows: Vec::new(),
            free_flows: Vec::new(),
            flow_of: vec![NONE; classes * n],
            next_seq: vec![0; classes * n],
            unreachable: Vec::new(),
            notice_cursor: vec![0; n],
            notice_over_data: vec![NEVER; n],
            blocked: BTreeSet::new(),
            tx_order: {
                let mut order: Vec<u16> = (0..n as u16).filter(|&p| p != me.0).collect();
                order.sort_by_key(|&p| (cfg.tx_slot[p as usize], p));
                order
            },
            reasm_of: vec![NONE; classes * n],
            reasm: Vec::new(),
            large_rings: Vec::new(),
            delivered: VecDeque::new(),
            events: VecDeque::new(),
            stats: NodeStats::default(),
            queued_total: 0,
            transit_total: 0,
            scratch: Vec::new(),
            tx_slot_now: u64::MAX,
            sent_this_slot: Vec::new(),
            #[cfg(debug_assertions)]
            present: if cfg.check_bounds {
                vec![0; (n * n).div_ceil(64)]
            } else {
                Vec::new()
            },
            cfg,
        })
    }

    pub fn id(&self) -> NodeId {
        self.me
    }

    pub fn config(&self) -> &NodeConfig {
        &self.cfg
    }

    pub fn stats(&self) -> &NodeStats {
        &self.stats
    }

    /// Cells queued for `node` in `class` (`len(Q_ij)`).
    pub fn queue_len(&self, class: u8, node: NodeId) -> usize {
        self.lane(class as usize, node.idx()).q_len as usize
    }

    /// Cells queued at this node over all queues.
    pub fn queued_cells(&self) -> u64 {
        self.queued_total
    }

    /// Local flows with data left or cells not yet acknowledged by feedback.
    pub fn active_flows(&self) -> usize {
        self.flows.len() - self.free_flows.len()
    }

    /// Nothing queued and no local flow active: the node only sends idle cells.
    pub fn is_quiet(&self) -> bool {
        self.queued_total == 0 && self.active_flows() == 0
    }

    /// Hint for a driver that knows what comes next (the slotted engine does): the node will
    /// run soon. Stage 0 fetches the node's own structure. Each later stage assumes what the
    /// stage before fetched is in cache and reads it to fetch what it points to; calling stage
    /// `k + 1` some time after stage `k` lets the misses of one stage overlap with other work.
    /// Returns whether [`Node::prefetch_tx`] and [`Node::prefetch_rx`] have anything to do at
    /// this stage. No hint changes the node's behaviour.
    #[inline]
    pub fn prefetch(&self, stage: usize) -> bool {
        // Stages 1 and 2 of the node's own state serve the work of local flows (cutting cells,
        // in-flight records); a node without one (most nodes under light load) skips them.
        let busy = self.active_flows() > 0;
        match stage {
            0 => {
                shoal_base::hint::prefetch_all(self);
                false
            }
            1 => {
                if busy {
                    // The top of each free list, and the first local flows (in a permutation,
                    // the only one).
                    self.cells.prefetch_free_list();
                    self.inflight_slab.prefetch_free_list();
                    self.flow_slab.prefetch_free_list();
                    for flow in self.flows.iter().take(HINTED_FLOWS) {
                        shoal_base::hint::prefetch_all(flow);
                    }
                }
                // The per-peer records are touched by every transmission and reception.
                true
            }
            2 => {
                if busy {
                    // The entries this slot's pushes will take.
                    self.cells.prefetch_free(4);
                    self.inflight_slab.prefetch_free(1);
                    self.flow_slab.prefetch_free(1);
                }
                // Queue entries exist only at a node that holds cells or flows.
                !self.is_quiet()
            }
            _ => false,
        }
    }

    /// Hint: `poll_tx(_, to)` comes soon (stages as in [`Node::prefetch`]). Stage 1 fetches the
    /// state about `to`; stage 2 the queue whose length the feedback reports, the head entries
    /// of the queues and the pending list to `to` and the subflows via `to` of the first local
    /// flows.
    #[inline]
    pub fn prefetch_tx(&self, stage: usize, to: NodeId) {
        let Some(peer) = self.peers.get(to.idx()) else {
            return;
        };
        match stage {
            1 => shoal_base::hint::prefetch(peer),
            2 => {
                if peer.last_rx != NONE {
                    let (class, k) = split_last_rx(peer.last_rx);
                    if let Some(lane) = self.lane_get(class, k) {
                        shoal_base::hint::prefetch(lane);
                    }
                    // Its slot phase; for class 0 the lane above is in the same record.
                    if class > 0
                        && let Some(other) = self.peers.get(k)
                    {
                        shoal_base::hint::prefetch(other);
                    }
                }
                self.cells.prefetch_front(&peer.lane.q);
                self.flow_slab.prefetch_front(&peer.lane.ready);
                self.flow_slab.prefetch_front(&peer.pending);
                self.prefetch_subs(to.idx());
            }
            _ => {}
        }
    }

    /// Hint: `handle_rx(_, from, rx)` comes soon (stages as in [`Node::prefetch`]). Stage 1
    /// fetches the state about `from` and, for a data cell, the queue it joins or its
    /// reassembly state; stage 2 the entries those name.
    #[inline]
    pub fn prefetch_rx(&self, stage: usize, from: NodeId, rx: &Rx<P>) {
        let Some(peer) = self.peers.get(from.idx()) else {
            return;
        };
        let data = || match rx {
            Rx::Cell(frame) if matches!(frame.cell.kind, Kind::Data { .. }) => Some(frame.cell),
            _ => None,
        };
        match stage {
            1 => {
                shoal_base::hint::prefetch(peer);
                if let Some(cell) = data() {
                    let c = cell.class as usize;
                    if cell.dst == self.me {
                        if let Some(r) = self.reasm_of.get(c * self.n + cell.src.idx()) {
                            shoal_base::hint::prefetch(r);
                        }
                    } else if let Some(lane) = self.lane_get(c, cell.dst.idx()) {
                        shoal_base::hint::prefetch(lane);
                    }
                }
            }
            2 => {
                self.inflight_slab.prefetch_front(&peer.inflight);
                self.prefetch_subs(from.idx());
                if let Some(cell) = data() {
                    let c = cell.class as usize;
                    if cell.dst == self.me {
                        let r = self.reasm_of.get(c * self.n + cell.src.idx());
                        if let Some(r) = r.and_then(|&r| self.reasm.get(r as usize)) {
                            r.prefetch(cell.seq);
                        }
                    } else if let Some(lane) = self.lane_get(c, cell.dst.idx()) {
                        self.cells.prefetch_back(&lane.q);
                    }
                }
            }
            _ => {}
        }
    }

    /// The subflows via `j` of the first local flows.
    #[inline]
    fn prefetch_subs(&self, j: usize) {
        for flow in self.flows.iter().take(HINTED_FLOWS) {
            if let Some(sub) = flow.subs.get(j) {
                shoal_base::hint::prefetch(sub);
            }
        }
    }

    /// Whether this node still exchanges cells with `peer`.
    pub fn peer_alive(&self, peer: NodeId) -> bool {
        self.peers[peer.idx()].has(ALIVE)
    }

    /// Hands `bytes` for `dst` to the node, cut into packets of at most `packet_bytes` (the
    /// last may be shorter). `packet` is passed back through [`Payload::fragment`].
    pub fn submit(
        &mut self,
        slot: u64,
        dst: NodeId,
        class: u8,
        bytes: u64,
        packet_bytes: u32,
        packet: P::Packet,
    ) -> Result<(), SubmitError> {
        if dst == self.me {
            return Err(SubmitError::ToSelf);
        }
        if dst.idx() >= self.n {
            return Err(SubmitError::NoSuchNode(dst));
        }
        if class >= self.cfg.classes {
            return Err(SubmitError::NoSuchClass(class));
        }
        if bytes == 0 || packet_bytes == 0 {
            return Err(SubmitError::Empty);
        }
        let f = self.flow_of[class as usize * self.n + dst.idx()];
        if f == NONE {
            let f = self.alloc_flow(dst, class, slot);
            self.flows[f as usize].push(bytes, packet_bytes, packet);
            if !self.start_subflows(f, slot) {
                self.flows[f as usize].clear_data();
                self.maybe_free(f);
                return Err(SubmitError::Unreachable(dst));
            }
        } else {
            let flow = &mut self.flows[f as usize];
            if !flow.has_data() {
                // A flow that had sent everything starts again: the age rule treats it as new.
                flow.start_slot = slot;
            }
            flow.push(bytes, packet_bytes, packet);
            self.wake_idle(f, slot);
        }
        Ok(())
    }

    /// One expected reception from `from` at `slot`.
    #[inline(always)]
    pub fn handle_rx(&mut self, slot: u64, from: NodeId, rx: Rx<P>) {
        let j = from.idx();
        if j >= self.n || !self.peers[j].has(ALIVE) {
            return;
        }
        match rx {
            Rx::Missing => self.peer_failed(j),
            Rx::Corrupt { feedback } => {
                // App. D: keep the congestion-control fields, drop the cell, ask the peer to
                // resend it, and resend ours in case its last-cell-dropped bit was the one hit.
                self.stats.corrupt_received += 1;
                self.apply_feedback(slot, j, feedback);
                self.peers[j].set(LCD_OUT, true);
                self.resend_last(j);
            }
            Rx::Cell(frame) => {
                self.apply_feedback(slot, j, frame.feedback);
                if frame.lcd {
                    self.resend_last(j);
                }
                let cell = frame.cell;
                match cell.kind {
                    Kind::Idle => self.peers[j].last_rx = NONE,
                    Kind::Unreachable => {
                        self.peers[j].last_rx = NONE;
                        self.on_unreachable(j, cell.dst);
                    }
                    Kind::Data { sop, eop } => {
                        if cell.dst == self.me {
                            self.peers[j].last_rx = NONE;
                            self.deliver(cell, sop, eop, frame.payload);
                        } else {
                            self.accept_transit(j, cell, frame.payload);
                        }
                    }
                }
            }
        }
    }

    /// The cell to send to `to` in this slot; `None` once `to` is considered failed, so that
    /// it detects our silence in turn (§3.5: detection is symmetric).
    pub fn poll_tx(&mut self, slot: u64, to: NodeId) -> Option<Frame<P>> {
        let mut out = Rx::Missing;
        self.poll_tx_into(slot, to, &mut out);
        match out {
            Rx::Cell(frame) => Some(frame),
            _ => None,
        }
    }

    /// [`Node::poll_tx`] written in place, as the cell leaves this node: `Rx::Cell`, or
    /// `Rx::Missing` for silence. A driver that keeps its delay line as `Rx` values (the slotted
    /// simulator) writes each cell straight into it, with no copy of a cell assembled on the
    /// stack.
    #[inline(always)]
    pub fn poll_tx_into(&mut self, slot: u64, to: NodeId, out: &mut Rx<P>) {
        let j = to.idx();
        if j >= self.n || !self.peers[j].has(ALIVE) {
            *out = Rx::Missing;
            return;
        }
        if slot != self.tx_slot_now {
            self.tx_slot_now = slot;
            self.sent_this_slot.clear();
            if slot.is_multiple_of(SWEEP_SLOTS) && !self.large_rings.is_empty() {
                self.sweep_rings();
            }
        }
        self.sent_this_slot.push(j as u16);
        let lcd = self.peers[j].take(LCD_OUT);
        let feedback = self.feedback_for(slot, j);
        if !self.peers[j].pending.is_empty() {
            self.check_pending(slot, j);
        }
        if let Some(&x) = (!self.unreachable.is_empty())
            .then(|| self.unreachable.get(self.notice_cursor[j] as usize))
            .flatten()
            && self.notice_may_go(slot, j)
        {
            self.notice_cursor[j] += 1;
            self.stats.notices_sent += 1;
            let cell = self.control_cell(x, Kind::Unreachable);
            self.peers[j].last_tx = Some(cell);
            *out = Rx::Cell(Frame {
                cell,
                feedback,
                lcd,
                payload: P::default(),
            });
            return;
        }
        for c in 0..self.cfg.classes as usize {
            if let Some(entry) = self.pop_q(c, j) {
                self.stats.data_cells_sent += 1;
                self.peers[j].last_tx = Some(entry.cell);
                self.last_tx_payload[j] = entry.payload;
                self.on_departure(slot, j, c, entry);
                *out = Rx::Cell(Frame {
                    cell: entry.cell,
                    feedback,
                    lcd,
                    payload: entry.payload,
                });
                return;
            }
        }
        self.stats.idle_cells_sent += 1;
        self.peers[j].last_tx = None;
        *out = Rx::Cell(Frame {
            cell: self.control_cell(to, Kind::Idle),
            feedback,
            lcd,
            payload: P::default(),
        });
    }

    /// Gives up on the cells from `src` in `class` missing ahead of cells already here, and
    /// queues for delivery what they held back; returns how many sequence numbers were given up.
    ///
    /// §3.5 leaves cells lost with a failed node to the transport above, which can recover only
    /// if the cells behind the loss are delivered. The model never calls this (a simulated flow
    /// that lost cells simply does not complete); the live driver does, some epochs after a
    /// peer failed, so that unmodified applications keep talking. Nothing else changes.
    pub fn skip_lost_cells(&mut self, src: NodeId, class: u8) -> u32 {
        let Some(&ri) = self.reasm_of.get(class as usize * self.n + src.idx()) else {
            return 0;
        };
        if ri == NONE {
            return 0;
        }
        let skipped = self.reasm[ri as usize].skip_to_held();
        while let Some(h) = self.reasm[ri as usize].pop_ready() {
            self.push_delivery(src, class, h);
        }
        skipped
    }

    /// The next in-order delivery, if any.
    pub fn poll_delivered(&mut self) -> Option<Delivery<P>> {
        self.delivered.pop_front()
    }

    pub fn has_deliveries(&self) -> bool {
        !self.delivered.is_empty()
    }

    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// `lane(c, j)` if it exists: for hints, which must not panic on a bad id.
    #[inline]
    fn lane_get(&self, c: usize, j: usize) -> Option<&Lane> {
        if c == 0 {
            self.peers.get(j).map(|p| &p.lane)
        } else if j < self.n {
            self.low.get((c - 1) * self.n + j)
        } else {
            None
        }
    }

    #[inline]
    pub(crate) fn lane(&self, c: usize, j: usize) -> &Lane {
        if c == 0 {
            &self.peers[j].lane
        } else {
            &self.low[(c - 1) * self.n + j]
        }
    }

    #[inline]
    pub(crate) fn lane_mut(&mut self, c: usize, j: usize) -> &mut Lane {
        if c == 0 {
            &mut self.peers[j].lane
        } else {
            &mut self.low[(c - 1) * self.n + j]
        }
    }

    /// Appends to `Q[c][j]`, keeping the counters.
    #[inline(always)]
    pub(crate) fn push_q(&mut self, c: usize, j: usize, entry: Queued<P>) {
        let lane = if c == 0 {
            &mut self.peers[j].lane
        } else {
            &mut self.low[(c - 1) * self.n + j]
        };
        self.cells.push_back(&mut lane.q, entry);
        // Unreachable within the limits `NodeConfig::validate` sets (see `Lane::q_len`).
        lane.q_len = lane.q_len.checked_add(1).expect("a queue outgrew 16 bits");
        let len = lane.q_len;
        if c > 0 && entry.origin == Origin::Transit {
            self.low_transit[(c - 1) * self.n + j] += 1;
        }
        self.queued_total += 1;
        if entry.origin == Origin::Transit {
            self.transit_total += 1;
            self.stats.max_transit_total = self.stats.max_transit_total.max(self.transit_total);
        }
        self.stats.max_queue = self.stats.max_queue.max(len as u32);
        self.stats.max_queued_total = self.stats.max_queued_total.max(self.queued_total);
    }

    /// Takes the head of `Q[c][j]`.
    #[inline]
    pub(crate) fn pop_q(&mut self, c: usize, j: usize) -> Option<Queued<P>> {
        let lane = if c == 0 {
            &mut self.peers[j].lane
        } else {
            &mut self.low[(c - 1) * self.n + j]
        };
        let entry = self.cells.pop_front(&mut lane.q)?;
        lane.q_len -= 1;
        lane.departed = lane.departed.wrapping_add(1);
        if entry.origin == Origin::Transit {
            self.transit_total -= 1;
            if c > 0 {
                self.low_transit[(c - 1) * self.n + j] -= 1;
            }
        }
        self.queued_total -= 1;
        Some(entry)
    }

    /// Removes from `Q[c][j]` the entries `keep` rejects, handing them to the caller in order.
    pub(crate) fn take_from_q(
        &mut self,
        c: usize,
        j: usize,
        keep: impl FnMut(&Queued<P>) -> bool,
    ) -> Vec<Queued<P>> {
        let lane = if c == 0 {
            &mut self.peers[j].lane
        } else {
            &mut self.low[(c - 1) * self.n + j]
        };
        let mut taken = Vec::new();
        let count = self.cells.retain(&mut lane.q, keep, |e| taken.push(e));
        lane.q_len -= count as u16;
        // Removed cells count as departed, so that a ticket never waits for a cell that is gone
        // (it may now pass a little early for a cell behind a removed one: feedback errs low).
        lane.departed = lane.departed.wrapping_add(count as u16);
        self.queued_total -= count as u64;
        let transit = taken.iter().filter(|e| e.origin == Origin::Transit).count();
        self.transit_total -= transit as u64;
        if c > 0 {
            self.low_transit[(c - 1) * self.n + j] -= transit as u32;
        }
        taken
    }

    fn control_cell(&self, dst: NodeId, kind: Kind) -> CellRec {
        CellRec {
            dst,
            src: self.me,
            seq: 0,
            len: 0,
            class: 0,
            kind,
        }
    }

    /// The rate-limit feedback for peer `j` (Eq. 1, 6 and App. C), sent in `slot`: how many
    /// epochs `j` must let pass, counted as Eq. 2 counts them, before releasing the next cell of
    /// the subflow whose last cell joined our `Q[class][k]`.
    ///
    /// It is the larger of two quantities:
    /// - what Eq. 1 and 6 count, everything the subflow shares the link with: `len(Q_jk)` plus,
    ///   with ready queues, `len(R_jk)`, minus the peer's own cell while it is still queued
    ///   (our reading of Eq. 6's "− 1": the sender's own cell is not competition for its next
    ///   one). Counting the own cell too (Eq. 1 literally) holds a subflow alone on its path to
    ///   one cell every other epoch: an uncontended flow then gets 74% of its rate and only 47%
    ///   of 200 random flows on 512 nodes come within 10% of their max-min rate (§7.2: 99%);
    /// - the epochs after which the peer's next opportunity to send to us delivers the next cell
    ///   only once the own cell has left. The schedule is static, so this is exact; without it
    ///   the "− 1" lets a second cell of the subflow arrive while the first is still queued,
    ///   whenever our slot to `k` falls late in the epoch, and Eq. 3 and 5 break.
    ///
    /// For a lower class the cells and ready flows of every higher class are added (App. C).
    #[inline]
    fn feedback_for(&self, slot: u64, j: usize) -> u16 {
        let peer = &self.peers[j];
        let v = peer.last_rx;
        if v == NONE {
            return 0;
        }
        let (class, k) = split_last_rx(v);
        let lane = self.lane(class, k);
        let mut epochs = 0u64;
        let ahead = peer.rx_ticket.wrapping_sub(lane.departed) as i16;
        if ahead >= 0 {
            let e = self.cfg.epoch_slots as u64;
            // Our slots to k that will carry unreachable notices first: while cells wait, one
            // notice per `NOTICE_EVERY_EPOCHS`, the first when the last one is that old.
            let notices = if self.unreachable.is_empty() {
                0
            } else {
                let waiting = (self.unreachable.len() - self.notice_cursor[k] as usize) as u64;
                let until = self.slots_until_notice_over_data(slot, k).div_ceil(e);
                let ahead = ahead as u64;
                if waiting == 0 || ahead < until {
                    0
                } else {
                    waiting.min(1 + (ahead - until) / NOTICE_EVERY_EPOCHS)
                }
            };
            let ahead = ahead as u64 + notices;
            let d = self.cfg.delay_slots as u64;
            let phase_after = |from: u64, phase: u16| from + (phase as u64 + e - from % e) % e;
            // Our cell to k leaves at our next slot to k, this one if we have not sent to k yet
            // in it (its channel comes later), plus an epoch per cell ahead of it.
            let later_this_slot = !self.sent_this_slot.contains(&(k as u16));
            let leaves =
                phase_after(slot + !later_this_slot as u64, self.peers[k].tx_phase) + ahead * e;
            // With no wait the peer's next cell reaches us at `sends + d`; it must come after.
            let sends = phase_after(slot + d, peer.rx_phase);
            epochs = (leaves + 1).saturating_sub(sends + d).div_ceil(e);
        }
        // Everything the peer's subflow shares the link with, queued ahead or behind its cell.
        let own = (ahead >= 0) as u32;
        let mut drain = lane.q_len as u32 - own;
        if self.cfg.ready_queue {
            drain += lane.ready_len as u32;
        }
        let mut load = drain.max(epochs as u32);
        for c in 0..class {
            let higher = self.lane(c, k);
            load += higher.q_len as u32 + higher.ready_len as u32;
        }
        load.min(MAX_FEEDBACK as u32) as u16
    }

    fn accept_transit(&mut self, j: usize, cell: CellRec, payload: P) {
        let (k, c) = (cell.dst.idx(), cell.class as usize);
        if k >= self.n || c >= self.cfg.classes as usize || cell.src.idx() != j {
            self.stats.protocol_errors += 1;
            self.peers[j].last_rx = NONE;
            return;
        }
        self.peers[j].last_rx = join_last_rx(c, k);
        if !self.peers[k].has(ALIVE) {
            self.stats.discarded_for_failure += 1;
            // The cell joined no queue: the feedback must not count it as still there.
            self.peers[j].rx_ticket = self.lane(c, k).departed.wrapping_sub(1);
            return;
        }
        if c > 0 && self.low_transit[(c - 1) * self.n + k] >= self.cfg.low_class_queue_cells {
            self.stats.tail_drops += 1;
            self.peers[j].set(LCD_OUT, true);
            self.peers[j].rx_ticket = self.lane(c, k).departed.wrapping_sub(1);
            return;
        }
        let lane = self.lane(c, k);
        self.peers[j].rx_ticket = lane.departed.wrapping_add(lane.q_len);
        #[cfg(debug_assertions)]
        if c == 0 && self.cfg.check_bounds {
            let bit = k * self.n + j;
            let (w, b) = (bit / 64, bit % 64);
            assert!(
                self.present[w] & (1 << b) == 0,
                "{}: a second cell of subflow {} -> {} -> {} joined Q; Eq. 3/5 rest on one",
                self.me,
                cell.src,
                self.me,
                cell.dst
            );
            self.present[w] |= 1 << b;
        }
        self.stats.transit_cells += 1;
        self.push_q(
            c,
            k,
            Queued {
                cell,
                payload,
                origin: Origin::Transit,
            },
        );
    }

    /// Whether a waiting notice may go to `j` now: always in a cell that would carry nothing,
    /// ahead of data only once per `NOTICE_EVERY_EPOCHS` (which it then records).
    fn notice_may_go(&mut self, slot: u64, j: usize) -> bool {
        let idle = (0..self.cfg.classes as usize).all(|c| self.lane(c, j).q_len == 0);
        if idle {
            return true;
        }
        if self.slots_until_notice_over_data(slot, j) == 0 {
            self.notice_over_data[j] = slot;
            return true;
        }
        false
    }

    /// Slots from `slot` until a notice may next take a data cell's place towards `j`.
    fn slots_until_notice_over_data(&self, slot: u64, j: usize) -> u64 {
        match self.notice_over_data[j] {
            NEVER => 0,
            last => (last + NOTICE_EVERY_EPOCHS * self.cfg.epoch_slots as u64).saturating_sub(slot),
        }
    }

    /// App. C and D: `j` dropped our last cell to it (tail drop, or it arrived corrupt), or may
    /// have (its own cell to us arrived corrupt, last-cell-dropped bit included). The cell goes
    /// back into its class's queue to `j`, at the tail: strict priority still decides when it
    /// goes, so a lower-class cell that keeps meeting a full queue cannot take slots from the
    /// higher classes, and it does not block the cells behind it (at the head, a first-hop cell
    /// refused by a full queue downstream would hold back the second-hop cells that drain that
    /// very queue, and lower classes deadlock). A duplicate is dropped by the destination's
    /// reassembly. A lost notice is sent again; an idle cell needs nothing.
    fn resend_last(&mut self, j: usize) {
        let Some(cell) = self.peers[j].last_tx.take() else {
            return;
        };
        let payload = self.last_tx_payload[j];
        match cell.kind {
            Kind::Idle => {}
            Kind::Unreachable => {
                self.notice_cursor[j] = self.notice_cursor[j].saturating_sub(1);
            }
            Kind::Data { .. } => {
                self.stats.retransmissions += 1;
                let entry = Queued {
                    cell,
                    payload,
                    origin: Origin::Orphan,
                };
                self.push_q(cell.class as usize, j, entry);
            }
        }
    }

    /// Clears the debug presence bit of a transit cell leaving or discarded from a queue.
    pub(crate) fn transit_left(&mut self, _cell: &CellRec) {
        #[cfg(debug_assertions)]
        if _cell.class == 0 && self.cfg.check_bounds {
            let bit = _cell.dst.idx() * self.n + _cell.src.idx();
            self.present[bit / 64] &= !(1 << (bit % 64));
        }
    }

    /// Bookkeeping for a cell that just left `Q[c][j]` towards `j`.
    fn on_departure(&mut self, slot: u64, j: usize, c: usize, entry: Queued<P>) {
        match entry.origin {
            Origin::Transit => self.transit_left(&entry.cell),
            Origin::Orphan => {}
            Origin::Local => {
                let f = self.flow_of[c * self.n + entry.cell.dst.idx()];
                debug_assert!(f != NONE, "a local cell outlived its flow");
                if self.cfg.ready_queue {
                    self.lane_mut(c, j).local_in_q = false;
                }
                let flow = &mut self.flows[f as usize];
                debug_assert_eq!(flow.subs[j].state, SubState::Queued);
                if entry.cell.dst.idx() == j {
                    // The direct subflow has no remote queue: no feedback to wait for. `settle`
                    // decides its next state; until then it holds nothing.
                    flow.subs[j].state = SubState::Idle;
                    flow.refs -= 1;
                    self.settle(f, j, slot);
                } else {
                    // The queue entry's reference passes to the in-flight record.
                    flow.subs[j].state = SubState::InFlight;
                    self.inflight_slab
                        .push_back(&mut self.peers[j].inflight, (slot, f));
                }
                if self.cfg.ready_queue {
                    self.promote(c, j);
                }
                self.maybe_free(f);
            }
        }
    }

    fn deliver(&mut self, cell: CellRec, sop: bool, eop: bool, payload: P) {
        let c = cell.class as usize;
        if cell.src.idx() >= self.n || c >= self.cfg.classes as usize {
            self.stats.protocol_errors += 1;
            return;
        }
        let ri = match self.reasm_of[c * self.n + cell.src.idx()] {
            NONE => {
                self.reasm.push(Reassembly::default());
                let ri = self.reasm.len() - 1;
                self.reasm_of[c * self.n + cell.src.idx()] = ri as u32;
                ri
            }
            ri => ri as usize,
        };
        let held = Held {
            len: cell.len,
            sop,
            eop,
            payload,
        };
        let was_large = self.reasm[ri].is_large();
        let placed = self.reasm[ri].place(cell.seq, held);
        if !was_large && self.reasm[ri].is_large() {
            self.large_rings.push(ri as u32);
        }
        match placed {
            Placed::InOrder => {
                self.push_delivery(cell.src, cell.class, held);
                while let Some(h) = self.reasm[ri].pop_ready() {
                    self.push_delivery(cell.src, cell.class, h);
                }
            }
            Placed::Buffered => {
                let held_bytes = self.reasm[ri].held_bytes();
                self.stats.max_reorder_bytes = self.stats.max_reorder_bytes.max(held_bytes);
            }
            Placed::Duplicate => self.stats.duplicates += 1,
        }
    }

    /// Frees the reassembly rings that stayed idle and empty since the previous sweep (see
    /// `Reassembly::release_if_idle`); the others stay listed.
    #[cold]
    fn sweep_rings(&mut self) {
        let reasm = &mut self.reasm;
        self.large_rings
            .retain(|&ri| reasm[ri as usize].release_if_idle());
    }

    fn push_delivery(&mut self, src: NodeId, class: u8, h: Held<P>) {
        self.stats.cells_delivered += 1;
        self.stats.bytes_delivered += h.len as u64;
        self.delivered.push_back(Delivery {
            src,
            class,
            len: h.len,
            sop: h.sop,
            eop: h.eop,
            payload: h.payload,
        });
    }
}
