//! The database's tables and the settings every connection takes.

use crate::{Error, Result, Run, RunId, Status, sql};
use rusqlite::{Connection, TransactionBehavior};
use std::path::{Path, PathBuf};

/// The layout's version, in SQLite's `user_version`: a file with a newer one was written by a
/// newer shoal and is not touched; an older one is brought up to date (`migrate`).
const LAYOUT: i64 = 4;

/// The `runs` table under the name `{name}`. Layout 2 added `pending` (a run submitted to a
/// batch system, not started), `host` and `job` (the batch system's job id); layout 4 `swept`
/// (the swept setting of a sweep's or comparison's point, `key = value`) and `series` (what
/// ties the runs one sweep, comparison or repro started together).
const RUNS: &str = "
CREATE TABLE {name} (
    id              INTEGER PRIMARY KEY,
    kind            TEXT NOT NULL,
    name            TEXT NOT NULL,
    fabric          TEXT NOT NULL,
    scenario_sha256 TEXT NOT NULL,
    scenario        TEXT NOT NULL,
    seed            INTEGER,
    version         TEXT NOT NULL,
    revision        TEXT NOT NULL,
    command         TEXT NOT NULL,
    pid             INTEGER NOT NULL,
    started_at      TEXT NOT NULL,
    finished_at     TEXT,
    wall_s          REAL,
    peak_rss_bytes  INTEGER,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'failed')),
    error           TEXT,
    folder          TEXT NOT NULL,
    host            TEXT NOT NULL DEFAULT '',
    job             TEXT,
    swept           TEXT,
    series          TEXT
);
";

const INDEX: &str = "CREATE INDEX runs_by_scenario ON runs (scenario_sha256, status);";

const OTHER_TABLES: &str = "
CREATE TABLE metrics (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    -- No declared type: SQLite keeps integers and floats as written (NUMERIC would turn 2.0
    -- into 2).
    value  NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE TABLE claims (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    figure    TEXT NOT NULL,
    claim     TEXT NOT NULL,
    paper     TEXT NOT NULL,
    ours      TEXT NOT NULL,
    tolerance TEXT NOT NULL,
    pass      INTEGER NOT NULL CHECK (pass IN (0, 1)),
    verdict   TEXT NOT NULL DEFAULT 'miss',
    why       TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
";

/// Layout 2 to 3: a claim's verdict (pass, miss, paper-inconsistent, input-unavailable) and
/// why it does not pass. Rows of layout 2 knew only pass or miss, and kept any reason in the
/// claim's text.
const MIGRATE_FROM_2: &str = "
ALTER TABLE claims ADD COLUMN verdict TEXT NOT NULL DEFAULT 'miss';
ALTER TABLE claims ADD COLUMN why TEXT NOT NULL DEFAULT '';
UPDATE claims SET verdict = CASE pass WHEN 1 THEN 'pass' ELSE 'miss' END;
";

/// Layout 3 to 4: the swept setting of a point and the series its runs belong to; rows of
/// earlier layouts have neither.
const MIGRATE_FROM_3: &str = "
ALTER TABLE runs ADD COLUMN swept TEXT;
ALTER TABLE runs ADD COLUMN series TEXT;
";

/// Layout 1's columns, which layout 2 keeps.
const LAYOUT_1_COLUMNS: &str = "id, kind, name, fabric, scenario_sha256, scenario, seed, \
    version, revision, command, pid, started_at, finished_at, wall_s, peak_rss_bytes, status, \
    error, folder";

/// The columns `run_of_row` reads, in its order.
pub(crate) const RUN_COLUMNS: &str = "id, kind, name, fabric, scenario_sha256, scenario, seed, \
    version, revision, command, pid, started_at, finished_at, wall_s, peak_rss_bytes, status, \
    error, folder, host, job, swept, series";

fn runs_table(name: &str) -> String {
    RUNS.replace("{name}", name)
}

/// Layout 1 to 2: SQLite cannot change a CHECK constraint in place, so the table is rebuilt
/// (its rows copied with an empty host and no job) and renamed, the procedure SQLite's
/// documentation gives; foreign keys are off meanwhile, so that dropping the old table deletes
/// no metric.
fn migrate_from_1(tx: &rusqlite::Transaction) -> rusqlite::Result<()> {
    tx.execute_batch(&format!(
        "{new}
         INSERT INTO runs_new ({LAYOUT_1_COLUMNS}) SELECT {LAYOUT_1_COLUMNS} FROM runs;
         DROP TABLE runs;
         ALTER TABLE runs_new RENAME TO runs;
         {INDEX}",
        new = runs_table("runs_new")
    ))
}

pub(crate) fn run_of_row(r: &rusqlite::Row) -> rusqlite::Result<Run> {
    let status: String = r.get(15)?;
    Ok(Run {
        id: RunId(r.get(0)?),
        kind: r.get(1)?,
        name: r.get(2)?,
        fabric: r.get(3)?,
        scenario_sha256: r.get(4)?,
        scenario: r.get(5)?,
        seed: r.get::<_, Option<i64>>(6)?.map(|s| s as u64),
        version: r.get(7)?,
        revision: r.get(8)?,
        command: r.get(9)?,
        pid: r.get(10)?,
        started_at: r.get(11)?,
        finished_at: r.get(12)?,
        wall_s: r.get(13)?,
        peak_rss_bytes: r.get::<_, Option<i64>>(14)?.map(|b| b as u64),
        // The CHECK constraint admits only the four.
        status: Status::parse(&status).unwrap_or(Status::Failed),
        error: r.get(16)?,
        folder: PathBuf::from(r.get::<_, String>(17)?),
        host: r.get(18)?,
        job: r.get(19)?,
        swept: r.get(20)?,
        series: r.get(21)?,
    })
}

/// Sets WAL mode and returns the mode SQLite reports. Switching needs the file to itself for a
/// moment, and SQLite answers "busy" at once, without the connection's busy handler, when
/// another connection is switching or recovering the log at that instant (seen when processes
/// and threads open a new file together); so a busy answer is retried here, up to the same
/// timeout the busy handler has.
fn switch_to_wal(conn: &Connection) -> rusqlite::Result<String> {
    const PAUSE: std::time::Duration = std::time::Duration::from_millis(5);
    let mut tries = crate::BUSY_TIMEOUT.as_millis() / PAUSE.as_millis();
    loop {
        tries = tries.saturating_sub(1);
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)) {
            Err(rusqlite::Error::SqliteFailure(f, _))
                if matches!(
                    f.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && tries > 0 =>
            {
                std::thread::sleep(PAUSE);
            }
            answer => return answer,
        }
    }
}

/// WAL (readers and one writer at a time across processes), foreign keys, and the tables
/// when the file is new.
/// Checks, without writing, that a connection opened read-only holds a database of this
/// shoal's layout.
pub(crate) fn check_layout(conn: &Connection, path: &Path) -> Result<()> {
    let invalid = |reason: String| Error::Invalid {
        path: path.to_owned(),
        reason,
    };
    let layout: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| match e {
            rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase => {
                invalid("is not a SQLite database (not a shoal results database)".to_owned())
            }
            e => sql(path, "cannot read the layout version", e),
        })?;
    match layout {
        LAYOUT => Ok(()),
        0 => Err(invalid(
            "holds no shoal results (no runs table): not a results database".to_owned(),
        )),
        other if other < LAYOUT => Err(invalid(format!(
            "has layout {other}, written by an older shoal; a command that records a run \
             brings it up to date (on a copy, if this one must stay as it is)"
        ))),
        other => Err(invalid(format!(
            "has layout {other}, newer than this shoal's ({LAYOUT}): use a newer shoal"
        ))),
    }
}

pub(crate) fn prepare(conn: &mut Connection, path: &Path) -> Result<()> {
    let mode = switch_to_wal(conn).map_err(|e| match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::NotADatabase => {
            Error::Invalid {
                path: path.to_owned(),
                reason: "is not a SQLite database (not a shoal results database)".to_owned(),
            }
        }
        e => sql(path, "cannot switch to WAL mode", e),
    })?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Error::Invalid {
            path: path.to_owned(),
            reason: format!(
                "SQLite refused WAL mode (journal mode {mode}): concurrent writers need it"
            ),
        });
    }
    // With WAL, NORMAL keeps every transaction atomic; only the last ones may be lost if the
    // machine (not the process) stops. Foreign keys go on once the layout is current.
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = OFF;")
        .map_err(|e| sql(path, "cannot set the connection's pragmas", e))?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(|e| sql(path, "cannot lock the database", e))?;
    let layout: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| sql(path, "cannot read the layout version", e))?;
    match layout {
        0 => {
            let tables: i64 = tx
                .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(|e| sql(path, "cannot read the tables", e))?;
            if tables > 0 {
                return Err(Error::Invalid {
                    path: path.to_owned(),
                    reason: "is a SQLite database of something else (it has tables, but not \
                             shoal's): choose another --db FILE"
                        .to_owned(),
                });
            }
            tx.execute_batch(&format!("{}{INDEX}{OTHER_TABLES}", runs_table("runs")))
                .and_then(|()| tx.pragma_update(None, "user_version", LAYOUT))
                .map_err(|e| sql(path, "cannot create the tables", e))?;
        }
        // The rebuilt table has the current columns, `swept` and `series` among them.
        1 => migrate_from_1(&tx)
            .and_then(|()| tx.execute_batch(MIGRATE_FROM_2))
            .and_then(|()| tx.pragma_update(None, "user_version", LAYOUT))
            .map_err(|e| sql(path, "cannot bring layout 1 up to date", e))?,
        2 => tx
            .execute_batch(MIGRATE_FROM_2)
            .and_then(|()| tx.execute_batch(MIGRATE_FROM_3))
            .and_then(|()| tx.pragma_update(None, "user_version", LAYOUT))
            .map_err(|e| sql(path, "cannot bring layout 2 up to date", e))?,
        3 => tx
            .execute_batch(MIGRATE_FROM_3)
            .and_then(|()| tx.pragma_update(None, "user_version", LAYOUT))
            .map_err(|e| sql(path, "cannot bring layout 3 up to date", e))?,
        LAYOUT => {}
        other => {
            return Err(Error::Invalid {
                path: path.to_owned(),
                reason: format!(
                    "has layout {other}, newer than this shoal's ({LAYOUT}): use a newer shoal \
                     or another --db FILE"
                ),
            });
        }
    }
    tx.commit()
        .map_err(|e| sql(path, "cannot create the tables", e))?;
    conn.execute_batch("PRAGMA foreign_keys = ON;")
        .map_err(|e| sql(path, "cannot turn foreign keys on", e))
}
