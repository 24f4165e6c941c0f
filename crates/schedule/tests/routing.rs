//! Uplink assignment: the fast rule, the edge-colouring fallback, and their properties.

use proptest::prelude::*;
use shoal_base::{ChannelId, NodeId};
use shoal_schedule::{
    Arrangement, Clos, FabricSchedule, LeafId, PortId, Slot, SpineId, SwitchId, VerifiedFabric,
    min_ports_for, verify,
};

mod common;

use common::spec;

/// Within each plane and slot, no source leaf and no destination leaf uses an uplink twice.
fn assert_proper(f: &VerifiedFabric) {
    let sch = f.schedule();
    let shape = f.clos().shape();
    let (h, leaves) = (shape.nodes_per_leaf(), shape.leaves());
    for t in sch.slots() {
        for c in sch.channel_ids() {
            let mut up = vec![false; leaves * h];
            let mut down = vec![false; leaves * h];
            for src in sch.node_ids() {
                let Some(p) = f.clos().path(t, c, src) else {
                    continue;
                };
                let u = p.uplink as usize;
                assert!(!std::mem::replace(&mut up[p.src_leaf.idx() * h + u], true));
                assert!(!std::mem::replace(
                    &mut down[p.dst_leaf.idx() * h + u],
                    true
                ));
            }
        }
    }
}

#[test]
fn propagation_aware_with_even_n_colours_unless_h_divides_n() {
    // With h | N, a leaf's destinations skip the virtual node but still cover at most h
    // consecutive residues mod h, so the fast rule holds; otherwise the fallback is needed.
    for (nodes, ports) in [(8, 4), (12, 6), (32, 8), (512, 64)] {
        let f =
            VerifiedFabric::build(spec(nodes, 1, Arrangement::PropagationAware), ports).unwrap();
        assert_eq!(f.clos().coloured_columns(), 0, "{nodes} nodes");
    }
    for (nodes, ports, channels) in [(10, 6, 1), (22, 8, 2), (500, 64, 4)] {
        let f = VerifiedFabric::build(spec(nodes, channels, Arrangement::PropagationAware), ports)
            .unwrap();
        assert!(f.clos().coloured_columns() > 0, "{nodes} nodes");
        assert_proper(&f);
    }
}

#[test]
fn n_not_a_multiple_of_h_needs_the_colouring_fallback() {
    for (nodes, ports, channels) in [(10, 6, 1), (7, 4, 2), (50, 12, 4), (1000, 64, 4)] {
        let f = VerifiedFabric::build(spec(nodes, channels, Arrangement::Cyclic), ports).unwrap();
        assert!(
            f.clos().coloured_columns() > 0,
            "{nodes} nodes on {ports}-port switches"
        );
        assert_proper(&f);
    }
}

#[test]
fn cyclic_shifts_with_h_dividing_n_take_the_fast_path() {
    for (nodes, ports, channels) in [(8, 4, 1), (12, 6, 2), (512, 64, 4), (2048, 64, 1)] {
        for arrangement in [Arrangement::Cyclic, Arrangement::PropagationAware] {
            if arrangement == Arrangement::PropagationAware && nodes % 2 == 0 {
                continue;
            }
            let schedule = FabricSchedule::new(spec(nodes, channels, arrangement)).unwrap();
            let clos = Clos::new(&schedule, ports).unwrap();
            assert_eq!(clos.coloured_columns(), 0, "{nodes} nodes, {arrangement}");
        }
    }
    let schedule = FabricSchedule::new(spec(15, 1, Arrangement::PropagationAware)).unwrap();
    assert_eq!(
        Clos::new(&schedule, 10).unwrap().coloured_columns(),
        0,
        "h = 5 divides 15"
    );
}

#[test]
fn each_node_receives_through_every_spine_across_the_epoch() {
    // The slot rotation spreads a node's incoming cells over the spines, so that no single spine
    // failure leaves a node deaf on a plane.
    for (nodes, ports, channels) in [(32, 8, 1), (512, 64, 4), (2048, 64, 1)] {
        let f = VerifiedFabric::build(spec(nodes, channels, Arrangement::Cyclic), ports).unwrap();
        let sch = f.schedule();
        let spines = f.clos().shape().spines();
        for c in sch.channel_ids() {
            let mut per_spine = vec![0usize; nodes * spines];
            for t in sch.slots() {
                for src in sch.node_ids() {
                    if let Some(p) = f.clos().path(t, c, src) {
                        per_spine[p.dst.idx() * spines + p.spine.idx()] += 1;
                    }
                }
            }
            for n in 0..nodes {
                let counts = &per_spine[n * spines..(n + 1) * spines];
                let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
                assert!(
                    *lo > 0 && hi - lo <= 1,
                    "{nodes} nodes, node {n}: {counts:?}"
                );
            }
        }
    }
}

#[test]
fn port_maps_and_paths_agree_and_are_deterministic() {
    let build = || VerifiedFabric::build(spec(10, 2, Arrangement::PropagationAware), 6).unwrap();
    let (a, b) = (build(), build());
    for switch in a.clos().switches() {
        for t in a.schedule().slots() {
            assert_eq!(a.clos().port_map(switch, t), b.clos().port_map(switch, t));
        }
    }
    // One hand-checked path of the 8-node prototype: slot 0 is the shift by one, node 1 -> 2.
    let f = VerifiedFabric::build(spec(8, 1, Arrangement::Cyclic), 4).unwrap();
    let p = f.clos().path(Slot(0), ChannelId(0), NodeId(1)).unwrap();
    assert_eq!(
        (p.src_leaf, p.src_port, p.dst_leaf, p.dst_port),
        (LeafId(0), PortId(1), LeafId(1), PortId(0))
    );
    // Uplink = (destination down-port 0 + slot 0) mod 2 = 0: spine 0, ports 0 -> 1.
    assert_eq!(
        (p.uplink, p.spine, p.spine_in, p.spine_out),
        (0, SpineId(0), PortId(0), PortId(1))
    );
    let leaf0 = f
        .clos()
        .port_map(SwitchId::leaf(ChannelId(0), LeafId(0)), Slot(0));
    assert_eq!(leaf0.output(PortId(1)), Some(PortId(2)));
    let spine0 = f
        .clos()
        .port_map(SwitchId::spine(ChannelId(0), SpineId(0)), Slot(7));
    assert_eq!(
        spine0.output(PortId(0)),
        Some(PortId(1)),
        "slot 7 is slot 0 of the next epoch"
    );
    assert_eq!(f.clos().ports(SwitchId::spine(ChannelId(0), SpineId(1))), 4);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn any_valid_configuration_verifies(
        nodes in 2usize..200,
        channels in 1usize..6,
        propagation_aware in any::<bool>(),
        extra_ports in 0usize..4,
    ) {
        let arrangement =
            if propagation_aware { Arrangement::PropagationAware } else { Arrangement::Cyclic };
        prop_assume!(channels <= arrangement.columns(nodes));
        let schedule = FabricSchedule::new(spec(nodes, channels, arrangement)).unwrap();
        let clos = Clos::new(&schedule, min_ports_for(nodes) + 2 * extra_ports).unwrap();
        let verdict = verify(&schedule, &clos);
        prop_assert!(verdict.is_ok(), "{:?}", verdict);
    }
}
