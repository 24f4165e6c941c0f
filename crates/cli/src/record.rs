//! Every run's row in the results database (shoal-results): where the database is, and the
//! start and end of each run written around it.

use crate::run::Summary;
use anyhow::{Context, Result};
use clap::Args;
use shoal_results::{Db, NewRun, Outcome, RunId};
use shoal_scenario::{Scenario, TOOL_VERSION};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

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
}

/// The database runs are recorded in, if any, shared by the threads of a batch.
pub(crate) struct Recorder {
    db: Option<Mutex<Db>>,
    command: String,
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
fn absolute(folder: &Path) -> PathBuf {
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
            return Ok(Recorder { db: None, command });
        }
        let path = args.db.clone().unwrap_or_else(|| default_db(results));
        let db = Db::open(&path).context("the results database (--db FILE, or --no-db)")?;
        Ok(Recorder {
            db: Some(Mutex::new(db)),
            command,
        })
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
        let command = self.command.as_str();
        let id: Option<RunId> = self.with(|db| {
            db.start(&NewRun {
                command,
                ..run.clone()
            })
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
    /// metrics.
    pub(crate) fn scenario(
        &self,
        kind: &str,
        sc: &Scenario,
        folder: &Path,
        f: impl FnOnce() -> Result<Summary>,
    ) -> Result<Summary> {
        let text = sc.resolved_toml();
        let folder = absolute(folder);
        let run = NewRun {
            kind,
            name: &sc.name,
            fabric: sc.fabric_name(),
            scenario: &text,
            seed: Some(sc.seed),
            folder: &folder,
            command: "",
            version: TOOL_VERSION,
        };
        self.record(&run, f, |summary| Outcome {
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

/// The line a resumed sweep or comparison prints on stderr.
pub(crate) fn say_resumed(command: &str, dir: &Path, what: &str, total: usize, to_run: usize) {
    eprintln!(
        "shoal {command}: resuming {}: {} of {total} {what} finished before, {to_run} to run",
        dir.display(),
        total - to_run,
    );
}
