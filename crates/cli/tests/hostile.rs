//! Issue 37: what a careless or hostile user did to the CLI that lost data or left a mess; each
//! case is refused, and nothing of value is changed.

mod common;

use common::*;
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    scratch_in("shoal-cli-hostile", name)
}

/// `report --out` once wrote its page over the database it read ("wrote out/shoal.db": every
/// run record gone) and over any file. It refuses the database (even with --force), an SQLite
/// file, a folder and any file it did not write (unless --force), and replaces its own page.
#[test]
fn report_never_writes_over_the_database_or_a_file_it_did_not_write() {
    let dir = scratch("report-out");
    let tiny = write(&dir, "tiny.toml", TINY);
    ok_in(&dir, &["run", &tiny, "--out", "out/tiny", "--quiet"]);
    let db = dir.join("out/shoal.db");
    let before = std::fs::read(&db).expect("the database");
    for force in [false, true] {
        let mut args = vec!["report", "--out", "out/shoal.db"];
        if force {
            args.push("--force");
        }
        let o = shoal_in(&dir, &args);
        assert!(!o.status.success(), "--force {force}");
        assert!(
            stderr(&o).contains("the results database the report reads"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(std::fs::read(&db).expect("the database"), before);
    // Another database, a file of the user's and a folder: refused, untouched.
    std::fs::copy(&db, dir.join("other.db")).expect("copy");
    let keep = write(&dir, "keep.toml", TINY);
    std::fs::create_dir_all(dir.join("afolder")).expect("folder");
    for (out, reason) in [
        ("other.db", "is an SQLite database"),
        ("keep.toml", "`shoal report` did not write it"),
        ("afolder", "is a folder"),
    ] {
        let o = shoal_in(&dir, &["report", "--out", out]);
        assert!(!o.status.success(), "{out}");
        assert!(stderr(&o).contains(reason), "{out}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read_to_string(&keep).expect("keep"), TINY);
    // Its own page is replaced without asking; a user's file only with --force; no temporary
    // file is left beside them.
    ok_in(&dir, &["report", "--out", "page.html"]);
    ok_in(&dir, &["report", "--out", "page.html"]);
    ok_in(&dir, &["report", "--out", "keep.toml", "--force"]);
    assert!(
        std::fs::read_to_string(&keep)
            .expect("keep")
            .contains("<html")
    );
    let stray: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
}

/// A run whose database is refused (a folder, a file that is not a database, a path through a
/// file) once left its --out folder behind, with its marker files, and the next run was told
/// "not empty, pass --force". The database is checked before the folder is made.
#[test]
fn a_refused_database_leaves_no_results_folder_behind() {
    let dir = scratch("refused-db");
    let tiny = write(&dir, "tiny.toml", TINY);
    let other = write(
        &dir,
        "other.toml",
        &TINY.replace("name = \"tiny\"", "name = \"other\""),
    );
    std::fs::create_dir_all(dir.join("afolder")).expect("folder");
    write(&dir, "notes.txt", "not a database\n");
    for db in ["afolder", "notes.txt", "notes.txt/inside.db"] {
        for command in [vec!["run", &tiny], vec!["compare", &tiny, &other]] {
            let o = shoal_in(
                &dir,
                &[&command[..], &["--out", "res", "--db", db, "--quiet"]].concat(),
            );
            let command = command[0];
            assert!(!o.status.success(), "{command} --db {db}");
            assert!(
                stderr(&o).contains("the results database"),
                "{command} --db {db}: {}",
                stderr(&o)
            );
            assert!(!dir.join("res").exists(), "{command} --db {db} left res/");
        }
        let o = shoal_in(&dir, &["repro", "table1", "--out", "figs", "--db", db]);
        assert!(!o.status.success(), "repro --db {db}");
        assert!(!dir.join("figs").exists(), "repro --db {db} left figs/");
    }
    // No probe database is left in the folder that was tried.
    let stray: Vec<_> = std::fs::read_dir(&dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("probe"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
    ok_in(&dir, &["run", &tiny, "--out", "res", "--quiet"]);
}

/// `runs` and `report` read a database without writing to it: an empty file is refused and
/// stays empty (it was made a database), the file is not changed, and one row that cannot be
/// read (`wall_s = 'abc'`, written by another tool) is named and the rest still shown.
#[test]
fn reading_commands_never_write_and_skip_a_bad_row() {
    let dir = scratch("read-only");
    let tiny = write(&dir, "tiny.toml", TINY);
    write(&dir, "empty.db", "");
    let o = shoal_in(&dir, &["runs", "--db", "empty.db"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("empty file"), "{}", stderr(&o));
    assert_eq!(
        std::fs::metadata(dir.join("empty.db")).expect("file").len(),
        0
    );
    for seed in ["1", "2"] {
        ok_in(
            &dir,
            &[
                "run",
                &tiny,
                "--out",
                &format!("res/{seed}"),
                "--seed",
                seed,
                "--quiet",
            ],
        );
    }
    let db = dir.join("res/shoal.db");
    rusqlite::Connection::open(&db)
        .expect("open")
        .execute("UPDATE runs SET wall_s = 'abc' WHERE id = 1", [])
        .expect("the bad row");
    let before = std::fs::read(&db).expect("db");
    let o = ok_in(&dir, &["runs", "--db", "res/shoal.db", "--format", "json"]);
    let rows: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(rows.as_array().expect("rows").len(), 1, "{rows}");
    assert!(stderr(&o).contains("skipped run 1"), "{}", stderr(&o));
    let o = ok_in(
        &dir,
        &["report", "--db", "res/shoal.db", "--out", "page.html"],
    );
    assert!(stderr(&o).contains("skipped run 1"), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&db).expect("db"),
        before,
        "a reading command wrote"
    );
    // SQLite's message is given once, not once per layer of the error: a database of this
    // layout whose runs table another tool made.
    let odd = rusqlite::Connection::open(dir.join("odd.db")).expect("odd");
    odd.execute_batch("CREATE TABLE runs (x); PRAGMA user_version = 4;")
        .expect("odd table");
    drop(odd);
    let o = shoal_in(&dir, &["runs", "--db", "odd.db"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert_eq!(err.matches("no such column").count(), 1, "{err}");
}

/// On a read-only file system (an archive, a colleague's share) a database is read as it
/// is. Needs `mount` (root, as in CI); elsewhere it says it skipped.
#[test]
fn a_database_on_a_read_only_file_system_can_be_listed_and_reported() {
    let dir = scratch("read-only-fs");
    let tiny = write(&dir, "tiny.toml", TINY);
    ok_in(&dir, &["run", &tiny, "--out", "res/a", "--quiet"]);
    let mnt = dir.join("ro");
    std::fs::create_dir_all(&mnt).expect("mount point");
    let sh = |cmd: &str| {
        std::process::Command::new("sh")
            .args(["-c", cmd])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let m = mnt.display();
    if !sh(&format!("mount -t tmpfs shoal-test {m} 2>/dev/null")) {
        eprintln!("SKIPPED: mount is not permitted here (needs root)");
        return;
    }
    let ok = sh(&format!(
        "cp {} {m}/ && mount -o remount,ro {m}",
        dir.join("res/shoal.db").display()
    ));
    let runs = shoal_in(&dir, &["runs", "--db", "ro/shoal.db"]);
    let report = shoal_in(
        &dir,
        &["report", "--db", "ro/shoal.db", "--out", "page.html"],
    );
    sh(&format!("umount {m}"));
    assert!(ok, "could not prepare the read-only copy");
    assert!(runs.status.success(), "{}", stderr(&runs));
    assert!(stdout(&runs).contains("tiny"), "{}", stdout(&runs));
    assert!(report.status.success(), "{}", stderr(&report));
}

/// `shoal live rack` once said "needs root" before it looked at its arguments: a mistyped
/// rack is named as such wherever it runs, root or not.
#[test]
fn live_rack_checks_its_arguments_before_the_machine() {
    for (args, reason) in [
        (vec!["--slot-us", "0"], "--slot-us"),
        (vec!["--corrupt", "2"], "--corrupt"),
        (vec!["--nodes", "251"], "--nodes"),
        (vec!["--ports", "3"], "--ports"),
    ] {
        let o = shoal(&[&["live", "rack"], &args[..]].concat());
        assert!(!o.status.success(), "{args:?}");
        let e = stderr(&o);
        assert!(e.contains(reason) && !e.contains("root"), "{args:?}: {e}");
    }
}

/// Issue 40: figures against `workload.load` place each point at the load asked for, which a
/// short run of a heavy-tailed workload does not offer; each point that offered more than 10%
/// away from it is named, with the load that ran.
#[test]
fn a_sweep_over_the_load_names_points_whose_load_was_not_offered() {
    let dir = scratch("unrealised-load");
    let text = TINY.replace(
        "[workload]\nkind = \"permutation\"\nflow_bytes = 3000\n",
        "[workload]\nkind = \"open-loop\"\nload = 0.9\nmatrix = \"uniform\"\n\
         size = { dist = \"pareto\", shape = 1.05, mean_bytes = 100000, cap_bytes = 10000000 }\n\
         [run]\ncompleted_flows = 50\n[sweep]\nparameter = \"workload.load\"\nvalues = [0.3, 0.9]\n",
    );
    let file = write(&dir, "load.toml", &text);
    let o = ok_in(&dir, &["run", &file, "--out", "res", "--quiet", "--no-db"]);
    // Fifty flows of a Pareto of shape 1.05 are far from the mean: both points are named.
    assert_eq!(stderr(&o).matches(" offered ").count(), 2, "{}", stderr(&o));
    let csv = std::fs::read_to_string(dir.join("res/sweep.csv")).expect("sweep.csv");
    let header: Vec<&str> = csv.lines().next().expect("header").split(',').collect();
    let col = header
        .iter()
        .position(|&h| h == "realised_load")
        .expect("realised_load");
    for line in csv.lines().skip(1) {
        let cells: Vec<&str> = line.split(',').collect();
        let (asked, real): (f64, f64) = (
            cells[0].parse().expect("load"),
            cells[col].parse().expect("realised"),
        );
        let named = stderr(&o).contains(&format!("workload.load = {asked} offered {real:.3}"));
        assert_eq!(named, (real - asked).abs() > 0.1 * asked, "{}", stderr(&o));
    }
}
