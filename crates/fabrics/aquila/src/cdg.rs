//! The channel dependency graph (Dally and Seitz) of a routing mode: one vertex per (TiN,
//! network port, level), an edge from the channel a cell holds to every channel the routing
//! function may ask for next. Routing with finite FIFOs and link-level credits is free of
//! deadlock when this graph has no cycle (endpoints always drain their ejection channels).
//!
//! Classes are left out: a cell never changes class and every class routes alike on its own
//! VCs, so each class's graph is a copy of this one with no edge between copies, except that
//! all copies lead into the same two escape VCs (levels 3 and 4 here), which lead nowhere
//! else. A cycle through them would have to stay on them, and they are in the graph: so this
//! one graph is acyclic exactly when the whole one is.

use crate::routing::{Candidates, ESCAPE_VCS, Hop, InKind, LEVELS, Mode, Router, route_hash};
use shoal_topology::{DragonflyPort, NodeIdx, PortIdx};

/// A channel: a network port of a TiN at one level (VC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Channel {
    pub tin: NodeIdx,
    pub port: PortIdx,
    pub level: u8,
}

/// The dependency graph of one routing mode.
pub struct Cdg {
    /// First channel index of each TiN's ports.
    base: Vec<u32>,
    /// Successors of each channel, sorted, no duplicates.
    edges: Vec<Vec<u32>>,
    /// (TiN, destination) pairs where a cell the routes lead there finds no candidate.
    dead_ends: Vec<(NodeIdx, NodeIdx)>,
    /// Channels some route takes.
    used: Vec<bool>,
}

/// VCs a channel of the graph may be on: the levels, then the escape VCs.
const CHANNEL_VCS: u8 = LEVELS + ESCAPE_VCS;

impl Cdg {
    /// Every dependency that `mode` can create from any source to any destination.
    pub fn build(router: &Router, mode: Mode) -> Cdg {
        let tins = router.dragonfly().tins();
        let mut base = vec![0u32];
        for x in 0..tins {
            let last = *base.last().expect("nonempty");
            base.push(last + router.ports(x) as u32 * u32::from(CHANNEL_VCS));
        }
        let channels = *base.last().expect("nonempty") as usize;
        let mut cdg = Cdg {
            base,
            edges: vec![Vec::new(); channels],
            dead_ends: Vec::new(),
            used: vec![false; channels],
        };
        let mut c = Candidates::default();
        let mut seen = vec![u32::MAX; channels];
        for d in 0..tins {
            if matches!(mode, Mode::Deterministic | Mode::MinimalDeterministic) {
                // One path per (source, destination): walk each.
                for s in (0..tins).filter(|&s| s != d) {
                    let (mut x, mut from, mut level, mut held) = (s, InKind::Endpoint, 0, None);
                    loop {
                        router.candidates(x, from, level, d, mode.non_minimal(), &mut c);
                        if c.minimal.is_empty() && c.non_minimal.is_empty() {
                            cdg.dead_ends.push((x, d));
                            break;
                        }
                        let hop = deterministic(&c, mode, route_hash(s, d, x));
                        let Some(port) = hop.port else { break };
                        let ch = cdg.id(x, port, hop.level);
                        cdg.used[ch as usize] = true;
                        if let Some(h) = held {
                            cdg.edges[h as usize].push(ch);
                        }
                        (x, _, from) = router.far_end(x, port);
                        (level, held) = (hop.level, Some(ch));
                    }
                }
                continue;
            }
            // Adaptive modes may take any candidate: explore every reachable channel once.
            let mut stack: Vec<(NodeIdx, InKind, u8, Option<u32>)> = (0..tins)
                .filter(|&s| s != d)
                .map(|s| (s, InKind::Endpoint, 0, None))
                .collect();
            while let Some((x, from, level, held)) = stack.pop() {
                router.candidates(x, from, level, d, mode.non_minimal(), &mut c);
                if c.minimal.is_empty() && c.non_minimal.is_empty() {
                    cdg.dead_ends.push((x, d));
                    continue;
                }
                let hops: &[Hop] = if mode == Mode::Valiant && !c.non_minimal.is_empty() {
                    &c.non_minimal
                } else if mode == Mode::Valiant {
                    &c.minimal
                } else {
                    // Both lists: the adaptive choice can fall on any member.
                    c.minimal.extend_from_slice(&c.non_minimal);
                    &c.minimal
                };
                for &hop in hops {
                    let Some(port) = hop.port else { continue };
                    let ch = cdg.id(x, port, hop.level);
                    cdg.used[ch as usize] = true;
                    if let Some(h) = held {
                        cdg.edges[h as usize].push(ch);
                    }
                    if seen[ch as usize] != d {
                        seen[ch as usize] = d;
                        let (y, _, kind) = router.far_end(x, port);
                        stack.push((y, kind, hop.level, Some(ch)));
                    }
                }
            }
        }
        for e in &mut cdg.edges {
            e.sort_unstable();
            e.dedup();
        }
        cdg.dead_ends.sort_unstable();
        cdg.dead_ends.dedup();
        cdg
    }

    fn id(&self, x: NodeIdx, port: PortIdx, level: u8) -> u32 {
        assert!(
            level < CHANNEL_VCS,
            "TiN {x} port {port}: level {level} needs a VC beyond the escape VCs"
        );
        self.base[x as usize] + port * u32::from(CHANNEL_VCS) + u32::from(level)
    }

    /// Where a cell the routes lead somewhere finds no candidate there: (TiN, destination).
    /// Empty means every source reaches every destination, since an acyclic graph has no
    /// endless route.
    pub fn dead_ends(&self) -> &[(NodeIdx, NodeIdx)] {
        &self.dead_ends
    }

    /// Channels on the escape VCs that some route takes.
    pub fn escape_channels(&self) -> usize {
        (0..self.used.len() as u32)
            .filter(|&c| self.used[c as usize] && self.channel(c).level >= LEVELS)
            .count()
    }

    pub fn channel(&self, id: u32) -> Channel {
        let x = self.base.partition_point(|&b| b <= id) - 1;
        let off = id - self.base[x];
        Channel {
            tin: x as NodeIdx,
            port: off / u32::from(CHANNEL_VCS),
            level: (off % u32::from(CHANNEL_VCS)) as u8,
        }
    }

    /// Dependencies in the graph.
    pub fn edge_count(&self) -> usize {
        self.edges.iter().map(Vec::len).sum()
    }

    /// A cycle of channels, if there is one (iterative depth-first search).
    pub fn find_cycle(&self) -> Option<Vec<Channel>> {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let n = self.edges.len();
        let mut colour = vec![WHITE; n];
        let mut path: Vec<(u32, usize)> = Vec::new();
        for root in 0..n as u32 {
            if colour[root as usize] != WHITE {
                continue;
            }
            colour[root as usize] = GREY;
            path.push((root, 0));
            while let Some(&mut (v, ref mut next)) = path.last_mut() {
                if let Some(&w) = self.edges[v as usize].get(*next) {
                    *next += 1;
                    match colour[w as usize] {
                        WHITE => {
                            colour[w as usize] = GREY;
                            path.push((w, 0));
                        }
                        GREY => {
                            let start = path.iter().position(|&(u, _)| u == w).expect("grey");
                            return Some(
                                path[start..]
                                    .iter()
                                    .map(|&(u, _)| self.channel(u))
                                    .collect(),
                            );
                        }
                        _ => {}
                    }
                } else {
                    colour[v as usize] = BLACK;
                    path.pop();
                }
            }
        }
        None
    }
}

/// The candidate a deterministic mode takes for `hash`: one of the minimal ones, or for
/// [`Mode::Deterministic`] at the source one of all.
pub fn deterministic(c: &Candidates, mode: Mode, hash: u64) -> Hop {
    let all = c.minimal.len() + c.non_minimal.len();
    if mode == Mode::Deterministic && !c.non_minimal.is_empty() {
        let i = (hash % all as u64) as usize;
        return if i < c.minimal.len() {
            c.minimal[i]
        } else {
            c.non_minimal[i - c.minimal.len()]
        };
    }
    c.minimal[(hash % c.minimal.len() as u64) as usize]
}

/// A cycle as text: each channel as "pod.TiN port (kind) Lvl".
pub fn describe(router: &Router, cycle: &[Channel]) -> String {
    let df = router.dragonfly();
    cycle
        .iter()
        .map(|c| {
            let kind = match df.port_kind(c.tin, c.port) {
                DragonflyPort::Local { tin, .. } => format!("local to TiN {tin}"),
                DragonflyPort::Global { pod } => format!("global to pod {pod}"),
            };
            let vc = if c.level < LEVELS {
                format!("L{}", c.level)
            } else {
                format!("escape VC {}", crate::routing::vc(0, c.level))
            };
            format!(
                "pod {} TiN {} port {} ({kind}) {vc}",
                df.pod_of(c.tin),
                df.tin_in_pod(c.tin),
                c.port,
            )
        })
        .collect::<Vec<_>>()
        .join(" -> ")
}
