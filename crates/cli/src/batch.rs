//! Several runs at once (by `shoal_base::par::map`): the points of a sweep (`shoal run`), the fabrics of a comparison
//! (`shoal compare`) or the experiments of `shoal repro`, each on its own thread, their results
//! in job order.
//!
//! Every run is a pure function of its scenario and writes only its own files, so the number
//! of threads changes the wall time and nothing else (DESIGN.md, principles 5 and 9).

use crate::folder::Folder;
use crate::record::Recorder;
use crate::run::{Summary, run_one};
use crate::slurm::{self, BackendArgs, Dispatched};
use anyhow::Result;
use indicatif::MultiProgress;
use shoal_base::par::map;
use shoal_scenario::Scenario;

/// The `--jobs` value, or by default as many jobs of `per_run` threads each as the cores the
/// process may use hold (at least one).
pub(crate) fn threads(jobs: Option<u64>, per_run: usize) -> usize {
    jobs.map_or_else(
        || {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            (cores / per_run.max(1)).max(1)
        },
        |j| j as usize,
    )
}

/// One run of a sweep or comparison.
pub(crate) struct Job<'a> {
    pub sc: &'a Scenario,
    /// Its results folder, open.
    pub folder: Folder,
    pub label: String,
    /// The setting its point sweeps (`key = value`), recorded with its row.
    pub swept: Option<String>,
}

/// Runs `jobs` on up to `threads` threads (each run may use `per_run` threads of its own) and
/// returns their outcomes in job order, once all that started have finished; each job's folder
/// is finished when its run is. After a failure no further job starts; those left out come
/// after the failed one and read "not run after an earlier failure", so the first error in job
/// order is the one to report. `what` starts each progress line, e.g. "shoal run: point".
/// Each run is recorded in `recorder` as a `kind` row.
pub(crate) fn run_all(
    jobs: &[Job],
    threads: usize,
    per_run: usize,
    quiet: bool,
    what: &str,
    recorder: &Recorder,
    kind: &str,
) -> Vec<Result<Summary>> {
    // Bars of runs in flight share the terminal; with one thread there is one at a time.
    let bars = (threads.min(jobs.len()) > 1).then(MultiProgress::new);
    let run = |i: usize, job: &Job| {
        if !quiet {
            let line = format!("{what} {} of {}: {}", i + 1, jobs.len(), job.label);
            match &bars {
                Some(m) => {
                    let _ = m.println(line);
                }
                None => eprintln!("{line}"),
            }
        }
        // The folder is finished as soon as its run is, before its row reads done: a batch
        // killed later leaves this run complete, for a resumed one to keep.
        recorder.scenario(
            kind,
            job.sc,
            job.folder.path(),
            job.swept.as_deref(),
            || {
                let summary = run_one(
                    job.sc,
                    &job.folder,
                    quiet,
                    &job.label,
                    bars.as_ref(),
                    per_run,
                )?;
                job.folder.finish()?;
                Ok(summary)
            },
        )
    };
    map(jobs, threads, run, Result::is_err)
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(anyhow::anyhow!("not run after an earlier failure"))))
        .collect()
}

/// [`run_all`] here, or with `--backend slurm` the jobs submitted as a job array of the batch
/// whose results folder is `top` (`slurm::submit`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_or_submit(
    backend: &BackendArgs,
    jobs: Vec<Job>,
    threads: usize,
    per_run: usize,
    quiet: bool,
    what: &str,
    recorder: &Recorder,
    kind: &str,
    top: &Folder,
) -> Result<Dispatched> {
    if backend.slurm() {
        return slurm::submit(backend, jobs, per_run, recorder, kind, top, what);
    }
    Ok(Dispatched::Ran(run_all(
        &jobs, threads, per_run, quiet, what, recorder, kind,
    )))
}
