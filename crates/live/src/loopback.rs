//! A whole live rack in one process: the switch and every node on threads, all on UDP sockets on
//! the loopback interface. No privileges needed; this is what the tests and `shoal live compare`
//! run. (The namespace rack of `netns.rs` runs the same driver and switch as processes.)

use crate::clock::{SlotClock, now_ns};
use crate::driver::{Driver, DriverCounters, DriverSpec, Stop};
use crate::events::LoggedEvent;
use crate::fabric::{LiveFabric, RackSpec};
use crate::flows::{FlowHost, LiveFlow, LiveRecord, check_flow};
use crate::switch::{SwitchCounters, SwitchSpec, run_switch};
use shoal_base::NodeId;
use shoal_node::NodeStats;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// One loopback run.
#[derive(Clone, Debug)]
pub struct LoopbackRun {
    pub rack: RackSpec,
    /// Slot length in nanoseconds (the paper's 23-77 ns scaled up to what a host can pace).
    pub slot_ns: u64,
    /// How long a reception waits for a late cell (see `driver.rs`).
    pub grace_ns: u64,
    pub flows: Vec<LiveFlow>,
    /// Packet size the hosts cut flows into (the simulator's `rack.packet_bytes`).
    pub packet_bytes: u32,
    /// Probability that the switch corrupts a cell's header.
    pub corrupt_prob: f64,
    pub seed: u64,
    /// A node that dies (stops sending, as `kill -9` would) at the start of a slot.
    pub crash: Option<(NodeId, u64)>,
    /// Stop after this long even if flows are still running.
    pub timeout: Duration,
    /// Run exactly this many slots, whatever the flows do; `None`: until every flow completed
    /// (then a few epochs more, so that every node stops at the same slot).
    pub slots: Option<u64>,
    /// Where to write per-node counters, events and (with `pcap`) captures.
    pub dir: Option<PathBuf>,
    pub pcap: bool,
}

/// What one node did.
#[derive(Clone, Debug)]
pub struct NodeReport {
    pub id: NodeId,
    pub counters: DriverCounters,
    pub stats: NodeStats,
    pub events: Vec<LoggedEvent>,
    pub mismatches: u64,
    pub packets_lost: u64,
}

/// What the rack did.
#[derive(Clone, Debug)]
pub struct LoopbackResult {
    pub nodes: Vec<NodeReport>,
    pub switch: SwitchCounters,
    pub switch_events: Vec<LoggedEvent>,
    /// Every flow, as its destination saw it (completion) and its source (refusal).
    pub records: Vec<LiveRecord>,
    pub clock: SlotClock,
    /// Wall nanoseconds from slot 0 to the last node's stop, and slots run by the node that ran
    /// the most.
    pub wall_ns: u64,
    pub slots: u64,
    /// Whether every flow completed before the timeout.
    pub completed: bool,
    pub epoch_slots: u64,
}

const ARENA_BYTES: usize = 32 << 20;

/// Runs the rack for `run.slots`, or until every flow completed, or until the timeout.
pub fn run_loopback(run: &LoopbackRun) -> io::Result<LoopbackResult> {
    let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    let fabric = Arc::new(LiveFabric::new(run.rack.clone()).map_err(|e| invalid(e.to_string()))?);
    for f in &run.flows {
        check_flow(f, run.packet_bytes, ARENA_BYTES).map_err(|e| invalid(e.to_string()))?;
    }
    let n = run.rack.nodes as usize;
    let local = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let switch_socket = UdpSocket::bind(local)?;
    let switch_addr = switch_socket.local_addr()?;
    let node_sockets = (0..n)
        .map(|_| UdpSocket::bind(local))
        .collect::<io::Result<Vec<_>>>()?;
    let node_addrs = node_sockets
        .iter()
        .map(|s| s.local_addr())
        .collect::<io::Result<Vec<_>>>()?;
    // Threads start within milliseconds; slot 0 begins once all have.
    let clock = SlotClock {
        t0_ns: now_ns() + 100_000_000,
        slot_ns: run.slot_ns,
    };
    let stop_slot = Arc::new(AtomicU64::new(run.slots.unwrap_or(u64::MAX)));
    let stop = Stop::Shared(stop_slot.clone());
    // The switch stops only once every node has: until then it may have to carry their beacons
    // through a long wait.
    let switch_flag = Arc::new(AtomicU64::new(u64::MAX));
    let switch_stop = Stop::Shared(switch_flag.clone());
    let completed = Arc::new(AtomicU64::new(0));
    let faults = run.corrupt_prob > 0.0 || run.crash.is_some();
    let sub = |name: String| run.dir.as_ref().map(|d| d.join(name));

    let switch = {
        let spec = SwitchSpec {
            nodes: node_addrs.clone(),
            corrupt_prob: run.corrupt_prob,
            seed: run.seed,
            dir: sub("switch".into()),
        };
        let (fabric, stop) = (fabric.clone(), switch_stop.clone());
        std::thread::Builder::new()
            .name("switch".into())
            .spawn(move || run_switch(switch_socket, fabric, spec, &stop))?
    };
    let mut progress = Vec::new();
    let mut nodes = Vec::new();
    for (i, socket) in node_sockets.into_iter().enumerate() {
        let id = NodeId(i as u16);
        let spec = DriverSpec {
            id,
            clock,
            grace_ns: run.grace_ns,
            switch_addr,
            check_bounds: !faults,
            dir: sub(format!("node{i}")),
            pcap: run.pcap,
            arena_bytes: ARENA_BYTES,
            crash_at: run.crash.filter(|c| c.0 == id).map(|c| c.1),
        };
        let host = FlowHost::new(id, n, &run.flows, run.packet_bytes, completed.clone());
        let mut driver = Driver::new(spec, fabric.clone(), socket, host)?;
        progress.push(driver.progress.clone());
        let stop = stop.clone();
        nodes.push(
            std::thread::Builder::new()
                .name(format!("node{i}"))
                .spawn(move || driver.run(&stop).map(|_| driver))?,
        );
    }

    // Wait for the flows, then agree on a stop slot far enough ahead of every node.
    let epoch = fabric.epoch_slots();
    let margin = 4 * epoch + 2 * run.rack.delay_slots as u64;
    let deadline = now_ns() + run.timeout.as_nanos() as u64;
    let flows = run.flows.len() as u64;
    let done = loop {
        std::thread::sleep(Duration::from_millis(5));
        let slot = progress
            .iter()
            .map(|p| p.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        let all = completed.load(Ordering::Relaxed) >= flows;
        if run.slots.is_some_and(|n| slot + 1 >= n) {
            break all;
        }
        if (run.slots.is_none() && all) || now_ns() >= deadline {
            stop_slot.store(slot + margin, Ordering::Relaxed);
            break all;
        }
    };
    let mut reports = Vec::new();
    let mut records: Vec<LiveRecord> = Vec::new();
    let mut sourced: Vec<LiveRecord> = Vec::new();
    let mut slots = 0;
    for h in nodes {
        let driver = h
            .join()
            .map_err(|_| io::Error::other("a node thread panicked"))??;
        slots = slots.max(driver.counters.slot);
        let host = &driver.host;
        records.extend(host.sunk().copied());
        sourced.extend(host.sourced().copied());
        reports.push(NodeReport {
            id: driver.node().id(),
            counters: driver.counters.clone(),
            stats: driver.node().stats().clone(),
            events: driver.log.events.clone(),
            mismatches: host.mismatches,
            packets_lost: host.packets_lost,
        });
    }
    let wall_ns = now_ns().saturating_sub(clock.t0_ns);
    switch_flag.store(0, Ordering::Relaxed);
    let (switch, switch_log) = switch
        .join()
        .map_err(|_| io::Error::other("the switch thread panicked"))??;
    // Submission (and refusal) is known only at the source, delivery only at the destination.
    for src in &sourced {
        if let Some(rec) = records.iter_mut().find(|x| x.flow.id == src.flow.id) {
            rec.submit_ns = src.submit_ns;
            rec.refused = src.refused;
        }
    }
    records.sort_by_key(|r| r.flow.id);
    Ok(LoopbackResult {
        nodes: reports,
        switch,
        switch_events: switch_log.events,
        records,
        clock,
        wall_ns,
        slots,
        completed: done,
        epoch_slots: epoch,
    })
}
