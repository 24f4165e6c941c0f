//! Aquila as a scenario names it: `fabric = "aquila"` and its `[clique]` table. Every default
//! is in [`crate::spec::defaults`], with the paper section it comes from or why we chose it.

use crate::control::failure_table::FailureSpec;
use crate::control::table::BootstrapSpec;
use crate::routing::Mode;
use crate::spec::{CELL_WORDS, Injection, Spec, defaults, rate};
use crate::swift::{SwiftConfig, defaults as swift_defaults};
use crate::wire::{HEADER_LEN, MAX_CELL_LEN, MAX_HOPS};
use serde::Deserialize;
use shoal_base::{Dur, Rate};
use shoal_fabric::config::{
    ConfigError, IntRule, Keys, TableError, TomlOut, dur_ns, float, read_table, text, value,
};
use shoal_fabric::{
    Fabric, FabricError, FabricKind, NodeGroups, Progress, ResolvedFabric, Resolving, RunLimits,
    RunOutput,
};
use shoal_metrics::IdealFct;
use shoal_topology::Dragonfly;
use shoal_workload::FlowSource;

const PODS: IntRule = IntRule::new("clique.pods", 1, 64);
const TINS: IntRule = IntRule::new("clique.tins_per_pod", 1, 16);
const LOCAL_LINKS: IntRule = IntRule::new("clique.local_links", 0, 24);
const GLOBAL_LINKS: IntRule = IntRule::new("clique.global_links", 0, 64);
const LOCAL_PORTS: IntRule = IntRule::new("clique.local_ports", 0, 64);
const GLOBAL_PORTS: IntRule = IntRule::new("clique.global_ports", 0, 64);
const ISLIP: IntRule = IntRule::new("clique.islip_iterations", 1, 64);
const VC_CELLS: [IntRule; 4] = [
    IntRule::new("clique.local_vc_cells", 1, 4096),
    IntRule::new("clique.global_vc_cells", 1, 4096),
    IntRule::new("clique.endpoint_vc_cells", 1, 4096),
    IntRule::new("clique.output_vc_cells", 1, 4096),
];
const HOSTS_PER_TIN: IntRule = IntRule::new("clique.hosts_per_tin", 1, 18);
const WEIGHT: IntRule = IntRule::new("clique.nonminimal_weight", 0, 1000);
const BIAS: IntRule = IntRule::new("clique.nonminimal_bias_cells", 0, 1000);
const HOP_LIMIT: IntRule = IntRule::new("clique.hop_limit", 1, MAX_HOPS as i64);
const MTU: IntRule = IntRule::new("clique.mtu_bytes", 2, 65_535);
const HEADER: IntRule = IntRule::new("clique.header_bytes", 0, 4096);
const INGRESS: IntRule = IntRule::new("clique.ingress_packets", 1, 1 << 16);
const REASSEMBLY: IntRule = IntRule::new("clique.reassembly_bytes", 1, 1 << 30);
const WINDOW: IntRule = IntRule::new("clique.cts_window", 1, 1 << 16);
/// At least 1: a CTD at depth 0 would drop every packet, and the transport resends what a CTD
/// drops, forever.
const CTD: IntRule = IntRule::new("clique.ctd_depth", 1, 1 << 20);
const ECN: IntRule = IntRule::new("clique.ecn_depth", 0, 1 << 20);

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of clique keys")]
struct RawClique {
    pods: Option<i64>,
    tins_per_pod: Option<i64>,
    local_links: Option<i64>,
    global_links: Option<i64>,
    local_ports: Option<i64>,
    global_ports: Option<i64>,
    lane_gbps: Option<f64>,
    fec_overhead: Option<f64>,
    fec_ns: Option<f64>,
    local_link_ns: Option<f64>,
    fiber_m: Option<f64>,
    fall_through_ns: Option<f64>,
    crossbar_speedup: Option<f64>,
    islip_iterations: Option<i64>,
    local_vc_cells: Option<i64>,
    global_vc_cells: Option<i64>,
    endpoint_vc_cells: Option<i64>,
    output_vc_cells: Option<i64>,
    hosts_per_tin: Option<i64>,
    host_gbps: Option<f64>,
    host_link_ns: Option<f64>,
    routing: Option<String>,
    nonminimal_weight: Option<i64>,
    nonminimal_bias_cells: Option<i64>,
    hop_limit: Option<i64>,
    mtu_bytes: Option<i64>,
    header_bytes: Option<i64>,
    injection: Option<String>,
    ingress_packets: Option<i64>,
    reassembly_bytes: Option<i64>,
    cts_window: Option<i64>,
    ctd_depth: Option<i64>,
    ecn_depth: Option<i64>,
    swift_ip_target_ns: Option<f64>,
    swift_rma_target_ns: Option<f64>,
}

/// The clique a scenario describes: the simulator's [`Spec`] and the figures it came from,
/// so that it writes itself back as the user wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct CliqueSpec {
    pub spec: Spec,
    pub lane_gbps: f64,
    pub fec_overhead: f64,
    pub fec: Dur,
    pub fiber_m: f64,
    pub crossbar_speedup: f64,
    /// The `[bootstrap]` table, when the scenario has one (`crate::control`).
    pub bootstrap: Option<BootstrapSpec>,
    /// The `[failure]` table, when the scenario has one (`crate::control::failure`).
    pub failure: Option<FailureSpec>,
}

impl CliqueSpec {
    /// Checks the rules that tie keys together.
    pub fn validate(&self, keys: &Keys<'_>) -> Result<(), ConfigError> {
        let s = &self.spec;
        if s.injection == Injection::RtsCts && s.mtu_bytes > s.reassembly_bytes {
            return Err(value(
                keys.blame(&["clique.mtu_bytes", "clique.reassembly_bytes"]),
                format!(
                    "a {} B packet never fits {} B of reassembly space: every packet would be \
                     dropped",
                    s.mtu_bytes, s.reassembly_bytes
                ),
            ));
        }
        if s.header_bytes >= s.mtu_bytes {
            return Err(value(
                keys.blame(&["clique.header_bytes", "clique.mtu_bytes"]),
                format!(
                    "a {} B packet leaves no payload after a {} B header",
                    s.mtu_bytes, s.header_bytes
                ),
            ));
        }
        for (rule, words) in VC_CELLS.iter().zip([
            s.local_vc_words,
            s.global_vc_words,
            s.endpoint_vc_words,
            s.output_vc_words,
        ]) {
            if words < CELL_WORDS {
                return Err(value(rule.key, "must hold one 160 B cell"));
            }
        }
        s.dragonfly.build().map_err(|e| {
            value(
                keys.blame(&[
                    "clique.global_links",
                    "clique.global_ports",
                    "clique.local_links",
                    "clique.local_ports",
                    "clique.pods",
                    "clique.tins_per_pod",
                ]),
                e.to_string(),
            )
        })?;
        if s.injection == Injection::RtsCts && s.reassembly_bytes < s.mtu_bytes {
            return Err(value(
                keys.blame(&["clique.mtu_bytes", "clique.reassembly_bytes"]),
                format!(
                    "{} B of reassembly space cannot hold one {} B packet: every RTS would \
                     draw a CTD",
                    s.reassembly_bytes, s.mtu_bytes
                ),
            ));
        }
        if s.hosts() > u32::from(u16::MAX) {
            return Err(value(
                keys.blame(&["clique.hosts_per_tin", "clique.pods"]),
                format!("{} hosts: more than the 65,535 a flow can name", s.hosts()),
            ));
        }
        Ok(())
    }
}

/// The registry's entry for Aquila.
pub struct Kind;

impl FabricKind for Kind {
    fn names(&self) -> &'static [&'static str] {
        &["aquila"]
    }

    fn tables(&self) -> &'static [&'static str] {
        &["clique", "bootstrap", "failure"]
    }

    fn resolve(&self, input: &Resolving<'_>) -> Result<Box<dyn ResolvedFabric>, TableError> {
        use defaults as d;
        let keys = input.keys;
        let raw: RawClique = read_table(input.text, "clique")?.unwrap_or_default();
        let positive = |key: &str, v: Option<f64>, default: f64| {
            keys.num(key, v.unwrap_or(default), 0.0, true)
        };
        let lane_gbps = positive("clique.lane_gbps", raw.lane_gbps, d::LANE_GBPS)?;
        let host_gbps = positive("clique.host_gbps", raw.host_gbps, d::HOST_GBPS)?;
        let speedup = positive(
            "clique.crossbar_speedup",
            raw.crossbar_speedup,
            d::CROSSBAR_SPEEDUP,
        )?;
        for (key, gbps) in [
            ("clique.lane_gbps", lane_gbps),
            ("clique.host_gbps", host_gbps),
            ("clique.crossbar_speedup", lane_gbps * speedup),
        ] {
            keys.gbps(key, gbps)?;
        }
        let fec_overhead = keys.num(
            "clique.fec_overhead",
            raw.fec_overhead.unwrap_or(d::FEC_OVERHEAD),
            0.0,
            false,
        )?;
        if fec_overhead >= 1.0 {
            return Err(value(
                "clique.fec_overhead",
                "must be below 1: FEC cannot take the whole link",
            )
            .into());
        }
        let fec = keys.ns("clique.fec_ns", raw.fec_ns.unwrap_or(d::FEC_NS), false)?;
        let local_link = keys.ns(
            "clique.local_link_ns",
            raw.local_link_ns.unwrap_or(d::LOCAL_LINK_NS),
            false,
        )?;
        let fiber_m = keys.num(
            "clique.fiber_m",
            raw.fiber_m.unwrap_or(d::FIBER_M),
            0.0,
            false,
        )?;
        let fiber = keys.ns("clique.fiber_m", 5.0 * fiber_m, false)?;
        let routing = raw.routing.as_deref().unwrap_or("adaptive");
        let mode = Mode::from_name(routing).ok_or_else(|| {
            let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
            value(
                "clique.routing",
                format!("unknown routing {routing:?}: one of {}", names.join(", ")),
            )
        })?;
        let injection = raw.injection.as_deref().unwrap_or(Injection::RtsCts.name());
        let injection = Injection::parse(injection).ok_or_else(|| {
            value(
                "clique.injection",
                format!("unknown injection {injection:?}: one of rts-cts, raw-cells"),
            )
        })?;
        let cells = |rule: &IntRule, v: Option<i64>, default: u32| -> Result<u32, ConfigError> {
            Ok(rule.read::<u32>(v, i64::from(default))? * CELL_WORDS)
        };
        let spec = Spec {
            dragonfly: Dragonfly {
                pods: PODS.read(raw.pods, i64::from(d::PODS))?,
                tins_per_pod: TINS.read(raw.tins_per_pod, i64::from(d::TINS_PER_POD))?,
                local_links: LOCAL_LINKS.read(raw.local_links, i64::from(d::LOCAL_LINKS))?,
                global_links: GLOBAL_LINKS.read(raw.global_links, i64::from(d::GLOBAL_LINKS))?,
                local_ports: LOCAL_PORTS.read(raw.local_ports, i64::from(d::LOCAL_PORTS))?,
                global_ports: GLOBAL_PORTS.read(raw.global_ports, i64::from(d::GLOBAL_PORTS))?,
                local_rate: rate(lane_gbps, d::PCS_EFFICIENCY),
                global_rate: rate(lane_gbps, d::PCS_EFFICIENCY * (1.0 - fec_overhead)),
                local_delay: local_link,
                global_delay: local_link + fec + fiber,
            },
            hosts_per_tin: HOSTS_PER_TIN.read(raw.hosts_per_tin, i64::from(d::HOSTS_PER_TIN))?,
            host_rate: rate(host_gbps, 1.0),
            host_delay: keys.ns(
                "clique.host_link_ns",
                raw.host_link_ns.unwrap_or(d::HOST_LINK_NS),
                false,
            )?,
            fall_through: keys.ns(
                "clique.fall_through_ns",
                raw.fall_through_ns.unwrap_or(d::FALL_THROUGH_NS),
                false,
            )?,
            crossbar_rate: rate(lane_gbps, speedup),
            islip_iterations: ISLIP.read(raw.islip_iterations, i64::from(d::ISLIP_ITERATIONS))?,
            local_vc_words: cells(&VC_CELLS[0], raw.local_vc_cells, d::LOCAL_VC_CELLS)?,
            global_vc_words: cells(&VC_CELLS[1], raw.global_vc_cells, d::GLOBAL_VC_CELLS)?,
            endpoint_vc_words: cells(&VC_CELLS[2], raw.endpoint_vc_cells, d::ENDPOINT_VC_CELLS)?,
            output_vc_words: cells(&VC_CELLS[3], raw.output_vc_cells, d::OUTPUT_VC_CELLS)?,
            mode,
            nonminimal_weight: WEIGHT
                .read(raw.nonminimal_weight, i64::from(d::NONMINIMAL_WEIGHT))?,
            nonminimal_bias_words: BIAS.read::<u32>(
                raw.nonminimal_bias_cells,
                i64::from(d::NONMINIMAL_BIAS_CELLS),
            )? * CELL_WORDS,
            hop_limit: HOP_LIMIT.read(raw.hop_limit, i64::from(d::HOP_LIMIT))?,
            mtu_bytes: MTU.read(raw.mtu_bytes, i64::from(d::MTU_BYTES))?,
            header_bytes: HEADER.read(raw.header_bytes, i64::from(d::HEADER_BYTES))?,
            injection,
            ingress_packets: INGRESS.read(raw.ingress_packets, i64::from(d::INGRESS_PACKETS))?,
            reassembly_bytes: REASSEMBLY
                .read(raw.reassembly_bytes, i64::from(d::REASSEMBLY_BYTES))?,
            cts_window: WINDOW.read(raw.cts_window, i64::from(d::CTS_WINDOW))?,
            ctd_depth: CTD.read(raw.ctd_depth, i64::from(d::CTD_DEPTH))?,
            swift_ip: SwiftConfig::with_target(
                keys.ns(
                    "clique.swift_ip_target_ns",
                    raw.swift_ip_target_ns
                        .unwrap_or(swift_defaults::IP_BASE_TARGET_NS as f64),
                    true,
                )?,
            ),
            swift_rma: SwiftConfig::with_target(
                keys.ns(
                    "clique.swift_rma_target_ns",
                    raw.swift_rma_target_ns
                        .unwrap_or(swift_defaults::RMA_BASE_TARGET_NS as f64),
                    true,
                )?,
            ),
            ecn_depth: ECN.read(raw.ecn_depth, i64::from(d::ECN_DEPTH))?,
            // No keys yet: flows run IP only; 1RMA reads run from `crate::run::lookups`.
            rma: crate::rma::Rma::paper(),
            seed: input.seed,
        };
        let clique = CliqueSpec {
            spec,
            lane_gbps,
            fec_overhead,
            fec,
            fiber_m,
            crossbar_speedup: speedup,
            bootstrap: None,
            failure: None,
        };
        clique.validate(keys)?;
        let df = &clique.spec.dragonfly;
        let bootstrap = BootstrapSpec::read(input.text, keys, df)?;
        let failure = FailureSpec::read(input.text, keys, df, clique.spec.hop_limit)?;
        let clique = CliqueSpec {
            bootstrap,
            failure,
            ..clique
        };
        Ok(Box::new(clique))
    }
}

impl ResolvedFabric for CliqueSpec {
    fn name(&self) -> &str {
        "aquila"
    }

    /// Hosts by TiN, then by pod (host h on TiN h / hosts_per_tin, as the simulator wires it).
    fn node_groups(&self) -> Vec<NodeGroups> {
        let s = &self.spec;
        let per_tin = s.hosts_per_tin as usize;
        let per_pod = per_tin * s.dragonfly.tins_per_pod as usize;
        let hosts = s.hosts() as usize;
        vec![
            NodeGroups::blocks("tin", hosts, per_tin),
            NodeGroups::blocks("pod", hosts, per_pod),
        ]
    }

    fn nodes(&self) -> usize {
        self.spec.hosts() as usize
    }

    fn node_rate(&self) -> Rate {
        self.spec.host_rate
    }

    /// A lower bound on a lone flow's FCT: its bytes with their packet headers and cell
    /// headers (each 160 B cell carries 152 B) at the host's rate, after the shortest path
    /// there is (host to TiN, the switch's fall-through, TiN to host).
    fn ideal_fct(&self) -> Result<IdealFct, ConfigError> {
        let s = &self.spec;
        let per_packet = 1.0 + f64::from(s.header_bytes) / f64::from(s.mss());
        let per_cell = MAX_CELL_LEN as f64 / (MAX_CELL_LEN - HEADER_LEN) as f64;
        Ok(IdealFct {
            rate_bps: s.host_rate.0 as f64,
            base_latency: Dur(2 * s.host_delay.0 + s.fall_through.0),
            header_overhead: per_packet * per_cell - 1.0,
        })
    }

    fn queue_unit(&self) -> &'static str {
        "cells"
    }

    fn reseed(&mut self, seed: u64) {
        self.spec.seed = seed;
    }

    fn write_toml(&self, t: &mut TomlOut) {
        let s = &self.spec;
        let df = &s.dragonfly;
        t.header("[clique]");
        t.kv("pods", df.pods);
        t.kv("tins_per_pod", df.tins_per_pod);
        t.kv("local_links", df.local_links);
        t.kv("global_links", df.global_links);
        t.kv("local_ports", df.local_ports);
        t.kv("global_ports", df.global_ports);
        t.kv("lane_gbps", float(self.lane_gbps));
        t.kv("fec_overhead", float(self.fec_overhead));
        t.kv("fec_ns", dur_ns(self.fec));
        t.kv("local_link_ns", dur_ns(df.local_delay));
        t.kv("fiber_m", float(self.fiber_m));
        t.kv("fall_through_ns", dur_ns(s.fall_through));
        t.kv("crossbar_speedup", float(self.crossbar_speedup));
        t.kv("islip_iterations", s.islip_iterations);
        t.kv("local_vc_cells", s.local_vc_words / CELL_WORDS);
        t.kv("global_vc_cells", s.global_vc_words / CELL_WORDS);
        t.kv("endpoint_vc_cells", s.endpoint_vc_words / CELL_WORDS);
        t.kv("output_vc_cells", s.output_vc_words / CELL_WORDS);
        t.kv("hosts_per_tin", s.hosts_per_tin);
        t.kv("host_gbps", float(s.host_rate.0 as f64 / 1e9));
        t.kv("host_link_ns", dur_ns(s.host_delay));
        t.kv("routing", text(s.mode.name()));
        t.kv("nonminimal_weight", s.nonminimal_weight);
        t.kv(
            "nonminimal_bias_cells",
            s.nonminimal_bias_words / CELL_WORDS,
        );
        t.kv("hop_limit", s.hop_limit);
        t.kv("mtu_bytes", s.mtu_bytes);
        t.kv("header_bytes", s.header_bytes);
        t.kv("injection", text(s.injection.name()));
        t.kv("ingress_packets", s.ingress_packets);
        t.kv("reassembly_bytes", s.reassembly_bytes);
        t.kv("cts_window", s.cts_window);
        t.kv("ctd_depth", s.ctd_depth);
        t.kv("ecn_depth", s.ecn_depth);
        t.kv("swift_ip_target_ns", dur_ns(s.swift_ip.base_target));
        t.kv("swift_rma_target_ns", dur_ns(s.swift_rma.base_target));
        if let Some(b) = &self.bootstrap {
            b.write_toml(t);
        }
        if let Some(f) = &self.failure {
            f.write_toml(&s.dragonfly, t);
        }
    }

    fn build(&self) -> Result<Box<dyn Fabric>, ConfigError> {
        self.validate(&shoal_fabric::config::NO_KEYS)?;
        if self.failure.is_some() {
            return Err(value(
                "failure",
                "flow runs do not model failures: the paper gives nothing that recovers a cell \
                 lost with a link (no reassembly or grant timeout, no resend), so flows would \
                 stall (docs/results/aquila-failure.md); `shoal repro aquila-failure` runs this \
                 table",
            ));
        }
        Ok(Box::new(Clique {
            spec: self.spec.clone(),
        }))
    }
}

/// A built clique, ready to run.
pub struct Clique {
    pub spec: Spec,
}

impl Fabric for Clique {
    fn name(&self) -> &str {
        "aquila"
    }

    fn nodes(&self) -> usize {
        self.spec.hosts() as usize
    }

    fn run(
        &mut self,
        flows: &mut dyn FlowSource,
        limits: RunLimits,
        progress: &mut dyn Progress,
    ) -> Result<RunOutput, FabricError> {
        crate::run::run_flows(&self.spec, flows, limits, progress)
    }
}
