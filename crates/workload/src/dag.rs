//! Dependency-driven flows: a directed acyclic graph of tasks, each a send (bytes from one node
//! to another, run by the fabric) or a compute step (a node busy for a while, no bytes moved),
//! released when every task it depends on has finished, plus its own delay. A send finishes when
//! the fabric reports its last byte delivered ([`FlowSource::on_complete`]); a compute step
//! finishes its delay after its dependencies, without the fabric. This generalises the closed
//! loop: every fabric that runs one runs a graph, with no code of its own.
//!
//! Deterministic: tasks due at the same time are handed out in the order of their place in the
//! graph, whatever the order of the completions that released them.

use crate::flow::Flow;
use crate::source::FlowSource;
use shoal_base::{Dur, NodeId, Time};
use std::collections::{BTreeMap, BTreeSet};
use thiserror::Error;

/// What a task does once released.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// `bytes` from `src` to `dst`, a flow of the fabric.
    Send {
        src: NodeId,
        dst: NodeId,
        bytes: u64,
    },
    /// Node `node` computes: the task finishes its delay after its release, off the fabric.
    Compute { node: NodeId },
}

/// One task of a graph: released at the latest finish of the tasks `after` names (or at the
/// graph's start when it names none) plus `delay`. For a compute step the delay is its
/// duration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    pub id: u64,
    pub work: Work,
    pub after: Vec<u64>,
    pub delay: Dur,
}

impl Task {
    /// A send of `bytes` from `src` to `dst` after the tasks `after`, with no delay.
    pub fn send(id: u64, src: NodeId, dst: NodeId, bytes: u64, after: Vec<u64>) -> Task {
        Task {
            id,
            work: Work::Send { src, dst, bytes },
            after,
            delay: Dur(0),
        }
    }

    /// Node `node` computing for `duration` after the tasks `after`.
    pub fn compute(id: u64, node: NodeId, duration: Dur, after: Vec<u64>) -> Task {
        Task {
            id,
            work: Work::Compute { node },
            after,
            delay: duration,
        }
    }
}

/// A graph that cannot be run.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum DagError {
    #[error("task id {0} is given twice")]
    Duplicate(u64),
    #[error("task {task} depends on task {dep}, which the graph does not hold")]
    Unknown { task: u64, dep: u64 },
    #[error("task {task} names task {dep} twice among its dependencies")]
    RepeatedDep { task: u64, dep: u64 },
    #[error("send {task} goes from node {node} to itself")]
    SameEnds { task: u64, node: u16 },
    #[error("the dependencies form a cycle: {}", cycle_text(.0))]
    Cycle(Vec<u64>),
    #[error("more than {} tasks", u32::MAX)]
    TooLarge,
}

fn cycle_text(ids: &[u64]) -> String {
    let mut parts: Vec<String> = ids.iter().map(u64::to_string).collect();
    if let Some(first) = ids.first() {
        parts.push(first.to_string());
    }
    format!("{} (each waits for the one after it)", parts.join(" -> "))
}

/// A checked graph: ids unique, dependencies known and acyclic, sends between two nodes.
#[derive(Clone, Debug)]
pub struct Dag {
    tasks: Vec<Task>,
    /// For each task (by place), the places of the tasks that wait for it.
    dependents: Vec<Vec<u32>>,
    /// For each task, how many tasks it waits for.
    waits: Vec<u32>,
    index: BTreeMap<u64, u32>,
    sends: u64,
}

impl Dag {
    /// Checks `tasks` and builds the graph.
    pub fn new(tasks: Vec<Task>) -> Result<Dag, DagError> {
        if tasks.len() > u32::MAX as usize {
            return Err(DagError::TooLarge);
        }
        let mut index = BTreeMap::new();
        for (i, t) in tasks.iter().enumerate() {
            if index.insert(t.id, i as u32).is_some() {
                return Err(DagError::Duplicate(t.id));
            }
            if let Work::Send { src, dst, .. } = t.work
                && src == dst
            {
                return Err(DagError::SameEnds {
                    task: t.id,
                    node: src.0,
                });
            }
        }
        let mut dependents = vec![Vec::new(); tasks.len()];
        let mut waits = vec![0u32; tasks.len()];
        for (i, t) in tasks.iter().enumerate() {
            let mut seen = BTreeSet::new();
            for &dep in &t.after {
                let Some(&d) = index.get(&dep) else {
                    return Err(DagError::Unknown { task: t.id, dep });
                };
                if !seen.insert(dep) {
                    return Err(DagError::RepeatedDep { task: t.id, dep });
                }
                dependents[d as usize].push(i as u32);
                waits[i] += 1;
            }
        }
        let sends = tasks
            .iter()
            .filter(|t| matches!(t.work, Work::Send { .. }))
            .count() as u64;
        let dag = Dag {
            tasks,
            dependents,
            waits,
            index,
            sends,
        };
        dag.check_acyclic()?;
        Ok(dag)
    }

    /// Kahn's order: every task is reached iff the graph has no cycle; otherwise one cycle
    /// among the unreached tasks is named.
    fn check_acyclic(&self) -> Result<(), DagError> {
        let mut left = self.waits.clone();
        let mut ready: Vec<u32> = (0..self.tasks.len() as u32)
            .filter(|&i| left[i as usize] == 0)
            .collect();
        let mut reached = 0;
        while let Some(i) = ready.pop() {
            reached += 1;
            for &d in &self.dependents[i as usize] {
                left[d as usize] -= 1;
                if left[d as usize] == 0 {
                    ready.push(d);
                }
            }
        }
        if reached == self.tasks.len() {
            return Ok(());
        }
        // Every unreached task waits for an unreached one: walk back until a task repeats.
        let mut at = left.iter().position(|&l| l > 0).expect("an unreached task") as u32;
        let mut order: Vec<u32> = Vec::new();
        let mut place: BTreeMap<u32, usize> = BTreeMap::new();
        loop {
            if let Some(&p) = place.get(&at) {
                let cycle = order[p..]
                    .iter()
                    .map(|&i| self.tasks[i as usize].id)
                    .collect();
                return Err(DagError::Cycle(cycle));
            }
            place.insert(at, order.len());
            order.push(at);
            let t = &self.tasks[at as usize];
            at = t
                .after
                .iter()
                .map(|dep| self.index[dep])
                .find(|&d| left[d as usize] > 0)
                .expect("an unreached task waits for an unreached one");
        }
    }

    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// Sends in the graph (the flows a run of it hands to the fabric).
    pub fn sends(&self) -> u64 {
        self.sends
    }

    /// The task with id `id`.
    pub fn task(&self, id: u64) -> Option<&Task> {
        self.index.get(&id).map(|&i| &self.tasks[i as usize])
    }
}

/// A graph run as a [`FlowSource`]: tasks that wait for nothing are released at `start` (plus
/// their delay); each finish releases the tasks waiting only for it. Flows carry their task's
/// id. A completion reported earlier than a flow already handed out (a fabric that reports
/// within its step) starts what it releases no earlier than that flow, so starts never go
/// back; a start is never earlier than its dependencies' finishes plus its delay.
pub struct DagSource {
    dag: Dag,
    /// Tasks each task still waits for.
    left: Vec<u32>,
    /// The latest finish among the tasks each task waited for so far.
    ready_at: Vec<Time>,
    /// Released tasks not yet handed out (sends) or finished (compute), by (time, place).
    queue: BTreeSet<(Time, u32)>,
    finish: Vec<Option<Time>>,
    handed_out: u64,
    last_start: Time,
}

impl DagSource {
    pub fn new(dag: Dag, start: Time) -> DagSource {
        let n = dag.tasks.len();
        let mut queue = BTreeSet::new();
        for (i, t) in dag.tasks.iter().enumerate() {
            if dag.waits[i] == 0 {
                queue.insert((start + t.delay, i as u32));
            }
        }
        DagSource {
            left: dag.waits.clone(),
            ready_at: vec![start; n],
            queue,
            finish: vec![None; n],
            handed_out: 0,
            last_start: start,
            dag,
        }
    }

    pub fn dag(&self) -> &Dag {
        &self.dag
    }

    /// When task `id` finished (a send: its last byte delivered; a compute step: its end), if
    /// it has.
    pub fn finished_at(&self, id: u64) -> Option<Time> {
        self.dag
            .index
            .get(&id)
            .and_then(|&i| self.finish[i as usize])
    }

    /// Sends handed to the fabric so far.
    pub fn handed_out(&self) -> u64 {
        self.handed_out
    }

    fn finished(&mut self, i: u32, at: Time) {
        if self.finish[i as usize].is_some() {
            return;
        }
        self.finish[i as usize] = Some(at);
        for k in 0..self.dag.dependents[i as usize].len() {
            let d = self.dag.dependents[i as usize][k] as usize;
            self.ready_at[d] = self.ready_at[d].max(at);
            self.left[d] -= 1;
            if self.left[d] == 0 {
                let release = self.ready_at[d] + self.dag.tasks[d].delay;
                self.queue.insert((release, d as u32));
            }
        }
    }
}

impl FlowSource for DagSource {
    fn next_due(&mut self, now: Time) -> Option<Flow> {
        loop {
            let &(at, i) = self.queue.first().filter(|(at, _)| *at <= now)?;
            self.queue.pop_first();
            let t = &self.dag.tasks[i as usize];
            match t.work {
                Work::Compute { .. } => self.finished(i, at),
                Work::Send { src, dst, bytes } => {
                    let start = at.max(self.last_start);
                    self.last_start = start;
                    self.handed_out += 1;
                    return Some(Flow {
                        id: t.id,
                        src,
                        dst,
                        bytes,
                        start,
                        class: 0,
                    });
                }
            }
        }
    }

    fn next_start(&mut self) -> Option<Time> {
        self.queue.first().map(|&(at, _)| at.max(self.last_start))
    }

    fn is_exhausted(&mut self) -> bool {
        self.handed_out == self.dag.sends
    }

    fn on_complete(&mut self, id: u64, _src: NodeId, at: Time) {
        let Some(&i) = self.dag.index.get(&id) else {
            return;
        };
        if matches!(self.dag.tasks[i as usize].work, Work::Send { .. }) {
            self.finished(i, at);
        }
    }
}
