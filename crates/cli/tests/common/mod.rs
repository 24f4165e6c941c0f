//! What the end-to-end tests of the `shoal` binary share: running it, reading what it printed,
//! scratch folders and the tiny rack every suite starts from.

// Each test file is its own crate and uses only part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const SHOAL: &str = env!("CARGO_BIN_EXE_shoal");

/// An 8-node, one-channel rack under a permutation: runs in milliseconds.
pub const TINY: &str = r#"
[scenario]
name = "tiny"
seed = 5
[rack]
nodes = 8
channels = 1
switch_ports = 4
delay_slots = 1
[workload]
kind = "permutation"
flow_bytes = 3000
"#;

/// `shoal ARGS` from the current folder.
pub fn shoal(args: &[&str]) -> Output {
    Command::new(SHOAL)
        .args(args)
        .output()
        .expect("the shoal binary runs")
}

/// `shoal ARGS` run from `dir`, for what it writes relative to the current folder.
pub fn shoal_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(SHOAL)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the shoal binary runs")
}

/// `shoal ARGS`, which must succeed.
pub fn run_ok(args: &[&str]) -> Output {
    let o = shoal(args);
    assert!(o.status.success(), "shoal {args:?} failed:\n{}", stderr(&o));
    o
}

/// `shoal ARGS` from `dir`, which must succeed.
pub fn ok_in(dir: &Path, args: &[&str]) -> Output {
    let o = shoal_in(dir, args);
    assert!(o.status.success(), "shoal {args:?} failed:\n{}", stderr(&o));
    o
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

pub fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// A fresh, empty folder for the test `name` of the suite `suite` (suites apart, since the
/// test runner runs them side by side).
pub fn scratch_in(suite: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(suite)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// The bytes of `p`, or a failure naming it.
pub fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Writes `text` to the file `name` in `dir` and returns its path, as the CLI takes it.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the file");
    path.to_string_lossy().into_owned()
}
