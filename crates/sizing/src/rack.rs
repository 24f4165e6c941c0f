//! Sizing a Shoal rack from its physical parameters (§3.2, §3.4, §4.1): how many circuit
//! switches in which Clos, how long a slot, guard band and epoch are, how late a cell can be,
//! and what a node can send.
//!
//! The switch count and the epoch are not recomputed here: they come from the same
//! `shoal-schedule` types the simulated rack is built from ([`ClosShape`] for the two-tier Clos
//! of each channel's plane, [`FabricSchedule`] for the epoch and the turnaround Appendix A
//! needs), so a sizing and a simulation of one rack cannot disagree.

use crate::error::SizingError;
use serde::Serialize;
use shoal_base::{Dur, Rate};
use shoal_schedule::{
    Arrangement, ClosError, ClosShape, FabricSchedule, FabricSpec, MAX_CHANNELS, MAX_NODES,
    ScheduleError,
};

/// Propagation delay in a rack's fibre or copper: 5 ns per metre (§3.4), so 5 ps per mm.
pub const PS_PER_MM: u64 = 5;

/// The longest cable a sizing takes (1 km): far beyond any rack, small enough that no product
/// of lengths and rates overflows.
const MAX_CABLE_MM: u64 = 1_000_000;

/// The longest slot, guard band (or part of it) or switch latency a sizing takes (1 ms).
/// With [`MAX_DELAY_SLOTS`] and 65,535 nodes this keeps every duration in a u64 of
/// picoseconds.
const MAX_DUR: Dur = Dur(1_000_000_000);

/// The longest node-to-node delay a sizing takes, in slots.
const MAX_DELAY_SLOTS: u32 = 1_000_000;

/// What a guard band must cover, as §3.4 lists it: "the sum of the reconfiguration delay,
/// variability in propagation and the precision of synchronization".
///
/// The default adds up to the 2.75 ns guard band of the paper's simulations (§7.1), which the
/// paper does not derive; with these three parts from §3.4 and §4.1 it follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GuardBudget {
    /// Switch reconfiguration: one clock of the PHY interface (§4.1): 6.4 ns at 10 Gb/s
    /// (XGMII, 156.25 MHz) in the prototype, 2.5 ns at 50 Gb/s (LGMII, 390.625 MHz; one clock is
    /// 2.56 ns, which the paper rounds to 2.5).
    pub reconfiguration: Dur,
    /// How much equal-length links may differ, ± millimetres (§3.4: ±2 cm). Propagation then
    /// varies by twice this at 5 ns/m: 0.2 ns for ±2 cm.
    pub cable_tolerance_mm: u64,
    /// Synchronisation precision (§3.4: WhiteRabbit achieves sub-50 ps).
    pub sync_precision: Dur,
}

impl GuardBudget {
    /// The paper's parts: 2.5 ns + 0.2 ns + 0.05 ns = 2.75 ns.
    pub const PAPER: GuardBudget = GuardBudget {
        reconfiguration: Dur(2_500),
        cable_tolerance_mm: 20,
        sync_precision: Dur(50),
    };

    /// Propagation spread: the longest link against the shortest.
    pub fn propagation_spread(&self) -> Dur {
        Dur(2 * self.cable_tolerance_mm * PS_PER_MM)
    }

    pub fn total(&self) -> Dur {
        Dur(self.reconfiguration.0 + self.propagation_spread().0 + self.sync_precision.0)
    }
}

/// The guard band: from its parts, or as a total (a scenario file's `guard_ns`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Guard {
    Budget(GuardBudget),
    Given(Dur),
}

impl Guard {
    pub fn total(&self) -> Dur {
        match self {
            Guard::Budget(b) => b.total(),
            Guard::Given(d) => *d,
        }
    }
}

/// How long a cell takes from node to node, outside its slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Latency {
    /// From the cable a cell crosses from node to node (node, leaf, spine, leaf, node: all of
    /// it) at 5 ns/m, plus the latency of each of the two switches it crosses (§3.2: every cell
    /// crosses both stages).
    Physical { cable_mm: u64, per_switch: Dur },
    /// Given in whole slots, as a scenario file's `delay_slots`.
    Slots(u32),
}

/// §3.4's few metres of cable across a rack (see [`Latency::PAPER`]).
pub const PAPER_CABLE_MM: u64 = 3_000;

impl Latency {
    /// §3.4: "a typical rack is only a few meters high ... the maximum propagation latency
    /// across a rack is about 10-15 ns": 3 m of cable, 15 ns. The switches add nothing: a layer-0
    /// (optical) circuit switch imposes no latency (§3.5); an electrical one that retimes at
    /// layer 1 does (320 ns in the 10 Gb/s prototype, mostly PHY, §4.1) and is set with
    /// `per_switch`.
    pub const PAPER: Latency = Latency::Physical {
        cable_mm: PAPER_CABLE_MM,
        per_switch: Dur(0),
    };
}

/// A Shoal rack as a hardware architect states it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ShoalSpec {
    pub nodes: usize,
    /// Channels per node, each switched by its own plane of circuit switches (§3.4).
    pub channels: usize,
    pub channel_rate: Rate,
    /// Ports per circuit switch, k.
    pub switch_ports: usize,
    pub cell_bytes: u32,
    pub header_bytes: u32,
    /// Framing sent with every cell, outside it (0 in the paper's simulations).
    pub overhead_bytes: u32,
    pub guard: Guard,
    /// The slot including its guard band; `None`: the shortest that carries a cell, the cell's
    /// time on the wire plus the guard band (§3.4: "a slot size of 20.5 ns (without guard band)
    /// will correspond to 64 B cells over a 25 Gbps channel").
    pub slot: Option<Dur>,
    pub latency: Latency,
    pub arrangement: Arrangement,
}

impl Default for ShoalSpec {
    /// §5's rack: 512 nodes with 100 Gb/s each over 2 channels of 50 Gb/s (the circuit switches
    /// are 64 x 50 Gb/s), 64 B cells with an 8 B header (Fig. 5), the guard band's parts of
    /// [`GuardBudget::PAPER`], the shortest slot, 3 m of cable, and Appendix A's schedule so
    /// that the propagation delay is absorbed.
    fn default() -> ShoalSpec {
        ShoalSpec {
            nodes: 512,
            channels: 2,
            channel_rate: Rate::gbps(50),
            switch_ports: 64,
            cell_bytes: 64,
            header_bytes: 8,
            overhead_bytes: 0,
            guard: Guard::Budget(GuardBudget::PAPER),
            slot: None,
            latency: Latency::PAPER,
            arrangement: Arrangement::PropagationAware,
        }
    }
}

/// The circuit switches: one two-tier Clos plane per channel (§3.2, §3.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ClosSizing {
    pub planes: usize,
    pub ports: usize,
    /// Always 2: the paper's fabric is a two-tier Clos, `k²/2` nodes at most.
    pub tiers: usize,
    pub max_nodes: usize,
    pub leaves_per_plane: usize,
    pub spines_per_plane: usize,
    pub links_per_leaf_spine: usize,
    pub switches_per_plane: usize,
    pub switches: usize,
}

/// Slot, guard band, epoch and latency, in picoseconds or slots.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Timing {
    /// A cell (and its framing) on the wire at the channel rate.
    pub cell_ps: u64,
    pub guard_ps: u64,
    pub slot_ps: u64,
    /// Share of a slot not lost to the guard band.
    pub duty_cycle: f64,
    /// Permutation columns per epoch: N − 1 (or N for Appendix A with an even N).
    pub columns: usize,
    /// ceil(columns / channels) (§3.4).
    pub epoch_slots: u64,
    pub epoch_ps: u64,
    /// Node to node outside the slot: cable and switches.
    pub one_way_ps: u64,
    /// A cell sent in slot s can be forwarded from slot s + this (the simulator's
    /// `delay_slots`): its last bit leaves by the end of slot s and arrives `one_way` later.
    pub delay_slots: u32,
    /// Fewest slots between i -> j and j -> i in the schedule: Appendix A needs it at least
    /// `delay_slots`, so that feedback answers the right cell (the propagation-aware
    /// arrangement is refused otherwise; the cyclic one is sized anyway, as the rack runs it).
    pub turnaround_slots: u32,
    /// The longest a cell can take from being ready at its source to its destination on an
    /// unloaded rack: up to a slot to the next slot boundary, a hop to whichever node comes
    /// next, up to an epoch at that intermediate until it meets the destination, and a second
    /// hop: `epoch + 2·delay` slots.
    pub worst_case_unloaded_slots: u64,
    pub worst_case_unloaded_ps: u64,
    /// Eq. 5: with the ready queues no queue holds more than N cells, and each queue is
    /// served once per epoch, so a cell released into its source queue leaves each of its two
    /// queues within N epochs: `2·N·epoch + 2·delay` slots at most, whatever the traffic. (How
    /// long congestion control holds a cell before release is its flow's fair share, not a
    /// property of the fabric.)
    pub worst_case_queued_ps: u64,
}

/// What one node can send.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Throughput {
    /// All channels at the line rate.
    pub node_gbps: f64,
    /// Cell payload over slots, guard bands, headers and the schedule's idle columns.
    pub payload_gbps: f64,
    /// What any traffic pattern gets at least: detouring costs at most half (§3.3.1).
    pub guaranteed_gbps: f64,
}

/// The sizing of one rack.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RackSizing {
    pub clos: ClosSizing,
    pub timing: Timing,
    pub throughput: Throughput,
}

/// Sizes the rack, refusing what cannot be built or scheduled with the input at fault.
pub fn size_rack(spec: &ShoalSpec) -> Result<RackSizing, SizingError> {
    check(spec)?;
    let shape = ClosShape::new(spec.nodes, spec.channels, spec.switch_ports).map_err(clos_error)?;
    let clos = ClosSizing {
        planes: shape.planes(),
        ports: shape.ports(),
        tiers: 2,
        max_nodes: shape.ports() * shape.ports() / 2,
        leaves_per_plane: shape.leaves(),
        spines_per_plane: shape.spines(),
        links_per_leaf_spine: shape.links_per_leaf_spine(),
        switches_per_plane: shape.switches_per_plane(),
        switches: shape.switches_per_plane() * shape.planes(),
    };

    let cell = spec
        .channel_rate
        .serialize(u64::from(spec.cell_bytes) + u64::from(spec.overhead_bytes));
    let guard = spec.guard.total();
    let slot = spec.slot.unwrap_or(Dur(cell.0 + guard.0));
    if slot > MAX_DUR {
        return Err(SizingError::new(
            "channel_gbps",
            format!(
                "a {} B cell takes {cell} at {} Gb/s: slots of more than 1 ms are not sized",
                spec.cell_bytes,
                spec.channel_rate.as_gbps_f64()
            ),
        ));
    }
    if guard.0 >= slot.0 {
        return Err(SizingError::new(
            "guard_ns",
            format!("the guard band ({guard}) must be shorter than the slot ({slot})"),
        ));
    }
    if cell.0 > slot.0 - guard.0 {
        return Err(SizingError::new(
            "slot_ns",
            format!(
                "a {} B cell with {} B of framing takes {cell} at {} Gb/s, more than the {} the \
                 slot leaves after its {guard} guard band",
                spec.cell_bytes,
                spec.overhead_bytes,
                spec.channel_rate.as_gbps_f64(),
                Dur(slot.0 - guard.0)
            ),
        ));
    }
    let (one_way, delay_key) = match spec.latency {
        Latency::Physical {
            cable_mm,
            per_switch,
        } => (Dur(cable_mm * PS_PER_MM + 2 * per_switch.0), "cable_m"),
        Latency::Slots(_) => (Dur(0), "delay_slots"),
    };
    let delay_slots = match spec.latency {
        Latency::Physical { .. } => 1 + one_way.0.div_ceil(slot.0),
        Latency::Slots(d) => u64::from(d),
    };
    let delay_slots = u32::try_from(delay_slots)
        .ok()
        .filter(|&d| d >= 1)
        .ok_or_else(|| {
            SizingError::new(
                delay_key,
                format!(
                    "a node-to-node delay of 1 to {} slots, got {delay_slots}",
                    u32::MAX
                ),
            )
        })?;
    // As the rack does: Appendix A's arrangement must absorb the delay; Fig. 3's cyclic one is
    // built whatever the delay, and feedback may then answer an older cell (Fig. 9).
    let schedule = FabricSchedule::new(FabricSpec {
        nodes: spec.nodes,
        channels: spec.channels,
        arrangement: spec.arrangement,
        delay_slots: (spec.arrangement == Arrangement::PropagationAware).then_some(delay_slots),
    })
    .map_err(|e| schedule_error(e, delay_key))?;
    let epoch = schedule.epoch_slots();
    let n = spec.nodes as u64;
    let d = u64::from(delay_slots);
    let unloaded = epoch + 2 * d;
    let timing = Timing {
        cell_ps: cell.0,
        guard_ps: guard.0,
        slot_ps: slot.0,
        duty_cycle: (slot.0 - guard.0) as f64 / slot.0 as f64,
        columns: schedule.columns(),
        epoch_slots: epoch,
        epoch_ps: epoch * slot.0,
        one_way_ps: one_way.0,
        delay_slots,
        turnaround_slots: schedule.min_turnaround(),
        worst_case_unloaded_slots: unloaded,
        worst_case_unloaded_ps: unloaded * slot.0,
        worst_case_queued_ps: (2 * n * epoch + 2 * d) * slot.0,
    };

    let payload_bits = f64::from(spec.cell_bytes - spec.header_bytes) * 8.0;
    // N − 1 cells per epoch carry data for a node; the other transmit opportunities of the
    // epoch (Appendix A's virtual node, a last slot the channels do not fill) are idle.
    let payload_gbps = (n - 1) as f64 * payload_bits / (epoch * slot.0) as f64 * 1e3;
    let throughput = Throughput {
        node_gbps: spec.channels as f64 * spec.channel_rate.as_gbps_f64(),
        payload_gbps,
        guaranteed_gbps: payload_gbps / 2.0,
    };
    Ok(RackSizing {
        clos,
        timing,
        throughput,
    })
}

/// The checks `ClosShape` and `FabricSchedule` do not make: sizes that would overflow or
/// that no rack has.
fn check(spec: &ShoalSpec) -> Result<(), SizingError> {
    if !(2..=MAX_NODES).contains(&spec.nodes) {
        return Err(SizingError::new(
            "nodes",
            format!("2 to {MAX_NODES} nodes, got {}", spec.nodes),
        ));
    }
    if !(1..=MAX_CHANNELS).contains(&spec.channels) {
        return Err(SizingError::new(
            "channels",
            format!("1 to {MAX_CHANNELS} channels, got {}", spec.channels),
        ));
    }
    if spec.channel_rate.0 == 0 || spec.channel_rate > Rate::gbps(100_000) {
        return Err(SizingError::new(
            "channel_gbps",
            format!(
                "above 0 and at most 100,000 Gb/s, got {} Gb/s",
                spec.channel_rate.as_gbps_f64()
            ),
        ));
    }
    if spec.cell_bytes < 2 || spec.cell_bytes > 1 << 20 {
        return Err(SizingError::new(
            "cell_bytes",
            format!(
                "2 B (a header and a payload byte) to 1 MiB, got {}",
                spec.cell_bytes
            ),
        ));
    }
    if spec.header_bytes == 0 || spec.header_bytes >= spec.cell_bytes {
        return Err(SizingError::new(
            "header_bytes",
            format!(
                "at least 1 and below the cell size ({} B), got {}",
                spec.cell_bytes, spec.header_bytes
            ),
        ));
    }
    if spec.overhead_bytes > 1 << 20 {
        return Err(SizingError::new(
            "overhead_bytes",
            "at most 1 MiB of framing per cell",
        ));
    }
    match spec.guard {
        Guard::Budget(b) => {
            if b.cable_tolerance_mm > MAX_CABLE_MM {
                return Err(SizingError::new("cable_tolerance_mm", "at most 1 km"));
            }
            if b.reconfiguration > MAX_DUR {
                return Err(SizingError::new("reconfiguration_ns", "at most 1 ms"));
            }
            if b.sync_precision > MAX_DUR {
                return Err(SizingError::new("sync_ns", "at most 1 ms"));
            }
        }
        Guard::Given(d) if d > MAX_DUR => {
            return Err(SizingError::new("guard_ns", "at most 1 ms"));
        }
        Guard::Given(_) => {}
    }
    if spec.slot.is_some_and(|s| s > MAX_DUR) {
        return Err(SizingError::new("slot_ns", "at most 1 ms"));
    }
    if let Latency::Slots(d) = spec.latency
        && d > MAX_DELAY_SLOTS
    {
        return Err(SizingError::new(
            "delay_slots",
            format!("at most {MAX_DELAY_SLOTS} slots, got {d}"),
        ));
    }
    if let Latency::Physical {
        cable_mm,
        per_switch,
    } = spec.latency
    {
        if cable_mm > MAX_CABLE_MM {
            return Err(SizingError::new("cable_m", "at most 1,000 m"));
        }
        if per_switch > MAX_DUR {
            return Err(SizingError::new("switch_latency_ns", "at most 1 ms"));
        }
    }
    Ok(())
}

fn clos_error(e: ClosError) -> SizingError {
    SizingError::new("switch_ports", e.to_string())
}

fn schedule_error(e: ScheduleError, delay_key: &'static str) -> SizingError {
    let key = match e {
        ScheduleError::TooFewNodes { .. } | ScheduleError::TooManyNodes { .. } => "nodes",
        ScheduleError::NoChannels
        | ScheduleError::TooManyChannels { .. }
        | ScheduleError::MoreChannelsThanColumns { .. } => "channels",
        ScheduleError::DelayTooLarge { .. } => delay_key,
    };
    SizingError::new(key, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guard_band_of_the_simulations_is_the_sum_of_section_3_4s_parts() {
        // §7.1: 2.75 ns; §3.4: reconfiguration (2.5 ns at 50 Gb/s, §4.1), ±2 cm of cable
        // (0.2 ns), sub-50 ps synchronisation.
        assert_eq!(GuardBudget::PAPER.propagation_spread(), Dur(200));
        assert_eq!(GuardBudget::PAPER.total(), Dur(2_750));
    }

    /// §7.1's rack: 4 x 25 Gb/s, 64 B cells, a 23.25 ns slot of which 2.75 ns guard band:
    /// 20.48 ns of cell ("20.5 ns" in §3.4), 512 nodes in 128 slots (§3.4's epoch formula, with
    /// Appendix A's extra column for an even N).
    fn section_7_rack() -> ShoalSpec {
        ShoalSpec {
            channels: 4,
            channel_rate: Rate::gbps(25),
            slot: Some(Dur(23_250)),
            ..ShoalSpec::default()
        }
    }

    #[test]
    fn section_7s_slot_and_epoch() {
        let t = size_rack(&section_7_rack()).unwrap().timing;
        assert_eq!(t.cell_ps, 20_480);
        assert_eq!(t.guard_ps, 2_750);
        assert_eq!(t.columns, 512);
        assert_eq!(t.epoch_slots, 128);
        assert_eq!(t.epoch_ps, 128 * 23_250);
        // 15 ns of cable fits in the slot after the cell's: it is forwarded two slots on, the
        // delay the simulator's paper configuration assumes.
        assert_eq!(t.delay_slots, 2);
        assert!(t.turnaround_slots >= t.delay_slots);
        // The shortest slot would be the cell plus the guard band: 23.23 ns.
        let shortest = size_rack(&ShoalSpec {
            slot: None,
            ..section_7_rack()
        })
        .unwrap();
        assert_eq!(shortest.timing.slot_ps, 23_230);
    }

    #[test]
    fn section_5s_rack_has_48_circuit_switches_in_two_planes() {
        let c = size_rack(&ShoalSpec::default()).unwrap().clos;
        assert_eq!((c.leaves_per_plane, c.spines_per_plane), (16, 8));
        assert_eq!(c.switches_per_plane, 24);
        assert_eq!(c.planes, 2);
        assert_eq!(c.switches, 48);
        // §3.2: 64-port switches connect up to 2,048 nodes.
        assert_eq!(c.max_nodes, 2_048);
    }

    #[test]
    fn more_nodes_than_a_two_tier_clos_holds_names_the_switch_ports() {
        let e = size_rack(&ShoalSpec {
            nodes: 2_049,
            ..ShoalSpec::default()
        })
        .unwrap_err();
        assert_eq!(e.key, "switch_ports");
        assert!(e.reason.contains("at least 66 ports"), "{e}");
    }

    #[test]
    fn throughput_is_the_payload_over_the_slot_and_half_of_it_is_guaranteed() {
        let s = size_rack(&section_7_rack()).unwrap().throughput;
        assert_eq!(s.node_gbps, 100.0);
        // 56 B of payload per 23.25 ns slot on 4 channels, 511 of 512 columns used.
        let expect = 4.0 * 56.0 * 8.0 / 23.25 * 511.0 / 512.0;
        assert!((s.payload_gbps - expect).abs() < 1e-9, "{}", s.payload_gbps);
        assert_eq!(s.guaranteed_gbps, s.payload_gbps / 2.0);
    }

    #[test]
    fn the_unloaded_worst_case_is_an_epoch_and_two_hops() {
        let t = size_rack(&ShoalSpec::default()).unwrap().timing;
        assert_eq!(
            t.worst_case_unloaded_slots,
            t.epoch_slots + 2 * u64::from(t.delay_slots)
        );
        // Appendix A needs the turnaround to cover the delay; a cable too long for it is
        // refused, naming the cable.
        let e = size_rack(&ShoalSpec {
            latency: Latency::Physical {
                cable_mm: 1_000_000,
                per_switch: Dur(0),
            },
            ..ShoalSpec::default()
        })
        .unwrap_err();
        assert_eq!(e.key, "cable_m", "{e}");
    }

    #[test]
    fn impossible_inputs_name_their_key() {
        let cases = [
            (
                ShoalSpec {
                    nodes: 1,
                    ..ShoalSpec::default()
                },
                "nodes",
            ),
            (
                ShoalSpec {
                    nodes: usize::MAX,
                    ..ShoalSpec::default()
                },
                "nodes",
            ),
            (
                ShoalSpec {
                    switch_ports: 0,
                    ..ShoalSpec::default()
                },
                "switch_ports",
            ),
            (
                ShoalSpec {
                    channels: 0,
                    ..ShoalSpec::default()
                },
                "channels",
            ),
            (
                ShoalSpec {
                    channel_rate: Rate(0),
                    ..ShoalSpec::default()
                },
                "channel_gbps",
            ),
            (
                ShoalSpec {
                    slot: Some(Dur(5_000)),
                    ..ShoalSpec::default()
                },
                "slot_ns",
            ),
            (
                ShoalSpec {
                    guard: Guard::Given(Dur(20_000)),
                    slot: Some(Dur(20_000)),
                    ..ShoalSpec::default()
                },
                "guard_ns",
            ),
            (
                ShoalSpec {
                    header_bytes: 64,
                    ..ShoalSpec::default()
                },
                "header_bytes",
            ),
            (
                ShoalSpec {
                    latency: Latency::Slots(0),
                    ..ShoalSpec::default()
                },
                "delay_slots",
            ),
            (
                ShoalSpec {
                    arrangement: Arrangement::Cyclic,
                    latency: Latency::Slots(u32::MAX),
                    ..ShoalSpec::default()
                },
                "delay_slots",
            ),
            (
                ShoalSpec {
                    guard: Guard::Budget(GuardBudget {
                        cable_tolerance_mm: u64::MAX,
                        ..GuardBudget::PAPER
                    }),
                    ..ShoalSpec::default()
                },
                "cable_tolerance_mm",
            ),
            (
                ShoalSpec {
                    guard: Guard::Budget(GuardBudget {
                        sync_precision: Dur(u64::MAX),
                        ..GuardBudget::PAPER
                    }),
                    ..ShoalSpec::default()
                },
                "sync_ns",
            ),
            (
                ShoalSpec {
                    channel_rate: Rate(1),
                    ..ShoalSpec::default()
                },
                "channel_gbps",
            ),
        ];
        for (spec, key) in cases {
            let e = size_rack(&spec).unwrap_err();
            assert_eq!(e.key, key, "{e}");
        }
    }
}
