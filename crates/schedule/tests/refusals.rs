//! Configurations that cannot be served are refused with a typed error and a clear sentence.

use shoal_schedule::{
    Arrangement, BuildError, Clos, ClosError, FabricSchedule, ScheduleError, VerifiedFabric,
};

mod common;

use common::spec;

#[test]
fn too_few_nodes_or_no_channels() {
    for nodes in [0, 1] {
        let err = FabricSchedule::new(spec(nodes, 1, Arrangement::Cyclic)).unwrap_err();
        assert_eq!(err, ScheduleError::TooFewNodes { nodes });
    }
    let err = FabricSchedule::new(spec(8, 0, Arrangement::Cyclic)).unwrap_err();
    assert_eq!(err, ScheduleError::NoChannels);
    let err = FabricSchedule::new(spec(70_000, 1, Arrangement::Cyclic)).unwrap_err();
    assert!(matches!(
        err,
        ScheduleError::TooManyNodes { max: 65_535, .. }
    ));
    let err = FabricSchedule::new(spec(1000, 257, Arrangement::Cyclic)).unwrap_err();
    assert!(matches!(
        err,
        ScheduleError::TooManyChannels { max: 256, .. }
    ));
}

#[test]
fn more_channels_than_columns() {
    let err = FabricSchedule::new(spec(4, 4, Arrangement::Cyclic)).unwrap_err();
    assert_eq!(
        err,
        ScheduleError::MoreChannelsThanColumns {
            nodes: 4,
            channels: 4,
            columns: 3,
            arrangement: Arrangement::Cyclic
        }
    );
    assert!(err.to_string().contains("use at most 3 channels"), "{err}");
    // The propagation-aware arrangement of an even N has one column more.
    assert!(FabricSchedule::new(spec(4, 4, Arrangement::PropagationAware)).is_ok());
}

#[test]
fn a_delay_too_large_for_cyclic_suggests_propagation_aware() {
    let mut s = spec(9, 1, Arrangement::Cyclic);
    s.delay_slots = Some(3);
    let err = FabricSchedule::new(s).unwrap_err();
    assert_eq!(
        err,
        ScheduleError::DelayTooLarge {
            delay_slots: 3,
            nodes: 9,
            channels: 1,
            arrangement: Arrangement::Cyclic,
            max_absorbed: 1,
            propagation_aware_max: 4
        }
    );
    let text = err.to_string();
    assert!(text.contains("leaves only 1 slot for some pair"), "{text}");
    assert!(
        text.contains("propagation-aware arrangement (Appendix A) absorbs up to 4 slots"),
        "{text}"
    );

    s.arrangement = Arrangement::PropagationAware;
    assert!(FabricSchedule::new(s).is_ok());
    s.delay_slots = Some(5);
    let text = FabricSchedule::new(s).unwrap_err().to_string();
    assert!(
        text.contains("no arrangement of 9 nodes on 1 channel absorbs more than 4 slots"),
        "{text}"
    );
}

#[test]
fn switch_radix_refusals_report_the_numbers() {
    let schedule = FabricSchedule::new(spec(9, 1, Arrangement::Cyclic)).unwrap();
    let err = Clos::new(&schedule, 4).unwrap_err();
    assert_eq!(
        err,
        ClosError::TooManyNodes {
            nodes: 9,
            ports: 4,
            max: 8,
            min_ports: 6
        }
    );
    assert!(
        err.to_string()
            .contains("connects at most k²/2 nodes per plane"),
        "{err}"
    );
    assert_eq!(
        Clos::new(&schedule, 7).unwrap_err(),
        ClosError::OddPorts { ports: 7 }
    );
    assert_eq!(
        Clos::new(&schedule, 2).unwrap_err(),
        ClosError::TooFewPorts { ports: 2 }
    );
    assert!(Clos::new(&schedule, 6).is_ok());

    let err = VerifiedFabric::build(spec(2049, 4, Arrangement::Cyclic), 64).unwrap_err();
    assert!(matches!(
        err,
        BuildError::Clos(ClosError::TooManyNodes { max: 2048, .. })
    ));
}
