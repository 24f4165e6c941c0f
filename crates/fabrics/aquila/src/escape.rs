//! Escape routes over the escape VCs, for the destinations the SDN's tables can no longer
//! reach on the routing VCs once a link is gone (§3.2: "the other two VCs can be used as
//! escape VCs in some dynamic failure-avoidance scenarios"; the paper says no more).
//!
//! # Our choice: up*/down* over the working links, one escape VC per direction
//!
//! When a removal leaves no link between two TiNs of a pod, between two pods, or at a TiN's
//! last global link, a cell may reach a TiN whose tables offer it no routing-VC hop (the
//! detour tables of [`crate::routing`] exist only at the source). Such a cell moves onto the
//! escape VCs and stays there to its destination. The escape routes are Autonet's up*/down*
//! (Schroeder et al., 1991), the textbook escape function for an arbitrary graph: TiNs are
//! ranked by their hop distance from TiN 0 over the working links, ties broken by TiN index;
//! a hop towards a lower rank goes *up*, towards a higher rank *down*, and a route never goes
//! up after going down. A cell travels its up hops on VC 30 ([`ESCAPE_UP`]) and its down
//! hops on VC 31 ([`ESCAPE_DOWN`]), so the VC it arrives on tells the table whether it may
//! still go up, and the proof is two lines:
//! - on VC 30 the rank of the TiN reached strictly falls, on VC 31 it strictly rises, and a
//!   cell goes from 30 to 31 but never back: the escape channels have no dependency cycle;
//! - a cell enters them from the routing VCs and never returns, so no cycle crosses between
//!   the two; the routing VCs' own graph is acyclic (`crate::cdg`), hence the union is.
//!
//! Every TiN has a route to every TiN while the working links connect the clique (up the
//! breadth-first tree to TiN 0, then down it); [`crate::routing::Router::remove_link`] refuses
//! a removal that would disconnect it. Among the legal routes the tables offer the shortest:
//! every hop on a shortest legal route is a candidate, so adaptive modes still choose by
//! queue depth. The two escape VCs are shared by the ten traffic classes (there are only two),
//! so an escaped cell gives up its class's VCs: in the simulator's output scheduler a control
//! cell loses its strict priority and a bulk cell its 1-for-8 weight (both are served as
//! low-latency data).
//!
//! The ranks change when a removal changes distances from TiN 0. A cell already on VC 31
//! whose remaining down route a later removal cut has no legal hop left; the simulator drops
//! it and counts it, rather than letting it go up again (which could close a cycle with cells
//! routed by the old ranks).

use crate::routing::{Hop, InKind, LEVELS};
use shoal_topology::{NodeIdx, PortIdx};
use std::collections::VecDeque;

/// The level of a hop on VC 30: up (towards TiN 0's rank), no down hop taken yet.
pub const ESCAPE_UP: u8 = LEVELS;
/// The level of a hop on VC 31: down; from here on only down hops.
pub const ESCAPE_DOWN: u8 = LEVELS + 1;

const UNREACHED: u16 = u16::MAX;

/// The escape tables of one set of working links.
pub struct Escape {
    tins: u32,
    /// `rank[x]`: `x`'s position in the order (distance from TiN 0, then index).
    rank: Vec<u32>,
    /// `dist[(d · tins + x) · 2 + phase]`: hops of the shortest legal route from `x` to `d`
    /// for a cell that may still go up (phase 0) or may only go down (phase 1).
    dist: Vec<u16>,
    longest: u16,
}

impl Escape {
    /// The escape tables over the links of `far` (`far[x][p]`: the far end of port `p` of `x`)
    /// that `removed` leaves; `Err(t)` when TiN `t` cannot be reached from TiN 0.
    pub fn new(
        far: &[Vec<(NodeIdx, PortIdx, InKind)>],
        removed: &[Vec<bool>],
    ) -> Result<Escape, NodeIdx> {
        let tins = far.len();
        let working = |x: usize| {
            far[x]
                .iter()
                .zip(&removed[x])
                .filter(|&(_, &gone)| !gone)
                .map(|(&(y, _, _), _)| y as usize)
        };
        // Distances from TiN 0 over the working links, breadth first.
        let mut depth = vec![u32::MAX; tins];
        let mut queue = VecDeque::from([0usize]);
        depth[0] = 0;
        while let Some(x) = queue.pop_front() {
            for y in working(x) {
                if depth[y] == u32::MAX {
                    depth[y] = depth[x] + 1;
                    queue.push_back(y);
                }
            }
        }
        if let Some(t) = depth.iter().position(|&d| d == u32::MAX) {
            return Err(t as NodeIdx);
        }
        let mut order: Vec<usize> = (0..tins).collect();
        order.sort_unstable_by_key(|&x| (depth[x], x));
        let mut rank = vec![0u32; tins];
        for (r, &x) in order.iter().enumerate() {
            rank[x] = r as u32;
        }
        // Per destination, breadth first backwards over (TiN, phase): a hop x → y is up when
        // rank[y] < rank[x] and keeps phase 0; a down hop leads to phase 1 from either phase.
        let mut dist = vec![UNREACHED; tins * tins * 2];
        let mut longest = 0;
        let mut queue = VecDeque::new();
        for d in 0..tins {
            let row = &mut dist[d * tins * 2..(d + 1) * tins * 2];
            row[d * 2] = 0;
            row[d * 2 + 1] = 0;
            queue.push_back((d, 0usize));
            queue.push_back((d, 1usize));
            while let Some((y, phase)) = queue.pop_front() {
                let next = row[y * 2 + phase] + 1;
                for x in working(y) {
                    let up = rank[y] < rank[x];
                    // Phase 0 at y is reached by an up hop from phase 0; phase 1 by a down hop.
                    let from: &[usize] = match (phase, up) {
                        (0, true) => &[0],
                        (1, false) => &[0, 1],
                        _ => &[],
                    };
                    for &p in from {
                        let cell = &mut row[x * 2 + p];
                        if *cell == UNREACHED {
                            *cell = next;
                            longest = longest.max(next);
                            queue.push_back((x, p));
                        }
                    }
                }
            }
        }
        Ok(Escape {
            tins: tins as u32,
            rank,
            dist,
            longest,
        })
    }

    fn dist(&self, x: NodeIdx, phase: usize, d: NodeIdx) -> u16 {
        self.dist[(d as usize * self.tins as usize + x as usize) * 2 + phase]
    }

    /// The hops of every shortest legal route from `x` towards `d` for a cell at `level` (an
    /// escape level, or a routing level when the cell enters the escape VCs here), over the
    /// ports of `x` that `far_x` lists and `removed_x` keeps. None when it has no legal route.
    pub fn hops(
        &self,
        x: NodeIdx,
        level: u8,
        d: NodeIdx,
        far_x: &[(NodeIdx, PortIdx, InKind)],
        removed_x: &[bool],
        out: &mut Vec<Hop>,
    ) {
        let phase = usize::from(level == ESCAPE_DOWN);
        let here = self.dist(x, phase, d);
        if here == UNREACHED || here == 0 {
            return;
        }
        for (p, (&(y, _, _), &gone)) in far_x.iter().zip(removed_x).enumerate() {
            if gone {
                continue;
            }
            let up = self.rank[y as usize] < self.rank[x as usize];
            if up && phase == 1 {
                continue;
            }
            if self.dist(y, usize::from(!up), d) == here - 1 {
                out.push(Hop {
                    port: Some(p as PortIdx),
                    level: if up { ESCAPE_UP } else { ESCAPE_DOWN },
                });
            }
        }
    }

    /// Hops of the longest shortest legal route between two TiNs.
    pub fn longest(&self) -> u16 {
        self.longest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::{Dur, Rate};
    use shoal_topology::Dragonfly;

    /// 5 pods of 4 TiNs, one link between any two TiNs of a pod and between any two pods.
    fn far() -> Vec<Vec<(NodeIdx, PortIdx, InKind)>> {
        let df = Dragonfly {
            pods: 5,
            tins_per_pod: 4,
            local_links: 1,
            global_links: 1,
            local_ports: 3,
            global_ports: 1,
            ..Dragonfly::aquila(
                Rate::gbps(27),
                Rate::gbps(25),
                Dur::from_ns(20),
                Dur::from_ns(550),
            )
        };
        let topo = df.build().unwrap();
        (0..df.tins())
            .map(|x| {
                topo.links(x)
                    .iter()
                    .map(|l| (l.peer, l.peer_port, InKind::Local))
                    .collect()
            })
            .collect()
    }

    /// Hop distances over the working links, breadth first from `d`: the plain graph's.
    fn plain(far: &[Vec<(NodeIdx, PortIdx, InKind)>], removed: &[Vec<bool>], d: usize) -> Vec<u16> {
        let mut dist = vec![UNREACHED; far.len()];
        dist[d] = 0;
        let mut queue = VecDeque::from([d]);
        while let Some(y) = queue.pop_front() {
            for (&(x, _, _), _) in far[y].iter().zip(&removed[y]).filter(|&(_, &g)| !g) {
                if dist[x as usize] == UNREACHED {
                    dist[x as usize] = dist[y] + 1;
                    queue.push_back(x as usize);
                }
            }
        }
        dist
    }

    /// From every TiN to every TiN, every candidate hop taken in turn leads to the destination
    /// in exactly the table's distance, never up after down, never over a removed link, and no
    /// shorter than the plain graph allows.
    #[test]
    fn every_escape_route_is_up_then_down_and_arrives() {
        let far = far();
        let mut removed: Vec<Vec<bool>> = far.iter().map(|f| vec![false; f.len()]).collect();
        // Cut TiN 0's link to TiN 1 and TiN 5's global link.
        for (x, p) in [(0usize, 0usize), (5, 3)] {
            let (y, py, _) = far[x][p];
            removed[x][p] = true;
            removed[y as usize][py as usize] = true;
        }
        let e = Escape::new(&far, &removed).unwrap();
        let mut hops = Vec::new();
        for d in 0..far.len() as NodeIdx {
            let plain = plain(&far, &removed, d as usize);
            for s in (0..far.len() as NodeIdx).filter(|&s| s != d) {
                let want = e.dist(s, 0, d);
                assert!(
                    want >= plain[s as usize] && want <= e.longest(),
                    "{s} -> {d}"
                );
                for first in 0.. {
                    let (mut x, mut level, mut taken) = (s, 0u8, 0u16);
                    let mut went_down = false;
                    while x != d {
                        hops.clear();
                        e.hops(
                            x,
                            level,
                            d,
                            &far[x as usize],
                            &removed[x as usize],
                            &mut hops,
                        );
                        assert!(!hops.is_empty(), "{s} -> {d}: stuck at {x}");
                        let h = hops[if taken == 0 { first % hops.len() } else { 0 }];
                        let p = h.port.unwrap() as usize;
                        assert!(!removed[x as usize][p]);
                        let y = far[x as usize][p].0;
                        let up = e.rank[y as usize] < e.rank[x as usize];
                        assert_eq!(h.level, if up { ESCAPE_UP } else { ESCAPE_DOWN });
                        assert!(!(up && went_down), "{s} -> {d}: up after down at {x}");
                        went_down |= !up;
                        (x, level, taken) = (y, h.level, taken + 1);
                    }
                    assert_eq!(taken, want, "{s} -> {d}");
                    hops.clear();
                    e.hops(s, 0, d, &far[s as usize], &removed[s as usize], &mut hops);
                    if first + 1 >= hops.len() {
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn a_tin_cut_off_is_named() {
        let far = far();
        let mut removed: Vec<Vec<bool>> = far.iter().map(|f| vec![false; f.len()]).collect();
        for p in 0..far[7].len() {
            let (y, py, _) = far[7][p];
            removed[7][p] = true;
            removed[y as usize][py as usize] = true;
        }
        assert_eq!(Escape::new(&far, &removed).err(), Some(7));
    }
}
