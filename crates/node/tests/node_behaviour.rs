//! Behaviour of Shoal nodes driven together in virtual time (tests/harness): delivery, queue
//! bounds, throughput, failures, corruption and priorities.

mod harness;

use harness::MiniRack;
use shoal_base::NodeId;
use shoal_node::{Event, Kind};

/// Packets reassembled from a delivery stream: (total bytes, packet count), checking that start
/// and end of packet alternate properly.
fn packets(rack: &MiniRack, src: usize, dst: usize) -> (u64, usize) {
    let mut open = false;
    let mut count = 0;
    let mut bytes = 0;
    for d in rack.delivered[dst].iter().filter(|d| d.src.idx() == src) {
        assert_eq!(d.sop, !open, "start-of-packet out of place");
        open = !d.eop;
        if d.eop {
            count += 1;
        }
        bytes += d.len as u64;
    }
    assert!(!open, "last packet incomplete");
    (bytes, count)
}

#[test]
fn a_single_flow_arrives_whole_and_in_packet_order() {
    let mut rack = MiniRack::new(8, 1, |_| {});
    rack.submit(0, 5, 100_000);
    let end = rack.run_until_quiet(100_000);
    assert!(end < 100_000, "flow did not finish");
    assert_eq!(packets(&rack, 0, 5), (100_000, 100_000usize.div_ceil(1500)));
    // Every cell but the last of each packet is full.
    let cells = rack.delivered[5].len();
    assert_eq!(cells, 66 * 27 + (100_000 - 66 * 1500usize).div_ceil(56));
}

#[test]
fn incast_queues_hold_one_local_and_one_cell_per_remote_sender() {
    // Seven senders of seven cells each to node 0 (Fig. 10): every intermediate's queue for 0
    // holds its own cell plus one from each of the six other senders.
    let mut rack = MiniRack::new(8, 1, |_| {});
    for s in 1..8 {
        rack.submit(s, 0, 7 * 56);
    }
    rack.run_until_quiet(10_000);
    for s in 1..8 {
        assert_eq!(rack.bytes(s, 0), 7 * 56);
    }
    // Whether the own cell leaves before the last remote one arrives depends on the slot order;
    // the prototype's long latency gives 7 (Fig. 10), this schedule with one slot of delay 6.
    let max_queue = rack
        .nodes
        .iter()
        .map(|x| x.stats().max_queue)
        .max()
        .unwrap();
    assert!(
        (6..=7).contains(&max_queue),
        "Eq. 5: len(Q_j0) <= 1 + 6 remote senders, got {max_queue}"
    );
}

#[test]
fn a_short_flow_detours_through_the_nodes_it_connects_to_next() {
    // §3.2: cells are "sent to the next node the source is connected to". A flow of four cells
    // submitted at slot 5 of a 16-node rack (node 0 meets node 1 + (s mod 15) in slot s) goes
    // out to nodes 6, 7 and 8 and straight to its destination 9, in four consecutive slots;
    // it must not favour low-numbered intermediates (1, 2, 3), or every short flow in the rack
    // would queue at the same few nodes.
    // Submitted at slot 13 instead, the next four connections are 14, 15, 1 and 2.
    for (at, hops) in [(5, vec![6, 7, 8]), (13, vec![1, 2, 14, 15])] {
        let mut rack = MiniRack::new(16, 1, |_| {});
        rack.run(at);
        rack.submit(0, 9, 4 * 56);
        rack.run_until_quiet(1_000);
        assert_eq!(rack.bytes(0, 9), 4 * 56);
        let carried: Vec<usize> = (0..16)
            .filter(|&j| rack.nodes[j].stats().transit_cells > 0)
            .collect();
        assert_eq!(
            carried, hops,
            "intermediates of a flow submitted at slot {at}"
        );
    }
}

#[test]
fn full_permutation_reaches_its_max_min_share() {
    // Every node sends a long flow to node i+3. Each virtual link carries one cell per epoch.
    // A flow's direct subflow has its link to itself; each of its N−2 detoured subflows shares
    // both of its links with exactly one other subflow. The max-min share is therefore
    // (1 + (N−2)/2) / (N−1) = N / (2(N−1)) cells per slot: 4/7 for N = 8, tending to the
    // paper's one half (§6.2, §7.2) as N grows.
    let n = 8;
    let mut rack = MiniRack::new(n, 1, |_| {});
    for i in 0..n {
        rack.submit(i, (i + 3) % n, 10_000_000);
    }
    rack.run(2_000);
    let before: Vec<usize> = rack.delivered.iter().map(Vec::len).collect();
    rack.run(7_000);
    let share = n as f64 / (2.0 * (n - 1) as f64);
    for (d, b) in rack.delivered.iter().zip(&before) {
        let rate = (d.len() - b) as f64 / 7_000.0;
        assert!(
            (rate - share).abs() < 0.01,
            "destination rate {rate} cells/slot, max-min {share}"
        );
    }
    assert_eq!(
        rack.nodes.iter().map(|x| x.stats().max_queue).max(),
        Some(2)
    );
}

#[test]
fn a_dead_node_is_detected_by_all_within_an_epoch_and_others_finish() {
    let n = 8;
    // A failure makes slots carry notices and rerouted cells that no feedback foresaw, so the
    // per-subflow queue bound is not checked here (§3.5 promises it only without failures).
    let mut rack = MiniRack::new(n, 1, |c| c.check_bounds = false);
    for i in 0..n {
        rack.submit(i, (i + 1) % n, 20_000);
    }
    rack.run(30);
    rack.dead[3] = true;
    rack.run((n as u64 - 1) + 2);
    let saw: Vec<usize> = rack
        .events
        .iter()
        .filter(|(_, e)| *e == Event::PeerFailed(NodeId(3)))
        .map(|(i, _)| *i)
        .collect();
    assert_eq!(saw.len(), n - 1, "every live node detects node 3: {saw:?}");
    // Silence alone could be a broken path, so node 2 keeps sending its flow to 3 through the
    // others until they report 3 unreachable too; they discard what reaches them for 3. Either
    // way the rack falls quiet: nothing keeps trying to reach the dead node.
    let end = rack.run_until_quiet(200_000);
    assert!(end < 200_000, "the rack never fell quiet");
    assert!(rack.bytes(2, 3) < 20_000);
    for i in 0..n {
        let dst = (i + 1) % n;
        if i == 3 || dst == 3 || i == 2 {
            continue;
        }
        // Cells that sat at node 3 when it died are lost (the transport above recovers them),
        // so flows may miss a few cells, but nothing is delivered twice or out of order.
        let (bytes, _) = packets(&rack, i, dst);
        assert!(bytes <= 20_000);
        assert!(
            bytes >= 20_000 - 56 * 2,
            "flow {i}->{dst} lost {} bytes",
            20_000 - bytes
        );
    }
}

#[test]
fn a_cut_path_makes_both_ends_stop_and_everyone_else_route_around_it() {
    let n = 8;
    let mut rack = MiniRack::new(n, 1, |c| c.check_bounds = false);
    rack.cut.push((2, 5));
    // Detection, symmetric silence and notices all settle within a few epochs.
    rack.run(6 * (n as u64 - 1));
    assert!(rack.events.contains(&(5, Event::PeerFailed(NodeId(2)))));
    assert!(rack.events.contains(&(2, Event::PeerFailed(NodeId(5)))));
    assert!(
        rack.nodes
            .iter()
            .all(|x| x.stats().notices_sent > 0 || x.id().idx() != 2)
    );
    for i in 0..n {
        for k in 0..n {
            if i != k && !(i == 2 && k == 5) && !(i == 5 && k == 2) {
                rack.submit(i, k, 5_000);
            }
        }
    }
    rack.run_until_quiet(200_000);
    for i in 0..n {
        for k in 0..n {
            if i != k && !(i == 2 && k == 5) && !(i == 5 && k == 2) {
                assert_eq!(packets(&rack, i, k).0, 5_000, "flow {i}->{k}");
            }
        }
    }
    let discarded: u64 = rack
        .nodes
        .iter()
        .map(|x| x.stats().discarded_for_failure)
        .sum();
    assert_eq!(
        discarded, 0,
        "after the notices nobody detours cells over the cut"
    );
}

#[test]
fn corrupted_cells_are_retransmitted_and_delivered_exactly_once() {
    // App. D needs the peer's reply to come back before our next cell to it (the turnaround of
    // App. A); the plain cyclic schedule gives that for odd N only.
    let n = 7;
    let mut rack = MiniRack::new(n, 1, |c| c.check_bounds = false);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    rack.corrupt = Box::new(move |_, _, _| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x.is_multiple_of(100)
    });
    for i in 0..n {
        rack.submit(i, (i + 5) % n, 50_000);
    }
    rack.run_until_quiet(500_000);
    for i in 0..n {
        assert_eq!(packets(&rack, i, (i + 5) % n).0, 50_000);
    }
    let corrupt: u64 = rack.nodes.iter().map(|x| x.stats().corrupt_received).sum();
    let resent: u64 = rack.nodes.iter().map(|x| x.stats().retransmissions).sum();
    assert!(
        corrupt > 50,
        "the test must actually corrupt cells ({corrupt})"
    );
    assert!(resent > 0);
}

#[test]
fn the_high_class_is_not_slowed_by_low_class_load() {
    let n = 8;
    let alone = {
        let mut rack = MiniRack::new(n, 1, |c| c.classes = 2);
        rack.nodes[1]
            .submit(0, NodeId(0), 0, 20_000, 1500, ())
            .unwrap();
        rack.run_until_quiet(100_000)
    };
    let mut rack = MiniRack::new(n, 1, |c| c.classes = 2);
    for s in 2..n {
        rack.nodes[s]
            .submit(0, NodeId(0), 1, 5_000_000, 1500, ())
            .unwrap();
    }
    rack.nodes[1]
        .submit(0, NodeId(0), 0, 20_000, 1500, ())
        .unwrap();
    let mut done = None;
    for _ in 0..100_000 {
        rack.step();
        if rack.bytes(1, 0) == 20_000 {
            done = Some(rack.slot);
            break;
        }
    }
    let done = done.expect("high-class flow finished");
    assert!(
        done as f64 <= alone as f64 * 1.5 + 20.0,
        "class 0 took {done} slots under class 1 load, {alone} alone"
    );
}

#[test]
fn every_slot_carries_a_cell_even_without_traffic() {
    let mut rack = MiniRack::new(5, 1, |_| {});
    let f = rack.nodes[0].poll_tx(0, NodeId(1)).expect("a frame");
    assert_eq!(f.cell.kind, Kind::Idle);
    assert_eq!(f.cell.src, NodeId(0));
    rack.run(20);
    assert!(
        rack.events.is_empty(),
        "no failure is detected in a healthy idle rack"
    );
}
