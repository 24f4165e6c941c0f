//! A device's forwarding table: for every destination Fabric Adapter, the set of the device's
//! own links that reach it (§5.8: "Number-of-Fabric-Adapters entries of size
//! Number-of-Links"), one bitmap per destination.

use shoal_topology::Topology;

/// Destination adapter → set of link indices, as bitmaps of `words` u64 each.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReachTable {
    links: usize,
    words: usize,
    bits: Vec<u64>,
}

impl ReachTable {
    /// A table of `dsts` destinations over `links` links, all empty (nothing reachable).
    pub fn new(dsts: usize, links: usize) -> ReachTable {
        let words = links.div_ceil(64).max(1);
        ReachTable {
            links,
            words,
            bits: vec![0; dsts * words],
        }
    }

    /// The converged table of node `n` of `topo` (whose hosts are the adapters): the links on
    /// a shortest path to each adapter. In a folded Clos these are the links whose peers
    /// advertise the destination under up/down reachability (a device goes up only when no
    /// link down reaches the destination), which is what the reachability messages converge
    /// to after any change.
    pub fn converged(topo: &Topology, n: u32) -> ReachTable {
        let fas = topo.hosts();
        let mut t = ReachTable::new(fas, topo.ports(n));
        for dst in 0..fas as u32 {
            if dst != n {
                for &p in topo.next_hops(n, dst) {
                    t.set(dst, p, true);
                }
            }
        }
        t
    }

    pub fn links(&self) -> usize {
        self.links
    }

    pub fn dsts(&self) -> usize {
        self.bits.len() / self.words
    }

    #[inline]
    pub fn contains(&self, dst: u32, link: u32) -> bool {
        let w = self.bits[dst as usize * self.words + (link as usize >> 6)];
        w >> (link & 63) & 1 == 1
    }

    pub fn set(&mut self, dst: u32, link: u32, on: bool) {
        assert!((link as usize) < self.links, "no link {link}");
        let w = &mut self.bits[dst as usize * self.words + (link as usize >> 6)];
        if on {
            *w |= 1 << (link & 63);
        } else {
            *w &= !(1 << (link & 63));
        }
    }

    /// The bitmap of the links that reach `dst` (link `l` is bit `l % 64` of word `l / 64`).
    #[inline]
    pub fn row(&self, dst: u32) -> &[u64] {
        &self.bits[dst as usize * self.words..(dst as usize + 1) * self.words]
    }

    /// How many links reach `dst`.
    pub fn count(&self, dst: u32) -> u32 {
        self.row(dst).iter().map(|w| w.count_ones()).sum()
    }

    /// The links that reach `dst`, ascending.
    pub fn members(&self, dst: u32) -> impl Iterator<Item = u32> + '_ {
        (0..self.links as u32).filter(move |&l| self.contains(dst, l))
    }
}
