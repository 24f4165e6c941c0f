//! Paper figures as experiments. Each experiment loads its scenario file (embedded, so the
//! binary needs no data files), runs it, and returns claims: what the paper reports, what we
//! measured, the tolerance we allow and whether we are within it. `quick` runs a scaled-down
//! version of each, small enough for CI; each experiment says how it scales and what it still
//! checks.

#![forbid(unsafe_code)]

mod at_once;
mod claim;
mod experiments;
mod plot;
mod point;
mod scale;

pub use claim::{Claim, Verdict};

/// How to run experiments.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Scaled-down versions that finish in CI.
    pub quick: bool,
    /// Write each figure's SVG, PNG and CSV into this folder.
    pub plots: Option<std::path::PathBuf>,
    /// Scale settings for the experiments that take them (`Experiment::scale`), as
    /// `key=value` words (fig15-baselines: `nodes`, `loads`, `flows`, `torus_flows`;
    /// xfabric-fig5: `flows`, `warmup_s`, `periods`, `clusters`; fig17: `nodes`, `fractions`,
    /// `flows`, `load`; stardust-fig9: `utilisations`; collectives: `nodes`, `sizes`); each refuses keys it does not know, and an experiment that takes none
    /// refuses any (`check_scale`). `None` runs each at its own scale.
    pub scale: Option<String>,
    /// Threads inside each experiment (`Fabric::set_threads`: the fast Shoal engine cuts its
    /// rack into as many parts; stardust-fig9, stardust-failures and collectives run as many
    /// of their simulations at once); results do not depend on it. 0 counts as 1.
    pub threads: usize,
}

/// What an experiment does: run with options, report progress lines, return its claims.
type RunFn = fn(&Options, &mut dyn FnMut(&str)) -> Result<Vec<Claim>, ReproError>;

/// The `--scale` settings an experiment takes: its keys, and a check of a settings text that
/// parses it exactly as the run will, so that a bad setting is refused before anything runs.
#[derive(Clone, Copy, Debug)]
pub struct ScaleSpec {
    pub keys: &'static [&'static str],
    check: fn(&str) -> Result<(), ReproError>,
}

/// An experiment that `shoal repro NAME` can run.
#[derive(Clone, Copy, Debug)]
pub struct Experiment {
    pub name: &'static str,
    pub figure: &'static str,
    pub summary: &'static str,
    /// The page of `docs/results/` that discusses its full-scale results, if one does.
    pub results: Option<&'static str>,
    run: RunFn,
    /// Its claims are wall-clock measurements: a driver that runs experiments side by side
    /// should run this one alone.
    pub timed: bool,
    /// The `Options::scale` settings it takes; `None`: it runs at its own scale only.
    pub scale: Option<ScaleSpec>,
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

fn find(name: &str) -> Result<&'static Experiment, ReproError> {
    experiments()
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = experiments().iter().map(|e| e.name).collect();
            ReproError(format!(
                "no experiment named {name:?}; known: {}",
                known.join(", ")
            ))
        })
}

/// The experiments that take `--scale` settings and their keys, e.g. "fig17 (nodes,
/// fractions, flows, load)", for messages.
pub fn scale_keys() -> String {
    experiments()
        .iter()
        .filter_map(|e| Some(format!("{} ({})", e.name, e.scale?.keys.join(", "))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks `--scale` settings for experiment `name` without running it: a key it does not
/// take, a key given twice or a value it would refuse is an error naming the experiment, the
/// key and the reason. An experiment that takes no settings refuses any, rather than
/// ignoring them.
pub fn check_scale(name: &str, text: &str) -> Result<(), ReproError> {
    let e = find(name)?;
    let Some(spec) = e.scale else {
        return Err(ReproError(format!(
            "--scale: {name} runs at its own scale and takes no settings; the experiments \
             that do: {}",
            scale_keys()
        )));
    };
    (spec.check)(text).map_err(|err| ReproError(format!("{name}: {err}")))
}

/// Runs experiment `name`; `progress` receives one-line notes as it goes.
pub fn run(
    name: &str,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let e = find(name)?;
    if let (Some(text), false) = (&opts.scale, opts.quick) {
        check_scale(name, text)?;
    }
    (e.run)(opts, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_results_page_named_exists_and_names_its_experiment() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results/");
        for e in experiments() {
            let Some(page) = e.results else { continue };
            let text = std::fs::read_to_string(format!("{dir}{page}"))
                .unwrap_or_else(|err| panic!("{}: {page}: {err}", e.name));
            assert!(text.contains(e.name), "{}: {page} does not name it", e.name);
        }
    }

    #[test]
    fn scale_settings_are_checked_against_the_experiment_and_refused_where_it_takes_none() {
        check_scale("fig17", "fractions=0,0.2 flows=10").unwrap();
        let err = check_scale("fig10", "nodes=8").unwrap_err();
        assert!(err.0.contains("fig10 runs at its own scale"), "{}", err.0);
        assert!(
            err.0.contains("fig17 (nodes, fractions, flows, load)"),
            "{}",
            err.0
        );
        let err = check_scale("fig17", "torus_flows=0").unwrap_err();
        assert!(
            err.0.starts_with("fig17: --scale: unknown key"),
            "{}",
            err.0
        );
        // A run refuses them too, before the experiment starts.
        let opts = Options {
            scale: Some("nodes=8".into()),
            ..Options::default()
        };
        let err = run("fig10", &opts, &mut |_| {}).unwrap_err();
        assert!(err.0.contains("takes no settings"), "{}", err.0);
    }
}
