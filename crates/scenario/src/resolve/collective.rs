//! `kind = "collective"`: one collective job (`shoal_workload::collective`) over all the
//! fabric's nodes or a list of them, or several (`[[workload.jobs]]`) on disjoint nodes, each
//! listing its nodes or giving a count that `placement` places over the fabric's groups of
//! nodes (`ResolvedFabric::node_groups`: leaves, pods, TiNs, Fabric Adapters).

use super::Ctx;
use crate::ErrorKind;
use crate::ScenarioError;
use crate::raw::{RawJob, RawWorkload};
use crate::workload::{CollectiveJob, WorkloadSpec};
use shoal_base::{Dur, NodeId, Time};
use shoal_fabric::ResolvedFabric;
use shoal_workload::collective::{Algorithm, CollectiveError, CollectiveSpec, MAX_TASKS, Op};
use std::collections::BTreeMap;

/// At most this many iterations: with at most a second of compute between them, a job's
/// times stay far from the clock's end.
pub(crate) const MAX_ITERATIONS: i64 = 1_000_000;
/// At most this many chunks a message: beyond, pieces are smaller than a packet for any
/// message a job may hold.
const MAX_CHUNKS: i64 = 65_536;
/// Compute between iterations, at most a second (a larger value is a mistyped unit).
const MAX_COMPUTE_US: f64 = 1e6;
/// The keys of one job, at the top of `[workload]` for a single job.
const JOB_KEYS: [&str; 9] = [
    "op",
    "algorithm",
    "ranks",
    "message_bytes",
    "chunks",
    "group_size",
    "iterations",
    "compute_us",
    "start_us",
];

/// How jobs that give a count of ranks are placed on the nodes no job lists, over the groups
/// of one level of the fabric (all the nodes one group where the fabric has none).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placement {
    /// Each job on the next free nodes group by group (a group filled before the next), in
    /// id order within a group, the first job first.
    Packed,
    /// Each job in turn takes its nodes round-robin over the groups: the first free node of
    /// every group, then the second of every group, ...
    Spread,
}

/// A job's `ranks` before placement.
enum Ranks {
    All,
    Listed(Vec<NodeId>),
    Count(usize),
}

pub(super) fn resolve(
    ctx: &Ctx<'_>,
    mut w: RawWorkload,
    fabric: &dyn ResolvedFabric,
) -> Result<WorkloadSpec, ScenarioError> {
    let nodes = fabric.nodes();
    let Some(raw_jobs) = w.jobs.take() else {
        for (key, given) in [
            ("placement", w.placement.is_some()),
            ("placement_level", w.placement_level.is_some()),
        ] {
            if given {
                return Err(ctx.value(
                    &format!("workload.{key}"),
                    "placement places the jobs of [[workload.jobs]]; a single job lists its ranks",
                ));
            }
        }
        let job = RawJob {
            name: None,
            op: w.op,
            algorithm: w.algorithm,
            ranks: w.ranks,
            message_bytes: w.message_bytes,
            chunks: w.chunks,
            group_size: w.group_size,
            iterations: w.iterations,
            compute_us: w.compute_us,
            start_us: w.start_us,
        };
        let ranks = ranks(ctx, "workload.ranks", job.ranks.clone(), nodes, true)?;
        let given = job.ranks.is_some();
        let all = || (0..nodes).map(|i| NodeId(i as u16)).collect();
        let (list, all_ranks) = match ranks {
            Ranks::All => (all(), true),
            Ranks::Listed(l) => {
                let every = l.len() == nodes && l.iter().enumerate().all(|(i, r)| r.idx() == i);
                (l, every)
            }
            Ranks::Count(_) => unreachable!("a count is refused outside [[workload.jobs]]"),
        };
        let job = spec(ctx, "workload", job, list, given)?;
        return Ok(WorkloadSpec::Collective {
            jobs: vec![job],
            all_ranks,
        });
    };
    // With jobs, [workload] takes kind, placement, placement_level and jobs only.
    for key in JOB_KEYS {
        let given = match key {
            "op" => w.op.is_some(),
            "algorithm" => w.algorithm.is_some(),
            "ranks" => w.ranks.is_some(),
            "message_bytes" => w.message_bytes.is_some(),
            "chunks" => w.chunks.is_some(),
            "group_size" => w.group_size.is_some(),
            "iterations" => w.iterations.is_some(),
            "compute_us" => w.compute_us.is_some(),
            _ => w.start_us.is_some(),
        };
        if given {
            return Err(ctx.err(
                &format!("workload.{key}"),
                ErrorKind::UnknownKey,
                "with [[workload.jobs]] each job gives its own; [workload] takes kind, \
                 placement, placement_level and jobs",
            ));
        }
    }
    if raw_jobs.is_empty() {
        return Err(ctx.value("workload.jobs", "no job listed"));
    }
    let placement = match w.placement.as_deref() {
        None | Some("packed") => Placement::Packed,
        Some("spread") => Placement::Spread,
        Some(other) => {
            return Err(ctx.value(
                "workload.placement",
                format!("unknown placement {other:?}; known: packed, spread"),
            ));
        }
    };
    let group = groups(ctx, fabric, w.placement_level.as_deref())?;
    // Listed nodes first: they must not overlap; counts then share the nodes left.
    let mut owner: BTreeMap<NodeId, usize> = BTreeMap::new();
    let mut wanted: Vec<Ranks> = Vec::with_capacity(raw_jobs.len());
    let mut names: BTreeMap<String, usize> = BTreeMap::new();
    for (k, job) in raw_jobs.iter().enumerate() {
        if let Some(name) = &job.name
            && let Some(before) = names.insert(name.clone(), k)
        {
            return Err(ctx.value(
                &format!("workload.jobs[{k}].name"),
                format!("{name:?} already names job {before}"),
            ));
        }
        let key = format!("workload.jobs[{k}].ranks");
        let r = ranks(ctx, &key, job.ranks.clone(), nodes, false)?;
        if let Ranks::Listed(list) = &r {
            for (i, node) in list.iter().enumerate() {
                if let Some(other) = owner.insert(*node, k) {
                    return Err(ctx.value(
                        &format!("{key}[{i}]"),
                        format!(
                            "node {} is a rank of job {other} already: jobs are on disjoint nodes",
                            node.0
                        ),
                    ));
                }
            }
        }
        wanted.push(r);
    }
    let free: Vec<NodeId> = (0..nodes)
        .map(|i| NodeId(i as u16))
        .filter(|n| !owner.contains_key(n))
        .collect();
    let counted: usize = wanted
        .iter()
        .map(|r| match r {
            Ranks::Count(c) => *c,
            _ => 0,
        })
        .sum();
    if counted > free.len() {
        return Err(ctx.value(
            "workload.jobs",
            format!(
                "the jobs ask for {counted} placed ranks; {} of the {nodes} nodes are not listed by a job",
                free.len()
            ),
        ));
    }
    let placed = place(&wanted, &free, &group, placement);
    let mut jobs = Vec::with_capacity(raw_jobs.len());
    let mut tasks: u128 = 0;
    for (k, (job, list)) in raw_jobs.into_iter().zip(placed).enumerate() {
        let listed = matches!(wanted[k], Ranks::Listed(_));
        let prefix = format!("workload.jobs[{k}]");
        let j = spec(ctx, &prefix, job, list, listed)?;
        let s = &j.spec;
        tasks += s.sends() + s.ranks.len() as u128 * (s.iterations as u128 - 1);
        if tasks > MAX_TASKS as u128 {
            return Err(ctx.value(
                &prefix,
                format!("the jobs up to this one hold {tasks} sends and compute steps, more than the {MAX_TASKS} a run's graph may"),
            ));
        }
        jobs.push(j);
    }
    Ok(WorkloadSpec::Collective {
        jobs,
        all_ranks: false,
    })
}

/// The group of each node at `level` (the fabric's first level when not given; every node in
/// group 0 on a fabric without levels).
fn groups(
    ctx: &Ctx<'_>,
    fabric: &dyn ResolvedFabric,
    level: Option<&str>,
) -> Result<Vec<u32>, ScenarioError> {
    let levels = fabric.node_groups();
    let Some(level) = level else {
        return Ok(levels
            .into_iter()
            .next()
            .map_or_else(|| vec![0; fabric.nodes()], |g| g.group));
    };
    let names: Vec<&str> = levels.iter().map(|g| g.level).collect();
    match levels.iter().position(|g| g.level == level) {
        Some(k) => Ok(levels[k].group.clone()),
        None if names.is_empty() => Err(ctx.value(
            "workload.placement_level",
            format!(
                "{} has no groups of nodes (every node stands alike to every other), so no \
                 level {level:?}: leave placement_level out",
                fabric.name()
            ),
        )),
        None => Err(ctx.value(
            "workload.placement_level",
            format!(
                "{} has no level {level:?}; its levels: {}",
                fabric.name(),
                names.join(", ")
            ),
        )),
    }
}

/// Each job's nodes: its list, or its count taken from `free` (in id order) as `placement`
/// says over the groups `group` (per node id).
fn place(
    wanted: &[Ranks],
    free: &[NodeId],
    group: &[u32],
    placement: Placement,
) -> Vec<Vec<NodeId>> {
    let mut out: Vec<Vec<NodeId>> = wanted
        .iter()
        .map(|r| match r {
            Ranks::Listed(l) => l.clone(),
            _ => Vec::new(),
        })
        .collect();
    let need = |k: usize| match wanted[k] {
        Ranks::Count(c) => c,
        _ => 0,
    };
    // The free nodes of each group, in id order (a BTreeMap: groups in index order).
    let mut by_group: BTreeMap<u32, Vec<NodeId>> = BTreeMap::new();
    for &n in free {
        by_group.entry(group[n.idx()]).or_default().push(n);
    }
    let order: Vec<NodeId> = match placement {
        Placement::Packed => by_group.into_values().flatten().collect(),
        Placement::Spread => {
            let deepest = by_group.values().map(Vec::len).max().unwrap_or(0);
            (0..deepest)
                .flat_map(|i| by_group.values().filter_map(move |g| g.get(i).copied()))
                .collect()
        }
    };
    let mut next = order.into_iter();
    for (k, list) in out.iter_mut().enumerate() {
        list.extend(next.by_ref().take(need(k)));
    }
    out
}

/// One job's keys, under `prefix` (`workload` or `workload.jobs[k]`), on nodes `ranks`;
/// `listed` when the file listed them (a bad count of ranks is then blamed on them).
fn spec(
    ctx: &Ctx<'_>,
    prefix: &str,
    w: RawJob,
    ranks: Vec<NodeId>,
    listed: bool,
) -> Result<CollectiveJob, ScenarioError> {
    let key = |k: &str| format!("{prefix}.{k}");
    let name = w.op.as_deref().ok_or_else(|| ctx.missing(&key("op")))?;
    let Some(op) = Op::ALL.into_iter().find(|o| o.name() == name) else {
        let known: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
        return Err(ctx.value(
            &key("op"),
            format!("unknown collective {name:?}; known: {}", known.join(", ")),
        ));
    };
    let algorithm = match w.algorithm.as_deref() {
        None => op.default_algorithm(),
        Some(name) => {
            let Some(a) = Algorithm::ALL.into_iter().find(|a| a.name() == name) else {
                let known: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
                return Err(ctx.value(
                    &key("algorithm"),
                    format!("unknown algorithm {name:?}; known: {}", known.join(", ")),
                ));
            };
            a
        }
    };
    let message_bytes = ctx.int_req(&key("message_bytes"), w.message_bytes, 1, i64::MAX)? as u64;
    let chunks = ctx.int(&key("chunks"), w.chunks, 1, 1, MAX_CHUNKS)? as u32;
    let group_key = key("group_size");
    let group_size = match (algorithm, w.group_size) {
        (Algorithm::Staged, None) => {
            return Err(ctx.err(
                &group_key,
                ErrorKind::Missing,
                "the staged all-to-all needs the ranks per group (a divisor of the ranks' \
                 number, e.g. the nodes of a rack)",
            ));
        }
        (Algorithm::Staged, Some(g)) => ctx.int_req(&group_key, Some(g), 2, i64::MAX)? as usize,
        (_, None) => 0,
        (_, Some(_)) => {
            return Err(ctx.value(
                &group_key,
                format!("only the staged all-to-all has groups, not {algorithm}"),
            ));
        }
    };
    let iterations = ctx.int(&key("iterations"), w.iterations, 1, 1, MAX_ITERATIONS)? as u32;
    let compute_key = key("compute_us");
    let compute_us = w.compute_us.unwrap_or(0.0);
    let compute = Dur(ctx.us(&compute_key, compute_us, false)?);
    if compute_us > MAX_COMPUTE_US {
        return Err(ctx.value(
            &compute_key,
            format!("{compute_us} us is longer than a second of compute between iterations (a mistyped unit?)"),
        ));
    }
    let start = Time(ctx.us(&key("start_us"), w.start_us.unwrap_or(0.0), false)?);
    let spec = CollectiveSpec {
        op,
        algorithm,
        ranks,
        message_bytes,
        chunks,
        iterations,
        compute,
        group_size,
    };
    spec.validate().map_err(|e| {
        let k = match e {
            CollectiveError::TooFewRanks(_) | CollectiveError::RepeatedRank(_) => "ranks",
            CollectiveError::Unsupported { .. } => "algorithm",
            CollectiveError::NotPowerOfTwo(_) if listed => "ranks",
            CollectiveError::NotPowerOfTwo(_) => "algorithm",
            CollectiveError::MessageTooSmall { .. } => "message_bytes",
            CollectiveError::BadGroup { .. } => "group_size",
            CollectiveError::NoChunks => "chunks",
            CollectiveError::NoIterations => "iterations",
            CollectiveError::TooLarge { .. } if iterations > 1 => "iterations",
            CollectiveError::TooLarge { .. } | CollectiveError::Dag(_) => "ranks",
        };
        ctx.value(&key(k), e.to_string())
    })?;
    Ok(CollectiveJob {
        name: w.name,
        spec,
        start,
    })
}

/// `ranks`: `"all"` (a single job only, and its default: every node, rank k on node k), a
/// list of node ids, or (in `[[workload.jobs]]`, where it is required) a count to place.
fn ranks(
    ctx: &Ctx<'_>,
    key: &str,
    v: Option<toml::Value>,
    nodes: usize,
    single: bool,
) -> Result<Ranks, ScenarioError> {
    let what = if single {
        "\"all\" or a list of node ids"
    } else {
        "a count of nodes to place or a list of node ids"
    };
    match v {
        None if single => Ok(Ranks::All),
        None => Err(ctx.err(
            key,
            ErrorKind::Missing,
            format!("each job gives its ranks: {what}"),
        )),
        Some(toml::Value::String(s)) if s == "all" && single => Ok(Ranks::All),
        Some(toml::Value::Integer(c)) if !single => {
            Ok(Ranks::Count(
                ctx.int_req(key, Some(c), 2, nodes as i64)? as usize
            ))
        }
        Some(toml::Value::Array(list)) => {
            super::node_list(ctx, key, &list, nodes, "ranks").map(Ranks::Listed)
        }
        Some(toml::Value::String(s)) => Err(ctx.value(key, format!("{s:?}: give {what}"))),
        Some(other) => Err(ctx.err(
            key,
            ErrorKind::Type,
            format!("expected {what}, got {other}"),
        )),
    }
}
