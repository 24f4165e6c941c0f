//! The flow-level engine: flows as fluids sharing links max-min fairly, for studies where
//! packets do not matter (XFabric's rack, DESIGN.md's "flow-level engine for topology studies").
//!
//! A [`FluidNet`] holds links of fixed capacity (bits per second) and flows that load each link
//! of their route with a fixed fraction of their rate (a flow split over several paths). Its
//! rates are the max-min fair allocation ([`max_min`], progressive filling) over the flows
//! present, recomputed whenever a flow arrives, leaves or is rerouted, and constant in between;
//! a flow finishes at the first picosecond by which its bits have gone at those rates. The
//! engine owns no clock: the model calls [`FluidNet::advance`] with the time of each of its
//! events, and asks [`FluidNet::next_finish`] when to call next.
//!
//! Rates and bits left are `f64`, computed in a fixed order with +, −, ×, ÷ only (the rule of
//! ARCHITECTURE.md's "Floats in models"), and a finish time is rounded up to whole picoseconds.

use shoal_base::{Dur, Time};

mod set;
pub use set::MaxMinSet;

/// Max-min fair rates by progressive filling, for flows that load each of their links with a
/// fixed fraction of their rate. `capacity[l]` is link `l`'s capacity; every route must load at
/// least one link with a positive fraction. Returns the rates in the order of `routes`.
///
/// One computation with fresh buffers; [`MaxMin`] keeps them between computations.
pub fn max_min(capacity: &[f64], routes: &[&[(u32, f64)]]) -> Vec<f64> {
    MaxMin::default().solve(capacity, routes).to_vec()
}

/// The progressive-filling solver of [`max_min`], holding its buffers between computations so
/// that a caller solving again and again allocates nothing once they have grown. (A caller
/// whose flow set changes little between computations keeps the per-link lists as well with
/// [`MaxMinSet`].)
///
/// Each link's key is the fill level at which it would saturate. The link with the least (key,
/// link) is the next bottleneck: it freezes its unfrozen flows at the current level, which moves
/// the key of every other link those flows cross; those are re-keyed once per bottleneck. The
/// least is kept by a `LinkTree` (a tournament over the links) rather than a heap: a re-key
/// there walks up the tree only while the winner changes, and a link left with no unfrozen flow
/// simply drops out, where a heap paid a sift for each. Cost: O(Σ route lengths + re-keys ·
/// log links).
#[derive(Clone, Debug, Default)]
pub struct MaxMin {
    used: Vec<f64>,
    coef: Vec<f64>,
    unfrozen: Vec<u32>,
    /// Per link, its flows and the fraction each loads it with: entries `first[l]..first[l +
    /// 1]` of `users` and `fraction`, in route order (two arrays of plain numbers, so that
    /// clearing them is a memset).
    first: Vec<u32>,
    fill: Vec<u32>,
    users: Vec<u32>,
    fraction: Vec<f64>,
    rate: Vec<f64>,
    frozen: Vec<bool>,
    /// Links whose level moved while one bottleneck froze its flows: re-keyed once afterwards.
    touched: Vec<u32>,
    is_touched: Vec<bool>,
    tree: LinkTree,
}

impl MaxMin {
    /// Max-min rates of `routes` over links of `capacity`, in the order of `routes` (see
    /// [`max_min`]).
    ///
    /// # Panics
    /// If a route loads no link.
    pub fn solve(&mut self, capacity: &[f64], routes: &[&[(u32, f64)]]) -> &[f64] {
        let n = capacity.len();
        let reset = |v: &mut Vec<f64>| {
            v.clear();
            v.resize(n, 0.0);
        };
        reset(&mut self.used);
        reset(&mut self.coef);
        self.unfrozen.clear();
        self.unfrozen.resize(n, 0);
        self.first.clear();
        self.first.resize(n + 1, 0);
        let (used, coef, unfrozen, first) = (
            &mut self.used,
            &mut self.coef,
            &mut self.unfrozen,
            &mut self.first,
        );
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
        self.fill.clear();
        self.fill.extend_from_slice(&first[..n]);
        self.users.clear();
        self.users.resize(first[n] as usize, 0);
        self.fraction.clear();
        self.fraction.resize(first[n] as usize, 0.0);
        for (f, r) in routes.iter().enumerate() {
            for &(l, c) in r.iter() {
                let at = &mut self.fill[l as usize];
                self.users[*at as usize] = f as u32;
                self.fraction[*at as usize] = c;
                *at += 1;
            }
        }
        // Levels are non-negative, so their IEEE bits order like the values.
        let key = |l: usize, used: &[f64], coef: &[f64]| {
            ((capacity[l] - used[l]) / coef[l]).max(0.0).to_bits()
        };
        self.tree.reset(n);
        for l in (0..n).filter(|&l| unfrozen[l] > 0) {
            self.tree.key[l] = key(l, used, coef);
        }
        self.tree.build();
        self.rate.clear();
        self.rate.resize(routes.len(), 0.0);
        self.frozen.clear();
        self.frozen.resize(routes.len(), false);
        self.is_touched.clear();
        self.is_touched.resize(n, false);
        let mut level = 0.0f64;
        while let Some((bits, l)) = self.tree.least() {
            let l = l as usize;
            self.tree.set(l, NONE);
            level = level.max(f64::from_bits(bits));
            for &f in &self.users[first[l] as usize..first[l + 1] as usize] {
                let f = f as usize;
                if self.frozen[f] {
                    continue;
                }
                self.frozen[f] = true;
                self.rate[f] = level;
                for &(m, c) in routes[f].iter() {
                    let m = m as usize;
                    used[m] += c * level;
                    coef[m] -= c;
                    unfrozen[m] -= 1;
                    if m != l && !self.is_touched[m] {
                        self.is_touched[m] = true;
                        self.touched.push(m as u32);
                    }
                }
            }
            for m in self.touched.drain(..) {
                let m = m as usize;
                self.is_touched[m] = false;
                // A link left with no unfrozen flow is done: nothing would freeze there.
                let k = if unfrozen[m] > 0 {
                    key(m, used, coef)
                } else {
                    NONE
                };
                if self.tree.key[m] != NONE {
                    self.tree.set(m, k);
                }
            }
        }
        assert!(self.frozen.iter().all(|&f| f), "a flow loads no link");
        &self.rate
    }
}

/// The key of a link out of the running (a NaN's bits: no level has them).
const NONE: u64 = u64::MAX;

/// A tournament tree over links: leaf `l` holds link `l`'s key, every inner node the link with
/// the least (key, link) below it, so the root is the least of all. Keys are `f64` bits of
/// non-negative levels, or [`NONE`].
#[derive(Clone, Debug, Default)]
struct LinkTree {
    /// Leaves: a power of two, at least the number of links (the padding is `NONE`).
    size: usize,
    key: Vec<u64>,
    /// `win[i]`: the winner at node `i` (inner nodes 1..size with children `2i`, `2i + 1`;
    /// leaf `l` is node `size + l`, its own winner).
    win: Vec<u32>,
}

impl LinkTree {
    /// `links` links, every key `NONE`; set keys, then [`LinkTree::build`].
    fn reset(&mut self, links: usize) {
        self.size = links.next_power_of_two();
        self.key.clear();
        self.key.resize(self.size, NONE);
        self.win.clear();
        self.win.resize(self.size, 0);
        self.win.extend(0..self.size as u32);
    }

    /// The winner of node `i`'s children.
    fn play(&self, i: usize) -> u32 {
        let (a, b) = (self.win[2 * i], self.win[2 * i + 1]);
        if (self.key[b as usize], b) < (self.key[a as usize], a) {
            b
        } else {
            a
        }
    }

    /// Plays every inner node, from the leaves up.
    fn build(&mut self) {
        for i in (1..self.size).rev() {
            self.win[i] = self.play(i);
        }
    }

    /// The least (key, link), if any link's key is not `NONE`.
    fn least(&self) -> Option<(u64, u32)> {
        let l = if self.size > 1 { self.win[1] } else { 0 };
        let k = *self.key.get(l as usize)?;
        (k != NONE).then_some((k, l))
    }

    /// Gives link `l` `key` and replays its path up while the winners there change (a node
    /// whose winner is neither `l` nor a new one has the same winner with the same key, and
    /// so has every node above it).
    fn set(&mut self, l: usize, key: u64) {
        self.key[l] = key;
        let mut i = (self.size + l) / 2;
        while i >= 1 {
            let w = self.play(i);
            if w == self.win[i] && w != l as u32 {
                return;
            }
            self.win[i] = w;
            i /= 2;
        }
    }
}

/// One flow in the fluid network.
#[derive(Clone, Debug)]
struct Fluid {
    route: Vec<(u32, f64)>,
    bits: f64,
    left: f64,
    rate: f64,
    finish: Option<Time>,
}

/// Links shared max-min fairly by fluid flows (see the module documentation). Flows are named by
/// the caller's ids, dense from 0 (a record index), and solved in the order they were started.
#[derive(Clone, Debug, Default)]
pub struct FluidNet {
    capacity: Vec<f64>,
    flows: Vec<Option<Fluid>>,
    /// Ids of the flows present, in the order they started.
    active: Vec<u32>,
    /// Progress is accounted up to here.
    last: Time,
    /// A flow arrived, left or moved since the rates were computed.
    dirty: bool,
}

/// Picoseconds per second.
const PS: f64 = 1e12;

impl FluidNet {
    /// Links of `capacity[l]` bits per second each.
    pub fn new(capacity: Vec<f64>) -> FluidNet {
        FluidNet {
            capacity,
            ..FluidNet::default()
        }
    }

    /// Replaces the links (a rewired network); every flow present must then be given a route over
    /// the new links with [`FluidNet::reroute`] before time moves on.
    pub fn set_capacity(&mut self, capacity: Vec<f64>) {
        self.capacity = capacity;
        self.dirty = true;
    }

    /// Flows present.
    pub fn len(&self) -> usize {
        self.active.len()
    }

    pub fn is_empty(&self) -> bool {
        self.active.is_empty()
    }

    /// The ids of the flows present, in the order they started.
    pub fn active(&self) -> &[u32] {
        &self.active
    }

    /// Starts flow `id` of `bytes` on `route` at the time of the last [`FluidNet::advance`].
    ///
    /// # Panics
    /// If `id` is present already, or the route loads no link with a positive fraction.
    pub fn start(&mut self, id: u32, route: Vec<(u32, f64)>, bytes: u64) {
        assert!(
            route.iter().any(|&(_, c)| c > 0.0),
            "flow {id}: a route must load a link"
        );
        let i = id as usize;
        if self.flows.len() <= i {
            self.flows.resize(i + 1, None);
        }
        assert!(self.flows[i].is_none(), "flow {id} started twice");
        let bits = bytes as f64 * 8.0;
        self.flows[i] = Some(Fluid {
            route,
            bits,
            left: bits,
            rate: 0.0,
            finish: None,
        });
        self.active.push(id);
        self.dirty = true;
    }

    /// Moves flow `id` (present) onto `route`.
    pub fn reroute(&mut self, id: u32, route: Vec<(u32, f64)>) {
        let f = self.flows[id as usize].as_mut().expect("a flow present");
        f.route = route;
        self.dirty = true;
    }

    /// Bytes flow `id` has moved so far (whole bytes, rounded down); all of them once finished.
    pub fn sent_bytes(&self, id: u32) -> Option<u64> {
        let f = self.flows.get(id as usize)?.as_ref()?;
        Some(((f.bits - f.left.max(0.0)) / 8.0).floor() as u64)
    }

    /// The rate of flow `id` since the last change, in bits per second.
    pub fn rate(&mut self, id: u32) -> Option<f64> {
        self.solve();
        Some(self.flows.get(id as usize)?.as_ref()?.rate)
    }

    /// Moves time on to `now`: every flow progresses at its rate, and those finished by `now` are
    /// removed and appended to `done` in the order they started.
    ///
    /// # Panics
    /// If `now` is before the last call's time.
    pub fn advance(&mut self, now: Time, done: &mut Vec<u32>) {
        assert!(now >= self.last, "fluid time runs backwards");
        self.solve();
        let dt = (now - self.last).0 as f64 / PS;
        let flows = &mut self.flows;
        let before = done.len();
        self.active.retain(|&id| {
            let f = flows[id as usize].as_mut().expect("an active flow");
            if f.finish.is_some_and(|t| t <= now) {
                f.left = 0.0;
                done.push(id);
                false
            } else {
                f.left -= f.rate * dt;
                true
            }
        });
        for &id in &done[before..] {
            self.flows[id as usize] = None;
        }
        self.dirty |= done.len() > before;
        self.last = now;
    }

    /// When the next flow finishes at the present rates, if any flow can.
    pub fn next_finish(&mut self) -> Option<Time> {
        self.solve();
        self.active
            .iter()
            .filter_map(|&id| self.flows[id as usize].as_ref().and_then(|f| f.finish))
            .min()
    }

    /// Recomputes the rates and finish times if anything changed.
    fn solve(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let routes: Vec<&[(u32, f64)]> = self
            .active
            .iter()
            .map(|&id| {
                self.flows[id as usize]
                    .as_ref()
                    .expect("active")
                    .route
                    .as_slice()
            })
            .collect();
        let rates = if routes.is_empty() {
            Vec::new()
        } else {
            max_min(&self.capacity, &routes)
        };
        for (&id, rate) in self.active.iter().zip(rates) {
            let f = self.flows[id as usize].as_mut().expect("active");
            f.rate = rate;
            f.finish = (rate > 0.0).then(|| {
                let ps = (f.left.max(0.0) / rate * PS).ceil();
                self.last
                    + Dur(if ps >= u64::MAX as f64 {
                        u64::MAX / 2
                    } else {
                        ps as u64
                    })
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use shoal_metrics::maxmin::MaxMin;

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

    proptest! {
        /// With whole routes (every fraction 1) the solver is the classic water-filling:
        /// `shoal_metrics`' reference gives the same rates.
        #[test]
        fn whole_routes_match_the_reference(
            capacity in prop::collection::vec(1u32..1000, 1..12),
            routes in prop::collection::vec(prop::collection::vec(0usize..12, 1..5), 1..20),
        ) {
            let n = capacity.len();
            let routes: Vec<Vec<(u32, f64)>> = routes
                .into_iter()
                .map(|r| {
                    let mut r: Vec<u32> = r.into_iter().map(|l| (l % n) as u32).collect();
                    r.sort_unstable();
                    r.dedup();
                    r.into_iter().map(|l| (l, 1.0)).collect()
                })
                .collect();
            let capacity: Vec<f64> = capacity.into_iter().map(f64::from).collect();
            let refs: Vec<&[(u32, f64)]> = routes.iter().map(|r| r.as_slice()).collect();
            let ours = max_min(&capacity, &refs);
            let mut reference = MaxMin::new();
            for &c in &capacity {
                reference.add_link(c);
            }
            for r in &routes {
                let links: Vec<usize> = r.iter().map(|&(l, _)| l as usize).collect();
                reference.add_entity(&links);
            }
            let want = reference.solve().unwrap();
            for (a, b) in ours.iter().zip(&want) {
                prop_assert!((a - b).abs() <= 1e-9 * b.max(1.0), "{ours:?} vs {want:?}");
            }
        }
    }

    #[test]
    fn two_flows_share_a_link_as_processor_sharing() {
        // One 8 Gb/s link (1 byte per ns). Flows of 1,000 and 3,000 bytes start together: both
        // go at 4 Gb/s until the first finishes at 2,000 ns, the second then alone at 8 Gb/s
        // finishes its last 2,000 bytes at 4,000 ns: (1,000 + 3,000) bytes / 1 byte per ns.
        let mut net = FluidNet::new(vec![8e9]);
        let mut done = Vec::new();
        net.advance(Time::ZERO, &mut done);
        net.start(0, vec![(0, 1.0)], 1_000);
        net.start(1, vec![(0, 1.0)], 3_000);
        assert_eq!(net.rate(0), Some(4e9));
        let t = net.next_finish().unwrap();
        assert_eq!(t, Time(2_000_000));
        net.advance(t, &mut done);
        assert_eq!(done, [0]);
        assert_eq!(net.sent_bytes(1), Some(1_000));
        let t = net.next_finish().unwrap();
        assert_eq!(t, Time(4_000_000));
        net.advance(t, &mut done);
        assert_eq!(done, [0, 1]);
        assert!(net.is_empty());
        assert_eq!(net.next_finish(), None);
    }

    #[test]
    fn a_split_flow_goes_at_the_sum_of_its_paths() {
        // A flow split evenly over two 1 Gb/s links goes at 2 Gb/s. A second flow on one of them
        // fills it at 0.5 r + s = 1 with r = s: 2/3 Gb/s each, the split flow held to that by
        // its fixed split although the other link has room.
        let mut net = FluidNet::new(vec![1e9, 1e9]);
        let mut done = Vec::new();
        net.advance(Time::ZERO, &mut done);
        net.start(0, vec![(0, 0.5), (1, 0.5)], 1_000_000);
        assert_eq!(net.rate(0), Some(2e9));
        net.advance(Time(1_000_000), &mut done);
        net.start(1, vec![(1, 1.0)], 1_000_000);
        let r = net.rate(0).unwrap();
        assert!((r - 2e9 / 3.0).abs() < 1.0, "{r}");
        assert!((net.rate(1).unwrap() - 2e9 / 3.0).abs() < 1.0);
        // 250 bytes went in the first microsecond.
        assert_eq!(net.sent_bytes(0), Some(250));
    }
}
