//! Corrupted schedules and port maps the verifier must reject, fed through its views.

use super::*;
use crate::fabric::FabricSpec;
use crate::portmap::PortMap;

fn fabric(nodes: usize, arrangement: Arrangement) -> (FabricSchedule, Clos) {
    let spec = FabricSpec {
        nodes,
        channels: 1,
        arrangement,
        delay_slots: None,
    };
    let schedule = FabricSchedule::new(spec).unwrap();
    let clos = Clos::new(&schedule, 4).unwrap();
    (schedule, clos)
}

const CH: ChannelId = ChannelId(0);

/// A fabric schedule with some peers (and optionally the `from` answers or the claimed delay)
/// replaced. Its `from` is recomputed from the patched peers unless patched itself, so that
/// each test hits exactly the defect it plants.
struct Corrupt<'a> {
    inner: &'a FabricSchedule,
    peers: Vec<(Slot, NodeId, Option<NodeId>)>,
    froms: Vec<(Slot, NodeId, Option<NodeId>)>,
    delay_slots: Option<u32>,
    epoch_slots: Option<u64>,
}

impl<'a> Corrupt<'a> {
    fn new(inner: &'a FabricSchedule) -> Corrupt<'a> {
        Corrupt {
            inner,
            peers: vec![],
            froms: vec![],
            delay_slots: None,
            epoch_slots: None,
        }
    }
}

impl FabricView for Corrupt<'_> {
    fn nodes(&self) -> usize {
        self.inner.nodes()
    }
    fn channels(&self) -> usize {
        self.inner.channels()
    }
    fn arrangement(&self) -> Arrangement {
        self.inner.arrangement()
    }
    fn delay_slots(&self) -> Option<u32> {
        self.delay_slots.or(self.inner.delay_slots())
    }
    fn epoch_slots(&self) -> u64 {
        self.epoch_slots.unwrap_or(self.inner.epoch_slots())
    }
    fn peer(&self, slot: Slot, node: NodeId, channel: ChannelId) -> Option<NodeId> {
        match self.peers.iter().find(|&&(s, n, _)| s == slot && n == node) {
            Some(&(_, _, p)) => p,
            None => self.inner.peer(slot, node, channel),
        }
    }
    fn from(&self, slot: Slot, node: NodeId, channel: ChannelId) -> Option<NodeId> {
        if let Some(&(_, _, f)) = self.froms.iter().find(|&&(s, n, _)| s == slot && n == node) {
            return f;
        }
        self.inner
            .node_ids()
            .find(|&i| self.peer(slot, i, channel) == Some(node))
    }
    fn slot_of(&self, src: NodeId, dst: NodeId) -> Option<(Slot, ChannelId)> {
        self.inner.slot_of(src, dst)
    }
    fn min_turnaround(&self) -> u32 {
        self.inner.min_turnaround()
    }
}

/// A Clos whose port maps (or published paths) are edited before the verifier sees them.
struct Rewired<'a, F: Fn(Slot, &mut PlanePortMaps)> {
    clos: &'a Clos,
    edit: F,
    hide_path_of: Option<NodeId>,
}

impl<F: Fn(Slot, &mut PlanePortMaps)> SwitchView for Rewired<'_, F> {
    fn shape(&self) -> ClosShape {
        *self.clos.shape()
    }
    fn plane_port_maps(&self, plane: ChannelId, slot: Slot) -> PlanePortMaps {
        let mut maps = self.clos.plane_port_maps(plane, slot);
        (self.edit)(slot, &mut maps);
        maps
    }
    fn path(&self, slot: Slot, channel: ChannelId, src: NodeId) -> Option<Path> {
        if self.hide_path_of == Some(src) {
            return None;
        }
        self.clos.path(slot, channel, src)
    }
}

fn rewired<F: Fn(Slot, &mut PlanePortMaps)>(clos: &Clos, edit: F) -> Rewired<'_, F> {
    Rewired {
        clos,
        edit,
        hide_path_of: None,
    }
}

fn leaf(l: u16) -> SwitchKind {
    SwitchKind::Leaf(LeafId(l))
}

fn spine(s: u16) -> SwitchKind {
    SwitchKind::Spine(SpineId(s))
}

#[test]
fn the_untouched_fabric_is_accepted_through_the_views() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let verdict = verify_views(&Corrupt::new(&schedule), &rewired(&clos, |_, _| {})).unwrap();
    assert_eq!(verdict.pairs_checked, 56);
    assert_eq!(verdict.transmissions_traced, 56);
    assert_eq!(verdict.switches, 6);
    assert_eq!(verdict.port_slot_checks, 6 * 4 * 7);
}

#[test]
fn a_node_receiving_twice_is_rejected() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let mut bad = Corrupt::new(&schedule);
    // Slot 0 is the shift by one: node 1 already sends to node 2.
    bad.peers.push((Slot(0), NodeId(0), Some(NodeId(2))));
    let err = verify_views(&bad, &clos).unwrap_err();
    assert_eq!(
        err,
        Violation::ReceivesTwice {
            slot: Slot(0),
            channel: CH,
            receiver: NodeId(2),
            first: NodeId(0),
            second: NodeId(1)
        }
    );
    assert!(
        err.to_string().contains("receives from both n0 and n1"),
        "{err}"
    );
}

#[test]
fn a_pair_served_twice_is_rejected() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let mut bad = Corrupt::new(&schedule);
    // Still a permutation in slot 0 (0 -> 3, 2 -> 1), but 0 -> 3 comes again in slot 2.
    bad.peers.push((Slot(0), NodeId(0), Some(NodeId(3))));
    bad.peers.push((Slot(0), NodeId(2), Some(NodeId(1))));
    let err = verify_views(&bad, &clos).unwrap_err();
    assert_eq!(
        err,
        Violation::PairServedTwice {
            src: NodeId(0),
            dst: NodeId(3),
            first: (Slot(0), CH),
            second: (Slot(2), CH)
        }
    );
}

#[test]
fn a_missing_pair_is_rejected() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let mut bad = Corrupt::new(&schedule);
    bad.peers.push((Slot(3), NodeId(5), None));
    let err = verify_views(&bad, &clos).unwrap_err();
    assert_eq!(
        err,
        Violation::PairMissing {
            src: NodeId(5),
            dst: NodeId(1)
        }
    );
}

#[test]
fn a_self_transmission_and_an_unknown_peer_are_rejected() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let mut bad = Corrupt::new(&schedule);
    bad.peers.push((Slot(1), NodeId(4), Some(NodeId(4))));
    assert!(matches!(
        verify_views(&bad, &clos),
        Err(Violation::SelfTransmission {
            node: NodeId(4),
            ..
        })
    ));
    let mut bad = Corrupt::new(&schedule);
    bad.peers.push((Slot(1), NodeId(4), Some(NodeId(9))));
    assert!(matches!(
        verify_views(&bad, &clos),
        Err(Violation::PeerOutOfRange { dst: NodeId(9), .. })
    ));
}

#[test]
fn a_wrong_from_answer_is_rejected() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let mut bad = Corrupt::new(&schedule);
    bad.froms.push((Slot(2), NodeId(6), Some(NodeId(1))));
    let err = verify_views(&bad, &clos).unwrap_err();
    assert_eq!(
        err,
        Violation::FromDisagrees {
            slot: Slot(2),
            channel: CH,
            node: NodeId(6),
            expected: Some(NodeId(3)),
            reported: Some(NodeId(1))
        }
    );
}

#[test]
fn a_wrong_epoch_is_rejected() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let mut bad = Corrupt::new(&schedule);
    bad.epoch_slots = Some(8);
    assert!(matches!(
        verify_views(&bad, &clos),
        Err(Violation::EpochLength {
            expected: 7,
            actual: 8,
            ..
        })
    ));
}

#[test]
fn a_delay_the_schedule_cannot_absorb_is_rejected() {
    let (schedule, clos) = fabric(7, Arrangement::PropagationAware);
    let mut bad = Corrupt::new(&schedule);
    bad.delay_slots = Some(4);
    let err = verify_views(&bad, &clos).unwrap_err();
    assert!(
        matches!(
            err,
            Violation::TurnaroundTooShort {
                turnaround: 3,
                delay_slots: 4,
                ..
            }
        ),
        "{err}"
    );
    bad.delay_slots = Some(3);
    assert!(verify_views(&bad, &clos).is_ok());
}

#[test]
fn a_port_used_twice_is_rejected() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let bad = rewired(&clos, |slot, maps| {
        if slot == Slot(0) {
            let map = maps.get_mut(leaf(0));
            let up = map.output(PortId(0)).unwrap();
            map.connect(PortId(1), up);
        }
    });
    let err = verify_views(&schedule, &bad).unwrap_err();
    assert!(
        matches!(
            err,
            Violation::OutputUsedTwice {
                slot: Slot(0),
                first: PortId(0),
                second: PortId(1),
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn swapped_spine_circuits_are_a_composition_mismatch() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let bad = rewired(&clos, |slot, maps| {
        if slot == Slot(4) {
            let map = maps.get_mut(spine(1));
            let c: Vec<(PortId, PortId)> = map.connections().collect();
            map.connect(c[0].0, c[1].1);
            map.connect(c[1].0, c[0].1);
        }
    });
    let err = verify_views(&schedule, &bad).unwrap_err();
    assert!(
        matches!(err, Violation::Misdelivered { slot: Slot(4), .. }),
        "{err}"
    );
}

#[test]
fn a_missing_circuit_breaks_the_path() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let bad = rewired(&clos, |slot, maps| {
        if slot == Slot(2) {
            maps.get_mut(leaf(3)).disconnect(PortId(1));
        }
    });
    let err = verify_views(&schedule, &bad).unwrap_err();
    assert!(
        matches!(
            err,
            Violation::PathBroken {
                src: NodeId(7),
                port: PortId(1),
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_hairpin_inside_a_leaf_is_rejected() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let bad = rewired(&clos, |slot, maps| {
        if slot == Slot(0) {
            maps.get_mut(leaf(0)).connect(PortId(0), PortId(1));
        }
    });
    let err = verify_views(&schedule, &bad).unwrap_err();
    assert!(matches!(err, Violation::WrongStage { .. }), "{err}");
}

#[test]
fn idle_senders_must_be_unconnected_and_circuits_must_carry_cells() {
    let (schedule, clos) = fabric(8, Arrangement::PropagationAware);
    // In slot 0 (offset 1 mod 9) node 7 sends to the virtual node 8 and node 0 hears nobody.
    assert_eq!(schedule.peer(Slot(0), NodeId(7), CH), None);
    assert_eq!(schedule.from(Slot(0), NodeId(0), CH), None);
    let idle = rewired(&clos, |slot, maps| {
        if slot == Slot(0) {
            // Node 7 is down-port 1 of leaf 3; some up-port output of leaf 3 is free.
            let map = maps.get_mut(leaf(3));
            let free = (2..4)
                .map(PortId)
                .find(|&o| map.connections().all(|(_, x)| x != o));
            map.connect(PortId(1), free.unwrap());
        }
    });
    let err = verify_views(&schedule, &idle).unwrap_err();
    assert!(
        matches!(err, Violation::IdleConnected { src: NodeId(7), .. }),
        "{err}"
    );

    let dangling = rewired(&clos, |slot, maps| {
        if slot == Slot(0) {
            // Node 0 (leaf 0, down-port 0) receives nothing, so one up-port input is free.
            let map = maps.get_mut(leaf(0));
            let free = (2..4).map(PortId).find(|&i| map.output(i).is_none());
            map.connect(free.unwrap(), PortId(0));
        }
    });
    let err = verify_views(&schedule, &dangling).unwrap_err();
    assert!(
        matches!(err, Violation::DanglingCircuit { slot: Slot(0), .. }),
        "{err}"
    );
}

#[test]
fn a_wrongly_sized_map_and_a_wrong_published_path_are_rejected() {
    let (schedule, clos) = fabric(8, Arrangement::Cyclic);
    let small = rewired(&clos, |_, maps| {
        *maps.get_mut(spine(0)) = PortMap::unconnected(3)
    });
    assert!(matches!(
        verify_views(&schedule, &small),
        Err(Violation::PortMapSize {
            expected: 4,
            actual: 3,
            ..
        })
    ));
    let hidden = Rewired {
        clos: &clos,
        edit: |_: Slot, _: &mut PlanePortMaps| {},
        hide_path_of: Some(NodeId(5)),
    };
    assert!(matches!(
        verify_views(&schedule, &hidden),
        Err(Violation::PathDisagrees {
            src: NodeId(5),
            published: None,
            ..
        })
    ));
}

#[test]
fn a_clos_built_for_another_schedule_is_rejected() {
    let (schedule, _) = fabric(8, Arrangement::Cyclic);
    let (_, other) = fabric(8, Arrangement::PropagationAware);
    let err = verify(&schedule, &other).unwrap_err();
    assert!(
        matches!(
            err,
            Violation::Misdelivered { .. }
                | Violation::IdleConnected { .. }
                | Violation::PathBroken { .. }
                | Violation::PathDisagrees { .. }
        ),
        "{err}"
    );
    let (seven, _) = fabric(7, Arrangement::Cyclic);
    assert!(matches!(
        verify(&seven, &other),
        Err(Violation::ShapeMismatch { .. })
    ));
}
