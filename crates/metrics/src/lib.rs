//! The metrics layer every fabric reports through: flow records, FCT/goodput/slowdown
//! summaries, latency histograms, realised load, sampled time series, per-destination
//! throughput, seed means with their 95% intervals, and the max-min fairness references.
//!
//! Fabrics produce [`FlowRecord`]s (and, if they sample, a [`TimeSeries`] driven by a
//! [`Sampler`]); everything else here is computed from those, so every fabric is measured the
//! same way. Time stays integer picoseconds ([`shoal_base::Dur`]); floats appear only in the
//! reported statistics.

#![forbid(unsafe_code)]

pub mod histogram;
pub mod interval;
pub mod load;
pub mod maxmin;
pub mod record;
pub mod series;
pub mod slowdown;
pub mod summary;
pub mod throughput;

pub use histogram::LatencyHistogram;
pub use interval::{MeanCi, mean_ci95, t975};
pub use load::{offered_bytes_per_sec, realised_load};
pub use record::FlowRecord;
pub use series::{Sample, Sampler, TimeSeries};
pub use slowdown::IdealFct;
pub use summary::{FlowSummary, LONG_FLOW_MIN_BYTES, Percentiles, SHORT_FLOW_MAX_BYTES};
pub use throughput::DestThroughput;
