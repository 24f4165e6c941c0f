//! The adapters between the slotted engine and the Shoal model: the static schedule as a lookup
//! table, each node behind a switch that can kill it, and the fabric as a medium that loses cells
//! on failed paths and corrupts header bits.

use crate::host::FlowTag;
use rand::RngExt;
use shoal_base::rng::StreamRng;
use shoal_base::{ChannelId, NodeId};
use shoal_engine::{IDLE, Medium, SlotSchedule, SlottedEndpoint};
use shoal_node::{Node, Rx, wire};
use shoal_schedule::{Clos, Component, FabricSchedule, Slot};

/// The fabric schedule flattened to `[slot in epoch][node][channel] -> peer`, so the engine reads
/// one slot's row front to back.
pub struct PeerTable {
    nodes: usize,
    channels: usize,
    epoch: u64,
    peers: Vec<u16>,
}

impl PeerTable {
    pub fn new(schedule: &FabricSchedule) -> Self {
        let (nodes, channels, epoch) = (
            schedule.nodes(),
            schedule.channels(),
            schedule.epoch_slots(),
        );
        let mut peers = Vec::with_capacity(epoch as usize * channels * nodes);
        for s in 0..epoch {
            for i in 0..nodes {
                for c in 0..channels {
                    let p = schedule.peer(Slot(s), NodeId(i as u16), ChannelId(c as u8));
                    peers.push(p.map_or(IDLE, |p| p.0));
                }
            }
        }
        PeerTable {
            nodes,
            channels,
            epoch,
            peers,
        }
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }
}

impl SlotSchedule for PeerTable {
    fn nodes(&self) -> usize {
        self.nodes
    }

    fn channels(&self) -> usize {
        self.channels
    }

    #[inline]
    fn peers(&self, slot: u64) -> &[u16] {
        let width = self.nodes * self.channels;
        let s = (slot % self.epoch) as usize;
        &self.peers[s * width..(s + 1) * width]
    }
}

/// A node in the rack, or its corpse.
pub struct Endpoint {
    pub node: Node<FlowTag>,
    pub dead: bool,
}

impl SlottedEndpoint for Endpoint {
    type Rx = Rx<FlowTag>;

    #[inline]
    fn transmit(&mut self, slot: u64, to: usize, out: &mut Rx<FlowTag>) {
        if self.dead {
            *out = Rx::Missing;
            return;
        }
        self.node.poll_tx_into(slot, NodeId(to as u16), out);
    }

    #[inline]
    fn receive(&mut self, slot: u64, from: usize, rx: Rx<FlowTag>) {
        if !self.dead {
            self.node.handle_rx(slot, NodeId(from as u16), rx);
        }
    }

    #[inline]
    fn hint(&self, stage: usize) -> bool {
        self.node.prefetch(stage)
    }

    #[inline]
    fn hint_tx(&self, stage: usize, to: usize) {
        self.node.prefetch_tx(stage, NodeId(to as u16));
    }

    #[inline]
    fn hint_rx(&self, stage: usize, from: usize, rx: &Rx<FlowTag>) {
        self.node.prefetch_rx(stage, NodeId(from as u16), rx);
    }
}

/// The circuit-switched fabric between nodes: it loses cells whose path crosses a failed link or
/// switch, and flips header bits at a given bit error rate.
pub struct Fabric {
    nodes: usize,
    channels: usize,
    epoch: u64,
    /// `[slot in epoch][channel][sender]`: the path crosses a failed component. Empty while
    /// nothing has failed.
    dead_path: Vec<bool>,
    /// Cells still to pass before the next corrupted one (geometric gaps), or `None`.
    next_corruption: Option<u64>,
    /// ln(1 − p) for the per-cell corruption probability p.
    log_keep: f64,
    rng: StreamRng,
    pub cells_lost: u64,
    pub cells_corrupted: u64,
}

impl Fabric {
    pub fn new(table: &PeerTable, header_bit_error_rate: f64, rng: StreamRng) -> Self {
        // A 64-bit header survives with probability (1 − ber)^64.
        let p_cell = 1.0 - (1.0 - header_bit_error_rate).powi(64);
        let mut fabric = Fabric {
            nodes: table.nodes,
            channels: table.channels,
            epoch: table.epoch,
            dead_path: Vec::new(),
            next_corruption: None,
            log_keep: (1.0 - p_cell).ln(),
            rng,
            cells_lost: 0,
            cells_corrupted: 0,
        };
        if p_cell > 0.0 {
            fabric.next_corruption = Some(fabric.gap());
        }
        fabric
    }

    /// Cells until the next corrupted one: geometric with success probability p.
    fn gap(&mut self) -> u64 {
        let u: f64 = self.rng.random::<f64>();
        ((1.0 - u).ln() / self.log_keep)
            .floor()
            .min(u64::MAX as f64 / 2.0) as u64
    }

    /// Recomputes which paths are broken, given every link and switch failed so far.
    pub fn set_failed(&mut self, clos: &Clos, failed: &[Component]) {
        if failed.is_empty() {
            self.dead_path.clear();
            return;
        }
        self.dead_path = vec![false; self.epoch as usize * self.channels * self.nodes];
        for s in 0..self.epoch {
            for c in 0..self.channels {
                for i in 0..self.nodes {
                    let path = clos.path(Slot(s), ChannelId(c as u8), NodeId(i as u16));
                    if let Some(path) = path
                        && failed.iter().any(|f| f.lies_on(&path))
                    {
                        self.dead_path[(s as usize * self.channels + c) * self.nodes + i] = true;
                    }
                }
            }
        }
    }
}

impl Medium<Endpoint> for Fabric {
    #[inline]
    fn carry(
        &mut self,
        slot: u64,
        channel: usize,
        from: usize,
        _to: usize,
        cell: &mut Rx<FlowTag>,
    ) {
        let Rx::Cell(frame) = *cell else {
            return;
        };
        if !self.dead_path.is_empty() {
            let s = (slot % self.epoch) as usize;
            if self.dead_path[(s * self.channels + channel) * self.nodes + from] {
                self.cells_lost += 1;
                *cell = Rx::Missing;
                return;
            }
        }
        if let Some(left) = self.next_corruption {
            if left > 0 {
                self.next_corruption = Some(left - 1);
            } else {
                self.cells_corrupted += 1;
                self.next_corruption = Some(self.gap());
                let bit = self.rng.random_range(0..64u32);
                let mut bytes =
                    wire::encode(&frame).expect("validated: the header can carry every field");
                bytes[(bit / 8) as usize] ^= 1 << (bit % 8);
                *cell = wire::decode(&bytes, frame.payload);
            }
        }
    }
}
