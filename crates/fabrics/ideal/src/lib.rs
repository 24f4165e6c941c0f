//! The ideal output-queued switch: every host has one link to a single non-blocking switch
//! that moves each packet to its output port the moment it has arrived, where it waits in a
//! FIFO of unbounded size. No packet is dropped, marked or paused, and no congestion control
//! runs: the only waiting is for an output link (or the sender's own link) to be free. It is
//! the floor datacenter papers read their fabrics against (pFabric's and NDP's "ideal"), here a
//! fabric like the others, on the identical flows.
//!
//! A host's link is shared by its flows packet by packet, round robin (the per-flow fair
//! queueing of an ideal NIC); a flow hands over its whole size at its start. Packets are
//! stored and forwarded: a packet leaves the switch once its last bit has arrived.
//!
//! - `scenario`: the `[switch]` table (`fabric = "ideal-switch"`).
//! - `sim`: the event loop on the discrete-event engine.
//! - `cost`: one send's cost from the parameters alone, the collectives' theory model.

#![forbid(unsafe_code)]

pub mod cost;
pub mod scenario;
mod sim;

pub use scenario::{SwitchSpec, defaults};

use shoal_fabric::{Fabric, FabricError, Progress, RunLimits, RunOutput};
use shoal_workload::FlowSource;

/// A built ideal switch, ready to run.
pub struct IdealSwitch {
    spec: SwitchSpec,
}

impl IdealSwitch {
    pub fn new(spec: SwitchSpec) -> IdealSwitch {
        IdealSwitch { spec }
    }
}

impl Fabric for IdealSwitch {
    fn name(&self) -> &str {
        "ideal-switch"
    }

    fn nodes(&self) -> usize {
        self.spec.hosts as usize
    }

    fn run(
        &mut self,
        flows: &mut dyn FlowSource,
        limits: RunLimits,
        progress: &mut dyn Progress,
    ) -> Result<RunOutput, FabricError> {
        let sim = sim::Sim::new(&self.spec, limits);
        shoal_fabric::event_loop::run(sim, flows, progress)
    }
}
