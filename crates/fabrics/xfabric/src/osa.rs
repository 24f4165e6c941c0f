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
//!   Ties are broken by a perturbation that keeps an optimum, and a solve on each SoC's heaviest
//!   pairs is accepted when it meets an upper bound on every b-matching, so the whole gadget is
//!   built only when that certificate fails (see [`max_weight_b_matching`]).
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
use rand::RngExt;
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
///
/// Two exact steps, the second only when the first cannot prove its answer optimal:
/// 1. **Certified sparse solve.** Every SoC keeps its `2b`, then `4b`, heaviest demand edges (an
///    edge stays when either end keeps it) and the b-matching of that subgraph is solved exactly.
///    Any b-matching `M` of the whole demand graph weighs `w(M) = ½ Σ_s Σ_{e ∈ M, s ∈ e} w(e) ≤
///    ½ Σ_s top_b(s)`, the sum over SoCs of their `b` heaviest edges, halved
///    ([`degree_bound`]). A b-matching of a subgraph is one of the whole graph, so when it
///    reaches that bound it is optimal for the whole graph. On demands where every SoC can fill
///    its `b` ports with its heaviest pairs (all of Fig. 3's, whose pairs weigh the same) this
///    solves a few thousand edges instead of up to n(n − 1)/2.
/// 2. **Whole solve** of every demand edge otherwise.
///
/// Both solve with tie-broken weights ([`Perturbed`]), which keep an optimum of the true weights
/// and spare the blossom algorithm the long runs of equal-weight augmentations it takes on tied
/// instances (Fig. 3(b) at k = 8, 343 SoCs: minutes untied, well under a second here).
pub fn max_weight_b_matching(demand: &DemandMatrix, b: usize) -> Result<BMatching, Error> {
    Ok(max_weight_b_matching_within(demand, b, usize::MAX)?.expect("no limit on the whole solve"))
}

/// [`max_weight_b_matching`], but `None` instead of the whole solve when the certified sparse
/// solve fails and the demand has more than `whole_limit` pairs: the whole solve's blossom runs
/// on a gadget of `2·pairs + n·b` nodes and takes minutes beyond a few thousand pairs (a weighted
/// demand of 32,394 pairs at 343 SoCs did not finish). The caller says what it skipped.
pub fn max_weight_b_matching_within(
    demand: &DemandMatrix,
    b: usize,
    whole_limit: usize,
) -> Result<Option<BMatching>, Error> {
    check_degree(b)?;
    let n = demand.socs();
    let edges = Perturbed::new(demand_edges(&demand.pair_matrix(), n));
    let bound = degree_bound(&edges.edges, n, b);
    for keep in [b, 2 * b, 4 * b] {
        let sparse = edges.strongest(n, keep);
        if let Some(m) = candidate(&sparse, n, b, bound) {
            return Ok(Some(m));
        }
        if sparse.edges.len() == edges.edges.len() {
            break;
        }
    }
    Ok((edges.edges.len() <= whole_limit).then(|| solve(&edges, n, b)))
}

/// A b-matching of `edges` that meets `bound`, found by integer programming (`max Σ w(e)·x(e)`
/// with `Σ_{e ∋ s} x(e) ≤ b`), or `None`. The solver (good_lp's pure-Rust microlp) only proposes:
/// the answer is accepted when its exact integer weight meets the bound, so the solver's
/// floating-point tolerances cannot make an answer wrong, only send the caller on to the exact
/// whole solve. The linear relaxation is solved first: when even it stays below the bound, no
/// integer answer can meet it and the branch and bound (which can run for minutes on weighted
/// demands) is skipped.
fn candidate(edges: &Perturbed, n: usize, b: usize, bound: u128) -> Option<BMatching> {
    let heaviest = edges.edges.iter().map(|e| e.2).max().unwrap_or(1) as f64;
    let (_, relaxed) = program(edges, n, b, false)?;
    // Relative slack for the solver's tolerance: a relaxation this close may still reach it.
    if relaxed * heaviest < bound as f64 * (1.0 - 1e-9) {
        return None;
    }
    let (x, _) = program(edges, n, b, true)?;
    let mut taken = vec![0usize; n];
    let mut links = Vec::new();
    let mut weight = 0u128;
    for (&(u, v, w, _), &x) in edges.edges.iter().zip(&x) {
        if x > 0.5 {
            taken[u] += 1;
            taken[v] += 1;
            links.push((node(u), node(v)));
            weight += w as u128;
        }
    }
    (weight == bound && taken.iter().all(|&t| t <= b)).then_some(BMatching { links, weight })
}

/// The b-matching program of `edges` with weights scaled to at most 1, binary or relaxed to `0 ≤
/// x ≤ 1`: each edge's value and the objective, or `None` if the solver fails.
fn program(edges: &Perturbed, n: usize, b: usize, binary: bool) -> Option<(Vec<f64>, f64)> {
    use good_lp::{Expression, Solution, SolverModel, constraint, microlp, variable, variables};
    let heaviest = edges.edges.iter().map(|e| e.2).max().unwrap_or(1) as f64;
    let mut vars = variables!();
    let x: Vec<_> = edges
        .edges
        .iter()
        .map(|_| {
            let v = variable().min(0.0).max(1.0);
            vars.add(if binary { v.binary() } else { v })
        })
        .collect();
    let objective: Expression = edges
        .edges
        .iter()
        .zip(&x)
        .map(|(e, &x)| (e.2 as f64 / heaviest) * x)
        .sum();
    let mut degree = vec![Expression::from(0.0); n];
    for (&(u, v, _, _), &x) in edges.edges.iter().zip(&x) {
        degree[u] += x;
        degree[v] += x;
    }
    let mut model = vars.maximise(objective.clone()).using(microlp);
    for d in degree {
        model = model.with(constraint!(d <= b as f64));
    }
    let solution = model.solve().ok()?;
    let values = x.iter().map(|&x| solution.value(x)).collect();
    Some((values, solution.eval(&objective)))
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

/// `½ Σ_s top_b(s)`: an upper bound on the weight of every b-matching (see
/// [`max_weight_b_matching`]), rounded down since weights are integers.
fn degree_bound(edges: &[(usize, usize, u64, i128)], n: usize, b: usize) -> u128 {
    let mut incident: Vec<Vec<u64>> = vec![Vec::new(); n];
    for &(u, v, w, _) in edges {
        incident[u].push(w);
        incident[v].push(w);
    }
    let twice: u128 = incident
        .iter_mut()
        .map(|row| {
            row.sort_unstable_by(|a, b| b.cmp(a));
            row.iter().take(b).map(|&w| w as u128).sum::<u128>()
        })
        .sum();
    twice / 2
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

    /// The subgraph of the edges that are among the `keep` heaviest (by `w'`) of either end. Its
    /// edges keep their weights, so the bound of the proof above still holds on it.
    fn strongest(&self, n: usize, keep: usize) -> Perturbed {
        let mut incident: Vec<Vec<(i128, usize)>> = vec![Vec::new(); n];
        for (i, &(u, v, _, w)) in self.edges.iter().enumerate() {
            incident[u].push((w, i));
            incident[v].push((w, i));
        }
        let mut kept = vec![false; self.edges.len()];
        for row in &mut incident {
            row.sort_unstable_by(|a, b| b.cmp(a));
            for &(_, i) in row.iter().take(keep) {
                kept[i] = true;
            }
        }
        let edges = self
            .edges
            .iter()
            .zip(&kept)
            .filter(|&(_, &k)| k)
            .map(|(&e, _)| e)
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
    Ok(
        osa_topology_within(demand, degree, seed, usize::MAX)?
            .expect("no limit on the whole solve"),
    )
}

/// [`osa_topology`], `None` where [`max_weight_b_matching_within`] gives up.
pub fn osa_topology_within(
    demand: &DemandMatrix,
    degree: usize,
    seed: u64,
    whole_limit: usize,
) -> Result<Option<SocGraph>, Error> {
    let Some(matching) = max_weight_b_matching_within(demand, degree, whole_limit)? else {
        return Ok(None);
    };
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
    SocGraph::from_links(n, links).map(Some)
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

    /// The reduction on every demand edge with the true weights (the solver before tie breaking
    /// and the certified sparse solve), solved by integer-blossom, an independent matching
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
    fn the_degree_bound_certifies_a_sparse_solve() {
        // K8 with equal weights and b = 2: every SoC keeps 4 of its 7 edges, a 2-factor (a
        // Hamiltonian cycle) exists among them and meets the bound ½ · 8 · 2 = 8 edges.
        let pairs: Vec<_> = (0..8u16)
            .flat_map(|a| (a + 1..8).map(move |b| (a, b, 5)))
            .collect();
        let m = matrix(8, &pairs);
        let edges = Perturbed::new(demand_edges(&m.pair_matrix(), 8));
        assert_eq!(degree_bound(&edges.edges, 8, 2), 40);
        let sparse = edges.strongest(8, 4);
        assert!(sparse.edges.len() < 28);
        assert_eq!(solve(&sparse, 8, 2).weight(), 40);
        assert_eq!(max_weight_b_matching(&m, 2).unwrap().weight(), 40);
        // The path 0-1-2-3 weighted 3, 4, 3 with b = 1: the bound (7) is not reached and the
        // whole solve gives the optimum 6.
        let path = matrix(4, &[(0, 1, 3), (1, 2, 4), (2, 3, 3)]);
        let edges = Perturbed::new(demand_edges(&path.pair_matrix(), 4));
        assert_eq!(degree_bound(&edges.edges, 4, 1), 7);
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

    /// Demands with many equal weights and SoCs with more than 4b pairs, where the certified
    /// sparse solve is tried.
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
