//! Building, verifying and reporting a fabric in one step, for `shoal schedule ... --json` and for
//! every crate that wants a schedule it can trust.

use crate::arrangement::Arrangement;
use crate::clos::{Clos, ClosError, ClosShape, PortPeer};
use crate::fabric::{FabricSchedule, FabricSpec, ScheduleError};
use crate::ids::{PortId, SwitchId};
use crate::portmap::PortMap;
use crate::verify::{Verdict, Violation, verify};
use serde::Serialize;

/// Why a fabric could not be built: a refused configuration, or (a bug) a failed verification.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error(transparent)]
    Clos(#[from] ClosError),
    #[error("the constructed fabric failed verification: {0}")]
    Violation(#[from] Violation),
}

/// A fabric schedule, its Clos decomposition and the verifier's proof that they are sound.
#[derive(Clone, Debug)]
pub struct VerifiedFabric {
    schedule: FabricSchedule,
    clos: Clos,
    verdict: Verdict,
}

impl VerifiedFabric {
    /// Builds the schedule for `spec`, decomposes it onto `ports`-port switches and verifies both.
    pub fn build(spec: FabricSpec, ports: usize) -> Result<VerifiedFabric, BuildError> {
        let schedule = FabricSchedule::new(spec)?;
        let clos = Clos::new(&schedule, ports)?;
        let verdict = verify(&schedule, &clos)?;
        Ok(VerifiedFabric {
            schedule,
            clos,
            verdict,
        })
    }

    pub fn schedule(&self) -> &FabricSchedule {
        &self.schedule
    }

    pub fn clos(&self) -> &Clos {
        &self.clos
    }

    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }

    /// The full serializable report.
    pub fn report(&self) -> ScheduleReport {
        ScheduleReport::new(&self.schedule, &self.clos, self.verdict)
    }
}

/// Everything `shoal schedule --json` prints: the configuration, the fabric schedule, every
/// switch's port map in every slot, and the verdict.
#[derive(Clone, Debug, Serialize)]
pub struct ScheduleReport {
    pub nodes: usize,
    pub ports: usize,
    pub channels: usize,
    pub arrangement: Arrangement,
    pub delay_slots: Option<u32>,
    pub epoch_slots: u64,
    pub columns: usize,
    pub min_turnaround: u32,
    pub clos: ClosShape,
    /// (slot, channel) columns routed by the edge-colouring fallback rather than the fast path.
    pub coloured_columns: usize,
    pub fabric: Vec<FabricSlot>,
    pub switches: Vec<SwitchSchedule>,
    pub verdict: Verdict,
}

/// One slot of the fabric schedule.
#[derive(Clone, Debug, Serialize)]
pub struct FabricSlot {
    pub slot: u64,
    pub channels: Vec<ChannelPeers>,
}

/// Whom each node transmits to on one channel in one slot: `peers[i]` for node `i`, `null` idle.
#[derive(Clone, Debug, Serialize)]
pub struct ChannelPeers {
    pub channel: u8,
    pub peers: Vec<Option<u16>>,
}

/// One switch's cabling and its port map in every slot of the epoch: `slots[t]` is its
/// configuration in slot `t`.
#[derive(Clone, Debug, Serialize)]
pub struct SwitchSchedule {
    pub switch: SwitchId,
    pub ports: usize,
    /// `cabling[p]`: what port `p` is cabled to (`null`: unused).
    pub cabling: Vec<Option<PortPeer>>,
    pub slots: Vec<PortMap>,
}

impl ScheduleReport {
    /// Reports `schedule` and `clos` with the verdict obtained for them (only a
    /// [`VerifiedFabric`] has one, so a report always describes a verified fabric).
    pub(crate) fn new(schedule: &FabricSchedule, clos: &Clos, verdict: Verdict) -> ScheduleReport {
        let fabric = schedule
            .slots()
            .map(|slot| FabricSlot {
                slot: slot.0,
                channels: schedule
                    .channel_ids()
                    .map(|channel| ChannelPeers {
                        channel: channel.0,
                        peers: schedule
                            .node_ids()
                            .map(|n| schedule.peer(slot, n, channel).map(|p| p.0))
                            .collect(),
                    })
                    .collect(),
            })
            .collect();

        let shape = clos.shape();
        let epoch = schedule.epoch_slots() as usize;
        let mut switches: Vec<SwitchSchedule> = clos
            .switches()
            .map(|switch| SwitchSchedule {
                switch,
                ports: shape.ports(),
                cabling: (0..shape.ports())
                    .map(|p| shape.port_peer(switch.kind, PortId(p as u16)))
                    .collect(),
                slots: Vec::with_capacity(epoch),
            })
            .collect();
        // `switches()` lists plane by plane, leaves then spines, as `PlanePortMaps::iter` does.
        let per_plane = shape.switches_per_plane();
        for slot in schedule.slots() {
            for plane in schedule.channel_ids() {
                let maps = clos.plane_port_maps(plane, slot);
                for (i, (_, map)) in maps.iter().enumerate() {
                    switches[plane.idx() * per_plane + i]
                        .slots
                        .push(map.clone());
                }
            }
        }

        ScheduleReport {
            nodes: schedule.nodes(),
            ports: shape.ports(),
            channels: schedule.channels(),
            arrangement: schedule.arrangement(),
            delay_slots: schedule.delay_slots(),
            epoch_slots: schedule.epoch_slots(),
            columns: schedule.columns(),
            min_turnaround: schedule.min_turnaround(),
            clos: *shape,
            coloured_columns: clos.coloured_columns(),
            fabric,
            switches,
            verdict,
        }
    }
}

/// Builds, verifies and reports the fabric of `spec` on `ports`-port switches.
pub fn schedule_report(spec: FabricSpec, ports: usize) -> Result<ScheduleReport, BuildError> {
    Ok(VerifiedFabric::build(spec, ports)?.report())
}
