//! Several runs at once (by `shoal_base::par::map`): the points of a sweep (`shoal run`), the fabrics of a comparison
//! (`shoal compare`) or the experiments of `shoal repro`, each on its own thread, their results
//! in job order.
//!
//! Every run is a pure function of its scenario and writes only its own files, so the number
//! of threads changes the wall time and nothing else (DESIGN.md, principles 5 and 9).

use crate::folder::Folder;
use crate::record::Recorder;
use crate::run::human;
use crate::run::{Summary, run_one};
use crate::slurm::{self, BackendArgs, Dispatched};
use anyhow::Result;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use shoal_base::par::map;
use shoal_scenario::Scenario;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

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
    // On a terminal the bars of runs in flight share it below the batch's own bar; elsewhere
    // (a log file) each run prints lines, and the batch a line as each run ends.
    let tty = std::io::stderr().is_terminal();
    let bars = (tty && !quiet && jobs.len() > 1).then(MultiProgress::new);
    let overall = Overall::new(what, jobs.len(), bars.as_ref(), quiet);
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
        recorder
            .scenario(
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
            .inspect(|_| overall.one_done())
    };
    map(jobs, threads, run, Result::is_err)
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(anyhow::anyhow!("not run after an earlier failure"))))
        .collect()
}

/// The batch's progress over its runs, with the wall time left estimated from the runs
/// finished so far (runs differ in length, so it firms up as they end).
struct Overall {
    /// The command, e.g. "shoal compare".
    command: String,
    total: usize,
    done: AtomicUsize,
    start: Instant,
    bar: Option<ProgressBar>,
    quiet: bool,
}

impl Overall {
    fn new(what: &str, total: usize, bars: Option<&MultiProgress>, quiet: bool) -> Overall {
        let command = what.split(':').next().unwrap_or(what).to_owned();
        let bar = bars.map(|m| {
            let style = ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} runs  {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            m.add(
                ProgressBar::new(total as u64)
                    .with_style(style)
                    .with_prefix(command.clone()),
            )
        });
        Overall {
            command,
            total,
            done: AtomicUsize::new(0),
            start: Instant::now(),
            bar,
            quiet,
        }
    }

    fn one_done(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let elapsed = self.start.elapsed();
        let left = elapsed.mul_f64((self.total - done) as f64 / done as f64);
        let left = if done < self.total {
            format!(", about {} left", human(left))
        } else {
            String::new()
        };
        match &self.bar {
            Some(bar) => {
                bar.set_position(done as u64);
                bar.set_message(left.trim_start_matches(", ").to_owned());
                if done == self.total {
                    bar.finish_and_clear();
                }
            }
            None if !self.quiet && self.total > 1 => eprintln!(
                "{}: {done} of {} runs finished in {}{left}",
                self.command,
                self.total,
                human(elapsed)
            ),
            None => {}
        }
    }
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
