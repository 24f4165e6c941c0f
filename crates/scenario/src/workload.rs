//! Resolved workloads and the flows they generate.

use rand::Rng;
use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_workload::chakra::CtrlDeps;
use shoal_workload::collective::{CollectivePlan, CollectiveSpec};
use shoal_workload::dag::DagSource;
use shoal_workload::disagg::{App, DisaggSpec};
use shoal_workload::generator::{ClosedLoopSpec, OpenLoopSpec};
use shoal_workload::patterns;
use shoal_workload::{ClosedLoop, Disagg, Flow, FlowSource, IterSource, OpenLoop, TraceSource};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// A workload with every default filled in and every value checked against the rack.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkloadSpec {
    /// `pairs` flows of a random permutation (Fig. 9, Fig. 12): every node sends at most one
    /// flow and receives at most one.
    Permutation {
        pairs: usize,
        flow_bytes: u64,
        start: Time,
    },
    /// Every sender sends `flow_bytes` to `dst` at `start` (Fig. 10, Fig. 13).
    Incast {
        senders: Vec<NodeId>,
        dst: NodeId,
        flow_bytes: u64,
        start: Time,
    },
    /// `flows` flows between uniformly random distinct nodes (§7.2 fairness); with
    /// `distinct_pairs`, no ordered (src, dst) pair repeats.
    RandomPairs {
        flows: usize,
        flow_bytes: u64,
        start: Time,
        distinct_pairs: bool,
    },
    /// `probes` flows of `probe_bytes` from `src` to `dst`, one every `period` from `first`,
    /// over optional random background traffic among the other nodes (Fig. 14).
    Probe {
        src: NodeId,
        dst: NodeId,
        probe_bytes: u64,
        period: Dur,
        probes: usize,
        first: Time,
        background: Option<Background>,
    },
    /// Open-loop traffic (§7.3): sizes from a distribution, Poisson arrivals (at a load by the
    /// paper's definition, or a mean gap) or all at `start`, pairs from a traffic matrix.
    OpenLoop {
        spec: OpenLoopSpec,
        start: Time,
        /// R of the load formula L = F/(R·N·τ): the rack's per-node bandwidth unless the
        /// scenario names another (`load_node_gbps`).
        load_rate: Rate,
        /// The load as the file gave it (`workload.load`), which the arrivals were drawn for;
        /// `None` when the file gave a mean gap or no arrival rate.
        load: Option<f64>,
    },
    /// `per_source` flows outstanding per sender; each completion starts the next.
    ClosedLoop(ClosedLoopSpec),
    /// The disaggregated-rack applications of §7.4.
    Disaggregated { app: App, spec: DisaggSpec },
    /// Flows replayed from a CSV file (`src,dst,size_bytes,start_ns`), checked when resolved.
    Trace { path: PathBuf, flows: u64 },
    /// The connections of an htsim connection-matrix file (`.cm`), read and checked when
    /// resolved, so that htsim and shoal run the same flows.
    ConnectionMatrix { path: PathBuf, flows: Vec<Flow> },
    /// A dependency graph of sends and compute steps read from a file
    /// (`shoal_workload::dag_file`), checked when resolved and read again by the run.
    Dag { path: PathBuf, sends: u64 },
    /// Chakra execution traces `prefix.<rank>.et` (`shoal_workload::chakra`), rank r on node
    /// `ranks[r]` (`listed` when the file gave them), their control dependencies read as
    /// `ctrl`; checked when resolved and read again by the run.
    Chakra {
        prefix: PathBuf,
        ranks: Vec<NodeId>,
        listed: bool,
        ctrl: CtrlDeps,
        sends: u64,
    },
    /// Collective jobs (`shoal_workload::collective`) side by side on disjoint nodes, their
    /// sends one dependency graph; `all_ranks` when a single job's ranks are every node in
    /// order (written back as `"all"`).
    Collective {
        jobs: Vec<CollectiveJob>,
        all_ranks: bool,
    },
}

/// One collective job of a run: `name` as `[[workload.jobs]]` gave it (none for the one job of
/// a `[workload]` table), its first sends at `start`.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveJob {
    pub name: Option<String>,
    pub spec: CollectiveSpec,
    pub start: Time,
}

impl CollectiveJob {
    /// The name summaries give the job: its own, or `job<k>` for the k-th.
    pub fn label(&self, k: usize) -> String {
        self.name.clone().unwrap_or_else(|| format!("job{k}"))
    }
}

/// The graph of every job of a resolved collective workload (checked when it resolved).
pub fn collective_plan(jobs: &[CollectiveJob]) -> Result<CollectivePlan, String> {
    let list: Vec<(CollectiveSpec, Dur)> = jobs
        .iter()
        .map(|j| (j.spec.clone(), Dur(j.start.0)))
        .collect();
    CollectivePlan::of_jobs(&list).map_err(|(k, e)| format!("{}: {e}", jobs[k].label(k)))
}

/// Random-pairs traffic among every node except the probe's source and destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Background {
    pub flows: usize,
    pub flow_bytes: u64,
    pub start: Time,
}

impl WorkloadSpec {
    /// The name used in scenario files.
    pub fn kind(&self) -> &'static str {
        match self {
            WorkloadSpec::Permutation { .. } => "permutation",
            WorkloadSpec::Incast { .. } => "incast",
            WorkloadSpec::RandomPairs { .. } => "random-pairs",
            WorkloadSpec::Probe { .. } => "probe",
            WorkloadSpec::OpenLoop { .. } => "open-loop",
            WorkloadSpec::ClosedLoop(_) => "closed-loop",
            WorkloadSpec::Disaggregated { .. } => "disaggregated",
            WorkloadSpec::Trace { .. } => "trace",
            WorkloadSpec::ConnectionMatrix { .. } => "connection-matrix",
            WorkloadSpec::Collective { .. } => "collective",
            WorkloadSpec::Dag { .. } => "dag",
            WorkloadSpec::Chakra { .. } => "chakra",
        }
    }

    /// R of the load formula when the workload names one (open-loop), for reporting the load
    /// realised in the same terms as the one asked for.
    pub fn load_rate(&self) -> Option<Rate> {
        match self {
            WorkloadSpec::OpenLoop { load_rate, .. } => Some(*load_rate),
            _ => None,
        }
    }

    /// Whether the workload streams flows without end (the run's limits must stop it).
    pub fn is_unbounded(&self) -> bool {
        match self {
            WorkloadSpec::OpenLoop { spec, .. } => spec.max_flows.is_none(),
            WorkloadSpec::ClosedLoop(spec) => {
                spec.max_flows.is_none() && spec.max_per_source.is_none()
            }
            WorkloadSpec::Disaggregated { spec, .. } => spec.max_flows.is_none(),
            _ => false,
        }
    }

    /// Whether the flows are a list fixed before the run (the microbenchmark kinds), rather
    /// than a stream generated as the run goes.
    pub fn is_list(&self) -> bool {
        matches!(
            self,
            WorkloadSpec::Permutation { .. }
                | WorkloadSpec::Incast { .. }
                | WorkloadSpec::RandomPairs { .. }
                | WorkloadSpec::Probe { .. }
        )
    }

    /// The workload as a source for a fabric, its streams derived from `seed`. List kinds are
    /// drawn from `rng`.
    pub fn source(
        &self,
        nodes: usize,
        seed: u64,
        rng: &mut impl Rng,
    ) -> Result<Box<dyn FlowSource>, String> {
        Ok(match self {
            WorkloadSpec::OpenLoop { spec, start, .. } => {
                let stream = OpenLoop::new(spec.clone(), seed).map_err(|e| e.to_string())?;
                let start = *start;
                Box::new(IterSource::new(stream.map(move |mut f| {
                    f.start = Time(f.start.0 + start.0);
                    f
                })))
            }
            WorkloadSpec::ClosedLoop(spec) => {
                Box::new(ClosedLoop::new(spec.clone(), seed).map_err(|e| e.to_string())?)
            }
            WorkloadSpec::Disaggregated { spec, .. } => {
                Box::new(Disagg::new(spec.clone(), seed).map_err(|e| e.to_string())?)
            }
            WorkloadSpec::Trace { path, .. } => {
                Box::new(TraceSource::open(path, nodes).map_err(|e| e.to_string())?)
            }
            WorkloadSpec::ConnectionMatrix { flows, .. } => {
                Box::new(IterSource::new(flows.clone()))
            }
            WorkloadSpec::Collective { jobs, .. } => {
                Box::new(DagSource::new(collective_plan(jobs)?.dag, Time::ZERO))
            }
            WorkloadSpec::Dag { path, .. } => {
                let dag = shoal_workload::dag_file::read(path, nodes).map_err(|e| e.to_string())?;
                Box::new(DagSource::new(dag, Time::ZERO))
            }
            WorkloadSpec::Chakra {
                prefix,
                ranks,
                ctrl,
                ..
            } => {
                let imported = shoal_workload::chakra::read(prefix, ranks, *ctrl)
                    .map_err(|e| e.to_string())?;
                Box::new(DagSource::new(imported.dag, Time::ZERO))
            }
            list => Box::new(IterSource::new(list.generate(nodes, rng))),
        })
    }

    /// One paragraph on what the workload draws, with the parameters a reader of the results
    /// needs (sizes and their drawn mean, arrivals and the load they offer, the matrix; for the
    /// disaggregated applications the whole profile), for run summaries.
    pub fn describe(&self, seed: u64, node_rate: Rate) -> String {
        let built = match self {
            WorkloadSpec::OpenLoop {
                spec,
                load_rate,
                start,
                load,
            } => OpenLoop::new(spec.clone(), seed).map(|g| {
                let mut summary = g.summary(*load_rate);
                // The load the file asked for, not the one computed back from the gap.
                if load.is_some() {
                    summary.offered_load = *load;
                }
                match *start {
                    Time::ZERO => summary.to_string(),
                    _ => format!("{summary}; every start shifted by {start}"),
                }
            }),
            WorkloadSpec::ClosedLoop(spec) => {
                ClosedLoop::new(spec.clone(), seed).map(|g| g.summary().to_string())
            }
            WorkloadSpec::Disaggregated { spec, .. } => {
                return match Disagg::new(spec.clone(), seed) {
                    Ok(g) => format!("{}\n{}", g.summary(node_rate), spec.profile.describe()),
                    Err(e) => e.to_string(),
                };
            }
            WorkloadSpec::Trace { path, flows } => {
                return format!("trace {} ({flows} flows)", path.display());
            }
            WorkloadSpec::Dag { path, sends } => {
                return format!("dependency graph {} ({sends} sends)", path.display());
            }
            WorkloadSpec::Chakra {
                prefix,
                ranks,
                sends,
                ..
            } => {
                return format!(
                    "Chakra traces {}.<rank>.et ({} ranks, {sends} sends)",
                    prefix.display(),
                    ranks.len()
                );
            }
            WorkloadSpec::ConnectionMatrix { path, flows } => {
                return format!(
                    "connection matrix {} ({} flows)",
                    path.display(),
                    flows.len()
                );
            }
            WorkloadSpec::Collective { jobs, .. } => {
                let all: Vec<String> = jobs
                    .iter()
                    .enumerate()
                    .map(|(k, j)| match jobs.len() {
                        1 => describe_collective(&j.spec, j.start),
                        _ => format!("{}: {}", j.label(k), describe_collective(&j.spec, j.start)),
                    })
                    .collect();
                return all.join("; ");
            }
            list => {
                return format!("{} ({} flows)", list.kind(), self.flow_count().unwrap_or(0));
            }
        };
        built.unwrap_or_else(|e| e.to_string())
    }

    /// Flows the workload will hand out, if known before the run.
    pub fn flow_count(&self) -> Option<u64> {
        match self {
            WorkloadSpec::Permutation { pairs, .. } => Some(*pairs as u64),
            WorkloadSpec::Incast { senders, .. } => Some(senders.len() as u64),
            WorkloadSpec::RandomPairs { flows, .. } => Some(*flows as u64),
            WorkloadSpec::Probe {
                probes, background, ..
            } => Some(*probes as u64 + background.map_or(0, |b| b.flows as u64)),
            WorkloadSpec::OpenLoop { spec, .. } => spec.max_flows,
            WorkloadSpec::ClosedLoop(spec) => spec.max_flows,
            WorkloadSpec::Disaggregated { spec, .. } => spec.max_flows,
            WorkloadSpec::Trace { flows, .. } => Some(*flows),
            WorkloadSpec::Dag { sends, .. } | WorkloadSpec::Chakra { sends, .. } => Some(*sends),
            WorkloadSpec::ConnectionMatrix { flows, .. } => Some(flows.len() as u64),
            WorkloadSpec::Collective { jobs, .. } => {
                u64::try_from(jobs.iter().map(|j| j.spec.sends()).sum::<u128>()).ok()
            }
        }
    }

    /// The flows of a list workload in a rack of `nodes`, drawn from `rng`, sorted by start
    /// time with ids `0..`; empty for the streaming kinds (see [`WorkloadSpec::source`]). The
    /// spec must have been validated against `nodes` (the resolver does).
    pub fn generate(&self, nodes: usize, rng: &mut impl Rng) -> Vec<Flow> {
        let list = match *self {
            WorkloadSpec::Permutation {
                pairs,
                flow_bytes,
                start,
            } => patterns::permutation(nodes, pairs, flow_bytes, start, rng),
            WorkloadSpec::Incast {
                ref senders,
                dst,
                flow_bytes,
                start,
            } => patterns::incast(senders, dst, flow_bytes, start),
            WorkloadSpec::RandomPairs {
                flows,
                flow_bytes,
                start,
                distinct_pairs,
            } => {
                if distinct_pairs {
                    distinct_random_pairs(nodes, flows, flow_bytes, start, rng)
                } else {
                    patterns::random_pairs(nodes, flows, flow_bytes, start, rng)
                }
            }
            WorkloadSpec::Probe {
                src,
                dst,
                probe_bytes,
                period,
                probes,
                first,
                background,
            } => {
                let probe = patterns::periodic(src, dst, probe_bytes, first, period, probes);
                let others: Vec<NodeId> = (0..nodes)
                    .map(|i| NodeId(i as u16))
                    .filter(|&n| n != src && n != dst)
                    .collect();
                let background = match background {
                    Some(b) if b.flows > 0 => {
                        let mut flows = patterns::random_pairs(
                            others.len(),
                            b.flows,
                            b.flow_bytes,
                            b.start,
                            rng,
                        );
                        for f in &mut flows {
                            f.src = others[f.src.idx()];
                            f.dst = others[f.dst.idx()];
                        }
                        flows
                    }
                    _ => Vec::new(),
                };
                return patterns::merge(vec![probe, background]);
            }
            WorkloadSpec::OpenLoop { .. }
            | WorkloadSpec::ClosedLoop(_)
            | WorkloadSpec::Disaggregated { .. }
            | WorkloadSpec::Trace { .. }
            | WorkloadSpec::Dag { .. }
            | WorkloadSpec::Chakra { .. }
            | WorkloadSpec::ConnectionMatrix { .. }
            | WorkloadSpec::Collective { .. } => return Vec::new(),
        };
        patterns::merge(vec![list])
    }
}

/// A collective job in one line: what, over how many ranks, the message, the sends.
fn describe_collective(spec: &CollectiveSpec, start: Time) -> String {
    let n = spec.ranks.len();
    let mut text = format!(
        "collective {} ({}) over {n} ranks, {} B per rank{}, {} steps and {} sends an iteration, \
         {} iteration{}",
        spec.op,
        spec.algorithm,
        spec.message_bytes,
        match spec.chunks {
            1 => String::new(),
            c => format!(" in {c} chunks a message"),
        },
        spec.steps(),
        spec.sends_per_iteration(),
        spec.iterations,
        if spec.iterations == 1 { "" } else { "s" }
    );
    if spec.iterations > 1 {
        text.push_str(&format!(" {} apart", spec.compute));
    }
    if start != Time::ZERO {
        text.push_str(&format!(" from {start}"));
    }
    text
}

/// `count` random pairs with no ordered pair drawn twice (rejection sampling over the same
/// draws `random_pairs` makes; `count` must not exceed `n (n - 1)`).
fn distinct_random_pairs(
    n: usize,
    count: usize,
    bytes: u64,
    start: Time,
    rng: &mut impl Rng,
) -> Vec<Flow> {
    let mut seen = BTreeSet::new();
    let mut flows = Vec::with_capacity(count);
    while flows.len() < count {
        for f in patterns::random_pairs(n, 1, bytes, start, rng) {
            if seen.insert((f.src, f.dst)) {
                flows.push(f);
            }
        }
    }
    flows
}
