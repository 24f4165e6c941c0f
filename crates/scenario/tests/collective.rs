//! `kind = "collective"`: resolved, written back, run, and refused by key with the reason.

use shoal_fabric::NoProgress;
use shoal_scenario::{ErrorKind, WorkloadSpec, parse};
use shoal_workload::collective::{Algorithm, Op};

const SWITCH: &str = "[scenario]\nfabric = \"ideal-switch\"\n[switch]\nhosts = 8\n";

fn file(workload: &str) -> String {
    format!("{SWITCH}[workload]\nkind = \"collective\"\n{workload}")
}

fn refused(workload: &str) -> (String, ErrorKind, String) {
    match parse(&file(workload), "coll.toml") {
        Ok(_) => panic!("accepted:\n{workload}"),
        Err(e) => {
            let text = e.to_string();
            assert!(text.starts_with("coll.toml"), "names the file: {text}");
            (e.key, e.kind, e.reason)
        }
    }
}

#[test]
fn defaults_fill_in_and_the_resolved_file_gives_the_same_job() {
    let sc = parse(
        &file("op = \"all-reduce\"\nmessage_bytes = 80000\n"),
        "coll.toml",
    )
    .expect("valid");
    let WorkloadSpec::Collective { jobs, all_ranks } = &sc.workload else {
        panic!("{:?}", sc.workload)
    };
    let spec = &jobs[0].spec;
    assert_eq!((spec.op, spec.algorithm), (Op::AllReduce, Algorithm::Ring));
    assert_eq!(spec.ranks.len(), 8, "every node by default");
    assert!(all_ranks);
    assert_eq!(spec.iterations, 1);
    let again = parse(&sc.resolved_toml(), "resolved.toml").expect("the resolved file parses");
    assert_eq!(again.workload, sc.workload);

    let listed = parse(
        &file(
            "op = \"all-reduce\"\nalgorithm = \"halving-doubling\"\nranks = [7, 2, 5, 0]\n\
             message_bytes = 4096\niterations = 3\ncompute_us = 2.5\nstart_us = 1.0\n",
        ),
        "coll.toml",
    )
    .expect("valid");
    let again = parse(&listed.resolved_toml(), "resolved.toml").expect("parses");
    assert_eq!(again.workload, listed.workload);
    assert!(listed.resolved_toml().contains("ranks = [7, 2, 5, 0]"));
}

#[test]
fn a_collective_runs_every_send_to_completion() {
    for (op, alg) in [
        ("all-reduce", "ring"),
        ("all-reduce", "halving-doubling"),
        ("all-gather", "ring"),
        ("reduce-scatter", "ring"),
        ("all-to-all", "direct"),
    ] {
        let sc = parse(
            &file(&format!(
                "op = \"{op}\"\nalgorithm = \"{alg}\"\nmessage_bytes = 64000\niterations = 2\n\
                 compute_us = 3.0\n"
            )),
            "coll.toml",
        )
        .expect("valid");
        let expected = sc.workload.flow_count().expect("known before the run");
        let out = sc.run(&mut NoProgress).expect("runs");
        assert_eq!(out.records.len() as u64, expected, "{op} {alg}");
        assert!(
            out.records.iter().all(|r| r.finish.is_some()),
            "{op} {alg}: a send was not delivered"
        );
        let bytes: u64 = out.records.iter().map(|r| r.bytes).sum();
        let factor = if op == "all-reduce" { 2 } else { 1 };
        // S·(n−1)/n per rank per iteration (twice for all-reduce), over 8 ranks.
        assert_eq!(bytes, 2 * factor * 8 * 64000 * 7 / 8, "{op} {alg}");
    }
}

#[test]
fn bad_jobs_are_refused_naming_the_key_and_the_reason() {
    let cases: [(&str, &str, &str); 14] = [
        (
            "op = \"all-to-all\"\nalgorithm = \"staged\"\nmessage_bytes = 800\n",
            "workload.group_size",
            "ranks per group",
        ),
        (
            "op = \"all-to-all\"\nalgorithm = \"staged\"\ngroup_size = 3\nmessage_bytes = 800\n",
            "workload.group_size",
            "divide",
        ),
        (
            "op = \"all-reduce\"\ngroup_size = 4\nmessage_bytes = 800\n",
            "workload.group_size",
            "only the staged",
        ),
        (
            "op = \"all-reduce\"\nchunks = 101\nmessage_bytes = 800\n",
            "workload.message_bytes",
            "at least 808 B",
        ),
        ("message_bytes = 800\n", "workload.op", "missing"),
        (
            "op = \"broadcast\"\nmessage_bytes = 800\n",
            "workload.op",
            "unknown collective",
        ),
        (
            "op = \"all-to-all\"\nalgorithm = \"ring\"\nmessage_bytes = 800\n",
            "workload.algorithm",
            "no ring algorithm",
        ),
        (
            "op = \"all-reduce\"\nalgorithm = \"halving-doubling\"\nranks = [0, 1, 2]\n\
             message_bytes = 800\n",
            "workload.ranks",
            "power-of-two",
        ),
        (
            "op = \"all-reduce\"\nmessage_bytes = 7\n",
            "workload.message_bytes",
            "at least 8 B",
        ),
        (
            "op = \"all-reduce\"\nranks = [0, 8]\nmessage_bytes = 800\n",
            "workload.ranks[1]",
            "",
        ),
        (
            "op = \"all-reduce\"\nranks = [3, 3]\nmessage_bytes = 800\n",
            "workload.ranks[1]",
            "listed twice",
        ),
        (
            "op = \"all-reduce\"\nranks = [3]\nmessage_bytes = 800\n",
            "workload.ranks",
            "at least 2 ranks",
        ),
        (
            "op = \"all-reduce\"\nranks = \"some\"\nmessage_bytes = 800\n",
            "workload.ranks",
            "\"all\"",
        ),
        (
            "op = \"all-reduce\"\nmessage_bytes = 800\ncompute_us = 5e6\n",
            "workload.compute_us",
            "second",
        ),
    ];
    for (workload, key, reason) in cases {
        let (k, _, r) = refused(workload);
        assert_eq!(k, key, "{workload}: {r}");
        assert!(r.contains(reason), "{workload}: {r}");
    }
    // Keys of other kinds are refused by name.
    let (k, kind, r) = refused("op = \"all-reduce\"\nmessage_bytes = 800\nflows = 3\n");
    assert_eq!(
        (k.as_str(), kind),
        ("workload.flows", ErrorKind::UnknownKey)
    );
    assert!(r.contains("message_bytes"), "lists the keys it takes: {r}");
}

/// Small fabrics of every kind the issue compares (the registry fuzz test's bases).
const FABRICS: [&str; 6] = [
    "fabric = \"shoal\"\n[rack]\nnodes = 8\nchannels = 1\nswitch_ports = 4\ndelay_slots = 1\n",
    "fabric = \"ideal-switch\"\n[switch]\nhosts = 8\n",
    "fabric = \"dctcp\"\n[network]\nhosts = 8\nradix = 4\n",
    "fabric = \"ndp\"\n[network]\nhosts = 8\nradix = 4\n",
    "fabric = \"stardust\"\n[stardust]\ntopology = \"cell-clos\"\nfas = 4\nfas_per_pod = 4\n\
     fe1_per_pod = 2\nparallel = 1\nfe2 = 0\nports_per_fa = 2\n",
    "fabric = \"aquila\"\n[clique]\npods = 3\ntins_per_pod = 2\nlocal_links = 1\n\
     global_links = 1\nlocal_ports = 1\nglobal_ports = 1\n",
];

#[test]
fn every_fabric_runs_a_collective_with_each_send_after_what_it_waits_for() {
    use shoal_workload::dag::Work;
    use std::collections::BTreeMap;
    for fabric in FABRICS {
        for (op, alg, more) in [
            ("all-reduce", "ring", ""),
            ("all-to-all", "direct", ""),
            ("all-reduce", "double-binary-tree", "chunks = 4\n"),
            ("all-to-all", "staged", "group_size = 4\nchunks = 2\n"),
        ] {
            let text = format!(
                "[scenario]\n{fabric}[workload]\nkind = \"collective\"\nop = \"{op}\"\n\
                 algorithm = \"{alg}\"\nranks = [0, 1, 2, 3, 4, 5, 6, 7]\n\
                 message_bytes = 40000\niterations = 2\ncompute_us = 2.0\n{more}"
            );
            let sc = parse(&text, "every.toml").expect("valid");
            let WorkloadSpec::Collective { jobs, .. } = &sc.workload else {
                unreachable!()
            };
            let spec = &jobs[0].spec;
            let plan = spec.build().expect("builds");
            let out = sc.run(&mut NoProgress).expect("runs");
            let what = format!("{} {op}", sc.fabric_name());
            assert_eq!(out.records.len() as u128, spec.sends(), "{what}");
            let finish: BTreeMap<u64, _> = out
                .records
                .iter()
                .map(|r| (r.id, r.finish.expect("delivered")))
                .collect();
            // When each task finished: a send when delivered, a compute step its duration
            // after the last of what it waited for.
            let done = |id: u64| -> shoal_base::Time {
                let t = plan.dag.task(id).expect("a task");
                match t.work {
                    Work::Send { .. } => finish[&id],
                    Work::Compute { .. } => {
                        t.after.iter().map(|d| finish[d]).max().expect("waits") + t.delay
                    }
                }
            };
            for r in &out.records {
                let t = plan.dag.task(r.id).expect("a send of the job");
                for &dep in &t.after {
                    assert!(
                        r.start >= done(dep),
                        "{what}: send {} started at {} before {dep} finished at {}",
                        r.id,
                        r.start,
                        done(dep)
                    );
                }
            }
            let times =
                plan.iteration_times(0, out.records.iter().map(|r| (r.id, r.start, r.finish)));
            assert!(times.iter().all(Option::is_some), "{what}: {times:?}");
        }
    }
}

#[test]
fn jobs_are_placed_on_disjoint_nodes_and_written_back() {
    let jobs = "[[workload.jobs]]\nname = \"dp\"\nop = \"all-reduce\"\nranks = 3\n\
                message_bytes = 900\n[[workload.jobs]]\nop = \"all-to-all\"\nranks = [0, 7]\n\
                message_bytes = 200\n[[workload.jobs]]\nop = \"all-gather\"\nranks = 2\n\
                message_bytes = 200\nstart_us = 4.0\n";
    let nodes = |placement: &str| -> Vec<Vec<u16>> {
        let sc = parse(
            &file(&format!("placement = \"{placement}\"\n{jobs}")),
            "jobs.toml",
        )
        .expect("valid");
        let again = parse(&sc.resolved_toml(), "resolved.toml").expect("parses");
        assert_eq!(again.workload, sc.workload, "{}", sc.resolved_toml());
        let WorkloadSpec::Collective { jobs, .. } = &sc.workload else {
            unreachable!()
        };
        assert_eq!(jobs[0].name.as_deref(), Some("dp"));
        assert_eq!(jobs[1].label(1), "job1");
        jobs.iter()
            .map(|j| j.spec.ranks.iter().map(|n| n.0).collect())
            .collect()
    };
    // Nodes 1..=6 are free, all in the ideal switch's one group: packed and spread both take
    // them in id order.
    assert_eq!(nodes("packed"), [vec![1, 2, 3], vec![0, 7], vec![4, 5]]);
    assert_eq!(nodes("spread"), nodes("packed"));

    let job = |ranks: &str| {
        format!("[[workload.jobs]]\nop = \"all-reduce\"\nranks = {ranks}\nmessage_bytes = 800\n")
    };
    let cases = [
        (
            format!("{}{}", job("[0, 1]"), job("[2, 1]")),
            "workload.jobs[1].ranks[1]",
            "job 0 already",
        ),
        (
            format!("{}{}", job("5"), job("4")),
            "workload.jobs",
            "ask for 9",
        ),
        (job("\"all\""), "workload.jobs[0].ranks", "a count"),
        (
            "[[workload.jobs]]\nop = \"all-reduce\"\nmessage_bytes = 800\n".to_owned(),
            "workload.jobs[0].ranks",
            "each job gives its ranks",
        ),
        (
            format!("placement = \"random\"\n{}", job("2")),
            "workload.placement",
            "packed, spread",
        ),
        (
            format!("op = \"all-reduce\"\n{}", job("2")),
            "workload.op",
            "each job gives its own",
        ),
        (
            "placement = \"packed\"\nop = \"all-reduce\"\nmessage_bytes = 800\n".to_owned(),
            "workload.placement",
            "single job",
        ),
        (
            "[[workload.jobs]]\nop = \"all-reduce\"\nranks = 2\nmessage_bytes = 1\n".to_owned(),
            "workload.jobs[0].message_bytes",
            "at least 2 B",
        ),
    ];
    for (text, key, reason) in cases {
        let (k, _, r) = refused(&text);
        assert_eq!(k, key, "{text}: {r}");
        assert!(r.contains(reason), "{text}: {r}");
    }
}

/// Jobs of [[workload.jobs]] on `fabric` (a whole `[scenario]` and fabric table), placed
/// by `placement` (its lines), as node lists.
fn placed(fabric: &str, placement: &str, jobs: &str) -> Vec<Vec<u16>> {
    let text = format!("{fabric}[workload]\nkind = \"collective\"\n{placement}\n{jobs}");
    let sc = parse(&text, "placed.toml").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let again = parse(&sc.resolved_toml(), "resolved.toml").expect("parses");
    assert_eq!(again.workload, sc.workload, "{}", sc.resolved_toml());
    let WorkloadSpec::Collective { jobs, .. } = &sc.workload else {
        unreachable!()
    };
    jobs.iter()
        .map(|j| j.spec.ranks.iter().map(|n| n.0).collect())
        .collect()
}

/// The placement computed another way: the free nodes sorted by (group, id) for packed and
/// by (place among its group's free nodes, group) for spread, cut in order into the counts.
fn expected(
    free: &[u16],
    group: &dyn Fn(u16) -> u32,
    counts: &[usize],
    spread: bool,
) -> Vec<Vec<u16>> {
    let mut order: Vec<(u32, u32, u16)> = free
        .iter()
        .map(|&n| {
            let g = group(n);
            let before = free.iter().filter(|&&m| m < n && group(m) == g).count() as u32;
            if spread { (before, g, n) } else { (g, 0, n) }
        })
        .collect();
    order.sort();
    let mut rest = order.into_iter().map(|(_, _, n)| n);
    counts
        .iter()
        .map(|&c| rest.by_ref().take(c).collect())
        .collect()
}

#[test]
fn counted_jobs_are_packed_into_or_spread_over_the_fabrics_groups() {
    // Job 0 lists nodes 0 and 5; jobs 1 and 2 take 6 and 4 of the others.
    let jobs = "[[workload.jobs]]\nop = \"all-reduce\"\nranks = [0, 5]\nmessage_bytes = 800\n\
                [[workload.jobs]]\nop = \"all-reduce\"\nranks = 6\nmessage_bytes = 800\n\
                [[workload.jobs]]\nop = \"all-to-all\"\nranks = 4\nmessage_bytes = 800\n";
    let free: Vec<u16> = (1..16).filter(|&n| n != 5).collect();
    let counts = [6, 4];
    let with_listed = |mut placed: Vec<Vec<u16>>| {
        assert_eq!(placed.remove(0), [0, 5]);
        placed
    };

    // A leaf-spine of 16 hosts on radix 8: leaves of 4 hosts. The groups come from the
    // built topology: the switch at the far end of each host's one link.
    let leaf_spine = "[scenario]\nfabric = \"dctcp\"\n[network]\ntopology = \"leaf-spine\"\n\
                      hosts = 16\nradix = 8\n";
    let sc = parse(&format!("{leaf_spine}[workload]\nkind = \"collective\"\nop = \"all-reduce\"\nmessage_bytes = 800\n"), "t.toml").unwrap();
    let topo = sc
        .spec::<shoal_psn::NetworkSpec>()
        .unwrap()
        .build_topology()
        .unwrap();
    let leaf = |n: u16| topo.link(u32::from(n), 0).peer;
    for (placement, spread) in [("packed", false), ("spread", true)] {
        let got = with_listed(placed(
            leaf_spine,
            &format!("placement = \"{placement}\""),
            jobs,
        ));
        assert_eq!(
            got,
            expected(&free, &leaf, &counts, spread),
            "leaf-spine {placement}"
        );
    }
    // Worked by hand: the free nodes of leaves 0..3 are [1,2,3], [4,6,7], [8..11], [12..15].
    let spread = with_listed(placed(leaf_spine, "placement = \"spread\"", jobs));
    assert_eq!(spread, [vec![1, 4, 8, 12, 2, 6], vec![9, 13, 3, 7]]);
    // Named explicitly, the default level gives the same.
    let named = placed(
        leaf_spine,
        "placement = \"spread\"\nplacement_level = \"leaf\"",
        jobs,
    );
    assert_eq!(with_listed(named), spread);

    // A fat-tree of k = 4: 16 hosts, 2 a leaf (edge switch), 4 a pod. A pod is the edge
    // switches that share their first aggregation switch.
    let fat_tree = "[scenario]\nfabric = \"ndp\"\n[network]\ntopology = \"fat-tree\"\nk = 4\n";
    let sc = parse(&format!("{fat_tree}[workload]\nkind = \"collective\"\nop = \"all-reduce\"\nmessage_bytes = 800\n"), "t.toml").unwrap();
    let topo = sc
        .spec::<shoal_psn::NetworkSpec>()
        .unwrap()
        .build_topology()
        .unwrap();
    let edge = |n: u16| topo.link(u32::from(n), 0).peer;
    let pod = |n: u16| {
        let e = edge(n);
        topo.link(e, topo.ports(e) as u32 - 2).peer
    };
    for (level, group) in [("leaf", &edge as &dyn Fn(u16) -> u32), ("pod", &pod)] {
        for (placement, spread) in [("packed", false), ("spread", true)] {
            let how = format!("placement = \"{placement}\"\nplacement_level = \"{level}\"");
            let got = with_listed(placed(fat_tree, &how, jobs));
            assert_eq!(
                got,
                expected(&free, group, &counts, spread),
                "fat-tree {level} {placement}"
            );
        }
    }
    // Spread over pods, worked by hand: pods hold free [1,2,3], [4,6,7], [8..11], [12..15].
    let by_pod = placed(
        fat_tree,
        "placement = \"spread\"\nplacement_level = \"pod\"",
        jobs,
    );
    assert_eq!(
        with_listed(by_pod),
        [vec![1, 4, 8, 12, 2, 6], vec![9, 13, 3, 7]]
    );
    let by_leaf = placed(fat_tree, "placement = \"spread\"", jobs);
    // Leaves of 2: [1], [2,3], [4], [6,7], [8,9], ...: the default level is the leaf.
    assert_eq!(
        with_listed(by_leaf),
        [vec![1, 2, 4, 6, 8, 10], vec![12, 14, 3, 7]]
    );

    // Aquila: 2 pods of 2 TiNs, 2 hosts a TiN (TiN t holds hosts 2t and 2t + 1), 8 hosts.
    let aquila = "[scenario]\nfabric = \"aquila\"\n[clique]\npods = 2\ntins_per_pod = 2\n\
                  hosts_per_tin = 2\n";
    let jobs = "[[workload.jobs]]\nop = \"all-reduce\"\nranks = 4\nmessage_bytes = 800\n\
                [[workload.jobs]]\nop = \"all-reduce\"\nranks = 2\nmessage_bytes = 800\n";
    let tin = placed(aquila, "placement = \"spread\"", jobs);
    assert_eq!(tin, [vec![0, 2, 4, 6], vec![1, 3]]);
    let pod = placed(
        aquila,
        "placement = \"spread\"\nplacement_level = \"pod\"",
        jobs,
    );
    assert_eq!(pod, [vec![0, 4, 1, 5], vec![2, 6]]);
    let packed = placed(
        aquila,
        "placement = \"packed\"\nplacement_level = \"pod\"",
        jobs,
    );
    assert_eq!(packed, [vec![0, 1, 2, 3], vec![4, 5]]);

    // Stardust: 4 adapters of 2 ports (adapter a holds nodes 2a and 2a + 1), one pod.
    let stardust = "[scenario]\nfabric = \"stardust\"\n[stardust]\ntopology = \"cell-clos\"\n\
                    fas = 4\nports_per_fa = 2\nfe1_per_pod = 4\nfe2 = 0\n";
    let fa = placed(stardust, "placement = \"spread\"", jobs);
    assert_eq!(fa, [vec![0, 2, 4, 6], vec![1, 3]]);
}

#[test]
fn a_level_the_fabric_lacks_is_refused_with_its_levels() {
    let jobs = "[[workload.jobs]]\nop = \"all-reduce\"\nranks = 2\nmessage_bytes = 800\n";
    let leaf_spine = "[scenario]\nfabric = \"dctcp\"\n[network]\ntopology = \"leaf-spine\"\n\
                      hosts = 16\nradix = 8\n";
    let cases = [
        (
            leaf_spine,
            "placement_level = \"pod\"",
            "dctcp has no level \"pod\"; its levels: leaf",
        ),
        (SWITCH, "placement_level = \"leaf\"", "no groups of nodes"),
    ];
    for (fabric, line, reason) in cases {
        let text = format!("{fabric}[workload]\nkind = \"collective\"\n{line}\n{jobs}");
        let e = parse(&text, "level.toml").expect_err("refused");
        assert_eq!(e.key, "workload.placement_level", "{e}");
        assert!(e.reason.contains(reason), "{e}");
    }
    let (key, _, reason) =
        refused("placement_level = \"leaf\"\nop = \"all-reduce\"\nmessage_bytes = 800\n");
    assert_eq!(key, "workload.placement_level");
    assert!(reason.contains("single job"), "{reason}");
}

#[test]
fn a_dag_file_runs_on_every_fabric_each_send_after_what_it_waits_for() {
    // A pipeline of two stages: node 0 sends to 1 and 2; each computes, then sends on to 3;
    // 3 computes and answers 0. Its flows start no earlier than their dependencies' ends
    // plus the compute times.
    let dir = std::env::temp_dir().join(format!("shoal-dag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("step.csv");
    std::fs::write(
        &path,
        "id,kind,src,dst,bytes,duration_us,after\n\
         0,send,0,1,30000,,\n1,send,0,2,20000,,\n\
         2,compute,1,,,3,0\n3,compute,2,,,1.5,1\n\
         4,send,1,3,10000,,2\n5,send,2,3,10000,0.5,3\n\
         6,compute,3,,,2,4 5\n7,send,3,0,5000,,6\n",
    )
    .expect("write");
    let ms = |us: f64| shoal_base::Dur((us * 1e6) as u64);
    for fabric in FABRICS {
        let text = format!(
            "[scenario]\n{fabric}[workload]\nkind = \"dag\"\nfile = {:?}\n",
            path.display()
        );
        let sc = parse(&text, "dag.toml").expect("valid");
        assert_eq!(sc.workload.flow_count(), Some(5));
        let out = sc.run(&mut NoProgress).expect("runs");
        let what = sc.fabric_name().to_owned();
        let f: std::collections::BTreeMap<u64, (shoal_base::Time, shoal_base::Time)> = out
            .records
            .iter()
            .map(|r| (r.id, (r.start, r.finish.expect("delivered"))))
            .collect();
        assert_eq!(f.len(), 5, "{what}");
        assert!(f[&4].0 >= f[&0].1 + ms(3.0), "{what}");
        assert!(f[&5].0 >= f[&1].1 + ms(1.5) + ms(0.5), "{what}");
        assert!(f[&7].0 >= f[&4].1.max(f[&5].1) + ms(2.0), "{what}");
    }
    // A file with a cycle is refused naming the key, the file, and the lines.
    std::fs::write(
        &path,
        "id,kind,src,dst,bytes,duration_us,after\n0,send,0,1,10,,1\n1,send,1,0,10,,0\n",
    )
    .expect("write");
    let e = parse(
        &format!(
            "{SWITCH}[workload]\nkind = \"dag\"\nfile = {:?}\n",
            path.display()
        ),
        "dag.toml",
    )
    .expect_err("a cycle");
    assert_eq!(e.key, "workload.file");
    assert!(
        e.reason.contains("cycle") && e.reason.contains("(line 3)"),
        "{}",
        e.reason
    );
}
