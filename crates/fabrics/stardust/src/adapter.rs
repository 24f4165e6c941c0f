//! The Fabric Adapter (§4.1, Fig. 5) as a sans-IO state machine: the caller hands it packets
//! from its hosts, cells from its fabric links and the time, and takes from it the cells each
//! link sends, the packets each egress port sends and when to call it next.
//!
//! Ingress: packets wait in VOQs per (destination adapter, port, class). A VOQ that holds data
//! tells the destination's egress scheduler (a status control cell); each credit that comes
//! back lets it release whole packets worth the credit, which it cuts into cells as one burst
//! (a cell may hold the tail of one packet and the head of the next, never data of two VOQs)
//! and sprays over every link that reaches the destination.
//!
//! Credit a VOQ did not spend is "stored for later accounting" (§4.1): a VOQ that empties
//! keeps up to one credit's worth for [`AdapterConfig::credit_keep`] after its last status,
//! and packets that come meanwhile go at once against it, without asking; what it cannot
//! keep, and what is left when the time is up, goes back with a status. Returning at once
//! would cost the egress port the whole credit's time for the few bytes spent (a VOQ of TCP
//! acks spends 64 B of each 4 KB credit); keeping for ever would hold egress buffer that may
//! never be used. The keep is shorter than the scheduler's write-off hold, so the books stay
//! exact (see [`crate::scheduler`]).
//!
//! Egress: per port, a scheduler sends credits at the port rate plus a speed-up, times the
//! FCI factor, while the port's egress buffer has room for every byte already credited plus
//! the new credit (so the buffer cannot overflow, §4.1's "stops sending credits" made exact).
//! Cells are reordered and reassembled per stream; finished packets queue at their port.
//!
//! Traffic between two ports of one adapter is scheduled the same way but loops back inside
//! the adapter instead of crossing the fabric.
//!
//! A low-latency VOQ ([`LowLatency`]) asks for no credit: it sends its packets as they come,
//! as fast as its token bucket lets it.

use crate::cell::{Body, Cell, Control, Data, FIRST, Frag, LAST, MAX_FRAGS, Packet};
use crate::cell_arena::{CellId, Cells};
use crate::config::{AdapterConfig, IngressFull, LowLatency};
use crate::reach::ReachTable;
use crate::reassembly::{Freed, Stream};
use crate::scheduler::PortScheduler;
use crate::spray::Sprayer;
use shoal_base::rng::StreamRng;
use shoal_base::{Dur, Time};
use std::collections::VecDeque;

/// Serial-number order of cell sequence numbers: `a` comes after `b`.
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

/// The FCI factor's unit: 1.0.
pub const FULL_RATE: u32 = 1 << 16;

/// One virtual output queue.
#[derive(Default)]
struct Voq {
    packets: VecDeque<Packet>,
    /// Credit bytes received less data bytes sent: negative after a packet larger than the
    /// credit left went (its surplus, paid off by the next credits).
    balance: i64,
    /// Sequence number of the next cell (the stream the egress reorders).
    next_seq: u32,
    status_seq: u32,
    /// Whether the last status sent said "on".
    requested: bool,
    /// An empty VOQ gives its kept credit back at this time (its last status plus the keep),
    /// and whether a [`Timer::GiveBack`] for it is on the calendar.
    keep_until: Time,
    give_back_armed: bool,
    /// When it last asked or was answered (its "on" sent, or a credit received), and whether a
    /// refresh entry for it waits in `Adapter::refresh`, due at `refresh_at` (entries at other
    /// times are stale: a new request brings the refresh forward).
    asked_at: Time,
    refresh_armed: bool,
    refresh_at: Time,
    /// Refreshes sent since the VOQ last asked anew (empty, then not): the next waits the
    /// refresh period times 2^this (capped by `AdapterConfig::status_refresh_doublings`).
    /// Credits put the next refresh off but keep its wait, so a destination that answers each
    /// of its VOQs seldom is asked about as seldom.
    refresh_doublings: u8,
    /// Low-latency VOQs: the token bucket as a virtual clock (the time at which it would be
    /// full again), and whether a [`Timer::LowLatency`] release for it is on the calendar.
    bucket_at: Time,
    release_armed: bool,
}

/// One egress port: its scheduler, credit clock and buffer.
struct Port {
    sched: PortScheduler,
    /// The earliest time the next credit may go.
    next_credit: Time,
    /// Bytes in the egress buffer for this port: in reorder windows, half-joined packets and
    /// the port queue.
    occupancy: u64,
    queue: VecDeque<Packet>,
    /// A [`Timer::Credit`] for this port is on the calendar.
    credit_armed: bool,
    /// Something that decides whether the port may credit changed since the caller last
    /// polled (it is in `Adapter::touched`).
    touched: bool,
}

/// A deadline of an adapter, for the caller to put on its calendar ([`Adapter::poll_timer`])
/// and hand back when due ([`Adapter::handle_timer`]). Each kind keeps its own check against
/// a deadline that moved, so a stale one does nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Timer {
    /// Port `p`'s credit clock: its next credit is due.
    Credit(u16),
    /// Stream `s`'s oldest missing cell may be given up.
    Reassembly(u32),
    /// VOQ `q` asks again if nothing answered its request.
    Refresh(u32),
    /// Empty VOQ `q` gives back the credit it kept.
    GiveBack(u32),
    /// Low-latency VOQ `q`'s bucket lets its next packet go.
    LowLatency(u32),
}

/// Counters of one adapter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdapterStats {
    pub packets_in: u64,
    pub ingress_drops: u64,
    pub data_cells: u64,
    pub control_cells: u64,
    pub credits: u64,
    /// Credit bytes VOQs returned unused.
    pub credit_returned_bytes: u64,
    /// Cells closed before they were full because they held [`MAX_FRAGS`] fragments.
    pub frag_limited_cells: u64,
    /// Cells that found no link to their destination (dropped).
    pub unroutable_cells: u64,
    pub packets_out: u64,
    /// VOQs that asked for credit again, without credit for their refresh wait.
    pub status_refreshes: u64,
    pub reassembly_drops: u64,
    pub lost_cells: u64,
    pub late_cells: u64,
    pub fci_cells: u64,
    /// Most bytes ever in one port's egress buffer.
    pub max_egress_bytes: u64,
    pub max_ingress_bytes: u64,
    /// Most cells waiting in one reorder window.
    pub max_reorder_cells: u64,
}

pub struct Adapter {
    id: u32,
    cfg: AdapterConfig,
    /// Time between two credits of one port at full rate.
    credit_gap: Dur,
    voqs: Vec<Voq>,
    ingress_bytes: u64,
    paused_hosts: bool,
    /// The forwarding table lives in the sprayer, laid out for the pick.
    sprayer: Sprayer,
    /// The run's number of this adapter's fabric link 0 (its cells wait in the run's
    /// [`Cells`], by directed link), and how many links it has.
    base: u32,
    links: u32,
    ports: Vec<Port>,
    /// Per (source adapter, port, class).
    streams: Vec<Stream>,
    /// Per stream: a [`Timer::Reassembly`] is on the calendar (at most one; one whose gap
    /// closed does nothing, one whose gap is younger than it was is set again).
    timer_armed: Vec<bool>,
    /// Deadlines set since the caller last polled (the calendar holds them, not the adapter:
    /// nothing is polled after every input, `docs/design/cell-datapath.md` §2.4).
    due: Vec<(Time, Timer)>,
    /// Ports to look at for a credit clock to start ([`Port::touched`]).
    touched: Vec<u16>,
    /// Per stream, while it has a gap: (time, sequence number) of each cell that arrived ahead
    /// of every earlier one, oldest first. A missing cell has been missing since the first of
    /// these beyond it arrived.
    ahead: Vec<VecDeque<(Time, u32)>>,
    rate_factor: u32,
    /// The FCI window under way: when it began, data cells received in it and how many of
    /// them carried FCI.
    fci_window: Time,
    window_cells: u32,
    window_marked: u32,
    /// Links that got cells since the caller last asked, and ports that got packets.
    link_kicks: Vec<u32>,
    port_kicks: Vec<u16>,
    /// Cells for this adapter itself.
    loopback: VecDeque<CellId>,
    /// Reused for the packets one cell completes (no allocation per cell).
    scratch: Vec<Packet>,
    burst: Vec<Packet>,
    stats: AdapterStats,
}

impl Adapter {
    /// Adapter `id` with `reach` (its forwarding table over its fabric links).
    pub fn new(id: u32, cfg: AdapterConfig, reach: ReachTable, rng: StreamRng) -> Adapter {
        let links = reach.links();
        let queues = cfg.fas as usize * cfg.ports as usize * cfg.classes as usize;
        Adapter {
            id,
            cfg,
            credit_gap: cfg.credit_rate().serialize(cfg.credit_bytes as u64),
            voqs: (0..queues).map(|_| Voq::default()).collect(),
            ingress_bytes: 0,
            paused_hosts: false,
            sprayer: Sprayer::new(&reach, cfg.permutation_rounds, rng),
            base: 0,
            links: links as u32,
            ports: (0..cfg.ports)
                .map(|_| Port {
                    sched: PortScheduler::new(
                        cfg.fas,
                        cfg.classes,
                        cfg.class_policy,
                        cfg.reassembly_timeout,
                    ),
                    next_credit: Time::ZERO,
                    occupancy: 0,
                    queue: VecDeque::new(),
                    credit_armed: false,
                    touched: false,
                })
                .collect(),
            streams: (0..queues).map(|_| Stream::default()).collect(),
            timer_armed: vec![false; queues],
            due: Vec::new(),
            touched: Vec::new(),
            ahead: (0..queues).map(|_| VecDeque::new()).collect(),
            rate_factor: FULL_RATE,
            fci_window: Time::ZERO,
            window_cells: 0,
            window_marked: 0,
            link_kicks: Vec::new(),
            port_kicks: Vec::new(),
            loopback: VecDeque::new(),
            scratch: Vec::new(),
            burst: Vec::new(),
            stats: AdapterStats::default(),
        }
    }

    /// The adapter whose fabric link 0 is the run's directed link `base`.
    pub fn at_links(self, base: u32) -> Adapter {
        Adapter { base, ..self }
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// Its fabric links.
    pub fn links(&self) -> u32 {
        self.links
    }

    pub fn stats(&self) -> &AdapterStats {
        &self.stats
    }

    /// A new forwarding table (the reachability protocol's).
    pub fn set_reach(&mut self, table: &ReachTable) {
        self.sprayer.set_table(table);
    }

    /// The FCI factor on the credit rate at `now`, in 1/65,536 (the windows ended by then
    /// applied: when they are applied does not change the factor, only when it is seen).
    pub fn rate_factor(&mut self, now: Time) -> u32 {
        self.fci_close_windows(now);
        self.rate_factor
    }

    /// Bytes in the ingress buffer.
    pub fn ingress_bytes(&self) -> u64 {
        self.ingress_bytes
    }

    /// Bytes in port `port`'s egress buffer, and credit handed out for it and not yet back.
    pub fn egress(&self, port: u16) -> (u64, u64) {
        let p = &self.ports[port as usize];
        (p.occupancy, p.sched.outstanding())
    }

    /// Credit bytes written off by every port's scheduler: handed out for data that never
    /// came (lost with a failed link, or the credit itself lost).
    pub fn credit_written_off(&self) -> u64 {
        self.ports.iter().map(|p| p.sched.written_off()).sum()
    }

    /// Credit bytes outstanding over every port.
    pub fn credit_outstanding(&self) -> u64 {
        self.ports.iter().map(|p| p.sched.outstanding()).sum()
    }

    /// Whether the hosts should be paused (ingress buffer close to full, [`IngressFull::Pause`]).
    pub fn hosts_paused(&self) -> bool {
        self.paused_hosts
    }

    // ---------------------------------------------------------------- ingress

    /// A packet from a host for port `port` of adapter `dst`, class `class`. Returns false if
    /// the ingress buffer had no room (the packet is dropped and counted).
    #[allow(clippy::too_many_arguments)] // the run's cells, the time, and the packet's header
    pub fn handle_packet(
        &mut self,
        cells: &mut Cells,
        now: Time,
        dst: u32,
        port: u16,
        class: u8,
        packet: Packet,
        pause_at: u64,
    ) -> bool {
        self.stats.packets_in += 1;
        if self.ingress_bytes + packet.wire as u64 > self.cfg.ingress_buffer_bytes {
            self.stats.ingress_drops += 1;
            return false;
        }
        self.ingress_bytes += packet.wire as u64;
        self.stats.max_ingress_bytes = self.stats.max_ingress_bytes.max(self.ingress_bytes);
        if self.cfg.ingress_full == IngressFull::Pause && self.ingress_bytes >= pause_at {
            self.paused_hosts = true;
        }
        let q = self.cfg.queue_index(dst, port, class);
        let voq = &mut self.voqs[q];
        voq.packets.push_back(packet);
        if self.cfg.low_latency.is(class) {
            if !voq.release_armed {
                self.release_low_latency(cells, now, q);
            }
            self.drain_loopback(cells, now);
            return true;
        }
        if !voq.requested {
            voq.requested = true;
            voq.refresh_doublings = 0;
            self.ask(cells, now, q, dst, port, class);
        }
        self.release(cells, now, dst, port, class);
        self.drain_loopback(cells, now);
        true
    }

    /// VOQ `q` tells the destination's scheduler it wants credit (again), and arms its
    /// refresh.
    fn ask(&mut self, cells: &mut Cells, now: Time, q: usize, dst: u32, port: u16, class: u8) {
        let voq = &mut self.voqs[q];
        voq.status_seq = voq.status_seq.wrapping_add(1);
        voq.asked_at = now;
        let seq = voq.status_seq;
        let wait = self.cfg.refresh_wait(voq.refresh_doublings);
        self.arm_refresh(q, now + wait);
        self.send_control(
            cells,
            dst,
            Control::Status {
                port,
                class,
                seq,
                on: true,
                returned: 0,
            },
        );
    }

    /// Makes sure VOQ `q` looks at its refresh by `at`: one deadline counts per VOQ, and one
    /// due later (a wait grown long before the VOQ emptied and asked anew) is replaced, left
    /// stale on the calendar.
    fn arm_refresh(&mut self, q: usize, at: Time) {
        let voq = &mut self.voqs[q];
        if !voq.refresh_armed || at < voq.refresh_at {
            voq.refresh_armed = true;
            voq.refresh_at = at;
            self.due.push((at, Timer::Refresh(q as u32)));
        }
    }

    /// A refresh deadline of VOQ `q` came: if it is the one that counts (not one replaced by
    /// an earlier one), the VOQ asks again if it has had no credit for its refresh wait.
    fn refresh_due(&mut self, cells: &mut Cells, now: Time, q: usize) {
        let voq = &mut self.voqs[q];
        if !voq.refresh_armed || voq.refresh_at > now {
            return;
        }
        voq.refresh_armed = false;
        if !voq.requested {
            return;
        }
        let due = voq.asked_at + self.cfg.refresh_wait(voq.refresh_doublings);
        if due > now {
            self.arm_refresh(q, due);
            return;
        }
        voq.refresh_doublings = voq.refresh_doublings.saturating_add(1);
        let (dst, port, class) = self.cfg.voq_of(q);
        self.stats.status_refreshes += 1;
        self.ask(cells, now, q, dst, port, class);
    }

    /// Resumes the hosts once the ingress buffer is back under `resume_at` bytes; returns
    /// whether it did.
    pub fn maybe_resume_hosts(&mut self, resume_at: u64) -> bool {
        if self.paused_hosts && self.ingress_bytes <= resume_at {
            self.paused_hosts = false;
            return true;
        }
        false
    }

    /// Sends packets while the VOQ's credit balance is positive, as one burst of cells (§4.1:
    /// "the VOQ dequeues packets up to the credit size. The amount of surplus data is stored
    /// for later accounting"; "a number of packets, matching the credit size"). Ours, reading
    /// "surplus data" as the data beyond the credit, as credit-balance schedulers do: the
    /// packet that crosses the credit goes whole and the balance goes negative by its surplus,
    /// which the next credits pay off. So a VOQ spends credit at exactly the credited rate on
    /// average, and a packet larger than a credit goes on the first credit rather than waiting
    /// for the several it is worth (which would hold every VOQ of a round-robin scheduler for
    /// several rounds before its first packet, all of them at once after a synchronised start).
    fn release(&mut self, cells: &mut Cells, now: Time, dst: u32, port: u16, class: u8) {
        let q = self.cfg.queue_index(dst, port, class);
        let voq = &mut self.voqs[q];
        let mut burst_end = 0;
        let mut spend = 0i64;
        for p in &voq.packets {
            if spend >= voq.balance {
                break;
            }
            spend += p.wire as i64;
            burst_end += 1;
        }
        if burst_end > 0 {
            voq.balance -= spend;
            self.ingress_bytes -= spend as u64;
            let mut burst = std::mem::take(&mut self.burst);
            burst.extend(voq.packets.drain(..burst_end));
            self.pack(cells, dst, port, class, &burst);
            burst.clear();
            self.burst = burst;
        }
        let voq = &mut self.voqs[q];
        if voq.packets.is_empty() && voq.requested {
            voq.requested = false;
            self.say_off(cells, now, q, self.keepable());
        }
    }

    /// What an empty VOQ may keep of its credit: one credit's worth, or nothing without a
    /// keep time.
    fn keepable(&self) -> u32 {
        if self.cfg.credit_keep.0 > 0 {
            self.cfg.credit_bytes
        } else {
            0
        }
    }

    /// VOQ `q` (empty, not asking) tells its destination it is off, returning what credit it
    /// holds beyond `most`, and keeps the rest for the keep time.
    fn say_off(&mut self, cells: &mut Cells, now: Time, q: usize, most: u32) {
        let keep_for = self.cfg.credit_keep;
        let voq = &mut self.voqs[q];
        voq.status_seq = voq.status_seq.wrapping_add(1);
        // A debt (negative balance) is kept whole: the next credits pay it.
        let kept = voq.balance.min(most as i64);
        let (seq, returned) = (voq.status_seq, (voq.balance - kept) as u32);
        voq.balance = kept;
        voq.keep_until = now + keep_for;
        if kept > 0 && !voq.give_back_armed {
            voq.give_back_armed = true;
            self.due.push((voq.keep_until, Timer::GiveBack(q as u32)));
        }
        self.stats.credit_returned_bytes += returned as u64;
        let (dst, port, class) = self.cfg.voq_of(q);
        self.send_control(
            cells,
            dst,
            Control::Status {
                port,
                class,
                seq,
                on: false,
                returned,
            },
        );
    }

    /// Empty VOQ `q`'s keep time may be up: it gives back the credit it kept.
    fn give_back_due(&mut self, cells: &mut Cells, now: Time, q: usize) {
        let voq = &mut self.voqs[q];
        voq.give_back_armed = false;
        if voq.requested || voq.balance <= 0 {
            // Asking again (its next "off" keeps anew), or nothing left.
            return;
        }
        if voq.keep_until > now {
            voq.give_back_armed = true;
            self.due.push((voq.keep_until, Timer::GiveBack(q as u32)));
            return;
        }
        self.say_off(cells, now, q, 0);
    }

    /// Sends the packets low-latency VOQ `q`'s bucket lets go by `now`, as one burst, and
    /// arms a release for the next one. A packet goes while the bucket's clock is at most the
    /// burst's worth ahead of `now`, so in any interval T the VOQ sends at most
    /// rate · T + burst + one packet.
    fn release_low_latency(&mut self, cells: &mut Cells, now: Time, q: usize) {
        let LowLatency {
            rate, burst_bytes, ..
        } = self.cfg.low_latency;
        let slack = rate.serialize(burst_bytes as u64);
        let voq = &mut self.voqs[q];
        voq.release_armed = false;
        let mut spend = 0u64;
        let mut burst_end = 0;
        for p in &voq.packets {
            if voq.bucket_at > now + slack {
                break;
            }
            voq.bucket_at = voq.bucket_at.max(now) + rate.serialize(p.wire as u64);
            spend += p.wire as u64;
            burst_end += 1;
        }
        if burst_end < voq.packets.len() {
            voq.release_armed = true;
            let at = Time(voq.bucket_at.0 - slack.0);
            self.due.push((at, Timer::LowLatency(q as u32)));
        }
        if burst_end > 0 {
            self.ingress_bytes -= spend;
            let mut burst = std::mem::take(&mut self.burst);
            burst.extend(self.voqs[q].packets.drain(..burst_end));
            let (dst, port, class) = self.cfg.voq_of(q);
            self.pack(cells, dst, port, class, &burst);
            burst.clear();
            self.burst = burst;
        }
    }

    /// Cuts a burst of packets into cells, back to back, and sprays them.
    fn pack(&mut self, cells: &mut Cells, dst: u32, port: u16, class: u8, burst: &[Packet]) {
        let cap = self.cfg.cell_payload();
        let q = self.cfg.queue_index(dst, port, class);
        let mut cell = Data {
            port,
            class,
            seq: 0,
            bytes: 0,
            frags: 0,
            frag: [Frag::default(); MAX_FRAGS],
        };
        for p in burst {
            let mut left = p.wire;
            while left > 0 {
                if cell.bytes as u32 == cap || cell.frags as usize == MAX_FRAGS {
                    if (cell.bytes as u32) < cap {
                        self.stats.frag_limited_cells += 1;
                    }
                    self.emit_data(cells, q, dst, &mut cell);
                }
                let take = left.min(cap - cell.bytes as u32);
                let mut flags = 0;
                if left == p.wire {
                    flags |= FIRST;
                }
                if take == left {
                    flags |= LAST;
                }
                cell.frag[cell.frags as usize] = Frag {
                    record: p.record,
                    bytes: take as u16,
                    flags,
                };
                cell.frags += 1;
                cell.bytes += take as u16;
                left -= take;
            }
        }
        if cell.frags > 0 {
            self.emit_data(cells, q, dst, &mut cell);
        }
    }

    /// Stores the packed cell in the run's cells (its one copy) and sends it.
    fn emit_data(&mut self, cells: &mut Cells, q: usize, dst: u32, cell: &mut Data) {
        let voq = &mut self.voqs[q];
        cell.seq = voq.next_seq;
        voq.next_seq = voq.next_seq.wrapping_add(1);
        self.stats.data_cells += 1;
        let id = cells.insert(&Cell {
            src: self.id,
            dst,
            fci: false,
            sent_at: 0,
            body: Body::Data(*cell),
        });
        cell.bytes = 0;
        cell.frags = 0;
        self.route(cells, id);
    }

    fn send_control(&mut self, cells: &mut Cells, dst: u32, msg: Control) {
        self.stats.control_cells += 1;
        let id = cells.insert(&Cell {
            src: self.id,
            dst,
            fci: false,
            sent_at: 0,
            body: Body::Control(msg),
        });
        self.route(cells, id);
    }

    /// Puts cell `id` on the next link towards its destination (or on the loopback).
    fn route(&mut self, cells: &mut Cells, id: CellId) {
        let dst = cells.dst(id);
        if dst == self.id {
            self.loopback.push_back(id);
            return;
        }
        let Some(link) = self.sprayer.next(dst) else {
            self.stats.unroutable_cells += 1;
            cells.free(id);
            return;
        };
        if cells.waiting(self.base + link) == (0, 0) {
            self.link_kicks.push(link);
        }
        cells.enqueue(self.base + link, id);
    }

    /// Fabric link `link` was excluded from the forwarding table: its waiting cells go again
    /// to the links that still reach their destinations (see [`Adapter::poll_link_kick`]).
    pub fn reroute(&mut self, cells: &mut Cells, link: u32) {
        let mut waiting = Vec::new();
        cells.drain(self.base + link, &mut waiting);
        for id in waiting {
            self.route(cells, id);
        }
    }

    /// A link that has cells and may have been idle; the caller starts it if it is free.
    pub fn poll_link_kick(&mut self) -> Option<u32> {
        self.link_kicks.pop()
    }

    /// The next cell for link `link` (control first; data only when the link is not
    /// `paused`), stamped with `now` as its departure.
    pub fn next_tx(
        &mut self,
        cells: &mut Cells,
        now: Time,
        link: u32,
        paused: bool,
    ) -> Option<CellId> {
        let c = cells.dequeue(self.base + link, paused)?;
        cells.set_sent_at(c, now.0);
        Some(c)
    }

    /// Cells waiting for any link: (data, control).
    pub fn queued_split(&self, cells: &Cells) -> (u64, u64) {
        (self.base..self.base + self.links)
            .map(|l| cells.waiting(l))
            .fold((0, 0), |(d, c), (wc, wd)| (d + wd as u64, c + wc as u64))
    }

    // ---------------------------------------------------------------- egress

    /// Cell `id` from the fabric: taken in, its slot freed.
    pub fn handle_cell(&mut self, cells: &mut Cells, now: Time, id: CellId) {
        self.accept(cells, now, id);
        self.drain_loopback(cells, now);
    }

    fn drain_loopback(&mut self, cells: &mut Cells, now: Time) {
        while let Some(c) = self.loopback.pop_front() {
            self.accept(cells, now, c);
        }
    }

    fn accept(&mut self, cells: &mut Cells, now: Time, id: CellId) {
        debug_assert_eq!(cells.dst(id), self.id, "cell for another adapter");
        let (src, fci) = (cells.src(id), cells.fci(id));
        let control = match cells.body(id) {
            Body::Data(d) => {
                // Read in place: the fragment list is copied once, into the reorder window.
                if fci {
                    self.stats.fci_cells += 1;
                }
                self.fci_tally(now, fci);
                self.data(now, src, d);
                cells.free(id);
                return;
            }
            Body::Control(c) => *c,
        };
        cells.free(id);
        match control {
            Control::Status {
                port,
                class,
                seq,
                on,
                returned,
            } => {
                // Write-offs due before this status are settled first: a newer "on" must not
                // void one whose hold ended before it came.
                let sched = &mut self.ports[port as usize].sched;
                sched.settle(now);
                sched.status(now, src, class, seq, on, returned);
                self.touch(port);
            }
            Control::Credit { port, class, bytes } => {
                let q = self.cfg.queue_index(src, port, class);
                let voq = &mut self.voqs[q];
                voq.balance += bytes as i64;
                voq.asked_at = now;
                if voq.requested {
                    self.release(cells, now, src, port, class);
                } else {
                    // A credit that crossed the VOQ's "off": said again, with what it cannot
                    // keep.
                    self.say_off(cells, now, q, self.keepable());
                }
            }
        }
    }

    /// Counts a data cell into the FCI window under way, after closing the windows that ended
    /// before `now`.
    fn fci_tally(&mut self, now: Time, marked: bool) {
        self.fci_close_windows(now);
        self.window_cells += 1;
        self.window_marked += marked as u32;
    }

    /// Applies the FCI windows that ended by `now` to the credit factor ([`FciReaction`]): one
    /// with marks cuts the factor by the decrease times the fraction marked, every other one
    /// (empty windows included) raises it by the increase. Called when a data cell arrives and
    /// before credits are sent, so that a factor cut deep recovers on time even while no data
    /// cell arrives (were it applied at the next cell only, a low factor would hold the credit
    /// clock slow until the cells it starves arrive).
    fn fci_close_windows(&mut self, now: Time) {
        let f = self.cfg.fci;
        let ended = (now.0 - self.fci_window.0) / f.interval.0;
        if ended == 0 {
            return;
        }
        let factor = self.rate_factor as u64;
        let mut factor = if self.window_marked > 0 {
            let cut = (factor * f.decrease as u64 * self.window_marked as u64
                / self.window_cells as u64)
                >> 16;
            (factor - cut).max(f.min_rate as u64)
        } else {
            factor + f.increase as u64
        };
        factor += (ended - 1).min(FULL_RATE as u64) * f.increase as u64;
        self.rate_factor = factor.min(FULL_RATE as u64) as u32;
        self.fci_window = Time(self.fci_window.0 + ended * f.interval.0);
        self.window_cells = 0;
        self.window_marked = 0;
    }

    fn data(&mut self, now: Time, src: u32, d: &Data) {
        let s = self.cfg.queue_index(src, d.port, d.class);
        let port = &mut self.ports[d.port as usize];
        port.sched.settle(now);
        port.sched.arrived(src, d.class, d.bytes as u64);
        port.occupancy += d.bytes as u64;
        self.touch(d.port);
        let mut freed = Freed::default();
        let mut out = std::mem::take(&mut self.scratch);
        let stream = &mut self.streams[s];
        if !stream.accept(d, &mut |p| out.push(p), &mut freed) {
            self.stats.late_cells += 1;
            freed.bytes += d.bytes as u64;
        }
        let waiting = stream.waiting() as u64;
        self.stats.max_reorder_cells = self.stats.max_reorder_cells.max(waiting);
        for p in out.drain(..) {
            self.finish_packet(d.port, p);
        }
        self.scratch = out;
        self.free(d.port, freed);
        self.track_gap(now, s, Some(d.seq));
        let occ = self.ports[d.port as usize].occupancy;
        self.stats.max_egress_bytes = self.stats.max_egress_bytes.max(occ);
    }

    fn finish_packet(&mut self, port: u16, p: Packet) {
        let q = &mut self.ports[port as usize].queue;
        if q.is_empty() {
            self.port_kicks.push(port);
        }
        q.push_back(p);
    }

    fn free(&mut self, port: u16, freed: Freed) {
        self.ports[port as usize].occupancy -= freed.bytes;
        self.touch(port);
        self.stats.reassembly_drops += freed.packets;
        self.stats.lost_cells += freed.lost_cells;
    }

    /// Times each missing cell of stream `s` from the moment a later cell arrived (`seq`, if
    /// one just did). Under load a stream's window is rarely empty (cells of consecutive
    /// credits overtake each other), so timing the window as a whole would give up cells
    /// missing for a moment behind a long run of short gaps; timing only its head would give
    /// up a burst of lost cells one timeout after another.
    fn track_gap(&mut self, now: Time, s: usize, seq: Option<u32>) {
        if !self.prune(s) {
            return;
        }
        let head = self.streams[s].head();
        let ahead = &mut self.ahead[s];
        if let Some(q) = seq
            && after(q, head)
            && ahead.back().is_none_or(|&(_, b)| after(q, b))
        {
            ahead.push_back((now, q));
        }
        if !self.timer_armed[s]
            && let Some(&(since, _)) = ahead.front()
        {
            self.arm(since + self.cfg.reassembly_timeout, s);
        }
    }

    /// Forgets the cells ahead of stream `s` that are no longer ahead of its gap; whether it
    /// has a gap.
    fn prune(&mut self, s: usize) -> bool {
        let st = &self.streams[s];
        let ahead = &mut self.ahead[s];
        if !st.has_gap() {
            ahead.clear();
            return false;
        }
        let head = st.head();
        while ahead.front().is_some_and(|&(_, q)| !after(q, head)) {
            ahead.pop_front();
        }
        true
    }

    /// Gives up stream `s`'s missing cells that have been missing for the timeout by `now`.
    fn expire(&mut self, now: Time, s: usize) {
        let port = (s / self.cfg.classes as usize % self.cfg.ports as usize) as u16;
        while let Some(&(since, _)) = self.ahead[s].front() {
            if since + self.cfg.reassembly_timeout > now {
                break;
            }
            let mut freed = Freed::default();
            let mut out = Vec::new();
            self.streams[s].give_up(&mut |p| out.push(p), &mut freed);
            for p in out {
                self.finish_packet(port, p);
            }
            self.free(port, freed);
            self.prune(s);
        }
        self.track_gap(now, s, None);
    }

    fn arm(&mut self, at: Time, s: usize) {
        self.due.push((at, Timer::Reassembly(s as u32)));
        self.timer_armed[s] = true;
    }

    /// A port whose queue got a packet while it may have been idle.
    pub fn poll_port_kick(&mut self) -> Option<u16> {
        self.port_kicks.pop()
    }

    /// The next packet port `port` sends to its host; it leaves the egress buffer.
    pub fn next_packet(&mut self, port: u16) -> Option<Packet> {
        let p = &mut self.ports[port as usize];
        let pkt = p.queue.pop_front()?;
        p.occupancy -= pkt.wire as u64;
        self.stats.packets_out += 1;
        self.touch(port);
        Some(pkt)
    }

    // ---------------------------------------------------------------- timers

    /// Gap between two credits of a port at the current FCI factor.
    fn gap(&self) -> Dur {
        Dur((self.credit_gap.0 as u128 * FULL_RATE as u128 / self.rate_factor as u128) as u64)
    }

    /// Whether port `p` may send a credit now (someone asks, and the buffer has room for it).
    fn port_ready(&self, p: usize) -> bool {
        let port = &self.ports[p];
        port.sched.wants()
            && port.occupancy + port.sched.outstanding() + self.cfg.credit_bytes as u64
                <= self.cfg.egress_buffer_bytes
    }

    /// Port `p`'s readiness to credit may have changed: looked at when the caller next polls.
    fn touch(&mut self, p: u16) {
        let port = &mut self.ports[p as usize];
        if !port.touched {
            port.touched = true;
            self.touched.push(p);
        }
    }

    /// The next deadline to put on the calendar, set since the last call (at or after `now`,
    /// the time of the input just given): the credit clocks of the ports that may credit and
    /// have none running, and the timers the input set.
    pub fn poll_timer(&mut self, now: Time) -> Option<(Time, Timer)> {
        while let Some(p) = self.touched.pop() {
            self.ports[p as usize].touched = false;
            if !self.ports[p as usize].credit_armed && self.port_ready(p as usize) {
                let port = &mut self.ports[p as usize];
                port.credit_armed = true;
                self.due.push((port.next_credit.max(now), Timer::Credit(p)));
            }
        }
        self.due.pop().map(|(t, timer)| (t.max(now), timer))
    }

    /// A deadline the caller put on its calendar is due.
    pub fn handle_timer(&mut self, cells: &mut Cells, now: Time, timer: Timer) {
        // Write-offs whose hold ended free room at every port (as any wake-up of the adapter
        // did when one wake-up served all its deadlines).
        for p in 0..self.ports.len() {
            let before = self.ports[p].sched.outstanding();
            self.ports[p].sched.settle(now);
            if self.ports[p].sched.outstanding() != before {
                self.touch(p as u16);
            }
        }
        match timer {
            Timer::Credit(p) => {
                self.ports[p as usize].credit_armed = false;
                self.fci_close_windows(now);
                let p = p as usize;
                // A port that was idle (or blocked) starts its clock now rather than catching
                // up with a burst; a busy one is called exactly at its next credit and keeps
                // pace.
                if self.port_ready(p) && self.ports[p].next_credit <= now {
                    self.ports[p].next_credit = self.ports[p].next_credit.max(now);
                    while self.port_ready(p) && self.ports[p].next_credit <= now {
                        self.credit(cells, p as u16);
                    }
                }
                self.touch(p as u16);
            }
            Timer::Reassembly(s) => {
                let s = s as usize;
                self.timer_armed[s] = false;
                self.expire(now, s);
            }
            Timer::Refresh(q) => self.refresh_due(cells, now, q as usize),
            Timer::GiveBack(q) => self.give_back_due(cells, now, q as usize),
            Timer::LowLatency(q) => self.release_low_latency(cells, now, q as usize),
        }
        self.drain_loopback(cells, now);
    }

    fn credit(&mut self, cells: &mut Cells, p: u16) {
        let bytes = self.cfg.credit_bytes;
        let gap = self.gap();
        let port = &mut self.ports[p as usize];
        let Some((src, class)) = port.sched.pick(bytes) else {
            return;
        };
        port.next_credit += gap;
        self.stats.credits += 1;
        self.send_control(
            cells,
            src,
            Control::Credit {
                port: p,
                class,
                bytes,
            },
        );
    }
}
