//! The verifier accepts every schedule this crate builds: all small racks, and the paper's.

use shoal_schedule::{
    Arrangement, Clos, FabricSchedule, ScheduleError, VerifiedFabric, min_ports_for, verify,
};

mod common;

use common::spec;

#[test]
fn every_small_rack_verifies_on_the_smallest_and_a_larger_radix() {
    let mut verified = 0;
    for nodes in 2..=64 {
        for channels in [1, 2, 4] {
            for arrangement in Arrangement::ALL {
                let schedule = match FabricSchedule::new(spec(nodes, channels, arrangement)) {
                    Ok(s) => s,
                    // Only tiny racks have fewer columns than channels.
                    Err(ScheduleError::MoreChannelsThanColumns { columns, .. }) => {
                        assert!(columns < channels && nodes <= 4);
                        continue;
                    }
                    Err(e) => panic!("{nodes} nodes, {channels} channels: {e}"),
                };
                let k = min_ports_for(nodes);
                for ports in [k, 2 * k + 2] {
                    let clos = Clos::new(&schedule, ports).unwrap();
                    let verdict = verify(&schedule, &clos).unwrap_or_else(|v| {
                        panic!("{nodes} nodes, {channels} ch, {arrangement}, k={ports}: {v}")
                    });
                    assert_eq!(verdict.pairs_checked, (nodes * (nodes - 1)) as u64);
                    assert_eq!(verdict.transmissions_traced, verdict.pairs_checked);
                    assert_eq!(verdict.slots, schedule.epoch_slots());
                    verified += 1;
                }
            }
        }
    }
    assert!(verified > 700, "only {verified} configurations verified");
}

#[test]
fn the_eight_node_prototype_verifies() {
    let f = VerifiedFabric::build(spec(8, 1, Arrangement::Cyclic), 4).unwrap();
    let shape = f.clos().shape();
    assert_eq!(
        (shape.leaves(), shape.spines()),
        (4, 2),
        "Fig. 2: six 4-port switches"
    );
    assert_eq!(f.verdict().switches, 6);
    assert_eq!(f.verdict().slots, 7);
    assert_eq!(
        f.clos().coloured_columns(),
        0,
        "cyclic shifts with h | N need no colouring"
    );
}

#[test]
fn the_512_node_rack_of_section_5_verifies() {
    for arrangement in Arrangement::ALL {
        let f = VerifiedFabric::build(spec(512, 4, arrangement), 64).unwrap();
        assert_eq!(f.verdict().switches, 4 * 24);
        assert_eq!(f.verdict().pairs_checked, 512 * 511);
    }
}

#[test]
fn the_2048_node_rack_verifies_on_one_and_four_channels() {
    for channels in [1, 4] {
        for arrangement in Arrangement::ALL {
            let f = VerifiedFabric::build(spec(2048, channels, arrangement), 64).unwrap();
            let shape = f.clos().shape();
            assert_eq!(
                (shape.leaves(), shape.spines(), shape.links_per_leaf_spine()),
                (64, 32, 1)
            );
            assert_eq!(f.verdict().switches, channels as u64 * 96);
            assert_eq!(f.verdict().transmissions_traced, 2048 * 2047);
        }
    }
}
