//! Forwarding tables (§4): what the controller pushes to every SoC's packet switch after a
//! reconfiguration. Packets follow shortest paths in hops, and a SoC keeps every neighbour on a
//! shortest path as a next hop so traffic can spread over equal-cost paths, as the paper's
//! simulator does. The same tables serve every topology, so fabrics are routed alike.
//!
//! Next hops are neighbour SoCs, ascending, each once: parallel circuits to the same neighbour are
//! one next hop, and the data plane spreads over them by port ([`SocGraph::multiplicities`]).
//! Everything is held in flat arrays indexed by (SoC, destination), a SoC's table contiguous.

use crate::demand::DemandMatrix;
use crate::error::Error;
use crate::graph::{SocGraph, node};
use shoal_base::NodeId;
use std::collections::VecDeque;

const UNREACHABLE: u16 = u16::MAX;

/// Shortest-path distances and all equal-cost next hops between every pair of SoCs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForwardingTables {
    socs: usize,
    /// `[at * socs + dst]`: hops from `at` to `dst`, or `UNREACHABLE`.
    hops: Vec<u16>,
    /// Next hops of `(at, dst)` are `next[offsets[at * socs + dst]..offsets[at * socs + dst + 1]]`.
    offsets: Vec<usize>,
    next: Vec<NodeId>,
}

impl ForwardingTables {
    /// Computes the tables of `graph` by a breadth-first search from every SoC.
    pub fn new(graph: &SocGraph) -> ForwardingTables {
        let n = graph.socs();
        // The graph is undirected, so the search from `dst` gives every SoC's distance to it.
        let mut hops = vec![UNREACHABLE; n * n];
        let mut dist = vec![UNREACHABLE; n];
        let mut queue = VecDeque::with_capacity(n);
        for dst in 0..n {
            dist.fill(UNREACHABLE);
            dist[dst] = 0;
            queue.push_back(dst);
            while let Some(s) = queue.pop_front() {
                for &t in graph.neighbours(node(s)) {
                    if dist[t.idx()] == UNREACHABLE {
                        dist[t.idx()] = dist[s] + 1;
                        queue.push_back(t.idx());
                    }
                }
            }
            for (at, &h) in dist.iter().enumerate() {
                hops[at * n + dst] = h;
            }
        }
        let mut offsets = Vec::with_capacity(n * n + 1);
        let mut next = Vec::new();
        offsets.push(0);
        for at in 0..n {
            let neighbours = graph.neighbours(node(at));
            for dst in 0..n {
                let h = hops[at * n + dst];
                if h != UNREACHABLE && h > 0 {
                    next.extend(
                        neighbours
                            .iter()
                            .filter(|u| hops[u.idx() * n + dst] == h - 1),
                    );
                }
                offsets.push(next.len());
            }
        }
        ForwardingTables {
            socs: n,
            hops,
            offsets,
            next,
        }
    }

    /// The number of SoCs.
    pub fn socs(&self) -> usize {
        self.socs
    }

    /// Hops on a shortest path from `src` to `dst`, or `None` if `dst` cannot be reached.
    ///
    /// # Panics
    /// If either SoC is not in the graph.
    pub fn hops(&self, src: NodeId, dst: NodeId) -> Option<u16> {
        let h = self.hops[self.index(src, dst)];
        (h != UNREACHABLE).then_some(h)
    }

    /// The neighbours of `at` on a shortest path to `dst`, ascending (empty at `dst` itself or if
    /// `dst` cannot be reached).
    ///
    /// # Panics
    /// If either SoC is not in the graph.
    pub fn next_hops(&self, at: NodeId, dst: NodeId) -> &[NodeId] {
        let i = self.index(at, dst);
        &self.next[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The mean path length in hops, each SoC pair weighted by its demand (the paper's main
    /// metric), or `None` if there is no demand at all.
    pub fn mean_hops(&self, demand: &DemandMatrix) -> Result<Option<f64>, Error> {
        let n = self.socs;
        if demand.socs() != n {
            return Err(Error::MatrixSize {
                expected: n,
                found: demand.socs(),
            });
        }
        let mut weighted: u128 = 0;
        let mut total: u128 = 0;
        for (i, &v) in demand.as_slice().iter().enumerate() {
            if v == 0 {
                continue;
            }
            let h = self.hops[i];
            if h == UNREACHABLE {
                return Err(Error::Unreachable {
                    src: i / n,
                    dst: i % n,
                });
            }
            weighted += v as u128 * h as u128;
            total += v as u128;
        }
        Ok((total > 0).then(|| weighted as f64 / total as f64))
    }

    fn index(&self, at: NodeId, dst: NodeId) -> usize {
        assert!(
            at.idx() < self.socs && dst.idx() < self.socs,
            "SoC outside the tables"
        );
        at.idx() * self.socs + dst.idx()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn graph(n: usize, links: &[(u16, u16)]) -> SocGraph {
        SocGraph::from_links(n, links.iter().map(|&(a, b)| (NodeId(a), NodeId(b)))).unwrap()
    }

    #[test]
    fn a_ring_of_four_has_two_ways_to_the_opposite_soc() {
        let g = graph(4, &[(0, 1), (1, 2), (2, 3), (3, 0), (0, 1)]);
        let f = ForwardingTables::new(&g);
        assert_eq!(f.hops(NodeId(0), NodeId(2)), Some(2));
        assert_eq!(f.next_hops(NodeId(0), NodeId(2)), &[NodeId(1), NodeId(3)]);
        // The parallel link to SoC 1 is one next hop.
        assert_eq!(f.next_hops(NodeId(0), NodeId(1)), &[NodeId(1)]);
        assert_eq!(f.next_hops(NodeId(2), NodeId(2)), &[] as &[NodeId]);
        assert_eq!(f.hops(NodeId(2), NodeId(2)), Some(0));
    }

    #[test]
    fn mean_hops_weights_pairs_by_demand() {
        // A path 0-1-2: 30 bytes over one hop and 10 over two give 50 / 40.
        let f = ForwardingTables::new(&graph(3, &[(0, 1), (1, 2)]));
        let mut m = DemandMatrix::zeros(3).unwrap();
        m.set(NodeId(0), NodeId(1), 30).unwrap();
        m.set(NodeId(2), NodeId(0), 10).unwrap();
        assert_eq!(f.mean_hops(&m), Ok(Some(1.25)));
        assert_eq!(f.mean_hops(&DemandMatrix::zeros(3).unwrap()), Ok(None));
    }

    #[test]
    fn demand_across_a_cut_is_an_error() {
        let f = ForwardingTables::new(&graph(4, &[(0, 1), (2, 3)]));
        assert_eq!(f.hops(NodeId(0), NodeId(3)), None);
        assert!(f.next_hops(NodeId(0), NodeId(3)).is_empty());
        let mut m = DemandMatrix::zeros(4).unwrap();
        m.set(NodeId(3), NodeId(1), 5).unwrap();
        assert_eq!(f.mean_hops(&m), Err(Error::Unreachable { src: 3, dst: 1 }));
    }

    proptest! {
        /// Distances match Floyd-Warshall, and the next hops are exactly the neighbours one hop
        /// closer, so following any of them reaches the destination in the stated number of hops.
        #[test]
        fn tables_match_floyd_warshall(
            n in 2usize..16,
            raw in prop::collection::vec((0u16..16, 0u16..16), 0..40),
        ) {
            let links: Vec<(u16, u16)> = raw
                .into_iter()
                .map(|(a, b)| (a % n as u16, b % n as u16))
                .filter(|(a, b)| a != b)
                .collect();
            let g = graph(n, &links);
            let f = ForwardingTables::new(&g);
            const INF: u32 = u32::MAX / 4;
            let mut fw = vec![INF; n * n];
            for s in 0..n {
                fw[s * n + s] = 0;
            }
            for &(a, b) in &links {
                fw[a as usize * n + b as usize] = 1;
                fw[b as usize * n + a as usize] = 1;
            }
            for k in 0..n {
                for i in 0..n {
                    for j in 0..n {
                        fw[i * n + j] = fw[i * n + j].min(fw[i * n + k] + fw[k * n + j]);
                    }
                }
            }
            for at in 0..n {
                for dst in 0..n {
                    let want = (fw[at * n + dst] < INF).then(|| fw[at * n + dst] as u16);
                    prop_assert_eq!(f.hops(node(at), node(dst)), want);
                    let closer: Vec<NodeId> = g
                        .neighbours(node(at))
                        .iter()
                        .copied()
                        .filter(|u| want.is_some_and(|h| h > 0 && fw[u.idx() * n + dst] + 1 == h as u32))
                        .collect();
                    prop_assert_eq!(f.next_hops(node(at), node(dst)), closer.as_slice());
                }
            }
        }
    }
}
