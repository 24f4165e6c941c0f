//! What Fig. 9 plots, measured during a run from `RunLimits::measure_from` on: the fabric
//! traversal latency of data cells (from the source adapter's link to the destination
//! adapter), and the queue of the last stage's links (element outputs that lead to an
//! adapter) as a data cell arriving there finds it.
//!
//! The queue is counted in data cells "in system": those waiting in the output plus the one the
//! link is serializing, if it is a data cell. That is the quantity §4.3's M/D/1 model describes
//! ([`crate::models::md1_distribution`]: the number a departure leaves behind, which for
//! Poisson arrivals is also what an arrival finds and the time average), so the measured
//! distribution and the model's are read on the same axis.

use shoal_base::{Dur, Time};
use shoal_metrics::LatencyHistogram;

/// Fig. 9's measurements of one run.
#[derive(Clone, Debug, Default)]
pub struct Observations {
    /// The window measured: from `RunLimits::measure_from` (or 0) to the end of the run.
    pub from: Time,
    pub to: Time,
    /// `last_stage_queue[k]`: data cells that found `k` data cells in the last-stage output
    /// they arrived at.
    pub last_stage_queue: Vec<u64>,
    /// Directed links of the last stage (element to adapter).
    pub last_stage_links: u32,
    /// Data cells and their payload bytes that entered the last stage in the window.
    pub last_stage_cells: u64,
    pub last_stage_payload: u64,
    /// Traversal of data cells that arrived at their adapter in the window.
    pub traversal: LatencyHistogram,
}

impl Observations {
    pub(crate) fn queue_seen(&mut self, cells: u32, payload: u16) {
        let k = cells as usize;
        if k >= self.last_stage_queue.len() {
            self.last_stage_queue.resize(k + 1, 0);
        }
        self.last_stage_queue[k] += 1;
        self.last_stage_cells += 1;
        self.last_stage_payload += payload as u64;
    }

    pub(crate) fn traversed(&mut self, d: Dur) {
        self.traversal.record(d);
    }

    /// The window's length.
    pub fn window(&self) -> Dur {
        Dur(self.to.0.saturating_sub(self.from.0))
    }

    /// P(an arriving data cell finds at least `k` cells), from the histogram.
    pub fn queue_tail(&self, k: usize) -> f64 {
        let total: u64 = self.last_stage_queue.iter().sum();
        if total == 0 {
            return 0.0;
        }
        let at_least: u64 = self.last_stage_queue.iter().skip(k).sum();
        at_least as f64 / total as f64
    }
}
