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
//! - Double binary tree all-reduce (NCCL's): two binary trees over the ranks, the second the
//!   first shifted by one rank so that the leaves of one are the inner ranks of the other; each
//!   carries half of S, reduced up to its root then broadcast down, 2·h steps (h the height,
//!   ⌊log2 n⌋), pipelined when the messages are chunked.
//! - Direct all-to-all: every rank sends chunk j to rank j at once, one step.
//! - Staged (hierarchical) all-to-all over groups of g consecutive ranks: inside each group
//!   first, then across groups between members of the same index, 2 steps.
//!
//! With `chunks` = c > 1 every message of a step is cut into c pieces (the first bytes mod c
//! one byte larger): piece k + 1 goes once piece k has arrived, and piece k of a message
//! that forwards or reduces data goes once piece k of that data has arrived, so steps overlap
//! (pipelining).
//!
//! Iterations follow one another with `compute` between them: before iteration i > 0 each
//! rank computes for `compute` after every send of iteration i − 1 it took part in (as sender
//! or receiver) has been delivered, and its sends of iteration i wait for that.

use crate::dag::{Dag, DagError, Task, Work};
use shoal_base::{Dur, NodeId, Time};
use std::collections::BTreeMap;
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
            Op::AllReduce => &[
                Algorithm::Ring,
                Algorithm::HalvingDoubling,
                Algorithm::DoubleBinaryTree,
            ],
            Op::AllGather | Op::ReduceScatter => &[Algorithm::Ring],
            Op::AllToAll => &[Algorithm::Direct, Algorithm::Staged],
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
    DoubleBinaryTree,
    Direct,
    Staged,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Ring,
        Algorithm::HalvingDoubling,
        Algorithm::DoubleBinaryTree,
        Algorithm::Direct,
        Algorithm::Staged,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ring => "ring",
            Algorithm::HalvingDoubling => "halving-doubling",
            Algorithm::DoubleBinaryTree => "double-binary-tree",
            Algorithm::Direct => "direct",
            Algorithm::Staged => "staged",
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A collective job: `iterations` runs of `op` by `algorithm` over `ranks` (rank k is node
/// `ranks[k]`), S = `message_bytes`, each message cut into `chunks` pieces, `compute` between
/// iterations; `group_size` ranks a group for the staged all-to-all (ignored by the others).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectiveSpec {
    pub op: Op,
    pub algorithm: Algorithm,
    pub ranks: Vec<NodeId>,
    pub message_bytes: u64,
    /// Pieces each message of a step is cut into (pipelining); 1 sends it whole.
    pub chunks: u32,
    pub iterations: u32,
    pub compute: Dur,
    /// Ranks per group of the staged all-to-all: consecutive ranks, a divisor of their number.
    pub group_size: usize,
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
        "the staged all-to-all needs groups of more than 1 and fewer than all {ranks} ranks \
         that divide them, got {group}"
    )]
    BadGroup { group: usize, ranks: usize },
    #[error(
        "a message of {bytes} B cannot be cut into {parts} parts of {chunks} chunk{} of at \
         least a byte; give at least {} B", if *.chunks == 1 { "" } else { "s" }, *.parts as u64 * *.chunks as u64
    )]
    MessageTooSmall {
        bytes: u64,
        parts: usize,
        chunks: u32,
    },
    #[error("a message needs at least one chunk")]
    NoChunks,
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
    /// Which job of the run (0 for a run of one).
    pub job: u32,
    pub iteration: u32,
    pub step: u32,
    /// Which piece of its step's message (0 when messages go whole).
    pub chunk: u32,
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

    /// Several jobs side by side in one graph: job j's tasks follow job j − 1's (ids shifted
    /// by the tasks before them), its places name it, and its first sends wait `start` (from
    /// the run's start). Refused with the index of the job that cannot be built, or, for a
    /// graph of more than [`MAX_TASKS`] tasks, of the job that passes the bound.
    pub fn of_jobs(
        jobs: &[(CollectiveSpec, Dur)],
    ) -> Result<CollectivePlan, (usize, CollectiveError)> {
        let mut tasks: Vec<Task> = Vec::new();
        let mut places = Vec::new();
        let mut sends: u128 = 0;
        for (j, (spec, start)) in jobs.iter().enumerate() {
            let plan = spec.build().map_err(|e| (j, e))?;
            sends += spec.sends();
            if tasks.len() + plan.places.len() > MAX_TASKS as usize {
                return Err((j, CollectiveError::TooLarge { sends }));
            }
            let offset = tasks.len() as u64;
            for t in plan.dag.tasks() {
                let mut t = t.clone();
                t.id += offset;
                for d in &mut t.after {
                    *d += offset;
                }
                if t.after.is_empty() {
                    t.delay = t.delay + *start;
                }
                tasks.push(t);
            }
            places.extend(
                plan.places
                    .iter()
                    .map(|p| p.map(|p| Place { job: j as u32, ..p })),
            );
        }
        let dag = Dag::new(tasks).map_err(|e| (jobs.len().saturating_sub(1), e.into()))?;
        Ok(CollectivePlan { dag, places })
    }

    /// Job `job`'s sends as (place, receiver, start, finish), from every send a run handed out
    /// as (id, start, finish).
    fn sends_of(
        &self,
        job: u32,
        records: impl IntoIterator<Item = (u64, Time, Option<Time>)>,
    ) -> impl Iterator<Item = (Place, NodeId, Time, Option<Time>)> {
        records.into_iter().filter_map(move |(id, start, finish)| {
            let p = self.place(id).filter(|p| p.job == job)?;
            let Work::Send { dst, .. } = self.dag.task(id)?.work else {
                return None;
            };
            Some((p, dst, start, finish))
        })
    }

    /// Sends of each iteration of job `job`.
    fn wanted(&self, job: u32) -> Vec<u64> {
        let mut want: Vec<u64> = Vec::new();
        for p in self.places.iter().flatten().filter(|p| p.job == job) {
            let i = p.iteration as usize;
            if want.len() <= i {
                want.resize(i + 1, 0);
            }
            want[i] += 1;
        }
        want
    }

    /// Each iteration's completion time of job `job`, from its first send's start to its last
    /// send's delivery, given every send a run handed out as (id, start, finish); `None` for
    /// an iteration a send of which was not delivered (or not started).
    pub fn iteration_times(
        &self,
        job: u32,
        records: impl IntoIterator<Item = (u64, Time, Option<Time>)>,
    ) -> Vec<Option<Dur>> {
        let want = self.wanted(job);
        let mut done = vec![0u64; want.len()];
        let mut span: Vec<Option<(Time, Time)>> = vec![None; want.len()];
        for (p, _, start, finish) in self.sends_of(job, records) {
            let Some(finish) = finish else { continue };
            let i = p.iteration as usize;
            done[i] += 1;
            let (lo, hi) = span[i].get_or_insert((start, finish));
            *lo = (*lo).min(start);
            *hi = (*hi).max(finish);
        }
        (0..want.len())
            .map(|i| match span[i] {
                Some((lo, hi)) if done[i] == want[i] => Some(hi - lo),
                _ => None,
            })
            .collect()
    }

    /// The slowest rank of job `job`: each rank's time in an iteration is from the
    /// iteration's first send's start to the last delivery into the rank; the slowest rank's
    /// share is (slowest − median) / slowest, the part of the iteration the job spends
    /// waiting for ranks behind the typical one, averaged over the completed iterations.
    /// Returns the share and the node that was slowest most often (the lowest id on a tie);
    /// `None` when no iteration completed.
    pub fn slowest_rank(
        &self,
        job: u32,
        records: impl IntoIterator<Item = (u64, Time, Option<Time>)>,
    ) -> Option<(f64, NodeId)> {
        let want = self.wanted(job);
        let mut done = vec![0u64; want.len()];
        let mut first: Vec<Option<Time>> = vec![None; want.len()];
        let mut last: Vec<BTreeMap<NodeId, Time>> = vec![BTreeMap::new(); want.len()];
        for (p, dst, start, finish) in self.sends_of(job, records) {
            let Some(finish) = finish else { continue };
            let i = p.iteration as usize;
            done[i] += 1;
            let f = first[i].get_or_insert(start);
            *f = (*f).min(start);
            let l = last[i].entry(dst).or_insert(finish);
            *l = (*l).max(finish);
        }
        let mut shares = Vec::new();
        let mut slowest: BTreeMap<NodeId, u32> = BTreeMap::new();
        for i in (0..want.len()).filter(|&i| done[i] == want[i]) {
            let from = first[i]?;
            let mut times: Vec<(u64, NodeId)> =
                last[i].iter().map(|(&n, &t)| ((t - from).0, n)).collect();
            times.sort_unstable();
            let &(max, node) = times.last()?;
            let median = times[(times.len() - 1) / 2].0;
            shares.push(if max == 0 {
                0.0
            } else {
                (max - median) as f64 / max as f64
            });
            *slowest.entry(node).or_default() += 1;
        }
        let most = slowest.values().copied().max()?;
        let node = slowest.iter().find(|&(_, &c)| c == most).map(|(&n, _)| n)?;
        Some((shares.iter().sum::<f64>() / shares.len() as f64, node))
    }
}

/// A binary tree over ranks: each rank's parent (none for the root) and children, and each
/// rank's depth (edges to the root).
struct Tree {
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    depth: Vec<u32>,
}

impl Tree {
    /// The in-order tree over positions 0..n whose root of positions lo..=hi is the one
    /// whose number p + 1 has the most trailing zero bits (the highest power of two ≤ n at the
    /// top): the even positions are its leaves, the odd ones its inner ranks. The rank at
    /// position p is `rank_at(p)`.
    fn in_order(n: usize, rank_at: impl Fn(usize) -> usize) -> Tree {
        let mut t = Tree {
            parent: vec![None; n],
            children: vec![Vec::new(); n],
            depth: vec![0; n],
        };
        // (lo, hi, parent rank, depth) of the subtrees still to place, over numbers 1..=n.
        let mut todo = vec![(1usize, n, None::<usize>, 0u32)];
        while let Some((lo, hi, parent, depth)) = todo.pop() {
            if lo > hi {
                continue;
            }
            // The multiple of the largest power of two that has one in lo..=hi.
            let mut b = 1usize << hi.ilog2();
            while hi / b * b < lo {
                b /= 2;
            }
            let q = hi / b * b;
            let r = rank_at(q - 1);
            t.parent[r] = parent;
            t.depth[r] = depth;
            if let Some(p) = parent {
                t.children[p].push(r);
            }
            todo.push((q + 1, hi, Some(r), depth + 1));
            todo.push((lo, q - 1, Some(r), depth + 1));
        }
        for c in &mut t.children {
            c.sort_unstable();
        }
        t
    }

    /// NCCL's pair: the tree over the ranks in order, and over the ranks mirrored (rank
    /// n − 1 − p at position p) when n is even or shifted by one (rank p − 1 mod n at p) when
    /// it is odd, so that the inner ranks of one are leaves of the other: no rank is inner in
    /// both, and every rank is inner in one but rank n − 1 when n is odd.
    fn double(n: usize) -> [Tree; 2] {
        let second = if n.is_multiple_of(2) {
            Tree::in_order(n, |p| n - 1 - p)
        } else {
            Tree::in_order(n, |p| (p + n - 1) % n)
        };
        [Tree::in_order(n, |p| p), second]
    }

    fn height(&self) -> u32 {
        self.depth.iter().copied().max().unwrap_or(0)
    }
}

impl CollectiveSpec {
    /// The double binary tree's height: the deeper of its two trees.
    fn tree_height(&self) -> u32 {
        Tree::double(self.ranks.len())
            .iter()
            .map(Tree::height)
            .max()
            .unwrap_or(0)
    }

    /// Steps of one iteration.
    pub fn steps(&self) -> u32 {
        let n = self.ranks.len() as u32;
        match (self.op, self.algorithm) {
            (Op::AllReduce, Algorithm::HalvingDoubling) => 2 * n.max(1).ilog2(),
            (Op::AllReduce, Algorithm::DoubleBinaryTree) => 2 * self.tree_height(),
            (Op::AllReduce, _) => 2 * (n.saturating_sub(1)),
            (Op::AllToAll, Algorithm::Staged) => 2,
            (Op::AllToAll, _) => 1,
            _ => n.saturating_sub(1),
        }
    }

    /// Messages (sends before chunking) of one iteration.
    fn messages_per_iteration(&self) -> u128 {
        let n = self.ranks.len() as u128;
        match (self.op, self.algorithm) {
            (Op::AllToAll, Algorithm::Staged) => {
                let g = self.group_size.max(1) as u128;
                n * (g - 1) + n * (n / g).saturating_sub(1)
            }
            (Op::AllToAll, _) => n * n.saturating_sub(1),
            // Two trees, each n − 1 edges, used up then down.
            (_, Algorithm::DoubleBinaryTree) => 4 * n.saturating_sub(1),
            _ => n * self.steps() as u128,
        }
    }

    /// Sends of one iteration.
    pub fn sends_per_iteration(&self) -> u128 {
        self.messages_per_iteration() * self.chunks as u128
    }

    /// Sends of the whole job.
    pub fn sends(&self) -> u128 {
        self.sends_per_iteration() * self.iterations as u128
    }

    /// The parts S is cut into before chunking: the tree's two halves, or the n chunks.
    fn parts(&self) -> usize {
        match self.algorithm {
            Algorithm::DoubleBinaryTree => 2,
            _ => self.ranks.len(),
        }
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
        let g = self.group_size;
        if self.algorithm == Algorithm::Staged && (g < 2 || g >= n || !n.is_multiple_of(g)) {
            return Err(CollectiveError::BadGroup { group: g, ranks: n });
        }
        if self.chunks == 0 {
            return Err(CollectiveError::NoChunks);
        }
        if (self.message_bytes as u128) < self.parts() as u128 * self.chunks as u128 {
            return Err(CollectiveError::MessageTooSmall {
                bytes: self.message_bytes,
                parts: self.parts(),
                chunks: self.chunks,
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
        // The messages each rank took part in during the previous iteration (their last
        // pieces: each piece goes after the one before it arrived).
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
                (Op::AllToAll, Algorithm::Staged) => b.staged_all_to_all(i, &gate),
                (Op::AllToAll, _) => b.all_to_all(i, &gate),
                (Op::AllReduce, Algorithm::HalvingDoubling) => b.halving_doubling(i, &gate),
                (Op::AllReduce, Algorithm::DoubleBinaryTree) => b.double_binary_tree(i, &gate),
                (op, _) => b.ring(op, i, &gate),
            };
            for m in sends {
                let last = *m.pieces.last().expect("a message has a piece");
                touched[m.src].push(last);
                touched[m.dst].push(last);
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

/// A message as built: its ranks (sender, receiver) and the ids of its pieces in order.
struct Message {
    src: usize,
    dst: usize,
    pieces: Vec<u64>,
}

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

    /// A message of `bytes` from rank `src` to rank `dst`, cut into the spec's chunks (the
    /// first `bytes` mod c one byte larger). Piece k goes after the sender's gate, after piece
    /// k of each message in `data` (the data it forwards or reduces) arrived, and after piece
    /// k − 1 of its own message arrived.
    fn send(
        &mut self,
        (iteration, step): (u32, u32),
        (src, dst): (usize, usize),
        bytes: u64,
        gate: Option<u64>,
        data: &[&Message],
    ) -> Message {
        let c = self.spec.chunks as u64;
        let r = &self.spec.ranks;
        let mut pieces: Vec<u64> = Vec::with_capacity(c as usize);
        for k in 0..c as usize {
            let id = self.tasks.len() as u64;
            let after = gate
                .into_iter()
                .chain(data.iter().map(|m| m.pieces[k]))
                .chain(pieces.last().copied())
                .collect();
            let piece = bytes / c + u64::from((k as u64) < bytes % c);
            self.tasks
                .push(Task::send(id, r[src], r[dst], piece, after));
            self.places.push(Some(Place {
                job: 0,
                iteration,
                step,
                chunk: k as u32,
            }));
            pieces.push(id);
        }
        Message { src, dst, pieces }
    }

    /// Ring reduce-scatter, all-gather, or both in turn (all-reduce). At each step rank r
    /// sends to r + 1 what it received from r − 1 at the step before.
    fn ring(&mut self, op: Op, iteration: u32, gate: &[Option<u64>]) -> Vec<Message> {
        let n = self.spec.ranks.len();
        let steps = self.spec.steps() as usize;
        let mut out: Vec<Message> = Vec::with_capacity(n * steps);
        // Where in `out` the message into each rank at the previous step is.
        let mut received: Vec<Option<usize>> = vec![None; n];
        for s in 0..steps {
            let mut now_received = vec![None; n];
            for r in 0..n {
                let chunk = match op {
                    // All-gather half of an all-reduce: rank r holds the reduced chunk r + 1.
                    Op::AllReduce if s >= n - 1 => (r + 1 + n - (s - (n - 1)) % n) % n,
                    _ => (r + n - s % n) % n,
                };
                let to = (r + 1) % n;
                let data: Vec<&Message> = received[r].iter().map(|&i| &out[i]).collect();
                let m = self.send(
                    (iteration, s as u32),
                    (r, to),
                    self.spec.chunk(chunk),
                    gate[r],
                    &data,
                );
                now_received[to] = Some(out.len());
                out.push(m);
            }
            received = now_received;
        }
        out
    }

    /// Rabenseifner's all-reduce: recursive halving, then recursive doubling.
    fn halving_doubling(&mut self, iteration: u32, gate: &[Option<u64>]) -> Vec<Message> {
        let n = self.spec.ranks.len();
        let levels = n.ilog2() as usize;
        let mut out: Vec<Message> = Vec::with_capacity(2 * n * levels);
        // The block of chunks each rank holds, and the message into it at the previous step.
        let mut held: Vec<(usize, usize)> = vec![(0, n); n];
        let mut received: Vec<Option<usize>> = vec![None; n];
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
                let data: Vec<&Message> = received[r].iter().map(|&i| &out[i]).collect();
                let m = self.send(
                    (iteration, step as u32),
                    (r, partner),
                    self.spec.chunks(give.0, give.1),
                    gate[r],
                    &data,
                );
                now_received[partner] = Some(out.len());
                out.push(m);
            }
            held = next_held;
            received = now_received;
        }
        out
    }

    /// NCCL's double binary tree: S cut in two halves (the first a byte larger when S is
    /// odd), each reduced up one of the two trees to its root and broadcast back down it. A
    /// rank sends up once it has its children's data, and down once it has its parent's; with
    /// chunks, piece k moves as soon as piece k has arrived, so the trees pipeline. Steps count
    /// levels: an up send from depth d is step h − d, a down send from depth d step h + d (h
    /// the deeper tree's height).
    fn double_binary_tree(&mut self, iteration: u32, gate: &[Option<u64>]) -> Vec<Message> {
        let n = self.spec.ranks.len();
        let h = self.spec.tree_height();
        let s = self.spec.message_bytes;
        let mut out: Vec<Message> = Vec::with_capacity(4 * (n - 1));
        for (t, tree) in Tree::double(n).iter().enumerate() {
            let half = s / 2 + if t == 0 { s % 2 } else { 0 };
            // Ranks deepest first: children send up before their parents.
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by_key(|&r| (std::cmp::Reverse(tree.depth[r]), r));
            // Where in `out` each rank's message up is.
            let mut up: Vec<Option<usize>> = vec![None; n];
            let mut root = None;
            for &r in &order {
                let data: Vec<&Message> = tree.children[r]
                    .iter()
                    .map(|&c| &out[up[c].expect("children send up first")])
                    .collect();
                match tree.parent[r] {
                    Some(p) => {
                        let step = h - tree.depth[r];
                        let m = self.send((iteration, step), (r, p), half, gate[r], &data);
                        up[r] = Some(out.len());
                        out.push(m);
                    }
                    None => root = Some(r),
                }
            }
            // Down, shallowest first: the root once its children's data is in, the others
            // once their parent's message down is.
            let root = root.expect("a tree has a root");
            let mut down: Vec<Option<usize>> = vec![None; n];
            order.reverse();
            for &r in &order {
                let data: Vec<usize> = match down[r] {
                    Some(i) => vec![i],
                    None => {
                        debug_assert_eq!(r, root);
                        tree.children[r].iter().filter_map(|&c| up[c]).collect()
                    }
                };
                for &c in &tree.children[r] {
                    let step = h + tree.depth[r];
                    let from: Vec<&Message> = data.iter().map(|&i| &out[i]).collect();
                    let m = self.send((iteration, step), (r, c), half, gate[r], &from);
                    down[c] = Some(out.len());
                    out.push(m);
                }
            }
        }
        out
    }

    /// Every rank sends chunk j to rank j at once, the next ranks first.
    fn all_to_all(&mut self, iteration: u32, gate: &[Option<u64>]) -> Vec<Message> {
        let n = self.spec.ranks.len();
        let mut out = Vec::with_capacity(n * (n - 1));
        for (r, &gate) in gate.iter().enumerate() {
            for k in 1..n {
                let to = (r + k) % n;
                out.push(self.send((iteration, 0), (r, to), self.spec.chunk(to), gate, &[]));
            }
        }
        out
    }

    /// The two-stage (hierarchical) all-to-all over groups of g consecutive ranks, m = n/g
    /// groups; rank a·g + i is member i of group a. Step 0, inside each group: member i sends
    /// member j everything it has for the members j of all groups (m chunks). Step 1, across
    /// groups: member j of group a, once every message of step 0 into it has arrived, sends
    /// member j of each other group b what its group has for it (g chunks). Each rank sends
    /// g − 1 + m − 1 messages instead of n − 1, larger ones, and rank pairs across groups
    /// are only members of the same index.
    fn staged_all_to_all(&mut self, iteration: u32, gate: &[Option<u64>]) -> Vec<Message> {
        let n = self.spec.ranks.len();
        let g = self.spec.group_size;
        let m = n / g;
        let mut out: Vec<Message> = Vec::new();
        // Where in `out` each rank's messages of step 0 in are.
        let mut into: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (r, &gate_r) in gate.iter().enumerate() {
            let (a, i) = (r / g, r % g);
            for k in 1..g {
                let j = (i + k) % g;
                let bytes = (0..m).map(|b| self.spec.chunk(b * g + j)).sum();
                let msg = self.send((iteration, 0), (r, a * g + j), bytes, gate_r, &[]);
                into[a * g + j].push(out.len());
                out.push(msg);
            }
        }
        for r in 0..n {
            let (a, j) = (r / g, r % g);
            for k in 1..m {
                let b = (a + k) % m;
                let to = b * g + j;
                let data: Vec<&Message> = into[r].iter().map(|&x| &out[x]).collect();
                let bytes = g as u64 * self.spec.chunk(to);
                let msg = self.send((iteration, 1), (r, to), bytes, gate[r], &data);
                out.push(msg);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(op: Op, algorithm: Algorithm, n: u16, bytes: u64) -> CollectiveSpec {
        CollectiveSpec {
            op,
            algorithm,
            ranks: (0..n).map(|i| NodeId(i * 3 + 1)).collect(),
            message_bytes: bytes,
            chunks: 1,
            iterations: 1,
            compute: Dur(0),
            group_size: 0,
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

    #[test]
    fn the_two_trees_are_complementary() {
        // No rank is inner in both trees; every rank is inner in one but, for odd n, rank
        // n − 1 (a leaf in both); nobody has more than two children.
        for n in 2usize..70 {
            let [a, b] = Tree::double(n);
            let inner = |t: &Tree, r: usize| !t.children[r].is_empty();
            for r in 0..n {
                assert!(
                    !(inner(&a, r) && inner(&b, r)),
                    "n={n}: rank {r} inner in both"
                );
                assert!(a.children[r].len() <= 2 && b.children[r].len() <= 2);
            }
            let leaves_both: Vec<usize> =
                (0..n).filter(|&r| !inner(&a, r) && !inner(&b, r)).collect();
            let want = if n % 2 == 0 { vec![] } else { vec![n - 1] };
            assert_eq!(leaves_both, want, "n={n}");
        }
        // Any n: a tree of n − 1 edges, ⌊log2 n⌋ high.
        for n in 2usize..70 {
            for t in Tree::double(n) {
                assert_eq!(t.parent.iter().filter(|p| p.is_none()).count(), 1);
                assert_eq!(t.children.iter().map(Vec::len).sum::<usize>(), n - 1);
                assert_eq!(t.height(), n.ilog2(), "n={n}");
            }
        }
    }

    #[test]
    fn the_double_binary_tree_moves_each_half_up_and_down_every_edge() {
        // Each tree carries S/2 over each of its n − 1 edges twice (up, then down): 2(n−1)·S
        // over the job, as much as a ring's; a rank sends at most 2S (inner with two children
        // in one tree: S/2 up, S down; S/2 up in the other) and at least S − S/2·[root].
        for n in [2u16, 3, 5, 8, 13] {
            let s = spec(
                Op::AllReduce,
                Algorithm::DoubleBinaryTree,
                n,
                1000 * n as u64 + 1,
            );
            let plan = s.build().expect("builds");
            let (out, inn) = traffic(&plan);
            let total: u64 = out.values().sum();
            assert_eq!(total, 2 * (n as u64 - 1) * s.message_bytes, "n={n}");
            assert_eq!(inn.values().sum::<u64>(), total);
            for r in &s.ranks {
                assert!(out[r] <= 2 * s.message_bytes + 1 && inn[r] <= 2 * s.message_bytes + 1);
            }
            assert_eq!(plan.dag.sends() as u128, s.sends());
            let steps = plan
                .places
                .iter()
                .flatten()
                .map(|p| p.step)
                .max()
                .expect("sends");
            assert_eq!(steps + 1, s.steps(), "2 ⌊log2 n⌋ levels");
        }
    }

    #[test]
    fn the_staged_all_to_all_delivers_what_the_direct_one_does_in_two_steps() {
        // Stage 0 keeps traffic inside groups of g, stage 1 pairs only same-index members:
        // a rank sends (g−1)·S/g then (m−1)·S/m, and no send crosses groups at stage 0 or
        // stays in its group at stage 1.
        for (n, g) in [(4u16, 2usize), (8, 2), (8, 4), (12, 3), (12, 4)] {
            let mut s = spec(Op::AllToAll, Algorithm::Staged, n, 120 * n as u64);
            s.group_size = g;
            let plan = s.build().expect("builds");
            let m = n as usize / g;
            let rank = |node: NodeId| s.ranks.iter().position(|&r| r == node).expect("a rank");
            let mut sent = vec![[0u64; 2]; n as usize];
            for t in plan.dag.tasks() {
                if let Work::Send { src, dst, bytes } = t.work {
                    let (a, b) = (rank(src), rank(dst));
                    let step = plan.place(t.id).expect("a send").step as usize;
                    match step {
                        0 => assert_eq!(a / g, b / g, "stage 0 stays in the group"),
                        _ => assert!(a / g != b / g && a % g == b % g, "stage 1 across"),
                    }
                    sent[a][step] += bytes;
                }
            }
            for r in &sent {
                assert_eq!(r[0], (g as u64 - 1) * s.message_bytes / g as u64);
                assert_eq!(r[1], (m as u64 - 1) * s.message_bytes / m as u64);
            }
        }
        let mut s = spec(Op::AllToAll, Algorithm::Staged, 6, 600);
        s.group_size = 4;
        assert_eq!(
            s.validate(),
            Err(CollectiveError::BadGroup { group: 4, ranks: 6 })
        );
    }

    #[test]
    fn chunks_cut_every_message_and_chain_its_pieces() {
        for alg in [
            Algorithm::Ring,
            Algorithm::HalvingDoubling,
            Algorithm::DoubleBinaryTree,
        ] {
            let whole = spec(Op::AllReduce, alg, 8, 80_003);
            let mut cut = whole.clone();
            cut.chunks = 7;
            let (a, b) = (whole.build().expect("builds"), cut.build().expect("builds"));
            assert_eq!(
                traffic(&a),
                traffic(&b),
                "{alg}: the same bytes between the same ranks"
            );
            assert_eq!(b.dag.sends(), 7 * a.dag.sends());
            // Piece k > 0 waits for piece k − 1 of its message (the task just before it).
            for t in b.dag.tasks() {
                let chunk = b.place(t.id).expect("a send").chunk;
                assert_eq!(
                    t.after.contains(&(t.id.wrapping_sub(1))),
                    chunk > 0,
                    "{alg}"
                );
            }
        }
        let mut s = spec(Op::AllReduce, Algorithm::Ring, 4, 4000);
        s.chunks = 1001;
        assert!(matches!(
            s.validate(),
            Err(CollectiveError::MessageTooSmall { chunks: 1001, .. })
        ));
        s.chunks = 0;
        assert_eq!(s.validate(), Err(CollectiveError::NoChunks));
    }

    #[test]
    fn jobs_share_one_graph_each_in_its_own_ids_and_start() {
        let a = spec(Op::AllReduce, Algorithm::Ring, 4, 4000);
        let mut b = spec(Op::AllToAll, Algorithm::Direct, 3, 3000);
        b.ranks = vec![NodeId(100), NodeId(101), NodeId(102)];
        let plan =
            CollectivePlan::of_jobs(&[(a.clone(), Dur(0)), (b.clone(), Dur(7))]).expect("builds");
        assert_eq!(plan.dag.sends() as u128, a.sends() + b.sends());
        let first_b = a.build().expect("builds").places.len() as u64;
        for t in plan.dag.tasks() {
            let p = plan.place(t.id).expect("sends only");
            assert_eq!(p.job, u32::from(t.id >= first_b), "task {}", t.id);
            let Work::Send { src, .. } = t.work else {
                unreachable!()
            };
            assert_eq!(p.job == 1, src.0 >= 100);
            // Job 1's sends wait for nothing but its start (a direct all-to-all).
            if p.job == 1 {
                assert_eq!((t.after.len(), t.delay), (0, Dur(7)));
            }
            assert!(t.after.iter().all(|&d| (d >= first_b) == (t.id >= first_b)));
        }
        let mut bad = b.clone();
        bad.message_bytes = 1;
        let e = CollectivePlan::of_jobs(&[(a, Dur(0)), (bad, Dur(0))]).expect_err("too small");
        assert_eq!(e.0, 1, "names the job");
    }

    #[test]
    fn the_slowest_rank_share_is_its_lead_over_the_median() {
        // A direct all-to-all over 4 ranks: every send takes 10 except those into one rank,
        // which take 30: times 10, 10, 10, 30; share (30 − 10)/30, the slow rank named.
        let s = spec(Op::AllToAll, Algorithm::Direct, 4, 4000);
        let plan = CollectivePlan::of_jobs(&[(s.clone(), Dur(0))]).expect("builds");
        let slow = s.ranks[2];
        let records: Vec<(u64, Time, Option<Time>)> = plan
            .dag
            .tasks()
            .iter()
            .map(|t| {
                let Work::Send { dst, .. } = t.work else {
                    unreachable!()
                };
                (t.id, Time(0), Some(Time(if dst == slow { 30 } else { 10 })))
            })
            .collect();
        let (share, node) = plan.slowest_rank(0, records.clone()).expect("completed");
        assert!((share - 2.0 / 3.0).abs() < 1e-12, "{share}");
        assert_eq!(node, slow);
        assert_eq!(
            plan.iteration_times(0, records.clone()),
            vec![Some(Dur(30))]
        );
        // An undelivered send: no completed iteration, no figure.
        let mut partial = records;
        partial[0].2 = None;
        assert_eq!(plan.slowest_rank(0, partial.clone()), None);
        assert_eq!(plan.iteration_times(0, partial), vec![None]);
    }
}
