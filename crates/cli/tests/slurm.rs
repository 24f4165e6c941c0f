//! `--backend slurm` against a real Slurm: ignored by default, since it needs a running cluster.
//! `.ci/run` installs Debian's Slurm and munge, starts a single-node cluster with
//! `.ci/slurm-up DIR` and runs this with `SLURM_CONF=DIR/slurm.conf cargo test -p shoal-cli
//! --test slurm -- --ignored`. Run so without a working Slurm, it fails saying why: it never
//! passes without having submitted anything.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

/// How long a submitted batch may take on the test cluster (the runs take milliseconds).
const TIMEOUT: Duration = Duration::from_secs(120);

/// Four points of an 8-node rack: milliseconds each.
const SWEEP: &str = r#"
[scenario]
name = "slurm-sweep"
seed = 9
[rack]
nodes = 8
channels = 1
switch_ports = 4
delay_slots = 1
[workload]
kind = "permutation"
flow_bytes = 3000
[sweep]
parameter = "workload.flow_bytes"
values = [1000, 3000, 9000, 27000]
"#;

const DCTCP: &str = r#"
[scenario]
name = "tiny-dctcp"
fabric = "dctcp"
seed = 9
[network]
hosts = 8
radix = 4
link_gbps = 10.0
[workload]
kind = "permutation"
flow_bytes = 3000
"#;

fn scratch(name: &str) -> PathBuf {
    scratch_in("shoal-slurm-tests", name)
}

/// `shoal ARGS` in `dir`, killed and failed after [`TIMEOUT`].
fn shoal(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(SHOAL)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the shoal binary runs");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > TIMEOUT {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "shoal {args:?} did not end in {TIMEOUT:?}:\n{}",
                stderr(&out)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

fn ok(dir: &Path, args: &[&str]) -> Output {
    let o = shoal(dir, args);
    assert!(o.status.success(), "shoal {args:?} failed:\n{}", stderr(&o));
    o
}

fn rows(dir: &Path) -> Vec<Value> {
    let o = ok(dir, &["runs", "--db", "shoal.db", "--format", "json"]);
    match serde_json::from_str(&String::from_utf8_lossy(&o.stdout)).expect("JSON") {
        Value::Array(rows) => rows,
        other => panic!("not an array: {other}"),
    }
}

/// Fails, saying why, unless a Slurm cluster answers.
fn require_slurm() {
    let why = match Command::new("sinfo").args(["-h", "-o", "%t"]).output() {
        Err(e) => format!("sinfo cannot run ({e}): Slurm's client is not installed"),
        Ok(o) if !o.status.success() => format!(
            "sinfo failed: {} (is SLURM_CONF set to a running cluster's slurm.conf?)",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains("idle") => return,
        Ok(o) => format!(
            "no idle node: sinfo says {:?}",
            String::from_utf8_lossy(&o.stdout).trim()
        ),
    };
    panic!("this test needs a running Slurm (.ci/slurm-up starts one): {why}");
}

#[test]
#[ignore = "needs a running Slurm: .ci/run starts one and runs this"]
fn a_sweep_submitted_to_slurm_gives_the_rows_and_results_of_a_local_run() {
    require_slurm();
    let dir = scratch("sweep");
    std::fs::write(dir.join("sweep.toml"), SWEEP).expect("write");
    // Held, so that the rows are seen pending; sbatch options pass through as given.
    let submitted = ok(
        &dir,
        &[
            "run",
            "sweep.toml",
            "--out",
            "slurm",
            "--quiet",
            "--backend",
            "slurm",
            "--sbatch-arg=--hold",
            "--time=5",
        ],
    );
    let text = stderr(&submitted);
    let job = text
        .split("as Slurm job array ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap_or_else(|| panic!("no job id in: {text}"))
        .to_owned();
    assert!(
        !dir.join("slurm/sweep.csv").exists(),
        "no table before the runs"
    );
    let pending = rows(&dir);
    assert_eq!(pending.len(), 4);
    for (i, r) in pending.iter().enumerate() {
        assert_eq!(r["status"], "pending", "{r}");
        assert_eq!(r["state"], "pending", "{r}");
        assert_eq!(r["slurm_state"], "PENDING", "{r}");
        assert_eq!(r["job"], format!("{job}_{i}"));
    }
    // A rerun while they are queued is refused: it would write into their folders.
    let early = shoal(&dir, &["run", "sweep.toml", "--out", "slurm", "--quiet"]);
    assert!(!early.status.success());
    assert!(
        stderr(&early).contains("still queued or running in Slurm"),
        "{}",
        stderr(&early)
    );
    // Cancelled before they started: their rows are stale until a rerun records them failed
    // and submits them again.
    let cancelled = Command::new("scancel").arg(&job).status().expect("scancel");
    assert!(cancelled.success());
    let deadline = Instant::now() + TIMEOUT;
    while rows(&dir).iter().any(|r| r["state"] != "stale") {
        assert!(
            Instant::now() < deadline,
            "the cancelled job never left the queue"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let waited = ok(
        &dir,
        &[
            "run",
            "sweep.toml",
            "--out",
            "slurm",
            "--quiet",
            "--backend",
            "slurm",
            "--wait",
        ],
    );
    assert!(
        stderr(&waited).contains("submitted 4 runs"),
        "{}",
        stderr(&waited)
    );
    let all = rows(&dir);
    assert_eq!(all.len(), 8);
    for r in &all[..4] {
        assert_eq!(r["status"], "failed", "{r}");
        assert!(
            r["error"]
                .as_str()
                .unwrap()
                .contains("ended before the run did"),
            "{r}"
        );
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    for r in &all[4..] {
        assert_eq!(
            (&r["status"], &r["state"]),
            (&"done".into(), &"done".into()),
            "{r}"
        );
        assert_eq!(r["kind"], "sweep-point");
        assert_eq!(r["seed"], 9);
        assert!(r["job"].as_str().is_some_and(|j| j.contains('_')), "{r}");
        assert_eq!(r["host"], host.trim());
        assert!(r["metrics"]["flows_completed"] == 8, "{r}");
    }

    // Exactly the results of a local run: the table and every point's files.
    ok(&dir, &["run", "sweep.toml", "--out", "local", "--quiet"]);
    assert_eq!(
        read(&dir.join("slurm/sweep.csv")),
        read(&dir.join("local/sweep.csv"))
    );
    for p in ["0-1000", "1-3000", "2-9000", "3-27000"] {
        for f in ["flows.csv", "scenario.toml"] {
            assert_eq!(
                read(&dir.join("slurm").join(p).join(f)),
                read(&dir.join("local").join(p).join(f)),
                "{p}/{f}"
            );
        }
    }
    // Run again, it resumes as a local run does: nothing to submit.
    let again = ok(
        &dir,
        &["run", "sweep.toml", "--out", "slurm", "--backend", "slurm"],
    );
    assert!(
        stderr(&again).contains("4 of 4 points finished before, 0 to run"),
        "{}",
        stderr(&again)
    );
    let submitted = rows(&dir).iter().filter(|r| r["job"].is_string()).count();
    assert_eq!(submitted, 8, "nothing submitted again");
}

#[test]
#[ignore = "needs a running Slurm: .ci/run starts one and runs this"]
fn a_comparison_submitted_to_slurm_equals_a_local_one() {
    require_slurm();
    let dir = scratch("compare");
    let sweep = SWEEP.replace(
        "[sweep]\nparameter = \"workload.flow_bytes\"\nvalues = [1000, 3000, 9000, 27000]\n",
        "",
    );
    std::fs::write(dir.join("shoal.toml"), sweep).expect("write");
    std::fs::write(dir.join("dctcp.toml"), DCTCP).expect("write");
    let files = ["shoal.toml", "dctcp.toml"];
    let mut slurm = vec![
        "compare",
        "--out",
        "slurm",
        "--quiet",
        "--backend",
        "slurm",
        "--wait",
    ];
    slurm.extend(files);
    ok(&dir, &slurm);
    let mut local = vec!["compare", "--out", "local", "--quiet"];
    local.extend(files);
    ok(&dir, &local);
    assert_eq!(
        read(&dir.join("slurm/compare.csv")),
        read(&dir.join("local/compare.csv"))
    );
    let rows = rows(&dir);
    let from_slurm: Vec<&Value> = rows.iter().filter(|r| r["job"].is_string()).collect();
    assert_eq!(from_slurm.len(), 2);
    assert!(
        from_slurm
            .iter()
            .all(|r| r["status"] == "done" && r["kind"] == "compare")
    );
}
