//! The streaming workload kinds of §7.3-7.4: open-loop (Poisson at a load, or all at once),
//! closed-loop, the disaggregated-rack generator, trace replay, and htsim's connection
//! matrices.

use super::Ctx;
use crate::ErrorKind;
use crate::ScenarioError;
use crate::raw::{RawSize, RawWorkload};
use crate::workload::WorkloadSpec;
use shoal_base::{NodeId, Rate, Time};
use shoal_fabric::book::MAX_OPEN_FLOWS;
use shoal_workload::chakra::CtrlDeps;
use shoal_workload::disagg::{App, DisaggSpec};
use shoal_workload::generator::{ClosedLoopSpec, OpenLoopSpec};
use shoal_workload::{Arrivals, EmpiricalCdf, Matrix, SizeDist};
use std::path::{Path, PathBuf};

/// The flow-size CDFs shipped with shoal, by the name scenario files use.
const BUILTIN_CDFS: [(&str, &str); 3] = [
    (
        "websearch",
        include_str!("../../../../data/flow-size-cdfs/websearch.txt"),
    ),
    (
        "facebook-hadoop",
        include_str!("../../../../data/flow-size-cdfs/facebook-hadoop.txt"),
    ),
    (
        "alibaba-storage-2019",
        include_str!("../../../../data/flow-size-cdfs/alibaba-storage-2019.txt"),
    ),
];

/// A file named in the scenario, relative to the scenario file's folder, made absolute: the
/// resolved scenario written into a results folder names it, and must find it from there.
fn beside(ctx: &Ctx<'_>, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.to_owned();
    }
    let joined = Path::new(ctx.origin)
        .parent()
        .map_or_else(|| p.to_owned(), |d| d.join(p));
    std::path::absolute(&joined).unwrap_or(joined)
}

use shoal_workload::arrivals::MAX_MEAN_GAP_PS;

/// A mean gap between flow arrivals (across the rack) that a run can follow: at least a
/// picosecond (the clock's unit) and at most [`MAX_MEAN_GAP_PS`].
fn check_gap(ctx: &Ctx<'_>, key: &str, gap_ps: f64) -> Result<(), ScenarioError> {
    if gap_ps < 1.0 {
        return Err(ctx.value(
            key,
            format!(
                "flows would arrive {gap_ps:.3e} ps apart across the rack, below the simulator's \
                 one picosecond (a mistyped load, gap or rate?)"
            ),
        ));
    }
    check_not_idle(ctx, key, gap_ps)
}

/// The upper bound of [`check_gap`], alone: a trace may start flows at the same instant.
fn check_not_idle(ctx: &Ctx<'_>, key: &str, gap_ps: f64) -> Result<(), ScenarioError> {
    if gap_ps > MAX_MEAN_GAP_PS {
        return Err(ctx.value(
            key,
            format!(
                "a wait of {:.3e} s for the next flow across the rack, above the 1 s allowed \
                 between flows (a mistyped load, gap, rate or trace?)",
                gap_ps * 1e-12
            ),
        ));
    }
    Ok(())
}

fn flow_limit(ctx: &Ctx<'_>, w: &RawWorkload) -> Result<Option<u64>, ScenarioError> {
    w.flows
        .map(|v| {
            ctx.int_req("workload.flows", Some(v), 1, i64::MAX)
                .map(|v| v as u64)
        })
        .transpose()
}

fn sizes(ctx: &Ctx<'_>, s: Option<RawSize>) -> Result<SizeDist, ScenarioError> {
    let s = s.ok_or_else(|| ctx.missing("workload.size"))?;
    let dist = s
        .dist
        .as_deref()
        .ok_or_else(|| ctx.missing("workload.size.dist"))?;
    let keys: &[&str] = match dist {
        "fixed" => &["bytes"],
        "pareto" => &["shape", "mean_bytes", "cap_bytes"],
        "empirical" => &["cdf"],
        other => {
            return Err(ctx.value(
                "workload.size.dist",
                format!("unknown size distribution {other:?}; known: fixed, pareto, empirical"),
            ));
        }
    };
    let present = [
        ("bytes", s.bytes.is_some()),
        ("shape", s.shape.is_some()),
        ("mean_bytes", s.mean_bytes.is_some()),
        ("cap_bytes", s.cap_bytes.is_some()),
        ("cdf", s.cdf.is_some()),
    ];
    for (key, here) in present {
        if here && !keys.contains(&key) {
            return Err(ctx.err(
                &format!("workload.size.{key}"),
                ErrorKind::UnknownKey,
                format!(
                    "unknown key for size distribution {dist:?} (it takes {})",
                    keys.join(", ")
                ),
            ));
        }
    }
    match dist {
        "fixed" => Ok(SizeDist::Fixed(
            ctx.int_req("workload.size.bytes", s.bytes, 1, i64::MAX)? as u64,
        )),
        "pareto" => {
            let shape = s.shape.ok_or_else(|| ctx.missing("workload.size.shape"))?;
            let mean = s
                .mean_bytes
                .ok_or_else(|| ctx.missing("workload.size.mean_bytes"))?;
            let cap = s
                .cap_bytes
                .map(
                    |c| match ctx.num("workload.size.cap_bytes", c, 1.0, false)? {
                        // Flow sizes are u64 bytes: a larger cap would be clamped silently.
                        c if c >= u64::MAX as f64 => Err(ctx.value(
                            "workload.size.cap_bytes",
                            format!("{c:e} B is more than a flow can carry (2^64 - 1 B)"),
                        )),
                        // Flow sizes are whole bytes: a fraction would be rounded silently.
                        c if c.fract() != 0.0 => Err(ctx.value(
                            "workload.size.cap_bytes",
                            format!("{c} B is not a whole number of bytes"),
                        )),
                        c => Ok(c),
                    },
                )
                .transpose()?
                .map(|c| c.round() as u64);
            SizeDist::pareto(shape, mean, cap)
                .map_err(|e| ctx.value("workload.size", e.to_string()))
        }
        _ => {
            let name = s.cdf.ok_or_else(|| ctx.missing("workload.size.cdf"))?;
            let (cdf, missing) = match BUILTIN_CDFS.iter().find(|(n, _)| *n == name) {
                Some((n, text)) => (EmpiricalCdf::parse(text, n), false),
                None => {
                    let path = beside(ctx, &name);
                    (EmpiricalCdf::load(&path), !path.exists())
                }
            };
            cdf.map(SizeDist::Empirical).map_err(|e| {
                // The built-in names help only a name that is not a file.
                if !missing {
                    return ctx.value("workload.size.cdf", e.to_string());
                }
                let known: Vec<&str> = BUILTIN_CDFS.iter().map(|(n, _)| *n).collect();
                ctx.value(
                    "workload.size.cdf",
                    format!("{e} (built-in names: {})", known.join(", ")),
                )
            })
        }
    }
}

fn matrix(
    ctx: &Ctx<'_>,
    w: &RawWorkload,
    nodes: usize,
    resolve_senders: impl FnOnce(NodeId) -> Result<Vec<NodeId>, ScenarioError>,
) -> Result<Matrix, ScenarioError> {
    let n = nodes as i64;
    let kind = w.matrix.as_deref().unwrap_or("uniform");
    let allowed: &[&str] = match kind {
        "uniform" | "all-to-all" => &[],
        "permutation" => &["pairs"],
        "incast" => &["senders", "dst"],
        "hotspot" => &["hot", "hot_fraction"],
        "among" => &["among"],
        "weighted" => &["weights"],
        other => {
            return Err(ctx.value(
                "workload.matrix",
                format!(
                    "unknown traffic matrix {other:?}; known: uniform, permutation, incast, \
                     all-to-all, hotspot, among, weighted"
                ),
            ));
        }
    };
    for (key, here) in [
        ("pairs", w.pairs.is_some()),
        ("senders", w.senders.is_some()),
        ("dst", w.dst.is_some()),
        ("hot", w.hot.is_some()),
        ("hot_fraction", w.hot_fraction.is_some()),
        ("among", w.among.is_some()),
        ("weights", w.weights.is_some()),
    ] {
        if here && !allowed.contains(&key) {
            return Err(ctx.err(
                &format!("workload.{key}"),
                ErrorKind::UnknownKey,
                format!("not a key of traffic matrix {kind:?}"),
            ));
        }
    }
    let m = match kind {
        "uniform" => Matrix::Uniform,
        "all-to-all" => Matrix::AllToAll,
        "permutation" => Matrix::Permutation {
            pairs: ctx.int("workload.pairs", w.pairs, n, 1, n)? as usize,
        },
        "among" => {
            let list = w
                .among
                .as_ref()
                .ok_or_else(|| ctx.missing("workload.among"))?;
            let mut nodes = Vec::with_capacity(list.len());
            for (i, &v) in list.iter().enumerate() {
                nodes.push(NodeId(
                    ctx.int_req(&format!("workload.among[{i}]"), Some(v), 0, n - 1)? as u16,
                ));
            }
            Matrix::Among { nodes }
        }
        "weighted" => {
            let rows = w
                .weights
                .as_ref()
                .ok_or_else(|| ctx.missing("workload.weights"))?;
            let mut out = Vec::with_capacity(rows.len());
            for (i, row) in rows.iter().enumerate() {
                let mut r = Vec::with_capacity(row.len());
                for (j, &v) in row.iter().enumerate() {
                    let key = format!("workload.weights[{i}][{j}]");
                    r.push(ctx.int_req(&key, Some(v), 0, i64::MAX)? as u64);
                }
                out.push(r);
            }
            Matrix::Weighted { rows: out }
        }
        "incast" => {
            let dst = NodeId(ctx.int("workload.dst", w.dst, 0, 0, n - 1)? as u16);
            Matrix::Incast {
                senders: resolve_senders(dst)?,
                dst,
            }
        }
        _ => {
            let hot = ctx.int_req("workload.hot", w.hot, 1, n)? as u16;
            let fraction = w
                .hot_fraction
                .ok_or_else(|| ctx.missing("workload.hot_fraction"))?;
            if !(0.0..=1.0).contains(&fraction) {
                return Err(ctx.value(
                    "workload.hot_fraction",
                    format!("{fraction} is not a probability in [0, 1]"),
                ));
            }
            Matrix::Hotspot {
                hot: (0..hot).map(NodeId).collect(),
                fraction,
            }
        }
    };
    m.validate(nodes)
        .map_err(|e| ctx.value("workload.matrix", e.to_string()))?;
    Ok(m)
}

/// Resolves the kinds this module owns; `None` for the others.
pub(super) fn resolve(
    ctx: &Ctx<'_>,
    kind: &str,
    w: RawWorkload,
    nodes: usize,
    node_rate: Rate,
    resolve_senders: impl FnOnce(NodeId) -> Result<Vec<NodeId>, ScenarioError>,
) -> Result<WorkloadSpec, ScenarioError> {
    let start = Time(ctx.us("workload.start_us", w.start_us.unwrap_or(0.0), false)?);
    match kind {
        "open-loop" => {
            let max_flows = flow_limit(ctx, &w)?;
            let matrix = matrix(ctx, &w, nodes, resolve_senders)?;
            let sizes = sizes(ctx, w.size)?;
            let load_rate = match w.load_node_gbps {
                Some(g) => {
                    let rate = ctx.keys(|k| k.gbps("workload.load_node_gbps", g))?;
                    if rate.0 < 1_000_000 {
                        return Err(ctx.value(
                            "workload.load_node_gbps",
                            format!("{g} Gb/s is below 1 Mb/s: no rack node is that slow"),
                        ));
                    }
                    rate
                }
                None => node_rate,
            };
            let mut load = None;
            let arrivals = match (w.load, w.mean_gap_ns) {
                (Some(_), Some(_)) => {
                    return Err(ctx.value(
                        "workload.mean_gap_ns",
                        "give either workload.load or workload.mean_gap_ns, not both",
                    ));
                }
                (Some(given), None) => {
                    let given = ctx.num("workload.load", given, 0.0, true)?;
                    load = Some(given);
                    Arrivals::poisson_for_load(given, sizes.expected_mean(), load_rate, nodes)
                        .map_err(|e| ctx.value("workload.load", e.to_string()))?
                }
                (None, Some(gap)) => Arrivals::Poisson {
                    mean_gap_ps: ctx.num("workload.mean_gap_ns", gap, 0.0, true)? * 1e3,
                },
                (None, None) => {
                    let Some(n) = max_flows else {
                        return Err(ctx.missing("workload.flows"));
                    };
                    if n > MAX_OPEN_FLOWS {
                        return Err(ctx.value(
                            "workload.flows",
                            format!(
                                "{n} flows all at once (no workload.load or mean_gap_ns): at \
                                 most {MAX_OPEN_FLOWS} may be open at once, since every fabric \
                                 holds each open flow's state in memory"
                            ),
                        ));
                    }
                    Arrivals::AllAtOnce { at: start }
                }
            };
            if let Some(gap) = arrivals.mean_gap_ps() {
                let key = match w.load {
                    Some(_) => "workload.load",
                    None => "workload.mean_gap_ns",
                };
                check_gap(ctx, key, gap)?;
            }
            Ok(WorkloadSpec::OpenLoop {
                spec: OpenLoopSpec {
                    nodes,
                    sizes,
                    arrivals,
                    matrix,
                    max_flows,
                    until: None,
                },
                // Flows all at once already start at `start`; a Poisson stream is shifted by it.
                start: match arrivals {
                    Arrivals::AllAtOnce { .. } => Time::ZERO,
                    Arrivals::Poisson { .. } => start,
                },
                load_rate,
                load,
            })
        }
        "closed-loop" => {
            let max_flows = flow_limit(ctx, &w)?;
            Ok(WorkloadSpec::ClosedLoop(ClosedLoopSpec {
                nodes,
                matrix: matrix(ctx, &w, nodes, resolve_senders)?,
                per_source: ctx.int("workload.per_source", w.per_source, 1, 1, 1 << 16)? as u32,
                sizes: sizes(ctx, w.size)?,
                start,
                max_flows,
                max_per_source: w
                    .flows_per_source
                    .map(|v| ctx.int_req("workload.flows_per_source", Some(v), 1, i64::MAX))
                    .transpose()?
                    .map(|v| v as u64),
            }))
        }
        "disaggregated" => {
            let name = w
                .app
                .as_deref()
                .ok_or_else(|| ctx.missing("workload.app"))?;
            let Some(app) = App::all().into_iter().find(|a| a.name() == name) else {
                let known: Vec<&str> = App::all().iter().map(|a| a.name()).collect();
                return Err(ctx.value(
                    "workload.app",
                    format!("unknown application {name:?}; known: {}", known.join(", ")),
                ));
            };
            let mut spec = DisaggSpec::paper(app, nodes);
            if let Some(gap) = w.mean_gap_ns {
                spec.mean_gap_ps = ctx.num("workload.mean_gap_ns", gap, 0.0, true)? * 1e3;
                check_gap(ctx, "workload.mean_gap_ns", spec.mean_gap_ps)?;
            }
            spec.max_flows = flow_limit(ctx, &w)?;
            // The profile's roles must fit the rack; checked here so that the error names a key
            // and a line rather than surfacing when the run starts. The role counts do not
            // depend on the seed, only their placement does.
            shoal_workload::Disagg::new(spec.clone(), 0).map_err(|e| {
                ctx.value(
                    "workload.app",
                    format!("the profile does not fit a rack of {nodes} nodes: {e}"),
                )
            })?;
            Ok(WorkloadSpec::Disaggregated { app, spec })
        }
        "connection-matrix" => {
            let name = w
                .file
                .as_deref()
                .ok_or_else(|| ctx.missing("workload.file"))?;
            let path = beside(ctx, name);
            let flows = shoal_workload::connection_matrix::read(&path, nodes)
                .map_err(|e| ctx.value("workload.file", e.to_string()))?;
            if flows.is_empty() {
                return Err(ctx.value(
                    "workload.file",
                    format!("{} holds no connections: nothing to run", path.display()),
                ));
            }
            let max_gap = flows
                .windows(2)
                .map(|w| w[1].start.0 - w[0].start.0)
                .max()
                .unwrap_or(0);
            check_not_idle(ctx, "workload.file", max_gap as f64)?;
            Ok(WorkloadSpec::ConnectionMatrix { path, flows })
        }
        "dag" => {
            let name = w
                .file
                .as_deref()
                .ok_or_else(|| ctx.missing("workload.file"))?;
            let path = beside(ctx, name);
            let dag = shoal_workload::dag_file::read(&path, nodes)
                .map_err(|e| ctx.value("workload.file", e.to_string()))?;
            Ok(WorkloadSpec::Dag {
                path,
                sends: dag.sends(),
            })
        }
        "chakra" => {
            let name = w
                .traces
                .as_deref()
                .ok_or_else(|| ctx.missing("workload.traces"))?;
            let prefix = beside(ctx, name);
            let files = shoal_workload::chakra::files(&prefix)
                .map_err(|e| ctx.value("workload.traces", e.to_string()))?;
            // Rank r on node r unless the file lists the node of each rank.
            let (ranks, listed) = match w.ranks {
                None => {
                    if files.len() > nodes {
                        return Err(ctx.value(
                            "workload.traces",
                            format!(
                                "{} ranks (files {} to {}) for a fabric of {nodes} nodes",
                                files.len(),
                                files[0].display(),
                                files[files.len() - 1].display()
                            ),
                        ));
                    }
                    ((0..files.len() as u16).map(NodeId).collect(), false)
                }
                Some(toml::Value::Array(list)) => {
                    let ranks = super::node_list(ctx, "workload.ranks", &list, nodes, "ranks")?;
                    if ranks.len() != files.len() {
                        return Err(ctx.value(
                            "workload.ranks",
                            format!(
                                "{} nodes listed for {} ranks (one trace file each)",
                                ranks.len(),
                                files.len()
                            ),
                        ));
                    }
                    (ranks, true)
                }
                Some(other) => {
                    return Err(ctx.err(
                        "workload.ranks",
                        ErrorKind::Type,
                        format!("expected a list of node ids (rank r on the r-th), got {other}"),
                    ));
                }
            };
            let ctrl = match w.ctrl_deps.as_deref() {
                None | Some("order") => CtrlDeps::Order,
                Some("ignore") => CtrlDeps::Ignore,
                Some(other) => {
                    return Err(ctx.value(
                        "workload.ctrl_deps",
                        format!(
                            "{other:?}: give \"order\" (control dependencies order nodes, the \
                             default) or \"ignore\" (as ASTRA-sim's feeder)"
                        ),
                    ));
                }
            };
            let imported = shoal_workload::chakra::read(&prefix, &ranks, ctrl)
                .map_err(|e| ctx.value("workload.traces", e.to_string()))?;
            Ok(WorkloadSpec::Chakra {
                prefix,
                ranks,
                listed,
                ctrl,
                sends: imported.dag.sends(),
            })
        }
        _ => {
            let name = w
                .file
                .as_deref()
                .ok_or_else(|| ctx.missing("workload.file"))?;
            let path = beside(ctx, name);
            let stats = shoal_workload::trace::validate(&path, nodes)
                .map_err(|e| ctx.value("workload.file", e.to_string()))?;
            if stats.flows == 0 {
                return Err(ctx.value(
                    "workload.file",
                    format!("{} holds no flows: nothing to run", path.display()),
                ));
            }
            // The same guard as for a mean gap: idle seconds are hours of simulated slots.
            check_not_idle(ctx, "workload.file", stats.max_gap.0 as f64)?;
            Ok(WorkloadSpec::Trace {
                path,
                flows: stats.flows,
            })
        }
    }
}
