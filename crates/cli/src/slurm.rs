//! `--backend slurm`: the runs of a sweep or comparison as a Slurm job array, one task per run.
//!
//! The submitting command does what a local one does up to running: it resumes (points the
//! database holds as finished are kept) and plans each remaining run's folder. It then records
//! each run as a `pending` row, writes a manifest (each task's row, folder and resolved
//! scenario) and a script that runs `shoal slurm-task MANIFEST $SLURM_ARRAY_TASK_ID`, and
//! submits the script with `sbatch`. A task turns its row `running` and records it `done` or
//! `failed` exactly as a local run does, into the same database and the folder a local run
//! would use, so a task's results equal a local run's. With `--wait` the command waits for the
//! tasks and writes the table as a local run does; without, the same command run again once
//! they ended (or with `--wait` while they run) does that, resubmitting only what failed.
//!
//! The database must be on a file system every node shares and that SQLite's locks work on
//! (WAL: not NFS); the same is true of the results folders (any shared file system).

use crate::batch::Job;
use crate::folder::Folder;
use crate::record::Recorder;
use crate::run::{Summary, run_one};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};
use shoal_results::{Run, RunId, Status};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

/// Where the runs of a sweep or comparison go.
#[derive(Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Backend {
    /// On this machine, --jobs at once.
    #[default]
    Local,
    /// A Slurm job array: one task per run.
    Slurm,
}

/// The backend and, for Slurm, the resources of each task.
#[derive(Args, Clone, Default)]
pub(crate) struct BackendArgs {
    /// Where the runs go: here, or a Slurm job array (one task per run, submitted with
    /// sbatch; `shoal runs` shows their state).
    #[arg(long, value_enum, default_value_t = Backend::Local)]
    backend: Backend,
    /// Slurm: the partition (sbatch --partition).
    #[arg(long, value_name = "NAME")]
    partition: Option<String>,
    /// Slurm: each task's time limit (sbatch --time, e.g. 30, 2:00:00, 1-0).
    #[arg(long, value_name = "LIMIT")]
    time: Option<String>,
    /// Slurm: each task's memory (sbatch --mem, e.g. 2G).
    #[arg(long, value_name = "SIZE")]
    mem: Option<String>,
    /// Slurm: CPUs of each task (sbatch --cpus-per-task). Default: --threads.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    cpus_per_task: Option<u64>,
    /// Slurm: an option passed to sbatch as it is (repeatable), e.g. --sbatch-arg=--qos=long.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    sbatch_arg: Vec<String>,
    /// Slurm: wait for the tasks (and any of this folder still queued or running) to end, then
    /// write the table as a local run does.
    #[arg(long)]
    wait: bool,
}

impl BackendArgs {
    pub(crate) fn slurm(&self) -> bool {
        self.backend == Backend::Slurm
    }

    /// Refuses Slurm options without `--backend slurm`, and Slurm without a database (the
    /// tasks record into it).
    pub(crate) fn check(&self, db_enabled: bool) -> Result<()> {
        let slurm_only = [
            ("--partition", self.partition.is_some()),
            ("--time", self.time.is_some()),
            ("--mem", self.mem.is_some()),
            ("--cpus-per-task", self.cpus_per_task.is_some()),
            ("--sbatch-arg", !self.sbatch_arg.is_empty()),
            ("--wait", self.wait),
        ];
        if !self.slurm()
            && let Some((flag, _)) = slurm_only.iter().find(|(_, set)| *set)
        {
            bail!("{flag} is an option of --backend slurm");
        }
        if self.slurm() && !db_enabled {
            bail!(
                "--backend slurm needs the results database (its tasks record into it): drop --no-db"
            );
        }
        Ok(())
    }
}

/// What became of the runs handed over.
pub(crate) enum Dispatched {
    /// They ran (here, or in Slurm while this command waited): their outcomes in job order.
    Ran(Vec<Result<Summary>>),
    /// They were submitted; this command ends without a table.
    Submitted,
}

/// One task of the array, as the manifest holds it.
#[derive(Serialize, Deserialize)]
struct Task {
    row: i64,
    label: String,
    folder: PathBuf,
    /// Where the scenario came from (relative paths in it are read from there).
    origin: String,
    /// The resolved scenario.
    scenario: String,
}

/// What every task of one array reads.
#[derive(Serialize, Deserialize)]
struct Manifest {
    db: PathBuf,
    kind: String,
    threads: usize,
    tasks: Vec<Task>,
}

/// The folder of `dir` that holds the scripts, manifests and task logs.
const SLURM_DIR: &str = ".slurm";

/// Submits `jobs` as one array of `kind` runs into the database of `recorder`; `top` is the
/// batch's results folder (its name names the job), `what` starts each message.
pub(crate) fn submit(
    args: &BackendArgs,
    jobs: Vec<Job>,
    per_run: usize,
    recorder: &Recorder,
    kind: &str,
    top: &Folder,
    what: &str,
) -> Result<Dispatched> {
    if jobs.is_empty() {
        return Ok(Dispatched::Ran(Vec::new()));
    }
    let db = recorder
        .db_path()
        .context("--backend slurm needs the results database")?;
    let db = crate::record::absolute(&db);
    let exe = std::env::current_exe().context("cannot find the shoal program to submit")?;
    // Absolute: the tasks need not start where this command did.
    let here = crate::record::absolute(top.path());
    let slurm_dir = here.join(SLURM_DIR);
    let log_dir = if slurm_dir.is_dir() {
        Folder::reopen(&slurm_dir)?
    } else {
        Folder::open(&slurm_dir, true)?
    };
    top.note(SLURM_DIR)?;
    let number = (1..)
        .find(|n| !slurm_dir.join(format!("job-{n}.sh")).exists())
        .expect("a free number");
    // The tasks open their folders themselves: this process lets go of them.
    let mut tasks = Vec::with_capacity(jobs.len());
    let mut rows = Vec::with_capacity(jobs.len());
    for job in jobs {
        let folder = crate::record::absolute(job.folder.path());
        drop(job.folder);
        let row = recorder.submit(kind, job.sc, &folder, job.swept.as_deref())?;
        rows.push(row);
        tasks.push(Task {
            row: row.0,
            label: job.label,
            folder,
            origin: job.sc.origin.clone(),
            scenario: job.sc.resolved_toml(),
        });
    }
    let count = tasks.len();
    // "shoal run" of "shoal run: point".
    let command = what.split(':').next().unwrap_or(what);
    let manifest = format!("job-{number}.json");
    let script = format!("job-{number}.sh");
    let log = format!("job-{number}-%a.out");
    log_dir.write(
        &manifest,
        &serde_json::to_string_pretty(&Manifest {
            db: db.clone(),
            kind: kind.to_owned(),
            threads: per_run,
            tasks,
        })?,
    )?;
    for i in 0..count {
        log_dir.note(&format!("job-{number}-{i}.out"))?;
    }
    let mut options = vec![
        "--parsable".to_owned(),
        format!(
            "--job-name=shoal-{}",
            crate::run::safe(&here.file_name().unwrap_or_default().to_string_lossy())
        ),
        format!("--array=0-{}", count - 1),
        format!(
            "--cpus-per-task={}",
            args.cpus_per_task.unwrap_or(per_run as u64)
        ),
        format!("--output={}", slurm_dir.join(&log).display()),
    ];
    options.extend(args.partition.iter().map(|p| format!("--partition={p}")));
    options.extend(args.time.iter().map(|t| format!("--time={t}")));
    options.extend(args.mem.iter().map(|m| format!("--mem={m}")));
    options.extend(args.sbatch_arg.iter().cloned());
    let manifest_path = slurm_dir.join(&manifest);
    log_dir.write(
        &script,
        &format!(
            "#!/bin/sh\n# {count} runs of `{}`, submitted as: sbatch {} {script}\n\
             exec {} slurm-task {} \"$SLURM_ARRAY_TASK_ID\"\n",
            recorder.command(),
            options.join(" "),
            shell_quote(&exe.to_string_lossy()),
            shell_quote(&manifest_path.to_string_lossy()),
        ),
    )?;
    log_dir.finish()?;
    let script_path = slurm_dir.join(&script);
    let submitted = Command::new("sbatch")
        .args(&options)
        .arg(&script_path)
        .output();
    let job = match submitted {
        Ok(out) if out.status.success() => {
            let text = String::from_utf8_lossy(&out.stdout);
            // --parsable prints "<job id>" or "<job id>;<cluster>".
            let id = text.trim().split(';').next().unwrap_or("").to_owned();
            if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
                let reason = format!("sbatch printed no job id: {text:?}");
                recorder.fail_all(&rows, &reason)?;
                bail!("{}: {reason}", script_path.display());
            }
            id
        }
        Ok(out) => {
            let reason = format!(
                "sbatch refused it ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
            recorder.fail_all(&rows, &reason)?;
            bail!("{}: {reason}", script_path.display());
        }
        Err(e) => {
            let reason = format!("cannot start sbatch (is Slurm's client installed?): {e}");
            recorder.fail_all(&rows, &reason)?;
            bail!("{}: {reason}", script_path.display());
        }
    };
    let named: Vec<(RunId, String)> = rows
        .iter()
        .enumerate()
        .map(|(i, &r)| (r, format!("{job}_{i}")))
        .collect();
    recorder.set_jobs(&named)?;
    eprintln!(
        "{command}: submitted {count} runs as Slurm job array {job} ({}); `shoal runs --db {}` \
         shows their state",
        script_path.display(),
        db.display()
    );
    if !args.wait {
        eprintln!(
            "{command}: the same command again once they ended (or with --wait) writes the \
             table, submitting again only what failed"
        );
        return Ok(Dispatched::Submitted);
    }
    wait_for(recorder, &rows)?;
    let manifest: Manifest = serde_json::from_str(&std::fs::read_to_string(&manifest_path)?)?;
    let outcomes = rows
        .iter()
        .zip(&manifest.tasks)
        .map(|(&row, task)| outcome(recorder, row, task))
        .collect::<Result<Vec<_>>>()?;
    Ok(Dispatched::Ran(outcomes))
}

/// A task's outcome once its row ended: its summary, or its error.
fn outcome(recorder: &Recorder, row: RunId, task: &Task) -> Result<Result<Summary>> {
    let run = recorder.row(row)?;
    Ok(match run.status {
        Status::Done => {
            let sc = shoal_scenario::parse(&task.scenario, &task.origin)?;
            recorder.finished_in(&sc, &task.folder)?.ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: the Slurm task finished, but the folder does not hold its results",
                    task.folder.display()
                )
            })
        }
        _ => Err(anyhow::anyhow!(
            "{} (Slurm job {}): {}",
            task.label,
            run.job.as_deref().unwrap_or("-"),
            run.error.as_deref().unwrap_or("failed")
        )),
    })
}

/// `sh` single quotes around `text`.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Waits until every row of `rows` is done or failed. A row whose job left Slurm's queue
/// without ending it (killed, out of time, lost with its node) is recorded failed with what
/// `sacct` says of the job, when it can.
fn wait_for(recorder: &Recorder, rows: &[RunId]) -> Result<()> {
    let mut pause = Duration::from_millis(200);
    let started = Instant::now();
    let mut last_note = Instant::now();
    loop {
        // The queue before the rows: a task that ends in between has its row ended already.
        let queue = squeue()?;
        let mut open = Vec::new();
        for &id in rows {
            let run = recorder.row(id)?;
            if matches!(run.status, Status::Pending | Status::Running) {
                open.push(run);
            }
        }
        let lost: Vec<&Run> = open
            .iter()
            .filter(|r| r.job.as_ref().is_some_and(|j| !queue.contains_key(j)))
            .collect();
        if !lost.is_empty() {
            let accounts = sacct(lost.iter().filter_map(|r| r.job.as_deref()));
            for run in &lost {
                let job = run.job.as_deref().unwrap_or("-");
                let state = accounts.as_ref().and_then(|a| a.get(job)).map_or_else(
                    || "sacct cannot say how".to_owned(),
                    |s| format!("sacct: {s}"),
                );
                recorder.fail_all(
                    &[run.id],
                    &format!("its Slurm job {job} ended before the run did ({state})"),
                )?;
            }
        }
        if open.len() == lost.len() {
            return Ok(());
        }
        if last_note.elapsed() >= Duration::from_secs(30) {
            last_note = Instant::now();
            eprintln!(
                "shoal: waiting for {} Slurm tasks ({:.0} s)",
                open.len() - lost.len(),
                started.elapsed().as_secs_f64()
            );
        }
        std::thread::sleep(pause);
        pause = (pause * 3 / 2).min(Duration::from_secs(10));
    }
}

/// Before a sweep or comparison into `dir` plans its runs: its runs still queued or running in
/// Slurm are waited for with `--backend slurm --wait`, and refused otherwise (a second copy
/// would write into the same folders). Rows whose job is gone are recorded failed.
pub(crate) fn settle_earlier(args: &BackendArgs, recorder: &Recorder, dir: &Path) -> Result<()> {
    let dir = crate::record::absolute(dir);
    let open: Vec<Run> = recorder
        .unfinished()?
        .into_iter()
        .filter(|r| r.job.is_some() && r.folder.starts_with(&dir))
        .collect();
    if open.is_empty() {
        return Ok(());
    }
    let queue = squeue().context(
        "runs of this folder were submitted to Slurm and are not finished: Slurm's client must \
         say whether they still run",
    )?;
    // Those whose job is gone are recorded failed by the wait below, with sacct's word.
    let queued: Vec<&Run> = open
        .iter()
        .filter(|r| r.job.as_ref().is_some_and(|j| queue.contains_key(j)))
        .collect();
    let waiting = args.slurm() && args.wait;
    if !queued.is_empty() && !waiting {
        let jobs: Vec<&str> = queued.iter().filter_map(|r| r.job.as_deref()).collect();
        bail!(
            "{}: {} of its runs are still queued or running in Slurm (jobs {}): run this again \
             once they ended, or with --backend slurm --wait to wait for them",
            dir.display(),
            queued.len(),
            jobs.join(", ")
        );
    }
    if !queued.is_empty() {
        eprintln!(
            "shoal: waiting for {} runs of {} still in Slurm",
            queued.len(),
            dir.display()
        );
    }
    let ids: Vec<RunId> = open.iter().map(|r| r.id).collect();
    wait_for(recorder, &ids)
}

/// Slurm's view of our array tasks: `<job>_<task>` to its state (PENDING, RUNNING, ...), from
/// `squeue`. An error when `squeue` cannot be run.
pub(crate) fn squeue() -> Result<BTreeMap<String, String>> {
    let out = Command::new("squeue")
        .args(["--noheader", "--array", "--me", "--format=%i|%T"])
        .output()
        .context("cannot run squeue (Slurm's client)")?;
    if !out.status.success() {
        bail!(
            "squeue failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(pairs(&String::from_utf8_lossy(&out.stdout)))
}

/// Slurm's accounting of the jobs `jobs` (`<job>_<task>` to its final state), when `sacct`
/// runs and accounting is on; `None` otherwise.
pub(crate) fn sacct<'a>(jobs: impl Iterator<Item = &'a str>) -> Option<BTreeMap<String, String>> {
    let jobs: Vec<&str> = jobs.collect();
    if jobs.is_empty() {
        return Some(BTreeMap::new());
    }
    let out = Command::new("sacct")
        .args([
            "--noheader",
            "--allocations",
            "--parsable2",
            "--format=JobID,State",
        ])
        .arg(format!("--jobs={}", jobs.join(",")))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| pairs(&String::from_utf8_lossy(&out.stdout)))
}

/// `a|b` lines as a map (sacct's "CANCELLED by 0" keeps its first word).
fn pairs(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.trim().split_once('|'))
        .map(|(job, state)| {
            let state = state.split_whitespace().next().unwrap_or("");
            (job.to_owned(), state.to_owned())
        })
        .collect()
}

/// Run one task of a Slurm job array (what the submitted script calls).
#[derive(Args)]
pub struct TaskArgs {
    /// The manifest the submitting command wrote (DIR/.slurm/job-N.json).
    manifest: PathBuf,
    /// The task's index ($SLURM_ARRAY_TASK_ID).
    index: usize,
}

/// Runs task `index` of the manifest: its row turns `running`, then `done` or `failed`.
pub fn task_main(args: TaskArgs) -> Result<ExitCode> {
    let path = &args.manifest;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let manifest: Manifest = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a shoal Slurm manifest", path.display()))?;
    let Some(task) = manifest.tasks.get(args.index) else {
        bail!(
            "{}: no task {} (it has {})",
            path.display(),
            args.index,
            manifest.tasks.len()
        );
    };
    let recorder = Recorder::at(&manifest.db)?;
    let row = RunId(task.row);
    let sc = match shoal_scenario::parse(&task.scenario, &task.origin) {
        Ok(sc) if sc.resolved_toml() == task.scenario => sc,
        Ok(_) => {
            let reason = "the resolved scenario does not resolve to itself here (another shoal \
                          version?): its results would not be the submitted run's";
            recorder.fail_all(&[row], reason)?;
            bail!("{}: task {}: {reason}", path.display(), args.index);
        }
        Err(e) => {
            recorder.fail_all(&[row], &e.to_string())?;
            return Err(e.into());
        }
    };
    recorder.scenario_row(&manifest.kind, &sc, &task.folder, Some(row), None, || {
        let folder = Folder::open(&task.folder, true)?;
        let summary = run_one(&sc, &folder, true, &task.label, None, manifest.threads)?;
        folder.finish()?;
        Ok(summary)
    })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_lines_become_a_map_of_first_words() {
        let map = pairs("12_0|RUNNING\n12_1|PENDING\n\n13_0|CANCELLED by 0\n");
        assert_eq!(map.len(), 3);
        assert_eq!(map["12_0"], "RUNNING");
        assert_eq!(map["13_0"], "CANCELLED");
    }

    #[test]
    fn quoted_paths_reach_the_shell_unchanged() {
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
