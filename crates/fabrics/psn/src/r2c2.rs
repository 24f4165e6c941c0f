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
//! - Rates are max-min fair by progressive filling ([`max_min`]): the rates of all unfrozen flows
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

/// Max-min fair rates by progressive filling, for flows that load each of their links with a
/// fixed fraction of their rate. `capacity[l]` is link `l`'s capacity; every route must load at
/// least one link with a positive fraction. Returns the rates in the order of `routes`.
///
/// Links wait in a min-heap keyed by the fill level at which they would saturate; flows
/// freezing on another link move a link's level, and once that link's flows are frozen the
/// link's key is moved in place, so a solve costs O(Σ route lengths + moves · log links).
pub fn max_min(capacity: &[f64], routes: &[&[(u32, f64)]]) -> Vec<f64> {
    let n = capacity.len();
    let mut used = vec![0.0f64; n];
    let mut coef = vec![0.0f64; n];
    let mut unfrozen = vec![0u32; n];
    let mut first = vec![0u32; n + 1];
    for r in routes {
        for &(l, c) in r.iter() {
            coef[l as usize] += c;
            unfrozen[l as usize] += 1;
            first[l as usize + 1] += 1;
        }
    }
    for l in 0..n {
        first[l + 1] += first[l];
    }
    let mut fill = first.clone();
    let mut users = vec![0u32; first[n] as usize];
    for (f, r) in routes.iter().enumerate() {
        for &(l, _) in r.iter() {
            users[fill[l as usize] as usize] = f as u32;
            fill[l as usize] += 1;
        }
    }
    // Levels are non-negative, so their IEEE bits order like the values.
    let key = |l: usize, used: &[f64], coef: &[f64]| ((capacity[l] - used[l]) / coef[l]).max(0.0);
    let mut heap = LinkHeap::new(n);
    for l in (0..n).filter(|&l| unfrozen[l] > 0) {
        heap.set(l as u32, key(l, &used, &coef).to_bits());
    }
    let mut rate = vec![0.0f64; routes.len()];
    let mut frozen = vec![false; routes.len()];
    let mut level = 0.0f64;
    // Links whose level moved while one bottleneck froze its flows: re-keyed once afterwards.
    let mut touched: Vec<u32> = Vec::new();
    let mut is_touched = vec![false; n];
    while let Some((bits, l)) = heap.pop() {
        let l = l as usize;
        if unfrozen[l] == 0 {
            continue;
        }
        level = level.max(f64::from_bits(bits));
        for i in first[l]..first[l + 1] {
            let f = users[i as usize] as usize;
            if frozen[f] {
                continue;
            }
            frozen[f] = true;
            rate[f] = level;
            for &(m, c) in routes[f].iter() {
                let m = m as usize;
                used[m] += c * level;
                coef[m] -= c;
                unfrozen[m] -= 1;
                if m != l && !is_touched[m] {
                    is_touched[m] = true;
                    touched.push(m as u32);
                }
            }
        }
        for m in touched.drain(..) {
            let m = m as usize;
            is_touched[m] = false;
            if unfrozen[m] > 0 {
                heap.set(m as u32, key(m, &used, &coef).to_bits());
            }
        }
    }
    assert!(frozen.iter().all(|&f| f), "a flow loads no link");
    rate
}

/// A binary min-heap of links by (key, link), each present at most once and its key movable in
/// place: the heap never grows past the number of links.
struct LinkHeap {
    heap: Vec<u32>,
    /// Each link's index in `heap`, or `ABSENT`.
    pos: Vec<u32>,
    key: Vec<u64>,
}

const ABSENT: u32 = u32::MAX;

impl LinkHeap {
    fn new(links: usize) -> LinkHeap {
        LinkHeap {
            heap: Vec::with_capacity(links),
            pos: vec![ABSENT; links],
            key: vec![0; links],
        }
    }

    fn less(&self, a: u32, b: u32) -> bool {
        (self.key[a as usize], a) < (self.key[b as usize], b)
    }

    /// Inserts link `l` with `key`, or moves it to `key`.
    fn set(&mut self, l: u32, key: u64) {
        self.key[l as usize] = key;
        let i = match self.pos[l as usize] {
            ABSENT => {
                self.heap.push(l);
                self.heap.len() - 1
            }
            i => i as usize,
        };
        self.pos[l as usize] = i as u32;
        let i = self.up(i);
        self.down(i);
    }

    /// Removes and returns the least (key, link).
    fn pop(&mut self) -> Option<(u64, u32)> {
        let top = *self.heap.first()?;
        let last = self.heap.pop().expect("not empty");
        self.pos[top as usize] = ABSENT;
        if last != top {
            self.heap[0] = last;
            self.pos[last as usize] = 0;
            self.down(0);
        }
        Some((self.key[top as usize], top))
    }

    fn swap(&mut self, i: usize, j: usize) {
        self.heap.swap(i, j);
        self.pos[self.heap[i] as usize] = i as u32;
        self.pos[self.heap[j] as usize] = j as u32;
    }

    fn up(&mut self, mut i: usize) -> usize {
        while i > 0 && self.less(self.heap[i], self.heap[(i - 1) / 2]) {
            self.swap(i, (i - 1) / 2);
            i = (i - 1) / 2;
        }
        i
    }

    fn down(&mut self, mut i: usize) {
        loop {
            let mut least = i;
            for c in [2 * i + 1, 2 * i + 2] {
                if c < self.heap.len() && self.less(self.heap[c], self.heap[least]) {
                    least = c;
                }
            }
            if least == i {
                return;
            }
            self.swap(i, least);
            i = least;
        }
    }
}

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
    flows: BTreeMap<u32, Route>,
    /// Per link, the (fraction, rate) of every flow of the last computation crossing it:
    /// entries `share_first[l]..share_first[l + 1]` of `shares`.
    share_first: Vec<u32>,
    shares: Vec<(f64, f64)>,
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
        let links = capacity.len();
        RateController {
            routing,
            first,
            capacity,
            flows: BTreeMap::new(),
            share_first: vec![0; links + 1],
            shares: Vec::new(),
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

    /// The flows every node knows of.
    pub fn flows(&self) -> &BTreeMap<u32, Route> {
        &self.flows
    }

    pub fn insert(&mut self, flow: u32, route: Route) {
        self.flows.insert(flow, route);
    }

    pub fn remove(&mut self, flow: u32) -> Option<Route> {
        self.flows.remove(&flow)
    }

    /// Max-min rates of the known flows, by flow; remembered for [`RateController::start_rate`].
    pub fn solve(&mut self) -> Vec<(u32, f64)> {
        let routes: Vec<&[(u32, f64)]> = self.flows.values().map(|r| r.as_slice()).collect();
        let rates = max_min(&self.capacity, &routes);
        let links = self.capacity.len();
        self.share_first.clear();
        self.share_first.resize(links + 1, 0);
        for r in &routes {
            for &(l, _) in r.iter() {
                self.share_first[l as usize + 1] += 1;
            }
        }
        for l in 0..links {
            self.share_first[l + 1] += self.share_first[l];
        }
        let mut fill = self.share_first.clone();
        self.shares.clear();
        self.shares
            .resize(self.share_first[links] as usize, (0.0, 0.0));
        for (r, &x) in routes.iter().zip(&rates) {
            for &(l, c) in r.iter() {
                self.shares[fill[l as usize] as usize] = (c, x);
                fill[l as usize] += 1;
            }
        }
        self.flows.keys().copied().zip(rates).collect()
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
                let on =
                    &self.shares[self.share_first[l] as usize..self.share_first[l + 1] as usize];
                // From below: hold the flows under the current level at their rates, share the
                // rest of the link among the others and the newcomer, and repeat until no flow
                // crosses the level. Each step stays at or under the answer, so the held set
                // only grows and the last step is exact. (No sort: a link carries few flows.)
                let mut level = 0.0;
                loop {
                    let (mut left, mut weight) = (self.capacity[l], own);
                    for &(c, x) in on {
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
    pub told: BTreeMap<u32, u64>,
    pub solve_at: Option<Time>,
    pub solves: u64,
}

impl R2c2State {
    pub fn new(topo: &Topology, routing: Routing, control_bytes: u32) -> R2c2State {
        R2c2State {
            ctl: RateController::new(topo, routing),
            delay: broadcast_delay(topo, control_bytes),
            pending: BTreeMap::new(),
            told: BTreeMap::new(),
            solve_at: None,
            solves: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_share_a_link() {
        // Link 0 carries all of flow 0 and half of flow 1: 1.5 r = 3 gives r = 2 for both.
        let a = [(0u32, 1.0)];
        let b = [(0u32, 0.5), (1, 0.5)];
        assert_eq!(max_min(&[3.0, 10.0], &[&a, &b]), vec![2.0, 2.0]);
        // Classic: link 0 (cap 1) shared by flows 0, 1; flow 2 alone on link 1 with flow 1.
        let c = [(0u32, 1.0)];
        let d = [(0u32, 1.0), (1, 1.0)];
        let e = [(1u32, 1.0)];
        assert_eq!(max_min(&[1.0, 2.0], &[&c, &d, &e]), vec![0.5, 0.5, 1.5]);
    }
}
