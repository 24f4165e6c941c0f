//! What travels between nodes: one cell per channel-slot, as compact records.
//!
//! The simulator never materialises payload bytes: a frame carries the header fields and an
//! opaque payload handle `P` (`()` in the simulator). The live emulator maps frames to and from
//! the 8-byte wire header of `shoal-cell` (see [`crate::wire`]).

use shoal_base::NodeId;

/// What a cell is, as the header's (len, sop, eop) encode it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// No payload: sent when the node has nothing for this peer (every slot carries a cell,
    /// §3.3.1), still carrying feedback and last-cell-dropped.
    Idle,
    /// The sender can no longer reach node `dst` (§3.5, reaction ii).
    Unreachable,
    /// A fragment of a packet.
    Data { sop: bool, eop: bool },
}

/// The header fields that stay with a cell while it is queued. Feedback and last-cell-dropped
/// are per hop and added at transmission, so they live in [`Frame`], not here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellRec {
    /// Final destination; for `Unreachable`, the node that cannot be reached.
    pub dst: NodeId,
    /// The node that sourced the cell.
    pub src: NodeId,
    /// Per-(src, dst) sequence number modulo 2^15.
    pub seq: u16,
    /// Payload bytes in this cell. The simulator allows any cell size; the 8-byte wire
    /// header carries at most 63.
    pub len: u16,
    /// Traffic class, 0 = highest priority.
    pub class: u8,
    pub kind: Kind,
}

/// One cell on one channel in one slot, as transmitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<P> {
    pub cell: CellRec,
    /// Rate-limit feedback for the subflow of the last cell the receiver sent us (Eq. 1/6).
    pub feedback: u16,
    /// Last-cell-dropped: the receiver must retransmit the last cell it sent us (App. C, D).
    pub lcd: bool,
    pub payload: P,
}

/// What a node is handed for one expected reception.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Rx<P> {
    /// A cell arrived intact.
    Cell(Frame<P>),
    /// A cell arrived but its header failed the CRC. The node still uses the (possibly wrong)
    /// feedback and treats last-cell-dropped as set (App. D).
    Corrupt { feedback: u16 },
    /// Nothing arrived in the peer's slot: the peer or the path has failed (§3.5).
    #[default]
    Missing,
}

/// The largest feedback value the header's feedback field carries (its width is in
/// `shoal_cell`'s layout table).
pub const MAX_FEEDBACK: u16 = shoal_cell::MAX_FEEDBACK;

/// Sequence numbers wrap at the width of the header's sequence field.
pub const SEQ_MODULUS: u32 = shoal_cell::SEQ_MODULUS as u32;
