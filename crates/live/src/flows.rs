//! A host that runs a list of flows and checks every byte it receives: the live counterpart of
//! the simulator's hosts (`shoal-rack`'s `host.rs`), so that one flow list can run in both.
//!
//! Each flow is one message to the source node, cut into packets of `packet_bytes` as the
//! simulator's rack cuts them. The simulator tags each cell with its flow; here the bytes must
//! speak for themselves, so every packet begins with an 8-byte tag (flow id, packet index) and is
//! filled with a pattern derived from both. The destination reassembles each packet from the
//! in-order cells between start- and end-of-packet, reads its tag and compares all of it with
//! what the source must have sent: a flow completes only when every byte arrived intact.

use crate::arena::{Arena, Bytes};
use crate::clock::now_ns;
use crate::driver::Host;
use serde::Serialize;
use shoal_base::NodeId;
use shoal_node::{Delivery, Node};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of the tag at the head of each packet.
pub const TAG_BYTES: u64 = 8;

/// One flow of a live run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LiveFlow {
    pub id: u32,
    pub src: NodeId,
    pub dst: NodeId,
    pub bytes: u64,
    /// The slot at whose start the source hands it to its node.
    pub start_slot: u64,
}

/// What became of a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LiveRecord {
    pub flow: LiveFlow,
    /// The slot in which its last byte was delivered.
    pub finish_slot: Option<u64>,
    /// `CLOCK_MONOTONIC` ns when it was submitted and when its last byte was delivered.
    pub submit_ns: Option<u64>,
    pub finish_ns: Option<u64>,
    /// Payload bytes delivered intact.
    pub delivered: u64,
    /// The node refused it (no path left to the destination).
    pub refused: bool,
}

/// Why a flow cannot run on the live rack.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlowError {
    #[error(
        "flow {id}: its last packet would have {tail} bytes, fewer than the {TAG_BYTES}-byte tag \
         that names its flow; make the size a multiple of the packet size or leave a longer tail"
    )]
    TailTooShort { id: u32, tail: u64 },
    #[error("flow {id}: {bytes} bytes do not fit the {arena} bytes of the payload arena")]
    TooLarge { id: u32, bytes: u64, arena: usize },
}

/// Checks that `flow` can be tagged packet by packet and fits `arena` bytes.
pub fn check_flow(flow: &LiveFlow, packet_bytes: u32, arena: usize) -> Result<(), FlowError> {
    let tail = flow.bytes % packet_bytes as u64;
    if tail != 0 && tail < TAG_BYTES || flow.bytes < TAG_BYTES {
        return Err(FlowError::TailTooShort {
            id: flow.id,
            tail: if flow.bytes < TAG_BYTES {
                flow.bytes
            } else {
                tail
            },
        });
    }
    if flow.bytes > arena as u64 / 2 {
        return Err(FlowError::TooLarge {
            id: flow.id,
            bytes: flow.bytes,
            arena,
        });
    }
    Ok(())
}

/// The bytes of packet `k` (of `len` bytes) of flow `id`.
pub fn packet(id: u32, k: u32, len: usize) -> Vec<u8> {
    let mut p = Vec::with_capacity(len);
    p.extend_from_slice(&id.to_be_bytes());
    p.extend_from_slice(&k.to_be_bytes());
    let seed = id.wrapping_mul(0x9e37_79b9) ^ k.wrapping_mul(0x85eb_ca6b);
    p.extend((p.len()..len).map(|i| (seed.rotate_left(i as u32 % 32) as u8) ^ i as u8));
    p.truncate(len);
    p
}

/// The flows of one node, as source and as destination.
pub struct FlowHost {
    me: NodeId,
    packet_bytes: u32,
    /// Flows this node sources, by start slot; `next` is the first not yet submitted.
    outgoing: Vec<usize>,
    next: usize,
    pub records: Vec<LiveRecord>,
    /// Flow id → index into `records`, for flows destined here.
    incoming: BTreeMap<u32, usize>,
    /// Per source: the packet being reassembled, if its first cell arrived.
    partial: Vec<Option<Vec<u8>>>,
    /// Packets (or their remains) discarded because cells of theirs were lost with a failed node.
    pub packets_lost: u64,
    /// Packets that arrived with bytes other than the source sent (or with an unknown tag).
    pub mismatches: u64,
    /// Flows completed here; shared with whoever waits for the run to end.
    completed: Arc<AtomicU64>,
}

impl FlowHost {
    /// The host of node `me` for the rack's `flows` (those it neither sources nor sinks are
    /// ignored).
    pub fn new(
        me: NodeId,
        nodes: usize,
        flows: &[LiveFlow],
        packet_bytes: u32,
        completed: Arc<AtomicU64>,
    ) -> FlowHost {
        let mut records = Vec::new();
        let mut incoming = BTreeMap::new();
        let mut outgoing = Vec::new();
        for f in flows.iter().filter(|f| f.src == me || f.dst == me) {
            if f.dst == me {
                incoming.insert(f.id, records.len());
            }
            if f.src == me {
                outgoing.push(records.len());
            }
            records.push(LiveRecord {
                flow: *f,
                finish_slot: None,
                submit_ns: None,
                finish_ns: None,
                delivered: 0,
                refused: false,
            });
        }
        outgoing.sort_by_key(|&i| (records[i].flow.start_slot, records[i].flow.id));
        FlowHost {
            me,
            packet_bytes,
            outgoing,
            next: 0,
            records,
            incoming,
            partial: vec![None; nodes],
            mismatches: 0,
            packets_lost: 0,
            completed,
        }
    }

    /// The flows this node sourced, with what happened to them at the source.
    pub fn sourced(&self) -> impl Iterator<Item = &LiveRecord> {
        self.records.iter().filter(move |r| r.flow.src == self.me)
    }

    /// The flows destined here, with what arrived.
    pub fn sunk(&self) -> impl Iterator<Item = &LiveRecord> {
        self.records.iter().filter(move |r| r.flow.dst == self.me)
    }

    fn check_packet(&mut self, p: Vec<u8>, src: NodeId, slot: u64) {
        let tag = p
            .get(..TAG_BYTES as usize)
            .map(|t| (u32::from_be_bytes(t[..4].try_into().expect("4")), t));
        let Some((id, t)) = tag else {
            self.mismatches += 1;
            return;
        };
        let k = u32::from_be_bytes(t[4..8].try_into().expect("4"));
        let Some(&r) = self.incoming.get(&id) else {
            self.mismatches += 1;
            return;
        };
        let rec = &mut self.records[r];
        let offset = k as u64 * self.packet_bytes as u64;
        let expect_len = rec
            .flow
            .bytes
            .saturating_sub(offset)
            .min(self.packet_bytes as u64);
        if rec.flow.src != src
            || p.len() as u64 != expect_len
            || p != packet(id, k, expect_len as usize)
        {
            self.mismatches += 1;
            return;
        }
        rec.delivered += p.len() as u64;
        if rec.delivered == rec.flow.bytes {
            rec.finish_slot = Some(slot);
            rec.finish_ns = Some(now_ns());
            self.completed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Host for FlowHost {
    fn submit(&mut self, slot: u64, node: &mut Node<Bytes>, arena: &mut Arena, _: u64) -> u64 {
        let mut bytes = 0;
        while let Some(&r) = self.outgoing.get(self.next) {
            let f = self.records[r].flow;
            if f.start_slot > slot {
                break;
            }
            self.next += 1;
            let p = self.packet_bytes as u64;
            let mut message = Vec::with_capacity(f.bytes as usize);
            for k in 0..f.bytes.div_ceil(p) {
                let len = (f.bytes - k * p).min(p);
                message.extend(packet(f.id, k as u32, len as usize));
            }
            let at = arena.append(&message);
            let rec = &mut self.records[r];
            rec.submit_ns = Some(now_ns());
            match node.submit(slot, f.dst, 0, f.bytes, self.packet_bytes, at) {
                Ok(()) => bytes += f.bytes,
                Err(_) => rec.refused = true,
            }
        }
        bytes
    }

    fn deliver(&mut self, slot: u64, d: &Delivery<Bytes>, bytes: Option<&[u8]>) {
        let open = &mut self.partial[d.src.idx()];
        if d.sop {
            if open.is_some() {
                // Its end never came: only a loss (which `cells_lost` reports first) does that.
                self.mismatches += 1;
            }
            *open = Some(Vec::new());
        }
        let Some(buf) = open else {
            // The rest of a packet whose head was lost with a failed node.
            self.packets_lost += d.eop as u64;
            return;
        };
        match bytes {
            Some(b) => buf.extend_from_slice(b),
            // Gone from the arena: keep the length so that the packet fails its check.
            None => buf.resize(buf.len() + d.len as usize, 0),
        }
        if d.eop {
            let p = open.take().expect("open");
            self.check_packet(p, d.src, slot);
        }
    }

    fn cells_lost(&mut self, src: NodeId) {
        if self.partial[src.idx()].take().is_some() {
            self.packets_lost += 1;
        }
    }

    fn counters(&self) -> serde_json::Value {
        let done = self.sunk().filter(|r| r.finish_slot.is_some()).count();
        serde_json::json!({
            "flows_sourced": self.sourced().count(),
            "flows_refused": self.sourced().filter(|r| r.refused).count(),
            "flows_sunk": self.sunk().count(),
            "flows_completed_here": done,
            "bytes_delivered_intact": self.sunk().map(|r| r.delivered).sum::<u64>(),
            "packet_mismatches": self.mismatches,
            "packets_lost": self.packets_lost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_carry_their_tag_and_differ_between_flows() {
        let a = packet(7, 3, 1500);
        assert_eq!(&a[..8], &[0, 0, 0, 7, 0, 0, 0, 3]);
        assert_eq!(a.len(), 1500);
        assert_ne!(a[8..], packet(8, 3, 1500)[8..]);
        assert_ne!(a[8..], packet(7, 4, 1500)[8..]);
        assert_eq!(packet(7, 3, 10), a[..10]);
    }

    #[test]
    fn flows_whose_tail_cannot_hold_a_tag_are_refused() {
        let f = |bytes| LiveFlow {
            id: 1,
            src: NodeId(0),
            dst: NodeId(1),
            bytes,
            start_slot: 0,
        };
        assert!(check_flow(&f(3000), 1500, 1 << 20).is_ok());
        assert!(check_flow(&f(3008), 1500, 1 << 20).is_ok());
        assert!(check_flow(&f(3007), 1500, 1 << 20).is_err());
        assert!(check_flow(&f(4), 1500, 1 << 20).is_err());
        assert!(check_flow(&f(1 << 20), 1500, 1 << 20).is_err());
    }
}
