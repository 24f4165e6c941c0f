//! Every run's row in the results database (shoal-results): where the database is, and the
//! start and end of each run written around it.

use crate::run::Summary;
use anyhow::{Context, Result};
use clap::Args;
use shoal_results::{Db, Filter, NewRun, Outcome, RunId, Status};
use shoal_scenario::{Scenario, TOOL_VERSION};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// The runs of `db` that `filter` selects, for a read-only command: a row that cannot be read
/// is named on stderr and left out, so one bad row does not hide the others.
pub(crate) fn readable_runs(
    db: &Db,
    filter: &Filter,
    command: &str,
) -> Result<Vec<shoal_results::Run>> {
    let (runs, bad) = db.runs_readable(filter)?;
    for why in bad {
        eprintln!("{command}: {}: skipped {why}", db.path().display());
    }
    Ok(runs)
}

/// The file name of the database beside the results folders.
pub(crate) const DB_FILE: &str = "shoal.db";

/// Where runs are recorded.
#[derive(Args, Clone, Default)]
pub(crate) struct DbArgs {
    /// Results database that records every run (SQLite, created if absent; `shoal runs` lists
    /// it). Default: shoal.db beside the results folder, i.e. out/shoal.db for out/<name>.
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
    /// Record nothing in a database; a sweep or comparison then resumes nothing either.
    #[arg(long, conflicts_with = "db")]
    no_db: bool,
}

impl DbArgs {
    /// Whether runs are recorded (and so can be resumed).
    pub(crate) fn enabled(&self) -> bool {
        !self.no_db
    }

    /// The database named with --db, if one was.
    pub(crate) fn file(&self) -> Option<PathBuf> {
        self.db.clone()
    }
}

/// The database runs are recorded in, if any, shared by the threads of a batch.
pub(crate) struct Recorder {
    db: Option<Mutex<Db>>,
    command: String,
    /// The series every row this recorder starts belongs to (`Recorder::in_series`).
    series: Option<String>,
}

/// The default database for results written to `results` (a folder that exists): beside
/// that folder.
fn default_db(results: &Path) -> PathBuf {
    let results = absolute(results);
    results
        .parent()
        .map_or_else(|| results.clone(), Path::to_owned)
        .join(DB_FILE)
}

/// The folder as the row names it: absolute, so that it means the same from anywhere.
pub(crate) fn absolute(folder: &Path) -> PathBuf {
    std::fs::canonicalize(folder)
        .or_else(|_| std::path::absolute(folder))
        .unwrap_or_else(|_| folder.to_owned())
}

impl Recorder {
    /// Opens the database `args` names for results written to `results`, a folder that
    /// exists.
    pub(crate) fn open(args: &DbArgs, results: &Path) -> Result<Recorder> {
        let command = std::env::args().collect::<Vec<_>>().join(" ");
        if args.no_db {
            return Ok(Recorder {
                db: None,
                command,
                series: None,
            });
        }
        let path = args.db.clone().unwrap_or_else(|| default_db(results));
        let db = Db::open(&path).context("the results database (--db FILE, or --no-db)")?;
        Ok(Recorder {
            db: Some(Mutex::new(db)),
            command,
            series: None,
        })
    }

    /// Ties every run recorded from here on to one series: `command` (`run`, `compare`,
    /// `repro`), its results folder and the time it started, which `shoal runs --series`
    /// selects. A resumed sweep or comparison starts a new series; its kept points stay in
    /// the one that ran them.
    pub(crate) fn in_series(mut self, command: &str, results: &Path) -> Result<Recorder> {
        if self.db.is_some() {
            let at = shoal_results::now_utc()?;
            self.series = Some(format!("{command} {} {at}", absolute(results).display()));
        }
        Ok(self)
    }

    /// Refuses, before anything is created, a database the run could not record into (a
    /// folder, a file that is not a results database or has a newer layout, a place that
    /// cannot be written or is full), so that a refused run leaves no results folder behind
    /// to block the next one. An existing database is opened as the run will open it; a new
    /// one is tried as a scratch database in the nearest folder that exists, then removed.
    pub(crate) fn check(args: &DbArgs, results: &Path) -> Result<()> {
        if args.no_db {
            return Ok(());
        }
        let what = "the results database (--db FILE, or --no-db)";
        let path = args.db.clone().unwrap_or_else(|| default_db(results));
        if std::fs::symlink_metadata(&path).is_ok() {
            Db::open(&path).context(what)?;
            return Ok(());
        }
        let path = std::path::absolute(&path).unwrap_or(path);
        let Some(folder) = path.ancestors().skip(1).find(|a| a.exists()) else {
            return Ok(());
        };
        if !folder.is_dir() {
            anyhow::bail!(
                "{}: {} is not a folder: {what}",
                path.display(),
                folder.display()
            );
        }
        let probe = folder.join(format!(".shoal-db-probe-{}.db", std::process::id()));
        let opened = Db::open(&probe);
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let mut p = probe.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
        opened
            .map(drop)
            .map_err(|e| {
                anyhow::anyhow!(
                    "{}: cannot be created in {}: {e}",
                    path.display(),
                    folder.display()
                )
            })
            .context(what)
    }

    /// The database at `path`, for a Slurm task: it records under its submitter's command.
    pub(crate) fn at(path: &Path) -> Result<Recorder> {
        let db = Db::open(path).context("the results database of the Slurm job")?;
        Ok(Recorder {
            db: Some(Mutex::new(db)),
            command: String::new(),
            series: None,
        })
    }

    /// The database's file, when runs are recorded.
    pub(crate) fn db_path(&self) -> Option<PathBuf> {
        self.db.as_ref().map(|db| {
            db.lock()
                .unwrap_or_else(|e| e.into_inner())
                .path()
                .to_owned()
        })
    }

    /// The command line this process records.
    pub(crate) fn command(&self) -> &str {
        &self.command
    }

    /// Records the run of `sc` into `folder` as `pending`: submitted, not started.
    pub(crate) fn submit(
        &self,
        kind: &str,
        sc: &Scenario,
        folder: &Path,
        swept: Option<&str>,
    ) -> Result<RunId> {
        let text = sc.resolved_toml();
        let run = NewRun {
            command: &self.command,
            swept,
            series: self.series.as_deref(),
            ..new_run(kind, sc, &text, folder)
        };
        self.with(|db| db.submit(&run))?
            .context("submitting needs the results database")
    }

    /// Names each pending row's batch job.
    pub(crate) fn set_jobs(&self, jobs: &[(RunId, String)]) -> Result<()> {
        self.with(|db| db.set_jobs(jobs)).map(drop)
    }

    /// Records the rows `ids` failed with `reason` (a run that never started or whose job
    /// ended under it).
    pub(crate) fn fail_all(&self, ids: &[RunId], reason: &str) -> Result<()> {
        self.with(|db| {
            ids.iter()
                .try_for_each(|&id| db.fail(id, 0.0, None, reason))
        })
        .map(drop)
    }

    /// One row, which must exist.
    pub(crate) fn row(&self, id: RunId) -> Result<shoal_results::Run> {
        self.with(|db| db.run(id))?
            .flatten()
            .with_context(|| format!("run {} is not in the results database", id.0))
    }

    /// The rows still pending or running.
    pub(crate) fn unfinished(&self) -> Result<Vec<shoal_results::Run>> {
        let mut rows = Vec::new();
        for status in [Status::Pending, Status::Running] {
            let filter = Filter {
                status: Some(status),
                ..Filter::default()
            };
            rows.extend(self.with(|db| db.runs(&filter))?.unwrap_or_default());
        }
        Ok(rows)
    }

    fn with<T>(&self, f: impl FnOnce(&mut Db) -> shoal_results::Result<T>) -> Result<Option<T>> {
        match &self.db {
            None => Ok(None),
            Some(db) => {
                let mut db = db.lock().unwrap_or_else(|e| e.into_inner());
                Ok(Some(f(&mut db)?))
            }
        }
    }

    /// Runs `f` as a run recorded from start to end: a `running` row first, then `done` with
    /// what `outcome` makes of its result, or `failed` with its error.
    pub(crate) fn record<T>(
        &self,
        run: &NewRun,
        f: impl FnOnce() -> Result<T>,
        outcome: impl FnOnce(&T) -> Outcome,
    ) -> Result<T> {
        self.record_row(run, None, f, outcome)
    }

    /// [`Recorder::record`], or with `pending`, the run of that pending row (submitted to
    /// Slurm), which turns `running` instead of a new row starting.
    fn record_row<T>(
        &self,
        run: &NewRun,
        pending: Option<RunId>,
        f: impl FnOnce() -> Result<T>,
        outcome: impl FnOnce(&T) -> Outcome,
    ) -> Result<T> {
        let command = self.command.as_str();
        let id: Option<RunId> = self.with(|db| match pending {
            Some(id) => db.begin(id).map(|()| id),
            None => db.start(&NewRun {
                command,
                series: self.series.as_deref(),
                ..run.clone()
            }),
        })?;
        let started = Instant::now();
        let result = f();
        let Some(id) = id else {
            return result;
        };
        let wall_s = started.elapsed().as_secs_f64();
        let peak = shoal_fabric::bench::peak_rss_bytes();
        match &result {
            Ok(value) => {
                let outcome = Outcome {
                    wall_s,
                    peak_rss_bytes: peak,
                    ..outcome(value)
                };
                self.with(|db| db.finish(id, &outcome))?;
            }
            Err(e) => {
                self.with(|db| db.fail(id, wall_s, peak, &format!("{e:#}")))?;
            }
        }
        result
    }

    /// Runs `f`, the run of `sc` into `folder`, recorded as a `kind` row with the summary's
    /// metrics; `swept` is the point's setting (`key = value`) in a sweep or comparison.
    pub(crate) fn scenario(
        &self,
        kind: &str,
        sc: &Scenario,
        folder: &Path,
        swept: Option<&str>,
        f: impl FnOnce() -> Result<Summary>,
    ) -> Result<Summary> {
        self.scenario_row(kind, sc, folder, None, swept, f)
    }

    /// [`Recorder::scenario`], the run of the row `pending` when there is one (whose swept
    /// setting and series were recorded at its submission).
    pub(crate) fn scenario_row(
        &self,
        kind: &str,
        sc: &Scenario,
        folder: &Path,
        pending: Option<RunId>,
        swept: Option<&str>,
        f: impl FnOnce() -> Result<Summary>,
    ) -> Result<Summary> {
        let text = sc.resolved_toml();
        let folder = absolute(folder);
        let run = NewRun {
            swept,
            ..new_run(kind, sc, &text, &folder)
        };
        self.record_row(&run, pending, f, |summary| Outcome {
            metrics: serde_json::to_value(summary)
                .map(|json| shoal_results::metrics_of(&json))
                .unwrap_or_default(),
            ..Outcome::default()
        })
    }

    /// The summary of a finished run of exactly `sc` (seed included, by this version and
    /// revision) whose results are complete in `folder`, if the database holds one: the run
    /// need not be done again.
    pub(crate) fn finished_in(&self, sc: &Scenario, folder: &Path) -> Result<Option<Summary>> {
        let text = sc.resolved_toml();
        let Some(folders) = self.with(|db| db.finished_folders(&text, TOOL_VERSION))? else {
            return Ok(None);
        };
        let here = absolute(folder);
        if !folders.contains(&here) || !crate::folder::is_complete(folder) {
            return Ok(None);
        }
        // The folder's scenario must still be the one recorded: a folder rewritten since by
        // another run is not this run's result.
        let written = std::fs::read_to_string(folder.join("scenario.toml")).unwrap_or_default();
        if written != text {
            return Ok(None);
        }
        let path = folder.join("summary.json");
        let json = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let summary = serde_json::from_str(&json)
            .with_context(|| format!("{}: not a run summary", path.display()))?;
        Ok(Some(summary))
    }

    /// A point of a sweep or comparison, when `resuming`: the summary of its finished run in
    /// `path` if the database holds one, else `path` opened for its run (what an earlier run
    /// left there is replaced).
    pub(crate) fn keep_or_open(
        &self,
        sc: &Scenario,
        path: &Path,
        resuming: bool,
        force: bool,
    ) -> Result<Result<Summary, crate::folder::Folder>> {
        if resuming && let Some(summary) = self.finished_in(sc, path)? {
            return Ok(Ok(summary));
        }
        Ok(Err(crate::folder::Folder::open(path, force || resuming)?))
    }
}

/// The row of the run of `sc` (whose resolved text is `text`) into `folder`, as a `kind`.
fn new_run<'a>(kind: &'a str, sc: &'a Scenario, text: &'a str, folder: &'a Path) -> NewRun<'a> {
    NewRun {
        kind,
        name: &sc.name,
        fabric: sc.fabric_name(),
        scenario: text,
        seed: Some(sc.seed),
        folder,
        command: "",
        version: TOOL_VERSION,
        swept: None,
        series: None,
    }
}

/// The line a resumed sweep or comparison prints on stderr.
pub(crate) fn say_resumed(command: &str, dir: &Path, what: &str, total: usize, to_run: usize) {
    eprintln!(
        "shoal {command}: resuming {}: {} of {total} {what} finished before, {to_run} to run",
        dir.display(),
        total - to_run,
    );
}
