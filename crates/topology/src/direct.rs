//! A direct network wired link by link: hosts that forward, each with the same number of ports,
//! joined by an explicit list of links (parallel links allowed). It is how a reconfigurable rack
//! (XFabric) describes each configuration of its circuits: port `p` of every host is the host's
//! port on crosspoint `p`, so two configurations of one rack have the same ports and differ only
//! in who is at the far end.
//!
//! Every port must be wired: a port left open would need a "no link" state that every query and
//! simulator would have to test for. Racks whose geometry leaves a port idle are refused with the
//! port named.

use crate::graph::{
    Kind, NodeIdx, PortIdx, Topology, TopologyError, Wiring, check_rate, check_size,
};
use shoal_base::{Dur, Rate};

/// Parameters of a direct network; [`Direct::build`] validates and wires them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Direct {
    pub hosts: u32,
    pub ports_per_host: u32,
    /// Each link joins `(host, port)` to `(host, port)`, both directions.
    pub links: Vec<[(NodeIdx, PortIdx); 2]>,
    /// Rate of every link.
    pub rate: Rate,
    /// Propagation delay of every link.
    pub link_delay: Dur,
}

impl Direct {
    pub fn build(&self) -> Result<Topology, TopologyError> {
        check_rate("direct network rate", self.rate)?;
        check_size(
            &format!("a direct network of {} hosts", self.hosts),
            u128::from(self.hosts),
            0,
        )?;
        if self.ports_per_host == 0 {
            return Err(TopologyError(
                "a direct network needs at least one port per host".into(),
            ));
        }
        let mut w = Wiring::new(
            self.hosts as usize,
            (0..self.hosts).map(|_| self.ports_per_host),
        );
        for &[(a, pa), (b, pb)] in &self.links {
            if a == b {
                return Err(TopologyError(format!(
                    "link from host {a} port {pa} to its own port {pb}: a host is not its own \
                     neighbour"
                )));
            }
            w.connect((a, pa), (b, pb), self.rate, self.link_delay)?;
        }
        let kind = Kind::Direct {
            hosts: self.hosts,
            ports_per_host: self.ports_per_host,
        };
        w.finish(
            format!("direct {} hosts", self.hosts),
            kind,
            format!(
                "direct network: {} hosts x {} ports, {} links of {} Gb/s and {}",
                self.hosts,
                self.ports_per_host,
                self.links.len(),
                self.rate.as_gbps_f64(),
                self.link_delay
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: u32) -> Direct {
        // Port 0 goes "up" the ring, port 1 "down".
        Direct {
            hosts: n,
            ports_per_host: 2,
            links: (0..n).map(|i| [(i, 0), ((i + 1) % n, 1)]).collect(),
            rate: Rate::gbps(1),
            link_delay: Dur::from_ns(500),
        }
    }

    #[test]
    fn a_ring_routes_the_short_way_with_both_ways_at_the_half() {
        let t = ring(6).build().unwrap();
        assert_eq!(t.hosts(), 6);
        assert_eq!(t.switches(), 0);
        assert_eq!(t.distance(0, 2), 2);
        assert_eq!(t.next_hops(0, 2), &[0]);
        assert_eq!(t.next_hops(0, 4), &[1]);
        assert_eq!(t.distance(0, 3), 3);
        assert_eq!(t.next_hops(0, 3), &[0, 1]);
        assert_eq!(t.shortest_paths(0, 3), 2);
    }

    #[test]
    fn parallel_links_are_two_paths() {
        let t = Direct {
            hosts: 2,
            ports_per_host: 2,
            links: vec![[(0, 0), (1, 1)], [(0, 1), (1, 0)]],
            rate: Rate::gbps(1),
            link_delay: Dur::ZERO,
        }
        .build()
        .unwrap();
        assert_eq!(t.next_hops(0, 1), &[0, 1]);
        assert_eq!(t.shortest_paths(0, 1), 2);
        assert_eq!(t.link(1, 1).peer_port, 0);
    }

    #[test]
    fn open_ports_self_links_and_double_use_are_refused() {
        let mut d = ring(4);
        d.links.pop();
        assert!(d.build().unwrap_err().0.contains("not connected"));
        let mut d = ring(4);
        d.links.push([(2, 0), (2, 1)]);
        assert!(d.build().unwrap_err().0.contains("own port"));
        let mut d = ring(4);
        d.links[0] = [(0, 0), (2, 1)];
        assert!(d.build().unwrap_err().0.contains("twice"));
        let mut d = ring(4);
        d.ports_per_host = 0;
        assert!(d.build().unwrap_err().0.contains("at least one port"));
    }
}
