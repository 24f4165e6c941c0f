//! The fractional simple b-matching of a demand graph, solved exactly in integers, with the dual
//! that bounds every integer b-matching: OSA's b-matching ([`crate::osa`]) uses the bound to
//! certify an answer and the dual's slacks to discard the edges no optimum can use.
//!
//! The linear program `max Σ w(e)·x(e)` with `Σ_{e ∋ v} x(e) ≤ b` and `0 ≤ x ≤ 1` is solved on the
//! bipartite double cover: each SoC `v` has a left copy `Lv` and a right copy `Rv`, each edge
//! `{u, v}` the arcs `Lu → Rv` and `Lv → Ru` of capacity 1 and profit `w`, and every copy takes at
//! most `b` units. A cover flow `f` gives `x(e) = (f(Lu, Rv) + f(Lv, Ru)) / 2` of half its profit,
//! and an `x` gives `f = x` on both arcs of twice its weight, so the program's optimum is half the
//! cover's. The cover's problem is a maximum-profit flow, solved by successive shortest paths
//! (Dijkstra on reduced costs) with an arc source → sink of profit 0 that takes the units no
//! profitable path can. Everything is integer, so nothing is lost to rounding.
//!
//! The dual of the program is `min b·Σ y(v) + Σ z(e)` over `y, z ≥ 0` with `y(u) + y(v) + z(e) ≥
//! w(e)`; any feasible dual bounds every b-matching `M`: `w(M) ≤ b·Σ y + Σ z − Σ_{e ∈ M} s(e)`,
//! where `s(e) = y(u) + y(v) + z(e) − w(e) ≥ 0` is the edge's slack. It is built from the flow's
//! node potentials `π` (with `λ = π(source)`): `α(u) = max(0, π(Lu) − λ)`, `β(v) = max(0, λ −
//! π(Rv))`, `γ(Lu, Rv) = max(0, w − π(Lu) + π(Rv))`, which satisfy `α(u) + β(v) + γ(Lu, Rv) ≥ w`
//! for any `π`; then `2y(v) = α(v) + β(v)` and `2z(e) = γ(Lu, Rv) + γ(Lv, Ru)`. Feasibility holds
//! by construction, so the bound is valid whatever the flow; the flow's optimality makes it tight
//! (equal to the program's optimum, which the tests check against the primal).

use rand::RngExt;
use shoal_base::rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The fractional optimum of a simple b-matching program and its dual, all doubled so that they
/// are integers.
pub(crate) struct Fractional {
    /// Twice the dual objective: `2·w(M) ≤ twice_bound` for every simple b-matching `M`.
    pub twice_bound: u128,
    /// Per edge, twice its dual slack `2·s(e)`: a b-matching holding `e` weighs at most
    /// `(twice_bound − twice_slack[e]) / 2`.
    pub twice_slack: Vec<u128>,
    /// Per edge, `2·x(e)` in the fractional optimum: 0, 1 or 2.
    pub twice_x: Vec<u8>,
    /// Per SoC, twice its dual `2·y(v)`: an optimum of the program fills every SoC whose dual is
    /// positive.
    pub twice_y: Vec<i128>,
}

/// One arc of the residual network; arcs `2i` and `2i + 1` are each other's reverse.
struct Arc {
    head: usize,
    cap: i64,
    cost: i128,
}

struct Network {
    arcs: Vec<Arc>,
    out: Vec<Vec<usize>>,
}

impl Network {
    fn new(nodes: usize) -> Network {
        Network {
            arcs: Vec::new(),
            out: vec![Vec::new(); nodes],
        }
    }

    fn add(&mut self, tail: usize, head: usize, cap: i64, cost: i128) -> usize {
        let a = self.arcs.len();
        self.arcs.push(Arc { head, cap, cost });
        self.arcs.push(Arc {
            head: tail,
            cap: 0,
            cost: -cost,
        });
        self.out[tail].push(a);
        self.out[head].push(a + 1);
        a
    }

    fn tail(&self, a: usize) -> usize {
        self.arcs[a ^ 1].head
    }

    /// Shortest distances from `from` on reduced costs `cost + π(tail) − π(head)` (all ≥ 0),
    /// stopping once `to` is settled, and the arc into each settled node. Unsettled nodes keep
    /// `None`.
    fn dijkstra(&self, pot: &[i128], from: usize, to: usize) -> (Vec<Option<i128>>, Vec<usize>) {
        let n = self.out.len();
        let mut dist: Vec<Option<i128>> = vec![None; n];
        let mut done = vec![false; n];
        let mut prev = vec![usize::MAX; n];
        let mut heap = BinaryHeap::new();
        dist[from] = Some(0);
        heap.push(Reverse((0i128, from)));
        while let Some(Reverse((d, v))) = heap.pop() {
            if done[v] {
                continue;
            }
            done[v] = true;
            if v == to {
                break;
            }
            for &a in &self.out[v] {
                let arc = &self.arcs[a];
                if arc.cap == 0 || done[arc.head] {
                    continue;
                }
                let reduced = arc.cost + pot[v] - pot[arc.head];
                debug_assert!(
                    reduced >= 0,
                    "potentials must keep reduced costs nonnegative"
                );
                let nd = d + reduced;
                if dist[arc.head].is_none_or(|old| nd < old) {
                    dist[arc.head] = Some(nd);
                    prev[arc.head] = a;
                    heap.push(Reverse((nd, arc.head)));
                }
            }
        }
        for (v, d) in dist.iter_mut().enumerate() {
            if !done[v] {
                *d = None;
            }
        }
        (dist, prev)
    }
}

/// The fractional b-matching of `edges` (`(u, v, w)`, `u < v < n`, each pair once) with `b` ports
/// per SoC.
///
/// Solved by pricing: the program is solved on each SoC's `2b` heaviest edges, then every other
/// edge is priced against the dual (`y(u) + y(v) < w(e)` means the dual does not cover it); the
/// edges it misses join and the program is solved again. When the dual covers every edge it is
/// feasible for the whole program, with `z(e) = 0` on the edges left out, and the restricted
/// optimum, feasible for the whole program too, meets it: both are optimal. On the paper's
/// demands one or two rounds of a few thousand edges replace a flow over up to 58,653.
pub(crate) fn fractional_b_matching(
    edges: &[(usize, usize, u64)],
    n: usize,
    b: usize,
) -> Fractional {
    let order = tie_order(edges.len());
    let mut active = vec![false; edges.len()];
    for e in strongest(
        edges,
        (0..edges.len()).map(|e| (edges[e].2 as i128, order[e])),
        n,
        2 * b,
    ) {
        active[e] = true;
    }
    loop {
        let subset: Vec<usize> = (0..edges.len()).filter(|&e| active[e]).collect();
        let part: Vec<_> = subset.iter().map(|&e| edges[e]).collect();
        let cover = solve_cover(&part, n, b);
        // The edges the dual misses, each with how much; every SoC's 2b worst join.
        let missed: Vec<(usize, i128)> = (edges.iter().enumerate())
            .filter(|&(e, _)| !active[e])
            .map(|(e, &(u, v, w))| (e, 2 * w as i128 - cover.twice_y[u] - cover.twice_y[v]))
            .filter(|&(_, by)| by > 0)
            .collect();
        if !missed.is_empty() {
            let keys = missed.iter().map(|&(e, by)| (by, order[e]));
            let worst = strongest(
                &missed.iter().map(|&(e, _)| edges[e]).collect::<Vec<_>>(),
                keys,
                n,
                2 * b,
            );
            for i in worst {
                active[missed[i].0] = true;
            }
            continue;
        }
        let mut twice_z = vec![0i128; edges.len()];
        let mut twice_x = vec![0u8; edges.len()];
        for (i, &e) in subset.iter().enumerate() {
            twice_z[e] = cover.twice_z[i];
            twice_x[e] = cover.twice_x[i];
        }
        let twice_bound =
            b as i128 * cover.twice_y.iter().sum::<i128>() + twice_z.iter().sum::<i128>();
        let twice_slack = edges
            .iter()
            .zip(&twice_z)
            .map(|(&(u, v, w), &z)| {
                (cover.twice_y[u] + cover.twice_y[v] + z - 2 * w as i128) as u128
            })
            .collect();
        return Fractional {
            twice_bound: twice_bound as u128,
            twice_slack,
            twice_x,
            twice_y: cover.twice_y,
        };
    }
}

/// The edges among the `keep` of highest `key` at either end.
fn strongest(
    edges: &[(usize, usize, u64)],
    key: impl Iterator<Item = (i128, u64)>,
    n: usize,
    keep: usize,
) -> Vec<usize> {
    let key: Vec<_> = key.collect();
    let mut incident: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (e, &(u, v, _)) in edges.iter().enumerate() {
        incident[u].push(e);
        incident[v].push(e);
    }
    let mut kept = vec![false; edges.len()];
    for row in &mut incident {
        row.sort_by_key(|&e| std::cmp::Reverse(key[e]));
        for &e in row.iter().take(keep) {
            kept[e] = true;
        }
    }
    (0..edges.len()).filter(|&e| kept[e]).collect()
}

/// A fixed random rank per edge to break ties between equal keys: ranking ties by index would
/// give every SoC the same few low-numbered partners on a tied demand.
pub(crate) fn tie_order(edges: usize) -> Vec<u64> {
    let mut draws = rng::stream(0, "xfabric.osa.pricing", 0);
    (0..edges).map(|_| draws.random::<u64>()).collect()
}

/// The program's optimum on `edges` and its dual, doubled.
struct Cover {
    twice_y: Vec<i128>,
    twice_z: Vec<i128>,
    twice_x: Vec<u8>,
}

/// The maximum-profit flow on the double cover of `edges`, and the dual built from its potentials
/// (see the module documentation).
fn solve_cover(edges: &[(usize, usize, u64)], n: usize, b: usize) -> Cover {
    let (source, sink) = (0, 2 * n + 1);
    let left = |u: usize| 1 + u;
    let right = |v: usize| 1 + n + v;
    let mut net = Network::new(2 * n + 2);
    for u in 0..n {
        net.add(source, left(u), b as i64, 0);
        net.add(right(u), sink, b as i64, 0);
    }
    let total = (n * b) as i64;
    net.add(source, sink, total, 0);
    // Each edge's two arcs, `Lu → Rv` then `Lv → Ru`.
    let pairs: Vec<[usize; 2]> = edges
        .iter()
        .map(|&(u, v, w)| {
            let w = w as i128;
            [
                net.add(left(u), right(v), 1, -w),
                net.add(left(v), right(u), 1, -w),
            ]
        })
        .collect();

    // Initial potentials that make every arc's reduced cost nonnegative: 0 on the source and the
    // left copies, minus the heaviest profit into each right copy, the least of those on the sink.
    let mut pot = vec![0i128; 2 * n + 2];
    for &(u, v, w) in edges {
        for r in [right(v), right(u)] {
            pot[r] = pot[r].min(-(w as i128));
        }
    }
    pot[sink] = (0..n).map(|v| pot[right(v)]).min().unwrap_or(0);

    let mut sent = 0i64;
    while sent < total {
        let (dist, prev) = net.dijkstra(&pot, source, sink);
        let Some(cap) = dist[sink] else {
            // Unreachable: the bypass arc always has room while units remain.
            break;
        };
        // Settled nodes move by their distance, the others by the sink's: reduced costs stay
        // nonnegative on every residual arc.
        for (p, d) in pot.iter_mut().zip(&dist) {
            *p += d.map_or(cap, |d| d.min(cap));
        }
        let mut room = total - sent;
        let mut v = sink;
        while v != source {
            let a = prev[v];
            room = room.min(net.arcs[a].cap);
            v = net.tail(a);
        }
        let mut v = sink;
        while v != source {
            let a = prev[v];
            net.arcs[a].cap -= room;
            net.arcs[a ^ 1].cap += room;
            v = net.tail(a);
        }
        sent += room;
    }

    let lambda = pot[source];
    let alpha = |u: usize| (pot[left(u)] - lambda).max(0);
    let beta = |v: usize| (lambda - pot[right(v)]).max(0);
    let gamma = |a: usize, w: i128| (w - pot[net.tail(a)] + pot[net.arcs[a].head]).max(0);
    Cover {
        twice_y: (0..n).map(|v| alpha(v) + beta(v)).collect(),
        twice_z: edges
            .iter()
            .zip(&pairs)
            .map(|(&(_, _, w), arcs)| gamma(arcs[0], w as i128) + gamma(arcs[1], w as i128))
            .collect(),
        // An arc carries a unit when its residual capacity is spent.
        twice_x: pairs
            .iter()
            .map(|arcs| arcs.iter().filter(|&&a| net.arcs[a].cap == 0).count() as u8)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The program's optimum by good_lp's microlp (floating point), an independent solver.
    fn by_microlp(edges: &[(usize, usize, u64)], n: usize, b: usize) -> f64 {
        use good_lp::{
            Expression, Solution, SolverModel, constraint, microlp, variable, variables,
        };
        let mut vars = variables!();
        let x: Vec<_> = edges
            .iter()
            .map(|_| vars.add(variable().min(0.0).max(1.0)))
            .collect();
        let objective: Expression = edges.iter().zip(&x).map(|(e, &x)| e.2 as f64 * x).sum();
        let mut degree = vec![Expression::from(0.0); n];
        for (&(u, v, _), &x) in edges.iter().zip(&x) {
            degree[u] += x;
            degree[v] += x;
        }
        let mut model = vars.maximise(objective.clone()).using(microlp);
        for d in degree {
            model = model.with(constraint!(d <= b as f64));
        }
        model.solve().unwrap().eval(&objective)
    }

    fn edges_of(n: usize, pairs: &[(usize, usize, u64)]) -> Vec<(usize, usize, u64)> {
        let mut w = vec![0u64; n * n];
        for &(a, b, x) in pairs {
            if a != b {
                let (a, b) = (a.min(b), a.max(b));
                w[a * n + b] = x;
            }
        }
        (0..n)
            .flat_map(|u| (u + 1..n).map(move |v| (u, v)))
            .filter(|&(u, v)| w[u * n + v] > 0)
            .map(|(u, v)| (u, v, w[u * n + v]))
            .collect()
    }

    #[test]
    fn a_triangle_is_half_integral_with_b_1() {
        // b = 1 on a triangle of equal weights: x = 1/2 on every edge, 1.5 edges' worth.
        let f = fractional_b_matching(&[(0, 1, 4), (1, 2, 4), (0, 2, 4)], 3, 1);
        assert_eq!(f.twice_bound, 12);
        assert_eq!(f.twice_x, vec![1, 1, 1]);
        assert!(f.twice_slack.iter().all(|&s| s == 0));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        #[test]
        fn the_bound_is_the_program_optimum(
            n in 2usize..16,
            pairs in prop::collection::vec((0usize..16, 0usize..16, 1u64..100), 0..60),
            b in 1usize..5,
        ) {
            let pairs: Vec<_> = pairs.into_iter().map(|(a, c, w)| (a % n, c % n, w)).collect();
            let edges = edges_of(n, &pairs);
            let f = fractional_b_matching(&edges, n, b);
            // The primal: a feasible half-integral point whose doubled weight is the bound.
            let mut degree = vec![0usize; n];
            let mut twice_primal = 0u128;
            for (&(u, v, w), &x) in edges.iter().zip(&f.twice_x) {
                degree[u] += x as usize;
                degree[v] += x as usize;
                twice_primal += x as u128 * w as u128;
            }
            prop_assert!(degree.iter().all(|&d| d <= 2 * b));
            prop_assert_eq!(twice_primal, f.twice_bound);
            let lp = by_microlp(&edges, n, b);
            prop_assert!((lp - f.twice_bound as f64 / 2.0).abs() <= 1e-6 * lp.max(1.0));
        }
    }
}
