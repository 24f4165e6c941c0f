//! Traffic patterns of the Shoal paper's microbenchmarks (§6.2, §7.2): permutations, incast,
//! random pairs and a periodic probe flow. Each returns flows sorted by start time with ids
//! `0..len` in that order.

use crate::flow::Flow;
use rand::{Rng, RngExt};
use shoal_base::{Dur, NodeId, Time};

fn flow(id: usize, src: usize, dst: usize, bytes: u64, start: Time) -> Flow {
    Flow {
        id: id as u64,
        src: NodeId(src as u16),
        dst: NodeId(dst as u16),
        bytes,
        start,
        class: 0,
    }
}

/// A uniformly random derangement of `0..n` (no fixed point), by rejection: the chance that a
/// random permutation is a derangement tends to 1/e, so a few tries suffice.
pub fn derangement(n: usize, rng: &mut impl Rng) -> Vec<usize> {
    assert!(n >= 2, "no derangement of fewer than 2 elements");
    loop {
        let mut p: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = rng.random_range(0..=i);
            p.swap(i, j);
        }
        if p.iter().enumerate().all(|(i, &x)| i != x) {
            return p;
        }
    }
}

/// `pairs` flows of a random permutation of `n` nodes: every sender sends one flow and every
/// receiver receives at most one (Fig. 9, Fig. 12). `pairs == n` is the full permutation.
pub fn permutation(
    n: usize,
    pairs: usize,
    bytes: u64,
    start: Time,
    rng: &mut impl Rng,
) -> Vec<Flow> {
    assert!(pairs <= n, "at most {n} pairs in a rack of {n}");
    let perm = derangement(n, rng);
    let mut senders: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.random_range(0..=i);
        senders.swap(i, j);
    }
    senders.truncate(pairs);
    senders.sort_unstable();
    senders
        .iter()
        .enumerate()
        .map(|(id, &s)| flow(id, s, perm[s], bytes, start))
        .collect()
}

/// `senders` each send `bytes` to `dst` at `start` (Fig. 10, Fig. 13).
pub fn incast(senders: &[NodeId], dst: NodeId, bytes: u64, start: Time) -> Vec<Flow> {
    senders
        .iter()
        .enumerate()
        .map(|(id, s)| flow(id, s.idx(), dst.idx(), bytes, start))
        .collect()
}

/// `count` flows between uniformly random distinct nodes, all at `start` (§7.2 fairness).
pub fn random_pairs(
    n: usize,
    count: usize,
    bytes: u64,
    start: Time,
    rng: &mut impl Rng,
) -> Vec<Flow> {
    (0..count)
        .map(|id| {
            let src = rng.random_range(0..n);
            let mut dst = rng.random_range(0..n - 1);
            if dst >= src {
                dst += 1;
            }
            flow(id, src, dst, bytes, start)
        })
        .collect()
}

/// `count` flows of `bytes` from `src` to `dst`, one every `period` from `first` (Fig. 14).
pub fn periodic(
    src: NodeId,
    dst: NodeId,
    bytes: u64,
    first: Time,
    period: Dur,
    count: usize,
) -> Vec<Flow> {
    (0..count)
        .map(|k| {
            flow(
                k,
                src.idx(),
                dst.idx(),
                bytes,
                Time(first.0 + period.0 * k as u64),
            )
        })
        .collect()
}

/// Merges flow lists into one list sorted by start time (stable: ties keep list order) and
/// renumbers ids in that order.
pub fn merge(lists: Vec<Vec<Flow>>) -> Vec<Flow> {
    let mut all: Vec<Flow> = lists.into_iter().flatten().collect();
    all.sort_by_key(|f| f.start);
    for (id, f) in all.iter_mut().enumerate() {
        f.id = id as u64;
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::rng::stream;

    #[test]
    fn permutations_send_and_receive_at_most_once_per_node() {
        let mut rng = stream(3, "test", 0);
        for n in [2, 3, 8, 64] {
            for pairs in [1, n / 2, n] {
                let flows = permutation(n, pairs, 100, Time::ZERO, &mut rng);
                assert_eq!(flows.len(), pairs);
                let mut sent = vec![0; n];
                let mut recv = vec![0; n];
                for f in &flows {
                    assert_ne!(f.src, f.dst);
                    sent[f.src.idx()] += 1;
                    recv[f.dst.idx()] += 1;
                }
                assert!(sent.iter().chain(&recv).all(|&c| c <= 1));
            }
        }
    }

    #[test]
    fn random_pairs_never_loop_and_cover_all_nodes() {
        let mut rng = stream(4, "test", 0);
        let flows = random_pairs(5, 2000, 1, Time::ZERO, &mut rng);
        let mut seen = [[false; 5]; 5];
        for f in &flows {
            assert_ne!(f.src, f.dst);
            seen[f.src.idx()][f.dst.idx()] = true;
        }
        let pairs = seen.iter().flatten().filter(|&&b| b).count();
        assert_eq!(pairs, 20, "all ordered pairs appear");
    }

    #[test]
    fn merge_sorts_by_start_and_renumbers() {
        let a = periodic(NodeId(0), NodeId(1), 10, Time(5), Dur(10), 3);
        let b = periodic(NodeId(2), NodeId(3), 10, Time(0), Dur(10), 3);
        let m = merge(vec![a, b]);
        let starts: Vec<u64> = m.iter().map(|f| f.start.0).collect();
        assert_eq!(starts, vec![0, 5, 10, 15, 20, 25]);
        assert!(m.iter().enumerate().all(|(i, f)| f.id == i as u64));
    }
}
