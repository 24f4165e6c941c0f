//! Per-cell load balancing (§5.6): cells to a destination go round-robin over every link that
//! reaches it, walking the links in a random permutation that is replaced every few rounds,
//! so that packet timing cannot lock onto the arbiter and load some links more than others.
//!
//! One permutation per device; one cursor per destination, so that each destination's cells
//! are spread evenly over its own set of links. A round is one pass of the device's arbiter
//! over all its links (`links` picks); after `rounds` of them a fresh permutation is drawn.
//!
//! The sprayer keeps its device's forwarding table itself, laid out for the pick
//! (`docs/design/cell-datapath.md` §2.5): a destination's cursor beside its row of link bits,
//! so that a pick reads one 16-byte record (one cache line) where the cursor and the row were
//! in two arrays of the device's state.

use crate::reach::ReachTable;
use rand::RngExt;
use shoal_base::rng::StreamRng;

pub struct Sprayer {
    perm: Vec<u32>,
    /// Each link's position in `perm`.
    place: Vec<u32>,
    /// Per destination, `stride` words: the position in `perm` to look at next, then the
    /// destination's row of the forwarding table (bit `l` of word `l / 64`: link `l` reaches
    /// it).
    dsts: Vec<u64>,
    stride: usize,
    /// Picks left before the next permutation, and picks between two permutations.
    left: u64,
    period: u64,
    rng: StreamRng,
}

impl Sprayer {
    /// A sprayer over the links of `table`, replacing its permutation every `rounds` rounds
    /// (at least 1).
    pub fn new(table: &ReachTable, rounds: u32, rng: StreamRng) -> Sprayer {
        let links = table.links();
        let stride = table.row(0).len() + 1;
        let mut s = Sprayer {
            perm: (0..links as u32).collect(),
            place: vec![0; links],
            dsts: vec![0; table.dsts() * stride],
            stride,
            left: links as u64 * rounds.max(1) as u64,
            period: links as u64 * rounds.max(1) as u64,
            rng,
        };
        s.shuffle();
        s.set_table(table);
        s
    }

    /// A new forwarding table (same links and destinations); the cursors stay where they are.
    pub fn set_table(&mut self, table: &ReachTable) {
        assert_eq!(
            table.dsts() * self.stride,
            self.dsts.len(),
            "same destinations"
        );
        for (dst, rec) in self.dsts.chunks_exact_mut(self.stride).enumerate() {
            rec[1..].copy_from_slice(table.row(dst as u32));
        }
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
    pub fn next(&mut self, dst: u32) -> Option<u32> {
        let n = self.perm.len();
        let at = dst as usize * self.stride;
        let rec = &self.dsts[at..at + self.stride];
        let (link, pos) = match rec {
            &[_, w] if w != 0 && w & (w - 1) == 0 => {
                let link = w.trailing_zeros();
                let pos = self.place[link as usize] as usize + 1;
                (link, if pos == n { 0 } else { pos })
            }
            _ => self.walk(rec[0] as usize, &rec[1..])?,
        };
        self.dsts[at] = pos as u64;
        self.left -= 1;
        if self.left == 0 {
            self.left = self.period;
            self.shuffle();
        }
        Some(link)
    }

    /// The first member of `row` in the permutation from position `pos` (a destination's
    /// cursor), and the position after it.
    fn walk(&self, mut pos: usize, row: &[u64]) -> Option<(u32, usize)> {
        let n = self.perm.len();
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
        let mut s = Sprayer::new(&t, 1_000_000, stream(1, "t", 0));
        let picks: Vec<u32> = (0..50).map(|_| s.next(0).unwrap()).collect();
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
        let mut s = Sprayer::new(&t, 3, stream(2, "t", 0));
        let mut count = vec![0u32; links];
        let total = 120_000;
        for _ in 0..total {
            count[s.next(0).unwrap() as usize] += 1;
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
        /// Any table (one word or several, destinations reached by none, one or many links),
        /// changed at any points (a link going or coming back), and any sequence of
        /// destinations: the same picks as the plain walk.
        #[test]
        fn picks_equal_the_plain_walk(
            links in 1usize..140,
            rounds in 1u32..4,
            seed in 0u64..1000,
            sets in proptest::collection::vec(proptest::collection::vec(0usize..140, 0..4), 1..6),
            dsts in proptest::collection::vec((0usize..6, proptest::option::weighted(0.05, 0usize..140)), 1..400),
        ) {
            let mut t = ReachTable::new(sets.len(), links);
            for (d, set) in sets.iter().enumerate() {
                for &l in set {
                    t.set(d as u32, (l % links) as u32, true);
                }
            }
            let mut fast = Sprayer::new(&t, rounds, stream(seed, "t", 0));
            let mut walk = Walk::new(links, sets.len(), rounds, stream(seed, "t", 0));
            for (d, flip) in dsts {
                let d = (d % sets.len()) as u32;
                if let Some(l) = flip {
                    let l = (l % links) as u32;
                    t.set(d, l, !t.contains(d, l));
                    fast.set_table(&t);
                }
                proptest::prop_assert_eq!(fast.next(d), walk.next(d, &t));
            }
        }
    }

    #[test]
    fn no_link_reaches_gives_none() {
        let t = table(4, &[]);
        let mut s = Sprayer::new(&t, 2, stream(3, "t", 0));
        assert_eq!(s.next(0), None);
    }
}
