//! The equivalence harness: fixtures of per-seed metrics recorded from one data path, and the
//! checks of another run function's seeds against them; and exact fixtures, compared value for
//! value.
//!
//! Two checks of a case's seeds, one the test:
//! - [`outside_interval`], criterion (b) as first written: every metric's new seed mean within
//!   the old seeds' 95% interval (Student t). Reported, not asserted: with ten seeds a model of
//!   the same distribution misses one metric's interval about 11% of the time (the new mean has
//!   its own spread), and a case has up to 40 correlated metrics, so an equivalent path fails
//!   some case by chance.
//! - [`differing`], the test (the recorded decision on criterion (b)): per metric, Welch's
//!   two-sample t test of the new seeds against the old ones; over every metric of every case
//!   of one verdict (the sweep, or one case alone), Holm-Bonferroni at a family-wise level of
//!   [`ALPHA`]: a path of the old one's distribution fails the sweep with a chance of 5% at
//!   most. (Per case instead, 25 cases at 5% each fail some case 72% of the time: the old
//!   path's own seeds 11-20 fail Fig. 8's bulk case per case, its p50 read time at p = 4e-4.)
//!   A metric constant over the old seeds
//!   must keep that value on every new seed, unless it is a percentile (`_p50`, `_p99`): a
//!   percentile sitting on an atom of its distribution (many cells with one latency) is tied
//!   over seeds by chance, not by construction (the old path's own seeds 11-20 leave the atom
//!   on one seed of ten for Fig. 6's p50 latency and three for Fig. 9's p50 RTT), so the
//!   number of new seeds off the atom is compared with the old seeds' none by Fisher's exact
//!   test, in the same Holm family; a difference of means within the metric's
//!   resolution (the smallest gap between distinct old values: a histogram bucket, a cell's
//!   words) passes, since a t test on values that move in steps rejects steps smaller than
//!   the values can show. The old path's own seeds 11-20 pass it (`old_seeds_11_to_20/`).

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
}

/// A sample's mean and its 95% confidence interval's half-width (Student t,
/// `shoal_metrics::mean_ci95`); an interval needs at least two seeds.
pub fn interval(values: &[f64]) -> (f64, f64) {
    let ci = shoal_metrics::mean_ci95(values).expect("an interval needs at least two seeds");
    let half = ci.half_width.expect("an interval needs at least two seeds");
    (ci.mean, half)
}

/// Each metric's value on each of the fixture's seeds, by `run`: only metrics every seed
/// reported.
pub fn run_seeds(fixture: &Fixture, run: &dyn Fn(u64) -> Metrics) -> BTreeMap<String, Vec<f64>> {
    let runs: Vec<Metrics> = fixture.seeds.iter().map(|&s| run(s)).collect();
    let mut out = BTreeMap::new();
    for key in runs[0].keys() {
        let values: Option<Vec<f64>> = runs.iter().map(|r| r.get(key).copied()).collect();
        if let Some(v) = values {
            out.insert(key.clone(), v);
        }
    }
    out
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// A metric whose new seed mean left the recorded interval.
#[derive(Debug)]
pub struct Outside {
    pub metric: String,
    pub new_mean: f64,
    pub old_mean: f64,
    pub half_width: f64,
}

/// The metrics whose seed mean over `new` lies outside the fixture's 95% seed interval, and
/// the recorded metrics `new` lacks (as `Outside` with a NaN mean). A metric that did not vary
/// over the recorded seeds has an interval of that one value: the new mean must equal it
/// (within floating-point rounding). Metrics beyond the fixture's are not checked.
pub fn outside_interval(fixture: &Fixture, new: &BTreeMap<String, Vec<f64>>) -> Vec<Outside> {
    let mut out = Vec::new();
    for (metric, old) in &fixture.metrics {
        let (old_mean, half_width) = interval(old);
        let new_mean = new.get(metric).map_or(f64::NAN, |v| mean(v));
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

/// The family-wise error rate of one case's test: the chance that a path of the old one's
/// distribution fails a case.
pub const ALPHA: f64 = 0.05;

/// A metric the test finds moved: its case, its means and its p-value (0 for a constant moved
/// or a metric gone).
#[derive(Debug)]
pub struct Differs {
    pub case: String,
    pub metric: String,
    pub old_mean: f64,
    pub new_mean: f64,
    pub p: f64,
}

/// The metrics of the family of cases `family` (each fixture with its new seeds' values)
/// that differ from the fixtures' by the test the module describes (Welch's t per metric,
/// Holm-Bonferroni over the family at [`ALPHA`], constants exact but for percentiles, a
/// resolution floor).
pub fn differing(family: &[(&Fixture, &BTreeMap<String, Vec<f64>>)]) -> Vec<Differs> {
    let mut out = Vec::new();
    let mut tested = Vec::new();
    for (fixture, new) in family {
        candidates(fixture, new, &mut out, &mut tested);
    }
    // Holm: the k-th smallest of m p-values is compared with ALPHA / (m - k), stopping at
    // the first that passes.
    tested.sort_by(|a, b| a.p.total_cmp(&b.p));
    let m = tested.len();
    for (k, d) in tested.into_iter().enumerate() {
        if d.p > ALPHA / (m - k) as f64 {
            break;
        }
        out.push(d);
    }
    out
}

/// One case's metrics: those that fail outright (gone, a constant moved) into `out`, those
/// tested with their p-values into `tested`.
fn candidates(
    fixture: &Fixture,
    new: &BTreeMap<String, Vec<f64>>,
    out: &mut Vec<Differs>,
    tested: &mut Vec<Differs>,
) {
    for (metric, old) in &fixture.metrics {
        let old_mean = mean(old);
        let Some(values) = new.get(metric) else {
            out.push(Differs {
                case: fixture.name.clone(),
                metric: metric.clone(),
                old_mean,
                new_mean: f64::NAN,
                p: 0.0,
            });
            continue;
        };
        let new_mean = mean(values);
        let moved = Differs {
            case: fixture.name.clone(),
            metric: metric.clone(),
            old_mean,
            new_mean,
            p: 0.0,
        };
        let rounding = 1e-9 * old_mean.abs().max(1.0);
        if old.iter().all(|&x| x == old[0]) {
            let off = values
                .iter()
                .filter(|&&x| (x - old[0]).abs() > rounding)
                .count();
            if off == 0 {
                continue;
            }
            if is_percentile(metric) {
                tested.push(Differs {
                    p: fisher_p(0, old.len(), off, values.len()),
                    ..moved
                });
            } else {
                out.push(moved);
            }
            continue;
        }
        if (new_mean - old_mean).abs() <= resolution(old) + rounding {
            continue;
        }
        tested.push(Differs {
            p: welch_p(old, values),
            ..moved
        });
    }
}

/// Whether metric `name` is a percentile (a word `p` and digits: `rtt_p50_ns`).
fn is_percentile(name: &str) -> bool {
    name.split('_')
        .any(|w| w.len() > 1 && w.starts_with('p') && w[1..].bytes().all(|b| b.is_ascii_digit()))
}

/// Fisher's exact two-sided p-value for `a` of `n` against `b` of `m`: the probability, with
/// the margins fixed, of a table no more likely than the one seen.
pub fn fisher_p(a: usize, n: usize, b: usize, m: usize) -> f64 {
    let k = a + b;
    let ln_choose = |n: usize, r: usize| {
        ln_gamma(n as f64 + 1.0) - ln_gamma(r as f64 + 1.0) - ln_gamma((n - r) as f64 + 1.0)
    };
    let prob = |x: usize| (ln_choose(n, x) + ln_choose(m, k - x) - ln_choose(n + m, k)).exp();
    let seen = prob(a);
    (k.saturating_sub(m)..=k.min(n))
        .map(prob)
        .filter(|&q| q <= seen * (1.0 + 1e-9))
        .sum::<f64>()
        .min(1.0)
}

/// The smallest gap between distinct values of `v` (at least two distinct values).
fn resolution(v: &[f64]) -> f64 {
    let mut sorted = v.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0.0)
        .fold(f64::INFINITY, f64::min)
}

fn sample_var(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64
}

/// Welch's two-sided p-value for equal means of samples `a` and `b` (Welch-Satterthwaite
/// degrees of freedom).
pub fn welch_p(a: &[f64], b: &[f64]) -> f64 {
    let (va, vb) = (
        sample_var(a) / a.len() as f64,
        sample_var(b) / b.len() as f64,
    );
    let se2 = va + vb;
    let d = mean(b) - mean(a);
    if se2 == 0.0 {
        return if d == 0.0 { 1.0 } else { 0.0 };
    }
    let t = d / se2.sqrt();
    let df = se2 * se2 / (va * va / (a.len() - 1) as f64 + vb * vb / (b.len() - 1) as f64);
    student_t_two_sided(t, df)
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t))
}

/// The regularized incomplete beta function I_x(a, b), by its continued fraction (evaluated
/// by Lentz's method) on the side of x where it converges fast.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(a, b, x) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The continued fraction 1/(1+ d1/(1+ d2/(1+ ...))) of I_x(a, b), with
/// d_{2m+1} = -(a+m)(a+b+m)x / ((a+2m)(a+2m+1)) and d_{2m} = m(b-m)x / ((a+2m-1)(a+2m)).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0));
    let mut f = d;
    for m in 1..500 {
        let m = f64::from(m);
        for coeff in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 / nonzero(1.0 + coeff * d);
            c = nonzero(1.0 + coeff / c);
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    f
}

/// ln Γ(z) for z > 0 (Lanczos' approximation, g = 7, nine terms; relative error below 1e-13).
fn ln_gamma(z: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if z < 0.5 {
        // Reflection: Γ(z)Γ(1-z) = π / sin(πz).
        return (std::f64::consts::PI / (std::f64::consts::PI * z).sin()).ln() - ln_gamma(1.0 - z);
    }
    let z = z - 1.0;
    let sum = C[1..]
        .iter()
        .enumerate()
        .fold(C[0], |s, (i, &c)| s + c / (z + i as f64 + 1.0));
    let t = z + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (z + 0.5) * t.ln() - t + sum.ln()
}

/// Runs `run` on the fixture's seeds (refusing a fixture whose case's inputs changed): each
/// metric's values, for [`differing`].
pub fn run_case(
    fixture: &Fixture,
    inputs: &serde_json::Value,
    run: &dyn Fn(u64) -> Metrics,
) -> BTreeMap<String, Vec<f64>> {
    assert_eq!(
        &fixture.inputs, inputs,
        "{}: the case's inputs changed since the fixture was recorded",
        fixture.name
    );
    run_seeds(fixture, run)
}

/// One line naming the metrics `differs` lists.
pub fn describe(differs: &[Differs]) -> String {
    differs
        .iter()
        .map(|d| {
            format!(
                "{}: {} {} against {} (p {:.2e})",
                d.case, d.metric, d.new_mean, d.old_mean, d.p
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
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
