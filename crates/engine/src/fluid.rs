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
