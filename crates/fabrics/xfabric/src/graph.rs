//! The one topology type of the crate. XFabric, OSA, the 3D torus and the random graph are all
//! expressed as a multigraph over SoCs, so the flow-level simulator (and the tests here) can route
//! and measure any of them with the same code. It is a multigraph because XFabric may join two
//! SoCs by several circuits on different crosspoints, and a torus with a dimension of size 2 has
//! two links between the same neighbours.

use crate::error::Error;
use shoal_base::NodeId;

/// The largest number of SoCs a graph can hold: a SoC is named by a 16-bit [`NodeId`].
pub const MAX_GRAPH_SOCS: usize = 1 << 16;

/// An undirected multigraph over SoCs `0..socs`, built once and then read through flat arrays.
///
/// Links are stored twice: as a sorted list (a parallel link repeats its pair) and as an adjacency
/// in compressed rows over *distinct* neighbours with a multiplicity each, which is what shortest
/// paths and the simulator walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocGraph {
    socs: usize,
    links: Vec<(NodeId, NodeId)>,
    offsets: Vec<u32>,
    neighbours: Vec<NodeId>,
    multiplicity: Vec<u32>,
}

impl SocGraph {
    /// Builds the graph from its links, in any order and either orientation. Rejects self-loops and
    /// SoCs outside `0..socs`.
    pub fn from_links(
        socs: usize,
        links: impl IntoIterator<Item = (NodeId, NodeId)>,
    ) -> Result<SocGraph, Error> {
        if socs == 0 {
            return Err(Error::TooFewSocs { socs, min: 1 });
        }
        if socs > MAX_GRAPH_SOCS {
            return Err(Error::TooManySocs {
                socs,
                max: MAX_GRAPH_SOCS,
            });
        }
        let mut sorted = Vec::new();
        for (a, b) in links {
            for s in [a, b] {
                if s.idx() >= socs {
                    return Err(Error::SocOutOfRange { soc: s.idx(), socs });
                }
            }
            if a == b {
                return Err(Error::SelfLoop { soc: a.idx() });
            }
            sorted.push(if a < b { (a, b) } else { (b, a) });
        }
        sorted.sort_unstable();

        // Each link appears in both endpoints' rows; sorting the directed copies groups a row's
        // parallel links together, so one pass counts them.
        let mut directed: Vec<(NodeId, NodeId)> = Vec::with_capacity(2 * sorted.len());
        for &(a, b) in &sorted {
            directed.push((a, b));
            directed.push((b, a));
        }
        directed.sort_unstable();
        let mut offsets = vec![0u32; socs + 1];
        let mut neighbours = Vec::new();
        let mut multiplicity: Vec<u32> = Vec::new();
        let mut last: Option<(NodeId, NodeId)> = None;
        for &(s, t) in &directed {
            if last == Some((s, t)) {
                if let Some(m) = multiplicity.last_mut() {
                    *m += 1;
                }
            } else {
                neighbours.push(t);
                multiplicity.push(1);
                offsets[s.idx() + 1] += 1;
                last = Some((s, t));
            }
        }
        for s in 0..socs {
            offsets[s + 1] += offsets[s];
        }
        Ok(SocGraph {
            socs,
            links: sorted,
            offsets,
            neighbours,
            multiplicity,
        })
    }

    /// The number of SoCs.
    pub fn socs(&self) -> usize {
        self.socs
    }

    /// Every link once, as `(a, b)` with `a < b`, sorted; parallel links repeat.
    pub fn links(&self) -> &[(NodeId, NodeId)] {
        &self.links
    }

    /// The distinct neighbours of `soc`, ascending.
    ///
    /// # Panics
    /// If `soc` is not in the graph, as slice indexing does.
    pub fn neighbours(&self, soc: NodeId) -> &[NodeId] {
        &self.neighbours[self.row(soc)]
    }

    /// How many parallel links join `soc` to each of [`SocGraph::neighbours`], in the same order.
    ///
    /// # Panics
    /// If `soc` is not in the graph.
    pub fn multiplicities(&self, soc: NodeId) -> &[u32] {
        &self.multiplicity[self.row(soc)]
    }

    /// How many links join `a` and `b` (0 if they are not adjacent).
    ///
    /// # Panics
    /// If `a` is not in the graph.
    pub fn multiplicity(&self, a: NodeId, b: NodeId) -> u32 {
        let row = self.row(a);
        match self.neighbours[row.clone()].binary_search(&b) {
            Ok(i) => self.multiplicity[row.start + i],
            Err(_) => 0,
        }
    }

    /// The number of ports `soc` uses: its links, counting parallel ones.
    ///
    /// # Panics
    /// If `soc` is not in the graph.
    pub fn degree(&self, soc: NodeId) -> usize {
        self.multiplicities(soc).iter().map(|&m| m as usize).sum()
    }

    /// Whether no two SoCs are joined by more than one link.
    pub fn is_simple(&self) -> bool {
        self.multiplicity.iter().all(|&m| m == 1)
    }

    /// The connected component of every SoC, numbered in order of each component's lowest SoC.
    pub fn component_labels(&self) -> Vec<u32> {
        let mut label = vec![u32::MAX; self.socs];
        let mut next = 0u32;
        let mut stack = Vec::new();
        for start in 0..self.socs {
            if label[start] != u32::MAX {
                continue;
            }
            label[start] = next;
            stack.push(start);
            while let Some(s) = stack.pop() {
                for &t in &self.neighbours[self.offsets[s] as usize..self.offsets[s + 1] as usize] {
                    if label[t.idx()] == u32::MAX {
                        label[t.idx()] = next;
                        stack.push(t.idx());
                    }
                }
            }
            next += 1;
        }
        label
    }

    /// The number of connected components.
    pub fn components(&self) -> usize {
        self.component_labels()
            .iter()
            .max()
            .map_or(0, |&m| m as usize + 1)
    }

    /// Whether every SoC can reach every other.
    pub fn is_connected(&self) -> bool {
        self.components() == 1
    }

    fn row(&self, soc: NodeId) -> std::ops::Range<usize> {
        self.offsets[soc.idx()] as usize..self.offsets[soc.idx() + 1] as usize
    }
}

/// A SoC index as a [`NodeId`]. Callers have checked `i < MAX_GRAPH_SOCS`.
pub(crate) fn node(i: usize) -> NodeId {
    debug_assert!(i < MAX_GRAPH_SOCS);
    NodeId(i as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: u16) -> NodeId {
        NodeId(i)
    }

    #[test]
    fn parallel_links_are_counted_once_as_neighbours() {
        let g = SocGraph::from_links(4, [(n(1), n(0)), (n(0), n(1)), (n(2), n(3)), (n(1), n(2))])
            .unwrap();
        assert_eq!(
            g.links(),
            &[(n(0), n(1)), (n(0), n(1)), (n(1), n(2)), (n(2), n(3))]
        );
        assert_eq!(g.neighbours(n(1)), &[n(0), n(2)]);
        assert_eq!(g.multiplicities(n(1)), &[2, 1]);
        assert_eq!(g.multiplicity(n(0), n(1)), 2);
        assert_eq!(g.multiplicity(n(1), n(0)), 2);
        assert_eq!(g.multiplicity(n(0), n(3)), 0);
        assert_eq!(g.degree(n(1)), 3);
        assert!(!g.is_simple());
        assert!(g.is_connected());
    }

    #[test]
    fn components_are_labelled_by_lowest_member() {
        let g = SocGraph::from_links(5, [(n(3), n(4)), (n(0), n(2))]).unwrap();
        assert_eq!(g.component_labels(), vec![0, 1, 0, 2, 2]);
        assert_eq!(g.components(), 3);
        assert!(!g.is_connected());
    }

    #[test]
    fn bad_links_are_rejected() {
        assert_eq!(
            SocGraph::from_links(3, [(n(1), n(1))]),
            Err(Error::SelfLoop { soc: 1 })
        );
        assert_eq!(
            SocGraph::from_links(3, [(n(0), n(3))]),
            Err(Error::SocOutOfRange { soc: 3, socs: 3 })
        );
        assert_eq!(
            SocGraph::from_links(0, []),
            Err(Error::TooFewSocs { socs: 0, min: 1 })
        );
    }
}
