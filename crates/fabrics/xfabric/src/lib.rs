//! XFabric (Legtchenko et al., "XFabric: a reconfigurable in-rack network for rack-scale
//! computers"): a rack whose SoCs packet-switch over circuits that d small crosspoint switches set
//! up, reconfigured every second or so for the measured demand. Each SoC's port c is wired to
//! crosspoint c, so a circuit can only join two SoCs' ports of the same index: the fabric is
//! *partially* reconfigurable, which is what makes it cheap enough for a rack.
//!
//! The crate holds the rack model, the controller's algorithms and the topologies XFabric is
//! compared with, all as pure functions of their inputs (and a seed where there is randomness):
//!
//! - [`rack`]: the rack's sizes and the static cross-circuits of an odd rack; [`cost`]: ports,
//!   dollars and watts against a folded-Clos circuit switch (Table 1).
//! - The controller, in the order it runs: [`demand`] (per-SoC reports into a smoothed demand
//!   matrix), [`uplink`] (which SoCs hold the uplinks, and the demand that adds), [`generate`]
//!   (Algorithm 1: the circuits of every crosspoint), [`forwarding`] (the SoCs' tables), and
//!   [`reconfig`], the §4 protocol that moves the rack to the new circuits and tables, controller
//!   failures included.
//! - Baselines: [`osa`] (one fully reconfigurable switch, OSA's b-matching) and [`baselines`]
//!   (3D torus, random regular graph).
//! - Evaluation (§6.1-6.2): the workloads (clustered, random destinations, production-like,
//!   graph processing) are `shoal_workload::volumes`, lists of `shoal_workload::Flow`s whose
//!   uplink traffic goes to or from `shoal_workload::OUTSIDE`; [`workloads`] sums them into the
//!   controller's demand, and [`flowsim`], the flow-level simulator, routes them over any
//!   topology and measures path length, path diversity, bottleneck link load and the path
//!   length to the gateways.
//! - As a scenario fabric (`fabric = "xfabric"`, [`scenario`]): [`fabric`] runs any workload's
//!   flows over the rack on the flow-level engine (`shoal_engine::FluidNet`), routed as §6.2
//!   routes them, the controller rewiring the rack every period for the demand it measured; the
//!   `topology` key puts OSA, the torus or the random graph in its place.
//! - The prototype (§5, §6.5): [`prototype`] runs unmodified TCP over the rack on the packet
//!   engine (`shoal-psn`), the controller rewiring it every period for the demand it measured.
//!
//! Every topology is a [`SocGraph`], a multigraph over the same SoC ids, so the flow-level
//! simulator can route and measure all of them alike.
//!
//! ```
//! use shoal_xfabric::{Demand, DemandMatrix, ForwardingTables, Rack, RackSpec};
//! use shoal_xfabric::{generate_topology, place_uplinks};
//! use shoal_base::NodeId;
//!
//! let rack = Rack::new(RackSpec { socs: 8, ports_per_soc: 3, uplinks: 2 }, 1)?;
//! let mut dm = DemandMatrix::zeros(8)?;
//! dm.set(NodeId(0), NodeId(5), 1_000_000)?;
//! let demand = Demand::new(dm, vec![0; 8], vec![0; 8])?;
//! let uplinks = place_uplinks(&rack, &demand)?;
//! let plan = generate_topology(&rack, uplinks.dm_all(), 1)?;
//! let tables = ForwardingTables::new(plan.graph());
//! assert_eq!(tables.hops(NodeId(0), NodeId(5)), Some(1));
//! # Ok::<(), shoal_xfabric::Error>(())
//! ```

#![forbid(unsafe_code)]

pub mod baselines;
pub mod cost;
pub mod demand;
pub mod error;
pub mod fabric;
pub mod flowsim;
pub mod forwarding;
mod fractional;
pub mod generate;
pub mod graph;
pub mod osa;
pub mod prototype;
pub mod rack;
pub mod reconfig;
pub mod scenario;
pub mod uplink;
pub mod workloads;

pub use baselines::{random_regular, torus_3d, torus_sides};
pub use cost::{CostComparison, FabricCost, PortPrice};
pub use demand::{Demand, DemandMatrix, DemandReport, Smoothing};
pub use error::Error;
pub use flowsim::{
    FlowSimConfig, FlowSimError, FlowSimReport, LoadMeasure, disjoint_shortest_paths, simulate,
};
pub use forwarding::ForwardingTables;
pub use generate::{Circuit, CircuitPlan, generate_topology};
pub use graph::SocGraph;
pub use osa::{BMatching, max_weight_b_matching, osa_topology};
pub use prototype::{
    Controller, PrototypeResult, PrototypeRun, production_sizes, prototype_tcp, run_prototype,
    topology_of,
};
pub use rack::{CrossCircuit, Crosspoint, Rack, RackSpec};
pub use reconfig::{
    ReconfigOutcome, ReconfigParams, ReconfigTiming, controller_messages, reconfigure,
};
pub use uplink::{UplinkPlan, nearest_uplinks, place_uplinks, spread_gateways};
pub use workloads::{
    WorkloadError, demand_of, dense_random_demand, full_demand_of, skewed_random_demand,
};
