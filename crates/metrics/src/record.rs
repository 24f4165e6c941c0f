//! What a fabric reports for every flow.

use serde::Serialize;
use shoal_base::{Dur, NodeId, Time};

/// One flow's outcome. `finish` is the instant its last byte was delivered in order at the
/// destination; `None` if it had not completed when the run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FlowRecord {
    pub id: u64,
    pub src: NodeId,
    pub dst: NodeId,
    pub bytes: u64,
    pub start: Time,
    pub finish: Option<Time>,
}

impl FlowRecord {
    /// Flow completion time.
    pub fn fct(&self) -> Option<Dur> {
        self.finish.map(|f| f.since(self.start))
    }

    /// Payload bits per second over the flow's lifetime (headers excluded: `bytes` is payload).
    pub fn goodput_bps(&self) -> Option<f64> {
        let fct = self.fct()?;
        (fct.0 > 0).then(|| self.bytes as f64 * 8.0 / fct.as_secs_f64())
    }
}
