//! Writes a resolved scenario back as TOML that reproduces it.

use crate::network::{NetworkSpec, TopologySpec};
use crate::workload::WorkloadSpec;
use crate::{Scenario, TOOL_VERSION};
use shoal_base::{Dur, Time};
use shoal_psn::{Discipline, PathChoice, TransportSpec};
use shoal_schedule::Component;
use shoal_workload::{Matrix, SizeDist};
use std::fmt::Write;

fn s(v: &str) -> String {
    toml::Value::String(v.to_owned()).to_string()
}

fn f(v: f64) -> String {
    toml::Value::Float(v).to_string()
}

fn us(t: Time) -> String {
    f(t.as_us_f64())
}

fn dur_us(d: Dur) -> String {
    f(d.as_us_f64())
}

fn ns(d: Dur) -> String {
    f(d.as_ns_f64())
}

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

/// Appends `key = value` lines.
struct Table(String);

impl Table {
    fn kv(&mut self, key: &str, value: impl std::fmt::Display) {
        let _ = writeln!(self.0, "{key} = {value}");
    }

    fn header(&mut self, name: &str) {
        let _ = writeln!(self.0, "\n{name}");
    }
}

pub(crate) fn write(sc: &Scenario) -> String {
    let mut t = Table(String::new());
    let _ = writeln!(
        t.0,
        "# Resolved by shoal {TOOL_VERSION} from {}.\n# Every default is filled in, the \
         node-to-node latency is in whole slots and every\n# failure is listed: loading this \
         file reproduces the run.",
        sc.origin.replace('\n', " ")
    );
    t.header("[scenario]");
    t.kv("name", s(&sc.name));
    t.kv("description", s(&sc.description));
    t.kv("seed", sc.seed);
    t.kv("fabric", s(sc.fabric_name()));
    t.kv("tool_version", s(TOOL_VERSION));

    if let Some(n) = &sc.network {
        network(&mut t, n);
    } else {
        rack(&mut t, sc);
    }
    workload_and_run(&mut t, sc);
    t.0
}

/// `[network]` with every key the fabric uses.
fn network(t: &mut Table, n: &NetworkSpec) {
    t.header("[network]");
    t.kv("topology", s(n.topology.name()));
    match n.topology {
        TopologySpec::LeafSpine { hosts, radix } => {
            t.kv("hosts", hosts);
            t.kv("radix", radix);
        }
        TopologySpec::FatTree {
            k,
            oversubscription,
        } => {
            t.kv("k", k);
            t.kv("oversubscription", oversubscription);
        }
        TopologySpec::Torus { x, y, z } => {
            t.kv("x", x);
            t.kv("y", y);
            t.kv("z", z);
        }
    }
    t.kv("link_gbps", f(n.link_rate.0 as f64 / 1e9));
    t.kv("link_delay_ns", ns(n.link_delay));
    let net = &n.net;
    t.kv("packet_bytes", n.transport.mss() + net.header_bytes);
    t.kv("header_bytes", net.header_bytes);
    t.kv("control_bytes", net.control_bytes);
    t.kv("queue_packets", net.queue_packets);
    t.kv(
        "path",
        s(match net.path {
            PathChoice::Ecmp => "ecmp",
            PathChoice::Spray => "spray",
        }),
    );
    let marking = |at_dequeue: bool| s(if at_dequeue { "departure" } else { "arrival" });
    match net.discipline {
        Discipline::Ecn { k, at_dequeue } => {
            t.kv("ecn", s("threshold"));
            t.kv("ecn_k", k);
            t.kv("ecn_marking", marking(at_dequeue));
        }
        Discipline::Red(red) => {
            t.kv("ecn", s("red"));
            t.kv("red_kmin_bytes", red.kmin_bytes);
            t.kv("red_kmax_bytes", red.kmax_bytes);
            t.kv("red_pmax", f(red.pmax_ppm as f64 / 1e6));
            t.kv("ecn_marking", marking(red.at_dequeue));
        }
        Discipline::DropTail | Discipline::Trim => {}
    }
    match &n.transport {
        TransportSpec::Tcp(c) => {
            t.kv("initial_window", c.initial_window);
            if let Some(m) = c.max_window {
                t.kv("max_window", m);
            }
            t.kv("rto_min_us", dur_us(c.rto_min));
            if let Some(g) = c.dctcp_g_shift {
                t.kv("dctcp_g", f(1.0 / (1u64 << g) as f64));
            }
        }
        TransportSpec::Ndp(c) => {
            t.kv("initial_window", c.initial_window);
            t.kv("rto_min_us", dur_us(c.rto));
            t.kv("pull_pacing", f(net.pull_pacing as f64 / 100.0));
        }
        TransportSpec::Dcqcn(c) => {
            if let Some(m) = c.max_window {
                t.kv("max_window", m);
            }
            t.kv("pfc", net.pfc.is_some());
            if let Some(p) = net.pfc {
                let mtu = (c.mss + net.header_bytes) as u64;
                t.kv("pfc_xoff_packets", p.xoff_bytes / mtu);
                t.kv("pfc_xon_packets", p.xon_bytes / mtu);
            }
        }
        TransportSpec::R2c2(c) => t.kv("rto_min_us", dur_us(c.rto)),
    }
}

fn rack(t: &mut Table, sc: &Scenario) {
    let r = &sc.rack;
    t.header("[rack]");
    t.kv("nodes", r.nodes);
    t.kv("channels", r.channels);
    t.kv("channel_gbps", f(r.channel_rate.0 as f64 / 1e9));
    t.kv("slot_ns", ns(r.slot));
    t.kv("guard_ns", ns(r.guard));
    t.kv("cell_bytes", r.cell_bytes);
    t.kv("header_bytes", r.header_bytes);
    t.kv("overhead_bytes", r.overhead_bytes);
    t.kv("delay_slots", r.delay_slots);
    t.kv("switch_ports", r.switch_ports);
    t.kv("arrangement", s(r.arrangement.name()));
    t.kv("classes", r.classes);
    t.kv("low_class_queue_cells", r.low_class_queue_cells);
    t.kv("ready_queue", r.ready_queue);
    t.kv("age_rule", r.age_rule);
    t.kv("packet_bytes", r.packet_bytes);
    t.kv("interleave_flows", r.interleave_flows);
    t.kv("header_bit_error_rate", f(r.header_bit_error_rate));
    t.kv("verify_schedule", r.verify_schedule);
    for failure in &r.failures {
        t.header("[[rack.failures]]");
        match failure.component {
            Component::Node(n) => {
                t.kv("component", s("node"));
                t.kv("node", n.0);
            }
            Component::NodeLink(c, n) => {
                t.kv("component", s("node-link"));
                t.kv("node", n.0);
                t.kv("plane", c.0);
            }
            Component::Leaf(c, l) => {
                t.kv("component", s("leaf"));
                t.kv("plane", c.0);
                t.kv("leaf", l.0);
            }
            Component::LeafSpineLink(c, l, sp, q) => {
                t.kv("component", s("leaf-spine-link"));
                t.kv("plane", c.0);
                t.kv("leaf", l.0);
                t.kv("spine", sp.0);
                t.kv("link", q);
            }
            Component::Spine(c, sp) => {
                t.kv("component", s("spine"));
                t.kv("plane", c.0);
                t.kv("spine", sp.0);
            }
        }
        t.kv("at_us", us(failure.at));
    }
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
        } => {
            if let Some(n) = spec.max_flows {
                t.kv("flows", n);
            }
            t.kv("load_node_gbps", f(load_rate.0 as f64 / 1e9));
            if let Some(gap) = spec.arrivals.mean_gap_ps() {
                // The gap the load came to: it reproduces the arrivals exactly.
                t.kv("mean_gap_ns", f(gap / 1e3));
            }
            t.kv("start_us", us(*start));
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
        WorkloadSpec::Trace { path, .. } => t.kv("file", s(&path.display().to_string())),
    }

    let l = &sc.limits;
    if l.until.is_some()
        || l.completed_flows.is_some()
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
        if let Some(m) = l.measure_from {
            t.kv("measure_from_us", us(m));
        }
        if let Some(p) = l.sample_every {
            t.kv("sample_every_us", dur_us(p));
        }
    }
}
