//! The equivalence harness: fixtures of per-seed metrics recorded from one data path, and the
//! check that another run function's seed mean of every metric lies within the recorded 95%
//! seed interval (Student t); and exact fixtures, compared value for value.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One run's metrics by name. Every value is a number (counts, ps or ns, fractions).
pub type Metrics = BTreeMap<String, f64>;

/// The folder of the committed fixtures.
pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/fixtures")
}

/// Where the fixtures came from: the commit of the code that ran, and whether the simulator's
/// sources differed from it (they must not, for a fixture to be committed).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Provenance {
    pub commit: String,
    /// `git status --porcelain` of `crates/` was empty, the oracle's own files (this test and
    /// its fixtures) left out: the model that ran is the commit's.
    pub sources_clean: bool,
    /// The command that wrote the fixture.
    pub command: String,
}

impl Provenance {
    /// The worktree's HEAD and whether the crates' sources match it.
    pub fn here(command: &str) -> Provenance {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
        let git = |args: &[&str]| {
            let out = std::process::Command::new("git")
                .args(args)
                .current_dir(&root)
                .output()
                .expect("git runs");
            assert!(out.status.success(), "git {args:?} failed");
            String::from_utf8(out.stdout).expect("git prints UTF-8")
        };
        let commit = git(&["rev-parse", "HEAD"]).trim().to_string();
        let status = git(&[
            "status",
            "--porcelain",
            "--",
            "crates",
            ":(exclude)crates/fabrics/aquila/tests/oracle",
            ":(exclude)crates/fabrics/aquila/tests/oracle.rs",
        ]);
        Provenance {
            commit,
            sources_clean: status.trim().is_empty(),
            command: command.to_string(),
        }
    }
}

/// Per-seed metrics of one case of the old data path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Fixture {
    pub name: String,
    /// What the case runs, in words.
    pub about: String,
    /// The case's inputs (scenario and overrides, or the spec's changes and the call): the
    /// check refuses a fixture whose case has changed since it was recorded.
    pub inputs: serde_json::Value,
    pub provenance: Provenance,
    pub seeds: Vec<u64>,
    /// Each metric's value for each seed, in `seeds` order. Only metrics every seed reported.
    pub metrics: BTreeMap<String, Vec<f64>>,
}

impl Fixture {
    /// Runs `run` on each seed and keeps the metrics every seed reported.
    pub fn record(
        name: &str,
        about: &str,
        inputs: serde_json::Value,
        provenance: Provenance,
        seeds: &[u64],
        run: &dyn Fn(u64) -> Metrics,
    ) -> Fixture {
        let runs: Vec<Metrics> = seeds.iter().map(|&s| run(s)).collect();
        let mut metrics: BTreeMap<String, Vec<f64>> = BTreeMap::new();
        for key in runs[0].keys() {
            if runs.iter().all(|r| r.contains_key(key)) {
                metrics.insert(key.clone(), runs.iter().map(|r| r[key]).collect());
            }
        }
        Fixture {
            name: name.to_string(),
            about: about.to_string(),
            inputs,
            provenance,
            seeds: seeds.to_vec(),
            metrics,
        }
    }

    pub fn path(name: &str) -> PathBuf {
        fixture_dir().join(format!("{name}.json"))
    }

    pub fn load(name: &str) -> Fixture {
        let path = Fixture::path(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (record it first)", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    pub fn save(&self) {
        std::fs::create_dir_all(fixture_dir()).expect("fixture folder");
        let text = serde_json::to_string_pretty(self).expect("serialises");
        std::fs::write(Fixture::path(&self.name), text + "\n").expect("fixture written");
    }
}

/// A sample's mean and its 95% confidence interval's half-width (Student t,
/// `shoal_metrics::mean_ci95`); an interval needs at least two seeds.
pub fn interval(values: &[f64]) -> (f64, f64) {
    let ci = shoal_metrics::mean_ci95(values).expect("an interval needs at least two seeds");
    let half = ci.half_width.expect("an interval needs at least two seeds");
    (ci.mean, half)
}

/// A metric whose new seed mean left the recorded interval.
#[derive(Debug)]
pub struct Outside {
    pub metric: String,
    pub new_mean: f64,
    pub old_mean: f64,
    pub half_width: f64,
}

/// Runs `run` on the fixture's seeds and returns the metrics whose seed mean lies outside the
/// fixture's 95% seed interval, and the recorded metrics the run did not report (as
/// `Outside` with a NaN mean). A metric that did not vary over the recorded seeds has an
/// interval of that one value: the new mean must equal it (within floating-point rounding).
/// Metrics the run reports beyond the fixture's are not checked.
pub fn outside_interval(fixture: &Fixture, run: &dyn Fn(u64) -> Metrics) -> Vec<Outside> {
    let runs: Vec<Metrics> = fixture.seeds.iter().map(|&s| run(s)).collect();
    let mut out = Vec::new();
    for (metric, old) in &fixture.metrics {
        let (old_mean, half_width) = interval(old);
        let new: Option<Vec<f64>> = runs.iter().map(|r| r.get(metric).copied()).collect();
        let new_mean = new.map_or(f64::NAN, |v| v.iter().sum::<f64>() / v.len() as f64);
        let rounding = 1e-9 * old_mean.abs().max(1.0);
        if new_mean.is_nan() || (new_mean - old_mean).abs() > half_width + rounding {
            out.push(Outside {
                metric: metric.clone(),
                new_mean,
                old_mean,
                half_width,
            });
        }
    }
    out
}

/// Panics naming every metric of `fixture` that `run` moved out of its interval.
pub fn assert_within(fixture: &Fixture, inputs: &serde_json::Value, run: &dyn Fn(u64) -> Metrics) {
    assert_eq!(
        &fixture.inputs, inputs,
        "{}: the case's inputs changed since the fixture was recorded",
        fixture.name
    );
    let outside = outside_interval(fixture, run);
    assert!(
        outside.is_empty(),
        "{}: {} of {} metrics outside the old path's 95% seed interval: {}",
        fixture.name,
        outside.len(),
        fixture.metrics.len(),
        outside
            .iter()
            .map(|o| format!(
                "{} {} against {} ± {}",
                o.metric, o.new_mean, o.old_mean, o.half_width
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
}

/// One deterministic case's every output, compared value for value.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Exact {
    pub name: String,
    pub about: String,
    pub inputs: serde_json::Value,
    pub provenance: Provenance,
    /// Integers (ps, counts, bytes) by name.
    pub values: BTreeMap<String, u64>,
}

impl Exact {
    pub fn load(name: &str) -> Exact {
        let path = Fixture::path(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (record it first)", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    pub fn save(&self) {
        std::fs::create_dir_all(fixture_dir()).expect("fixture folder");
        let text = serde_json::to_string_pretty(self).expect("serialises");
        std::fs::write(Fixture::path(&self.name), text + "\n").expect("fixture written");
    }

    /// Panics naming every value that differs from the recorded one, or is missing or new.
    pub fn assert_equal(&self, inputs: &serde_json::Value, values: &BTreeMap<String, u64>) {
        assert_eq!(
            &self.inputs, inputs,
            "{}: the case's inputs changed since the fixture was recorded",
            self.name
        );
        let keys: std::collections::BTreeSet<&String> =
            self.values.keys().chain(values.keys()).collect();
        let diffs: Vec<String> = keys
            .into_iter()
            .filter(|k| self.values.get(*k) != values.get(*k))
            .map(|k| format!("{k}: {:?} now {:?}", self.values.get(k), values.get(k)))
            .collect();
        assert!(
            diffs.is_empty(),
            "{}: differs from the old path: {}",
            self.name,
            diffs.join("; ")
        );
    }
}
