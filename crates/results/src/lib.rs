//! The results database: one row per run in an embedded SQLite file, so that runs are
//! remembered across invocations, can be listed and exported, and a sweep started again skips
//! the points that already finished.
//!
//! A row holds the resolved scenario (its text and SHA-256), the seed, the fabric, the program
//! version and source revision, when it started and finished, its wall time and peak memory,
//! its status (`pending` when submitted to Slurm and not started, `running`, `done`, or
//! `failed` with the error), the host and process that ran it (and its batch job) and the path
//! of its results folder; its summary metrics go to a key-value table beside it. Per-flow and per-sample data
//! stay files in that folder.
//!
//! Every change is one `BEGIN IMMEDIATE` transaction (a row started; a row finished together
//! with all its metrics; a row failed), so a process killed at any moment leaves whole rows: a
//! run killed between start and finish stays `running`, which [`Db::finished_folders`] never
//! returns. The file is in WAL mode with a busy timeout, so processes and threads writing at
//! once wait for each other instead of failing or corrupting it. WAL needs a local file system
//! (SQLite's own rule: not NFS).

#![forbid(unsafe_code)]

mod flatten;
mod schema;

pub use flatten::metrics_of;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The source revision the program was built from (see build.rs: the commit `git rev-parse
/// HEAD` named at build time, `SHOAL_REVISION` if the build set it, or "unknown").
pub const REVISION: &str = env!("SHOAL_REVISION");

/// How long a writer waits for another one's transaction before giving up. Runs write a few
/// short transactions each, so a wait this long means something holds the file locked.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

/// What went wrong, naming the database file.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The reason already holds SQLite's message: the error is not chained to it as a
    /// source, so that `{:#}` does not print it again.
    #[error("{path}: {reason}")]
    Sql {
        path: PathBuf,
        reason: String,
        cause: rusqlite::Error,
    },
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
}

pub type Result<T> = std::result::Result<T, Error>;

/// A run's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Submitted to a batch system (Slurm) and not started yet.
    Pending,
    /// Started and not finished: still going, or killed (a killed run never leaves this).
    Running,
    Done,
    Failed,
}

impl Status {
    pub const ALL: [Status; 4] = [
        Status::Pending,
        Status::Running,
        Status::Done,
        Status::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Done => "done",
            Status::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// A metric's value: integers stay exact (counters), the rest are floats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Real(f64),
}

impl Value {
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(i) => i as f64,
            Value::Real(x) => x,
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Int(i) => write!(f, "{i}"),
            Value::Real(x) => write!(f, "{x}"),
        }
    }
}

/// What a run is, recorded when it starts.
#[derive(Clone, Debug)]
pub struct NewRun<'a> {
    /// `run`, `sweep-point`, `compare` or `repro`.
    pub kind: &'a str,
    /// The scenario's name (a repro experiment's name).
    pub name: &'a str,
    /// The fabric (`-` where a row covers several, such as a repro experiment).
    pub fabric: &'a str,
    /// The resolved scenario: the text that repeats the run (for repro, the experiment and its
    /// settings).
    pub scenario: &'a str,
    pub seed: Option<u64>,
    /// The run's results folder.
    pub folder: &'a Path,
    /// The command line that started it.
    pub command: &'a str,
    /// The program's version (`CARGO_PKG_VERSION`).
    pub version: &'a str,
    /// The setting a sweep's or comparison's point swept, as `key = value`.
    pub swept: Option<&'a str>,
    /// What ties the runs of one sweep, comparison or repro together: the command's results
    /// folder and the time it started.
    pub series: Option<&'a str>,
}

/// A claim a repro experiment checked: the paper's value, ours, the tolerance and the
/// verdict. The database's own row, like `shoal_repro::Claim`, so that this crate needs no
/// model crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    pub figure: String,
    pub claim: String,
    pub paper: String,
    pub ours: String,
    pub tolerance: String,
    /// `pass`, `miss`, `paper-inconsistent` or `input-unavailable` (`shoal_repro::Verdict`'s
    /// words); only `pass` passes.
    pub verdict: String,
    /// Why a claim that does not pass does not; empty for a pass.
    pub why: String,
}

impl Claim {
    /// Whether the claim passes: only the verdict `pass` does.
    pub fn pass(&self) -> bool {
        self.verdict == "pass"
    }
}

/// What a finished run leaves besides its files.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcome {
    pub wall_s: f64,
    pub peak_rss_bytes: Option<u64>,
    pub metrics: Vec<(String, Value)>,
    pub claims: Vec<Claim>,
}

/// The id of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct RunId(pub i64);

/// One row of the `runs` table.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub id: RunId,
    pub kind: String,
    pub name: String,
    pub fabric: String,
    pub scenario_sha256: String,
    pub scenario: String,
    pub seed: Option<u64>,
    pub version: String,
    pub revision: String,
    pub command: String,
    pub pid: u32,
    /// UTC, RFC 3339 with milliseconds, from SQLite's clock.
    pub started_at: String,
    pub finished_at: Option<String>,
    pub wall_s: Option<f64>,
    /// The process's peak resident memory when the run ended; with runs side by side in one
    /// process, it covers them all.
    pub peak_rss_bytes: Option<u64>,
    pub status: Status,
    pub error: Option<String>,
    pub folder: PathBuf,
    /// The host the recording process ran on (`pid` is a process there); empty for rows of
    /// layout 1.
    pub host: String,
    /// The batch system's job id (Slurm: `<array job>_<task>`) of a run submitted to one.
    pub job: Option<String>,
    /// The swept setting of a sweep's or comparison's point (`key = value`); none for a single
    /// run and for rows of layouts before 4.
    pub swept: Option<String>,
    /// The series the run belongs to ([`NewRun::series`]).
    pub series: Option<String>,
}

/// Which rows to list: each field set narrows the list.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub fabric: Option<String>,
    pub name: Option<String>,
    pub status: Option<Status>,
    pub kind: Option<String>,
    /// The runs of one sweep, comparison or repro ([`NewRun::series`]).
    pub series: Option<String>,
}

/// The time now, UTC, RFC 3339 with milliseconds: SQLite's clock, as every row's
/// `started_at`, for a record that stands beside the database's rows (the claims index's quick
/// runs). Provenance only: no result depends on it.
pub fn now_utc() -> Result<String> {
    let memory = Path::new(":memory:");
    rusqlite::Connection::open_in_memory()
        .and_then(|conn| {
            conn.query_row("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", [], |r| {
                r.get(0)
            })
        })
        .map_err(|e| sql(memory, "cannot read the clock", e))
}

/// SHA-256 of a scenario text, in hex.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An open results database.
pub struct Db {
    conn: Connection,
    path: PathBuf,
}

impl Db {
    /// Opens (creating it and its folder if need be) the database at `path`.
    pub fn open(path: &Path) -> Result<Db> {
        let invalid = |reason: String| Error::Invalid {
            path: path.to_owned(),
            reason,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| {
                invalid(format!(
                    "cannot create the folder {}: {e}",
                    parent.display()
                ))
            })?;
        }
        if path.is_dir() {
            return Err(invalid("is a directory, not a database file".to_owned()));
        }
        let conn = Connection::open(path).map_err(|e| sql(path, "cannot open", e))?;
        let mut db = Db {
            conn,
            path: path.to_owned(),
        };
        db.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| sql(path, "cannot set the busy timeout", e))?;
        schema::prepare(&mut db.conn, path)?;
        Ok(db)
    }

    /// Opens the database at `path` to read it only (`shoal runs`, `shoal report`): it is never
    /// created, migrated or written, so an archived, read-only or a colleague's database can
    /// be read, and an empty file stays empty. A WAL database whose folder cannot be written
    /// (SQLite cannot make its shared-memory file there) is read as immutable: what the last
    /// writer checkpointed, which is all of it once every writer has closed.
    pub fn open_read(path: &Path) -> Result<Db> {
        let invalid = |reason: &str| Error::Invalid {
            path: path.to_owned(),
            reason: reason.to_owned(),
        };
        let meta = std::fs::metadata(path).map_err(|e| invalid(&format!("cannot read it: {e}")))?;
        if meta.is_dir() {
            return Err(invalid("is a directory, not a database file"));
        }
        if meta.len() == 0 {
            return Err(invalid(
                "is an empty file, not a results database (runs create one)",
            ));
        }
        let open = |immutable: bool| -> Result<Db> {
            use rusqlite::OpenFlags;
            let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            let uri = format!(
                "file:{}{}",
                uri_path(path),
                if immutable { "?immutable=1" } else { "" }
            );
            let conn = Connection::open_with_flags(&uri, flags)
                .map_err(|e| sql(path, "cannot open", e))?;
            conn.busy_timeout(BUSY_TIMEOUT)
                .map_err(|e| sql(path, "cannot set the busy timeout", e))?;
            schema::check_layout(&conn, path)?;
            Ok(Db {
                conn,
                path: path.to_owned(),
            })
        };
        open(false).or_else(|e| match e {
            Error::Sql { .. } => open(true).map_err(|_| e),
            e => Err(e),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a run that starts now, as `running`.
    pub fn start(&mut self, run: &NewRun) -> Result<RunId> {
        self.insert(run, Status::Running, "cannot record the run's start")
    }

    /// Records a run handed to a batch system, as `pending` (its start time the submission's);
    /// [`Db::set_jobs`] names its job, [`Db::begin`] starts it where it runs.
    pub fn submit(&mut self, run: &NewRun) -> Result<RunId> {
        self.insert(run, Status::Pending, "cannot record the submitted run")
    }

    /// Names the batch job of pending runs, each its own, in one transaction.
    pub fn set_jobs(&mut self, jobs: &[(RunId, String)]) -> Result<()> {
        self.write("cannot record the runs' jobs", |tx| {
            let mut q = tx.prepare("UPDATE runs SET job = ?2 WHERE id = ?1")?;
            for (id, job) in jobs {
                q.execute(params![id.0, job])?;
            }
            Ok(())
        })
    }

    /// A pending run starts now, in this process on this host.
    pub fn begin(&mut self, id: RunId) -> Result<()> {
        self.write("cannot record the run's start", |tx| {
            let changed = tx.execute(
                "UPDATE runs SET status = 'running', pid = ?2, host = ?3,
                    started_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
                 WHERE id = ?1 AND status = 'pending'",
                params![id.0, std::process::id(), this_host()],
            )?;
            if changed == 1 {
                Ok(())
            } else {
                Err(rusqlite::Error::QueryReturnedNoRows)
            }
        })
        .map_err(|e| match e {
            Error::Sql {
                path,
                cause: rusqlite::Error::QueryReturnedNoRows,
                ..
            } => Error::Invalid {
                path,
                reason: format!("run {} is not pending: it cannot start", id.0),
            },
            e => e,
        })
    }

    fn insert(&mut self, run: &NewRun, status: Status, what: &str) -> Result<RunId> {
        let folder = run.folder.to_string_lossy();
        let hash = sha256_hex(run.scenario);
        let seed = run.seed.map(|s| s as i64);
        let host = this_host();
        self.write(what, |tx| {
            tx.execute(
                "INSERT INTO runs (kind, name, fabric, scenario_sha256, scenario, seed, version,
                    revision, command, pid, started_at, status, folder, host, swept, series)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?11, ?12, ?13, ?14, ?15)",
                params![
                    run.kind,
                    run.name,
                    run.fabric,
                    hash,
                    run.scenario,
                    seed,
                    run.version,
                    REVISION,
                    run.command,
                    std::process::id(),
                    status.as_str(),
                    folder,
                    host,
                    run.swept,
                    run.series,
                ],
            )?;
            Ok(RunId(tx.last_insert_rowid()))
        })
    }

    /// Marks a run done and records its metrics and claims, in one transaction.
    pub fn finish(&mut self, id: RunId, outcome: &Outcome) -> Result<()> {
        self.write("cannot record the run's end", |tx| {
            let mut metric =
                tx.prepare("INSERT INTO metrics (run_id, key, value) VALUES (?1, ?2, ?3)")?;
            for (key, value) in &outcome.metrics {
                match value {
                    Value::Int(i) => metric.execute(params![id.0, key, i])?,
                    Value::Real(x) => metric.execute(params![id.0, key, x])?,
                };
            }
            let mut claim = tx.prepare(
                "INSERT INTO claims
                 (run_id, position, figure, claim, paper, ours, tolerance, pass, verdict, why)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for (i, c) in outcome.claims.iter().enumerate() {
                claim.execute(params![
                    id.0,
                    i as i64,
                    c.figure,
                    c.claim,
                    c.paper,
                    c.ours,
                    c.tolerance,
                    c.pass(),
                    c.verdict,
                    c.why
                ])?;
            }
            end(
                tx,
                id,
                Status::Done,
                outcome.wall_s,
                outcome.peak_rss_bytes,
                None,
            )
        })
    }

    /// Marks a run failed with its error (a pending one too: its job ended before it started).
    pub fn fail(
        &mut self,
        id: RunId,
        wall_s: f64,
        peak_rss_bytes: Option<u64>,
        error: &str,
    ) -> Result<()> {
        self.write("cannot record the run's failure", |tx| {
            end(tx, id, Status::Failed, wall_s, peak_rss_bytes, Some(error))
        })
    }

    /// The folders of the runs of exactly this resolved scenario (and seed: the text holds
    /// it) that finished, by this version and revision of the program, newest first. A run
    /// left `running` by a killed process is not among them.
    pub fn finished_folders(&self, scenario: &str, version: &str) -> Result<Vec<PathBuf>> {
        let hash = sha256_hex(scenario);
        let read = || -> rusqlite::Result<Vec<PathBuf>> {
            let mut q = self.conn.prepare(
                "SELECT folder FROM runs WHERE scenario_sha256 = ?1 AND scenario = ?2
                    AND version = ?3 AND revision = ?4 AND status = 'done' ORDER BY id DESC",
            )?;
            let rows = q.query_map(params![hash, scenario, version, REVISION], |r| {
                r.get::<_, String>(0)
            })?;
            rows.map(|r| r.map(PathBuf::from)).collect()
        };
        read().map_err(|e| sql(&self.path, "cannot look up finished runs", e))
    }

    /// The rows that `filter` selects, oldest first.
    pub fn runs(&self, filter: &Filter) -> Result<Vec<Run>> {
        let (runs, bad) = self.runs_readable(filter)?;
        match bad.first() {
            None => Ok(runs),
            Some(why) => Err(Error::Invalid {
                path: self.path.clone(),
                reason: format!("cannot list the runs: {why}"),
            }),
        }
    }

    /// The runs `filter` selects that can be read, in id order, and for each row that cannot
    /// (a value of the wrong type, written by hand or by another tool) its id and why: a
    /// read-only command shows the rest and names these.
    pub fn runs_readable(&self, filter: &Filter) -> Result<(Vec<Run>, Vec<String>)> {
        let read = || -> rusqlite::Result<Vec<std::result::Result<Run, String>>> {
            let mut q = self.conn.prepare(&format!(
                "SELECT {} FROM runs
                 WHERE (?1 IS NULL OR fabric = ?1) AND (?2 IS NULL OR name = ?2)
                   AND (?3 IS NULL OR status = ?3) AND (?4 IS NULL OR kind = ?4)
                   AND (?5 IS NULL OR series = ?5)
                 ORDER BY id",
                schema::RUN_COLUMNS
            ))?;
            let rows = q.query_map(
                params![
                    filter.fabric,
                    filter.name,
                    filter.status.map(Status::as_str),
                    filter.kind,
                    filter.series
                ],
                |r| {
                    Ok(schema::run_of_row(r).map_err(|e| {
                        let id = r
                            .get::<_, i64>(0)
                            .map_or_else(|_| "?".to_owned(), |id| id.to_string());
                        format!("run {id}: {e}")
                    }))
                },
            )?;
            rows.collect()
        };
        let rows = read().map_err(|e| sql(&self.path, "cannot list the runs", e))?;
        let mut runs = Vec::with_capacity(rows.len());
        let mut bad = Vec::new();
        for row in rows {
            match row {
                Ok(run) => runs.push(run),
                Err(why) => bad.push(why),
            }
        }
        Ok((runs, bad))
    }

    /// A run's metrics, in key order.
    pub fn metrics(&self, id: RunId) -> Result<Vec<(String, Value)>> {
        let read = || -> rusqlite::Result<Vec<(String, Value)>> {
            let mut q = self
                .conn
                .prepare("SELECT key, value FROM metrics WHERE run_id = ?1 ORDER BY key")?;
            let rows = q.query_map(params![id.0], |r| {
                let value = match r.get_ref(1)? {
                    rusqlite::types::ValueRef::Integer(i) => Value::Int(i),
                    other => Value::Real(other.as_f64()?),
                };
                Ok((r.get(0)?, value))
            })?;
            rows.collect()
        };
        read().map_err(|e| sql(&self.path, "cannot read the metrics", e))
    }

    /// A run's claims, in the order they were checked.
    pub fn claims(&self, id: RunId) -> Result<Vec<Claim>> {
        let read = || -> rusqlite::Result<Vec<Claim>> {
            let mut q = self.conn.prepare(
                "SELECT figure, claim, paper, ours, tolerance, verdict, why FROM claims
                 WHERE run_id = ?1 ORDER BY position",
            )?;
            let rows = q.query_map(params![id.0], |r| {
                Ok(Claim {
                    figure: r.get(0)?,
                    claim: r.get(1)?,
                    paper: r.get(2)?,
                    ours: r.get(3)?,
                    tolerance: r.get(4)?,
                    verdict: r.get(5)?,
                    why: r.get(6)?,
                })
            })?;
            rows.collect()
        };
        read().map_err(|e| sql(&self.path, "cannot read the claims", e))
    }

    /// One row by id.
    pub fn run(&self, id: RunId) -> Result<Option<Run>> {
        self.conn
            .query_row(
                &format!("SELECT {} FROM runs WHERE id = ?1", schema::RUN_COLUMNS),
                params![id.0],
                schema::run_of_row,
            )
            .optional()
            .map_err(|e| sql(&self.path, "cannot read the run", e))
    }

    /// Runs `f` in one `BEGIN IMMEDIATE` transaction: the write lock is taken at the start, so
    /// two writers never deadlock upgrading a read lock, and the busy timeout covers the wait.
    fn write<T>(
        &mut self,
        what: &str,
        f: impl FnOnce(&rusqlite::Transaction) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let path = self.path.clone();
        let run = || -> rusqlite::Result<T> {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        };
        run().map_err(|e| sql(&path, what, e))
    }
}

/// Sets a run's end: status, time, wall time, memory, error. A row that is neither `running`
/// nor `pending` is left alone and reported: a run ends once.
fn end(
    tx: &rusqlite::Transaction,
    id: RunId,
    status: Status,
    wall_s: f64,
    peak_rss_bytes: Option<u64>,
    error: Option<&str>,
) -> rusqlite::Result<()> {
    let changed = tx.execute(
        "UPDATE runs SET status = ?2, finished_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'),
            wall_s = ?3, peak_rss_bytes = ?4, error = ?5
         WHERE id = ?1 AND status IN ('running', 'pending')",
        params![
            id.0,
            status.as_str(),
            wall_s,
            peak_rss_bytes.map(|b| b as i64),
            error
        ],
    )?;
    if changed == 1 {
        Ok(())
    } else {
        Err(rusqlite::Error::QueryReturnedNoRows)
    }
}

/// This machine's name (Linux's, from /proc; empty where there is none), so that a row's pid
/// is only ever looked for on the host that recorded it.
pub fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

/// `path` as the path of an SQLite `file:` URI: the characters a URI gives a meaning to are
/// percent-encoded.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for c in path.to_string_lossy().chars() {
        match c {
            '%' | '?' | '#' => out.push_str(&format!("%{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn sql(path: &Path, what: &str, source: rusqlite::Error) -> Error {
    let reason = match &source {
        rusqlite::Error::QueryReturnedNoRows => format!("{what}: no running run with this id"),
        e => format!("{what}: {e}"),
    };
    Error::Sql {
        path: path.to_owned(),
        reason,
        cause: source,
    }
}
