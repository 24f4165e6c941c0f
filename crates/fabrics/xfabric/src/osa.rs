//! The OSA baseline (§6.1): every internal port of every SoC on one fully reconfigurable circuit
//! switch, the topology computed as OSA computes it. The paper compares against OSA's topology
//! algorithm only, without its flexible link capacities, and so does this module.
//!
//! OSA (Chen et al., NSDI 2012, the paper's \[13\]) computes its topology as a maximum-weight
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
//!   Before it, the linear relaxation bounds every b-matching and its dual rules out many edges,
//!   so a rounding that meets the bound is taken without a blossom solve and otherwise the
//!   gadget holds only the edges an optimum may use (see [`max_weight_b_matching`]): every
//!   demand of Fig. 2 and 3 at 343 SoCs is solved within a minute, Fig. 3's each within a second.
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
use crate::fractional::{Fractional, fractional_b_matching, tie_order};
use crate::graph::{SocGraph, node};
use crate::rack::MAX_PORTS;
use petgraph::graph::{NodeIndex, UnGraph};
use petgraph::unionfind::UnionFind;
use rand::RngExt;
use rand::seq::SliceRandom;
use rustworkx_core::max_weight_matching::max_weight_matching;
use shoal_base::{NodeId, rng};
use std::cmp::Reverse;
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
///
/// 1. **The fractional bound.** The linear relaxation is solved exactly, with its dual
///    (`fractional_b_matching`): no b-matching weighs more than half its doubled bound.
/// 2. **Rounding.** The edges with no dual slack (those an optimum meeting the bound uses), heaviest
///    first, ties in a fixed random order (or, if that falls short, the relaxation's whole edges
///    first), wherever both ends have a free port; then augmenting trails
///    over those edges fill the SoCs the dual wants full (`Rounding::augment`); then any edge
///    that still fits. When that weighs `⌊bound⌋` it is optimal (weights are integers) and nothing
///    else runs: so it is on every demand of Fig. 3 at 343 SoCs, tied or not (the tied Fig. 3(b)
///    instance at k = 8, which kept the blossom algorithm alone busy for minutes, in a second).
/// 3. **Edges no optimum uses.** A b-matching holding edge `e` weighs at most `bound − s(e)`,
///    `s(e)` the edge's dual slack; an edge whose slack exceeds the rounding's gap to the bound
///    therefore lies only in b-matchings lighter than the rounding, and is dropped. The rounding
///    keeps all its edges, so the kept graph's optimum is the whole graph's.
/// 4. **Exact solve** of the kept edges by the gadget reduction and the blossom algorithm, on
///    tie-broken weights (`Perturbed`) that keep an optimum of the true weights and spare the
///    blossom algorithm long runs of equal-weight augmentations.
pub fn max_weight_b_matching(demand: &DemandMatrix, b: usize) -> Result<BMatching, Error> {
    check_degree(b)?;
    let n = demand.socs();
    let edges = demand_edges(&demand.pair_matrix(), n);
    let relaxed = fractional_b_matching(&edges, n, b);
    let mut rounded = round(&edges, &relaxed, n, b, false);
    if relaxed.twice_bound - 2 * rounded.weight >= 2 {
        let again = round(&edges, &relaxed, n, b, true);
        if again.weight > rounded.weight {
            rounded = again;
        }
    }
    let gap = relaxed.twice_bound - 2 * rounded.weight;
    if gap < 2 {
        return Ok(rounded);
    }
    let kept: Vec<_> = (edges.iter().zip(&relaxed.twice_slack))
        .filter(|&(_, &s)| s <= gap)
        .map(|(&e, _)| e)
        .collect();
    Ok(solve(&Perturbed::new(kept), n, b))
}

/// A b-matching from the fractional optimum (see [`max_weight_b_matching`], step 2); with
/// `relaxed_first`, among edges of equal weight those the relaxation takes whole come first.
fn round(
    edges: &[(usize, usize, u64)],
    relaxed: &Fractional,
    n: usize,
    b: usize,
    relaxed_first: bool,
) -> BMatching {
    let tight = |e: usize| relaxed.twice_slack[e] == 0;
    let rank = tie_order(edges.len());
    let mut order: Vec<usize> = (0..edges.len()).collect();
    // Edges without dual slack before the others, heaviest first, then in a fixed random order.
    // Which of several optima OSA gets decides its topology: taking the relaxation's whole edges
    // first, or ties in edge order, made a cluster of 14 SoCs (b = 6) two disjoint 7-cliques,
    // every SoC full and as heavy as any b-matching, the halves joined only by the connectivity
    // repair (6.97 hops inside clusters of 14 at 343 SoCs). So the relaxation's choice is only
    // the second attempt, for when the first falls short of the bound (Fig. 3(b) at k = 64).
    let whole = |e: usize| relaxed_first && relaxed.twice_x[e] == 2;
    order.sort_by_key(|&e| (!tight(e), Reverse(edges[e].2), !whole(e), rank[e]));
    let mut r = Rounding {
        edges,
        b,
        taken: vec![false; edges.len()],
        matched: vec![Vec::new(); n],
    };
    let (tight_edges, others) = order.split_at(order.partition_point(|&e| tight(e)));
    for &e in tight_edges {
        r.take_if_free(e);
    }
    r.augment(tight_edges, relaxed);
    for &e in others {
        r.take_if_free(e);
    }
    let mut links = Vec::new();
    let mut weight = 0u128;
    for (e, &(u, v, w)) in edges.iter().enumerate() {
        if r.taken[e] {
            links.push((node(u), node(v)));
            weight += w as u128;
        }
    }
    BMatching { links, weight }
}

/// A b-matching being rounded: which edges it takes, and each SoC's taken edges.
struct Rounding<'a> {
    edges: &'a [(usize, usize, u64)],
    b: usize,
    taken: Vec<bool>,
    matched: Vec<Vec<usize>>,
}

impl Rounding<'_> {
    fn free(&self, s: usize) -> bool {
        self.matched[s].len() < self.b
    }

    fn other(&self, e: usize, s: usize) -> usize {
        let (u, v, _) = self.edges[e];
        if u == s { v } else { u }
    }

    fn flip(&mut self, e: usize) {
        let (u, v, _) = self.edges[e];
        self.taken[e] = !self.taken[e];
        for s in [u, v] {
            if self.taken[e] {
                self.matched[s].push(e);
            } else {
                self.matched[s].retain(|&x| x != e);
            }
        }
    }

    fn take_if_free(&mut self, e: usize) {
        let (u, v, _) = self.edges[e];
        if self.free(u) && self.free(v) {
            self.flip(e);
        }
    }

    /// Fills the SoCs the dual wants full (`y > 0`) by augmenting trails over `tight` edges: from
    /// such a SoC with a free port, alternately an edge not taken and a taken one whose `z` is 0,
    /// to a SoC with a free port (the start again if it has two), no edge twice; flipping the
    /// trail adds one edge. On tight edges the weight grows by the two ends' `y` (an inner SoC
    /// gains one edge for each it loses, and its terms cancel), and a b-matching of tight edges
    /// that fills every SoC with `y > 0` and holds every edge with `z > 0` meets the bound. The
    /// search is breadth-first over (SoC, arrived by a taken edge or not), so it may miss a trail,
    /// never make a wrong one; the caller checks the result against the bound either way.
    fn augment(&mut self, tight: &[usize], relaxed: &Fractional) {
        let n = self.matched.len();
        let mut adjacent: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &e in tight {
            let (u, v, _) = self.edges[e];
            adjacent[u].push(e);
            adjacent[v].push(e);
        }
        // z(e) = 0 exactly when y alone covers the edge's weight.
        let removable: Vec<bool> = (self.edges.iter())
            .map(|&(u, v, w)| relaxed.twice_y[u] + relaxed.twice_y[v] == 2 * w as i128)
            .collect();
        for root in 0..n {
            while relaxed.twice_y[root] > 0 && self.free(root) {
                match self.trail(root, &adjacent, &removable) {
                    Some(trail) => trail.into_iter().for_each(|e| self.flip(e)),
                    None => break,
                }
            }
        }
    }

    /// The edges of an augmenting trail from `root` (see [`Rounding::augment`]), if the search
    /// finds one. States are `2s` (at SoC `s` by a taken edge, or the start) and `2s + 1` (by an
    /// edge not taken).
    fn trail(
        &self,
        root: usize,
        adjacent: &[Vec<usize>],
        removable: &[bool],
    ) -> Option<Vec<usize>> {
        let n = self.matched.len();
        let mut via = vec![usize::MAX; 2 * n];
        let mut seen = vec![false; 2 * n];
        seen[2 * root] = true;
        let mut queue = std::collections::VecDeque::from([root]);
        let free_ports = |s: usize| self.b - self.matched[s].len();
        let path = |mut state: usize, via: &[usize]| {
            let mut edges = Vec::new();
            while state != 2 * root {
                let e = via[state];
                edges.push(e);
                state = 2 * self.other(e, state / 2) + (1 - state % 2);
            }
            edges
        };
        while let Some(a) = queue.pop_front() {
            for &e in &adjacent[a] {
                let x = self.other(e, a);
                if self.taken[e] || seen[2 * x + 1] {
                    continue;
                }
                seen[2 * x + 1] = true;
                via[2 * x + 1] = e;
                let enough = if x == root { 2 } else { 1 };
                if free_ports(x) >= enough {
                    let mut trail = path(2 * x + 1, &via);
                    let len = trail.len();
                    trail.sort_unstable();
                    trail.dedup();
                    if trail.len() == len {
                        return Some(trail);
                    }
                    continue;
                }
                for &f in &self.matched[x] {
                    let y = self.other(f, x);
                    if removable[f] && !seen[2 * y] {
                        seen[2 * y] = true;
                        via[2 * y] = f;
                        queue.push_back(y);
                    }
                }
            }
        }
        None
    }
}

/// The pairs with demand, `(u, v, D{u,v})` with `u < v`, in order.
fn demand_edges(pair_demand: &[u64], n: usize) -> Vec<(usize, usize, u64)> {
    let mut edges = Vec::new();
    for u in 0..n {
        for v in u + 1..n {
            let w = pair_demand[u * n + v];
            if w > 0 {
                edges.push((u, v, w));
            }
        }
    }
    edges
}

/// Demand edges with distinct tie-broken weights `w'(e) = K·w(e) + p(e)`, where `p(e)` is drawn
/// in `[0, P)` from a fixed stream and `K = P·|E|`.
///
/// Why an optimum for `w'` is one for `w`: a b-matching holds at most `|E|` edges, so `p(M) <
/// |E|·P = K` for every `M`. If `w(M) < w(M*)` then, weights being integers, `w(M) ≤ w(M*) − 1`
/// and `w'(M) = K·w(M) + p(M) < K·w(M) + K ≤ K·w(M*) ≤ w'(M*)`: no `M` lighter under `w` can be
/// heavier under `w'`, so every `w'`-optimum is a `w`-optimum. The draws come from a stream that
/// does not depend on the scenario seed, so the matching is a function of the demand alone.
struct Perturbed {
    /// `(u, v, w, w')`.
    edges: Vec<(usize, usize, u64, i128)>,
}

impl Perturbed {
    /// The range of `p(e)`: wide enough that ties between equal sums of draws are rare.
    const P: i128 = 1 << 24;

    fn new(edges: Vec<(usize, usize, u64)>) -> Perturbed {
        let mut draws = rng::stream(0, "xfabric.osa.ties", 0);
        let k = Self::P * edges.len().max(1) as i128;
        let edges = edges
            .into_iter()
            .map(|(u, v, w)| {
                let p = draws.random_range(0..Self::P as u64) as i128;
                (u, v, w, k * w as i128 + p)
            })
            .collect();
        Perturbed { edges }
    }
}

/// The exact b-matching of `edges` under their tie-broken weights.
fn solve(edges: &Perturbed, n: usize, b: usize) -> BMatching {
    let gadget = Gadget::new(edges.edges.clone(), n, b);
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
    gadget.decode(&mate)
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
    /// The gadget of `edges`, `(u, v, w, solver weight)`: the solver weight (`w` itself, or a
    /// tie-broken one) builds the links, `w` is what the decoded b-matching weighs.
    pub(crate) fn new(edges: Vec<(usize, usize, u64, i128)>, n: usize, b: usize) -> Gadget {
        let big = edges.iter().map(|e| e.3).max().unwrap_or(0) + 1;
        let base = n * b;
        let mut links = Vec::with_capacity(edges.len() * (2 * b + 1));
        for (e, &(u, v, _, w)) in edges.iter().enumerate() {
            let (x, y) = (base + 2 * e, base + 2 * e + 1);
            links.push((x, y, 2 * big));
            for i in 0..b {
                links.push((u * b + i, x, big + w));
                links.push((y, v * b + i, big + w));
            }
        }
        Gadget {
            nodes: base + 2 * edges.len(),
            links,
            edges: edges.into_iter().map(|(u, v, w, _)| (u, v, w)).collect(),
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

    /// The reduction on every demand edge with the true weights (no tie breaking, no bound),
    /// solved by integer-blossom, an independent matching
    /// implementation.
    fn by_integer_blossom(m: &DemandMatrix, b: usize) -> BMatching {
        let edges = demand_edges(&m.pair_matrix(), m.socs());
        let g = Gadget::new(
            edges
                .into_iter()
                .map(|(u, v, w)| (u, v, w, w as i128))
                .collect(),
            m.socs(),
            b,
        );
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
    fn a_rounding_that_meets_the_bound_is_taken() {
        // K8 with equal weights and b = 2: the relaxation is worth 8 edges (every SoC full), and
        // the rounding finds a 2-factor that meets it.
        let pairs: Vec<_> = (0..8u16)
            .flat_map(|a| (a + 1..8).map(move |b| (a, b, 5)))
            .collect();
        let m = matrix(8, &pairs);
        let edges = demand_edges(&m.pair_matrix(), 8);
        let relaxed = fractional_b_matching(&edges, 8, 2);
        assert_eq!(relaxed.twice_bound, 2 * 40);
        assert_eq!(round(&edges, &relaxed, 8, 2, false).weight(), 40);
        assert_eq!(max_weight_b_matching(&m, 2).unwrap().weight(), 40);
    }

    #[test]
    fn an_odd_cycle_leaves_a_gap_for_the_exact_solve() {
        // A triangle weighted 5 with a pendant edge (2, 3) of 1, b = 1: the relaxation takes half
        // of each triangle edge (7.5), no matching more than (0, 1) and (2, 3) (6).
        let m = matrix(4, &[(0, 1, 5), (1, 2, 5), (0, 2, 5), (2, 3, 1)]);
        let edges = demand_edges(&m.pair_matrix(), 4);
        let relaxed = fractional_b_matching(&edges, 4, 1);
        assert_eq!(relaxed.twice_bound, 15);
        let bm = max_weight_b_matching(&m, 1).unwrap();
        assert_eq!(bm.weight(), 6);
        assert_eq!(bm.links().len(), 2);
        assert!(bm.links().contains(&(NodeId(2), NodeId(3))));
    }

    /// The present exact solver alone (the gadget of every demand edge, tie-broken, by
    /// rustworkx-core's blossom algorithm), which the bound, rounding and pruning must agree with.
    fn by_whole_solve(m: &DemandMatrix, b: usize) -> BMatching {
        solve(
            &Perturbed::new(demand_edges(&m.pair_matrix(), m.socs())),
            m.socs(),
            b,
        )
    }

    /// Fig. 3(b) at 343 SoCs and k = 32 and 64 (pairs chosen both ways weigh twice the others,
    /// so the relaxation is not met by the heaviest pairs alone): the same weight as the whole
    /// solve, which takes minutes.
    /// `cargo test --release -p shoal-xfabric --lib -- --ignored fig3b --nocapture` (about 3 min)
    #[test]
    #[ignore]
    fn the_fig3b_instances_agree_with_the_whole_solve() {
        for k in [32, 64] {
            let flows = shoal_workload::random_destinations(343, k, 1 << 20, 2016).unwrap();
            let m = crate::workloads::demand_of(&flows, 343).unwrap();
            let bm = max_weight_b_matching(&m, 6).unwrap();
            check_b_matching(&m, 6, &bm);
            assert_eq!(bm.weight(), by_whole_solve(&m, 6).weight(), "k = {k}");
        }
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

    /// Demands with many equal weights and SoCs with more than 2b pairs, where the relaxation is
    /// degenerate and priced in rounds.
    fn tied_demand() -> impl Strategy<Value = (usize, Vec<(u16, u16, u64)>)> {
        (8usize..30).prop_flat_map(|n| {
            let pair = (0..n as u16, 0..n as u16, 1u64..3);
            (Just(n), prop::collection::vec(pair, 2 * n..8 * n))
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
        fn the_matching_agrees_with_the_whole_solve(
            (n, pairs) in small_demand(), b in 1usize..5,
        ) {
            let m = matrix(n, &pairs);
            prop_assert_eq!(
                max_weight_b_matching(&m, b).unwrap().weight(),
                by_whole_solve(&m, b).weight()
            );
        }

        #[test]
        fn tied_matchings_agree_with_integer_blossom(
            (n, pairs) in tied_demand(), b in 1usize..4,
        ) {
            let m = matrix(n, &pairs);
            let bm = max_weight_b_matching(&m, b).unwrap();
            check_b_matching(&m, b, &bm);
            prop_assert_eq!(bm.weight(), by_integer_blossom(&m, b).weight());
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
