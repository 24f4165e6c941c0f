//! Choosing a transport at run time (from a scenario file) and what a lone flow would take on
//! the idle network, for slowdowns.

use crate::PacketFabric;
use crate::config::NetConfig;
use shoal_base::{Dur, Rate};
use shoal_fabric::{Fabric, FabricError};
use shoal_metrics::IdealFct;
use shoal_topology::Topology;
use shoal_transport::{Dcqcn, DcqcnConfig, Ndp, NdpConfig, R2c2, R2c2Config, Tcp, TcpConfig};

/// The transport every host runs.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportSpec {
    /// TCP NewReno, or DCTCP when `dctcp_g_shift` is set.
    Tcp(TcpConfig),
    Ndp(NdpConfig),
    Dcqcn(DcqcnConfig),
    /// R2C2: senders paced at the rack-wide max-min rates (meant for the torus).
    R2c2(R2c2Config),
}

impl TransportSpec {
    pub fn name(&self) -> &'static str {
        match self {
            TransportSpec::Tcp(c) if c.dctcp_g_shift.is_some() => "dctcp",
            TransportSpec::Tcp(_) => "tcp",
            TransportSpec::Ndp(_) => "ndp",
            TransportSpec::Dcqcn(_) => "dcqcn",
            TransportSpec::R2c2(_) => "r2c2",
        }
    }

    /// Payload bytes per full packet.
    pub fn mss(&self) -> u32 {
        match self {
            TransportSpec::Tcp(c) => c.mss,
            TransportSpec::Ndp(c) => c.mss,
            TransportSpec::Dcqcn(c) => c.mss,
            TransportSpec::R2c2(c) => c.mss,
        }
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
