//! The streaming workload kinds (open-loop, closed-loop, disaggregated, trace): bad values are
//! refused with their key, the load follows §7.3's definition, and the flows follow the seed.

use shoal_base::Time;
use shoal_scenario::{ErrorKind, ScenarioError, WorkloadSpec, parse};
use shoal_workload::Arrivals;

const RACK: &str = "[rack]\nnodes = 16\nchannels = 2\nswitch_ports = 8\n";

fn scenario(workload: &str, run: &str) -> Result<shoal_scenario::Scenario, ScenarioError> {
    parse(
        &format!("{RACK}\n[workload]\n{workload}\n{run}"),
        "streaming.toml",
    )
}

const OPEN: &str = "kind = \"open-loop\"\nload = 0.5\nsize = { dist = \"fixed\", bytes = 1000 }";
/// `OPEN` without its load, for cases that set one.
const UNLOADED: &str = "kind = \"open-loop\"\nsize = { dist = \"fixed\", bytes = 1000 }";
const LIMIT: &str = "[run]\ncompleted_flows = 100";

/// A trace file with its header and no flow.
fn header_only_trace() -> String {
    let path = std::env::temp_dir().join("shoal-scenario-empty-trace.csv");
    std::fs::write(&path, "src,dst,size_bytes,start_ns\n").expect("write trace");
    path.display().to_string()
}

#[test]
fn bad_streaming_workloads_name_their_key() {
    let cases: &[(&str, &str, &str)] = &[
        ("kind = \"open-loop\"\nload = 0.5", LIMIT, "workload.size"),
        (
            "kind = \"open-loop\"\nload = 0.5\nsize = { dist = \"lognormal\" }",
            LIMIT,
            "workload.size.dist",
        ),
        (
            "kind = \"open-loop\"\nload = 0.5\nsize = { dist = \"fixed\", shape = 2.0 }",
            LIMIT,
            "workload.size.shape",
        ),
        (
            "kind = \"open-loop\"\nload = 0.5\n\
             size = { dist = \"pareto\", shape = 1.0, mean_bytes = 1000 }",
            LIMIT,
            "workload.size",
        ),
        (
            "kind = \"open-loop\"\nload = 0.5\n\
             size = { dist = \"empirical\", cdf = \"no-such-cdf\" }",
            LIMIT,
            "workload.size.cdf",
        ),
        (
            &format!("{OPEN}\nmean_gap_ns = 3.0"),
            LIMIT,
            "workload.mean_gap_ns",
        ),
        (OPEN, "", "run"),
        (
            &format!("{OPEN}\nmatrix = \"ring\""),
            LIMIT,
            "workload.matrix",
        ),
        (&format!("{OPEN}\npairs = 3"), LIMIT, "workload.pairs"),
        (
            &format!("{OPEN}\nmatrix = \"among\"\namong = [4]"),
            LIMIT,
            "workload.matrix",
        ),
        (
            &format!("{OPEN}\nmatrix = \"among\"\namong = [4, 16]"),
            LIMIT,
            "workload.among[1]",
        ),
        (
            &format!("{OPEN}\nmatrix = \"weighted\""),
            LIMIT,
            "workload.weights",
        ),
        (
            &format!("{OPEN}\nmatrix = \"weighted\"\nweights = [[0, -1]]"),
            LIMIT,
            "workload.weights[0][1]",
        ),
        (
            &format!("{OPEN}\nmatrix = \"weighted\"\nweights = [[0, 1], [1, 0]]"),
            LIMIT,
            "workload.matrix",
        ),
        (
            &format!("{OPEN}\nweights = [[0]]"),
            LIMIT,
            "workload.weights",
        ),
        (&format!("{UNLOADED}\nload = -1.0"), LIMIT, "workload.load"),
        (&format!("{UNLOADED}\nload = inf"), LIMIT, "workload.load"),
        (
            "kind = \"open-loop\"\nload = 0.5\n\
             size = { dist = \"pareto\", shape = 1.05, mean_bytes = 1000, cap_bytes = 1e300 }",
            LIMIT,
            "workload.size.cap_bytes",
        ),
        // Flows seconds apart: hours of idle slots per flow.
        (&format!("{UNLOADED}\nload = 1e-12"), LIMIT, "workload.load"),
        (
            "kind = \"open-loop\"\nmean_gap_ns = 1e30\nsize = { dist = \"fixed\", bytes = 1 }",
            LIMIT,
            "workload.mean_gap_ns",
        ),
        (
            "kind = \"disaggregated\"\napp = \"hadoop-wordcount\"\nmean_gap_ns = 2e9",
            LIMIT,
            "workload.mean_gap_ns",
        ),
        // Limits that measure nothing or cannot be met.
        (
            OPEN,
            "[run]\nuntil_us = 1.0\nmeasure_from_us = 5.0",
            "run.measure_from_us",
        ),
        (
            &format!("{OPEN}\nflows = 10"),
            "[run]\ncompleted_flows = 11",
            "run.completed_flows",
        ),
        (
            OPEN,
            "[run]\ncompleted_flows = 10\nsample_every_us = 0.001",
            "run.sample_every_us",
        ),
        (
            "kind = \"disaggregated\"\napp = \"bitcoin\"",
            LIMIT,
            "workload.app",
        ),
        (
            "kind = \"trace\"\nfile = \"/no/such/trace.csv\"",
            "",
            "workload.file",
        ),
        (
            &format!("kind = \"trace\"\nfile = \"{}\"", header_only_trace()),
            "",
            "workload.file",
        ),
        (
            "kind = \"closed-loop\"\nper_source = 0\nsize = { dist = \"fixed\", bytes = 1 }",
            LIMIT,
            "workload.per_source",
        ),
        (
            "kind = \"closed-loop\"\nflows_per_source = 0\nsize = { dist = \"fixed\", bytes = 1 }",
            LIMIT,
            "workload.flows_per_source",
        ),
    ];
    for (workload, run, key) in cases {
        match scenario(workload, run) {
            Ok(_) => panic!("accepted:\n{workload}\n{run}"),
            Err(e) => {
                assert_eq!(&e.key, key, "{workload}: {e}");
                // A case must be refused for its value, not for a typo in the test.
                assert_ne!(e.kind, ErrorKind::Syntax, "{workload}: {e}");
            }
        }
    }
    let inf = scenario(&format!("{UNLOADED}\nload = inf"), LIMIT).expect_err("infinite load");
    assert!(inf.to_string().contains("not a finite number"), "{inf}");
}

/// §7.3: L = F/(R·N·τ), so at load 0.5 on 16 nodes of 2 x 25 Gb/s with 1,000 B flows the mean
/// gap is 8,000 bits / (50 Gb/s · 16 · 0.5) = 20 ns; `load_node_gbps` replaces R.
#[test]
fn the_load_sets_the_mean_gap_by_the_papers_definition() {
    let gap = |workload: &str| match scenario(workload, LIMIT).expect("resolves").workload {
        WorkloadSpec::OpenLoop { spec, .. } => match spec.arrivals {
            Arrivals::Poisson { mean_gap_ps } => mean_gap_ps,
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    };
    assert!((gap(OPEN) - 20_000.0).abs() < 1e-6);
    let r = gap(&format!("{OPEN}\nload_node_gbps = 25.0"));
    assert!((r - 40_000.0).abs() < 1e-6);
}

/// A weighted matrix sends only where it has weight: here node 0 to node 1 and node 2 to node 3,
/// three times as often.
#[test]
fn a_weighted_matrix_draws_only_its_pairs() {
    let mut rows = vec![vec![0u64; 16]; 16];
    rows[0][1] = 1;
    rows[2][3] = 3;
    let text: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
    let s = scenario(
        &format!(
            "{OPEN}\nflows = 4000\nmatrix = \"weighted\"\nweights = [{}]",
            text.join(", ")
        ),
        "",
    )
    .expect("a valid weight matrix");
    let (mut src, _) = s.source().expect("source");
    let flows: Vec<_> = std::iter::from_fn(|| src.next_due(Time(u64::MAX))).collect();
    let heavy = flows
        .iter()
        .filter(|f| (f.src.0, f.dst.0) == (2, 3))
        .count();
    let light = flows
        .iter()
        .filter(|f| (f.src.0, f.dst.0) == (0, 1))
        .count();
    assert_eq!(heavy + light, 4000, "only the weighted pairs");
    // Binomial(4000, 3/4): sd 27; five sd either side.
    assert!((2863..=3137).contains(&heavy), "{heavy}");
}

/// A budget per sender bounds a closed loop on its own: no run limit is needed, and each of the 16
/// senders starts exactly its three flows.
#[test]
fn a_per_sender_budget_bounds_a_closed_loop() {
    let s = scenario(
        "kind = \"closed-loop\"\nflows_per_source = 3\nper_source = 2\n\
         size = { dist = \"fixed\", bytes = 1000 }",
        "",
    )
    .expect("bounded by the per-sender budget");
    let (mut src, _) = s.source().expect("source");
    let mut started = vec![0; 16];
    let mut t = 0;
    // Complete every flow as soon as it starts, so each completion asks for the next.
    while let Some(f) = src.next_due(Time(u64::MAX)) {
        started[f.src.idx()] += 1;
        t += 1;
        src.on_complete(f.id, f.src, Time(t));
    }
    assert_eq!(started, vec![3; 16]);
    assert!(src.is_exhausted());
}

#[test]
fn streamed_flows_follow_the_seed_and_are_in_start_order() {
    let s = scenario(&format!("{OPEN}\nflows = 500"), "").expect("bounded: no limit needed");
    let draw = |s: &shoal_scenario::Scenario| {
        let (mut src, count) = s.source().expect("source");
        assert_eq!(count, Some(500));
        std::iter::from_fn(|| src.next_due(Time(u64::MAX))).collect::<Vec<_>>()
    };
    let a = draw(&s);
    assert_eq!(a.len(), 500);
    assert!(a.windows(2).all(|w| w[0].start <= w[1].start));
    assert!(
        a.iter()
            .all(|f| f.src != f.dst && f.src.0 < 16 && f.dst.0 < 16)
    );
    assert_eq!(a, draw(&s));
    assert_ne!(a, draw(&s.with_seed(s.seed + 1)));
}

#[test]
fn start_us_shifts_every_start_once() {
    let starts = |workload: &str| {
        let s = scenario(workload, "").expect("bounded: no limit needed");
        let (mut src, _) = s.source().expect("source");
        std::iter::from_fn(|| src.next_due(Time(u64::MAX)))
            .map(|f| f.start)
            .collect::<Vec<_>>()
    };
    let fixed = "kind = \"open-loop\"\nsize = { dist = \"fixed\", bytes = 1000 }\nflows = 3";
    assert_eq!(starts(fixed), vec![Time::ZERO; 3]);
    assert_eq!(
        starts(&format!("{fixed}\nstart_us = 5.0")),
        vec![Time(5_000_000); 3]
    );
    let poisson = format!("{OPEN}\nflows = 50");
    let shifted: Vec<Time> = starts(&poisson)
        .into_iter()
        .map(|t| Time(t.0 + 5_000_000))
        .collect();
    assert_eq!(starts(&format!("{poisson}\nstart_us = 5.0")), shifted);
}

#[test]
fn a_trace_is_replayed_from_the_scenario_folder() {
    let dir = std::env::temp_dir().join("shoal-scenario-trace-test");
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("t.csv"),
        "src,dst,size_bytes,start_ns\n0,1,1000,0\n2,3,64,5\n",
    )
    .expect("write trace");
    let path = dir.join("s.toml");
    std::fs::write(
        &path,
        format!("{RACK}\n[workload]\nkind = \"trace\"\nfile = \"t.csv\"\n"),
    )
    .expect("write scenario");
    let s = shoal_scenario::load(&path).expect("resolves");
    // The resolved form, written into a results folder elsewhere, still finds the trace.
    let elsewhere = dir.join("results");
    std::fs::create_dir_all(&elsewhere).expect("results dir");
    std::fs::write(elsewhere.join("scenario.toml"), s.resolved_toml()).expect("write resolved");
    let again = shoal_scenario::load(&elsewhere.join("scenario.toml")).expect("re-resolves");
    assert_eq!(again.workload, s.workload);
    let (mut src, count) = s.source().expect("source");
    assert_eq!(count, Some(2));
    let second = src
        .next_due(Time(u64::MAX))
        .and_then(|_| src.next_due(Time(u64::MAX)));
    assert_eq!(
        second.map(|f| (f.src.0, f.dst.0, f.bytes, f.start)),
        Some((2, 3, 64, Time(5_000)))
    );
}

/// A CDF named relative to a scenario given by a relative path is written out absolute, so that
/// the resolved form re-runs from any folder (tests run in the crate's folder).
#[test]
fn a_relative_cdf_path_resolves_to_an_absolute_one() {
    let text = format!(
        "{RACK}\n[workload]\nkind = \"open-loop\"\nload = 0.5\nflows = 10\n\
         size = {{ dist = \"empirical\", cdf = \"websearch.txt\" }}\n"
    );
    let s = parse(&text, "../../data/flow-size-cdfs/relative.toml").expect("resolves");
    let resolved = s.resolved_toml();
    let line = resolved
        .lines()
        .find(|l| l.contains("websearch.txt"))
        .expect("the CDF is named");
    let quoted = line.split('"').find(|p| p.ends_with("websearch.txt"));
    let path = std::path::Path::new(quoted.expect("a quoted path"));
    assert!(path.is_absolute(), "{line}");
    assert!(path.exists(), "{line}");
}

/// The disaggregated profiles need enough nodes per role; a rack too small is refused when the
/// scenario is read, naming the application.
#[test]
fn a_disaggregated_profile_too_large_for_the_rack_names_the_app() {
    let text = "[rack]\nnodes = 8\nchannels = 1\nswitch_ports = 4\n[workload]\n\
                kind = \"disaggregated\"\napp = \"hadoop-wordcount\"\n[run]\ncompleted_flows = 10\n";
    let e = parse(text, "small.toml").expect_err("too few nodes per role");
    assert_eq!(e.key, "workload.app", "{e}");
    assert!(e.to_string().contains("small.toml:7:"), "{e}");
    assert!(e.to_string().contains("8 nodes"), "{e}");
}

/// The flows a scenario's source hands out, up to `n`.
fn first_flows(s: &shoal_scenario::Scenario, n: usize) -> Vec<shoal_workload::Flow> {
    let (mut source, _) = s.source().expect("a source");
    std::iter::from_fn(|| source.next_due(Time(u64::MAX)))
        .take(n)
        .collect()
}

#[test]
fn the_resolved_file_keeps_the_load_as_written_and_the_same_flows() {
    let s = scenario(OPEN, LIMIT).expect("resolves");
    let text = s.resolved_toml();
    assert!(text.contains("\nload = 0.5\n"), "{text}");
    assert!(!text.contains("mean_gap_ns"), "{text}");
    let again = parse(&text, "resolved.toml").expect("the resolved form resolves");
    assert_eq!(again.workload, s.workload);
    assert_eq!(first_flows(&again, 50), first_flows(&s, 50));
}

#[test]
fn flows_all_at_once_keep_their_start_through_the_resolved_file() {
    let s = scenario(&format!("{UNLOADED}\nflows = 20\nstart_us = 5.0"), "").expect("resolves");
    let flows = first_flows(&s, 20);
    assert!(
        flows.iter().all(|f| f.start == Time(5_000_000)),
        "{flows:?}"
    );
    let again = parse(&s.resolved_toml(), "resolved.toml").expect("resolves");
    assert_eq!(again.workload, s.workload);
    assert_eq!(first_flows(&again, 20), flows);
}

/// htsim's connection-matrix files: read beside the scenario, sorted by start, size 0 read as
/// unbounded; a bad line is refused with the file, the line and the reason.
#[test]
fn an_htsim_connection_matrix_runs_and_a_bad_one_names_its_line() {
    let dir = std::env::temp_dir().join("shoal-scenario-cm-test");
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(
        dir.join("m.cm"),
        "Nodes 16\nConnections 2\n3->4 start 5000 size 1000\n0->15 start 0 size 0\n",
    )
    .expect("write matrix");
    let path = dir.join("s.toml");
    let text = format!("{RACK}\n[workload]\nkind = \"connection-matrix\"\nfile = \"m.cm\"\n");
    std::fs::write(&path, &text).expect("write scenario");
    let s = shoal_scenario::load(&path).expect("resolves");
    let again = parse(&s.resolved_toml(), "elsewhere/scenario.toml").expect("re-resolves");
    assert_eq!(again.workload, s.workload);
    let (mut src, count) = s.source().expect("source");
    assert_eq!(count, Some(2));
    let got: Vec<_> = std::iter::from_fn(|| src.next_due(Time(u64::MAX)))
        .map(|f| (f.src.0, f.dst.0, f.bytes, f.start))
        .collect();
    let unbounded = shoal_workload::connection_matrix::UNBOUNDED_BYTES;
    assert_eq!(got, [(0, 15, unbounded, Time(0)), (3, 4, 1000, Time(5000))]);

    std::fs::write(
        dir.join("m.cm"),
        "Nodes 16\nConnections 1\n3->16 start 0 size 1\n",
    )
    .expect("write matrix");
    let e = shoal_scenario::load(&path).expect_err("refused");
    assert_eq!(e.key, "workload.file");
    let shown = e.to_string();
    assert!(
        shown.contains("m.cm:3:") && shown.contains("not below Nodes 16"),
        "{shown}"
    );
}
