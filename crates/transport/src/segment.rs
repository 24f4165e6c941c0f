//! What a transport puts on the wire: the header fields the simulators carry. No payload bytes
//! travel (DESIGN.md, principle 7): `payload` says how many there would be.

use shoal_base::Time;

/// The kind of a segment. Data carries payload; the rest are control packets that the fabric
/// forwards at header size (and, where queues have a priority lane, with priority).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Data,
    /// Cumulative acknowledgement (TCP, DCTCP) or per-packet acknowledgement (NDP).
    Ack,
    /// A trimmed packet's header reached the receiver: resend (NDP).
    Nack,
    /// Receiver-paced permission to send one more packet (NDP).
    Pull,
    /// Congestion notification (DCQCN).
    Cnp,
}

/// The network marked congestion (ECN CE).
pub const CE: u8 = 1;
/// The receiver echoes a CE mark back to the sender (TCP's ECE).
pub const ECE: u8 = 1 << 1;
/// A switch cut the payload off and kept the header (NDP trimming).
pub const TRIMMED: u8 = 1 << 2;
/// The segment is a retransmission.
pub const RETX: u8 = 1 << 3;

/// One transport segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub kind: Kind,
    /// Flag bits: [`CE`], [`ECE`], [`TRIMMED`], [`RETX`].
    pub flags: u8,
    /// Payload bytes (0 for control segments).
    pub payload: u32,
    /// Byte offset of the payload in the flow (data), or the offset a control segment is about.
    pub seq: u64,
    /// Cumulative acknowledgement: every byte below it has arrived (acks), or a pull counter;
    /// on an MPTCP data segment, the payload's offset in the connection (its data sequence
    /// mapping), `seq` being its offset in the subflow.
    pub ack: u64,
    /// Sender's transmit time, echoed back in acknowledgements for RTT samples (like the TCP
    /// timestamp option, so retransmissions give valid samples too).
    pub stamp: Time,
    /// The subflow of a multipath transport the segment belongs to (MPTCP), which the network
    /// may route on a path of its own; 0 for single-path transports.
    pub path: u16,
}

impl Segment {
    pub fn data(seq: u64, payload: u32, stamp: Time) -> Segment {
        Segment {
            kind: Kind::Data,
            flags: 0,
            payload,
            seq,
            ack: 0,
            stamp,
            path: 0,
        }
    }

    pub fn control(kind: Kind, seq: u64, ack: u64, stamp: Time) -> Segment {
        Segment {
            kind,
            flags: 0,
            payload: 0,
            seq,
            ack,
            stamp,
            path: 0,
        }
    }

    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}
