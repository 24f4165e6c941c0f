//! Slowdown: a flow's completion time divided by the time it would take alone on an idle
//! fabric. It normalises FCT by size, so flows of every size (and fabrics of different rates)
//! can be compared on one scale.

use crate::record::FlowRecord;
use serde::Serialize;
use shoal_base::Dur;

/// The ideal completion time of a flow on an idle fabric, as the fabric describes itself:
///
/// ideal(bytes) = `base_latency` + bytes · 8 · (1 + `header_overhead`) / `rate_bps`
///
/// `base_latency` is the unloaded one-byte latency (propagation, switching, whatever fixed wait
/// the fabric imposes, e.g. for its schedule); `rate_bps` the rate one flow gets alone (for
/// Shoal the node rate, since detouring spreads it over every path); `header_overhead` the wire
/// bytes per payload byte beyond the payload (a cell fabric with an h-byte header in c-byte cells
/// uses h / (c − h)). The last partial cell or packet is not rounded up: a fabric for which that
/// matters for tiny flows can fold it into `base_latency`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct IdealFct {
    pub rate_bps: f64,
    pub base_latency: Dur,
    pub header_overhead: f64,
}

impl IdealFct {
    /// The ideal FCT of `bytes`, rounded to the picosecond; `None` when the model is invalid
    /// (rate not finite and positive, overhead not finite and non-negative) or overflows.
    pub fn ideal_fct(&self, bytes: u64) -> Option<Dur> {
        let ps = self.ideal_ps(bytes)?.round();
        (ps < u64::MAX as f64).then_some(Dur(ps as u64))
    }

    /// FCT / ideal FCT of a completed flow, unclamped: below 1 means the fabric's ideal
    /// overestimates what a lone flow needs (its model is not a lower bound for that flow),
    /// which is worth seeing rather than hiding. `None` if the flow did not complete, the model is
    /// invalid, or the ideal is zero (a zero-byte flow with no base latency).
    pub fn slowdown(&self, record: &FlowRecord) -> Option<f64> {
        let fct = record.fct()?;
        let ideal = self.ideal_ps(record.bytes)?;
        (ideal > 0.0).then(|| fct.ps() as f64 / ideal)
    }

    /// The ideal in picoseconds, unrounded so slowdowns of tiny flows keep their precision.
    fn ideal_ps(&self, bytes: u64) -> Option<f64> {
        let valid = self.rate_bps.is_finite()
            && self.rate_bps > 0.0
            && self.header_overhead.is_finite()
            && self.header_overhead >= 0.0;
        valid.then(|| {
            let wire_bits = bytes as f64 * 8.0 * (1.0 + self.header_overhead);
            self.base_latency.ps() as f64 + wire_bits / self.rate_bps * 1e12
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::{NodeId, Time};

    /// 100 Gb/s, 1 us base latency, 8-byte header in 64-byte cells.
    const SHOAL_LIKE: IdealFct = IdealFct {
        rate_bps: 100e9,
        base_latency: Dur::from_us(1),
        header_overhead: 8.0 / 56.0,
    };

    fn done(bytes: u64, fct: Dur) -> FlowRecord {
        FlowRecord {
            id: 0,
            src: NodeId(0),
            dst: NodeId(1),
            bytes,
            start: Time(500),
            finish: Some(Time(500) + fct),
        }
    }

    #[test]
    fn ideal_is_base_latency_plus_wire_bits_over_rate() {
        // 56,000 payload bytes are 64,000 wire bytes: 5.12 us at 100 Gb/s.
        assert_eq!(SHOAL_LIKE.ideal_fct(56_000), Some(Dur(6_120_000)));
        assert_eq!(SHOAL_LIKE.ideal_fct(0), Some(Dur::from_us(1)));
    }

    #[test]
    fn slowdown_is_fct_over_ideal_and_not_clamped() {
        let s = |bytes, fct| SHOAL_LIKE.slowdown(&done(bytes, fct)).unwrap();
        assert!((s(56_000, Dur(6_120_000)) - 1.0).abs() < 1e-12);
        assert!((s(56_000, Dur(12_240_000)) - 2.0).abs() < 1e-12);
        assert!((s(0, Dur(500_000)) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn undefined_slowdowns_are_none() {
        let mut unfinished = done(10, Dur(1));
        unfinished.finish = None;
        assert_eq!(SHOAL_LIKE.slowdown(&unfinished), None);
        let zero_ideal = IdealFct {
            base_latency: Dur::ZERO,
            ..SHOAL_LIKE
        };
        assert_eq!(zero_ideal.slowdown(&done(0, Dur(1))), None);
        for bad in [
            IdealFct {
                rate_bps: 0.0,
                ..SHOAL_LIKE
            },
            IdealFct {
                rate_bps: f64::NAN,
                ..SHOAL_LIKE
            },
            IdealFct {
                header_overhead: -0.5,
                ..SHOAL_LIKE
            },
            IdealFct {
                header_overhead: f64::INFINITY,
                ..SHOAL_LIKE
            },
        ] {
            assert_eq!(bad.ideal_fct(100), None);
            assert_eq!(bad.slowdown(&done(100, Dur(1))), None);
        }
        let slow = IdealFct {
            rate_bps: 1e-9,
            ..SHOAL_LIKE
        };
        assert_eq!(slow.ideal_fct(u64::MAX), None);
    }
}
