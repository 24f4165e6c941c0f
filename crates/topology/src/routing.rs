//! Shortest-path routing tables, computed by one breadth-first search per destination host.
//!
//! Rows exist only for nodes that forward. When every host has a single port to a switch
//! (leaf-spine, fat-tree), a host's answer is always "port 0, one hop more than its switch", so
//! its rows would be pure repetition, and three quarters of a k=16 fat-tree's nodes are hosts.
//! Such hosts are "stubs" and the rows start at the first switch; on a torus every node has rows.
//!
//! Row `(n - first) * hosts + dst` holds the hop distance and the number of the row's ECMP set.
//! Sets are interned: an edge switch sends every remote destination to the same "all up ports"
//! set, so storing each distinct set once keeps the pool tiny, and a row costs a `u16` distance
//! plus a set number as narrow as the count of distinct sets allows (one byte in a fat-tree),
//! whatever the size of its set. The set numbers are what a packet reads at every hop, at rows
//! spread over the table: on the htsim DCTCP example (k = 12) they were 311 KB as `u32`s, an
//! eighth of the simulated L2 misses per packet-hop, and are 78 KB as bytes (BENCHMARKS.md).

use crate::graph::{Link, NodeIdx, PortIdx, Topology, TopologyError};
use std::collections::BTreeMap;

/// The number of the empty set, used for `n == dst`; it starts `pool`.
const EMPTY: u32 = 0;

/// Each row's set number, in the narrowest width that holds every number of the table.
#[derive(Clone)]
enum SetNumbers {
    Byte(Vec<u8>),
    Half(Vec<u16>),
    Word(Vec<u32>),
}

impl SetNumbers {
    /// `rows` rows of the empty set, one byte each.
    fn new(rows: usize) -> SetNumbers {
        SetNumbers::Byte(vec![EMPTY as u8; rows])
    }

    /// Sets row `row` to set `number`, first widening every row if `number` needs it (written
    /// narrow from the start, so that building the table never holds a `u32` per row).
    fn put(&mut self, row: usize, number: u32) {
        match self {
            SetNumbers::Byte(v) if number <= u8::MAX as u32 => v[row] = number as u8,
            SetNumbers::Half(v) if number <= u16::MAX as u32 => v[row] = number as u16,
            SetNumbers::Word(v) => v[row] = number,
            SetNumbers::Byte(v) => {
                *self = SetNumbers::Half(v.iter().map(|&n| u16::from(n)).collect());
                self.put(row, number);
            }
            SetNumbers::Half(v) => {
                *self = SetNumbers::Word(v.iter().map(|&n| u32::from(n)).collect());
                self.put(row, number);
            }
        }
    }

    #[inline(always)]
    fn get(&self, row: usize) -> usize {
        match self {
            SetNumbers::Byte(v) => v[row] as usize,
            SetNumbers::Half(v) => v[row] as usize,
            SetNumbers::Word(v) => v[row] as usize,
        }
    }

    fn bytes(&self) -> usize {
        match self {
            SetNumbers::Byte(v) => v.len(),
            SetNumbers::Half(v) => v.len() * size_of::<u16>(),
            SetNumbers::Word(v) => v.len() * size_of::<u32>(),
        }
    }
}

#[derive(Clone)]
pub(crate) struct Routes {
    /// Nodes below `first` are stub hosts with no rows: 0 or the host count.
    first: usize,
    hosts: usize,
    /// Hop distance of each row.
    dist: Vec<u16>,
    /// Each row's ECMP set, by number.
    set: SetNumbers,
    /// Start in `pool` of each set, by number.
    starts: Vec<u32>,
    /// Interned sets, each stored as its length followed by its ports in ascending order, so the
    /// length and the ports share a cache line.
    pool: Vec<PortIdx>,
}

impl Routes {
    /// Runs a BFS from every host over the whole graph and records, for every node, the ports
    /// whose peer is one hop closer. In the switched topologies hosts have a single port, so a
    /// host can never be a transit node and the plain graph distance is the routed distance.
    pub(crate) fn compute(
        hosts: usize,
        port_start: &[u32],
        links: &[Link],
    ) -> Result<Routes, TopologyError> {
        let nodes = port_start.len() - 1;
        let stubs = (0..hosts).all(|h| {
            let ports = &links[port_start[h] as usize..port_start[h + 1] as usize];
            ports.len() == 1 && ports[0].peer as usize >= hosts
        });
        let first = if stubs { hosts } else { 0 };
        let rows = (nodes - first) * hosts;
        let mut routes = Routes {
            first,
            hosts,
            dist: vec![0; rows],
            set: SetNumbers::new(rows),
            starts: vec![0],
            pool: vec![0],
        };
        let mut interned: BTreeMap<Vec<PortIdx>, u32> = BTreeMap::new();
        interned.insert(Vec::new(), EMPTY);
        // The last set each node used: consecutive destinations usually share it (all remote
        // hosts leave an edge switch by its up ports), which skips the map lookup.
        let mut last = vec![EMPTY; nodes];
        let mut dist = vec![u32::MAX; nodes];
        let mut queue: Vec<NodeIdx> = Vec::with_capacity(nodes);
        let mut scratch: Vec<PortIdx> = Vec::new();

        for dst in 0..hosts {
            dist.fill(u32::MAX);
            dist[dst] = 0;
            queue.clear();
            queue.push(dst as NodeIdx);
            let mut head = 0;
            while head < queue.len() {
                let n = queue[head] as usize;
                head += 1;
                for link in &links[port_start[n] as usize..port_start[n + 1] as usize] {
                    let peer = link.peer as usize;
                    if dist[peer] == u32::MAX {
                        dist[peer] = dist[n] + 1;
                        queue.push(link.peer);
                    }
                }
            }
            if queue.len() < nodes {
                let lost = dist.iter().position(|&d| d == u32::MAX).unwrap_or(0);
                return Err(TopologyError(format!(
                    "the graph is disconnected: node {lost} cannot reach host {dst}"
                )));
            }

            for n in first..nodes {
                let row = (n - first) * hosts + dst;
                // Nodes are bounded by u16::MAX (graph::check_size), so every distance fits.
                routes.dist[row] = dist[n] as u16;
                if n == dst {
                    continue;
                }
                scratch.clear();
                let ports = &links[port_start[n] as usize..port_start[n + 1] as usize];
                for (p, link) in ports.iter().enumerate() {
                    if dist[link.peer as usize] + 1 == dist[n] {
                        scratch.push(p as PortIdx);
                    }
                }
                if routes.set_at(routes.starts[last[n] as usize]) != scratch.as_slice() {
                    last[n] = match interned.get(scratch.as_slice()) {
                        Some(&number) => number,
                        None => {
                            let number = routes.starts.len() as u32;
                            routes.starts.push(routes.pool.len() as u32);
                            routes.pool.push(scratch.len() as PortIdx);
                            routes.pool.extend_from_slice(&scratch);
                            interned.insert(scratch.clone(), number);
                            number
                        }
                    };
                }
                routes.set.put(row, last[n]);
            }
        }
        Ok(routes)
    }

    #[inline(always)]
    fn set_at(&self, start: u32) -> &[PortIdx] {
        let start = start as usize;
        let len = self.pool[start] as usize;
        &self.pool[start + 1..start + 1 + len]
    }

    /// Whether `n` is a host with one port to a switch and no rows of its own.
    #[inline(always)]
    pub(crate) fn is_stub(&self, n: NodeIdx) -> bool {
        (n as usize) < self.first
    }

    /// The row of a node that is not a stub.
    #[inline(always)]
    fn row(&self, n: NodeIdx, dst: NodeIdx) -> usize {
        (n as usize - self.first) * self.hosts + dst as usize
    }

    /// The ECMP set of a node that is not a stub.
    #[inline(always)]
    pub(crate) fn next_hops(&self, n: NodeIdx, dst: NodeIdx) -> &[PortIdx] {
        self.set_at(self.starts[self.set.get(self.row(n, dst))])
    }

    /// The distance from a node that is not a stub.
    #[inline]
    pub(crate) fn distance(&self, n: NodeIdx, dst: NodeIdx) -> u32 {
        u32::from(self.dist[self.row(n, dst)])
    }

    pub(crate) fn bytes(&self) -> usize {
        self.dist.len() * size_of::<u16>()
            + self.set.bytes()
            + self.starts.len() * size_of::<u32>()
            + self.pool.len() * size_of::<PortIdx>()
    }
}

/// Counts shortest paths from `a` to host `b` by walking the next-hop sets layer by layer: a
/// node's count is the sum of the counts of the nodes one hop farther that forward to it.
pub(crate) fn count_paths(topo: &Topology, a: NodeIdx, b: NodeIdx) -> u64 {
    let hops = topo.distance(a, b);
    let mut count = vec![0u64; topo.nodes()];
    count[a as usize] = 1;
    let mut layer = vec![a];
    let mut next = Vec::new();
    for _ in 0..hops {
        next.clear();
        for &n in &layer {
            for &p in topo.next_hops(n, b) {
                let m = topo.link(n, p).peer;
                // Every node of the next layer is one hop closer to `b` than every node of this
                // layer, so a zero count means "first reached now", never "revisited".
                if count[m as usize] == 0 {
                    next.push(m);
                }
                count[m as usize] = count[m as usize].saturating_add(count[n as usize]);
            }
        }
        std::mem::swap(&mut layer, &mut next);
    }
    count[b as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every width reads back the numbers it was given, those written before a widening
    /// included, and the width follows the largest number (a topology with more than 65,536
    /// distinct sets is too large to build in a test).
    #[test]
    fn set_numbers_take_the_narrowest_width_that_holds_them() {
        for (sets, width) in [(1, 1), (256, 1), (257, 2), (65_536, 2), (65_537, 4)] {
            let rows = 3 * sets;
            let numbers: Vec<u32> = (0..rows as u32).map(|i| i % sets as u32).collect();
            let mut table = SetNumbers::new(rows);
            for (row, &n) in numbers.iter().enumerate() {
                table.put(row, n);
            }
            assert_eq!(table.bytes(), rows * width, "{sets} sets");
            for (row, &n) in numbers.iter().enumerate() {
                assert_eq!(table.get(row), n as usize);
            }
        }
    }
}
