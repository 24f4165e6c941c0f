//! Stardust as a scenario names it: `fabric = "stardust"` and its `[stardust]` table: the raw
//! keys, their defaults (each with the paper section it comes from, or "ours" with the
//! reason), every rule in [`StardustSpec::validate`], and the resolved table written back.

use crate::Stardust;
use crate::config::{
    AdapterConfig, ClassPolicy, FciReaction, IngressFull, LowLatency, MAX_CLASSES,
};
use crate::hosts::HostTransport;
use crate::net::{NetParams, Network};
use crate::reachability::{MAX_BITMAP, ReachConfig};
use serde::Deserialize;
use shoal_base::{Dur, Rate};
use shoal_fabric::config::{ConfigError, ErrorKind, IntRule, Keys, TableError, TomlOut};
use shoal_fabric::config::{dur_ns, float, read_table, short, text, value};
use shoal_fabric::{Fabric, FabricKind, NodeGroups, ResolvedFabric, Resolving};
use shoal_metrics::IdealFct;
use shoal_topology::{CellClos, FatTree, LeafSpine, Topology};
use shoal_transport::TcpConfig;

/// Defaults of the `[stardust]` keys (docs/scenarios.md lists them with their sources).
pub mod defaults {
    /// Ours: a single tier (FA-FE-FA, §3) holding the 512 nodes of Shoal's Fig. 15 workload:
    /// 32 adapters as top-of-rack devices with 16 ports of 50 Gb/s, each with one link to
    /// each of 18 elements of 32 ports (the packet baseline's 32-port switches). 18 links for
    /// 16 ports is a raw speed-up of 1.125: after 16 B cell headers on 256 B cells the fabric
    /// carries 1.05 times the ports' rate, §6.2's fabric speed-up.
    pub const TOPOLOGY: &str = "cell-clos";
    pub const FAS: i64 = 32;
    pub const FE1_PER_POD: i64 = 18;
    pub const PARALLEL: i64 = 1;
    pub const FE2: i64 = 0;
    pub const PORTS_PER_FA: i64 = 16;
    /// §6.2: "256×50Gbps links"; the port rate of Shoal §7.3's baselines.
    pub const LINK_GBPS: f64 = 50.0;
    pub const PORT_GBPS: f64 = 50.0;
    /// §6.2: "The length of each link is 100m" = 500 ns.
    /// The link rate is `link_gbps` unless the scenario asks for it derived.
    pub const LINK_SIZING: &str = "given";
    pub const LINK_DELAY_NS: f64 = 500.0;
    /// Ours: a host's cable to its top-of-rack adapter, as the packet baselines' links.
    pub const HOST_DELAY_NS: f64 = 100.0;
    /// Shoal §7.3's packets (the workload these runs share) with 40 B of TCP/IP headers.
    pub const PACKET_BYTES: i64 = 1500;
    pub const HEADER_BYTES: i64 = 40;
    pub const CLASSES: i64 = 1;
    /// §4.1: "cells of a limited size (e.g. up to 256B)".
    pub const CELL_BYTES: i64 = 256;
    /// Ours (the paper gives none): a 16 B cell header (destination, sequence number, packing
    /// descriptors).
    pub const CELL_HEADER_BYTES: i64 = 16;
    /// Ours: a control cell (status or credit) as a minimum Ethernet frame, 64 B.
    pub const CONTROL_BYTES: i64 = 64;
    /// §4.1: "a 'credit', (e.g., 4KB)".
    pub const CREDIT_BYTES: i64 = 4096;
    /// §4.1: "the credit rate is set slightly above the egress port bandwidth (e.g., 2%)".
    pub const CREDIT_SPEEDUP: f64 = 0.02;
    /// Ours: 256 KB of egress buffer per port, several credit round trips at 50 Gb/s through
    /// two tiers (a round trip of 4 hops of 100 m each way is about 5 µs, 31 KB).
    pub const EGRESS_BUFFER_KB: f64 = 256.0;
    /// §5.7: "32MB packet buffer per device".
    pub const INGRESS_BUFFER_MB: f64 = 32.0;
    /// §5.6: the adapter "can avoid packet loss by sending flow control messages back to the
    /// host".
    pub const INGRESS_FULL: &str = "pause";
    /// Ours: 50 µs; cells of a stream are at most a few fabric queues apart (microseconds),
    /// so only a lost cell holds a gap this long.
    pub const REASSEMBLY_TIMEOUT_US: f64 = 50.0;
    /// §4.1 keeps credit accounts per VOQ ("the amount of surplus data is stored for later
    /// accounting": data sent beyond a credit is a debt the next credits pay); ours: an empty
    /// VOQ also keeps up to a credit of unspent credit for half the reassembly timeout (the
    /// scheduler writes off what an off VOQ owes after the whole timeout, and the data sent
    /// against kept credit must reach it first).
    pub const CREDIT_KEEP_US: f64 = 25.0;
    /// Ours (the paper does not say how a request is kept alive): a VOQ without credit asks
    /// again after 50 µs, then 100, 200, ... up to 64 times it (3.2 ms), so a destination
    /// that answers each of n VOQs once per n credits is not asked n times per 50 µs.
    pub const STATUS_REFRESH_DOUBLINGS: i64 = 6;
    /// §6.2: "128 × 256B × 256" of element memory for 256 links: 128 cells per link.
    pub const POOL_CELLS_PER_LINK: i64 = 128;
    /// Ours: FCI above a quarter of a link's share of the pool.
    pub const FCI_THRESHOLD_CELLS: i64 = 32;
    /// Ours (§4.2 gives no law, [`crate::config::FciReaction`] says ours): windows of 5 µs,
    /// a few feedback loops of the default fabric (a credit to the source and its cells back
    /// over 100 m links, about 2.5 µs); a window cuts the credit rate by 1/8 of the fraction
    /// of cells marked in it (a window all marked cuts 1/8, so a queue that stays above the
    /// threshold for a window or two, as when the rate is a little above the capacity, costs
    /// a little rate; half, DCTCP's alpha / 2, swung adapter 4 of
    /// tests/failures.rs's last-stage failure down to 0.64 of its rate, where 0.92 is left);
    /// a window without marks gives back 1/32 of the full rate; never below a quarter.
    pub const FCI_DECREASE: f64 = 0.125;
    pub const FCI_INTERVAL_NS: f64 = 5000.0;
    pub const FCI_INCREASE: f64 = 1.0 / 32.0;
    pub const FCI_MIN_RATE: f64 = 0.25;
    /// Ours: §5.6's "replaced every few rounds" read as 3.
    pub const PERMUTATION_ROUNDS: i64 = 3;
    /// Appendix E, Table 4 and §5.9: a reachability message every 10,000 clocks of 1 GHz on
    /// each link, 128 adapters per message, a change believed after three consecutive
    /// messages.
    pub const REACH_INTERVAL_US: f64 = 10.0;
    pub const REACH_BITMAP: i64 = 128;
    pub const REACH_CONFIRM: i64 = 3;
    /// Ours (§5.9 gives no numbers): a link is excluded for errors when more than 4 of its
    /// last 64 messages arrive corrupted (a message error rate above 6%).
    pub const REACH_ERROR_WINDOW: i64 = 64;
    pub const REACH_ERROR_LIMIT: i64 = 4;
    pub const CLASS_POLICY: &str = "strict";
    /// Ours: no transport above the fabric, so that the fabric's own scheduling is what is
    /// measured (§6.2's simulations inject cells); `"tcp"` is §6.3's NewReno.
    pub const TRANSPORT: &str = "none";
    /// Ours (§5.7 bounds the share of low-latency VOQs but gives no number): each may send a
    /// tenth of its destination port's rate, with bursts of one credit's worth (4 KB).
    pub const LOW_LATENCY_SHARE: f64 = 0.1;
    pub const LOW_LATENCY_BURST_BYTES: i64 = 4096;
}

const FAS: IntRule = IntRule::new("stardust.fas", 2, 65_535);
const FAS_PER_POD: IntRule = IntRule::new("stardust.fas_per_pod", 1, 65_535);
const FE1_PER_POD: IntRule = IntRule::new("stardust.fe1_per_pod", 1, 4096);
const PARALLEL: IntRule = IntRule::new("stardust.parallel", 1, 64);
const FE2: IntRule = IntRule::new("stardust.fe2", 0, 4096);
const K: IntRule = IntRule::new("stardust.k", 2, 64);
const LEAVES: IntRule = IntRule::new("stardust.leaves", 1, 4096);
const SPINES: IntRule = IntRule::new("stardust.spines", 1, 4096);
const FAS_PER_LEAF: IntRule = IntRule::new("stardust.fas_per_leaf", 1, 4096);
const PORTS_PER_FA: IntRule = IntRule::new("stardust.ports_per_fa", 1, 1024);
const PACKET_BYTES: IntRule = IntRule::new("stardust.packet_bytes", 42, 65_535);
const HEADER_BYTES: IntRule = IntRule::new("stardust.header_bytes", 0, 4096);
const CLASSES: IntRule = IntRule::new("stardust.classes", 1, MAX_CLASSES as i64);
const CELL_BYTES: IntRule = IntRule::new("stardust.cell_bytes", 32, 16_384);
const CELL_HEADER_BYTES: IntRule = IntRule::new("stardust.cell_header_bytes", 0, 1024);
const CONTROL_BYTES: IntRule = IntRule::new("stardust.control_bytes", 8, 16_384);
const CREDIT_BYTES: IntRule = IntRule::new("stardust.credit_bytes", 64, 1 << 24);
const POOL: IntRule = IntRule::new("stardust.pool_cells_per_link", 1, 1 << 20);
const FCI_THRESHOLD: IntRule = IntRule::new("stardust.fci_threshold_cells", 0, 1 << 20);
const ROUNDS: IntRule = IntRule::new("stardust.permutation_rounds", 1, 1 << 20);
const REFRESH_DOUBLINGS: IntRule = IntRule::new("stardust.status_refresh_doublings", 0, 20);
const REACH_BITMAP: IntRule = IntRule::new("stardust.reach_bitmap", 1, MAX_BITMAP as i64);
const REACH_CONFIRM: IntRule = IntRule::new("stardust.reach_confirm", 1, 1024);
const REACH_ERROR_WINDOW: IntRule = IntRule::new("stardust.reach_error_window", 1, 64);
const LOW_LATENCY_BURST: IntRule = IntRule::new("stardust.low_latency_burst_bytes", 0, 1 << 24);
const REACH_ERROR_LIMIT: IntRule = IntRule::new("stardust.reach_error_limit", 0, 63);

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of stardust keys")]
struct RawStardust {
    topology: Option<String>,
    fas: Option<i64>,
    fas_per_pod: Option<i64>,
    fe1_per_pod: Option<i64>,
    parallel: Option<i64>,
    fe2: Option<i64>,
    k: Option<i64>,
    leaves: Option<i64>,
    spines: Option<i64>,
    fas_per_leaf: Option<i64>,
    ports_per_fa: Option<i64>,
    link_gbps: Option<f64>,
    link_sizing: Option<String>,
    port_gbps: Option<f64>,
    link_delay_ns: Option<f64>,
    host_delay_ns: Option<f64>,
    packet_bytes: Option<i64>,
    header_bytes: Option<i64>,
    classes: Option<i64>,
    class_policy: Option<String>,
    class_weights: Option<Vec<i64>>,
    low_latency_classes: Option<Vec<i64>>,
    low_latency_share: Option<f64>,
    low_latency_burst_bytes: Option<i64>,
    transport: Option<String>,
    cell_bytes: Option<i64>,
    cell_header_bytes: Option<i64>,
    control_bytes: Option<i64>,
    credit_bytes: Option<i64>,
    credit_speedup: Option<f64>,
    egress_buffer_kb: Option<f64>,
    ingress_buffer_mb: Option<f64>,
    ingress_full: Option<String>,
    reassembly_timeout_us: Option<f64>,
    status_refresh_doublings: Option<i64>,
    credit_keep_us: Option<f64>,
    pool_cells_per_link: Option<i64>,
    fci_threshold_cells: Option<i64>,
    fci_decrease: Option<f64>,
    fci_interval_ns: Option<f64>,
    fci_increase: Option<f64>,
    fci_min_rate: Option<f64>,
    permutation_rounds: Option<i64>,
    reach_interval_us: Option<f64>,
    reach_bitmap: Option<i64>,
    reach_confirm: Option<i64>,
    reach_error_window: Option<i64>,
    reach_error_limit: Option<i64>,
}

/// The low-latency classes (`low_latency_*` keys): none unless `low_latency_classes` names
/// some, each below `classes` and named once; the share is of the port rate, above 0.
fn low_latency(
    raw: &RawStardust,
    classes: u8,
    port_rate: Rate,
    keys: &Keys<'_>,
) -> Result<LowLatency, ConfigError> {
    use defaults as d;
    let Some(list) = &raw.low_latency_classes else {
        for (given, key) in [
            (
                raw.low_latency_share.is_some(),
                "stardust.low_latency_share",
            ),
            (
                raw.low_latency_burst_bytes.is_some(),
                "stardust.low_latency_burst_bytes",
            ),
        ] {
            if given {
                return Err(value(key, "needs low_latency_classes"));
            }
        }
        return Ok(LowLatency::NONE);
    };
    let mut mask = 0u8;
    for &c in list {
        let c = keys.int_req(
            "stardust.low_latency_classes",
            Some(c),
            0,
            classes as i64 - 1,
        )?;
        if mask >> c & 1 == 1 {
            return Err(value(
                "stardust.low_latency_classes",
                format!("class {c} is named twice"),
            ));
        }
        mask |= 1 << c;
    }
    let share = keys.num(
        "stardust.low_latency_share",
        raw.low_latency_share.unwrap_or(d::LOW_LATENCY_SHARE),
        0.0,
        true,
    )?;
    if share > 1.0 {
        return Err(value(
            "stardust.low_latency_share",
            format!("{share} is a share of the port rate: must be above 0, at most 1"),
        ));
    }
    // The token bucket's rate is whole bits per second: a share that leaves less than the
    // slowest rate any key may give (1 Mb/s) is a typo, not a rate to round up.
    let rate = share * port_rate.0 as f64;
    if rate < shoal_fabric::config::MIN_GBPS * 1e9 {
        return Err(value(
            "stardust.low_latency_share",
            format!(
                "{} of the port rate is {} b/s, below the slowest rate a scenario may give (1 Mb/s)",
                short(share),
                short(rate)
            ),
        ));
    }
    Ok(LowLatency {
        classes: mask,
        rate: Rate(rate.round() as u64),
        burst_bytes: LOW_LATENCY_BURST
            .read(raw.low_latency_burst_bytes, d::LOW_LATENCY_BURST_BYTES)?,
    })
}

/// The fabric links' rate: `link_gbps` as given (`link_sizing = "given"`, the default), or
/// with `link_sizing = "credit-rate"` the least rate that carries the ports' credit rate after
/// cell headers and credit cells ([`crate::speedup::credit_link_bps`]: §4.1's credit rate
/// "slightly below the fabric speed-up", §6.2's utilisation "after deducting ... cell headers
/// and control cell overheads"), a link per host port on a fat-tree or leaf-spine and the
/// ports shared over `fe1_per_pod` x `parallel` links on a cell-clos.
fn link_rate(
    raw: &RawStardust,
    shape: Shape,
    a: &AdapterConfig,
    keys: &Keys<'_>,
) -> Result<Rate, ConfigError> {
    use defaults as d;
    match raw.link_sizing.as_deref().unwrap_or(d::LINK_SIZING) {
        "given" => keys.gbps("stardust.link_gbps", raw.link_gbps.unwrap_or(d::LINK_GBPS)),
        "credit-rate" => {
            if raw.link_gbps.is_some() {
                return Err(value(
                    keys.blame(&["stardust.link_gbps", "stardust.link_sizing"]),
                    "link_sizing = \"credit-rate\" derives the links' rate: give it or \
                     link_gbps, not both",
                ));
            }
            let links = match shape {
                Shape::CellClos {
                    fe1_per_pod,
                    parallel,
                    ..
                } => fe1_per_pod * parallel,
                Shape::FatTree { .. } | Shape::LeafSpine { .. } => 1,
            };
            // `validate` refuses a header of a whole cell; until it runs, keep the arithmetic
            // defined.
            let costs = crate::speedup::CellCosts {
                cell_bytes: a.cell_bytes,
                cell_header_bytes: a.cell_header_bytes.min(a.cell_bytes - 1),
                control_bytes: a.control_bytes,
                credit_bytes: a.credit_bytes,
            };
            let bps = crate::speedup::credit_link_bps(
                a.port_rate.0 as f64,
                a.credit_speedup_ppm as f64 / 1e6,
                a.ports as u32,
                links,
                &costs,
            );
            keys.gbps("stardust.link_sizing", bps / 1e9)
        }
        other => Err(value(
            "stardust.link_sizing",
            format!("unknown sizing {other:?}: use \"given\" or \"credit-rate\""),
        )),
    }
}

/// The most VOQs (adapters² x ports x classes) a network may hold: measured at about 200 B a
/// VOQ with everything that grows with it (600 adapters of 16 ports took 1.1 GB), so about
/// 7 GB at this bound.
const MAX_VOQS: u64 = 1 << 25;

/// The shape of the fabric under the adapters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Adapters with many links over one or two element tiers ([`CellClos`]).
    CellClos {
        fas: u32,
        fas_per_pod: u32,
        fe1_per_pod: u32,
        parallel: u32,
        fe2: u32,
    },
    /// The k-ary fat-tree with an adapter in place of every host (one link each) and elements
    /// in its three switch tiers (Appendix G's 432-node network at k = 12).
    FatTree { k: u32 },
    /// A two-tier Clos of elements with an adapter in place of every host.
    LeafSpine {
        leaves: u32,
        spines: u32,
        fas_per_leaf: u32,
    },
}

/// The resolved `[stardust]` table.
#[derive(Clone, Debug, PartialEq)]
pub struct StardustSpec {
    pub shape: Shape,
    pub link_rate: Rate,
    pub link_delay: Dur,
    pub host_delay: Dur,
    pub packet_bytes: u32,
    pub header_bytes: u32,
    pub pool_cells_per_link: u32,
    pub fci_threshold: u32,
    pub adapter: AdapterConfig,
    pub reach: ReachConfig,
    pub seed: u64,
    pub transport: HostTransport,
}

/// A fraction in 1/65,536.
/// A fraction from 0 to 1, kept in 1/65,536 (the FCI factor's unit).
fn frac(key: &str, v: f64, keys: &Keys<'_>) -> Result<u32, ConfigError> {
    Ok(keys.steps(key, v, 65_536.0, (0.0, 1.0))? as u32)
}

impl StardustSpec {
    pub fn topology(&self) -> Result<Topology, ConfigError> {
        let (rate, delay) = (self.link_rate, self.link_delay);
        let t = match self.shape {
            Shape::CellClos {
                fas,
                fas_per_pod,
                fe1_per_pod,
                parallel,
                fe2,
            } => CellClos {
                fas,
                fas_per_pod,
                fe1_per_pod,
                parallel,
                fe2,
                rate,
                link_delay: delay,
            }
            .build(),
            Shape::FatTree { k } => FatTree {
                k,
                oversubscription: 1,
                rate,
                link_delay: delay,
            }
            .build(),
            Shape::LeafSpine {
                leaves,
                spines,
                fas_per_leaf,
            } => LeafSpine {
                leaves,
                spines,
                hosts_per_leaf: fas_per_leaf,
                host_rate: rate,
                fabric_rate: rate,
                link_delay: delay,
            }
            .build(),
        };
        t.map_err(|e| ConfigError {
            key: "stardust.topology".into(),
            kind: ErrorKind::Build,
            reason: e.to_string(),
        })
    }

    /// Checks every rule the values obey (`keys`: which the file gives, to blame the right
    /// one of two that conflict).
    pub fn validate(&self, keys: &Keys<'_>) -> Result<(), ConfigError> {
        let a = &self.adapter;
        PACKET_BYTES.check(self.packet_bytes as i64)?;
        HEADER_BYTES.check(self.header_bytes as i64)?;
        CELL_BYTES.check(a.cell_bytes as i64)?;
        CELL_HEADER_BYTES.check(a.cell_header_bytes as i64)?;
        CONTROL_BYTES.check(a.control_bytes as i64)?;
        CREDIT_BYTES.check(a.credit_bytes as i64)?;
        PORTS_PER_FA.check(a.ports as i64)?;
        CLASSES.check(a.classes as i64)?;
        POOL.check(self.pool_cells_per_link as i64)?;
        FCI_THRESHOLD.check(self.fci_threshold as i64)?;
        ROUNDS.check(a.permutation_rounds as i64)?;
        REFRESH_DOUBLINGS.check(a.status_refresh_doublings as i64)?;
        let r = &self.reach;
        REACH_BITMAP.check(r.bitmap as i64)?;
        REACH_CONFIRM.check(r.confirm as i64)?;
        REACH_ERROR_WINDOW.check(r.error_window as i64)?;
        REACH_ERROR_LIMIT.check(r.error_limit as i64)?;
        if r.error_limit >= r.error_window {
            return Err(value(
                keys.blame(&["stardust.reach_error_limit", "stardust.reach_error_window"]),
                format!(
                    "an error limit of {} in a window of {} messages never excludes a link",
                    r.error_limit, r.error_window
                ),
            ));
        }
        if r.interval.0 == 0 {
            return Err(value("stardust.reach_interval_us", "must be above zero"));
        }
        if self.header_bytes >= self.packet_bytes {
            return Err(value(
                keys.blame(&["stardust.header_bytes", "stardust.packet_bytes"]),
                format!(
                    "a {} B packet leaves no payload after a {} B header",
                    self.packet_bytes, self.header_bytes
                ),
            ));
        }
        if a.cell_header_bytes >= a.cell_bytes {
            return Err(value(
                keys.blame(&["stardust.cell_header_bytes", "stardust.cell_bytes"]),
                format!(
                    "a {} B cell leaves no payload after a {} B header",
                    a.cell_bytes, a.cell_header_bytes
                ),
            ));
        }
        if a.cell_payload() > u16::MAX as u32 {
            return Err(value(
                "stardust.cell_bytes",
                "a cell holds at most 65,535 B",
            ));
        }
        // A credit below a packet would never release one if a VOQ's balance could not build
        // up; it can, but a credit below a cell makes every burst a runt: refuse that.
        if a.credit_bytes < a.cell_payload() {
            return Err(value(
                keys.blame(&["stardust.credit_bytes", "stardust.cell_bytes"]),
                format!(
                    "a credit of {} B is less than one cell's payload ({} B)",
                    a.credit_bytes,
                    a.cell_payload()
                ),
            ));
        }
        let need = a.credit_bytes as u64 + self.packet_bytes as u64;
        if a.egress_buffer_bytes < need {
            return Err(value(
                keys.blame(&["stardust.egress_buffer_kb", "stardust.credit_bytes"]),
                format!(
                    "an egress buffer of {} B cannot hold one credit and one packet ({need} B)",
                    a.egress_buffer_bytes
                ),
            ));
        }
        let headroom = a.ports as u64
            * (a.port_rate.bytes_in(Dur(2 * self.host_delay.0)) + 2 * self.packet_bytes as u64);
        if a.ingress_buffer_bytes < 2 * headroom + self.packet_bytes as u64 {
            return Err(value(
                "stardust.ingress_buffer_mb",
                format!(
                    "{} B of ingress buffer leave no room above the {headroom} B that host \
                     links may have in flight when paused",
                    a.ingress_buffer_bytes
                ),
            ));
        }
        if a.fci.min_rate == 0 {
            return Err(value(
                "stardust.fci_min_rate",
                "a credit rate throttled to zero never recovers: must be above 0",
            ));
        }
        if let ClassPolicy::Weighted(w) = a.class_policy
            && w[..a.classes as usize].contains(&0)
        {
            return Err(value(
                "stardust.class_weights",
                "a class of weight 0 would never get credit: every weight must be 1 or more",
            ));
        }
        // Every adapter keeps a VOQ per destination port and class, and every egress port a
        // view of each source adapter's VOQ: state grows as adapters² x ports x classes. Checked
        // before the topology is built, so a mistyped size is refused, not run out of memory.
        let fas = match self.shape {
            Shape::CellClos { fas, .. } => fas as u64,
            Shape::FatTree { k } => (k as u64).pow(3) / 4,
            Shape::LeafSpine {
                leaves,
                fas_per_leaf,
                ..
            } => leaves as u64 * fas_per_leaf as u64,
        };
        let voqs = fas
            .saturating_mul(fas)
            .saturating_mul(a.ports as u64 * a.classes as u64);
        if voqs > MAX_VOQS {
            return Err(value(
                keys.blame(&[
                    "stardust.fas",
                    "stardust.k",
                    "stardust.leaves",
                    "stardust.fas_per_leaf",
                    "stardust.ports_per_fa",
                    "stardust.classes",
                ]),
                format!(
                    "{fas} adapters of {} ports and {} classes keep {voqs} VOQs and views, above \
                     the {MAX_VOQS} this machine's memory holds (about 200 B each)",
                    a.ports, a.classes
                ),
            ));
        }
        let topo = self.topology()?;
        if topo.hosts() != a.fas as usize {
            return Err(value(
                "stardust.topology",
                format!(
                    "the topology has {} adapters, the adapters were built for {}",
                    topo.hosts(),
                    a.fas
                ),
            ));
        }
        let nodes = topo.hosts() as u64 * a.ports as u64;
        if nodes > u16::MAX as u64 {
            return Err(value(
                keys.blame(&["stardust.ports_per_fa", "stardust.fas"]),
                format!("{nodes} host ports: more than the 65,535 nodes a workload addresses"),
            ));
        }
        Ok(())
    }

    pub fn network(&self) -> Result<Network, ConfigError> {
        let mut net = Network::new(
            self.topology()?,
            self.adapter,
            NetParams {
                pool_cells_per_link: self.pool_cells_per_link,
                fci_threshold: self.fci_threshold,
                packet_bytes: self.packet_bytes,
                header_bytes: self.header_bytes,
                host_delay: self.host_delay,
                seed: self.seed,
                reach: self.reach,
            },
        );
        net.transport = self.transport;
        Ok(net)
    }
}

/// The registry's entry for Stardust.
pub struct Kind;

impl FabricKind for Kind {
    fn names(&self) -> &'static [&'static str] {
        &["stardust"]
    }

    fn tables(&self) -> &'static [&'static str] {
        &["stardust"]
    }

    fn resolve(&self, input: &Resolving<'_>) -> Result<Box<dyn ResolvedFabric>, TableError> {
        use defaults as d;
        let keys = input.keys;
        let raw: RawStardust = read_table(input.text, "stardust")?.unwrap_or_default();
        let topology = raw.topology.as_deref().unwrap_or(d::TOPOLOGY);
        let given: [(&str, bool); 9] = [
            ("fas", raw.fas.is_some()),
            ("fas_per_pod", raw.fas_per_pod.is_some()),
            ("fe1_per_pod", raw.fe1_per_pod.is_some()),
            ("parallel", raw.parallel.is_some()),
            ("fe2", raw.fe2.is_some()),
            ("k", raw.k.is_some()),
            ("leaves", raw.leaves.is_some()),
            ("spines", raw.spines.is_some()),
            ("fas_per_leaf", raw.fas_per_leaf.is_some()),
        ];
        let own: &[&str] = match topology {
            "cell-clos" => &["fas", "fas_per_pod", "fe1_per_pod", "parallel", "fe2"],
            "fat-tree" => &["k"],
            "leaf-spine" => &["leaves", "spines", "fas_per_leaf"],
            other => {
                return Err(value(
                    "stardust.topology",
                    format!(
                        "unknown topology {other:?}: use \"cell-clos\", \"fat-tree\" or \
                         \"leaf-spine\""
                    ),
                )
                .into());
            }
        };
        if let Some((k, _)) = given.iter().find(|(k, g)| *g && !own.contains(k)) {
            return Err(value(
                &format!("stardust.{k}"),
                format!("not a key of topology {topology:?}"),
            )
            .into());
        }
        let shape = match topology {
            "cell-clos" => {
                let fas: u32 = FAS.read(raw.fas, d::FAS)?;
                Shape::CellClos {
                    fas,
                    fas_per_pod: FAS_PER_POD.read(raw.fas_per_pod, fas as i64)?,
                    fe1_per_pod: FE1_PER_POD.read(raw.fe1_per_pod, d::FE1_PER_POD)?,
                    parallel: PARALLEL.read(raw.parallel, d::PARALLEL)?,
                    fe2: FE2.read(raw.fe2, d::FE2)?,
                }
            }
            "fat-tree" => Shape::FatTree {
                k: K.read(raw.k, 12)?,
            },
            _ => Shape::LeafSpine {
                leaves: LEAVES.read(raw.leaves, 8)?,
                spines: SPINES.read(raw.spines, 4)?,
                fas_per_leaf: FAS_PER_LEAF.read(raw.fas_per_leaf, 4)?,
            },
        };
        let fas = match shape {
            Shape::CellClos { fas, .. } => fas,
            Shape::FatTree { k } => k * k * k / 4,
            Shape::LeafSpine {
                leaves,
                fas_per_leaf,
                ..
            } => leaves * fas_per_leaf,
        };
        let classes: u8 = CLASSES.read(raw.classes, d::CLASSES)?;
        let class_policy = match raw.class_policy.as_deref().unwrap_or(d::CLASS_POLICY) {
            "strict" => {
                if raw.class_weights.is_some() {
                    return Err(value(
                        "stardust.class_weights",
                        "weights need class_policy = \"weighted\"",
                    )
                    .into());
                }
                ClassPolicy::Strict
            }
            "weighted" => {
                let w = raw
                    .class_weights
                    .as_ref()
                    .ok_or_else(|| keys.missing("stardust.class_weights"))?;
                if w.len() != classes as usize {
                    return Err(value(
                        "stardust.class_weights",
                        format!("{} weights for {classes} classes", w.len()),
                    )
                    .into());
                }
                let mut ws = [0u16; MAX_CLASSES];
                for (i, &x) in w.iter().enumerate() {
                    // A weight of 0 (a class never given credit) is refused by `validate`.
                    ws[i] = keys.int_req("stardust.class_weights", Some(x), 0, 65_535)? as u16;
                }
                ClassPolicy::Weighted(ws)
            }
            other => {
                return Err(value(
                    "stardust.class_policy",
                    format!("unknown policy {other:?}: use \"strict\" or \"weighted\""),
                )
                .into());
            }
        };
        let port_rate = keys.gbps("stardust.port_gbps", raw.port_gbps.unwrap_or(d::PORT_GBPS))?;
        let low_latency = low_latency(&raw, classes, port_rate, keys)?;
        let ingress_full = match raw.ingress_full.as_deref().unwrap_or(d::INGRESS_FULL) {
            "pause" => IngressFull::Pause,
            "drop" => IngressFull::Drop,
            other => {
                return Err(value(
                    "stardust.ingress_full",
                    format!("unknown reaction {other:?}: use \"pause\" or \"drop\""),
                )
                .into());
            }
        };
        // A fraction of the port rate, kept in parts per million.
        let speedup_ppm = keys.steps(
            "stardust.credit_speedup",
            raw.credit_speedup.unwrap_or(d::CREDIT_SPEEDUP),
            1e6,
            (0.0, 1.0),
        )? as u32;
        let kb = keys.num(
            "stardust.egress_buffer_kb",
            raw.egress_buffer_kb.unwrap_or(d::EGRESS_BUFFER_KB),
            0.0,
            true,
        )?;
        let mb = keys.num(
            "stardust.ingress_buffer_mb",
            raw.ingress_buffer_mb.unwrap_or(d::INGRESS_BUFFER_MB),
            0.0,
            true,
        )?;
        for (key, given, bytes) in [
            ("stardust.egress_buffer_kb", kb, kb * 1024.0),
            ("stardust.ingress_buffer_mb", mb, mb * 1024.0 * 1024.0),
        ] {
            if bytes > 1e15 {
                return Err(value(
                    key,
                    format!(
                        "{} is a buffer beyond 1 PB: no device has one",
                        short(given)
                    ),
                )
                .into());
            }
        }
        let timeout = keys.us(
            "stardust.reassembly_timeout_us",
            raw.reassembly_timeout_us
                .unwrap_or(d::REASSEMBLY_TIMEOUT_US),
            true,
        )?;
        let doublings =
            REFRESH_DOUBLINGS.read(raw.status_refresh_doublings, d::STATUS_REFRESH_DOUBLINGS)?;
        // Room to add the longest wait to any time of a run.
        if timeout.checked_mul(4u64 << doublings).is_none() {
            return Err(value(
                keys.blame(&[
                    "stardust.reassembly_timeout_us",
                    "stardust.status_refresh_doublings",
                ]),
                "the longest refresh wait (the timeout times 2^doublings) is longer than the \
                 simulator can count",
            )
            .into());
        }
        let keep = keys.us(
            "stardust.credit_keep_us",
            raw.credit_keep_us.unwrap_or(d::CREDIT_KEEP_US),
            false,
        )?;
        if keep >= timeout {
            return Err(value(
                keys.blame(&["stardust.credit_keep_us", "stardust.reassembly_timeout_us"]),
                "credit kept as long as the reassembly timeout would be written off while \
                 the VOQ may still spend it: must be shorter",
            )
            .into());
        }
        let adapter = AdapterConfig {
            fas,
            ports: PORTS_PER_FA.read(raw.ports_per_fa, d::PORTS_PER_FA)?,
            classes,
            port_rate,
            credit_bytes: CREDIT_BYTES.read(raw.credit_bytes, d::CREDIT_BYTES)?,
            credit_speedup_ppm: speedup_ppm,
            cell_bytes: CELL_BYTES.read(raw.cell_bytes, d::CELL_BYTES)?,
            cell_header_bytes: CELL_HEADER_BYTES
                .read(raw.cell_header_bytes, d::CELL_HEADER_BYTES)?,
            control_bytes: CONTROL_BYTES.read(raw.control_bytes, d::CONTROL_BYTES)?,
            egress_buffer_bytes: (kb * 1024.0).round() as u64,
            ingress_buffer_bytes: (mb * 1024.0 * 1024.0).round() as u64,
            ingress_full,
            reassembly_timeout: Dur(timeout),
            status_refresh_doublings: doublings,
            credit_keep: Dur(keep),
            class_policy,
            fci: FciReaction {
                decrease: frac(
                    "stardust.fci_decrease",
                    raw.fci_decrease.unwrap_or(d::FCI_DECREASE),
                    keys,
                )?,
                interval: keys.ns(
                    "stardust.fci_interval_ns",
                    raw.fci_interval_ns.unwrap_or(d::FCI_INTERVAL_NS),
                    true,
                )?,
                increase: frac(
                    "stardust.fci_increase",
                    raw.fci_increase.unwrap_or(d::FCI_INCREASE),
                    keys,
                )?,
                min_rate: frac(
                    "stardust.fci_min_rate",
                    raw.fci_min_rate.unwrap_or(d::FCI_MIN_RATE),
                    keys,
                )?,
            },
            permutation_rounds: ROUNDS.read(raw.permutation_rounds, d::PERMUTATION_ROUNDS)?,
            low_latency,
        };
        let mut spec = StardustSpec {
            shape,
            link_rate: link_rate(&raw, shape, &adapter, keys)?,
            link_delay: keys.ns(
                "stardust.link_delay_ns",
                raw.link_delay_ns.unwrap_or(d::LINK_DELAY_NS),
                false,
            )?,
            host_delay: keys.ns(
                "stardust.host_delay_ns",
                raw.host_delay_ns.unwrap_or(d::HOST_DELAY_NS),
                false,
            )?,
            packet_bytes: PACKET_BYTES.read(raw.packet_bytes, d::PACKET_BYTES)?,
            header_bytes: HEADER_BYTES.read(raw.header_bytes, d::HEADER_BYTES)?,
            pool_cells_per_link: POOL.read(raw.pool_cells_per_link, d::POOL_CELLS_PER_LINK)?,
            fci_threshold: FCI_THRESHOLD.read(raw.fci_threshold_cells, d::FCI_THRESHOLD_CELLS)?,
            adapter,
            reach: ReachConfig {
                interval: Dur(keys.us(
                    "stardust.reach_interval_us",
                    raw.reach_interval_us.unwrap_or(d::REACH_INTERVAL_US),
                    true,
                )?),
                bitmap: REACH_BITMAP.read(raw.reach_bitmap, d::REACH_BITMAP)?,
                confirm: REACH_CONFIRM.read(raw.reach_confirm, d::REACH_CONFIRM)?,
                error_window: REACH_ERROR_WINDOW
                    .read(raw.reach_error_window, d::REACH_ERROR_WINDOW)?,
                error_limit: REACH_ERROR_LIMIT.read(raw.reach_error_limit, d::REACH_ERROR_LIMIT)?,
            },
            seed: input.seed,
            transport: HostTransport::None,
        };
        spec.transport = match raw.transport.as_deref().unwrap_or(d::TRANSPORT) {
            "none" => HostTransport::None,
            // §6.3: "an unmodified TCP (New Reno)", its segments filling the hosts' packets.
            "tcp" => HostTransport::Tcp(TcpConfig {
                mss: spec.packet_bytes.saturating_sub(spec.header_bytes).max(1),
                ..TcpConfig::newreno()
            }),
            other => {
                return Err(value(
                    "stardust.transport",
                    format!("unknown transport {other:?}: use \"none\" or \"tcp\""),
                )
                .into());
            }
        };
        spec.validate(keys)?;
        Ok(Box::new(spec))
    }
}

impl ResolvedFabric for StardustSpec {
    fn name(&self) -> &str {
        "stardust"
    }

    /// Hosts by Fabric Adapter (node n on adapter n / ports_per_fa, as the simulator maps
    /// them), then by the adapters' pod (cell Clos of several pods, fat-tree) or leaf element.
    fn node_groups(&self) -> Vec<NodeGroups> {
        let ports = self.adapter.ports as usize;
        let hosts = self.nodes();
        let block = |level, fas: u32| NodeGroups::blocks(level, hosts, ports * fas as usize);
        let mut out = vec![block("fa", 1)];
        match self.shape {
            Shape::CellClos {
                fas, fas_per_pod, ..
            } if fas_per_pod < fas => out.push(block("pod", fas_per_pod)),
            Shape::CellClos { .. } => {}
            Shape::FatTree { k } => out.extend([block("leaf", k / 2), block("pod", k * k / 4)]),
            Shape::LeafSpine { fas_per_leaf, .. } => out.push(block("leaf", fas_per_leaf)),
        }
        out
    }

    fn nodes(&self) -> usize {
        self.adapter.fas as usize * self.adapter.ports as usize
    }

    fn node_rate(&self) -> Rate {
        self.adapter.port_rate
    }

    /// A lower bound on a lone flow's FCT: its bytes and headers at the port rate, the two host
    /// links' propagation and the shortest fabric path's (the status-credit round trip and
    /// the cell times come on top, so slowdowns are at least 1).
    fn ideal_fct(&self) -> Result<IdealFct, ConfigError> {
        // Two adapters under one element are two fabric hops apart in every shape.
        let hops = 2;
        let header = self.adapter.port_rate.serialize(self.header_bytes as u64);
        Ok(IdealFct {
            rate_bps: self.adapter.port_rate.0 as f64,
            base_latency: Dur(2 * self.host_delay.0 + hops * self.link_delay.0 + header.0),
            header_overhead: self.header_bytes as f64
                / (self.packet_bytes - self.header_bytes) as f64,
        })
    }

    fn queue_unit(&self) -> &'static str {
        "cells"
    }

    fn reseed(&mut self, seed: u64) {
        self.seed = seed;
    }

    fn write_toml(&self, t: &mut TomlOut) {
        let a = &self.adapter;
        t.header("[stardust]");
        match self.shape {
            Shape::CellClos {
                fas,
                fas_per_pod,
                fe1_per_pod,
                parallel,
                fe2,
            } => {
                t.kv("topology", text("cell-clos"));
                t.kv("fas", fas);
                t.kv("fas_per_pod", fas_per_pod);
                t.kv("fe1_per_pod", fe1_per_pod);
                t.kv("parallel", parallel);
                t.kv("fe2", fe2);
            }
            Shape::FatTree { k } => {
                t.kv("topology", text("fat-tree"));
                t.kv("k", k);
            }
            Shape::LeafSpine {
                leaves,
                spines,
                fas_per_leaf,
            } => {
                t.kv("topology", text("leaf-spine"));
                t.kv("leaves", leaves);
                t.kv("spines", spines);
                t.kv("fas_per_leaf", fas_per_leaf);
            }
        }
        let f = |v: u32| float(v as f64 / 65_536.0);
        t.kv("ports_per_fa", a.ports);
        t.kv("link_gbps", float(self.link_rate.0 as f64 / 1e9));
        t.kv("port_gbps", float(a.port_rate.0 as f64 / 1e9));
        t.kv("link_delay_ns", dur_ns(self.link_delay));
        t.kv("host_delay_ns", dur_ns(self.host_delay));
        t.kv("packet_bytes", self.packet_bytes);
        t.kv("header_bytes", self.header_bytes);
        t.kv(
            "transport",
            text(match self.transport {
                HostTransport::None => "none",
                HostTransport::Tcp(_) => "tcp",
            }),
        );
        t.kv("classes", a.classes);
        match a.class_policy {
            ClassPolicy::Strict => t.kv("class_policy", text("strict")),
            ClassPolicy::Weighted(w) => {
                t.kv("class_policy", text("weighted"));
                let list: Vec<String> = w[..a.classes as usize]
                    .iter()
                    .map(|x| x.to_string())
                    .collect();
                t.kv("class_weights", format!("[{}]", list.join(", ")));
            }
        }
        let ll = a.low_latency;
        if ll.classes != 0 {
            let list: Vec<String> = (0..a.classes)
                .filter(|&c| ll.is(c))
                .map(|c| c.to_string())
                .collect();
            t.kv("low_latency_classes", format!("[{}]", list.join(", ")));
            t.kv(
                "low_latency_share",
                float(ll.rate.0 as f64 / a.port_rate.0 as f64),
            );
            t.kv("low_latency_burst_bytes", ll.burst_bytes);
        }
        t.kv("cell_bytes", a.cell_bytes);
        t.kv("cell_header_bytes", a.cell_header_bytes);
        t.kv("control_bytes", a.control_bytes);
        t.kv("credit_bytes", a.credit_bytes);
        t.kv("credit_speedup", float(a.credit_speedup_ppm as f64 / 1e6));
        t.kv(
            "egress_buffer_kb",
            float(a.egress_buffer_bytes as f64 / 1024.0),
        );
        t.kv(
            "ingress_buffer_mb",
            float(a.ingress_buffer_bytes as f64 / 1024.0 / 1024.0),
        );
        t.kv(
            "ingress_full",
            text(match a.ingress_full {
                IngressFull::Pause => "pause",
                IngressFull::Drop => "drop",
            }),
        );
        t.kv(
            "reassembly_timeout_us",
            float(a.reassembly_timeout.as_us_f64()),
        );
        t.kv("status_refresh_doublings", a.status_refresh_doublings);
        t.kv("credit_keep_us", float(a.credit_keep.as_us_f64()));
        t.kv("pool_cells_per_link", self.pool_cells_per_link);
        t.kv("fci_threshold_cells", self.fci_threshold);
        t.kv("fci_decrease", f(a.fci.decrease));
        t.kv("fci_interval_ns", dur_ns(a.fci.interval));
        t.kv("fci_increase", f(a.fci.increase));
        t.kv("fci_min_rate", f(a.fci.min_rate));
        t.kv("permutation_rounds", a.permutation_rounds);
        let r = &self.reach;
        t.kv("reach_interval_us", float(r.interval.as_us_f64()));
        t.kv("reach_bitmap", r.bitmap);
        t.kv("reach_confirm", r.confirm);
        t.kv("reach_error_window", r.error_window);
        t.kv("reach_error_limit", r.error_limit);
    }

    fn build(&self) -> Result<Box<dyn Fabric>, ConfigError> {
        self.validate(&shoal_fabric::config::NO_KEYS)?;
        Ok(Box::new(Stardust::new(self.network()?)))
    }
}
