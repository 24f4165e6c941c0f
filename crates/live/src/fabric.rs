//! The rack's fabric as the live processes need it: the verified schedule, the circuits the
//! software switch sets up in each slot (read off the Clos port maps, switch by switch), and each
//! node's configuration.

use serde::{Deserialize, Serialize};
use shoal_base::{ChannelId, NodeId};
use shoal_node::NodeConfig;
use shoal_schedule::{
    Arrangement, BuildError, ClosShape, FabricSpec, LeafId, PlanePortMaps, PortId, Slot,
    SwitchKind, VerifiedFabric,
};

/// The parameters every process of one live rack must agree on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RackSpec {
    /// Nodes in the rack (8 in the paper's prototype).
    pub nodes: u16,
    /// Channels per node, each a plane of the Clos.
    pub channels: u8,
    /// Ports of each circuit switch; two tiers of k-port switches connect k²/2 nodes.
    pub switch_ports: u16,
    /// Slots from a cell's transmission to its reception (App. A); the schedule absorbs it.
    pub delay_slots: u32,
}

impl RackSpec {
    /// The prototype's rack (§6.1): 8 nodes, one channel, six 4-port switches (Fig. 2), with
    /// App. A's schedule absorbing a delay of 2 slots (the simulator's default, §7.1).
    pub fn prototype() -> RackSpec {
        RackSpec {
            nodes: 8,
            channels: 1,
            switch_ports: 4,
            delay_slots: 2,
        }
    }

    pub fn fabric_spec(&self) -> FabricSpec {
        FabricSpec {
            nodes: self.nodes as usize,
            channels: self.channels as usize,
            arrangement: Arrangement::PropagationAware,
            delay_slots: Some(self.delay_slots),
        }
    }
}

/// No circuit: the input port is idle in this slot.
const NO_PEER: u16 = u16::MAX;

/// The verified fabric and the tables the live processes read every slot.
pub struct LiveFabric {
    pub spec: RackSpec,
    fabric: VerifiedFabric,
    epoch: u64,
    /// `[(slot in epoch × channels + channel) × nodes + node]`: the node it transmits to.
    tx: Vec<u16>,
    /// Same layout: the node it hears from.
    rx: Vec<u16>,
    /// Same layout: where the switches' circuits carry a cell entering at the node's port.
    circuits: Vec<u16>,
}

impl LiveFabric {
    /// Builds the schedule and its Clos and runs the verifier (no port used twice in a slot,
    /// every pair once per epoch, port maps composing to the schedule, App. A's turnaround).
    pub fn new(spec: RackSpec) -> Result<LiveFabric, BuildError> {
        let fabric = VerifiedFabric::build(spec.fabric_spec(), spec.switch_ports as usize)?;
        let schedule = fabric.schedule();
        let epoch = schedule.epoch_slots();
        let (n, c) = (spec.nodes as usize, spec.channels as usize);
        let mut tx = Vec::with_capacity(epoch as usize * c * n);
        let mut rx = Vec::with_capacity(tx.capacity());
        let mut circuits = Vec::with_capacity(tx.capacity());
        let shape = *fabric.clos().shape();
        for s in 0..epoch {
            for ch in 0..c {
                let channel = ChannelId(ch as u8);
                let maps = fabric.clos().plane_port_maps(channel, Slot(s));
                for i in 0..n {
                    let me = NodeId(i as u16);
                    let id = |p: Option<NodeId>| p.map_or(NO_PEER, |p| p.0);
                    tx.push(id(schedule.peer(Slot(s), me, channel)));
                    rx.push(id(schedule.from(Slot(s), me, channel)));
                    circuits.push(id(through_switches(&shape, &maps, me)));
                }
            }
        }
        Ok(LiveFabric {
            spec,
            fabric,
            epoch,
            tx,
            rx,
            circuits,
        })
    }

    pub fn fabric(&self) -> &VerifiedFabric {
        &self.fabric
    }

    /// Slots per epoch (N − 1, or N for App. A's schedule of an even N).
    pub fn epoch_slots(&self) -> u64 {
        self.epoch
    }

    fn at(&self, slot: u64, channel: ChannelId, node: NodeId) -> usize {
        let (n, c) = (self.spec.nodes as usize, self.spec.channels as usize);
        ((slot % self.epoch) as usize * c + channel.idx()) * n + node.idx()
    }

    fn lookup(table: &[u16], at: usize) -> Option<NodeId> {
        match table.get(at) {
            Some(&p) if p != NO_PEER => Some(NodeId(p)),
            _ => None,
        }
    }

    /// Whom `node` transmits to in `slot` on `channel`.
    pub fn tx_peer(&self, slot: u64, channel: ChannelId, node: NodeId) -> Option<NodeId> {
        Self::lookup(&self.tx, self.at(slot, channel, node))
    }

    /// Whom `node` hears from in `slot` on `channel`.
    pub fn rx_peer(&self, slot: u64, channel: ChannelId, node: NodeId) -> Option<NodeId> {
        Self::lookup(&self.rx, self.at(slot, channel, node))
    }

    /// Where the circuit switches of `channel`'s plane carry a cell that enters at `node`'s port
    /// in `slot`: what the switch process forwards by. `None`: no circuit (the node idles).
    pub fn circuit(&self, slot: u64, channel: ChannelId, node: NodeId) -> Option<NodeId> {
        if node.idx() >= self.spec.nodes as usize || channel.idx() >= self.spec.channels as usize {
            return None;
        }
        Self::lookup(&self.circuits, self.at(slot, channel, node))
    }

    /// The node's configuration, built as the simulator builds it (`shoal-rack`): the paper's
    /// defaults (64 B cells, one class, both §3.3.3 optimizations) on this schedule. The queue
    /// bounds are checked only when `check_bounds` (no corruption, no failure).
    pub fn node_config(&self, id: NodeId, check_bounds: bool) -> NodeConfig {
        let schedule = self.fabric.schedule();
        let slot = |src: NodeId, dst: NodeId| {
            schedule
                .slot_of(src, dst)
                .map_or(u16::MAX, |(s, _)| s.0 as u16)
        };
        let peers = (0..self.spec.nodes).map(NodeId);
        NodeConfig {
            check_bounds,
            ..NodeConfig::new(
                id,
                self.spec.nodes,
                self.epoch as u32,
                self.spec.delay_slots,
                peers.clone().map(|p| slot(id, p)).collect(),
                peers.map(|p| slot(p, id)).collect(),
            )
        }
    }
}

/// Follows a cell through the three switches of its plane by their port maps and the cabling of
/// `shoal_schedule::Clos` (node `n` on leaf `n / h` at down-port `n % h`; leaf up-port `h + u`
/// to spine `u / m` on link `u % m`; spine port `l·m + q` to leaf `l` on link `q`). A circuit that
/// leads nowhere, or back down a leaf without crossing a spine, is `None`.
fn through_switches(shape: &ClosShape, maps: &PlanePortMaps, src: NodeId) -> Option<NodeId> {
    let (h, m) = (shape.nodes_per_leaf(), shape.links_per_leaf_spine());
    let (leaf, port) = shape.attachment(src);
    let up = maps.get(SwitchKind::Leaf(leaf))?.output(port)?;
    let u = (up.0 as usize).checked_sub(h)?;
    let (spine, spine_in) = shape.uplink_peer(leaf, u as u16);
    let out = maps.get(SwitchKind::Spine(spine))?.output(spine_in)?.0 as usize;
    let (dst_leaf, link) = (out / m, out % m);
    let dst_up = PortId((h + spine.0 as usize * m + link) as u16);
    let down = maps
        .get(SwitchKind::Leaf(LeafId(dst_leaf as u16)))?
        .output(dst_up)?
        .0 as usize;
    if down >= h {
        return None;
    }
    let node = dst_leaf * h + down;
    (node < shape.nodes()).then_some(NodeId(node as u16))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The circuits the switch process forwards by, traced through the port maps, are exactly
    /// the fabric schedule, and every receiver hears from exactly one sender per channel-slot.
    #[test]
    fn circuits_traced_through_the_port_maps_are_the_schedule() {
        for (nodes, channels, ports, delay) in [
            (8, 1, 4, 2),
            (8, 2, 4, 1),
            (9, 1, 6, 3),
            (16, 1, 6, 2),
            (32, 4, 8, 1),
        ] {
            let spec = RackSpec {
                nodes,
                channels,
                switch_ports: ports,
                delay_slots: delay,
            };
            let f = LiveFabric::new(spec.clone()).unwrap();
            for s in 0..f.epoch_slots() {
                for c in 0..channels {
                    let ch = ChannelId(c);
                    let mut heard = vec![0; nodes as usize];
                    for i in 0..nodes {
                        let me = NodeId(i);
                        let to = f.tx_peer(s, ch, me);
                        assert_eq!(f.circuit(s, ch, me), to, "{spec:?} slot {s} node {i}");
                        if let Some(to) = to {
                            assert_eq!(f.rx_peer(s, ch, to), Some(me));
                            heard[to.idx()] += 1;
                        }
                    }
                    assert!(heard.iter().all(|&h| h <= 1));
                }
            }
        }
    }

    #[test]
    fn node_configs_name_each_peer_once_per_epoch() {
        let f = LiveFabric::new(RackSpec::prototype()).unwrap();
        assert_eq!(f.epoch_slots(), 8, "App. A adds an idle slot for an even N");
        let cfg = f.node_config(NodeId(3), true);
        cfg.validate().unwrap();
        let mut tx = cfg.tx_slot.clone();
        tx.sort_unstable();
        tx.dedup();
        assert_eq!(tx.len(), 8, "7 peers in distinct slots plus the self entry");
    }
}
