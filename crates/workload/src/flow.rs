//! One unit of work for a fabric.

use serde::{Deserialize, Serialize};
use shoal_base::{NodeId, Time};

/// `bytes` of payload from `src` to `dst`, handed to the source at `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    pub id: u64,
    pub src: NodeId,
    pub dst: NodeId,
    pub bytes: u64,
    pub start: Time,
    /// Traffic class, 0 = highest priority; fabrics without classes use 0.
    pub class: u8,
}

/// The world outside a rack, reached through its uplinks: a flow from it is ingress traffic, one
/// to it egress traffic (XFabric §6.1), the other end a node of the rack. Only studies of a rack's
/// uplinks take such flows (XFabric's topology metrics route them to a gateway); a fabric's run
/// refuses them like any node outside it. It takes the last 16-bit id, so a workload with uplink
/// traffic spans at most 65,535 nodes.
pub const OUTSIDE: NodeId = NodeId(u16::MAX);

impl Flow {
    /// `bytes` from `src` to `dst` at time zero, id 0, class 0: an entry of a traffic volume
    /// (`crate::volumes`), numbered by the list it joins.
    pub fn volume(src: NodeId, dst: NodeId, bytes: u64) -> Flow {
        Flow {
            id: 0,
            src,
            dst,
            bytes,
            start: Time::ZERO,
            class: 0,
        }
    }

    /// Whether one end is [`OUTSIDE`].
    pub fn is_uplink(&self) -> bool {
        self.src == OUTSIDE || self.dst == OUTSIDE
    }
}
