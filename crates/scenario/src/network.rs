//! A packet-switched fabric as a scenario describes it: topology, switch queues and the
//! transport every host runs (`[network]`, for every fabric but "shoal").

use shoal_base::{Dur, Rate};
use shoal_fabric::{Fabric, FabricError};
use shoal_metrics::IdealFct;
use shoal_psn::{NetConfig, TransportSpec};
use shoal_topology::{FatTree, LeafSpine, Topology, TopologyError, Torus};

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

    /// The fabric, ready to run.
    pub fn build(&self) -> Result<Box<dyn Fabric>, FabricError> {
        let topology = self.build_topology().map_err(|e| FabricError(e.0))?;
        shoal_psn::build(topology, self.net, &self.transport)
    }

    /// A lone flow's FCT between the farthest hosts (for slowdowns).
    pub fn ideal_fct(&self) -> Result<IdealFct, TopologyError> {
        let topology = self.build_topology()?;
        Ok(shoal_psn::ideal_fct(
            &topology,
            &self.net,
            self.transport.mss(),
        ))
    }
}
