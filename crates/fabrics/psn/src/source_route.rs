//! Per-packet source routing (`path = "source"`), the way htsim's NDP sprays
//! (`SCATTER_PERMUTE`): each end of a flow holds a random permutation of every path to the other
//! end, takes the next one for each packet it sends, and draws a new permutation once all have
//! been used. Switches do not choose: the packet carries its path.
//!
//! A path is a number `r` below the product of the next-hop counts along the way; a node with
//! `n` equal-cost next hops takes hop `r mod n` and passes `r / n` on (mixed radix). On the
//! topologies it is allowed on (leaf-spine, fat-tree) every node of one level has the same
//! number of next hops towards a destination, so the numbers `0..count` name every shortest
//! path exactly once. A torus has no such levels, and the scenario refuses it there.

use shoal_topology::Topology;

/// The number of shortest paths from host `src` to host `dst`: the product of the next-hop
/// counts along the first of them (equal along every one, see the module documentation).
pub fn path_count(topo: &Topology, src: u32, dst: u32) -> u32 {
    let (mut n, mut count) = (src, 1u32);
    while n != dst {
        let hops = topo.next_hops(n, dst);
        count = count.saturating_mul(hops.len() as u32);
        n = topo.link(n, hops[0]).peer;
    }
    count
}

/// The hop a node with `choices` equal-cost next hops takes for a packet carrying path
/// `route`, which it leaves holding what the nodes after it read.
#[inline]
pub fn take_hop(route: &mut u32, choices: usize) -> usize {
    let n = choices as u32;
    let hop = *route % n;
    *route /= n;
    hop as usize
}

/// One end's cycle through random permutations of its paths.
#[derive(Clone, Debug)]
pub struct PathCycle {
    order: Vec<u32>,
    next: usize,
    /// Keys the permutations: a fixed function of the run's seed, the flow and the end.
    key: u64,
    draws: u64,
}

impl PathCycle {
    pub fn new(paths: u32, key: u64) -> PathCycle {
        PathCycle {
            order: (0..paths.max(1)).collect(),
            next: usize::MAX,
            key,
            draws: 0,
        }
    }

    /// The path for the next packet.
    pub fn next_path(&mut self) -> u32 {
        if self.next >= self.order.len() {
            self.shuffle();
            self.next = 0;
        }
        self.next += 1;
        self.order[self.next - 1]
    }

    /// Fisher-Yates over a counter-keyed mixer, so a cycle needs no random stream of its own.
    fn shuffle(&mut self) {
        for i in (1..self.order.len()).rev() {
            self.draws += 1;
            let j = (crate::sim::mix(self.key ^ self.draws.wrapping_mul(0x9E37_79B9_7F4A_7C15))
                % (i as u64 + 1)) as usize;
            self.order.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::{Dur, Rate};
    use shoal_topology::FatTree;
    use std::collections::BTreeSet;

    fn fat_tree(k: u32) -> Topology {
        FatTree {
            k,
            oversubscription: 1,
            rate: Rate::gbps(10),
            link_delay: Dur(1_000_000),
        }
        .build()
        .expect("a fat-tree")
    }

    /// The links a packet carrying `route` crosses from `src` to `dst`.
    fn walk(topo: &Topology, src: u32, dst: u32, mut route: u32) -> Vec<(u32, u32)> {
        let (mut n, mut links) = (src, Vec::new());
        while n != dst {
            let hops = topo.next_hops(n, dst);
            let next = topo.link(n, hops[take_hop(&mut route, hops.len())]).peer;
            links.push((n, next));
            n = next;
        }
        links
    }

    #[test]
    fn the_numbers_name_every_shortest_path_once() {
        let topo = fat_tree(6); // 54 hosts, (k/2)^2 = 9 paths between pods
        let hosts = topo.hosts() as u32;
        for (src, dst) in [(0, hosts - 1), (0, 3), (0, 1), (7, 40)] {
            let count = path_count(&topo, src, dst);
            let paths: BTreeSet<_> = (0..count).map(|r| walk(&topo, src, dst, r)).collect();
            assert_eq!(paths.len(), count as usize, "{src}->{dst}: distinct");
            // The topology's own path counter is the reference.
            assert_eq!(
                count as u64,
                topo.shortest_paths(src, dst),
                "{src}->{dst}: all"
            );
            for p in &paths {
                assert_eq!(
                    p.len() as u32,
                    topo.distance(src, dst),
                    "{src}->{dst}: shortest"
                );
            }
        }
        assert_eq!(path_count(&topo, 0, hosts - 1), 9);
        assert_eq!(path_count(&topo, 0, 3), 3); // same pod, another edge switch
        assert_eq!(path_count(&topo, 0, 1), 1); // same edge switch
    }

    #[test]
    fn a_cycle_uses_every_path_once_before_repeating() {
        let mut c = PathCycle::new(36, 42);
        let mut rounds = Vec::new();
        for _ in 0..4 {
            let round: Vec<u32> = (0..36).map(|_| c.next_path()).collect();
            let set: BTreeSet<_> = round.iter().copied().collect();
            assert_eq!(set, (0..36).collect(), "a permutation of all paths");
            rounds.push(round);
        }
        assert_ne!(rounds[0], rounds[1], "reshuffled each round");
        // Deterministic: the same key gives the same paths.
        let mut again = PathCycle::new(36, 42);
        assert_eq!(
            (0..36).map(|_| again.next_path()).collect::<Vec<_>>(),
            rounds[0]
        );
        assert_eq!(PathCycle::new(1, 5).next_path(), 0);
    }
}
