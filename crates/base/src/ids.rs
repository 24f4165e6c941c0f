//! Newtype indices, so a node id cannot be passed where a channel is expected.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A rack node (or host). Racks of up to 65,535 nodes; the Shoal cell header itself addresses
/// 1,024 (10 bits), which the wire format checks.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct NodeId(pub u16);

/// One of a node's parallel channels (e.g. the four 25 Gb/s lanes of a 100 Gb/s link).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct ChannelId(pub u8);

impl NodeId {
    pub const fn idx(self) -> usize {
        self.0 as usize
    }
}

impl ChannelId {
    pub const fn idx(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

impl fmt::Display for ChannelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ch{}", self.0)
    }
}
