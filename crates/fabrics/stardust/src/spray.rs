//! Per-cell load balancing (§5.6): cells to a destination go round-robin over every link that
//! reaches it, walking the links in a random permutation that is replaced every few rounds,
//! so that packet timing cannot lock onto the arbiter and load some links more than others.
//!
//! One permutation per device; one cursor per destination, so that each destination's cells
//! are spread evenly over its own set of links. A round is one pass of the device's arbiter
//! over all its links (`links` picks); after `rounds` of them a fresh permutation is drawn.

use crate::reach::ReachTable;
use rand::RngExt;
use shoal_base::rng::StreamRng;

pub struct Sprayer {
    perm: Vec<u32>,
    /// Each link's position in `perm`.
    place: Vec<u32>,
    /// Per destination: the position in `perm` to look at next.
    cursor: Vec<u32>,
    /// Picks left before the next permutation, and picks between two permutations.
    left: u64,
    period: u64,
    rng: StreamRng,
}

impl Sprayer {
    /// A sprayer over `links` links for `dsts` destinations, replacing its permutation every
    /// `rounds` rounds (at least 1).
    pub fn new(links: usize, dsts: usize, rounds: u32, rng: StreamRng) -> Sprayer {
        let mut s = Sprayer {
            perm: (0..links as u32).collect(),
            place: vec![0; links],
            cursor: vec![0; dsts],
            left: links as u64 * rounds.max(1) as u64,
            period: links as u64 * rounds.max(1) as u64,
            rng,
        };
        s.shuffle();
        s
    }

    fn shuffle(&mut self) {
        // Fisher-Yates.
        for i in (1..self.perm.len()).rev() {
            let j = self.rng.random_range(0..=i);
            self.perm.swap(i, j);
        }
        for (pos, &link) in self.perm.iter().enumerate() {
            self.place[link as usize] = pos as u32;
        }
    }

    /// The next link towards `dst` among those `table` says reach it; `None` if none does:
    /// the first member of its set in the permutation from the destination's cursor on.
    // Per cell per hop: the walk wraps by comparison and the permutation's period counts
    // down, no division on the way (they were a tenth of this function's instructions). A
    // destination reached by one link (every hop down a fat-tree) takes it straight from the
    // bitmap, its cursor set past the link's place, where the walk went round every link.
    pub fn next(&mut self, dst: u32, table: &ReachTable) -> Option<u32> {
        let n = self.perm.len();
        let row = table.row(dst);
        let (link, pos) = match row {
            &[w] if w != 0 && w & (w - 1) == 0 => {
                let link = w.trailing_zeros();
                let pos = self.place[link as usize] as usize + 1;
                (link, if pos == n { 0 } else { pos })
            }
            _ => self.walk(dst, row)?,
        };
        self.cursor[dst as usize] = pos as u32;
        self.left -= 1;
        if self.left == 0 {
            self.left = self.period;
            self.shuffle();
        }
        Some(link)
    }

    /// The first member of `row` in the permutation from `dst`'s cursor, and the position
    /// after it.
    fn walk(&self, dst: u32, row: &[u64]) -> Option<(u32, usize)> {
        let n = self.perm.len();
        let mut pos = self.cursor[dst as usize] as usize;
        for _ in 0..n {
            let link = self.perm[pos];
            pos += 1;
            if pos == n {
                pos = 0;
            }
            if row[link as usize >> 6] >> (link & 63) & 1 == 1 {
                return Some((link, pos));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::rng::stream;

    fn table(links: usize, reach: &[u32]) -> ReachTable {
        let mut t = ReachTable::new(1, links);
        for &l in reach {
            t.set(0, l, true);
        }
        t
    }

    #[test]
    fn within_a_permutation_every_eligible_link_gets_one_cell_per_round() {
        // With the permutation fixed for `rounds` rounds, any window of |set| consecutive
        // picks to one destination covers its set exactly once.
        let t = table(16, &[1, 3, 4, 9, 15]);
        let mut s = Sprayer::new(16, 1, 1_000_000, stream(1, "t", 0));
        let picks: Vec<u32> = (0..50).map(|_| s.next(0, &t).unwrap()).collect();
        for w in picks.windows(5) {
            let mut w = w.to_vec();
            w.sort();
            assert_eq!(w, vec![1, 3, 4, 9, 15]);
        }
    }

    #[test]
    fn cells_spread_evenly_across_permutation_changes() {
        // A permutation change can skip or repeat a link once in the round it cuts, so a
        // link's excess over the mean is a walk of about one step per change: it stays within
        // a few standard deviations (sqrt of the changes) of the mean.
        let links = 12;
        let t = table(links, &(0..links as u32).collect::<Vec<_>>());
        let mut s = Sprayer::new(links, 1, 3, stream(2, "t", 0));
        let mut count = vec![0u32; links];
        let total = 120_000;
        for _ in 0..total {
            count[s.next(0, &t).unwrap() as usize] += 1;
        }
        let mean = total / links as u32;
        let changes = total / (3 * links as u32);
        let bound = 6.0 * (changes as f64).sqrt();
        for c in count {
            assert!(
                (c.abs_diff(mean) as f64) <= bound,
                "{c} vs {mean} (bound {bound})"
            );
        }
    }

    /// The sprayer as first written: a walk over the permutation testing membership link by
    /// link, for every destination.
    struct Walk {
        perm: Vec<u32>,
        cursor: Vec<u32>,
        left: u64,
        period: u64,
        rng: StreamRng,
    }

    impl Walk {
        fn new(links: usize, dsts: usize, rounds: u32, rng: StreamRng) -> Walk {
            let period = links as u64 * rounds as u64;
            let mut w = Walk {
                perm: (0..links as u32).collect(),
                cursor: vec![0; dsts],
                left: period,
                period,
                rng,
            };
            w.shuffle();
            w
        }

        fn shuffle(&mut self) {
            for i in (1..self.perm.len()).rev() {
                let j = self.rng.random_range(0..=i);
                self.perm.swap(i, j);
            }
        }

        fn next(&mut self, dst: u32, table: &ReachTable) -> Option<u32> {
            let n = self.perm.len();
            let mut pos = self.cursor[dst as usize] as usize;
            for _ in 0..n {
                let link = self.perm[pos];
                pos = (pos + 1) % n;
                if table.contains(dst, link) {
                    self.cursor[dst as usize] = pos as u32;
                    self.left -= 1;
                    if self.left == 0 {
                        self.left = self.period;
                        self.shuffle();
                    }
                    return Some(link);
                }
            }
            None
        }
    }

    proptest::proptest! {
        /// Any table (one word or several, destinations reached by none, one or many links)
        /// and any sequence of destinations: the same picks as the plain walk.
        #[test]
        fn picks_equal_the_plain_walk(
            links in 1usize..140,
            rounds in 1u32..4,
            seed in 0u64..1000,
            sets in proptest::collection::vec(proptest::collection::vec(0usize..140, 0..4), 1..6),
            dsts in proptest::collection::vec(0usize..6, 1..400),
        ) {
            let mut t = ReachTable::new(sets.len(), links);
            for (d, set) in sets.iter().enumerate() {
                for &l in set {
                    t.set(d as u32, (l % links) as u32, true);
                }
            }
            let mut fast = Sprayer::new(links, sets.len(), rounds, stream(seed, "t", 0));
            let mut walk = Walk::new(links, sets.len(), rounds, stream(seed, "t", 0));
            for d in dsts {
                let d = (d % sets.len()) as u32;
                proptest::prop_assert_eq!(fast.next(d, &t), walk.next(d, &t));
            }
        }
    }

    #[test]
    fn no_link_reaches_gives_none() {
        let t = table(4, &[]);
        let mut s = Sprayer::new(4, 1, 2, stream(3, "t", 0));
        assert_eq!(s.next(0, &t), None);
    }
}
