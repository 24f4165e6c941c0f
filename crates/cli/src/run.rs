//! `shoal run`: run a scenario and write its results folder.

use crate::batch::{self, Job};
use crate::folder::{self, Folder};
use crate::record::{self, DbArgs, Recorder};
use crate::replicate;
use crate::slurm::{BackendArgs, Dispatched};
use anyhow::Result;
use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use shoal_base::Time;
use shoal_fabric::{Progress, RunOutput};
use shoal_metrics::{DestThroughput, FlowRecord, FlowSummary, IdealFct, realised_load};
use shoal_scenario::{DEFAULT_SCENARIO, Scenario, SweepValue, TOOL_VERSION};
use shoal_workload::collective::CollectivePlan;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Run a scenario (the Shoal rack, or a packet-switched baseline: dctcp, dcqcn, ndp, tcp,
/// mptcp, r2c2) and write its results folder.
///
/// With no SCENARIO, runs the built-in default (scenarios/default.toml: the paper's 512-node
/// §7.1 rack under a permutation). Writes to DIR (default out/<scenario name>), every field
/// and column explained in docs/outputs.md:
///
///   summary.json   flows, completions, short-flow FCT (us: mean, p50, p99, p999) and
///                  slowdown, long-flow goodput (Gb/s), mean flow size and realised load,
///                  queue maxima (cells or packets: queue_unit), reordering (bytes), delivered
///                  Gb/s per node, simulated time (us), wall time (s), simulator speed,
///                  counters; for collective jobs each job's completion time, algbw, busbw
///                  and slowest rank's share
///   scenario.toml  the resolved scenario: every default filled in; `shoal run` on it repeats
///                  the run
///   flows.csv      id,src,dst,bytes,start_us,finish_us,fct_us (finish and fct empty for flows
///                  that did not complete); collective jobs add iteration,step,chunk,job
///   series.csv     when the scenario sets run.sample_every_us: queues and progress over time
///   breakdown.csv  Shoal with rack.breakdown = true: where each short flow's time went
///
/// A scenario with a [sweep] runs every point into DIR/<i>-<value>/ (the same files) and
/// writes DIR/sweep.csv (one row per point) and DIR/scenario.toml (the swept scenario). The
/// points run side by side, one per core (--jobs); each is a pure function of its scenario, so
/// only the wall time depends on how many run at once. The same sweep run again into the same
/// DIR resumes: points the results database (--db) holds as finished there are kept, the rest
/// run (--force runs all). --replications N runs each point (or the scenario) N times under
/// derived seeds and adds DIR/ci.csv, each metric's mean and 95% confidence interval.
///
/// Every run is recorded in the results database (default: shoal.db beside DIR; `shoal runs`).
///
/// Prints a short summary on stdout; progress goes to stderr (a bar on a terminal once the run
/// takes over a second, otherwise a line every 5 s).
#[derive(Args)]
#[command(verbatim_doc_comment)]
#[command(
    after_help = "Examples:\n  shoal run\n  shoal run scenarios/default.toml --seed 2 --out out/seed2\n  \
    shoal run my.toml --force --quiet\n  \
    shoal run scenarios/fig15-datacenter.toml --set run.completed_flows=20000 --threads 2"
)]
pub struct RunArgs {
    /// Scenario file (TOML, see docs/scenarios.md). Default: the built-in default scenario.
    #[arg(value_name = "SCENARIO.toml")]
    scenario: Option<PathBuf>,
    /// Results folder (created). Default: out/<scenario name>.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Change a key of the scenario before it runs, as if the file said so (repeatable; TOML
    /// values, quote strings: --set 'workload.matrix="uniform"'). The resolved scenario.toml
    /// records the result.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seed for every random choice, overriding the scenario's (0 to 2^63-1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(0..=i64::MAX as u64))]
    seed: Option<u64>,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
    /// Write into DIR even if it is not empty: the results an earlier run wrote there (as its
    /// .shoal-written lists: files and point folders) are removed first; other files stay. A
    /// sweep then runs every point again instead of resuming (keeping the points the database
    /// holds as finished).
    #[arg(long)]
    force: bool,
    /// Sweep points run at once. Default: the cores divided by --threads. Each needs its own
    /// memory (a 512-node Fig. 15 point about 0.5 GiB); 1 runs them one after the other.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    jobs: Option<u64>,
    /// Threads inside each run: the fast Shoal engine (the default wherever it covers the
    /// rack) cuts the rack into as many parts run side by side; other fabrics and the node
    /// engine use one. Outputs are
    /// identical for every count [default: 1].
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Independent replications of the scenario (of each sweep point): replication 0 uses
    /// the scenario's seed, replication r a seed derived from it (recorded in each folder's
    /// scenario.toml, the table and the database). Adds ci.csv: each metric's mean and 95%
    /// confidence interval over the replications.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    replications: u64,
    #[command(flatten)]
    db: DbArgs,
    #[command(flatten)]
    backend: BackendArgs,
}

/// Progress on stderr: an indicatif bar on a terminal (once the run has taken a second), a plain
/// line every 5 s otherwise.
struct CliProgress {
    quiet: bool,
    tty: bool,
    start: Instant,
    last_line: Instant,
    bar: Option<ProgressBar>,
    /// Flows the run will complete, when known in advance.
    total_flows: Option<u64>,
    until_us: Option<f64>,
    label: String,
    /// The terminal's bars when several runs go at once.
    bars: Option<MultiProgress>,
}

impl CliProgress {
    fn new(
        quiet: bool,
        total_flows: Option<u64>,
        until: Option<Time>,
        label: String,
        bars: Option<MultiProgress>,
    ) -> CliProgress {
        let now = Instant::now();
        CliProgress {
            bars,
            quiet,
            tty: std::io::stderr().is_terminal(),
            start: now,
            last_line: now,
            bar: None,
            total_flows,
            until_us: until.map(|t| t.as_us_f64()),
            label,
        }
    }

    fn sim_text(&self, now: Time) -> String {
        match self.until_us {
            Some(u) => format!("{:.1} of {u:.1} us simulated", now.as_us_f64()),
            None => format!("{:.1} us simulated", now.as_us_f64()),
        }
    }

    /// The wall time left, estimated from the share of the run done: the larger of the flows
    /// completed out of those the run waits for and the simulated time out of its horizon
    /// (a run ends at whichever comes first). None until a share is known and above 1%.
    fn time_left(&self, now: Time, completed: u64) -> Option<Duration> {
        let flows = self.total_flows.map(|t| completed as f64 / t.max(1) as f64);
        let sim = self
            .until_us
            .map(|u| now.as_us_f64() / u.max(f64::MIN_POSITIVE));
        let done = flows
            .into_iter()
            .chain(sim)
            .fold(0.0_f64, f64::max)
            .min(1.0);
        (done > 0.01).then(|| self.start.elapsed().mul_f64((1.0 - done) / done))
    }

    /// What the bar and the plain lines say beside the counts: simulated time and time left.
    fn message(&self, now: Time, completed: u64) -> String {
        match self.time_left(now, completed) {
            Some(left) => format!("{}, about {} left", self.sim_text(now), human(left)),
            None => self.sim_text(now),
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// A duration as a person reads it: "40 s", "12 min", "1.3 h".
pub(crate) fn human(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

impl Progress for CliProgress {
    fn update(&mut self, now: Time, completed: u64) {
        if self.quiet {
            return;
        }
        if self.tty {
            if self.bar.is_none() && self.start.elapsed() >= Duration::from_secs(1) {
                let style = ProgressStyle::with_template(
                    "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} flows  {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar());
                let bar = self
                    .total_flows
                    .map_or_else(ProgressBar::no_length, ProgressBar::new)
                    .with_style(style)
                    .with_prefix(self.label.clone())
                    .with_elapsed(self.start.elapsed());
                self.bar = Some(match &self.bars {
                    Some(bars) => bars.add(bar),
                    None => bar,
                });
            }
            let msg = self.message(now, completed);
            if let Some(bar) = &self.bar {
                bar.set_position(completed);
                bar.set_message(msg);
            }
        } else if self.last_line.elapsed() >= Duration::from_secs(5) {
            self.last_line = Instant::now();
            let of = self
                .total_flows
                .map_or_else(String::new, |t| format!(" of {t}"));
            eprintln!(
                "shoal run: {}: {completed}{of} flows completed, {:.0} s, {}",
                self.label,
                self.start.elapsed().as_secs_f64(),
                self.message(now, completed)
            );
        }
    }
}

#[derive(Serialize, Deserialize)]
pub(crate) struct FctStats {
    pub(crate) mean: f64,
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    pub(crate) p999: f64,
}

/// summary.json: everything but `wall_time_s` and `node_channel_slots_per_s` is a pure function
/// of (scenario, seed, version). Read back when a resumed sweep keeps a finished point.
#[derive(Serialize, Deserialize)]
pub(crate) struct Summary {
    pub(crate) fabric: String,
    pub(crate) scenario: String,
    pub(crate) nodes: usize,
    pub(crate) seed: u64,
    pub(crate) tool_version: String,
    /// Flows handed to the fabric.
    pub(crate) flows: usize,
    /// Of those, the ones the statistics cover: started at or after `run.measure_from_us`.
    pub(crate) flows_measured: usize,
    /// Measured flows that completed.
    pub(crate) flows_completed: usize,
    pub(crate) short_fct_us: Option<FctStats>,
    pub(crate) long_goodput_gbps: Option<f64>,
    /// Short-flow FCT over the FCT the flow would have alone on the idle fabric
    /// (`Scenario::ideal_fct`).
    pub(crate) short_slowdown: Option<FctStats>,
    /// What the workload draws, with its parameters.
    pub(crate) workload: String,
    /// Mean size of the measured flows.
    pub(crate) mean_flow_bytes: Option<f64>,
    /// Load the measured flows offered, L = F/(R·N·τ) (§7.3) from their sizes and start times.
    pub(crate) realised_load: Option<f64>,
    /// The unit of the three queue fields below: "cells" (shoal) or "packets" (packet fabrics:
    /// switch ports' bytes over the full packet size, rounded up, acks included). The names
    /// keep "cells" for compatibility.
    pub(crate) queue_unit: String,
    pub(crate) max_queue_cells: u64,
    pub(crate) max_node_queue_cells: u64,
    /// Of those, the most cells queued at one node for other sources.
    pub(crate) max_node_transit_cells: u64,
    pub(crate) max_reorder_bytes: u64,
    /// Payload delivered per receiving node from `run.measure_from_us` (or the start) to the
    /// end of the run, mean over the nodes that received anything: the throughput of long or
    /// unending flows, which flow completion statistics cannot show.
    pub(crate) delivered_gbps_per_node: Option<f64>,
    pub(crate) sim_time_us: f64,
    pub(crate) wall_time_s: f64,
    pub(crate) node_channel_slots_per_s: f64,
    pub(crate) counters: BTreeMap<String, u64>,
    /// A collective job's figures as NCCL's tests define them (`kind = "collective"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) collective: Option<CollectiveStats>,
}

/// A collective job's run, per iteration and over the job: completion time t (an iteration's
/// first send's start to its last send's delivery), algbw = S / t, busbw = algbw × 2(n−1)/n
/// (all-reduce) or × (n−1)/n (the others); rates from the mean completion time, as NCCL's tests
/// report them, in Gb/s. With several jobs, the first job's figures and every job's in `jobs`.
#[derive(Serialize, Deserialize)]
pub(crate) struct CollectiveStats {
    /// The job's name (`job<k>` for the k-th when the file gives none).
    pub(crate) name: String,
    pub(crate) op: String,
    pub(crate) algorithm: String,
    pub(crate) ranks: usize,
    pub(crate) message_bytes: u64,
    pub(crate) chunks: u32,
    pub(crate) iterations: u32,
    /// Iterations every send of which was delivered.
    pub(crate) iterations_completed: usize,
    /// Each completed iteration's completion time, in order.
    pub(crate) iteration_us: Vec<f64>,
    /// Mean over the completed iterations.
    pub(crate) completion_us: Option<f64>,
    pub(crate) algbw_gbps: Option<f64>,
    pub(crate) busbw_gbps: Option<f64>,
    /// The whole job: its first send's start to its last send's delivery, compute between
    /// iterations included; none unless every iteration completed.
    pub(crate) job_us: Option<f64>,
    /// (slowest rank's time − the median rank's) / slowest rank's time, a rank's time being
    /// from the iteration's first send to the last delivery into it; mean over the completed
    /// iterations (`CollectivePlan::slowest_rank`).
    pub(crate) slowest_rank_share: Option<f64>,
    /// The node slowest in the most iterations (the lowest id on a tie).
    pub(crate) slowest_rank: Option<u16>,
    /// Every job's figures, when the run has several (the first is the object's own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) jobs: Vec<CollectiveStats>,
}

/// The graph of a collective workload's jobs, to place each send in its job, iteration and
/// step.
fn collective_plan(sc: &Scenario) -> Option<CollectivePlan> {
    let shoal_scenario::WorkloadSpec::Collective { jobs, .. } = &sc.workload else {
        return None;
    };
    shoal_scenario::collective_plan(jobs).ok()
}

fn collective_stats(
    sc: &Scenario,
    plan: Option<&CollectivePlan>,
    out: &RunOutput,
) -> Option<CollectiveStats> {
    let shoal_scenario::WorkloadSpec::Collective { jobs, .. } = &sc.workload else {
        return None;
    };
    let plan = plan?;
    let records = || out.records.iter().map(|r| (r.id, r.start, r.finish));
    let mut all: Vec<CollectiveStats> = jobs
        .iter()
        .enumerate()
        .map(|(k, job)| {
            let spec = &job.spec;
            let times = plan.iteration_times(k as u32, records());
            let done: Vec<f64> = times.iter().flatten().map(|d| d.as_us_f64()).collect();
            let completion_us =
                (!done.is_empty()).then(|| done.iter().sum::<f64>() / done.len() as f64);
            let algbw_gbps = completion_us
                .filter(|&t| t > 0.0)
                .map(|t| spec.message_bytes as f64 * 8.0 / (t * 1e3));
            let mine = || {
                out.records
                    .iter()
                    .filter(|r| plan.place(r.id).is_some_and(|p| p.job == k as u32))
            };
            let job_us = (done.len() == times.len()).then(|| {
                let first = mine().map(|r| r.start).min().unwrap_or(Time::ZERO);
                let last = mine().filter_map(|r| r.finish).max().unwrap_or(first);
                last.since(first).as_us_f64()
            });
            let slowest = plan.slowest_rank(k as u32, records());
            CollectiveStats {
                name: job.label(k),
                op: spec.op.name().to_owned(),
                algorithm: spec.algorithm.name().to_owned(),
                ranks: spec.ranks.len(),
                message_bytes: spec.message_bytes,
                chunks: spec.chunks,
                iterations: spec.iterations,
                iterations_completed: done.len(),
                iteration_us: done,
                completion_us,
                algbw_gbps,
                busbw_gbps: algbw_gbps.map(|a| a * spec.op.bus_factor(spec.ranks.len())),
                job_us,
                slowest_rank_share: slowest.map(|s| s.0),
                slowest_rank: slowest.map(|s| s.1.0),
                jobs: Vec::new(),
            }
        })
        .collect();
    if all.len() == 1 {
        return all.pop();
    }
    let first = &all[0];
    let head = CollectiveStats {
        name: first.name.clone(),
        op: first.op.clone(),
        algorithm: first.algorithm.clone(),
        ranks: first.ranks,
        message_bytes: first.message_bytes,
        chunks: first.chunks,
        iterations: first.iterations,
        iterations_completed: first.iterations_completed,
        iteration_us: first.iteration_us.clone(),
        completion_us: first.completion_us,
        algbw_gbps: first.algbw_gbps,
        busbw_gbps: first.busbw_gbps,
        job_us: first.job_us,
        slowest_rank_share: first.slowest_rank_share,
        slowest_rank: first.slowest_rank,
        jobs: all,
    };
    Some(head)
}

fn summarize(
    sc: &Scenario,
    plan: Option<&CollectivePlan>,
    ideal: &IdealFct,
    out: &RunOutput,
    wall: Duration,
    run_wall: Duration,
) -> Summary {
    // Warm-up exclusion: flow statistics cover the flows that start from `measure_from` on;
    // with `measured_flows`, only the first N in start order (records are in that order).
    let from = sc.limits.measure_from.unwrap_or(Time::ZERO);
    let first = sc.limits.measured_flows.map_or(usize::MAX, |n| n as usize);
    let counted = |(i, r): &(usize, &FlowRecord)| *i < first && r.start >= from;
    // A copy only when some record is left out: a million records need not be duplicated.
    let measured: Cow<[FlowRecord]> = if out.records.iter().enumerate().all(|e| counted(&e)) {
        Cow::Borrowed(&out.records)
    } else {
        Cow::Owned(
            out.records
                .iter()
                .enumerate()
                .filter(counted)
                .map(|(_, r)| *r)
                .collect(),
        )
    };
    let fs = FlowSummary::with_ideal(&measured, ideal);
    let slots = out.counters.get("node_channel_slots").copied().unwrap_or(0);
    let run_s = run_wall.as_secs_f64();
    Summary {
        fabric: sc.fabric_name().to_owned(),
        scenario: sc.name.clone(),
        nodes: sc.nodes(),
        seed: sc.seed,
        tool_version: TOOL_VERSION.to_owned(),
        flows: out.records.len(),
        flows_measured: fs.flows,
        flows_completed: fs.completed,
        short_fct_us: fs.short_fct_us.map(|p| FctStats {
            mean: p.mean,
            p50: p.p50,
            p99: p.p99,
            p999: p.p999,
        }),
        long_goodput_gbps: fs.long_goodput_gbps.map(|p| p.mean),
        short_slowdown: fs.short_slowdown.map(|p| FctStats {
            mean: p.mean,
            p50: p.p50,
            p99: p.p99,
            p999: p.p999,
        }),
        workload: sc.workload.describe(sc.seed, sc.node_rate()),
        mean_flow_bytes: fs.mean_flow_bytes,
        realised_load: realised_load(
            &measured,
            sc.workload.load_rate().unwrap_or(sc.node_rate()).0 as f64,
            sc.nodes(),
        ),
        queue_unit: sc.fabric.queue_unit().to_owned(),
        max_queue_cells: out.queues.max_queue,
        max_node_queue_cells: out.queues.max_node_queue,
        max_node_transit_cells: out.queues.max_node_transit,
        max_reorder_bytes: out.queues.max_reorder_bytes,
        delivered_gbps_per_node: {
            let receivers: Vec<u64> = out
                .delivered_bytes
                .iter()
                .copied()
                .filter(|&b| b > 0)
                .collect();
            DestThroughput::of(&receivers, out.sim_time.since(from)).map(|t| t.mean_gbps)
        },
        sim_time_us: out.sim_time.as_us_f64(),
        wall_time_s: wall.as_secs_f64(),
        node_channel_slots_per_s: if run_s > 0.0 {
            slots as f64 / run_s
        } else {
            0.0
        },
        counters: out.counters.clone(),
        collective: collective_stats(sc, plan, out),
    }
}

/// `flows.csv`: one row per flow; for collective jobs each send's iteration, step, chunk and
/// job too.
fn write_flows(
    out: &mut std::fs::File,
    records: &[FlowRecord],
    plan: Option<&CollectivePlan>,
) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(out));
    let mut header = vec![
        "id",
        "src",
        "dst",
        "bytes",
        "start_us",
        "finish_us",
        "fct_us",
    ];
    if plan.is_some() {
        header.extend(["iteration", "step", "chunk", "job"]);
    }
    w.write_record(&header)?;
    for r in records {
        let finish = r
            .finish
            .map(|t| t.as_us_f64().to_string())
            .unwrap_or_default();
        let fct = r
            .fct()
            .map(|d| d.as_us_f64().to_string())
            .unwrap_or_default();
        let mut row = vec![
            r.id.to_string(),
            r.src.0.to_string(),
            r.dst.0.to_string(),
            r.bytes.to_string(),
            r.start.as_us_f64().to_string(),
            finish,
            fct,
        ];
        if let Some(plan) = plan {
            let place = plan.place(r.id);
            row.push(place.map(|p| p.iteration.to_string()).unwrap_or_default());
            row.push(place.map(|p| p.step.to_string()).unwrap_or_default());
            row.push(place.map(|p| p.chunk.to_string()).unwrap_or_default());
            row.push(place.map(|p| p.job.to_string()).unwrap_or_default());
        }
        w.write_record(&row)?;
    }
    w.flush()
}

/// Runs one scenario into `folder` (the summary written last; the caller finishes the folder);
/// returns its summary. `bars` holds the progress bars of runs going on beside it.
pub(crate) fn run_one(
    sc: &Scenario,
    folder: &Folder,
    quiet: bool,
    label: &str,
    bars: Option<&MultiProgress>,
    threads: usize,
) -> Result<Summary> {
    let started = Instant::now();
    let mut fabric = sc.build_fabric()?;
    fabric.set_threads(threads);
    let ideal = sc.ideal_fct()?;
    let (mut source, count) = sc.source()?;
    let total = match (sc.limits.completed_flows, count) {
        (Some(c), Some(n)) => Some(c.min(n)),
        (c, n) => c.or(n),
    };
    let mut progress = CliProgress::new(
        quiet,
        total,
        sc.limits.until,
        label.to_owned(),
        bars.cloned(),
    );
    let run_started = Instant::now();
    let result = fabric.run(source.as_mut(), sc.limits, &mut progress);
    let run_wall = run_started.elapsed();
    progress.finish();
    let out = result.map_err(|e| anyhow::anyhow!("{}: the run failed: {e}", sc.origin))?;
    // Built again from the scenario (the source's graph went with the run): the same graph.
    drop(source);
    let plan = collective_plan(sc);
    let summary = summarize(sc, plan.as_ref(), &ideal, &out, started.elapsed(), run_wall);
    let mut json = serde_json::to_string_pretty(&summary)?;
    json.push('\n');
    folder.write("scenario.toml", &sc.resolved_toml())?;
    folder.write_with("flows.csv", |f| write_flows(f, &out.records, plan.as_ref()))?;
    if !out.series.samples.is_empty() {
        folder.write_with("series.csv", |f| out.series.write_csv(f))?;
    }
    for (name, text) in &out.tables {
        folder.write(name, text)?;
    }
    // Last: a folder with a summary holds everything the summary describes.
    folder.write("summary.json", &json)?;
    Ok(summary)
}

pub(crate) fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_owned(), |x| format!("{x:.digits$}"))
}

fn print_summary(s: &Summary, dir: &Path) {
    println!(
        "scenario     {} ({} nodes, seed {})",
        s.scenario, s.nodes, s.seed
    );
    println!(
        "workload     {}",
        s.workload.replace('\n', "\n             ")
    );
    if s.flows_measured == s.flows {
        println!(
            "flows        {} of {} completed",
            s.flows_completed, s.flows
        );
    } else {
        println!(
            "flows        {} of {} measured completed ({} started before the warm-up ended)",
            s.flows_completed,
            s.flows_measured,
            s.flows - s.flows_measured
        );
    }
    if let Some(c) = &s.collective {
        let each = if c.jobs.is_empty() {
            std::slice::from_ref(c)
        } else {
            &c.jobs[..]
        };
        for c in each {
            println!(
                "collective   {}: {} of {} iterations, {} us each (mean), algbw {} Gb/s, busbw {} Gb/s, slowest rank's share {}",
                c.name,
                c.iterations_completed,
                c.iterations,
                opt(c.completion_us, 3),
                opt(c.algbw_gbps, 2),
                opt(c.busbw_gbps, 2),
                opt(c.slowest_rank_share, 3)
            );
        }
    }
    match &s.short_fct_us {
        Some(f) => println!(
            "short FCT    mean {:.2} us, p50 {:.2} us, p99 {:.2} us, p99.9 {:.2} us (flows <= 100 KB)",
            f.mean, f.p50, f.p99, f.p999
        ),
        None => println!("short FCT    - (no completed flow of 100 KB or less)"),
    }
    if let Some(f) = &s.short_slowdown {
        println!(
            "slowdown     mean {:.2}, p50 {:.2}, p99 {:.2}, p99.9 {:.2} (short flows, FCT / FCT alone on the idle fabric)",
            f.mean, f.p50, f.p99, f.p999
        );
    }
    match s.long_goodput_gbps {
        Some(g) => println!("long goodput {g:.2} Gb/s mean (flows >= 1 MB)"),
        None => println!("long goodput - (no completed flow of 1 MB or more)"),
    }
    if let Some(g) = s.delivered_gbps_per_node {
        println!("throughput   {g:.2} Gb/s of payload per receiving node over the measured span");
    }
    println!(
        "offered      mean flow {} B, realised load {}",
        opt(s.mean_flow_bytes, 0),
        opt(s.realised_load, 3)
    );
    let u = &s.queue_unit;
    // The slotted rack counts node-channel-slots; the event-driven fabrics count events.
    if s.counters.contains_key("node_channel_slots") {
        println!(
            "queues       max {} {u} in one queue, {} {u} at one node ({} in transit); \
             max reordering {} B",
            s.max_queue_cells,
            s.max_node_queue_cells,
            s.max_node_transit_cells,
            s.max_reorder_bytes
        );
        println!(
            "time         {:.3} us simulated in {:.2} s ({:.2} M node-channel-slots/s)",
            s.sim_time_us,
            s.wall_time_s,
            s.node_channel_slots_per_s / 1e6
        );
    } else {
        println!(
            "queues       max {} {u} in one switch port, {} {u} at one switch; max reordering {} B",
            s.max_queue_cells, s.max_node_queue_cells, s.max_reorder_bytes
        );
        let events = s.counters.get("events").copied().unwrap_or(0);
        println!(
            "time         {:.3} us simulated in {:.2} s ({:.2} M events/s)",
            s.sim_time_us,
            s.wall_time_s,
            events as f64 / s.wall_time_s.max(1e-9) / 1e6
        );
    }
    println!("results      {}", dir.display());
}

/// A directory-name-safe form of a sweep label or scenario name: ASCII letters, digits, '.'
/// and '-' stay, anything else becomes '_'.
///
/// The result is one folder name, never "", "." or "..": those would make `out/<name>` the
/// folder `out` itself or its parent, and a run would write into a folder it did not create.
pub(crate) fn safe(label: &str) -> String {
    let name: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    match name.as_str() {
        "" => "_".to_owned(),
        "." | ".." => "_".repeat(name.len()),
        _ => name,
    }
}

pub fn main(args: RunArgs) -> Result<ExitCode> {
    args.backend.check(args.db.enabled())?;
    let mut sc = match &args.scenario {
        Some(path) => shoal_scenario::load(path)?,
        None => shoal_scenario::parse(DEFAULT_SCENARIO, shoal_scenario::DEFAULT_ORIGIN)?,
    };
    sc = crate::compare::apply(sc, &crate::compare::settings(&args.set)?)?;
    if let Some(seed) = args.seed {
        sc = sc.with_seed(seed);
    }
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(safe(&sc.name)));
    let per_run = args.threads.map_or(1, |t| t as usize);
    let replications = args.replications;
    if sc.sweep.is_none() && replications == 1 {
        if args.backend.slurm() {
            anyhow::bail!(
                "--backend slurm submits the points of a sweep or the replications of a \
                 scenario (--replications N); a single run runs here"
            );
        }
        Recorder::check(&args.db, &dir)?;
        let folder = Folder::open(&dir, args.force)?;
        let recorder = Recorder::open(&args.db, &dir)?;
        let summary = recorder.scenario("run", &sc, &dir, None, || {
            run_one(&sc, &folder, args.quiet, &sc.name, None, per_run)
        })?;
        folder.finish()?;
        print_summary(&summary, &dir);
        return Ok(ExitCode::SUCCESS);
    }

    // The same sweep (the same document) into the folder an earlier run of it left, whole or
    // killed half-way: finish it, keeping the points that finished.
    let document = sc.document_toml();
    let resuming =
        !args.force && args.db.enabled() && folder::holds(&dir, "scenario.toml", &document);
    Recorder::check(&args.db, &dir)?;
    let folder = if resuming {
        Folder::reopen(&dir)?
    } else {
        Folder::open(&dir, args.force)?
    };
    // Opened once the folder is: a refused run leaves no database behind.
    let recorder = Recorder::open(&args.db, &dir)?.in_series("run", &dir)?;
    crate::slurm::settle_earlier(&args.backend, &recorder, &dir)?;
    let parameter = sc.sweep.as_ref().map(|s| s.parameter.clone());
    let base: Vec<(Option<SweepValue>, Scenario)> = match &sc.sweep {
        Some(_) => sc
            .sweep_points()?
            .into_iter()
            .map(|(v, p)| (Some(v), p))
            .collect(),
        None => vec![(None, sc.clone())],
    };
    let points = replicate::expand(&base, replications);
    folder.write("scenario.toml", &document)?;
    let (table_name, kind) = match parameter {
        Some(_) => ("sweep.csv", "sweep-point"),
        None => ("replications.csv", "replication"),
    };
    let mut table = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = parameter.iter().map(String::as_str).collect();
    header.push("dir");
    if replications > 1 {
        header.extend(["replication", "seed"]);
    }
    header.extend([
        "flows",
        "flows_completed",
        "short_fct_mean_us",
        "short_fct_p99_us",
        "long_goodput_gbps",
        "max_queue_cells",
        "sim_time_us",
        "short_fct_p999_us",
        "short_slowdown_p99",
        "max_node_queue_cells",
        "max_reorder_bytes",
        "mean_flow_bytes",
        "realised_load",
    ]);
    table.write_record(&header)?;
    // Each point: the summary of its earlier finished run, or a job to run.
    let mut kept: Vec<Option<Summary>> = Vec::with_capacity(points.len());
    let mut jobs = Vec::with_capacity(points.len());
    for point in &points {
        let path = dir.join(&point.folder);
        folder.note(&point.folder)?;
        match recorder.keep_or_open(&point.sc, &path, resuming, args.force)? {
            Ok(summary) => kept.push(Some(summary)),
            Err(folder) => {
                jobs.push(Job {
                    sc: &point.sc,
                    folder,
                    label: point.label(parameter.as_deref(), replications),
                    swept: point.swept(parameter.as_deref()),
                });
                kept.push(None);
            }
        }
    }
    if resuming && !args.quiet {
        record::say_resumed("run", &dir, "points", points.len(), jobs.len());
    }
    let threads = batch::threads(args.jobs, per_run);
    let results = batch::run_or_submit(
        &args.backend,
        jobs,
        threads,
        per_run,
        args.quiet,
        "shoal run: point",
        &recorder,
        kind,
        &folder,
    )?;
    let Dispatched::Ran(results) = results else {
        return Ok(ExitCode::SUCCESS);
    };
    let mut results = results.into_iter();
    let mut rows = Vec::new();
    let mut summaries = Vec::new();
    // The table keeps the points before the first failure, whose folders are complete.
    let mut failure = None;
    for (point, done) in points.iter().zip(kept) {
        let s = match done {
            Some(s) => s,
            None => {
                let result = results.next().expect("a job per point not kept");
                match result {
                    Ok(s) => s,
                    Err(e) => {
                        // Its message names the point (the scenario's origin does).
                        failure = Some(e);
                        break;
                    }
                }
            }
        };
        let short = s.short_fct_us.as_ref();
        let mut row: Vec<String> = point.value.iter().map(|v| v.to_string()).collect();
        row.push(point.folder.clone());
        if replications > 1 {
            row.extend([point.replication.to_string(), point.sc.seed.to_string()]);
        }
        row.extend([
            s.flows.to_string(),
            s.flows_completed.to_string(),
            opt(short.map(|f| f.mean), 3),
            opt(short.map(|f| f.p99), 3),
            opt(s.long_goodput_gbps, 3),
            s.max_queue_cells.to_string(),
            format!("{:.3}", s.sim_time_us),
        ]);
        // The CSV has more columns than the table: the rest of the summary's figures.
        let more = [
            opt(short.map(|f| f.p999), 3),
            opt(s.short_slowdown.as_ref().map(|f| f.p99), 3),
            s.max_node_queue_cells.to_string(),
            s.max_reorder_bytes.to_string(),
            opt(s.mean_flow_bytes, 1),
            opt(s.realised_load, 4),
        ];
        // Empty cells in the CSV where the table shows "-", so pandas reads them as missing.
        let csv_row: Vec<&str> = row
            .iter()
            .chain(&more)
            .map(|c| if c == "-" { "" } else { c.as_str() })
            .collect();
        table.write_record(&csv_row)?;
        warn_unrealised_load(
            "shoal run",
            parameter.as_deref(),
            point.value.as_ref(),
            &point.folder,
            &s,
        );
        rows.push(row);
        summaries.push(s);
    }
    // The table holds the points that finished, written whole even when one failed.
    let table = table
        .into_inner()
        .map_err(|e| anyhow::anyhow!("{table_name}: {e}"))?;
    folder.write_with(table_name, |f| f.write_all(&table))?;
    if let Some(e) = failure {
        return Err(e);
    }
    if replications > 1 {
        let intervals = replicate::intervals(&points, &summaries);
        folder.write_with(replicate::CI_FILE, |f| {
            replicate::write_csv(f, parameter.as_deref(), &intervals, false)
        })?;
        folder.finish()?;
        replicate::print(parameter.as_deref(), &intervals, false);
    } else {
        folder.finish()?;
        let mut header: Vec<&str> = parameter.iter().map(String::as_str).collect();
        header.extend([
            "dir",
            "flows",
            "done",
            "short mean us",
            "short p99 us",
            "long Gb/s",
            "max queue",
            "sim us",
        ]);
        crate::repro::print_table(&header, &rows);
    }
    println!("results      {}", dir.display());
    std::io::stdout().flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Warns when a point of a sweep over `workload.load` offered, over its measured flows, a load
/// more than 10% from the one it asked for: tables and figures against the swept value show
/// the load asked for (issue 40: "0.9" realised 0.71 at 20,000 flows), and the CSV's
/// `realised_load` the one that ran.
pub(crate) fn warn_unrealised_load(
    command: &str,
    parameter: Option<&str>,
    value: Option<&SweepValue>,
    what: &str,
    s: &Summary,
) {
    if parameter != Some("workload.load") {
        return;
    }
    let (Some(asked), Some(real)) = (value.and_then(SweepValue::as_f64), s.realised_load) else {
        return;
    };
    if (real - asked).abs() > 0.1 * asked {
        eprintln!(
            "{command}: {what}: workload.load = {asked} offered {real:.3} over its measured \
             flows (realised_load in the CSV); a figure against workload.load places the \
             point at the load asked for (compare's x axis names both). The flows of a short run (few of a heavy-tailed size distribution, or \
             stopped by run.completed_flows before a steady state) offer a load far from the one \
             asked for: more flows bring the two closer"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{CliProgress, Duration, Instant, Time, human, safe};

    #[test]
    fn safe_names_one_folder_and_never_the_current_or_parent_one() {
        assert_eq!(safe("fig15-dctcp"), "fig15-dctcp");
        assert_eq!(safe("0.5"), "0.5");
        assert_eq!(safe("a/b c"), "a_b_c");
        assert_eq!(safe(""), "_");
        assert_eq!(safe("."), "_");
        assert_eq!(safe(".."), "__");
        assert_eq!(safe("..."), "...");
        assert_eq!(safe("../x"), ".._x");
    }

    #[test]
    fn the_time_left_follows_the_larger_share_done() {
        let us = |us: u64| Time(us * 1_000_000);
        let mut p = CliProgress::new(true, Some(1000), Some(us(100)), "x".into(), None);
        p.start = Instant::now() - Duration::from_secs(10);
        let left = |p: &CliProgress, at, flows| p.time_left(us(at), flows);
        // Nothing known done yet: no estimate.
        assert_eq!(left(&p, 0, 0), None);
        // A quarter of the flows and half the horizon: the run is at least half done.
        let half = left(&p, 50, 250).expect("an estimate").as_secs_f64();
        assert!((9.9..10.2).contains(&half), "{half}");
        p.total_flows = None;
        let quarter = left(&p, 25, 0).expect("an estimate").as_secs_f64();
        assert!((29.9..30.2).contains(&quarter), "{quarter}");
        assert_eq!(human(Duration::from_secs(40)), "40 s");
        assert_eq!(human(Duration::from_secs(720)), "12 min");
        assert_eq!(human(Duration::from_secs(4680 + 3600)), "2.3 h");
    }
}
