//! The cost of one send on the ideal switch, from the switch's parameters alone (no simulation):
//! the model its collective theory checks are read against, in the repro experiment and in
//! this crate's tests.

use crate::SwitchSpec;

/// A send's costs, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SendCost {
    /// Link rate, bytes per second.
    pub rate: f64,
    /// Payload bytes per packet.
    pub mss: f64,
    /// Header bytes per packet.
    pub header: f64,
    /// Propagation delay of one link, seconds.
    pub delay: f64,
}

impl SendCost {
    pub fn of(sw: &SwitchSpec) -> SendCost {
        SendCost {
            rate: sw.link_rate.0 as f64 / 8.0,
            mss: f64::from(sw.packet_bytes - sw.header_bytes),
            header: f64::from(sw.header_bytes),
            delay: sw.link_delay.0 as f64 * 1e-12,
        }
    }

    /// Seconds on one link for `c` payload bytes, headers included.
    pub fn wire(&self, c: f64) -> f64 {
        (c + (c / self.mss).ceil() * self.header) / self.rate
    }

    /// One-way latency of a send of `c` bytes: both links' propagation and the switch's store
    /// and forward of its last (at most full) packet.
    pub fn latency(&self, c: f64) -> f64 {
        2.0 * self.delay + (c.min(self.mss) + self.header) / self.rate
    }
}
