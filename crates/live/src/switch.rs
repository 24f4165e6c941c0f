//! The circuit switches, as one software process (or thread): every datagram is forwarded to the
//! node at the far end of the circuits its plane's switches hold in the cell's slot, read off the
//! verified port maps (`LiveFabric::circuit`). Like the paper's switches it neither buffers nor
//! arbitrates nor reads the cell; unlike them it checks the emulation's shim and counts what the
//! schedule does not allow:
//!
//! - a datagram from a node that claims another port (its `from`) than the one it came in on;
//! - a cell sent in a slot in which the sender's port has no circuit (dropped: nowhere to go);
//! - a cell whose sender meant it for another node than the circuit reaches (forwarded where
//!   the circuit goes, as a real circuit would, and counted; the receiver then sees a cell from
//!   an unexpected port and counts it too).
//!
//! Beacons (`datagram.rs`) are copied to every other node unchecked. It can also flip one
//! header bit of a cell with a given probability, from a seeded random
//! stream (App. D's corruption, injected on the link).

use crate::clock::now_ns;
use crate::datagram::{self, BEACON, DATAGRAM_LEN, SHIM_LEN};
use crate::driver::Stop;
use crate::events::{EventKind, EventLog, LoggedEvent, write_json_atomically};
use crate::fabric::LiveFabric;
use rand::RngExt;
use serde::Serialize;
use shoal_base::{NodeId, rng};
use std::collections::BTreeMap;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What the switch needs to know.
#[derive(Clone, Debug)]
pub struct SwitchSpec {
    /// The node at each port (its socket address).
    pub nodes: Vec<SocketAddr>,
    /// Probability that a cell gets one header bit flipped (0: never).
    pub corrupt_prob: f64,
    pub seed: u64,
    /// Where to write `counters.json` and `events.jsonl`.
    pub dir: Option<PathBuf>,
}

/// What the switch counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SwitchCounters {
    pub forwarded: u64,
    /// Datagrams that broke the schedule (all three kinds above).
    pub violations: u64,
    /// Of those, cells with no circuit in their slot (dropped).
    pub no_circuit: u64,
    /// Datagrams not from a node of the rack, or not ours.
    pub stray: u64,
    /// Cells whose header the switch corrupted on purpose.
    pub corrupted: u64,
    /// Per port: cells in and out.
    pub port_in: Vec<u64>,
    pub port_out: Vec<u64>,
    /// Datagrams the kernel refused to forward.
    pub send_errors: u64,
    /// Beacons copied to the other nodes (not cells: see `datagram.rs`).
    pub beacons: u64,
}

/// Forwards cells until `stop` is set, which the coordinator does once every node has stopped
/// (an idle spell means nothing: the whole rack may be waiting out a grace period).
pub fn run_switch(
    socket: UdpSocket,
    fabric: Arc<LiveFabric>,
    spec: SwitchSpec,
    stop: &Stop,
) -> io::Result<(SwitchCounters, EventLog)> {
    let ports: BTreeMap<SocketAddr, u16> = spec
        .nodes
        .iter()
        .enumerate()
        .map(|(i, a)| (*a, i as u16))
        .collect();
    if let Some(d) = &spec.dir {
        std::fs::create_dir_all(d)?;
    }
    let mut log = EventLog::new(spec.dir.as_ref().map(|d| d.join("events.jsonl")).as_deref())?;
    let mut counters = SwitchCounters {
        port_in: vec![0; spec.nodes.len()],
        port_out: vec![0; spec.nodes.len()],
        ..SwitchCounters::default()
    };
    let mut rng = rng::stream(spec.seed, "shoal.live.corruption", 0);
    socket.set_read_timeout(Some(Duration::from_millis(20)))?;
    let mut next_report = now_ns();
    let mut buf = [0u8; DATAGRAM_LEN + 1];
    loop {
        let now = now_ns();
        if now >= next_report {
            next_report = now + 100_000_000;
            if let Some(d) = &spec.dir {
                write_json_atomically(&d.join("counters.json"), &counters)?;
            }
            log.flush()?;
        }
        if stop.read() != u64::MAX {
            break;
        }
        let (len, from) = match socket.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(e) => return Err(e),
        };
        let (Some(&port), Ok((shim, _))) = (ports.get(&from), datagram::decode(&buf[..len])) else {
            counters.stray += 1;
            continue;
        };
        let ingress = NodeId(port);
        if shim.channel == BEACON {
            counters.beacons += 1;
            for (i, addr) in spec.nodes.iter().enumerate() {
                if i != port as usize && socket.send_to(&buf[..len], addr).is_err() {
                    counters.send_errors += 1;
                }
            }
            continue;
        }
        counters.port_in[port as usize] += 1;
        let mut violation = |what: String, counters: &mut SwitchCounters| {
            counters.violations += 1;
            log.log(LoggedEvent {
                node: None,
                slot: shim.slot,
                mono_ns: now_ns(),
                what: EventKind::ScheduleViolation {
                    sent_slot: shim.slot,
                    channel: shim.channel.0,
                    from: port,
                    to: shim.to.0,
                    detail: what,
                },
            })
        };
        if shim.from != ingress {
            violation(
                format!("came in on port {port} but claims port {}", shim.from.0),
                &mut counters,
            )?;
        }
        let Some(egress) = fabric.circuit(shim.slot, shim.channel, ingress) else {
            counters.no_circuit += 1;
            violation(
                format!("port {port} has no circuit in slot {}", shim.slot),
                &mut counters,
            )?;
            continue;
        };
        if egress != shim.to {
            violation(
                format!(
                    "meant for {} but the circuit of slot {} goes to {}",
                    shim.to.0, shim.slot, egress.0
                ),
                &mut counters,
            )?;
        }
        if spec.corrupt_prob > 0.0 && rng.random::<f64>() < spec.corrupt_prob {
            let bit = rng.random_range(0..64u8);
            buf[SHIM_LEN + (bit / 8) as usize] ^= 1 << (bit % 8);
            counters.corrupted += 1;
            log.log(LoggedEvent {
                node: None,
                slot: shim.slot,
                mono_ns: now_ns(),
                what: EventKind::InjectedCorruption {
                    sent_slot: shim.slot,
                    from: port,
                    to: egress.0,
                    bit,
                },
            })?;
        }
        match socket.send_to(&buf[..len], spec.nodes[egress.idx()]) {
            Ok(_) => {
                counters.forwarded += 1;
                counters.port_out[egress.idx()] += 1;
            }
            Err(_) => counters.send_errors += 1,
        }
    }
    if let Some(d) = &spec.dir {
        write_json_atomically(&d.join("counters.json"), &counters)?;
    }
    log.flush()?;
    Ok((counters, log))
}
