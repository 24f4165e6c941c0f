//! The graph-processing workload's two ingredients (§6.1, "LiveJournal"): a social graph and its
//! partitioning into one part per SoC (node).
//!
//! The LiveJournal trace (5.2 M users, 48.7 M edges, mean degree 18.7) is not shipped, so
//! [`social_graph`] draws a stand-in: preferential attachment (Barabási-Albert), which gives the
//! power-law degrees of social graphs, where each new vertex belongs to one of `communities`
//! communities and draws each of its `edges_per_vertex` edges inside its community with
//! probability `locality`. Pure preferential attachment has no community structure at all, so no
//! partitioner could cut it much better than at random; real social graphs do, which is what
//! makes METIS worth running, hence the communities.
//!
//! [`partition`] stands in for METIS with a greedy heuristic of our own, in two phases:
//! 1. Coarsening by size-constrained label propagation (as in KaHIP's coarsening, Meyerhenke,
//!    Sanders and Schulz 2014): in a seeded random order, each vertex joins the cluster most
//!    common among its neighbours, if that cluster is smaller than one part; a few rounds.
//! 2. Packing: the clusters, largest first, each into the part with the most room left, the
//!    room being the exact balanced sizes (`floor` or `ceil` of vertices/parts), a cluster that
//!    does not fit spilling into the next roomiest part. This phase ends perfectly balanced.
//! 3. Refinement by balanced label propagation: a few passes over the vertices, each moving to the
//!    part holding strictly more of its neighbours than its own, if the destination stays at most
//!    `ceil((1 + slack) * avg)` and the source at least `floor((1 - slack) * avg)`. Every move
//!    lowers the cut by at least one edge, so the passes terminate and only improve on the packing.

use crate::volumes::VolumeError;
use rand::RngExt;
use rand::seq::SliceRandom;
use shoal_base::rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A simple undirected graph over vertices `0..vertices`, in compressed rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocialGraph {
    offsets: Vec<usize>,
    adjacency: Vec<u32>,
    edges: Vec<(u32, u32)>,
}

impl SocialGraph {
    /// Builds the graph from edges `(a, b)` with `a != b`, each pair at most once.
    fn from_edges(vertices: usize, mut edges: Vec<(u32, u32)>) -> SocialGraph {
        for e in edges.iter_mut() {
            if e.0 > e.1 {
                *e = (e.1, e.0);
            }
        }
        edges.sort_unstable();
        edges.dedup();
        let mut degree = vec![0usize; vertices + 1];
        for &(a, b) in &edges {
            degree[a as usize + 1] += 1;
            degree[b as usize + 1] += 1;
        }
        for v in 0..vertices {
            degree[v + 1] += degree[v];
        }
        let offsets = degree;
        let mut fill = offsets.clone();
        let mut adjacency = vec![0u32; 2 * edges.len()];
        for &(a, b) in &edges {
            adjacency[fill[a as usize]] = b;
            fill[a as usize] += 1;
            adjacency[fill[b as usize]] = a;
            fill[b as usize] += 1;
        }
        SocialGraph {
            offsets,
            adjacency,
            edges,
        }
    }

    /// The number of vertices.
    pub fn vertices(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Every edge once, as `(a, b)` with `a < b`, sorted.
    pub fn edges(&self) -> &[(u32, u32)] {
        &self.edges
    }

    /// The neighbours of `v`.
    ///
    /// # Panics
    /// If `v` is not a vertex.
    pub fn neighbours(&self, v: usize) -> &[u32] {
        &self.adjacency[self.offsets[v]..self.offsets[v + 1]]
    }

    /// The number of edges whose ends lie in different parts of `parts` (`parts[v]` is `v`'s).
    ///
    /// # Panics
    /// If `parts` has fewer entries than there are vertices.
    pub fn cut(&self, parts: &[u32]) -> usize {
        self.edges
            .iter()
            .filter(|&&(a, b)| parts[a as usize] != parts[b as usize])
            .count()
    }
}

/// The shape of a [`social_graph`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SocialParams {
    /// Users. The default, 20,000, keeps a 64-SoC experiment within a second; LiveJournal has
    /// 5.2 M.
    pub vertices: usize,
    /// Edges each new vertex draws. The default 9 gives a mean degree close to 18 (LiveJournal's
    /// 18.7), a little less where a draw hits an existing edge.
    pub edges_per_vertex: usize,
    /// Communities, each vertex in one drawn uniformly. Default 256.
    pub communities: usize,
    /// Probability, in parts per million, that an edge stays in its vertex's community. Default
    /// 80%.
    pub locality_ppm: u32,
}

impl Default for SocialParams {
    fn default() -> SocialParams {
        SocialParams {
            vertices: 20_000,
            edges_per_vertex: 9,
            communities: 256,
            locality_ppm: 800_000,
        }
    }
}

/// How many times a new vertex redraws an edge that would be a self-loop or a repeat.
const REDRAWS: usize = 8;

/// A seeded power-law social graph with communities (see the module documentation).
pub fn social_graph(params: &SocialParams, seed: u64) -> Result<SocialGraph, VolumeError> {
    let p = params;
    if p.vertices < 2 || p.vertices > u32::MAX as usize {
        return Err(VolumeError::Parameter {
            name: "vertices",
            value: p.vertices as u64,
            reason: "a social graph needs between 2 and 2^32 - 1 vertices",
        });
    }
    if p.edges_per_vertex == 0 || p.communities == 0 || p.locality_ppm > 1_000_000 {
        return Err(VolumeError::Parameter {
            name: "edges_per_vertex / communities / locality_ppm",
            value: p.edges_per_vertex.min(p.communities) as u64,
            reason: "needs at least one edge per vertex, one community and a locality <= 100%",
        });
    }
    let mut r = rng::stream(seed, "xfabric.workload.social", 0);
    // Endpoint lists: a vertex appears once per edge end (plus once on arrival, so that a vertex
    // without edges yet can still be drawn), so a uniform draw is degree-proportional.
    let mut global: Vec<u32> = Vec::new();
    let mut local: Vec<Vec<u32>> = vec![Vec::new(); p.communities];
    let mut edges: Vec<(u32, u32)> = Vec::with_capacity(p.vertices * p.edges_per_vertex);
    let mut mine: Vec<u32> = Vec::with_capacity(p.edges_per_vertex);
    let mut community: Vec<u32> = Vec::with_capacity(p.vertices);
    let locality = p.locality_ppm as f64 / 1e6;
    for v in 0..p.vertices as u32 {
        let c = r.random_range(0..p.communities);
        community.push(c as u32);
        mine.clear();
        if !global.is_empty() {
            for _ in 0..p.edges_per_vertex {
                for _ in 0..REDRAWS {
                    let pool = if !local[c].is_empty() && r.random_bool(locality) {
                        &local[c]
                    } else {
                        &global
                    };
                    let t = pool[r.random_range(0..pool.len())];
                    if !mine.contains(&t) {
                        mine.push(t);
                        break;
                    }
                }
            }
        }
        for &t in &mine {
            edges.push((t, v));
            global.push(t);
            global.push(v);
            local[community[t as usize] as usize].push(t);
            local[c].push(v);
        }
        global.push(v);
        local[c].push(v);
    }
    Ok(SocialGraph::from_edges(p.vertices, edges))
}

/// Refinement passes of [`partition`].
const REFINE_PASSES: usize = 8;

/// Label-propagation rounds of [`partition`]'s coarsening.
const COARSEN_ROUNDS: usize = 10;

/// Cuts `graph` into `parts` parts of balanced size with few edges between them (see the module
/// documentation): returns the part of every vertex. Part sizes stay within
/// `floor((1 - slack) * avg) ..= ceil((1 + slack) * avg)`, `avg` = vertices / parts and `slack`
/// = `slack_ppm` / 10^6.
pub fn partition(
    graph: &SocialGraph,
    parts: usize,
    slack_ppm: u32,
    seed: u64,
) -> Result<Vec<u32>, VolumeError> {
    let n = graph.vertices();
    if parts == 0 || parts > n || parts > u32::MAX as usize {
        return Err(VolumeError::Parameter {
            name: "parts",
            value: parts as u64,
            reason: "between 1 part and one part per vertex",
        });
    }
    if slack_ppm > 1_000_000 {
        return Err(VolumeError::Parameter {
            name: "slack_ppm",
            value: slack_ppm as u64,
            reason: "a slack above 100%",
        });
    }
    let (lo, hi) = size_bounds(n, parts, slack_ppm);

    // Phase 1: size-constrained label propagation coarsens the graph into clusters of at most
    // one part's size (vertices in a seeded random order, each taking the label most common among
    // its neighbours if that cluster has room; ties keep the current label, else the lowest).
    let cap = n.div_ceil(parts);
    let mut label: Vec<u32> = (0..n as u32).collect();
    let mut members = vec![1usize; n];
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rng::stream(seed, "xfabric.workload.partition", 0));
    let mut count = vec![0usize; n];
    let mut touched: Vec<usize> = Vec::new();
    for _ in 0..COARSEN_ROUNDS {
        let mut moved = false;
        for &v in &order {
            let own = label[v] as usize;
            for &u in graph.neighbours(v) {
                let l = label[u as usize] as usize;
                if count[l] == 0 {
                    touched.push(l);
                }
                count[l] += 1;
            }
            let (mut best, mut best_count) = (own, count[own]);
            for &l in &touched {
                if l != own
                    && members[l] < cap
                    && (count[l] > best_count
                        || (count[l] == best_count && best != own && l < best))
                {
                    (best, best_count) = (l, count[l]);
                }
            }
            for &l in &touched {
                count[l] = 0;
            }
            touched.clear();
            if best != own {
                label[v] = best as u32;
                members[own] -= 1;
                members[best] += 1;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }

    // Packing: clusters, largest first, each into the part with the most room left (exact
    // balanced capacities); a cluster that does not fit spills into the next roomiest part.
    let capacity: Vec<usize> = (0..parts)
        .map(|i| n / parts + usize::from(i < n % parts))
        .collect();
    let mut by_cluster: Vec<(usize, usize)> = (0..n).map(|v| (label[v] as usize, v)).collect();
    by_cluster.sort_unstable_by_key(|&(l, v)| (Reverse(members[l]), l, v));
    let mut rooms: BinaryHeap<(usize, Reverse<usize>)> =
        (0..parts).map(|i| (capacity[i], Reverse(i))).collect();
    let mut part = vec![0u32; n];
    let mut size = vec![0usize; parts];
    let mut current: Option<(usize, usize)> = None; // (cluster, part)
    for &(l, v) in &by_cluster {
        let q = match current {
            Some((cl, q)) if cl == l && size[q] < capacity[q] => q,
            previous => {
                if let Some((_, q)) = previous
                    && size[q] < capacity[q]
                {
                    rooms.push((capacity[q] - size[q], Reverse(q)));
                }
                // The heap holds every part with room left, and the capacities add up to the
                // vertices, so it is never empty here.
                let q = rooms.pop().map_or(0, |(_, Reverse(q))| q);
                current = Some((l, q));
                q
            }
        };
        part[v] = q as u32;
        size[q] += 1;
    }

    // Phase 2: balanced label propagation.
    for _ in 0..REFINE_PASSES {
        let mut moved = false;
        for v in 0..n {
            let own = part[v] as usize;
            if size[own] <= lo {
                continue;
            }
            for &u in graph.neighbours(v) {
                let pu = part[u as usize] as usize;
                if count[pu] == 0 {
                    touched.push(pu);
                }
                count[pu] += 1;
            }
            // Strictly more neighbours than at home; ties between candidates to the lower part.
            let (mut best, mut best_count) = (own, count[own]);
            for &q in &touched {
                if q != own
                    && size[q] < hi
                    && (count[q] > best_count
                        || (count[q] == best_count && best != own && q < best))
                {
                    (best, best_count) = (q, count[q]);
                }
            }
            for &q in &touched {
                count[q] = 0;
            }
            touched.clear();
            if best != own {
                part[v] = best as u32;
                size[own] -= 1;
                size[best] += 1;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    Ok(part)
}

/// The smallest and largest part sizes [`partition`] allows.
pub fn size_bounds(vertices: usize, parts: usize, slack_ppm: u32) -> (usize, usize) {
    let n = vertices as u128;
    let k = parts.max(1) as u128;
    let s = slack_ppm.min(1_000_000) as u128;
    let lo = (n * (1_000_000 - s)) / (k * 1_000_000);
    let hi = (n * (1_000_000 + s)).div_ceil(k * 1_000_000);
    (lo as usize, hi as usize)
}

/// A uniformly random assignment of vertices to parts, the baseline a partitioner must beat.
pub fn random_partition(vertices: usize, parts: usize, seed: u64) -> Vec<u32> {
    let mut r = rng::stream(seed, "xfabric.workload.random_partition", 0);
    (0..vertices)
        .map(|_| r.random_range(0..parts.max(1)) as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> SocialParams {
        SocialParams {
            vertices: 6_000,
            communities: 96,
            ..SocialParams::default()
        }
    }

    #[test]
    fn the_graph_is_simple_power_law_and_repeatable() {
        let g = social_graph(&small(), 1).unwrap();
        assert_eq!(g.vertices(), 6_000);
        let mean = 2.0 * g.edges().len() as f64 / 6_000.0;
        assert!((16.0..=18.0).contains(&mean), "{mean}");
        for &(a, b) in g.edges() {
            assert!(a < b);
        }
        assert!(g.edges().windows(2).all(|w| w[0] < w[1]));
        // Heavy tail: the biggest hub has many times the mean degree.
        let max = (0..6_000).map(|v| g.neighbours(v).len()).max().unwrap();
        assert!(max as f64 > 8.0 * mean, "{max}");
        assert_eq!(g, social_graph(&small(), 1).unwrap());
    }

    #[test]
    fn partitions_are_balanced_and_cut_far_less_than_random() {
        let g = social_graph(&small(), 2).unwrap();
        for (parts, slack) in [(16, 30_000), (64, 30_000), (7, 0)] {
            let p = partition(&g, parts, slack, 4).unwrap();
            let (lo, hi) = size_bounds(g.vertices(), parts, slack);
            let mut size = vec![0usize; parts];
            for &q in &p {
                size[q as usize] += 1;
            }
            assert!(
                size.iter().all(|&s| (lo..=hi).contains(&s)),
                "{parts}: {size:?} not in {lo}..={hi}"
            );
            let cut = g.cut(&p);
            let random = g.cut(&random_partition(g.vertices(), parts, 3));
            assert!(
                (cut as f64) < 0.5 * random as f64,
                "{parts}: cut {cut} vs random {random}"
            );
        }
        assert_eq!(size_bounds(100, 4, 30_000), (24, 26));
        assert!(partition(&g, 0, 0, 0).is_err());
    }
}
