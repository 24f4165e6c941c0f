//! Choosing a transport at run time (from a scenario file) and what a lone flow would take on
//! the idle network, for slowdowns.

use crate::PacketFabric;
use crate::config::{NetConfig, PathChoice};
use shoal_base::{Dur, Rate};
use shoal_fabric::{Fabric, FabricError};
use shoal_metrics::IdealFct;
use shoal_topology::Topology;
pub use shoal_transport::tcp::DctcpReaction;
use shoal_transport::{
    Dcqcn, DcqcnConfig, Mptcp, MptcpConfig, Ndp, NdpConfig, R2c2, R2c2Config, Tcp, TcpConfig,
};

/// The transport every host runs.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportSpec {
    /// TCP NewReno, or DCTCP when `dctcp_g_shift` is set.
    Tcp(TcpConfig),
    Ndp(NdpConfig),
    Dcqcn(DcqcnConfig),
    /// R2C2: senders paced at the rack-wide max-min rates (meant for the torus).
    R2c2(R2c2Config),
    /// MPTCP: NewReno subflows under LIA's coupled increase.
    Mptcp(MptcpConfig),
}

impl TransportSpec {
    pub fn name(&self) -> &'static str {
        match self {
            TransportSpec::Tcp(c) if c.dctcp_g_shift.is_some() => "dctcp",
            TransportSpec::Tcp(_) => "tcp",
            TransportSpec::Ndp(_) => "ndp",
            TransportSpec::Dcqcn(_) => "dcqcn",
            TransportSpec::R2c2(_) => "r2c2",
            TransportSpec::Mptcp(_) => "mptcp",
        }
    }

    /// Payload bytes per full packet.
    pub fn mss(&self) -> u32 {
        match self {
            TransportSpec::Tcp(c) => c.mss,
            TransportSpec::Ndp(c) => c.mss,
            TransportSpec::Dcqcn(c) => c.mss,
            TransportSpec::R2c2(c) => c.mss,
            TransportSpec::Mptcp(c) => c.subflow.mss,
        }
    }
}

/// How a transport's switches treat a full or filling queue, by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marking {
    /// Drop what does not fit.
    DropTail,
    /// Trim to the header (NDP).
    Trim,
    /// Mark ECN above a threshold (`ecn = "threshold"` by default).
    Threshold,
    /// Mark ECN on RED's ramp (`ecn = "red"` by default).
    Red,
}

/// What a transport's constructor gets: the `[network]` values every transport may use.
pub struct TransportParams {
    pub mss: u32,
    pub header_bytes: u32,
    pub initial_window: u32,
    pub max_window: u32,
    /// The slow-start threshold a TCP-family sender starts with, in packets (`None`: unbounded).
    pub initial_ssthresh: Option<u32>,
    pub rto_min: Dur,
    pub link_rate: Rate,
    /// DCTCP's gain as a shift (g = 2^-shift), for transports that take `dctcp_g`.
    pub dctcp_g_shift: Option<u32>,
    /// DCTCP's α before its first window of feedback.
    pub dctcp_alpha_init: f64,
    /// DCTCP's reaction to marks: RFC 8257's or htsim's.
    pub dctcp_reaction: DctcpReaction,
    /// MPTCP's subflows per connection.
    pub mptcp_subflows: u32,
}

/// One transport of the packet baselines: its fabric name, the transport-specific
/// `[network]` keys it takes, its defaults and its constructor.
pub struct Transport {
    pub name: &'static str,
    pub keys: &'static [&'static str],
    pub marking: Marking,
    pub queue_packets: i64,
    pub path: PathChoice,
    /// The topology it runs on by default ("leaf-spine", or "torus", which is then required).
    pub topology: &'static str,
    pub make: fn(&TransportParams) -> TransportSpec,
}

/// Every transport: the one list a new transport is added to (with its `TransportSpec`
/// variant, if it brings a new state machine).
pub const TRANSPORTS: [Transport; 6] = [
    Transport {
        name: "dctcp",
        keys: &[
            "ecn",
            "ecn_k",
            "ecn_marking",
            "red_kmin_bytes",
            "red_kmax_bytes",
            "red_pmax",
            "initial_window",
            "initial_ssthresh",
            "max_window",
            "rto_min_us",
            "dctcp_g",
            "dctcp_alpha_init",
            "dctcp_reaction",
        ],
        marking: Marking::Threshold,
        queue_packets: crate::scenario::defaults::QUEUE_PACKETS,
        path: PathChoice::Ecmp,
        topology: "leaf-spine",
        make: tcp,
    },
    Transport {
        name: "dcqcn",
        keys: &[
            "ecn",
            "ecn_k",
            "ecn_marking",
            "red_kmin_bytes",
            "red_kmax_bytes",
            "red_pmax",
            "max_window",
            "pfc",
            "pfc_xoff_packets",
            "pfc_xon_packets",
        ],
        marking: Marking::Red,
        queue_packets: crate::scenario::defaults::QUEUE_PACKETS,
        path: PathChoice::Ecmp,
        topology: "leaf-spine",
        make: |p| {
            TransportSpec::Dcqcn(DcqcnConfig {
                mss: p.mss,
                header_bytes: p.header_bytes,
                max_window: Some(p.max_window),
                ..DcqcnConfig::paper(p.link_rate)
            })
        },
    },
    Transport {
        name: "ndp",
        keys: &["initial_window", "rto_min_us", "pull_pacing", "trim"],
        marking: Marking::Trim,
        queue_packets: crate::scenario::defaults::NDP_QUEUE_PACKETS,
        path: PathChoice::Spray,
        topology: "leaf-spine",
        make: |p| {
            TransportSpec::Ndp(NdpConfig {
                mss: p.mss,
                initial_window: p.initial_window,
                rto: p.rto_min,
            })
        },
    },
    Transport {
        name: "tcp",
        keys: &[
            "initial_window",
            "initial_ssthresh",
            "max_window",
            "rto_min_us",
        ],
        marking: Marking::DropTail,
        queue_packets: crate::scenario::defaults::QUEUE_PACKETS,
        path: PathChoice::Ecmp,
        topology: "leaf-spine",
        make: tcp,
    },
    Transport {
        name: "r2c2",
        keys: &["rto_min_us"],
        marking: Marking::DropTail,
        queue_packets: crate::scenario::defaults::QUEUE_PACKETS,
        path: PathChoice::Ecmp,
        topology: "torus",
        make: |p| {
            TransportSpec::R2c2(R2c2Config {
                mss: p.mss,
                header_bytes: p.header_bytes,
                rto: p.rto_min,
                ..R2c2Config::paper()
            })
        },
    },
    Transport {
        name: "mptcp",
        keys: &[
            "initial_window",
            "initial_ssthresh",
            "max_window",
            "rto_min_us",
            "mptcp_subflows",
        ],
        marking: Marking::DropTail,
        queue_packets: crate::scenario::defaults::QUEUE_PACKETS,
        path: PathChoice::Pinned,
        topology: "leaf-spine",
        make: |p| {
            TransportSpec::Mptcp(MptcpConfig {
                subflow: TcpConfig {
                    dctcp_g_shift: None,
                    ..tcp_config(p)
                },
                subflows: p.mptcp_subflows,
            })
        },
    },
];

/// TCP NewReno, or DCTCP when `dctcp_g_shift` is set.
fn tcp(p: &TransportParams) -> TransportSpec {
    TransportSpec::Tcp(tcp_config(p))
}

/// The TCP family's parameters from `[network]` (MPTCP's subflows take them too).
fn tcp_config(p: &TransportParams) -> TcpConfig {
    TcpConfig {
        mss: p.mss,
        initial_window: p.initial_window,
        max_window: Some(p.max_window),
        initial_ssthresh: p.initial_ssthresh,
        rto_min: p.rto_min,
        rto_initial: p.rto_min,
        dctcp_g_shift: p.dctcp_g_shift,
        dctcp_alpha_init: p.dctcp_alpha_init,
        dctcp_reaction: p.dctcp_reaction,
    }
}

/// The packet network of `topology` with `net`'s switches and `transport` on every host.
pub fn build(
    topology: Topology,
    net: NetConfig,
    transport: &TransportSpec,
) -> Result<Box<dyn Fabric>, FabricError> {
    Ok(match transport {
        TransportSpec::Tcp(c) => Box::new(PacketFabric::new(topology, net, Tcp(*c))?),
        TransportSpec::Ndp(c) => Box::new(PacketFabric::new(topology, net, Ndp(*c))?),
        TransportSpec::Dcqcn(c) => Box::new(PacketFabric::new(topology, net, Dcqcn(*c))?),
        TransportSpec::R2c2(c) => Box::new(PacketFabric::new(topology, net, R2c2(*c))?),
        TransportSpec::Mptcp(c) => Box::new(PacketFabric::new(topology, net, Mptcp(*c))?),
    })
}

/// A lone flow's completion time on the idle network, between the farthest hosts: every hop's
/// propagation, the first packet's serialization on every hop but the last (store and
/// forward), and the payload with its headers at the slowest link rate on the way (taken as
/// the host link rate: the topologies here never run a host faster than its fabric).
///
/// The farthest pair is chosen so slowdowns are at least 1 for every pair but a flow's first
/// window; closer pairs (the same leaf) finish faster and show slowdowns below 1, which is
/// worth seeing rather than hiding.
pub fn ideal_fct(topology: &Topology, net: &NetConfig, mss: u32) -> IdealFct {
    let hosts = topology.hosts() as u32;
    let hops = (0..hosts)
        .flat_map(|a| (0..hosts).filter(move |&b| b != a).map(move |b| (a, b)))
        .map(|(a, b)| topology.distance(a, b))
        .max()
        .unwrap_or(1) as u64;
    let link = topology.link(0, 0);
    let rate: Rate = link.rate;
    let mtu = (mss + net.header_bytes) as u64;
    let base = hops * link.delay.0 + (hops - 1) * rate.serialize(mtu).0;
    IdealFct {
        rate_bps: rate.0 as f64,
        base_latency: Dur(base),
        header_overhead: net.header_bytes as f64 / mss as f64,
    }
}
