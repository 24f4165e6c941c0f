//! The packet record the simulator moves around, and the slab that holds packets in flight so
//! that queues and events carry a 4-byte index instead of the record.

use crate::queue::Links;
use shoal_transport::Segment;

/// One packet: a transport segment plus what the network needs to forward and account it.
///
/// 64 bytes, aligned to a cache line: every hop reads a packet last touched microseconds
/// before, and a packet straddling two lines (as 7 in 8 did at 8-byte alignment) costs two
/// misses instead of one.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub struct Packet {
    pub seg: Segment,
    /// Slot of the flow in the simulator's flow table.
    pub flow: u32,
    /// Host that sent this packet and host it is for.
    pub src: u32,
    pub dst: u32,
    /// Bytes on the wire (payload plus headers; headers only once trimmed).
    pub wire: u32,
    /// Path entropy: switches hash it to pick among equal-cost ports (ECMP hashes a flow
    /// constant; spraying a per-packet value).
    pub entropy: u32,
    /// Global port it entered the node holding it through, or on the wire the port it will
    /// enter the next node through (`NO_PORT` at its source), for PFC's per-ingress accounting
    /// and the rewiring check of an arrival.
    pub ingress: u32,
    /// The generation of the receiving port's link when the packet was put on the wire: if the
    /// link was rewired since, the packet is lost ([`crate::rewire`]).
    pub link_gen: u32,
    /// Links crossed so far: only a staged rewiring (old and new tables side by side) can make it
    /// exceed the node count ([`crate::rewire`]).
    pub hops: u32,
}

const _: () = assert!(size_of::<Packet>() == 64);

/// `Packet::ingress` of a packet still at its source host.
pub const NO_PORT: u32 = u32::MAX;

/// Packets in flight, by index, with a free list (no allocation per packet once warm).
#[derive(Default)]
pub struct PacketSlab {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// The queue lanes' links, one per slot.
    pub links: Links,
}

impl PacketSlab {
    pub fn insert(&mut self, p: Packet) -> u32 {
        if let Some(i) = self.free.pop() {
            self.slots[i as usize] = p;
            i
        } else {
            self.slots.push(p);
            self.links.cover(self.slots.len());
            (self.slots.len() - 1) as u32
        }
    }

    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.slots[i as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.slots[i as usize]
    }

    /// The packets by slot, read-only, beside the lanes' links to write.
    pub fn split(&mut self) -> (&[Packet], &mut Links) {
        (&self.slots, &mut self.links)
    }

    /// Frees slot `i` and returns what it held.
    pub fn remove(&mut self, i: u32) -> Packet {
        self.free.push(i);
        self.slots[i as usize]
    }
}
