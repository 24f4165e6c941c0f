//! The live driver on loopback sockets: the unchanged node, real time, real UDP, the software
//! switch. Slots are generous (hundreds of microseconds) and nothing asserts a wall-clock time, so
//! that a loaded two-core machine passes too; what is asserted are properties that must hold
//! however late the slots run.

use shoal_base::NodeId;
use shoal_live::fabric::RackSpec;
use shoal_live::flows::LiveFlow;
use shoal_live::loopback::{LoopbackResult, LoopbackRun, run_loopback};
use std::time::Duration;

fn flow(id: u32, src: u16, dst: u16, bytes: u64, start_slot: u64) -> LiveFlow {
    LiveFlow {
        id,
        src: NodeId(src),
        dst: NodeId(dst),
        bytes,
        start_slot,
    }
}

fn base(flows: Vec<LiveFlow>) -> LoopbackRun {
    LoopbackRun {
        rack: RackSpec::prototype(),
        slot_ns: 200_000,
        grace_ns: 3_000_000_000,
        flows,
        packet_bytes: 1500,
        corrupt_prob: 0.0,
        seed: 1,
        crash: None,
        timeout: Duration::from_secs(120),
        slots: None,
        dir: None,
        pcap: false,
    }
}

/// Every node sends to the one four places on (a permutation) and node 0 also gets an incast.
fn workload() -> Vec<LiveFlow> {
    let mut flows: Vec<LiveFlow> = (0..8)
        .map(|i| flow(i as u32, i, (i + 4) % 8, 30_000, 5))
        .collect();
    flows.extend((1..4).map(|i| flow(10 + i as u32, i, 0, 6_000, 40)));
    flows
}

fn assert_clean(r: &LoopbackResult) {
    for n in &r.nodes {
        let c = &n.counters;
        assert_eq!(c.violations, 0, "node {}: cells off the schedule", n.id);
        assert_eq!(c.crc_failures, 0, "node {}: corrupt headers", n.id);
        assert_eq!(c.missing, 0, "node {}: cells missing", n.id);
        assert_eq!(c.payload_expired, 0, "node {}", n.id);
        assert_eq!(n.mismatches, 0, "node {}: delivered bytes differ", n.id);
        assert_eq!(n.stats.peers_failed, 0, "node {}", n.id);
    }
    assert_eq!(r.switch.violations, 0);
    assert_eq!(r.switch.stray, 0);
}

#[test]
fn flows_cross_the_live_rack_intact_and_every_cell_follows_the_schedule() {
    let run = base(workload());
    let r = run_loopback(&run).unwrap();
    assert!(r.completed, "flows still running at the timeout");
    assert_clean(&r);
    for rec in &r.records {
        assert_eq!(rec.delivered, rec.flow.bytes, "flow {}", rec.flow.id);
        assert!(rec.finish_slot.is_some());
    }
    // Every cell sent went through the switch and was received: one per node per slot (the
    // propagation-aware schedule idles one slot in eight for an even rack).
    let sent: u64 = r.nodes.iter().map(|n| n.counters.cells_sent).sum();
    let received: u64 = r.nodes.iter().map(|n| n.counters.cells_received).sum();
    // The switch stops once the nodes have: cells of the last slots (at most the delay's two
    // slots of eight nodes) may be on their way when it does, forwarded or not.
    let forwarded = r.switch.forwarded;
    assert!(
        sent >= forwarded && forwarded >= received && sent - received <= 8 * 2,
        "{sent} sent, {forwarded} forwarded, {received} received"
    );
    for n in &r.nodes {
        let idle_slots = n.counters.slot.div_ceil(r.epoch_slots);
        assert!(n.counters.cells_sent + idle_slots >= n.counters.slot);
    }
}

/// §3.5: a node that dies mid-run is detected by every other node in the first of its slots
/// that stays silent, one epoch after its last cell; the others are told, and every flow among
/// the survivors, including those running through the failure, still completes intact.
#[test]
fn a_crashed_node_is_detected_within_an_epoch_and_routed_around() {
    let dead = NodeId(3);
    let survivors: Vec<u16> = (0..8).filter(|&i| i != dead.0).collect();
    let mut flows = Vec::new();
    for (k, &i) in survivors.iter().enumerate() {
        let j = survivors[(k + 2) % survivors.len()];
        // Running when the node dies: some of their cells may be lost with it (§3.5 leaves
        // those to the transport), the rest must arrive intact.
        flows.push(flow(k as u32, i, j, 45_000, 10));
        // Starting after the failure was handled: must complete.
        flows.push(flow(100 + k as u32, j, i, 15_000, 1_000));
    }
    let mut run = base(flows);
    run.grace_ns = 2_000_000_000;
    run.crash = Some((dead, 300));
    run.slots = Some(2_500);
    let r = run_loopback(&run).unwrap();
    let failures: Vec<_> = r
        .nodes
        .iter()
        .flat_map(|n| n.events.iter())
        .filter(|e| matches!(e.what, shoal_live::events::EventKind::PeerFailed { .. }))
        .collect();
    for rec in r.records.iter().filter(|r| r.flow.id >= 100) {
        assert_eq!(
            rec.delivered, rec.flow.bytes,
            "flow {}: {rec:?}\nfailures: {failures:#?}",
            rec.flow.id
        );
    }
    let mut notices = 0;
    for n in r.nodes.iter().filter(|n| n.id != dead) {
        assert_eq!(n.mismatches, 0);
        assert_eq!(n.counters.violations, 0);
        let failed: Vec<_> = n
            .events
            .iter()
            .filter_map(|e| match e.what {
                shoal_live::events::EventKind::PeerFailed { peer, last_heard } => {
                    Some((peer, e.slot, last_heard))
                }
                _ => None,
            })
            .collect();
        assert_eq!(failed.len(), 1, "node {}: {failed:?}", n.id);
        let (peer, slot, last_heard) = failed[0];
        assert_eq!(peer, dead.0, "node {} blamed a live node", n.id);
        let last = last_heard.expect("heard from it before the crash");
        assert!(
            slot > last && slot - last <= r.epoch_slots,
            "{slot} vs {last}"
        );
        assert!(slot >= 300, "detected before the crash");
        notices += n.stats.notices_sent;
    }
    assert!(notices > 0, "nobody told the others");
}

/// App. D: headers corrupted on the link fail the receiver's CRC, every one of them, and the
/// last-cell-dropped retransmission recovers the cells, so every flow still arrives byte for
/// byte.
#[test]
fn corrupted_headers_are_caught_and_recovered() {
    let mut run = base(workload());
    run.corrupt_prob = 0.01;
    run.seed = 7;
    let r = run_loopback(&run).unwrap();
    assert!(r.completed, "flows did not complete under corruption");
    assert!(
        r.switch.corrupted > 10,
        "too few corruptions to mean anything"
    );
    // Every corrupted cell that reached its receiver in its slot failed the CRC there (cells
    // sent in the last `delay` slots before the agreed stop are never received).
    let delay = run.rack.delay_slots as u64;
    let received_corrupt = r
        .switch_events
        .iter()
        .filter(|e| match e.what {
            shoal_live::events::EventKind::InjectedCorruption { sent_slot, to, .. } => {
                sent_slot + delay < r.nodes[to as usize].counters.slot
            }
            _ => false,
        })
        .count() as u64;
    let caught: u64 = r.nodes.iter().map(|n| n.counters.crc_failures).sum();
    assert_eq!(
        caught, received_corrupt,
        "a corrupted header passed the CRC"
    );
    assert!(received_corrupt + 8 >= r.switch.corrupted);
    let resent: u64 = r.nodes.iter().map(|n| n.stats.retransmissions).sum();
    assert!(resent > 0);
    for n in &r.nodes {
        assert_eq!(n.mismatches, 0, "node {}: bytes differ", n.id);
        assert_eq!(n.stats.peers_failed, 0);
    }
    for rec in &r.records {
        assert_eq!(rec.delivered, rec.flow.bytes, "flow {}", rec.flow.id);
    }
}

/// Every cell a node sends and receives lands in its capture, every captured header passes the
/// CRC, and (where tshark is installed) the Lua dissector in the repository reads them all.
#[test]
fn captures_hold_every_cell_and_the_dissector_reads_them() {
    let dir = std::env::temp_dir().join(format!("shoal-live-pcap-{}", std::process::id()));
    let mut run = base(vec![flow(1, 0, 5, 5_000, 2)]);
    run.dir = Some(dir.clone());
    run.pcap = true;
    let r = run_loopback(&run).unwrap();
    assert!(r.completed);
    let pcap = std::fs::read(dir.join("node0/cells.pcap")).unwrap();
    assert_eq!(u32::from_le_bytes(pcap[20..24].try_into().unwrap()), 147);
    let (mut at, mut records, mut data) = (24, 0u64, 0);
    while at < pcap.len() {
        let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        let record = &pcap[at + 16..at + 16 + len];
        let (shim, cell) = shoal_live::datagram::decode(record).unwrap();
        if shim.channel != shoal_live::datagram::BEACON {
            let header = shoal_cell::Header::new_checked(&cell[..8]).unwrap();
            assert!(header.verify_crc(), "record {records}");
            data += (header.payload_len() > 0) as u64;
        }
        records += 1;
        at += 16 + len;
    }
    let c = &r.nodes[0].counters;
    assert_eq!(records, c.cells_sent + c.datagrams_read);
    assert!(c.datagrams_read >= c.cells_received + c.beacons_heard);
    assert!(data >= 5_000 / 56, "the flow's cells are in the capture");

    let lua = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../assets/wireshark/shoal.lua"
    );
    match std::process::Command::new("tshark")
        .args(["-X", &format!("lua_script:{lua}"), "-r"])
        .arg(dir.join("node0/cells.pcap"))
        .output()
    {
        Err(_) => println!("skipped the dissector: tshark is not installed"),
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("Lua"), "{stderr}");
            assert_eq!(
                text.lines().filter(|l| l.contains("SHOAL")).count() as u64,
                records
            );
            assert!(!text.contains("BAD CRC"));
            assert!(text.contains("data src 0 dst 5 len 56"));
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}
