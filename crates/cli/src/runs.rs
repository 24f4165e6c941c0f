//! `shoal runs`: list, filter and export the runs the results database recorded.

use crate::record::DB_FILE;
use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use shoal_results::{Db, Filter, Run, Status, Value};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// List the runs recorded in a results database, filter them, export them as CSV or JSON.
///
/// Every `shoal run`, each point of a sweep, each run of `shoal compare` and each experiment
/// of `shoal repro` records one row (docs/outputs.md, "The results database"): its resolved
/// scenario and SHA-256, seed, fabric, version and source revision, start and end, wall time,
/// peak memory, status (pending in Slurm, running, done, failed with the error), host, process
/// and Slurm job, results folder and summary metrics. A run killed before it finished stays
/// `running` in the database; its state (the table's column, `state` in CSV and JSON) says
/// what is true now: for a Slurm run Slurm's word (squeue, else sacct), and a run whose job
/// left Slurm's queue, or whose process on this host is gone, is `stale`.
///
/// The table shows one line per run; --format csv gives one row per run with every metric as
/// a column (empty where a run has none), --format json every field with the metrics and, for
/// repro experiments, the claims.
#[derive(Args)]
#[command(verbatim_doc_comment)]
#[command(
    after_help = "Examples:\n  shoal runs\n  shoal runs --fabric dctcp --status done --format csv > runs.csv\n  \
    shoal runs --db /scratch/study/shoal.db --scenario fig15-datacenter --format json"
)]
pub struct RunsArgs {
    /// The database. Default: out/shoal.db (where runs into out/<name> record).
    #[arg(long, value_name = "FILE", default_value_os_t = Path::new("out").join(DB_FILE))]
    db: PathBuf,
    /// Only runs of this fabric (e.g. shoal, dctcp, stardust).
    #[arg(long, value_name = "NAME")]
    fabric: Option<String>,
    /// Only runs of the scenario (or repro experiment) with this name.
    #[arg(long, value_name = "NAME")]
    scenario: Option<String>,
    /// Only runs with this status.
    #[arg(long, value_enum)]
    status: Option<StatusArg>,
    /// Only runs of this kind.
    #[arg(long, value_enum)]
    kind: Option<KindArg>,
    /// Only the runs of one sweep, comparison or repro: the `series` column's value, e.g.
    /// "compare /home/me/out/compare 2026-11-29T06:00:00.000Z" (its command, results folder
    /// and start). Each point of a sweep or comparison records the setting it swept in `swept`.
    #[arg(long, value_name = "SERIES")]
    series: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum StatusArg {
    Pending,
    Running,
    Done,
    Failed,
}

#[derive(Clone, Copy, ValueEnum)]
enum KindArg {
    Run,
    SweepPoint,
    Replication,
    Compare,
    Repro,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Csv,
    Json,
}

pub fn main(args: RunsArgs) -> Result<ExitCode> {
    // Listing never creates a database.
    if !args.db.is_file() {
        bail!(
            "{}: no results database there (runs record into {DB_FILE} beside their results \
             folder, e.g. out/{DB_FILE}); name one with --db FILE",
            args.db.display()
        );
    }
    // Listing never writes: an archived or read-only database can be listed.
    let db = Db::open_read(&args.db)?;
    let filter = Filter {
        fabric: args.fabric.clone(),
        name: args.scenario.clone(),
        status: args.status.map(|s| match s {
            StatusArg::Pending => Status::Pending,
            StatusArg::Running => Status::Running,
            StatusArg::Done => Status::Done,
            StatusArg::Failed => Status::Failed,
        }),
        kind: args.kind.map(|k| {
            match k {
                KindArg::Run => "run",
                KindArg::SweepPoint => "sweep-point",
                KindArg::Replication => "replication",
                KindArg::Compare => "compare",
                KindArg::Repro => "repro",
            }
            .to_owned()
        }),
        series: args.series.clone(),
    };
    let runs = crate::record::readable_runs(&db, &filter, "shoal runs")?;
    let states = states(&runs);
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Table => table(&runs, &states),
        Format::Csv => {
            let metrics = runs
                .iter()
                .map(|r| db.metrics(r.id))
                .collect::<shoal_results::Result<Vec<_>>>()?;
            out.write_all(&csv(&runs, &states, &metrics)?)?;
        }
        Format::Json => {
            let mut all = Vec::with_capacity(runs.len());
            for (r, state) in runs.iter().zip(&states) {
                all.push(json(r, state, &db.metrics(r.id)?, &db.claims(r.id)?));
            }
            writeln!(out, "{}", serde_json::to_string_pretty(&all)?)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// What is true of a run now, beside what its row says.
struct State {
    /// `pending`, `running`, `done`, `failed`, or `stale`: the row says pending or running,
    /// but its Slurm job left the queue or its process (on this host) is gone.
    word: &'static str,
    /// Slurm's state of its job (squeue's, else sacct's), when Slurm says one.
    slurm: Option<String>,
}

/// Each row's [`State`]: Slurm is asked once about every unfinished row with a job, and a
/// row without one is stale when it names a process of this host that no longer exists.
fn states(runs: &[Run]) -> Vec<State> {
    let unfinished = |r: &&Run| matches!(r.status, Status::Pending | Status::Running);
    let with_job: Vec<&str> = runs
        .iter()
        .filter(unfinished)
        .filter_map(|r| r.job.as_deref())
        .collect();
    let queue = (!with_job.is_empty())
        .then(crate::slurm::squeue)
        .and_then(Result::ok);
    let gone = queue.as_ref().map(|q| {
        with_job
            .iter()
            .copied()
            .filter(|j| !q.contains_key(*j))
            .collect::<Vec<_>>()
    });
    let accounts = gone
        .filter(|g| !g.is_empty())
        .and_then(|g| crate::slurm::sacct(g.into_iter()));
    let host = shoal_results::this_host();
    runs.iter()
        .map(|r| {
            let recorded = match r.status {
                Status::Pending => "pending",
                Status::Running => "running",
                Status::Done => "done",
                Status::Failed => "failed",
            };
            if !unfinished(&r) {
                return State {
                    word: recorded,
                    slurm: None,
                };
            }
            match (&r.job, &queue) {
                (Some(job), Some(queue)) => match queue.get(job) {
                    Some(s) => State {
                        word: match s.as_str() {
                            "PENDING" => "pending",
                            _ => "running",
                        },
                        slurm: Some(s.clone()),
                    },
                    None => State {
                        word: "stale",
                        slurm: accounts.as_ref().and_then(|a| a.get(job)).cloned(),
                    },
                },
                // Slurm cannot be asked: the row's word.
                (Some(_), None) => State {
                    word: recorded,
                    slurm: None,
                },
                (None, _) => State {
                    word: if r.host == host && !process_alive(r.pid) {
                        "stale"
                    } else {
                        recorded
                    },
                    slurm: None,
                },
            }
        })
        .collect()
}

/// Whether process `pid` of this host is still a run of this program (Linux's /proc; elsewhere
/// assumed so): it exists and bears this program's name, so a pid the system gave to another
/// program since is seen as gone. (A later run of this program under the same pid still counts
/// as alive: the state errs towards `running`.)
fn process_alive(pid: u32) -> bool {
    let comm = |dir: &Path| std::fs::read_to_string(dir.join("comm")).ok();
    match comm(Path::new("/proc/self")) {
        None => true,
        Some(ours) => comm(&Path::new("/proc").join(pid.to_string())).as_ref() == Some(&ours),
    }
}

fn table(runs: &[Run], states: &[State]) {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .zip(states)
        .map(|(r, state)| {
            vec![
                r.id.0.to_string(),
                state.word.to_owned(),
                r.kind.clone(),
                r.name.clone(),
                r.fabric.clone(),
                r.seed.map_or_else(|| "-".to_owned(), |s| s.to_string()),
                r.swept.clone().unwrap_or_else(|| "-".to_owned()),
                r.started_at.clone(),
                crate::run::opt(r.wall_s, 2),
                r.folder.display().to_string(),
            ]
        })
        .collect();
    crate::repro::print_table(
        &[
            "id", "state", "kind", "scenario", "fabric", "seed", "swept", "started", "wall s",
            "folder",
        ],
        &rows,
    );
}

/// The run's own columns, in the CSV's order.
const COLUMNS: [&str; 24] = [
    "id",
    "kind",
    "scenario",
    "fabric",
    "seed",
    "swept",
    "series",
    "status",
    "state",
    "slurm_state",
    "job",
    "host",
    "pid",
    "error",
    "started_at",
    "finished_at",
    "wall_s",
    "peak_rss_bytes",
    "version",
    "revision",
    "folder",
    "command",
    "scenario_sha256",
    "scenario_toml",
];

fn columns(r: &Run, state: &State) -> [String; 24] {
    let opt = |v: Option<String>| v.unwrap_or_default();
    [
        r.id.0.to_string(),
        r.kind.clone(),
        r.name.clone(),
        r.fabric.clone(),
        opt(r.seed.map(|s| s.to_string())),
        opt(r.swept.clone()),
        opt(r.series.clone()),
        r.status.as_str().to_owned(),
        state.word.to_owned(),
        opt(state.slurm.clone()),
        opt(r.job.clone()),
        r.host.clone(),
        r.pid.to_string(),
        opt(r.error.clone()),
        r.started_at.clone(),
        opt(r.finished_at.clone()),
        opt(r.wall_s.map(|w| w.to_string())),
        opt(r.peak_rss_bytes.map(|b| b.to_string())),
        r.version.clone(),
        r.revision.clone(),
        r.folder.display().to_string(),
        r.command.clone(),
        r.scenario_sha256.clone(),
        r.scenario.clone(),
    ]
}

/// One row per run: its columns, then every metric any run has (in key order), empty where
/// this run has none.
fn csv(runs: &[Run], states: &[State], metrics: &[Vec<(String, Value)>]) -> Result<Vec<u8>> {
    let keys: BTreeSet<&str> = metrics.iter().flatten().map(|(k, _)| k.as_str()).collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(COLUMNS.iter().copied().chain(keys.iter().copied()))?;
    for ((r, m), state) in runs.iter().zip(metrics).zip(states) {
        let values = keys.iter().map(|k| {
            m.iter()
                .find(|(key, _)| key == k)
                .map_or_else(String::new, |(_, v)| v.to_string())
        });
        w.write_record(columns(r, state).into_iter().chain(values))?;
    }
    w.into_inner()
        .map_err(|e| anyhow::anyhow!("cannot write the CSV: {e}"))
}

fn json(
    r: &Run,
    state: &State,
    metrics: &[(String, Value)],
    claims: &[shoal_results::Claim],
) -> serde_json::Value {
    let mut object = serde_json::Map::new();
    for (key, value) in COLUMNS.iter().zip(columns(r, state)) {
        let value = match *key {
            "id" => serde_json::json!(r.id.0),
            "pid" => serde_json::json!(r.pid),
            "job" => serde_json::json!(r.job),
            "slurm_state" => serde_json::json!(state.slurm),
            "seed" => serde_json::json!(r.seed),
            "swept" => serde_json::json!(r.swept),
            "series" => serde_json::json!(r.series),
            "wall_s" => serde_json::json!(r.wall_s),
            "peak_rss_bytes" => serde_json::json!(r.peak_rss_bytes),
            "error" => serde_json::json!(r.error),
            "finished_at" => serde_json::json!(r.finished_at),
            _ => serde_json::Value::String(value),
        };
        object.insert((*key).to_owned(), value);
    }
    let metrics: serde_json::Map<String, serde_json::Value> = metrics
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::Int(i) => serde_json::json!(i),
                Value::Real(x) => serde_json::json!(x),
            };
            (k.clone(), v)
        })
        .collect();
    object.insert("metrics".to_owned(), metrics.into());
    if !claims.is_empty() {
        let claims: Vec<serde_json::Value> = claims
            .iter()
            .map(|c| {
                serde_json::json!({
                    "figure": c.figure, "claim": c.claim, "paper": c.paper,
                    "ours": c.ours, "tolerance": c.tolerance, "verdict": c.verdict,
                    "why": c.why, "pass": c.pass(),
                })
            })
            .collect();
        object.insert("claims".to_owned(), claims.into());
    }
    object.into()
}

#[cfg(test)]
mod tests {
    use super::process_alive;

    #[test]
    fn a_pid_is_alive_only_while_it_runs_this_program() {
        assert!(process_alive(std::process::id()));
        if !std::path::Path::new("/proc/self/comm").exists() {
            return; // no /proc: every pid is assumed alive
        }
        // Another program under a pid, as when the system reuses a dead run's pid.
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let alive = process_alive(other.id());
        other.kill().expect("kill sleep");
        let pid = other.id();
        other.wait().expect("wait for sleep");
        assert!(!alive, "pid {pid} runs sleep, not this program");
        assert!(!process_alive(pid), "pid {pid} is gone");
    }
}
