//! The real-time driver of one unchanged `shoal_node::Node`: the slot loop of the simulator's
//! engine (`shoal_engine::SlottedEngine`), paced by the monotonic clock, with cells crossing a
//! UDP socket to the software circuit switch.
//!
//! Per slot `s`, in the engine's order:
//! 1. wait for the slot to begin (`t0 + s × slot`);
//! 2. the host hands over what it has (flows due, IP packets read from TUN);
//! 3. receive, channel by channel, the cell each scheduled sender transmitted in slot `s − d`,
//!    checking that it came through the scheduled port and that its header passes the CRC;
//! 4. transmit, channel by channel, the node's cell for its peer of slot `s`;
//! 5. hand in-order deliveries to the host and log the node's events.
//!
//! **Late slots.** When the driver starts a slot one slot time or more after it should have
//! begun, the slot is *late*: it is counted, the run of late slots is logged with its worst
//! lateness, and the driver runs slots back to back until it is on time again (it catches up; it
//! never skips). Skipping is not an option: a skipped slot would be silence in the peers' slots,
//! which §3.5 reads as failure.
//!
//! **Silence and the grace period.** In hardware a cell missing from its slot means a failed
//! peer or path (§3.5). Here a cell can also be late because the host's scheduler ran its sender
//! late, so a reception waits for its cell up to `grace` past the slot's start before it hands the
//! node `Rx::Missing`. The rack therefore runs in lock-step: no node gets more than about an epoch
//! ahead of another, because it needs every peer's cell once per epoch; a killed node costs its
//! peers one grace period each, then they route around it. Waits chain (a node waiting for the
//! dead one sends nothing, so its own peers wait for it), so a waiting driver sends a beacon
//! every quarter grace ("alive, stuck before slot s"; `datagram.rs`), and a reception whose
//! sender beaconed within the grace keeps waiting: only a sender silent on every count is missing. Detection still happens in the slot
//! §3.5 says, the first slot of the dead peer after its last cell (exactly one epoch after it);
//! the grace adds wall-clock time, not slots.

use crate::arena::{Arena, Bytes};
use crate::clock::{SlotClock, now_ns, tighten_timer_slack};
use crate::datagram::{self, BEACON, CELL_LEN, DATAGRAM_LEN, PAYLOAD_LEN, Shim};
use crate::events::{EventKind, EventLog, LoggedEvent, write_json_atomically};
use crate::fabric::LiveFabric;
use crate::pcap::PcapWriter;
use serde::Serialize;
use shoal_base::{ChannelId, NodeId};
use shoal_node::{Delivery, Event, Frame, Kind, Node, Rx, wire};
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often (in wall time) counters are written and stop requests read.
const REPORT_EVERY_NS: u64 = 100_000_000;

/// Slots of receptions the driver can hold ahead of the one it waits for. Lock-step keeps peers
/// within about an epoch plus the delay of each other, far below this.
const RX_WINDOW: u64 = 1024;

/// The longest single blocking read: short enough to notice a passed deadline promptly.
const READ_TIMEOUT: Duration = Duration::from_millis(2);

/// Epochs per rack node after a peer failed before the driver gives up on cells still missing
/// from each source (`Node::skip_lost_cells`). A cell in flight through a live intermediate
/// waits at most one epoch per cell ahead of it in two queues that Eq. 5 bounds by N each, so
/// after 2N epochs only cells lost with the dead node can be missing; we wait twice that.
const GIVE_UP_EPOCHS_PER_NODE: u64 = 4;

/// What sits above the node: the flows of a workload, or the kernel through a TUN device.
pub trait Host {
    /// At the start of `slot`, before the node receives: hand the node what is due. `backlog`
    /// is what the host has submitted and the node has not yet sent (own payload bytes).
    /// Returns the payload bytes submitted.
    fn submit(&mut self, slot: u64, node: &mut Node<Bytes>, arena: &mut Arena, backlog: u64)
    -> u64;
    /// One in-order delivery and its bytes (`None` if they are gone from the arena).
    fn deliver(&mut self, slot: u64, delivery: &Delivery<Bytes>, bytes: Option<&[u8]>);
    /// Cells from `src` were given up (lost with a failed node): the packet being reassembled
    /// from it will never be whole.
    fn cells_lost(&mut self, src: NodeId);
    /// The host's own counters, for the counters file.
    fn counters(&self) -> serde_json::Value;
}

/// When to stop: at a slot every node of the rack agrees on, so that none goes silent while the
/// others still expect its cells. `u64::MAX` means not yet.
#[derive(Clone, Debug)]
pub enum Stop {
    /// Set by a coordinator in the same process.
    Shared(Arc<AtomicU64>),
    /// A file holding the slot, written by the coordinating process.
    File(PathBuf),
}

impl Stop {
    pub fn never() -> Stop {
        Stop::Shared(Arc::new(AtomicU64::new(u64::MAX)))
    }

    /// The stop slot, `u64::MAX` if none is set.
    pub fn read(&self) -> u64 {
        match self {
            Stop::Shared(a) => a.load(Ordering::Relaxed),
            Stop::File(p) => std::fs::read_to_string(p)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(u64::MAX),
        }
    }
}

/// What a driver needs besides its node.
#[derive(Clone, Debug)]
pub struct DriverSpec {
    pub id: NodeId,
    pub clock: SlotClock,
    /// How long past a slot's start a reception waits for its cell before it is missing.
    pub grace_ns: u64,
    pub switch_addr: SocketAddr,
    /// Debug builds: assert the per-subflow invariant behind Eq. 3/5 (off with corruption or
    /// failures, where the paper does not promise it).
    pub check_bounds: bool,
    /// Where to write `counters.json`, `events.jsonl` and, with `pcap`, `cells.pcap`.
    pub dir: Option<PathBuf>,
    pub pcap: bool,
    /// Bytes of the payload arena.
    pub arena_bytes: usize,
    /// Stop dead at the start of this slot, sending nothing more, as a killed process would
    /// (for tests and the loopback rack; the namespace rack uses a real `kill -9`).
    pub crash_at: Option<u64>,
}

/// The driver's own counters: what the node cannot see.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DriverCounters {
    /// The next slot to run.
    pub slot: u64,
    /// Slots begun at least one slot time late.
    pub late_slots: u64,
    pub max_late_ns: u64,
    pub cells_sent: u64,
    /// Cells handed to the node (received in their slot).
    pub cells_received: u64,
    /// Datagrams read from the switch: cells (in time, late or not for us) and beacons.
    pub datagrams_read: u64,
    /// Cells whose header failed the CRC (or its format) on receipt.
    pub crc_failures: u64,
    /// Expected cells that did not come within the grace period.
    pub missing: u64,
    /// Cells that came after their reception had been given up.
    pub late_cells: u64,
    /// Cells that did not come through the scheduled port.
    pub violations: u64,
    /// Datagrams not from the switch, malformed, or beyond the reception window.
    pub stray: u64,
    /// Payload handles whose bytes the arena had already overwritten.
    pub payload_expired: u64,
    /// Datagrams the kernel refused to send.
    pub send_errors: u64,
    /// Payload bytes of this node's own cells sent (first transmissions and resends).
    pub own_bytes_sent: u64,
    pub max_feedback_sent: u16,
    pub max_feedback_received: u16,
    /// Cells queued at the node now.
    pub queued_cells: u64,
    /// Sequence numbers given up after a failure (cells lost with the failed node).
    pub cells_given_up: u64,
    /// Beacons sent while waiting for a late cell, and heard from waiting peers.
    pub beacons_sent: u64,
    pub beacons_heard: u64,
}

/// A reception held until its slot comes.
#[derive(Clone, Copy)]
struct Held {
    sent: u64,
    cell: [u8; CELL_LEN],
}

/// One node, its socket and its host.
pub struct Driver<H: Host> {
    spec: DriverSpec,
    fabric: Arc<LiveFabric>,
    node: Node<Bytes>,
    arena: Arena,
    socket: UdpSocket,
    pub host: H,
    pub counters: DriverCounters,
    pub log: EventLog,
    pcap: Option<PcapWriter<BufWriter<File>>>,
    /// `[sent slot mod RX_WINDOW][channel]`.
    held: Vec<Option<Held>>,
    /// Per channel: the next sent slot to be received (everything before it is settled).
    next_rx: Vec<u64>,
    /// Per peer: the slot of the last cell received from it.
    last_heard: Vec<Option<u64>>,
    /// Per peer: when its last beacon came (`CLOCK_MONOTONIC` ns).
    last_beacon: Vec<u64>,
    /// Bytes the host has submitted.
    submitted: u64,
    /// The first late slot of the current run of late slots, and its worst lateness.
    late_run: Option<(u64, u64)>,
    /// The slot at which to give up on cells lost with a failed peer.
    give_up_at: Option<u64>,
    /// Published every slot for a coordinator: the slot being run.
    pub progress: Arc<AtomicU64>,
}

impl<H: Host> Driver<H> {
    /// Builds the node and binds nothing: `socket` is already bound to this node's address.
    pub fn new(
        spec: DriverSpec,
        fabric: Arc<LiveFabric>,
        socket: UdpSocket,
        host: H,
    ) -> io::Result<Driver<H>> {
        let node = Node::new(fabric.node_config(spec.id, spec.check_bounds))
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        socket.set_read_timeout(Some(READ_TIMEOUT))?;
        let dir = spec.dir.clone();
        if let Some(d) = &dir {
            std::fs::create_dir_all(d)?;
        }
        let log = EventLog::new(dir.as_ref().map(|d| d.join("events.jsonl")).as_deref())?;
        let pcap = match (&dir, spec.pcap) {
            (Some(d), true) => Some(PcapWriter::new(BufWriter::new(File::create(
                d.join("cells.pcap"),
            )?))?),
            _ => None,
        };
        let (n, c) = (fabric.spec.nodes as usize, fabric.spec.channels as usize);
        Ok(Driver {
            arena: Arena::new(spec.arena_bytes),
            held: vec![None; RX_WINDOW as usize * c],
            next_rx: vec![0; c],
            last_heard: vec![None; n],
            last_beacon: vec![0; n],
            submitted: 0,
            late_run: None,
            give_up_at: None,
            progress: Arc::new(AtomicU64::new(0)),
            counters: DriverCounters::default(),
            node,
            socket,
            host,
            log,
            pcap,
            fabric,
            spec,
        })
    }

    pub fn node(&self) -> &Node<Bytes> {
        &self.node
    }

    /// Runs slots until `stop` says or the driver crashes on purpose; returns the slots run.
    pub fn run(&mut self, stop: &Stop) -> io::Result<u64> {
        tighten_timer_slack();
        let d = self.fabric.spec.delay_slots as u64;
        let channels = self.fabric.spec.channels;
        let mut stop_at = stop.read();
        let mut next_report = now_ns();
        let mut s = 0u64;
        while s < stop_at {
            if self.spec.crash_at == Some(s) {
                self.counters.slot = s;
                self.report()?;
                return Ok(s);
            }
            self.progress.store(s, Ordering::Relaxed);
            let late = self.spec.clock.wait_for(s);
            self.account_lateness(s, late)?;
            let backlog = self.submitted.saturating_sub(self.counters.own_bytes_sent);
            self.submitted += self
                .host
                .submit(s, &mut self.node, &mut self.arena, backlog);
            if s >= d {
                for c in 0..channels {
                    self.receive(s, ChannelId(c))?;
                }
            }
            for c in 0..channels {
                self.transmit(s, ChannelId(c))?;
            }
            self.drain(s)?;
            s += 1;
            self.counters.slot = s;
            if s.is_multiple_of(64) && now_ns() >= next_report {
                next_report = now_ns() + REPORT_EVERY_NS;
                self.report()?;
                stop_at = stop.read();
            } else if let Stop::Shared(_) = stop {
                stop_at = stop.read();
            }
        }
        self.close_late_run()?;
        self.report()?;
        Ok(s)
    }

    fn account_lateness(&mut self, s: u64, late: u64) -> io::Result<()> {
        if late >= self.spec.clock.slot_ns {
            self.counters.late_slots += 1;
            self.counters.max_late_ns = self.counters.max_late_ns.max(late);
            let run = self.late_run.get_or_insert((s, 0));
            run.1 = run.1.max(late);
        } else {
            self.close_late_run()?;
        }
        Ok(())
    }

    fn close_late_run(&mut self) -> io::Result<()> {
        if let Some((first, max_late_ns)) = self.late_run.take() {
            let last = self.counters.slot.saturating_sub(1).max(first);
            self.event(EventKind::LateSlots {
                first,
                last,
                max_late_ns,
            })?;
        }
        Ok(())
    }

    fn event(&mut self, what: EventKind) -> io::Result<()> {
        self.log.log(LoggedEvent {
            node: Some(self.spec.id.0),
            slot: self.counters.slot,
            mono_ns: now_ns(),
            what,
        })
    }

    /// Step 3 for one channel: the cell sent to us in slot `s − d`.
    fn receive(&mut self, s: u64, channel: ChannelId) -> io::Result<()> {
        let sent = s - self.fabric.spec.delay_slots as u64;
        let me = self.spec.id;
        let Some(peer) = self.fabric.rx_peer(sent, channel, me) else {
            self.next_rx[channel.idx()] = sent + 1;
            return Ok(());
        };
        if !self.node.peer_alive(peer) {
            // The node no longer listens to it (§3.5); whatever it still sends is dropped.
            self.take_held(sent, channel);
            self.next_rx[channel.idx()] = sent + 1;
            return Ok(());
        }
        // The grace runs from when this reception is reached, not from the slot's nominal
        // start: after one peer's silence has held the rack up, every node is late, and a
        // deadline on the nominal grid would pass at once and blame the live peers too.
        let grace = self.spec.grace_ns;
        let mut deadline = now_ns().max(self.spec.clock.start_of(s)) + grace;
        let mut next_beacon = deadline - grace + grace / 4;
        let cell = loop {
            if let Some(cell) = self.take_held(sent, channel) {
                break Some(cell);
            }
            let now = now_ns();
            if now >= next_beacon {
                next_beacon = now + grace / 4;
                self.send_beacon(s)?;
            }
            if now >= deadline {
                // A sender that is itself waiting (it beaconed lately) is alive: wait on.
                let beacon = self.last_beacon[peer.idx()];
                if beacon + grace > now {
                    deadline = beacon + grace;
                    continue;
                }
                // One last look at what the socket already holds, then it is missing.
                if self.poll_once()? {
                    continue;
                }
                break None;
            }
            self.wait_datagram()?;
        };
        self.next_rx[channel.idx()] = sent + 1;
        let rx = match cell {
            None => {
                self.counters.missing += 1;
                Rx::Missing
            }
            Some(cell) => {
                self.counters.cells_received += 1;
                self.last_heard[peer.idx()] = Some(s);
                self.received(&cell, peer)?
            }
        };
        self.node.handle_rx(s, peer, rx);
        Ok(())
    }

    /// The cell of a datagram as the node receives it: its header checked (CRC, format), its
    /// payload moved into the arena.
    fn received(&mut self, cell: &[u8; CELL_LEN], peer: NodeId) -> io::Result<Rx<Bytes>> {
        let mut rx = wire::decode(&cell[..shoal_cell::HEADER_LEN], Bytes::default());
        match &mut rx {
            Rx::Cell(frame) => {
                self.counters.max_feedback_received =
                    self.counters.max_feedback_received.max(frame.feedback);
                if let Kind::Data { .. } = frame.cell.kind {
                    let len = (frame.cell.len as usize).min(PAYLOAD_LEN);
                    let at = self.arena.append(&cell[shoal_cell::HEADER_LEN..][..len]);
                    frame.payload = Bytes {
                        at,
                        len: len as u16,
                    };
                }
            }
            Rx::Corrupt { .. } => {
                self.counters.crc_failures += 1;
                self.event(EventKind::CorruptCell { peer: peer.0 })?;
            }
            Rx::Missing => {}
        }
        Ok(rx)
    }

    fn take_held(&mut self, sent: u64, channel: ChannelId) -> Option<[u8; CELL_LEN]> {
        let c = self.fabric.spec.channels as usize;
        let at = (sent % RX_WINDOW) as usize * c + channel.idx();
        match self.held[at] {
            Some(h) if h.sent == sent => {
                self.held[at] = None;
                Some(h.cell)
            }
            _ => None,
        }
    }

    /// Takes one datagram if one is already there; whether it did.
    fn poll_once(&mut self) -> io::Result<bool> {
        self.socket.set_nonblocking(true)?;
        let got = self.read_datagram();
        self.socket.set_nonblocking(false)?;
        got
    }

    /// Blocks for one datagram, up to the read timeout.
    fn wait_datagram(&mut self) -> io::Result<()> {
        self.read_datagram().map(|_| ())
    }

    fn read_datagram(&mut self) -> io::Result<bool> {
        let mut buf = [0u8; DATAGRAM_LEN + 1];
        let (len, from) = match self.socket.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(false);
            }
            Err(e) => return Err(e),
        };
        if from != self.spec.switch_addr {
            self.counters.stray += 1;
            return Ok(true);
        }
        let Ok((shim, cell)) = datagram::decode(&buf[..len]) else {
            self.counters.stray += 1;
            return Ok(true);
        };
        let cell = *cell;
        self.counters.datagrams_read += 1;
        if let Some(p) = &mut self.pcap {
            p.record(self.spec.clock.since_t0(now_ns()), &buf[..len])?;
        }
        self.hold(shim, cell)?;
        Ok(true)
    }

    /// Tells every node, through the switch, that this one is alive but stuck before `slot`.
    fn send_beacon(&mut self, slot: u64) -> io::Result<()> {
        let me = self.spec.id;
        let shim = Shim {
            slot,
            channel: BEACON,
            from: me,
            to: me,
        };
        let bytes = datagram::encode(&shim, &[0; CELL_LEN]);
        match self.socket.send_to(&bytes, self.spec.switch_addr) {
            Ok(_) => self.counters.beacons_sent += 1,
            Err(_) => self.counters.send_errors += 1,
        }
        Ok(())
    }

    /// Files a received cell under its slot after checking that it came through the port the
    /// schedule connected to us in that slot.
    fn hold(&mut self, shim: Shim, cell: [u8; CELL_LEN]) -> io::Result<()> {
        let me = self.spec.id;
        let c = self.fabric.spec.channels as usize;
        if shim.channel == BEACON && shim.from.idx() < self.last_beacon.len() {
            self.counters.beacons_heard += 1;
            self.last_beacon[shim.from.idx()] = now_ns();
            return Ok(());
        }
        if shim.channel.idx() >= c {
            self.counters.stray += 1;
            return Ok(());
        }
        let scheduled = self.fabric.rx_peer(shim.slot, shim.channel, me);
        if shim.to != me || scheduled != Some(shim.from) {
            self.counters.violations += 1;
            return self.event(EventKind::ScheduleViolation {
                sent_slot: shim.slot,
                channel: shim.channel.0,
                from: shim.from.0,
                to: me.0,
                detail: format!(
                    "received a cell addressed to {} from {}; the schedule connects {} to us",
                    shim.to.0,
                    shim.from.0,
                    scheduled.map_or("nobody".into(), |p| p.0.to_string())
                ),
            });
        }
        let next = self.next_rx[shim.channel.idx()];
        if shim.slot < next {
            self.counters.late_cells += 1;
            return self.event(EventKind::LateCell {
                peer: shim.from.0,
                sent_slot: shim.slot,
            });
        }
        if shim.slot >= next + RX_WINDOW {
            self.counters.stray += 1;
            return Ok(());
        }
        let at = (shim.slot % RX_WINDOW) as usize * c + shim.channel.idx();
        self.held[at] = Some(Held {
            sent: shim.slot,
            cell,
        });
        Ok(())
    }

    /// Step 4 for one channel.
    fn transmit(&mut self, s: u64, channel: ChannelId) -> io::Result<()> {
        let me = self.spec.id;
        let Some(to) = self.fabric.tx_peer(s, channel, me) else {
            return Ok(());
        };
        let Some(frame) = self.node.poll_tx(s, to) else {
            // Silence: the node considers `to` failed, and `to` must notice (§3.5, symmetric).
            return Ok(());
        };
        let cell = self.cell_bytes(&frame);
        let bytes = datagram::encode(
            &Shim {
                slot: s,
                channel,
                from: me,
                to,
            },
            &cell,
        );
        match self.socket.send_to(&bytes, self.spec.switch_addr) {
            Ok(_) => self.counters.cells_sent += 1,
            // A full socket buffer, or the switch gone: the cell is lost on the link, which the
            // receiver sees as silence; counted here, never fatal.
            Err(_) => self.counters.send_errors += 1,
        }
        if let Some(p) = &mut self.pcap {
            p.record(self.spec.clock.since_t0(now_ns()), &bytes)?;
        }
        Ok(())
    }

    /// The 64 bytes of a frame: its header as `shoal-cell` encodes it, then its payload.
    fn cell_bytes(&mut self, frame: &Frame<Bytes>) -> [u8; CELL_LEN] {
        let mut cell = [0u8; CELL_LEN];
        let header = wire::encode(frame).expect("a 64-byte cell of a rack under 1,024 nodes");
        cell[..shoal_cell::HEADER_LEN].copy_from_slice(&header);
        self.counters.max_feedback_sent = self.counters.max_feedback_sent.max(frame.feedback);
        if let Kind::Data { .. } = frame.cell.kind {
            if frame.cell.src == self.spec.id {
                self.counters.own_bytes_sent += frame.cell.len as u64;
            }
            match self.arena.get(frame.payload) {
                Some(b) => cell[shoal_cell::HEADER_LEN..][..b.len()].copy_from_slice(b),
                None => self.counters.payload_expired += 1,
            }
        }
        cell
    }

    /// Step 5: deliveries to the host, events to the log.
    fn drain(&mut self, s: u64) -> io::Result<()> {
        while let Some(d) = self.node.poll_delivered() {
            let bytes = self.arena.get(d.payload);
            if bytes.is_none() {
                self.counters.payload_expired += 1;
            }
            self.host.deliver(s, &d, bytes);
        }
        if self.give_up_at == Some(s) {
            self.give_up_at = None;
            self.give_up_lost_cells(s)?;
        }
        while let Some(e) = self.node.poll_event() {
            let what = match e {
                Event::PeerFailed(p) => {
                    let n = self.fabric.spec.nodes as u64;
                    self.give_up_at =
                        Some(s + GIVE_UP_EPOCHS_PER_NODE * n * self.fabric.epoch_slots());
                    EventKind::PeerFailed {
                        peer: p.0,
                        last_heard: self.last_heard[p.idx()],
                    }
                }
                Event::FlowAborted {
                    dst, unsent_bytes, ..
                } => EventKind::FlowAborted {
                    dst: dst.0,
                    unsent_bytes,
                },
            };
            self.event(what)?;
        }
        Ok(())
    }

    /// Delivers, source by source, what cells lost with a failed peer held back.
    fn give_up_lost_cells(&mut self, s: u64) -> io::Result<()> {
        for src in (0..self.fabric.spec.nodes).map(NodeId) {
            if src == self.spec.id {
                continue;
            }
            let skipped = self.node.skip_lost_cells(src, 0);
            if skipped == 0 {
                continue;
            }
            self.counters.cells_given_up += skipped as u64;
            self.host.cells_lost(src);
            self.event(EventKind::CellsGivenUp {
                src: src.0,
                cells: skipped,
            })?;
            while let Some(d) = self.node.poll_delivered() {
                let bytes = self.arena.get(d.payload);
                self.host.deliver(s, &d, bytes);
            }
        }
        Ok(())
    }

    /// Writes the counters file and flushes the log and capture.
    fn report(&mut self) -> io::Result<()> {
        self.counters.queued_cells = self.node.queued_cells();
        self.log.flush()?;
        if let Some(p) = &mut self.pcap {
            p.flush()?;
        }
        if let Some(dir) = &self.spec.dir {
            write_json_atomically(&dir.join("counters.json"), &self.snapshot())?;
        }
        Ok(())
    }

    /// Everything a reader of the counters file sees: the driver's counters, the node's own
    /// statistics and the host's.
    pub fn snapshot(&self) -> serde_json::Value {
        let s = self.node.stats();
        serde_json::json!({
            "node": self.spec.id.0,
            "driver": self.counters,
            "node_stats": {
                "data_cells_sent": s.data_cells_sent,
                "idle_cells_sent": s.idle_cells_sent,
                "notices_sent": s.notices_sent,
                "retransmissions": s.retransmissions,
                "cells_delivered": s.cells_delivered,
                "bytes_delivered": s.bytes_delivered,
                "transit_cells": s.transit_cells,
                "corrupt_received": s.corrupt_received,
                "duplicates": s.duplicates,
                "tail_drops": s.tail_drops,
                "discarded_for_failure": s.discarded_for_failure,
                "rerouted": s.rerouted,
                "protocol_errors": s.protocol_errors,
                "peers_failed": s.peers_failed,
                "max_queue": s.max_queue,
                "max_queued_total": s.max_queued_total,
                "max_transit_total": s.max_transit_total,
                "max_reorder_bytes": s.max_reorder_bytes,
            },
            "host": self.host.counters(),
        })
    }
}
