//! `shoal compare`: several fabrics on the identical flow list, one table and one plot per
//! metric.

use crate::batch::{self, Job};
use crate::distributions;
use crate::folder::{self, Folder};
use crate::record::{self, DbArgs, Recorder};
use crate::replicate;
use crate::run::{Summary, opt, safe};
use crate::timeseries;
use anyhow::{Context, Result, bail};
use clap::Args;
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::{Scenario, SweepValue};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Run several scenarios (one per fabric) on the identical flow list and compare them.
///
/// The scenarios must draw the same flows: the same seed, node count and [workload]. If they
/// sweep, they must sweep the same parameter over the same values; every point is then run
/// for every fabric. Each run's results folder goes to DIR/<point>/<scenario name>/ (as
/// `shoal run` writes it); DIR/compare.csv has one row per run and DIR/<metric>.svg/.png/.csv
/// one figure per metric (lines against the swept parameter, or bars per fabric). Every run
/// is recorded in the results database (default: shoal.db beside DIR); the same comparison run
/// again into the same DIR keeps the runs it holds as finished and runs the rest.
///
/// Every fabric measures the same flows: a scenario's run.completed_flows = N is read as
/// run.measured_flows = N (the first N flows of the identical list, each run stopping once all
/// of them have completed), since N flows completed first would be a different, faster set on
/// each fabric.
///
/// --set changes a key in every scenario first, e.g. to cut a paper-scale run down:
/// --set run.completed_flows=20000 --set workload.load=0.5
#[derive(Args)]
#[command(verbatim_doc_comment)]
#[command(
    after_help = "Examples:\n  shoal compare scenarios/fig15-datacenter.toml scenarios/fig15-dctcp.toml \
    scenarios/fig15-ndp.toml --set run.completed_flows=20000\n  \
    shoal compare a.toml b.toml --set 'workload.load=0.3' --out out/ab"
)]
pub struct CompareArgs {
    /// Scenario files, at least two.
    #[arg(value_name = "SCENARIO.toml", required = true, num_args = 2..)]
    scenarios: Vec<PathBuf>,
    /// Set a dotted key to a TOML value in every scenario before running (repeatable; quote
    /// strings: --set 'workload.matrix="uniform"').
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seed for every scenario, overriding theirs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    seed: Option<u64>,
    /// Results folder (created). Default: out/compare.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
    /// Write into DIR even if it is not empty: the results an earlier run wrote there (as its
    /// .shoal-written lists) are removed first; other files stay. Every run then runs again
    /// instead of resuming (keeping the runs the database holds as finished).
    #[arg(long)]
    force: bool,
    /// Runs at once. Default: the cores divided by --threads. Each needs its own memory; 1
    /// runs them one after the other.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    jobs: Option<u64>,
    /// Threads inside each run: the fast Shoal engine (the default wherever it covers the
    /// rack) cuts the rack into as many parts run side by side; other fabrics and the node
    /// engine use one. Outputs are
    /// identical for every count [default: 1].
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Independent replications of every run: replication 0 uses the scenarios' seed,
    /// replication r a seed derived from it, the same for every scenario (so the fabrics still
    /// see identical flows). Runs go to <name>-r<r>/; compare.csv gains the replication and
    /// seed columns, ci.csv each metric's mean and 95% confidence interval per scenario; the
    /// figures show the means, the distributions pool the replications' flows.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    replications: u64,
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    backend: crate::slurm::BackendArgs,
}

/// The `--set` words as (key, value) pairs (`run` and `compare` share them).
pub(crate) fn settings(words: &[String]) -> Result<Vec<(String, toml::Value)>> {
    words.iter().map(|s| setting(s)).collect()
}

/// `sc` with the `--set` settings applied (unchanged when there are none).
pub(crate) fn apply(sc: Scenario, settings: &[(String, toml::Value)]) -> Result<Scenario> {
    if settings.is_empty() {
        return Ok(sc);
    }
    let borrowed: Vec<(&str, toml::Value)> = settings
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    Ok(sc.with_settings(&borrowed)?)
}

/// Makes every fabric measure the same flows: a scenario that stops at `run.completed_flows`
/// = N would measure whichever N flows complete first, a different set on each fabric (the
/// faster flows of each); the comparison measures instead the first N flows of the identical
/// list on every fabric (`run.measured_flows` = N), each run stopping once all of them have
/// completed. Says so unless `quiet`.
fn measure_the_same_flows<'a>(runs: impl Iterator<Item = &'a mut Scenario>, quiet: bool) {
    let mut converted = None;
    for sc in runs {
        if let Some(n) = sc.limits.completed_flows.take() {
            sc.limits.measured_flows = Some(n);
            converted = Some(n);
        }
    }
    if let (Some(n), false) = (converted, quiet) {
        eprintln!(
            "shoal compare: every fabric measures the same flows, the first {n} of the \
             identical list (run.completed_flows = {n} read as run.measured_flows: each run \
             stops once those {n} have completed, or at twice the {n}th flow's start with the \
             rest counted as not completed)"
        );
    }
}

/// One `--set` as a (key, value) pair.
fn setting(text: &str) -> Result<(String, toml::Value)> {
    let Some((key, value)) = text.split_once('=') else {
        bail!("--set {text:?}: expected KEY=VALUE, e.g. run.completed_flows=20000");
    };
    // Caught here, where the message can say what is wrong: the scenario would report an
    // empty key only as an unknown one, named "".
    let key = key.trim();
    if key.is_empty() {
        bail!(
            "--set {text:?}: the key before '=' is empty: expected KEY=VALUE, \
             e.g. run.completed_flows=20000"
        );
    }
    if key.split('.').any(|part| part.trim().is_empty()) {
        bail!(
            "--set {text:?}: the key {key:?} has an empty part: expected dotted names, \
             e.g. run.completed_flows"
        );
    }
    let doc: toml::Table = toml::from_str(&format!("v = {value}")).with_context(|| {
        format!("--set {text:?}: {value:?} is not a TOML value (quote strings: '\"text\"')")
    })?;
    let value = doc.get("v").cloned().context("no value")?;
    Ok((key.to_owned(), value))
}

/// Refuses scenarios that would not draw the same flows.
fn check_same_flows(all: &[Scenario]) -> Result<()> {
    let first = &all[0];
    for sc in &all[1..] {
        let differ = |what: &str| {
            anyhow::anyhow!(
                "{} and {} differ in {what}: they would not run the same flows",
                first.origin,
                sc.origin
            )
        };
        if sc.seed != first.seed {
            return Err(differ("seed"));
        }
        if sc.nodes() != first.nodes() {
            return Err(differ("node count"));
        }
        if sc.workload != first.workload {
            return Err(differ(&format!(
                "[workload] ({})",
                workload_difference(first, sc)
            )));
        }
        let sweep = |s: &Scenario| {
            s.sweep
                .as_ref()
                .map(|w| (w.parameter.clone(), w.values.clone()))
        };
        if sweep(sc) != sweep(first) {
            return Err(differ("[sweep]"));
        }
    }
    Ok(())
}

/// The resolved `[workload]` keys whose values differ between `a` and `b`: where the files'
/// tables read the same, the difference is a default underneath (such as the node rate a load
/// is relative to, which differs between fabrics).
fn workload_difference(a: &Scenario, b: &Scenario) -> String {
    let table = |s: &Scenario| -> toml::Table {
        toml::from_str::<toml::Table>(&s.resolved_toml())
            .ok()
            .and_then(|t| t.get("workload").and_then(|w| w.as_table()).cloned())
            .unwrap_or_default()
    };
    let (ta, tb) = (table(a), table(b));
    let mut keys: Vec<&String> = ta.keys().chain(tb.keys()).collect();
    keys.sort();
    keys.dedup();
    let shown = |v: Option<&toml::Value>| v.map_or_else(|| "absent".to_owned(), |v| v.to_string());
    let differ: Vec<String> = keys
        .into_iter()
        .filter(|k| ta.get(*k) != tb.get(*k))
        .map(|k| {
            format!(
                "workload.{k} = {} against {}",
                shown(ta.get(k)),
                shown(tb.get(k))
            )
        })
        .collect();
    if differ.is_empty() {
        "the generated flows differ".to_owned()
    } else {
        format!(
            "as resolved, with defaults filled in: {}; set the key in both files or with --set",
            differ.join(", ")
        )
    }
}

/// What a comparison's folder holds about the command that wrote it.
const README: &str = "README.txt";

/// One compared run.
struct Row {
    point: Option<SweepValue>,
    name: String,
    replication: u64,
    summary: Summary,
}

/// The metrics compared: column, axis label, value, whether a log axis suits it.
type Metric = (
    &'static str,
    &'static str,
    fn(&Summary) -> Option<f64>,
    bool,
);

const METRICS: [Metric; 5] = [
    (
        "short_fct_mean_us",
        "short-flow FCT, mean (µs)",
        |s| s.short_fct_us.as_ref().map(|f| f.mean),
        true,
    ),
    (
        "short_fct_p99_us",
        "short-flow FCT, 99th percentile (µs)",
        |s| s.short_fct_us.as_ref().map(|f| f.p99),
        true,
    ),
    (
        "short_slowdown_p99",
        "short-flow slowdown, 99th percentile",
        |s| s.short_slowdown.as_ref().map(|f| f.p99),
        true,
    ),
    (
        "long_goodput_gbps",
        "long-flow goodput, mean (Gb/s)",
        |s| s.long_goodput_gbps,
        false,
    ),
    (
        "max_queue",
        "longest queue (cells or packets)",
        |s| Some(s.max_queue_cells as f64),
        false,
    ),
];

pub fn main(args: CompareArgs) -> Result<ExitCode> {
    args.backend.check(args.db.enabled())?;
    let settings = settings(&args.set)?;
    let mut all = Vec::new();
    for path in &args.scenarios {
        let mut sc = apply(shoal_scenario::load(path)?, &settings)?;
        if let Some(seed) = args.seed {
            sc = sc.with_seed(seed);
        }
        all.push(sc);
    }
    check_same_flows(&all)?;
    let names: Vec<String> = all.iter().map(|s| s.name.clone()).collect();
    // Each run writes into a folder named after its scenario: names that differ only in the
    // characters `safe` replaces would share one.
    for (i, name) in names.iter().enumerate() {
        if let Some(other) = names[..i].iter().find(|o| safe(o) == safe(name)) {
            if other == name {
                bail!("two scenarios are named {name:?}: rename one ([scenario] name)");
            }
            bail!(
                "scenarios named {other:?} and {name:?} would share the results folder {:?}: \
                 rename one ([scenario] name)",
                safe(name)
            );
        }
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join("compare"));

    // Every (point, scenario) in point-major order, so a table reads point by point.
    let mut jobs: Vec<(Option<SweepValue>, Scenario)> = Vec::new();
    match &all[0].sweep {
        None => jobs.extend(all.iter().map(|s| (None, s.clone()))),
        Some(_) => {
            let per: Vec<Vec<(SweepValue, Scenario)>> = all
                .iter()
                .map(|s| s.sweep_points())
                .collect::<Result<_, _>>()?;
            for i in 0..per[0].len() {
                for points in &per {
                    let (v, sc) = &points[i];
                    jobs.push((Some(v.clone()), sc.clone()));
                }
            }
        }
    }
    // Each (point, scenario) `replications` times, under the same seeds for every scenario.
    let replications = args.replications;
    let (jobs, reps): (Vec<(Option<SweepValue>, Scenario)>, Vec<u64>) = jobs
        .into_iter()
        .flat_map(|(v, sc)| {
            (0..replications).map(move |r| {
                let seeded = if r == 0 {
                    sc.clone()
                } else {
                    sc.clone().with_seed(replicate::seed(sc.seed, r))
                };
                ((v.clone(), seeded), r)
            })
        })
        .unzip();
    // After the sweep's points are drawn: each point is parsed again from the scenario's text.
    let mut jobs = jobs;
    measure_the_same_flows(jobs.iter_mut().map(|(_, sc)| sc), args.quiet);
    let parameter = all[0].sweep.as_ref().map(|s| s.parameter.clone());
    // Each run's folder: <point>/<scenario> for a sweep, <scenario> otherwise.
    let mut planned: Vec<(Option<String>, String, String)> = Vec::with_capacity(jobs.len());
    for ((point, sc), &r) in jobs.iter().zip(&reps) {
        let mut label = match point {
            Some(v) => format!(
                "{} at {} = {v}",
                sc.name,
                parameter.as_deref().unwrap_or("")
            ),
            None => sc.name.clone(),
        };
        let mut name = safe(&sc.name);
        if replications > 1 {
            label.push_str(&format!(", replication {r} (seed {})", sc.seed));
            name.push_str(&format!("-r{r}"));
        }
        let place = (point.as_ref().map(|v| safe(&v.to_string())), name);
        // Two sweep values may differ only in the characters `safe` replaces.
        if let Some((_, _, other)) = planned
            .iter()
            .find(|(p, n, _)| (p, n) == (&place.0, &place.1))
        {
            let shared = place
                .0
                .iter()
                .fold(dir.clone(), |d, p| d.join(p))
                .join(&place.1);
            bail!(
                "{other} and {label} would share the results folder {}",
                shared.display()
            );
        }
        planned.push((place.0, place.1, label));
    }
    let readme = format!(
        "shoal compare of {}\nsettings: {}\n",
        args.scenarios
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if args.set.is_empty() {
            "none".into()
        } else {
            args.set.join(", ")
        }
    ) + &if replications > 1 {
        format!("replications: {replications}\n")
    } else {
        String::new()
    };
    // The same comparison (the same files and settings) into the folder an earlier run of it
    // left, whole or killed half-way: finish it, keeping the runs that finished. Each run is
    // kept only if the database holds it finished with the identical resolved scenario.
    let resuming = !args.force && args.db.enabled() && folder::holds(&dir, README, &readme);
    // The folders are opened once they are all known to differ, and the database is known
    // to be usable.
    Recorder::check(&args.db, &dir)?;
    let top = if resuming {
        Folder::reopen(&dir)?
    } else {
        Folder::open(&dir, args.force)?
    };
    let recorder = Recorder::open(&args.db, &dir)?.in_series("compare", &dir)?;
    crate::slurm::settle_earlier(&args.backend, &recorder, &dir)?;
    // Written first: it names the comparison a later run may resume.
    top.write(README, &readme)?;
    let mut point_folders: Vec<(String, Folder)> = Vec::new();
    let mut runs: Vec<Job> = Vec::with_capacity(jobs.len());
    let mut kept: Vec<Option<Summary>> = Vec::with_capacity(jobs.len());
    let mut paths = Vec::with_capacity(jobs.len());
    for ((value, sc), (point, name, label)) in jobs.iter().zip(planned) {
        let parent = match point {
            None => &top,
            Some(p) => {
                if !point_folders.iter().any(|(q, _)| *q == p) {
                    let path = dir.join(&p);
                    let f = if resuming && path.is_dir() {
                        Folder::reopen(&path)?
                    } else {
                        Folder::open(&path, args.force)?
                    };
                    top.note(&p)?;
                    point_folders.push((p.clone(), f));
                }
                &point_folders
                    .iter()
                    .find(|(q, _)| *q == p)
                    .expect("just opened")
                    .1
            }
        };
        let path = parent.path().join(&name);
        paths.push(path.clone());
        parent.note(&name)?;
        match recorder.keep_or_open(sc, &path, resuming, args.force)? {
            Ok(summary) => kept.push(Some(summary)),
            Err(folder) => {
                let swept = parameter
                    .as_deref()
                    .zip(value.as_ref())
                    .map(|(p, v)| format!("{p} = {v}"));
                runs.push(Job {
                    sc,
                    folder,
                    label,
                    swept,
                });
                kept.push(None);
            }
        }
    }
    if resuming && !args.quiet {
        record::say_resumed("compare", &dir, "runs", jobs.len(), runs.len());
    }
    let per_run = args.threads.map_or(1, |t| t as usize);
    let threads = batch::threads(args.jobs, per_run);
    let dispatched = batch::run_or_submit(
        &args.backend,
        runs,
        threads,
        per_run,
        args.quiet,
        "shoal compare: run",
        &recorder,
        "compare",
        &top,
    )?;
    let crate::slurm::Dispatched::Ran(summaries) = dispatched else {
        return Ok(ExitCode::SUCCESS);
    };
    let mut summaries = summaries
        .into_iter()
        .collect::<Result<Vec<_>>>()?
        .into_iter();
    for (_, f) in &point_folders {
        f.finish()?;
    }
    let rows: Vec<Row> = jobs
        .iter()
        .zip(kept)
        .zip(&reps)
        .map(|(((point, sc), done), &replication)| Row {
            point: point.clone(),
            name: sc.name.clone(),
            replication,
            summary: done
                .or_else(|| summaries.next())
                .expect("a summary per run not kept"),
        })
        .collect();
    let replicated = replications > 1;
    write_csv(&top, parameter.as_deref(), &rows, replicated)?;
    print(parameter.as_deref(), &rows, replicated);
    for r in &rows {
        crate::run::warn_unrealised_load(
            "shoal compare",
            parameter.as_deref(),
            r.point.as_ref(),
            &r.name,
            &r.summary,
        );
    }
    if replicated {
        let points: Vec<replicate::Point> = jobs
            .iter()
            .zip(&reps)
            .zip(&paths)
            .map(|(((value, sc), &replication), path)| replicate::Point {
                value: value.clone(),
                replication,
                sc: sc.clone(),
                folder: path.display().to_string(),
            })
            .collect();
        let summaries: Vec<&Summary> = rows.iter().map(|r| &r.summary).collect();
        let intervals = replicate::intervals(&points, &summaries);
        top.write_with(replicate::CI_FILE, |f| {
            replicate::write_csv(f, parameter.as_deref(), &intervals, true)
        })?;
        replicate::print(parameter.as_deref(), &intervals, true);
    }
    plots(&top, parameter.as_deref(), &names, &rows)?;
    distribution_plots(&top, &jobs, &paths)?;
    top.finish()?;
    println!("results      {}", dir.display());
    Ok(ExitCode::SUCCESS)
}

fn cells(r: &Row, replicated: bool) -> Vec<String> {
    let s = &r.summary;
    let mut row = vec![r.name.clone()];
    if replicated {
        row.extend([r.replication.to_string(), s.seed.to_string()]);
    }
    row.extend([
        s.fabric.clone(),
        s.flows.to_string(),
        s.flows_completed.to_string(),
    ]);
    row.extend(METRICS.iter().map(|(col, _, f, _)| {
        let digits = if *col == "max_queue" { 0 } else { 3 };
        opt(f(s), digits)
    }));
    row.push(s.queue_unit.to_owned());
    row
}

fn header(parameter: Option<&str>, replicated: bool) -> Vec<&str> {
    let mut h: Vec<&str> = parameter.into_iter().collect();
    h.push("scenario");
    if replicated {
        h.extend(["replication", "seed"]);
    }
    h.extend(["fabric", "flows", "completed"]);
    h.extend(METRICS.iter().map(|m| m.0));
    h.push("queue_unit");
    h
}

fn write_csv(
    folder: &Folder,
    parameter: Option<&str>,
    rows: &[Row],
    replicated: bool,
) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header(parameter, replicated))?;
    for r in rows {
        let mut line: Vec<String> = r.point.iter().map(|v| v.to_string()).collect();
        line.extend(
            cells(r, replicated)
                .into_iter()
                .map(|c| if c == "-" { String::new() } else { c }),
        );
        w.write_record(&line)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| anyhow::anyhow!("compare.csv: {e}"))?;
    folder.write_with("compare.csv", |f| f.write_all(&bytes))
}

fn print(parameter: Option<&str>, rows: &[Row], replicated: bool) {
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut line: Vec<String> = r.point.iter().map(|v| v.to_string()).collect();
            line.extend(cells(r, replicated));
            line
        })
        .collect();
    crate::repro::print_table(&header(parameter, replicated), &table);
}

/// The x axis of a sweep over `key`: the quantity and its unit for the keys the shipped
/// scenarios sweep, the key itself for others (it names a scenario key, documented in
/// docs/scenarios.md).
fn parameter_label(key: &str) -> String {
    match key {
        "workload.load" => "offered load asked for (fraction of each node's link rate)",
        "workload.flows" => "flows",
        "workload.pairs" => "node pairs",
        "workload.senders" => "senders",
        "rack.slot_ns" => "slot (ns)",
        "rack.random_node_failures.fraction" => "failed nodes (fraction)",
        other => other,
    }
    .to_owned()
}

/// One figure per metric: a line per scenario against the swept value, or one bar per
/// scenario without a sweep.
/// The FCT CDF and slowdown-by-size figures of each point (of the comparison, if it does not
/// sweep), from the runs' flows.csv in `paths`, and the time series of the runs that sampled.
fn distribution_plots(
    top: &Folder,
    jobs: &[(Option<SweepValue>, Scenario)],
    paths: &[PathBuf],
) -> Result<()> {
    let scenarios: Vec<&Scenario> = jobs.iter().map(|(_, sc)| sc).collect();
    let reference = distributions::Reference::of(&scenarios)?;
    let mut points: Vec<&Option<SweepValue>> = Vec::new();
    for (point, _) in jobs {
        if !points.contains(&point) {
            points.push(point);
        }
    }
    for point in points {
        // A scenario's replications come one after the other: their flows are pooled.
        let mut runs: Vec<(String, distributions::RunFlows)> = Vec::new();
        // Time series: the first replication's.
        let mut samples = Vec::new();
        for ((p, sc), path) in jobs.iter().zip(paths) {
            if p == point {
                let flows = distributions::read(sc, path, &reference)?;
                // The legend's name, as the comparison's other figures give it.
                let label = format!("{} ({})", sc.fabric_name(), sc.name);
                match runs.last_mut() {
                    Some((name, pooled)) if *name == label => pooled.pool(flows),
                    _ => {
                        if let Some(s) = timeseries::read(path)? {
                            samples.push((label.clone(), s));
                        }
                        runs.push((label, flows));
                    }
                }
            }
        }
        let suffix = point
            .as_ref()
            .map_or_else(String::new, |v| format!("-{}", safe(&v.to_string())));
        distributions::figures(top, &suffix, &runs, &reference)?;
        timeseries::figures(top, &suffix, &samples)?;
    }
    Ok(())
}

/// The mean of each run of points with equal x (a point's replications, which come one after
/// the other); the points themselves without replications.
fn means(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64, usize)> = Vec::new();
    for (x, y) in points {
        match out.last_mut() {
            Some((lx, sum, n)) if *lx == x => {
                *sum += y;
                *n += 1;
            }
            _ => out.push((x, y, 1)),
        }
    }
    out.into_iter()
        .map(|(x, sum, n)| (x, sum / n as f64))
        .collect()
}

/// One figure per metric drawn: a line per fabric against the swept value, or a bar per
/// fabric when the comparison does not sweep or sweeps one value. Legends name the fabric and
/// its scenario; titles say the figure is of the same measured flows. Not drawn: the
/// slowdown (each fabric divides by its own ideal FCT, so its values do not compare across
/// fabrics) and the longest queue (cells of 64-256 B beside packets of 1,500 B); both stay
/// columns of compare.csv.
fn plots(folder: &Folder, parameter: Option<&str>, names: &[String], rows: &[Row]) -> Result<()> {
    let dir = folder.path();
    let legend = |name: &String| {
        rows.iter().find(|r| &r.name == name).map_or_else(
            || name.clone(),
            |r| format!("{} ({name})", r.summary.fabric),
        )
    };
    let mut values: Vec<f64> = Vec::new();
    for v in rows.iter().filter_map(|r| r.point.as_ref()?.as_f64()) {
        if !values.contains(&v) {
            values.push(v);
        }
    }
    let swept = parameter.filter(|_| values.len() > 1);
    let flows = rows.first().map_or(0, |r| r.summary.flows_measured);
    for (col, label, f, log) in METRICS.into_iter().filter(|m| DRAWN.contains(&m.0)) {
        let title = format!(
            "{}, the same {flows} measured flows on every fabric",
            label_of(label)
        );
        let fig = match swept {
            Some(p) => Figure {
                title,
                x: Axis::linear(x_label(p, rows)),
                y: if log {
                    Axis::log(label)
                } else {
                    Axis::linear(label)
                },
                series: names
                    .iter()
                    .map(|n| {
                        let pts = rows
                            .iter()
                            .filter(|r| &r.name == n)
                            .filter_map(|r| Some((r.point.as_ref()?.as_f64()?, f(&r.summary)?)))
                            .filter(|&(_, v)| !log || v > 0.0)
                            .collect();
                        Series::new(legend(n), means(pts))
                    })
                    .collect(),
                kind: Kind::Lines,
            },
            // Bars start at zero: a log axis would start them at an arbitrary decade.
            None => Figure {
                title,
                x: Axis::linear(
                    match (parameter, rows.first().and_then(|r| r.point.as_ref())) {
                        (Some(p), Some(v)) => format!("{} = {v}", parameter_label(p)),
                        _ => String::new(),
                    },
                ),
                y: Axis::linear(label),
                series: vec![Series::new(
                    label,
                    means(
                        rows.iter()
                            .filter_map(|r| {
                                let i = names.iter().position(|n| *n == r.name)?;
                                Some((i as f64, f(&r.summary)?))
                            })
                            .collect(),
                    ),
                )],
                kind: Kind::Bars {
                    categories: names.iter().map(legend).collect(),
                },
            },
        };
        let mut fig = fig;
        // A fabric without a value (no long flow completed, say) is named, not silently left
        // out of the comparison.
        if fig.series.iter().any(|s| !s.points.is_empty()) {
            for s in fig.series.iter().filter(|s| s.points.is_empty()) {
                eprintln!("shoal compare: {col}: {} has no value, not drawn", s.name);
            }
        }
        fig.series.retain(|s| !s.points.is_empty());
        if fig.series.is_empty() {
            eprintln!("shoal compare: {col}: no run has a value, no figure");
            continue;
        }
        shoal_plot::write(&fig, dir, col)
            .map_err(|e| anyhow::anyhow!("{col}: cannot write the figure: {e}"))?;
        for ext in ["svg", "png", "csv"] {
            folder.note(&format!("{col}.{ext}"))?;
        }
    }
    Ok(())
}

/// The metrics drawn as figures (the others are compare.csv's columns only; see [`plots`]).
const DRAWN: [&str; 3] = ["short_fct_mean_us", "short_fct_p99_us", "long_goodput_gbps"];

/// An axis label without its unit, capitalised, for a title.
fn label_of(axis: &str) -> String {
    let bare = axis.split(" (").next().unwrap_or(axis);
    let mut c = bare.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The x axis of a sweep: the swept key's label and, for a load sweep, the load the measured
/// flows really offered at each point (`realised_load`), which the load asked for may differ
/// from in a short run.
fn x_label(parameter: &str, rows: &[Row]) -> String {
    let label = parameter_label(parameter);
    if parameter != "workload.load" {
        return label;
    }
    let mut realised: Vec<String> = Vec::new();
    for r in rows {
        let (Some(v), Some(real)) = (r.point.as_ref(), r.summary.realised_load) else {
            continue;
        };
        let text = format!("{v}: {real:.2}");
        if !realised.contains(&text) {
            realised.push(text);
        }
    }
    if realised.is_empty() {
        label
    } else {
        format!("{label}; realised {}", realised.join(", "))
    }
}
