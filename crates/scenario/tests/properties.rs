//! Properties of scenario resolution: unknown keys and bad values are refused with their key,
//! resolved scenarios round-trip, sweeps vary one key, flows depend on the seed alone.

use proptest::prelude::*;
use shoal_base::{Dur, Time};
use shoal_rack::RackSpec;
use shoal_scenario::{ErrorKind, Scenario, ScenarioError, WorkloadSpec, parse};

/// A scenario touching every table: failures, random failures, a probe with background
/// traffic, limits and a sweep.
const BASE: &str = r#"
[scenario]
name = "base"
description = "every table"
seed = 3

[rack]
nodes = 16
channels = 2
switch_ports = 8
delay_slots = 1

[[rack.failures]]
component = "node"
node = 3
at_us = 1.0

[rack.random_node_failures]
fraction = 0.25

[workload]
kind = "probe"
src = 1
dst = 2
probe_bytes = 2000
period_us = 1.5
probes = 4
background = { kind = "random-pairs", flows = 10, flow_bytes = 5000 }

[run]
until_us = 50.0
completed_flows = 10
measure_from_us = 1.0

[sweep]
parameter = "rack.slot_ns"
values = [30.0, 40.0]
"#;

fn doc(text: &str) -> toml::Table {
    toml::from_str(text).expect("test document parses")
}

/// The table at dotted `path` (with `[i]` for array elements), created if absent.
fn table_at<'a>(doc: &'a mut toml::Table, path: &str) -> &'a mut toml::Table {
    let mut t = doc;
    if path.is_empty() {
        return t;
    }
    for part in path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, Some(i.trim_end_matches(']').parse::<usize>().unwrap())),
            None => (part, None),
        };
        let v = t
            .entry(name.to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let v = match index {
            Some(i) => &mut v.as_array_mut().expect("array")[i],
            None => v,
        };
        t = v.as_table_mut().expect("table");
    }
    t
}

/// `doc` with dotted `key` set to `value`, as TOML text.
fn with(doc: &toml::Table, key: &str, value: toml::Value) -> String {
    let mut doc = doc.clone();
    let (table, last) = key.rsplit_once('.').unwrap_or(("", key));
    table_at(&mut doc, table).insert(last.to_owned(), value);
    toml::to_string(&doc).expect("serializes")
}

fn refused(text: &str) -> ScenarioError {
    match parse(text, "case.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

const TABLES: [&str; 9] = [
    "",
    "scenario",
    "rack",
    "rack.failures[0]",
    "rack.random_node_failures",
    "workload",
    "workload.background",
    "run",
    "sweep",
];

/// Every key of the format, so that generated names are really unknown.
const KNOWN: [&str; 52] = [
    "scenario",
    "rack",
    "workload",
    "run",
    "sweep",
    "name",
    "description",
    "seed",
    "fabric",
    "tool_version",
    "nodes",
    "channels",
    "channel_gbps",
    "slot_ns",
    "guard_ns",
    "cell_bytes",
    "header_bytes",
    "overhead_bytes",
    "delay_slots",
    "latency_ns",
    "switch_ports",
    "arrangement",
    "classes",
    "low_class_queue_cells",
    "ready_queue",
    "age_rule",
    "packet_bytes",
    "header_bit_error_rate",
    "verify_schedule",
    "failures",
    "random_node_failures",
    "component",
    "node",
    "plane",
    "leaf",
    "spine",
    "link",
    "at_us",
    "fraction",
    "kind",
    "pairs",
    "flow_bytes",
    "start_us",
    "senders",
    "dst",
    "flows",
    "distinct_pairs",
    "src",
    "probe_bytes",
    "period_us",
    "probes",
    "first_us",
];

#[test]
fn the_base_scenario_resolves() {
    let s = parse(BASE, "base.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rack(&s).nodes, 16);
    // One explicit failure and round(0.25 * 16) = 4 random ones.
    assert_eq!(rack(&s).failures.len(), 5);
    assert_eq!(s.sweep_points().unwrap().len(), 2);
    assert_eq!(s.flows().len(), 14);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// An unknown key anywhere is refused as unknown, with its full dotted path and line.
    #[test]
    fn unknown_keys_are_refused_with_their_dotted_key(
        table in 0..TABLES.len(),
        name in "[a-z][a-z_]{0,11}",
    ) {
        prop_assume!(!KNOWN.contains(&name.as_str()) && name != "background");
        let path = TABLES[table];
        let text = with(&doc(BASE), format!("{path}.{name}").trim_start_matches('.'), toml::Value::Integer(1));
        let e = refused(&text);
        let want = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
        prop_assert_eq!(&e.key, &want, "{}", e);
        prop_assert_eq!(e.kind, ErrorKind::UnknownKey);
        let message = e.to_string();
        prop_assert!(message.contains("case.toml") && message.contains(&want) && message.contains("unknown"), "{}", message);
        prop_assert!(e.line.is_some(), "{}", message);
    }
}

#[test]
fn keys_of_another_workload_kind_or_component_are_unknown() {
    let base = doc(BASE);
    for (key, value) in [
        ("workload.pairs", toml::Value::Integer(3)),
        ("workload.senders", toml::Value::Integer(3)),
        ("workload.distinct_pairs", toml::Value::Boolean(true)),
        ("rack.failures[0].spine", toml::Value::Integer(0)),
        ("rack.failures[0].plane", toml::Value::Integer(0)),
    ] {
        let e = refused(&with(&base, key, value));
        assert_eq!(
            (e.key.as_str(), e.kind),
            (key, ErrorKind::UnknownKey),
            "{e}"
        );
        assert!(e.to_string().contains("unknown"), "{e}");
    }
}

fn int(v: i64) -> toml::Value {
    toml::Value::Integer(v)
}
fn float(v: f64) -> toml::Value {
    toml::Value::Float(v)
}
fn text(v: &str) -> toml::Value {
    toml::Value::String(v.to_owned())
}
fn ints(v: &[i64]) -> toml::Value {
    toml::Value::Array(v.iter().map(|&i| int(i)).collect())
}

#[test]
fn each_out_of_range_value_names_its_key() {
    let base = doc(BASE);
    let cases: Vec<(&str, toml::Value, &str)> = vec![
        ("scenario.seed", int(-1), "scenario.seed"),
        ("scenario.fabric", text("psn"), "scenario.fabric"),
        ("scenario.name", text(" "), "scenario.name"),
        ("rack.nodes", int(1), "rack.nodes"),
        ("rack.nodes", int(70_000), "rack.nodes"),
        // Queue lengths are 16-bit counters: the node caps N (`shoal_node::MAX_NODES`).
        ("rack.nodes", int(16_385), "rack.nodes"),
        ("rack.nodes", text("many"), "rack.nodes"),
        ("rack.channels", int(0), "rack.channels"),
        ("rack.channels", int(17), "rack.channels"),
        ("rack.channel_gbps", float(0.0), "rack.channel_gbps"),
        ("rack.channel_gbps", float(-25.0), "rack.channel_gbps"),
        ("rack.channel_gbps", float(f64::NAN), "rack.channel_gbps"),
        ("rack.slot_ns", float(0.0), "rack.slot_ns"),
        ("rack.slot_ns", float(2.0), "rack.slot_ns"),
        ("rack.slot_ns", float(5.0), "rack.slot_ns"),
        ("rack.slot_ns", float(10.0), "rack.slot_ns"),
        ("rack.guard_ns", float(-1.0), "rack.guard_ns"),
        ("rack.guard_ns", float(23.25), "rack.guard_ns"),
        ("rack.cell_bytes", int(1), "rack.cell_bytes"),
        ("rack.cell_bytes", int(500), "rack.cell_bytes"),
        ("rack.cell_bytes", text("half"), "rack.cell_bytes"),
        // A cell no larger than the default 8 B header: the cell is what the file set.
        ("rack.cell_bytes", int(8), "rack.cell_bytes"),
        ("rack.header_bytes", int(0), "rack.header_bytes"),
        ("rack.header_bytes", int(64), "rack.header_bytes"),
        ("rack.overhead_bytes", int(-1), "rack.overhead_bytes"),
        ("rack.overhead_bytes", int(100), "rack.overhead_bytes"),
        ("rack.delay_slots", int(0), "rack.delay_slots"),
        ("rack.delay_slots", int(1000), "rack.delay_slots"),
        ("rack.switch_ports", int(5), "rack.switch_ports"),
        ("rack.switch_ports", int(4), "rack.switch_ports"),
        ("rack.arrangement", text("fig3"), "rack.arrangement"),
        ("rack.classes", int(0), "rack.classes"),
        ("rack.classes", int(5), "rack.classes"),
        (
            "rack.low_class_queue_cells",
            int(0),
            "rack.low_class_queue_cells",
        ),
        (
            "rack.low_class_queue_cells",
            int(16_385),
            "rack.low_class_queue_cells",
        ),
        ("rack.packet_bytes", int(0), "rack.packet_bytes"),
        (
            "rack.header_bit_error_rate",
            float(0.9),
            "rack.header_bit_error_rate",
        ),
        (
            "rack.header_bit_error_rate",
            float(-0.1),
            "rack.header_bit_error_rate",
        ),
        ("rack.ready_queue", int(1), "rack.ready_queue"),
        ("rack.failures[0].node", int(16), "rack.failures[0].node"),
        (
            "rack.failures[0].component",
            text("switch"),
            "rack.failures[0].component",
        ),
        (
            "rack.failures[0].at_us",
            float(-1.0),
            "rack.failures[0].at_us",
        ),
        (
            "rack.random_node_failures.fraction",
            float(1.5),
            "rack.random_node_failures.fraction",
        ),
        (
            "rack.random_node_failures.at_us",
            float(-1.0),
            "rack.random_node_failures.at_us",
        ),
        ("workload.kind", text("bursty"), "workload.kind"),
        ("workload.src", int(16), "workload.src"),
        ("workload.dst", int(1), "workload.dst"),
        ("workload.probe_bytes", int(0), "workload.probe_bytes"),
        ("workload.period_us", float(0.0), "workload.period_us"),
        ("workload.probes", int(0), "workload.probes"),
        ("workload.period_us", float(5e12), "workload.probes"),
        ("workload.first_us", float(-2.0), "workload.first_us"),
        (
            "workload.background.flows",
            int(-1),
            "workload.background.flows",
        ),
        (
            "workload.background.flow_bytes",
            int(0),
            "workload.background.flow_bytes",
        ),
        (
            "workload.background.kind",
            text("incast"),
            "workload.background.kind",
        ),
        ("run.until_us", float(0.0), "run.until_us"),
        ("run.completed_flows", int(0), "run.completed_flows"),
        ("run.measure_from_us", float(-1.0), "run.measure_from_us"),
        ("sweep.values", ints(&[]), "sweep.values"),
        (
            "sweep.values",
            toml::Value::Array(vec![float(30.0), float(1.0)]),
            "rack.slot_ns",
        ),
        ("sweep.parameter", text("sweep.values"), "sweep.parameter"),
        ("sweep.parameter", text("slot_ns"), "sweep.parameter"),
    ];
    let incast = with(
        &base,
        "workload",
        toml::Value::Table(doc("kind = \"incast\"\nsenders = 3\nflow_bytes = 100")),
    );
    let incast = doc(&incast);
    let incast_cases: Vec<(&str, toml::Value, &str)> = vec![
        ("workload.senders", int(0), "workload.senders"),
        ("workload.senders", int(16), "workload.senders"),
        ("workload.senders", ints(&[2, 2]), "workload.senders[1]"),
        ("workload.senders", ints(&[4, 0]), "workload.senders[1]"),
        ("workload.senders", ints(&[]), "workload.senders"),
        ("workload.senders", text("all"), "workload.senders"),
        ("workload.dst", int(16), "workload.dst"),
        ("workload.flow_bytes", int(0), "workload.flow_bytes"),
        ("workload.start_us", float(-1.0), "workload.start_us"),
    ];
    let perm = with(
        &base,
        "workload",
        toml::Value::Table(doc("kind = \"permutation\"\nflow_bytes = 100")),
    );
    let perm = doc(&perm);
    let perm_cases: Vec<(&str, toml::Value, &str)> = vec![
        ("workload.pairs", int(17), "workload.pairs"),
        ("workload.pairs", int(0), "workload.pairs"),
    ];
    let pairs = with(
        &base,
        "workload",
        toml::Value::Table(doc(
            "kind = \"random-pairs\"\nflows = 10\nflow_bytes = 100\ndistinct_pairs = true",
        )),
    );
    let pairs = doc(&pairs);
    let pairs_cases: Vec<(&str, toml::Value, &str)> = vec![
        ("workload.flows", int(0), "workload.flows"),
        ("workload.flows", int(16 * 15 + 1), "workload.flows"),
    ];
    for (doc, cases) in [
        (&base, cases),
        (&incast, incast_cases),
        (&perm, perm_cases),
        (&pairs, pairs_cases),
    ] {
        for (key, value, want) in cases {
            let shown = value.to_string();
            let e = refused(&with(doc, key, value));
            assert_eq!(e.key, want, "{key} = {shown}: {e}");
            assert!(e.to_string().contains(want), "{e}");
        }
    }
}

#[test]
fn latency_and_delay_slots_together_are_refused() {
    let text = with(&doc(BASE), "rack.latency_ns", float(100.0));
    let e = refused(&text);
    assert_eq!(
        (e.key.as_str(), e.kind),
        ("rack.latency_ns", ErrorKind::Value),
        "{e}"
    );
    assert!(e.reason.contains("delay_slots"), "{e}");
}

#[test]
fn latency_becomes_whole_slots_rounded_up() {
    let mut d = doc(BASE);
    table_at(&mut d, "rack").remove("delay_slots");
    // 60 ns over 23.25 ns slots is 2.58 slots: 3.
    let s = parse(&with(&d, "rack.latency_ns", float(60.0)), "lat.toml").unwrap();
    assert_eq!(rack(&s).delay_slots, 3);
    let s = parse(&with(&d, "rack.latency_ns", float(46.5)), "lat.toml").unwrap();
    assert_eq!(rack(&s).delay_slots, 2);
}

#[test]
fn fill_gives_64_byte_cells_in_the_prototype_slot() {
    // §6.1: 76.8 ns slots with a 6.4 ns guard band and 24 B of MAC framing at 10 Gb/s.
    let text = "[rack]\nnodes = 8\nchannels = 1\nswitch_ports = 4\narrangement = \"cyclic\"\n\
                channel_gbps = 10\nslot_ns = 76.8\nguard_ns = 6.4\noverhead_bytes = 24\n\
                cell_bytes = \"fill\"\nlatency_ns = 1570.0\n\
                [workload]\nkind = \"incast\"\nsenders = 7\nflow_bytes = 448\n";
    let s = parse(text, "prototype.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rack(&s).cell_bytes, 64);
    // 1.57 us over 76.8 ns slots: 20.4, so 21 slots.
    assert_eq!(rack(&s).delay_slots, 21);
    // §7.1: 20.5 ns usable at 25 Gb/s is 64 B as well.
    let s = parse(
        "[rack]\ncell_bytes = \"fill\"\n[workload]\nkind = \"permutation\"\nflow_bytes = 1\n",
        "paper.toml",
    )
    .unwrap();
    assert_eq!(rack(&s).cell_bytes, 64);
}

#[test]
fn errors_name_the_file_and_line() {
    let e = refused(
        "[scenario]\nname = \"x\"\n\n[rack]\nnodes = 1\n[workload]\nkind = \"permutation\"\nflow_bytes = 1\n",
    );
    assert_eq!(
        (e.origin.as_str(), e.line, e.key.as_str()),
        ("case.toml", Some(5), "rack.nodes")
    );
    assert!(
        e.to_string().starts_with("case.toml:5: rack.nodes: "),
        "{e}"
    );
    let e = refused("[rack\n");
    assert_eq!(e.kind, ErrorKind::Syntax);
    let e = refused("[rack]\nnodes = 8\nnodes = 9\n");
    assert_eq!((e.key.as_str(), e.line), ("rack.nodes", Some(3)), "{e}");
    let e = refused("[rack]\n");
    assert_eq!(
        (e.key.as_str(), e.kind),
        ("workload", ErrorKind::Missing),
        "{e}"
    );
    // A file that is not UTF-8: the line of the first bad byte.
    let path = std::env::temp_dir().join("shoal-scenario-latin1.toml");
    std::fs::write(&path, b"[scenario]\nname = \"caf\xe9\"\n").expect("write");
    let e = shoal_scenario::load(&path).expect_err("not UTF-8");
    assert_eq!((e.kind, e.line), (ErrorKind::Io, Some(2)), "{e}");
    assert!(e.to_string().contains("UTF-8"), "{e}");
}

fn assert_same_run(a: &Scenario, b: &Scenario) {
    assert_eq!(rack(a), rack(b));
    assert_eq!(a.workload, b.workload);
    assert_eq!(a.limits, b.limits);
    assert_eq!(a.seed, b.seed);
    assert_eq!(a.flows(), b.flows());
}

#[test]
fn the_base_round_trips_through_its_resolved_form() {
    let s = parse(BASE, "base.toml").unwrap();
    let resolved = s.resolved_toml();
    assert!(resolved.contains("tool_version = \"0.1.0\"") || resolved.contains("tool_version"));
    let again = parse(&resolved, "resolved.toml").unwrap_or_else(|e| panic!("{e}\n{resolved}"));
    assert_same_run(&s, &again);
    // Random failures are listed explicitly, so the resolved file pins them.
    assert_eq!(
        again.spec::<RackSpec>().expect("a rack").random_failures(),
        None
    );
    assert_eq!(
        again
            .spec::<RackSpec>()
            .expect("a rack")
            .explicit_failures()
            .len(),
        5
    );
    // And resolving is idempotent.
    assert_eq!(
        again.resolved_toml().lines().skip(3).collect::<Vec<_>>(),
        resolved.lines().skip(3).collect::<Vec<_>>()
    );
}

fn workload_table(kind: usize, nodes: usize) -> String {
    match kind {
        0 => format!("kind = \"permutation\"\npairs = {}\nflow_bytes = 3000\nstart_us = 0.5", nodes / 2),
        1 => "kind = \"incast\"\nsenders = [3, 1, 2]\ndst = 0\nflow_bytes = 448".to_owned(),
        2 => "kind = \"random-pairs\"\nflows = 20\nflow_bytes = 1000\ndistinct_pairs = true".to_owned(),
        _ => "kind = \"probe\"\nsrc = 3\ndst = 0\nprobe_bytes = 20000\nperiod_us = 2.5\nprobes = 5\nfirst_us = 1.0\nbackground = { kind = \"random-pairs\", flows = 7, flow_bytes = 9000, start_us = 0.25 }".to_owned(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Whatever the configuration, the resolved form reproduces the run.
    #[test]
    fn resolved_toml_round_trips(
        nodes in 8usize..48,
        two_channels in any::<bool>(),
        cyclic in any::<bool>(),
        fill in any::<bool>(),
        latency in proptest::option::of(1.0f64..40.0),
        seed in 0u64..1_000_000,
        kind in 0usize..4,
        fraction in proptest::option::of(0.0f64..0.5),
        until in proptest::option::of(1.0f64..500.0),
        ber in prop_oneof![Just(0.0), 1e-9f64..1e-3],
    ) {
        let ports = shoal_schedule::min_ports_for(nodes).max(4);
        let mut text = format!(
            "[scenario]\nseed = {seed}\n[rack]\nnodes = {nodes}\nchannels = {}\nswitch_ports = {ports}\n\
             arrangement = \"{}\"\nheader_bit_error_rate = {ber:e}\n",
            if two_channels { 2 } else { 1 },
            if cyclic { "cyclic" } else { "propagation-aware" },
        );
        if fill {
            text.push_str("cell_bytes = \"fill\"\nslot_ns = 30.0\n");
        }
        match latency {
            Some(l) => text.push_str(&format!("latency_ns = {l}\n")),
            None => text.push_str("delay_slots = 1\n"),
        }
        if let Some(f) = fraction {
            text.push_str(&format!("[rack.random_node_failures]\nfraction = {f}\nat_us = 2.0\n"));
        }
        text.push_str("[[rack.failures]]\ncomponent = \"leaf\"\nplane = 0\nleaf = 0\nat_us = 3.0\n");
        text.push_str(&format!("[workload]\n{}\n", workload_table(kind, nodes)));
        if let Some(u) = until {
            text.push_str(&format!("[run]\nuntil_us = {u}\ncompleted_flows = 3\n"));
        }
        let s = match parse(&text, "generated.toml") {
            Ok(s) => s,
            // A few generated racks are impossible (a cell that no longer fits, a delay the
            // schedule cannot absorb): those must say so by key.
            Err(e) => {
                prop_assert!(e.key.starts_with("rack."), "{}\n{}", e, text);
                return Ok(());
            }
        };
        let resolved = s.resolved_toml();
        let again = parse(&resolved, "resolved.toml");
        prop_assert!(again.is_ok(), "{:?}\n{}", again.err(), resolved);
        let again = again.unwrap();
        prop_assert_eq!(rack(&again), rack(&s));
        prop_assert_eq!(&again.workload, &s.workload);
        prop_assert_eq!(again.limits, s.limits);
        prop_assert_eq!(again.seed, s.seed);
    }

    /// The flows are a function of the seed: equal seeds, equal flows; other seeds, other flows.
    #[test]
    fn flows_are_deterministic_per_seed_and_change_with_it(
        a in 0u64..1 << 40,
        b in 0u64..1 << 40,
        kind in prop_oneof![Just(0usize), Just(2), Just(3)],
    ) {
        prop_assume!(a != b);
        let text = format!(
            "[rack]\nnodes = 32\nchannels = 1\nswitch_ports = 8\n[workload]\n{}\n",
            workload_table(kind, 32)
        );
        let s = parse(&text, "w.toml").unwrap();
        let fa = s.with_seed(a).flows();
        prop_assert_eq!(&fa, &s.with_seed(a).flows());
        prop_assert_eq!(&fa, &parse(&text.replace("[rack]", &format!("[scenario]\nseed = {a}\n[rack]")), "w.toml").unwrap().flows());
        prop_assert_ne!(&fa, &s.with_seed(b).flows());
        // Sorted by start, ids 0.. in that order, no self-loops, all inside the rack.
        prop_assert!(fa.windows(2).all(|w| w[0].start <= w[1].start));
        prop_assert!(fa.iter().enumerate().all(|(i, f)| f.id == i as u64));
        prop_assert!(fa.iter().all(|f| f.src != f.dst && f.src.0 < 32 && f.dst.0 < 32));
    }
}

#[test]
fn workloads_follow_their_definitions() {
    let rack = "[rack]\nnodes = 16\nchannels = 1\nswitch_ports = 8\n";
    let s = parse(
        &format!("{rack}[workload]\nkind = \"incast\"\nsenders = 3\ndst = 1\nflow_bytes = 7\n"),
        "i.toml",
    )
    .unwrap();
    let srcs: Vec<u16> = s.flows().iter().map(|f| f.src.0).collect();
    assert_eq!(
        srcs,
        [0, 2, 3],
        "the lowest nodes other than the destination"
    );
    let s = parse(&format!("{rack}[workload]\nkind = \"probe\"\nsrc = 15\ndst = 0\nprobe_bytes = 20000\nperiod_us = 2\nprobes = 3\nbackground = {{ kind = \"random-pairs\", flows = 200, flow_bytes = 100 }}\n"), "p.toml").unwrap();
    let flows = s.flows();
    let probes: Vec<Time> = flows
        .iter()
        .filter(|f| f.bytes == 20_000)
        .map(|f| f.start)
        .collect();
    assert_eq!(probes, [Time(0), Time(2_000_000), Time(4_000_000)]);
    assert!(
        flows
            .iter()
            .filter(|f| f.bytes == 100)
            .all(|f| ![0, 15].contains(&f.src.0) && ![0, 15].contains(&f.dst.0))
    );
    let s = parse(&format!("{rack}[workload]\nkind = \"random-pairs\"\nflows = 240\nflow_bytes = 1\ndistinct_pairs = true\n"), "r.toml").unwrap();
    let mut pairs: Vec<(u16, u16)> = s.flows().iter().map(|f| (f.src.0, f.dst.0)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), 240, "every ordered pair exactly once");
    match s.workload {
        WorkloadSpec::RandomPairs { distinct_pairs, .. } => assert!(distinct_pairs),
        _ => panic!("wrong kind"),
    }
}

#[test]
fn random_failures_follow_the_seed() {
    let s = parse(BASE, "base.toml").unwrap();
    let other = s.with_seed(4);
    assert_eq!(rack(&other).failures.len(), rack(&s).failures.len());
    assert_eq!(
        rack(&other).failures[0],
        rack(&s).failures[0],
        "the explicit failure stays"
    );
    let nodes = |sc: &Scenario| format!("{:?}", &rack(sc).failures[1..]);
    assert_ne!(nodes(&s), nodes(&other));
    assert_eq!(nodes(&s), nodes(&other.with_seed(3)));
}

#[test]
fn sweep_points_differ_only_in_the_swept_key() {
    for (parameter, values, line) in [
        ("rack.slot_ns", "[30.0, 40.0, 50.5]", "slot_ns = "),
        ("workload.probes", "[1, 2, 9]", "probes = "),
        (
            "rack.arrangement",
            "[\"cyclic\", \"propagation-aware\"]",
            "arrangement = ",
        ),
    ] {
        let text = BASE.replace(
            "parameter = \"rack.slot_ns\"\nvalues = [30.0, 40.0]",
            &format!("parameter = \"{parameter}\"\nvalues = {values}"),
        );
        let s = parse(&text, "sweep.toml").unwrap_or_else(|e| panic!("{e}"));
        let points = s.sweep_points().unwrap();
        assert_eq!(points.len(), values.matches(',').count() + 1);
        let base_lines: Vec<String> = s
            .resolved_toml()
            .lines()
            .skip(3)
            .map(str::to_owned)
            .collect();
        for (value, point) in &points {
            assert_eq!(point.seed, s.seed);
            assert!(point.sweep.is_none());
            let lines: Vec<String> = point
                .resolved_toml()
                .lines()
                .skip(3)
                .map(str::to_owned)
                .collect();
            assert_eq!(lines.len(), base_lines.len());
            for (a, b) in base_lines.iter().zip(&lines) {
                if a != b {
                    assert!(
                        a.starts_with(line) && b.starts_with(line),
                        "{parameter} = {value}: {a} vs {b}"
                    );
                    assert!(b.contains(&value.to_string()), "{b} does not hold {value}");
                }
            }
        }
        // A seed given on the command line reaches every point.
        let reseeded = s.with_seed(99).sweep_points().unwrap();
        assert!(reseeded.iter().all(|(_, p)| p.seed == 99));
        assert_ne!(reseeded[0].1.flows(), points[0].1.flows());
    }
    let s = parse(BASE, "base.toml").unwrap();
    let points = s.sweep_points().unwrap();
    assert_eq!(rack(&points[1].1).slot, Dur(40_000));
    assert_eq!(points[1].0.as_f64(), Some(40.0));
}

#[test]
fn a_small_rack_builds_and_runs_to_completion() {
    let s = parse(
        "[rack]\nnodes = 8\nchannels = 1\nswitch_ports = 4\n[workload]\nkind = \"permutation\"\nflow_bytes = 2000\n",
        "tiny.toml",
    )
    .unwrap();
    let out = s
        .run(&mut shoal_fabric::NoProgress)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.records.len(), 8);
    assert!(out.records.iter().all(|r| r.finish.is_some()));
}

#[test]
fn an_epoch_too_short_for_the_delay_names_the_key_the_file_set() {
    let rack = |extra: &str| {
        parse(
            &format!(
                "[rack]\nnodes = 8\nswitch_ports = 4\n{extra}\n[workload]\nkind = \"permutation\"\nflow_bytes = 100\n"
            ),
            "short.toml",
        )
        .expect_err("the delay does not fit")
        .key
    };
    // 8 nodes on 3 channels absorb 1 slot of delay; the default is 2.
    assert_eq!(rack("channels = 3"), "rack.channels");
    assert_eq!(rack("channels = 1\ndelay_slots = 5"), "rack.delay_slots");
}

/// The rack of a Shoal scenario.
fn rack(s: &shoal_scenario::Scenario) -> &shoal_rack::RackConfig {
    &s.spec::<RackSpec>().expect("a Shoal rack").config
}
