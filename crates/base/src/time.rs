//! Simulated time: an instant (`Time`) and a span (`Dur`), both integer picoseconds.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Time(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Dur(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);

    pub const fn ps(self) -> u64 {
        self.0
    }

    /// Nanoseconds as a float, for reports only.
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }

    /// Microseconds as a float, for reports only.
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    /// The span since `earlier`; saturates at zero rather than wrapping.
    pub fn since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);

    pub const fn from_ps(ps: u64) -> Dur {
        Dur(ps)
    }

    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns * 1_000)
    }

    pub const fn from_us(us: u64) -> Dur {
        Dur(us * 1_000_000)
    }

    /// Converts a duration given in (possibly fractional) nanoseconds, as scenario files write
    /// them, rounding to the nearest picosecond. Returns `None` for negative or non-finite input.
    pub fn from_ns_f64(ns: f64) -> Option<Dur> {
        if !ns.is_finite() || ns < 0.0 || ns * 1e3 > u64::MAX as f64 {
            return None;
        }
        Some(Dur((ns * 1e3).round() as u64))
    }

    pub const fn ps(self) -> u64 {
        self.0
    }

    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }

    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0 + d.0)
    }
}

impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        self.0 += d.0;
    }
}

impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, rhs: Time) -> Dur {
        Dur(self.0 - rhs.0)
    }
}

impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0 + d.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} us", self.as_us_f64())
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 < 1_000_000 {
            write!(f, "{:.3} ns", self.as_ns_f64())
        } else {
            write!(f, "{:.3} us", self.as_us_f64())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractional_nanoseconds_round_to_picoseconds() {
        assert_eq!(Dur::from_ns_f64(23.25), Some(Dur(23_250)));
        assert_eq!(Dur::from_ns_f64(2.75), Some(Dur(2_750)));
        assert_eq!(Dur::from_ns_f64(-1.0), None);
        assert_eq!(Dur::from_ns_f64(f64::NAN), None);
    }

    #[test]
    fn since_saturates() {
        assert_eq!(Time(5).since(Time(9)), Dur::ZERO);
        assert_eq!(Time(9).since(Time(5)), Dur(4));
    }
}
