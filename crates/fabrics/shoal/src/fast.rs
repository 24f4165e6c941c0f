//! The fast rack engine: the protocol of `shoal-node` (§3.3: Eq. 1-6, ready queues, the age
//! rule, reassembly), re-implemented with its state owned by the rack and laid out for the
//! slot loop. The sans-IO [`shoal_node::Node`] stays the reference model; this engine exists
//! only in the simulator and is kept equal to it by the differential harness
//! (`tests/differential.rs`), which demands identical run outputs.
//!
//! Layout. What node `i` keeps about peer `j` (its queue `Q_ij` and ready queue `R_ij`, the
//! pending and in-flight lists of the subflows via `j`, the feedback bookkeeping) is one
//! [`Pair`] record at `[(j − i) mod N][i]`: in a slot of the propagation-aware and round-robin
//! schedules all nodes talk to peers at similar offsets, so one slot's walk over the nodes reads
//! records that lie next to each other instead of one cache line in each node's private array.
//! Queued cells are 16-byte records in per-node slabs. That order alone does not pay: the
//! second hop of every cell goes to a queue picked by the traffic, so from 192 nodes on the
//! slot loop prefetches as the node engine does (records two nodes ahead, the lines they name
//! one node ahead); BENCHMARKS.md has the figures.
//!
//! Parts and threads. Within a slot a node touches only its own records, and a cell sent in
//! slot `t` lands at `t + delay` with `delay ≥ 1`, so the nodes of one slot are independent.
//! The rack is cut into parts of consecutive nodes, each owning its nodes' records (the pair
//! records at `[(j − i) mod N][i − base]` within the part) and its senders' place on the
//! wire; with more than one thread the parts of a slot run side by side (one barrier per slot,
//! since the hosts act between slots) and their deliveries are taken in node order, so a run's
//! outputs are identical for every thread count (the differential harness checks 1, 2 and 3).
//!
//! Scope. The engine covers one traffic class, no failures and no header corruption: the runs
//! of Figs. 12-16 and most sweeps. [`unsupported`] names what it lacks; the rack runs such a
//! scenario on the node engine and says so (`engine_fallback` counter, a note on stderr).
//!
//! Observation. With `rack.breakdown` each part also keeps the stamps of `breakdown.rs` for
//! its nodes' cells and subflows, taken at the points below where the protocol moves a cell
//! or a subflow; a sent cell's stamps reach the receiver's part between slots. Without it
//! `trace` is `None` and each of those points costs one untaken branch.

use crate::breakdown::{Stamps, Trace, cell_key};
use crate::config::RackConfig;
use crate::endpoint::PeerTable;
use crate::host::FlowTag;
use shoal_base::{Fifo, NodeId, Slab};
use shoal_engine::{IDLE, SlotSchedule};
use shoal_node::flow::{LocalFlow, SubState};
use shoal_node::reasm::{Held, Placed, Reassembly};
use shoal_node::{Delivery, Kind};
use shoal_node::{MAX_FEEDBACK, NodeStats};
use shoal_workload::Flow;
use std::ops::{Index, IndexMut};

/// Why the fast engine cannot run `cfg`, or `None` when it can.
pub fn unsupported(cfg: &RackConfig) -> Option<&'static str> {
    if cfg.classes > 1 {
        Some("traffic classes (App. C)")
    } else if !cfg.failures.is_empty() {
        Some("failures (§3.5)")
    } else if cfg.header_bit_error_rate > 0.0 {
        Some("header corruption (App. D)")
    } else {
        None
    }
}

const NONE: u32 = u32::MAX;
const NO_PEER: u16 = u16::MAX;
/// As `shoal_node`: the reassembly rings left idle are swept this often, in slots.
const SWEEP_SLOTS: u64 = 4096;
/// As `shoal_node`: the age rule's exponent cap.
const AGE_CAP: u64 = 31;

/// What node `i` keeps about peer `j`; see the module documentation for its place. One cache
/// line each: at its natural 56 bytes three records in four straddle two lines, and a slot's
/// records are read at random second hops (BENCHMARKS.md, "Instructions and cache misses").
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Pair {
    /// `Q_ij`: entries in the node's cell slab.
    q: Fifo,
    /// `R_ij`: local flows allowed to put a cell into `q` (Eq. 4).
    ready: Fifo,
    /// Local flows whose subflow via `j` waits for Eq. 2 or the age rule.
    pending: Fifo,
    /// (slot sent, flow) of our cells `j` has not acknowledged with feedback.
    inflight: Fifo,
    q_len: u16,
    ready_len: u16,
    /// Cells that left `q` from its head, wrapping (tickets count against it).
    departed: u16,
    /// `j`'s last cell leaves its queue here once `departed` of that queue passes this.
    rx_ticket: u16,
    /// Destination of the queue `j`'s last cell joined here, or `NO_PEER`.
    last_rx: u16,
    tx_phase: u16,
    rx_phase: u16,
    local_in_q: bool,
    /// The slot in which we last transmitted to `j` (the node's `sent_this_slot`).
    sent_in: u64,
}

/// A cell as it waits in a queue or travels: 16 bytes.
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    dst: u16,
    src: u16,
    seq: u16,
    len: u16,
    payload: FlowTag,
    sop: bool,
    eop: bool,
    /// Our own cell (first hop) rather than one in transit.
    local: bool,
}

/// One cell on the wire, in its sender's place (`[sender][channel]`).
#[derive(Clone, Copy, Debug)]
struct Landing {
    /// `false`: an idle cell (feedback only).
    data: bool,
    feedback: u16,
    cell: Cell,
}

const EMPTY_LANDING: Landing = Landing {
    data: false,
    feedback: 0,
    cell: Cell {
        dst: 0,
        src: 0,
        seq: 0,
        len: 0,
        payload: FlowTag(0),
        sop: false,
        eop: false,
        local: false,
    },
};

/// The state of one node that is not about one peer: its slabs, local flows and reassembly.
struct NodeState {
    cells: Slab<Cell>,
    flow_slab: Slab<u32>,
    inflight_slab: Slab<(u64, u32)>,
    flows: Vec<LocalFlow<FlowTag>>,
    free_flows: Vec<u32>,
    /// `[dst]` → index into `flows`, or `NONE`.
    flow_of: Vec<u32>,
    next_seq: Vec<u16>,
    /// Peers in transmit order within an epoch (by slot, then id).
    tx_order: Vec<u16>,
    reasm_of: Vec<u32>,
    reasm: Vec<Reassembly<FlowTag>>,
    large_rings: Vec<u32>,
    queued_total: u64,
    transit_total: u64,
    tx_slot_now: u64,
    scratch: Vec<u32>,
    stats: NodeStats,
}

/// Rack-wide constants of the protocol.
#[derive(Clone, Copy)]
struct Params {
    n: usize,
    epoch: u64,
    delay: u64,
    payload_bytes: u16,
    ready_queue: bool,
    age_rule: bool,
    interleave: bool,
}

/// The states of the nodes `base..` of a part, indexed by node id.
struct Nodes {
    base: usize,
    v: Vec<NodeState>,
}

impl Index<usize> for Nodes {
    type Output = NodeState;
    #[inline(always)]
    fn index(&self, i: usize) -> &NodeState {
        &self.v[i - self.base]
    }
}

impl IndexMut<usize> for Nodes {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut NodeState {
        &mut self.v[i - self.base]
    }
}

/// Where node `i`'s record of peer `j` lies in a part of `len` nodes from `base`.
#[inline(always)]
fn pair_slot(n: usize, base: usize, len: usize, i: usize, j: usize) -> usize {
    let off = if j >= i { j - i } else { j + n - i };
    off * len + (i - base)
}

/// The slot being run and its phases in the epoch, found once per slot: the feedback's
/// arithmetic on phases (Eq. 1-3) would otherwise divide by the epoch four times per
/// node-channel-slot, and a 64-bit division costs tens of cycles.
#[derive(Clone, Copy)]
struct Clock {
    slot: u64,
    /// `slot mod epoch`, `(slot + 1) mod epoch`, `(slot + delay) mod epoch`.
    now: u64,
    next: u64,
    delayed: u64,
}

impl Clock {
    fn new(slot: u64, p: &Params) -> Self {
        Clock {
            slot,
            now: slot % p.epoch,
            next: (slot + 1) % p.epoch,
            delayed: (slot + p.delay) % p.epoch,
        }
    }
}

/// The first slot from `from` (whose phase is `from_phase`) in which the phase is `phase`.
#[inline(always)]
fn phase_after(from: u64, from_phase: u64, phase: u16, epoch: u64) -> u64 {
    let phase = phase as u64;
    from + if phase >= from_phase {
        phase - from_phase
    } else {
        phase + epoch - from_phase
    }
}

/// The age rule, `backlog ≤ 2^age` with `age = min(⌊(slot − start) / epoch⌋, AGE_CAP)`,
/// evaluated without dividing: it holds iff `age ≥ ⌈log2 backlog⌉ =: b`, that is iff
/// `b ≤ AGE_CAP` and `slot − start ≥ b · epoch`.
#[inline(always)]
fn age_rule(start_slot: u64, backlog: u64, slot: u64, epoch: u64) -> bool {
    if backlog <= 1 {
        return true;
    }
    let bits = (64 - (backlog - 1).leading_zeros()) as u64;
    bits <= AGE_CAP && slot.saturating_sub(start_slot) >= bits * epoch
}

/// Everything the protocol keeps for one part of the rack: the nodes `base..base + len`.
struct Core {
    p: Params,
    /// The slot `run_slot` is running.
    clock: Clock,
    base: usize,
    len: usize,
    /// `[(j − i) mod N][i − base]`.
    pairs: Vec<Pair>,
    nodes: Nodes,
    /// In-order deliveries of this slot: (destination, payload, bytes), in node order.
    delivered: Vec<(u16, Delivery<FlowTag>)>,
    /// Issue prefetch hints (from the node engine's threshold on, `HINTS_FROM_NODES`).
    hints: bool,
    /// The stamps of `rack.breakdown` (`breakdown.rs`); `None`, and never looked at past a
    /// branch, without it.
    trace: Option<Box<Trace>>,
}

/// The fast engine of one run.
pub(crate) struct FastRack {
    /// Consecutive parts of the rack, one per thread.
    parts: Vec<Core>,
    channels: usize,
    /// Who sends to whom: `[phase][receiver][channel]` → sender, or `IDLE`.
    senders: Vec<u16>,
    /// The delay line: `delay + 1` frames of `[sender][channel]` landings.
    ring: Vec<Landing>,
    slot: u64,
    /// Threads for the parts after the first (which the caller's thread runs), kept for the
    /// run: starting and joining threads every slot cost 40-47 µs against 439 µs of work per
    /// slot at 512 nodes (BENCHMARKS.md). `None` with one part.
    pool: Option<rayon::ThreadPool>,
    /// With `rack.breakdown`: the stamps of the cells sent in a slot, on their way to the
    /// receivers' parts (kept to reuse its memory).
    moving: Vec<(u16, u64, Stamps)>,
}

impl FastRack {
    /// The engine for `cfg`, its nodes cut into `threads` parts (at most one per node) that
    /// run side by side.
    pub(crate) fn new(
        cfg: &RackConfig,
        table: &PeerTable,
        tx_slot: impl Fn(usize, usize) -> u16,
        threads: usize,
    ) -> Result<Self, rayon::ThreadPoolBuildError> {
        let n = cfg.nodes as usize;
        let channels = cfg.channels as usize;
        let p = Params {
            n,
            epoch: table.epoch(),
            delay: cfg.delay_slots as u64,
            payload_bytes: cfg.payload_bytes(),
            ready_queue: cfg.ready_queue,
            age_rule: cfg.age_rule,
            interleave: cfg.interleave_flows,
        };
        let hints = n >= crate::rack::HINTS_FROM_NODES;
        let count = threads.clamp(1, n.max(1));
        let parts = (0..count)
            .map(|t| {
                let (base, end) = (t * n / count, (t + 1) * n / count);
                Core::new(p, base, end - base, hints, cfg.breakdown, &tx_slot)
            })
            .collect();
        let width = n * channels;
        let mut senders = vec![IDLE; p.epoch as usize * width];
        for phase in 0..p.epoch {
            let at = phase as usize * width;
            for (x, &j) in table.peers(phase).iter().enumerate() {
                if j != IDLE {
                    let (i, ch) = (x / channels, x % channels);
                    let place = &mut senders[at + j as usize * channels + ch];
                    debug_assert_eq!(*place, IDLE, "two senders on one receiver's channel");
                    *place = i as u16;
                }
            }
        }
        let pool = match count {
            1 => None,
            _ => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(count - 1)
                    .thread_name(|t| format!("shoal-part-{}", t + 1))
                    .build()?,
            ),
        };
        Ok(FastRack {
            parts,
            channels,
            senders,
            ring: vec![EMPTY_LANDING; (cfg.delay_slots as usize + 1) * width],
            slot: 0,
            pool,
            moving: Vec::new(),
        })
    }

    /// The next slot to run.
    pub(crate) fn slot(&self) -> u64 {
        self.slot
    }

    /// Hands `bytes` from `src` to `dst` to the source node; false when it refuses them (as
    /// `Node::submit` does).
    pub(crate) fn submit(
        &mut self,
        slot: u64,
        flow: &Flow,
        packet_bytes: u32,
        tag: FlowTag,
    ) -> bool {
        let (src, dst) = (flow.src.idx(), flow.dst.idx());
        let n = self.parts[0].p.n;
        if dst == src || dst >= n || flow.class >= 1 || flow.bytes == 0 || packet_bytes == 0 {
            return false;
        }
        let Some(part) = self.parts.iter_mut().find(|x| src < x.base + x.len) else {
            return false;
        };
        part.submit(slot, src, dst, flow.bytes, packet_bytes, tag);
        true
    }

    /// Runs one slot: node by node, receptions in channel order, then transmissions, as
    /// `shoal_engine::SlottedEngine` drives the nodes; the parts side by side.
    pub(crate) fn step(&mut self, table: &PeerTable) {
        let s = self.slot;
        let c = self.channels;
        let p = self.parts[0].p;
        let width = p.n * c;
        let frames = p.delay + 1;
        let read = (s % frames) as usize;
        let write = ((s + p.delay) % frames) as usize;
        let (input, output) = {
            let (low, high) = self.ring.split_at_mut(read.max(write) * width);
            let (first, second) = (&mut low[read.min(write) * width..], &mut high[..width]);
            if read < write {
                (&*first, second)
            } else {
                (&*second, first)
            }
        };
        let wire = Wire {
            slot: s,
            channels: c,
            input,
            peers: table.peers(s),
            // What lands now was sent `delay` slots ago; before that, nothing was.
            senders: s.checked_sub(p.delay).map(|sent| {
                let at = (sent % p.epoch) as usize * width;
                &self.senders[at..at + width]
            }),
        };
        // Each part writes its own senders' places (cut here, without allocating per slot).
        if let [only] = &mut self.parts[..] {
            only.run_slot(&wire, output);
        } else {
            let wire = &wire;
            let pool = self
                .pool
                .as_ref()
                .expect("a pool whenever there are several parts");
            pool.in_place_scope(|scope| {
                let (first, others) = self.parts.split_first_mut().expect("parts are never empty");
                let (first_out, mut rest) = output.split_at_mut(first.len * c);
                for part in others {
                    let (mine, after) = rest.split_at_mut(part.len * c);
                    rest = after;
                    scope.spawn(move |_| part.run_slot(wire, mine));
                }
                first.run_slot(wire, first_out);
            });
        }
        self.move_stamps();
        self.slot += 1;
    }

    /// With `rack.breakdown`: hands the stamps of the cells sent in this slot to their
    /// receivers' parts, before any of them lands (the delay is at least one slot).
    fn move_stamps(&mut self) {
        let mut moving = std::mem::take(&mut self.moving);
        for part in &mut self.parts {
            if let Some(t) = part.trace.as_mut() {
                moving.append(&mut t.outbox);
            }
        }
        for (to, key, stamps) in moving.drain(..) {
            let part = self
                .parts
                .iter_mut()
                .find(|x| (to as usize) < x.base + x.len)
                .expect("a receiver in the rack");
            if let Some(t) = part.trace.as_mut() {
                t.incoming(key, stamps);
            }
        }
        self.moving = moving;
    }

    /// With `rack.breakdown`: the stamps of the cell of workload flow `tag` that arrived last
    /// at its destination `dst`, forgotten by the engine.
    pub(crate) fn take_last(&mut self, dst: u16, tag: u32) -> Option<Stamps> {
        let part = self
            .parts
            .iter_mut()
            .find(|x| (dst as usize) < x.base + x.len)?;
        part.trace.as_mut()?.take_last(tag)
    }

    /// Takes this slot's in-order deliveries, with their destinations, in node order.
    pub(crate) fn take_delivered(&mut self) -> impl Iterator<Item = (u16, Delivery<FlowTag>)> {
        self.parts.iter_mut().flat_map(|x| x.delivered.drain(..))
    }

    /// Nothing queued and no local flow active anywhere.
    pub(crate) fn is_quiet(&self) -> bool {
        self.nodes()
            .all(|x| x.queued_total == 0 && x.flows.len() == x.free_flows.len())
    }

    /// Cells queued over all nodes, and the longest single queue.
    pub(crate) fn queues(&self) -> (u64, u64) {
        let queued = self.nodes().map(|x| x.queued_total).sum();
        let longest = self
            .parts
            .iter()
            .flat_map(|x| &x.pairs)
            .map(|p| p.q_len as u64)
            .max()
            .unwrap_or(0);
        (queued, longest)
    }

    /// Each node's counters, in node order.
    pub(crate) fn stats(&self) -> impl Iterator<Item = &NodeStats> {
        self.nodes().map(|x| &x.stats)
    }

    fn nodes(&self) -> impl Iterator<Item = &NodeState> {
        self.parts.iter().flat_map(|x| &x.nodes.v)
    }
}

/// What one slot's parts read: the landings of this slot, `[sender][channel]`, the schedule's
/// peers of this slot and the senders of the landings.
struct Wire<'a> {
    slot: u64,
    channels: usize,
    input: &'a [Landing],
    /// `[node][channel]` → the peer it transmits to now, or `IDLE`.
    peers: &'a [u16],
    /// `[receiver][channel]` → who sent what lands now, or `IDLE`; `None` before anything can.
    senders: Option<&'a [u16]>,
}

impl Core {
    /// The part of the rack holding the nodes `base..base + len`.
    fn new(
        p: Params,
        base: usize,
        len: usize,
        hints: bool,
        breakdown: bool,
        tx_slot: &impl Fn(usize, usize) -> u16,
    ) -> Self {
        let n = p.n;
        let mut pairs = Vec::with_capacity(n * len);
        for off in 0..n {
            for i in base..base + len {
                let j = (i + off) % n;
                pairs.push(Pair {
                    q: Fifo::EMPTY,
                    ready: Fifo::EMPTY,
                    pending: Fifo::EMPTY,
                    inflight: Fifo::EMPTY,
                    q_len: 0,
                    ready_len: 0,
                    departed: 0,
                    rx_ticket: 0,
                    last_rx: NO_PEER,
                    tx_phase: if off == 0 { u16::MAX } else { tx_slot(i, j) },
                    rx_phase: if off == 0 { u16::MAX } else { tx_slot(j, i) },
                    local_in_q: false,
                    sent_in: u64::MAX,
                });
            }
        }
        let v = (base..base + len)
            .map(|i| {
                let mut tx_order: Vec<u16> = (0..n as u16).filter(|&j| j as usize != i).collect();
                tx_order.sort_by_key(|&j| (tx_slot(i, j as usize), j));
                NodeState {
                    cells: Slab::new(),
                    flow_slab: Slab::new(),
                    inflight_slab: Slab::new(),
                    flows: Vec::new(),
                    free_flows: Vec::new(),
                    flow_of: vec![NONE; n],
                    next_seq: vec![0; n],
                    tx_order,
                    reasm_of: vec![NONE; n],
                    reasm: Vec::new(),
                    large_rings: Vec::new(),
                    queued_total: 0,
                    transit_total: 0,
                    tx_slot_now: u64::MAX,
                    scratch: Vec::new(),
                    stats: NodeStats::default(),
                }
            })
            .collect();
        Core {
            p,
            clock: Clock::new(0, &p),
            base,
            len,
            pairs,
            nodes: Nodes { base, v },
            delivered: Vec::new(),
            hints,
            trace: breakdown.then(Box::default),
        }
    }

    /// The part's share of one slot; `out` is its senders' places on the wire.
    fn run_slot(&mut self, wire: &Wire<'_>, out: &mut [Landing]) {
        let (s, c) = (wire.slot, wire.channels);
        self.clock = Clock::new(s, &self.p);
        if let Some(t) = self.trace.as_mut() {
            t.now = s;
        }
        let end = self.base + self.len;
        for i in self.base..end {
            if self.hints {
                // Two stages, as the node engine's hints (BENCHMARKS.md): the records a node
                // reads first, two nodes ahead; the lines they name, one node ahead.
                if i + 2 < end {
                    self.hint_records(i + 2, wire);
                }
                if i + 1 < end {
                    self.hint_named(i + 1, wire);
                }
            }
            if let Some(senders) = wire.senders {
                for (ch, &j) in senders[i * c..(i + 1) * c].iter().enumerate() {
                    if j != IDLE {
                        self.receive(s, i, j as usize, &wire.input[j as usize * c + ch]);
                    }
                }
            }
            let mine = &mut out[(i - self.base) * c..(i - self.base + 1) * c];
            for (landing, &j) in mine.iter_mut().zip(&wire.peers[i * c..(i + 1) * c]) {
                if j != IDLE {
                    self.transmit(s, i, j as usize, landing);
                }
            }
        }
    }

    /// What lands at node `i` in this slot: (sender, landing) per channel.
    #[inline(always)]
    fn arrivals<'w>(i: usize, wire: &'w Wire<'_>) -> impl Iterator<Item = (usize, &'w Landing)> {
        let c = wire.channels;
        let senders = wire.senders.map_or(&[][..], |x| &x[i * c..(i + 1) * c]);
        senders
            .iter()
            .enumerate()
            .filter(|&(_, &j)| j != IDLE)
            .map(move |(ch, &j)| (j as usize, &wire.input[j as usize * c + ch]))
    }

    /// Hint, stage 1: node `i` will soon read its records about the peers it hears from and
    /// sends to, and the queue records of the arriving cells' destinations.
    #[inline(always)]
    fn hint_records(&self, i: usize, wire: &Wire<'_>) {
        for (from, landing) in Self::arrivals(i, wire) {
            shoal_base::hint::prefetch(&self.pairs[self.pair_index(i, from)]);
            let k = landing.cell.dst as usize;
            if landing.data && k != i {
                shoal_base::hint::prefetch(&self.pairs[self.pair_index(i, k)]);
            }
        }
        for &j in &wire.peers[i * wire.channels..(i + 1) * wire.channels] {
            if j != IDLE {
                shoal_base::hint::prefetch(&self.pairs[self.pair_index(i, j as usize)]);
            }
        }
    }

    /// Hint, stage 2: what the records of stage 1 name: the lane the feedback to each peer
    /// reads, the head entries of the queues sent from, the tails the arriving cells join.
    #[inline(always)]
    fn hint_named(&self, i: usize, wire: &Wire<'_>) {
        let node = &self.nodes[i];
        for (_, landing) in Self::arrivals(i, wire) {
            let k = landing.cell.dst as usize;
            if landing.data && k != i {
                node.cells
                    .prefetch_back(&self.pairs[self.pair_index(i, k)].q);
            }
        }
        for &j in &wire.peers[i * wire.channels..(i + 1) * wire.channels] {
            if j != IDLE {
                let pair = &self.pairs[self.pair_index(i, j as usize)];
                node.cells.prefetch_front(&pair.q);
                if pair.last_rx != NO_PEER {
                    shoal_base::hint::prefetch(
                        &self.pairs[self.pair_index(i, pair.last_rx as usize)],
                    );
                }
            }
        }
    }

    #[inline(always)]
    fn pair_index(&self, i: usize, j: usize) -> usize {
        pair_slot(self.p.n, self.base, self.len, i, j)
    }

    fn submit(
        &mut self,
        slot: u64,
        i: usize,
        dst: usize,
        bytes: u64,
        packet_bytes: u32,
        tag: FlowTag,
    ) {
        if let Some(t) = self.trace.as_mut() {
            t.now = slot;
        }
        let f = self.nodes[i].flow_of[dst];
        if f == NONE {
            let f = self.alloc_flow(i, dst, slot);
            self.nodes[i].flows[f as usize].push(bytes, packet_bytes, tag);
            self.start_subflows(i, f, slot);
        } else {
            let flow = &mut self.nodes[i].flows[f as usize];
            if !flow.has_data() {
                flow.start_slot = slot;
            }
            flow.push(bytes, packet_bytes, tag);
            self.wake_idle(i, f, slot);
        }
    }

    fn alloc_flow(&mut self, i: usize, dst: usize, slot: u64) -> u32 {
        let n = self.p.n;
        let node = &mut self.nodes[i];
        let f = match node.free_flows.pop() {
            Some(f) => f,
            None => {
                node.flows.push(LocalFlow::new(n));
                (node.flows.len() - 1) as u32
            }
        };
        node.flows[f as usize].reset(NodeId(dst as u16), 0, slot);
        node.flow_of[dst] = f;
        f
    }

    /// The phase of node `i`'s next transmission from `slot` on.
    fn next_tx_phase(&self, i: usize, slot: u64) -> u16 {
        let from = slot + (self.nodes[i].tx_slot_now == slot) as u64;
        (from % self.p.epoch) as u16
    }

    fn start_subflows(&mut self, i: usize, f: u32, slot: u64) {
        self.nodes[i].flows[f as usize].subs[i].state = SubState::Blocked;
        let phase = self.next_tx_phase(i, slot);
        let len = self.nodes[i].tx_order.len();
        let start = {
            let order = &self.nodes[i].tx_order;
            let pairs = &self.pairs;
            let (n, base, part) = (self.p.n, self.base, self.len);
            let tx = |j: usize| pairs[pair_slot(n, base, part, i, j)].tx_phase;
            order.partition_point(|&j| tx(j as usize) < phase) % len.max(1)
        };
        for k in (start..len).chain(0..start) {
            let j = self.nodes[i].tx_order[k] as usize;
            let x = self.pair_index(i, j);
            if let Some(t) = self.trace.as_mut() {
                t.free(i, f, j);
            }
            self.settle(i, f, j, x, slot);
        }
    }

    fn wake_idle(&mut self, i: usize, f: u32, slot: u64) {
        let mut idle = std::mem::take(&mut self.nodes[i].flows[f as usize].idle);
        let e = self.p.epoch as u32;
        let phase = self.next_tx_phase(i, slot) as u32;
        let (n, base, part) = (self.p.n, self.base, self.len);
        let pairs = &self.pairs;
        idle.sort_unstable_by_key(|&j| {
            let tx = pairs[pair_slot(n, base, part, i, j as usize)].tx_phase as u32;
            ((tx + e - phase) % e, j)
        });
        for &j in &idle {
            if self.nodes[i].flows[f as usize].subs[j as usize].state == SubState::Idle {
                let x = self.pair_index(i, j as usize);
                if let Some(t) = self.trace.as_mut() {
                    t.free(i, f, j as usize);
                }
                self.settle(i, f, j as usize, x, slot);
            }
        }
        idle.clear();
        let flow = &mut self.nodes[i].flows[f as usize];
        idle.append(&mut flow.idle);
        flow.idle = idle;
    }

    #[inline(always)]
    fn age_allows(&self, start_slot: u64, backlog: u64, slot: u64) -> bool {
        !self.p.age_rule || age_rule(start_slot, backlog, slot, self.p.epoch)
    }

    /// `x` is the index of the record `(i, j)` (as all `x` below: found once per
    /// node-channel-slot and passed on, not found again by each step).
    #[inline(always)]
    fn settle(&mut self, i: usize, f: u32, j: usize, x: usize, slot: u64) {
        let flow = &self.nodes[i].flows[f as usize];
        if !flow.has_data() {
            let flow = &mut self.nodes[i].flows[f as usize];
            flow.subs[j].state = SubState::Idle;
            flow.idle.push(j as u16);
            return;
        }
        let start = flow.start_slot;
        if !self.age_allows(start, self.pairs[x].q_len as u64, slot) {
            let node = &mut self.nodes[i];
            let flow = &mut node.flows[f as usize];
            flow.subs[j].state = SubState::Pending;
            flow.subs[j].feedback_at(0, slot);
            flow.refs += 1;
            node.flow_slab.push_back(&mut self.pairs[x].pending, f);
            return;
        }
        if let Some(t) = self.trace.as_mut() {
            t.admitted(i, f, j);
        }
        if self.p.ready_queue {
            let node = &mut self.nodes[i];
            let flow = &mut node.flows[f as usize];
            flow.subs[j].state = SubState::Ready;
            flow.refs += 1;
            let pair = &mut self.pairs[x];
            node.flow_slab.push_back(&mut pair.ready, f);
            pair.ready_len += 1;
            if !pair.local_in_q {
                self.promote(i, j, x);
            }
        } else {
            self.queue_local_cell(i, f, j, x);
        }
    }

    #[inline(always)]
    fn queue_local_cell(&mut self, i: usize, f: u32, j: usize, x: usize) {
        let (payload_bytes, interleave) = (self.p.payload_bytes, self.p.interleave);
        let node = &mut self.nodes[i];
        let flow = &mut node.flows[f as usize];
        let dst = flow.dst.idx();
        let (rec, payload) = flow.take_cell(
            NodeId(i as u16),
            payload_bytes,
            &mut node.next_seq[dst],
            interleave,
        );
        let Kind::Data { sop, eop } = rec.kind else {
            unreachable!("a flow cuts only data cells")
        };
        let cell = Cell {
            dst: dst as u16,
            src: i as u16,
            seq: rec.seq,
            len: rec.len,
            payload,
            sop,
            eop,
            local: true,
        };
        if let Some(t) = self.trace.as_mut() {
            t.cut(i, f, j, cell_key(cell.src, cell.dst, cell.seq));
        }
        flow.subs[j].state = SubState::Queued;
        flow.refs += 1;
        if self.p.ready_queue {
            self.pairs[x].local_in_q = true;
        }
        self.push_q(i, x, cell);
    }

    #[inline(always)]
    fn push_q(&mut self, i: usize, x: usize, cell: Cell) {
        let pair = &mut self.pairs[x];
        let node = &mut self.nodes[i];
        node.cells.push_back(&mut pair.q, cell);
        pair.q_len = pair.q_len.checked_add(1).expect("a queue outgrew 16 bits");
        let len = pair.q_len;
        node.queued_total += 1;
        let stats = &mut node.stats;
        if !cell.local {
            node.transit_total += 1;
            stats.max_transit_total = stats.max_transit_total.max(node.transit_total);
        }
        stats.max_queue = stats.max_queue.max(len as u32);
        stats.max_queued_total = stats.max_queued_total.max(node.queued_total);
    }

    #[inline(always)]
    fn promote(&mut self, i: usize, j: usize, x: usize) {
        loop {
            let pair = &mut self.pairs[x];
            if pair.local_in_q {
                return;
            }
            let node = &mut self.nodes[i];
            let Some(f) = node.flow_slab.pop_front(&mut pair.ready) else {
                return;
            };
            pair.ready_len -= 1;
            let flow = &mut node.flows[f as usize];
            flow.refs -= 1;
            if flow.subs[j].state != SubState::Ready {
                self.maybe_free(i, f);
                continue;
            }
            if !flow.has_data() {
                flow.subs[j].state = SubState::Idle;
                flow.idle.push(j as u16);
                self.maybe_free(i, f);
                continue;
            }
            self.queue_local_cell(i, f, j, x);
            return;
        }
    }

    fn check_pending(&mut self, i: usize, slot: u64, j: usize, x: usize) {
        let mut waiting = std::mem::take(&mut self.nodes[i].scratch);
        self.nodes[i]
            .flow_slab
            .drain(&mut self.pairs[x].pending, |f| waiting.push(f));
        let e = self.p.epoch;
        for &f in &waiting {
            let flow = &self.nodes[i].flows[f as usize];
            let sub = flow.subs[j];
            if sub.state != SubState::Pending {
                self.nodes[i].flows[f as usize].refs -= 1;
                self.maybe_free(i, f);
                continue;
            }
            let backlog = self.pairs[x].q_len as u64;
            let eq2 = backlog * e + sub.waited(slot) >= sub.fb as u64 * e;
            if eq2 && self.age_allows(flow.start_slot, backlog, slot) {
                self.nodes[i].flows[f as usize].refs -= 1;
                self.settle(i, f, j, x, slot);
                self.maybe_free(i, f);
            } else {
                let node = &mut self.nodes[i];
                node.flow_slab.push_back(&mut self.pairs[x].pending, f);
            }
        }
        waiting.clear();
        self.nodes[i].scratch = waiting;
    }

    fn settle_inflight(&mut self, i: usize, slot: u64, j: usize, x: usize, fb: u16) {
        let horizon = 2 * self.p.delay;
        while let Some(&(sent, f)) = self.nodes[i].inflight_slab.front(&self.pairs[x].inflight) {
            if sent + horizon > slot {
                break;
            }
            self.nodes[i]
                .inflight_slab
                .pop_front(&mut self.pairs[x].inflight);
            let flow = &mut self.nodes[i].flows[f as usize];
            if flow.subs[j].state != SubState::InFlight {
                flow.refs -= 1;
                self.maybe_free(i, f);
                continue;
            }
            flow.subs[j].feedback_at(fb, slot);
            if let Some(t) = self.trace.as_mut() {
                t.free(i, f, j);
            }
            if self.pairs[x].q_len as u64 >= fb as u64 {
                self.nodes[i].flows[f as usize].refs -= 1;
                self.settle(i, f, j, x, slot);
            } else {
                let node = &mut self.nodes[i];
                node.flows[f as usize].subs[j].state = SubState::Pending;
                node.flow_slab.push_back(&mut self.pairs[x].pending, f);
            }
            self.maybe_free(i, f);
        }
    }

    fn maybe_free(&mut self, i: usize, f: u32) {
        let node = &mut self.nodes[i];
        let flow = &node.flows[f as usize];
        if flow.refs == 0 && !flow.has_data() {
            let d = flow.dst.idx();
            if node.flow_of[d] == f {
                node.flow_of[d] = NONE;
                node.free_flows.push(f);
            }
        }
    }

    /// The rate-limit feedback node `i` sends `j` in `slot` (`Node::feedback_for`, one class,
    /// no unreachable notices).
    #[inline(always)]
    fn feedback_for(&self, i: usize, slot: u64, x: usize) -> u16 {
        let peer = &self.pairs[x];
        if peer.last_rx == NO_PEER {
            return 0;
        }
        let k = peer.last_rx as usize;
        let lane = &self.pairs[self.pair_index(i, k)];
        let mut epochs = 0u64;
        let ahead = peer.rx_ticket.wrapping_sub(lane.departed) as i16;
        if ahead >= 0 {
            let (e, d, clock) = (self.p.epoch, self.p.delay, self.clock);
            debug_assert_eq!(clock.slot, slot);
            let leaves = if lane.sent_in != slot {
                phase_after(slot, clock.now, lane.tx_phase, e)
            } else {
                phase_after(slot + 1, clock.next, lane.tx_phase, e)
            } + ahead as u64 * e;
            let sends = phase_after(slot + d, clock.delayed, peer.rx_phase, e);
            // Mostly at most one epoch: divide only beyond.
            epochs = match (leaves + 1).saturating_sub(sends + d) {
                0 => 0,
                x if x <= e => 1,
                x => x.div_ceil(e),
            };
        }
        let own = (ahead >= 0) as u32;
        let mut drain = lane.q_len as u32 - own;
        if self.p.ready_queue {
            drain += lane.ready_len as u32;
        }
        drain.max(epochs as u32).min(MAX_FEEDBACK as u32) as u16
    }

    /// Node `i` transmits to `j` in `slot` (`Node::poll_tx_into`).
    #[inline(always)]
    fn transmit(&mut self, slot: u64, i: usize, j: usize, out: &mut Landing) {
        if slot != self.nodes[i].tx_slot_now {
            self.nodes[i].tx_slot_now = slot;
            if slot.is_multiple_of(SWEEP_SLOTS) && !self.nodes[i].large_rings.is_empty() {
                let node = &mut self.nodes[i];
                let reasm = &mut node.reasm;
                node.large_rings
                    .retain(|&ri| reasm[ri as usize].release_if_idle());
            }
        }
        let x = self.pair_index(i, j);
        self.pairs[x].sent_in = slot;
        out.feedback = self.feedback_for(i, slot, x);
        if !self.pairs[x].pending.is_empty() {
            self.check_pending(i, slot, j, x);
        }
        let pair = &mut self.pairs[x];
        let node = &mut self.nodes[i];
        let Some(cell) = node.cells.pop_front(&mut pair.q) else {
            node.stats.idle_cells_sent += 1;
            out.data = false;
            return;
        };
        pair.q_len -= 1;
        pair.departed = pair.departed.wrapping_add(1);
        if !cell.local {
            node.transit_total -= 1;
        }
        node.queued_total -= 1;
        node.stats.data_cells_sent += 1;
        out.data = true;
        out.cell = cell;
        if let Some(t) = self.trace.as_mut() {
            t.left(cell_key(cell.src, cell.dst, cell.seq), j as u16, cell.local);
        }
        if cell.local {
            let f = node.flow_of[cell.dst as usize];
            debug_assert!(f != NONE, "a local cell outlived its flow");
            if self.p.ready_queue {
                pair.local_in_q = false;
            }
            let flow = &mut node.flows[f as usize];
            if cell.dst as usize == j {
                flow.subs[j].state = SubState::Idle;
                flow.refs -= 1;
                if let Some(t) = self.trace.as_mut() {
                    t.free(i, f, j);
                }
                self.settle(i, f, j, x, slot);
            } else {
                flow.subs[j].state = SubState::InFlight;
                node.inflight_slab.push_back(&mut pair.inflight, (slot, f));
            }
            if self.p.ready_queue {
                self.promote(i, j, x);
            }
            self.maybe_free(i, f);
        }
    }

    /// Node `i` receives from `j` in `slot` (`Node::handle_rx` for an intact cell).
    #[inline(always)]
    fn receive(&mut self, slot: u64, i: usize, j: usize, rx: &Landing) {
        let x = self.pair_index(i, j);
        if !self.pairs[x].inflight.is_empty() {
            self.settle_inflight(i, slot, j, x, rx.feedback);
        }
        if !rx.data {
            self.pairs[x].last_rx = NO_PEER;
            return;
        }
        let mut cell = rx.cell;
        if let Some(t) = self.trace.as_mut() {
            let key = cell_key(cell.src, cell.dst, cell.seq);
            if cell.dst as usize == i {
                t.arrived(key, cell.payload.0);
            } else {
                t.at_via(key);
            }
        }
        if cell.dst as usize == i {
            self.pairs[x].last_rx = NO_PEER;
            self.deliver(i, cell);
            return;
        }
        let k = cell.dst as usize;
        self.pairs[x].last_rx = k as u16;
        let y = self.pair_index(i, k);
        let lane = &self.pairs[y];
        let ticket = lane.departed.wrapping_add(lane.q_len);
        self.pairs[x].rx_ticket = ticket;
        self.nodes[i].stats.transit_cells += 1;
        cell.local = false;
        self.push_q(i, y, cell);
    }

    fn deliver(&mut self, i: usize, cell: Cell) {
        let src = cell.src as usize;
        let node = &mut self.nodes[i];
        let ri = match node.reasm_of[src] {
            NONE => {
                node.reasm.push(Reassembly::default());
                let ri = node.reasm.len() - 1;
                node.reasm_of[src] = ri as u32;
                ri
            }
            ri => ri as usize,
        };
        let was_large = node.reasm[ri].is_large();
        let held = Held {
            len: cell.len,
            sop: cell.sop,
            eop: cell.eop,
            payload: cell.payload,
        };
        let placed = node.reasm[ri].place(cell.seq, held);
        if !was_large && node.reasm[ri].is_large() {
            node.large_rings.push(ri as u32);
        }
        match placed {
            Placed::InOrder => {
                self.push_delivery(i, src, held);
                while let Some(h) = self.nodes[i].reasm[ri].pop_ready() {
                    self.push_delivery(i, src, h);
                }
            }
            Placed::Buffered => {
                let held = node.reasm[ri].held_bytes();
                node.stats.max_reorder_bytes = node.stats.max_reorder_bytes.max(held);
            }
            Placed::Duplicate => node.stats.duplicates += 1,
        }
    }

    fn push_delivery(&mut self, i: usize, src: usize, cell: Held<FlowTag>) {
        let stats = &mut self.nodes[i].stats;
        stats.cells_delivered += 1;
        stats.bytes_delivered += cell.len as u64;
        let d = Delivery {
            src: NodeId(src as u16),
            class: 0,
            len: cell.len,
            sop: cell.sop,
            eop: cell.eop,
            payload: cell.payload,
        };
        self.delivered.push((i as u16, d));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queued_cell_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Cell>(), 16);
    }

    #[test]
    fn a_pair_record_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Pair>(), 64);
    }

    proptest::proptest! {
        /// Against the rule as `shoal_node` writes it, with a division.
        #[test]
        fn the_age_rule_needs_no_division(
            start in 0u64..1 << 40,
            elapsed in 0u64..1 << 20,
            backlog in 0u64..=u16::MAX as u64,
            epoch in 1u64..4096,
        ) {
            let slot = start + elapsed;
            let age = ((slot - start) / epoch).min(AGE_CAP);
            proptest::prop_assert_eq!(
                age_rule(start, backlog, slot, epoch),
                backlog <= 1 << age
            );
        }

        /// Against `from + (phase − from) mod epoch` written with the remainders.
        #[test]
        fn phases_follow_without_division(
            from in 0u64..1 << 40,
            phase in 0u16..4096,
            epoch in 1u64..4097,
        ) {
            let phase = phase % epoch as u16;
            let expected = from + (phase as u64 + epoch - from % epoch) % epoch;
            proptest::prop_assert_eq!(phase_after(from, from % epoch, phase, epoch), expected);
        }
    }
}
