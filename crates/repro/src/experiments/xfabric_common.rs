//! What the XFabric experiments (Fig. 2-4) share: the rack of §6.1, the four fabrics built for one
//! workload, and their measures.
//!
//! The fabrics, as §6.1 describes them: XFabric (d = 6 internal crosspoints, its own uplink
//! placement, then Algorithm 1 on `dm_all`), OSA (one fully reconfigurable switch, b-matching on
//! the same `dm_all`, so it shares XFabric's uplink placement: OSA places no uplinks of its own),
//! a 3D torus and a random 6-regular graph, whose uplinks are spread evenly over the SoC ids with
//! every SoC tunnelling through its nearest one. No scenario file: every parameter is a constant
//! of these modules, stated in their documentation.

use crate::{Claim, ReproError};
use shoal_base::NodeId;
use shoal_xfabric::{
    Demand, DemandMatrix, FlowSimConfig, FlowSimReport, ForwardingTables, Rack, RackSpec, SocGraph,
    UplinkPlan, generate_topology, nearest_uplinks, osa_topology, place_uplinks, random_regular,
    simulate, spread_gateways, torus_3d, torus_sides,
};

/// The seed of every XFabric experiment (workloads, cross-circuits, random graph, tie breaks).
pub(crate) const SEED: u64 = 2016;
/// Internal ports per SoC (§6.1: d = 6).
pub(crate) const PORTS: usize = 6;
/// The fabrics, in the order of every table and plot.
pub(crate) const NAMES: [&str; 4] = ["XFabric", "OSA", "3D torus", "Random"];
/// Marks a claim on the Production workload that does not pass `input-unavailable`: the
/// paper's trace is not public, and ours is a stand-in whose sensitivity sweep is its own
/// experiment.
pub(crate) fn on_production_stand_in(claim: Claim) -> Claim {
    claim.input_unavailable(
        "the paper's Production trace is not public: ours is a stand-in built from §6.1's \
         description (shoal_workload::production_like); how the claim fares over the \
         stand-in's plausible parameters: `shoal repro xfabric-production` \
         (docs/results/xfabric.md)",
    )
}

pub(crate) fn err(what: &str) -> impl Fn(&dyn std::fmt::Display) -> ReproError + '_ {
    move |e| ReproError(format!("{what}: {e}"))
}

/// §6.1's uplinks: l = 8 at 343 SoCs; quick racks scale it to one per 16 SoCs (at least 2).
pub(crate) fn uplinks_for(socs: usize) -> usize {
    if socs >= 343 { 8 } else { (socs / 16).max(2) }
}

/// The rack of §6.1 with `socs` SoCs.
pub(crate) fn rack(socs: usize) -> Result<Rack, ReproError> {
    Rack::new(
        RackSpec {
            socs,
            ports_per_soc: PORTS,
            uplinks: uplinks_for(socs),
        },
        SEED,
    )
    .map_err(|e| err("rack")(&e))
}

/// A fabric's topology and the uplink plan its uplink traffic follows.
pub(crate) struct Built {
    pub graph: SocGraph,
    pub uplinks: UplinkPlan,
}

/// The four fabrics for `demand`, in [`NAMES`] order.
pub(crate) fn build(demand: &Demand) -> Result<[Built; 4], ReproError> {
    let n = demand.socs();
    let rack = rack(n)?;
    let e = err("fabrics");
    let xplan = place_uplinks(&rack, demand).map_err(|x| e(&x))?;
    let xfabric = generate_topology(&rack, xplan.dm_all(), SEED).map_err(|x| e(&x))?;
    let osa = Built {
        graph: osa_topology(xplan.dm_all(), PORTS, SEED).map_err(|x| e(&x))?,
        uplinks: xplan.clone(),
    };
    let (a, b, c) = torus_sides(n);
    let gateways = spread_gateways(n, rack.uplinks());
    let fixed = |g: SocGraph| -> Result<Built, ReproError> {
        let uplinks = nearest_uplinks(&g, demand, &gateways).map_err(|x| e(&x))?;
        Ok(Built { graph: g, uplinks })
    };
    Ok([
        Built {
            graph: xfabric.graph().clone(),
            uplinks: xplan,
        },
        osa,
        fixed(torus_3d(a, b, c).map_err(|x| e(&x))?)?,
        fixed(random_regular(n, PORTS, SEED).map_err(|x| e(&x))?)?,
    ])
}

/// Mean shortest-path length of internal traffic, per byte (what the simulator's `mean_hops`
/// reports, without routing subflows).
pub(crate) fn mean_hops(g: &SocGraph, m: &DemandMatrix) -> Result<f64, ReproError> {
    ForwardingTables::new(g)
        .mean_hops(m)
        .map_err(|x| err("path length")(&x))?
        .ok_or_else(|| ReproError("path length: no internal traffic".into()))
}

/// Mean hops between a SoC and its gateway, per uplink byte (Fig. 4(b)).
pub(crate) fn uplink_hops(b: &Built, demand: &Demand) -> Option<f64> {
    let t = ForwardingTables::new(&b.graph);
    let (mut sum, mut w) = (0.0, 0.0);
    for s in 0..demand.socs() {
        let soc = NodeId(s as u16);
        let bytes = demand.external(soc) as f64;
        let h = t.hops(soc, b.uplinks.gateway_of(soc))?;
        sum += bytes * h as f64;
        w += bytes;
    }
    (w > 0.0).then(|| sum / w)
}

/// Fig. 4's measures of `demand` on `socs` SoCs: XFabric (its uplink placement, then Algorithm
/// 1), the 3D torus and the random 6-regular graph (each with its nearest uplinks), in that
/// order: mean path length per internal byte, and per uplink byte (NaN where none goes out).
pub(crate) fn hops_without_osa(
    socs: usize,
    demand: &Demand,
) -> Result<([f64; 3], [f64; 3]), ReproError> {
    let rack = rack(socs)?;
    let xplan = place_uplinks(&rack, demand).map_err(|e| err("uplinks")(&e))?;
    let xf = generate_topology(&rack, xplan.dm_all(), SEED).map_err(|e| err("XFabric")(&e))?;
    let (a, b, c) = torus_sides(socs);
    let gateways = spread_gateways(socs, rack.uplinks());
    let mut fabrics = vec![Built {
        graph: xf.graph().clone(),
        uplinks: xplan,
    }];
    for g in [
        torus_3d(a, b, c).map_err(|e| err("torus")(&e))?,
        random_regular(socs, PORTS, SEED).map_err(|e| err("random")(&e))?,
    ] {
        let uplinks = nearest_uplinks(&g, demand, &gateways).map_err(|e| err("uplinks")(&e))?;
        fabrics.push(Built { graph: g, uplinks });
    }
    let (mut hops, mut uplink) = ([0.0; 3], [0.0; 3]);
    for (i, f) in fabrics.iter().enumerate() {
        hops[i] = mean_hops(&f.graph, demand.internal())?;
        uplink[i] = uplink_hops(f, demand).unwrap_or(f64::NAN);
    }
    Ok((hops, uplink))
}

/// Runs the flow-level simulator of §6.2 on one fabric.
pub(crate) fn simulate_on(
    b: &Built,
    flows: &[shoal_workload::Flow],
) -> Result<FlowSimReport, ReproError> {
    let config = FlowSimConfig {
        seed: SEED,
        ..FlowSimConfig::default()
    };
    simulate(&b.graph, flows, Some(&b.uplinks), &config).map_err(|x| err("flow simulator")(&x))
}
