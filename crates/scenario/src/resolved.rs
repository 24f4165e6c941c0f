//! Writes a resolved scenario back as TOML that reproduces it.

use crate::workload::WorkloadSpec;
use crate::{Scenario, TOOL_VERSION};
use shoal_fabric::config::{TomlOut as Table, dur_us, float as f, text as s, time_us as us};
use shoal_workload::collective::Algorithm;
use shoal_workload::{Arrivals, Matrix, SizeDist};

/// A size distribution as the inline table scenario files use.
fn size(d: &SizeDist) -> String {
    match d {
        SizeDist::Fixed(b) => format!("{{ dist = \"fixed\", bytes = {b} }}"),
        SizeDist::Pareto { shape, mean, cap } => {
            let cap = cap.map_or_else(String::new, |c| format!(", cap_bytes = {}", f(c as f64)));
            format!(
                "{{ dist = \"pareto\", shape = {}, mean_bytes = {}{cap} }}",
                f(*shape),
                f(*mean)
            )
        }
        SizeDist::Empirical(cdf) => {
            format!("{{ dist = \"empirical\", cdf = {} }}", s(cdf.origin()))
        }
    }
}

/// The traffic matrix keys.
fn matrix(t: &mut Table, m: &Matrix) {
    match m {
        Matrix::Uniform => t.kv("matrix", s("uniform")),
        Matrix::AllToAll => t.kv("matrix", s("all-to-all")),
        Matrix::Permutation { pairs } => {
            t.kv("matrix", s("permutation"));
            t.kv("pairs", pairs);
        }
        Matrix::Incast { senders, dst } => {
            t.kv("matrix", s("incast"));
            let list: Vec<String> = senders.iter().map(|n| n.0.to_string()).collect();
            t.kv("senders", format!("[{}]", list.join(", ")));
            t.kv("dst", dst.0);
        }
        Matrix::Among { nodes } => {
            t.kv("matrix", s("among"));
            let list: Vec<String> = nodes.iter().map(|n| n.0.to_string()).collect();
            t.kv("among", format!("[{}]", list.join(", ")));
        }
        Matrix::Weighted { rows } => {
            t.kv("matrix", s("weighted"));
            let rows: Vec<String> = rows
                .iter()
                .map(|r| {
                    let r: Vec<String> = r.iter().map(u64::to_string).collect();
                    format!("[{}]", r.join(", "))
                })
                .collect();
            t.kv("weights", format!("[{}]", rows.join(", ")));
        }
        Matrix::Hotspot { hot, fraction } => {
            t.kv("matrix", s("hotspot"));
            t.kv("hot", hot.len());
            t.kv("hot_fraction", f(*fraction));
        }
    }
}

pub(crate) fn write(sc: &Scenario) -> String {
    let mut t = Table::new();
    t.line(&format!(
        "# Resolved by shoal {TOOL_VERSION} from {}.\n# Every default is filled in, the \
         node-to-node latency is in whole slots and every\n# failure is listed: loading this \
         file reproduces the run.",
        sc.origin.replace('\n', " ")
    ));
    t.header("[scenario]");
    t.kv("name", s(&sc.name));
    t.kv("description", s(&sc.description));
    t.kv("seed", sc.seed);
    t.kv("fabric", s(sc.fabric_name()));
    t.kv("tool_version", s(TOOL_VERSION));

    sc.fabric.write_toml(&mut t);
    workload_and_run(&mut t, sc);
    t.into_string()
}

fn workload_and_run(t: &mut Table, sc: &Scenario) {
    t.header("[workload]");
    t.kv("kind", s(sc.workload.kind()));
    match &sc.workload {
        WorkloadSpec::Permutation {
            pairs,
            flow_bytes,
            start,
        } => {
            t.kv("pairs", pairs);
            t.kv("flow_bytes", flow_bytes);
            t.kv("start_us", us(*start));
        }
        WorkloadSpec::Incast {
            senders,
            dst,
            flow_bytes,
            start,
        } => {
            let list: Vec<String> = senders.iter().map(|n| n.0.to_string()).collect();
            t.kv("senders", format!("[{}]", list.join(", ")));
            t.kv("dst", dst.0);
            t.kv("flow_bytes", flow_bytes);
            t.kv("start_us", us(*start));
        }
        WorkloadSpec::RandomPairs {
            flows,
            flow_bytes,
            start,
            distinct_pairs,
        } => {
            t.kv("flows", flows);
            t.kv("flow_bytes", flow_bytes);
            t.kv("start_us", us(*start));
            t.kv("distinct_pairs", distinct_pairs);
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
            t.kv("src", src.0);
            t.kv("dst", dst.0);
            t.kv("probe_bytes", probe_bytes);
            t.kv("period_us", dur_us(*period));
            t.kv("probes", probes);
            t.kv("first_us", us(*first));
            if let Some(b) = background {
                t.kv(
                    "background",
                    format!(
                        "{{ kind = \"random-pairs\", flows = {}, flow_bytes = {}, start_us = {} }}",
                        b.flows,
                        b.flow_bytes,
                        us(b.start)
                    ),
                );
            }
        }
        WorkloadSpec::OpenLoop {
            spec,
            start,
            load_rate,
            load,
        } => {
            if let Some(n) = spec.max_flows {
                t.kv("flows", n);
            }
            t.kv("load_node_gbps", f(load_rate.0 as f64 / 1e9));
            match (load, spec.arrivals.mean_gap_ps()) {
                // The load as the file gave it: resolved again, it gives the same gap.
                (Some(load), _) => t.kv("load", f(*load)),
                (None, Some(gap)) => t.kv("mean_gap_ns", f(gap / 1e3)),
                (None, None) => {}
            }
            // Flows all at once carry their start in the arrivals (the shift is zero).
            let start = match spec.arrivals {
                Arrivals::AllAtOnce { at } => at,
                Arrivals::Poisson { .. } => *start,
            };
            t.kv("start_us", us(start));
            t.kv("size", size(&spec.sizes));
            matrix(t, &spec.matrix);
        }
        WorkloadSpec::ClosedLoop(spec) => {
            if let Some(n) = spec.max_flows {
                t.kv("flows", n);
            }
            if let Some(n) = spec.max_per_source {
                t.kv("flows_per_source", n);
            }
            t.kv("per_source", spec.per_source);
            t.kv("start_us", us(spec.start));
            t.kv("size", size(&spec.sizes));
            matrix(t, &spec.matrix);
        }
        WorkloadSpec::Disaggregated { app, spec } => {
            t.kv("app", s(app.name()));
            t.kv("mean_gap_ns", f(spec.mean_gap_ps / 1e3));
            if let Some(n) = spec.max_flows {
                t.kv("flows", n);
            }
        }
        WorkloadSpec::Trace { path, .. }
        | WorkloadSpec::ConnectionMatrix { path, .. }
        | WorkloadSpec::Dag { path, .. } => t.kv("file", s(&path.display().to_string())),
        WorkloadSpec::Chakra {
            prefix,
            ranks,
            listed,
            ctrl,
            ..
        } => {
            t.kv("traces", s(&prefix.display().to_string()));
            if *listed {
                let list: Vec<String> = ranks.iter().map(|n| n.0.to_string()).collect();
                t.kv("ranks", format!("[{}]", list.join(", ")));
            }
            t.kv("ctrl_deps", s(ctrl.name()));
        }
        WorkloadSpec::Collective { jobs, all_ranks } => {
            let single = jobs.len() == 1 && jobs[0].name.is_none();
            for job in jobs {
                if !single {
                    t.header("[[workload.jobs]]");
                }
                if let Some(name) = &job.name {
                    t.kv("name", s(name));
                }
                let spec = &job.spec;
                t.kv("op", s(spec.op.name()));
                t.kv("algorithm", s(spec.algorithm.name()));
                if *all_ranks {
                    t.kv("ranks", s("all"));
                } else {
                    let list: Vec<String> = spec.ranks.iter().map(|n| n.0.to_string()).collect();
                    t.kv("ranks", format!("[{}]", list.join(", ")));
                }
                t.kv("message_bytes", spec.message_bytes);
                t.kv("chunks", spec.chunks);
                if spec.algorithm == Algorithm::Staged {
                    t.kv("group_size", spec.group_size);
                }
                t.kv("iterations", spec.iterations);
                t.kv("compute_us", dur_us(spec.compute));
                t.kv("start_us", us(job.start));
            }
        }
    }

    let l = &sc.limits;
    if l.until.is_some()
        || l.completed_flows.is_some()
        || l.measured_flows.is_some()
        || l.measure_from.is_some()
        || l.sample_every.is_some()
    {
        t.header("[run]");
        if let Some(u) = l.until {
            t.kv("until_us", us(u));
        }
        if let Some(c) = l.completed_flows {
            t.kv("completed_flows", c);
        }
        if let Some(n) = l.measured_flows {
            t.kv("measured_flows", n);
        }
        if let Some(m) = l.measure_from {
            t.kv("measure_from_us", us(m));
        }
        if let Some(p) = l.sample_every {
            t.kv("sample_every_us", dur_us(p));
        }
    }
}
