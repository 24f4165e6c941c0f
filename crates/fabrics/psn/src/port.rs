//! Output ports: a queue feeding a link (serialization at the link rate, then propagation).
//!
//! A port needs an event only when a packet is waiting behind the one being sent: a packet that
//! finds the port idle starts at once, and the one event it causes is its arrival at the far
//! end (serialization plus propagation). This halves the events of a lightly loaded network
//! compared with a transmit-done event per packet.

use crate::queue::OutQueue;
use shoal_base::{Dur, Rate, Time};
use shoal_topology::Topology;

/// One output port and the link it drives.
pub struct Port {
    /// Node that owns the port.
    pub node: u32,
    /// Global index of the port at the far end of the link (where packets arrive).
    pub peer: u32,
    /// The owner is a switch (not a host): fixed, since a rewiring keeps the hosts.
    pub switch: bool,
    rate: Rate,
    /// Picoseconds per byte at `rate` when that is a whole number (0 otherwise): a
    /// multiplication instead of the division of `Rate::serialize`, once per packet-hop.
    ps_per_byte: u64,
    pub delay: Dur,
    pub queue: OutQueue,
    /// The link is busy serializing until this time.
    pub busy_until: Time,
    /// A wake-up event for this port is pending.
    pub wake_pending: bool,
    /// PFC: the far end asked this port to stop sending.
    pub paused: bool,
    /// PFC: bytes held at this port's node that came in through this port.
    pub ingress_bytes: u64,
    /// PFC: this node has paused the far end of this port's link.
    pub pausing: bool,
    /// Bytes queued at the most (both lanes), over the run.
    pub max_bytes: u64,
    /// How many times the link into this port was rewired; packets on the wire carry the value
    /// they were sent under.
    pub link_gen: u32,
}

impl Port {
    /// Gives the link a new rate (a rewiring).
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
        self.ps_per_byte = ps_per_byte(rate);
    }

    /// Time to serialize `bytes` on the link: exactly `Rate::serialize`.
    #[inline]
    pub fn serialize(&self, bytes: u64) -> Dur {
        if self.ps_per_byte > 0 {
            Dur(bytes * self.ps_per_byte)
        } else {
            self.rate.serialize(bytes)
        }
    }
}

/// Picoseconds per byte at `rate` if `rate` divides a byte's 8·10^12 bit-picoseconds (10 Gb/s:
/// 800), else 0. Then `Rate::serialize`'s rounded-up quotient is exact, so the product equals it.
fn ps_per_byte(rate: Rate) -> u64 {
    const PS_BITS: u64 = 8 * 1_000_000_000_000;
    if rate.0 > 0 && PS_BITS.is_multiple_of(rate.0) {
        PS_BITS / rate.0
    } else {
        0
    }
}

/// Every port of the topology, indexed globally: node `n`'s port `p` is `first[n] + p`.
pub struct Ports {
    pub ports: Vec<Port>,
    pub first: Vec<u32>,
}

impl Ports {
    pub fn new(topo: &Topology) -> Ports {
        let mut first = Vec::with_capacity(topo.nodes() + 1);
        let mut total = 0u32;
        for n in 0..topo.nodes() {
            first.push(total);
            total += topo.ports(n as u32) as u32;
        }
        first.push(total);
        let mut ports = Vec::with_capacity(total as usize);
        for n in 0..topo.nodes() as u32 {
            for p in 0..topo.ports(n) as u32 {
                let link = topo.link(n, p);
                ports.push(Port {
                    node: n,
                    peer: first[link.peer as usize] + link.peer_port,
                    switch: !topo.is_host(n),
                    rate: link.rate,
                    ps_per_byte: ps_per_byte(link.rate),
                    delay: link.delay,
                    queue: OutQueue::default(),
                    busy_until: Time::ZERO,
                    wake_pending: false,
                    paused: false,
                    ingress_bytes: 0,
                    pausing: false,
                    max_bytes: 0,
                    link_gen: 0,
                });
            }
        }
        Ports { ports, first }
    }

    /// Global index of node `n`'s port `p`.
    #[inline]
    pub fn global(&self, n: u32, p: u32) -> u32 {
        self.first[n as usize] + p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_topology::leaf_spine::LeafSpine;

    /// The per-port shortcut gives `Rate::serialize`'s picoseconds for every size, at rates that
    /// divide a byte's bit-picoseconds (the shortcut) and at rates that do not (the division),
    /// before and after a rewiring changes the rate.
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
            let mut port = Ports::new(&topo).ports.swap_remove(0);
            for size in sizes {
                assert_eq!(
                    port.serialize(size),
                    rate.serialize(size),
                    "{rate:?}, {size} B"
                );
            }
            let next = rates[(i + 1) % rates.len()];
            port.set_rate(next);
            for size in sizes {
                assert_eq!(
                    port.serialize(size),
                    next.serialize(size),
                    "{next:?}, {size} B"
                );
            }
        }
    }
}
