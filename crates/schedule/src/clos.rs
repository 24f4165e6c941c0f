//! Decomposition of a fabric schedule onto a two-tier folded Clos of k-port circuit switches.
//!
//! Each channel has its own plane of switches (§3.4: the four 25 Gb/s lanes of a 100 Gb/s link are
//! switched independently). In a plane, `h = k/2` nodes hang off each leaf, `L = ceil(N/h)` leaves
//! connect to `S` spines over `m = h/S` parallel links each, where `S` is the smallest divisor of
//! `h` whose links fit the spines' `k` ports (`L * m <= k`). That gives the paper's numbers: 8
//! nodes on 4-port switches use 4 leaves and 2 spines (Fig. 2); 512 nodes on 64-port switches use
//! 16 leaves and 8 spines, 24 switches per plane and 48 for the two planes of §5.
//!
//! Wiring (fixed, the physical cabling):
//! - node `n` sits on leaf `n / h` at down-port `n % h`;
//! - leaf ports `0..h` face nodes, ports `h..2h` face spines: up-port `h + u` goes to spine
//!   `u / m` over its parallel link `u % m`;
//! - spine port `l * m + q` is link `q` to leaf `l`.
//!
//! Routing: every cell crosses both stages, even between nodes of one leaf (§3.2), which keeps all
//! node-to-node distances equal for synchronization. A transmission leaves its source leaf on
//! up-port `h + u` and enters its destination leaf on up-port `h + u` of the same spine and link,
//! so per plane and slot each source leaf and each destination leaf may use every `u` once: a
//! proper edge colouring of the leaf-to-leaf multigraph with `h` colours. The common case needs no
//! search: `u = destination's down-port` is always distinct at the destination leaf, and is
//! distinct at the source leaf for cyclic shifts when `h` divides `N` (also modulo `N + 1` with a
//! virtual node: a leaf's destinations then skip one value but still span fewer than `h`
//! consecutive residues). Other columns (`N` not a multiple of `h`) fall back to König's
//! alternating-path colouring, which always succeeds.
//!
//! Either way the uplink is then rotated by the slot index, `u = (base + slot) mod h`, which keeps
//! it proper (a rotation is a bijection of `0..h`). Without it, the fast rule would send every cell
//! a node receives in a plane through the one spine `(n mod h) / m`, so one failed spine would
//! leave `N/S` nodes deaf on that plane; rotated, each node's cells spread over all spines across
//! the epoch and a failed spine costs every node about `1/S` of its slots (see `failure.rs`).

use crate::colour::EdgeColourer;
use crate::fabric::FabricSchedule;
use crate::ids::{LeafId, PortId, Slot, SpineId, SwitchId, SwitchKind};
use crate::portmap::{PlanePortMaps, PortMap};
use serde::Serialize;
use shoal_base::{ChannelId, NodeId};

/// The largest switch radix: port numbers are 16 bits with one value reserved for "unconnected".
pub const MAX_PORTS: usize = u16::MAX as usize - 1;

/// A switch radix the Clos cannot be built from, or a rack it cannot connect.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ClosError {
    #[error(
        "switches need an even number of ports (half face nodes, half face spines), got {ports}"
    )]
    OddPorts { ports: usize },
    #[error("a two-tier Clos needs switches of at least 4 ports, got {ports}")]
    TooFewPorts { ports: usize },
    #[error("switches of {ports} ports are more than the {max} a 16-bit port id can name")]
    TooManyPorts { ports: usize, max: usize },
    #[error(
        "a two-tier Clos of k-port switches connects at most k²/2 nodes per plane: {ports}-port \
         switches connect at most {max} nodes, but the schedule has {nodes}; use switches of at \
         least {min_ports} ports"
    )]
    TooManyNodes {
        nodes: usize,
        ports: usize,
        max: usize,
        min_ports: usize,
    },
}

/// The dimensions of one plane, identical for every plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ClosShape {
    nodes: usize,
    planes: usize,
    ports: usize,
    nodes_per_leaf: usize,
    leaves: usize,
    spines: usize,
    links_per_leaf_spine: usize,
}

impl ClosShape {
    /// Sizes a plane of `ports`-port switches for `nodes` nodes, refusing what cannot be built.
    pub fn new(nodes: usize, planes: usize, ports: usize) -> Result<ClosShape, ClosError> {
        if !ports.is_multiple_of(2) {
            return Err(ClosError::OddPorts { ports });
        }
        if ports < 4 {
            return Err(ClosError::TooFewPorts { ports });
        }
        if ports > MAX_PORTS {
            return Err(ClosError::TooManyPorts {
                ports,
                max: MAX_PORTS,
            });
        }
        let max = ports * ports / 2;
        if nodes > max {
            return Err(ClosError::TooManyNodes {
                nodes,
                ports,
                max,
                min_ports: min_ports_for(nodes),
            });
        }
        let h = ports / 2;
        let leaves = nodes.div_ceil(h);
        // S = h always fits (m = 1, L <= k because N <= k²/2), so the search succeeds.
        let spines = (1..=h)
            .find(|&s| h.is_multiple_of(s) && leaves * (h / s) <= ports)
            .unwrap_or(h);
        Ok(ClosShape {
            nodes,
            planes,
            ports,
            nodes_per_leaf: h,
            leaves,
            spines,
            links_per_leaf_spine: h / spines,
        })
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// Planes, one per channel.
    pub fn planes(&self) -> usize {
        self.planes
    }

    /// Ports per switch, `k`.
    pub fn ports(&self) -> usize {
        self.ports
    }

    /// Node-facing (and spine-facing) ports per leaf, `h = k/2`.
    pub fn nodes_per_leaf(&self) -> usize {
        self.nodes_per_leaf
    }

    /// Leaves per plane, `L = ceil(N/h)`.
    pub fn leaves(&self) -> usize {
        self.leaves
    }

    /// Spines per plane, `S`.
    pub fn spines(&self) -> usize {
        self.spines
    }

    /// Parallel links between each leaf and each spine, `m = h/S`.
    pub fn links_per_leaf_spine(&self) -> usize {
        self.links_per_leaf_spine
    }

    /// Switches per plane, `L + S`.
    pub fn switches_per_plane(&self) -> usize {
        self.leaves + self.spines
    }

    /// Where node `n` is plugged in: its leaf and the leaf's down-port.
    pub fn attachment(&self, node: NodeId) -> (LeafId, PortId) {
        let h = self.nodes_per_leaf;
        (
            LeafId((node.idx() / h) as u16),
            PortId((node.idx() % h) as u16),
        )
    }

    /// The spine and spine port at the other end of uplink `u` (leaf up-port `h + u`) of `leaf`.
    pub fn uplink_peer(&self, leaf: LeafId, uplink: u16) -> (SpineId, PortId) {
        let m = self.links_per_leaf_spine;
        let u = uplink as usize;
        (
            SpineId((u / m) as u16),
            PortId((leaf.idx() * m + u % m) as u16),
        )
    }
}

/// What the other end of a switch port's cable is: a node, or a port of a switch of the same
/// plane (the cabling `shoal schedule --json` prints, so the port maps can be traced by hand).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PortPeer {
    Node(NodeId),
    Leaf { leaf: LeafId, port: PortId },
    Spine { spine: SpineId, port: PortId },
}

impl ClosShape {
    /// The far end of `port` of `switch` (its plane is irrelevant: planes are cabled alike);
    /// `None` for a port left unused (a leaf's down-port past the last node, a spine port past
    /// the last leaf's links, or a port the switch does not have). The inverse of
    /// [`ClosShape::attachment`] and [`ClosShape::uplink_peer`].
    pub fn port_peer(&self, switch: SwitchKind, port: PortId) -> Option<PortPeer> {
        let (h, m, p) = (self.nodes_per_leaf, self.links_per_leaf_spine, port.idx());
        match switch {
            SwitchKind::Leaf(leaf) if leaf.idx() < self.leaves && p < h => {
                let node = leaf.idx() * h + p;
                (node < self.nodes).then_some(PortPeer::Node(NodeId(node as u16)))
            }
            SwitchKind::Leaf(leaf) if leaf.idx() < self.leaves && p < 2 * h => {
                let (spine, port) = self.uplink_peer(leaf, (p - h) as u16);
                Some(PortPeer::Spine { spine, port })
            }
            SwitchKind::Spine(spine) if spine.idx() < self.spines && p < self.leaves * m => {
                let uplink = spine.idx() * m + p % m;
                Some(PortPeer::Leaf {
                    leaf: LeafId((p / m) as u16),
                    port: PortId((h + uplink) as u16),
                })
            }
            _ => None,
        }
    }
}

/// The smallest even `k >= 4` with `k²/2 >= nodes`.
pub fn min_ports_for(nodes: usize) -> usize {
    let mut k = 4;
    while k * k / 2 < nodes {
        k += 2;
    }
    k
}

/// How one (slot, channel) column is routed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ColumnRoute {
    Idle,
    /// Uplink = (the destination's down-port + slot) mod h.
    DestPort,
    /// Uplinks from the edge colouring, already rotated by the slot: `uplinks[start + src]`,
    /// `NO_UPLINK` for idle senders.
    Table {
        start: usize,
    },
}

const NO_UPLINK: u16 = u16::MAX;

/// The route of one transmission through its plane, hop by hop. A simulator checks it against
/// failed components; the verifier checks it against the switches' port maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Path {
    pub plane: ChannelId,
    pub src: NodeId,
    pub src_leaf: LeafId,
    /// The source leaf's down-port, where the node link from `src` ends.
    pub src_port: PortId,
    /// Uplink index `u`: the cell leaves on up-port `h + u` and enters `dst_leaf` on `h + u`.
    pub uplink: u16,
    pub spine: SpineId,
    /// Which of the `m` parallel links between a leaf and `spine` both hops use.
    pub link: u16,
    pub spine_in: PortId,
    pub spine_out: PortId,
    pub dst_leaf: LeafId,
    /// The destination leaf's down-port, where the node link to `dst` starts.
    pub dst_port: PortId,
    pub dst: NodeId,
}

/// A fabric schedule decomposed onto per-plane Clos switches. Built once, then queried.
#[derive(Clone, Debug)]
pub struct Clos {
    shape: ClosShape,
    schedule: FabricSchedule,
    /// Per (slot, channel) position, as in the fabric schedule.
    routes: Vec<ColumnRoute>,
    uplinks: Vec<u16>,
    coloured_columns: usize,
}

impl Clos {
    /// Builds the planes for `schedule` out of `ports`-port switches and routes every column.
    pub fn new(schedule: &FabricSchedule, ports: usize) -> Result<Clos, ClosError> {
        let shape = ClosShape::new(schedule.nodes(), schedule.channels(), ports)?;
        let mut clos = Clos {
            shape,
            schedule: schedule.clone(),
            routes: Vec::new(),
            uplinks: Vec::new(),
            coloured_columns: 0,
        };
        clos.route_all();
        Ok(clos)
    }

    fn route_all(&mut self) {
        let n = self.shape.nodes;
        let h = self.shape.nodes_per_leaf;
        let leaves = self.shape.leaves;
        let mut stamp = vec![u32::MAX; leaves * h];
        let mut edges: Vec<(u32, u32)> = Vec::with_capacity(n);
        let mut senders: Vec<u16> = Vec::with_capacity(n);
        let mut colours = Vec::with_capacity(n);
        let mut colourer = EdgeColourer::default();
        let schedule = &self.schedule;
        let mut routes = Vec::new();
        let mut uplinks = Vec::new();
        let mut coloured = 0;
        for slot in schedule.slots() {
            for channel in schedule.channel_ids() {
                if schedule.offset(slot, channel).is_none() {
                    routes.push(ColumnRoute::Idle);
                    continue;
                }
                let key = routes.len() as u32;
                let mut conflict = false;
                edges.clear();
                senders.clear();
                for src in schedule.node_ids() {
                    let Some(dst) = schedule.peer(slot, src, channel) else {
                        continue;
                    };
                    let cell = (src.idx() / h) * h + dst.idx() % h;
                    conflict |= stamp[cell] == key;
                    stamp[cell] = key;
                    edges.push(((src.idx() / h) as u32, (dst.idx() / h) as u32));
                    senders.push(src.0);
                }
                if !conflict {
                    routes.push(ColumnRoute::DestPort);
                    continue;
                }
                // A partial injection has at most h senders per source leaf and h receivers
                // per destination leaf, so h colours always suffice.
                colourer
                    .colour(leaves, leaves, h, &edges, &mut colours)
                    .expect("a fabric schedule column is a partial injection");
                let start = uplinks.len();
                uplinks.resize(start + n, NO_UPLINK);
                let rotation = (slot.0 % h as u64) as usize;
                for (&src, &colour) in senders.iter().zip(&colours) {
                    uplinks[start + src as usize] = ((colour as usize + rotation) % h) as u16;
                }
                routes.push(ColumnRoute::Table { start });
                coloured += 1;
            }
        }
        self.routes = routes;
        self.uplinks = uplinks;
        self.coloured_columns = coloured;
    }

    pub fn shape(&self) -> &ClosShape {
        &self.shape
    }

    /// The fabric schedule this Clos was routed for.
    pub fn schedule(&self) -> &FabricSchedule {
        &self.schedule
    }

    /// How many (slot, channel) columns needed the edge-colouring fallback.
    pub fn coloured_columns(&self) -> usize {
        self.coloured_columns
    }

    /// Ports of `switch` (every switch has `k`; spines may leave some unused).
    pub fn ports(&self, switch: SwitchId) -> usize {
        self.check_switch(switch);
        self.shape.ports
    }

    /// Every switch, plane by plane, leaves before spines.
    pub fn switches(&self) -> impl Iterator<Item = SwitchId> + use<> {
        let shape = self.shape;
        (0..shape.planes).flat_map(move |c| {
            let plane = ChannelId(c as u8);
            let leaves = (0..shape.leaves).map(move |l| SwitchId::leaf(plane, LeafId(l as u16)));
            let spines = (0..shape.spines).map(move |s| SwitchId::spine(plane, SpineId(s as u16)));
            leaves.chain(spines)
        })
    }

    fn check_switch(&self, switch: SwitchId) {
        let ok = switch.plane.idx() < self.shape.planes
            && match switch.kind {
                SwitchKind::Leaf(l) => l.idx() < self.shape.leaves,
                SwitchKind::Spine(s) => s.idx() < self.shape.spines,
            };
        assert!(ok, "{switch} is not part of this Clos");
    }

    fn position(&self, slot: Slot, channel: ChannelId) -> usize {
        let e = self.schedule.epoch_slots();
        (slot.0 % e) as usize * self.shape.planes + channel.idx()
    }

    /// The uplink index `u` the transmission of `src` uses; `None` when `src` idles.
    ///
    /// # Panics
    /// If `src` or `channel` is outside the schedule.
    pub fn uplink(&self, slot: Slot, channel: ChannelId, src: NodeId) -> Option<u16> {
        let dst = self.schedule.peer(slot, src, channel)?;
        let h = self.shape.nodes_per_leaf;
        match self.routes[self.position(slot, channel)] {
            ColumnRoute::Idle => None,
            ColumnRoute::DestPort => {
                let rotation = (slot.0 % self.schedule.epoch_slots() % h as u64) as usize;
                Some(((dst.idx() % h + rotation) % h) as u16)
            }
            ColumnRoute::Table { start } => match self.uplinks[start + src.idx()] {
                NO_UPLINK => None,
                u => Some(u),
            },
        }
    }

    /// The route of `src`'s transmission in (slot, channel); `None` when `src` idles.
    ///
    /// # Panics
    /// If `src` or `channel` is outside the schedule.
    pub fn path(&self, slot: Slot, channel: ChannelId, src: NodeId) -> Option<Path> {
        let dst = self.schedule.peer(slot, src, channel)?;
        let u = self.uplink(slot, channel, src)?;
        let (src_leaf, src_port) = self.shape.attachment(src);
        let (dst_leaf, dst_port) = self.shape.attachment(dst);
        let (spine, spine_in) = self.shape.uplink_peer(src_leaf, u);
        let (_, spine_out) = self.shape.uplink_peer(dst_leaf, u);
        Some(Path {
            plane: channel,
            src,
            src_leaf,
            src_port,
            uplink: u,
            spine,
            link: (u as usize % self.shape.links_per_leaf_spine) as u16,
            spine_in,
            spine_out,
            dst_leaf,
            dst_port,
            dst,
        })
    }

    /// The configuration of every switch of `plane` in `slot`.
    ///
    /// # Panics
    /// If `plane` is not a plane of this Clos.
    pub fn plane_port_maps(&self, plane: ChannelId, slot: Slot) -> PlanePortMaps {
        assert!(
            plane.idx() < self.shape.planes,
            "plane {} is not part of this Clos",
            plane.0
        );
        let k = self.shape.ports;
        let h = self.shape.nodes_per_leaf;
        let mut maps = PlanePortMaps {
            plane,
            leaves: vec![PortMap::unconnected(k); self.shape.leaves],
            spines: vec![PortMap::unconnected(k); self.shape.spines],
        };
        for src in self.schedule.node_ids() {
            let Some(p) = self.path(slot, plane, src) else {
                continue;
            };
            let up = PortId((h + p.uplink as usize) as u16);
            maps.leaves[p.src_leaf.idx()].connect(p.src_port, up);
            maps.spines[p.spine.idx()].connect(p.spine_in, p.spine_out);
            maps.leaves[p.dst_leaf.idx()].connect(up, p.dst_port);
        }
        maps
    }

    /// The configuration of one switch in `slot`.
    ///
    /// # Panics
    /// If `switch` is not part of this Clos.
    pub fn port_map(&self, switch: SwitchId, slot: Slot) -> PortMap {
        self.check_switch(switch);
        let maps = self.plane_port_maps(switch.plane, slot);
        maps.get(switch.kind)
            .cloned()
            .unwrap_or_else(|| PortMap::unconnected(self.shape.ports))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cable read from either end names the other end: nodes to their leaf port, leaf
    /// up-ports to spine ports and back, and each node and spine port used exactly once.
    #[test]
    fn cabling_is_a_perfect_pairing_of_ports() {
        for (nodes, ports) in [(8, 4), (7, 4), (128, 16), (100, 16), (512, 32), (2048, 64)] {
            let s = ClosShape::new(nodes, 1, ports).unwrap();
            let mut seen_nodes = vec![0; nodes];
            let mut spine_ports = 0;
            for l in 0..s.leaves() {
                let leaf = LeafId(l as u16);
                for p in 0..ports {
                    match s.port_peer(SwitchKind::Leaf(leaf), PortId(p as u16)) {
                        Some(PortPeer::Node(n)) => {
                            assert_eq!(s.attachment(n), (leaf, PortId(p as u16)));
                            seen_nodes[n.idx()] += 1;
                        }
                        Some(PortPeer::Spine { spine, port }) => {
                            let back = s.port_peer(SwitchKind::Spine(spine), port);
                            let here = PortPeer::Leaf {
                                leaf,
                                port: PortId(p as u16),
                            };
                            assert_eq!(back, Some(here), "{nodes} nodes, leaf {l} port {p}");
                            spine_ports += 1;
                        }
                        other => assert!(other.is_none() && p < ports / 2, "{other:?}"),
                    }
                }
            }
            assert!(seen_nodes.iter().all(|&c| c == 1));
            let used: usize = (0..s.spines())
                .map(|sp| {
                    (0..ports)
                        .filter(|&p| {
                            let kind = SwitchKind::Spine(SpineId(sp as u16));
                            s.port_peer(kind, PortId(p as u16)).is_some()
                        })
                        .count()
                })
                .sum();
            assert_eq!(used, spine_ports);
            assert_eq!(spine_ports, s.leaves() * ports / 2);
        }
    }

    #[test]
    fn plane_dimensions_match_the_paper() {
        let s = ClosShape::new(8, 1, 4).unwrap();
        assert_eq!(
            (s.leaves(), s.spines(), s.links_per_leaf_spine()),
            (4, 2, 1)
        );
        let s = ClosShape::new(512, 2, 64).unwrap();
        assert_eq!(
            (s.leaves(), s.spines(), s.links_per_leaf_spine()),
            (16, 8, 4)
        );
        assert_eq!(
            s.switches_per_plane() * s.planes(),
            48,
            "§5: 48 circuit switches"
        );
        let s = ClosShape::new(2048, 1, 64).unwrap();
        assert_eq!(
            (s.leaves(), s.spines(), s.links_per_leaf_spine()),
            (64, 32, 1)
        );
    }

    #[test]
    fn min_ports_is_the_smallest_even_radix_that_fits() {
        assert_eq!(min_ports_for(2), 4);
        assert_eq!(min_ports_for(8), 4);
        assert_eq!(min_ports_for(9), 6);
        assert_eq!(min_ports_for(2048), 64);
        assert_eq!(min_ports_for(2049), 66);
    }

    #[test]
    fn wiring_follows_the_documented_port_numbers() {
        let s = ClosShape::new(512, 1, 64).unwrap();
        assert_eq!(s.attachment(NodeId(100)), (LeafId(3), PortId(4)));
        // m = 4: uplink 9 goes to spine 2 over link 1, spine port 3*4 + 1.
        assert_eq!(s.uplink_peer(LeafId(3), 9), (SpineId(2), PortId(13)));
    }
}
