//! The three-tier k-ary fat-tree of Al-Fares et al.: `k` pods of `k/2` edge and `k/2`
//! aggregation switches, and `(k/2)²` core switches, all links at one rate.
//!
//! Oversubscription `o` hangs `o·k/2` hosts off each edge switch instead of `k/2`, keeping `k/2`
//! uplinks, so the edge tier is `o:1` oversubscribed and the tiers above stay at full bisection.
//! Thinning the uplinks instead would change the path counts between pods; adding hosts keeps the
//! switching fabric, and so every path count, identical to the full-bisection tree.
//!
//! Node order: hosts (edge `e` owns hosts `e·o·k/2 ..`), then edge switches, then aggregation
//! switches (both pod-major: switch `i` of pod `p` is number `p·k/2 + i` of its tier), then core
//! switches (core `(i, j)` is number `i·k/2 + j`). Port order, down ports first then up ports:
//! - host: port 0 to its edge switch;
//! - edge `(p, i)`: ports `0..o·k/2` to its hosts, then `o·k/2 + a` to aggregation `(p, a)`;
//! - aggregation `(p, i)`: ports `0..k/2` to edge `(p, e)`, then `k/2 + j` to core `(i, j)`;
//! - core `(i, j)`: port `p` to aggregation `(p, i)`.

use crate::graph::{Kind, Topology, TopologyError, Wiring, check_rate, check_size, ratio};
use shoal_base::{Dur, Rate};

/// Parameters of a fat-tree; [`FatTree::build`] validates and wires them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatTree {
    /// Switch radix: even, at least 2.
    pub k: u32,
    /// Hosts per edge switch over uplinks per edge switch; 1 is full bisection.
    pub oversubscription: u32,
    /// Rate of every link.
    pub rate: Rate,
    /// Propagation delay of every link.
    pub link_delay: Dur,
}

impl FatTree {
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let (k, o) = (self.k, self.oversubscription);
        if k < 2 || !k.is_multiple_of(2) {
            return Err(TopologyError(format!(
                "fat-tree k must be even and at least 2 (k/2 edge and k/2 aggregation switches \
                 per pod), got {k}"
            )));
        }
        if o == 0 {
            return Err(TopologyError(
                "fat-tree oversubscription must be at least 1 (1 = full bisection), got 0".into(),
            ));
        }
        check_rate("fat-tree rate", self.rate)?;
        let half = u128::from(k / 2);
        let hosts = u128::from(k) * half * half * u128::from(o);
        check_size(
            &format!("a fat-tree with k={k} and oversubscription {o}"),
            hosts,
            5 * half * half,
        )?;

        // check_size bounded the node count by u16::MAX, so these products fit u32.
        let half = k / 2;
        let per_edge = o * half;
        let hosts = k * half * per_edge;
        let edge0 = hosts;
        let agg0 = edge0 + k * half;
        let core0 = agg0 + k * half;
        let port_counts = (0..hosts)
            .map(|_| 1)
            .chain((0..k * half).map(|_| per_edge + half))
            .chain((0..k * half).map(|_| k))
            .chain((0..half * half).map(|_| k));
        let mut w = Wiring::new(hosts as usize, port_counts);
        let (rate, delay) = (self.rate, self.link_delay);
        for p in 0..k {
            for i in 0..half {
                let edge = edge0 + p * half + i;
                let agg = agg0 + p * half + i;
                for h in 0..per_edge {
                    w.connect(((edge - edge0) * per_edge + h, 0), (edge, h), rate, delay)?;
                }
                for a in 0..half {
                    w.connect((edge, per_edge + a), (agg0 + p * half + a, i), rate, delay)?;
                }
                for j in 0..half {
                    w.connect((agg, half + j), (core0 + i * half + j, p), rate, delay)?;
                }
            }
        }
        let name = if o == 1 {
            format!("fat-tree k={k}")
        } else {
            format!("fat-tree k={k} {o}:1")
        };
        let description = format!(
            "fat-tree k={k}: {hosts} hosts, {} switches ({} edge, {} aggregation, {} core), \
             {} Gb/s links, {} per link, oversubscription {}",
            5 * half * half,
            k * half,
            k * half,
            half * half,
            rate.as_gbps_f64(),
            delay,
            ratio(f64::from(o)),
        );
        w.finish(
            name,
            Kind::FatTree {
                k,
                oversubscription: o,
            },
            description,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(k: u32, oversubscription: u32) -> FatTree {
        FatTree {
            k,
            oversubscription,
            rate: Rate::gbps(10),
            link_delay: Dur::from_us(1),
        }
    }

    #[test]
    fn counts_match_the_closed_forms() {
        for k in [2u32, 4, 6, 8, 12] {
            let t = tree(k, 1).build().unwrap();
            let k = k as usize;
            assert_eq!(t.hosts(), k * k * k / 4, "hosts, k={k}");
            assert_eq!(t.switches(), 5 * k * k / 4, "switches, k={k}");
            // Host-edge, edge-aggregation and aggregation-core tiers each carry k³/4 links.
            assert_eq!(t.link_count(), 3 * k * k * k / 4, "links, k={k}");
            // Every switch uses all k ports.
            for n in t.hosts()..t.nodes() {
                assert_eq!(t.ports(n as u32), k);
            }
        }
    }

    #[test]
    fn k12_is_the_432_host_htsim_setup_with_36_paths_between_pods() {
        let t = tree(12, 1).build().unwrap();
        assert_eq!(t.hosts(), 432);
        assert_eq!(t.name(), "fat-tree k=12");
        // Hosts 0..6 share edge 0, hosts 0..36 share pod 0.
        assert_eq!(t.shortest_paths(0, 5), 1);
        assert_eq!(t.distance(0, 5), 2);
        assert_eq!(t.shortest_paths(0, 6), 6);
        assert_eq!(t.distance(0, 6), 4);
        assert_eq!(t.shortest_paths(0, 36), 36);
        assert_eq!(t.distance(0, 36), 6);
        assert_eq!(t.shortest_paths(431, 0), 36);
        assert!(
            t.describe().contains("432 hosts, 180 switches"),
            "{}",
            t.describe()
        );
    }

    #[test]
    fn ports_go_down_then_up() {
        let t = tree(4, 1).build().unwrap();
        // k=4: 16 hosts, edges 16..24, aggregations 24..32, cores 32..36.
        assert_eq!(t.link(17, 0).peer, 2);
        assert_eq!(t.link(17, 1).peer, 3);
        assert_eq!(t.link(17, 2).peer, 24);
        assert_eq!(t.link(17, 3).peer, 25);
        assert_eq!(t.link(25, 0).peer, 16);
        assert_eq!(t.link(25, 2).peer, 34);
        assert_eq!(t.link(25, 3).peer, 35);
        for p in 0..4 {
            assert_eq!(t.link(34, p).peer, 24 + 2 * p + 1);
        }
        // Towards another pod an edge switch may take either uplink, a core only one downlink.
        assert_eq!(t.next_hops(16, 15), &[2, 3]);
        assert_eq!(t.next_hops(34, 15), &[3]);
    }

    #[test]
    fn oversubscription_adds_hosts_below_the_edge() {
        let t = tree(4, 3).build().unwrap();
        assert_eq!(t.hosts(), 3 * 16);
        assert_eq!(t.switches(), 20);
        assert_eq!(t.name(), "fat-tree k=4 3:1");
        assert!(t.describe().contains("oversubscription 3:1"));
        // The fabric above the hosts is unchanged, so are the path counts.
        assert_eq!(t.shortest_paths(0, 5), 1);
        assert_eq!(t.shortest_paths(0, 6), 2);
        assert_eq!(t.shortest_paths(0, 12), 4);
        for edge in 48..56u32 {
            let links = t.links(edge);
            let down: u64 = links
                .iter()
                .filter(|l| t.is_host(l.peer))
                .map(|l| l.rate.0)
                .sum();
            let up: u64 = links
                .iter()
                .filter(|l| !t.is_host(l.peer))
                .map(|l| l.rate.0)
                .sum();
            assert_eq!(down, 3 * up);
        }
    }

    #[test]
    fn full_bisection_every_switch_has_as_much_capacity_up_as_down() {
        let t = tree(8, 1).build().unwrap();
        let hosts = t.hosts() as u32;
        let (edge0, agg0, core0) = (hosts, hosts + 32, hosts + 64);
        // A link leads "down" when its peer sits in a lower tier (hosts < edges < aggregations).
        let tier = |n: u32| match n {
            n if n < edge0 => 0,
            n if n < agg0 => 1,
            n if n < core0 => 2,
            _ => 3,
        };
        for n in edge0..core0 {
            let (mut down, mut up) = (0u64, 0u64);
            for link in t.links(n) {
                if tier(link.peer) < tier(n) {
                    down += link.rate.0;
                } else {
                    up += link.rate.0;
                }
            }
            assert_eq!(down, up, "switch {n}");
        }
    }

    #[test]
    fn k16_tables_stay_small() {
        let t = tree(16, 1).build().unwrap();
        assert_eq!((t.hosts(), t.switches()), (1024, 320));
        // One byte of set number and a u16 distance per (switch, host) row (a fat-tree has
        // fewer than 256 distinct sets), plus a tiny set pool.
        let rows = t.switches() * t.hosts();
        assert!(
            t.routing_bytes() < rows * 3 + 64 * 1024,
            "{} bytes",
            t.routing_bytes()
        );
    }

    #[test]
    fn refusals_give_reasons() {
        let msg = |t: FatTree| t.build().unwrap_err().0;
        let odd = msg(tree(5, 1));
        assert!(
            odd.contains("must be even and at least 2") && odd.contains("got 5"),
            "{odd}"
        );
        assert!(msg(tree(0, 1)).contains("got 0"));
        assert!(msg(tree(4, 0)).contains("oversubscription must be at least 1"));
        assert!(msg(tree(u32::MAX - 1, 1)).contains("nodes"));
        assert!(msg(tree(48, 1)).contains("routing entries"));
        let zero = FatTree {
            rate: Rate(0),
            ..tree(4, 1)
        };
        assert!(msg(zero).contains("rate must be positive"));
    }
}
