//! The metrics layer: flow records, FCT/goodput statistics and reference computations shared by
//! every fabric.

pub mod maxmin;
pub mod record;
pub mod summary;

pub use record::FlowRecord;
pub use summary::{FlowSummary, Percentiles};
