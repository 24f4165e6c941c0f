//! Several runs at once: the points of a sweep (`shoal run`) or the fabrics of a comparison
//! (`shoal compare`), each on its own thread, their results in job order.
//!
//! Every run is a pure function of its scenario and writes only its own folder, so the number
//! of threads changes the wall time and nothing else (DESIGN.md, principles 5 and 9).

use crate::run::{Summary, run_one};
use anyhow::Result;
use indicatif::MultiProgress;
use shoal_scenario::Scenario;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// One run of a batch.
pub(crate) struct Job<'a> {
    pub sc: &'a Scenario,
    /// Its results folder, already prepared.
    pub dir: PathBuf,
    pub label: String,
}

/// The `--jobs` value, or by default one thread per core the process may use.
pub(crate) fn threads(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs `jobs` on up to `threads` threads, starting them in order, and returns their summaries
/// in job order. After a failure no further job starts; the error of the first failed job is
/// returned once the running ones have finished. `what` starts each progress line, e.g.
/// "shoal run: point".
pub(crate) fn run_all(
    jobs: &[Job],
    threads: usize,
    quiet: bool,
    what: &str,
) -> Result<Vec<Summary>> {
    let threads = threads.clamp(1, jobs.len().max(1));
    // Bars of runs in flight share the terminal; with one thread there is one at a time.
    let bars = (threads > 1).then(MultiProgress::new);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<Summary>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    if failed.load(Ordering::SeqCst) {
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else {
                        return;
                    };
                    if !quiet {
                        let line = format!("{what} {} of {}: {}", i + 1, jobs.len(), job.label);
                        match &bars {
                            Some(m) => {
                                let _ = m.println(line);
                            }
                            None => eprintln!("{line}"),
                        }
                    }
                    let result = run_one(job.sc, &job.dir, quiet, &job.label, bars.as_ref());
                    if result.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(result);
                }
            });
        }
    });
    // Jobs start in index order and none starts after a failure, so a job that never ran comes
    // after a failed one, and the first error in job order is the one to report.
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(anyhow::anyhow!("not run after an earlier failure"))))
        .collect()
}
