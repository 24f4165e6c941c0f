//! Dependency-driven flows run against a toy fabric: every send released exactly once, never
//! before its dependencies' finishes plus its delay, the same graph giving the same order; bad
//! graphs refused by name.

use proptest::prelude::*;
use shoal_base::{Dur, NodeId, Time};
use shoal_workload::FlowSource;
use shoal_workload::dag::{Dag, DagError, DagSource, Task, Work};
use std::collections::BTreeSet;

/// A fabric in which each flow takes its own time, independent of the others: `1 + bytes % 97`
/// nanoseconds. Returns every flow handed out, in order, with the time it was handed out.
fn run(source: &mut DagSource) -> Vec<(u64, Time, Time)> {
    let mut now = Time::ZERO;
    let mut flying: BTreeSet<(Time, u64, NodeId)> = BTreeSet::new();
    let mut out = Vec::new();
    loop {
        while let Some(f) = source.next_due(now) {
            assert!(f.start <= now, "flow {} handed out before its start", f.id);
            let done = now + Dur((1 + f.bytes % 97) * 1000);
            flying.insert((done, f.id, f.src));
            out.push((f.id, f.start, now));
        }
        let next = [flying.first().map(|e| e.0), source.next_start()]
            .into_iter()
            .flatten()
            .min();
        let Some(next) = next else { break };
        assert!(next >= now, "time went back");
        now = next;
        while let Some(&(t, id, src)) = flying.first().filter(|e| e.0 <= now) {
            flying.pop_first();
            source.on_complete(id, src, t);
        }
    }
    assert!(source.is_exhausted());
    out
}

/// A random acyclic graph: task k may wait for tasks placed before it; ids are a scrambled
/// permutation so that their order says nothing.
fn graph() -> impl Strategy<Value = Vec<Task>> {
    (1usize..40).prop_flat_map(|n| {
        let task = (
            0u16..6,
            1u16..6,
            0u64..5000,
            proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
            0u64..3,
            any::<bool>(),
        );
        proptest::collection::vec(task, n).prop_map(|raw| {
            let id = |k: usize| (k as u64 * 7919 + 13) % 100_003;
            raw.into_iter()
                .enumerate()
                .map(|(k, (src, hop, bytes, deps, delay_ns, compute))| {
                    let mut after: Vec<u64> = if k == 0 {
                        Vec::new()
                    } else {
                        deps.iter().map(|d| id(d.index(k))).collect()
                    };
                    after.sort_unstable();
                    after.dedup();
                    let src = NodeId(src);
                    let work = if compute {
                        Work::Compute { node: src }
                    } else {
                        Work::Send {
                            src,
                            dst: NodeId((src.0 + hop) % 6),
                            bytes,
                        }
                    };
                    Task {
                        id: id(k),
                        work,
                        after,
                        delay: Dur(delay_ns * 1500),
                    }
                })
                .collect()
        })
    })
}

proptest! {
    #[test]
    fn sends_start_after_their_dependencies_once_each_and_in_a_fixed_order(tasks in graph()) {
        let start = Time(3_000);
        let dag = Dag::new(tasks.clone()).expect("acyclic by construction");
        let mut source = DagSource::new(dag.clone(), start);
        let out = run(&mut source);

        let sends: BTreeSet<u64> = tasks
            .iter()
            .filter(|t| matches!(t.work, Work::Send { .. }))
            .map(|t| t.id)
            .collect();
        let released: Vec<u64> = out.iter().map(|o| o.0).collect();
        let once: BTreeSet<u64> = released.iter().copied().collect();
        prop_assert_eq!(released.len(), once.len(), "a send was released twice");
        prop_assert_eq!(&once, &sends, "every send is released");

        let mut last = Time::ZERO;
        for &(id, flow_start, _) in &out {
            prop_assert!(flow_start >= last, "starts go back at {}", id);
            last = flow_start;
            let t = dag.task(id).expect("a task of the graph");
            let ready = t
                .after
                .iter()
                .map(|d| source.finished_at(*d).expect("a dependency finished before its dependent started"))
                .max()
                .unwrap_or(start);
            prop_assert!(
                flow_start >= ready + t.delay,
                "send {} starts at {} before its dependencies' {} plus its delay {}",
                id, flow_start, ready, t.delay
            );
        }
        // Compute steps finish exactly their duration after their dependencies.
        for t in tasks.iter().filter(|t| matches!(t.work, Work::Compute { .. })) {
            let ready = t.after.iter().map(|d| source.finished_at(*d).expect("finished")).max().unwrap_or(start);
            prop_assert_eq!(source.finished_at(t.id), Some(ready + t.delay));
        }

        // The same graph gives the same flows in the same order at the same times.
        let again = run(&mut DagSource::new(Dag::new(tasks).expect("acyclic"), start));
        prop_assert_eq!(out, again);
    }
}

fn send(id: u64, after: Vec<u64>) -> Task {
    Task::send(id, NodeId(0), NodeId(1), 100, after)
}

#[test]
fn a_chain_waits_for_each_delivery_and_its_delay() {
    let mut tasks = vec![send(10, vec![]), send(20, vec![10])];
    tasks[1].delay = Dur(5_000);
    tasks.push(Task::compute(30, NodeId(1), Dur(7_000), vec![20]));
    tasks.push(send(40, vec![30]));
    let mut s = DagSource::new(Dag::new(tasks).expect("a chain"), Time(1_000));
    assert_eq!(s.next_start(), Some(Time(1_000)));
    let f = s.next_due(Time(1_000)).expect("the root");
    assert_eq!((f.id, f.start), (10, Time(1_000)));
    assert_eq!(s.next_due(Time(50_000)), None, "20 waits for 10's delivery");
    s.on_complete(10, NodeId(0), Time(60_000));
    assert_eq!(s.next_start(), Some(Time(65_000)));
    assert_eq!(s.next_due(Time(64_999)), None);
    assert_eq!(s.next_due(Time(65_000)).map(|f| f.id), Some(20));
    s.on_complete(20, NodeId(0), Time(70_000));
    // The compute step ends 7 us later; the send after it is due then.
    assert_eq!(s.next_start(), Some(Time(77_000)));
    assert!(!s.is_exhausted());
    let f = s.next_due(Time(77_000)).expect("after the compute step");
    assert_eq!((f.id, f.start), (40, Time(77_000)));
    assert_eq!(s.finished_at(30), Some(Time(77_000)));
    assert!(s.is_exhausted());
}

#[test]
fn bad_graphs_are_refused_by_name() {
    assert_eq!(
        Dag::new(vec![send(1, vec![]), send(1, vec![])]).err(),
        Some(DagError::Duplicate(1))
    );
    assert_eq!(
        Dag::new(vec![send(1, vec![2])]).err(),
        Some(DagError::Unknown { task: 1, dep: 2 })
    );
    assert_eq!(
        Dag::new(vec![send(1, vec![]), send(2, vec![1, 1])]).err(),
        Some(DagError::RepeatedDep { task: 2, dep: 1 })
    );
    assert_eq!(
        Dag::new(vec![Task::send(5, NodeId(3), NodeId(3), 1, vec![])]).err(),
        Some(DagError::SameEnds { task: 5, node: 3 })
    );
    assert_eq!(
        Dag::new(vec![send(1, vec![1])]).err(),
        Some(DagError::Cycle(vec![1]))
    );
    let cyclic = vec![
        send(0, vec![]),
        send(1, vec![0, 3]),
        send(2, vec![1]),
        send(3, vec![2]),
    ];
    let err = Dag::new(cyclic).expect_err("1 -> 3 -> 2 -> 1");
    let DagError::Cycle(ids) = &err else {
        panic!("{err}")
    };
    let set: BTreeSet<u64> = ids.iter().copied().collect();
    assert_eq!(set, BTreeSet::from([1, 2, 3]));
    assert!(err.to_string().contains("cycle"), "{err}");
}
