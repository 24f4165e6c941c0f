//! `kind = "collective"`: a collective job (`shoal_workload::collective`) over all the fabric's
//! nodes or a list of them.

use super::Ctx;
use crate::ErrorKind;
use crate::ScenarioError;
use crate::raw::RawWorkload;
use crate::workload::WorkloadSpec;
use shoal_base::{Dur, NodeId, Time};
use shoal_workload::collective::{Algorithm, CollectiveError, CollectiveSpec, Op};

/// At most this many iterations: with at most a second of compute between them, a job's
/// times stay far from the clock's end.
pub(crate) const MAX_ITERATIONS: i64 = 1_000_000;
/// At most this many chunks a message: beyond, pieces are smaller than a packet for any
/// message a job may hold.
const MAX_CHUNKS: i64 = 65_536;
/// Compute between iterations, at most a second (a larger value is a mistyped unit).
const MAX_COMPUTE_US: f64 = 1e6;

pub(super) fn resolve(
    ctx: &Ctx<'_>,
    w: RawWorkload,
    nodes: usize,
    start: Time,
) -> Result<WorkloadSpec, ScenarioError> {
    let name = w.op.as_deref().ok_or_else(|| ctx.missing("workload.op"))?;
    let Some(op) = Op::ALL.into_iter().find(|o| o.name() == name) else {
        let known: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
        return Err(ctx.value(
            "workload.op",
            format!("unknown collective {name:?}; known: {}", known.join(", ")),
        ));
    };
    let algorithm = match w.algorithm.as_deref() {
        None => op.default_algorithm(),
        Some(name) => {
            let Some(a) = Algorithm::ALL.into_iter().find(|a| a.name() == name) else {
                let known: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
                return Err(ctx.value(
                    "workload.algorithm",
                    format!("unknown algorithm {name:?}; known: {}", known.join(", ")),
                ));
            };
            a
        }
    };
    let ranks_given = w.ranks.is_some();
    let ranks = ranks(ctx, w.ranks, nodes)?;
    let all_ranks = ranks.len() == nodes && ranks.iter().enumerate().all(|(i, r)| r.idx() == i);
    let message_bytes = ctx.int_req("workload.message_bytes", w.message_bytes, 1, i64::MAX)? as u64;
    let chunks = ctx.int("workload.chunks", w.chunks, 1, 1, MAX_CHUNKS)? as u32;
    let group_key = "workload.group_size";
    let group_size = match (algorithm, w.group_size) {
        (Algorithm::Staged, None) => {
            return Err(ctx.err(
                group_key,
                ErrorKind::Missing,
                "the staged all-to-all needs the ranks per group (a divisor of the ranks' \
                 number, e.g. the nodes of a rack)",
            ));
        }
        (Algorithm::Staged, Some(g)) => ctx.int_req(group_key, Some(g), 2, i64::MAX)? as usize,
        (_, None) => 0,
        (_, Some(_)) => {
            return Err(ctx.value(
                group_key,
                format!("only the staged all-to-all has groups, not {algorithm}"),
            ));
        }
    };
    let iterations = ctx.int("workload.iterations", w.iterations, 1, 1, MAX_ITERATIONS)? as u32;
    let compute_key = "workload.compute_us";
    let compute_us = w.compute_us.unwrap_or(0.0);
    let compute = Dur(ctx.us(compute_key, compute_us, false)?);
    if compute_us > MAX_COMPUTE_US {
        return Err(ctx.value(
            compute_key,
            format!("{compute_us} us is longer than a second of compute between iterations (a mistyped unit?)"),
        ));
    }
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
        let key = match e {
            CollectiveError::TooFewRanks(_) | CollectiveError::RepeatedRank(_) => "workload.ranks",
            CollectiveError::Unsupported { .. } => "workload.algorithm",
            CollectiveError::NotPowerOfTwo(_) if ranks_given => "workload.ranks",
            CollectiveError::NotPowerOfTwo(_) => "workload.algorithm",
            CollectiveError::MessageTooSmall { .. } => "workload.message_bytes",
            CollectiveError::BadGroup { .. } => "workload.group_size",
            CollectiveError::NoChunks => "workload.chunks",
            CollectiveError::NoIterations => "workload.iterations",
            CollectiveError::TooLarge { .. } if iterations > 1 => "workload.iterations",
            CollectiveError::TooLarge { .. } | CollectiveError::Dag(_) => "workload.ranks",
        };
        ctx.value(key, e.to_string())
    })?;
    Ok(WorkloadSpec::Collective {
        spec,
        start,
        all_ranks,
    })
}

/// `ranks`: `"all"` (the default: every node, rank k on node k) or a list of node ids.
fn ranks(
    ctx: &Ctx<'_>,
    v: Option<toml::Value>,
    nodes: usize,
) -> Result<Vec<NodeId>, ScenarioError> {
    let key = "workload.ranks";
    let all = || (0..nodes).map(|i| NodeId(i as u16)).collect();
    match v {
        None => Ok(all()),
        Some(toml::Value::String(s)) if s == "all" => Ok(all()),
        Some(toml::Value::String(s)) => {
            Err(ctx.value(key, format!("{s:?}: give \"all\" or a list of node ids")))
        }
        Some(toml::Value::Array(list)) => super::node_list(ctx, key, &list, nodes, "ranks"),
        Some(other) => Err(ctx.err(
            key,
            ErrorKind::Type,
            format!("expected \"all\" or a list of node ids, got {other}"),
        )),
    }
}
