//! The fabric schedule: which node transmits to which in every (slot, channel).
//!
//! One epoch is a sequence of permutation columns (see [`Arrangement`]); columns are interleaved
//! over the channels, column position `p` going to slot `p / C` and channel `p % C`, so `C`
//! channels shrink the epoch to `ceil(columns / C)` slots (§3.4). If `C` does not divide the column
//! count, the leftover channel positions of the last slot are idle.
//!
//! Every column is a cyclic shift, so the schedule is stored as one offset per (slot, channel)
//! plus the inverse table offset -> position: O(N) memory, O(1) queries, and a 2,048-node schedule
//! builds in microseconds.

use crate::arrangement::Arrangement;
use crate::ids::Slot;
use serde::{Deserialize, Serialize};
use shoal_base::{ChannelId, NodeId};

/// The largest node count a 16-bit [`NodeId`] can name.
pub const MAX_NODES: usize = u16::MAX as usize;
/// The largest channel count an 8-bit [`ChannelId`] can name.
pub const MAX_CHANNELS: usize = u8::MAX as usize + 1;

/// What to build: the plain values a user typed, before validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FabricSpec {
    pub nodes: usize,
    pub channels: usize,
    pub arrangement: Arrangement,
    /// Node-to-node latency in slots that the schedule must absorb (Appendix A): `j -> i` must
    /// come at least this many slots after `i -> j`, so that `j` has received `i`'s cell before
    /// answering it.
    pub delay_slots: Option<u32>,
}

/// A configuration the schedule cannot serve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("a fabric schedule needs at least 2 nodes, but {nodes} was asked for")]
    TooFewNodes { nodes: usize },
    #[error("{nodes} nodes is more than the {max} that a 16-bit node id can name")]
    TooManyNodes { nodes: usize, max: usize },
    #[error("a fabric schedule needs at least one channel, but 0 was asked for")]
    NoChannels,
    #[error("{channels} channels is more than the {max} that an 8-bit channel id can name")]
    TooManyChannels { channels: usize, max: usize },
    #[error(
        "{channels} channels but the {arrangement} schedule of {nodes} nodes has only {columns} \
         columns, so channel {columns} and above would never carry a cell: use at most {columns} \
         channels"
    )]
    MoreChannelsThanColumns {
        nodes: usize,
        channels: usize,
        columns: usize,
        arrangement: Arrangement,
    },
    #[error(
        "{}",
        delay_sentence(
            *.delay_slots,
            *.nodes,
            *.channels,
            *.arrangement,
            *.max_absorbed,
            *.propagation_aware_max
        )
    )]
    DelayTooLarge {
        delay_slots: u32,
        nodes: usize,
        channels: usize,
        arrangement: Arrangement,
        /// The largest delay the requested arrangement absorbs (its minimum turnaround).
        max_absorbed: u32,
        /// The largest delay the propagation-aware arrangement absorbs with the same N and C.
        propagation_aware_max: u32,
    },
}

/// "1 slot", "4 slots".
fn counted(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn delay_sentence(
    delay: u32,
    nodes: usize,
    channels: usize,
    arrangement: Arrangement,
    max_absorbed: u32,
    pa_max: u32,
) -> String {
    let on = counted(channels as u64, "channel");
    let head = format!(
        "a node-to-node delay of {} needs j -> i at least that long after i -> j, but the \
         {arrangement} schedule of {nodes} nodes on {on} leaves only {} for some pair, so it \
         absorbs at most that",
        counted(delay.into(), "slot"),
        counted(max_absorbed.into(), "slot"),
    );
    if arrangement == Arrangement::Cyclic && pa_max >= delay {
        format!(
            "{head}; the propagation-aware arrangement (Appendix A) absorbs up to {}: use it",
            counted(pa_max.into(), "slot")
        )
    } else {
        format!(
            "{head}; no arrangement of {nodes} nodes on {on} absorbs more than {}, and fewer \
             channels lengthen the epoch and absorb more",
            counted(pa_max.max(max_absorbed).into(), "slot")
        )
    }
}

/// A validated, periodic fabric schedule. Built once by [`FabricSchedule::new`], then queried.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricSchedule {
    spec: FabricSpec,
    /// Shift modulus: `N`, or `N + 1` with a virtual node (propagation-aware, even `N`).
    modulus: u32,
    columns: u32,
    epoch: u32,
    /// Per (slot, channel) position `slot * C + channel`: the column's offset, 0 if idle.
    offsets: Vec<u16>,
    /// Per offset `1..M`: the position that carries it (`u32::MAX` for offset 0).
    position_of: Vec<u32>,
    min_turnaround: u32,
}

impl FabricSchedule {
    /// Validates `spec` and builds the schedule, refusing what it cannot serve.
    pub fn new(spec: FabricSpec) -> Result<FabricSchedule, ScheduleError> {
        let FabricSpec {
            nodes,
            channels,
            arrangement,
            delay_slots,
        } = spec;
        if nodes < 2 {
            return Err(ScheduleError::TooFewNodes { nodes });
        }
        if nodes > MAX_NODES {
            return Err(ScheduleError::TooManyNodes {
                nodes,
                max: MAX_NODES,
            });
        }
        if channels == 0 {
            return Err(ScheduleError::NoChannels);
        }
        if channels > MAX_CHANNELS {
            return Err(ScheduleError::TooManyChannels {
                channels,
                max: MAX_CHANNELS,
            });
        }
        let columns = arrangement.columns(nodes);
        if channels > columns {
            return Err(ScheduleError::MoreChannelsThanColumns {
                nodes,
                channels,
                columns,
                arrangement,
            });
        }
        let schedule = Self::build_unchecked(spec);
        if let Some(delay) = delay_slots {
            let max_absorbed = schedule.min_turnaround;
            if delay > max_absorbed {
                let propagation_aware_max = Self::build_unchecked(FabricSpec {
                    arrangement: Arrangement::PropagationAware,
                    delay_slots: None,
                    ..spec
                })
                .min_turnaround;
                return Err(ScheduleError::DelayTooLarge {
                    delay_slots: delay,
                    nodes,
                    channels,
                    arrangement,
                    max_absorbed,
                    propagation_aware_max,
                });
            }
        }
        Ok(schedule)
    }

    /// Lays the arrangement's columns out over (slot, channel); the caller has validated `spec`.
    fn build_unchecked(spec: FabricSpec) -> FabricSchedule {
        let FabricSpec {
            nodes,
            channels,
            arrangement,
            ..
        } = spec;
        let modulus = arrangement.modulus(nodes);
        let columns = arrangement.columns(nodes);
        let epoch = columns.div_ceil(channels);
        let mut offsets = vec![0u16; epoch * channels];
        let mut position_of = vec![u32::MAX; modulus];
        for (p, slot) in offsets.iter_mut().enumerate().take(columns) {
            let d = arrangement.offset_at(nodes, p);
            *slot = d as u16;
            position_of[d] = p as u32;
        }
        let mut schedule = FabricSchedule {
            spec,
            modulus: modulus as u32,
            columns: columns as u32,
            epoch: epoch as u32,
            offsets,
            position_of,
            min_turnaround: 0,
        };
        schedule.min_turnaround = schedule.compute_min_turnaround();
        schedule
    }

    /// Every ordered pair with offset `d` has its reverse at offset `M - d`, so the minimum over
    /// pairs is a minimum over offsets. With a virtual node every offset still serves some real
    /// pair (`N >= 2`), so no offset has to be skipped.
    fn compute_min_turnaround(&self) -> u32 {
        let m = self.modulus as usize;
        (1..m)
            .map(|d| {
                let there = self.position_of[d] / self.channels_u32();
                let back = self.position_of[m - d] / self.channels_u32();
                (back + self.epoch - there) % self.epoch
            })
            .min()
            .unwrap_or(0)
    }

    fn channels_u32(&self) -> u32 {
        self.spec.channels as u32
    }

    /// The validated specification this schedule was built from.
    pub fn spec(&self) -> FabricSpec {
        self.spec
    }

    pub fn nodes(&self) -> usize {
        self.spec.nodes
    }

    pub fn channels(&self) -> usize {
        self.spec.channels
    }

    pub fn arrangement(&self) -> Arrangement {
        self.spec.arrangement
    }

    pub fn delay_slots(&self) -> Option<u32> {
        self.spec.delay_slots
    }

    /// Slots per epoch: `ceil(columns / C)`.
    pub fn epoch_slots(&self) -> u64 {
        u64::from(self.epoch)
    }

    /// Permutation columns per epoch (`N - 1`, or `N` for propagation-aware with even `N`).
    pub fn columns(&self) -> usize {
        self.columns as usize
    }

    /// The slots of one epoch, in order.
    pub fn slots(&self) -> impl Iterator<Item = Slot> + use<> {
        (0..self.epoch_slots()).map(Slot)
    }

    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> + use<> {
        (0..self.spec.nodes as u16).map(NodeId)
    }

    pub fn channel_ids(&self) -> impl Iterator<Item = ChannelId> + use<> {
        (0..self.spec.channels).map(|c| ChannelId(c as u8))
    }

    /// Transmit opportunities per node per epoch over all channels (`epoch × C`); `N - 1` of them
    /// carry a cell, the rest are idle.
    pub fn opportunities_per_node(&self) -> usize {
        self.offsets.len()
    }

    fn position(&self, slot: Slot, channel: ChannelId) -> usize {
        assert!(
            channel.idx() < self.spec.channels,
            "{channel} is outside a schedule of {} channels",
            self.spec.channels
        );
        let s = (slot.0 % self.epoch_slots()) as usize;
        s * self.spec.channels + channel.idx()
    }

    fn check_node(&self, node: NodeId) {
        assert!(
            node.idx() < self.spec.nodes,
            "{node} is outside a schedule of {} nodes",
            self.spec.nodes
        );
    }

    /// The shift offset of the column at (slot, channel), `None` for an idle position.
    pub(crate) fn offset(&self, slot: Slot, channel: ChannelId) -> Option<u32> {
        match self.offsets[self.position(slot, channel)] {
            0 => None,
            d => Some(u32::from(d)),
        }
    }

    /// Whom `node` transmits to in `slot` on `channel`; `None` when it idles.
    ///
    /// # Panics
    /// If `node` or `channel` is outside the schedule (a programming error, like an index).
    pub fn peer(&self, slot: Slot, node: NodeId, channel: ChannelId) -> Option<NodeId> {
        self.check_node(node);
        let d = self.offset(slot, channel)?;
        let to = (u32::from(node.0) + d) % self.modulus;
        (to < self.spec.nodes as u32).then_some(NodeId(to as u16))
    }

    /// Who transmits to `node` in `slot` on `channel`; `None` when nobody does.
    ///
    /// # Panics
    /// If `node` or `channel` is outside the schedule.
    pub fn from(&self, slot: Slot, node: NodeId, channel: ChannelId) -> Option<NodeId> {
        self.check_node(node);
        let d = self.offset(slot, channel)?;
        let by = (u32::from(node.0) + self.modulus - d) % self.modulus;
        (by < self.spec.nodes as u32).then_some(NodeId(by as u16))
    }

    /// When the ordered pair `src -> dst` is served in each epoch; `None` for `src == dst` or a
    /// node outside the schedule.
    pub fn slot_of(&self, src: NodeId, dst: NodeId) -> Option<(Slot, ChannelId)> {
        let n = self.spec.nodes as u32;
        let (s, d) = (u32::from(src.0), u32::from(dst.0));
        if s == d || s >= n || d >= n {
            return None;
        }
        let offset = (d + self.modulus - s) % self.modulus;
        let p = self.position_of[offset as usize] as usize;
        let c = self.spec.channels;
        Some((Slot((p / c) as u64), ChannelId((p % c) as u8)))
    }

    /// Slots from `src -> dst` to the next `dst -> src`, counted cyclically within one epoch
    /// (0 when both are in the same slot); `None` for `src == dst`.
    pub fn turnaround(&self, src: NodeId, dst: NodeId) -> Option<u32> {
        let (there, _) = self.slot_of(src, dst)?;
        let (back, _) = self.slot_of(dst, src)?;
        let e = self.epoch_slots();
        Some(((back.0 + e - there.0) % e) as u32)
    }

    /// The minimum [`turnaround`](Self::turnaround) over all ordered pairs: a node-to-node latency
    /// of `d` slots is absorbed (Appendix A) iff `d <= min_turnaround()`.
    pub fn min_turnaround(&self) -> u32 {
        self.min_turnaround
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(nodes: usize, channels: usize, arrangement: Arrangement) -> FabricSchedule {
        FabricSchedule::new(FabricSpec {
            nodes,
            channels,
            arrangement,
            delay_slots: None,
        })
        .expect("valid spec")
    }

    #[test]
    fn the_eight_node_cyclic_schedule_is_figure_3() {
        let s = build(8, 1, Arrangement::Cyclic);
        assert_eq!(s.epoch_slots(), 7);
        // Slot t-1 carries offset t: node i sends to (i + t) mod 8.
        for t in 1..8u16 {
            for i in 0..8u16 {
                assert_eq!(
                    s.peer(Slot(u64::from(t - 1)), NodeId(i), ChannelId(0)),
                    Some(NodeId((i + t) % 8))
                );
            }
        }
        assert_eq!(s.min_turnaround(), 0, "offset 4 is its own inverse");
    }

    #[test]
    fn queries_reduce_the_slot_modulo_the_epoch() {
        let s = build(8, 2, Arrangement::Cyclic);
        assert_eq!(s.epoch_slots(), 4);
        let n = NodeId(3);
        assert_eq!(
            s.peer(Slot(1), n, ChannelId(1)),
            s.peer(Slot(5), n, ChannelId(1))
        );
        // Seven columns on two channels: the last slot's second channel idles.
        assert_eq!(s.peer(Slot(3), n, ChannelId(1)), None);
        assert_eq!(s.from(Slot(3), n, ChannelId(1)), None);
    }

    #[test]
    fn the_virtual_node_becomes_idle_slots() {
        let s = build(4, 1, Arrangement::PropagationAware);
        assert_eq!(s.epoch_slots(), 4);
        for n in s.node_ids() {
            let idle = s
                .slots()
                .filter(|&t| s.peer(t, n, ChannelId(0)).is_none())
                .count();
            assert_eq!(idle, 1, "{n} idles once per epoch");
        }
    }
}
