//! What travels between Fabric Adapters and Fabric Elements: fixed-bound cells, each either a
//! data cell (packet fragments of one VOQ, packed back to back) or a control cell (a VOQ's
//! status to an egress scheduler, or a credit back to the VOQ). A Fabric Element reads only
//! the destination, the kind (data and control cross separate crossbars) and the FCI bit.
//!
//! The simulator carries no payload bytes: a data cell lists the fragments it holds (whose
//! packet, how many of its bytes, whether the fragment starts or ends the packet), which is
//! what the cell's bytes would tell the egress reassembly.

/// At most this many packet fragments in one cell. A 512 B cell reaches it only with packets
/// under 64 B; the packer then closes the cell early (and counts it).
pub const MAX_FRAGS: usize = 8;

/// A fragment starts its packet.
pub const FIRST: u8 = 1;
/// A fragment ends its packet.
pub const LAST: u8 = 2;

/// A packet as the Fabric Adapter stores it: the flow it belongs to (the run's record index)
/// and its size on the host link, headers included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub record: u32,
    pub wire: u32,
}

/// Part of a packet inside a cell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Frag {
    pub record: u32,
    pub bytes: u16,
    /// [`FIRST`] and/or [`LAST`].
    pub flags: u8,
}

/// The data part of a data cell: which VOQ stream it belongs to, its place in that stream and
/// the fragments it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Data {
    /// Destination port on the destination adapter.
    pub port: u16,
    pub class: u8,
    /// Sequence number within the stream of this (source adapter, port, class) VOQ.
    pub seq: u32,
    /// Payload bytes (the fragments' sum).
    pub bytes: u16,
    pub frags: u8,
    pub frag: [Frag; MAX_FRAGS],
}

impl Data {
    pub fn fragments(&self) -> &[Frag] {
        &self.frag[..self.frags as usize]
    }
}

/// A control message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// From a VOQ to the egress scheduler of its port: whether it holds data (`on`), numbered
    /// per VOQ so that a late status never overrides a newer one (statuses are sprayed too and
    /// may overtake each other), and credit bytes it gives back unused.
    Status {
        port: u16,
        class: u8,
        seq: u32,
        on: bool,
        returned: u32,
    },
    /// From an egress scheduler to a VOQ: permission to send `bytes`.
    Credit { port: u16, class: u8, bytes: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    Data(Data),
    Control(Control),
}

/// A cell: source and destination Fabric Adapters, the congestion bit and the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub src: u32,
    pub dst: u32,
    /// Fabric Congestion Indication: set by a Fabric Element whose output queue was above its
    /// threshold when the cell left it.
    pub fci: bool,
    /// When the cell left its source adapter's queue onto the fabric (for the traversal
    /// latency of Fig. 9); set by the adapter's link.
    pub sent_at: u64,
    pub body: Body,
}

impl Cell {
    pub fn is_data(&self) -> bool {
        matches!(self.body, Body::Data(_))
    }
}
