//! The claims index (`shoal repro --index`): every claim of every experiment, with one verdict
//! vocabulary, in one Markdown table (`docs/results/README.md`) and one JSON file
//! (`docs/results/claims.json`).
//!
//! Full-scale rows come from the results database (the latest finished full-scale run of each
//! experiment recorded there, with its date, commit and command); quick rows from running every
//! experiment's quick scale in this process. An experiment with no full-scale run in the
//! database shows its quick rows in the table, marked so. Claims are matched within a scale by
//! experiment, figure and claim text (a claim's text is stable at one scale; its measured reason
//! is in `why`), not across scales, whose texts name their own sizes.
//!
//! The JSON file is also the reference `shoal repro` compares its verdicts with (embedded in
//! the binary): a run whose verdicts are those the index records exits 0 whatever they are.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use shoal_repro::{Claim, Verdict};
use shoal_results::{Db, Filter, Run, Status};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The committed index, as this binary was built with it.
const COMMITTED: &str = include_str!("../../../docs/results/claims.json");

/// The scale a claim was checked at: the experiment's own (the paper's, as far as each goes),
/// or its quick scale. Runs with `--scale` settings are neither and are not indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Scale {
    Full,
    Quick,
}

impl Scale {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scale::Full => "full",
            Scale::Quick => "quick",
        }
    }
}

/// The scale of a recorded repro run, from the settings it was recorded with (`[repro]`
/// `quick` and `scale`); `None` for a run at `--scale` settings.
pub(crate) fn scale_of(settings: &str) -> Option<Scale> {
    let table: toml::Table = settings.parse().ok()?;
    let repro = table.get("repro")?.as_table()?;
    if repro.contains_key("scale") {
        return None;
    }
    match repro.get("quick")?.as_bool()? {
        true => Some(Scale::Quick),
        false => Some(Scale::Full),
    }
}

/// The paper an experiment reproduces: the first word of its figure ("Stardust Fig. 9").
pub(crate) fn paper_of(figure: &str) -> &str {
    figure.split_whitespace().next().unwrap_or("-")
}

/// One row of the index.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct Row {
    /// The paper: Shoal, Stardust, Aquila or XFabric.
    pub fabric: String,
    pub experiment: String,
    pub figure: String,
    pub claim: String,
    pub paper: String,
    pub ours: String,
    pub tolerance: String,
    pub verdict: String,
    pub why: String,
    pub scale: Scale,
    /// When the run started (UTC).
    pub date: String,
    /// The commit of the binary that ran it.
    pub commit: String,
    /// The command that reproduces it.
    pub command: String,
    /// The results page that discusses the experiment, relative to the index.
    pub page: String,
}

/// The committed verdict of each claim, by (experiment, scale, figure, claim).
pub(crate) struct Committed(BTreeMap<(String, Scale, String, String), String>);

impl Committed {
    /// The index this binary was built with.
    pub(crate) fn embedded() -> Result<Committed> {
        let rows: Vec<Row> = serde_json::from_str(COMMITTED)
            .context("the claims index embedded in this binary (docs/results/claims.json)")?;
        Ok(Committed::new(rows.into_iter().map(|r| {
            ((r.experiment, r.scale, r.figure, r.claim), r.verdict)
        })))
    }

    /// The verdicts of (experiment, scale, figure, claim).
    pub(crate) fn new(
        verdicts: impl IntoIterator<Item = ((String, Scale, String, String), String)>,
    ) -> Committed {
        Committed(verdicts.into_iter().collect())
    }

    /// The verdict the index records for `claim` of `experiment` at `scale`, if it has one.
    pub(crate) fn verdict(&self, experiment: &str, scale: Scale, claim: &Claim) -> Option<&str> {
        self.0
            .get(&(
                experiment.to_owned(),
                scale,
                claim.figure.clone(),
                claim.claim.clone(),
            ))
            .map(String::as_str)
    }
}

/// One experiment's claims at one scale, with where they come from.
struct Checked {
    scale: Scale,
    date: String,
    commit: String,
    command: String,
    claims: Vec<Claim>,
}

/// The latest finished full-scale run of every experiment in `db`, by name.
fn full_scale_runs(db: &Db) -> Result<BTreeMap<String, (Run, Vec<Claim>)>> {
    let filter = Filter {
        kind: Some("repro".to_owned()),
        status: Some(Status::Done),
        ..Filter::default()
    };
    let mut latest = BTreeMap::new();
    // In id order: a later run of an experiment replaces an earlier one.
    for run in db.runs(&filter)? {
        if scale_of(&run.scenario) != Some(Scale::Full) {
            continue;
        }
        let claims = db
            .claims(run.id)?
            .into_iter()
            .map(|c| {
                let verdict = Verdict::parse(&c.verdict).with_context(|| {
                    format!(
                        "run {} ({}): claim {:?} has the verdict {:?}, not one of pass, miss, \
                         paper-inconsistent, input-unavailable",
                        run.id.0, run.name, c.claim, c.verdict
                    )
                })?;
                Ok(Claim {
                    figure: c.figure,
                    claim: c.claim,
                    paper: c.paper,
                    ours: c.ours,
                    tolerance: c.tolerance,
                    verdict,
                    why: c.why,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        latest.insert(run.name.clone(), (run, claims));
    }
    Ok(latest)
}

const INDEX_PAGE: &str = "README.md";
const INDEX_JSON: &str = "claims.json";

/// What `--index` is given: the folder the index goes to, the database of full-scale runs (none:
/// quick rows only), and the quick claims of every experiment, in registry order.
pub(crate) struct Inputs<'a> {
    pub dir: &'a Path,
    pub db: Option<PathBuf>,
    pub quick: Vec<(&'static str, Vec<Claim>)>,
    /// The commit and time of this build's quick runs.
    pub commit: &'a str,
    pub date: String,
}

/// Writes README.md and claims.json into `inputs.dir`; returns the totals line.
pub(crate) fn write(mut inputs: Inputs<'_>) -> Result<String> {
    let dir = inputs.dir;
    // Read only: writing the index never changes the database it reads.
    let full = match &inputs.db {
        Some(path) => full_scale_runs(&Db::open_read(path)?)?,
        None => BTreeMap::new(),
    };
    let experiments = shoal_repro::experiments();
    let mut rows = Vec::new();
    // Per experiment, in registry order: the rows shown (full if recorded, else quick).
    let mut shown: Vec<(&'static str, Scale)> = Vec::new();
    for (name, quick) in std::mem::take(&mut inputs.quick) {
        let e = experiments
            .iter()
            .find(|e| e.name == name)
            .with_context(|| format!("no experiment named {name}"))?;
        let page = e.results.unwrap_or_default().to_owned();
        let mut sets = Vec::new();
        if let Some((run, claims)) = full.get(name) {
            sets.push(Checked {
                scale: Scale::Full,
                date: run.started_at.clone(),
                commit: run.revision.clone(),
                command: run.command.clone(),
                claims: claims.clone(),
            });
        }
        sets.push(Checked {
            scale: Scale::Quick,
            date: inputs.date.clone(),
            commit: inputs.commit.to_owned(),
            command: format!("shoal repro --quick {name}"),
            claims: quick,
        });
        shown.push((name, sets[0].scale));
        for set in sets {
            for c in set.claims {
                rows.push(Row {
                    fabric: paper_of(e.figure).to_owned(),
                    experiment: name.to_owned(),
                    figure: c.figure,
                    claim: c.claim,
                    paper: c.paper,
                    ours: c.ours,
                    tolerance: c.tolerance,
                    verdict: c.verdict.as_str().to_owned(),
                    why: c.why,
                    scale: set.scale,
                    date: set.date.clone(),
                    commit: set.commit.clone(),
                    command: set.command.clone(),
                    page: page.clone(),
                });
            }
        }
    }
    let json = serde_json::to_string_pretty(&rows)? + "\n";
    let (markdown, totals) = markdown(&rows, &shown, &inputs);
    write_whole(&dir.join(INDEX_JSON), &json)?;
    write_whole(&dir.join(INDEX_PAGE), &markdown)?;
    Ok(totals)
}

/// Writes `path` whole or not at all: a temporary file beside it, renamed over it.
fn write_whole(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Counts of each verdict, in [`Verdict::ALL`]'s order.
fn count(rows: &[&Row]) -> [usize; 4] {
    let mut n = [0; 4];
    for r in rows {
        if let Some(i) = Verdict::ALL.iter().position(|v| v.as_str() == r.verdict) {
            n[i] += 1;
        }
    }
    n
}

/// A table cell: pipes escaped, never empty.
fn cell(text: &str) -> String {
    if text.is_empty() {
        return "-".to_owned();
    }
    text.replace('|', "\\|").replace('\n', " ")
}

fn markdown(rows: &[Row], shown: &[(&str, Scale)], inputs: &Inputs<'_>) -> (String, String) {
    let mut md = String::new();
    let db = inputs
        .db
        .as_ref()
        .map_or("no database".to_owned(), |p| p.display().to_string());
    md.push_str(&format!(
        "# Claims index\n\n\
         Every claim of every `shoal repro` experiment, written by `shoal repro --index` \
         ({date}): do not edit by hand. Full-scale rows come from the results database ({db}), \
         the latest full-scale run of each experiment recorded there; quick rows from this \
         build's quick runs (commit {commit}). An experiment with no full-scale run recorded \
         shows its quick rows, and says so. The same rows, with every field, are in \
         [claims.json](claims.json).\n\n\
         Verdicts: **pass** (ours within the tolerance, fixed before the run; the only verdict \
         that counts as a pass); **miss** (outside it, or nothing measured: `why` says what the \
         measurement shows); **paper-inconsistent** (the printed number does not follow from \
         the paper's own inputs: `why` gives the value they do give and names the test that \
         derives it); **input-unavailable** (the paper's input is not public: `why` points to \
         the stand-in's sensitivity sweep).\n\n",
        date = inputs.date,
        commit = short(inputs.commit),
    ));
    // Totals per paper, both scales side by side.
    md.push_str("## Totals\n\n");
    md.push_str(
        "| fabric | full: pass | miss | paper-inconsistent | input-unavailable | experiments \
         at full scale | quick: pass | miss | paper-inconsistent | input-unavailable |\n",
    );
    md.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    let mut fabrics: Vec<&str> = Vec::new();
    for r in rows {
        if !fabrics.contains(&r.fabric.as_str()) {
            fabrics.push(&r.fabric);
        }
    }
    let mut totals = Vec::new();
    for fabric in &fabrics {
        let at = |scale: Scale| -> Vec<&Row> {
            rows.iter()
                .filter(|r| r.fabric == *fabric && r.scale == scale)
                .collect()
        };
        let (full, quick) = (count(&at(Scale::Full)), count(&at(Scale::Quick)));
        let experiments: Vec<&str> = shown
            .iter()
            .filter(|(name, _)| {
                rows.iter()
                    .any(|r| r.experiment == *name && r.fabric == *fabric)
            })
            .map(|(name, _)| *name)
            .collect();
        let at_full = shown
            .iter()
            .filter(|(name, s)| experiments.contains(name) && *s == Scale::Full)
            .count();
        md.push_str(&format!(
            "| {fabric} | {} | {} | {} | {} | {at_full} of {} | {} | {} | {} | {} |\n",
            full[0],
            full[1],
            full[2],
            full[3],
            experiments.len(),
            quick[0],
            quick[1],
            quick[2],
            quick[3]
        ));
        totals.push(format!(
            "{fabric}: full {} of {}, quick {} of {}",
            full[0],
            full.iter().sum::<usize>(),
            quick[0],
            quick.iter().sum::<usize>()
        ));
    }
    md.push('\n');
    for fabric in &fabrics {
        md.push_str(&format!("## {fabric}\n\n"));
        for (name, scale) in shown {
            let set: Vec<&Row> = rows
                .iter()
                .filter(|r| r.experiment == *name && r.scale == *scale && r.fabric == *fabric)
                .collect();
            let Some(first) = set.first() else { continue };
            let page = if first.page.is_empty() {
                "no results page".to_owned()
            } else {
                format!("results: [{0}]({0})", first.page)
            };
            let n = count(&set);
            md.push_str(&format!(
                "### {name}\n\n{} of {} pass; {}; {}, {} at {}: `{}`\n\n",
                n[0],
                set.len(),
                match scale {
                    Scale::Full => "full scale".to_owned(),
                    Scale::Quick => "**quick scale only** (no full-scale run recorded)".to_owned(),
                },
                page,
                first.date.get(..10).unwrap_or(&first.date),
                short(&first.commit),
                first.command,
            ));
            md.push_str("| figure | claim | paper | ours | tolerance | verdict | why |\n");
            md.push_str("|---|---|---|---|---|---|---|\n");
            for r in set {
                md.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {} |\n",
                    cell(&r.figure),
                    cell(&r.claim),
                    cell(&r.paper),
                    cell(&r.ours),
                    cell(&r.tolerance),
                    r.verdict,
                    cell(&r.why)
                ));
            }
            md.push('\n');
        }
    }
    (md, totals.join("; "))
}

/// A commit's first ten hex digits.
fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_of_a_run_comes_from_its_settings() {
        assert_eq!(
            scale_of("[repro]\nexperiment = \"fig9\"\nquick = false\n"),
            Some(Scale::Full)
        );
        assert_eq!(
            scale_of("[repro]\nexperiment = \"fig9\"\nquick = true\n"),
            Some(Scale::Quick)
        );
        assert_eq!(
            scale_of("[repro]\nexperiment = \"fig17\"\nquick = false\nscale = \"load=0.3\"\n"),
            None
        );
        assert_eq!(scale_of("[fabric]\nkind = \"shoal\"\n"), None);
    }

    #[test]
    fn the_embedded_index_parses_and_uses_the_verdict_words() {
        let committed = Committed::embedded().expect("the committed index parses");
        for verdict in committed.0.values() {
            assert!(Verdict::parse(verdict).is_some(), "{verdict}");
        }
    }
}
