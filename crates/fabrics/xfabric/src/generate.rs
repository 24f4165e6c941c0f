//! Topology generation, the paper's Algorithm 1 (§4): a union of maximum-weight spanning trees
//! over SoC pairs, built so that every circuit also gets a crosspoint that can carry it. Heavy
//! pairs are joined first, the first tree makes the rack connected, and the passes go on until no
//! two SoCs with a free port on the same crosspoint are left, so every usable port is used.
//!
//! Each pass is Kruskal's algorithm (petgraph's `UnionFind`) over the pairs in the order below,
//! joining two SoCs whenever they are in different partitions and share a crosspoint with both
//! ports free. The crosspoint is the one that makes the least demand unsatisfiable: placing
//! {a, b} on crosspoint c takes a's and b's ports on c, so it loses the demand between a or b and
//! every other SoC still free on c; the lowest such loss wins (ties: the lowest crosspoint).
//!
//! Choices where the paper leaves room, made here:
//! - Pair order. The paper sorts pairs by demand and reinserts a pair, once joined, "after the last
//!   pair with unsatisfied demand", so that secondary circuits come once every pair with demand
//!   is joined. We read "unsatisfied" as "not yet joined by any circuit". A pass visits (1) pairs
//!   with demand and no circuit, in decreasing demand, (2) pairs that already have a circuit, in
//!   decreasing demand, so secondary (parallel) circuits go to the heaviest pairs first, then
//!   (3) pairs with no demand and no circuit.
//! - A pair with demand can also wait because the current pass's tree already holds both SoCs
//!   (a cycle), and taken literally the pass would then move on to (2) and (3) and could spend its
//!   ports before the next pass comes back to it (with clusters of 4 SoCs, 2 pairs in 96 lost
//!   their circuit that way). So, after the first pass, while some pair with demand can still get
//!   its first circuit, a pass visits (1) only: a maximum-weight spanning forest of the unjoined
//!   demand. The first pass visits everything, so the rack is connected first.
//! - Pairs of equal demand are ordered by a random permutation drawn from the seed: zero-demand
//!   pairs only matter for connectivity, and a random order joins them like a random graph
//!   instead of the star or chain an index order gives.
//! - The ranking counts all demand between {a, b} and the SoCs free on c, whether or not that
//!   demand already has a circuit: a second circuit there is still worth keeping possible.
//! - The static cross-circuits of an odd rack are links of the first spanning tree (they are
//!   united before the first pass), and their ports are never free.
//!
//! Connectivity: for d ≥ 3 the first pass always spans the rack. A component of the first pass is
//! a tree of k SoCs, which holds only 2(k − 1) ports, so it can use up a crosspoint on all k of its
//! SoCs for at most one crosspoint; two components can therefore never be cut off from each other
//! on every crosspoint. With d ≤ 2 the greedy can strand components, and generation reports it.
//!
//! Cost: the pairs are sorted once; the per-crosspoint loss of every SoC is kept up to date as
//! ports are taken (n steps per port), so ranking a crosspoint takes O(1), and each pass drops the
//! pairs that can no longer be joined.

use crate::demand::DemandMatrix;
use crate::error::Error;
use crate::graph::{SocGraph, node};
use crate::rack::{CrossCircuit, Crosspoint, Rack};
use petgraph::unionfind::UnionFind;
use rand::seq::SliceRandom;
use shoal_base::{NodeId, rng};

/// One circuit: SoCs `a < b` joined through their ports on `crosspoint`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Circuit {
    pub crosspoint: Crosspoint,
    pub a: NodeId,
    pub b: NodeId,
}

/// The output of Algorithm 1: the circuits of every internal crosspoint, the rack's static
/// cross-circuits, and the topology they make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitPlan {
    crosspoints: usize,
    circuits: Vec<Circuit>,
    starts: Vec<usize>,
    cross: Vec<CrossCircuit>,
    peer: Vec<Option<NodeId>>,
    graph: SocGraph,
}

impl CircuitPlan {
    /// The number of internal crosspoints (d).
    pub fn crosspoints(&self) -> usize {
        self.crosspoints
    }

    /// Every circuit, sorted by crosspoint, then SoCs.
    pub fn circuits(&self) -> &[Circuit] {
        &self.circuits
    }

    /// The circuits crosspoint `c` must establish.
    ///
    /// # Panics
    /// If the rack has no crosspoint `c`.
    pub fn circuits_on(&self, c: Crosspoint) -> &[Circuit] {
        &self.circuits[self.starts[c.idx()]..self.starts[c.idx() + 1]]
    }

    /// The rack's static cross-circuits, which are links of the topology too.
    pub fn cross_circuits(&self) -> &[CrossCircuit] {
        &self.cross
    }

    /// The SoC at the other end of `soc`'s port on crosspoint `c`, by circuit or cross-circuit, or
    /// `None` if the port is idle.
    ///
    /// # Panics
    /// If `soc` or `c` is not in the rack.
    pub fn peer(&self, soc: NodeId, c: Crosspoint) -> Option<NodeId> {
        assert!(c.idx() < self.crosspoints, "no crosspoint {c}");
        self.peer[soc.idx() * self.crosspoints + c.idx()]
    }

    /// Internal ports left without a circuit (only where the rack's geometry forces it).
    pub fn idle_ports(&self) -> usize {
        self.peer.iter().filter(|p| p.is_none()).count()
    }

    /// The resulting topology.
    pub fn graph(&self) -> &SocGraph {
        &self.graph
    }
}

/// Runs Algorithm 1 for `rack` on the demand `dm_all` (normally [`crate::UplinkPlan::dm_all`]).
/// `seed` orders pairs of equal demand; the result is a pure function of the three inputs.
pub fn generate_topology(
    rack: &Rack,
    dm_all: &DemandMatrix,
    seed: u64,
) -> Result<CircuitPlan, Error> {
    let n = rack.socs();
    let d = rack.ports_per_soc();
    if dm_all.socs() != n {
        return Err(Error::MatrixSize {
            expected: n,
            found: dm_all.socs(),
        });
    }
    let mut state = State::new(rack, dm_all.pair_matrix());
    let (mut heavy, mut light) = ordered_pairs(&state.demand, n, seed);

    let mut first = true;
    loop {
        // A pair that cannot be joined now never can: ports are only ever taken.
        let free = &state.free;
        let joinable = |p: &u32| {
            let (a, b) = unpack(*p);
            free[a] & free[b] != 0
        };
        heavy.retain(joinable);
        light.retain(joinable);
        if heavy.is_empty() && light.is_empty() {
            break;
        }
        let mut parts = UnionFind::<u32>::new(n);
        let mut count = n;
        if first {
            for c in rack.cross_circuits() {
                if parts.union(c.a.0 as u32, c.b.0 as u32) {
                    count -= 1;
                }
            }
        }
        // After the first pass, a pair with demand still waiting for its first circuit (the
        // retain above kept only joinable pairs) holds back every secondary circuit.
        let waiting = !first && heavy.iter().any(|&p| !state.joined[flat(p, n)]);
        let segments: &[(&[u32], bool)] = if waiting {
            &[(&heavy, false)]
        } else {
            &[
                (&heavy, false),
                (&heavy, true),
                (&light, true),
                (&light, false),
            ]
        };
        first = false;
        'pass: for &(pairs, joined_before) in segments {
            for &p in pairs {
                let (a, b) = unpack(p);
                if count == 1 {
                    break 'pass;
                }
                if state.joined[flat(p, n)] != joined_before || state.free[a] & state.free[b] == 0 {
                    continue;
                }
                if parts.union(a as u32, b as u32) {
                    state.join(a, b);
                    count -= 1;
                }
            }
        }
    }

    let mut circuits = state.circuits;
    circuits.sort_unstable();
    let mut starts = vec![0usize; d + 1];
    for c in &circuits {
        starts[c.crosspoint.idx() + 1] += 1;
    }
    for c in 0..d {
        starts[c + 1] += starts[c];
    }
    let mut peer = vec![None; n * d];
    for c in &circuits {
        peer[c.a.idx() * d + c.crosspoint.idx()] = Some(c.b);
        peer[c.b.idx() * d + c.crosspoint.idx()] = Some(c.a);
    }
    for x in rack.cross_circuits() {
        peer[x.a.idx() * d + x.a_crosspoint.idx()] = Some(x.b);
        peer[x.b.idx() * d + x.b_crosspoint.idx()] = Some(x.a);
    }
    let graph = SocGraph::from_links(
        n,
        circuits
            .iter()
            .map(|c| (c.a, c.b))
            .chain(rack.cross_circuits().iter().map(|x| (x.a, x.b))),
    )?;
    let components = graph.components();
    if components != 1 {
        return Err(Error::Disconnected { components });
    }
    Ok(CircuitPlan {
        crosspoints: d,
        circuits,
        starts,
        cross: rack.cross_circuits().to_vec(),
        peer,
        graph,
    })
}

/// The mutable state of the algorithm, all in flat arrays indexed by SoC and crosspoint.
struct State {
    n: usize,
    /// Pair demand `D{a,b}`, symmetric, `[a * n + b]`.
    demand: Vec<u64>,
    /// Per SoC, a bit per crosspoint on which its port is still free.
    free: Vec<u64>,
    /// `[c * n + s]`: the demand between `s` and all SoCs whose port on `c` is still free, i.e.
    /// what `s` could no longer reach directly through `c` once its own port there is taken.
    lost: Vec<u128>,
    /// `[a * n + b]` for `a < b`: whether the pair has a circuit yet.
    joined: Vec<bool>,
    circuits: Vec<Circuit>,
}

impl State {
    fn new(rack: &Rack, demand: Vec<u64>) -> State {
        let n = rack.socs();
        let d = rack.ports_per_soc();
        let row: Vec<u128> = demand
            .chunks_exact(n)
            .map(|r| r.iter().map(|&x| x as u128).sum())
            .collect();
        let mut lost = Vec::with_capacity(d * n);
        for _ in 0..d {
            lost.extend_from_slice(&row);
        }
        let mut state = State {
            n,
            demand,
            free: rack.reconfigurable_ports(),
            lost,
            joined: vec![false; n * n],
            circuits: Vec::with_capacity(n * d / 2),
        };
        for x in rack.cross_circuits() {
            state.take(x.a_crosspoint.idx(), x.a.idx());
            state.take(x.b_crosspoint.idx(), x.b.idx());
        }
        state
    }

    /// Joins `a < b` by a circuit on the crosspoint that loses the least demand.
    fn join(&mut self, a: usize, b: usize) {
        let n = self.n;
        let direct = 2 * self.demand[a * n + b] as u128;
        let mut options = self.free[a] & self.free[b];
        let mut best = (u128::MAX, 0usize);
        while options != 0 {
            let c = options.trailing_zeros() as usize;
            options &= options - 1;
            // Both a and b are free on c, so each one's loss counts the other; that demand is the
            // circuit's own and is not lost.
            let loss = self.lost[c * n + a] + self.lost[c * n + b] - direct;
            if loss < best.0 {
                best = (loss, c);
            }
        }
        let c = best.1;
        self.take(c, a);
        self.take(c, b);
        self.joined[a * n + b] = true;
        self.circuits.push(Circuit {
            crosspoint: Crosspoint(c as u8),
            a: node(a),
            b: node(b),
        });
    }

    /// Takes `x`'s port on crosspoint `c`: no SoC can reach `x` through `c` any more.
    fn take(&mut self, c: usize, x: usize) {
        let n = self.n;
        self.free[x] &= !(1u64 << c);
        let row = &self.demand[x * n..(x + 1) * n];
        if row.iter().all(|&v| v == 0) {
            return;
        }
        for (l, &v) in self.lost[c * n..(c + 1) * n].iter_mut().zip(row) {
            *l -= v as u128;
        }
    }
}

/// The pairs `a < b`, packed as `a << 16 | b`: those with demand in decreasing demand, and those
/// without; equal demands in an order drawn from `seed`.
fn ordered_pairs(demand: &[u64], n: usize, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let mut heavy: Vec<(u64, u64, u32)> = Vec::new();
    let mut light: Vec<u32> = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let v = demand[a * n + b];
            let p = pack(a, b);
            if v > 0 {
                heavy.push((v, tie_break(seed, p), p));
            } else {
                light.push(p);
            }
        }
    }
    heavy.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
    light.shuffle(&mut rng::stream(seed, "xfabric.generate.light_pairs", 0));
    (heavy.into_iter().map(|h| h.2).collect(), light)
}

/// A key that orders pairs of equal demand. SplitMix64's finaliser is a bijection, so distinct
/// pairs get distinct keys and the unstable sort is deterministic.
fn tie_break(seed: u64, pair: u32) -> u64 {
    let mut z = (seed ^ pair as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn pack(a: usize, b: usize) -> u32 {
    ((a as u32) << 16) | b as u32
}

/// The index of packed pair `p` in an n×n matrix.
fn flat(p: u32, n: usize) -> usize {
    let (a, b) = unpack(p);
    a * n + b
}

fn unpack(p: u32) -> (usize, usize) {
    ((p >> 16) as usize, (p & 0xFFFF) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rack::RackSpec;
    use proptest::prelude::*;

    fn rack(socs: usize, d: usize, seed: u64) -> Rack {
        Rack::new(
            RackSpec {
                socs,
                ports_per_soc: d,
                uplinks: 1,
            },
            seed,
        )
        .unwrap()
    }

    fn matrix(n: usize, pairs: &[(u16, u16, u64)]) -> DemandMatrix {
        let mut m = DemandMatrix::zeros(n).unwrap();
        for &(a, b, v) in pairs {
            m.set(NodeId(a), NodeId(b), v).unwrap();
        }
        m
    }

    fn on(plan: &CircuitPlan, c: u8) -> Vec<(u16, u16)> {
        plan.circuits_on(Crosspoint(c))
            .iter()
            .map(|x| (x.a.0, x.b.0))
            .collect()
    }

    /// Checks every invariant of a plan against its rack, independently of how it was built.
    fn check_plan(rack: &Rack, plan: &CircuitPlan) {
        let n = rack.socs();
        let d = rack.ports_per_soc();
        let mut used = vec![0u32; n * d];
        for c in plan.circuits() {
            assert!(c.a < c.b, "{c:?} is not normalised");
            used[c.a.idx() * d + c.crosspoint.idx()] += 1;
            used[c.b.idx() * d + c.crosspoint.idx()] += 1;
        }
        for x in rack.cross_circuits() {
            used[x.a.idx() * d + x.a_crosspoint.idx()] += 1;
            used[x.b.idx() * d + x.b_crosspoint.idx()] += 1;
        }
        // Every port carries at most one circuit.
        assert!(used.iter().all(|&u| u <= 1), "a port is used twice");
        // Maximality: on no crosspoint are two SoCs left with a free port.
        for c in 0..d {
            let idle = (0..n).filter(|&s| used[s * d + c] == 0).count();
            assert!(idle <= 1, "crosspoint {c} leaves {idle} ports idle");
        }
        assert_eq!(plan.idle_ports(), rack.idle_ports());
        // The peer table, the per-crosspoint lists and the graph agree with the circuits.
        for c in plan.circuits() {
            assert_eq!(plan.peer(c.a, c.crosspoint), Some(c.b));
            assert_eq!(plan.peer(c.b, c.crosspoint), Some(c.a));
            assert!(plan.circuits_on(c.crosspoint).contains(c));
        }
        assert_eq!(
            plan.graph().links().len(),
            plan.circuits().len() + rack.cross_circuits().len()
        );
        for s in 0..n {
            let ports = (0..d).filter(|&c| used[s * d + c] == 1).count();
            assert_eq!(plan.graph().degree(node(s)), ports);
        }
        assert!(plan.graph().is_connected());
    }

    #[test]
    fn the_ranking_keeps_a_crosspoint_free_for_the_next_pair() {
        // D{0,1} = 100, D{2,3} = 90, D{1,2} = 50, D{0,3} = 10, d = 2. (0,1) ties on both
        // crosspoints and takes x0. For (2,3), x0 loses nothing (0 and 1 are gone from it) while
        // x1 would lose D{1,2} + D{0,3} = 60, so it takes x0 too, which leaves x1 free for (1,2)
        // to finish the tree and for (0,3) in the second pass: the ring 0-1-2-3.
        let m = matrix(4, &[(0, 1, 100), (2, 3, 90), (1, 2, 50), (3, 0, 10)]);
        for seed in 0..8 {
            let r = rack(4, 2, 0);
            let plan = generate_topology(&r, &m, seed).unwrap();
            check_plan(&r, &plan);
            assert_eq!(on(&plan, 0), vec![(0, 1), (2, 3)]);
            assert_eq!(on(&plan, 1), vec![(0, 3), (1, 2)]);
        }
    }

    #[test]
    fn secondary_circuits_go_to_the_heaviest_pairs() {
        // D{0,1} = D{2,3} = 100, D{1,2} = 1, d = 3. The first tree is (0,1) and (2,3) on x0,
        // then (1,2) on x1. The second pass gives the two heavy pairs a parallel circuit on x2
        // before the zero-demand (0,3) takes the last ports on x1.
        let m = matrix(4, &[(0, 1, 100), (2, 3, 100), (1, 2, 1)]);
        for seed in 0..8 {
            let r = rack(4, 3, 0);
            let plan = generate_topology(&r, &m, seed).unwrap();
            check_plan(&r, &plan);
            assert_eq!(on(&plan, 0), vec![(0, 1), (2, 3)]);
            assert_eq!(on(&plan, 1), vec![(0, 3), (1, 2)]);
            assert_eq!(on(&plan, 2), vec![(0, 1), (2, 3)]);
            assert_eq!(plan.graph().multiplicity(NodeId(0), NodeId(1)), 2);
        }
    }

    #[test]
    fn two_socs_are_joined_on_every_crosspoint() {
        let r = rack(2, 6, 0);
        let plan = generate_topology(&r, &DemandMatrix::zeros(2).unwrap(), 1).unwrap();
        check_plan(&r, &plan);
        assert_eq!(plan.graph().multiplicity(NodeId(0), NodeId(1)), 6);
    }

    #[test]
    fn the_paper_rack_of_343_socs_uses_every_port() {
        // §6.1's odd rack: the three cross-circuits absorb the odd port of each crosspoint.
        let r = rack(343, 6, 5);
        let mut m = DemandMatrix::zeros(343).unwrap();
        for s in 0..343u16 {
            for (hop, bytes) in [(1 + s % 5, 1000 + s as u64), (20 + s % 7 * 3, 10)] {
                m.set(NodeId(s), NodeId((s + hop) % 343), bytes).unwrap();
            }
        }
        let plan = generate_topology(&r, &m, 5).unwrap();
        check_plan(&r, &plan);
        assert_eq!(plan.idle_ports(), 0);
        assert_eq!(plan.circuits().len(), (343 * 6 - 6) / 2);
    }

    #[test]
    fn one_or_two_ports_may_not_connect_the_rack() {
        // With d = 1 every SoC has one port: the topology is a matching.
        let r = rack(6, 1, 0);
        assert_eq!(
            generate_topology(&r, &DemandMatrix::zeros(6).unwrap(), 0),
            Err(Error::Disconnected { components: 3 })
        );
    }

    #[test]
    fn a_matrix_of_the_wrong_size_is_rejected() {
        assert_eq!(
            generate_topology(&rack(6, 3, 0), &DemandMatrix::zeros(5).unwrap(), 0),
            Err(Error::MatrixSize {
                expected: 6,
                found: 5
            })
        );
    }

    /// A sparse random demand: each SoC sends to a few others.
    fn sparse_demand() -> impl Strategy<Value = (usize, Vec<(u16, u16, u64)>)> {
        (2usize..28).prop_flat_map(|n| {
            let pair = (0..n as u16, 0..n as u16, 1u64..1_000_000);
            (Just(n), prop::collection::vec(pair, 0..3 * n))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn plans_are_valid_maximal_and_connected(
            (n, pairs) in sparse_demand(), d in 3usize..8, seed in any::<u64>(),
        ) {
            let r = rack(n, d, seed);
            let pairs: Vec<_> = pairs.into_iter().filter(|p| p.0 != p.1).collect();
            let m = matrix(n, &pairs);
            let plan = generate_topology(&r, &m, seed).unwrap();
            check_plan(&r, &plan);
            prop_assert_eq!(&plan, &generate_topology(&r, &m, seed).unwrap());
        }

        #[test]
        fn small_port_counts_are_valid_or_reported(
            (n, pairs) in sparse_demand(), d in 1usize..3, seed in any::<u64>(),
        ) {
            let r = rack(n, d, seed);
            let pairs: Vec<_> = pairs.into_iter().filter(|p| p.0 != p.1).collect();
            match generate_topology(&r, &matrix(n, &pairs), seed) {
                Ok(plan) => check_plan(&r, &plan),
                Err(e) => {
                    let stranded = matches!(e, Error::Disconnected { .. });
                    prop_assert!(stranded, "unexpected error: {e}");
                }
            }
        }

        /// In a rack of even size a heaviest pair always gets a direct circuit: the first pair of
        /// the first pass finds every port free and nothing in its way.
        #[test]
        fn a_heaviest_pair_is_always_direct(
            (n, pairs) in sparse_demand(), d in 3usize..8, seed in any::<u64>(),
        ) {
            prop_assume!(n % 2 == 0);
            let pairs: Vec<_> = pairs.into_iter().filter(|p| p.0 != p.1).collect();
            let m = matrix(n, &pairs);
            let plan = generate_topology(&rack(n, d, seed), &m, seed).unwrap();
            let pd = m.pair_matrix();
            let max = pd.iter().copied().max().unwrap_or(0);
            prop_assume!(max > 0);
            let direct = (0..n * n)
                .filter(|&i| pd[i] == max)
                .any(|i| plan.graph().multiplicity(node(i / n), node(i % n)) >= 1);
            prop_assert!(direct);
        }
    }
}
