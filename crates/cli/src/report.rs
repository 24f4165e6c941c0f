//! `shoal report`: one self-contained HTML page of what a results database holds.

use crate::claims_index;
use crate::record::DB_FILE;
use anyhow::{Context, Result, bail};
use clap::Args;
use serde::Serialize;
use shoal_results::{Db, Filter, Run, Status, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The template the page is made from, unless --template names another.
const TEMPLATE: &str = include_str!("../templates/report.html");

/// Write one static HTML page of the runs a results database recorded.
///
/// The page needs no network and no other file: the repro claims (paper, ours, tolerance,
/// pass), every run with its main metrics, wall time and memory, the figures of the
/// comparisons and repro experiments inlined as SVG, the keys in which the simulated scenarios
/// differ, each distinct scenario's resolved text,
/// and each run's provenance (version, revision, seed, start, command). The page is a
/// minijinja template (templates/report.html in the source); --template takes another, given
/// the same values.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  shoal report\n  shoal report --db /scratch/study/shoal.db --out study.html"
)]
pub struct ReportArgs {
    /// The database. Default: out/shoal.db.
    #[arg(long, value_name = "FILE", default_value_os_t = Path::new("out").join(DB_FILE))]
    db: PathBuf,
    /// The page to write. Default: report.html beside the database. An existing file is
    /// replaced only if an earlier `shoal report` wrote it (its generator line says so); any
    /// other file needs --force, and the database itself is never overwritten.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// A minijinja template to use instead of the built-in one. Keep the built-in template's
    /// `<meta name="generator" content="shoal report">` line in it, so that the next report
    /// may replace its page without --force.
    #[arg(long, value_name = "FILE")]
    template: Option<PathBuf>,
    /// Replace --out even if it is a file `shoal report` did not write (never the database).
    #[arg(long)]
    force: bool,
}

/// The line by which a page says `shoal report` wrote it (the built-in template has it), so
/// that a later report may replace it without --force.
const GENERATOR: &str = r#"<meta name="generator" content="shoal report">"#;

/// Refuses to write the page over the database it reports on, over a folder, or (without
/// `force`) over any file that is not a page an earlier report wrote: a mistyped --out must not
/// destroy results.
fn check_out(out: &Path, db: &Path, force: bool) -> Result<()> {
    if crate::folder::same_file(out, db) {
        bail!(
            "--out {}: that is the results database the report reads; name another file \
             (default: report.html beside the database)",
            out.display()
        );
    }
    let Ok(meta) = std::fs::metadata(out) else {
        return Ok(());
    };
    if meta.is_dir() {
        bail!(
            "--out {}: is a folder; name a file, e.g. {}",
            out.display(),
            out.join("report.html").display()
        );
    }
    let mut head = Vec::with_capacity(4096);
    {
        use std::io::Read;
        std::fs::File::open(out)
            .and_then(|f| f.take(4096).read_to_end(&mut head))
            .with_context(|| format!("--out {}: cannot read the file there", out.display()))?;
    }
    if head.starts_with(b"SQLite format 3\0") {
        bail!(
            "--out {}: is an SQLite database (a results database?); the report will not \
             write over it; name another file",
            out.display()
        );
    }
    let ours = String::from_utf8_lossy(&head).contains(GENERATOR);
    if !ours && !force {
        bail!(
            "--out {}: the file exists and `shoal report` did not write it; name another \
             file, or pass --force to replace it",
            out.display()
        );
    }
    Ok(())
}

#[derive(Serialize)]
struct RunView {
    id: i64,
    kind: String,
    name: String,
    fabric: String,
    seed: String,
    status: &'static str,
    error: Option<String>,
    fct_mean: String,
    fct_p99: String,
    goodput: String,
    wall_s: String,
    peak_mib: String,
    folder: String,
    version: String,
    revision: String,
    started_at: String,
    command: String,
}

#[derive(Serialize)]
struct ClaimView {
    experiment: String,
    /// full, quick, or the run's --scale settings.
    scale: String,
    figure: String,
    claim: String,
    paper: String,
    ours: String,
    tolerance: String,
    verdict: String,
    why: String,
}

/// One line of the totals: a paper's claims at one scale, by verdict.
#[derive(Serialize)]
struct TotalView {
    paper: String,
    scale: String,
    pass: usize,
    miss: usize,
    paper_inconsistent: usize,
    input_unavailable: usize,
}

#[derive(Serialize)]
struct FigureView {
    path: String,
    svg: String,
    /// What made it: the comparison of which scenarios, or which repro run at which scale.
    source: String,
}

#[derive(Serialize)]
struct ScenarioView {
    name: String,
    /// The kind of its first run: `repro` rows hold an experiment's settings, not a scenario.
    kind: String,
    sha256: String,
    text: String,
    runs: Vec<i64>,
}

/// One key in which the simulated scenarios differ: its value in each, in the order of
/// `Page::compared`, `-` where a scenario does not have it.
#[derive(Serialize)]
struct DifferenceView {
    key: String,
    values: Vec<String>,
}

/// The dotted keys of a resolved scenario with their values as TOML text (arrays whole).
fn flat(text: &str) -> BTreeMap<String, String> {
    fn walk(prefix: &str, table: &toml::Table, out: &mut BTreeMap<String, String>) {
        for (k, v) in table {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(t) => walk(&key, t, out),
                other => {
                    out.insert(key, other.to_string());
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    // Recorded texts are resolved scenarios, which always parse; one that does not (a database
    // edited by hand) shows every key as absent rather than stopping the page.
    if let Ok(table) = text.parse::<toml::Table>() {
        walk("", &table, &mut out);
    }
    out
}

/// The keys whose values are not the same in every one of `texts`, each with its value per
/// text; nothing for fewer than two.
fn differences(texts: &[&str]) -> Vec<DifferenceView> {
    if texts.len() < 2 {
        return Vec::new();
    }
    let flats: Vec<BTreeMap<String, String>> = texts.iter().map(|t| flat(t)).collect();
    let keys: std::collections::BTreeSet<&String> = flats.iter().flat_map(|f| f.keys()).collect();
    keys.into_iter()
        .filter_map(|key| {
            let values: Vec<String> = flats
                .iter()
                .map(|f| f.get(key).cloned().unwrap_or_else(|| "-".to_owned()))
                .collect();
            let same = values.iter().all(|v| *v == values[0]);
            (!same).then(|| DifferenceView {
                key: key.clone(),
                values,
            })
        })
        .collect()
}

/// A recorded repro run's scale: full, quick, or its --scale settings.
fn scale_label(settings: &str) -> String {
    match claims_index::scale_of(settings) {
        Some(scale) => scale.as_str().to_owned(),
        None => settings
            .parse::<toml::Table>()
            .ok()
            .and_then(|t| Some(t.get("repro")?.get("scale")?.as_str()?.to_owned()))
            .map_or("custom".to_owned(), |s| format!("scale {s}")),
    }
}

/// The claims' totals per paper and scale, by verdict, in the order of first appearance.
fn totals(claims: &[ClaimView]) -> Vec<TotalView> {
    let mut totals: Vec<TotalView> = Vec::new();
    for c in claims {
        let paper = shoal_repro::experiments()
            .iter()
            .find(|e| e.name == c.experiment)
            .map_or("-", |e| claims_index::paper_of(e.figure))
            .to_owned();
        let i = match totals
            .iter()
            .position(|t| t.paper == paper && t.scale == c.scale)
        {
            Some(i) => i,
            None => {
                totals.push(TotalView {
                    paper,
                    scale: c.scale.clone(),
                    pass: 0,
                    miss: 0,
                    paper_inconsistent: 0,
                    input_unavailable: 0,
                });
                totals.len() - 1
            }
        };
        let t = &mut totals[i];
        match c.verdict.as_str() {
            "pass" => t.pass += 1,
            "paper-inconsistent" => t.paper_inconsistent += 1,
            "input-unavailable" => t.input_unavailable += 1,
            _ => t.miss += 1,
        }
    }
    totals
}

/// What the template is given.
#[derive(Serialize)]
struct Page<'a> {
    db: String,
    version: &'static str,
    revision: &'static str,
    totals: &'a [TotalView],
    claims: &'a [ClaimView],
    runs: &'a [RunView],
    figures: &'a [FigureView],
    scenarios: &'a [ScenarioView],
    /// The simulated scenarios (not repro settings) the differences are shown for, by name
    /// and hash prefix, and the keys in which they differ.
    compared: &'a [String],
    differences: &'a [DifferenceView],
}

fn metric(metrics: &[(String, Value)], key: &str) -> String {
    metrics
        .iter()
        .find(|(k, _)| k == key)
        .map_or_else(|| "-".to_owned(), |(_, v)| format!("{:.3}", v.as_f64()))
}

fn run_view(r: &Run, metrics: &[(String, Value)]) -> RunView {
    RunView {
        id: r.id.0,
        kind: r.kind.clone(),
        name: r.name.clone(),
        fabric: r.fabric.clone(),
        seed: r.seed.map_or_else(|| "-".to_owned(), |s| s.to_string()),
        status: r.status.as_str(),
        error: r.error.clone(),
        fct_mean: metric(metrics, "short_fct_us.mean"),
        fct_p99: metric(metrics, "short_fct_us.p99"),
        goodput: metric(metrics, "long_goodput_gbps"),
        wall_s: crate::run::opt(r.wall_s, 2),
        peak_mib: crate::run::opt(r.peak_rss_bytes.map(|b| b as f64 / 1048576.0), 0),
        folder: r.folder.display().to_string(),
        version: r.version.clone(),
        revision: r.revision.clone(),
        started_at: r.started_at.clone(),
        command: r.command.clone(),
    }
}

/// The folders whose figures the page shows, each with what made it: each comparison's (the
/// nearest folder above a compared run that holds compare.csv) and each repro run's figures
/// folder, in the order their first run was recorded.
fn figure_folders(runs: &[Run]) -> Vec<(PathBuf, String)> {
    let mut folders: Vec<(PathBuf, Vec<&Run>)> = Vec::new();
    for r in runs.iter().filter(|r| r.status == Status::Done) {
        let folder = match r.kind.as_str() {
            "compare" => r
                .folder
                .ancestors()
                .skip(1)
                .find(|a| a.join("compare.csv").is_file())
                .map(Path::to_owned),
            "repro" => Some(r.folder.clone()),
            _ => None,
        };
        let Some(f) = folder else { continue };
        match folders.iter_mut().find(|(g, _)| *g == f) {
            Some((_, of)) => of.push(r),
            None => folders.push((f, vec![r])),
        }
    }
    folders
        .into_iter()
        .map(|(f, of)| {
            let source = source(&of);
            (f, source)
        })
        .collect()
}

/// Whether a repro row's settings (`[repro]` with `quick`, as `shoal repro` records them) say
/// the quick scale.
fn ran_quick(settings: &str) -> bool {
    settings
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("repro")?.get("quick")?.as_bool())
        .unwrap_or(false)
}

/// The caption's account of a figure folder's runs: `shoal compare of <scenarios>`, or `shoal
/// repro` with the scale and experiments of its runs (quick and full ones named apart).
fn source(runs: &[&Run]) -> String {
    let mut names: Vec<&str> = Vec::new();
    let mut quick: Vec<&str> = Vec::new();
    for r in runs {
        let list = if r.kind == "repro" && ran_quick(&r.scenario) {
            &mut quick
        } else {
            &mut names
        };
        if !list.contains(&r.name.as_str()) {
            list.push(&r.name);
        }
    }
    if runs.first().is_some_and(|r| r.kind == "compare") {
        return format!("shoal compare of {}", names.join(", "));
    }
    let mut parts = Vec::new();
    if !names.is_empty() {
        parts.push(format!("full scale: {}", names.join(", ")));
    }
    if !quick.is_empty() {
        parts.push(format!("quick: {}", quick.join(", ")));
    }
    format!("shoal repro ({})", parts.join("; "))
}

/// Every SVG in `folder`, by name.
fn svgs(folder: &Path, source: &str) -> Result<Vec<FigureView>> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        // A folder moved or removed since its run: the page says so by showing nothing of it.
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "svg"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let svg = std::fs::read_to_string(&p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            // The XML declaration may not stand inside HTML.
            let svg = match svg.find("<svg") {
                Some(i) => svg[i..].to_owned(),
                None => bail!("{}: not an SVG figure", p.display()),
            };
            Ok(FigureView {
                path: p.display().to_string(),
                svg,
                source: source.to_owned(),
            })
        })
        .collect()
}

pub fn main(args: ReportArgs) -> Result<ExitCode> {
    // Reporting never creates a database.
    if !args.db.is_file() {
        bail!(
            "{}: no results database there (runs record into {DB_FILE} beside their results \
             folder, e.g. out/{DB_FILE}); name one with --db FILE",
            args.db.display()
        );
    }
    let template = match &args.template {
        Some(path) => std::fs::read_to_string(path)
            .with_context(|| format!("--template {}: cannot read it", path.display()))?,
        None => TEMPLATE.to_owned(),
    };
    let out = args.out.clone().unwrap_or_else(|| {
        args.db
            .parent()
            .map_or_else(PathBuf::new, Path::to_owned)
            .join("report.html")
    });
    check_out(&out, &args.db, args.force)?;
    // Reporting never writes to the database: an archived or read-only one can be reported.
    let db = Db::open_read(&args.db)?;
    let runs = crate::record::readable_runs(&db, &Filter::default(), "shoal report")?;
    let mut views = Vec::with_capacity(runs.len());
    let mut scenarios: BTreeMap<String, ScenarioView> = BTreeMap::new();
    // The latest finished run of each experiment at each scale gives its claims: quick and
    // full-scale claims are never counted together.
    let mut latest: BTreeMap<(&str, String), &Run> = BTreeMap::new();
    for r in &runs {
        views.push(run_view(r, &db.metrics(r.id)?));
        scenarios
            .entry(r.scenario_sha256.clone())
            .or_insert_with(|| ScenarioView {
                name: r.name.clone(),
                kind: r.kind.clone(),
                sha256: r.scenario_sha256.clone(),
                text: r.scenario.clone(),
                runs: Vec::new(),
            })
            .runs
            .push(r.id.0);
        if r.kind == "repro" && r.status == Status::Done {
            latest.insert((&r.name, scale_label(&r.scenario)), r);
        }
    }
    let mut claims = Vec::new();
    for ((_, scale), r) in &latest {
        for c in db.claims(r.id)? {
            claims.push(ClaimView {
                experiment: r.name.clone(),
                scale: scale.clone(),
                figure: c.figure,
                claim: c.claim,
                paper: c.paper,
                ours: c.ours,
                tolerance: c.tolerance,
                verdict: c.verdict,
                why: c.why,
            });
        }
    }
    let totals = totals(&claims);
    let mut figures = Vec::new();
    for (folder, source) in figure_folders(&runs) {
        figures.extend(svgs(&folder, &source)?);
    }
    let mut scenarios: Vec<ScenarioView> = scenarios.into_values().collect();
    scenarios.sort_by_key(|s| s.runs[0]);
    let simulated: Vec<&ScenarioView> = scenarios.iter().filter(|s| s.kind != "repro").collect();
    let compared: Vec<String> = simulated
        .iter()
        .map(|s| format!("{} ({})", s.name, &s.sha256[..s.sha256.len().min(8)]))
        .collect();
    let texts: Vec<&str> = simulated.iter().map(|s| s.text.as_str()).collect();
    let differences = differences(&texts);
    let mut env = minijinja::Environment::new();
    // Named .html, so that every value is escaped unless the template says `safe`.
    env.add_template("report.html", &template)
        .map_err(|e| anyhow::anyhow!("the report template: {e}"))?;
    let page = env
        .get_template("report.html")
        .and_then(|t| {
            t.render(minijinja::value::Serde(&Page {
                db: args.db.display().to_string(),
                version: shoal_scenario::TOOL_VERSION,
                revision: shoal_results::REVISION,
                totals: &totals,
                claims: &claims,
                runs: &views,
                figures: &figures,
                scenarios: &scenarios,
                compared: &compared,
                differences: &differences,
            }))
        })
        .map_err(|e| anyhow::anyhow!("the report template: {e:#}"))?;
    // Whole or not at all, as every result file: a temporary file beside it, renamed over it.
    let name = out.file_name().map_or_else(
        || "report.html".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let tmp = out.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, page)
        .and_then(|()| std::fs::rename(&tmp, &out))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
        .with_context(|| format!("cannot write {}", out.display()))?;
    println!("wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_list_exactly_the_keys_whose_values_differ() {
        let a = "fabric = \"shoal\"\n[rack]\nnodes = 8\nchannels = 4\n[workload]\nload = 0.5\n";
        let b = "fabric = \"shoal\"\n[rack]\nnodes = 16\nchannels = 4\n[workload]\nload = 0.5\n";
        let c = "fabric = \"dctcp\"\n[network]\nhosts = 8\n[workload]\nload = 0.5\n";
        let rows = differences(&[a, b, c]);
        let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
        // workload.load is the same everywhere; everything else differs or is absent somewhere.
        assert_eq!(
            keys,
            ["fabric", "network.hosts", "rack.channels", "rack.nodes"]
        );
        let nodes = rows.iter().find(|r| r.key == "rack.nodes").unwrap();
        assert_eq!(nodes.values, ["8", "16", "-"]);
        let fabric = rows.iter().find(|r| r.key == "fabric").unwrap();
        assert_eq!(fabric.values, ["\"shoal\"", "\"shoal\"", "\"dctcp\""]);
        assert!(differences(&[a]).is_empty());
        assert!(differences(&[a, a]).is_empty());
    }
}
