//! [`MaxMinSet`]: the max-min solver of [`super::max_min`] over a set of flows that changes a
//! little between computations (R2C2's rack: ~170 starts and finishes between two computations
//! of ~100,000 flows), keeping each link's list of flows instead of rebuilding it every time.
//!
//! The rates are bit for bit those of [`super::max_min`] over the flows in id order. That
//! solver visits flows in the order given and each route in its own order, so:
//! - a link's list is kept sorted by (flow id, position in the route): the order in which
//!   `max_min` fills its lists, hence the order in which a bottleneck freezes its flows and in
//!   which the `used += fraction × level` sums run;
//! - a link's initial Σ fraction is the count of its flows when every fraction on it is exactly
//!   1 (a sum of ones is exact in any order below 2^53), and otherwise summed afresh along its
//!   list, in `max_min`'s order;
//! - the filling itself (freeze, re-key the links a frozen flow crosses, the tournament tree)
//!   is `max_min`'s, step for step.
//!
//! Starts and finishes are held until the next computation, so that [`MaxMinSet::on_link`]
//! answers for the last computation in between (R2C2's start rates read it).

use super::{LinkTree, NONE};
use std::collections::BTreeMap;

/// One flow on a link's list.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The caller's flow id: the list's order.
    id: u32,
    /// Where the flow's route, rate and frozen flag are kept.
    slot: u32,
    fraction: f64,
}

/// Max-min fair rates over a kept set of flows, each loading the links of its route with fixed
/// fractions of its rate (see the module documentation). Cost of a computation: the flows
/// started or finished since the last one × their route lengths × their links' list lengths,
/// plus the filling (O(Σ route lengths + re-keys · log links)), plus one pass over the flows
/// and one over the links; the per-link lists are not rebuilt.
#[derive(Clone, Debug, Default)]
pub struct MaxMinSet {
    capacity: Vec<f64>,
    /// The flows of the last computation: id → slot, in id order (the order of the rates).
    slot_of: BTreeMap<u32, u32>,
    /// Changes since the last computation: id → its new route, or `None` if it finished.
    pending: BTreeMap<u32, Option<Vec<(u32, f64)>>>,
    /// Per slot: the route of the flow there (empty if the slot is free).
    routes: Vec<Vec<(u32, f64)>>,
    free: Vec<u32>,
    /// Per link: its flows, sorted by (id, position in the route).
    on: Vec<Vec<Entry>>,
    /// Per link: how many of its entries have a fraction other than exactly 1.
    split: Vec<u32>,
    /// Per slot: the last computation's rate, and whether the filling has frozen it.
    rate: Vec<f64>,
    frozen: Vec<bool>,
    used: Vec<f64>,
    coef: Vec<f64>,
    unfrozen: Vec<u32>,
    touched: Vec<u32>,
    is_touched: Vec<bool>,
    tree: LinkTree,
    /// The last computation's (id, rate), in id order.
    out: Vec<(u32, f64)>,
}

impl MaxMinSet {
    /// No flows, over links of `capacity`.
    pub fn new(capacity: Vec<f64>) -> MaxMinSet {
        let n = capacity.len();
        MaxMinSet {
            capacity,
            on: vec![Vec::new(); n],
            split: vec![0; n],
            ..MaxMinSet::default()
        }
    }

    /// Flow `id` on `route` from the next computation on (replacing its route if it is known).
    ///
    /// # Panics
    /// If the route loads no link (`max_min` would panic on it), or names a link out of range.
    pub fn insert(&mut self, id: u32, route: Vec<(u32, f64)>) {
        assert!(!route.is_empty(), "flow {id}: a flow loads no link");
        assert!(
            route
                .iter()
                .all(|&(l, _)| (l as usize) < self.capacity.len()),
            "flow {id}: a route names a link out of range"
        );
        self.pending.insert(id, Some(route));
    }

    /// Flow `id` gone from the next computation on; whether it was known.
    pub fn remove(&mut self, id: u32) -> bool {
        let known = match self.pending.get(&id) {
            Some(change) => change.is_some(),
            None => self.slot_of.contains_key(&id),
        };
        if self.slot_of.contains_key(&id) {
            self.pending.insert(id, None);
        } else {
            self.pending.remove(&id);
        }
        known
    }

    /// Max-min rates of the known flows, as (id, rate) in id order: bit for bit
    /// [`super::max_min`] over their routes in id order.
    pub fn solve(&mut self) -> &[(u32, f64)] {
        for (id, change) in std::mem::take(&mut self.pending) {
            if let Some(slot) = self.slot_of.remove(&id) {
                self.unlink(id, slot);
            }
            if let Some(route) = change {
                self.link(id, route);
            }
        }
        self.fill();
        self.out.clear();
        self.out.extend(
            self.slot_of
                .iter()
                .map(|(&id, &s)| (id, self.rate[s as usize])),
        );
        &self.out
    }

    /// The (fraction, rate) of every flow of the last computation that crosses link `l`, by
    /// flow id, then route order (a link loaded twice by a flow is listed twice); none before
    /// the first computation.
    pub fn on_link(&self, l: usize) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.on
            .get(l)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|e| (e.fraction, self.rate[e.slot as usize]))
    }

    /// Puts flow `id` in a slot and on its links' lists, after every entry of a lesser or
    /// equal id (an equal id: an earlier link of the same route, which comes first).
    fn link(&mut self, id: u32, route: Vec<(u32, f64)>) {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.routes.push(Vec::new());
            (self.routes.len() - 1) as u32
        });
        for &(l, fraction) in &route {
            let list = &mut self.on[l as usize];
            let at = list.partition_point(|e| e.id <= id);
            list.insert(at, Entry { id, slot, fraction });
            self.split[l as usize] += u32::from(fraction != 1.0);
        }
        self.routes[slot as usize] = route;
        self.slot_of.insert(id, slot);
    }

    /// Takes flow `id` off its links' lists (the first of its entries at each visit, so a
    /// link it loads twice loses both) and frees its slot.
    fn unlink(&mut self, id: u32, slot: u32) {
        let route = std::mem::take(&mut self.routes[slot as usize]);
        for &(l, fraction) in &route {
            let list = &mut self.on[l as usize];
            let at = list.partition_point(|e| e.id < id);
            list.remove(at);
            self.split[l as usize] -= u32::from(fraction != 1.0);
        }
        self.free.push(slot);
    }

    /// Progressive filling over the kept lists: `MaxMin::solve`'s loop, with a link's list in
    /// place of its span of `users` and a slot in place of a flow's position.
    fn fill(&mut self) {
        let n = self.capacity.len();
        self.used.clear();
        self.used.resize(n, 0.0);
        self.coef.clear();
        self.coef
            .extend(self.on.iter().zip(&self.split).map(|(list, &split)| {
                if split == 0 {
                    list.len() as f64
                } else {
                    list.iter().fold(0.0, |sum, e| sum + e.fraction)
                }
            }));
        self.unfrozen.clear();
        self.unfrozen
            .extend(self.on.iter().map(|list| list.len() as u32));
        let capacity = &self.capacity;
        // Levels are non-negative, so their IEEE bits order like the values.
        let key = |l: usize, used: &[f64], coef: &[f64]| {
            ((capacity[l] - used[l]) / coef[l]).max(0.0).to_bits()
        };
        self.tree.reset(n);
        for l in (0..n).filter(|&l| self.unfrozen[l] > 0) {
            self.tree.key[l] = key(l, &self.used, &self.coef);
        }
        self.tree.build();
        let slots = self.routes.len();
        self.rate.clear();
        self.rate.resize(slots, 0.0);
        self.frozen.clear();
        self.frozen.resize(slots, false);
        self.is_touched.clear();
        self.is_touched.resize(n, false);
        let mut level = 0.0f64;
        while let Some((bits, l)) = self.tree.least() {
            let l = l as usize;
            self.tree.set(l, NONE);
            level = level.max(f64::from_bits(bits));
            for e in &self.on[l] {
                let f = e.slot as usize;
                if self.frozen[f] {
                    continue;
                }
                self.frozen[f] = true;
                self.rate[f] = level;
                for &(m, c) in &self.routes[f] {
                    let m = m as usize;
                    self.used[m] += c * level;
                    self.coef[m] -= c;
                    self.unfrozen[m] -= 1;
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
                let k = if self.unfrozen[m] > 0 {
                    key(m, &self.used, &self.coef)
                } else {
                    NONE
                };
                if self.tree.key[m] != NONE {
                    self.tree.set(m, k);
                }
            }
        }
        // Every link with an unfrozen flow keeps a key until it is the bottleneck and freezes
        // them all, and every route loads a link (`insert`), so every flow is frozen here.
    }
}

#[cfg(test)]
mod tests {
    use super::super::max_min;
    use super::*;
    use proptest::prelude::*;

    /// A route over `links` links: whole (fraction 1 on each link, as dimension-order routing)
    /// or split (random fractions, some of them 1, as multipath routing), a link possibly twice.
    fn route(links: usize) -> impl Strategy<Value = Vec<(u32, f64)>> {
        let hop = (
            0..links as u32,
            prop_oneof![Just(1.0), Just(0.5), 0.01f64..1.0],
        );
        prop::collection::vec(hop, 1..6)
    }

    /// Starts (a route) and finishes (an index into the flows present).
    #[derive(Clone, Debug)]
    enum Step {
        Start(Vec<(u32, f64)>),
        Finish(usize),
        Solve,
    }

    fn steps(links: usize, whole: bool) -> impl Strategy<Value = Vec<Step>> {
        let start = route(links).prop_map(move |r| {
            Step::Start(if whole {
                r.into_iter().map(|(l, _)| (l, 1.0)).collect()
            } else {
                r
            })
        });
        let step = prop_oneof![
            4 => start,
            2 => (0usize..1000).prop_map(Step::Finish),
            1 => Just(Step::Solve),
        ];
        prop::collection::vec(step, 1..80)
    }

    /// Runs `steps` on a `MaxMinSet` (ids increasing, as R2C2's records, unless `shuffle`
    /// gives them out of order) and checks every computation against a fresh `max_min` over
    /// the flows present in id order, bit for bit, and `on_link` against the same.
    fn check(capacity: Vec<f64>, steps: Vec<Step>, shuffle: bool) -> Result<(), TestCaseError> {
        let mut set = MaxMinSet::new(capacity.clone());
        let mut present: BTreeMap<u32, Vec<(u32, f64)>> = BTreeMap::new();
        let mut next = 0u32;
        for step in steps.into_iter().chain([Step::Solve]) {
            match step {
                Step::Start(r) => {
                    let id = if shuffle {
                        next.wrapping_mul(2_654_435_761) % 10_007
                    } else {
                        next
                    };
                    next += 1;
                    set.insert(id, r.clone());
                    present.insert(id, r);
                }
                Step::Finish(i) => {
                    if let Some(&id) = present.keys().nth(i % present.len().max(1)) {
                        prop_assert!(set.remove(id));
                        present.remove(&id);
                    }
                    prop_assert!(!set.remove(u32::MAX));
                }
                Step::Solve => {
                    let got = set.solve().to_vec();
                    let routes: Vec<&[(u32, f64)]> = present.values().map(Vec::as_slice).collect();
                    let want = max_min(&capacity, &routes);
                    prop_assert_eq!(got.len(), want.len());
                    for ((id, g), (&pid, w)) in got.iter().zip(present.keys().zip(&want)) {
                        prop_assert_eq!(*id, pid);
                        prop_assert_eq!(g.to_bits(), w.to_bits(), "flow {}: {} vs {}", id, g, w);
                    }
                    // A link's view: every flow crossing it, in id then route order.
                    for l in 0..capacity.len() + 1 {
                        let a: Vec<(u64, u64)> = set
                            .on_link(l)
                            .map(|(c, x)| (c.to_bits(), x.to_bits()))
                            .collect();
                        let b: Vec<(u64, u64)> = routes
                            .iter()
                            .zip(&want)
                            .flat_map(|(r, x)| {
                                r.iter()
                                    .filter(|&&(m, _)| m as usize == l)
                                    .map(|&(_, c)| (c.to_bits(), x.to_bits()))
                            })
                            .collect();
                        prop_assert_eq!(a, b, "link {}", l);
                    }
                }
            }
        }
        Ok(())
    }

    proptest! {
        /// Whole routes (every fraction 1): the kept sums are counts.
        #[test]
        fn whole_routes_match_max_min_bit_for_bit(
            capacity in prop::collection::vec(1u32..1000, 1..10),
            steps in steps(10, true),
            shuffle in any::<bool>(),
        ) {
            let n = capacity.len();
            let capacity: Vec<f64> = capacity.into_iter().map(f64::from).collect();
            let steps = steps.into_iter().map(|s| clamp(s, n)).collect();
            check(capacity, steps, shuffle)?;
        }

        /// Split routes (fractions other than 1): the sums are redone in `max_min`'s order.
        #[test]
        fn split_routes_match_max_min_bit_for_bit(
            capacity in prop::collection::vec(0.5f64..1000.0, 1..10),
            steps in steps(10, false),
            shuffle in any::<bool>(),
        ) {
            let n = capacity.len();
            let steps = steps.into_iter().map(|s| clamp(s, n)).collect();
            check(capacity, steps, shuffle)?;
        }
    }

    /// Folds a step's links into `0..n`.
    fn clamp(step: Step, n: usize) -> Step {
        match step {
            Step::Start(r) => Step::Start(r.into_iter().map(|(l, c)| (l % n as u32, c)).collect()),
            other => other,
        }
    }

    #[test]
    fn a_flow_started_and_finished_between_computations_leaves_no_trace() {
        let mut set = MaxMinSet::new(vec![2.0, 2.0]);
        set.insert(0, vec![(0, 1.0)]);
        assert_eq!(set.solve(), &[(0, 2.0)]);
        set.insert(1, vec![(0, 1.0), (1, 1.0)]);
        assert!(set.remove(1));
        assert!(!set.remove(1));
        assert_eq!(set.on_link(0).collect::<Vec<_>>(), [(1.0, 2.0)]);
        assert_eq!(set.solve(), &[(0, 2.0)]);
        assert_eq!(set.on_link(1).count(), 0);
    }
}
