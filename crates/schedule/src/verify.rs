//! An independent proof that a schedule and its switch configurations are contention-free.
//!
//! The verifier trusts nothing the constructions computed for themselves: it re-derives the
//! expected epoch from the arrangement, scans every node's peer to find collisions and coverage
//! gaps, measures the Appendix A turnaround from the scan, and then pushes every transmission
//! through the published port maps using its own copy of the wiring rules (node `n` on leaf `n/h`
//! port `n%h`, up-port `h+u` to spine `u/m` port `l*m + u%m`). Only if the hop-by-hop composition
//! lands on exactly the scheduled peer, every circuit carries exactly one scheduled cell, and the
//! published [`Path`](crate::Path)s agree, is the pair accepted.
//!
//! It works on two small views so that tests can feed it deliberately corrupted schedules and
//! port maps without a back door in the real types.

use crate::arrangement::Arrangement;
use crate::clos::{Clos, ClosShape, Path};
use crate::fabric::FabricSchedule;
use crate::ids::{LeafId, PortId, Slot, SpineId, SwitchId, SwitchKind};
use crate::portmap::PlanePortMaps;
pub use crate::violation::Violation;
use serde::Serialize;
use shoal_base::{ChannelId, NodeId};

/// What the verifier proved, with the size of the proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    pub nodes: usize,
    pub channels: usize,
    /// Slots per epoch checked.
    pub slots: u64,
    /// Ordered pairs `i != j` checked to be served exactly once per epoch.
    pub pairs_checked: u64,
    /// Transmissions pushed through the port maps (one per pair per epoch).
    pub transmissions_traced: u64,
    /// Switches over all planes.
    pub switches: u64,
    /// (switch, port, slot) triples checked for a conflicting or dangling circuit.
    pub port_slot_checks: u64,
    /// The measured minimum slot distance from `i -> j` to `j -> i`.
    pub min_turnaround: u32,
    /// The delay that had to be absorbed, if any.
    pub delay_slots: Option<u32>,
}

/// Proves `schedule` contention-free and `clos`'s port maps an exact decomposition of it.
///
/// Costs O(N²) time and an N² table of u32 (16 MB at 2,048 nodes), plus one plane's port maps
/// at a time.
pub fn verify(schedule: &FabricSchedule, clos: &Clos) -> Result<Verdict, Violation> {
    verify_views(schedule, clos)
}

/// The fabric queries the verifier relies on.
pub(crate) trait FabricView {
    fn nodes(&self) -> usize;
    fn channels(&self) -> usize;
    fn arrangement(&self) -> Arrangement;
    fn delay_slots(&self) -> Option<u32>;
    fn epoch_slots(&self) -> u64;
    fn peer(&self, slot: Slot, node: NodeId, channel: ChannelId) -> Option<NodeId>;
    fn from(&self, slot: Slot, node: NodeId, channel: ChannelId) -> Option<NodeId>;
    fn slot_of(&self, src: NodeId, dst: NodeId) -> Option<(Slot, ChannelId)>;
    fn min_turnaround(&self) -> u32;
}

/// The switch queries the verifier relies on.
pub(crate) trait SwitchView {
    fn shape(&self) -> ClosShape;
    fn plane_port_maps(&self, plane: ChannelId, slot: Slot) -> PlanePortMaps;
    fn path(&self, slot: Slot, channel: ChannelId, src: NodeId) -> Option<Path>;
}

impl FabricView for FabricSchedule {
    fn nodes(&self) -> usize {
        FabricSchedule::nodes(self)
    }
    fn channels(&self) -> usize {
        FabricSchedule::channels(self)
    }
    fn arrangement(&self) -> Arrangement {
        FabricSchedule::arrangement(self)
    }
    fn delay_slots(&self) -> Option<u32> {
        FabricSchedule::delay_slots(self)
    }
    fn epoch_slots(&self) -> u64 {
        FabricSchedule::epoch_slots(self)
    }
    fn peer(&self, slot: Slot, node: NodeId, channel: ChannelId) -> Option<NodeId> {
        FabricSchedule::peer(self, slot, node, channel)
    }
    fn from(&self, slot: Slot, node: NodeId, channel: ChannelId) -> Option<NodeId> {
        FabricSchedule::from(self, slot, node, channel)
    }
    fn slot_of(&self, src: NodeId, dst: NodeId) -> Option<(Slot, ChannelId)> {
        FabricSchedule::slot_of(self, src, dst)
    }
    fn min_turnaround(&self) -> u32 {
        FabricSchedule::min_turnaround(self)
    }
}

impl SwitchView for Clos {
    fn shape(&self) -> ClosShape {
        *Clos::shape(self)
    }
    fn plane_port_maps(&self, plane: ChannelId, slot: Slot) -> PlanePortMaps {
        Clos::plane_port_maps(self, plane, slot)
    }
    fn path(&self, slot: Slot, channel: ChannelId, src: NodeId) -> Option<Path> {
        Clos::path(self, slot, channel, src)
    }
}

const UNSERVED: u32 = u32::MAX;

pub(crate) fn verify_views(
    fabric: &impl FabricView,
    switches: &impl SwitchView,
) -> Result<Verdict, Violation> {
    let n = fabric.nodes();
    let c = fabric.channels();
    let shape = switches.shape();
    if shape.nodes() != n {
        return Err(Violation::ShapeMismatch {
            what: "nodes",
            schedule: n,
            clos: shape.nodes(),
        });
    }
    if shape.planes() != c {
        return Err(Violation::ShapeMismatch {
            what: "channels (planes)",
            schedule: c,
            clos: shape.planes(),
        });
    }
    let arrangement = fabric.arrangement();
    // Columns per epoch, restated here rather than asked of `Arrangement`: N - 1, plus one for
    // the virtual node of the propagation-aware arrangement with an even N.
    let columns = match arrangement {
        Arrangement::PropagationAware if n.is_multiple_of(2) => n,
        _ => n - 1,
    };
    let expected_epoch = columns.div_ceil(c) as u64;
    let epoch = fabric.epoch_slots();
    if epoch != expected_epoch {
        return Err(Violation::EpochLength {
            arrangement,
            nodes: n,
            channels: c,
            expected: expected_epoch,
            actual: epoch,
        });
    }

    let served = scan_fabric(fabric, n, c, epoch)?;
    let min_turnaround = check_turnaround(fabric, &served, n, c, epoch)?;
    let (traced, port_slot_checks) = check_switches(fabric, switches, &shape, epoch)?;

    Ok(Verdict {
        nodes: n,
        channels: c,
        slots: epoch,
        pairs_checked: (n * (n - 1)) as u64,
        transmissions_traced: traced,
        switches: (c * shape.switches_per_plane()) as u64,
        port_slot_checks,
        min_turnaround,
        delay_slots: fabric.delay_slots(),
    })
}

fn at(position: u32, c: usize) -> (Slot, ChannelId) {
    let p = position as usize;
    (Slot((p / c) as u64), ChannelId((p % c) as u8))
}

/// Checks every (slot, channel) is a partial injection without self-loops and every ordered pair
/// is served exactly once; returns, per pair `src * N + dst`, the position that serves it.
fn scan_fabric(
    fabric: &impl FabricView,
    n: usize,
    c: usize,
    epoch: u64,
) -> Result<Vec<u32>, Violation> {
    let mut served = vec![UNSERVED; n * n];
    let mut sender_of: Vec<Option<NodeId>> = vec![None; n];
    for s in 0..epoch {
        let slot = Slot(s);
        for ch in 0..c {
            let channel = ChannelId(ch as u8);
            let position = (s as usize * c + ch) as u32;
            sender_of.fill(None);
            for i in 0..n {
                let src = NodeId(i as u16);
                let Some(dst) = fabric.peer(slot, src, channel) else {
                    continue;
                };
                if dst.idx() >= n {
                    return Err(Violation::PeerOutOfRange {
                        slot,
                        channel,
                        src,
                        dst,
                    });
                }
                if dst == src {
                    return Err(Violation::SelfTransmission {
                        slot,
                        channel,
                        node: src,
                    });
                }
                if let Some(first) = sender_of[dst.idx()] {
                    return Err(Violation::ReceivesTwice {
                        slot,
                        channel,
                        receiver: dst,
                        first,
                        second: src,
                    });
                }
                sender_of[dst.idx()] = Some(src);
                let pair = &mut served[i * n + dst.idx()];
                if *pair != UNSERVED {
                    return Err(Violation::PairServedTwice {
                        src,
                        dst,
                        first: at(*pair, c),
                        second: (slot, channel),
                    });
                }
                *pair = position;
            }
            for (j, &expected) in sender_of.iter().enumerate() {
                let node = NodeId(j as u16);
                let reported = fabric.from(slot, node, channel);
                if reported != expected {
                    return Err(Violation::FromDisagrees {
                        slot,
                        channel,
                        node,
                        expected,
                        reported,
                    });
                }
            }
        }
    }
    for i in 0..n {
        for j in 0..n {
            if i != j && served[i * n + j] == UNSERVED {
                return Err(Violation::PairMissing {
                    src: NodeId(i as u16),
                    dst: NodeId(j as u16),
                });
            }
        }
    }
    Ok(served)
}

/// Measures the minimum slot distance from `i -> j` to `j -> i`, checks `slot_of` and the
/// schedule's own claim against it, and checks it absorbs the requested delay.
fn check_turnaround(
    fabric: &impl FabricView,
    served: &[u32],
    n: usize,
    c: usize,
    epoch: u64,
) -> Result<u32, Violation> {
    let mut min: Option<(u32, NodeId, NodeId)> = None;
    for i in 0..n {
        for j in 0..n {
            if i == j {
                continue;
            }
            let (src, dst) = (NodeId(i as u16), NodeId(j as u16));
            let there = at(served[i * n + j], c);
            let reported = fabric.slot_of(src, dst);
            if reported != Some(there) {
                return Err(Violation::SlotOfDisagrees {
                    src,
                    dst,
                    served: there,
                    reported,
                });
            }
            let back = at(served[j * n + i], c);
            let t = ((back.0.0 + epoch - there.0.0) % epoch) as u32;
            if min.is_none_or(|(m, _, _)| t < m) {
                min = Some((t, src, dst));
            }
        }
    }
    let (measured, src, dst) = min.unwrap_or((0, NodeId(0), NodeId(0)));
    let reported = fabric.min_turnaround();
    if reported != measured {
        return Err(Violation::TurnaroundMisreported { reported, measured });
    }
    if let Some(delay_slots) = fabric.delay_slots()
        && measured < delay_slots
    {
        return Err(Violation::TurnaroundTooShort {
            src,
            dst,
            turnaround: measured,
            delay_slots,
        });
    }
    Ok(measured)
}

/// Checks every switch map and pushes every transmission through them. Returns the number of
/// transmissions traced and of (switch, port, slot) checks.
fn check_switches(
    fabric: &impl FabricView,
    switches: &impl SwitchView,
    shape: &ClosShape,
    epoch: u64,
) -> Result<(u64, u64), Violation> {
    let n = shape.nodes();
    let k = shape.ports();
    let h = shape.nodes_per_leaf();
    let leaves = shape.leaves();
    let per_plane = shape.switches_per_plane();
    // used[switch * k + input]: a traced cell crossed this circuit.
    let mut used = vec![false; per_plane * k];
    let mut driven: Vec<Option<PortId>> = vec![None; k];
    let mut traced = 0u64;
    let mut port_slot_checks = 0u64;
    for s in 0..epoch {
        let slot = Slot(s);
        for ch in 0..shape.planes() {
            let plane = ChannelId(ch as u8);
            let maps = switches.plane_port_maps(plane, slot);
            let map_of = |kind: SwitchKind| maps.get(kind);
            // Every switch must have a map of the right size, injective, obeying the stages.
            for idx in 0..per_plane {
                let kind = switch_kind(idx, leaves);
                let switch = SwitchId { plane, kind };
                let Some(map) = map_of(kind) else {
                    return Err(Violation::PortMapSize {
                        switch,
                        slot,
                        expected: k,
                        actual: 0,
                    });
                };
                if map.ports() != k {
                    return Err(Violation::PortMapSize {
                        switch,
                        slot,
                        expected: k,
                        actual: map.ports(),
                    });
                }
                driven.fill(None);
                for (input, output) in map.connections() {
                    if output.idx() >= k {
                        return Err(Violation::PortOutOfRange {
                            switch,
                            slot,
                            input,
                            output,
                        });
                    }
                    if let Some(first) = driven[output.idx()] {
                        return Err(Violation::OutputUsedTwice {
                            switch,
                            slot,
                            output,
                            first,
                            second: input,
                        });
                    }
                    driven[output.idx()] = Some(input);
                    if matches!(kind, SwitchKind::Leaf(_))
                        && (input.idx() < h) == (output.idx() < h)
                    {
                        return Err(Violation::WrongStage {
                            switch,
                            slot,
                            input,
                            output,
                        });
                    }
                }
                port_slot_checks += k as u64;
            }

            used.fill(false);
            for i in 0..n {
                let src = NodeId(i as u16);
                let expected = fabric.peer(slot, src, plane);
                let hops = trace(&maps, shape, slot, plane, src, expected, &mut used)?;
                let published = switches.path(slot, plane, src);
                let matches = match (&published, &hops) {
                    (None, None) => true,
                    (Some(p), Some(t)) => p == t,
                    _ => false,
                };
                if !matches {
                    return Err(Violation::PathDisagrees {
                        slot,
                        channel: plane,
                        src,
                        published,
                        traced: hops,
                    });
                }
                traced += u64::from(hops.is_some());
            }
            // Every circuit must have carried a traced cell: no dangling connections.
            for idx in 0..per_plane {
                let kind = switch_kind(idx, leaves);
                let Some(map) = map_of(kind) else { continue };
                for (input, output) in map.connections() {
                    if !used[idx * k + input.idx()] {
                        let switch = SwitchId { plane, kind };
                        return Err(Violation::DanglingCircuit {
                            switch,
                            slot,
                            input,
                            output,
                        });
                    }
                }
            }
        }
    }
    Ok((traced, port_slot_checks))
}

/// Switch index within a plane: leaves `0..L`, then spines.
fn switch_kind(idx: usize, leaves: usize) -> SwitchKind {
    if idx < leaves {
        SwitchKind::Leaf(LeafId(idx as u16))
    } else {
        SwitchKind::Spine(SpineId((idx - leaves) as u16))
    }
}

/// Follows `src`'s cell node -> leaf -> spine -> leaf -> node through the port maps, with the
/// verifier's own wiring rules, marking the circuits it crosses.
fn trace(
    maps: &PlanePortMaps,
    shape: &ClosShape,
    slot: Slot,
    plane: ChannelId,
    src: NodeId,
    expected: Option<NodeId>,
    used: &mut [bool],
) -> Result<Option<Path>, Violation> {
    let k = shape.ports();
    let h = shape.nodes_per_leaf();
    let m = shape.links_per_leaf_spine();
    let leaves = shape.leaves();
    let channel = plane;

    let src_leaf = LeafId((src.idx() / h) as u16);
    let src_port = PortId((src.idx() % h) as u16);
    let leaf_switch = SwitchId::leaf(plane, src_leaf);
    let first = maps
        .get(leaf_switch.kind)
        .and_then(|map| map.output(src_port));
    let Some(expected) = expected else {
        if first.is_some() {
            return Err(Violation::IdleConnected {
                slot,
                channel,
                src,
                switch: leaf_switch,
                port: src_port,
            });
        }
        return Ok(None);
    };
    let broken = |switch, port| Violation::PathBroken {
        slot,
        channel,
        src,
        expected,
        switch,
        port,
    };
    let Some(up) = first else {
        return Err(broken(leaf_switch, src_port));
    };
    used[src_leaf.idx() * k + src_port.idx()] = true;
    // Stage rules were checked already, so `up` faces a spine.
    let uplink = up.idx() - h;
    let spine = SpineId((uplink / m) as u16);
    let link = uplink % m;
    let spine_in = PortId((src_leaf.idx() * m + link) as u16);
    let spine_switch = SwitchId::spine(plane, spine);
    let Some(spine_out) = maps
        .get(spine_switch.kind)
        .and_then(|map| map.output(spine_in))
    else {
        return Err(broken(spine_switch, spine_in));
    };
    used[(leaves + spine.idx()) * k + spine_in.idx()] = true;
    let dst_leaf = spine_out.idx() / m;
    if dst_leaf >= leaves {
        return Err(Violation::LeadsNowhere {
            slot,
            channel,
            src,
            switch: spine_switch,
            port: spine_out,
        });
    }
    let dst_leaf = LeafId(dst_leaf as u16);
    let dst_up = PortId((h + spine.idx() * m + spine_out.idx() % m) as u16);
    let dst_switch = SwitchId::leaf(plane, dst_leaf);
    let Some(dst_port) = maps.get(dst_switch.kind).and_then(|map| map.output(dst_up)) else {
        return Err(broken(dst_switch, dst_up));
    };
    used[dst_leaf.idx() * k + dst_up.idx()] = true;
    let reached = dst_leaf.idx() * h + dst_port.idx();
    if reached >= shape.nodes() {
        return Err(Violation::LeadsNowhere {
            slot,
            channel,
            src,
            switch: dst_switch,
            port: dst_port,
        });
    }
    let reached = NodeId(reached as u16);
    if reached != expected {
        return Err(Violation::Misdelivered {
            slot,
            channel,
            src,
            expected,
            reached,
        });
    }
    Ok(Some(Path {
        plane,
        src,
        src_leaf,
        src_port,
        uplink: uplink as u16,
        spine,
        link: link as u16,
        spine_in,
        spine_out,
        dst_leaf,
        dst_port,
        dst: reached,
    }))
}

#[cfg(test)]
mod tests;
