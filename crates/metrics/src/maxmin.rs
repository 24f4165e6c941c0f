//! Max-min fair reference rates, the yardstick of the paper's §7.2 fairness check ("we compared
//! the throughput achieved by each flow against its ideal throughput computed using the max-min
//! water-filling algorithm").
//!
//! [`MaxMin`] is a generic weighted max-min allocator by progressive filling: every unfrozen
//! entity's rate rises in proportion to its weight until a link saturates (its entities freeze) or
//! an entity reaches its cap (it alone freezes), and so on until everyone is frozen. Links are
//! processed from a lazily updated priority queue keyed by the fill level at which each would
//! saturate, so a solve costs O((entities × links per entity + links) · log links) rather than a
//! scan of every link per level; the 1,024-flow, 512-node Shoal instance (≈ 520k subflows) solves
//! in under a second in release.
//!
//! [`shoal_maxmin`] builds Shoal's virtual-link model (§3.3.2, "High Multi-pathing"): the fabric
//! connects each ordered pair once per epoch, so node i's bandwidth R splits into N − 1 virtual
//! links i→j of capacity R/(N − 1). A flow i→k is N − 1 subflows: i→j→k for every j ∉ {i, k},
//! plus the direct subflow over i→k alone. Rates are f64 in whatever unit `node_rate` is given:
//! this is a reference computation, not simulated time.

use shoal_base::NodeId;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt;

/// Why a max-min problem could not be solved. Bad input is reported, never panicked on.
#[derive(Clone, Debug, PartialEq)]
pub enum MaxMinError {
    /// A link capacity is negative, NaN or infinite.
    BadCapacity { link: usize, capacity: f64 },
    /// An entity names a link that was never added.
    LinkOutOfRange {
        entity: usize,
        link: usize,
        n_links: usize,
    },
    /// A weight is not finite and strictly positive.
    BadWeight { entity: usize, weight: f64 },
    /// A rate cap is negative or NaN (`+inf` means uncapped and is accepted).
    BadCap { entity: usize, cap: f64 },
    /// An entity crosses no link and has no cap, so its fair rate would be infinite.
    Unbounded { entity: usize },
    /// The Shoal model needs at least two nodes.
    TooFewNodes { n_nodes: usize },
    /// The node rate is negative, NaN or infinite.
    BadNodeRate { node_rate: f64 },
    /// Flow `flow` names a node outside `0..n_nodes`.
    NodeOutOfRange {
        flow: usize,
        node: NodeId,
        n_nodes: usize,
    },
    /// Flow `flow` goes from a node to itself, which never crosses the fabric.
    SelfFlow { flow: usize, node: NodeId },
}

impl fmt::Display for MaxMinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadCapacity { link, capacity } => {
                write!(
                    f,
                    "link {link}: capacity {capacity} is not finite and non-negative"
                )
            }
            Self::LinkOutOfRange {
                entity,
                link,
                n_links,
            } => {
                write!(
                    f,
                    "entity {entity}: link {link} out of range (only {n_links} links)"
                )
            }
            Self::BadWeight { entity, weight } => {
                write!(
                    f,
                    "entity {entity}: weight {weight} is not finite and positive"
                )
            }
            Self::BadCap { entity, cap } => {
                write!(f, "entity {entity}: cap {cap} is negative or NaN")
            }
            Self::Unbounded { entity } => {
                write!(
                    f,
                    "entity {entity} crosses no link and has no cap: its rate is unbounded"
                )
            }
            Self::TooFewNodes { n_nodes } => {
                write!(f, "a Shoal rack needs at least 2 nodes, got {n_nodes}")
            }
            Self::BadNodeRate { node_rate } => {
                write!(f, "node rate {node_rate} is not finite and non-negative")
            }
            Self::NodeOutOfRange {
                flow,
                node,
                n_nodes,
            } => {
                write!(
                    f,
                    "flow {flow}: node {node} out of range (rack of {n_nodes} nodes)"
                )
            }
            Self::SelfFlow { flow, node } => {
                write!(f, "flow {flow}: source and destination are both {node}")
            }
        }
    }
}

impl std::error::Error for MaxMinError {}

/// A weighted max-min problem: links with capacities, entities (demands) crossing links.
///
/// Entities are stored in compressed rows (one flat link list plus offsets) because the Shoal
/// instances have hundreds of thousands of two-link entities. Input is checked by
/// [`MaxMin::solve`], so building never fails.
#[derive(Clone, Debug)]
pub struct MaxMin {
    capacity: Vec<f64>,
    weight: Vec<f64>,
    /// `f64::INFINITY` when uncapped.
    cap: Vec<f64>,
    /// Entity `e` crosses `links[offsets[e]..offsets[e + 1]]`.
    offsets: Vec<usize>,
    links: Vec<usize>,
}

impl Default for MaxMin {
    fn default() -> Self {
        Self::new()
    }
}

impl MaxMin {
    pub fn new() -> Self {
        Self {
            capacity: Vec::new(),
            weight: Vec::new(),
            cap: Vec::new(),
            offsets: vec![0],
            links: Vec::new(),
        }
    }

    /// Adds a link and returns its index.
    pub fn add_link(&mut self, capacity: f64) -> usize {
        self.capacity.push(capacity);
        self.capacity.len() - 1
    }

    /// Adds an uncapped entity of weight 1 and returns its index. A link listed twice is
    /// crossed twice: it carries twice the entity's rate.
    pub fn add_entity(&mut self, links: &[usize]) -> usize {
        self.add_weighted_entity(links, 1.0, None)
    }

    /// Adds an entity whose fair share is `weight` times the common fill level, never above
    /// `cap` (its demand; `None` means unlimited), and returns its index.
    pub fn add_weighted_entity(&mut self, links: &[usize], weight: f64, cap: Option<f64>) -> usize {
        self.links.extend_from_slice(links);
        self.offsets.push(self.links.len());
        self.weight.push(weight);
        self.cap.push(cap.unwrap_or(f64::INFINITY));
        self.weight.len() - 1
    }

    pub fn n_links(&self) -> usize {
        self.capacity.len()
    }

    pub fn n_entities(&self) -> usize {
        self.weight.len()
    }

    pub fn capacity(&self, link: usize) -> f64 {
        self.capacity[link]
    }

    pub fn weight(&self, entity: usize) -> f64 {
        self.weight[entity]
    }

    /// The entity's cap, `f64::INFINITY` if uncapped.
    pub fn cap(&self, entity: usize) -> f64 {
        self.cap[entity]
    }

    /// The links entity `entity` crosses, with repetitions.
    pub fn entity_links(&self, entity: usize) -> &[usize] {
        &self.links[self.offsets[entity]..self.offsets[entity + 1]]
    }

    fn validate(&self) -> Result<(), MaxMinError> {
        for (link, &capacity) in self.capacity.iter().enumerate() {
            if !(capacity.is_finite() && capacity >= 0.0) {
                return Err(MaxMinError::BadCapacity { link, capacity });
            }
        }
        let n_links = self.n_links();
        for entity in 0..self.n_entities() {
            let (weight, cap) = (self.weight[entity], self.cap[entity]);
            if !(weight.is_finite() && weight > 0.0) {
                return Err(MaxMinError::BadWeight { entity, weight });
            }
            if cap.is_nan() || cap < 0.0 {
                return Err(MaxMinError::BadCap { entity, cap });
            }
            let links = self.entity_links(entity);
            if let Some(&link) = links.iter().find(|&&l| l >= n_links) {
                return Err(MaxMinError::LinkOutOfRange {
                    entity,
                    link,
                    n_links,
                });
            }
            if links.is_empty() && cap.is_infinite() {
                return Err(MaxMinError::Unbounded { entity });
            }
        }
        Ok(())
    }

    /// The weighted max-min fair rate of every entity, by progressive filling.
    ///
    /// The result is the unique allocation in which no link is over capacity and every entity
    /// is either at its cap or crosses a saturated link on which its rate/weight is the largest.
    pub fn solve(&self) -> Result<Vec<f64>, MaxMinError> {
        self.validate()?;
        let n_links = self.n_links();

        // Link -> entities (transpose of the entity rows, repetitions kept).
        let mut by_link_off = vec![0usize; n_links + 1];
        for &l in &self.links {
            by_link_off[l + 1] += 1;
        }
        for l in 0..n_links {
            by_link_off[l + 1] += by_link_off[l];
        }
        let mut by_link = vec![0usize; self.links.len()];
        let mut cursor = by_link_off.clone();
        for e in 0..self.n_entities() {
            for &l in self.entity_links(e) {
                by_link[cursor[l]] = e;
                cursor[l] += 1;
            }
        }
        drop(cursor);

        let mut st = Fill::new(self);
        let mut heap = BinaryHeap::new();
        for l in 0..n_links {
            if let Some(level) = st.saturation_level(self, l) {
                heap.push(Reverse(Event {
                    level,
                    link: l,
                    version: 0,
                }));
            }
        }
        // Caps are static, so their events need no queue: one sorted pass.
        let mut by_cap: Vec<usize> = (0..self.n_entities())
            .filter(|&e| self.cap[e].is_finite())
            .collect();
        by_cap.sort_by(|&a, &b| {
            (self.cap[a] / self.weight[a]).total_cmp(&(self.cap[b] / self.weight[b]))
        });
        let mut next_cap = 0;
        let mut level = 0.0f64;

        loop {
            while next_cap < by_cap.len() && st.frozen[by_cap[next_cap]] {
                next_cap += 1;
            }
            while let Some(Reverse(ev)) = heap.peek() {
                if ev.version == st.version[ev.link] {
                    break;
                }
                heap.pop();
            }
            let cap_level = by_cap.get(next_cap).map(|&e| self.cap[e] / self.weight[e]);
            let link_level = heap.peek().map(|Reverse(ev)| ev.level);
            match (cap_level, link_level) {
                (None, None) => break,
                // On a tie the cap goes first: the entity gets exactly its cap either way.
                (Some(c), l) if l.is_none_or(|l| c <= l) => {
                    let e = by_cap[next_cap];
                    next_cap += 1;
                    st.freeze(self, e, self.cap[e]);
                }
                _ => {
                    let Some(Reverse(ev)) = heap.pop() else { break };
                    // Levels only rise; the max absorbs rounding in the recomputed levels.
                    level = level.max(ev.level);
                    for &e in &by_link[by_link_off[ev.link]..by_link_off[ev.link + 1]] {
                        if !st.frozen[e] {
                            st.freeze(self, e, (self.weight[e] * level).min(self.cap[e]));
                        }
                    }
                }
            }
            for i in 0..st.touched.len() {
                let l = st.touched[i];
                st.is_touched[l] = false;
                st.version[l] += 1;
                if let Some(level) = st.saturation_level(self, l) {
                    heap.push(Reverse(Event {
                        level,
                        link: l,
                        version: st.version[l],
                    }));
                }
            }
            st.touched.clear();
        }
        Ok(st.rate)
    }
}

/// Progressive-filling state: per link the load of frozen entities and the weight and count of
/// unfrozen ones; per entity its rate once frozen.
struct Fill {
    frozen_load: Vec<f64>,
    free_weight: Vec<f64>,
    free_count: Vec<usize>,
    /// Bumped whenever a link's state changes, to discard stale queue entries.
    version: Vec<u32>,
    rate: Vec<f64>,
    frozen: Vec<bool>,
    touched: Vec<usize>,
    is_touched: Vec<bool>,
}

impl Fill {
    fn new(p: &MaxMin) -> Self {
        let n_links = p.n_links();
        let mut free_weight = vec![0.0; n_links];
        let mut free_count = vec![0; n_links];
        for e in 0..p.n_entities() {
            for &l in p.entity_links(e) {
                free_weight[l] += p.weight[e];
                free_count[l] += 1;
            }
        }
        Self {
            frozen_load: vec![0.0; n_links],
            free_weight,
            free_count,
            version: vec![0; n_links],
            rate: vec![0.0; p.n_entities()],
            frozen: vec![false; p.n_entities()],
            touched: Vec::new(),
            is_touched: vec![false; n_links],
        }
    }

    /// The fill level at which link `l` saturates, or `None` once no unfrozen entity crosses it.
    fn saturation_level(&self, p: &MaxMin, l: usize) -> Option<f64> {
        (self.free_count[l] > 0).then(|| {
            // The count, not the (rounded) weight sum, says whether anyone is left.
            let w = self.free_weight[l].max(f64::MIN_POSITIVE);
            (p.capacity[l] - self.frozen_load[l]) / w
        })
    }

    fn freeze(&mut self, p: &MaxMin, e: usize, rate: f64) {
        self.frozen[e] = true;
        self.rate[e] = rate;
        for &l in p.entity_links(e) {
            self.frozen_load[l] += rate;
            self.free_weight[l] -= p.weight[e];
            self.free_count[l] -= 1;
            if !self.is_touched[l] {
                self.is_touched[l] = true;
                self.touched.push(l);
            }
        }
    }
}

/// A queue entry: link `link` saturates at fill `level`, valid while its version is current.
#[derive(Clone, Copy, Debug)]
struct Event {
    level: f64,
    link: usize,
    version: u32,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        self.level
            .total_cmp(&other.level)
            .then(self.link.cmp(&other.link))
            .then(self.version.cmp(&other.version))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

/// The distinct (source, destination) pairs of a flow list. In Shoal a flow is all traffic
/// between a pair of nodes (§3.3.2), so listed flows with the same pair are one flow.
struct Pairs {
    pairs: Vec<(usize, usize)>,
    /// Index into `pairs` of each listed flow.
    of_flow: Vec<usize>,
    /// How many listed flows share each pair.
    multiplicity: Vec<usize>,
}

impl Pairs {
    fn new(
        n_nodes: usize,
        node_rate: f64,
        flows: &[(NodeId, NodeId)],
    ) -> Result<Self, MaxMinError> {
        if n_nodes < 2 {
            return Err(MaxMinError::TooFewNodes { n_nodes });
        }
        if !(node_rate.is_finite() && node_rate >= 0.0) {
            return Err(MaxMinError::BadNodeRate { node_rate });
        }
        let mut index = BTreeMap::new();
        let mut pairs = Vec::new();
        let mut of_flow = Vec::with_capacity(flows.len());
        let mut multiplicity = Vec::new();
        for (flow, &(src, dst)) in flows.iter().enumerate() {
            for node in [src, dst] {
                if node.idx() >= n_nodes {
                    return Err(MaxMinError::NodeOutOfRange {
                        flow,
                        node,
                        n_nodes,
                    });
                }
            }
            if src == dst {
                return Err(MaxMinError::SelfFlow { flow, node: src });
            }
            let p = *index.entry((src, dst)).or_insert_with(|| {
                pairs.push((src.idx(), dst.idx()));
                multiplicity.push(0);
                pairs.len() - 1
            });
            multiplicity[p] += 1;
            of_flow.push(p);
        }
        Ok(Self {
            pairs,
            of_flow,
            multiplicity,
        })
    }

    /// Per listed flow: its pair's rate split evenly among the flows listing that pair.
    fn per_flow(&self, pair_rate: impl Fn(usize) -> f64) -> Vec<f64> {
        self.of_flow
            .iter()
            .map(|&p| pair_rate(p) / self.multiplicity[p] as f64)
            .collect()
    }
}

/// Indices of the virtual links a set of pairs can use, without materialising all N(N − 1):
/// every hop a→b a subflow takes has a source at `a` or a destination at `b`, so a block of N
/// link slots per source node (row) and per destination node (column) covers them all.
struct VirtualLinks {
    row: Vec<Option<usize>>,
    col: Vec<Option<usize>>,
    n_links: usize,
}

impl VirtualLinks {
    fn new(n_nodes: usize, pairs: &[(usize, usize)]) -> Self {
        let mut row = vec![None; n_nodes];
        let mut col = vec![None; n_nodes];
        let mut n_links = 0;
        for &(s, d) in pairs {
            for slot in [&mut row[s], &mut col[d]] {
                if slot.is_none() {
                    *slot = Some(n_links);
                    n_links += n_nodes;
                }
            }
        }
        Self { row, col, n_links }
    }

    /// The link a→b, where `a` is some pair's source or `b` some pair's destination. The row
    /// wins when both apply, so each virtual link has exactly one index.
    fn index(&self, a: usize, b: usize) -> usize {
        match (self.row[a], self.col[b]) {
            (Some(base), _) => base + b,
            (None, Some(base)) => base + a,
            (None, None) => {
                unreachable!("hop {a}->{b} touches no source row or destination column")
            }
        }
    }

    fn problem(&self, capacity: f64) -> MaxMin {
        let mut p = MaxMin::new();
        p.capacity = vec![capacity; self.n_links];
        p
    }
}

/// The per-subflow problem: one equal-weight entity per subflow, pair `p`'s N − 1 subflows being
/// entities `p(N − 1)..(p + 1)(N − 1)` (intermediates in increasing order, the direct one at the
/// destination's place).
fn subflow_problem(
    n_nodes: usize,
    node_rate: f64,
    flows: &[(NodeId, NodeId)],
) -> Result<(MaxMin, Pairs), MaxMinError> {
    let pairs = Pairs::new(n_nodes, node_rate, flows)?;
    let vl = VirtualLinks::new(n_nodes, &pairs.pairs);
    let mut p = vl.problem(node_rate / (n_nodes - 1) as f64);
    let n_sub = pairs.pairs.len() * (n_nodes - 1);
    p.weight.reserve(n_sub);
    p.cap.reserve(n_sub);
    p.offsets.reserve(n_sub);
    p.links.reserve(2 * n_sub);
    for &(s, d) in &pairs.pairs {
        for j in (0..n_nodes).filter(|&j| j != s) {
            if j == d {
                p.add_entity(&[vl.index(s, d)]);
            } else {
                p.add_entity(&[vl.index(s, j), vl.index(j, d)]);
            }
        }
    }
    Ok((p, pairs))
}

/// Per-flow max-min rates in Shoal's virtual-link model with per-subflow fairness.
///
/// Every subflow is an equal-weight entity and a flow's rate is the sum of its subflows'. This
/// is the reference the §7.2 check should use: Shoal's congestion control rate-limits each
/// subflow by the most backlogged of its two virtual links and serves the subflows sharing a
/// link round-robin, one cell each (§3.3.2, Eqs. 2-3), so it converges to per-subflow max-min;
/// the paper argues this yields per-flow fairness because every flow has the same number of
/// uniformly routed subflows, which holds exactly only for symmetric loads (see
/// [`shoal_maxmin_uniform`]).
///
/// Listed flows with the same (source, destination) pair are one Shoal flow: they share its
/// subflows, and each is reported with the pair's rate divided by how many times it is listed.
/// The result is in the unit of `node_rate`, in the order of `flows`.
pub fn shoal_maxmin(
    n_nodes: usize,
    node_rate: f64,
    flows: &[(NodeId, NodeId)],
) -> Result<Vec<f64>, MaxMinError> {
    let (problem, pairs) = subflow_problem(n_nodes, node_rate, flows)?;
    let rates = problem.solve()?;
    let per_pair = n_nodes - 1;
    Ok(pairs.per_flow(|p| rates[p * per_pair..(p + 1) * per_pair].iter().sum()))
}

/// Per-flow max-min rates when each flow must spread its rate x evenly over its N − 1 subflows
/// (x/(N − 1) each): flow-level max-min with uniform spreading, as with oblivious detouring and
/// a per-flow rate limiter.
///
/// Flow i→k then puts x/(N − 1) on each of its 2N − 3 virtual links (i→j for all j ≠ i, j→k for
/// j ∉ {i, k}), so with capacities scaled by N − 1 it is one entity over those links, each of
/// capacity `node_rate`. It departs from [`shoal_maxmin`] whenever a flow's virtual links are
/// unevenly loaded: in a permutation each flow gets R/2 here but RN/(2(N − 1)) per-subflow,
/// because the direct subflow alone on its link may use all of it.
/// Duplicate pairs are handled as in [`shoal_maxmin`].
pub fn shoal_maxmin_uniform(
    n_nodes: usize,
    node_rate: f64,
    flows: &[(NodeId, NodeId)],
) -> Result<Vec<f64>, MaxMinError> {
    let (problem, pairs) = uniform_problem(n_nodes, node_rate, flows)?;
    let rates = problem.solve()?;
    Ok(pairs.per_flow(|p| rates[p]))
}

/// The uniform-spreading problem: one entity per pair, in pair order.
fn uniform_problem(
    n_nodes: usize,
    node_rate: f64,
    flows: &[(NodeId, NodeId)],
) -> Result<(MaxMin, Pairs), MaxMinError> {
    let pairs = Pairs::new(n_nodes, node_rate, flows)?;
    let vl = VirtualLinks::new(n_nodes, &pairs.pairs);
    let mut p = vl.problem(node_rate);
    let mut links = Vec::with_capacity(2 * n_nodes);
    for &(s, d) in &pairs.pairs {
        links.clear();
        links.extend((0..n_nodes).filter(|&j| j != s).map(|j| vl.index(s, j)));
        links.extend(
            (0..n_nodes)
                .filter(|&j| j != s && j != d)
                .map(|j| vl.index(j, d)),
        );
        p.add_entity(&links);
    }
    Ok((p, pairs))
}

#[cfg(test)]
mod tests;
