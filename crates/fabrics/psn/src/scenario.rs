//! The packet networks as a scenario names them (`fabric = "dctcp"`, ..., the `[network]`
//! table): the raw keys, their defaults, how they become a topology, switches and a transport
//! ([`NetworkSpec`]), and the resolved `[network]` written back. Which transports exist and
//! which keys each takes is [`crate::build::TRANSPORTS`]; the rules the switch values obey are
//! [`NetConfig::validate`].
//!
//! Defaults are the paper's PSN baseline (§7.3): 512 hosts on a full-bisection Clos at
//! 50 Gb/s, 1500 B packets; DCTCP and DCQCN with ECMP, a window of 35 packets and queues of
//! 100; NDP with spraying, an initial window of 35 and queues of 12. DCTCP's switches mark ECN
//! above a threshold, DCQCN's on the DCQCN paper's RED ramp. R2C2 (baseline 1) defaults to the
//! 8×8×8 torus with 100 Gb/s per node over its six links; `path = "ecmp"` routes it in
//! dimension order, `"spray"` over every minimal path.

use crate::build::DctcpReaction;
use crate::build::{Marking, TRANSPORTS, Transport as Entry, TransportParams, TransportSpec};
use crate::config::{Discipline, HostNic, NetConfig, PPM, PathChoice, Pfc, Red, TrimRule};
use serde::Deserialize;
use shoal_base::{Dur, Rate};
use shoal_fabric::config::{ConfigError, Keys, TableError, TomlOut, read_table};
use shoal_fabric::config::{dur_ns, dur_us, float, text};
use shoal_fabric::{Fabric, FabricKind, NodeGroups, ResolvedFabric, Resolving};
use shoal_metrics::IdealFct;
use shoal_topology::{FatTree, LeafSpine, Topology, TopologyError, Torus};
use shoal_transport::TcpConfig;

/// Defaults of the `[network]` keys (docs/scenarios.md lists them with their sources).
pub mod defaults {
    /// §7.3: "a 512-node packet-switched network ... Clos topology with full-bisection".
    pub const HOSTS: i64 = 512;
    /// Ours: 32-port switches give 32 leaves of 16 hosts and 16 spines for 512 hosts.
    pub const RADIX: i64 = 32;
    /// §7.3: "The interface bandwidth of each node is 50 Gbps".
    pub const LINK_GBPS: f64 = 50.0;
    /// Ours (the paper gives none): 100 ns per link, cable and switch latency together.
    pub const LINK_DELAY_NS: f64 = 100.0;
    /// §7.3: "We assume 1500 B packets for all of them".
    pub const PACKET_BYTES: i64 = 1500;
    /// Ours: TCP/IP headers; NDP trims to `CONTROL_BYTES`.
    pub const HEADER_BYTES: i64 = 40;
    /// Ours: acks, nacks, pulls and trimmed headers (htsim's NDP header size).
    pub const CONTROL_BYTES: i64 = 64;
    /// §7.3: queue size of 100 packets (DCTCP, DCQCN, TCP) and 12 packets (NDP).
    pub const QUEUE_PACKETS: i64 = 100;
    pub const NDP_QUEUE_PACKETS: i64 = 12;
    /// Ours (the paper gives none): ECN threshold of 20 full packets.
    pub const ECN_K: i64 = 20;
    /// The DCQCN paper's RED marking (§3.1): Kmin = 5 KB, Kmax = 200 KB, Pmax = 1%, KB read
    /// as 1024 bytes. §7.3's 100-packet queues hold less than Kmax, so there the ramp is cut
    /// off at about 0.7%.
    pub const RED_KMIN_BYTES: i64 = 5 * 1024;
    pub const RED_KMAX_BYTES: i64 = 200 * 1024;
    pub const RED_PMAX: f64 = 0.01;
    /// §7.3: "congestion window size of 35 packets" (DCTCP, DCQCN) and "initial window size of
    /// 35 packets" (NDP). We read the first as the window's size: DCTCP and TCP start at 35
    /// and never exceed it, DCQCN keeps at most 35 packets unacknowledged. Without a cap an
    /// unmarked long flow grows its window into its own host's unbounded NIC queue.
    pub const INITIAL_WINDOW: i64 = 35;
    pub const MAX_WINDOW: i64 = 35;
    /// Ours: 1 ms minimum retransmission timeout.
    pub const RTO_MIN_US: f64 = 1000.0;
    /// RFC 8257: g = 1/16.
    pub const DCTCP_G: f64 = 1.0 / 16.0;
    /// Linux's DCTCP starts with α = 1 (the first mark halves the window); htsim's with 0.
    pub const DCTCP_ALPHA_INIT: f64 = 1.0;
    /// htsim's NDP example: pulls at 99% of the link.
    pub const PULL_PACING: f64 = 0.99;
    /// §7.3, baseline 1: "We arranged the 512 nodes into a 3D torus" (R2C2's default topology).
    pub const TORUS_SIDE: i64 = 8;
    /// §7.3: "an aggregate node bandwidth of 100 Gbps", over a torus node's 6 links.
    pub const TORUS_LINK_GBPS: f64 = 100.0 / 6.0;
    /// Ours: PFC pauses an ingress holding 50 full packets and resumes it at 45 (well above
    /// the ECN threshold, so DCQCN acts first, as the DCQCN paper intends).
    pub const PFC_XOFF_PACKETS: i64 = 50;
    pub const PFC_XON_PACKETS: i64 = 45;
    /// Ours for MPTCP (the Stardust paper does not say how many subflows its htsim runs
    /// used): 8, the count with which MPTCP's datacenter paper (Raiciu et al., SIGCOMM 2011)
    /// reports about 90% of optimal throughput on a FatTree permutation.
    pub const MPTCP_SUBFLOWS: i64 = 8;
}

/// `[network]` as serde sees it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of network keys")]
struct RawNetwork {
    topology: Option<String>,
    hosts: Option<i64>,
    radix: Option<i64>,
    k: Option<i64>,
    oversubscription: Option<i64>,
    x: Option<i64>,
    y: Option<i64>,
    z: Option<i64>,
    link_gbps: Option<f64>,
    link_delay_ns: Option<f64>,
    packet_bytes: Option<i64>,
    header_bytes: Option<i64>,
    control_bytes: Option<i64>,
    queue_packets: Option<i64>,
    ecn: Option<String>,
    ecn_k: Option<i64>,
    ecn_marking: Option<String>,
    red_kmin_bytes: Option<i64>,
    red_kmax_bytes: Option<i64>,
    red_pmax: Option<f64>,
    path: Option<String>,
    initial_window: Option<i64>,
    max_window: Option<i64>,
    initial_ssthresh: Option<i64>,
    rto_min_us: Option<f64>,
    dctcp_g: Option<f64>,
    dctcp_alpha_init: Option<f64>,
    dctcp_reaction: Option<String>,
    pull_pacing: Option<f64>,
    pfc: Option<bool>,
    pfc_xoff_packets: Option<i64>,
    pfc_xon_packets: Option<i64>,
    mptcp_subflows: Option<i64>,
    host_nic: Option<String>,
    trim: Option<String>,
}

impl RawNetwork {
    /// The transport-specific keys the file gives.
    fn transport_keys(&self) -> [(&'static str, bool); 19] {
        [
            ("ecn", self.ecn.is_some()),
            ("red_kmin_bytes", self.red_kmin_bytes.is_some()),
            ("red_kmax_bytes", self.red_kmax_bytes.is_some()),
            ("red_pmax", self.red_pmax.is_some()),
            ("pfc", self.pfc.is_some()),
            ("pfc_xoff_packets", self.pfc_xoff_packets.is_some()),
            ("pfc_xon_packets", self.pfc_xon_packets.is_some()),
            ("max_window", self.max_window.is_some()),
            ("ecn_k", self.ecn_k.is_some()),
            ("ecn_marking", self.ecn_marking.is_some()),
            ("initial_window", self.initial_window.is_some()),
            ("initial_ssthresh", self.initial_ssthresh.is_some()),
            ("rto_min_us", self.rto_min_us.is_some()),
            ("dctcp_g", self.dctcp_g.is_some()),
            ("dctcp_alpha_init", self.dctcp_alpha_init.is_some()),
            ("dctcp_reaction", self.dctcp_reaction.is_some()),
            ("pull_pacing", self.pull_pacing.is_some()),
            ("mptcp_subflows", self.mptcp_subflows.is_some()),
            ("trim", self.trim.is_some()),
        ]
    }
}

/// The shape of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologySpec {
    /// A full-bisection two-tier Clos of `hosts` hosts on `radix`-port switches.
    LeafSpine { hosts: u32, radix: u32 },
    /// The three-tier k-ary fat-tree, oversubscribed `oversubscription`:1 at the edge.
    FatTree { k: u32, oversubscription: u32 },
    /// A 3D torus of hosts that forward.
    Torus { x: u32, y: u32, z: u32 },
}

impl TopologySpec {
    pub fn name(&self) -> &'static str {
        match self {
            TopologySpec::LeafSpine { .. } => "leaf-spine",
            TopologySpec::FatTree { .. } => "fat-tree",
            TopologySpec::Torus { .. } => "torus",
        }
    }

    /// Hosts the topology connects.
    pub fn hosts(&self) -> usize {
        match *self {
            TopologySpec::LeafSpine { hosts, .. } => hosts as usize,
            TopologySpec::FatTree {
                k,
                oversubscription,
            } => (oversubscription * k * k * k / 4) as usize,
            TopologySpec::Torus { x, y, z } => (x * y * z) as usize,
        }
    }
}

/// Everything `[network]` resolves to.
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkSpec {
    pub topology: TopologySpec,
    /// Rate of every link (hosts and fabric alike).
    pub link_rate: Rate,
    /// Propagation delay of every link (switch latency folded in).
    pub link_delay: Dur,
    pub net: NetConfig,
    pub transport: TransportSpec,
}

impl NetworkSpec {
    pub fn build_topology(&self) -> Result<Topology, TopologyError> {
        let (rate, delay) = (self.link_rate, self.link_delay);
        match self.topology {
            TopologySpec::LeafSpine { hosts, radix } => {
                LeafSpine::full_bisection(hosts, radix, rate, delay)?.build()
            }
            TopologySpec::FatTree {
                k,
                oversubscription,
            } => FatTree {
                k,
                oversubscription,
                rate,
                link_delay: delay,
            }
            .build(),
            TopologySpec::Torus { x, y, z } => Torus {
                x,
                y,
                z,
                rate,
                link_delay: delay,
            }
            .build(),
        }
    }

    /// The key that sizes the topology, to name when it cannot be built.
    fn size_key(&self) -> &'static str {
        match self.topology {
            TopologySpec::LeafSpine { .. } => "network.hosts",
            TopologySpec::FatTree { .. } => "network.k",
            TopologySpec::Torus { .. } => "network.x",
        }
    }
}

/// The registry's entry for the packet networks: one fabric name per transport.
pub struct Kind;

/// The fabric names: every transport of [`TRANSPORTS`].
const NAMES: [&str; TRANSPORTS.len()] = {
    let mut names = [""; TRANSPORTS.len()];
    let mut i = 0;
    while i < TRANSPORTS.len() {
        names[i] = TRANSPORTS[i].name;
        i += 1;
    }
    names
};

impl FabricKind for Kind {
    fn names(&self) -> &'static [&'static str] {
        &NAMES
    }

    fn tables(&self) -> &'static [&'static str] {
        &["network"]
    }

    fn resolve(&self, input: &Resolving<'_>) -> Result<Box<dyn ResolvedFabric>, TableError> {
        let entry = TRANSPORTS
            .iter()
            .find(|t| t.name == input.fabric)
            .expect("the registry hands over only the names it was given");
        let raw: RawNetwork = read_table(input.text, "network")?.unwrap_or_default();
        Ok(Box::new(resolve(input.keys, entry, raw, input.seed)?))
    }
}

impl ResolvedFabric for NetworkSpec {
    fn name(&self) -> &str {
        self.transport.name()
    }

    fn nodes(&self) -> usize {
        self.topology.hosts()
    }

    fn node_rate(&self) -> Rate {
        self.link_rate
    }

    /// A lone flow's FCT between the farthest hosts (for slowdowns).
    fn ideal_fct(&self) -> Result<IdealFct, ConfigError> {
        let topology = self
            .build_topology()
            .map_err(|e| shoal_fabric::config::value(self.size_key(), e.0))?;
        Ok(crate::ideal_fct(&topology, &self.net, self.transport.mss()))
    }

    fn queue_unit(&self) -> &'static str {
        "packets"
    }

    fn write_toml(&self, t: &mut TomlOut) {
        write(t, self);
    }

    fn build(&self) -> Result<Box<dyn Fabric>, ConfigError> {
        let topology = self
            .build_topology()
            .map_err(|e| shoal_fabric::config::value(self.size_key(), e.0))?;
        crate::build(topology, self.net, &self.transport).map_err(|e| ConfigError {
            key: "network".into(),
            kind: shoal_fabric::config::ErrorKind::Build,
            reason: e.0,
        })
    }

    /// Hosts by leaf (edge switch), and by pod on a fat-tree; none on a torus (its hosts
    /// forward: no switch groups them). Blocks as `shoal_topology` numbers the hosts.
    fn node_groups(&self) -> Vec<NodeGroups> {
        let hosts = self.topology.hosts();
        match self.topology {
            TopologySpec::LeafSpine { radix, .. } => {
                vec![NodeGroups::blocks("leaf", hosts, radix as usize / 2)]
            }
            TopologySpec::FatTree {
                k,
                oversubscription,
            } => {
                let per_edge = (oversubscription * k / 2) as usize;
                vec![
                    NodeGroups::blocks("leaf", hosts, per_edge),
                    NodeGroups::blocks("pod", hosts, per_edge * k as usize / 2),
                ]
            }
            TopologySpec::Torus { .. } => Vec::new(),
        }
    }
}

/// DCQCN's RED marking from `red_kmin_bytes`, `red_kmax_bytes` and `red_pmax` (checked with
/// the rest of the switch in [`NetConfig::validate`]).
fn red(keys: &Keys<'_>, raw: &RawNetwork, at_dequeue: bool) -> Result<Discipline, ConfigError> {
    use defaults as d;
    let bytes = |key: &str, v: Option<i64>, default: i64| keys.int(key, v, default, 0, 1 << 40);
    let pmax = keys.num(
        "network.red_pmax",
        raw.red_pmax.unwrap_or(d::RED_PMAX),
        0.0,
        false,
    )?;
    Ok(Discipline::Red(Red {
        kmin_bytes: bytes(
            "network.red_kmin_bytes",
            raw.red_kmin_bytes,
            d::RED_KMIN_BYTES,
        )? as u64,
        kmax_bytes: bytes(
            "network.red_kmax_bytes",
            raw.red_kmax_bytes,
            d::RED_KMAX_BYTES,
        )? as u64,
        pmax_ppm: (pmax * PPM as f64).round().min(u32::MAX as f64) as u32,
        at_dequeue,
    }))
}

/// The switches' marking, for transports whose switches mark ECN.
fn ecn(keys: &Keys<'_>, raw: &RawNetwork, default: Marking) -> Result<Discipline, ConfigError> {
    use defaults as d;
    let key = |k: &str| format!("network.{k}");
    let at_dequeue = match raw.ecn_marking.as_deref() {
        None | Some("departure") => true,
        Some("arrival") => false,
        Some(other) => {
            return Err(keys.value(
                "network.ecn_marking",
                format!("unknown marking point {other:?}; known: \"departure\", \"arrival\""),
            ));
        }
    };
    let mode = raw.ecn.as_deref().unwrap_or(match default {
        Marking::Red => "red",
        _ => "threshold",
    });
    let refuse = |pairs: &[(&str, bool)]| -> Result<(), ConfigError> {
        match pairs.iter().find(|(_, present)| *present) {
            Some((k, _)) => {
                Err(keys.value(&key(k), format!("{mode:?} ECN marking does not use {k}")))
            }
            None => Ok(()),
        }
    };
    match mode {
        "threshold" => {
            refuse(&[
                ("red_kmin_bytes", raw.red_kmin_bytes.is_some()),
                ("red_kmax_bytes", raw.red_kmax_bytes.is_some()),
                ("red_pmax", raw.red_pmax.is_some()),
            ])?;
            let k = keys.int(&key("ecn_k"), raw.ecn_k, d::ECN_K, 0, 1 << 20)? as u32;
            Ok(Discipline::Ecn { k, at_dequeue })
        }
        "red" => {
            refuse(&[("ecn_k", raw.ecn_k.is_some())])?;
            red(keys, raw, at_dequeue)
        }
        other => Err(keys.value(
            "network.ecn",
            format!("unknown ECN marking {other:?}; known: \"threshold\", \"red\""),
        )),
    }
}

fn resolve(
    keys: &Keys<'_>,
    entry: &Entry,
    raw: RawNetwork,
    seed: u64,
) -> Result<NetworkSpec, ConfigError> {
    use defaults as d;
    let fabric = entry.name;
    let key = |k: &str| format!("network.{k}");
    for (k, present) in raw.transport_keys() {
        if present && !entry.keys.contains(&k) {
            return Err(keys.value(&key(k), format!("the {fabric} fabric does not use {k}")));
        }
    }
    let kind = raw.topology.as_deref().unwrap_or(entry.topology);
    let size = |k: &str, v: Option<i64>, default: Option<i64>| -> Result<u32, ConfigError> {
        match (v, default) {
            (None, None) => {
                Err(keys.value(&key(k), format!("a {kind} topology needs network.{k}")))
            }
            (v, default) => Ok(keys.int(&key(k), v, default.unwrap_or(0), 1, 65_535)? as u32),
        }
    };
    let unused = |pairs: &[(&str, bool)]| -> Result<(), ConfigError> {
        match pairs.iter().find(|(_, present)| *present) {
            Some((k, _)) => Err(keys.value(&key(k), format!("a {kind} topology does not use {k}"))),
            None => Ok(()),
        }
    };
    let topology = match kind {
        "leaf-spine" => {
            unused(&[
                ("k", raw.k.is_some()),
                ("oversubscription", raw.oversubscription.is_some()),
                ("x", raw.x.is_some()),
                ("y", raw.y.is_some()),
                ("z", raw.z.is_some()),
            ])?;
            TopologySpec::LeafSpine {
                hosts: size("hosts", raw.hosts, Some(d::HOSTS))?,
                radix: size("radix", raw.radix, Some(d::RADIX))?,
            }
        }
        "fat-tree" => {
            unused(&[
                ("hosts", raw.hosts.is_some()),
                ("radix", raw.radix.is_some()),
                ("x", raw.x.is_some()),
                ("y", raw.y.is_some()),
                ("z", raw.z.is_some()),
            ])?;
            TopologySpec::FatTree {
                k: size("k", raw.k, None)?,
                oversubscription: size("oversubscription", raw.oversubscription, Some(1))?,
            }
        }
        "torus" => {
            unused(&[
                ("hosts", raw.hosts.is_some()),
                ("radix", raw.radix.is_some()),
                ("k", raw.k.is_some()),
                ("oversubscription", raw.oversubscription.is_some()),
            ])?;
            let side = Some(d::TORUS_SIDE);
            TopologySpec::Torus {
                x: size("x", raw.x, side)?,
                y: size("y", raw.y, side)?,
                z: size("z", raw.z, side)?,
            }
        }
        other => {
            return Err(keys.value(
                "network.topology",
                format!(
                    "unknown topology {other:?}; known: \"leaf-spine\", \"fat-tree\", \"torus\""
                ),
            ));
        }
    };
    if entry.topology == "torus" && !matches!(topology, TopologySpec::Torus { .. }) {
        return Err(keys.value(
            "network.topology",
            format!("the {fabric} fabric routes on a torus (§7.3, baseline 1), not a {kind}"),
        ));
    }
    let default_gbps = if entry.topology == "torus" {
        d::TORUS_LINK_GBPS
    } else {
        d::LINK_GBPS
    };
    let link_rate = keys.gbps("network.link_gbps", raw.link_gbps.unwrap_or(default_gbps))?;
    let link_delay = keys.ns(
        "network.link_delay_ns",
        raw.link_delay_ns.unwrap_or(d::LINK_DELAY_NS),
        false,
    )?;
    let header = keys.int(
        &key("header_bytes"),
        raw.header_bytes,
        d::HEADER_BYTES,
        0, // htsim's TCP counts a whole packet as payload
        4096,
    )? as u32;
    let packet = keys.int(
        &key("packet_bytes"),
        raw.packet_bytes,
        d::PACKET_BYTES,
        2,
        65_535,
    )? as u32;
    if packet <= header {
        let (packet_key, header_key) = (key("packet_bytes"), key("header_bytes"));
        return Err(keys.value(
            keys.blame(&[&packet_key, &header_key]),
            format!(
                "a {packet} B packet ({packet_key}) leaves no payload after a {header} B header \
                 ({header_key}): the header must be smaller"
            ),
        ));
    }
    let control = keys.int(
        &key("control_bytes"),
        raw.control_bytes,
        d::CONTROL_BYTES,
        1,
        4096,
    )? as u32;
    let mss = packet - header;
    let queue = keys.int(
        &key("queue_packets"),
        raw.queue_packets,
        entry.queue_packets,
        1,
        1 << 20,
    )? as u32;
    let path = match raw.path.as_deref() {
        None => entry.path,
        Some("spray") => PathChoice::Spray,
        Some("ecmp") => PathChoice::Ecmp,
        Some(choice @ ("source" | "pinned")) if matches!(topology, TopologySpec::Torus { .. }) => {
            return Err(keys.value(
                "network.path",
                format!(
                    "{choice:?} numbers the paths of a leveled network (leaf-spine, fat-tree); a \
                     torus has no levels: use \"spray\""
                ),
            ));
        }
        Some("source") => PathChoice::Source,
        Some("pinned") => PathChoice::Pinned,
        Some(other) => {
            return Err(keys.value(
                "network.path",
                format!(
                    "unknown path choice {other:?}; known: \"ecmp\", \"spray\", \"source\", \
                     \"pinned\""
                ),
            ));
        }
    };
    if entry.path == PathChoice::Pinned
        && matches!(topology, TopologySpec::Torus { .. })
        && raw.path.is_none()
    {
        return Err(keys.value(
            "network.path",
            format!(
                "the {fabric} fabric pins subflows to numbered paths of a leveled network; on a \
                 torus set path = \"ecmp\" or \"spray\""
            ),
        ));
    }
    let pfc_on = raw.pfc.unwrap_or(false);
    let discipline = match entry.marking {
        Marking::Trim => Discipline::Trim,
        Marking::DropTail => Discipline::DropTail,
        m => ecn(keys, &raw, m)?,
    };
    let pull_pacing = keys.num(
        "network.pull_pacing",
        raw.pull_pacing.unwrap_or(d::PULL_PACING),
        0.0,
        true,
    )?;
    // The pacer works in whole percent (`NetConfig::pull_pacing`): refuse what it would round.
    let pull_percent = (pull_pacing * 100.0).round();
    if (pull_percent - pull_pacing * 100.0).abs() > 1e-9 {
        return Err(keys.value(
            "network.pull_pacing",
            format!("{pull_pacing} is not a whole percent (0.01, 0.02, ..., 1)"),
        ));
    }
    let pfc = if pfc_on {
        let mtu = (mss + header) as u64;
        let packets =
            |k: &str, v: Option<i64>, default: i64| keys.int(&key(k), v, default, 0, 1 << 20);
        let xoff = packets(
            "pfc_xoff_packets",
            raw.pfc_xoff_packets,
            d::PFC_XOFF_PACKETS,
        )? as u64;
        let xon_default = d::PFC_XON_PACKETS.min((xoff as i64 - 1).max(0));
        let xon = packets("pfc_xon_packets", raw.pfc_xon_packets, xon_default)? as u64;
        Some(Pfc {
            xoff_bytes: xoff * mtu,
            xon_bytes: xon * mtu,
        })
    } else {
        if raw.pfc_xoff_packets.is_some() || raw.pfc_xon_packets.is_some() {
            return Err(keys.value(
                "network.pfc",
                "PFC thresholds are given but pfc is not true",
            ));
        }
        None
    };
    let host_nic = match raw.host_nic.as_deref() {
        None | Some("fifo") => HostNic::Fifo,
        Some(nic @ ("round-robin" | "priority"))
            if matches!(topology, TopologySpec::Torus { .. }) =>
        {
            return Err(keys.value(
                "network.host_nic",
                format!(
                    "{nic:?} is htsim's NIC of a host with one link; a torus host forwards other \
                     hosts' packets on six: use \"fifo\""
                ),
            ));
        }
        Some("round-robin") => HostNic::RoundRobin,
        Some("priority") => HostNic::Priority,
        Some(other) => {
            return Err(keys.value(
                "network.host_nic",
                format!(
                    "unknown host NIC {other:?}; known: \"fifo\", \"round-robin\", \"priority\""
                ),
            ));
        }
    };
    let trim = match raw.trim.as_deref() {
        None | Some("arriving") => TrimRule::Arriving,
        Some("htsim") => TrimRule::Htsim,
        Some(other) => {
            return Err(keys.value(
                "network.trim",
                format!("unknown trimming rule {other:?}; known: \"arriving\", \"htsim\""),
            ));
        }
    };
    let net = NetConfig {
        host_nic,
        trim,
        pfc,
        discipline,
        queue_packets: queue,
        path,
        header_bytes: header,
        control_bytes: control,
        pull_pacing: pull_percent.clamp(0.0, u32::MAX as f64) as u32,
        seed,
    };
    net.validate(mss, keys)?;
    let window = keys.int(
        &key("initial_window"),
        raw.initial_window,
        d::INITIAL_WINDOW,
        1,
        1 << 20,
    )? as u32;
    let max_window = keys.int(
        &key("max_window"),
        raw.max_window,
        d::MAX_WINDOW,
        1,
        1 << 20,
    )? as u32;
    if entry.keys.contains(&"initial_window")
        && entry.keys.contains(&"max_window")
        && window > max_window
    {
        return Err(keys.value(
            "network.initial_window",
            format!("{window} packets exceeds network.max_window = {max_window}"),
        ));
    }
    let initial_ssthresh = match raw.initial_ssthresh {
        None => None,
        Some(v) => Some(keys.int_req(&key("initial_ssthresh"), Some(v), 2, 1 << 20)? as u32),
    };
    let rto_min = Dur(keys.us(
        "network.rto_min_us",
        raw.rto_min_us.unwrap_or(d::RTO_MIN_US),
        true,
    )?);
    let dctcp_g_shift = if entry.keys.contains(&"dctcp_g") {
        let g = keys.num(
            "network.dctcp_g",
            raw.dctcp_g.unwrap_or(d::DCTCP_G),
            0.0,
            true,
        )?;
        let shift = (-g.log2()).round();
        if !(1.0..=20.0).contains(&shift) || (g - (-shift).exp2()).abs() > 1e-12 {
            return Err(keys.value(
                "network.dctcp_g",
                format!("{g} is not a power of two from 1/2 to 1/2^20 (e.g. 0.0625)"),
            ));
        }
        Some(shift as u32)
    } else {
        None
    };
    let dctcp_alpha_init = raw.dctcp_alpha_init.unwrap_or(d::DCTCP_ALPHA_INIT);
    if !(0.0..=1.0).contains(&dctcp_alpha_init) {
        return Err(keys.value(
            "network.dctcp_alpha_init",
            format!("{dctcp_alpha_init} is not a fraction from 0 to 1"),
        ));
    }
    let dctcp_reaction = match raw.dctcp_reaction.as_deref() {
        None | Some("rfc8257") => DctcpReaction::Rfc8257,
        Some("htsim") => DctcpReaction::Htsim,
        Some(other) => {
            return Err(keys.value(
                "network.dctcp_reaction",
                format!("unknown DCTCP reaction {other:?}; known: \"rfc8257\", \"htsim\""),
            ));
        }
    };
    let mptcp_subflows = keys.int(
        &key("mptcp_subflows"),
        raw.mptcp_subflows,
        d::MPTCP_SUBFLOWS,
        1,
        u16::MAX as i64,
    )? as u32;
    let transport = (entry.make)(&TransportParams {
        mss,
        header_bytes: header,
        initial_window: window,
        max_window,
        initial_ssthresh,
        rto_min,
        link_rate,
        dctcp_g_shift,
        dctcp_alpha_init,
        dctcp_reaction,
        mptcp_subflows,
    });
    let spec = NetworkSpec {
        topology,
        link_rate,
        link_delay,
        net,
        transport,
    };
    spec.build_topology()
        .map_err(|e| keys.value(spec.size_key(), e.0))?;
    if spec.topology.hosts() > u16::MAX as usize {
        return Err(keys.value(
            spec.size_key(),
            "more hosts than node ids can name (65,535)",
        ));
    }
    Ok(spec)
}

/// `[network]` with every key the fabric uses.
fn write(t: &mut TomlOut, n: &NetworkSpec) {
    t.header("[network]");
    t.kv("topology", text(n.topology.name()));
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
    t.kv("link_gbps", float(n.link_rate.0 as f64 / 1e9));
    t.kv("link_delay_ns", dur_ns(n.link_delay));
    let net = &n.net;
    t.kv("packet_bytes", n.transport.mss() + net.header_bytes);
    t.kv("header_bytes", net.header_bytes);
    t.kv("control_bytes", net.control_bytes);
    t.kv("queue_packets", net.queue_packets);
    t.kv(
        "path",
        text(match net.path {
            PathChoice::Ecmp => "ecmp",
            PathChoice::Spray => "spray",
            PathChoice::Source => "source",
            PathChoice::Pinned => "pinned",
        }),
    );
    // Written only when set otherwise, so that resolved files stay as they were.
    match net.host_nic {
        HostNic::Fifo => {}
        HostNic::RoundRobin => t.kv("host_nic", text("round-robin")),
        HostNic::Priority => t.kv("host_nic", text("priority")),
    }
    let marking = |at_dequeue: bool| text(if at_dequeue { "departure" } else { "arrival" });
    match net.discipline {
        Discipline::Ecn { k, at_dequeue } => {
            t.kv("ecn", text("threshold"));
            t.kv("ecn_k", k);
            t.kv("ecn_marking", marking(at_dequeue));
        }
        Discipline::Red(red) => {
            t.kv("ecn", text("red"));
            t.kv("red_kmin_bytes", red.kmin_bytes);
            t.kv("red_kmax_bytes", red.kmax_bytes);
            t.kv("red_pmax", float(red.pmax_ppm as f64 / 1e6));
            t.kv("ecn_marking", marking(red.at_dequeue));
        }
        Discipline::DropTail | Discipline::Trim => {}
    }
    match &n.transport {
        TransportSpec::Tcp(c) => {
            write_tcp(t, c);
            if let Some(g) = c.dctcp_g_shift {
                t.kv("dctcp_g", float(1.0 / (1u64 << g) as f64));
                // Written only when set otherwise, so that resolved files stay as they were.
                if c.dctcp_alpha_init != defaults::DCTCP_ALPHA_INIT {
                    t.kv("dctcp_alpha_init", float(c.dctcp_alpha_init));
                }
                if c.dctcp_reaction == DctcpReaction::Htsim {
                    t.kv("dctcp_reaction", text("htsim"));
                }
            }
        }
        TransportSpec::Ndp(c) => {
            t.kv("initial_window", c.initial_window);
            t.kv("rto_min_us", dur_us(c.rto));
            t.kv("pull_pacing", float(net.pull_pacing as f64 / 100.0));
            if net.trim == TrimRule::Htsim {
                t.kv("trim", text("htsim"));
            }
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
        TransportSpec::Mptcp(c) => {
            write_tcp(t, &c.subflow);
            t.kv("mptcp_subflows", c.subflows);
        }
    }
}

/// The keys of the TCP family's windows and timer (TCP, DCTCP, MPTCP's subflows).
fn write_tcp(t: &mut TomlOut, c: &TcpConfig) {
    t.kv("initial_window", c.initial_window);
    if let Some(m) = c.max_window {
        t.kv("max_window", m);
    }
    if let Some(s) = c.initial_ssthresh {
        t.kv("initial_ssthresh", s);
    }
    t.kv("rto_min_us", dur_us(c.rto_min));
}
