//! Collective graphs of any size and any message (chunks uneven): each rank sends and
//! receives what the algorithm moves, and the graph runs to the end on a toy fabric with every
//! send released once.

use proptest::prelude::*;
use shoal_base::{Dur, NodeId, Time};
use shoal_workload::FlowSource;
use shoal_workload::collective::{Algorithm, CollectiveSpec, Op};
use shoal_workload::dag::{DagSource, Work};
use std::collections::{BTreeMap, BTreeSet};

/// Chunk k of S cut into n: the first S mod n one byte larger.
fn chunk(s: u64, n: usize, k: usize) -> u64 {
    s / n as u64 + u64::from((k as u64) < s % n as u64)
}

fn job() -> impl Strategy<Value = CollectiveSpec> {
    (0usize..7, 2usize..13, 0u64..100_000, 1u32..3, 1u32..4).prop_map(
        |(kind, n, extra, iterations, chunks)| {
            let g = 2 + n % 3;
            let (op, algorithm, n) = match kind {
                0 => (Op::AllReduce, Algorithm::Ring, n),
                1 => (Op::AllReduce, Algorithm::HalvingDoubling, 1 << (n % 4 + 1)),
                2 => (Op::AllGather, Algorithm::Ring, n),
                3 => (Op::ReduceScatter, Algorithm::Ring, n),
                4 => (Op::AllReduce, Algorithm::DoubleBinaryTree, n),
                // Groups of 2 to 4, 2 to 4 of them.
                5 => (Op::AllToAll, Algorithm::Staged, g * (2 + n / 5)),
                _ => (Op::AllToAll, Algorithm::Direct, n),
            };
            let group_size = if algorithm == Algorithm::Staged { g } else { 0 };
            CollectiveSpec {
                op,
                algorithm,
                // Ranks on scattered nodes, in no order.
                ranks: (0..n).map(|i| NodeId(((i * 7 + 2) % 29) as u16)).collect(),
                message_bytes: n as u64 * chunks as u64 + extra,
                chunks,
                iterations,
                compute: Dur(1_000),
                group_size,
            }
        },
    )
}

proptest! {
    #[test]
    fn every_rank_moves_what_its_algorithm_moves(spec in job()) {
        let plan = spec.build().expect("a valid job");
        let n = spec.ranks.len();
        let s = spec.message_bytes;
        let rank: BTreeMap<NodeId, usize> = spec.ranks.iter().enumerate().map(|(k, r)| (*r, k)).collect();
        let mut sent = vec![0u64; n];
        let mut received = vec![0u64; n];
        for t in plan.dag.tasks() {
            if let Work::Send { src, dst, bytes } = t.work {
                prop_assert!(plan.place(t.id).expect("placed").step < spec.steps());
                sent[rank[&src]] += bytes;
                received[rank[&dst]] += bytes;
            }
        }
        let it = spec.iterations as u64;
        let c = |k: usize| chunk(s, n, k % n);
        for r in 0..n {
            let (want_sent, want_received) = match (spec.op, spec.algorithm) {
                (Op::AllReduce, Algorithm::Ring) => (2 * s - c(r + 1) - c(r + 2), 2 * s - c(r) - c(r + 1)),
                (Op::AllReduce, _) => (sent[r] / it, received[r] / it),
                (Op::AllToAll, Algorithm::Staged) => {
                    // Inside the group: what it has for every member but itself, at every
                    // group; across: its group's data for its peers of the other groups.
                    let g = spec.group_size;
                    let (a, j) = (r / g, r % g);
                    let m = n / g;
                    let inside: u64 = (0..n).filter(|k| k % g != j).map(c).sum();
                    let across: u64 = (0..m).filter(|&b| b != a).map(|b| g as u64 * c(b * g + j)).sum();
                    let got: u64 = (g as u64 - 1) * (0..m).map(|b| c(b * g + j)).sum::<u64>()
                        + (m as u64 - 1) * g as u64 * c(r);
                    (inside + across, got)
                }
                (Op::AllGather | Op::ReduceScatter, _) => (s - c(r + 1), s - c(r)),
                (Op::AllToAll, _) => (s - c(r), (n as u64 - 1) * c(r)),
            };
            prop_assert_eq!(sent[r], it * want_sent, "rank {} sent", r);
            prop_assert_eq!(received[r], it * want_received, "rank {} received", r);
        }
        if spec.algorithm == Algorithm::HalvingDoubling {
            // Halving leaves each rank its own chunk of all the others'; doubling brings it
            // back: 2(n−1)·S over the job's ranks per iteration.
            let total: u64 = sent.iter().sum();
            prop_assert_eq!(total, it * 2 * (n as u64 - 1) * s);
        }

        // Run on a toy fabric (a send takes 1 ns per 100 B, alone): released once each, and
        // a rank's sends of an iteration after every send of the one before that it took part
        // in, plus the compute time.
        let mut source = DagSource::new(plan.dag.clone(), Time::ZERO);
        let mut now = Time::ZERO;
        let mut flying = BTreeSet::new();
        let mut seen = BTreeSet::new();
        // Per (rank, iteration): its sends' first start and the last finish of the sends it
        // took part in.
        let mut first: BTreeMap<(usize, u32), Time> = BTreeMap::new();
        let mut last: BTreeMap<(usize, u32), Time> = BTreeMap::new();
        loop {
            while let Some(f) = source.next_due(now) {
                prop_assert!(seen.insert(f.id), "send {} twice", f.id);
                let done = now + Dur(1_000 + f.bytes * 10);
                flying.insert((done, f.id, f.src, f.dst));
                let i = plan.place(f.id).expect("placed").iteration;
                first.entry((rank[&f.src], i)).or_insert(f.start);
            }
            let next = [flying.first().map(|e| e.0), source.next_start()].into_iter().flatten().min();
            let Some(next) = next else { break };
            now = next;
            while let Some(&(t, id, src, dst)) = flying.first().filter(|e| e.0 <= now) {
                flying.pop_first();
                source.on_complete(id, src, t);
                let i = plan.place(id).expect("placed").iteration;
                for end in [src, dst] {
                    let e = last.entry((rank[&end], i)).or_insert(t);
                    *e = (*e).max(t);
                }
            }
        }
        prop_assert_eq!(seen.len() as u128, spec.sends());
        for (&(r, i), &start) in first.iter().filter(|((_, i), _)| *i > 0) {
            let before = last[&(r, i - 1)] + spec.compute;
            prop_assert!(start >= before, "rank {} iteration {} at {} before {}", r, i, start, before);
        }
    }
}
