//! The flow-level simulator of §6.1-6.2: routes a list of flows (`shoal_workload::Flow`, the
//! volumes of `shoal_workload::volumes`) over any [`SocGraph`] and
//! measures the paper's metrics, so XFabric, OSA, the torus and the random graph are compared on
//! the same flows with the same code.
//!
//! Routing follows §6.2: "each flow is split into f subflows of constant size, where f is much
//! larger than the number of paths. [...] To place a subflow, the simulator's transport layer
//! checks if multiple shortest paths exist. If so two are randomly selected, and the simulator
//! places the flow on the least congested one", congestion being "the number of flows registered
//! on the most loaded link in a path". Choices the paper leaves open, made here:
//! - f = [`DEFAULT_SUBFLOWS`] = 64: "much larger than the number of paths", which is at most the
//!   degree, 6 in every topology of §6; a flow's bytes are split as evenly as integers allow.
//! - A path is a sequence of *links*, so parallel circuits between two SoCs are distinct paths;
//!   the two candidates are drawn independently and uniformly among all shortest paths (by
//!   counting paths to the destination and walking next hops in proportion), and may coincide.
//!   Path counts saturate at `u64::MAX`, beyond which the draw is no longer exactly uniform.
//! - Links are full duplex: each direction of a link has its own load.
//! - The load that picks between the two candidates is, by default, the number of subflows on a
//!   path's most loaded link, as the paper says ([`LoadMeasure::Subflows`]; with f subflows per
//!   flow every flow weighs the same, whatever its size); [`LoadMeasure::Bytes`] weighs them by
//!   size instead. Ties go to the first candidate.
//! - Uplink traffic (a flow to or from `shoal_workload::OUTSIDE`) crosses the fabric between its SoC
//!   and the SoC's gateway in the [`UplinkPlan`] (egress SoC → gateway, ingress gateway → SoC),
//!   and loads links like any flow. A gateway's own uplink traffic crosses no link.
//! - Flows of zero bytes are ignored; flows are routed in list order, each from its own random
//!   stream (seed, flow index), so a run is a pure function of (graph, flows, plan, config).
//!
//! Metrics ([`FlowSimReport`]): path length in hops over internal flows (per byte, as the
//! paper's "for each packet", and per flow); path diversity, the number of link-disjoint shortest
//! paths of each internal flow, computed exactly as a maximum flow with one unit of capacity per
//! link in the shortest-path DAG ([`disjoint_shortest_paths`]); bottleneck link load, the share
//! of all subflows (and of all bytes) that cross the most loaded link direction; and the
//! ingress/egress path length between SoCs and their gateways (Fig. 4(b)).

use crate::error::Error;
use crate::forwarding::ForwardingTables;
use crate::graph::SocGraph;
use crate::uplink::UplinkPlan;
use rand::RngExt;
use shoal_base::{NodeId, rng};
use shoal_workload::volumes::MAX_VOLUME_NODES;
use shoal_workload::{Flow, OUTSIDE};
use std::borrow::Borrow;
use std::collections::{BTreeMap, VecDeque};

/// The paper's f: "much larger than the number of paths" (at most 6 disjoint ones at d = 6).
pub const DEFAULT_SUBFLOWS: u32 = 64;

/// What "the most loaded link" counts when a subflow picks between its two candidate paths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadMeasure {
    /// Subflows on the link (the paper's "number of flows registered").
    #[default]
    Subflows,
    /// Bytes on the link.
    Bytes,
}

/// The simulator's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSimConfig {
    /// Subflows per flow, the paper's f.
    pub subflows: u32,
    /// How path congestion is measured.
    pub load: LoadMeasure,
    /// The seed of the path draws.
    pub seed: u64,
}

impl Default for FlowSimConfig {
    fn default() -> FlowSimConfig {
        FlowSimConfig {
            subflows: DEFAULT_SUBFLOWS,
            load: LoadMeasure::Subflows,
            seed: 0,
        }
    }
}

/// Why a simulation could not run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlowSimError {
    #[error("flow {index} goes to or from the outside, but no uplink plan was given")]
    NoUplinkPlan { index: usize },
    #[error("flow {index} has neither end on a SoC")]
    OutsideToOutside { index: usize },
    #[error("f = 0 subflows per flow: every flow needs at least one")]
    NoSubflows,
    #[error(transparent)]
    Model(#[from] Error),
}

/// The metrics of one run. Means are `None` when no flow contributes to them.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSimReport {
    /// Internal flows routed (non-zero bytes).
    pub flows: usize,
    /// Uplink flows routed (non-zero bytes).
    pub uplink_flows: usize,
    /// Subflows that crossed at least one link.
    pub subflows: u64,
    /// Mean shortest-path length of internal traffic in hops, per byte.
    pub mean_hops: Option<f64>,
    /// Mean shortest-path length of internal flows in hops, each flow once.
    pub mean_hops_per_flow: Option<f64>,
    /// Mean number of link-disjoint shortest paths of internal traffic, per byte.
    pub mean_path_diversity: Option<f64>,
    /// Mean number of link-disjoint shortest paths of internal flows, each flow once.
    pub mean_path_diversity_per_flow: Option<f64>,
    /// The fewest link-disjoint shortest paths of any internal flow.
    pub min_path_diversity: Option<u32>,
    /// Subflows on the most loaded link direction over all subflows that crossed a link.
    pub bottleneck_share: Option<f64>,
    /// Bytes on the most loaded link direction (by bytes) over all bytes that crossed a link.
    pub bottleneck_byte_share: Option<f64>,
    /// Mean links per subflow: the total link load over the subflows (uplink ones included).
    pub mean_links_per_subflow: Option<f64>,
    /// Mean hops between a SoC and its gateway, per uplink byte, both directions.
    pub mean_uplink_hops: Option<f64>,
    /// The same for egress bytes only.
    pub mean_egress_hops: Option<f64>,
    /// The same for ingress bytes only.
    pub mean_ingress_hops: Option<f64>,
}

/// A running weighted mean.
#[derive(Clone, Copy, Default)]
struct Mean {
    sum: f64,
    weight: f64,
}

impl Mean {
    fn add(&mut self, value: f64, weight: f64) {
        self.sum += value * weight;
        self.weight += weight;
    }

    fn get(self) -> Option<f64> {
        (self.weight > 0.0).then(|| self.sum / self.weight)
    }
}

/// Routes `flows` over `graph` (see the module documentation). `uplinks` places the gateways of
/// uplink traffic and may be `None` when there is none.
pub fn simulate(
    graph: &SocGraph,
    flows: &[Flow],
    uplinks: Option<&UplinkPlan>,
    config: &FlowSimConfig,
) -> Result<FlowSimReport, FlowSimError> {
    if config.subflows == 0 {
        return Err(FlowSimError::NoSubflows);
    }
    let n = graph.socs();
    if n > MAX_VOLUME_NODES {
        // The last node id names the outside.
        return Err(Error::TooManySocs {
            socs: n,
            max: MAX_VOLUME_NODES,
        }
        .into());
    }
    if let Some(p) = uplinks
        && p.dm_all().socs() != n
    {
        return Err(Error::MatrixSize {
            expected: n,
            found: p.dm_all().socs(),
        }
        .into());
    }
    let in_range = |s: NodeId| -> Result<NodeId, Error> {
        if s.idx() < n {
            Ok(s)
        } else {
            Err(Error::SocOutOfRange {
                soc: s.idx(),
                socs: n,
            })
        }
    };
    let tables = ForwardingTables::new(graph);
    let mut router = Router::new(graph, &tables, config.load);
    let mut diversity_cache: BTreeMap<(NodeId, NodeId), u32> = BTreeMap::new();

    let (mut hops, mut hops_flow) = (Mean::default(), Mean::default());
    let (mut diversity, mut diversity_flow) = (Mean::default(), Mean::default());
    let mut min_diversity: Option<u32> = None;
    let (mut uplink, mut egress, mut ingress) = (Mean::default(), Mean::default(), Mean::default());
    let (mut internal_flows, mut uplink_flows) = (0usize, 0usize);

    for (index, f) in flows.iter().enumerate() {
        if f.bytes == 0 {
            continue;
        }
        let gateway = |s: NodeId| -> Result<NodeId, FlowSimError> {
            let p = uplinks.ok_or(FlowSimError::NoUplinkPlan { index })?;
            Ok(p.gateway_of(in_range(s)?))
        };
        let (src, dst, external) = match (f.src, f.dst) {
            (OUTSIDE, OUTSIDE) => {
                return Err(FlowSimError::OutsideToOutside { index });
            }
            (a, OUTSIDE) => (a, gateway(a)?, Some(true)),
            (OUTSIDE, b) => (gateway(b)?, b, Some(false)),
            (a, b) => {
                if a == b {
                    return Err(Error::SelfDemand { soc: a.idx() }.into());
                }
                (in_range(a)?, in_range(b)?, None)
            }
        };
        let h = tables.hops(src, dst).ok_or(Error::Unreachable {
            src: src.idx(),
            dst: dst.idx(),
        })?;
        let bytes = f.bytes as f64;
        match external {
            None => {
                internal_flows += 1;
                hops.add(h as f64, bytes);
                hops_flow.add(h as f64, 1.0);
                let k = *diversity_cache
                    .entry((src, dst))
                    .or_insert_with(|| disjoint_shortest_paths(graph, &tables, src, dst));
                diversity.add(k as f64, bytes);
                diversity_flow.add(k as f64, 1.0);
                min_diversity = Some(min_diversity.map_or(k, |m| m.min(k)));
            }
            Some(out) => {
                uplink_flows += 1;
                uplink.add(h as f64, bytes);
                if out {
                    egress.add(h as f64, bytes);
                } else {
                    ingress.add(h as f64, bytes);
                }
            }
        }
        if h > 0 {
            let mut r = rng::stream(config.seed, "xfabric.flowsim", index as u64);
            let f_sub = config.subflows as u64;
            for i in 0..f_sub {
                // Even split: the first `bytes % f` subflows carry one byte more.
                let share = f.bytes / f_sub + u64::from(i < f.bytes % f_sub);
                router.place(src, dst, share, &mut r);
            }
        }
    }

    let total_subflows = router.subflows;
    let total_bytes = router.bytes;
    let max_sub = router.load_subflows.iter().copied().max().unwrap_or(0);
    let max_bytes = router.load_bytes.iter().copied().max().unwrap_or(0);
    let link_load: u64 = router.load_subflows.iter().sum();
    Ok(FlowSimReport {
        flows: internal_flows,
        uplink_flows,
        subflows: total_subflows,
        mean_hops: hops.get(),
        mean_hops_per_flow: hops_flow.get(),
        mean_path_diversity: diversity.get(),
        mean_path_diversity_per_flow: diversity_flow.get(),
        min_path_diversity: min_diversity,
        bottleneck_share: (total_subflows > 0).then(|| max_sub as f64 / total_subflows as f64),
        bottleneck_byte_share: (total_bytes > 0).then(|| max_bytes as f64 / total_bytes as f64),
        mean_links_per_subflow: (total_subflows > 0)
            .then(|| link_load as f64 / total_subflows as f64),
        mean_uplink_hops: uplink.get(),
        mean_egress_hops: egress.get(),
        mean_ingress_hops: ingress.get(),
    })
}

/// Draws shortest paths and keeps the load of every link direction. It borrows its graph and
/// tables (a measurement over a given topology) or owns them (a rack that is rewired as it runs).
pub(crate) struct Router<G, T> {
    graph: G,
    tables: T,
    measure: LoadMeasure,
    /// `[dst]`: the number of shortest paths (as link sequences) from every SoC to `dst`.
    counts: Vec<Option<Vec<u64>>>,
    /// Per link direction: link `i` of `graph.links()` is `2 i` from its lower SoC, `2 i + 1` back.
    load_subflows: Vec<u64>,
    load_bytes: Vec<u128>,
    subflows: u64,
    bytes: u128,
    candidates: [Vec<usize>; 2],
}

impl<G: Borrow<SocGraph>, T: Borrow<ForwardingTables>> Router<G, T> {
    pub(crate) fn new(graph: G, tables: T, measure: LoadMeasure) -> Self {
        let (links, socs) = (graph.borrow().links().len(), graph.borrow().socs());
        Router {
            graph,
            tables,
            measure,
            counts: vec![None; socs],
            load_subflows: vec![0; 2 * links],
            load_bytes: vec![0; 2 * links],
            subflows: 0,
            bytes: 0,
            candidates: [Vec::new(), Vec::new()],
        }
    }

    /// The link-direction id of the `copy`-th parallel link from `a` to `b`.
    fn link_id(&self, a: NodeId, b: NodeId, copy: u32) -> usize {
        let key = if a < b { (a, b) } else { (b, a) };
        let first = self.graph.borrow().links().partition_point(|&l| l < key);
        2 * (first + copy as usize) + usize::from(a > b)
    }

    /// Draws one shortest path from `src` to `dst` into `path`, given the path counts to `dst`.
    fn draw(
        &self,
        counts: &[u64],
        src: NodeId,
        dst: NodeId,
        path: &mut Vec<usize>,
        r: &mut rng::StreamRng,
    ) {
        path.clear();
        let mut at = src;
        while at != dst {
            let (graph, tables) = (self.graph.borrow(), self.tables.borrow());
            let next = tables.next_hops(at, dst);
            let weight =
                |u: NodeId| (graph.multiplicity(at, u) as u64).saturating_mul(counts[u.idx()]);
            let total = next
                .iter()
                .fold(0u64, |acc, &u| acc.saturating_add(weight(u)));
            let mut x = r.random_range(0..total);
            let mut chosen = next[next.len() - 1];
            for &u in next {
                let w = weight(u);
                if x < w {
                    chosen = u;
                    break;
                }
                x -= w;
            }
            let copy = r.random_range(0..graph.multiplicity(at, chosen));
            path.push(self.link_id(at, chosen, copy));
            at = chosen;
        }
    }

    fn congestion(&self, path: &[usize]) -> u128 {
        path.iter()
            .map(|&l| match self.measure {
                LoadMeasure::Subflows => self.load_subflows[l] as u128,
                LoadMeasure::Bytes => self.load_bytes[l],
            })
            .max()
            .unwrap_or(0)
    }

    /// Places one subflow of `bytes` on the less congested of two random shortest paths and
    /// returns the path's link directions.
    pub(crate) fn place(
        &mut self,
        src: NodeId,
        dst: NodeId,
        bytes: u64,
        r: &mut rng::StreamRng,
    ) -> &[usize] {
        let mut counts = self.counts[dst.idx()].take();
        let counts_to_dst = counts
            .get_or_insert_with(|| path_counts(self.graph.borrow(), self.tables.borrow(), dst));
        let [mut first, mut second] = std::mem::take(&mut self.candidates);
        self.draw(counts_to_dst, src, dst, &mut first, r);
        self.draw(counts_to_dst, src, dst, &mut second, r);
        self.counts[dst.idx()] = counts;
        self.candidates = [first, second];
        let pick = usize::from(
            self.congestion(&self.candidates[1]) < self.congestion(&self.candidates[0]),
        );
        for &l in &self.candidates[pick] {
            self.load_subflows[l] += 1;
            self.load_bytes[l] += bytes as u128;
        }
        self.subflows += 1;
        self.bytes += bytes as u128;
        &self.candidates[pick]
    }

    /// Takes a subflow of `bytes` placed on `path` off its links (it finished or moves).
    pub(crate) fn unload(&mut self, path: &[usize], bytes: u64) {
        for &l in path {
            self.load_subflows[l] -= 1;
            self.load_bytes[l] -= bytes as u128;
        }
        self.subflows -= 1;
        self.bytes -= bytes as u128;
    }

    pub(crate) fn graph(&self) -> &SocGraph {
        self.graph.borrow()
    }

    pub(crate) fn tables(&self) -> &ForwardingTables {
        self.tables.borrow()
    }
}

/// The number of shortest paths, as link sequences, from every SoC to `dst` (0 where `dst` cannot
/// be reached), saturating at `u64::MAX`.
fn path_counts(graph: &SocGraph, tables: &ForwardingTables, dst: NodeId) -> Vec<u64> {
    let n = graph.socs();
    let mut order: Vec<NodeId> = (0..n)
        .map(crate::graph::node)
        .filter(|&v| tables.hops(v, dst).is_some())
        .collect();
    order.sort_by_key(|&v| tables.hops(v, dst));
    let mut count = vec![0u64; n];
    count[dst.idx()] = 1;
    for &v in order.iter().skip(1) {
        count[v.idx()] = tables.next_hops(v, dst).iter().fold(0u64, |acc, &u| {
            acc.saturating_add((graph.multiplicity(v, u) as u64).saturating_mul(count[u.idx()]))
        });
    }
    count
}

/// The number of link-disjoint shortest paths from `src` to `dst`: the maximum flow from `src` to
/// `dst` in the DAG of shortest-path links, each link (each parallel circuit) of capacity one,
/// found by breadth-first augmenting paths (Edmonds-Karp). 0 if `src == dst` or `dst` cannot be
/// reached.
///
/// # Panics
/// If either SoC is not in the graph, or `tables` are not those of `graph`.
pub fn disjoint_shortest_paths(
    graph: &SocGraph,
    tables: &ForwardingTables,
    src: NodeId,
    dst: NodeId,
) -> u32 {
    if src == dst || tables.hops(src, dst).is_none() {
        return 0;
    }
    // Local ids for the DAG's SoCs: every SoC reached from `src` by next hops towards `dst`.
    const ABSENT: usize = usize::MAX;
    let mut local = vec![ABSENT; graph.socs()];
    let mut socs = vec![src];
    local[src.idx()] = 0;
    let mut i = 0;
    while i < socs.len() {
        let v = socs[i];
        for &u in tables.next_hops(v, dst) {
            if local[u.idx()] == ABSENT {
                local[u.idx()] = socs.len();
                socs.push(u);
            }
        }
        i += 1;
    }
    // Residual graph: edge e and its reverse e ^ 1.
    let m = socs.len();
    let mut head: Vec<usize> = Vec::new();
    let mut cap: Vec<u32> = Vec::new();
    let mut adjacency: Vec<Vec<usize>> = vec![Vec::new(); m];
    for (a, &v) in socs.iter().enumerate() {
        for &u in tables.next_hops(v, dst) {
            let b = local[u.idx()];
            adjacency[a].push(head.len());
            head.push(b);
            cap.push(graph.multiplicity(v, u));
            adjacency[b].push(head.len());
            head.push(a);
            cap.push(0);
        }
    }
    let (s, t) = (0, local[dst.idx()]);
    let mut flow = 0;
    let mut via: Vec<usize> = vec![usize::MAX; m];
    let mut queue = VecDeque::new();
    loop {
        via.fill(usize::MAX);
        queue.clear();
        queue.push_back(s);
        while let Some(a) = queue.pop_front() {
            if a == t {
                break;
            }
            for &e in &adjacency[a] {
                let b = head[e];
                if cap[e] > 0 && b != s && via[b] == usize::MAX {
                    via[b] = e;
                    queue.push_back(b);
                }
            }
        }
        if via[t] == usize::MAX {
            return flow;
        }
        // Every augmenting path carries one unit: capacities are link counts.
        let mut b = t;
        while b != s {
            let e = via[b];
            cap[e] -= 1;
            cap[e ^ 1] += 1;
            b = head[e ^ 1];
        }
        flow += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::{random_regular, torus_3d};
    use crate::demand::{Demand, DemandMatrix};
    use crate::graph::node;
    use crate::rack::{Rack, RackSpec};
    use crate::uplink::place_uplinks;

    fn n(i: usize) -> NodeId {
        node(i)
    }

    fn internal(src: NodeId, dst: NodeId, bytes: u64) -> Flow {
        Flow::volume(src, dst, bytes)
    }

    fn egress(soc: NodeId, bytes: u64) -> Flow {
        internal(soc, OUTSIDE, bytes)
    }

    fn ingress(soc: NodeId, bytes: u64) -> Flow {
        internal(OUTSIDE, soc, bytes)
    }

    fn ring(socs: usize) -> SocGraph {
        SocGraph::from_links(socs, (0..socs).map(|i| (n(i), n((i + 1) % socs)))).unwrap()
    }

    fn complete(socs: usize) -> SocGraph {
        let links = (0..socs).flat_map(|a| (a + 1..socs).map(move |b| (n(a), n(b))));
        SocGraph::from_links(socs, links).unwrap()
    }

    fn run(g: &SocGraph, flows: &[Flow]) -> FlowSimReport {
        simulate(g, flows, None, &FlowSimConfig::default()).unwrap()
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn ring_metrics_by_hand() {
        // On a 6-ring, 0 -> 1 is one hop over one link, 0 -> 3 three hops over two disjoint
        // paths (both ways round). Per byte: (100 * 1 + 300 * 3) / 400 hops and
        // (100 * 1 + 300 * 2) / 400 paths.
        let g = ring(6);
        let r = run(&g, &[internal(n(0), n(1), 100), internal(n(0), n(3), 300)]);
        assert_eq!(r.flows, 2);
        assert!(close(r.mean_hops, 2.5));
        assert!(close(r.mean_hops_per_flow, 2.0));
        assert!(close(r.mean_path_diversity, 1.75));
        assert!(close(r.mean_path_diversity_per_flow, 1.5));
        assert_eq!(r.min_path_diversity, Some(1));
        assert_eq!(r.subflows, 128);
        assert!(close(r.mean_links_per_subflow, 2.0));
        assert_eq!(r.mean_uplink_hops, None);

        // One path each: 0 -> 1 and 0 -> 2 share link 0 -> 1, 3 -> 4 is alone. The bottleneck
        // carries 2 of the 3 flows' subflows, and 300 of the 400 bytes.
        let r = run(
            &g,
            &[
                internal(n(0), n(1), 100),
                internal(n(0), n(2), 200),
                internal(n(3), n(4), 100),
            ],
        );
        assert!(close(r.bottleneck_share, 2.0 / 3.0));
        assert!(close(r.bottleneck_byte_share, 300.0 / 400.0));
        // The reverse direction of a link is a separate load.
        let r = run(&g, &[internal(n(0), n(1), 100), internal(n(1), n(0), 100)]);
        assert!(close(r.bottleneck_share, 0.5));
    }

    #[test]
    fn two_choices_balance_a_flow_over_both_ways_round() {
        // 0 -> 3 on a 6-ring has two disjoint paths; with the less loaded of two random picks
        // the split stays close to even.
        let config = FlowSimConfig {
            subflows: 1000,
            ..FlowSimConfig::default()
        };
        let r = simulate(&ring(6), &[internal(n(0), n(3), 1_000_000)], None, &config).unwrap();
        let share = r.bottleneck_share.unwrap();
        assert!((0.5..0.52).contains(&share), "{share}");
        let bytes = FlowSimConfig {
            load: LoadMeasure::Bytes,
            ..config
        };
        let r = simulate(&ring(6), &[internal(n(0), n(3), 1_000_000)], None, &bytes).unwrap();
        assert!((0.5..0.52).contains(&r.bottleneck_byte_share.unwrap()));
    }

    #[test]
    fn complete_graph_all_to_all_by_hand() {
        // K5, every SoC to every other: one hop, one path each, and every link direction carries
        // exactly one flow of the 20.
        let g = complete(5);
        let flows: Vec<Flow> = (0..5)
            .flat_map(|a| (0..5).filter(move |&b| b != a).map(move |b| (a, b)))
            .map(|(a, b)| internal(n(a), n(b), 64))
            .collect();
        let r = run(&g, &flows);
        assert!(close(r.mean_hops, 1.0));
        assert!(close(r.mean_path_diversity, 1.0));
        assert!(close(r.bottleneck_share, 1.0 / 20.0));
        assert!(close(r.bottleneck_byte_share, 1.0 / 20.0));
    }

    #[test]
    fn torus_2x2x2_by_hand() {
        // A 2x2x2 torus is a cube with every edge doubled (degree 6). Neighbours: 1 hop, 2
        // parallel links. SoC 3 = (1, 1, 0): 2 hops, 2 orders x 2 x 2 links = 8 paths, and the
        // 4 links out of SoC 0 along x and y all lie on them, so 4 disjoint paths. SoC 7, the
        // opposite corner: 3 hops, all 6 links of SoC 0 start a shortest path, so 6.
        let g = torus_3d(2, 2, 2).unwrap();
        let t = ForwardingTables::new(&g);
        assert_eq!(disjoint_shortest_paths(&g, &t, n(0), n(1)), 2);
        assert_eq!(disjoint_shortest_paths(&g, &t, n(0), n(3)), 4);
        assert_eq!(disjoint_shortest_paths(&g, &t, n(0), n(7)), 6);
        assert_eq!(path_counts(&g, &t, n(7))[0], 48);
        assert_eq!(path_counts(&g, &t, n(3))[0], 8);
        let r = run(
            &g,
            &[
                internal(n(0), n(1), 1),
                internal(n(0), n(3), 1),
                internal(n(0), n(7), 1),
            ],
        );
        assert!(close(r.mean_hops, 2.0));
        assert!(close(r.mean_path_diversity, 4.0));
        assert_eq!(r.min_path_diversity, Some(2));
    }

    /// The minimum cut between `s` and `t` in the shortest-path DAG, by trying every set of SoCs
    /// that holds `s` but not `t`.
    fn brute_force_min_cut(g: &SocGraph, t_: &ForwardingTables, s: NodeId, t: NodeId) -> u32 {
        let socs = g.socs();
        let d = t_.hops(s, t).unwrap();
        let on_dag = |a: NodeId, b: NodeId| {
            t_.hops(s, a).zip(t_.hops(b, t)).map(|(x, y)| x + 1 + y) == Some(d)
        };
        let mut best = u32::MAX;
        for mask in 0u32..(1 << socs) {
            let inside = |v: NodeId| mask & (1 << v.idx()) != 0;
            if !inside(s) || inside(t) {
                continue;
            }
            let mut cut = 0;
            for &(a, b) in g.links() {
                for (x, y) in [(a, b), (b, a)] {
                    if inside(x) && !inside(y) && on_dag(x, y) {
                        cut += 1;
                    }
                }
            }
            best = best.min(cut);
        }
        best
    }

    #[test]
    fn path_diversity_equals_the_brute_force_min_cut() {
        for seed in 0..30u64 {
            let mut r = rng::stream(seed, "test.flowsim.mincut", 0);
            let socs = r.random_range(3..9usize);
            let links: Vec<(NodeId, NodeId)> = (0..r.random_range(socs..3 * socs))
                .filter_map(|_| {
                    let (a, b) = (r.random_range(0..socs), r.random_range(0..socs));
                    (a != b).then(|| (n(a), n(b)))
                })
                .collect();
            let g = SocGraph::from_links(socs, links).unwrap();
            let t = ForwardingTables::new(&g);
            for a in 0..socs {
                for b in 0..socs {
                    if a == b || t.hops(n(a), n(b)).is_none() {
                        continue;
                    }
                    assert_eq!(
                        disjoint_shortest_paths(&g, &t, n(a), n(b)),
                        brute_force_min_cut(&g, &t, n(a), n(b)),
                        "seed {seed}, {a} -> {b}"
                    );
                }
            }
        }
        // A torus and a random regular graph, on a few pairs.
        for g in [
            torus_3d(3, 2, 2).unwrap(),
            random_regular(10, 3, 4).unwrap(),
        ] {
            let t = ForwardingTables::new(&g);
            for (a, b) in [(0, 5), (1, 9), (2, 7)] {
                assert_eq!(
                    disjoint_shortest_paths(&g, &t, n(a), n(b)),
                    brute_force_min_cut(&g, &t, n(a), n(b))
                );
            }
        }
    }

    #[test]
    fn uplink_traffic_goes_to_the_gateway() {
        // A 6-ring with one uplink on SoC 0, the heaviest external talker. SoC 3 sends 100 bytes
        // out (3 hops to SoC 0), SoC 1 receives 100 (1 hop) and SoC 0's own 100 cross nothing.
        let rack = Rack::new(
            RackSpec {
                socs: 6,
                ports_per_soc: 2,
                uplinks: 1,
            },
            0,
        )
        .unwrap();
        let mut sent = vec![0; 6];
        sent[0] = 1000;
        let demand = Demand::new(DemandMatrix::zeros(6).unwrap(), sent, vec![0; 6]).unwrap();
        let plan = place_uplinks(&rack, &demand).unwrap();
        assert_eq!(plan.gateways(), &[n(0)]);
        let flows = [egress(n(3), 100), ingress(n(1), 100), egress(n(0), 100)];
        let r = simulate(&ring(6), &flows, Some(&plan), &FlowSimConfig::default()).unwrap();
        assert_eq!((r.flows, r.uplink_flows), (0, 3));
        assert!(close(r.mean_uplink_hops, 4.0 / 3.0));
        assert!(close(r.mean_egress_hops, 1.5));
        assert!(close(r.mean_ingress_hops, 1.0));
        assert_eq!(r.mean_hops, None);
        assert_eq!(r.subflows, 128);
        assert_eq!(
            simulate(&ring(6), &flows, None, &FlowSimConfig::default()),
            Err(FlowSimError::NoUplinkPlan { index: 0 })
        );
    }

    #[test]
    fn bad_inputs_are_rejected_and_runs_repeat() {
        let g = ring(4);
        let c = FlowSimConfig::default();
        assert_eq!(
            simulate(&g, &[internal(n(1), n(1), 5)], None, &c),
            Err(FlowSimError::Model(Error::SelfDemand { soc: 1 }))
        );
        assert_eq!(
            simulate(&g, &[internal(n(1), n(4), 5)], None, &c),
            Err(FlowSimError::Model(Error::SocOutOfRange {
                soc: 4,
                socs: 4
            }))
        );
        let split = SocGraph::from_links(4, [(n(0), n(1)), (n(2), n(3))]).unwrap();
        assert_eq!(
            simulate(&split, &[internal(n(0), n(3), 5)], None, &c),
            Err(FlowSimError::Model(Error::Unreachable { src: 0, dst: 3 }))
        );
        let none = FlowSimConfig { subflows: 0, ..c };
        assert_eq!(
            simulate(&g, &[], None, &none),
            Err(FlowSimError::NoSubflows)
        );
        let g = torus_3d(3, 3, 2).unwrap();
        let flows: Vec<Flow> = (0..18)
            .map(|i| internal(n(i), n((i * 7 + 5) % 18), 1000 + i as u64))
            .filter(|f| f.src != f.dst)
            .collect();
        assert_eq!(run(&g, &flows), run(&g, &flows));
    }
}
