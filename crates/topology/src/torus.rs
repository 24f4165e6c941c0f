//! A 3D torus of hosts that forward, with no switches: the R2C2 baseline.
//!
//! Host `(x, y, z)` is node `x + X·(y + Y·z)`. Ports come in the order +x, -x, +y, -y, +z, -z,
//! leaving out what a dimension's size cannot have:
//! - size 1: no port (the host is its own neighbour);
//! - size 2: one port, "+", because the neighbour one step up and one step down is the same host.
//!   Wiring both would give two parallel links between the pair; [`Torus::build`] keeps one, so
//!   every packet-network torus is a simple graph, and the two hosts of that dimension have one
//!   path between them, not two (the half-way tie that doubles path counts in larger even
//!   dimensions does not arise). [`links`] can wire both ([`SizeTwo::TwoLinks`]), for a rack
//!   whose hosts have six ports whatever its shape (XFabric's torus baseline);
//! - size 3 or more: two ports, "+" then "-", with wrap-around.
//!
//! [`links`] is the one place a torus is wired; [`Torus::build`] turns its links into a
//! [`Topology`], and XFabric's flow-level studies take them as a multigraph.

use crate::graph::{
    Kind, NodeIdx, PortIdx, Topology, TopologyError, Wiring, check_rate, check_size,
};
use shoal_base::{Dur, Rate};

/// Parameters of a 3D torus; [`Torus::build`] validates and wires them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Torus {
    pub x: u32,
    pub y: u32,
    pub z: u32,
    /// Rate of every link.
    pub rate: Rate,
    /// Propagation delay of every link.
    pub link_delay: Dur,
}

/// How a dimension of size 2 is wired: its two hosts are each other's neighbour both ways round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeTwo {
    /// One link on one port, "+": every torus a simple graph (the packet baselines').
    OneLink,
    /// Two parallel links, "+" of each host to "-" of the other, as in larger dimensions: every
    /// host keeps two ports per dimension.
    TwoLinks,
}

/// The links of an `x × y × z` torus with wrap-around, each as its two ends (host, port), in the
/// port order of the module documentation, and the ports of every host. Host by host, each
/// link is listed once, from the host whose "+" port it leaves. Dimensions of size 0 wire
/// nothing; callers check the sizes.
pub fn links(dims: [u32; 3], size_two: SizeTwo) -> (u32, Vec<[(NodeIdx, PortIdx); 2]>) {
    let table = port_table(dims, size_two);
    let ports = table.iter().flatten().flatten().max().map_or(0, |&p| p + 1);
    let hosts = dims.iter().product::<u32>();
    let mut out = Vec::with_capacity(hosts as usize * ports as usize / 2);
    for n in 0..hosts {
        let here = coords(n, dims);
        for d in 0..3 {
            let (size, [Some(plus), Some(minus)]) = (dims[d], table[d]) else {
                continue;
            };
            // With one link, a size-2 dimension is wired once, from coordinate 0, and lands on
            // the peer's only port for that dimension.
            if size == 2 && plus == minus && here[d] == 1 {
                continue;
            }
            let mut there = here;
            there[d] = (here[d] + 1) % size;
            out.push([(n, plus), (node_at(there, dims), minus)]);
        }
    }
    (ports, out)
}

/// The port of each (dimension, direction) pair, the same on every host; `[d][0]` is "+" and
/// `[d][1]` is "-". With [`SizeTwo::OneLink`] a size-2 dimension maps both directions to its
/// single port.
fn port_table(dims: [u32; 3], size_two: SizeTwo) -> [[Option<PortIdx>; 2]; 3] {
    let mut table = [[None; 2]; 3];
    let mut next = 0;
    for (d, &size) in dims.iter().enumerate() {
        if size == 2 && size_two == SizeTwo::OneLink {
            table[d] = [Some(next); 2];
            next += 1;
        } else if size >= 2 {
            table[d] = [Some(next), Some(next + 1)];
            next += 2;
        }
    }
    table
}

fn coords(n: NodeIdx, [x, y, _]: [u32; 3]) -> [u32; 3] {
    [n % x, (n / x) % y, n / (x * y)]
}

fn node_at([cx, cy, cz]: [u32; 3], [x, y, _]: [u32; 3]) -> NodeIdx {
    cx + x * (cy + y * cz)
}

impl Torus {
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let dims = [self.x, self.y, self.z];
        let shape = format!("{}x{}x{}", self.x, self.y, self.z);
        if dims.contains(&0) {
            return Err(TopologyError(format!(
                "torus dimensions must be at least 1, got {shape}"
            )));
        }
        check_rate("torus rate", self.rate)?;
        let hosts = dims.iter().map(|&d| u128::from(d)).product();
        check_size(&format!("a {shape} torus"), hosts, 0)?;

        let (ports, wires) = links(dims, SizeTwo::OneLink);
        let hosts = self.x * self.y * self.z;
        let mut w = Wiring::new(hosts as usize, (0..hosts).map(|_| ports));
        for [a, b] in wires {
            w.connect(a, b, self.rate, self.link_delay)?;
        }
        let description = format!(
            "3D torus {shape}: {hosts} forwarding hosts, no switches, {ports} ports per host \
             at {} Gb/s, {} per link",
            self.rate.as_gbps_f64(),
            self.link_delay,
        );
        w.finish(
            format!("torus {shape}"),
            Kind::Torus {
                x: self.x,
                y: self.y,
                z: self.z,
            },
            description,
        )
    }
}

impl Topology {
    /// The dimension-order next hop from `n` towards `dst` on a torus: correct X first, then Y,
    /// then Z, each the shorter way round, a tie going "+". Always one of
    /// [`next_hops`](Topology::next_hops). `None` when `n == dst` or the topology is not a torus.
    pub fn dimension_order_hop(&self, n: NodeIdx, dst: NodeIdx) -> Option<PortIdx> {
        let Kind::Torus { x, y, z } = self.kind else {
            return None;
        };
        assert!((n as usize) < self.nodes(), "node {n} out of range");
        assert!(self.is_host(dst), "destination {dst} is not a host");
        let dims = [x, y, z];
        let (from, to) = (coords(n, dims), coords(dst, dims));
        let table = port_table(dims, SizeTwo::OneLink);
        (0..3).find_map(|d| {
            let up = (to[d] + dims[d] - from[d]) % dims[d];
            if up == 0 {
                None
            } else if up <= dims[d] - up {
                table[d][0]
            } else {
                table[d][1]
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn torus(x: u32, y: u32, z: u32) -> Torus {
        Torus {
            x,
            y,
            z,
            rate: Rate::gbps(100),
            link_delay: Dur::from_ns(50),
        }
    }

    #[test]
    fn degree_follows_the_dimension_sizes() {
        for (dims, degree) in [
            ([4, 4, 4], 6),
            ([3, 5, 7], 6),
            ([4, 4, 1], 4),
            ([2, 4, 4], 5),
            ([2, 2, 2], 3),
            ([8, 1, 1], 2),
            ([2, 1, 1], 1),
        ] {
            let t = torus(dims[0], dims[1], dims[2]).build().unwrap();
            let hosts: u32 = dims.iter().product();
            assert_eq!(t.hosts(), hosts as usize);
            assert_eq!(t.switches(), 0);
            for n in 0..hosts {
                assert_eq!(t.ports(n), degree, "{dims:?} host {n}");
            }
            assert_eq!(t.link_count(), hosts as usize * degree / 2, "{dims:?}");
        }
    }

    #[test]
    fn two_links_keep_two_ports_in_a_dimension_of_two() {
        // 2x3x2: the x and z pairs are doubled, y is a ring of three; every host has six ports,
        // each wired once.
        let dims = [2, 3, 2];
        let (ports, wires) = links(dims, SizeTwo::TwoLinks);
        assert_eq!(ports, 6);
        assert_eq!(wires.len(), 12 * 6 / 2);
        let mut ends: Vec<(u32, u32)> = wires.iter().flatten().copied().collect();
        ends.sort_unstable();
        ends.dedup();
        assert_eq!(ends.len(), 12 * 6);
        let between = |a: u32, b: u32| {
            wires
                .iter()
                .filter(|[(x, _), (y, _)]| (*x, *y) == (a, b) || (*x, *y) == (b, a))
                .count()
        };
        assert_eq!(between(0, 1), 2);
        assert_eq!(between(0, node_at([0, 0, 1], dims)), 2);
        assert_eq!(between(0, node_at([0, 1, 0], dims)), 1);
        // One link: the packet torus, the links `build` wires.
        let (ports, wires) = links(dims, SizeTwo::OneLink);
        assert_eq!((ports, wires.len()), (4, 12 * 4 / 2));
    }

    #[test]
    fn ports_are_plus_x_minus_x_plus_y_minus_y_plus_z_minus_z() {
        let t = torus(4, 4, 4).build().unwrap();
        let n = node_at([1, 2, 3], [4, 4, 4]);
        let peers: Vec<[u32; 3]> = (0..6)
            .map(|p| coords(t.link(n, p).peer, [4, 4, 4]))
            .collect();
        assert_eq!(
            peers,
            [
                [2, 2, 3],
                [0, 2, 3],
                [1, 3, 3],
                [1, 1, 3],
                [1, 2, 0],
                [1, 2, 2]
            ]
        );
        // "+x" of one host lands on "-x" of its neighbour.
        assert_eq!(t.link(n, 0).peer_port, 1);
    }

    #[test]
    fn dimension_order_goes_x_then_y_then_z_the_short_way() {
        let dims = [5, 4, 3];
        let t = torus(5, 4, 3).build().unwrap();
        let at = |c| node_at(c, dims);
        // X first, the short way round: 0 -> 4 is one step down.
        assert_eq!(t.dimension_order_hop(at([0, 2, 2]), at([4, 0, 0])), Some(1));
        // X done, Y: 1 -> 3 of 4 is a tie, broken upwards.
        assert_eq!(t.dimension_order_hop(at([4, 1, 2]), at([4, 3, 0])), Some(2));
        // X and Y done, Z: 2 -> 0 of 3 is one step up.
        assert_eq!(t.dimension_order_hop(at([4, 3, 2]), at([4, 3, 0])), Some(4));
        assert_eq!(t.dimension_order_hop(at([4, 3, 0]), at([4, 3, 0])), None);
    }

    #[test]
    fn dimension_order_routes_reach_every_host_in_minimal_hops() {
        let t = torus(4, 3, 2).build().unwrap();
        for src in 0..24 {
            for dst in 0..24 {
                let (mut n, mut hops) = (src, 0);
                while let Some(p) = t.dimension_order_hop(n, dst) {
                    assert!(t.next_hops(n, dst).contains(&p));
                    n = t.link(n, p).peer;
                    hops += 1;
                }
                assert_eq!((n, hops), (dst, t.distance(src, dst)));
            }
        }
    }

    #[test]
    fn non_torus_has_no_dimension_order() {
        let t = crate::FatTree {
            k: 4,
            oversubscription: 1,
            rate: Rate::gbps(10),
            link_delay: Dur::from_us(1),
        }
        .build()
        .unwrap();
        assert_eq!(t.dimension_order_hop(0, 5), None);
    }

    #[test]
    fn refusals_give_reasons() {
        let msg = |t: Torus| t.build().unwrap_err().0;
        assert!(msg(torus(4, 0, 4)).contains("at least 1, got 4x0x4"));
        assert!(msg(torus(1, 1, 1)).contains("at least two"));
        assert!(msg(torus(u32::MAX, u32::MAX, u32::MAX)).contains("nodes"));
        assert!(msg(torus(64, 64, 4)).contains("routing entries"));
        let zero = Torus {
            rate: Rate(0),
            ..torus(4, 4, 4)
        };
        assert!(msg(zero).contains("rate must be positive"));
    }
}
