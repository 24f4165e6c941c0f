//! Flow statistics as the Shoal paper reports them (§7.3): short flows (≤ 100 KB) by completion
//! time, long flows (≥ 1 MB) by average goodput.

use crate::record::FlowRecord;
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
}

impl FlowSummary {
    pub fn of(records: &[FlowRecord]) -> FlowSummary {
        let done = || records.iter().filter(|r| r.finish.is_some());
        let fct_us = |r: &FlowRecord| r.fct().map(|d| d.as_us_f64());
        FlowSummary {
            flows: records.len(),
            completed: done().count(),
            short_fct_us: Percentiles::of(
                done()
                    .filter(|r| r.bytes <= SHORT_FLOW_MAX_BYTES)
                    .filter_map(fct_us)
                    .collect(),
            ),
            long_goodput_gbps: Percentiles::of(
                done()
                    .filter(|r| r.bytes >= LONG_FLOW_MIN_BYTES)
                    .filter_map(|r| r.goodput_bps().map(|g| g / 1e9))
                    .collect(),
            ),
            all_fct_us: Percentiles::of(done().filter_map(fct_us).collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::{NodeId, Time};

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
        let rec = |bytes, fct_ps: Option<u64>| FlowRecord {
            id: 0,
            src: NodeId(0),
            dst: NodeId(1),
            bytes,
            start: Time(1_000),
            finish: fct_ps.map(|f| Time(1_000 + f)),
        };
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
    }
}
