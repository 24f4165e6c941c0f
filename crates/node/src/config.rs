//! The parameters a Shoal node needs, checked once.

use shoal_base::NodeId;
use std::fmt;

/// The largest rack a node accepts. Queue lengths are 16-bit counters (`peer.rs`): a queue of
/// the highest class holds fewer than 2N cells, one of a lower class fewer than
/// N + `low_class_queue_cells` + 1, so this limit and [`MAX_LOW_CLASS_QUEUE_CELLS`] keep every
/// queue below 2^16. (At this size the per-peer records alone take 16 GiB.)
pub const MAX_NODES: u16 = 16_384;

/// The largest tail-drop limit for lower-class queues; see [`MAX_NODES`].
pub const MAX_LOW_CLASS_QUEUE_CELLS: u32 = 16_384;

/// Everything a node must know about its rack. All of it is static for the life of the node.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// This node.
    pub id: NodeId,
    /// Nodes in the rack (N).
    pub nodes: u16,
    /// Slots in one epoch (E): the interval at which each ordered pair is connected once.
    pub epoch_slots: u32,
    /// A cell transmitted in slot `s` is handed to its receiver at slot `s + delay_slots`
    /// (serialization plus propagation, in whole slots; App. A). At least 1.
    pub delay_slots: u32,
    /// Payload bytes per cell: cell size minus header size (64 − 8 = 56 by default). Above 63
    /// the cell no longer fits the 8-byte wire header, which only the simulator tolerates.
    pub payload_bytes: u16,
    /// Traffic classes (App. C), 1..=4. Class 0 has strict priority over class 1, and so on.
    pub classes: u8,
    /// Tail-drop limit, in cells, of each queue of a class below the highest. The highest class
    /// needs no limit: Eq. 3/5 bound it. Lower classes can be starved and must drop (App. C).
    pub low_class_queue_cells: u32,
    /// §3.3.3 at the intermediate node: local flows wait in a ready queue `R_jk` and at most one
    /// local cell sits in `Q_jk` (Eq. 4-6). Off reproduces the "without optimizations" curve of
    /// Fig. 14.
    pub ready_queue: bool,
    /// §3.3.3 at the source: a new flow adds a cell to `Q_ij` only while
    /// `len(Q_ij) <= 2^age`, age in epochs since the flow started.
    pub age_rule: bool,
    /// Serve the messages the host has submitted to one destination and class packet by
    /// packet in turn (round robin), instead of each to its end before the next. §3.3.2 makes
    /// all traffic of a pair one flow, "all transport connections between the nodes"; a host
    /// multiplexing several connections onto it interleaves their packets, whereas first come,
    /// first served holds a short message behind a long one for the long one's whole length.
    pub interleave_messages: bool,
    /// Per peer: the slot within the epoch in which this node transmits to it (`tx_slot`) and
    /// in which it transmits to this node (`rx_slot`); `u16::MAX` for this node itself. From the
    /// static schedule; feedback uses them to turn queue lengths into exact waits.
    pub tx_slot: Vec<u16>,
    pub rx_slot: Vec<u16>,
    /// Check the per-subflow invariant behind the queue bounds of Eq. 3 and 5 on every enqueue
    /// (debug builds only). Turn it off where the paper says the bound can break: corrupted
    /// feedback (App. D) and retransmissions.
    pub check_bounds: bool,
}

/// Why a configuration cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl NodeConfig {
    /// The paper's defaults for a rack of `nodes` on a schedule with an epoch of `epoch_slots`
    /// in which this node sends to peer `p` in slot `tx_slot[p]` and hears from it in slot
    /// `rx_slot[p]`: 64 B cells with an 8 B header, one traffic class, both §3.3.3
    /// optimizations on, messages interleaved.
    pub fn new(
        id: NodeId,
        nodes: u16,
        epoch_slots: u32,
        delay_slots: u32,
        tx_slot: Vec<u16>,
        rx_slot: Vec<u16>,
    ) -> Self {
        NodeConfig {
            id,
            nodes,
            epoch_slots,
            delay_slots,
            tx_slot,
            rx_slot,
            payload_bytes: 56,
            classes: 1,
            low_class_queue_cells: 64,
            ready_queue: true,
            age_rule: true,
            interleave_messages: true,
            check_bounds: true,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |s: String| Err(ConfigError(s));
        if !(2..=MAX_NODES).contains(&self.nodes) {
            return err(format!(
                "a rack has 2 to {MAX_NODES} nodes, got {}",
                self.nodes
            ));
        }
        if self.id.0 >= self.nodes {
            return err(format!(
                "node id {} outside a rack of {} nodes",
                self.id.0, self.nodes
            ));
        }
        if self.epoch_slots == 0 {
            return err("epoch_slots must be at least 1".into());
        }
        for (name, slots) in [("tx_slot", &self.tx_slot), ("rx_slot", &self.rx_slot)] {
            if slots.len() != self.nodes as usize {
                return err(format!(
                    "{name} needs one entry per node ({}), got {}",
                    self.nodes,
                    slots.len()
                ));
            }
            if let Some((p, s)) = slots
                .iter()
                .enumerate()
                .find(|&(p, &s)| p != self.id.idx() && s as u32 >= self.epoch_slots)
            {
                return err(format!(
                    "{name}[{p}] = {s} is outside an epoch of {} slots",
                    self.epoch_slots
                ));
            }
        }
        if self.delay_slots == 0 {
            return err("delay_slots must be at least 1: a cell sent in a slot is received at its end at the earliest".into());
        }
        if self.payload_bytes == 0 {
            return err("payload_bytes must be at least 1".into());
        }
        if !(1..=4).contains(&self.classes) {
            return err(format!(
                "classes must be 1..=4 (2-bit field), got {}",
                self.classes
            ));
        }
        if self.classes > 1
            && !(1..=MAX_LOW_CLASS_QUEUE_CELLS).contains(&self.low_class_queue_cells)
        {
            return err(format!(
                "low_class_queue_cells must be 1 to {MAX_LOW_CLASS_QUEUE_CELLS}, got {}",
                self.low_class_queue_cells
            ));
        }
        Ok(())
    }
}
