//! A two-tier Clos: leaves with hosts below and one link to every spine above.
//!
//! Node order: hosts first (leaf `l` owns hosts `l * hosts_per_leaf ..`), then leaves, then
//! spines. Port order: a host has port 0 to its leaf; leaf ports `0..hosts_per_leaf` go down to
//! its hosts in order and `hosts_per_leaf + s` up to spine `s`; spine port `l` goes to leaf `l`.
//!
//! Each leaf meets each spine over exactly one link. Parallel leaf-spine links would add nothing
//! the simulator cannot get from more spines, and would make the path count (spines x links²)
//! harder to read in reports.

use crate::graph::{Kind, Topology, TopologyError, Wiring, check_rate, check_size, ratio};
use shoal_base::{Dur, Rate};

/// Parameters of a leaf-spine network; [`LeafSpine::build`] validates and wires them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafSpine {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    /// Rate of the host-leaf links.
    pub host_rate: Rate,
    /// Rate of the leaf-spine links.
    pub fabric_rate: Rate,
    /// Propagation delay of every link.
    pub link_delay: Dur,
}

impl LeafSpine {
    /// A full-bisection two-tier Clos of `hosts` hosts on `radix`-port switches, all links at
    /// `rate`: each leaf gives half its ports to hosts and half to spines (one per spine), and
    /// each spine gives one port to each leaf. So leaves hold `radix / 2` hosts, there are
    /// `radix / 2` spines, and at most `radix` leaves: `radix² / 2` hosts in all. For example 512
    /// hosts on 32-port switches give 32 leaves of 16 hosts and 16 spines.
    ///
    /// Refuses a host count that does not fill whole leaves, or that needs more leaves than a
    /// spine has ports.
    pub fn full_bisection(
        hosts: u32,
        radix: u32,
        rate: Rate,
        link_delay: Dur,
    ) -> Result<LeafSpine, TopologyError> {
        if radix < 2 {
            return Err(TopologyError(format!(
                "a leaf needs at least one port down and one up: radix {radix} is too small"
            )));
        }
        if hosts < 2 {
            return Err(TopologyError(format!(
                "a network needs at least two hosts, got {hosts}"
            )));
        }
        let half = radix / 2;
        if !hosts.is_multiple_of(half) {
            return Err(TopologyError(format!(
                "{hosts} hosts do not fill whole leaves of {half} hosts (half of radix {radix}): \
                 use a multiple of {half}"
            )));
        }
        let leaves = hosts / half;
        if leaves > radix {
            return Err(TopologyError(format!(
                "{hosts} hosts need {leaves} leaves of {half}, but a {radix}-port spine reaches \
                 only {radix} leaves: a two-tier Clos of radix {radix} holds at most {} hosts",
                u64::from(radix) * u64::from(half)
            )));
        }
        Ok(LeafSpine {
            leaves,
            spines: half,
            hosts_per_leaf: half,
            host_rate: rate,
            fabric_rate: rate,
            link_delay,
        })
    }

    /// Leaf downlink capacity over uplink capacity: `hosts_per_leaf·host_rate /
    /// (spines·fabric_rate)`. 1 means full bisection; infinite with no spines or a zero fabric
    /// rate (which `build` refuses).
    pub fn oversubscription(&self) -> f64 {
        let down = f64::from(self.hosts_per_leaf) * self.host_rate.0 as f64;
        let up = f64::from(self.spines) * self.fabric_rate.0 as f64;
        down / up
    }

    pub fn build(&self) -> Result<Topology, TopologyError> {
        for (name, value) in [
            ("leaves", self.leaves),
            ("spines", self.spines),
            ("hosts_per_leaf", self.hosts_per_leaf),
        ] {
            if value == 0 {
                return Err(TopologyError(format!(
                    "leaf-spine {name} must be at least 1, got 0"
                )));
            }
        }
        check_rate("leaf-spine host_rate", self.host_rate)?;
        check_rate("leaf-spine fabric_rate", self.fabric_rate)?;
        let (leaves, spines, per_leaf) = (self.leaves, self.spines, self.hosts_per_leaf);
        let hosts = u128::from(leaves) * u128::from(per_leaf);
        check_size(
            "this leaf-spine",
            hosts,
            u128::from(leaves) + u128::from(spines),
        )?;

        // check_size bounded the node count by u16::MAX, so these products fit u32.
        let hosts = leaves * per_leaf;
        let leaf0 = hosts;
        let spine0 = leaf0 + leaves;
        let port_counts = (0..hosts)
            .map(|_| 1)
            .chain((0..leaves).map(|_| per_leaf + spines))
            .chain((0..spines).map(|_| leaves));
        let mut w = Wiring::new(hosts as usize, port_counts);
        for l in 0..leaves {
            for i in 0..per_leaf {
                w.connect(
                    (l * per_leaf + i, 0),
                    (leaf0 + l, i),
                    self.host_rate,
                    self.link_delay,
                )?;
            }
            for s in 0..spines {
                w.connect(
                    (leaf0 + l, per_leaf + s),
                    (spine0 + s, l),
                    self.fabric_rate,
                    self.link_delay,
                )?;
            }
        }
        let description = format!(
            "leaf-spine {leaves} leaves x {spines} spines: {hosts} hosts, {} switches, \
             hosts at {} Gb/s, fabric at {} Gb/s, {} per link, oversubscription {}",
            leaves + spines,
            self.host_rate.as_gbps_f64(),
            self.fabric_rate.as_gbps_f64(),
            self.link_delay,
            ratio(self.oversubscription()),
        );
        w.finish(
            format!("leaf-spine {leaves}x{spines}"),
            Kind::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf: per_leaf,
            },
            description,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rate = Rate::gbps(10);
    const D: Dur = Dur::from_us(1);

    fn net(leaves: u32, spines: u32, hosts_per_leaf: u32) -> LeafSpine {
        LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            host_rate: R,
            fabric_rate: Rate::gbps(40),
            link_delay: D,
        }
    }

    #[test]
    fn counts_follow_the_parameters() {
        let t = net(6, 4, 5).build().unwrap();
        assert_eq!(t.hosts(), 30);
        assert_eq!(t.switches(), 10);
        // One link per host plus one per (leaf, spine) pair.
        assert_eq!(t.link_count(), 30 + 6 * 4);
        assert_eq!(t.ports(30), 5 + 4);
        assert_eq!(t.ports(36), 6);
        assert_eq!(t.name(), "leaf-spine 6x4");
        assert_eq!(
            t.kind(),
            Kind::LeafSpine {
                leaves: 6,
                spines: 4,
                hosts_per_leaf: 5
            }
        );
    }

    #[test]
    fn ports_are_ordered_down_then_up() {
        let t = net(3, 2, 4).build().unwrap();
        let leaf1 = 12 + 1;
        for i in 0..4 {
            assert_eq!(t.link(leaf1, i).peer, 4 + i);
        }
        assert_eq!(t.link(leaf1, 4).peer, 15);
        assert_eq!(t.link(leaf1, 5).peer, 16);
        assert_eq!(t.link(leaf1, 4).rate, Rate::gbps(40));
        assert_eq!(t.link(leaf1, 0).rate, R);
        for l in 0..3 {
            assert_eq!(t.link(16, l).peer, 12 + l);
        }
    }

    #[test]
    fn paths_between_leaves_go_through_every_spine() {
        let t = net(4, 7, 3).build().unwrap();
        assert_eq!(t.shortest_paths(0, 1), 1);
        assert_eq!(t.distance(0, 1), 2);
        assert_eq!(t.shortest_paths(0, 3), 7);
        assert_eq!(t.distance(0, 3), 4);
        // Up from a leaf to a remote host: all spines; down to a local one: its port only.
        assert_eq!(t.next_hops(12, 11), &[3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(t.next_hops(12, 2), &[2]);
    }

    #[test]
    fn full_bisection_picks_half_the_radix_each_way() {
        let ls = LeafSpine::full_bisection(512, 32, R, D).unwrap();
        assert_eq!((ls.leaves, ls.spines, ls.hosts_per_leaf), (32, 16, 16));
        assert_eq!(ls.oversubscription(), 1.0);
        let t = ls.build().unwrap();
        // Every switch uses exactly its radix.
        for n in t.hosts()..t.nodes() {
            assert_eq!(t.ports(n as u32), 32);
        }
        assert!(
            t.describe().contains("oversubscription 1:1"),
            "{}",
            t.describe()
        );
    }

    #[test]
    fn full_bisection_capacity_up_equals_capacity_down() {
        let t = LeafSpine::full_bisection(96, 16, R, D)
            .unwrap()
            .build()
            .unwrap();
        for leaf in t.hosts()..t.hosts() + 12 {
            let (mut down, mut up) = (0u64, 0u64);
            for link in t.links(leaf as u32) {
                if t.is_host(link.peer) {
                    down += link.rate.0;
                } else {
                    up += link.rate.0;
                }
            }
            assert_eq!(down, up, "leaf {leaf}");
        }
    }

    #[test]
    fn oversubscription_is_down_over_up() {
        // 8 hosts at 10 Gb/s over 2 spines at 40 Gb/s: 80 / 80.
        assert_eq!(net(2, 2, 8).oversubscription(), 1.0);
        assert_eq!(net(2, 1, 12).oversubscription(), 3.0);
        let t = net(2, 1, 6).build().unwrap();
        assert!(
            t.describe().contains("oversubscription 1.50:1"),
            "{}",
            t.describe()
        );
    }

    #[test]
    fn refusals_give_reasons() {
        let pick = |hosts, radix| LeafSpine::full_bisection(hosts, radix, R, D).unwrap_err().0;
        assert!(pick(512, 16).contains("at most 128 hosts"));
        assert!(pick(100, 32).contains("multiple of 16"));
        assert!(pick(64, 1).contains("radix 1 is too small"));
        assert!(pick(0, 32).contains("at least two hosts"));
        let msg = |ls: LeafSpine| ls.build().unwrap_err().0;
        assert!(msg(net(0, 2, 2)).contains("leaves must be at least 1"));
        assert!(msg(net(2, 0, 2)).contains("spines must be at least 1"));
        assert!(msg(net(2, 2, 0)).contains("hosts_per_leaf must be at least 1"));
        assert!(msg(net(1, 2, 1)).contains("at least two"));
        let zero = LeafSpine {
            fabric_rate: Rate(0),
            ..net(2, 2, 2)
        };
        assert!(msg(zero).contains("fabric_rate must be positive"));
        assert!(msg(net(4_000, 10, 1_000)).contains("routing"));
    }
}
