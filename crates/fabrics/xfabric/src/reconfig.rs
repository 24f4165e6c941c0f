//! The reconfiguration protocol of §4 ("Reconfiguration"), as a deterministic event simulation
//! of the control plane and of the reconfiguration messages in the data plane: how the rack goes
//! from one [`CircuitPlan`] and its forwarding tables to the next, and what happens when the
//! controller dies on the way.
//!
//! What the paper says, and where it lives here:
//! 1. *Prepare.* The controller sends every crosspoint a map packet (its new port mappings and a
//!    bitmap of the ports that change) through the control plane; the crosspoint's
//!    micro-controller loads it into registers and acknowledges, without switching. It sends every
//!    SoC, through the data plane, its new forwarding tables, the MAC address expected on each
//!    port and a 64-bit version; the SoC stores them and acknowledges, without using them.
//! 2. *Trigger.* Once every crosspoint and SoC has acknowledged, the controller sends each
//!    crosspoint a reconfigure packet; the micro-controller switches the ASIC to the map and
//!    acknowledges. A crosspoint that receives a reconfigure and has not yet reconfigured also
//!    broadcasts it to the other crosspoints through the control plane, so that a controller that
//!    dies after reaching only some of them cannot leave layer 1 half-switched.
//! 3. *Flood.* Once every crosspoint has acknowledged, the controller sends a reconfiguration
//!    message carrying the new version on its ports; a SoC on an older version that receives one
//!    switches to the stored tables and sends the message on all its ports; SoCs already on the
//!    version ignore it.
//! 4. *Local trigger.* A SoC that receives a frame from a MAC address other than the one its
//!    current tables expect on that port flushes them, uses the stored ones and floods the
//!    reconfiguration message, so a controller death before step 3 cannot leave stale tables.
//!
//! Choices where the paper is silent (each a field of [`ReconfigTiming`] or [`ReconfigParams`]):
//! - The controller sends one message at a time, as the prototype's does: control-plane messages
//!   `control_gap` apart, data-plane updates `update_gap` apart. It sends all maps, then all
//!   updates, and waits for every acknowledgement before the trigger phase. With
//!   `sequential_trigger` (the prototype, [`ReconfigTiming::prototype`]) it sends each reconfigure
//!   only once the previous crosspoint acknowledged, and without `crosspoint_relay` the crosspoints
//!   do not pass it on (the prototype's USB control plane joins each micro-controller to the
//!   controller's server only).
//! - The controller reaches the data plane through the SoC it runs on (`controller_soc`): "its
//!   ports" are that SoC's ports, so its flood is one message, delivered to that SoC, which then
//!   floods like any other. It dies as a process; its SoC keeps forwarding.
//! - A "message index" counts what the controller sends, in order: d maps, n updates, d
//!   reconfigures, one flood, [`controller_messages`] in all. `kill_after = Some(k)` lets it send
//!   exactly k and then stops it (acknowledgements to a dead controller are lost).
//! - The local trigger needs traffic: after a circuit changes, the first frame from the new
//!   neighbour reaches the SoC `first_frame` later (data or a keep-alive). `None` models idle
//!   links, where only the flood can switch a SoC. A SoC that sees an unexpected MAC but holds no
//!   newer stored tables keeps its tables and counts it.
//! - A reconfiguration message crosses one circuit in `hop_latency` and follows whatever circuit
//!   the port has at the moment it is sent, old or new.
//! - Only the ports in a crosspoint's bitmap are switched; the static cross-circuits of an odd
//!   rack never are.
//! - Frame loss: a port whose mapping changes is cut for the ASIC's `switching` time. Each NIC
//!   sends back-to-back frames of `frame_bytes` plus `preamble_bytes` and `gap_bytes` at
//!   `line_rate_bps` (a saturated link, the worst case), at a phase drawn from the seed; a frame
//!   whose preamble or body passes the crosspoint during the cut fails its CRC and is lost. A
//!   full-duplex link (one SoC port) loses the frames it sends and those its old peer was sending
//!   it. Frames forwarded on stale tables during the switch still reach a NIC, so they are not
//!   link losses (§6.4 counts frames sent and received per NIC).
//! - A new version is the old one plus one.
//!
//! The simulation is a pure function of its inputs: it runs on the discrete-event engine
//! (`shoal_engine::EventQueue`), which pops events by time and, among equal times, in the order
//! they were scheduled; the only randomness is the frame phases, from
//! `shoal_base::rng::stream(seed, "xfabric.reconfig.phase", port)`.

use crate::error::Error;
use crate::generate::CircuitPlan;
use crate::rack::Crosspoint;
use rand::RngExt;
use shoal_base::{Dur, NodeId, Time, rng};
use shoal_engine::EventQueue;

/// The latencies and link parameters of one reconfiguration. The defaults are the prototype's
/// where §5-6 give them, and stated guesses otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReconfigTiming {
    /// One control-plane message, controller to crosspoint, crosspoint to controller or crosspoint
    /// to crosspoint: 1 ms, the prototype's USB 1.1 delay (§6.5).
    pub control_latency: Dur,
    /// Between two control-plane messages the controller sends: 1 ms (it talks to the
    /// micro-controllers one after another).
    pub control_gap: Dur,
    /// One message between the controller and a SoC through the data plane: 50 µs (a few
    /// software-switched hops; our guess).
    pub update_latency: Dur,
    /// Between two updates the controller sends: 8 µs, 1 KB at 1 Gb/s (§4: under 1 KB per SoC).
    pub update_gap: Dur,
    /// A reconfiguration message over one circuit, SoC to SoC: 10 µs (our guess for a software
    /// packet switch).
    pub hop_latency: Dur,
    /// From a SoC's decision to switch (a reconfiguration message or an unexpected MAC) to its
    /// packet switch forwarding by the stored tables, when it also floods the message: 0 in §4's
    /// model (a table swap in hardware) and by default. The prototype's switch is a user-level
    /// process behind two kernel drivers (§5) and the paper gives no figure for its swap;
    /// `xfabric-fig6b` sweeps it.
    pub table_swap: Dur,
    /// The micro-controller reprogramming its ASIC: 40 µs (§6.5).
    pub reprogram: Dur,
    /// The ASIC's switching time, during which a switched port carries garbage: 20 ns (§6.5).
    pub switching: Dur,
    /// From a circuit change to the first frame of the new neighbour at the SoC; `None` for idle
    /// links. Default 10 µs (our guess: links carry traffic or keep-alives).
    pub first_frame: Option<Dur>,
    /// Line rate of a SoC port: 10 Gb/s.
    pub line_rate_bps: u64,
    /// Frame length, header to CRC: 64 B, the Ethernet minimum (§6.5's worst case).
    pub frame_bytes: u64,
    /// Preamble and start delimiter: 8 B.
    pub preamble_bytes: u64,
    /// Inter-frame gap: 12 B.
    pub gap_bytes: u64,
    /// The controller sends the next reconfigure only once the previous crosspoint acknowledged
    /// its switch (one exchange at a time over the control plane), instead of `control_gap` after
    /// the previous one.
    pub sequential_trigger: bool,
    /// A crosspoint that receives a reconfigure relays it to the others (§4). The prototype's USB
    /// control plane is a star from the controller's server, so there the micro-controllers cannot
    /// reach each other.
    pub crosspoint_relay: bool,
}

impl ReconfigTiming {
    /// The prototype's control plane (§5, §6.5): USB 1.1 from the controller's server to each
    /// micro-controller, 1 ms per message, the controller "sequentially communicates with each of
    /// the micro-controllers" (we read: it waits for each one's acknowledgement before the next),
    /// and no path between micro-controllers, so no relay. The other latencies as the default.
    pub fn prototype() -> ReconfigTiming {
        ReconfigTiming {
            sequential_trigger: true,
            crosspoint_relay: false,
            ..ReconfigTiming::default()
        }
    }
}

impl Default for ReconfigTiming {
    fn default() -> ReconfigTiming {
        ReconfigTiming {
            control_latency: Dur::from_us(1_000),
            control_gap: Dur::from_us(1_000),
            update_latency: Dur::from_us(50),
            update_gap: Dur::from_us(8),
            hop_latency: Dur::from_us(10),
            table_swap: Dur::ZERO,
            reprogram: Dur::from_us(40),
            switching: Dur::from_ns(20),
            first_frame: Some(Dur::from_us(10)),
            line_rate_bps: 10_000_000_000,
            frame_bytes: 64,
            preamble_bytes: 8,
            gap_bytes: 12,
            sequential_trigger: false,
            crosspoint_relay: true,
        }
    }
}

/// One run of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReconfigParams {
    pub timing: ReconfigTiming,
    /// The version of the running configuration; the new one is this plus one.
    pub old_version: u64,
    /// The SoC the controller runs on, where its flood enters the data plane.
    pub controller_soc: NodeId,
    /// The controller dies after sending this many messages; `None` lets it finish.
    pub kill_after: Option<usize>,
    /// Seeds the frame phases of the loss count.
    pub seed: u64,
}

impl Default for ReconfigParams {
    fn default() -> ReconfigParams {
        ReconfigParams {
            timing: ReconfigTiming::default(),
            old_version: 1,
            controller_soc: NodeId(0),
            kill_after: None,
            seed: 0,
        }
    }
}

/// The messages a controller that does not die sends for a rack of `socs` SoCs and `crosspoints`
/// internal crosspoints: the kill indices are `0..=controller_messages(..)`.
pub fn controller_messages(socs: usize, crosspoints: usize) -> usize {
    2 * crosspoints + socs + 1
}

/// What a run ended in, once no message was left in flight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReconfigOutcome {
    /// The configuration version each crosspoint's circuits belong to.
    pub crosspoint_versions: Vec<u64>,
    /// The version of the forwarding tables each SoC uses.
    pub soc_versions: Vec<u64>,
    /// Every SoC's tables expect, on every port, the SoC the crosspoints connect it to.
    pub tables_match_circuits: bool,
    /// Messages the controller sent before it died or finished.
    pub controller_sent: usize,
    /// When each crosspoint switched, if it did.
    pub crosspoint_switch: Vec<Option<Time>>,
    /// When the first and the last crosspoint switched, if any did.
    pub first_switch: Option<Time>,
    pub last_switch: Option<Time>,
    /// When each SoC started using the new tables, if it did.
    pub soc_switch: Vec<Option<Time>>,
    /// SoCs that switched on an unexpected MAC rather than on a reconfiguration message.
    pub local_triggers: usize,
    /// Unexpected MACs seen by SoCs that held no newer tables.
    pub unexpected_without_update: usize,
    /// Reconfiguration messages sent SoC to SoC.
    pub flood_messages: usize,
    /// Frames lost per full-duplex link, one entry per SoC port (`soc * d + crosspoint`).
    pub lost_frames: Vec<u32>,
    /// Ports whose circuit changed.
    pub switched_ports: usize,
    /// The last event's time: when the rack settled.
    pub settled: Time,
}

impl ReconfigOutcome {
    /// The version the whole rack agrees on, if it does: every crosspoint and every SoC on it, and
    /// the tables matching the circuits.
    pub fn consistent_version(&self) -> Option<u64> {
        let v = *self.crosspoint_versions.first()?;
        let all = self.crosspoint_versions.iter().all(|&x| x == v)
            && self.soc_versions.iter().all(|&x| x == v);
        (all && self.tables_match_circuits).then_some(v)
    }

    /// The most frames any full-duplex link lost.
    pub fn max_lost_per_link(&self) -> u32 {
        self.lost_frames.iter().copied().max().unwrap_or(0)
    }

    /// Mean frames lost per switched link.
    pub fn mean_lost_per_switched_link(&self) -> Option<f64> {
        (self.switched_ports > 0).then(|| {
            self.lost_frames.iter().map(|&l| l as f64).sum::<f64>() / self.switched_ports as f64
        })
    }
}

/// Where a message goes and what it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Event {
    /// The controller may send its next message.
    ControllerSend,
    MapAck(u8),
    UpdateAck(u16),
    ReconfigureAck(u8),
    Map(u8),
    Update(u16),
    Reconfigure(u8),
    /// A crosspoint's ASIC takes its new mapping.
    Switched(u8),
    /// A reconfiguration message reaches a SoC.
    Flood(u16),
    /// The first frame from a new neighbour reaches a SoC's port.
    NewNeighbour {
        soc: u16,
        port: u8,
        peer: u16,
    },
    /// A SoC's table swap is done.
    Swapped(u16),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Prepare,
    WaitPrepared,
    Trigger,
    WaitTriggered,
    Flood,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XpState {
    Old,
    Loaded,
    Switching,
    New,
}

struct Sim<'a> {
    plans: [&'a CircuitPlan; 2],
    t: ReconfigTiming,
    n: usize,
    d: usize,
    queue: EventQueue<Event>,
    // Controller.
    alive: bool,
    kill_after: Option<usize>,
    sent: usize,
    phase: Phase,
    next: usize,
    acks: usize,
    controller_soc: u16,
    // Crosspoints.
    xp: Vec<XpState>,
    // SoCs: on the new tables or not, swapping to them, and holding them or not.
    soc_new: Vec<bool>,
    soc_swapping: Vec<bool>,
    soc_loaded: Vec<bool>,
    out: ReconfigOutcome,
    seed: u64,
}

/// Runs one reconfiguration from `old` to `new` (two plans of the same rack) and returns where the
/// rack ended; see the module documentation for the protocol and the model.
pub fn reconfigure(
    old: &CircuitPlan,
    new: &CircuitPlan,
    params: &ReconfigParams,
) -> Result<ReconfigOutcome, Error> {
    let (n, d) = (old.graph().socs(), old.crosspoints());
    if new.graph().socs() != n
        || new.crosspoints() != d
        || old.cross_circuits() != new.cross_circuits()
    {
        return Err(Error::PlanMismatch);
    }
    if params.controller_soc.idx() >= n {
        return Err(Error::SocOutOfRange {
            soc: params.controller_soc.idx(),
            socs: n,
        });
    }
    let new_version = params
        .old_version
        .checked_add(1)
        .ok_or(Error::VersionOverflow)?;
    let mut sim = Sim {
        plans: [old, new],
        t: params.timing,
        n,
        d,
        queue: EventQueue::new(),
        alive: params.kill_after != Some(0),
        kill_after: params.kill_after,
        sent: 0,
        phase: Phase::Prepare,
        next: 0,
        acks: 0,
        controller_soc: params.controller_soc.0,
        xp: vec![XpState::Old; d],
        soc_new: vec![false; n],
        soc_swapping: vec![false; n],
        soc_loaded: vec![false; n],
        out: ReconfigOutcome {
            crosspoint_versions: Vec::new(),
            soc_versions: Vec::new(),
            tables_match_circuits: false,
            controller_sent: 0,
            crosspoint_switch: vec![None; d],
            first_switch: None,
            last_switch: None,
            soc_switch: vec![None; n],
            local_triggers: 0,
            unexpected_without_update: 0,
            flood_messages: 0,
            lost_frames: vec![0; n * d],
            switched_ports: 0,
            settled: Time::ZERO,
        },
        seed: params.seed,
    };
    sim.at(Time::ZERO, Event::ControllerSend);
    while let Some((now, ev)) = sim.queue.pop() {
        sim.out.settled = now;
        sim.handle(now, ev);
    }
    let version = |new: bool| if new { new_version } else { params.old_version };
    sim.out.crosspoint_versions = sim.xp.iter().map(|&s| version(s == XpState::New)).collect();
    sim.out.soc_versions = sim.soc_new.iter().map(|&s| version(s)).collect();
    sim.out.tables_match_circuits = (0..n).all(|s| {
        (0..d).all(|c| {
            sim.circuit_peer(s, c)
                == sim.plans[sim.soc_new[s] as usize].peer(NodeId(s as u16), Crosspoint(c as u8))
        })
    });
    sim.out.controller_sent = sim.sent;
    Ok(sim.out)
}

impl Sim<'_> {
    fn at(&mut self, when: Time, ev: Event) {
        self.queue.schedule(when, ev);
    }

    /// The SoC at the other end of `soc`'s port `c`, by the circuits crosspoint `c` has now.
    fn circuit_peer(&self, soc: usize, c: usize) -> Option<NodeId> {
        let plan = self.plans[(self.xp[c] == XpState::New) as usize];
        plan.peer(NodeId(soc as u16), Crosspoint(c as u8))
    }

    fn changed(&self, soc: usize, c: usize) -> bool {
        let (s, x) = (NodeId(soc as u16), Crosspoint(c as u8));
        self.plans[0].peer(s, x) != self.plans[1].peer(s, x)
    }

    fn handle(&mut self, now: Time, ev: Event) {
        let t = self.t;
        match ev {
            Event::ControllerSend => self.controller_send(now),
            Event::MapAck(_) | Event::UpdateAck(_) => {
                if self.alive {
                    self.acks += 1;
                    self.check_wait(now);
                }
            }
            Event::ReconfigureAck(_) => {
                if self.alive {
                    self.acks += 1;
                    if t.sequential_trigger && self.phase == Phase::Trigger {
                        // The next crosspoint's turn.
                        self.at(now, Event::ControllerSend);
                    } else {
                        self.check_wait(now);
                    }
                }
            }
            Event::Map(c) => {
                self.xp[c as usize] = XpState::Loaded;
                self.at(now + t.control_latency, Event::MapAck(c));
            }
            Event::Update(s) => {
                self.soc_loaded[s as usize] = true;
                self.at(now + t.update_latency, Event::UpdateAck(s));
            }
            Event::Reconfigure(c) => {
                // Only a crosspoint holding the map and not yet reconfigured acts, and it passes the
                // message on to every other crosspoint.
                if self.xp[c as usize] != XpState::Loaded {
                    return;
                }
                self.xp[c as usize] = XpState::Switching;
                self.at(now + t.reprogram, Event::Switched(c));
                if t.crosspoint_relay {
                    for other in 0..self.d as u8 {
                        if other != c {
                            self.at(now + t.control_latency, Event::Reconfigure(other));
                        }
                    }
                }
            }
            Event::Switched(c) => self.switched(now, c as usize),
            Event::Flood(s) => {
                if self.soc_loaded[s as usize] && !self.soc_new[s as usize] {
                    self.swap(now, s as usize);
                }
            }
            Event::Swapped(s) => self.activate(now, s as usize),
            Event::NewNeighbour { soc, port, peer } => {
                let s = soc as usize;
                let expected =
                    self.plans[self.soc_new[s] as usize].peer(NodeId(soc), Crosspoint(port));
                if expected == Some(NodeId(peer)) {
                    return;
                }
                if self.soc_loaded[s] && !self.soc_new[s] {
                    if !self.soc_swapping[s] {
                        self.out.local_triggers += 1;
                    }
                    self.swap(now, s);
                } else {
                    self.out.unexpected_without_update += 1;
                }
            }
        }
    }

    /// The controller sends its next message, unless it is dead or waiting.
    fn controller_send(&mut self, now: Time) {
        if !self.alive {
            return;
        }
        let t = self.t;
        let gap = match self.phase {
            Phase::Prepare if self.next < self.d => {
                self.at(now + t.control_latency, Event::Map(self.next as u8));
                t.control_gap
            }
            Phase::Prepare => {
                let s = (self.next - self.d) as u16;
                self.at(now + t.update_latency, Event::Update(s));
                t.update_gap
            }
            Phase::Trigger => {
                self.at(now + t.control_latency, Event::Reconfigure(self.next as u8));
                t.control_gap
            }
            Phase::Flood => {
                self.at(now + t.update_latency, Event::Flood(self.controller_soc));
                Dur::ZERO
            }
            Phase::WaitPrepared | Phase::WaitTriggered | Phase::Done => return,
        };
        self.sent += 1;
        self.next += 1;
        if self.kill_after == Some(self.sent) {
            self.alive = false;
        }
        let last = match self.phase {
            Phase::Prepare => self.next == self.d + self.n,
            Phase::Trigger => self.next == self.d,
            _ => true,
        };
        if !last && self.phase == Phase::Trigger && t.sequential_trigger {
            // The next reconfigure goes out when this one is acknowledged.
            return;
        }
        if last {
            self.next = 0;
            self.phase = match self.phase {
                Phase::Prepare => Phase::WaitPrepared,
                Phase::Trigger => Phase::WaitTriggered,
                _ => Phase::Done,
            };
            // Acknowledgements that came in while sending count towards the wait.
            self.check_wait(now + gap);
        } else {
            self.at(now + gap, Event::ControllerSend);
        }
    }

    /// Moves the controller on once it holds every acknowledgement it waits for.
    fn check_wait(&mut self, when: Time) {
        let (wanted, then) = match self.phase {
            Phase::WaitPrepared => (self.d + self.n, Phase::Trigger),
            Phase::WaitTriggered => (self.d, Phase::Flood),
            _ => return,
        };
        if self.acks == wanted {
            self.acks = 0;
            self.phase = then;
            self.at(when, Event::ControllerSend);
        }
    }

    /// Crosspoint `c`'s ASIC takes the map: its switched ports lose frames for the switching time
    /// and, with traffic, their SoCs soon see their new neighbours.
    fn switched(&mut self, now: Time, c: usize) {
        let t = self.t;
        self.xp[c] = XpState::New;
        self.out.crosspoint_switch[c] = Some(now);
        self.out.first_switch.get_or_insert(now);
        self.out.last_switch = Some(now);
        // The frames each switched port was sending when the cut came.
        let sent_lost: Vec<(usize, u32)> = (0..self.n)
            .filter(|&s| self.changed(s, c))
            .map(|s| (s, self.frames_cut(s * self.d + c)))
            .collect();
        for &(s, lost) in &sent_lost {
            self.out.switched_ports += 1;
            self.out.lost_frames[s * self.d + c] += lost;
            if let Some(old) = self.plans[0].peer(NodeId(s as u16), Crosspoint(c as u8)) {
                // What `s` was sending its old peer is lost on the peer's link too.
                self.out.lost_frames[old.idx() * self.d + c] += lost;
            }
            if let (Some(g), Some(peer)) = (
                t.first_frame,
                self.plans[1].peer(NodeId(s as u16), Crosspoint(c as u8)),
            ) {
                self.at(
                    now + g,
                    Event::NewNeighbour {
                        soc: s as u16,
                        port: c as u8,
                        peer: peer.0,
                    },
                );
            }
        }
        self.at(now + t.control_latency, Event::ReconfigureAck(c as u8));
    }

    /// Frames of a saturated sender at `port`, at its seeded phase, that overlap the cut.
    fn frames_cut(&self, port: usize) -> u32 {
        let t = self.t;
        let ps_per_byte = 8 * 1_000_000_000_000 / t.line_rate_bps.max(1);
        let on_wire = (t.preamble_bytes + t.frame_bytes) * ps_per_byte;
        let period = on_wire + t.gap_bytes * ps_per_byte;
        let cut = t.switching.0;
        // The cut starts `x` into the current frame period.
        let x = rng::stream(self.seed, "xfabric.reconfig.phase", port as u64)
            .random_range(0..period.max(1));
        // Frame j is on the wire over [j * period - x, j * period - x + on_wire), with the cut
        // over [0, cut).
        let (period, on_wire, x, cut) = (period as i128, on_wire as i128, x as i128, cut as i128);
        let mut lost = 0;
        let mut j = 0i128;
        while j * period - x < cut {
            if j * period - x + on_wire > 0 {
                lost += 1;
            }
            j += 1;
        }
        lost
    }

    /// SoC `s` decides to use its stored tables: at once, or once its table swap is done (a SoC
    /// already swapping ignores further triggers).
    fn swap(&mut self, now: Time, s: usize) {
        if self.t.table_swap == Dur::ZERO {
            self.activate(now, s);
        } else if !self.soc_swapping[s] {
            self.soc_swapping[s] = true;
            self.at(now + self.t.table_swap, Event::Swapped(s as u16));
        }
    }

    /// SoC `s` starts using its stored tables and floods the reconfiguration message on every port,
    /// over whatever circuit each port has now.
    fn activate(&mut self, now: Time, s: usize) {
        self.soc_new[s] = true;
        self.out.soc_switch[s] = Some(now);
        for c in 0..self.d {
            if let Some(p) = self.circuit_peer(s, c) {
                self.out.flood_messages += 1;
                self.at(now + self.t.hop_latency, Event::Flood(p.0));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DemandMatrix, Rack, RackSpec, dense_random_demand, generate_topology};

    /// The prototype's control plane: one crosspoint at a time, each switching a round trip and a
    /// reprogramming after the one before, none relaying; every SoC on the new tables in the end.
    #[test]
    fn the_prototype_switches_crosspoints_one_exchange_apart() {
        let rack = Rack::new(
            RackSpec {
                socs: 27,
                ports_per_soc: 6,
                uplinks: 4,
            },
            3,
        )
        .unwrap();
        let old = generate_topology(&rack, &DemandMatrix::zeros(27).unwrap(), 3).unwrap();
        let new = generate_topology(&rack, &dense_random_demand(27, 3), 3).unwrap();
        let timing = ReconfigTiming::prototype();
        let params = ReconfigParams {
            timing,
            ..ReconfigParams::default()
        };
        let out = reconfigure(&old, &new, &params).unwrap();
        let times: Vec<Time> = out.crosspoint_switch.iter().map(|t| t.unwrap()).collect();
        let step = timing.control_latency + timing.control_latency + timing.reprogram;
        for w in times.windows(2) {
            assert_eq!(w[1].since(w[0]), step, "{times:?}");
        }
        assert_eq!(out.consistent_version(), Some(2));
        // With the relay (§4's design) every crosspoint switches within one message of the first.
        let relayed = reconfigure(&old, &new, &ReconfigParams::default()).unwrap();
        let spread = relayed
            .last_switch
            .unwrap()
            .since(relayed.first_switch.unwrap());
        assert!(spread <= timing.control_latency, "{spread}");
    }

    /// A table swap of T: the first SoCs, triggered by the first crosspoint's new neighbours, use
    /// their new tables the first frame plus T after it, and no SoC sooner; the flood leaves a SoC
    /// only once it swapped, so SoCs it reaches take at least another T. The rack still ends
    /// consistent.
    #[test]
    fn a_table_swap_delays_each_soc_and_the_flood() {
        let rack = Rack::new(
            RackSpec {
                socs: 27,
                ports_per_soc: 6,
                uplinks: 4,
            },
            3,
        )
        .unwrap();
        let old = generate_topology(&rack, &DemandMatrix::zeros(27).unwrap(), 3).unwrap();
        let new = generate_topology(&rack, &dense_random_demand(27, 3), 3).unwrap();
        let swap = Dur::from_us(3_000);
        let timing = ReconfigTiming {
            table_swap: swap,
            ..ReconfigTiming::prototype()
        };
        let params = ReconfigParams {
            timing,
            ..ReconfigParams::default()
        };
        let out = reconfigure(&old, &new, &params).unwrap();
        assert_eq!(out.consistent_version(), Some(2));
        let first = out.first_switch.unwrap();
        let after: Vec<Dur> = out
            .soc_switch
            .iter()
            .map(|t| t.unwrap().since(first))
            .collect();
        let soonest = timing.first_frame.unwrap() + swap;
        assert_eq!(after.iter().min(), Some(&soonest));
        // A SoC none of whose ports the first crosspoint changes waits for a flood or a later
        // crosspoint: at least two swaps, or a crosspoint step plus a swap.
        let step = timing.control_latency + timing.control_latency + timing.reprogram;
        for s in 0..27u16 {
            if new.peer(NodeId(s), Crosspoint(0)) == old.peer(NodeId(s), Crosspoint(0)) {
                let t = after[s as usize];
                assert!(t >= (swap + swap).min(step + swap), "SoC {s}: {t}");
            }
        }
    }
}
