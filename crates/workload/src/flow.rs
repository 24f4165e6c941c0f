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
