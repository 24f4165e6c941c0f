//! A mergeable latency histogram, for latencies too numerous to keep every value (per-cell or
//! per-packet delays, FCTs of million-flow runs), where [`Percentiles::of`] would need them all.
//!
//! Values are kept by [`hdrhistogram`] in whole nanoseconds (picoseconds rounded to the nearest
//! nanosecond) to 3 significant digits: a quantile is within 1/1024 (< 0.1%) of the exact
//! nearest-rank value, plus half a nanosecond of rounding. Nanoseconds, not picoseconds, because
//! sub-nanosecond resolution means nothing for a rack's latencies and costs memory. Count, mean,
//! min and max are tracked exactly on the side, in picoseconds.
//!
//! The histogram auto-resizes, starting small: its memory grows with the largest value recorded
//! (about 120 KB at 10 ms). Every [`Dur`] fits (`u64::MAX` ps is below 2^54 ns), so no value is
//! ever out of range; should a resize still fail, the value is clamped rather than lost.

use crate::summary::Percentiles;
use hdrhistogram::Histogram;
use shoal_base::Dur;

/// Significant decimal digits kept: values up to 2,048 ns are exact, larger ones within 1/1024.
const SIGFIG: u8 = 3;

/// Latencies as an HDR histogram; see the module doc for unit and precision.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    /// Exact sum of recorded values in picoseconds (u128: cannot overflow before the count does).
    sum_ps: u128,
    /// Exact extremes in picoseconds; `u64::MAX` and 0 while empty.
    min_ps: u64,
    max_ps: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        Self {
            hist: Histogram::new(SIGFIG).expect("3 significant digits is a valid configuration"),
            sum_ps: 0,
            min_ps: u64::MAX,
            max_ps: 0,
        }
    }

    pub fn record(&mut self, d: Dur) {
        let ps = d.ps();
        self.record_ns(ps / 1_000 + u64::from(ps % 1_000 >= 500), 1);
        self.sum_ps = self.sum_ps.saturating_add(u128::from(ps));
        self.min_ps = self.min_ps.min(ps);
        self.max_ps = self.max_ps.max(ps);
    }

    /// Adds every value of `other`, as if each had been recorded here.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        for (ns, count) in other.buckets() {
            self.record_ns(ns, count);
        }
        self.sum_ps = self.sum_ps.saturating_add(other.sum_ps);
        self.min_ps = self.min_ps.min(other.min_ps);
        self.max_ps = self.max_ps.max(other.max_ps);
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Exact mean, rounded to the nearest picosecond; `None` when empty.
    pub fn mean(&self) -> Option<Dur> {
        let n = u128::from(self.count());
        let mean = self.sum_ps.saturating_add(n / 2).checked_div(n)?;
        Some(Dur(u64::try_from(mean).unwrap_or(u64::MAX)))
    }

    /// Exact smallest value; `None` when empty.
    pub fn min(&self) -> Option<Dur> {
        (!self.is_empty()).then_some(Dur(self.min_ps))
    }

    /// Exact largest value; `None` when empty.
    pub fn max(&self) -> Option<Dur> {
        (!self.is_empty()).then_some(Dur(self.max_ps))
    }

    /// The nearest-rank `q`-quantile (the value at rank ceil(q·n), as [`Percentiles::of`]),
    /// within the module's stated precision and never outside [min, max]. `q` is clamped into
    /// [0, 1]; `None` when empty or `q` is NaN.
    pub fn quantile(&self, q: f64) -> Option<Dur> {
        if self.is_empty() || q.is_nan() {
            return None;
        }
        let ns = self.hist.value_at_quantile(q.clamp(0.0, 1.0));
        Some(Dur(ns
            .saturating_mul(1_000)
            .clamp(self.min_ps, self.max_ps)))
    }

    /// Mean, p50, p99, p99.9 and max in microseconds, the shape and unit of
    /// [`FlowSummary`](crate::FlowSummary)'s FCT fields, so reports treat both alike; `None` when
    /// empty.
    pub fn percentiles_us(&self) -> Option<Percentiles> {
        let at = |q| self.quantile(q).map(Dur::as_us_f64);
        Some(Percentiles {
            count: usize::try_from(self.count()).unwrap_or(usize::MAX),
            mean: self.mean()?.as_us_f64(),
            p50: at(0.5)?,
            p99: at(0.99)?,
            p999: at(0.999)?,
            max: self.max()?.as_us_f64(),
        })
    }

    fn record_ns(&mut self, ns: u64, count: u64) {
        if self.hist.record_n(ns, count).is_err() {
            self.hist.saturating_record_n(ns, count);
        }
    }

    /// Non-empty buckets as (highest value in nanoseconds, count), in increasing order.
    fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.hist
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
    }
}

/// Equal when they hold the same values to the histogram's precision and the same exact
/// extremes and sum, however their storage grew.
impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        (self.sum_ps, self.min_ps, self.max_ps) == (other.sum_ps, other.min_ps, other.max_ps)
            && self.buckets().eq(other.buckets())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn of(values: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        values.iter().for_each(|&ps| h.record(Dur(ps)));
        h
    }

    /// Picosecond values spread over many magnitudes (1 ps to ~1 s), as latencies are.
    fn latencies() -> impl Strategy<Value = Vec<u64>> {
        prop::collection::vec(
            (0u32..40, any::<u64>()).prop_map(|(e, m)| m % (1u64 << e)),
            1..500,
        )
    }

    proptest! {
        #[test]
        fn quantiles_match_exact_nearest_rank_within_precision(values in latencies()) {
            let h = of(&values);
            let exact = Percentiles::of(values.iter().map(|&v| v as f64).collect()).unwrap();
            for (q, x) in [(0.5, exact.p50), (0.99, exact.p99), (0.999, exact.p999), (1.0, exact.max)] {
                let got = h.quantile(q).unwrap().ps() as f64;
                prop_assert!((got - x).abs() <= x / 1024.0 + 501.0, "q {}: got {} want {}", q, got, x);
            }
            prop_assert_eq!(h.count(), values.len() as u64);
            prop_assert_eq!(h.max().unwrap().ps() as f64, exact.max);
            prop_assert!((h.mean().unwrap().ps() as f64 - exact.mean).abs() <= 0.5 + exact.mean * 1e-12);
        }

        #[test]
        fn merge_equals_recording_the_union(a in latencies(), b in latencies()) {
            let mut merged = of(&a);
            merged.merge(&of(&b));
            let union: Vec<u64> = a.iter().chain(&b).copied().collect();
            prop_assert_eq!(merged, of(&union));
        }
    }

    #[test]
    fn empty_histogram_answers_none() {
        let h = LatencyHistogram::new();
        assert_eq!(
            (h.count(), h.mean(), h.max(), h.min()),
            (0, None, None, None)
        );
        assert_eq!(h.quantile(0.5), None);
        assert_eq!(h.percentiles_us(), None);
        let mut merged = of(&[5_000]);
        merged.merge(&h);
        assert_eq!(merged, of(&[5_000]));
    }

    #[test]
    fn extreme_values_and_quantiles_do_not_panic() {
        let h = of(&[0, u64::MAX]);
        assert_eq!(h.quantile(-3.0), Some(Dur::ZERO));
        assert_eq!(h.quantile(7.0), Some(Dur(u64::MAX)));
        assert_eq!(h.quantile(f64::NAN), None);
        assert_eq!(h.mean(), Some(Dur(u64::MAX / 2 + 1)));
    }

    #[test]
    fn small_values_are_exact_to_the_nanosecond() {
        let h = of(&[1_000, 2_000, 3_000, 2_047_000]);
        assert_eq!(h.quantile(0.5), Some(Dur(2_000)));
        assert_eq!(h.quantile(0.75), Some(Dur(3_000)));
        let p = h.percentiles_us().unwrap();
        assert_eq!((p.count, p.p50, p.max), (4, 0.002, 2.047));
    }
}
