//! The OSA baseline (§6.1): every internal port of every SoC on one fully reconfigurable circuit
//! switch, the topology computed as OSA computes it. The paper compares against OSA's topology
//! algorithm only, without its flexible link capacities, and so does this module.
//!
//! OSA (Chen et al., NSDI 2012, the paper's [13]) computes its topology as a maximum-weight
//! b-matching of the demand graph with b = d, then repairs it to be connected; the XFabric paper
//! names the algorithm but details neither step. Choices made here:
//! - **Simple b-matching**: two SoCs share at most one circuit. §2 describes a fully
//!   reconfigurable network as choosing, for each node, "the set of d" nodes it connects to, so a
//!   pair is either linked or not; parallel circuits are what XFabric adds.
//! - **Exact**, by a reduction to maximum-weight matching solved with rustworkx-core. Vertex
//!   replication alone (b copies per SoC, an edge between every two copies) would allow up to b²
//!   parallel circuits per pair, so each demand edge {u, v} of weight w gets its own gadget: two
//!   nodes x, y joined with weight 2M, x joined to every copy of u and y to every copy of v with
//!   weight M + w, where M exceeds every w. An optimal matching matches x–y (the edge unused,
//!   worth 2M) or x and y to copies (used, worth 2M + 2w); a half-used gadget is worth M + w < 2M,
//!   so it never is one. Copies bound each SoC to b circuits and one gadget per edge to one
//!   circuit. Only pairs with demand get a gadget, since pairs without add nothing to the weight.
//! - **Filling**: the matching leaves ports idle where demand runs out. They are paired at random
//!   (from the seed) between SoCs not yet linked, first between different components, then any,
//!   until no two unlinked SoCs both have a free port. As XFabric, OSA then uses its ports fully.
//! - **Connectivity repair** by edge exchange: while there are several components, the two holding
//!   the lowest SoCs are merged. If both have an edge on a cycle, the lowest-demand such edges
//!   (a1, a2) and (b1, b2) are replaced by the heavier of {(a1, b1), (a2, b2)} and
//!   {(a1, b2), (a2, b1)}: degrees stay the same and both components stay internally connected.
//!   If one is a tree, it has a SoC f with a free port (after filling only one component can), and
//!   the other's lowest-demand cycle edge (b1, b2) is replaced by f's link to the endpoint it has
//!   more demand with (and to the other endpoint too if f has a second free port). The idle ports
//!   this leaves are filled again. With b = 1 the topology is a matching and cannot be connected.

use crate::demand::DemandMatrix;
use crate::error::Error;
use crate::graph::{SocGraph, node};
use crate::rack::MAX_PORTS;
use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::unionfind::UnionFind;
use rand::seq::SliceRandom;
use rustworkx_core::max_weight_matching::max_weight_matching;
use shoal_base::{NodeId, rng};
use std::convert::Infallible;

/// A set of links in which every SoC has at most b, and no pair more than one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BMatching {
    links: Vec<(NodeId, NodeId)>,
    weight: u128,
}

impl BMatching {
    /// The links, `(a, b)` with `a < b`, sorted.
    pub fn links(&self) -> &[(NodeId, NodeId)] {
        &self.links
    }

    /// The total pair demand of the links.
    pub fn weight(&self) -> u128 {
        self.weight
    }
}

/// An exact maximum-weight simple b-matching of the pair demands `D{a,b}` of `demand`.
pub fn max_weight_b_matching(demand: &DemandMatrix, b: usize) -> Result<BMatching, Error> {
    check_degree(b)?;
    let gadget = Gadget::new(&demand.pair_matrix(), demand.socs(), b);
    let mut graph = UnGraph::<(), i128>::with_capacity(gadget.nodes, gadget.links.len());
    for _ in 0..gadget.nodes {
        graph.add_node(());
    }
    for &(u, v, w) in &gadget.links {
        graph.add_edge(NodeIndex::new(u), NodeIndex::new(v), w);
    }
    let Ok(pairs) = max_weight_matching(&graph, false, |e| Ok::<_, Infallible>(*e.weight()), false);
    // The solver returns a hash set in arbitrary order; filling a mate array by index makes the
    // decoding independent of that order.
    let mut mate = vec![None; gadget.nodes];
    for (u, v) in pairs {
        mate[u] = Some(v);
        mate[v] = Some(u);
    }
    Ok(gadget.decode(&mate))
}

/// The OSA topology for `demand` with `degree` ports per SoC: the b-matching, filled and made
/// connected as the module describes. `seed` draws the filling.
pub fn osa_topology(demand: &DemandMatrix, degree: usize, seed: u64) -> Result<SocGraph, Error> {
    let matching = max_weight_b_matching(demand, degree)?;
    let n = demand.socs();
    let mut w = Working {
        n,
        b: degree,
        demand: demand.pair_matrix(),
        adj: vec![Vec::new(); n],
    };
    for &(a, b) in matching.links() {
        w.add(a.idx(), b.idx());
    }
    w.fill(seed);
    w.connect()?;
    // An exchange can free a port next to another free one; filling again only adds links, so
    // the graph stays connected and becomes maximal again.
    w.fill(seed);
    let mut links = Vec::new();
    for (u, row) in w.adj.iter().enumerate() {
        links.extend(row.iter().filter(|&&v| u < v).map(|&v| (node(u), node(v))));
    }
    SocGraph::from_links(n, links)
}

fn check_degree(b: usize) -> Result<(), Error> {
    if b == 0 {
        return Err(Error::NoPorts);
    }
    if b > MAX_PORTS {
        return Err(Error::TooManyPorts {
            ports: b,
            max: MAX_PORTS,
        });
    }
    Ok(())
}

/// The matching instance that encodes a simple b-matching (see the module documentation). Nodes
/// `s * b + i` are the copies of SoC `s`; edge `e` of `edges` has gadget nodes `base + 2e` (on the
/// side of its lower SoC) and `base + 2e + 1`.
pub(crate) struct Gadget {
    pub(crate) nodes: usize,
    pub(crate) links: Vec<(usize, usize, i128)>,
    edges: Vec<(usize, usize, u64)>,
    base: usize,
}

impl Gadget {
    pub(crate) fn new(pair_demand: &[u64], n: usize, b: usize) -> Gadget {
        let mut edges = Vec::new();
        for u in 0..n {
            for v in u + 1..n {
                let w = pair_demand[u * n + v];
                if w > 0 {
                    edges.push((u, v, w));
                }
            }
        }
        let big = edges.iter().map(|e| e.2 as i128).max().unwrap_or(0) + 1;
        let base = n * b;
        let mut links = Vec::with_capacity(edges.len() * (2 * b + 1));
        for (e, &(u, v, w)) in edges.iter().enumerate() {
            let (x, y) = (base + 2 * e, base + 2 * e + 1);
            links.push((x, y, 2 * big));
            for i in 0..b {
                links.push((u * b + i, x, big + w as i128));
                links.push((y, v * b + i, big + w as i128));
            }
        }
        Gadget {
            nodes: base + 2 * edges.len(),
            links,
            edges,
            base,
        }
    }

    /// The b-matching a matching of the gadget encodes: the edges whose two gadget nodes are both
    /// matched to copies.
    pub(crate) fn decode(&self, mate: &[Option<usize>]) -> BMatching {
        let mut links = Vec::new();
        let mut weight = 0u128;
        for (e, &(u, v, w)) in self.edges.iter().enumerate() {
            let x = mate[self.base + 2 * e];
            let y = mate[self.base + 2 * e + 1];
            if x.is_some_and(|m| m < self.base) && y.is_some_and(|m| m < self.base) {
                links.push((node(u), node(v)));
                weight += w as u128;
            }
        }
        BMatching { links, weight }
    }
}

/// The topology being built: a simple graph as sorted adjacency lists, which the repair edits.
struct Working {
    n: usize,
    b: usize,
    demand: Vec<u64>,
    adj: Vec<Vec<usize>>,
}

impl Working {
    fn linked(&self, u: usize, v: usize) -> bool {
        self.adj[u].binary_search(&v).is_ok()
    }

    fn add(&mut self, u: usize, v: usize) {
        for (s, t) in [(u, v), (v, u)] {
            if let Err(i) = self.adj[s].binary_search(&t) {
                self.adj[s].insert(i, t);
            }
        }
    }

    fn remove(&mut self, u: usize, v: usize) {
        for (s, t) in [(u, v), (v, u)] {
            if let Ok(i) = self.adj[s].binary_search(&t) {
                self.adj[s].remove(i);
            }
        }
    }

    fn has_free_port(&self, s: usize) -> bool {
        self.adj[s].len() < self.b
    }

    fn pair(&self, u: usize, v: usize) -> u64 {
        self.demand[u * self.n + v]
    }

    /// Pairs up idle ports at random: first across components, then anywhere.
    fn fill(&mut self, seed: u64) {
        let free: Vec<usize> = (0..self.n).filter(|&s| self.has_free_port(s)).collect();
        let mut candidates: Vec<(u32, u32)> = Vec::new();
        for (i, &u) in free.iter().enumerate() {
            for &v in &free[i + 1..] {
                if !self.linked(u, v) {
                    candidates.push((u as u32, v as u32));
                }
            }
        }
        candidates.shuffle(&mut rng::stream(seed, "xfabric.osa.fill", 0));
        let mut parts = UnionFind::<u32>::new(self.n);
        for (u, row) in self.adj.iter().enumerate() {
            for &v in row {
                parts.union(u as u32, v as u32);
            }
        }
        for across in [true, false] {
            for &(u, v) in &candidates {
                let (u, v) = (u as usize, v as usize);
                if !self.has_free_port(u) || !self.has_free_port(v) || self.linked(u, v) {
                    continue;
                }
                if across && parts.equiv(u as u32, v as u32) {
                    continue;
                }
                parts.union(u as u32, v as u32);
                self.add(u, v);
            }
        }
    }

    /// Merges components by edge exchange until the graph is connected.
    fn connect(&mut self) -> Result<(), Error> {
        loop {
            let graph = SocGraph::from_links(
                self.n,
                self.adj.iter().enumerate().flat_map(|(u, row)| {
                    row.iter()
                        .filter(move |&&v| u < v)
                        .map(move |&v| (node(u), node(v)))
                }),
            )?;
            let label = graph.component_labels();
            let components = label.iter().max().map_or(0, |&m| m as usize + 1);
            if components <= 1 {
                return Ok(());
            }
            let bridges = bridges(&self.adj);
            // The lowest-demand edge on a cycle of component `c`, ties to the lowest pair.
            let cycle_edge = |c: u32| {
                graph
                    .links()
                    .iter()
                    .map(|&(u, v)| (u.idx(), v.idx()))
                    .filter(|&(u, v)| label[u] == c && bridges.binary_search(&(u, v)).is_err())
                    .min_by_key(|&(u, v)| (self.pair(u, v), u, v))
            };
            let free_soc = |c: u32| (0..self.n).find(|&s| label[s] == c && self.has_free_port(s));
            match (cycle_edge(0), cycle_edge(1), free_soc(0), free_soc(1)) {
                (Some((a1, a2)), Some((b1, b2)), _, _) => {
                    self.remove(a1, a2);
                    self.remove(b1, b2);
                    let straight = self.pair(a1, b1) as u128 + self.pair(a2, b2) as u128;
                    let crossed = self.pair(a1, b2) as u128 + self.pair(a2, b1) as u128;
                    if crossed > straight {
                        self.add(a1, b2);
                        self.add(a2, b1);
                    } else {
                        self.add(a1, b1);
                        self.add(a2, b2);
                    }
                }
                (None, Some((b1, b2)), Some(f), _) | (Some((b1, b2)), None, _, Some(f)) => {
                    self.remove(b1, b2);
                    let (to, other) = if self.pair(f, b2) > self.pair(f, b1) {
                        (b2, b1)
                    } else {
                        (b1, b2)
                    };
                    self.add(f, to);
                    // A SoC with two free ports (a lone SoC, say) takes the whole edge's place.
                    if self.has_free_port(f) {
                        self.add(f, other);
                    }
                }
                _ => return Err(Error::Disconnected { components }),
            }
        }
    }
}

/// The bridges of a simple graph, as sorted `(u, v)` with `u < v`: Tarjan's low-link algorithm,
/// iterative so that long paths cannot overflow the stack.
fn bridges(adj: &[Vec<usize>]) -> Vec<(usize, usize)> {
    let n = adj.len();
    let mut order = vec![u32::MAX; n];
    let mut low = vec![0u32; n];
    let mut out = Vec::new();
    let mut time = 0u32;
    // (vertex, parent, index of the next neighbour to visit)
    let mut stack: Vec<(usize, usize, usize)> = Vec::new();
    for root in 0..n {
        if order[root] != u32::MAX {
            continue;
        }
        order[root] = time;
        low[root] = time;
        time += 1;
        stack.push((root, usize::MAX, 0));
        while let Some(top) = stack.last_mut() {
            let (v, parent, i) = *top;
            if let Some(&t) = adj[v].get(i) {
                top.2 += 1;
                if t == parent {
                    continue;
                }
                if order[t] == u32::MAX {
                    order[t] = time;
                    low[t] = time;
                    time += 1;
                    stack.push((t, v, 0));
                } else {
                    low[v] = low[v].min(order[t]);
                }
            } else {
                stack.pop();
                if parent != usize::MAX {
                    low[parent] = low[parent].min(low[v]);
                    if low[v] > order[parent] {
                        out.push((parent.min(v), parent.max(v)));
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn matrix(n: usize, pairs: &[(u16, u16, u64)]) -> DemandMatrix {
        let mut m = DemandMatrix::zeros(n).unwrap();
        for &(a, b, v) in pairs {
            if a != b {
                m.set(NodeId(a), NodeId(b), v).unwrap();
            }
        }
        m
    }

    /// The best simple b-matching by trying every subset of the demand edges.
    fn brute_force(m: &DemandMatrix, b: usize) -> u128 {
        let n = m.socs();
        let pd = m.pair_matrix();
        let edges: Vec<(usize, usize, u64)> = (0..n)
            .flat_map(|u| (u + 1..n).map(move |v| (u, v)))
            .filter(|&(u, v)| pd[u * n + v] > 0)
            .map(|(u, v)| (u, v, pd[u * n + v]))
            .collect();
        let mut best = 0u128;
        for set in 0u32..1 << edges.len() {
            let mut deg = vec![0usize; n];
            let mut w = 0u128;
            for (e, &(u, v, x)) in edges.iter().enumerate() {
                if set & (1 << e) != 0 {
                    deg[u] += 1;
                    deg[v] += 1;
                    w += x as u128;
                }
            }
            if deg.iter().all(|&d| d <= b) {
                best = best.max(w);
            }
        }
        best
    }

    /// The same reduction solved by integer-blossom, an independent matching implementation.
    fn by_integer_blossom(m: &DemandMatrix, b: usize) -> BMatching {
        let g = Gadget::new(&m.pair_matrix(), m.socs(), b);
        let mut dense = vec![0i128; g.nodes * g.nodes];
        for &(u, v, w) in &g.links {
            dense[u * g.nodes + v] = w;
            dense[v * g.nodes + u] = w;
        }
        g.decode(&integer_blossom::max_weight_matching(&dense, g.nodes))
    }

    fn check_b_matching(m: &DemandMatrix, b: usize, bm: &BMatching) {
        let n = m.socs();
        let mut deg = vec![0usize; n];
        let mut weight = 0u128;
        for w in bm.links().windows(2) {
            assert!(w[0] < w[1], "a pair is matched twice");
        }
        for &(u, v) in bm.links() {
            assert!(u < v);
            deg[u.idx()] += 1;
            deg[v.idx()] += 1;
            weight += m.pair(u, v) as u128;
        }
        assert!(deg.iter().all(|&d| d <= b));
        assert_eq!(weight, bm.weight());
    }

    #[test]
    fn a_triangle_with_b_2_takes_all_three_edges() {
        let m = matrix(3, &[(0, 1, 5), (1, 2, 4), (0, 2, 3)]);
        let bm = max_weight_b_matching(&m, 2).unwrap();
        assert_eq!(bm.weight(), 12);
        assert_eq!(bm.links().len(), 3);
        // With b = 1 only the heaviest edge fits.
        assert_eq!(
            max_weight_b_matching(&m, 1).unwrap().links(),
            &[(NodeId(0), NodeId(1))]
        );
    }

    #[test]
    fn the_matching_is_not_greedy() {
        // A path 0-1-2-3 weighted 3, 4, 3: greedy takes the middle edge (4), the optimum the two
        // outer ones (6).
        let m = matrix(4, &[(0, 1, 3), (1, 2, 4), (2, 3, 3)]);
        let bm = max_weight_b_matching(&m, 1).unwrap();
        assert_eq!(bm.weight(), 6);
        assert_eq!(
            bm.links(),
            &[(NodeId(0), NodeId(1)), (NodeId(2), NodeId(3))]
        );
    }

    #[test]
    fn osa_repairs_disconnected_matchings() {
        // Two heavy cliques of 4 with b = 3: the matching is two K4s. The repair exchanges one
        // edge of each, so degrees stay 3 and the graph is connected.
        let mut pairs = vec![];
        for (lo, hi) in [(0u16, 4u16), (4, 8)] {
            for a in lo..hi {
                for b in a + 1..hi {
                    pairs.push((a, b, 100 + (a * 8 + b) as u64));
                }
            }
        }
        let m = matrix(8, &pairs);
        let g = osa_topology(&m, 3, 0).unwrap();
        assert!(g.is_connected());
        assert!(g.is_simple());
        assert!((0..8).all(|s| g.degree(NodeId(s)) == 3));
        assert_eq!(g.links().len(), 12);
        // The two exchanged edges are the lightest of each clique, (0,1) and (4,5).
        assert_eq!(g.multiplicity(NodeId(0), NodeId(1)), 0);
        assert_eq!(g.multiplicity(NodeId(4), NodeId(5)), 0);
    }

    #[test]
    fn one_port_per_soc_cannot_be_connected() {
        let m = matrix(4, &[(0, 1, 1), (2, 3, 1)]);
        assert_eq!(
            osa_topology(&m, 1, 0),
            Err(Error::Disconnected { components: 2 })
        );
        assert_eq!(max_weight_b_matching(&m, 0), Err(Error::NoPorts));
    }

    #[test]
    fn bridges_of_two_triangles_on_a_path() {
        // 0-1-2-0 and 3-4-5-3 joined by 2-3: the only bridge is (2,3).
        let mut adj = vec![Vec::new(); 6];
        for (u, v) in [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (2, 3)] {
            adj[u].push(v);
            adj[v].push(u);
        }
        for row in &mut adj {
            row.sort_unstable();
        }
        assert_eq!(bridges(&adj), vec![(2, 3)]);
        let path = vec![vec![1], vec![0, 2], vec![1]];
        assert_eq!(bridges(&path), vec![(0, 1), (1, 2)]);
    }

    fn tiny_demand() -> impl Strategy<Value = (usize, Vec<(u16, u16, u64)>)> {
        (2usize..7).prop_flat_map(|n| {
            let pair = (0..n as u16, 0..n as u16, 1u64..50);
            (Just(n), prop::collection::vec(pair, 0..12))
        })
    }

    fn small_demand() -> impl Strategy<Value = (usize, Vec<(u16, u16, u64)>)> {
        (2usize..24).prop_flat_map(|n| {
            let pair = (0..n as u16, 0..n as u16, 1u64..1000);
            (Just(n), prop::collection::vec(pair, 0..4 * n))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn the_matching_is_optimal_against_brute_force(
            (n, pairs) in tiny_demand(), b in 1usize..4,
        ) {
            let m = matrix(n, &pairs);
            let bm = max_weight_b_matching(&m, b).unwrap();
            check_b_matching(&m, b, &bm);
            prop_assert_eq!(bm.weight(), brute_force(&m, b));
        }

        #[test]
        fn the_matching_agrees_with_integer_blossom(
            (n, pairs) in small_demand(), b in 1usize..5,
        ) {
            let m = matrix(n, &pairs);
            let bm = max_weight_b_matching(&m, b).unwrap();
            check_b_matching(&m, b, &bm);
            let oracle = by_integer_blossom(&m, b);
            check_b_matching(&m, b, &oracle);
            prop_assert_eq!(bm.weight(), oracle.weight());
            if b == 1 {
                // With b = 1 the reduction must also agree with a plain matching of the demand.
                let k = m.socs();
                let pd: Vec<i128> = m.pair_matrix().iter().map(|&x| x as i128).collect();
                let mate = integer_blossom::max_weight_matching(&pd, k);
                let direct: u128 = (0..k)
                    .filter_map(|u| mate[u].filter(|&v| u < v).map(|v| pd[u * k + v] as u128))
                    .sum();
                prop_assert_eq!(bm.weight(), direct);
            }
        }

        #[test]
        fn osa_topologies_are_simple_connected_and_maximal(
            (n, pairs) in small_demand(), b in 2usize..7, seed in any::<u64>(),
        ) {
            let m = matrix(n, &pairs);
            let g = osa_topology(&m, b, seed).unwrap();
            prop_assert!(g.is_simple());
            prop_assert!(g.is_connected());
            for s in 0..n {
                prop_assert!(g.degree(node(s)) <= b);
            }
            // No two SoCs that are not linked both have a free port.
            for u in 0..n {
                for v in u + 1..n {
                    let idle = g.degree(node(u)) < b && g.degree(node(v)) < b;
                    prop_assert!(!idle || g.multiplicity(node(u), node(v)) == 1);
                }
            }
            prop_assert_eq!(&g, &osa_topology(&m, b, seed).unwrap());
        }
    }
}
