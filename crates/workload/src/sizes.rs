//! Flow-size distributions: a fixed size, the paper's heavy-tailed Pareto (§7.3), and the
//! empirical CDFs the field publishes (web search, Hadoop, storage). All sample by inverse CDF
//! from one uniform draw, so a size stream stays aligned however the distribution changes.
//!
//! Sizes are whole bytes, at least one: a continuous draw `x` becomes `max(1, round(x))`.

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use thiserror::Error;

/// How many bytes each flow carries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeDist {
    /// Every flow has this many bytes.
    Fixed(u64),
    /// Pareto with `shape` α and the *uncapped* mean `mean` (bytes), the way the Shoal paper
    /// states it (α = 1.05, mean 100 KB), so the scale is x_m = mean·(α−1)/α. Draws above `cap`
    /// are **clamped** to `cap`, not redrawn: the cap becomes a point mass, and the realised
    /// mean (see [`SizeDist::expected_mean`]) is far below `mean` when α is near 1.
    Pareto {
        shape: f64,
        mean: f64,
        cap: Option<u64>,
    },
    /// A measured CDF, interpolated linearly between its points.
    Empirical(EmpiricalCdf),
}

/// A parameter of [`SizeDist`] that cannot describe a distribution.
#[derive(Debug, Error, PartialEq)]
pub enum SizeError {
    #[error("a fixed flow size must be at least 1 byte")]
    FixedZero,
    #[error(
        "Pareto shape {0} must be greater than 1: the uncapped mean that sets the scale is \
         infinite for shape <= 1 (and shape <= 0 is no Pareto at all)"
    )]
    ParetoShape(f64),
    #[error("Pareto mean {0} bytes must be a positive finite number")]
    ParetoMean(f64),
    #[error("Pareto scale mean*(shape-1)/shape = {0} bytes is below one byte")]
    ParetoScale(f64),
    #[error("a Pareto cap must be at least 1 byte")]
    ParetoCap,
    #[error(
        "Pareto scale mean*(shape-1)/shape is {0:e} bytes: more than any flow (a shape of \
         {1:e} with a mean of {2:e} B overflows; every flow would be of that size)"
    )]
    ParetoHuge(f64, f64, f64),
}

impl SizeDist {
    /// A validated Pareto: see [`SizeDist::Pareto`].
    pub fn pareto(shape: f64, mean: f64, cap: Option<u64>) -> Result<SizeDist, SizeError> {
        let d = SizeDist::Pareto { shape, mean, cap };
        d.validate()?;
        Ok(d)
    }

    /// Checks the parameters; generators call it before drawing, so [`SizeDist::sample`] and
    /// [`SizeDist::expected_mean`] can assume a valid distribution.
    pub fn validate(&self) -> Result<(), SizeError> {
        match *self {
            SizeDist::Fixed(0) => Err(SizeError::FixedZero),
            SizeDist::Fixed(_) | SizeDist::Empirical(_) => Ok(()),
            SizeDist::Pareto { shape, mean, cap } => {
                // Written so that NaN fails every check.
                if !(shape > 1.0 && shape.is_finite()) {
                    return Err(SizeError::ParetoShape(shape));
                }
                if !(mean > 0.0 && mean.is_finite()) {
                    return Err(SizeError::ParetoMean(mean));
                }
                let scale = pareto_scale(shape, mean);
                if scale < 1.0 {
                    return Err(SizeError::ParetoScale(scale));
                }
                // Issue 40: shape = 1e308 made the scale infinite, every flow 2^64 - 1 bytes,
                // and the run went on for ever.
                if scale >= u64::MAX as f64 {
                    return Err(SizeError::ParetoHuge(scale, shape, mean));
                }
                if cap == Some(0) {
                    return Err(SizeError::ParetoCap);
                }
                Ok(())
            }
        }
    }

    /// One flow size in bytes, from one uniform draw of `rng` (none for `Fixed`).
    pub fn sample(&self, rng: &mut impl Rng) -> u64 {
        match self {
            SizeDist::Fixed(bytes) => *bytes,
            SizeDist::Pareto { shape, mean, cap } => {
                // 1 - [0, 1) is (0, 1], so the power is finite.
                let u = 1.0 - rng.random::<f64>();
                let x = pareto_scale(*shape, *mean) * u.powf(-1.0 / shape);
                let x = cap.map_or(x, |c| x.min(c as f64));
                // `as` saturates, so an uncapped draw beyond u64 becomes u64::MAX.
                (x.round() as u64).max(1)
            }
            SizeDist::Empirical(cdf) => cdf.sample(rng),
        }
    }

    /// The mean of what [`SizeDist::sample`] draws, in bytes. Exact for `Fixed` and
    /// `Empirical` (rounding included, see [`EmpiricalCdf::mean`]); for `Pareto` it is the exact
    /// mean of the clamped continuous variable min(X, cap), which rounding to whole bytes moves
    /// by at most half a byte:
    /// E[min(X, c)] = x_m + x_m/(α−1)·(1 − (x_m/c)^(α−1)) for c > x_m, and c otherwise.
    pub fn expected_mean(&self) -> f64 {
        match self {
            SizeDist::Fixed(bytes) => *bytes as f64,
            SizeDist::Pareto { shape, mean, cap } => match cap {
                None => *mean,
                Some(c) => clamped_pareto_mean(*shape, pareto_scale(*shape, *mean), *c as f64),
            },
            SizeDist::Empirical(cdf) => cdf.mean(),
        }
    }
}

fn pareto_scale(shape: f64, mean: f64) -> f64 {
    mean * (shape - 1.0) / shape
}

/// E[min(X, c)] for a Pareto of shape α and scale x_m. `-expm1((α−1)·ln(x_m/c))/(α−1)` is
/// `(1 − (x_m/c)^(α−1))/(α−1)` without the cancellation near α = 1, and tends to ln(c/x_m) there.
fn clamped_pareto_mean(shape: f64, scale: f64, cap: f64) -> f64 {
    if cap <= scale {
        return cap;
    }
    let a = shape - 1.0;
    let tail = if a == 0.0 {
        (cap / scale).ln()
    } else {
        -(a * (scale / cap).ln()).exp_m1() / a
    };
    scale + scale * tail
}

impl fmt::Display for SizeDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeDist::Fixed(bytes) => write!(f, "fixed {bytes} B"),
            SizeDist::Pareto { shape, mean, cap } => {
                write!(f, "Pareto shape {shape} uncapped mean {}", Bytes(*mean))?;
                if let Some(c) = cap {
                    write!(f, " clamped at {}", Bytes(*c as f64))?;
                }
                write!(f, " (drawn mean {})", Bytes(self.expected_mean()))
            }
            SizeDist::Empirical(cdf) => write!(
                f,
                "empirical CDF {} ({} points, mean {})",
                cdf.origin,
                cdf.bytes.len(),
                Bytes(cdf.mean())
            ),
        }
    }
}

/// A byte count printed with a decimal unit (B, KB, MB, GB), as the papers write sizes.
pub(crate) struct Bytes(pub f64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b < 1e3 {
            write!(f, "{b:.0} B")
        } else if b < 1e6 {
            write!(f, "{:.1} KB", b / 1e3)
        } else if b < 1e9 {
            write!(f, "{:.2} MB", b / 1e6)
        } else {
            write!(f, "{:.2} GB", b / 1e9)
        }
    }
}

/// A flow-size CDF given as points (size in bytes, cumulative probability), linear in between.
///
/// Text format, one point a line: `size_bytes cumulative_percent`, whitespace separated; `#`
/// starts a comment; blank lines are ignored. Sizes are whole bytes and percents lie in
/// 0..=100; both must not decrease (equal sizes make a jump, i.e. a point mass; equal percents a
/// gap no flow falls in); the last percent must be 100. If the first point's percent p is above
/// 0, we read it as "p% of flows have the first size or less" and put that mass **on** the first
/// size (a point mass), rather than rejecting the file or inventing a lower bound.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "CdfPoints", into = "CdfPoints")]
pub struct EmpiricalCdf {
    origin: String,
    bytes: Vec<u64>,
    /// Cumulative probability (percent / 100) at each point; the last is exactly 1.
    cum: Vec<f64>,
    /// The percents as written, so the CDF serialises as it was given.
    percents: Vec<f64>,
    mean: f64,
}

/// The serialised form of an [`EmpiricalCdf`]: where it came from and its points
/// `(size_bytes, cumulative_percent)`. Deserialising validates it like a file (the error's
/// "line" is then the 1-based point number).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CdfPoints {
    pub origin: String,
    pub points: Vec<(u64, f64)>,
}

/// Why a CDF was rejected, with the file (or origin) and line it came from.
#[derive(Debug, Error)]
pub enum CdfError {
    #[error("{origin}: cannot read: {source}")]
    Io {
        origin: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{origin}:{line}: {reason}")]
    Line {
        origin: String,
        line: usize,
        reason: CdfIssue,
    },
    #[error("{origin}: no points (expected lines `size_bytes cumulative_percent`)")]
    Empty { origin: String },
}

/// What is wrong with one line of a CDF.
#[derive(Debug, Error, PartialEq)]
pub enum CdfIssue {
    #[error("expected 2 fields `size_bytes cumulative_percent`, found {0}")]
    FieldCount(usize),
    #[error("size `{0}` is not a whole number of bytes from 0 to 2^64 - 1")]
    Size(String),
    #[error("size 0 at percent {0}: {0}% of flows would carry no bytes (a CDF may start at `0 0`)")]
    EmptyFlows(f64),
    #[error("percent `{0}` is not a number")]
    Percent(String),
    #[error("percent {0} is outside 0..=100")]
    PercentRange(f64),
    #[error("size {this} is below the previous point's {prev}: sizes must not decrease")]
    SizeDecreases { prev: u64, this: u64 },
    #[error("percent {this} is below the previous point's {prev}: a CDF must not decrease")]
    PercentDecreases { prev: f64, this: f64 },
    #[error("the last point has percent {0}: a CDF must end at 100")]
    NotEndingAt100(f64),
}

impl EmpiricalCdf {
    /// Parses the text format (see [`EmpiricalCdf`]); `origin` names the source in errors.
    pub fn parse(text: &str, origin: &str) -> Result<EmpiricalCdf, CdfError> {
        let line_err = |line, reason| CdfError::Line {
            origin: origin.to_string(),
            line,
            reason,
        };
        let mut points = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let data = raw.split('#').next().unwrap_or_default();
            let fields: Vec<&str> = data.split_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            if fields.len() != 2 {
                return Err(line_err(i + 1, CdfIssue::FieldCount(fields.len())));
            }
            let size = fields[0]
                .parse::<u64>()
                .map_err(|_| line_err(i + 1, CdfIssue::Size(fields[0].to_string())))?;
            let percent = fields[1]
                .parse::<f64>()
                .map_err(|_| line_err(i + 1, CdfIssue::Percent(fields[1].to_string())))?;
            points.push((i + 1, size, percent));
        }
        EmpiricalCdf::build(origin, points)
    }

    /// Reads and parses a CDF file; errors name the path.
    pub fn load(path: impl AsRef<Path>) -> Result<EmpiricalCdf, CdfError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| CdfError::Io {
            origin: origin.clone(),
            source,
        })?;
        EmpiricalCdf::parse(&text, &origin)
    }

    /// Checks the points `(line, size, percent)` and precomputes the mean.
    fn build(origin: &str, points: Vec<(usize, u64, f64)>) -> Result<EmpiricalCdf, CdfError> {
        let line_err = |line, reason| CdfError::Line {
            origin: origin.to_string(),
            line,
            reason,
        };
        let Some(&(last_line, _, last_percent)) = points.last() else {
            return Err(CdfError::Empty {
                origin: origin.to_string(),
            });
        };
        let mut prev: Option<(u64, f64)> = None;
        for &(line, size, percent) in &points {
            if !(0.0..=100.0).contains(&percent) {
                return Err(line_err(line, CdfIssue::PercentRange(percent)));
            }
            if size == 0 && percent > 0.0 {
                return Err(line_err(line, CdfIssue::EmptyFlows(percent)));
            }
            if let Some((prev_size, prev_percent)) = prev {
                if size < prev_size {
                    let reason = CdfIssue::SizeDecreases {
                        prev: prev_size,
                        this: size,
                    };
                    return Err(line_err(line, reason));
                }
                if percent < prev_percent {
                    let reason = CdfIssue::PercentDecreases {
                        prev: prev_percent,
                        this: percent,
                    };
                    return Err(line_err(line, reason));
                }
            }
            prev = Some((size, percent));
        }
        if (last_percent - 100.0).abs() > 1e-9 {
            return Err(line_err(last_line, CdfIssue::NotEndingAt100(last_percent)));
        }
        let bytes: Vec<u64> = points.iter().map(|p| p.1).collect();
        let percents: Vec<f64> = points.iter().map(|p| p.2).collect();
        let mut cum: Vec<f64> = percents.iter().map(|p| p / 100.0).collect();
        if let Some(last) = cum.last_mut() {
            *last = 1.0;
        }
        let mut cdf = EmpiricalCdf {
            origin: origin.to_string(),
            bytes,
            cum,
            percents,
            mean: 0.0,
        };
        cdf.mean = cdf.exact_mean();
        Ok(cdf)
    }

    /// Where the CDF came from (a path, or the origin given to [`EmpiricalCdf::parse`]).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The points `(size_bytes, cumulative_percent)` as given.
    pub fn points(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        self.bytes
            .iter()
            .copied()
            .zip(self.percents.iter().copied())
    }

    /// The mean of what [`EmpiricalCdf::sample`] draws, exactly. Within a segment between whole
    /// byte counts a and b the draw is uniform, and rounding a uniform on [a, b] to the nearest
    /// integer keeps its mean (a+b)/2 by symmetry; so the only correction to the mean of the
    /// continuous CDF is the lift of draws below half a byte to 1 byte, worth P(X < 0.5).
    pub fn mean(&self) -> f64 {
        self.mean
    }

    fn exact_mean(&self) -> f64 {
        let mut mean = self.cum[0] * self.bytes[0] as f64;
        for i in 1..self.bytes.len() {
            let mass = self.cum[i] - self.cum[i - 1];
            mean += mass * (self.bytes[i - 1] as f64 + self.bytes[i] as f64) / 2.0;
        }
        mean + self.cdf(0.5)
    }

    /// P(X ≤ `bytes`) for the continuous (unrounded) draw X: the CDF as written, interpolated.
    pub fn cdf(&self, bytes: f64) -> f64 {
        // Index of the first point strictly above `bytes`: all points of a jump lie below it.
        let i = self.bytes.partition_point(|&s| s as f64 <= bytes);
        if i == 0 {
            return 0.0;
        }
        if i == self.bytes.len() {
            return 1.0;
        }
        let (a, b) = (self.bytes[i - 1] as f64, self.bytes[i] as f64);
        let (pa, pb) = (self.cum[i - 1], self.cum[i]);
        pa + (pb - pa) * (bytes - a) / (b - a)
    }

    /// One size by inverse CDF: a uniform u in [0, 1) falls in the segment whose cumulative
    /// range holds it and is mapped linearly onto that segment's sizes.
    pub fn sample(&self, rng: &mut impl Rng) -> u64 {
        let u: f64 = rng.random();
        // First point whose cumulative probability exceeds u; exists because the last is 1.
        let i = self.cum.partition_point(|&p| p <= u);
        if i == 0 {
            // The point mass on the first size (first percent above 0).
            return self.bytes[0].max(1);
        }
        let (a, b) = (self.bytes[i - 1] as f64, self.bytes[i] as f64);
        let (pa, pb) = (self.cum[i - 1], self.cum[i]);
        let x = a + (u - pa) / (pb - pa) * (b - a);
        (x.round() as u64).max(1)
    }
}

impl TryFrom<CdfPoints> for EmpiricalCdf {
    type Error = CdfError;

    fn try_from(p: CdfPoints) -> Result<EmpiricalCdf, CdfError> {
        let points = p
            .points
            .iter()
            .enumerate()
            .map(|(i, &(size, percent))| (i + 1, size, percent))
            .collect();
        EmpiricalCdf::build(&p.origin, points)
    }
}

impl From<EmpiricalCdf> for CdfPoints {
    fn from(cdf: EmpiricalCdf) -> CdfPoints {
        CdfPoints {
            points: cdf.points().collect(),
            origin: cdf.origin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use shoal_base::rng::stream;

    fn data_file(name: &str) -> String {
        format!(
            "{}/../../data/flow-size-cdfs/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    /// Mean and variance of `n` draws.
    fn moments(d: &SizeDist, n: usize, seed: u64) -> (f64, f64) {
        let mut rng = stream(seed, "test.sizes", 0);
        let (mut s, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let x = d.sample(&mut rng) as f64;
            s += x;
            s2 += x * x;
        }
        let m = s / n as f64;
        (m, s2 / n as f64 - m * m)
    }

    /// E[X²] of the continuous piecewise-linear CDF: a uniform on [a, b] has (a²+ab+b²)/3.
    fn second_moment(cdf: &EmpiricalCdf) -> f64 {
        let mut m2 = cdf.cum[0] * (cdf.bytes[0] as f64).powi(2);
        for i in 1..cdf.bytes.len() {
            let (a, b) = (cdf.bytes[i - 1] as f64, cdf.bytes[i] as f64);
            m2 += (cdf.cum[i] - cdf.cum[i - 1]) * (a * a + a * b + b * b) / 3.0;
        }
        m2
    }

    #[test]
    fn published_cdfs_have_the_readme_means_and_sample_to_them() {
        // The README rounds each mean to two significant figures, so the analytic mean must lie
        // within half a unit of the last stated digit: 1.7 MB ± 0.05 MB, 120 KB ± 5 KB,
        // 41 KB ± 0.5 KB (decimal units, as the README and the papers use).
        let cases = [
            ("websearch.txt", 1.7e6, 0.05e6),
            ("facebook-hadoop.txt", 120e3, 5e3),
            ("alibaba-storage-2019.txt", 41e3, 0.5e3),
        ];
        for (name, stated, half_unit) in cases {
            let cdf = EmpiricalCdf::load(data_file(name)).unwrap();
            let mean = cdf.mean();
            assert!(
                (mean - stated).abs() <= half_unit,
                "{name}: analytic mean {mean:.0} B, README says about {stated} B"
            );
            // 200k draws: the sample mean's standard error is sd/√n; allow 5 of them (a
            // two-sided miss has probability below 1e-6 under the CLT).
            let n = 200_000;
            let sd = (second_moment(&cdf) - mean * mean).sqrt();
            let (sample_mean, _) = moments(&SizeDist::Empirical(cdf), n, 1);
            let tol = 5.0 * sd / (n as f64).sqrt();
            assert!(
                (sample_mean - mean).abs() <= tol,
                "{name}: sample mean {sample_mean:.0}, analytic {mean:.0}, tolerance {tol:.0}"
            );
        }
    }

    #[test]
    fn capped_pareto_sample_mean_matches_expected_mean() {
        // The paper's parameters with a 10 MB cap, which makes the variance finite. The capped
        // variance is computed exactly, E[min(X,c)²] = α x_m^α (c^(2−α) − x_m^(2−α))/(2−α)
        // + c² (x_m/c)^α; with 10⁶ draws we allow 5 standard errors.
        let (shape, mean, cap) = (1.05, 100e3, 10_000_000u64);
        let d = SizeDist::pareto(shape, mean, Some(cap)).unwrap();
        let xm = mean * (shape - 1.0) / shape;
        let c = cap as f64;
        let m2 = shape * xm.powf(shape) * (c.powf(2.0 - shape) - xm.powf(2.0 - shape))
            / (2.0 - shape)
            + c * c * (xm / c).powf(shape);
        let expected = d.expected_mean();
        let sd = (m2 - expected * expected).sqrt();
        let n = 1_000_000;
        let (sample_mean, sample_var) = moments(&d, n, 2);
        let tol = 5.0 * sd / (n as f64).sqrt() + 0.5;
        assert!(
            (sample_mean - expected).abs() <= tol,
            "sample {sample_mean:.0} vs expected {expected:.0} ± {tol:.0}"
        );
        assert!((sample_var.sqrt() / sd - 1.0).abs() < 0.1);
        // Clamping at 10 MB leaves about a third of the nominal 100 KB.
        assert!((30e3..40e3).contains(&expected), "{expected}");
    }

    #[test]
    fn clamped_mean_formula_matches_numeric_integration() {
        // E[min(X, c)] = ∫₀^c P(X > x) dx = x_m + ∫_{x_m}^c (x_m/x)^α dx; Simpson's rule in
        // t = ln x, where the integrand x_m^α e^{(1−α)t} is smooth.
        for (shape, xm, cap) in [
            (1.05, 4762.0, 1e7),
            (1.0001, 100.0, 1e6),
            (1.5, 1000.0, 5e4),
            (2.5, 10.0, 1e3),
            (3.0, 500.0, 600.0),
        ] {
            let (t0, t1) = (f64::ln(xm), f64::ln(cap));
            let n = 100_000;
            let h = (t1 - t0) / n as f64;
            let f = |t: f64| xm.powf(shape) * ((1.0 - shape) * t).exp();
            let mut s = f(t0) + f(t1);
            for k in 1..n {
                s += f(t0 + k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
            }
            let numeric = xm + s * h / 3.0;
            let formula = clamped_pareto_mean(shape, xm, cap);
            assert!(
                (numeric / formula - 1.0).abs() < 1e-9,
                "α={shape}: numeric {numeric}, formula {formula}"
            );
        }
        assert_eq!(clamped_pareto_mean(2.0, 100.0, 50.0), 50.0);
    }

    #[test]
    fn uncapped_pareto_uses_the_paper_parameterisation() {
        let d = SizeDist::pareto(1.05, 100e3, None).unwrap();
        assert_eq!(d.expected_mean(), 100e3);
        // x_m = 100 KB · 0.05/1.05 ≈ 4762 B is the smallest size drawn.
        let mut rng = stream(3, "test", 0);
        let min = (0..10_000).map(|_| d.sample(&mut rng)).min().unwrap();
        assert!((4762..4800).contains(&min), "{min}");
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert_eq!(SizeDist::Fixed(0).validate(), Err(SizeError::FixedZero));
        assert_eq!(
            SizeDist::pareto(1.0, 1e5, Some(1_000_000)),
            Err(SizeError::ParetoShape(1.0))
        );
        assert_eq!(
            SizeDist::pareto(0.5, 1e5, None),
            Err(SizeError::ParetoShape(0.5))
        );
        assert!(matches!(
            SizeDist::pareto(f64::NAN, 1e5, None),
            Err(SizeError::ParetoShape(_))
        ));
        assert_eq!(
            SizeDist::pareto(1.5, -1.0, None),
            Err(SizeError::ParetoMean(-1.0))
        );
        assert!(matches!(
            SizeDist::pareto(1.01, 10.0, None),
            Err(SizeError::ParetoScale(_))
        ));
        for (shape, mean) in [(1e308, 3000.0), (2.0, 1e300)] {
            assert!(matches!(
                SizeDist::pareto(shape, mean, None),
                Err(SizeError::ParetoHuge(..))
            ));
        }
        assert_eq!(
            SizeDist::pareto(1.5, 1e5, Some(0)),
            Err(SizeError::ParetoCap)
        );
    }

    #[test]
    fn cdf_errors_name_origin_line_and_reason() {
        let err = |text: &str| EmpiricalCdf::parse(text, "f.txt").unwrap_err().to_string();
        assert_eq!(
            err("0 0\n\n10 50 7\n"),
            "f.txt:3: expected 2 fields `size_bytes cumulative_percent`, found 3"
        );
        assert_eq!(
            err("# c\n1.5 0\n"),
            "f.txt:2: size `1.5` is not a whole number of bytes from 0 to 2^64 - 1"
        );
        assert_eq!(
            err("0 0\n0 100\n"),
            "f.txt:2: size 0 at percent 100: 100% of flows would carry no bytes (a CDF may start \
             at `0 0`)"
        );
        assert!(err("0 5\n10 100\n").starts_with("f.txt:1: size 0 at percent 5"));
        assert_eq!(err("0 x\n"), "f.txt:1: percent `x` is not a number");
        assert_eq!(
            err("0 0\n5 101\n"),
            "f.txt:2: percent 101 is outside 0..=100"
        );
        assert!(err("0 0\n10 50\n5 100\n").starts_with("f.txt:3: size 5 is below"));
        assert!(err("0 0\n10 50\n20 40\n30 100").starts_with("f.txt:3: percent 40 is below"));
        assert_eq!(
            err("0 0\n10 50 # the end\n"),
            "f.txt:2: the last point has percent 50: a CDF must end at 100"
        );
        assert_eq!(
            err("# nothing\n\n"),
            "f.txt: no points (expected lines `size_bytes cumulative_percent`)"
        );
        let missing = EmpiricalCdf::load("/nonexistent/cdf.txt").unwrap_err();
        assert!(matches!(missing, CdfError::Io { .. }));
        assert!(
            missing
                .to_string()
                .starts_with("/nonexistent/cdf.txt: cannot read")
        );
    }

    #[test]
    fn a_first_percent_above_zero_is_a_point_mass_on_the_first_size() {
        let cdf = EmpiricalCdf::parse("100 40\n200 100\n", "t").unwrap();
        // 40% exactly 100 B, 60% uniform on [100, 200].
        assert!((cdf.mean() - (0.4 * 100.0 + 0.6 * 150.0)).abs() < 1e-9);
        let mut rng = stream(5, "test", 0);
        let n = 100_000;
        let at_100 = (0..n).filter(|_| cdf.sample(&mut rng) == 100).count();
        // Binomial(n, 0.4 + 0.6·0.5/100) within 5 standard deviations.
        let p = 0.4 + 0.6 * 0.5 / 100.0;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        assert!((at_100 as f64 - n as f64 * p).abs() < 5.0 * sd, "{at_100}");
    }

    #[test]
    fn sub_byte_draws_are_lifted_to_one_byte_and_the_mean_counts_it() {
        // Uniform on [0, 2]: rounding gives 0, 1, 2 w.p. 1/4, 1/2, 1/4; the lift makes 1, 1, 2.
        let cdf = EmpiricalCdf::parse("0 0\n2 100\n", "t").unwrap();
        assert!((cdf.mean() - 1.25).abs() < 1e-12);
        let (m, _) = moments(&SizeDist::Empirical(cdf), 400_000, 6);
        assert!((m - 1.25).abs() < 0.005, "{m}");
    }

    #[test]
    fn cdf_serialises_as_its_points_and_validates_on_the_way_back() {
        let cdf = EmpiricalCdf::parse("0 0\n10 50\n20 100\n", "t").unwrap();
        let json = serde_json::to_string(&SizeDist::Empirical(cdf.clone())).unwrap();
        let back: SizeDist = serde_json::from_str(&json).unwrap();
        assert_eq!(back, SizeDist::Empirical(cdf));
        let bad = r#"{"empirical":{"origin":"t","points":[[0,0.0],[10,50.0]]}}"#;
        let e = serde_json::from_str::<SizeDist>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("t:2: the last point has percent 50"), "{e}");
    }

    /// A random valid CDF: up to 8 points, sizes from 0 upwards (often small, so rounding
    /// matters), percents non-decreasing, ending at 100, and 0 at size 0 (no empty flows).
    fn arb_cdf() -> impl Strategy<Value = EmpiricalCdf> {
        prop::collection::vec((0u64..50, 0.0f64..30.0), 1..8).prop_map(|steps| {
            let (mut size, mut percent) = (0u64, 0.0f64);
            let mut text = String::new();
            for (i, (ds, dp)) in steps.iter().enumerate() {
                size += ds * (1 + i as u64 * 100);
                if size > 0 {
                    percent = (percent + dp).min(100.0);
                }
                text += &format!("{size} {percent}\n");
            }
            text += &format!("{} 100\n", size + 1);
            EmpiricalCdf::parse(&text, "arb").unwrap()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn pareto_samples_stay_between_scale_and_cap(
            shape in 1.01f64..4.0,
            mean in 10.0f64..1e7,
            cap in 1u64..100_000_000,
            seed in any::<u64>(),
        ) {
            let d = SizeDist::Pareto { shape, mean, cap: Some(cap) };
            prop_assume!(d.validate().is_ok());
            let xm = mean * (shape - 1.0) / shape;
            let lo = (xm.round() as u64).min(cap);
            let mut rng = stream(seed, "test", 0);
            for _ in 0..2_000 {
                let x = d.sample(&mut rng);
                prop_assert!(x >= lo.max(1) && x <= cap, "{} outside [{}, {}]", x, lo, cap);
            }
        }

        #[test]
        fn empirical_draws_follow_the_cdf_at_every_point(cdf in arb_cdf(), seed in any::<u64>()) {
            // Dvoretzky–Kiefer–Wolfowitz: P(sup |F_n − F| > ε) ≤ 2 exp(−2nε²); ε below gives
            // a false failure probability of 1e-9 per case. A rounded draw is ≤ s (s ≥ 1)
            // exactly when the continuous draw is < s + 0.5, so we compare with F(s + 0.5).
            let n = 20_000usize;
            let eps = ((2.0f64 / 1e-9).ln() / (2.0 * n as f64)).sqrt();
            let mut rng = stream(seed, "test", 0);
            let mut draws: Vec<u64> = (0..n).map(|_| cdf.sample(&mut rng)).collect();
            draws.sort_unstable();
            for (s, _) in cdf.points() {
                let below = draws.partition_point(|&x| x <= s) as f64 / n as f64;
                let want = if s == 0 { 0.0 } else { cdf.cdf(s as f64 + 0.5) };
                prop_assert!((below - want).abs() <= eps,
                    "at {} B: empirical {}, CDF {}, ε {}", s, below, want, eps);
            }
        }
    }
}
