//! Output ports: a queue feeding a link (serialization at the link rate, then propagation).
//!
//! A port needs an event only when a packet is waiting behind the one being sent: a packet that
//! finds the port idle starts at once, and the one event it causes is its arrival at the far
//! end (serialization plus propagation). This halves the events of a lightly loaded network
//! compared with a transmit-done event per packet.

use crate::queue::OutQueue;
use shoal_base::{Dur, Rate, Time};
use shoal_topology::Topology;

/// One output port and the link it drives: what a packet-hop reads and writes, in one cache
/// line. As a 96-byte record it spanned two lines at every hop; the rarely read state (the
/// rate behind an inexact serialization, PFC's) lives beside it in [`Ports`].
#[repr(align(64))]
pub struct Port {
    pub queue: OutQueue,
    /// The link is busy serializing until this time.
    pub busy_until: Time,
    pub delay: Dur,
    /// Global index of the port at the far end of the link (where packets arrive).
    pub peer: u32,
    /// Picoseconds per byte at the link's rate when that is a whole number that fits (0
    /// otherwise): a multiplication instead of the division of `Rate::serialize`, once per
    /// packet-hop.
    ps_per_byte: u32,
    /// Node that owns the port (topologies have at most `u16::MAX` nodes).
    node: u16,
    /// Node at the far end of the link (that of `peer`): an arrival event names it, so that
    /// the arrival reads no port at all.
    peer_node: u16,
    /// The owner is a switch (not a host): fixed, since a rewiring keeps the hosts.
    pub switch: bool,
    /// A wake-up event for this port is pending.
    pub wake_pending: bool,
}

const _: () = assert!(size_of::<Port>() == 64);

impl Port {
    /// Node that owns the port.
    #[inline]
    pub fn node(&self) -> u32 {
        u32::from(self.node)
    }

    /// Node at the far end of the link.
    #[inline]
    pub fn peer_node(&self) -> u32 {
        u32::from(self.peer_node)
    }
}

/// PFC's state of one port.
#[derive(Clone, Copy, Default)]
pub struct PfcPort {
    /// The far end asked this port to stop sending.
    pub paused: bool,
    /// Bytes held at this port's node that came in through this port.
    pub ingress_bytes: u64,
    /// This node has paused the far end of this port's link.
    pub pausing: bool,
}

/// Picoseconds per byte at `rate` if `rate` divides a byte's 8·10^12 bit-picoseconds (10 Gb/s:
/// 800) and the quotient fits a `u32`, else 0. Then `Rate::serialize`'s rounded-up quotient is
/// exact, so the product equals it.
fn ps_per_byte(rate: Rate) -> u32 {
    const PS_BITS: u64 = 8 * 1_000_000_000_000;
    if rate.0 > 0 && PS_BITS.is_multiple_of(rate.0) {
        u32::try_from(PS_BITS / rate.0).unwrap_or(0)
    } else {
        0
    }
}

/// Every port of the topology, indexed globally: node `n`'s port `p` is `first[n] + p`.
pub struct Ports {
    pub ports: Vec<Port>,
    pub first: Vec<u32>,
    /// How many times the link into each port was rewired; packets on the wire carry the
    /// value they were sent under (read only when a rewiring can change it).
    pub link_gen: Vec<u32>,
    /// Each port's link rate (read to serialize only when `Port::ps_per_byte` is 0).
    pub rates: Vec<Rate>,
    /// Each port's PFC state (empty without PFC).
    pub pfc: Vec<PfcPort>,
}

impl Ports {
    /// The ports of `topo`, with PFC state if `pfc`.
    pub fn new(topo: &Topology, pfc: bool) -> Ports {
        let mut first = Vec::with_capacity(topo.nodes() + 1);
        let mut total = 0u32;
        for n in 0..topo.nodes() {
            first.push(total);
            total += topo.ports(n as u32) as u32;
        }
        first.push(total);
        let mut ports = Vec::with_capacity(total as usize);
        let mut rates = Vec::with_capacity(total as usize);
        for n in 0..topo.nodes() as u32 {
            for p in 0..topo.ports(n) as u32 {
                let link = topo.link(n, p);
                rates.push(link.rate);
                ports.push(Port {
                    node: node_index(n),
                    peer: first[link.peer as usize] + link.peer_port,
                    peer_node: node_index(link.peer),
                    switch: !topo.is_host(n),
                    ps_per_byte: ps_per_byte(link.rate),
                    delay: link.delay,
                    queue: OutQueue::default(),
                    busy_until: Time::ZERO,
                    wake_pending: false,
                });
            }
        }
        let pfc = if pfc {
            vec![PfcPort::default(); ports.len()]
        } else {
            Vec::new()
        };
        let link_gen = vec![0; ports.len()];
        Ports {
            ports,
            first,
            link_gen,
            rates,
            pfc,
        }
    }

    /// Global index of node `n`'s port `p`.
    #[inline]
    pub fn global(&self, n: u32, p: u32) -> u32 {
        self.first[n as usize] + p
    }

    /// Port `gp` takes the link to global port `peer` of node `peer_node`: if that is a new
    /// far end, packets on the old link's wire are cut (its generation moves on).
    pub fn connect(&mut self, gp: u32, peer: u32, peer_node: u32) {
        let port = &mut self.ports[gp as usize];
        if port.peer != peer {
            port.peer = peer;
            port.peer_node = node_index(peer_node);
            self.link_gen[gp as usize] += 1;
        }
    }

    /// Time to serialize `bytes` on port `gp`'s link: exactly `Rate::serialize`.
    #[inline]
    pub fn serialize(&self, gp: u32, bytes: u64) -> Dur {
        serialize(&self.ports[gp as usize], &self.rates, gp, bytes)
    }

    /// Gives port `gp`'s link a new rate (a rewiring).
    pub fn set_rate(&mut self, gp: u32, rate: Rate) {
        self.rates[gp as usize] = rate;
        self.ports[gp as usize].ps_per_byte = ps_per_byte(rate);
    }
}

/// A node's index as a port stores it.
fn node_index(n: u32) -> u16 {
    u16::try_from(n).expect("a topology has at most u16::MAX nodes")
}

/// [`Ports::serialize`] for a caller that holds `port` (port `gp`) mutably borrowed.
#[inline]
pub fn serialize(port: &Port, rates: &[Rate], gp: u32, bytes: u64) -> Dur {
    if port.ps_per_byte > 0 {
        Dur(bytes * u64::from(port.ps_per_byte))
    } else {
        rates[gp as usize].serialize(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_topology::leaf_spine::LeafSpine;

    /// The per-port shortcut gives `Rate::serialize`'s picoseconds for every size, at rates that
    /// divide a byte's bit-picoseconds (the shortcut), at rates that do not or whose quotient
    /// does not fit a `u32` (1 kb/s: the division), before and after a rewiring changes the rate.
    #[test]
    fn a_port_serializes_exactly_as_its_rate_does() {
        let rates = [
            Rate::gbps(1),
            Rate::gbps(10),
            Rate::gbps(25),
            Rate::gbps(100),
            Rate::gbps(400),
            Rate(3_000_000_007),
            Rate(7),
            Rate(1_000),
        ];
        let sizes = [0, 1, 40, 64, 1500, 4095, 9000, 65_536, 2_000_000];
        for (i, &rate) in rates.iter().enumerate() {
            let topo = LeafSpine {
                leaves: 2,
                spines: 1,
                hosts_per_leaf: 1,
                host_rate: rate,
                fabric_rate: rate,
                link_delay: Dur::from_ns(100),
            }
            .build()
            .expect("a valid leaf-spine");
            let mut ports = Ports::new(&topo, false);
            for size in sizes {
                assert_eq!(
                    ports.serialize(0, size),
                    rate.serialize(size),
                    "{rate:?}, {size} B"
                );
            }
            let next = rates[(i + 1) % rates.len()];
            ports.set_rate(0, next);
            for size in sizes {
                assert_eq!(
                    ports.serialize(0, size),
                    next.serialize(size),
                    "{next:?}, {size} B"
                );
            }
        }
    }
}
