//! The differential harness over the shipped scenarios: every Shoal scenario in `scenarios/`,
//! every sweep point, runs on the node engine (the reference model) and on the fast engine,
//! cut short to a number of slots, and the two run outputs must be identical (the random racks
//! and the golden cases are in `crates/fabrics/shoal/tests/`). A scenario with features the
//! fast engine lacks must fall back to the node engine and say so in its counters.
//!
//! Quick part: the first 100 slots of each scenario's last sweep point. Long part, ignored:
//! `cargo test -p shoal-scenario --release --test engines -- --ignored` (20,000 slots).

use shoal_base::Time;
use shoal_fabric::RunOutput;
use shoal_rack::{Engine, RackSpec};
use shoal_scenario::Scenario;
use std::path::PathBuf;

fn shoal_scenarios() -> Vec<(PathBuf, Scenario)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let s = shoal_scenario::load(&p).unwrap_or_else(|e| panic!("{e}"));
            (p, s)
        })
        .filter(|(_, s)| s.fabric_name() == "shoal")
        .collect()
}

/// Runs `point` for at most `slots` slots on `engine`.
fn run(point: &Scenario, engine: Engine, slots: u64) -> (RunOutput, Option<&'static str>) {
    let mut s = point.clone();
    let spec = s.spec_mut::<RackSpec>().expect("a Shoal rack");
    spec.config.engine = engine;
    // Proven once by the shipped-scenario tests; the harness compares engines, not schedules.
    spec.config.verify_schedule = false;
    let lacks = spec.build_rack().expect("builds").engine_used().1;
    let lacks = lacks.then_some("fallback");
    let stop = Time(slots * spec.config.slot.0);
    s.limits.until = Some(s.limits.until.map_or(stop, |t| t.min(stop)));
    (s.run(&mut shoal_fabric::NoProgress).expect("runs"), lacks)
}

/// Checks every Shoal scenario, every sweep point or (`all_points` false) only the last, the
/// largest in the shipped sweeps.
fn check_all(slots: u64, all_points: bool) {
    let mut points = 0;
    let mut on_fast = 0;
    for (path, s) in shoal_scenarios() {
        let sweep = s.sweep_points().unwrap_or_else(|e| panic!("{e}"));
        let mut all: Vec<Scenario> = if sweep.is_empty() {
            vec![s]
        } else {
            sweep.into_iter().map(|(_, p)| p).collect()
        };
        if !all_points {
            all.drain(..all.len() - 1);
        }
        for point in &all {
            let (node, _) = run(point, Engine::Node, slots);
            let (mut fast, fell_back) = run(point, Engine::Fast, slots);
            assert_eq!(
                fast.counters.remove("engine_fallback"),
                fell_back.map(|_| 1),
                "{}: the fallback is reported exactly when it happens",
                path.display()
            );
            assert_eq!(
                format!("{node:?}"),
                format!("{fast:?}"),
                "{}: the engines differ",
                path.display()
            );
            points += 1;
            on_fast += fell_back.is_none() as u32;
        }
    }
    // The shipped Shoal scenarios include Figs. 9-16; most run on the fast engine.
    assert!(
        points >= 10 && on_fast * 2 > points,
        "{on_fast} of {points}"
    );
}

#[test]
fn every_shipped_shoal_scenario_is_identical_on_both_engines_briefly() {
    check_all(100, false);
}

#[test]
#[ignore = "long: cargo test -p shoal-scenario --release --test engines -- --ignored"]
fn every_shipped_shoal_scenario_is_identical_on_both_engines() {
    check_all(20_000, true);
}

/// `rack.engine` is read, written back in the resolved form, and an unknown name is refused
/// naming the key.
#[test]
fn the_engine_key_round_trips_and_refuses_unknown_engines() {
    let text = |engine: &str| {
        format!(
            "[rack]\nnodes = 16\nchannels = 2\nswitch_ports = 8\nengine = \"{engine}\"\n\
             [workload]\nkind = \"permutation\"\nflow_bytes = 1000\n"
        )
    };
    let s = shoal_scenario::parse(&text("fast"), "fast.toml").expect("resolves");
    assert_eq!(
        s.spec::<RackSpec>().expect("a rack").config.engine,
        Engine::Fast
    );
    assert!(s.resolved_toml().contains("engine = \"fast\""));
    let bare = shoal_scenario::parse(
        "[workload]\nkind = \"permutation\"\nflow_bytes = 1000\n",
        "bare.toml",
    )
    .expect("resolves");
    assert!(bare.resolved_toml().contains("engine = \"auto\""));
    let e = shoal_scenario::parse(&text("turbo"), "turbo.toml").expect_err("refused");
    assert_eq!(e.key, "rack.engine", "{e}");
    assert!(e.reason.contains("auto, node, fast"), "{e}");
}
