//! Index newtypes of the schedule layer: slots, switches and switch ports.
//!
//! Node and channel ids come from `shoal-base`; a plane of the Clos is named by the channel it
//! carries (plane `c` switches channel `c` of every node), so it is a [`ChannelId`] too.

use serde::{Deserialize, Serialize};
use shoal_base::ChannelId;
use std::fmt;

/// A time slot. Schedules are periodic, so every query reduces a slot modulo the epoch: an engine
/// may pass its absolute slot counter directly, and slot `E + s` behaves like slot `s`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Slot(pub u64);

/// A leaf (first and third stage) switch of one plane.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct LeafId(pub u16);

/// A spine (middle stage) switch of one plane.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct SpineId(pub u16);

/// A port of one switch, `0..k`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct PortId(pub u16);

/// Which stage a switch belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SwitchKind {
    Leaf(LeafId),
    Spine(SpineId),
}

/// One circuit switch of the fabric: its plane and its place in that plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SwitchId {
    pub plane: ChannelId,
    pub kind: SwitchKind,
}

impl Slot {
    pub const fn idx(self) -> u64 {
        self.0
    }
}

impl LeafId {
    pub const fn idx(self) -> usize {
        self.0 as usize
    }
}

impl SpineId {
    pub const fn idx(self) -> usize {
        self.0 as usize
    }
}

impl PortId {
    pub const fn idx(self) -> usize {
        self.0 as usize
    }
}

impl SwitchId {
    pub const fn leaf(plane: ChannelId, leaf: LeafId) -> SwitchId {
        SwitchId {
            plane,
            kind: SwitchKind::Leaf(leaf),
        }
    }

    pub const fn spine(plane: ChannelId, spine: SpineId) -> SwitchId {
        SwitchId {
            plane,
            kind: SwitchKind::Spine(spine),
        }
    }
}

impl fmt::Display for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "slot {}", self.0)
    }
}

impl fmt::Display for LeafId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "leaf {}", self.0)
    }
}

impl fmt::Display for SpineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "spine {}", self.0)
    }
}

impl fmt::Display for PortId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "port {}", self.0)
    }
}

impl fmt::Display for SwitchKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SwitchKind::Leaf(l) => l.fmt(f),
            SwitchKind::Spine(s) => s.fmt(f),
        }
    }
}

impl fmt::Display for SwitchId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of plane {}", self.kind, self.plane.0)
    }
}
