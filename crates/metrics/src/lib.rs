//! The metrics layer: flow records, FCT/goodput statistics and reference computations shared by
//! every fabric.

pub mod maxmin;
