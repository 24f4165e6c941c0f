//! Issue 37: what a careless or hostile user did to the CLI that lost data or left a mess; each
//! case is refused, and nothing of value is changed.

mod common;

use common::*;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    scratch_in("shoal-cli-hostile", name)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
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
