//! Paper figures as experiments. Each experiment loads its scenario file (embedded, so the
//! binary needs no data files), runs it, and returns claims: what the paper reports, what we
//! measured, the tolerance we allow and whether we are within it. `quick` runs a scaled-down
//! version of each, small enough for CI; each experiment says how it scales and what it still
//! checks.

mod claim;
mod experiments;
mod plot;
mod point;
mod scale;

pub use claim::Claim;

/// How to run experiments.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Scaled-down versions that finish in CI.
    pub quick: bool,
    /// Write each figure's SVG, PNG and CSV into this folder.
    pub plots: Option<std::path::PathBuf>,
    /// Scale settings for the experiments that take them, as `key=value` words (fig15-baselines:
    /// `nodes`, `loads`, `flows`, `torus_flows`; xfabric-fig5: `flows`, `warmup_s`, `periods`,
    /// `clusters`; fig17: `nodes`, `fractions`, `flows`); each refuses keys it does not know.
    /// `None` runs each at its own scale.
    pub scale: Option<String>,
}

/// What an experiment does: run with options, report progress lines, return its claims.
type RunFn = fn(&Options, &mut dyn FnMut(&str)) -> Result<Vec<Claim>, ReproError>;

/// An experiment that `shoal repro NAME` can run.
#[derive(Clone, Copy, Debug)]
pub struct Experiment {
    pub name: &'static str,
    pub figure: &'static str,
    pub summary: &'static str,
    run: RunFn,
    /// Its claims are wall-clock measurements: a driver that runs experiments side by side
    /// should run this one alone.
    pub timed: bool,
}

/// Why an experiment could not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReproError(pub String);

impl std::fmt::Display for ReproError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReproError {}

/// Every experiment, in the order `shoal repro` runs them.
pub fn experiments() -> &'static [Experiment] {
    experiments::ALL
}

/// Runs experiment `name`; `progress` receives one-line notes as it goes.
pub fn run(
    name: &str,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let e = experiments()
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = experiments().iter().map(|e| e.name).collect();
            ReproError(format!(
                "no experiment named {name:?}; known: {}",
                known.join(", ")
            ))
        })?;
    (e.run)(opts, progress)
}
