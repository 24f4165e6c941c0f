//! When flows start: all at once (the microbenchmarks) or as a Poisson process (§7.3), with the
//! paper's definition of network load to pick the rate.

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};
use shoal_base::{Rate, Time};
use std::fmt;
use thiserror::Error;

/// The longest mean gap between flows across the rack that a run may ask for: one second.
/// The slotted simulator steps through idle slots one by one (tens of millions a second), so
/// a gap of seconds is hours of wall time before the first flow; such a gap only comes from
/// a mistyped load, gap or rate.
pub const MAX_MEAN_GAP_PS: f64 = 1e12;

/// The arrival process of an open-loop workload, rack-wide.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Every flow starts at `at`.
    AllAtOnce { at: Time },
    /// Exponential gaps of mean `mean_gap_ps` picoseconds between successive flows, starting
    /// from time 0 (the first flow comes one gap after 0). Start times are accumulated in f64
    /// picoseconds and each is rounded on its own, so rounding never accumulates into drift.
    Poisson { mean_gap_ps: f64 },
}

/// A parameter that cannot define an arrival process.
#[derive(Debug, Error, PartialEq)]
pub enum ArrivalError {
    #[error("mean inter-arrival gap {0} ps must be a positive finite number")]
    Gap(f64),
    #[error("load {0} must be a positive finite number")]
    Load(f64),
    #[error("mean flow size {0} bytes must be a positive finite number")]
    FlowSize(f64),
    #[error("the per-node rate must be above 0 b/s")]
    Rate,
    #[error("the load of a rack needs at least one node")]
    Nodes,
}

fn positive(x: f64) -> bool {
    x > 0.0 && x.is_finite()
}

impl Arrivals {
    /// Poisson arrivals offering load `load` by the paper's definition (§7.3) L = F/(R·N·τ):
    /// F the mean flow size (here in bytes, times 8 for bits), R the per-node rate, N the node
    /// count and τ the mean gap between flows across the whole rack; so τ = 8F/(R·N·L).
    /// Pass the *drawn* mean ([`crate::SizeDist::expected_mean`]) as F, so a cap is accounted.
    pub fn poisson_for_load(
        load: f64,
        mean_flow_bytes: f64,
        node_rate: Rate,
        nodes: usize,
    ) -> Result<Arrivals, ArrivalError> {
        if !positive(load) {
            return Err(ArrivalError::Load(load));
        }
        check_rack(mean_flow_bytes, node_rate, nodes)?;
        let tau_s = mean_flow_bytes * 8.0 / (node_rate.0 as f64 * nodes as f64 * load);
        let a = Arrivals::Poisson {
            mean_gap_ps: tau_s * 1e12,
        };
        a.validate()?;
        Ok(a)
    }

    pub fn validate(&self) -> Result<(), ArrivalError> {
        match *self {
            Arrivals::AllAtOnce { .. } => Ok(()),
            Arrivals::Poisson { mean_gap_ps } if positive(mean_gap_ps) => Ok(()),
            Arrivals::Poisson { mean_gap_ps } => Err(ArrivalError::Gap(mean_gap_ps)),
        }
    }

    /// The mean gap in picoseconds, for Poisson arrivals.
    pub fn mean_gap_ps(&self) -> Option<f64> {
        match *self {
            Arrivals::AllAtOnce { .. } => None,
            Arrivals::Poisson { mean_gap_ps } => Some(mean_gap_ps),
        }
    }

    pub(crate) fn clock(&self) -> Clock {
        Clock {
            arrivals: *self,
            t_ps: 0.0,
        }
    }
}

fn check_rack(mean_flow_bytes: f64, node_rate: Rate, nodes: usize) -> Result<(), ArrivalError> {
    if !positive(mean_flow_bytes) {
        return Err(ArrivalError::FlowSize(mean_flow_bytes));
    }
    if node_rate.0 == 0 {
        return Err(ArrivalError::Rate);
    }
    if nodes == 0 {
        return Err(ArrivalError::Nodes);
    }
    Ok(())
}

/// The load L = F/(R·N·τ) that flows of mean `mean_flow_bytes` arriving every `mean_gap_ps`
/// (rack-wide) offer to `nodes` nodes of rate `node_rate`: the inverse of
/// [`Arrivals::poisson_for_load`], for reporting the load a run realised.
pub fn load_of(
    mean_flow_bytes: f64,
    node_rate: Rate,
    nodes: usize,
    mean_gap_ps: f64,
) -> Result<f64, ArrivalError> {
    check_rack(mean_flow_bytes, node_rate, nodes)?;
    if !positive(mean_gap_ps) {
        return Err(ArrivalError::Gap(mean_gap_ps));
    }
    Ok(mean_flow_bytes * 8.0 / (node_rate.0 as f64 * nodes as f64 * mean_gap_ps * 1e-12))
}

/// Start times of successive flows, drawn from one random stream.
pub(crate) struct Clock {
    arrivals: Arrivals,
    t_ps: f64,
}

impl Clock {
    pub(crate) fn next(&mut self, rng: &mut impl Rng) -> Time {
        match self.arrivals {
            Arrivals::AllAtOnce { at } => at,
            Arrivals::Poisson { mean_gap_ps } => {
                // Inverse CDF of the exponential: 1 - [0, 1) is (0, 1], so the log is finite.
                let u = 1.0 - rng.random::<f64>();
                self.t_ps -= u.ln() * mean_gap_ps;
                // `as` saturates: past u64::MAX ps (213 days) every flow starts at the end.
                Time(self.t_ps.round() as u64)
            }
        }
    }
}

impl fmt::Display for Arrivals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arrivals::AllAtOnce { at } => write!(f, "all at {at}"),
            Arrivals::Poisson { mean_gap_ps } => {
                write!(f, "Poisson, mean gap {:.3} ns", mean_gap_ps / 1e3)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::rng::stream;

    #[test]
    fn paper_load_equation_gives_15_625_ns_at_full_load() {
        // §7.3: 512 nodes at 100 Gb/s, flows of mean 100 KB, L = 1.
        let a = Arrivals::poisson_for_load(1.0, 100e3, Rate::gbps(100), 512).unwrap();
        let gap = a.mean_gap_ps().unwrap();
        assert!((gap - 15_625.0).abs() < 1e-6, "{gap}");
        let l = load_of(100e3, Rate::gbps(100), 512, gap).unwrap();
        assert!((l - 1.0).abs() < 1e-12);
        // Half the load is twice the gap; §7.4's 12.65 ns at the same sizes is L ≈ 1.235.
        let half = Arrivals::poisson_for_load(0.5, 100e3, Rate::gbps(100), 512).unwrap();
        assert!((half.mean_gap_ps().unwrap() - 31_250.0).abs() < 1e-6);
        let l = load_of(100e3, Rate::gbps(100), 512, 12_650.0).unwrap();
        assert!((l - 15.625 / 12.65).abs() < 1e-12);
    }

    #[test]
    fn sample_mean_gap_matches_and_rounding_does_not_drift() {
        // Exponential gaps have sd = mean; over n gaps the mean's standard error is mean/√n;
        // allow 5 of them. The 0.4 ps gap is below the 1 ps resolution: rounding each gap
        // would give mostly zero gaps, rounding the accumulated time keeps the rate.
        for mean in [15_625.0, 0.4] {
            let mut clock = Arrivals::Poisson { mean_gap_ps: mean }.clock();
            let mut rng = stream(1, "test", 0);
            let n = 1_000_000;
            let mut last = Time::ZERO;
            for _ in 0..n {
                let t = clock.next(&mut rng);
                assert!(t >= last);
                last = t;
            }
            let realised = last.0 as f64 / n as f64;
            let tol = 5.0 * mean / (n as f64).sqrt() + 1.0 / n as f64;
            assert!((realised - mean).abs() <= tol, "{realised} vs {mean}");
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        let r = Rate::gbps(100);
        assert_eq!(
            Arrivals::poisson_for_load(0.0, 1e5, r, 8),
            Err(ArrivalError::Load(0.0))
        );
        assert_eq!(
            Arrivals::poisson_for_load(1.0, -5.0, r, 8),
            Err(ArrivalError::FlowSize(-5.0))
        );
        assert_eq!(
            Arrivals::poisson_for_load(1.0, 1e5, Rate(0), 8),
            Err(ArrivalError::Rate)
        );
        assert_eq!(
            Arrivals::poisson_for_load(1.0, 1e5, r, 0),
            Err(ArrivalError::Nodes)
        );
        assert!(matches!(
            Arrivals::Poisson {
                mean_gap_ps: f64::NAN
            }
            .validate(),
            Err(ArrivalError::Gap(_))
        ));
        assert_eq!(load_of(1e5, r, 8, 0.0), Err(ArrivalError::Gap(0.0)));
    }

    #[test]
    fn all_at_once_repeats_its_instant() {
        let mut clock = Arrivals::AllAtOnce { at: Time(7) }.clock();
        let mut rng = stream(1, "test", 0);
        assert_eq!(clock.next(&mut rng), Time(7));
        assert_eq!(clock.next(&mut rng), Time(7));
    }
}
