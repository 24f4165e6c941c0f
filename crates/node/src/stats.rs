//! Counters a node keeps about itself. Engines read them; the node never reports them anywhere.

/// Cumulative counters and high-water marks of one node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeStats {
    /// Cells carrying payload that this node transmitted (its own and forwarded ones).
    pub data_cells_sent: u64,
    /// Empty cells sent because nothing was queued for the peer of the slot.
    pub idle_cells_sent: u64,
    /// Unreachable notices sent (§3.5, reaction ii).
    pub notices_sent: u64,
    /// Cells sent again because the peer set last-cell-dropped or sent a corrupt cell (App. D).
    pub retransmissions: u64,
    /// Cells of flows destined here, delivered in order.
    pub cells_delivered: u64,
    pub bytes_delivered: u64,
    /// Cells this node accepted for forwarding.
    pub transit_cells: u64,
    /// Cells whose header failed the CRC.
    pub corrupt_received: u64,
    /// Cells delivered or buffered before (retransmitted copies), or 2^14 or more cells ahead
    /// of the expected one (indistinguishable in 15-bit serial arithmetic).
    pub duplicates: u64,
    /// Lower-class cells dropped at a full queue (App. C).
    pub tail_drops: u64,
    /// Cells discarded because their next hop or destination had failed (§3.5, reaction iv).
    pub discarded_for_failure: u64,
    /// Local cells moved off a failed or blocked intermediate (§3.5, reaction iii).
    pub rerouted: u64,
    /// Cells that broke the protocol (a transit cell not from its source, a bad class).
    pub protocol_errors: u64,
    /// Peers this node declared failed.
    pub peers_failed: u64,
    /// Longest single queue `Q_ij` seen, in cells.
    pub max_queue: u32,
    /// Most cells queued at this node at once, over all its queues.
    pub max_queued_total: u64,
    /// Most transit cells (queued here for other sources) at this node at once.
    pub max_transit_total: u64,
    /// Most payload bytes of one flow held out of order at once.
    pub max_reorder_bytes: u64,
}
