//! The oracle of issue 38: the current data path's outputs, recorded as fixtures, that the
//! rebuilt data path must reproduce: value for value on small deterministic cases (one cell,
//! one flow, one RTS/CTS exchange, a credit stall), and elsewhere the same distribution of
//! every metric over seeds 1-10 on every committed Aquila scenario and every Aquila repro
//! entry at quick scale (`oracle/cases.rs` lists them): Welch's t per metric with
//! Holm-Bonferroni over a case's metrics, constants exact, a resolution floor
//! (`oracle/harness.rs` says why this and not the seed mean within the old 95% interval,
//! which it still reports).
//!
//! Fixtures: `tests/oracle/fixtures/*.json`, each naming the commit that recorded it; the old
//! path's own seeds 11-20 in `tests/oracle/old_seeds_11_to_20/`, the test's check on itself.
//! The default test run checks the exact cases, the fixtures' shape, the harness itself, the
//! old path's seeds 11-20, and one small case's ten seeds; the full sweep is `#[ignore]`:
//!
//! ```text
//! cargo test -p shoal-aquila --test oracle -- --ignored --nocapture seed_sweep_matches_the_old_path
//! ```

#[path = "oracle/cases.rs"]
mod cases;
#[path = "oracle/harness.rs"]
mod harness;

use cases::{Case, SEEDS, cases, exact_cases};
use harness::{
    Exact, Fixture, Metrics, Provenance, describe, differing, fisher_p, interval, outside_interval,
    run_case, run_seeds, student_t_two_sided, welch_p,
};
use serde_json::json;

/// Every case's ten seeds against its fixture by the test (issue 38, criterion (b)); each
/// case's line also names the metrics outside the old 95% intervals, for the record. Against
/// the old data path it passes by construction (the same seeds give the same values); against
/// the rebuilt one it is the test.
///
/// `ORACLE_ONLY=<part of a name>` sweeps only the cases whose name contains it.
///
/// ```text
/// cargo test -p shoal-aquila --test oracle -- --ignored --nocapture seed_sweep_matches_the_old_path
/// ```
#[test]
#[ignore = "every case's ten seeds (minutes); run by hand"]
fn seed_sweep_matches_the_old_path() {
    let only = std::env::var("ORACLE_ONLY").unwrap_or_default();
    let all: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.name.contains(&only))
        .collect();
    let fixtures: Vec<Fixture> = all.iter().map(|c| Fixture::load(&c.name)).collect();
    let mut runs = Vec::new();
    let (mut metrics, mut outside_total) = (0, 0);
    for (case, f) in all.iter().zip(&fixtures) {
        let new = run_case(f, &case.inputs, &*case.run);
        let outside = outside_interval(f, &new);
        metrics += f.metrics.len();
        outside_total += outside.len();
        let names: Vec<String> = outside
            .iter()
            .map(|o| {
                format!(
                    "{} {:.4} against {:.4} ± {:.4}",
                    o.metric, o.new_mean, o.old_mean, o.half_width
                )
            })
            .collect();
        eprintln!(
            "{}: {} of {} metrics outside the old 95% interval: {}",
            f.name,
            outside.len(),
            f.metrics.len(),
            names.join(", ")
        );
        runs.push(new);
    }
    let family: Vec<_> = fixtures.iter().zip(&runs).collect();
    let differs = differing(&family);
    for d in &differs {
        let (f, new) = family.iter().find(|(f, _)| f.name == d.case).unwrap();
        eprintln!(
            "  {}: {} per seed {:?}, old {:?}",
            d.case,
            d.metric,
            new.get(&d.metric),
            f.metrics[&d.metric]
        );
    }
    eprintln!(
        "{} of {metrics} metrics of {} cases differ by the test; {outside_total} outside the \
         old intervals",
        differs.len(),
        all.len()
    );
    assert!(differs.is_empty(), "{}", describe(&differs));
}

/// The case the default test run sweeps over its ten seeds: one of the cheapest (Fig. 9's
/// half clique at quick scale, about a second for the ten seeds).
const QUICK_CASE: &str = "fig9-half-quick-4056B";

#[test]
fn one_small_case_matches_the_old_path() {
    let case = cases().into_iter().find(|c| c.name == QUICK_CASE).unwrap();
    let f = Fixture::load(&case.name);
    let new = run_case(&f, &case.inputs, &*case.run);
    let differs = differing(&[(&f, &new)]);
    assert!(differs.is_empty(), "{}", describe(&differs));
}

/// The test on the old path itself: its seeds 11-20 (recorded by the old generator with
/// `SEEDS` set to 11..=20 at e7f0cc5, whose model code is the fixtures') against its seeds
/// 1-10, every case as one family, as the sweep tests them. A correct test passes them.
#[test]
fn the_old_paths_own_seeds_11_to_20_pass_the_test() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/old_seeds_11_to_20");
    let mut pairs = Vec::new();
    for case in cases() {
        let f = Fixture::load(&case.name);
        let text = std::fs::read_to_string(dir.join(format!("{}.json", case.name)))
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let other: Fixture = serde_json::from_str(&text).expect("a fixture");
        assert_eq!(
            other.seeds,
            (11..=20).collect::<Vec<u64>>(),
            "{}",
            case.name
        );
        assert_eq!(other.inputs, f.inputs, "{}", case.name);
        pairs.push((f, other.metrics));
    }
    let family: Vec<_> = pairs.iter().map(|(f, m)| (f, m)).collect();
    let differs = differing(&family);
    assert!(differs.is_empty(), "{}", describe(&differs));
}

#[test]
fn exact_cases_equal_the_old_path() {
    for case in exact_cases() {
        let values = (case.run)();
        Exact::load(case.name).assert_equal(&case.inputs, &values);
        // What each case is there to exercise happened.
        assert_eq!(values["flows_unfinished"], 0, "{}", case.name);
        assert_eq!(values["credit_overflows"], 0, "{}", case.name);
        match case.name {
            "exact-one-cell" => assert_eq!(values["cells_delivered"], 1),
            "exact-one-rts-cts" => assert!(values["control_cells"] >= 2, "an RTS and a CTS"),
            "exact-credit-stall" => {
                // The host port's output queue filled: its input FIFOs then held cells the
                // crossbar could not take, and their senders waited for credit.
                let spec = shoal_aquila::Spec::aquila();
                assert_eq!(
                    values["max_output_queue_words"],
                    u64::from(spec.output_vc_words)
                );
            }
            _ => {}
        }
    }
}

/// Every case has its fixture: ten seeds or more, recorded from a committed state, its inputs
/// still those of the case, and every metric one value per seed.
#[test]
fn every_case_has_a_fixture_of_ten_seeds() {
    let all: Vec<Case> = cases();
    assert!(all.len() >= 20, "the oracle covers every entry");
    for case in &all {
        let f = Fixture::load(&case.name);
        assert!(f.seeds.len() >= 10, "{}", f.name);
        assert!(f.provenance.sources_clean, "{}", f.name);
        assert_eq!(f.provenance.commit.len(), 40, "{}", f.name);
        assert_eq!(f.inputs, case.inputs, "{}: inputs changed", f.name);
        assert_eq!(
            f.about, case.about,
            "{}: the case's description changed",
            f.name
        );
        assert!(!f.metrics.is_empty(), "{}", f.name);
        for (k, v) in &f.metrics {
            assert_eq!(v.len(), f.seeds.len(), "{}: {k}", f.name);
            assert!(v.iter().all(|x| x.is_finite()), "{}: {k}", f.name);
        }
        assert!(
            !f.metrics.contains_key("events"),
            "{}: events are not a model output",
            f.name
        );
    }
    for case in exact_cases() {
        let e = Exact::load(case.name);
        assert!(e.provenance.sources_clean, "{}", e.name);
        assert_eq!(
            e.about, case.about,
            "{}: the case's description changed",
            e.name
        );
        assert!(!e.values.contains_key("events"), "{}", e.name);
    }
}

/// The harness against a run it knows the answer for: a metric drawn per seed, recorded, then
/// checked against the same run (inside), the run shifted by less and by more than the
/// interval's half-width, a constant metric moved by any amount, and a metric gone.
#[test]
fn the_harness_accepts_the_recorded_run_and_rejects_a_shifted_one() {
    let base = |seed: u64| -> Metrics {
        let noise = ((seed * 7919) % 13) as f64;
        [("x".to_string(), 100.0 + noise), ("k".to_string(), 5.0)].into()
    };
    let provenance = Provenance {
        commit: "0".repeat(40),
        sources_clean: true,
        command: String::new(),
    };
    let f = Fixture::record("t", "test", json!({}), provenance, &SEEDS, &base);
    let outside = |run: &dyn Fn(u64) -> Metrics| outside_interval(&f, &run_seeds(&f, run));
    let differs = |run: &dyn Fn(u64) -> Metrics| differing(&[(&f, &run_seeds(&f, run))]);
    assert!(outside(&base).is_empty());
    assert!(differs(&base).is_empty());
    let (_, half) = interval(&f.metrics["x"]);
    assert!(half > 0.0);
    let shifted = |by: f64| {
        move |seed: u64| -> Metrics {
            let mut m = base(seed);
            *m.get_mut("x").unwrap() += by;
            m
        }
    };
    assert!(outside(&shifted(0.9 * half)).is_empty());
    let out = outside(&shifted(1.1 * half));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].metric, "x");
    // The test: a shift within the metric's resolution passes, one of several deviations
    // does not.
    assert!(differs(&shifted(0.9)).is_empty());
    let moved = differs(&shifted(3.0 * half));
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].metric, "x");
    let constant_moved = |seed: u64| -> Metrics {
        let mut m = base(seed);
        *m.get_mut("k").unwrap() += 1e-3;
        m
    };
    assert_eq!(outside(&constant_moved)[0].metric, "k");
    assert_eq!(differs(&constant_moved)[0].metric, "k");
    // A percentile constant over the old seeds may leave its value on a few new seeds.
    let f = Fixture::record(
        "t",
        "test",
        json!({}),
        f.provenance.clone(),
        &SEEDS,
        &|_| [("rtt_p50_ns".to_string(), 4107.0)].into(),
    );
    let two_off = |seed: u64| -> Metrics {
        [(
            "rtt_p50_ns".to_string(),
            if seed <= 2 { 4075.0 } else { 4107.0 },
        )]
        .into()
    };
    let all_off = |_: u64| -> Metrics { [("rtt_p50_ns".to_string(), 4075.0)].into() };
    assert!(differing(&[(&f, &run_seeds(&f, &two_off))]).is_empty());
    assert_eq!(differing(&[(&f, &run_seeds(&f, &all_off))]).len(), 1);
    let gone = |seed: u64| -> Metrics {
        let mut m = base(seed);
        m.remove("x");
        m
    };
    let out = outside(&gone);
    assert_eq!(out.len(), 1);
    assert!(out[0].new_mean.is_nan());
    assert!(differs(&gone)[0].new_mean.is_nan());
}

/// Student's t against published two-sided 5% points, and Welch's test on samples whose
/// answer is known.
#[test]
fn the_t_test_matches_published_values() {
    for (t, df) in [(12.706, 1.0), (2.262, 9.0), (2.042, 30.0), (1.960, 1e7)] {
        let p = student_t_two_sided(t, df);
        assert!((p - 0.05).abs() < 2e-4, "t {t} df {df}: p {p}");
    }
    assert!((student_t_two_sided(0.0, 5.0) - 1.0).abs() < 1e-12);
    // Equal samples: p = 1; far apart: p tiny; Welch on equal variances and sizes has
    // t = d / sqrt(2 s²/n) and 2n - 2 degrees of freedom.
    let a = [1.0, 2.0, 3.0, 4.0, 5.0];
    assert!((welch_p(&a, &a) - 1.0).abs() < 1e-12);
    let b: Vec<f64> = a.iter().map(|x| x + 100.0).collect();
    assert!(welch_p(&a, &b) < 1e-9);
    let c: Vec<f64> = a.iter().map(|x| x + 1.0).collect();
    let want = student_t_two_sided(1.0 / (2.0 * 2.5 / 5.0_f64).sqrt(), 8.0);
    assert!((welch_p(&a, &c) - want).abs() < 1e-12);
    // Fisher: 0 of 10 against k of 10 has p = 2 C(10, k) / C(20, k) while that is below one
    // (the tables as unlikely lie at both ends).
    assert!((fisher_p(0, 10, 0, 10) - 1.0).abs() < 1e-12);
    assert!((fisher_p(0, 10, 4, 10) - 2.0 * 210.0 / 4845.0).abs() < 1e-9);
    assert!((fisher_p(0, 10, 10, 10) - 2.0 / 184_756.0).abs() < 1e-12);
}
