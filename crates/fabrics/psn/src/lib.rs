//! Packet-switched networks on the discrete-event engine: the baselines the cell fabrics are
//! measured against (DCTCP and TCP over ECMP Clos, NDP with trimming and spraying, ...).
//!
//! The network is htsim's model with control inverted: output ports (a queue feeding a link
//! that serializes at its rate and then propagates), switches that pick among equal-cost ports
//! by hashing, hosts whose NIC queue feeds their one link, and a sans-IO transport pair per flow
//! (`shoal-transport`). The topology (`shoal-topology`) supplies links and next hops.
//!
//! - [`build`](mod@build): the transports ([`TRANSPORTS`], one entry each), a transport chosen at run
//!   time, and the ideal FCT for slowdowns.
//! - [`scenario`]: the `[network]` table of a scenario file.
//! - [`config`]: queue discipline and size, path choice, header sizes.
//! - [`queue`]: one output queue with a data and a priority lane.
//! - [`nic`]: htsim's round-robin host NIC.
//! - [`port`]: ports and links.
//! - [`packet`]: the packet record and the slab of packets in flight.
//! - [`rewire`]: a controller that rewires a direct network during a run (XFabric).
//! - [`r2c2`]: R2C2's max-min rate computation over the routes of all known flows (torus).
//! - `sim`: the event loop.
//! - [`bench`](mod@bench): htsim's permutation examples, timed.

#![forbid(unsafe_code)]

pub mod bench;
pub mod build;
pub mod config;
pub mod nic;
pub mod packet;
pub mod port;
pub mod queue;
pub mod r2c2;
pub mod rewire;
pub mod scenario;
mod sim;
pub mod source_route;

pub use build::{TRANSPORTS, TransportSpec, build, ideal_fct};
pub use config::{Discipline, HostNic, NetConfig, PathChoice, Pfc, Red, TrimRule};
pub use rewire::{Rewired, Rewiring, Staged};
pub use scenario::{NetworkSpec, TopologySpec};

use shoal_fabric::config::NO_KEYS;
use shoal_fabric::{Fabric, FabricError, Progress, RunLimits, RunOutput};
use shoal_topology::Topology;
use shoal_transport::Transport;
use shoal_workload::FlowSource;

/// A packet network of `topology` running transport `T` over switches configured by `net`.
pub struct PacketFabric<T: Transport> {
    name: String,
    topology: Topology,
    net: NetConfig,
    transport: T,
    rewiring: Option<Box<dyn Rewiring>>,
}

impl<T: Transport> PacketFabric<T> {
    /// Checks the configuration once; runs then take it as valid.
    pub fn new(topology: Topology, net: NetConfig, transport: T) -> Result<Self, FabricError> {
        net.validate(transport.mss(), &NO_KEYS)
            .map_err(|e| FabricError(e.to_string()))?;
        Ok(PacketFabric {
            name: transport.name().to_string(),
            topology,
            net,
            transport,
            rewiring: None,
        })
    }

    /// Lets `controller` rewire the network during runs. It keeps its state from one run to the
    /// next: build a fresh one for each independent run.
    pub fn with_rewiring(mut self, controller: Box<dyn Rewiring>) -> Self {
        self.rewiring = Some(controller);
        self
    }

    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    pub fn net(&self) -> &NetConfig {
        &self.net
    }
}

impl<T: Transport> Fabric for PacketFabric<T> {
    fn name(&self) -> &str {
        &self.name
    }

    fn nodes(&self) -> usize {
        self.topology.hosts()
    }

    fn run(
        &mut self,
        flows: &mut dyn FlowSource,
        limits: RunLimits,
        progress: &mut dyn Progress,
    ) -> Result<RunOutput, FabricError> {
        let rewiring = self.rewiring.as_deref_mut().map(|r| r as &mut dyn Rewiring);
        let sim = sim::Sim::new(&self.topology, self.net, &self.transport, limits, rewiring);
        shoal_fabric::event_loop::run(sim, flows, progress)
    }
}
