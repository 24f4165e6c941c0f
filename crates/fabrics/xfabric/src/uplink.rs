//! Uplink placement (§4), run before the internal topology because external traffic loads the
//! internal fabric on its way to a gateway. It decides which l SoCs hold the rack's uplinks and
//! which gateway every other SoC tunnels its external traffic through, and turns that traffic
//! into in-rack demand (`dm_ext`) that Algorithm 1 then optimises together with `dm` (`dm_all`).
//!
//! The two stages follow the paper: the l SoCs with the highest external demand D_ext get the
//! uplinks, then the others, in decreasing D_ext, each join the set with the least aggregate
//! D_ext. Choices the paper leaves open, made here:
//! - A set's aggregate demand starts at its gateway's own D_ext: the uplink carries it too.
//! - Ties are broken by the lower SoC id in both stages; between sets of equal demand the one with
//!   fewer members wins, then the lower uplink index, so SoCs with no external traffic at all are
//!   still spread evenly instead of piling onto the first uplink.
//! - Direction: `dm_ext[s][g]` is what SoC `s` sends out of the rack through its gateway `g`
//!   (egress) and `dm_ext[g][s]` what it receives from outside (ingress), so that every entry of
//!   `dm_all` reads "bytes from row to column inside the rack". (The paper writes the ingress into
//!   `dm_u[S1, S2]`, S2 being the gateway; only the sum of both directions matters to Algorithm 1.)
//! - A gateway's own external traffic never enters the internal fabric and adds nothing to `dm_ext`.

use crate::demand::{Demand, DemandMatrix};
use crate::error::Error;
use crate::forwarding::ForwardingTables;
use crate::graph::{SocGraph, node};
use crate::rack::Rack;
use shoal_base::NodeId;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Where the uplinks go and the in-rack demand they induce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UplinkPlan {
    gateways: Vec<NodeId>,
    uplink_of: Vec<u32>,
    set_demand: Vec<u128>,
    dm_ext: DemandMatrix,
    dm_all: DemandMatrix,
}

/// Places the rack's uplinks for `demand` and builds `dm_ext` and `dm_all`.
pub fn place_uplinks(rack: &Rack, demand: &Demand) -> Result<UplinkPlan, Error> {
    let n = rack.socs();
    if demand.socs() != n {
        return Err(Error::MatrixSize {
            expected: n,
            found: demand.socs(),
        });
    }
    let l = rack.uplinks();
    let d_ext: Vec<u128> = (0..n).map(|s| demand.external(node(s))).collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by_key(|&s| (Reverse(d_ext[s]), s));

    // Stage 1: the heaviest SoCs become gateways, uplink k on the k-th heaviest.
    let gateways: Vec<NodeId> = order[..l].iter().map(|&s| node(s)).collect();
    let mut uplink_of = vec![0u32; n];
    let mut set_demand: Vec<u128> = Vec::with_capacity(l);
    let mut sets = BinaryHeap::with_capacity(l);
    for (k, g) in gateways.iter().enumerate() {
        uplink_of[g.idx()] = k as u32;
        set_demand.push(d_ext[g.idx()]);
        sets.push(Reverse((d_ext[g.idx()], 1usize, k)));
    }

    // Stage 2: the rest, heaviest first, each to the lightest set.
    for &s in &order[l..] {
        // The heap holds one entry per set and l >= 1, so it is never empty here.
        if let Some(Reverse((load, members, k))) = sets.pop() {
            uplink_of[s] = k as u32;
            set_demand[k] = load + d_ext[s];
            sets.push(Reverse((set_demand[k], members + 1, k)));
        }
    }

    plan(demand, gateways, uplink_of, set_demand)
}

/// The static topologies' uplinks (§6.1: "the uplinks are uniformly distributed across the SoCs
/// and each SoC sends ingress/egress traffic to its nearest uplink in terms of path length"):
/// uplink `k` on `gateways[k]`, and every SoC tunnelling through the gateway fewest hops away in
/// `graph`, the lower uplink index on a tie. [`spread_gateways`] gives the uniform placement.
pub fn nearest_uplinks(
    graph: &SocGraph,
    demand: &Demand,
    gateways: &[NodeId],
) -> Result<UplinkPlan, Error> {
    let n = graph.socs();
    if demand.socs() != n {
        return Err(Error::MatrixSize {
            expected: n,
            found: demand.socs(),
        });
    }
    if gateways.is_empty() {
        return Err(Error::NoUplinks);
    }
    if let Some(g) = gateways.iter().find(|g| g.idx() >= n) {
        return Err(Error::SocOutOfRange {
            soc: g.idx(),
            socs: n,
        });
    }
    let tables = ForwardingTables::new(graph);
    let mut uplink_of = vec![0u32; n];
    let mut set_demand = vec![0u128; gateways.len()];
    for (s, up) in uplink_of.iter_mut().enumerate() {
        let mut best: Option<(u16, usize)> = None;
        for (k, &g) in gateways.iter().enumerate() {
            if let Some(h) = tables.hops(node(s), g)
                && best.is_none_or(|(bh, _)| h < bh)
            {
                best = Some((h, k));
            }
        }
        let (_, k) = best.ok_or(Error::Unreachable {
            src: s,
            dst: gateways[0].idx(),
        })?;
        *up = k as u32;
        set_demand[k] += demand.external(node(s));
    }
    plan(demand, gateways.to_vec(), uplink_of, set_demand)
}

/// The plan for an assignment of SoCs to uplinks: each SoC's external traffic becomes demand
/// between it and its gateway (dm_ext, egress one way and ingress the other), added to the
/// internal demand (dm_all).
fn plan(
    demand: &Demand,
    gateways: Vec<NodeId>,
    uplink_of: Vec<u32>,
    set_demand: Vec<u128>,
) -> Result<UplinkPlan, Error> {
    let n = demand.socs();
    let mut ext = vec![0u64; n * n];
    for s in 0..n {
        let g = gateways[uplink_of[s] as usize].idx();
        if g != s {
            ext[s * n + g] = demand.sent_external(node(s));
            ext[g * n + s] = demand.received_external(node(s));
        }
    }
    let dm_ext = DemandMatrix::from_rows(n, ext)?;
    let dm_all = demand.internal().sum(&dm_ext)?;
    Ok(UplinkPlan {
        gateways,
        uplink_of,
        set_demand,
        dm_ext,
        dm_all,
    })
}

/// `l` gateways spread evenly over the SoC ids: uplink `k` on SoC `k * socs / l` (our reading of
/// §6.1's "uniformly distributed"; on a torus the ids run along its dimensions).
pub fn spread_gateways(socs: usize, l: usize) -> Vec<NodeId> {
    (0..l.min(socs))
        .map(|k| node(k * socs / l.min(socs)))
        .collect()
}

impl UplinkPlan {
    /// The SoC holding each uplink: uplink `k` is on `gateways()[k]`.
    pub fn gateways(&self) -> &[NodeId] {
        &self.gateways
    }

    /// The uplink `soc` sends and receives its external traffic through.
    ///
    /// # Panics
    /// If `soc` is not in the rack.
    pub fn uplink_of(&self, soc: NodeId) -> usize {
        self.uplink_of[soc.idx()] as usize
    }

    /// The gateway SoC of `soc` (itself if it holds an uplink).
    ///
    /// # Panics
    /// If `soc` is not in the rack.
    pub fn gateway_of(&self, soc: NodeId) -> NodeId {
        self.gateways[self.uplink_of(soc)]
    }

    /// The aggregate external demand D_ext of uplink `k`'s set, its gateway included.
    ///
    /// # Panics
    /// If there is no uplink `k`.
    pub fn set_demand(&self, k: usize) -> u128 {
        self.set_demand[k]
    }

    /// The circuits of the uplink crosspoint, as (SoC uplink port, data-center uplink port) in the
    /// rack's port numbering (port s for SoC s, port n + k for uplink k).
    pub fn uplink_circuits(&self) -> Vec<(usize, usize)> {
        let n = self.uplink_of.len();
        self.gateways
            .iter()
            .enumerate()
            .map(|(k, g)| (g.idx(), n + k))
            .collect()
    }

    /// The in-rack demand of external traffic between each SoC and its gateway.
    pub fn dm_ext(&self) -> &DemandMatrix {
        &self.dm_ext
    }

    /// `dm + dm_ext`: the matrix the topology is optimised for.
    pub fn dm_all(&self) -> &DemandMatrix {
        &self.dm_all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rack::RackSpec;
    use proptest::prelude::*;

    fn rack(socs: usize, uplinks: usize) -> Rack {
        Rack::new(
            RackSpec {
                socs,
                ports_per_soc: 6,
                uplinks,
            },
            0,
        )
        .unwrap()
    }

    fn demand_with_external(sent: Vec<u64>, received: Vec<u64>) -> Demand {
        let n = sent.len();
        Demand::new(DemandMatrix::zeros(n).unwrap(), sent, received).unwrap()
    }

    #[test]
    fn hand_worked_placement() {
        // D_ext = [10, 50, 30, 0, 20, 40]. Gateways: SoC 1 (50) for uplink 0, SoC 5 (40) for
        // uplink 1. Then SoC 2 (30) joins the lighter set 1 (40 -> 70), SoC 4 (20) joins set 0
        // (50 -> 70), SoC 0 (10) meets a tie at 70 with 2 members each and takes uplink 0
        // (-> 80), and SoC 3 (0) joins set 1.
        let d = demand_with_external(vec![10, 20, 0, 0, 5, 40], vec![0, 30, 30, 0, 15, 0]);
        let p = place_uplinks(&rack(6, 2), &d).unwrap();
        assert_eq!(p.gateways(), &[NodeId(1), NodeId(5)]);
        let sets: Vec<usize> = (0..6).map(|s| p.uplink_of(NodeId(s))).collect();
        assert_eq!(sets, vec![0, 0, 1, 1, 0, 1]);
        assert_eq!((p.set_demand(0), p.set_demand(1)), (80, 70));
        assert_eq!(p.uplink_circuits(), vec![(1, 6), (5, 7)]);
        // SoC 4 sends 5 bytes out through SoC 1 and receives 15 through it.
        assert_eq!(p.dm_ext().get(NodeId(4), NodeId(1)), 5);
        assert_eq!(p.dm_ext().get(NodeId(1), NodeId(4)), 15);
        assert_eq!(p.dm_ext().get(NodeId(2), NodeId(5)), 0);
        assert_eq!(p.dm_ext().get(NodeId(5), NodeId(2)), 30);
        // The gateways' own traffic stays off the internal fabric.
        assert_eq!(p.dm_ext().total(), 10 + 30 + 20);
    }

    #[test]
    fn socs_without_external_traffic_are_spread_evenly() {
        let d = Demand::zeros(12).unwrap();
        let p = place_uplinks(&rack(12, 4), &d).unwrap();
        assert_eq!(p.gateways(), &[NodeId(0), NodeId(1), NodeId(2), NodeId(3)]);
        let mut members = [0; 4];
        for s in 0..12 {
            members[p.uplink_of(NodeId(s))] += 1;
        }
        assert_eq!(members, [3, 3, 3, 3]);
    }

    #[test]
    fn a_demand_of_the_wrong_size_is_rejected() {
        let d = Demand::zeros(5).unwrap();
        assert_eq!(
            place_uplinks(&rack(6, 2), &d),
            Err(Error::MatrixSize {
                expected: 6,
                found: 5
            })
        );
    }

    proptest! {
        #[test]
        fn placement_invariants(
            ext in prop::collection::vec((0u64..1000, 0u64..1000), 2..40),
            internal_seed in any::<u64>(),
            l_pick in any::<prop::sample::Index>(),
        ) {
            let n = ext.len();
            let l = 1 + l_pick.index(n);
            let mut dm = DemandMatrix::zeros(n).unwrap();
            let mut x = internal_seed;
            for a in 0..n {
                for b in 0..n {
                    if a != b {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        dm.set(node(a), node(b), x >> 54).unwrap();
                    }
                }
            }
            let d = Demand::new(
                dm.clone(),
                ext.iter().map(|e| e.0).collect(),
                ext.iter().map(|e| e.1).collect(),
            ).unwrap();
            let p = place_uplinks(&rack(n, l), &d).unwrap();
            let d_ext = |s: usize| (ext[s].0 + ext[s].1) as u128;

            // Stage 1: no SoC outside the gateways has more external demand than a gateway.
            let weakest_gateway = p.gateways().iter().map(|g| d_ext(g.idx())).min().unwrap();
            for s in 0..n {
                if !p.gateways().contains(&node(s)) {
                    prop_assert!(d_ext(s) <= weakest_gateway);
                }
                prop_assert_eq!(p.gateway_of(p.gateway_of(node(s))), p.gateway_of(node(s)));
            }
            // The sets partition the SoCs and their aggregates add up.
            let mut sum = vec![0u128; l];
            for s in 0..n {
                sum[p.uplink_of(node(s))] += d_ext(s);
            }
            for (k, total) in sum.iter().enumerate() {
                prop_assert_eq!(p.set_demand(k), *total);
            }
            // Stage 2 is greedy on the lightest set: when a set took its last SoC it was the
            // lightest, so without that SoC it is no heavier than the lightest set at the end.
            let lightest = sum.iter().min().copied().unwrap();
            for (k, total) in sum.iter().enumerate() {
                let last = (0..n)
                    .filter(|&s| p.uplink_of(node(s)) == k && p.gateway_of(node(s)) != node(s))
                    .min_by_key(|&s| (d_ext(s), Reverse(s)));
                if let Some(s) = last {
                    prop_assert!(total - d_ext(s) <= lightest);
                }
            }
            // dm_all = dm + dm_ext, and dm_ext carries exactly the non-gateways' external bytes.
            prop_assert_eq!(p.dm_all(), &dm.sum(p.dm_ext()).unwrap());
            let off_gateway: u128 = (0..n)
                .filter(|&s| p.gateway_of(node(s)) != node(s))
                .map(d_ext)
                .sum();
            prop_assert_eq!(p.dm_ext().total(), off_gateway);
        }
    }
}
