//! Appendix A: how far apart `i -> j` and `j -> i` are, and what that costs.

use shoal_base::{ChannelId, NodeId};
use shoal_schedule::{Arrangement, FabricSchedule, FabricSpec, ScheduleError, Slot};

fn build(nodes: usize, channels: usize, arrangement: Arrangement) -> FabricSchedule {
    FabricSchedule::new(FabricSpec {
        nodes,
        channels,
        arrangement,
        delay_slots: None,
    })
    .unwrap()
}

fn pairs(n: usize) -> impl Iterator<Item = (NodeId, NodeId)> {
    (0..n as u16).flat_map(move |i| {
        (0..n as u16)
            .filter(move |&j| j != i)
            .map(move |j| (NodeId(i), NodeId(j)))
    })
}

#[test]
fn for_odd_n_every_pair_turns_around_in_exactly_half_an_epoch() {
    for nodes in (3..=101).step_by(2) {
        let s = build(nodes, 1, Arrangement::PropagationAware);
        let half = ((nodes - 1) / 2) as u32;
        assert_eq!(s.epoch_slots(), nodes as u64 - 1);
        assert_eq!(s.min_turnaround(), half, "{nodes} nodes");
        for (i, j) in pairs(nodes) {
            assert_eq!(s.turnaround(i, j), Some(half), "{nodes} nodes, {i} -> {j}");
        }
    }
}

#[test]
fn with_c_channels_the_odd_turnaround_is_half_the_columns_divided_by_c_rounded_down() {
    // Pairs stay exactly (N-1)/2 column positions apart; in slots that is floor or ceil of
    // (N-1)/(2C), and the minimum over pairs is the floor.
    for nodes in (3..=101).step_by(2) {
        for channels in 1..=8 {
            let columns = nodes - 1;
            if channels > columns {
                continue;
            }
            let s = build(nodes, channels, Arrangement::PropagationAware);
            assert_eq!(
                s.min_turnaround() as usize,
                (nodes - 1) / 2 / channels,
                "{nodes} nodes on {channels} channels"
            );
        }
    }
}

#[test]
fn for_even_n_the_epoch_has_n_columns_and_each_node_idles_one() {
    for nodes in (2..=100).step_by(2) {
        let s = build(nodes, 1, Arrangement::PropagationAware);
        assert_eq!(s.columns(), nodes);
        assert_eq!(s.epoch_slots(), nodes as u64);
        assert_eq!(s.min_turnaround() as usize, nodes / 2, "{nodes} nodes");
        for n in s.node_ids() {
            let idle_tx = s
                .slots()
                .filter(|&t| s.peer(t, n, ChannelId(0)).is_none())
                .count();
            let idle_rx = s
                .slots()
                .filter(|&t| s.from(t, n, ChannelId(0)).is_none())
                .count();
            assert_eq!((idle_tx, idle_rx), (1, 1), "{nodes} nodes, {n}");
        }
        for channels in [2, 4] {
            if channels > nodes {
                continue;
            }
            let s = build(nodes, channels, Arrangement::PropagationAware);
            assert_eq!(s.epoch_slots(), nodes.div_ceil(channels) as u64);
            for n in s.node_ids() {
                let active = s
                    .slots()
                    .flat_map(|t| s.channel_ids().map(move |c| (t, c)))
                    .filter(|&(t, c)| s.peer(t, n, c).is_some())
                    .count();
                assert_eq!(
                    active,
                    nodes - 1,
                    "{nodes} nodes on {channels} channels, {n}"
                );
            }
        }
    }
}

#[test]
fn cyclic_serves_the_self_inverse_offset_both_ways_in_one_column() {
    for nodes in (2..=64).step_by(2) {
        let s = build(nodes, 1, Arrangement::Cyclic);
        let half = (nodes / 2) as u16;
        for i in 0..nodes as u16 {
            let j = NodeId((i + half) % nodes as u16);
            assert_eq!(s.slot_of(NodeId(i), j), s.slot_of(j, NodeId(i)));
            assert_eq!(
                s.slot_of(NodeId(i), j),
                Some((Slot(u64::from(half) - 1), ChannelId(0)))
            );
        }
        assert_eq!(s.min_turnaround(), 0);
    }
    for nodes in (3..=63).step_by(2) {
        assert_eq!(
            build(nodes, 1, Arrangement::Cyclic).min_turnaround(),
            1,
            "{nodes} nodes"
        );
    }
}

#[test]
fn a_delay_up_to_the_turnaround_is_accepted_and_one_more_is_refused() {
    for nodes in [7, 8, 31, 512] {
        for channels in [1, 4] {
            for arrangement in Arrangement::ALL {
                let max = build(nodes, channels, arrangement).min_turnaround();
                let with = |d| {
                    FabricSchedule::new(FabricSpec {
                        nodes,
                        channels,
                        arrangement,
                        delay_slots: Some(d),
                    })
                };
                assert!(with(max).is_ok());
                let err = with(max + 1).unwrap_err();
                assert!(
                    matches!(
                        err,
                        ScheduleError::DelayTooLarge { max_absorbed, .. } if max_absorbed == max
                    ),
                    "{err}"
                );
            }
        }
    }
}

#[test]
fn slot_of_and_peer_agree() {
    for (nodes, channels, arrangement) in [
        (8, 1, Arrangement::Cyclic),
        (9, 2, Arrangement::PropagationAware),
        (10, 4, Arrangement::PropagationAware),
    ] {
        let s = build(nodes, channels, arrangement);
        for (i, j) in pairs(nodes) {
            let (slot, channel) = s.slot_of(i, j).unwrap();
            assert_eq!(s.peer(slot, i, channel), Some(j));
            assert_eq!(s.from(slot, j, channel), Some(i));
        }
        assert_eq!(s.slot_of(NodeId(0), NodeId(0)), None);
        assert_eq!(s.slot_of(NodeId(0), NodeId(nodes as u16)), None);
    }
}
