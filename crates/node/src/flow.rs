//! The source side of one Shoal flow: all traffic from this node to one destination in one
//! traffic class (§3.3.2: "a flow refers to all layer-2 packets being exchanged between a pair of
//! nodes"). Data waits here as messages and is cut into cells only when a subflow is allowed to
//! release one, so a 1 GB flow costs one record, not 18 million cells.
//!
//! [`LocalFlow`] and its subflow records are public so that the simulator's fast engine keeps
//! its flows with this same code.

use crate::frame::{CellRec, Kind, SEQ_MODULUS};
use shoal_base::NodeId;
use std::collections::VecDeque;
use std::fmt::Debug;

/// What a cell carries. The simulator uses `()`; the live emulator uses a handle into its own
/// byte store, so the node never copies or even sees payload bytes.
pub trait Payload: Copy + Default + Debug {
    /// What the host hands over with each message.
    type Packet: Copy + Debug;
    /// The payload of the cell holding bytes `offset..offset + len` of message `packet`.
    fn fragment(packet: Self::Packet, offset: u64, len: u16) -> Self;
}

impl Payload for () {
    type Packet = ();
    fn fragment(_: (), _: u64, _: u16) {}
}

/// Bytes submitted by the host, cut into packets of `packet_bytes` and packets into cells.
#[derive(Clone, Copy, Debug)]
struct Message<K> {
    /// Bytes of the message not yet cut into cells.
    left: u64,
    /// Bytes already cut, i.e. the offset of the next cell within the message.
    offset: u64,
    packet_bytes: u32,
    /// Bytes left in the packet being cut; 0 means the next cell starts a packet.
    packet_left: u32,
    packet: K,
}

/// Where subflow `i → j → k` of a flow stands (§3.3.2 congestion control, §3.3.3 age rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubState {
    /// May release a cell as soon as the flow has data; listed in the flow's idle list.
    Idle,
    /// Waiting in the intermediate's pending list for Eq. 2 (feedback `fb` received at slot
    /// `since`) or the age rule to hold.
    Pending,
    /// In the ready queue `R_ij` (ready-queue mode only).
    Ready,
    /// Its cell sits in `Q_ij`.
    Queued,
    /// Its cell was sent to the intermediate; the feedback for it has not arrived.
    InFlight,
    /// The intermediate cannot be used: failed, or it reported the destination unreachable.
    Blocked,
}

/// Eight bytes: a flow keeps one per node of the rack and the cells of a flow touch them at
/// random, so their size shows in the cache (16 → 8 bytes sped the datacenter benchmark up by
/// about a tenth; BENCHMARKS.md).
#[derive(Clone, Copy, Debug)]
pub struct Sub {
    pub state: SubState,
    /// Rate-limit feedback of the last cell (Eq. 1/6), in cells.
    pub fb: u16,
    /// Low 32 bits of the slot at which that feedback arrived (T in Eq. 2); see [`Sub::waited`].
    since: u32,
}

impl Sub {
    pub fn feedback_at(&mut self, fb: u16, slot: u64) {
        self.fb = fb;
        self.since = slot as u32;
    }

    /// Slots since the feedback arrived (t − T in Eq. 2). Exact while a subflow waits less than
    /// 2^32 slots (100 s of 23 ns slots): a wait lasts at most `MAX_FEEDBACK` epochs plus the
    /// few epochs of the age rule, and is re-checked every epoch.
    pub fn waited(&self, slot: u64) -> u64 {
        (slot as u32).wrapping_sub(self.since) as u64
    }
}

pub const FRESH: Sub = Sub {
    state: SubState::Idle,
    fb: 0,
    since: 0,
};

/// One active local flow.
pub struct LocalFlow<P: Payload> {
    pub dst: NodeId,
    pub class: u8,
    messages: VecDeque<Message<P::Packet>>,
    /// Slot at which the flow (re)started, for the age rule.
    pub start_slot: u64,
    /// Per intermediate (indexed by node id; the entry of this node is unused).
    pub subs: Vec<Sub>,
    /// Intermediates whose subflow is `Idle`: the ones to wake when data arrives.
    pub idle: Vec<u16>,
    /// List entries, queued cells and in-flight records that name this flow. The flow's slot is
    /// recycled only when this is zero and no data is left, so no stale index ever resolves to
    /// another flow.
    pub refs: u32,
}

impl<P: Payload> LocalFlow<P> {
    pub fn new(nodes: usize) -> Self {
        LocalFlow {
            dst: NodeId(0),
            class: 0,
            messages: VecDeque::new(),
            start_slot: 0,
            subs: vec![FRESH; nodes],
            idle: Vec::with_capacity(nodes),
            refs: 0,
        }
    }

    /// Resets a recycled record for a new (destination, class).
    pub fn reset(&mut self, dst: NodeId, class: u8, slot: u64) {
        self.dst = dst;
        self.class = class;
        self.messages.clear();
        self.start_slot = slot;
        self.subs.fill(FRESH);
        self.idle.clear();
        self.refs = 0;
    }

    pub fn has_data(&self) -> bool {
        !self.messages.is_empty()
    }

    pub fn unsent_bytes(&self) -> u64 {
        self.messages.iter().map(|m| m.left).sum()
    }

    pub fn push(&mut self, bytes: u64, packet_bytes: u32, packet: P::Packet) {
        self.messages.push_back(Message {
            left: bytes,
            offset: 0,
            packet_bytes,
            packet_left: 0,
            packet,
        });
    }

    pub fn clear_data(&mut self) {
        self.messages.clear();
    }

    /// Cuts the next cell. `seq` is the per-(destination, class) counter, advanced here. With
    /// `interleave`, a message whose packet ends here goes behind the others (round robin by
    /// packet); without, each message is cut to its end first. Callers check `has_data` first.
    pub fn take_cell(
        &mut self,
        src: NodeId,
        payload_bytes: u16,
        seq: &mut u16,
        interleave: bool,
    ) -> (CellRec, P) {
        let m = self
            .messages
            .front_mut()
            .expect("take_cell on a flow without data");
        let sop = m.packet_left == 0;
        if sop {
            m.packet_left = m.left.min(m.packet_bytes as u64) as u32;
        }
        let len = m.packet_left.min(payload_bytes as u32) as u16;
        m.packet_left -= len as u32;
        let eop = m.packet_left == 0;
        let payload = P::fragment(m.packet, m.offset, len);
        m.offset += len as u64;
        m.left -= len as u64;
        if m.left == 0 {
            self.messages.pop_front();
        } else if eop && interleave && self.messages.len() > 1 {
            self.messages.rotate_left(1);
        }
        let cell = CellRec {
            dst: self.dst,
            src,
            seq: *seq,
            len,
            class: self.class,
            kind: Kind::Data { sop, eop },
        };
        *seq = ((*seq as u32 + 1) % SEQ_MODULUS) as u16;
        (cell, payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subflow_record_is_eight_bytes_and_counts_its_wait_across_the_32_bit_wrap() {
        assert_eq!(std::mem::size_of::<Sub>(), 8);
        let mut sub = FRESH;
        let t = (1u64 << 32) - 5;
        sub.feedback_at(7, t);
        assert_eq!((sub.fb, sub.waited(t), sub.waited(t + 12)), (7, 0, 12));
    }

    #[test]
    fn fragmentation_marks_packet_boundaries_and_conserves_bytes() {
        let mut f: LocalFlow<()> = LocalFlow::new(4);
        f.reset(NodeId(2), 0, 0);
        // 130 bytes in packets of 100: one packet of 100 (cells 56 + 44), one of 30.
        f.push(130, 100, ());
        let mut seq = SEQ_MODULUS as u16 - 1;
        let mut cells = Vec::new();
        while f.has_data() {
            cells.push(f.take_cell(NodeId(0), 56, &mut seq, true).0);
        }
        let shape: Vec<(u16, bool, bool)> = cells
            .iter()
            .map(|c| match c.kind {
                Kind::Data { sop, eop } => (c.len, sop, eop),
                _ => panic!("not data"),
            })
            .collect();
        assert_eq!(
            shape,
            vec![(56, true, false), (44, false, true), (30, true, true)]
        );
        // Sequence numbers wrap at 2^15.
        let seqs: Vec<u16> = cells.iter().map(|c| c.seq).collect();
        assert_eq!(seqs, vec![SEQ_MODULUS as u16 - 1, 0, 1]);
    }

    /// Cuts every cell of `f`, returning (payload, len, sop, eop) per cell.
    fn drain(f: &mut LocalFlow<Tag>, interleave: bool) -> Vec<(u8, u16, bool, bool)> {
        let mut seq = 0;
        let mut cells = Vec::new();
        while f.has_data() {
            let (c, p) = f.take_cell(NodeId(0), 56, &mut seq, interleave);
            let Kind::Data { sop, eop } = c.kind else {
                panic!("not data")
            };
            cells.push((p.0, c.len, sop, eop));
        }
        cells
    }

    /// A payload that names its message, to see which message each cell came from.
    #[derive(Clone, Copy, Debug, Default, PartialEq)]
    struct Tag(u8);
    impl Payload for Tag {
        type Packet = u8;
        fn fragment(packet: u8, _: u64, _: u16) -> Tag {
            Tag(packet)
        }
    }

    #[test]
    fn interleaved_messages_take_turns_by_whole_packets() {
        let mut f: LocalFlow<Tag> = LocalFlow::new(4);
        f.reset(NodeId(2), 0, 0);
        // Message 1: three packets of 100 B (two cells each); message 2: one packet of 60 B.
        f.push(300, 100, 1);
        f.push(60, 100, 2);
        let got = drain(&mut f, true);
        assert_eq!(
            got,
            vec![
                (1, 56, true, false),
                (1, 44, false, true),
                (2, 56, true, false),
                (2, 4, false, true),
                (1, 56, true, false),
                (1, 44, false, true),
                (1, 56, true, false),
                (1, 44, false, true),
            ]
        );
        // First come, first served: message 2 waits for all of message 1.
        f.push(300, 100, 1);
        f.push(60, 100, 2);
        let order: Vec<u8> = drain(&mut f, false).iter().map(|c| c.0).collect();
        assert_eq!(order, vec![1, 1, 1, 1, 1, 1, 2, 2]);
    }
}
