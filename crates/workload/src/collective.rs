//! Collective communication as training jobs run it: all-reduce, all-gather, reduce-scatter
//! and all-to-all over a set of ranks (nodes), built as a [`Dag`] of sends. Each send waits
//! for the data it forwards, so a step of a rank starts when its previous step's data has
//! arrived, not at a global barrier.
//!
//! `message_bytes` is S as NCCL's tests count it: the per-rank buffer of an all-reduce, the
//! whole gathered buffer of an all-gather, the whole input of a reduce-scatter, and a rank's
//! whole send buffer of an all-to-all. It is cut into n chunks (the first S mod n one byte
//! larger), chunk k belonging to the k-th rank.
//!
//! - Ring all-reduce: a reduce-scatter then an all-gather round the ring, 2(n−1) steps; at each
//!   step every rank sends one chunk to the next rank, the one it received at the step before
//!   (reduce-scatter: rank r sends chunk r − s at step s; all-gather: chunk r + 1 − t).
//! - Halving-doubling all-reduce (n a power of two): a reduce-scatter by recursive halving
//!   (step k: exchange half the block held with the rank n/2^(k+1) away) then an all-gather by
//!   recursive doubling (step k: exchange the block held with the rank 2^k away), 2·log2(n)
//!   steps.
//! - Ring all-gather and ring reduce-scatter: n − 1 steps of one chunk each.
//! - Direct all-to-all: every rank sends chunk j to rank j at once, one step.
//!
//! Iterations follow one another with `compute` between them: before iteration i > 0 each
//! rank computes for `compute` after every send of iteration i − 1 it took part in (as sender
//! or receiver) has been delivered, and its sends of iteration i wait for that.

use crate::dag::{Dag, DagError, Task};
use shoal_base::{Dur, NodeId, Time};
use std::fmt;
use thiserror::Error;

/// The collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
}

impl Op {
    pub const ALL: [Op; 4] = [
        Op::AllReduce,
        Op::AllGather,
        Op::ReduceScatter,
        Op::AllToAll,
    ];

    /// The name scenario files use.
    pub fn name(self) -> &'static str {
        match self {
            Op::AllReduce => "all-reduce",
            Op::AllGather => "all-gather",
            Op::ReduceScatter => "reduce-scatter",
            Op::AllToAll => "all-to-all",
        }
    }

    /// NCCL's bus-bandwidth factor for `n` ranks: busbw = algbw × this. All-reduce moves
    /// 2(n−1)/n of S through each rank's link at best, the others (n−1)/n.
    pub fn bus_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Op::AllReduce => 2.0 * (n - 1.0) / n,
            Op::AllGather | Op::ReduceScatter | Op::AllToAll => (n - 1.0) / n,
        }
    }

    /// The algorithm a scenario gets when it names none.
    pub fn default_algorithm(self) -> Algorithm {
        match self {
            Op::AllToAll => Algorithm::Direct,
            _ => Algorithm::Ring,
        }
    }

    /// The algorithms built for this operation.
    pub fn algorithms(self) -> &'static [Algorithm] {
        match self {
            Op::AllReduce => &[Algorithm::Ring, Algorithm::HalvingDoubling],
            Op::AllGather | Op::ReduceScatter => &[Algorithm::Ring],
            Op::AllToAll => &[Algorithm::Direct],
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the operation's data moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Ring,
    HalvingDoubling,
    Direct,
}

impl Algorithm {
    pub const ALL: [Algorithm; 3] = [
        Algorithm::Ring,
        Algorithm::HalvingDoubling,
        Algorithm::Direct,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::Direct => "direct",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A collective job: `iterations` runs of `op` by `algorithm` over `ranks` (rank k is node
/// `ranks[k]`), S = `message_bytes`, `compute` between iterations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectiveSpec {
    pub op: Op,
    pub algorithm: Algorithm,
    pub ranks: Vec<NodeId>,
    pub message_bytes: u64,
    pub iterations: u32,
    pub compute: Dur,
}

/// A collective that cannot be built.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum CollectiveError {
    #[error("a collective needs at least 2 ranks, got {0}")]
    TooFewRanks(usize),
    #[error("node {0} is a rank twice")]
    RepeatedRank(u16),
    #[error("{op} has no {algorithm} algorithm here (it has {})", names(op.algorithms()))]
    Unsupported { op: Op, algorithm: Algorithm },
    #[error(
        "halving-doubling needs a power-of-two number of ranks, got {0} (the nearest: {lo} or {hi})",
        lo = 1u64 << (63 - (*.0 as u64).leading_zeros()),
        hi = (*.0 as u64).next_power_of_two()
    )]
    NotPowerOfTwo(usize),
    #[error(
        "a message of {bytes} B cannot be cut into {ranks} chunks of at least a byte; give at \
         least {ranks} B"
    )]
    MessageTooSmall { bytes: u64, ranks: usize },
    #[error("a collective job needs at least one iteration")]
    NoIterations,
    #[error("{sends} sends: more than the {MAX_TASKS} tasks a job may hold")]
    TooLarge { sends: u128 },
    #[error(transparent)]
    Dag(#[from] DagError),
}

/// The most tasks (sends and compute steps) one job's graph may hold (about 100 bytes each).
pub const MAX_TASKS: u64 = 10_000_000;

fn names(algorithms: &[Algorithm]) -> String {
    algorithms
        .iter()
        .map(|a| a.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a send sits in its job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub iteration: u32,
    pub step: u32,
}

/// A built job: its graph (task ids 0, 1, … in the order built) and each send's place.
#[derive(Clone, Debug)]
pub struct CollectivePlan {
    pub dag: Dag,
    /// Indexed by task id: the send's iteration and step, `None` for a compute step.
    pub places: Vec<Option<Place>>,
}

impl CollectivePlan {
    /// The iteration and step of the send with id `id`.
    pub fn place(&self, id: u64) -> Option<Place> {
        self.places.get(id as usize).copied().flatten()
    }

    /// Each iteration's completion time, from its first send's start to its last send's
    /// delivery, given every send a run handed out as (id, start, finish); `None` for an
    /// iteration a send of which was not delivered (or not started).
    pub fn iteration_times(
        &self,
        records: impl IntoIterator<Item = (u64, Time, Option<Time>)>,
    ) -> Vec<Option<Dur>> {
        let iterations = self
            .places
            .iter()
            .flatten()
            .map(|p| p.iteration as usize + 1)
            .max()
            .unwrap_or(0);
        let mut want = vec![0u64; iterations];
        for p in self.places.iter().flatten() {
            want[p.iteration as usize] += 1;
        }
        let mut done = vec![0u64; iterations];
        let mut span: Vec<Option<(Time, Time)>> = vec![None; iterations];
        for (id, start, finish) in records {
            let (Some(p), Some(finish)) = (self.place(id), finish) else {
                continue;
            };
            let i = p.iteration as usize;
            done[i] += 1;
            let (lo, hi) = span[i].get_or_insert((start, finish));
            *lo = (*lo).min(start);
            *hi = (*hi).max(finish);
        }
        (0..iterations)
            .map(|i| match span[i] {
                Some((lo, hi)) if done[i] == want[i] => Some(hi - lo),
                _ => None,
            })
            .collect()
    }
}

impl CollectiveSpec {
    /// Steps of one iteration.
    pub fn steps(&self) -> u32 {
        let n = self.ranks.len() as u32;
        match (self.op, self.algorithm) {
            (Op::AllReduce, Algorithm::HalvingDoubling) => 2 * n.max(1).ilog2(),
            (Op::AllReduce, _) => 2 * (n.saturating_sub(1)),
            (Op::AllToAll, _) => 1,
            _ => n.saturating_sub(1),
        }
    }

    /// Sends of one iteration.
    pub fn sends_per_iteration(&self) -> u128 {
        let n = self.ranks.len() as u128;
        match self.op {
            Op::AllToAll => n * n.saturating_sub(1),
            _ => n * self.steps() as u128,
        }
    }

    /// Sends of the whole job.
    pub fn sends(&self) -> u128 {
        self.sends_per_iteration() * self.iterations as u128
    }

    /// Checks the parameters against each other (not against a fabric's size).
    pub fn validate(&self) -> Result<(), CollectiveError> {
        let n = self.ranks.len();
        if n < 2 {
            return Err(CollectiveError::TooFewRanks(n));
        }
        let mut seen = std::collections::BTreeSet::new();
        for r in &self.ranks {
            if !seen.insert(*r) {
                return Err(CollectiveError::RepeatedRank(r.0));
            }
        }
        if !self.op.algorithms().contains(&self.algorithm) {
            return Err(CollectiveError::Unsupported {
                op: self.op,
                algorithm: self.algorithm,
            });
        }
        if self.algorithm == Algorithm::HalvingDoubling && !n.is_power_of_two() {
            return Err(CollectiveError::NotPowerOfTwo(n));
        }
        if self.message_bytes < n as u64 {
            return Err(CollectiveError::MessageTooSmall {
                bytes: self.message_bytes,
                ranks: n,
            });
        }
        if self.iterations == 0 {
            return Err(CollectiveError::NoIterations);
        }
        let tasks = self.sends() + n as u128 * (self.iterations as u128 - 1);
        if tasks > MAX_TASKS as u128 {
            return Err(CollectiveError::TooLarge {
                sends: self.sends(),
            });
        }
        Ok(())
    }

    /// Bytes of chunk `k` of S.
    fn chunk(&self, k: usize) -> u64 {
        let n = self.ranks.len() as u64;
        self.message_bytes / n + u64::from((k as u64) < self.message_bytes % n)
    }

    /// Bytes of chunks `lo..hi`.
    fn chunks(&self, lo: usize, hi: usize) -> u64 {
        (lo..hi).map(|k| self.chunk(k)).sum()
    }

    /// The job's graph.
    pub fn build(&self) -> Result<CollectivePlan, CollectiveError> {
        self.validate()?;
        let mut b = Builder {
            spec: self,
            tasks: Vec::new(),
            places: Vec::new(),
        };
        let n = self.ranks.len();
        // The sends each rank took part in during the previous iteration.
        let mut touched: Vec<Vec<u64>> = vec![Vec::new(); n];
        for i in 0..self.iterations {
            let gate: Vec<Option<u64>> = if i == 0 {
                vec![None; n]
            } else {
                (0..n)
                    .map(|r| {
                        let after = std::mem::take(&mut touched[r]);
                        Some(b.compute(r, after))
                    })
                    .collect()
            };
            let sends = match (self.op, self.algorithm) {
                (Op::AllToAll, _) => b.all_to_all(i, &gate),
                (Op::AllReduce, Algorithm::HalvingDoubling) => b.halving_doubling(i, &gate),
                (op, _) => b.ring(op, i, &gate),
            };
            for (id, src, dst) in sends {
                touched[src].push(id);
                touched[dst].push(id);
            }
        }
        Ok(CollectivePlan {
            dag: Dag::new(b.tasks)?,
            places: b.places,
        })
    }
}

struct Builder<'a> {
    spec: &'a CollectiveSpec,
    tasks: Vec<Task>,
    places: Vec<Option<Place>>,
}

/// A send as built: its id and its ranks (sender, receiver).
type Built = (u64, usize, usize);

impl Builder<'_> {
    fn compute(&mut self, rank: usize, after: Vec<u64>) -> u64 {
        let id = self.tasks.len() as u64;
        self.tasks.push(Task::compute(
            id,
            self.spec.ranks[rank],
            self.spec.compute,
            after,
        ));
        self.places.push(None);
        id
    }

    /// A send of `bytes` from rank `src` to rank `dst` after the sender's gate and `data`.
    fn send(
        &mut self,
        place: Place,
        (src, dst): (usize, usize),
        bytes: u64,
        gate: Option<u64>,
        data: Option<u64>,
    ) -> Built {
        let id = self.tasks.len() as u64;
        let after = gate.into_iter().chain(data).collect();
        let r = &self.spec.ranks;
        self.tasks
            .push(Task::send(id, r[src], r[dst], bytes, after));
        self.places.push(Some(place));
        (id, src, dst)
    }

    /// Ring reduce-scatter, all-gather, or both in turn (all-reduce). At each step rank r
    /// sends to r + 1 what it received from r − 1 at the step before.
    fn ring(&mut self, op: Op, iteration: u32, gate: &[Option<u64>]) -> Vec<Built> {
        let n = self.spec.ranks.len();
        let steps = self.spec.steps() as usize;
        let mut out = Vec::with_capacity(n * steps);
        // The send into each rank at the previous step.
        let mut received: Vec<Option<u64>> = vec![None; n];
        for s in 0..steps {
            let mut now_received = vec![None; n];
            for r in 0..n {
                let chunk = match op {
                    // All-gather half of an all-reduce: rank r holds the reduced chunk r + 1.
                    Op::AllReduce if s >= n - 1 => (r + 1 + n - (s - (n - 1)) % n) % n,
                    _ => (r + n - s % n) % n,
                };
                let to = (r + 1) % n;
                let place = Place {
                    iteration,
                    step: s as u32,
                };
                let sent = self.send(place, (r, to), self.spec.chunk(chunk), gate[r], received[r]);
                now_received[to] = Some(sent.0);
                out.push(sent);
            }
            received = now_received;
        }
        out
    }

    /// Rabenseifner's all-reduce: recursive halving, then recursive doubling.
    fn halving_doubling(&mut self, iteration: u32, gate: &[Option<u64>]) -> Vec<Built> {
        let n = self.spec.ranks.len();
        let levels = n.ilog2() as usize;
        let mut out = Vec::with_capacity(2 * n * levels);
        // The block of chunks each rank holds, and the send into it at the previous step.
        let mut held: Vec<(usize, usize)> = vec![(0, n); n];
        let mut received: Vec<Option<u64>> = vec![None; n];
        for step in 0..2 * levels {
            let halving = step < levels;
            let dist = if halving {
                n >> (step + 1)
            } else {
                1 << (step - levels)
            };
            let mut next_held = held.clone();
            let mut now_received = vec![None; n];
            for r in 0..n {
                let partner = r ^ dist;
                let (lo, hi) = held[r];
                let (keep, give) = if halving {
                    let mid = lo + (hi - lo) / 2;
                    if r & dist == 0 {
                        ((lo, mid), (mid, hi))
                    } else {
                        ((mid, hi), (lo, mid))
                    }
                } else {
                    // Doubling: send what is held, then hold it joined with the partner's.
                    let (plo, phi) = held[partner];
                    ((lo.min(plo), hi.max(phi)), (lo, hi))
                };
                next_held[r] = keep;
                let place = Place {
                    iteration,
                    step: step as u32,
                };
                let sent = self.send(
                    place,
                    (r, partner),
                    self.spec.chunks(give.0, give.1),
                    gate[r],
                    received[r],
                );
                now_received[partner] = Some(sent.0);
                out.push(sent);
            }
            held = next_held;
            received = now_received;
        }
        out
    }

    /// Every rank sends chunk j to rank j at once, the next ranks first.
    fn all_to_all(&mut self, iteration: u32, gate: &[Option<u64>]) -> Vec<Built> {
        let n = self.spec.ranks.len();
        let mut out = Vec::with_capacity(n * (n - 1));
        for (r, &gate) in gate.iter().enumerate() {
            for k in 1..n {
                let to = (r + k) % n;
                let place = Place { iteration, step: 0 };
                out.push(self.send(place, (r, to), self.spec.chunk(to), gate, None));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dag::Work;
    use std::collections::BTreeMap;

    fn spec(op: Op, algorithm: Algorithm, n: u16, bytes: u64) -> CollectiveSpec {
        CollectiveSpec {
            op,
            algorithm,
            ranks: (0..n).map(|i| NodeId(i * 3 + 1)).collect(),
            message_bytes: bytes,
            iterations: 1,
            compute: Dur(0),
        }
    }

    /// Bytes each node sends and receives in one iteration.
    fn traffic(plan: &CollectivePlan) -> (BTreeMap<NodeId, u64>, BTreeMap<NodeId, u64>) {
        let mut out = BTreeMap::new();
        let mut inn = BTreeMap::new();
        for t in plan.dag.tasks() {
            if let Work::Send { src, dst, bytes } = t.work {
                *out.entry(src).or_default() += bytes;
                *inn.entry(dst).or_default() += bytes;
            }
        }
        (out, inn)
    }

    #[test]
    fn each_rank_moves_what_the_bus_factor_says() {
        // Every rank sends and receives exactly bus_factor × S when S divides into n chunks.
        for (op, alg) in [
            (Op::AllReduce, Algorithm::Ring),
            (Op::AllReduce, Algorithm::HalvingDoubling),
            (Op::AllGather, Algorithm::Ring),
            (Op::ReduceScatter, Algorithm::Ring),
            (Op::AllToAll, Algorithm::Direct),
        ] {
            for n in [2u16, 4, 8, 16] {
                let s = spec(op, alg, n, 1024 * n as u64);
                let plan = s.build().expect("builds");
                let (out, inn) = traffic(&plan);
                let want = (op.bus_factor(n as usize) * s.message_bytes as f64).round() as u64;
                for r in &s.ranks {
                    assert_eq!(out[r], want, "{op} {alg} n={n}: sent by {}", r.0);
                    assert_eq!(inn[r], want, "{op} {alg} n={n}: received by {}", r.0);
                }
                assert_eq!(plan.dag.sends() as u128, s.sends());
            }
        }
    }

    #[test]
    fn uneven_chunks_still_sum_to_the_message() {
        // A ring all-gather carries every chunk but the receiver's own to each rank: S minus
        // that chunk, whatever the remainder.
        let s = spec(Op::AllGather, Algorithm::Ring, 5, 1003);
        let (_, inn) = traffic(&s.build().expect("builds"));
        let total: u64 = inn.values().sum();
        assert_eq!(total, 4 * 1003, "each chunk reaches the n - 1 other ranks");
    }

    #[test]
    fn halving_doubling_pairs_ranks_at_halving_then_doubling_distances() {
        let s = spec(Op::AllReduce, Algorithm::HalvingDoubling, 8, 8000);
        let plan = s.build().expect("builds");
        let node = |r: usize| s.ranks[r];
        let mut by_step: BTreeMap<u32, Vec<(NodeId, NodeId, u64)>> = BTreeMap::new();
        for t in plan.dag.tasks() {
            if let Work::Send { src, dst, bytes } = t.work {
                let step = plan.place(t.id).expect("a send").step;
                by_step.entry(step).or_default().push((src, dst, bytes));
            }
        }
        assert_eq!(by_step.len(), 6, "2 log2 8 steps");
        let dist = [4, 2, 1, 1, 2, 4];
        let bytes = [4000, 2000, 1000, 1000, 2000, 4000];
        for (step, sends) in &by_step {
            let k = *step as usize;
            assert_eq!(sends.len(), 8);
            for r in 0..8 {
                assert!(
                    sends.contains(&(node(r), node(r ^ dist[k]), bytes[k])),
                    "step {k}: rank {r}"
                );
            }
        }
    }

    #[test]
    fn bad_jobs_are_refused_with_the_reason() {
        let mut s = spec(Op::AllReduce, Algorithm::HalvingDoubling, 6, 6000);
        let e = s.build().expect_err("6 is no power of two").to_string();
        assert!(e.contains("power-of-two") && e.contains("4 or 8"), "{e}");
        s.ranks.truncate(1);
        assert_eq!(s.validate(), Err(CollectiveError::TooFewRanks(1)));
        let mut s = spec(Op::AllToAll, Algorithm::Ring, 4, 4000);
        assert!(matches!(
            s.validate(),
            Err(CollectiveError::Unsupported { .. })
        ));
        s.algorithm = Algorithm::Direct;
        s.message_bytes = 3;
        assert!(matches!(
            s.validate(),
            Err(CollectiveError::MessageTooSmall { .. })
        ));
        s.message_bytes = 4;
        s.ranks[1] = s.ranks[0];
        assert_eq!(s.validate(), Err(CollectiveError::RepeatedRank(1)));
    }

    #[test]
    fn later_iterations_wait_for_each_rank_to_compute() {
        let mut s = spec(Op::AllReduce, Algorithm::Ring, 4, 4000);
        s.iterations = 3;
        s.compute = Dur(1_000_000);
        let plan = s.build().expect("builds");
        let computes: Vec<&Task> = plan
            .dag
            .tasks()
            .iter()
            .filter(|t| matches!(t.work, Work::Compute { .. }))
            .collect();
        assert_eq!(computes.len(), 2 * 4, "one per rank between iterations");
        for c in computes {
            assert_eq!(c.delay, s.compute);
            // A rank of a ring takes part in 2 sends per step: 2 × 2(n - 1).
            assert_eq!(c.after.len(), 2 * 2 * 3);
        }
        assert_eq!(plan.dag.sends(), 3 * 4 * 6);
    }
}
