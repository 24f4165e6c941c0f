//! `shoal repro`: run the paper's figures as experiments and compare with the published numbers.

use crate::batch;
use crate::claims_index::{self, Committed, Scale};
use crate::record::{DbArgs, Recorder};
use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Serialize;
#[cfg(test)]
use shoal_repro::Verdict;
use shoal_repro::{Claim, Options};
use std::path::Path;
use std::process::ExitCode;

/// Reproduce the paper's figures and say how close we are.
///
/// Each experiment runs its scenario(s) and checks claims: the paper's number, ours, the
/// tolerance and the verdict: pass, miss (why says what the measurement shows),
/// paper-inconsistent (the printed number does not follow from the paper's own inputs; why
/// names the test that derives another) or input-unavailable (the paper's input is not public;
/// why points to the stand-in's sweep). Only pass counts as a pass. Prints a table and "N of M
/// claims pass"; progress notes go to stderr, each with its experiment's name. Experiments run
/// side by side, one per core (--jobs), except those that measure wall-clock time, which run
/// alone afterwards; the claims come out in the same order and with the same values either
/// way. Exit status 0 if at least one claim was checked, every experiment ran and every
/// verdict is the one the claims index records (docs/results/README.md, built into this
/// binary; a claim it does not hold must pass): expected misses do not fail a run, a verdict
/// that changed does. Each experiment is recorded with its claims in the results database
/// (default: shoal.db beside the --out folder; `shoal runs`, `shoal report`).
#[derive(Args)]
#[command(
    after_help = "Examples:\n  shoal repro --list\n  shoal repro --quick\n  \
    shoal repro NAME --json > claims.json\n  \
    shoal repro --index          # rewrite docs/results/README.md and claims.json"
)]
pub struct ReproArgs {
    /// Experiments to run (default: all; see --list).
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// Print the claims as a JSON array of {figure, claim, paper, ours, tolerance, verdict,
    /// why, pass} on stdout, and nothing else there.
    #[arg(long)]
    json: bool,
    /// Write the claims index into DIR (default docs/results): README.md (every claim of
    /// every experiment, grouped by paper and experiment, with totals per paper at full and
    /// quick scale) and claims.json (the same rows with their scale, date, commit and
    /// command). Full-scale rows come from the latest full-scale run of each experiment in the
    /// results database (--db, default DIR/shoal.db); every experiment also runs here at its
    /// quick scale. Takes no experiment names.
    #[arg(
        long,
        value_name = "DIR",
        num_args = 0..=1,
        default_missing_value = "docs/results",
        conflicts_with_all = ["quick", "json", "list", "scale"]
    )]
    index: Option<std::path::PathBuf>,
    /// Scaled-down runs that finish in seconds (each experiment says how it scales).
    #[arg(long)]
    quick: bool,
    /// List the experiments (name, figure, summary) and exit.
    #[arg(long)]
    list: bool,
    /// Folder for the figures (created, and checked before any experiment runs): each
    /// plotted figure writes NAME.svg, NAME.png and NAME.csv (its points, columns
    /// series,x,y) here, replacing files of the same name.
    #[arg(long, value_name = "DIR", default_value = "out/repro")]
    out: std::path::PathBuf,
    /// Scale for the experiments that take one, as key=value words, each key once;
    /// fig15-baselines takes nodes, loads (comma-separated), flows and torus_flows, e.g.
    /// --scale "nodes=512 loads=0.2,0.7 flows=20000 torus_flows=2000"; xfabric-fig5 takes flows,
    /// warmup_s, periods and clusters, e.g. --scale "flows=250000 warmup_s=120" (the paper's
    /// trace); fig17 takes nodes, fractions (failed, comma-separated), flows and load (without
    /// failures), e.g. --scale "fractions=0,0.2,0.4,0.5 load=0.5"; stardust-fig9 takes
    /// utilisations (some of the figure's points, each a long run), e.g. --scale
    /// "utilisations=0.95,1.2"; collectives takes nodes (a power of two, at least 8) and
    /// sizes (bytes, comma-separated), e.g. --scale "nodes=16 sizes=4096,1048576". Checked
    /// before anything
    /// runs: every experiment named must take every key given (the others take none). Not
    /// with --quick, whose scale is fixed.
    #[arg(long, value_name = "SETTINGS", conflicts_with = "quick")]
    scale: Option<String>,
    /// Experiments run at once. Default: the cores divided by --threads. Each needs its own
    /// memory (a paper-scale datacenter figure up to a few GiB); 1 runs them one after the
    /// other.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    jobs: Option<u64>,
    /// Threads inside each experiment: the fast Shoal engine (the default wherever it covers
    /// the rack) cuts the rack into as many parts run side by side; stardust-fig9 runs that
    /// many of its points at once, stardust-failures its three simulations and collectives
    /// that many of its runs; other fabrics
    /// and the node engine use one. Claims are identical for every count [default: 1].
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    #[command(flatten)]
    db: DbArgs,
}

/// Exactly the keys the JSON output promises, whatever `Claim` grows.
#[derive(Serialize)]
struct ClaimRow<'a> {
    figure: &'a str,
    claim: &'a str,
    paper: &'a str,
    ours: &'a str,
    tolerance: &'a str,
    verdict: &'a str,
    why: &'a str,
    pass: bool,
}

impl<'a> From<&'a Claim> for ClaimRow<'a> {
    fn from(c: &'a Claim) -> Self {
        ClaimRow {
            figure: &c.figure,
            claim: &c.claim,
            paper: &c.paper,
            ours: &c.ours,
            tolerance: &c.tolerance,
            verdict: c.verdict.as_str(),
            why: &c.why,
            pass: c.pass(),
        }
    }
}

/// Prints rows as a left-aligned table under `header`.
pub fn print_table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(header.to_vec());
    line(
        widths
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .iter()
            .map(String::as_str)
            .collect(),
    );
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

/// Prints the claims as a table whose long cells wrap to the terminal's width (120 columns
/// when stdout is not a terminal): a claim's text, ours and why run to hundreds of
/// characters. The statement and the reason get the room; the verdict is never cut.
fn print_claims(rows: &[Vec<String>]) {
    use comfy_table::{ColumnConstraint::*, Width::*};
    let mut table = comfy_table::Table::new();
    table
        .load_style(comfy_table::presets::ASCII_MARKDOWN)
        .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
        .set_header([
            "figure",
            "claim",
            "paper",
            "ours",
            "tolerance",
            "verdict",
            "why",
        ]);
    if table.width().is_none() {
        table.set_width(120);
    }
    table.set_constraints([
        UpperBoundary(Percentage(10)),
        LowerBoundary(Percentage(24)),
        UpperBoundary(Percentage(10)),
        UpperBoundary(Percentage(12)),
        UpperBoundary(Percentage(10)),
        ContentWidth,
        LowerBoundary(Percentage(24)),
    ]);
    for row in rows {
        table.add_row(row.iter().map(String::as_str));
    }
    println!("{table}");
}

/// Refuses `--scale` settings before anything runs unless every experiment to run takes
/// each of them: a setting an experiment ignores would run it at a scale other than the one
/// asked for.
fn check_scale(asked: &[String], names: &[String], text: &str) -> Result<()> {
    if asked.is_empty() {
        bail!(
            "--scale: name the experiments to scale; without names every experiment runs, and \
             only these take settings: {}",
            shoal_repro::scale_keys()
        );
    }
    for name in names {
        shoal_repro::check_scale(name, text)?;
    }
    Ok(())
}

/// Creates the folder for the figures and checks that files can be written there, before any
/// experiment runs: at paper scale the experiments take hours, and a folder that cannot take
/// their figures would only show once they are done.
fn figures_folder(dir: &Path) -> Result<()> {
    let shown = dir.display();
    if dir.exists() && !dir.is_dir() {
        bail!("--out {shown}: exists and is not a directory");
    }
    std::fs::create_dir_all(dir)
        .with_context(|| format!("--out {shown}: cannot create the folder for the figures"))?;
    // Named by process, so that two runs started at once on the same folder do not remove
    // each other's probe.
    let probe = dir.join(format!(".shoal-repro-write-check.{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("--out {shown}: cannot write files into the folder"))?;
    std::fs::remove_file(&probe)
        .with_context(|| format!("--out {shown}: cannot remove {}", probe.display()))?;
    Ok(())
}

pub fn main(args: ReproArgs) -> Result<ExitCode> {
    let all = shoal_repro::experiments();
    if args.list {
        if args.json {
            let list: Vec<serde_json::Value> = all
                .iter()
                .map(|e| serde_json::json!({"name": e.name, "figure": e.figure, "summary": e.summary}))
                .collect();
            println!("{}", serde_json::to_string_pretty(&list)?);
        } else if all.is_empty() {
            println!("no experiments yet");
        } else {
            let rows: Vec<Vec<String>> = all
                .iter()
                .map(|e| vec![e.name.to_owned(), e.figure.to_owned(), e.summary.to_owned()])
                .collect();
            print_table(&["name", "figure", "summary"], &rows);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(dir) = &args.index {
        return index(&args, dir);
    }
    let known: Vec<&str> = all.iter().map(|e| e.name).collect();
    let names: Vec<String> = if args.names.is_empty() {
        known.iter().map(|n| n.to_string()).collect()
    } else {
        args.names.clone()
    };
    for (i, name) in names.iter().enumerate() {
        // Two runs of one experiment side by side would write the same figure files at once.
        if names[..i].contains(name) {
            bail!("experiment {name:?} is named twice");
        }
        if !known.contains(&name.as_str()) {
            let list = if known.is_empty() {
                "there are none yet".to_owned()
            } else {
                format!("known: {}", known.join(", "))
            };
            bail!("no experiment named {name:?}; {list}");
        }
    }
    if let Some(text) = &args.scale {
        check_scale(&args.names, &names, text)?;
    }
    // The figures' folder is checked first (its errors name --out), then the database; a
    // refused database leaves no folder that this command made.
    let made = !args.out.exists();
    figures_folder(&args.out)?;
    if let Err(e) = Recorder::check(&args.db, &args.out) {
        if made {
            let _ = std::fs::remove_dir(&args.out);
        }
        return Err(e);
    }
    let recorder = Recorder::open(&args.db, &args.out)?.in_series("repro", &args.out)?;
    let figures = std::fs::canonicalize(&args.out).unwrap_or_else(|_| args.out.clone());
    let per_run = args.threads.map_or(1, |t| t as usize);
    let opts = Options {
        quick: args.quick,
        plots: Some(args.out.clone()),
        scale: args.scale.clone(),
        threads: per_run,
    };
    let results = side_by_side(&names, args.jobs, per_run, |name| {
        let settings = experiment_settings(name, &opts);
        let row = shoal_results::NewRun {
            kind: "repro",
            name,
            fabric: "-",
            scenario: &settings,
            seed: None,
            folder: &figures,
            command: "",
            version: shoal_scenario::TOOL_VERSION,
            swept: None,
            series: None,
        };
        recorder.record(&row, || run_one(name, &opts), |claims| outcome(claims))
    });
    let mut claims: Vec<(String, Claim)> = Vec::new();
    let mut failed_runs = Vec::new();
    for (name, result) in names.iter().zip(results) {
        match result {
            Some(Ok(c)) => claims.extend(c.into_iter().map(|c| (name.clone(), c))),
            _ => failed_runs.push(name.clone()),
        }
    }
    let passed = claims.iter().filter(|(_, c)| c.pass()).count();
    if args.json {
        let rows: Vec<ClaimRow<'_>> = claims.iter().map(|(_, c)| ClaimRow::from(c)).collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        let rows: Vec<Vec<String>> = claims
            .iter()
            .map(|(_, c)| {
                vec![
                    c.figure.clone(),
                    c.claim.clone(),
                    c.paper.clone(),
                    c.ours.clone(),
                    c.tolerance.clone(),
                    c.verdict.to_string(),
                    c.why.clone(),
                ]
            })
            .collect();
        print_claims(&rows);
        println!("{passed} of {} claims pass", claims.len());
    }
    if !failed_runs.is_empty() {
        eprintln!(
            "shoal repro: experiments that could not run: {}",
            failed_runs.join(", ")
        );
    }
    // A run that checked nothing has not reproduced anything: it must not read as a pass.
    if claims.is_empty() && failed_runs.is_empty() {
        let why = if args.scale.is_some() {
            "the --scale settings left none of their claims a point to compare"
        } else {
            "the experiments returned none"
        };
        eprintln!("shoal repro: no claim was checked: {why}");
    }
    let scale = match (args.quick, &args.scale) {
        (_, Some(_)) => None,
        (true, None) => Some(Scale::Quick),
        (false, None) => Some(Scale::Full),
    };
    let changed = changed_verdicts(&claims, scale, &Committed::embedded()?);
    if changed.is_empty() {
        if !claims.is_empty() && passed < claims.len() {
            eprintln!(
                "shoal repro: every verdict is the one the claims index records \
                 (docs/results/README.md): the misses are known"
            );
        }
    } else {
        eprintln!(
            "shoal repro: {} verdict(s) differ from the claims index (docs/results/README.md):",
            changed.len()
        );
        for line in &changed {
            eprintln!("  {line}");
        }
    }
    Ok(
        if failed_runs.is_empty() && !claims.is_empty() && changed.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        },
    )
}

/// Runs experiment `name` with `opts`, its progress notes on stderr.
fn run_one(name: &str, opts: &Options) -> Result<Vec<Claim>> {
    eprintln!(
        "shoal repro: running {name}{}",
        if opts.quick { " (quick)" } else { "" }
    );
    let mut note = |msg: &str| eprintln!("  {name}: {msg}");
    let result = shoal_repro::run(name, opts, &mut note).map_err(anyhow::Error::from);
    if let Err(e) = &result {
        eprintln!("shoal repro: {name} could not run: {e}");
    }
    result
}

/// Runs `run` for every name, `jobs` at once, except the experiments whose claims are
/// wall-clock times: those run alone afterwards, so that the others do not slow them. One that
/// cannot run stops nothing. The results come back in `names`' order.
fn side_by_side(
    names: &[String],
    jobs: Option<u64>,
    per_run: usize,
    run: impl Fn(&String) -> Result<Vec<Claim>> + Sync,
) -> Vec<Option<Result<Vec<Claim>>>> {
    let all = shoal_repro::experiments();
    let timed = |name: &String| all.iter().any(|e| e.name == name && e.timed);
    let (alone, together): (Vec<usize>, Vec<usize>) =
        (0..names.len()).partition(|&i| timed(&names[i]));
    let mut results: Vec<Option<_>> = (0..names.len()).map(|_| None).collect();
    let batch = shoal_base::par::map(
        &together,
        batch::threads(jobs, per_run),
        |_, &i| run(&names[i]),
        |_| false,
    );
    for (i, result) in together.iter().zip(batch) {
        results[*i] = result;
    }
    for i in alone {
        results[i] = Some(run(&names[i]));
    }
    results
}

/// The claims whose verdict differs from the one the index records at `scale` (a claim the
/// index does not hold must pass), one line each.
fn changed_verdicts(
    claims: &[(String, Claim)],
    scale: Option<Scale>,
    committed: &Committed,
) -> Vec<String> {
    claims
        .iter()
        .filter_map(|(name, c)| {
            let expected = scale.and_then(|s| committed.verdict(name, s, c));
            let same = match expected {
                Some(v) => v == c.verdict.as_str(),
                None => c.pass(),
            };
            (!same).then(|| {
                format!(
                    "{name}: {:?}: {} (the index: {})",
                    c.claim,
                    c.verdict,
                    expected.unwrap_or("no row; a new claim must pass")
                )
            })
        })
        .collect()
}

/// `shoal repro --index DIR`: every experiment at its quick scale, then the index written
/// from them and the database's full-scale runs.
fn index(args: &ReproArgs, dir: &Path) -> Result<ExitCode> {
    if !args.names.is_empty() {
        bail!("--index covers every experiment: it takes no names");
    }
    if !dir.is_dir() {
        bail!("--index {}: not a folder", dir.display());
    }
    // A database named with --db must exist; the default one may not yet (quick rows only).
    let db = match (args.db.enabled(), args.db.file()) {
        (false, _) => None,
        (true, Some(file)) if !file.exists() => {
            bail!("--db {}: no such results database", file.display())
        }
        (true, Some(file)) => Some(file),
        (true, None) => {
            let file = dir.join(crate::record::DB_FILE);
            if file.exists() {
                Some(file)
            } else {
                eprintln!(
                    "shoal repro --index: no {} yet: every experiment is indexed at its quick \
                     scale only",
                    file.display()
                );
                None
            }
        }
    };
    let per_run = args.threads.map_or(1, |t| t as usize);
    let opts = Options {
        quick: true,
        plots: None,
        scale: None,
        threads: per_run,
    };
    let names: Vec<String> = shoal_repro::experiments()
        .iter()
        .map(|e| e.name.to_owned())
        .collect();
    let date = shoal_results::now_utc()?;
    let results = side_by_side(&names, args.jobs, per_run, |name| run_one(name, &opts));
    let mut quick = Vec::new();
    for (e, result) in shoal_repro::experiments().iter().zip(results) {
        match result {
            Some(Ok(claims)) => quick.push((e.name, claims)),
            Some(Err(err)) => bail!("{}: could not run at its quick scale: {err:#}", e.name),
            None => bail!("{}: did not run", e.name),
        }
    }
    let totals = claims_index::write(claims_index::Inputs {
        dir,
        db,
        quick,
        commit: shoal_results::REVISION,
        date,
    })?;
    println!(
        "wrote {} and {}: {totals}",
        dir.join("README.md").display(),
        dir.join("claims.json").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// What identifies an experiment's run in the results database: its name and the settings
/// that scale it, as TOML.
fn experiment_settings(name: &str, opts: &Options) -> String {
    let quoted = |s: &str| toml::Value::String(s.to_owned()).to_string();
    let mut text = format!(
        "[repro]\nexperiment = {}\nquick = {}\n",
        quoted(name),
        opts.quick
    );
    if let Some(scale) = &opts.scale {
        text.push_str(&format!("scale = {}\n", quoted(scale)));
    }
    text
}

/// An experiment's row: its claims, and how many there are and pass.
fn outcome(claims: &[Claim]) -> shoal_results::Outcome {
    let passed = claims.iter().filter(|c| c.pass()).count();
    shoal_results::Outcome {
        metrics: vec![
            (
                "claims".to_owned(),
                shoal_results::Value::Int(claims.len() as i64),
            ),
            (
                "claims_passed".to_owned(),
                shoal_results::Value::Int(passed as i64),
            ),
        ],
        claims: claims
            .iter()
            .map(|c| shoal_results::Claim {
                figure: c.figure.clone(),
                claim: c.claim.clone(),
                paper: c.paper.clone(),
                ours: c.ours.clone(),
                tolerance: c.tolerance.clone(),
                verdict: c.verdict.as_str().to_owned(),
                why: c.why.clone(),
            })
            .collect(),
        ..shoal_results::Outcome::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_verdicts_that_differ_from_the_index_are_reported() {
        let claim = |text: &str, verdict| Claim {
            figure: "Fig. 1".into(),
            claim: text.into(),
            paper: "1".into(),
            ours: "2".into(),
            tolerance: "exact".into(),
            verdict,
            why: String::new(),
        };
        let key = |text: &str, scale| ("e".to_owned(), scale, "Fig. 1".to_owned(), text.to_owned());
        let committed = Committed::new([
            (key("known miss", Scale::Quick), "miss".to_owned()),
            (key("was a pass", Scale::Quick), "pass".to_owned()),
        ]);
        let run = vec![
            ("e".to_owned(), claim("known miss", Verdict::Miss)),
            ("e".to_owned(), claim("was a pass", Verdict::Miss)),
            ("e".to_owned(), claim("new and passing", Verdict::Pass)),
            ("e".to_owned(), claim("new and missing", Verdict::Miss)),
        ];
        let changed = changed_verdicts(&run, Some(Scale::Quick), &committed);
        assert_eq!(changed.len(), 2, "{changed:?}");
        assert!(changed[0].contains("was a pass") && changed[0].contains("the index: pass"));
        assert!(changed[1].contains("new and missing"));
        // The index holds quick rows only here: at full scale every claim must pass.
        assert_eq!(
            changed_verdicts(&run, Some(Scale::Full), &committed).len(),
            3
        );
        // A --scale run has no committed verdicts.
        assert_eq!(changed_verdicts(&run, None, &committed).len(), 3);
    }
}
