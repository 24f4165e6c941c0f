//! The validated graph: nodes, ports and links in compressed sparse rows, plus the routing tables
//! computed once when the graph is finished.
//!
//! A node's ports are the contiguous range `port_start[n]..port_start[n + 1]` of one flat `links`
//! array, so `link(n, p)` is two loads and no hashing: what a simulator's inner loop needs.

use crate::routing::{self, Routes};
use shoal_base::{Dur, Rate};
use std::fmt;

/// A node index: hosts are `0..hosts()`, switches follow (`hosts()..nodes()`).
pub type NodeIdx = u32;

/// A port index, local to its node: `0..ports(n)`.
pub type PortIdx = u32;

/// One end of a bidirectional link, seen from the port that owns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The node at the other end.
    pub peer: NodeIdx,
    /// The peer's port that links back to this one.
    pub peer_port: PortIdx,
    /// The rate of the link, the same in both directions.
    pub rate: Rate,
    /// The propagation delay of the link, the same in both directions.
    pub delay: Dur,
}

/// Which builder produced a topology, with the parameters a simulator may want to branch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
    },
    FatTree {
        k: u32,
        oversubscription: u32,
    },
    Torus {
        x: u32,
        y: u32,
        z: u32,
    },
    /// Fabric Adapters (the hosts) over one or two tiers of Fabric Elements
    /// ([`crate::CellClos`]).
    CellClos {
        fas: u32,
        fas_per_pod: u32,
        fe1_per_pod: u32,
        parallel: u32,
        fe2: u32,
    },
    /// Hosts joined by an explicit list of links ([`crate::Direct`]).
    Direct {
        hosts: u32,
        ports_per_host: u32,
    },
    /// TiNs in pods ([`crate::Dragonfly`]); the TiNs are the hosts.
    Dragonfly {
        pods: u32,
        tins_per_pod: u32,
    },
}

/// Why a builder refused its parameters (or, for an internal wiring bug, why a graph failed
/// validation). The text names the parameter and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologyError(pub String);

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid topology: {}", self.0)
    }
}

impl std::error::Error for TopologyError {}

/// Distances are stored as `u16`, so no path may be longer than this; bounding the node count
/// bounds every path.
const MAX_NODES: u128 = u16::MAX as u128;

/// The routing tables hold at most one row per (node, destination host); this caps them at 128 MiB
/// for the next-hop index plus 64 MiB of distances, well above the ~4,096-host networks we
/// simulate.
const MAX_TABLE_ENTRIES: u128 = 1 << 25;

/// Refuses a network whose routing tables would not fit the limits above. Builders call it with
/// counts computed in `u128`, before allocating anything, so absurd parameters cannot exhaust
/// memory or overflow an index.
pub(crate) fn check_size(what: &str, hosts: u128, switches: u128) -> Result<(), TopologyError> {
    let nodes = hosts + switches;
    if hosts < 2 {
        return Err(TopologyError(format!(
            "{what} has {hosts} host(s): a network needs at least two"
        )));
    }
    if nodes > MAX_NODES {
        return Err(TopologyError(format!(
            "{what} has {nodes} nodes, more than the {MAX_NODES} the routing tables address"
        )));
    }
    if hosts * nodes > MAX_TABLE_ENTRIES {
        return Err(TopologyError(format!(
            "{what} needs {} routing entries ({hosts} hosts x {nodes} nodes), more than the \
             limit of {MAX_TABLE_ENTRIES}",
            hosts * nodes
        )));
    }
    Ok(())
}

/// Refuses a zero rate, which would make every serialization time infinite.
pub(crate) fn check_rate(name: &str, rate: Rate) -> Result<(), TopologyError> {
    if rate.0 == 0 {
        return Err(TopologyError(format!("{name} must be positive, got 0 b/s")));
    }
    Ok(())
}

/// Formats an oversubscription ratio as `3:1`, or `1.50:1` when it is not whole.
pub(crate) fn ratio(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}:1")
    } else {
        format!("{x:.2}:1")
    }
}

/// A graph under construction. Builders declare every node's port count up front, then connect
/// ports pairwise; `finish` checks that no port was left open and computes the routing tables.
pub(crate) struct Wiring {
    hosts: usize,
    port_start: Vec<u32>,
    links: Vec<Option<Link>>,
}

impl Wiring {
    /// A graph with `port_counts[n]` ports on node `n`, the first `hosts` nodes being hosts.
    /// Callers have passed [`check_size`], so the totals fit `u32`.
    pub(crate) fn new(hosts: usize, port_counts: impl IntoIterator<Item = u32>) -> Wiring {
        let mut port_start = vec![0u32];
        let mut total = 0u32;
        for count in port_counts {
            total += count;
            port_start.push(total);
        }
        Wiring {
            hosts,
            port_start,
            links: vec![None; total as usize],
        }
    }

    /// Connects port `pa` of `a` with port `pb` of `b`, both directions at once, so every link is
    /// symmetric by construction.
    pub(crate) fn connect(
        &mut self,
        (a, pa): (NodeIdx, PortIdx),
        (b, pb): (NodeIdx, PortIdx),
        rate: Rate,
        delay: Dur,
    ) -> Result<(), TopologyError> {
        let ia = self.slot(a, pa)?;
        let ib = self.slot(b, pb)?;
        if ia == ib {
            return Err(TopologyError(format!(
                "wiring bug: port {pa} of node {a} linked to itself"
            )));
        }
        for (i, n, p) in [(ia, a, pa), (ib, b, pb)] {
            if self.links[i].is_some() {
                return Err(TopologyError(format!(
                    "wiring bug: port {p} of node {n} connected twice"
                )));
            }
        }
        self.links[ia] = Some(Link {
            peer: b,
            peer_port: pb,
            rate,
            delay,
        });
        self.links[ib] = Some(Link {
            peer: a,
            peer_port: pa,
            rate,
            delay,
        });
        Ok(())
    }

    fn slot(&self, n: NodeIdx, p: PortIdx) -> Result<usize, TopologyError> {
        let n = n as usize;
        if n + 1 >= self.port_start.len() || p >= self.port_start[n + 1] - self.port_start[n] {
            return Err(TopologyError(format!(
                "wiring bug: node {n} has no port {p}"
            )));
        }
        Ok((self.port_start[n] + p) as usize)
    }

    /// Checks that every port is connected, then computes the routing tables.
    pub(crate) fn finish(
        self,
        name: String,
        kind: Kind,
        description: String,
    ) -> Result<Topology, TopologyError> {
        let mut links = Vec::with_capacity(self.links.len());
        for (i, link) in self.links.iter().enumerate() {
            match link {
                Some(link) => links.push(*link),
                None => {
                    let n = self.port_start.partition_point(|&s| s as usize <= i) - 1;
                    let p = i - self.port_start[n] as usize;
                    return Err(TopologyError(format!(
                        "wiring bug: port {p} of node {n} is not connected"
                    )));
                }
            }
        }
        let routes = Routes::compute(self.hosts, &self.port_start, &links)?;
        Ok(Topology {
            name,
            kind,
            description,
            hosts: self.hosts,
            port_start: self.port_start,
            links,
            routes,
        })
    }
}

/// A validated, immutable network: every port connected, every link symmetric, every node able
/// to reach every host, with shortest-path routing tables for all (node, host) pairs.
///
/// Queries with an index out of range panic: they are caller bugs, unlike bad builder parameters,
/// which come back as [`TopologyError`].
#[derive(Clone)]
pub struct Topology {
    name: String,
    pub(crate) kind: Kind,
    description: String,
    hosts: usize,
    port_start: Vec<u32>,
    links: Vec<Link>,
    routes: Routes,
}

impl Topology {
    /// A short name, e.g. `fat-tree k=12`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The builder and its shape parameters.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn hosts(&self) -> usize {
        self.hosts
    }

    /// Hosts plus switches.
    pub fn nodes(&self) -> usize {
        self.port_start.len() - 1
    }

    pub fn switches(&self) -> usize {
        self.nodes() - self.hosts
    }

    /// The number of bidirectional links (each counted once, not once per end).
    pub fn link_count(&self) -> usize {
        self.links.len() / 2
    }

    #[inline]
    pub fn is_host(&self, n: NodeIdx) -> bool {
        (n as usize) < self.hosts
    }

    #[inline]
    pub fn ports(&self, n: NodeIdx) -> usize {
        let n = n as usize;
        (self.port_start[n + 1] - self.port_start[n]) as usize
    }

    /// The link on port `p` of node `n`. Every port is connected, and the peer's `peer_port`
    /// links back to `(n, p)`.
    #[inline]
    pub fn link(&self, n: NodeIdx, p: PortIdx) -> Link {
        assert!((p as usize) < self.ports(n), "node {n} has no port {p}");
        self.links[(self.port_start[n as usize] + p) as usize]
    }

    /// The links of node `n`, in port order.
    #[inline]
    pub fn links(&self, n: NodeIdx) -> &[Link] {
        let n = n as usize;
        &self.links[self.port_start[n] as usize..self.port_start[n + 1] as usize]
    }

    /// Ports of `n` that lie on a shortest path to host `dst` (the ECMP set), sorted ascending.
    /// Never empty for `n != dst`; empty for `n == dst`. Defined for every node, including hosts:
    /// a host with one port gets `[0]`, a torus host all its minimal ports.
    // Always inlined: the packet engine asks once per packet-hop, and as a call (LTO left it
    // one) it cost about 33 instructions a hop on the htsim DCTCP example.
    #[inline(always)]
    pub fn next_hops(&self, n: NodeIdx, dst: NodeIdx) -> &[PortIdx] {
        self.check(n, dst);
        if n == dst {
            &[]
        } else if self.routes.is_stub(n) {
            &[0]
        } else {
            self.routes.next_hops(n, dst)
        }
    }

    /// Hop count (links) of a shortest path from node `n` to host `dst`.
    #[inline]
    pub fn distance(&self, n: NodeIdx, dst: NodeIdx) -> u32 {
        self.check(n, dst);
        if n == dst {
            0
        } else if self.routes.is_stub(n) {
            // A stub host's only way out is port 0, to a switch, which has rows.
            1 + self.routes.distance(self.links(n)[0].peer, dst)
        } else {
            self.routes.distance(n, dst)
        }
    }

    /// The number of distinct shortest paths from node `a` to host `b`, counting parallel links
    /// separately. Saturates at `u64::MAX`. Allocates: it is for tests and reports, not hot loops.
    pub fn shortest_paths(&self, a: NodeIdx, b: NodeIdx) -> u64 {
        routing::count_paths(self, a, b)
    }

    /// One line: kind, hosts, switches, rates, delay and oversubscription.
    pub fn describe(&self) -> String {
        self.description.clone()
    }

    /// Bytes held by the routing tables (set numbers, interned ECMP sets and distances).
    /// Hosts with a single port to a switch need no rows, so a switched network pays for its
    /// switches only: `switches x hosts x 3` bytes (a one-byte set number and a two-byte
    /// distance) plus a small pool, or 4 or 6 bytes when there are more than 256 or 65,536
    /// distinct sets.
    pub fn routing_bytes(&self) -> usize {
        self.routes.bytes()
    }

    /// Checks a query's indices. The destination check matters most: a destination past `hosts`
    /// would silently read another node's table row.
    #[inline(always)]
    fn check(&self, n: NodeIdx, dst: NodeIdx) {
        assert!(self.is_host(dst), "destination {dst} is not a host");
        assert!((n as usize) < self.nodes(), "node {n} out of range");
    }
}

impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topology")
            .field("name", &self.name)
            .field("hosts", &self.hosts)
            .field("nodes", &self.nodes())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Rate = Rate::gbps(10);
    const D: Dur = Dur::from_ns(100);

    fn kind() -> Kind {
        Kind::Torus { x: 2, y: 1, z: 1 }
    }

    #[test]
    fn an_open_port_is_refused() {
        let mut w = Wiring::new(2, [1, 2]);
        w.connect((0, 0), (1, 0), R, D).unwrap();
        let err = w.finish("t".into(), kind(), String::new()).unwrap_err();
        assert!(err.0.contains("port 1 of node 1 is not connected"), "{err}");
    }

    #[test]
    fn double_and_self_connections_are_refused() {
        let mut w = Wiring::new(2, [1, 2]);
        w.connect((0, 0), (1, 0), R, D).unwrap();
        assert!(
            w.connect((1, 1), (0, 0), R, D)
                .unwrap_err()
                .0
                .contains("twice")
        );
        assert!(
            w.connect((1, 1), (1, 1), R, D)
                .unwrap_err()
                .0
                .contains("itself")
        );
        assert!(
            w.connect((1, 2), (0, 0), R, D)
                .unwrap_err()
                .0
                .contains("no port 2")
        );
    }

    #[test]
    fn a_disconnected_graph_is_refused() {
        // Hosts 0-1 are linked, hosts 2-3 are linked, nothing joins the pairs.
        let mut w = Wiring::new(4, [1, 1, 1, 1]);
        w.connect((0, 0), (1, 0), R, D).unwrap();
        w.connect((2, 0), (3, 0), R, D).unwrap();
        let err = w.finish("t".into(), kind(), String::new()).unwrap_err();
        assert!(err.0.contains("disconnected"), "{err}");
    }

    #[test]
    fn size_limits_name_the_numbers() {
        assert!(
            check_size("x", 1, 0)
                .unwrap_err()
                .0
                .contains("at least two")
        );
        assert!(
            check_size("x", 70_000, 0)
                .unwrap_err()
                .0
                .contains("70000 nodes")
        );
        assert!(
            check_size("x", 8_000, 8_000)
                .unwrap_err()
                .0
                .contains("routing entries")
        );
        assert!(check_size("x", 4_096, 1_000).is_ok());
    }

    #[test]
    fn ratios_print_whole_numbers_without_decimals() {
        assert_eq!(ratio(1.0), "1:1");
        assert_eq!(ratio(3.0), "3:1");
        assert_eq!(ratio(1.5), "1.50:1");
    }
}
