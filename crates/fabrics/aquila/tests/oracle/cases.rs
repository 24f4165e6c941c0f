//! The cases the oracle records: every committed Aquila scenario run as `shoal run` runs it (at
//! the repro entries' quick scale where the file's own is too heavy), every Aquila repro entry's
//! quick runs (the same spec and calls as `shoal repro --quick`, with the seed free), and the
//! small deterministic cases that must match exactly.
//!
//! `shoal run` refuses `aquila-failure.toml` (flow runs take no failures), so that file is
//! covered by its repro entry's two runs. `aquila-bootstrap`'s repro entry computes the SDN's bootstrap schedule on its own event
//! queue and never runs the data path, so it has no case here; its scenario file's flows do.

use super::harness::Metrics;
use serde_json::{Value, json};
use shoal_aquila::cliquemap::{Bulk, Lookups, Transport};
use shoal_aquila::control::failure::{FailureRun, fail_links, without_failures};
use shoal_aquila::routing::Mode;
use shoal_aquila::scenario::CliqueSpec;
use shoal_aquila::spec::Injection;
use shoal_aquila::{Counters, LookupRun, Pattern, Saturation, Spec, lookups_beside, saturate};
use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{NoProgress, RunLimits, RunOutput};
use shoal_metrics::Percentiles;
use shoal_scenario::Scenario;
use shoal_workload::{Flow, IterSource};
use std::collections::BTreeMap;

/// A case of per-seed metrics: its fixture's name, what it runs, its inputs, and the run.
pub struct Case {
    pub name: String,
    pub about: String,
    pub inputs: Value,
    pub run: Box<dyn Fn(u64) -> Metrics>,
}

/// The seeds every fixture records.
pub const SEEDS: [u64; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

/// The committed scenario file `name`.
fn scenario(name: &str) -> Scenario {
    let path = format!(
        "{}/../../../scenarios/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    shoal_scenario::parse(&text, &format!("scenarios/{name}.toml")).expect("scenario parses")
}

/// Settings as a JSON object, for a fixture's inputs.
fn settings_json(settings: &[(&str, toml::Value)]) -> Value {
    Value::Object(
        settings
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect(),
    )
}

/// `shoal run` of scenario `file` with `settings` (its sweep dropped when there are any), at a
/// seed.
fn scenario_case(
    name: &str,
    about: &str,
    file: &'static str,
    settings: Vec<(&'static str, toml::Value)>,
) -> Case {
    let inputs = json!({
        "call": "shoal run (Scenario::run)",
        "scenario": format!("scenarios/{file}.toml"),
        "overrides": settings_json(&settings),
        "seed": "Scenario::with_seed",
    });
    let run = move |seed: u64| {
        let base = scenario(file);
        let mut s = if settings.is_empty() {
            base
        } else {
            let mut s = base.with_settings(&settings).expect("overrides apply");
            s.sweep = None;
            s
        };
        s = s.with_seed(seed);
        let out = s.run(&mut NoProgress).expect("runs");
        flow_metrics(&s, &out)
    };
    Case {
        name: name.to_string(),
        about: about.to_string(),
        inputs,
        run: Box::new(run),
    }
}

/// Counters the run gained after the fixtures were recorded, so absent from them: the RTT
/// from a packet's first data cell and the admission's part of it (issue 38's Fig. 6 fidelity
/// step), histograms beside the RTT from the RTS that change no event.
fn added_since_fixtures(counter: &str) -> bool {
    counter.starts_with("data_rtt_") || counter.starts_with("admission_")
}

/// The metrics of a run of flows: its counters (the event count left out: a property of the
/// data path's design, not of the model), the payload carried over the hosts' capacity in the
/// measured window, and the flows' completion times.
fn flow_metrics(s: &Scenario, out: &RunOutput) -> Metrics {
    let mut m: Metrics = out
        .counters
        .iter()
        .filter(|(k, _)| k.as_str() != "events" && !added_since_fixtures(k))
        .map(|(k, &v)| (k.clone(), v as f64))
        .collect();
    let from = s.limits.measure_from.map_or(0, |t| t.0);
    let window_s = (out.sim_time.0 - from) as f64 / 1e12;
    let capacity = s.node_rate().0 as f64 * s.nodes() as f64 * window_s;
    let delivered: u64 = out.delivered_bytes.iter().sum();
    m.insert("carried".into(), delivered as f64 * 8.0 / capacity);
    m.insert("max_queue_cells".into(), out.queues.max_queue as f64);
    let fcts: Vec<f64> = out
        .records
        .iter()
        .filter_map(|r| r.fct())
        .map(|d| d.0 as f64 / 1e3)
        .collect();
    m.insert("flows".into(), out.records.len() as f64);
    m.insert("flows_completed".into(), fcts.len() as f64);
    percentiles("fct", fcts, &mut m);
    let cells = m.get("cells_delivered").copied().unwrap_or(0.0);
    if cells > 0.0 {
        let non_minimal = m.get("non_minimal_cells").copied().unwrap_or(0.0);
        m.insert("non_minimal_share".into(), non_minimal / cells);
    }
    m
}

/// `<name>_count`, `_mean_ns`, `_p50_ns`, `_p99_ns`, `_max_ns` of values in ns (none when empty).
fn percentiles(name: &str, ns: Vec<f64>, m: &mut Metrics) {
    if let Some(p) = Percentiles::of(ns) {
        m.insert(format!("{name}_count"), p.count as f64);
        m.insert(format!("{name}_mean_ns"), p.mean);
        m.insert(format!("{name}_p50_ns"), p.p50);
        m.insert(format!("{name}_p99_ns"), p.p99);
        m.insert(format!("{name}_max_ns"), p.max);
    }
}

fn ns(d: Dur) -> f64 {
    d.0 as f64 / 1e3
}

/// A run's counters, the event counts left out (the data path's design, not the model's).
fn counter_metrics(c: &Counters, m: &mut Metrics) {
    for (k, v) in [
        ("cells_injected", c.cells_injected),
        ("cells_delivered", c.cells_delivered),
        ("cell_hops", c.cell_hops),
        ("non_minimal_cells", c.non_minimal_cells),
        ("packets_delivered", c.packets_delivered),
        ("credit_overflows", c.credit_overflows),
        ("hop_limit_drops", c.hop_limit_drops),
        ("link_failure_drops", c.link_failure_drops),
        ("escaped_cells", c.escaped_cells),
        ("stranded_drops", c.stranded_drops),
        ("max_input_words", u64::from(c.max_input_words)),
        ("max_output_words", u64::from(c.max_output_words)),
        ("measured_wire_bytes", c.measured_wire_bytes),
        ("control_cells", c.control_cells),
        ("ctd_drops", c.ctd_drops),
        ("ecn_marks", c.ecn_marks),
        ("resent_packets", c.resent_packets),
        ("rma_reads_issued", c.rma_reads_issued),
        ("rma_reads_completed", c.rma_reads_completed),
        ("rma_req_cells", c.rma_req_cells),
        ("rma_resp_cells", c.rma_resp_cells),
        ("rpcs_issued", c.rpcs_issued),
        ("rpcs_completed", c.rpcs_completed),
    ] {
        m.insert(k.into(), v as f64);
    }
    if c.cells_delivered > 0 {
        let mean_ps = c.cell_latency_sum as f64 / c.cells_delivered as f64;
        m.insert("cell_latency_mean_ns".into(), mean_ps / 1e3);
        m.insert(
            "non_minimal_share".into(),
            c.non_minimal_cells as f64 / c.cells_delivered as f64,
        );
    }
}

fn saturation_metrics(s: &Saturation) -> Metrics {
    let mut m = Metrics::new();
    counter_metrics(&s.counters, &mut m);
    m.insert("throughput".into(), s.throughput);
    m.insert("non_minimal_fraction".into(), s.non_minimal_fraction);
    m
}

fn lookup_metrics(run: &LookupRun) -> Metrics {
    let mut m = Metrics::new();
    counter_metrics(&run.counters, &mut m);
    m.insert("in_flight".into(), run.in_flight as f64);
    m.insert("at_rest".into(), f64::from(u8::from(run.at_rest)));
    m.insert("bulk_payload_bytes".into(), run.bulk_payload_bytes as f64);
    let r = &run.reads;
    m.insert("reads".into(), r.len() as f64);
    m.insert(
        "reads_done".into(),
        r.iter().filter(|r| r.done.is_some()).count() as f64,
    );
    percentiles(
        "read_exec",
        r.iter().filter_map(|r| r.execution()).map(ns).collect(),
        &mut m,
    );
    percentiles(
        "read_fabric",
        r.iter().filter_map(|r| r.fabric()).map(ns).collect(),
        &mut m,
    );
    percentiles("read_pcie", r.iter().map(|r| ns(r.pcie)).collect(), &mut m);
    percentiles(
        "read_target_wait",
        r.iter().map(|r| ns(r.target_wait)).collect(),
        &mut m,
    );
    percentiles(
        "read_held",
        r.iter().map(|r| ns(r.issued - r.arrived)).collect(),
        &mut m,
    );
    percentiles(
        "read_lookup",
        r.iter()
            .filter_map(|r| r.lookup_latency())
            .map(ns)
            .collect(),
        &mut m,
    );
    let p = &run.rpcs;
    m.insert("rpcs".into(), p.len() as f64);
    percentiles(
        "rpc_latency",
        p.iter().filter_map(|r| r.latency()).map(ns).collect(),
        &mut m,
    );
    m
}

fn failure_metrics(run: &FailureRun) -> Metrics {
    let mut m = Metrics::new();
    counter_metrics(&run.counters, &mut m);
    m.insert("in_flight".into(), run.in_flight as f64);
    m.insert("at_rest".into(), f64::from(u8::from(run.at_rest)));
    m.insert("end_ns".into(), ns(run.end - Time::ZERO));
    for (i, p) in run.phases.iter().enumerate() {
        m.insert(format!("phase{i}_cells"), p.cells as f64);
        m.insert(format!("phase{i}_mean_latency_ns"), ns(p.mean_latency));
    }
    m
}

/// The repro entries' quick CliqueMap clique (`aquila_lookups::quick_clique`): 9 pods of 4
/// TiNs, 4 global links between pods.
fn quick_lookup_clique() -> Spec {
    let mut spec = Spec::aquila();
    let df = &mut spec.dragonfly;
    (df.pods, df.tins_per_pod, df.global_links) = (9, 4, 4);
    (df.local_ports, df.global_ports) = (6, 8);
    spec
}

/// §5's 4 KB values.
const VALUE_BYTES: u32 = 4096;

/// A lookups run (Fig. 7, 8, 10 quick): `load` of each host's rate in lookups of
/// `transport`, `bulk` beside them, 5 µs of warm-up then 40 µs.
fn lookup_case(
    name: &str,
    about: &str,
    load: f64,
    transport: Transport,
    bulk: Option<Bulk>,
) -> Case {
    let inputs = json!({
        "call": "lookups_beside",
        "clique": "9 x 4, 4 global links, local_ports 6, global_ports 8 (quick_clique)",
        "load": load,
        "transport": format!("{transport:?}"),
        "bulk": format!("{bulk:?}"),
        "warmup_us": 5,
        "window_us": 40,
        "seed": "Spec::seed",
    });
    let run = move |seed: u64| {
        let spec = Spec {
            seed,
            ..quick_lookup_clique()
        };
        let from = Time::ZERO + Dur::from_us(5);
        let l = Lookups {
            qps_per_client: Lookups::qps_for_load(load, spec.host_rate, &spec.rma, VALUE_BYTES),
            value_bytes: VALUE_BYTES,
            until: from + Dur::from_us(40),
            transport,
        };
        lookup_metrics(&lookups_beside(&spec, l, bulk, from).expect("runs"))
    };
    Case {
        name: name.to_string(),
        about: about.to_string(),
        inputs,
        run: Box::new(run),
    }
}

/// `aquila-theory`'s quick clique: 9 × 4, one global link between pods, hosts at a quarter
/// of `host_gbps`, raw cells unless `ip`.
fn theory_clique(mode: Mode, host_gbps: u64, ip: bool, seed: u64) -> Spec {
    let full = Spec::aquila();
    let mut df = full.dragonfly.clone();
    (df.pods, df.tins_per_pod, df.local_links, df.global_links) = (9, 4, 2, 1);
    (df.local_ports, df.global_ports) = (6, 2);
    Spec {
        dragonfly: df,
        host_rate: Rate(Rate::gbps(host_gbps).0 / 4),
        mode,
        injection: if ip {
            Injection::RtsCts
        } else {
            Injection::RawCells
        },
        seed,
        ..full
    }
}

fn theory_case(
    name: &str,
    about: &str,
    mode: Mode,
    host_gbps: u64,
    ip: bool,
    pattern: Pattern,
) -> Case {
    let inputs = json!({
        "call": "saturate",
        "clique": "9 x 4, local_links 2, global_links 1, local_ports 6, global_ports 2 (aquila-theory quick)",
        "mode": format!("{mode:?}"),
        "host_gbps": host_gbps as f64 / 4.0,
        "injection": if ip { "rts-cts" } else { "raw-cells" },
        "pattern": format!("{pattern:?}"),
        "warmup_us": 10,
        "window_us": 20,
        "seed": "Spec::seed",
    });
    let run = move |seed: u64| {
        let spec = theory_clique(mode, host_gbps, ip, seed);
        let s = saturate(&spec, pattern, Dur::from_us(10), Dur::from_us(20)).expect("runs");
        saturation_metrics(&s)
    };
    Case {
        name: name.to_string(),
        about: about.to_string(),
        inputs,
        run: Box::new(run),
    }
}

fn failure_case(name: &str, about: &str, fail: bool) -> Case {
    let inputs = json!({
        "call": if fail { "fail_links" } else { "without_failures" },
        "scenario": "scenarios/aquila-failure.toml ([clique] and [failure])",
        "pattern": "UniformRandom",
        "seed": "Spec::seed",
    });
    let run = move |seed: u64| {
        let s = scenario("aquila-failure");
        let clique = s.spec::<CliqueSpec>().expect("an Aquila clique");
        let f = clique.failure.as_ref().expect("a [failure] table");
        let spec = Spec {
            seed,
            ..clique.spec.clone()
        };
        let go = if fail { fail_links } else { without_failures };
        let r = go(
            &spec,
            Pattern::UniformRandom,
            f.packets,
            &f.links,
            f.sdn_delay,
        )
        .expect("runs");
        failure_metrics(&r)
    };
    Case {
        name: name.to_string(),
        about: about.to_string(),
        inputs,
        run: Box::new(run),
    }
}

/// Every case of per-seed metrics, in the order the generator records them.
pub fn cases() -> Vec<Case> {
    let int = |v: i64| toml::Value::Integer(v);
    let mut out = Vec::new();
    // aquila-fig6-uniform at aquila-fig6's quick scale (its three loads).
    for (load, tag) in [(0.3, "0.3"), (0.7, "0.7"), (0.9, "0.9")] {
        out.push(scenario_case(
            &format!("fig6-quick-load{tag}"),
            "aquila-fig6-uniform at the repro entry's quick scale: 72 hosts, uniform 4 KB IP \
             packets, 200 us after 10 us of warm-up",
            "aquila-fig6-uniform",
            vec![
                ("clique.pods", int(9)),
                ("clique.tins_per_pod", int(4)),
                ("clique.global_links", int(4)),
                ("clique.local_ports", int(6)),
                ("clique.global_ports", int(8)),
                ("workload.load", toml::Value::Float(load)),
                ("run.until_us", int(210)),
                ("run.measure_from_us", int(10)),
            ],
        ));
    }
    // aquila-fig9-full and -half at aquila-fig9's quick scale (its two RPC sizes).
    for (file, tag, global_links) in [
        ("aquila-fig9-full", "full", 1),
        ("aquila-fig9-half", "half", 4),
    ] {
        for bytes in [4056, 64 * 4056] {
            out.push(scenario_case(
                &format!("fig9-{tag}-quick-{bytes}B"),
                "aquila-fig9 at the repro entry's quick scale: 72 hosts, 0.6 Gb/s of IP RPCs \
                 per host, 1.3 ms measured after 200 us",
                file,
                vec![
                    ("clique.pods", int(9)),
                    ("clique.tins_per_pod", int(4)),
                    ("clique.global_links", int(global_links)),
                    ("clique.local_ports", int(6)),
                    ("clique.global_ports", int(8)),
                    ("workload.size.bytes", int(bytes)),
                    ("run.until_us", int(1500)),
                    ("run.measure_from_us", int(200)),
                ],
            ));
        }
    }
    // The bootstrap scenario file's [workload] flows as `shoal run` runs them. (`shoal run`
    // refuses aquila-failure.toml: flow runs take no failures; its [failure] table is run by
    // the failure cases below, as its repro entry runs it.)
    out.push(scenario_case(
        "scenario-bootstrap-flows",
        "scenarios/aquila-bootstrap.toml as shoal run runs it: 64 permutation pairs on the full \
         clique",
        "aquila-bootstrap",
        vec![],
    ));
    // aquila-fig7 quick: 1RMA reads at three loads.
    for (load, tag) in [(0.1, "0.1"), (0.5, "0.5"), (0.9, "0.9")] {
        out.push(lookup_case(
            &format!("fig7-quick-load{tag}"),
            "aquila-fig7 quick: CliqueMap 4 KB lookups by 1RMA",
            load,
            Transport::Rma,
            None,
        ));
    }
    // aquila-fig8 quick: 1RMA at 0.1 alone, beside bulk IP, sharing its VCs.
    let bulk = |shares| Bulk {
        qps_per_host: 10_000.0,
        bytes: 64 * 1024,
        rma_shares_bulk_vcs: shares,
    };
    for (tag, b) in [
        ("alone", None),
        ("bulk", Some(bulk(false))),
        ("shared", Some(bulk(true))),
    ] {
        out.push(lookup_case(
            &format!("fig8-quick-{tag}"),
            "aquila-fig8 quick: 1RMA lookups at 0.1 of the host rate, bulk IP of 64 KB \
             messages at 10,000/s per host beside them or not",
            0.1,
            Transport::Rma,
            b,
        ));
    }
    // aquila-fig10 quick: 1RMA against IP RPC lookups at two loads.
    let ip = Transport::IpRpc {
        service: Dur::from_us(1),
    };
    for (load, tag) in [(0.05, "0.05"), (0.5, "0.5")] {
        for (t, tname) in [(Transport::Rma, "rma"), (ip, "ip")] {
            out.push(lookup_case(
                &format!("fig10-quick-load{tag}-{tname}"),
                "aquila-fig10 quick: CliqueMap 4 KB lookups by 1RMA or by IP RPC (1 us of \
                 backend service)",
                load,
                t,
                None,
            ));
        }
    }
    // aquila-theory quick: five saturated runs.
    for (tag, mode, gbps, ip, pattern) in [
        (
            "uniform-raw",
            Mode::FullyAdaptive,
            100,
            false,
            Pattern::UniformRandom,
        ),
        (
            "uniform-rtscts",
            Mode::FullyAdaptive,
            100,
            true,
            Pattern::UniformRandom,
        ),
        (
            "podshift-valiant",
            Mode::Valiant,
            100,
            false,
            Pattern::PodShift,
        ),
        (
            "podshift-adaptive",
            Mode::FullyAdaptive,
            100,
            false,
            Pattern::PodShift,
        ),
        (
            "podshift-minimal",
            Mode::MinimalAdaptive,
            50,
            false,
            Pattern::PodShift,
        ),
    ] {
        out.push(theory_case(
            &format!("theory-quick-{tag}"),
            "aquila-theory quick: every host injecting at its full rate",
            mode,
            gbps,
            ip,
            pattern,
        ));
    }
    // aquila-failure: its two runs (with the failures and without).
    out.push(failure_case(
        "failure-with",
        "aquila-failure: four links fail under full load, the SDN removes them",
        true,
    ));
    out.push(failure_case(
        "failure-without",
        "aquila-failure's reference run: the same traffic, no failure",
        false,
    ));
    out
}

/// A deterministic case: inputs and every output as integers.
pub struct ExactCase {
    pub name: &'static str,
    pub about: &'static str,
    pub inputs: Value,
    pub run: fn() -> BTreeMap<String, u64>,
}

/// The exact cases' clique: 9 pods of 4 TiNs, one global link between pods, 25 Gb/s hosts
/// (the simulator tests' small clique), routing fully adaptive.
fn small(injection: Injection) -> Spec {
    let full = Spec::aquila();
    let mut df = full.dragonfly.clone();
    (df.pods, df.tins_per_pod, df.local_links, df.global_links) = (9, 4, 2, 1);
    (df.local_ports, df.global_ports) = (6, 2);
    Spec {
        dragonfly: df,
        host_rate: Rate::gbps(25),
        injection,
        ..full
    }
}

fn flow(id: u64, src: u16, dst: u16, bytes: u64, start_ps: u64) -> Flow {
    Flow {
        id,
        src: NodeId(src),
        dst: NodeId(dst),
        bytes,
        start: Time(start_ps),
        class: 0,
    }
}

/// Runs `flows` on `spec` until every one has ended and returns every output as an integer:
/// the counters (the event count left out), each flow's finish time, the stop time and the
/// bytes delivered to each host that received any.
fn exact_run(spec: &Spec, flows: Vec<Flow>) -> BTreeMap<String, u64> {
    let mut source = IterSource::new(flows);
    let limits = RunLimits {
        until: Some(Time::ZERO + Dur::from_us(1000)),
        ..RunLimits::default()
    };
    let out = shoal_aquila::run_flows(spec, &mut source, limits, &mut NoProgress).expect("runs");
    let mut v: BTreeMap<String, u64> = out
        .counters
        .iter()
        .filter(|(k, _)| k.as_str() != "events" && !added_since_fixtures(k))
        .map(|(k, &v)| (k.clone(), v))
        .collect();
    for r in &out.records {
        v.insert(
            format!("flow{}_finish_ps", r.id),
            r.finish.map_or(u64::MAX, |t| t.0),
        );
    }
    v.insert("sim_time_ps".into(), out.sim_time.0);
    v.insert("max_queue_cells".into(), out.queues.max_queue);
    for (host, &b) in out.delivered_bytes.iter().enumerate() {
        if b > 0 {
            v.insert(format!("host{host}_delivered_bytes"), b);
        }
    }
    v
}

/// Host 0 (pod 0) to host 70 (pod 8): a path with a global hop.
pub fn exact_cases() -> Vec<ExactCase> {
    vec![
        ExactCase {
            name: "exact-one-cell",
            about: "one 100 B flow (one cell), raw cells, host 0 to host 70 of the 9 x 4 \
                    clique at 25 Gb/s",
            inputs: json!({"clique": "9 x 4, 1 global link, 25 Gb/s", "injection": "raw-cells",
                "flows": [[0, 70, 100, 0]]}),
            run: || exact_run(&small(Injection::RawCells), vec![flow(0, 0, 70, 100, 0)]),
        },
        ExactCase {
            name: "exact-one-flow",
            about: "one 64 KB flow, raw cells, host 0 to host 70",
            inputs: json!({"clique": "9 x 4, 1 global link, 25 Gb/s", "injection": "raw-cells",
                "flows": [[0, 70, 65536, 0]]}),
            run: || exact_run(&small(Injection::RawCells), vec![flow(0, 0, 70, 65536, 0)]),
        },
        ExactCase {
            name: "exact-one-rts-cts",
            about: "one 4,056 B IP packet over GNet: one RTS, one CTS, its data cells, its \
                    acknowledgement; host 0 to host 70",
            inputs: json!({"clique": "9 x 4, 1 global link, 25 Gb/s", "injection": "rts-cts",
                "flows": [[0, 70, 4056, 0]]}),
            run: || exact_run(&small(Injection::RtsCts), vec![flow(0, 0, 70, 4056, 0)]),
        },
        ExactCase {
            name: "exact-credit-stall",
            about: "two 256 KB flows from hosts 8 and 40 (other pods) into host 0, the second \
                    starting 1,234 ps later: host 0's port drains at half their rate, its \
                    output queue fills and credits stop the senders",
            inputs: json!({"clique": "9 x 4, 1 global link, 25 Gb/s", "injection": "raw-cells",
                "routing": "minimal-deterministic",
                "flows": [[8, 0, 262144, 0], [40, 0, 262144, 1234]]}),
            run: || {
                // Routes that do not read the queues: the two flows meet only at host 0's
                // port, where the offset keeps their cells from arriving at the same time.
                let spec = Spec {
                    mode: Mode::MinimalDeterministic,
                    ..small(Injection::RawCells)
                };
                exact_run(
                    &spec,
                    vec![flow(0, 8, 0, 262_144, 0), flow(1, 40, 0, 262_144, 1234)],
                )
            },
        },
    ]
}
