//! R2C2's rate computation (Costa et al., SIGCOMM 2015; Shoal §7.3's torus baseline): every node
//! knows every active flow and its route (flow starts and finishes are broadcast across the
//! rack) and computes the same max-min fair rates over the links; each sender paces at its
//! flow's rate (`shoal_transport::r2c2`). The R2C2 paper was not available; the choices:
//!
//! - Routes ([`Routing`]): dimension-order routing puts the whole flow on its one path
//!   (`Topology::dimension_order_hop`). Multipath routing splits the flow evenly over the
//!   minimal next hops at every node (`Topology::next_hops`), which is what per-packet spraying
//!   does in the simulator (each packet hashes to one of the next hops at every hop); a flow then
//!   loads each link with a fixed fraction of its rate. This is not "evenly over its minimal
//!   paths" (paths through nodes with more onward choices get less), but it is the split the
//!   packets really take.
//! - Rates are max-min fair by progressive filling ([`max_min`], the flow-level engine's solver,
//!   here as `MaxMinSet`, which keeps each link's list of flows between computations and
//!   gives the same rates bit for bit): the rates of all unfrozen flows
//!   rise together; a link whose load Σ fraction × rate reaches its capacity freezes every
//!   unfrozen flow crossing it; repeat. Capacities are link rates in bits/s as `f64`, computed in
//!   a fixed order, so results are deterministic. With a single path (fractions 1) this is the
//!   classic water-filling of `shoal_metrics::maxmin::MaxMin`, the tests' oracle.
//! - The broadcast of a flow event is not simulated packet by packet: it takes effect everywhere
//!   [`broadcast_delay`] later, the torus diameter × (link delay + a control packet's
//!   serialization), the time a flood needs to reach the farthest node.
//! - Nodes recompute the rates in batches, once per broadcast delay at most: news of a flow
//!   event needs that long to reach every node, so a node cannot usefully react faster, and one
//!   computation then covers every event whose news arrived in the interval. The computations
//!   fall on a fixed grid (multiples of the delay, [`next_solve`]): an event applied at `t` is
//!   in the computation at the first grid point after `t`, no more than one delay later. The
//!   rates are the exact max-min solution over the flows whose news has arrived.
//! - A new flow cannot wait for that: its source gives it at once the rate it would get on
//!   each of its links if every other flow kept the rate of the last computation
//!   ([`RateController::start_rate`]: the single-link max-min share, least over its links),
//!   and broadcasts the start. Every node, the source included, applies the start after the
//!   broadcast delay and the next computation replaces that rate with the exact one. A finish
//!   (the last byte delivered) is applied the same way. Until then links may be
//!   oversubscribed briefly, as in R2C2. (The exact max-min with the new flow added costs a
//!   whole computation per start, which made a million flows take hours.)

use shoal_base::{Dur, Time};
use shoal_engine::fluid::MaxMinSet;
pub use shoal_engine::fluid::max_min;
use shoal_topology::{Kind, Topology};
use std::collections::BTreeMap;

/// How flows are routed on the torus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routing {
    /// One path: correct X, then Y, then Z, each the short way round.
    DimensionOrder,
    /// An even split over the minimal next hops at every node.
    Multipath,
}

/// A flow's load on links: (link, fraction of the flow's rate), by link index. Link `first[n] +
/// p` is node `n`'s port `p`, the numbering of the simulator's ports.
pub type Route = Vec<(u32, f64)>;

/// The time a flow event takes to reach every node: the network diameter in hops × (a link's
/// delay + the serialization of a `control_bytes` packet at its rate), from host 0's first link.
pub fn broadcast_delay(topo: &Topology, control_bytes: u32) -> Dur {
    let hosts = topo.hosts() as u32;
    let diameter = (0..hosts)
        .flat_map(|a| (0..hosts).map(move |b| (a, b)))
        .map(|(a, b)| topo.distance(a, b))
        .max()
        .unwrap_or(0) as u64;
    let link = topo.link(0, 0);
    Dur(diameter * (link.delay.0 + link.rate.serialize(control_bytes as u64).0))
}

/// The first time strictly after `now` on the grid of multiples of `interval`: when the
/// rates are next computed if a flow event is applied at `now`.
pub fn next_solve(now: Time, interval: Dur) -> Time {
    let step = interval.0.max(1);
    Time((now.0 / step + 1) * step)
}

/// What every node knows: the active flows with their routes, the link capacities, and the
/// last computation's rates seen from each link.
pub struct RateController {
    routing: Routing,
    first: Vec<u32>,
    capacity: Vec<f64>,
    /// The known flows and the solver, which keeps each link's list of flows between
    /// computations (a computation pays for the flows that changed and the filling, not for
    /// rebuilding the lists) and the last computation: the (fraction, rate) of every flow
    /// crossing each link, for [`RateController::start_rate`].
    solver: MaxMinSet,
}

impl RateController {
    /// `DimensionOrder` needs a torus.
    pub fn new(topo: &Topology, routing: Routing) -> RateController {
        assert!(
            routing == Routing::Multipath || matches!(topo.kind(), Kind::Torus { .. }),
            "dimension-order routing needs a torus"
        );
        let mut first = Vec::with_capacity(topo.nodes() + 1);
        let mut capacity = Vec::new();
        for n in 0..topo.nodes() as u32 {
            first.push(capacity.len() as u32);
            capacity.extend(topo.links(n).iter().map(|l| l.rate.0 as f64));
        }
        first.push(capacity.len() as u32);
        RateController {
            routing,
            first,
            solver: MaxMinSet::new(capacity.clone()),
            capacity,
        }
    }

    pub fn routing(&self) -> Routing {
        self.routing
    }

    /// Link capacities (bits/s), by link index.
    pub fn capacity(&self) -> &[f64] {
        &self.capacity
    }

    /// The link index of node `n`'s port `p`.
    pub fn link(&self, n: u32, p: u32) -> u32 {
        self.first[n as usize] + p
    }

    /// The links a flow from host `src` to host `dst` loads, and with what fractions.
    pub fn route(&self, topo: &Topology, src: u32, dst: u32) -> Route {
        let mut route = Route::new();
        match self.routing {
            Routing::DimensionOrder => {
                let mut n = src;
                while let Some(p) = topo.dimension_order_hop(n, dst) {
                    route.push((self.link(n, p), 1.0));
                    n = topo.link(n, p).peer;
                }
            }
            Routing::Multipath => {
                let mut load: BTreeMap<u32, f64> = BTreeMap::new();
                let mut here: BTreeMap<u32, f64> = BTreeMap::from([(src, 1.0)]);
                while !here.contains_key(&dst) && !here.is_empty() {
                    let mut next: BTreeMap<u32, f64> = BTreeMap::new();
                    for (&n, &m) in &here {
                        let hops = topo.next_hops(n, dst);
                        let share = m / hops.len() as f64;
                        for &p in hops {
                            *load.entry(self.link(n, p)).or_default() += share;
                            *next.entry(topo.link(n, p).peer).or_default() += share;
                        }
                    }
                    here = next;
                }
                route.extend(load);
            }
        }
        route
    }

    /// Flow `flow` is known from the next computation on (its route replaced if it was known).
    pub fn insert(&mut self, flow: u32, route: Route) {
        self.solver.insert(flow, route);
    }

    /// Flow `flow` is gone from the next computation on; whether it was known.
    pub fn remove(&mut self, flow: u32) -> bool {
        self.solver.remove(flow)
    }

    /// Max-min rates of the known flows, as (flow, rate) by flow: bit for bit [`max_min`] over
    /// their routes in flow order. Remembered for [`RateController::start_rate`].
    pub fn solve(&mut self) -> &[(u32, f64)] {
        self.solver.solve()
    }

    /// The rate a source gives a new flow on `route` before the next computation: on each
    /// link, the max-min share of that link alone with every flow of the last computation
    /// held at its rate (the level `x` at which Σ fraction × min(rate, x) + the new flow's
    /// fraction × `x` fills the link), and the least of these over the route. On a route
    /// shared only by flows bottlenecked there this is the exact max-min rate.
    pub fn start_rate(&self, route: &[(u32, f64)]) -> f64 {
        route
            .iter()
            .map(|&(l, own)| {
                let l = l as usize;
                // From below: hold the flows under the current level at their rates, share the
                // rest of the link among the others and the newcomer, and repeat until no flow
                // crosses the level. Each step stays at or under the answer, so the held set
                // only grows and the last step is exact. (No sort: a link carries few flows.)
                let mut level = 0.0;
                loop {
                    let (mut left, mut weight) = (self.capacity[l], own);
                    for (c, x) in self.solver.on_link(l) {
                        if x < level {
                            left -= c * x;
                        } else {
                            weight += c;
                        }
                    }
                    let next = (left / weight).max(0.0);
                    if next <= level {
                        break level;
                    }
                    level = next;
                }
            })
            .fold(f64::INFINITY, f64::min)
    }
}

/// The simulator's R2C2 state: the shared view, the broadcast delay (also the interval between
/// computations), flows whose start is being broadcast, the rate each sender was last told,
/// the next computation, and how many there were.
pub(crate) struct R2c2State {
    pub ctl: RateController,
    pub delay: Dur,
    pub pending: BTreeMap<u32, Route>,
    pub told: Told,
    pub solve_at: Option<Time>,
    pub solves: u64,
}

impl R2c2State {
    pub fn new(topo: &Topology, routing: Routing, control_bytes: u32) -> R2c2State {
        R2c2State {
            ctl: RateController::new(topo, routing),
            delay: broadcast_delay(topo, control_bytes),
            pending: BTreeMap::new(),
            told: Told::default(),
            solve_at: None,
            solves: 0,
        }
    }
}

/// By record (records are dense indices): the rate the sender was last told, while the flow is
/// open. Every computation compares all open flows' rates with it, so an index rather than a
/// tree search (~100,000 of them per computation at L 0.8).
#[derive(Default)]
pub(crate) struct Told(Vec<Option<u64>>);

impl Told {
    /// Records that the sender of `record` is told `rate`; whether that is news to it.
    pub fn tell(&mut self, record: u32, rate: u64) -> bool {
        let i = record as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, None);
        }
        self.0[i].replace(rate) != Some(rate)
    }

    /// The flow of `record` finished: its sender is told nothing more.
    pub fn forget(&mut self, record: u32) {
        if let Some(told) = self.0.get_mut(record as usize) {
            *told = None;
        }
    }
}
