//! A fabric's state sampled at a fixed period, for plots of queues and progress over a run.
//!
//! The columns are ones any fabric can fill, in units that compare across fabrics: bytes rather
//! than cells or packets, cumulative counters rather than rates (a rate over any interval is a
//! difference of two samples, and irregular sampling loses nothing).

use serde::Serialize;
use shoal_base::{Dur, Time};
use std::io::{self, BufWriter, Write};

/// The fabric's state at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Sample {
    /// When the sample was taken.
    pub time: Time,
    /// Bytes waiting in all the fabric's queues, counted as stored (a cell fabric counts whole
    /// cells, headers included).
    pub queued_bytes: u64,
    /// Bytes in the longest single queue at this instant, counted as `queued_bytes`.
    pub max_queue_bytes: u64,
    /// Payload bytes delivered in order at destinations since the run began.
    pub delivered_bytes: u64,
    /// Flows completed since the run began.
    pub completed_flows: u64,
    /// Flows started and not yet completed.
    pub active_flows: u64,
}

/// Samples in the order they were taken.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimeSeries {
    pub samples: Vec<Sample>,
}

/// The CSV header: one column per [`Sample`] field, its unit in its name.
const CSV_HEADER: &str =
    "time_ns,queued_bytes,max_queue_bytes,delivered_bytes,completed_flows,active_flows";

impl TimeSeries {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, sample: Sample) {
        self.samples.push(sample);
    }

    /// Writes a header line, then one line per sample. Times are exact decimal nanoseconds
    /// (three digits after the point: picoseconds), every other column an integer, so the same
    /// series always gives the same bytes. Buffers internally; `w` need not be buffered.
    pub fn write_csv(&self, w: impl Write) -> io::Result<()> {
        let mut w = BufWriter::new(w);
        writeln!(w, "{CSV_HEADER}")?;
        for s in &self.samples {
            let ps = s.time.ps();
            writeln!(
                w,
                "{}.{:03},{},{},{},{},{}",
                ps / 1_000,
                ps % 1_000,
                s.queued_bytes,
                s.max_queue_bytes,
                s.delivered_bytes,
                s.completed_flows,
                s.active_flows
            )?;
        }
        w.flush()
    }
}

/// When to take the next sample: a fabric asks [`Sampler::due`] at points it passes anyway (each
/// slot, each event), which costs one comparison until a sample falls due.
///
/// Sample instants stay on the grid `next + k · period`. Periods that pass without a call are
/// skipped, not made up, so an idle stretch yields one sample rather than a burst. A zero
/// period makes every call due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    pub period: Dur,
    /// The instant from which the next sample is due.
    pub next: Time,
}

impl Sampler {
    /// A sampler whose first sample is due at `first`.
    pub fn new(period: Dur, first: Time) -> Self {
        Self {
            period,
            next: first,
        }
    }

    /// True if a sample is due at `now`; then moves `next` to the first grid instant after `now`
    /// (saturating at the end of time).
    #[inline]
    pub fn due(&mut self, now: Time) -> bool {
        if now < self.next {
            return false;
        }
        self.next = match self.period.ps() {
            0 => now,
            p => {
                let periods = now.since(self.next).ps() / p + 1;
                Time(self.next.ps().saturating_add(periods.saturating_mul(p)))
            }
        };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampler_fires_once_per_period_on_a_fixed_grid() {
        let mut s = Sampler::new(Dur::from_ns(10), Time(5_000));
        let fired: Vec<u64> = (0..40u64)
            .map(|ns| Time(ns * 1_000))
            .filter(|&t| s.due(t))
            .map(|t| t.ps() / 1_000)
            .collect();
        assert_eq!(fired, [5, 15, 25, 35]);
        assert_eq!(s.next, Time(45_000));
    }

    #[test]
    fn sampler_skips_missed_periods_and_handles_extremes() {
        let mut s = Sampler::new(Dur::from_ns(10), Time::ZERO);
        assert!(s.due(Time(1_000)));
        assert!(s.due(Time(95_000)));
        assert!(!s.due(Time(99_000)));
        assert_eq!(s.next, Time(100_000));

        let mut zero = Sampler::new(Dur::ZERO, Time(7));
        assert!(!zero.due(Time(6)));
        assert!(zero.due(Time(7)) && zero.due(Time(7)) && zero.due(Time(8)));

        let mut end = Sampler::new(Dur(u64::MAX), Time(1));
        assert!(end.due(Time(u64::MAX)));
        assert_eq!(end.next, Time(u64::MAX));
    }

    #[test]
    fn csv_has_a_header_with_units_and_exact_rows() {
        let mut ts = TimeSeries::new();
        ts.push(Sample::default());
        ts.push(Sample {
            time: Time(1_234_567),
            queued_bytes: 640,
            max_queue_bytes: 128,
            delivered_bytes: 1_000_000,
            completed_flows: 3,
            active_flows: 2,
        });
        let mut out = Vec::new();
        ts.write_csv(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "time_ns,queued_bytes,max_queue_bytes,delivered_bytes,completed_flows,active_flows\n\
             0.000,0,0,0,0,0\n\
             1234.567,640,128,1000000,3,2\n"
        );
    }

    #[test]
    fn empty_series_writes_only_the_header() {
        let mut out = Vec::new();
        TimeSeries::new().write_csv(&mut out).unwrap();
        assert_eq!(out, format!("{CSV_HEADER}\n").into_bytes());
    }
}
