//! The kernel's IP packets as Shoal traffic: a TUN device per node, so that unmodified
//! applications (ping, iperf3, an HTTP server) talk across the rack.
//!
//! Choices where the paper is silent (it carries "layer-2 packets", §3.3.1):
//! - Addressing: node `i` is `10.0.0.(i + 1)` on the TUN device `shoal0`, subnet
//!   `10.0.0.0/24`. An IPv4 packet for another node's address becomes one Shoal packet to that
//!   node; anything else (another subnet, IPv6, itself) is dropped and counted.
//! - One IP packet is one Shoal packet (start- and end-of-packet around its cells), and every
//!   packet from node i to node j joins the node's one flow for (i, j) (§3.3.2: a flow is all
//!   the traffic of a pair), in class 0.
//! - Admission: a NIC's transmit ring is finite, so the host stops handing packets to the node
//!   while more than `backlog_bytes` it submitted are not yet sent, and drops (and counts) what
//!   arrives meanwhile. TCP sees a loss, as it would at a full queue.
//! - Reassembly: cells of a packet are concatenated from start- to end-of-packet; a packet that
//!   lost cells with a failed node is dropped (the transport above retransmits, §3.5).
//!
//! The one `unsafe` block of the crate is the `TUNSETIFF` ioctl that names the device: no
//! crate is needed for one call, and the kernel's contract for it is two lines (see below).

use crate::arena::{Arena, Bytes};
use crate::driver::Host;
use serde::Serialize;
use shoal_base::NodeId;
use shoal_node::{Delivery, Node};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

/// The name of each node's TUN device.
pub const DEVICE: &str = "shoal0";

/// Packets a node reads from its TUN device per slot at most: a slot sends one cell per
/// channel, so more would only queue inside the node.
const READS_PER_SLOT: usize = 4;

/// The IP address of node `id` on the rack's subnet.
pub fn node_ip(id: NodeId) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, id.0 as u8 + 1)
}

/// The node an IPv4 packet is for, if it is for one of the `nodes` of the rack.
pub fn destination(packet: &[u8], nodes: usize) -> Option<NodeId> {
    if packet.len() < 20 || packet[0] >> 4 != 4 {
        return None;
    }
    let [a, b, c, d] = packet[16..20] else {
        return None;
    };
    ((a, b, c) == (10, 0, 0) && d >= 1 && (d as usize) <= nodes).then(|| NodeId(d as u16 - 1))
}

/// A TUN device (IP packets, no packet-information prefix), non-blocking.
pub struct Tun {
    file: File,
}

/// `struct ifreq` as `TUNSETIFF` reads it: the name, the flags, then padding to its 40 bytes.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

impl Tun {
    /// Creates (or attaches to) the TUN device `name` in the caller's network namespace.
    pub fn create(name: &str) -> io::Result<Tun> {
        if name.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "name too long"));
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/dev/net/tun")?;
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short,
            _pad: [0; 22],
        };
        req.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: TUNSETIFF reads and writes one `struct ifreq` (40 bytes on Linux) at the
        // pointer; `req` is exactly that size, fully initialised, and lives across the call. The
        // descriptor is open and owned by `file`.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                libc::TUNSETIFF as _,
                &mut req as *mut IfReq,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Tun { file })
    }

    /// One packet, or `WouldBlock`.
    pub fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(buf)
    }

    pub fn write(&mut self, packet: &[u8]) -> io::Result<usize> {
        self.file.write(packet)
    }
}

/// What the TUN host counted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TunCounters {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    /// Dropped: over the backlog limit.
    pub dropped_backlog: u64,
    /// Dropped: not for another node of the rack.
    pub dropped_not_rack: u64,
    /// Refused by the node (no path left to the destination).
    pub refused: u64,
    /// Packets (or their remains) lost with a failed node, or with bytes gone from the arena.
    pub lost: u64,
    pub write_errors: u64,
}

/// Node `me`'s side of its TUN device.
pub struct TunHost {
    me: NodeId,
    nodes: usize,
    tun: Tun,
    backlog_bytes: u64,
    partial: Vec<Option<Vec<u8>>>,
    pub counters: TunCounters,
}

impl TunHost {
    pub fn new(me: NodeId, nodes: usize, tun: Tun, backlog_bytes: u64) -> TunHost {
        TunHost {
            me,
            nodes,
            tun,
            backlog_bytes,
            partial: vec![None; nodes],
            counters: TunCounters::default(),
        }
    }
}

impl Host for TunHost {
    fn submit(
        &mut self,
        slot: u64,
        node: &mut Node<Bytes>,
        arena: &mut Arena,
        backlog: u64,
    ) -> u64 {
        let mut buf = [0u8; 65_536];
        let mut submitted = 0;
        for _ in 0..READS_PER_SLOT {
            let len = match self.tun.read(&mut buf) {
                Ok(len) => len,
                Err(_) => break,
            };
            let packet = &buf[..len];
            self.counters.packets_in += 1;
            self.counters.bytes_in += len as u64;
            let Some(dst) = destination(packet, self.nodes).filter(|&d| d != self.me) else {
                self.counters.dropped_not_rack += 1;
                continue;
            };
            if backlog + submitted > self.backlog_bytes {
                self.counters.dropped_backlog += 1;
                continue;
            }
            let at = arena.append(packet);
            match node.submit(slot, dst, 0, len as u64, len as u32, at) {
                Ok(()) => submitted += len as u64,
                Err(_) => self.counters.refused += 1,
            }
        }
        submitted
    }

    fn deliver(&mut self, _: u64, d: &Delivery<Bytes>, bytes: Option<&[u8]>) {
        let open = &mut self.partial[d.src.idx()];
        if d.sop {
            if open.is_some() {
                self.counters.lost += 1;
            }
            *open = Some(Vec::with_capacity(1500));
        }
        let (Some(buf), Some(bytes)) = (open.as_mut(), bytes) else {
            // The rest of a packet whose head was lost, or bytes gone from the arena.
            if open.take().is_some() || d.eop {
                self.counters.lost += 1;
            }
            return;
        };
        buf.extend_from_slice(bytes);
        if d.eop {
            let packet = open.take().expect("open");
            match self.tun.write(&packet) {
                Ok(_) => {
                    self.counters.packets_out += 1;
                    self.counters.bytes_out += packet.len() as u64;
                }
                Err(_) => self.counters.write_errors += 1,
            }
        }
    }

    fn cells_lost(&mut self, src: NodeId) {
        if self.partial[src.idx()].take().is_some() {
            self.counters.lost += 1;
        }
    }

    fn counters(&self) -> serde_json::Value {
        serde_json::to_value(&self.counters).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ipv4_packets_for_rack_addresses_have_a_destination() {
        let mut p = [0u8; 20];
        p[0] = 0x45;
        p[16..20].copy_from_slice(&[10, 0, 0, 6]);
        assert_eq!(destination(&p, 8), Some(NodeId(5)));
        assert_eq!(node_ip(NodeId(5)).octets(), [10, 0, 0, 6]);
        p[19] = 9;
        assert_eq!(destination(&p, 8), None, "no node 8 in a rack of 8");
        p[19] = 0;
        assert_eq!(destination(&p, 8), None);
        p[16..20].copy_from_slice(&[10, 0, 1, 2]);
        assert_eq!(destination(&p, 8), None);
        p[0] = 0x60;
        assert_eq!(destination(&p, 8), None, "IPv6");
        assert_eq!(destination(&p[..10], 8), None);
    }
}
