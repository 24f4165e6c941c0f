//! The results database: rows, metrics, crashes and concurrent writers.

use shoal_results::{Claim, Db, Filter, NewRun, Outcome, REVISION, RunId, Status, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("shoal-results-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn new_run<'a>(scenario: &'a str, folder: &'a Path) -> NewRun<'a> {
    NewRun {
        kind: "run",
        name: "tiny",
        fabric: "shoal",
        scenario,
        seed: Some(5),
        folder,
        command: "shoal run tiny.toml",
        version: "0.1.0",
        swept: None,
        series: None,
    }
}

#[test]
fn the_points_of_a_series_are_listed_together_with_their_swept_values() {
    let dir = scratch("series");
    let mut db = Db::open(&dir.join("shoal.db")).expect("opens");
    let mut ids = Vec::new();
    for (load, series) in [("0.2", "a"), ("0.5", "a"), ("0.5", "b")] {
        let swept = format!("workload.load = {load}");
        let run = NewRun {
            swept: Some(&swept),
            series: Some(series),
            ..new_run("s", &dir)
        };
        ids.push(db.start(&run).expect("start"));
    }
    let single = db.start(&new_run("single", &dir)).expect("start");
    let a = db
        .runs(&Filter {
            series: Some("a".to_owned()),
            ..Filter::default()
        })
        .expect("list");
    let swept: Vec<Option<&str>> = a.iter().map(|r| r.swept.as_deref()).collect();
    assert_eq!(
        swept,
        [Some("workload.load = 0.2"), Some("workload.load = 0.5")]
    );
    assert_eq!(a.iter().map(|r| r.id).collect::<Vec<_>>(), ids[..2]);
    let row = db.run(single).expect("read").expect("row");
    assert_eq!((row.swept, row.series), (None, None));
}

#[test]
fn a_finished_run_keeps_its_provenance_and_metrics() {
    let dir = scratch("roundtrip");
    let mut db = Db::open(&dir.join("sub/shoal.db")).expect("opens, creating its folder");
    let folder = dir.join("out/tiny");
    let id = db
        .start(&new_run("[scenario]\nseed = 5\n", &folder))
        .expect("start");
    let running = db.run(id).expect("read").expect("the row");
    assert_eq!(running.status, Status::Running);
    assert_eq!(running.finished_at, None);
    // SHA-256 of the text, as `sha256sum` prints it.
    assert_eq!(running.scenario_sha256.len(), 64);
    assert_eq!(running.revision, REVISION);
    assert_eq!(running.pid, std::process::id());
    assert!(running.started_at.ends_with('Z'), "{}", running.started_at);
    let metrics = vec![
        ("counters.events".to_owned(), Value::Int(i64::MAX)),
        ("short_fct_us.p99".to_owned(), Value::Real(2.0)),
    ];
    let claims = vec![Claim {
        figure: "Fig. 15".into(),
        claim: "p99 FCT".into(),
        paper: "10 us".into(),
        ours: "11 us".into(),
        tolerance: "±20%".into(),
        verdict: "paper-inconsistent".into(),
        why: "the paper's inputs give 9 us (test: t)".into(),
    }];
    let outcome = Outcome {
        wall_s: 1.5,
        peak_rss_bytes: Some(4096),
        metrics: metrics.clone(),
        claims: claims.clone(),
    };
    db.finish(id, &outcome).expect("finish");
    let done = db.run(id).expect("read").expect("the row");
    assert_eq!(done.status, Status::Done);
    assert_eq!(done.wall_s, Some(1.5));
    assert_eq!(done.peak_rss_bytes, Some(4096));
    assert!(done.finished_at.is_some());
    // Integers stay exact and a whole float stays a float.
    assert_eq!(db.metrics(id).expect("metrics"), metrics);
    assert_eq!(db.claims(id).expect("claims"), claims);
    // A run ends once.
    let again = db.fail(id, 1.0, None, "late").expect_err("already done");
    assert!(again.to_string().contains("no running run"), "{again}");
}

#[test]
fn only_finished_runs_of_the_identical_scenario_and_version_are_found() {
    let dir = scratch("finished");
    let mut db = Db::open(&dir.join("shoal.db")).expect("open");
    let text = "[scenario]\nseed = 5\n";
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    let first = db.start(&new_run(text, &a)).expect("start");
    db.finish(first, &Outcome::default()).expect("finish");
    let second = db.start(&new_run(text, &b)).expect("start");
    db.finish(second, &Outcome::default()).expect("finish");
    let failed = db.start(&new_run(text, &c)).expect("start");
    db.fail(failed, 0.1, None, "boom").expect("fail");
    let _running = db.start(&new_run(text, &c)).expect("start");
    assert_eq!(
        db.finished_folders(text, "0.1.0").expect("look up"),
        vec![b.clone(), a.clone()],
        "newest first, neither the failed nor the running one"
    );
    assert!(
        db.finished_folders(text, "0.2.0")
            .expect("look up")
            .is_empty()
    );
    let other_seed = "[scenario]\nseed = 6\n";
    assert!(
        db.finished_folders(other_seed, "0.1.0")
            .expect("look up")
            .is_empty()
    );
    let row = db.run(failed).expect("read").expect("row");
    assert_eq!(
        (row.status, row.error.as_deref()),
        (Status::Failed, Some("boom"))
    );
}

#[test]
fn filters_narrow_the_list() {
    let dir = scratch("filters");
    let mut db = Db::open(&dir.join("shoal.db")).expect("open");
    for (name, fabric) in [("a", "shoal"), ("b", "dctcp"), ("c", "shoal")] {
        let folder = dir.join(name);
        let run = NewRun {
            name,
            fabric,
            ..new_run(name, &folder)
        };
        let id = db.start(&run).expect("start");
        if name != "c" {
            db.finish(id, &Outcome::default()).expect("finish");
        }
    }
    let names = |f: Filter| -> Vec<String> {
        db.runs(&f)
            .expect("list")
            .into_iter()
            .map(|r| r.name)
            .collect()
    };
    assert_eq!(names(Filter::default()), ["a", "b", "c"]);
    let shoal = Filter {
        fabric: Some("shoal".into()),
        ..Filter::default()
    };
    assert_eq!(names(shoal.clone()), ["a", "c"]);
    let done_shoal = Filter {
        status: Some(Status::Done),
        ..shoal
    };
    assert_eq!(names(done_shoal), ["a"]);
    let by_name = Filter {
        name: Some("b".into()),
        ..Filter::default()
    };
    assert_eq!(names(by_name), ["b"]);
}

#[test]
fn files_that_are_not_our_database_are_refused_by_name() {
    let dir = scratch("refused");
    let text = dir.join("notes.txt");
    std::fs::write(
        &text,
        "not a database, but long enough to be read as a header..........\n",
    )
    .expect("write");
    let e = Db::open(&text).err().expect("refused").to_string();
    assert!(
        e.contains("notes.txt") && e.contains("not a SQLite database"),
        "{e}"
    );
    let e = Db::open(&dir).err().expect("refused").to_string();
    assert!(e.contains("is a directory"), "{e}");
    // Someone else's SQLite file.
    let other = dir.join("other.db");
    let conn = rusqlite::Connection::open(&other).expect("open");
    conn.execute_batch("CREATE TABLE t (x)").expect("create");
    drop(conn);
    let e = Db::open(&other).err().expect("refused").to_string();
    assert!(e.contains("not shoal's"), "{e}");
    // A layout from the future.
    let newer = dir.join("newer.db");
    drop(Db::open(&newer).expect("create"));
    let conn = rusqlite::Connection::open(&newer).expect("open");
    conn.pragma_update(None, "user_version", 99).expect("set");
    drop(conn);
    let e = Db::open(&newer).err().expect("refused").to_string();
    assert!(e.contains("layout 99"), "{e}");
}

/// What the child processes of the tests below do, chosen by environment variables: write
/// `SHOAL_RESULTS_ROWS` finished runs, or start one and abort before finishing it. Not a test
/// of its own: the tests run it through their own executable.
#[test]
#[ignore = "run as a child process by the tests below"]
fn child() {
    let Ok(db_path) = std::env::var("SHOAL_RESULTS_DB") else {
        return;
    };
    let tag = std::env::var("SHOAL_RESULTS_TAG").expect("tag");
    let mut db = Db::open(Path::new(&db_path)).expect("child opens");
    if std::env::var("SHOAL_RESULTS_ABORT").is_ok() {
        let folder = PathBuf::from(&tag);
        db.start(&new_run("crashing scenario", &folder))
            .expect("start");
        // Killed between start and finish, with no chance to clean up.
        std::process::abort();
    }
    let rows: usize = std::env::var("SHOAL_RESULTS_ROWS")
        .expect("rows")
        .parse()
        .expect("a number");
    for i in 0..rows {
        let scenario = format!("{tag} {i}");
        let folder = PathBuf::from(&scenario);
        let id = db.start(&new_run(&scenario, &folder)).expect("start");
        let metrics: Vec<(String, Value)> = (0..20)
            .map(|k| (format!("m{k:02}"), Value::Int((i * 100 + k) as i64)))
            .collect();
        let outcome = Outcome {
            metrics,
            ..Outcome::default()
        };
        db.finish(id, &outcome).expect("finish");
    }
}

/// Runs `child` in another process of this test executable.
fn spawn_child(db: &Path, tag: &str, env: &[(&str, &str)]) -> std::process::Child {
    let mut cmd = Command::new(std::env::current_exe().expect("test executable"));
    cmd.args([
        "child",
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("SHOAL_RESULTS_DB", db)
    .env("SHOAL_RESULTS_TAG", tag)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().expect("child starts")
}

#[test]
fn processes_and_threads_writing_at_once_lose_and_corrupt_nothing() {
    let dir = scratch("concurrent");
    let path = dir.join("shoal.db");
    const ROWS: usize = 60;
    let rows = ROWS.to_string();
    let children: Vec<_> = ["p1", "p2"]
        .iter()
        .map(|tag| spawn_child(&path, tag, &[("SHOAL_RESULTS_ROWS", &rows)]))
        .collect();
    // Threads of this process, each with its own connection, beside the two processes.
    std::thread::scope(|s| {
        for t in 0..2 {
            let path = &path;
            s.spawn(move || {
                let mut db = Db::open(path).expect("open");
                for i in 0..ROWS {
                    let scenario = format!("t{t} {i}");
                    let folder = PathBuf::from(&scenario);
                    let id = db.start(&new_run(&scenario, &folder)).expect("start");
                    let metrics = vec![("x".to_owned(), Value::Real(i as f64 + 0.5))];
                    let outcome = Outcome {
                        metrics,
                        ..Outcome::default()
                    };
                    db.finish(id, &outcome).expect("finish");
                }
            });
        }
    });
    for mut c in children {
        assert!(c.wait().expect("child ends").success(), "a writer failed");
    }
    let db = Db::open(&path).expect("open");
    let runs = db.runs(&Filter::default()).expect("list");
    assert_eq!(runs.len(), 4 * ROWS);
    assert!(runs.iter().all(|r| r.status == Status::Done));
    for tag in ["p1", "p2", "t0", "t1"] {
        for i in 0..ROWS {
            let scenario = format!("{tag} {i}");
            let found: Vec<&shoal_results::Run> =
                runs.iter().filter(|r| r.scenario == scenario).collect();
            assert_eq!(found.len(), 1, "{scenario}");
            let metrics = db.metrics(found[0].id).expect("metrics");
            let want = if tag.starts_with('p') { 20 } else { 1 };
            assert_eq!(metrics.len(), want, "{scenario}");
        }
    }
    let conn = rusqlite::Connection::open(&path).expect("open");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(check, "ok");
}

#[test]
fn a_run_killed_between_start_and_finish_stays_running_and_counts_as_unfinished() {
    let dir = scratch("crash");
    let path = dir.join("shoal.db");
    let status = spawn_child(&path, "crashed", &[("SHOAL_RESULTS_ABORT", "1")])
        .wait()
        .expect("child ends");
    assert!(!status.success(), "the child aborted");
    let mut db = Db::open(&path).expect("open after the crash");
    let runs = db.runs(&Filter::default()).expect("list");
    assert_eq!(runs.len(), 1, "one whole row, nothing torn");
    assert_eq!(runs[0].status, Status::Running);
    assert_eq!(runs[0].finished_at, None);
    // A later run does the work again: the crashed row is not a finished one.
    assert!(
        db.finished_folders("crashing scenario", "0.1.0")
            .expect("look up")
            .is_empty()
    );
    let folder = dir.join("again");
    let id = db
        .start(&new_run("crashing scenario", &folder))
        .expect("start");
    db.finish(id, &Outcome::default()).expect("finish");
    assert_eq!(
        db.finished_folders("crashing scenario", "0.1.0")
            .expect("look up"),
        vec![folder]
    );
    assert_eq!(id, RunId(2));
    assert_eq!(
        db.runs(&Filter::default()).expect("list")[0].status,
        Status::Running,
        "the crashed row stays as it was left"
    );
}

#[test]
fn a_submitted_run_is_pending_until_it_begins_where_it_runs() {
    let dir = scratch("pending");
    let mut db = Db::open(&dir.join("shoal.db")).expect("open");
    let folder = dir.join("p0");
    let a = db.submit(&new_run("point a", &folder)).expect("submit");
    let b = db.submit(&new_run("point b", &folder)).expect("submit");
    db.set_jobs(&[(a, "41_0".to_owned()), (b, "41_1".to_owned())])
        .expect("jobs");
    let row = db.run(a).expect("read").expect("row");
    assert_eq!(row.status, Status::Pending);
    assert_eq!(row.job.as_deref(), Some("41_0"));
    assert_eq!(row.host, shoal_results::this_host());
    // A pending run is not finished, and a run cannot end twice nor begin twice.
    assert!(
        db.finished_folders("point a", "0.1.0")
            .expect("look up")
            .is_empty()
    );
    db.begin(a).expect("begin");
    assert_eq!(
        db.run(a).expect("read").expect("row").status,
        Status::Running
    );
    let twice = db.begin(a).expect_err("not pending any more");
    assert!(twice.to_string().contains("is not pending"), "{twice}");
    db.finish(a, &Outcome::default()).expect("finish");
    assert_eq!(
        db.finished_folders("point a", "0.1.0").expect("look up"),
        vec![folder.clone()]
    );
    // A job that ended before its run started leaves it failed, with the reason.
    db.fail(b, 0.0, None, "Slurm job 41_1 ended: CANCELLED")
        .expect("a pending run can fail");
    let b = db.run(b).expect("read").expect("row");
    assert_eq!(b.status, Status::Failed);
    assert!(b.error.expect("error").contains("CANCELLED"));
}

#[test]
fn a_layout_1_database_is_brought_up_to_date_with_its_rows_and_metrics() {
    let dir = scratch("layout1");
    let path = dir.join("shoal.db");
    {
        // Layout 1 as the previous version created it.
        let conn = rusqlite::Connection::open(&path).expect("create");
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE runs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL,
                fabric TEXT NOT NULL, scenario_sha256 TEXT NOT NULL, scenario TEXT NOT NULL,
                seed INTEGER, version TEXT NOT NULL, revision TEXT NOT NULL,
                command TEXT NOT NULL, pid INTEGER NOT NULL, started_at TEXT NOT NULL,
                finished_at TEXT, wall_s REAL, peak_rss_bytes INTEGER,
                status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
                error TEXT, folder TEXT NOT NULL);
             CREATE INDEX runs_by_scenario ON runs (scenario_sha256, status);
             CREATE TABLE metrics (run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                key TEXT NOT NULL, value NOT NULL, PRIMARY KEY (run_id, key)) WITHOUT ROWID;
             CREATE TABLE claims (run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                position INTEGER NOT NULL, figure TEXT NOT NULL, claim TEXT NOT NULL,
                paper TEXT NOT NULL, ours TEXT NOT NULL, tolerance TEXT NOT NULL,
                pass INTEGER NOT NULL CHECK (pass IN (0, 1)), PRIMARY KEY (run_id, position))
                WITHOUT ROWID;
             INSERT INTO runs VALUES (7, 'run', 'old', 'shoal', 'h', 'text', 3, '0.1.0', 'r',
                'shoal run', 99, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:01.000Z', 1.0,
                NULL, 'done', NULL, '/old');
             INSERT INTO metrics VALUES (7, 'flows', 12);
             INSERT INTO claims VALUES (7, 0, 'F', 'holds', '1', '1', 'exact', 1);
             INSERT INTO claims VALUES (7, 1, 'F', 'fails [miss: why]', '1', '2', 'exact', 0);
             PRAGMA user_version = 1;",
        )
        .expect("layout 1");
    }
    let mut db = Db::open(&path).expect("brought up to date");
    let old = db.run(RunId(7)).expect("read").expect("the old row");
    assert_eq!(
        (old.name.as_str(), old.status, old.pid),
        ("old", Status::Done, 99)
    );
    assert_eq!((old.host.as_str(), old.job.as_deref()), ("", None));
    assert_eq!((old.swept.as_deref(), old.series.as_deref()), (None, None));
    assert_eq!(
        db.metrics(RunId(7)).expect("metrics"),
        vec![("flows".to_owned(), Value::Int(12))],
        "the rebuild deleted no metric"
    );
    // Layout 3's verdicts: the old pass or miss, with no separate reason.
    let claims = db.claims(RunId(7)).expect("claims");
    let verdicts: Vec<(&str, &str)> = claims
        .iter()
        .map(|c| (c.verdict.as_str(), c.why.as_str()))
        .collect();
    assert_eq!(verdicts, [("pass", ""), ("miss", "")]);
    assert!(claims[0].pass() && !claims[1].pass());
    // The new status is admitted, and the file now opens as the current layout.
    let id = db
        .submit(&new_run("new", Path::new("/new")))
        .expect("pending row");
    drop(db);
    let db = Db::open(&path).expect("reopens");
    assert_eq!(
        db.run(id).expect("read").expect("row").status,
        Status::Pending
    );
}

#[test]
fn a_layout_3_database_gains_the_swept_and_series_columns() {
    let dir = scratch("layout3");
    let path = dir.join("shoal.db");
    let id = {
        let mut db = Db::open(&path).expect("create");
        db.start(&new_run("old", &dir)).expect("start")
    };
    {
        // Layout 3 is layout 4 without the two columns.
        let conn = rusqlite::Connection::open(&path).expect("open");
        conn.execute_batch(
            "ALTER TABLE runs DROP COLUMN series;
             ALTER TABLE runs DROP COLUMN swept;
             PRAGMA user_version = 3;",
        )
        .expect("layout 3");
    }
    let Err(e) = Db::open_read(&path) else {
        panic!("a reader does not migrate");
    };
    let e = e.to_string();
    assert!(e.contains("layout 3"), "{e}");
    let db = Db::open(&path).expect("brought up to date");
    let old = db.run(id).expect("read").expect("the old row");
    assert_eq!(
        (old.name.as_str(), old.swept, old.series),
        ("tiny", None, None)
    );
}
