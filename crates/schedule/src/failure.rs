//! What a failed component costs: the fraction of slots that go unused (§3.5, Table 1).
//!
//! Every ordered pair `i -> j` is one transmission per epoch, on one (slot, channel). It gives `i`
//! a send opportunity and `j` a receive opportunity. A transmission is lost when its sender or
//! receiver failed or its [`Path`] crosses a failed component; both of its opportunities are then
//! lost. The cost is the lost share of the opportunities of the surviving nodes, where a node
//! survives unless it failed or was cut off (every one of its sends and receives lost: the rest of
//! the rack then infers it failed, §3.5, so it is no longer a node whose slots are "wasted").
//!
//! With that metric and one plane, for a rack where `h` divides `N` and the cyclic routing applies:
//! - a node costs `1/(N-1)`, and so does its node link (the node is cut off);
//! - a leaf costs `h/(N-1)` (its `h` nodes are cut off; each survivor loses `h` of `N-1` peers);
//! - a leaf-spine link costs `(2(N-1) - x) / (N(N-1))`: one cell up and one down per slot, minus
//!   the `x` intra-leaf cells that cross it both ways (`x` depends on the routing and averages
//!   `h-1` over a leaf's links); about `2/N`;
//! - a spine costs exactly `1/S`: each slot, `N/S` of the `N` cells cross it.
//!
//! Table 1 of the paper gives `1/N, 1/N, 1/√(2N), 2/N, 2√2/√N` for `N = k²/2` (so `h = S = k/2`).
//! The first four agree with the above to first order. The spine does not: `1/S = 2/k = √2/√N`,
//! half the table's value. The table's spine entry is what the symmetric detection of §3.5 gives
//! ([`Accounting::Symmetric`]: once `i` misses `j`'s cell it stops sending to `j`, so a pair lost
//! in one direction is lost in both): with the slot-rotated routing of `clos.rs`, `i -> j` and
//! `j -> i` cross a given spine nearly independently, so about `1 - (1 - 1/S)² ≈ 2/S`. Under that
//! accounting, though, a full-duplex leaf-spine link costs about `4/N`, not `2/N`. All five
//! entries agree only with symmetric accounting *and* a link failure that takes out one direction
//! of the link (a fibre, not the cable).

use crate::clos::{Clos, Path};
use crate::fabric::FabricSchedule;
use crate::ids::{LeafId, SpineId};
use serde::{Deserialize, Serialize};
use shoal_base::{ChannelId, NodeId};
use std::fmt;

/// A component that can fail. A plane is named by the channel it switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// A rack node (all its planes).
    Node(NodeId),
    /// The cable between a node and its leaf in one plane (both directions).
    NodeLink(ChannelId, NodeId),
    /// A leaf switch.
    Leaf(ChannelId, LeafId),
    /// Parallel link `q` (of `m`) between a leaf and a spine (both directions).
    LeafSpineLink(ChannelId, LeafId, SpineId, u16),
    /// A spine switch.
    Spine(ChannelId, SpineId),
}

/// The kinds of component, the rows of Table 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComponentKind {
    Node,
    NodeLink,
    Leaf,
    LeafSpineLink,
    Spine,
}

impl ComponentKind {
    pub const ALL: [ComponentKind; 5] = [
        ComponentKind::Node,
        ComponentKind::NodeLink,
        ComponentKind::Leaf,
        ComponentKind::LeafSpineLink,
        ComponentKind::Spine,
    ];
}

impl Component {
    pub fn kind(&self) -> ComponentKind {
        match self {
            Component::Node(_) => ComponentKind::Node,
            Component::NodeLink(..) => ComponentKind::NodeLink,
            Component::Leaf(..) => ComponentKind::Leaf,
            Component::LeafSpineLink(..) => ComponentKind::LeafSpineLink,
            Component::Spine(..) => ComponentKind::Spine,
        }
    }

    /// Whether a transmission along `path` needs this component. Both leaf-spine hops of a path
    /// use the same link index `path.link` (the verifier checks the published paths).
    pub fn lies_on(&self, path: &Path) -> bool {
        let plane = path.plane;
        match *self {
            Component::Node(n) => path.src == n || path.dst == n,
            Component::NodeLink(c, n) => c == plane && (path.src == n || path.dst == n),
            Component::Leaf(c, l) => c == plane && (path.src_leaf == l || path.dst_leaf == l),
            Component::LeafSpineLink(c, l, s, q) => {
                c == plane
                    && s == path.spine
                    && q == path.link
                    && (path.src_leaf == l || path.dst_leaf == l)
            }
            Component::Spine(c, s) => c == plane && s == path.spine,
        }
    }
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Component::Node(n) => write!(f, "node {}", n.0),
            Component::NodeLink(c, n) => write!(f, "the link of node {} in plane {}", n.0, c.0),
            Component::Leaf(c, l) => write!(f, "{l} of plane {}", c.0),
            Component::LeafSpineLink(c, l, s, q) => {
                write!(f, "link {q} between {l} and {s} of plane {}", c.0)
            }
            Component::Spine(c, s) => write!(f, "{s} of plane {}", c.0),
        }
    }
}

/// How losses propagate once detected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Accounting {
    /// Only the transmissions whose own path is broken are lost.
    #[default]
    PathOnly,
    /// §3.5's symmetric detection: when `i -> j` is lost, `j -> i` goes unused too.
    Symmetric,
}

/// A failure list that does not fit the fabric.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FailureError {
    #[error("{component} is not part of the fabric: {reason}")]
    UnknownComponent {
        component: Component,
        reason: String,
    },
    #[error("the Clos was routed for a different fabric schedule than the one given")]
    ScheduleMismatch,
}

/// One node's opportunities per epoch, over all planes, and how many were lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct NodeSlots {
    pub sent: u64,
    pub sent_lost: u64,
    pub received: u64,
    pub received_lost: u64,
}

impl NodeSlots {
    /// Every opportunity was lost: the node is cut off from the rack.
    pub fn cut_off(&self) -> bool {
        self.sent_lost == self.sent && self.received_lost == self.received
    }
}

/// Per-node and total slot losses of one failure scenario, as exact counts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailureCost {
    accounting: Accounting,
    failed: Vec<bool>,
    per_node: Vec<NodeSlots>,
}

impl FailureCost {
    pub fn accounting(&self) -> Accounting {
        self.accounting
    }

    /// The counts of `node` (a failed node's are all lost).
    ///
    /// # Panics
    /// If `node` is outside the fabric.
    pub fn node(&self, node: NodeId) -> NodeSlots {
        self.per_node[node.idx()]
    }

    /// Nodes that neither failed nor were cut off.
    pub fn survivors(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.per_node.len())
            .filter(|&n| !self.failed[n] && !self.per_node[n].cut_off())
            .map(|n| NodeId(n as u16))
    }

    /// Nodes that are up but lost every send and receive.
    pub fn cut_off(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.per_node.len())
            .filter(|&n| !self.failed[n] && self.per_node[n].cut_off())
            .map(|n| NodeId(n as u16))
    }

    /// Send and receive opportunities of the survivors per epoch.
    pub fn opportunities(&self) -> u64 {
        self.survivors()
            .map(|n| self.node(n))
            .map(|s| s.sent + s.received)
            .sum()
    }

    /// Of those, the ones lost.
    pub fn lost(&self) -> u64 {
        self.survivors()
            .map(|n| self.node(n))
            .map(|s| s.sent_lost + s.received_lost)
            .sum()
    }

    /// `lost / opportunities`; 1 when nobody survives.
    pub fn fraction(&self) -> f64 {
        match self.opportunities() {
            0 => 1.0,
            total => self.lost() as f64 / total as f64,
        }
    }
}

/// The failed components as flag tables, so each transmission is checked in O(1).
struct FailedSet {
    nodes: usize,
    leaves: usize,
    spines: usize,
    h: usize,
    node: Vec<bool>,
    node_link: Vec<bool>,
    leaf: Vec<bool>,
    /// Per (plane, leaf, uplink index `s * m + q`).
    link: Vec<bool>,
    spine: Vec<bool>,
}

impl FailedSet {
    fn new(clos: &Clos, failed: &[Component]) -> Result<FailedSet, FailureError> {
        let shape = clos.shape();
        let (n, planes) = (shape.nodes(), shape.planes());
        let (leaves, spines) = (shape.leaves(), shape.spines());
        let (h, m) = (shape.nodes_per_leaf(), shape.links_per_leaf_spine());
        let mut set = FailedSet {
            nodes: n,
            leaves,
            spines,
            h,
            node: vec![false; n],
            node_link: vec![false; planes * n],
            leaf: vec![false; planes * leaves],
            link: vec![false; planes * leaves * h],
            spine: vec![false; planes * spines],
        };
        for &component in failed {
            let unknown = |reason: String| FailureError::UnknownComponent { component, reason };
            let plane_ok = |c: ChannelId| {
                if c.idx() < planes {
                    Ok(c.idx())
                } else {
                    Err(unknown(format!("the fabric has {planes} planes")))
                }
            };
            let node_ok = |v: NodeId| {
                if v.idx() < n {
                    Ok(v.idx())
                } else {
                    Err(unknown(format!("the rack has {n} nodes")))
                }
            };
            let leaf_ok = |l: LeafId| {
                if l.idx() < leaves {
                    Ok(l.idx())
                } else {
                    Err(unknown(format!("a plane has {leaves} leaves")))
                }
            };
            let spine_ok = |s: SpineId| {
                if s.idx() < spines {
                    Ok(s.idx())
                } else {
                    Err(unknown(format!("a plane has {spines} spines")))
                }
            };
            match component {
                Component::Node(v) => set.node[node_ok(v)?] = true,
                Component::NodeLink(c, v) => set.node_link[plane_ok(c)? * n + node_ok(v)?] = true,
                Component::Leaf(c, l) => set.leaf[plane_ok(c)? * leaves + leaf_ok(l)?] = true,
                Component::LeafSpineLink(c, l, s, q) => {
                    if q as usize >= m {
                        return Err(unknown(format!("a leaf and a spine share {m} links")));
                    }
                    let u = spine_ok(s)? * m + q as usize;
                    set.link[(plane_ok(c)? * leaves + leaf_ok(l)?) * h + u] = true;
                }
                Component::Spine(c, s) => set.spine[plane_ok(c)? * spines + spine_ok(s)?] = true,
            }
        }
        Ok(set)
    }

    /// Whether the transmission along `path` is lost.
    fn hits(&self, path: &Path) -> bool {
        let c = path.plane.idx();
        let (src, dst) = (path.src.idx(), path.dst.idx());
        let (ls, ld) = (path.src_leaf.idx(), path.dst_leaf.idx());
        // Both hops use uplink index `u` (`spine * m + link`) at their leaf.
        let u = path.uplink as usize;
        self.node[src]
            || self.node[dst]
            || self.node_link[c * self.nodes + src]
            || self.node_link[c * self.nodes + dst]
            || self.leaf[c * self.leaves + ls]
            || self.leaf[c * self.leaves + ld]
            || self.spine[c * self.spines + path.spine.idx()]
            || self.link[(c * self.leaves + ls) * self.h + u]
            || self.link[(c * self.leaves + ld) * self.h + u]
    }
}

/// The exact slot losses of `failed` over one epoch and all planes. Walks every transmission
/// once: O(N²) time and an N² bit table.
pub fn failure_cost(
    schedule: &FabricSchedule,
    clos: &Clos,
    failed: &[Component],
    accounting: Accounting,
) -> Result<FailureCost, FailureError> {
    if clos.schedule() != schedule {
        return Err(FailureError::ScheduleMismatch);
    }
    let set = FailedSet::new(clos, failed)?;
    let n = schedule.nodes();
    // lost[src * n + dst]: the one transmission src -> dst of the epoch is lost.
    let mut lost = vec![false; n * n];
    for slot in schedule.slots() {
        for channel in schedule.channel_ids() {
            for src in schedule.node_ids() {
                if let Some(path) = clos.path(slot, channel, src) {
                    lost[src.idx() * n + path.dst.idx()] = set.hits(&path);
                }
            }
        }
    }
    let mut per_node = vec![NodeSlots::default(); n];
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            let gone = lost[i * n + j] || (accounting == Accounting::Symmetric && lost[j * n + i]);
            per_node[i].sent += 1;
            per_node[j].received += 1;
            if gone {
                per_node[i].sent_lost += 1;
                per_node[j].received_lost += 1;
            }
        }
    }
    Ok(FailureCost {
        accounting,
        failed: set.node,
        per_node,
    })
}

/// The fraction of the surviving nodes' send and receive slots lost to `failed`, with the
/// path-only accounting. See the module documentation for how it relates to Table 1.
pub fn failed_slot_fraction(
    schedule: &FabricSchedule,
    clos: &Clos,
    failed: &[Component],
) -> Result<f64, FailureError> {
    Ok(failure_cost(schedule, clos, failed, Accounting::PathOnly)?.fraction())
}

/// Table 1 of the paper, the approximate fraction of failed slots for one failed component of a
/// rack of `nodes` nodes (a report value, for comparison with [`failed_slot_fraction`]).
pub fn table1_formula(kind: ComponentKind, nodes: usize) -> f64 {
    let n = nodes as f64;
    match kind {
        ComponentKind::Node | ComponentKind::NodeLink => 1.0 / n,
        ComponentKind::Leaf => 1.0 / (2.0 * n).sqrt(),
        ComponentKind::LeafSpineLink => 2.0 / n,
        ComponentKind::Spine => 2.0 * 2f64.sqrt() / n.sqrt(),
    }
}
