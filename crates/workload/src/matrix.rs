//! Traffic matrices: who sends to whom, one (src, dst) pair per flow. A [`Matrix`] is the plain
//! description; [`Matrix::build`] checks it against the rack and fixes its random structure
//! (a derangement, a shuffled order) into [`Pairs`], which then draws pairs.

use crate::patterns::derangement;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};
use shoal_base::NodeId;
use std::fmt;
use thiserror::Error;

/// Largest rack a [`NodeId`] can address.
const MAX_NODES: usize = u16::MAX as usize + 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Matrix {
    /// Uniform over ordered pairs of distinct nodes (§7.3).
    Uniform,
    /// A random derangement fixed at start; `pairs` of its senders (chosen at random) are
    /// active, and each flow picks one of them uniformly and goes to its partner, so every
    /// receiver has at most one sender (Fig. 9, 12).
    Permutation { pairs: usize },
    /// Every flow goes to `dst`; senders take turns **round-robin** in the order listed, so
    /// after k flows every sender has k/len or one more (the synchronised incast of Fig. 10, 13).
    Incast { senders: Vec<NodeId>, dst: NodeId },
    /// Every ordered pair once per n(n−1) flows, in a fixed shuffled order (see [`Pairs`]).
    AllToAll,
    /// With probability `fraction` the destination is uniform over `hot`, otherwise uniform
    /// over all nodes; the source is then uniform over the other nodes.
    Hotspot { hot: Vec<NodeId>, fraction: f64 },
    /// Uniform over ordered pairs of distinct nodes of `nodes` only, e.g. the live nodes of a
    /// rack where the others failed (§7.3, Fig. 17).
    Among { nodes: Vec<NodeId> },
    /// Pairs in proportion to `rows[src][dst]`: a measured or synthetic demand matrix (XFabric's
    /// production-like traffic, clusters). A source is drawn by its row total, then a
    /// destination by its weight in the row; a closed loop draws only the destination.
    Weighted { rows: Vec<Vec<u64>> },
}

/// A matrix that does not fit the rack.
#[derive(Debug, Error, PartialEq)]
pub enum MatrixError {
    #[error("a rack of {0} nodes: traffic needs between 2 and 65536 nodes")]
    Nodes(usize),
    #[error("a permutation of {pairs} pairs in a rack of {nodes}: need 1..={nodes} pairs")]
    Pairs { pairs: usize, nodes: usize },
    #[error("{what} {node} is outside the rack of {nodes} nodes")]
    OutOfRange {
        what: &'static str,
        node: NodeId,
        nodes: usize,
    },
    #[error("{what} {node} is listed twice")]
    Duplicate { what: &'static str, node: NodeId },
    #[error("incast needs at least one sender")]
    NoSenders,
    #[error("incast destination {0} is also a sender")]
    SenderIsDestination(NodeId),
    #[error("a hotspot needs at least one hot node")]
    NoHotNodes,
    #[error("hotspot fraction {0} must lie within 0..=1")]
    Fraction(f64),
    #[error("traffic among {0} nodes: need at least 2")]
    TooFew(usize),
    #[error("a weight matrix for {nodes} nodes needs {nodes} rows of {nodes}; row {row} has {len}")]
    WeightShape {
        nodes: usize,
        row: usize,
        len: usize,
    },
    #[error("weight of {node} to itself is {weight}: self traffic must be 0")]
    SelfWeight { node: NodeId, weight: u64 },
    #[error("the weight matrix is all zero: no flow could be drawn")]
    NoWeight,
    #[error("the weights of row {row} add up to more than 2^64")]
    WeightOverflow { row: usize },
}

impl Matrix {
    /// Checks the matrix against a rack of `nodes` nodes.
    pub fn validate(&self, nodes: usize) -> Result<(), MatrixError> {
        if !(2..=MAX_NODES).contains(&nodes) {
            return Err(MatrixError::Nodes(nodes));
        }
        match self {
            Matrix::Uniform | Matrix::AllToAll => Ok(()),
            Matrix::Permutation { pairs } if (1..=nodes).contains(pairs) => Ok(()),
            Matrix::Permutation { pairs } => Err(MatrixError::Pairs {
                pairs: *pairs,
                nodes,
            }),
            Matrix::Incast { senders, dst } => {
                if senders.is_empty() {
                    return Err(MatrixError::NoSenders);
                }
                in_rack("incast destination", *dst, nodes)?;
                distinct_in_rack("incast sender", senders, nodes)?;
                if senders.contains(dst) {
                    return Err(MatrixError::SenderIsDestination(*dst));
                }
                Ok(())
            }
            Matrix::Hotspot { hot, fraction } => {
                if hot.is_empty() {
                    return Err(MatrixError::NoHotNodes);
                }
                if !(0.0..=1.0).contains(fraction) {
                    return Err(MatrixError::Fraction(*fraction));
                }
                distinct_in_rack("hot node", hot, nodes)
            }
            Matrix::Among { nodes: among } => {
                if among.len() < 2 {
                    return Err(MatrixError::TooFew(among.len()));
                }
                distinct_in_rack("node", among, nodes)
            }
            Matrix::Weighted { rows } => {
                if rows.len() != nodes {
                    return Err(MatrixError::WeightShape {
                        nodes,
                        row: rows.len(),
                        len: 0,
                    });
                }
                let mut any = false;
                for (r, row) in rows.iter().enumerate() {
                    if row.len() != nodes {
                        return Err(MatrixError::WeightShape {
                            nodes,
                            row: r,
                            len: row.len(),
                        });
                    }
                    if row[r] != 0 {
                        return Err(MatrixError::SelfWeight {
                            node: node(r),
                            weight: row[r],
                        });
                    }
                    let total = row
                        .iter()
                        .try_fold(0u64, |a, &w| a.checked_add(w))
                        .ok_or(MatrixError::WeightOverflow { row: r })?;
                    any |= total > 0;
                }
                if any {
                    Ok(())
                } else {
                    Err(MatrixError::NoWeight)
                }
            }
        }
    }

    /// Validates the matrix and fixes its random structure with draws from `rng`.
    pub fn build(&self, nodes: usize, rng: &mut impl Rng) -> Result<Pairs, MatrixError> {
        self.validate(nodes)?;
        let kind = match self {
            Matrix::Uniform => Kind::Uniform,
            Matrix::Permutation { pairs } => {
                let partner = derangement(nodes, rng);
                let mut senders: Vec<usize> = (0..nodes).collect();
                shuffle(&mut senders, rng);
                senders.truncate(*pairs);
                senders.sort_unstable();
                Kind::Permutation {
                    senders: senders.into_iter().map(node).collect(),
                    partner: partner.into_iter().map(node).collect(),
                }
            }
            Matrix::Incast { senders, dst } => Kind::Incast {
                senders: senders.clone(),
                dst: *dst,
                next: 0,
            },
            Matrix::AllToAll => {
                let mut label: Vec<usize> = (0..nodes).collect();
                shuffle(&mut label, rng);
                let mut position = vec![0; nodes];
                for (q, &v) in label.iter().enumerate() {
                    position[v] = q;
                }
                let mut offsets: Vec<usize> = (1..nodes).collect();
                shuffle(&mut offsets, rng);
                Kind::AllToAll {
                    label,
                    position,
                    offsets,
                    cursor: 0,
                    per_source: vec![0; nodes],
                }
            }
            Matrix::Hotspot { hot, fraction } => {
                let mut hot = hot.clone();
                hot.sort_unstable();
                Kind::Hotspot {
                    hot,
                    fraction: *fraction,
                }
            }
            Matrix::Among { nodes: among } => {
                let mut among = among.clone();
                among.sort_unstable();
                Kind::Among { nodes: among }
            }
            Matrix::Weighted { rows } => {
                let cumulative = |row: &[u64]| -> Vec<u128> {
                    row.iter()
                        .scan(0u128, |a, &w| {
                            *a += u128::from(w);
                            Some(*a)
                        })
                        .collect()
                };
                let totals: Vec<u64> = rows.iter().map(|r| r.iter().sum()).collect();
                Kind::Weighted {
                    rows: rows.iter().map(|r| cumulative(r)).collect(),
                    sources: cumulative(&totals),
                }
            }
        };
        Ok(Pairs { nodes, kind })
    }
}

fn in_rack(what: &'static str, n: NodeId, nodes: usize) -> Result<(), MatrixError> {
    if n.idx() < nodes {
        Ok(())
    } else {
        Err(MatrixError::OutOfRange {
            what,
            node: n,
            nodes,
        })
    }
}

fn distinct_in_rack(what: &'static str, list: &[NodeId], nodes: usize) -> Result<(), MatrixError> {
    let mut seen = vec![false; nodes];
    for &n in list {
        in_rack(what, n, nodes)?;
        if std::mem::replace(&mut seen[n.idx()], true) {
            return Err(MatrixError::Duplicate { what, node: n });
        }
    }
    Ok(())
}

/// Node `i` of a validated rack (at most 65,536 nodes, so `i` fits).
fn node(i: usize) -> NodeId {
    NodeId(i as u16)
}

/// Fisher–Yates written out, so the order depends only on the draws of `random_range`.
pub(crate) fn shuffle<T>(v: &mut [T], rng: &mut impl Rng) {
    for i in (1..v.len()).rev() {
        v.swap(i, rng.random_range(0..=i));
    }
}

/// Uniform over `0..n` without `skip` (n ≥ 2).
fn other_than(skip: usize, n: usize, rng: &mut impl Rng) -> usize {
    let j = rng.random_range(0..n - 1);
    if j >= skip { j + 1 } else { j }
}

/// A matrix bound to a rack, drawing (src, dst) pairs. Open-loop generators call
/// [`Pairs::next`]; closed-loop ones call [`Pairs::dst_for`] with a source from
/// [`Pairs::sources`].
pub struct Pairs {
    nodes: usize,
    kind: Kind,
}

enum Kind {
    Uniform,
    Permutation {
        senders: Vec<NodeId>,
        partner: Vec<NodeId>,
    },
    Incast {
        senders: Vec<NodeId>,
        dst: NodeId,
        next: usize,
    },
    /// Flow j of each cycle is (label[q], label[(q + offsets[r]) mod n]) with q = j mod n and
    /// round r = j div n: each round of n flows is a shifted permutation (every node sends once
    /// and receives once), and the n−1 rounds use every shift once, so a cycle is every ordered
    /// pair once. Labels and shift order are shuffled; memory is O(n), not O(n²).
    AllToAll {
        label: Vec<usize>,
        position: Vec<usize>,
        offsets: Vec<usize>,
        cursor: usize,
        per_source: Vec<usize>,
    },
    Hotspot {
        hot: Vec<NodeId>,
        fraction: f64,
    },
    /// Sorted.
    Among {
        nodes: Vec<NodeId>,
    },
    /// Running sums of each row's weights, and of the row totals; a draw is a binary search.
    Weighted {
        rows: Vec<Vec<u128>>,
        sources: Vec<u128>,
    },
}

/// The index whose cumulative range holds a uniform draw below the last running sum (> 0).
fn pick(cumulative: &[u128], rng: &mut impl Rng) -> usize {
    let total = *cumulative.last().expect("a non-empty row");
    let x = rng.random_range(0..total);
    cumulative.partition_point(|&c| c <= x)
}

impl Pairs {
    /// The next (src, dst) pair; never a self loop.
    pub fn next(&mut self, rng: &mut impl Rng) -> (NodeId, NodeId) {
        let n = self.nodes;
        match &mut self.kind {
            Kind::Uniform => {
                let src = rng.random_range(0..n);
                (node(src), node(other_than(src, n, rng)))
            }
            Kind::Permutation { senders, partner } => {
                let s = senders[rng.random_range(0..senders.len())];
                (s, partner[s.idx()])
            }
            Kind::Incast { senders, dst, next } => {
                let s = senders[*next];
                *next = (*next + 1) % senders.len();
                (s, *dst)
            }
            Kind::AllToAll {
                label,
                offsets,
                cursor,
                ..
            } => {
                let (q, r) = (*cursor % n, *cursor / n);
                *cursor = (*cursor + 1) % (n * (n - 1));
                (node(label[q]), node(label[(q + offsets[r]) % n]))
            }
            Kind::Hotspot { hot, fraction } => {
                let dst = if rng.random_bool(*fraction) {
                    hot[rng.random_range(0..hot.len())].idx()
                } else {
                    rng.random_range(0..n)
                };
                (node(other_than(dst, n, rng)), node(dst))
            }
            Kind::Among { nodes } => {
                let s = rng.random_range(0..nodes.len());
                (nodes[s], nodes[other_than(s, nodes.len(), rng)])
            }
            Kind::Weighted { rows, sources } => {
                let s = pick(sources, rng);
                (node(s), node(pick(&rows[s], rng)))
            }
        }
    }

    /// The nodes that send under this matrix, in id order: the chosen senders of a
    /// permutation or an incast, every node otherwise.
    pub fn sources(&self) -> Vec<NodeId> {
        match &self.kind {
            Kind::Permutation { senders, .. } => senders.clone(),
            Kind::Incast { senders, .. } => {
                let mut s = senders.clone();
                s.sort_unstable();
                s
            }
            Kind::Among { nodes } => nodes.clone(),
            Kind::Weighted { rows, .. } => (0..self.nodes)
                .filter(|&s| rows[s].last().is_some_and(|&t| t > 0))
                .map(node)
                .collect(),
            _ => (0..self.nodes).map(node).collect(),
        }
    }

    /// The destination of a new flow from `src`, the matrix restricted to that source, or
    /// `None` if `src` does not send under this matrix. Uniform: uniform over the other nodes.
    /// Permutation: the partner. Incast: the incast destination. All-to-all: each source
    /// cycles through its n−1 destinations in its own order (its shifts, in the shuffled round
    /// order). Hotspot: with probability `fraction` uniform over the hot nodes other than
    /// `src` (over all other nodes if `src` is the only hot node), otherwise uniform over the
    /// other nodes.
    pub fn dst_for(&mut self, src: NodeId, rng: &mut impl Rng) -> Option<NodeId> {
        let (n, s) = (self.nodes, src.idx());
        if s >= n {
            return None;
        }
        match &mut self.kind {
            Kind::Uniform => Some(node(other_than(s, n, rng))),
            Kind::Permutation { senders, partner } => {
                senders.binary_search(&src).ok().map(|_| partner[s])
            }
            Kind::Incast { senders, dst, .. } => senders.contains(&src).then_some(*dst),
            Kind::AllToAll {
                label,
                position,
                offsets,
                per_source,
                ..
            } => {
                let r = per_source[s];
                per_source[s] = (r + 1) % (n - 1);
                Some(node(label[(position[s] + offsets[r]) % n]))
            }
            Kind::Hotspot { hot, fraction } => {
                let own = hot.binary_search(&src).ok();
                let others = hot.len() - usize::from(own.is_some());
                if others > 0 && rng.random_bool(*fraction) {
                    let j = match own {
                        Some(p) => other_than(p, hot.len(), rng),
                        None => rng.random_range(0..hot.len()),
                    };
                    Some(hot[j])
                } else {
                    Some(node(other_than(s, n, rng)))
                }
            }
            Kind::Among { nodes } => {
                let p = nodes.binary_search(&src).ok()?;
                Some(nodes[other_than(p, nodes.len(), rng)])
            }
            Kind::Weighted { rows, .. } => {
                let row = &rows[s];
                (row.last().is_some_and(|&t| t > 0)).then(|| node(pick(row, rng)))
            }
        }
    }
}

impl fmt::Display for Matrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Matrix::Uniform => write!(f, "uniform pairs"),
            Matrix::Permutation { pairs } => write!(f, "permutation of {pairs} pairs"),
            Matrix::Incast { senders, dst } => {
                write!(f, "incast {} senders to {dst}", senders.len())
            }
            Matrix::AllToAll => write!(f, "all-to-all"),
            Matrix::Among { nodes } => write!(f, "uniform pairs among {} nodes", nodes.len()),
            Matrix::Hotspot { hot, fraction } => write!(
                f,
                "hotspot: {:.1}% of flows to {} hot nodes",
                fraction * 100.0,
                hot.len()
            ),
            Matrix::Weighted { rows } => write!(f, "weighted pairs over {} nodes", rows.len()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::rng::stream;

    /// Counts of each ordered pair over `flows` draws, in an n×n table.
    fn counts(m: &Matrix, n: usize, flows: usize, seed: u64) -> Vec<Vec<u64>> {
        let mut rng = stream(seed, "test", 0);
        let mut pairs = m.build(n, &mut rng).unwrap();
        let mut c = vec![vec![0u64; n]; n];
        for _ in 0..flows {
            let (s, d) = pairs.next(&mut rng);
            assert_ne!(s, d, "self loop");
            c[s.idx()][d.idx()] += 1;
        }
        c
    }

    /// |count − np| within 5 binomial standard deviations.
    fn binomial_ok(count: u64, trials: usize, p: f64) -> bool {
        let mean = trials as f64 * p;
        (count as f64 - mean).abs() <= 5.0 * (mean * (1.0 - p)).sqrt()
    }

    #[test]
    fn weighted_draws_pairs_in_proportion_to_their_weights() {
        let rows = vec![
            vec![0, 3, 1, 0],
            vec![0, 0, 0, 0],
            vec![2, 0, 0, 2],
            vec![0, 0, 0, 0],
        ];
        let total = 8.0;
        let (n, flows) = (4, 80_000);
        let m = Matrix::Weighted { rows: rows.clone() };
        let c = counts(&m, n, flows, 5);
        for s in 0..n {
            for d in 0..n {
                let p = rows[s][d] as f64 / total;
                if p == 0.0 {
                    assert_eq!(c[s][d], 0, "{s}->{d} has no weight");
                } else {
                    assert!(binomial_ok(c[s][d], flows, p), "{s}->{d}: {}", c[s][d]);
                }
            }
        }
        // A closed loop draws within the row; silent rows do not send.
        let mut rng = stream(6, "test", 0);
        let mut pairs = m.build(n, &mut rng).unwrap();
        assert_eq!(pairs.sources(), vec![NodeId(0), NodeId(2)]);
        assert_eq!(pairs.dst_for(NodeId(1), &mut rng), None);
        let to_1 = (0..40_000)
            .filter(|_| pairs.dst_for(NodeId(0), &mut rng) == Some(NodeId(1)))
            .count();
        assert!(binomial_ok(to_1 as u64, 40_000, 0.75), "{to_1}");
    }

    #[test]
    fn weighted_refuses_bad_shapes_self_traffic_and_zero() {
        let m = |rows: Vec<Vec<u64>>| Matrix::Weighted { rows }.validate(2);
        assert!(matches!(
            m(vec![vec![0, 1]]),
            Err(MatrixError::WeightShape { .. })
        ));
        assert!(matches!(
            m(vec![vec![0, 1], vec![1]]),
            Err(MatrixError::WeightShape { row: 1, len: 1, .. })
        ));
        assert!(matches!(
            m(vec![vec![0, 1], vec![0, 4]]),
            Err(MatrixError::SelfWeight { weight: 4, .. })
        ));
        assert_eq!(m(vec![vec![0, 0], vec![0, 0]]), Err(MatrixError::NoWeight));
        assert!(matches!(
            m(vec![vec![0, u64::MAX], vec![u64::MAX, 0]]),
            Ok(())
        ));
    }

    #[test]
    fn uniform_hits_every_ordered_pair_equally() {
        let (n, flows) = (8, 112_000);
        let c = counts(&Matrix::Uniform, n, flows, 1);
        for (s, row) in c.iter().enumerate() {
            for (d, &k) in row.iter().enumerate() {
                if s != d {
                    assert!(binomial_ok(k, flows, 1.0 / 56.0), "{s}->{d}: {k}");
                }
            }
        }
    }

    #[test]
    fn among_stays_within_its_nodes_and_covers_their_pairs_equally() {
        let among = vec![NodeId(1), NodeId(4), NodeId(6)];
        let (n, flows) = (8, 60_000);
        let c = counts(
            &Matrix::Among {
                nodes: among.clone(),
            },
            n,
            flows,
            3,
        );
        for (s, row) in c.iter().enumerate() {
            for (d, &k) in row.iter().enumerate() {
                let inside = among.contains(&NodeId(s as u16)) && among.contains(&NodeId(d as u16));
                if inside && s != d {
                    assert!(binomial_ok(k, flows, 1.0 / 6.0), "{s}->{d}: {k}");
                } else {
                    assert_eq!(k, 0, "{s}->{d} is outside the subset");
                }
            }
        }
        let mut pairs = Matrix::Among { nodes: among }
            .build(n, &mut stream(3, "t", 1))
            .unwrap();
        assert_eq!(pairs.dst_for(NodeId(0), &mut stream(3, "t", 2)), None);
        assert!(
            Matrix::Among {
                nodes: vec![NodeId(2)]
            }
            .validate(n)
            .is_err()
        );
    }

    #[test]
    fn permutation_receivers_are_unique_and_senders_equally_loaded() {
        let (n, pairs, flows) = (16, 10, 50_000);
        let c = counts(&Matrix::Permutation { pairs }, n, flows, 2);
        let sent: Vec<u64> = c.iter().map(|r| r.iter().sum()).collect();
        let active: Vec<usize> = (0..n).filter(|&s| sent[s] > 0).collect();
        assert_eq!(active.len(), pairs);
        for &s in &active {
            assert_eq!(c[s].iter().filter(|&&k| k > 0).count(), 1, "one partner");
            assert!(binomial_ok(sent[s], flows, 1.0 / pairs as f64));
        }
        for d in 0..n {
            let senders = c.iter().filter(|row| row[d] > 0).count();
            assert!(senders <= 1, "receiver {d} has {senders} senders");
        }
    }

    #[test]
    fn incast_is_round_robin() {
        let senders = vec![NodeId(3), NodeId(1), NodeId(5)];
        let m = Matrix::Incast {
            senders: senders.clone(),
            dst: NodeId(0),
        };
        let mut rng = stream(1, "test", 0);
        let mut p = m.build(6, &mut rng).unwrap();
        let got: Vec<NodeId> = (0..7).map(|_| p.next(&mut rng).0).collect();
        let want: Vec<NodeId> = senders.iter().cycle().take(7).copied().collect();
        assert_eq!(got, want);
        assert_eq!(p.sources(), vec![NodeId(1), NodeId(3), NodeId(5)]);
        assert_eq!(p.dst_for(NodeId(5), &mut rng), Some(NodeId(0)));
        assert_eq!(p.dst_for(NodeId(2), &mut rng), None);
    }

    #[test]
    fn all_to_all_cycles_through_every_pair_in_permutation_rounds() {
        let n = 7;
        let mut rng = stream(3, "test", 0);
        let mut p = Matrix::AllToAll.build(n, &mut rng).unwrap();
        let first: Vec<_> = (0..n * (n - 1)).map(|_| p.next(&mut rng)).collect();
        let mut seen = vec![vec![false; n]; n];
        for round in first.chunks(n) {
            let mut sends = vec![0; n];
            let mut recvs = vec![0; n];
            for &(s, d) in round {
                assert_ne!(s, d);
                assert!(!std::mem::replace(&mut seen[s.idx()][d.idx()], true));
                sends[s.idx()] += 1;
                recvs[d.idx()] += 1;
            }
            assert!(sends.iter().chain(&recvs).all(|&k| k == 1));
        }
        let second: Vec<_> = (0..n * (n - 1)).map(|_| p.next(&mut rng)).collect();
        assert_eq!(first, second, "the order is fixed");
        // Closed loop: each source cycles over its n−1 destinations.
        let mut dsts: Vec<NodeId> = (0..n - 1)
            .map(|_| p.dst_for(NodeId(2), &mut rng).unwrap())
            .collect();
        dsts.sort_unstable();
        let want: Vec<NodeId> = (0..n as u16).filter(|&d| d != 2).map(NodeId).collect();
        assert_eq!(dsts, want);
    }

    #[test]
    fn hotspot_sends_the_fraction_plus_its_uniform_share_to_hot_nodes() {
        let (n, flows, fraction) = (32, 100_000, 0.5);
        let hot = vec![NodeId(4), NodeId(9)];
        let m = Matrix::Hotspot {
            hot: hot.clone(),
            fraction,
        };
        let c = counts(&m, n, flows, 4);
        let to_hot: u64 = (0..n).map(|s| c[s][4] + c[s][9]).sum();
        let p = fraction + (1.0 - fraction) * 2.0 / n as f64;
        assert!(binomial_ok(to_hot, flows, p), "{to_hot}");
        // Closed loop from a hot node: the other hot node w.p. fraction (+ uniform share).
        let mut rng = stream(5, "test", 0);
        let mut pairs = m.build(n, &mut rng).unwrap();
        let k = (0..flows)
            .filter(|_| pairs.dst_for(NodeId(4), &mut rng) == Some(NodeId(9)))
            .count() as u64;
        assert!(binomial_ok(k, flows, fraction + (1.0 - fraction) / 31.0));
    }

    #[test]
    fn invalid_matrices_are_errors() {
        let v = |m: Matrix, n| m.validate(n).unwrap_err();
        assert_eq!(v(Matrix::Uniform, 1), MatrixError::Nodes(1));
        assert_eq!(v(Matrix::Uniform, 70_000), MatrixError::Nodes(70_000));
        assert_eq!(
            v(Matrix::Permutation { pairs: 9 }, 8),
            MatrixError::Pairs { pairs: 9, nodes: 8 }
        );
        assert_eq!(
            v(Matrix::Permutation { pairs: 0 }, 8),
            MatrixError::Pairs { pairs: 0, nodes: 8 }
        );
        let incast = |senders: Vec<u16>, dst| Matrix::Incast {
            senders: senders.into_iter().map(NodeId).collect(),
            dst: NodeId(dst),
        };
        assert_eq!(v(incast(vec![], 0), 4), MatrixError::NoSenders);
        assert_eq!(
            v(incast(vec![1, 0], 0), 4),
            MatrixError::SenderIsDestination(NodeId(0))
        );
        assert!(matches!(
            v(incast(vec![1, 9], 0), 4),
            MatrixError::OutOfRange {
                node: NodeId(9),
                ..
            }
        ));
        assert!(matches!(
            v(incast(vec![1, 1], 0), 4),
            MatrixError::Duplicate {
                node: NodeId(1),
                ..
            }
        ));
        assert!(matches!(
            v(incast(vec![1], 4), 4),
            MatrixError::OutOfRange {
                what: "incast destination",
                ..
            }
        ));
        let hotspot = |hot: Vec<u16>, fraction| Matrix::Hotspot {
            hot: hot.into_iter().map(NodeId).collect(),
            fraction,
        };
        assert_eq!(v(hotspot(vec![], 0.5), 4), MatrixError::NoHotNodes);
        assert_eq!(v(hotspot(vec![1], 1.5), 4), MatrixError::Fraction(1.5));
        assert!(matches!(
            v(hotspot(vec![1], f64::NAN), 4),
            MatrixError::Fraction(_)
        ));
        assert!(matches!(
            v(hotspot(vec![7], 0.5), 4),
            MatrixError::OutOfRange { .. }
        ));
    }
}
