//! Chakra execution traces imported as dependency graphs: small traces encoded here with the
//! crate's own messages, checked against graphs written out by hand from the mapping the
//! module documents; one file written byte by byte from the protobuf wire format, to check the
//! field numbers; random valid traces, run on a toy fabric, releasing every send after its
//! dependencies; bad traces refused with the file, the node and the reason.

use proptest::prelude::*;
use shoal_base::{Dur, NodeId, Time};
use shoal_workload::FlowSource;
use shoal_workload::chakra::schema::{
    AttributeProto, GlobalMetadata, Node, Value, comm_type, decode_file, encode_file, node_type,
};
use shoal_workload::chakra::{self, ChakraError, CtrlDeps, Imported, import};
use shoal_workload::dag::{DagSource, Task, Work};
use std::collections::{BTreeMap, BTreeSet};

fn node(id: u64, kind: i32, deps: &[u64]) -> Node {
    Node {
        id,
        name: format!("n{id}"),
        r#type: kind,
        data_deps: deps.to_vec(),
        ..Node::default()
    }
}

fn comp(id: u64, us: u64, deps: &[u64]) -> Node {
    Node {
        duration_micros: us,
        ..node(id, node_type::COMP, deps)
    }
}

fn send(id: u64, to: i32, bytes: i64, deps: &[u64]) -> Node {
    let mut n = node(id, node_type::COMM_SEND, deps);
    n.attr = vec![
        AttributeProto::int32("comm_dst", to),
        AttributeProto::int64("comm_size", bytes),
    ];
    n
}

fn recv(id: u64, from: i32, deps: &[u64]) -> Node {
    let mut n = node(id, node_type::COMM_RECV, deps);
    n.attr = vec![AttributeProto::int32("comm_src", from)];
    n
}

fn coll(id: u64, op: i64, bytes: i64, deps: &[u64]) -> Node {
    let mut n = node(id, node_type::COMM_COLL, deps);
    n.attr = vec![
        AttributeProto::int64("comm_type", op),
        AttributeProto::int64("comm_size", bytes),
    ];
    n
}

fn files(ranks: Vec<Vec<Node>>) -> Vec<(String, Vec<Node>)> {
    ranks
        .into_iter()
        .enumerate()
        .map(|(r, n)| (format!("t.{r}.et"), n))
        .collect()
}

fn on(n: usize) -> Vec<NodeId> {
    (0..n as u16).map(NodeId).collect()
}

fn import_ok(ranks: Vec<Vec<Node>>) -> Imported {
    let n = ranks.len();
    import(files(ranks), &on(n), CtrlDeps::Order).expect("a valid trace")
}

fn import_err(ranks: Vec<Vec<Node>>) -> String {
    let n = ranks.len();
    import(files(ranks), &on(n), CtrlDeps::Order)
        .expect_err("refused")
        .to_string()
}

#[test]
fn two_ranks_exchanging_sends_and_a_compute_chain_become_the_graph_written_out() {
    // Rank 0 computes 3 µs, sends 1000 B to rank 1, receives 500 B back, computes 2 µs.
    // Rank 1 posts its receive at once, computes 4 µs after it, replies.
    let r0 = vec![
        comp(10, 3, &[]),
        send(11, 1, 1000, &[10]),
        recv(12, 1, &[11]),
        comp(13, 2, &[12]),
    ];
    let mut r1 = vec![
        recv(20, 0, &[]),
        comp(21, 4, &[20]),
        send(22, 0, 500, &[21]),
    ];
    // A control dependency given also as a data dependency counts once.
    r1[2].ctrl_deps = vec![21];
    let got = import_ok(vec![r0, r1]);
    // Ids in the order met, rank 0 first, file order: 10 → 0, the pair 11/20 → 1,
    // the pair 22/12 → 2, 13 → 3; rank 1: 20 is pair 1, 21 → 4, 22 is pair 2.
    let (n0, n1) = (NodeId(0), NodeId(1));
    let want = vec![
        Task::compute(0, n0, Dur(3_000_000), vec![]),
        Task::send(1, n0, n1, 1000, vec![0]),
        Task::send(2, n1, n0, 500, vec![1, 4]),
        Task::compute(3, n0, Dur(2_000_000), vec![2]),
        Task::compute(4, n1, Dur(4_000_000), vec![1]),
    ];
    assert_eq!(got.dag.tasks(), want.as_slice());
    assert_eq!(
        got.origin,
        vec![(0, 10), (0, 11), (1, 22), (0, 13), (1, 21)]
    );
    // On a fabric delivering every send in 1 µs: 3 + 1 + 4 + 1 + 2.
    let finish = run(&got, |_| Dur(1_000_000));
    assert_eq!(finish[&3], Time(11_000_000));
}

#[test]
fn a_collective_node_expands_over_every_rank_between_entry_and_exit_steps() {
    // Two ranks, an all-reduce of 1000 B: the ring's two steps of 500 B each way.
    let trace = |r: u64| {
        vec![
            comp(1, 2 + r, &[]),
            coll(2, comm_type::ALL_REDUCE, 1000, &[1]),
            comp(3, 1, &[2]),
        ]
    };
    let got = import_ok(vec![trace(0), trace(1)]);
    let t = got.dag.tasks();
    // 0: rank 0's compute; 1-2: entries; 3-6: the ring's sends; 7-8: exits; 9: rank 0's last
    // compute; 10, 11: rank 1's computes.
    assert_eq!(t.len(), 12);
    assert_eq!(t[1], Task::compute(1, NodeId(0), Dur(0), vec![0]));
    assert_eq!(t[2], Task::compute(2, NodeId(1), Dur(0), vec![10]));
    let sends: Vec<&Task> = t[3..7].iter().collect();
    let mut ends: Vec<(u16, u16, u64)> = sends
        .iter()
        .map(|s| match s.work {
            Work::Send { src, dst, bytes } => (src.0, dst.0, bytes),
            Work::Compute { .. } => panic!("a send"),
        })
        .collect();
    ends.sort_unstable();
    assert_eq!(
        ends,
        vec![(0, 1, 500), (0, 1, 500), (1, 0, 500), (1, 0, 500)]
    );
    for s in &sends {
        // Every send waits for both ranks to have entered.
        assert!(s.after.contains(&1) && s.after.contains(&2), "{s:?}");
    }
    // Step 2's sends forward what step 1 delivered to their sender.
    let second: Vec<&&Task> = sends.iter().filter(|s| s.after.len() > 2).collect();
    assert_eq!(second.len(), 2);
    for s in second {
        let Work::Send { src, .. } = s.work else {
            unreachable!()
        };
        let into_src = sends.iter().any(|p| {
            matches!(p.work, Work::Send { dst, .. } if dst == src) && s.after.contains(&p.id)
        });
        assert!(into_src, "{s:?}");
    }
    assert_eq!(t[7], Task::compute(7, NodeId(0), Dur(0), vec![3, 4, 5, 6]));
    assert_eq!(t[8], Task::compute(8, NodeId(1), Dur(0), vec![3, 4, 5, 6]));
    assert_eq!(t[9], Task::compute(9, NodeId(0), Dur(1_000_000), vec![7]));
    assert_eq!(t[10], Task::compute(10, NodeId(1), Dur(3_000_000), vec![]));
    assert_eq!(t[11], Task::compute(11, NodeId(1), Dur(1_000_000), vec![8]));
    // 1 µs a send: rank 1 enters at 3 µs, two steps, 1 µs of compute.
    let finish = run(&got, |_| Dur(1_000_000));
    assert_eq!(finish[&9], Time(6_000_000));
    assert_eq!(finish[&11], Time(6_000_000));
}

#[test]
fn host_side_nodes_compute_and_control_dependencies_may_be_ignored() {
    let cpu = |mut n: Node, us: u64| {
        n.duration_micros = us;
        n.attr.push(AttributeProto {
            name: "is_cpu_op".to_owned(),
            value: Some(Value::Bool(true)),
        });
        n
    };
    // A host-side collective (no comm_type: the CPU half of a PyTorch collective) computes;
    // a control dependency on the parent operation, absent from the file, is refused unless
    // control dependencies are ignored.
    let trace = || {
        let mut c = cpu(node(2, node_type::COMM_COLL, &[]), 6);
        c.ctrl_deps = vec![99];
        vec![vec![c, send(3, 1, 10, &[2])], vec![recv(1, 0, &[])]]
    };
    let e = import(files(trace()), &on(2), CtrlDeps::Order).expect_err("node 99 is absent");
    assert!(
        e.to_string().contains("t.0.et: node 2: depends on node 99"),
        "{e}"
    );
    let got = import(files(trace()), &on(2), CtrlDeps::Ignore).expect("ignored");
    assert_eq!(
        got.dag.tasks(),
        &[
            Task::compute(0, NodeId(0), Dur(6_000_000), vec![]),
            Task::send(1, NodeId(0), NodeId(1), 10, vec![0]),
        ]
    );
}

#[test]
fn a_process_group_runs_over_the_ranks_that_name_it() {
    let g = |n: Node| {
        let mut n = n;
        n.attr.push(AttributeProto::string("pg_name", "tp"));
        n
    };
    let got = import_ok(vec![
        vec![g(coll(1, comm_type::ALL_GATHER, 300, &[]))],
        vec![comp(1, 1, &[])],
        vec![g(coll(1, comm_type::ALL_GATHER, 300, &[]))],
    ]);
    let pairs: BTreeSet<(u16, u16)> = got
        .dag
        .tasks()
        .iter()
        .filter_map(|t| match t.work {
            Work::Send { src, dst, .. } => Some((src.0, dst.0)),
            Work::Compute { .. } => None,
        })
        .collect();
    assert_eq!(pairs, BTreeSet::from([(0, 2), (2, 0)]));
}

#[test]
fn tags_match_sends_to_receives_and_untagged_ones_go_in_order() {
    let tagged = |mut n: Node, tag: i32| {
        n.attr.push(AttributeProto::int32("comm_tag", tag));
        n
    };
    // Rank 0 sends tag 7 (100 B) then tag 8 (200 B) then two untagged (1, 2 B); rank 1
    // receives tag 8 first, then the untagged in order, then tag 7.
    let got = import_ok(vec![
        vec![
            tagged(send(1, 1, 100, &[]), 7),
            tagged(send(2, 1, 200, &[]), 8),
            send(3, 1, 1, &[]),
            send(4, 1, 2, &[]),
        ],
        vec![
            tagged(recv(1, 0, &[]), 8),
            recv(2, 0, &[1]),
            recv(3, 0, &[2]),
            tagged(recv(4, 0, &[3]), 7),
        ],
    ]);
    let t = got.dag.tasks();
    let bytes = |id: usize| match t[id].work {
        Work::Send { bytes, .. } => bytes,
        Work::Compute { .. } => 0,
    };
    // Rank 0's sends are met first: ids 0..4 in its order.
    assert_eq!((0..4).map(bytes).collect::<Vec<_>>(), vec![100, 200, 1, 2]);
    // Receive 2 (untagged, first) after receive 1 (tag 8): send 3 waits for send 2.
    assert_eq!(t[2].after, vec![1]);
    assert_eq!(t[3].after, vec![2]);
    assert_eq!(t[0].after, vec![3]);
}

/// The fabric `took` gives each flow its own time; the finish of every task, by id.
fn run(imported: &Imported, took: impl Fn(u64) -> Dur) -> BTreeMap<u64, Time> {
    let mut source = DagSource::new(imported.dag.clone(), Time::ZERO);
    let mut now = Time::ZERO;
    let mut flying: BTreeSet<(Time, u64, NodeId)> = BTreeSet::new();
    loop {
        while let Some(f) = source.next_due(now) {
            flying.insert((now + took(f.bytes), f.id, f.src));
        }
        let next = [flying.first().map(|e| e.0), source.next_start()]
            .into_iter()
            .flatten()
            .min();
        let Some(next) = next else { break };
        now = next;
        while let Some(&(t, id, src)) = flying.first().filter(|e| e.0 <= now) {
            flying.pop_first();
            source.on_complete(id, src, t);
        }
    }
    assert!(source.is_exhausted());
    imported
        .dag
        .tasks()
        .iter()
        .map(|t| (t.id, source.finished_at(t.id).expect("every task finished")))
        .collect()
}

#[test]
fn a_file_written_byte_by_byte_decodes_to_the_schemas_fields() {
    #[rustfmt::skip]
    let bytes: Vec<u8> = vec![
        // GlobalMetadata { version (1, string) = "1" }, framed by its length 3.
        0x03, 0x0a, 0x01, b'1',
        // Node, 10 bytes: id (1) = 5, type (3) = COMP (4), duration_micros (7) = 7, and
        // inputs (8, an IOInfo: not declared here) = { values = "" }, which must be skipped.
        0x0a, 0x08, 0x05, 0x18, 0x04, 0x38, 0x07, 0x42, 0x02, 0x0a, 0x00,
        // Node, 39 bytes: id = 6, type = COMM_SEND (5), data_deps (5, packed) = [5],
        // ctrl_deps (4, unpacked) = [5], attr (10) = { name (1) = "comm_dst",
        // int32_val (7) = 1 }, attr = { name = "comm_size", int64_val (9) = 300 }.
        0x27, 0x08, 0x06, 0x18, 0x05, 0x2a, 0x01, 0x05, 0x20, 0x05,
        0x52, 0x0c, 0x0a, 0x08, b'c', b'o', b'm', b'm', b'_', b'd', b's', b't', 0x38, 0x01,
        0x52, 0x0e, 0x0a, 0x09, b'c', b'o', b'm', b'm', b'_', b's', b'i', b'z', b'e',
        0x48, 0xac, 0x02,
    ];
    let (meta, nodes) = decode_file(&bytes).expect("a well-formed file");
    assert_eq!(meta.version, "1");
    assert_eq!(nodes.len(), 2);
    assert_eq!(
        (nodes[0].id, nodes[0].r#type, nodes[0].duration_micros),
        (5, node_type::COMP, 7)
    );
    let n = &nodes[1];
    assert_eq!((n.id, n.r#type), (6, node_type::COMM_SEND));
    assert_eq!(
        (n.data_deps.clone(), n.ctrl_deps.clone()),
        (vec![5], vec![5])
    );
    assert_eq!(n.attr[0].name, "comm_dst");
    assert_eq!(n.attr[0].value, Some(Value::Int32(1)));
    assert_eq!(n.attr[1].name, "comm_size");
    assert_eq!(n.attr[1].value, Some(Value::Int64(300)));
    // The crate's own encoder frames the same way (a Node's fields in tag order: the
    // declared ones only, so without the unknown `inputs`).
    let again = encode_file(&meta, &nodes[1..]);
    assert_eq!(&again[..4], &bytes[..4]);
    // Truncated and compressed files are refused with their offset.
    let e = decode_file(&bytes[..bytes.len() - 1]).expect_err("truncated");
    assert_eq!(e.offset, 15);
    assert!(e.reason.contains("truncated"), "{}", e.reason);
    assert!(
        decode_file(&[0x1f, 0x8b, 0, 0])
            .expect_err("gzip")
            .reason
            .contains("gunzip")
    );
}

#[test]
fn bad_traces_are_refused_with_the_file_the_node_and_the_reason() {
    let cases: Vec<(Vec<Vec<Node>>, &str)> = vec![
        (
            vec![vec![send(1, 1, 10, &[9])], vec![recv(1, 0, &[])]],
            "t.0.et: node 1: depends on node 9, which the file does not hold",
        ),
        (
            vec![vec![send(1, 1, 10, &[])], vec![comp(1, 1, &[])]],
            "t.0.et: node 1: a send to rank 1 (no tag) with no matching receive",
        ),
        (
            vec![vec![comp(1, 1, &[])], vec![recv(4, 0, &[])]],
            "t.1.et: node 4: a receive from rank 0 (no tag) with no matching send",
        ),
        (
            vec![
                vec![send(1, 1, 10, &[2]), recv(2, 1, &[])],
                vec![send(1, 0, 10, &[2]), recv(2, 0, &[])],
            ],
            "cycle",
        ),
        (
            vec![vec![coll(1, 9, 10, &[])], vec![coll(1, 9, 10, &[])]],
            "t.0.et: node 1: comm_type 9 (BARRIER) is not supported",
        ),
        (
            vec![vec![comp(1, 1, &[1])], vec![comp(1, 1, &[])]],
            "t.0.et: node 1: the node depends on itself",
        ),
        (
            vec![vec![comp(1, 1, &[]), comp(1, 1, &[])], vec![]],
            "t.0.et: node 1: the id is given twice",
        ),
        (
            vec![vec![send(1, 5, 10, &[])], vec![]],
            "t.0.et: node 1: attribute comm_dst = 5 names no rank",
        ),
        (vec![vec![send(1, 0, 10, &[])], vec![]], "node's own rank"),
        (
            vec![vec![coll(1, 0, 100, &[])], vec![]],
            "t.0.et: node 1: collective 1 with no pg_name in this file has no counterpart in \
             t.1.et",
        ),
        (
            vec![vec![coll(1, 0, 100, &[])], vec![coll(7, 0, 200, &[])]],
            "t.1.et: node 7: collective 1 with no pg_name is all-reduce of 200 B here",
        ),
        (
            vec![vec![comp(1, 2_000_000, &[])], vec![]],
            "t.0.et: node 1: duration_micros = 2000000",
        ),
        (vec![vec![comp(1, 1, &[])], vec![]], "nothing to run"),
    ];
    for (ranks, want) in cases {
        let e = import_err(ranks);
        assert!(e.contains(want), "want {want:?}, got {e:?}");
    }
    // The cycle is named by its nodes.
    let e = import_err(vec![
        vec![send(1, 1, 10, &[2]), recv(2, 1, &[])],
        vec![send(1, 0, 10, &[2]), recv(2, 0, &[])],
    ]);
    assert!(
        e.contains("t.0.et node 1") && e.contains("t.1.et node 1"),
        "{e}"
    );
    // Two ranks on one node.
    let e = import(
        files(vec![vec![], vec![]]),
        &[NodeId(3), NodeId(3)],
        CtrlDeps::Order,
    )
    .expect_err("refused");
    assert!(e.to_string().contains("both placed on node 3"), "{e}");
    // A missing trace file names the one expected.
    let e = chakra::files(std::path::Path::new("/nonexistent/x")).expect_err("no file");
    assert!(matches!(e, ChakraError::Files { .. }));
    assert!(e.to_string().contains("/nonexistent/x.0.et"), "{e}");
}

/// One operation of a random trace, in a global order every rank agrees with.
#[derive(Clone, Debug)]
enum Op {
    Compute {
        rank: usize,
        us: u64,
    },
    Memory {
        rank: usize,
    },
    Message {
        from: usize,
        hop: usize,
        bytes: i64,
        tag: Option<i32>,
    },
    AllReduce {
        bytes: i64,
    },
}

/// An operation's nodes as (rank, id), and whether it is a point-to-point message (a send
/// node then its receive).
type Made = (bool, Vec<(usize, u64)>);

/// Random valid traces: each operation's nodes depend on nodes already on their rank, so
/// every dependency points back in one global order and no rank waits for ever. Returns the
/// traces and, per operation, its nodes as (rank, id).
fn trace() -> impl Strategy<Value = (Vec<Vec<Node>>, Vec<Made>)> {
    let op = prop_oneof![
        (0usize..4, 0u64..20).prop_map(|(rank, us)| Op::Compute { rank, us }),
        (0usize..4).prop_map(|rank| Op::Memory { rank }),
        (
            0usize..4,
            0usize..3,
            1i64..5000,
            proptest::option::of(0i32..3)
        )
            .prop_map(|(from, hop, bytes, tag)| Op::Message {
                from,
                hop,
                bytes,
                tag
            }),
        (8i64..9000).prop_map(|bytes| Op::AllReduce { bytes }),
    ];
    (
        2usize..5,
        proptest::collection::vec(
            (
                op,
                proptest::collection::vec(any::<prop::sample::Index>(), 0..3),
                any::<bool>(),
            ),
            1..30,
        ),
    )
        .prop_map(|(n, ops)| {
            let mut ranks: Vec<Vec<Node>> = vec![Vec::new(); n];
            let mut made = Vec::new();
            for (op, picks, ctrl) in ops {
                let add = |ranks: &mut Vec<Vec<Node>>, r: usize, mut nd: Node| {
                    let have = ranks[r].len();
                    // Scrambled ids: their order says nothing.
                    nd.id = (have as u64 * 7919 + 13) % 10_007;
                    let deps: Vec<u64> = picks
                        .iter()
                        .filter(|_| have > 0)
                        .map(|p| ranks[r][p.index(have)].id)
                        .collect();
                    if ctrl {
                        nd.ctrl_deps = deps;
                    } else {
                        nd.data_deps = deps;
                    }
                    let id = nd.id;
                    ranks[r].push(nd);
                    (r, id)
                };
                let message = matches!(op, Op::Message { .. });
                let nodes = match op {
                    Op::Compute { rank, us } => {
                        vec![add(&mut ranks, rank % n, comp(0, us, &[]))]
                    }
                    Op::Memory { rank } => {
                        vec![add(&mut ranks, rank % n, node(0, node_type::MEM_LOAD, &[]))]
                    }
                    Op::Message {
                        from,
                        hop,
                        bytes,
                        tag,
                    } => {
                        let (s, d) = (from % n, (from % n + 1 + hop % (n - 1)) % n);
                        let mut sn = send(0, d as i32, bytes, &[]);
                        let mut rn = recv(0, s as i32, &[]);
                        if let Some(t) = tag {
                            sn.attr.push(AttributeProto::int32("comm_tag", t));
                            rn.attr.push(AttributeProto::int32("comm_tag", t));
                        }
                        vec![add(&mut ranks, s, sn), add(&mut ranks, d, rn)]
                    }
                    Op::AllReduce { bytes } => (0..n)
                        .map(|r| add(&mut ranks, r, coll(0, comm_type::ALL_REDUCE, bytes, &[])))
                        .collect(),
                };
                made.push((message, nodes));
            }
            (ranks, made)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_random_valid_trace_imports_with_every_send_after_its_dependencies(
        (ranks, made) in trace()
    ) {
        let n = ranks.len();
        let has_send = made.iter().any(|m| m.1.len() > 1);
        let deps_of: BTreeMap<(usize, u64), Vec<u64>> = ranks
            .iter()
            .enumerate()
            .flat_map(|(r, list)| {
                list.iter().map(move |nd| {
                    let d: Vec<u64> = nd.data_deps.iter().chain(&nd.ctrl_deps).copied().collect();
                    ((r, nd.id), d)
                })
            })
            .collect();
        let got = import(files(ranks), &on(n), CtrlDeps::Order);
        if !has_send {
            prop_assert!(got.is_err());
            return Ok(());
        }
        let got = got.expect("a valid trace imports");
        // The fabric: a flow takes 1 ns per 10 bytes, plus 1 ns.
        let finish = run(&got, |b| Dur((1 + b / 10) * 1000));
        let start: BTreeMap<u64, Time> = got
            .dag
            .tasks()
            .iter()
            .filter(|t| matches!(t.work, Work::Send { .. }))
            .map(|t| {
                let Work::Send { bytes, .. } = t.work else { unreachable!() };
                (t.id, Time(finish[&t.id].0 - (1 + bytes / 10) * 1000))
            })
            .collect();
        // What a trace node's dependents wait for: the last-finishing task made from it.
        let mut done: BTreeMap<(usize, u64), Time> = BTreeMap::new();
        for (id, &(r, nd)) in got.origin.iter().enumerate() {
            let e = done.entry((r as usize, nd)).or_insert(Time::ZERO);
            *e = (*e).max(finish[&(id as u64)]);
        }
        // A pair's task is made from its send node: its receive finishes with it.
        for (_, m) in made.iter().filter(|m| m.0) {
            let t = done[&m[0]];
            done.insert(m[1], t);
        }
        for (id, &(r, nd)) in got.origin.iter().enumerate() {
            let Some(&s) = start.get(&(id as u64)) else { continue };
            for d in &deps_of[&(r as usize, nd)] {
                prop_assert!(
                    done[&(r as usize, *d)] <= s,
                    "send {} of rank {} node {} starts at {:?}, before node {} finished",
                    id, r, nd, s, d
                );
            }
        }
        // And the receive's dependencies too, for point-to-point sends.
        for (_, m) in made.iter().filter(|m| m.0) {
            let id = got.origin.iter().position(|&(r, nd)| (r as usize, nd) == m[0]).expect("made");
            let s = start[&(id as u64)];
            for d in &deps_of[&m[1]] {
                prop_assert!(done[&(m[1].0, *d)] <= s);
            }
        }
    }
}

#[test]
fn the_committed_trace_is_what_its_generator_writes() {
    // `SHOAL_BLESS=1 cargo test -p shoal-workload --test chakra` rewrites the files.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/data/chakra");
    let bless = std::env::var_os("SHOAL_BLESS").is_some();
    let meta = GlobalMetadata {
        version: "0.0.4".to_owned(),
        attr: Vec::new(),
    };
    for (r, nodes) in tiny_trace().into_iter().enumerate() {
        let bytes = encode_file(&meta, &nodes);
        let path = chakra::file_of(&dir.join("tiny"), r);
        if bless {
            std::fs::create_dir_all(&dir).expect("the folder");
            std::fs::write(&path, &bytes).expect("written");
        }
        let held = std::fs::read(&path).expect("the committed trace");
        assert_eq!(held, bytes, "{} differs from its generator", path.display());
    }
}

/// `scenarios/data/chakra/tiny.<r>.et`: four ranks; each computes 10 µs, sends 100,000 B to
/// the next rank round a ring while receiving from the one before, then all four all-reduce
/// 400,000 B, then a memory store (a zero-time step) ends it.
fn tiny_trace() -> Vec<Vec<Node>> {
    (0..4i32)
        .map(|r| {
            let mut c = coll(4, comm_type::ALL_REDUCE, 400_000, &[2, 3]);
            c.ctrl_deps = vec![1];
            vec![
                comp(1, 10, &[]),
                send(2, (r + 1) % 4, 100_000, &[1]),
                recv(3, (r + 3) % 4, &[1]),
                c,
                node(5, node_type::MEM_STORE, &[4]),
            ]
        })
        .collect()
}

/// Any node of small random fields: types, attributes of any integer kind or none, ids and
/// dependencies drawn from a few values, so that collisions, dangling ids, cycles and
/// mismatches all come up.
fn any_node() -> impl Strategy<Value = Node> {
    let attr = (
        prop::sample::select(vec![
            "comm_src",
            "comm_dst",
            "comm_tag",
            "comm_size",
            "comm_type",
            "pg_name",
            "is_cpu_op",
        ]),
        0u8..5,
        -2i64..12,
    )
        .prop_map(|(name, kind, v)| AttributeProto {
            name: name.to_owned(),
            value: match kind {
                0 => Some(Value::Int32(v as i32)),
                1 => Some(Value::Int64(v * 1000)),
                2 => Some(Value::Bool(v > 5)),
                3 => Some(Value::String(format!("g{}", v % 2))),
                _ => None,
            },
        });
    (
        0u64..6,
        -1i32..9,
        proptest::collection::vec(0u64..6, 0..3),
        proptest::collection::vec(0u64..6, 0..2),
        prop::sample::select(vec![0u64, 3, 2_000_000]),
        proptest::collection::vec(attr, 0..5),
    )
        .prop_map(
            |(id, kind, data_deps, ctrl_deps, duration_micros, attr)| Node {
                id,
                name: String::new(),
                r#type: kind,
                ctrl_deps,
                data_deps,
                duration_micros,
                attr,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn any_trace_is_imported_or_refused_without_a_panic(
        ranks in proptest::collection::vec(proptest::collection::vec(any_node(), 0..6), 1..4),
        ignore in any::<bool>(),
    ) {
        let n = ranks.len();
        let ctrl = if ignore { CtrlDeps::Ignore } else { CtrlDeps::Order };
        if let Ok(got) = import(files(ranks), &on(n), ctrl) {
            prop_assert!(got.dag.sends() > 0);
            prop_assert_eq!(got.origin.len(), got.dag.tasks().len());
        }
    }

    #[test]
    fn any_bytes_decode_or_are_refused_without_a_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..200)
    ) {
        let _ = decode_file(&bytes);
    }
}
