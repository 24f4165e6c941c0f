//! Stardust (Zilberman et al., "Stardust: Divide and Conquer in the Data Center Network",
//! NSDI'19): packet switches only at the edge, Fabric Adapters that schedule traffic with
//! credits and cut it into cells, and a fabric of Fabric Elements that switch cells and
//! nothing else.
//!
//! - `cell`: what crosses the fabric (data cells packing packet fragments, control cells);
//!   `cell_arena`: the run's cells as handles into columns, and every link's queues.
//! - `adapter`: the Fabric Adapter (VOQs, credits, packing, spraying, egress scheduling,
//!   reassembly), sans-IO.
//! - `element`: the Fabric Element (forwarding by reachability, output queues over a shared
//!   pool, FCI, pause), sans-IO.
//! - `scheduler`, `reassembly`, `spray`, `reach`: the parts the adapter and element share or
//!   are built from.
//! - `bench`: `shoal bench --stardust`, cell-hops and events per second.
//! - `speedup`: the cell-link rate the paper's credit rate implies, and a permutation's
//!   fluid upper bound.

#![forbid(unsafe_code)]

pub mod adapter;
pub mod bench;
pub mod cell;
pub mod cell_arena;
pub mod config;
pub mod element;
pub mod hosts;
pub mod net;
pub mod observe;
pub mod reach;
pub mod reachability;
pub mod reassembly;
pub mod scenario;
pub mod scheduler;
mod sim;
pub mod speedup;
pub mod spray;

pub use net::{Failure, NetParams, Network};
pub use observe::Observations;
pub use scenario::{StardustSpec, defaults};

use shoal_base::Time;
use shoal_fabric::{Fabric, FabricError, Progress, RunLimits, RunOutput};
use shoal_workload::FlowSource;

/// A built Stardust network, ready to run.
pub struct Stardust {
    net: Network,
    obs: Observations,
}

impl Stardust {
    pub fn new(net: Network) -> Stardust {
        Stardust {
            net,
            obs: Observations::default(),
        }
    }

    pub fn network(&self) -> &Network {
        &self.net
    }

    /// Fails a link (`Failure::Link`: a device and one of its ports) or a device at `at` in
    /// every later run (§5.9: the devices find out from the silence of their reachability
    /// messages).
    pub fn fail(&mut self, at: Time, what: Failure) -> Result<(), FabricError> {
        let nodes = self.net.topo.nodes() as u32;
        let (Failure::Link { dev, .. } | Failure::Device { dev }) = what;
        if dev >= nodes {
            return Err(FabricError(format!(
                "no device {dev}: the fabric has {nodes}"
            )));
        }
        if let Failure::Link { port, .. } = what
            && port >= self.net.ports_of(dev)
        {
            return Err(FabricError(format!(
                "device {dev} has {} links, no port {port}",
                self.net.ports_of(dev)
            )));
        }
        self.net.failures.push((at, what));
        self.net.failures.sort_by_key(|&(t, _)| t);
        Ok(())
    }

    /// Fig. 9's measurements of the last run.
    pub fn observations(&self) -> &Observations {
        &self.obs
    }
}

impl Fabric for Stardust {
    fn name(&self) -> &str {
        "stardust"
    }

    fn nodes(&self) -> usize {
        self.net.nodes()
    }

    fn run(
        &mut self,
        flows: &mut dyn FlowSource,
        limits: RunLimits,
        progress: &mut dyn Progress,
    ) -> Result<RunOutput, FabricError> {
        let sim = sim::Sim::new(&self.net, &mut self.obs, limits);
        shoal_fabric::event_loop::run(sim, flows, progress)
    }
}
pub mod models;
