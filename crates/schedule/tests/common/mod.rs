//! Helpers shared by the schedule tests.

use shoal_schedule::{Arrangement, FabricSpec};

/// A schedule request with no delay to absorb.
pub fn spec(nodes: usize, channels: usize, arrangement: Arrangement) -> FabricSpec {
    FabricSpec {
        nodes,
        channels,
        arrangement,
        delay_slots: None,
    }
}
