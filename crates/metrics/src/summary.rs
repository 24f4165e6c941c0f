//! Flow statistics as the Shoal paper reports them (§7.3): short flows (≤ 100 KB) by completion
//! time, long flows (≥ 1 MB) by average goodput; with an [`IdealFct`], short flows by slowdown too.

use crate::record::FlowRecord;
use crate::slowdown::IdealFct;
use serde::Serialize;

/// Short flows are at most this many bytes (§7.3).
pub const SHORT_FLOW_MAX_BYTES: u64 = 100_000;
/// Long flows are at least this many bytes (§7.3).
pub const LONG_FLOW_MIN_BYTES: u64 = 1_000_000;

/// Mean and percentiles of a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Percentiles {
    pub count: usize,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Percentiles {
    /// Exact nearest-rank percentiles (the value at rank ceil(q·n)); `None` for an empty sample.
    pub fn of(mut values: Vec<f64>) -> Option<Percentiles> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let rank = |q: f64| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
        Some(Percentiles {
            count: n,
            mean: values.iter().sum::<f64>() / n as f64,
            p50: rank(0.5),
            p99: rank(0.99),
            p999: rank(0.999),
            max: values[n - 1],
        })
    }
}

/// The per-run flow summary every fabric prints.
///
/// Every field is always serialised (`null` when absent), in declaration order, so the JSON has
/// the same keys whatever the run; fields are only ever appended.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FlowSummary {
    pub flows: usize,
    pub completed: usize,
    /// Completion times of completed short flows, in microseconds.
    pub short_fct_us: Option<Percentiles>,
    /// Goodput of completed long flows, in Gb/s.
    pub long_goodput_gbps: Option<Percentiles>,
    /// Completion times of all completed flows, in microseconds.
    pub all_fct_us: Option<Percentiles>,
    /// Completed short flows (the count behind `short_fct_us`, kept when it is `None`).
    pub short_completed: usize,
    /// Completed long flows.
    pub long_completed: usize,
    /// Realised mean size of all flows handed to the fabric, completed or not, in bytes: the
    /// workload actually drawn, to compare with the one asked for; `None` without flows.
    pub mean_flow_bytes: Option<f64>,
    /// Payload bytes of the completed flows.
    pub delivered_bytes: u64,
    /// Slowdown (FCT / ideal FCT) of completed short flows with a defined slowdown; only
    /// [`FlowSummary::with_ideal`] computes it, [`FlowSummary::of`] leaves it `None`.
    pub short_slowdown: Option<Percentiles>,
}

fn is_short(r: &FlowRecord) -> bool {
    r.bytes <= SHORT_FLOW_MAX_BYTES
}

fn is_long(r: &FlowRecord) -> bool {
    r.bytes >= LONG_FLOW_MIN_BYTES
}

/// The completed flows among `records`.
fn done(records: &[FlowRecord]) -> impl Iterator<Item = &FlowRecord> {
    records.iter().filter(|r| r.finish.is_some())
}

impl FlowSummary {
    pub fn of(records: &[FlowRecord]) -> FlowSummary {
        let fct_us = |r: &FlowRecord| r.fct().map(|d| d.as_us_f64());
        let total_bytes: u128 = records.iter().map(|r| u128::from(r.bytes)).sum();
        FlowSummary {
            flows: records.len(),
            completed: done(records).count(),
            short_fct_us: Percentiles::of(
                done(records)
                    .filter(|r| is_short(r))
                    .filter_map(fct_us)
                    .collect(),
            ),
            long_goodput_gbps: Percentiles::of(
                done(records)
                    .filter(|r| is_long(r))
                    .filter_map(|r| r.goodput_bps().map(|g| g / 1e9))
                    .collect(),
            ),
            all_fct_us: Percentiles::of(done(records).filter_map(fct_us).collect()),
            short_completed: done(records).filter(|r| is_short(r)).count(),
            long_completed: done(records).filter(|r| is_long(r)).count(),
            mean_flow_bytes: (!records.is_empty())
                .then(|| total_bytes as f64 / records.len() as f64),
            delivered_bytes: done(records).fold(0, |sum, r| sum.saturating_add(r.bytes)),
            short_slowdown: None,
        }
    }

    /// [`FlowSummary::of`] plus the short-flow slowdown against the fabric's `ideal`. An invalid
    /// model (see [`IdealFct::ideal_fct`]) gives no slowdown rather than a wrong one.
    pub fn with_ideal(records: &[FlowRecord], ideal: &IdealFct) -> FlowSummary {
        FlowSummary {
            short_slowdown: Percentiles::of(
                done(records)
                    .filter(|r| is_short(r))
                    .filter_map(|r| ideal.slowdown(r))
                    .collect(),
            ),
            ..FlowSummary::of(records)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::{Dur, NodeId, Time};

    fn rec(bytes: u64, fct_ps: Option<u64>) -> FlowRecord {
        FlowRecord {
            id: 0,
            src: NodeId(0),
            dst: NodeId(1),
            bytes,
            start: Time(1_000),
            finish: fct_ps.map(|f| Time(1_000 + f)),
        }
    }

    #[test]
    fn nearest_rank_percentiles() {
        let p = Percentiles::of((1..=1000).map(|v| v as f64).collect()).unwrap();
        assert_eq!((p.p50, p.p99, p.p999, p.max), (500.0, 990.0, 999.0, 1000.0));
        assert_eq!(p.mean, 500.5);
        let one = Percentiles::of(vec![7.0]).unwrap();
        assert_eq!((one.p50, one.p999), (7.0, 7.0));
        assert!(Percentiles::of(vec![]).is_none());
    }

    #[test]
    fn flows_are_classed_by_size_and_unfinished_ones_excluded() {
        let s = FlowSummary::of(&[
            rec(50_000, Some(2_000_000)),     // short, 2 us
            rec(500_000, Some(9_000_000)),    // neither short nor long
            rec(1_000_000, Some(80_000_000)), // long: 8e6 bits / 80 us = 100 Gb/s
            rec(10, None),
        ]);
        assert_eq!((s.flows, s.completed), (4, 3));
        assert_eq!(s.short_fct_us.unwrap().mean, 2.0);
        assert!((s.long_goodput_gbps.unwrap().mean - 100.0).abs() < 1e-9);
        assert_eq!(s.all_fct_us.unwrap().count, 3);
        assert_eq!((s.short_completed, s.long_completed), (1, 1));
        assert_eq!(s.mean_flow_bytes, Some(1_550_010.0 / 4.0));
        assert_eq!(s.delivered_bytes, 1_550_000);
        assert_eq!(s.short_slowdown, None);
    }

    #[test]
    fn with_ideal_adds_short_flow_slowdown_only() {
        // 1 Gb/s, no base latency, no overhead: 10 kB ideally take 80 us.
        let ideal = IdealFct {
            rate_bps: 1e9,
            base_latency: Dur::ZERO,
            header_overhead: 0.0,
        };
        let records = [
            rec(10_000, Some(80_000_000)),
            rec(10_000, Some(240_000_000)),
            rec(10_000, None),
            rec(2_000_000, Some(1_000_000_000_000)),
        ];
        let s = FlowSummary::with_ideal(&records, &ideal);
        let sd = s.short_slowdown.unwrap();
        assert_eq!(sd.count, 2);
        assert!((sd.p50 - 1.0).abs() < 1e-12 && (sd.max - 3.0).abs() < 1e-12);
        assert_eq!(
            FlowSummary {
                short_slowdown: None,
                ..s
            },
            FlowSummary::of(&records)
        );
        let invalid = IdealFct {
            rate_bps: 0.0,
            ..ideal
        };
        assert_eq!(
            FlowSummary::with_ideal(&records, &invalid).short_slowdown,
            None
        );
    }

    #[test]
    fn empty_run_summarises_without_panicking_and_json_keys_are_stable() {
        let s = FlowSummary::of(&[]);
        assert_eq!(
            (s.flows, s.mean_flow_bytes, s.delivered_bytes),
            (0, None, 0)
        );
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            concat!(
                r#"{"flows":0,"completed":0,"short_fct_us":null,"long_goodput_gbps":null,"#,
                r#""all_fct_us":null,"short_completed":0,"long_completed":0,"#,
                r#""mean_flow_bytes":null,"delivered_bytes":0,"short_slowdown":null}"#
            )
        );
    }
}
