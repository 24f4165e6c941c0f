//! Demand estimation (§4): the controller turns the per-SoC byte counters of one interval into a
//! rack-wide demand matrix, smoothed over intervals so that one bursty interval does not rebuild
//! the whole topology, while a lasting change of pattern still shows within a few intervals.
//!
//! Demand is kept in integer bytes (per interval, smoothed), so every later step (sorting pairs,
//! matching weights) is exact and a run is a pure function of its inputs.

use crate::error::Error;
use crate::rack::MAX_SOCS;
use shoal_base::NodeId;

/// A dense n×n matrix of bytes, `get(src, dst)` being the demand from `src` to `dst`. The
/// diagonal is always zero: a SoC's traffic to itself never enters the fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemandMatrix {
    socs: usize,
    bytes: Vec<u64>,
}

impl DemandMatrix {
    /// An all-zero matrix over `socs` SoCs.
    pub fn zeros(socs: usize) -> Result<DemandMatrix, Error> {
        check_socs(socs)?;
        Ok(DemandMatrix {
            socs,
            bytes: vec![0; socs * socs],
        })
    }

    /// A matrix from its rows, `bytes[src * socs + dst]`.
    pub fn from_rows(socs: usize, bytes: Vec<u64>) -> Result<DemandMatrix, Error> {
        check_socs(socs)?;
        if bytes.len() != socs * socs {
            return Err(Error::MatrixLength {
                socs,
                expected: socs * socs,
                found: bytes.len(),
            });
        }
        if let Some(soc) = (0..socs).find(|&s| bytes[s * socs + s] != 0) {
            return Err(Error::SelfDemand { soc });
        }
        Ok(DemandMatrix { socs, bytes })
    }

    /// The number of SoCs.
    pub fn socs(&self) -> usize {
        self.socs
    }

    /// The demand from `src` to `dst`.
    ///
    /// # Panics
    /// If either SoC is outside the matrix, as slice indexing does.
    pub fn get(&self, src: NodeId, dst: NodeId) -> u64 {
        assert!(dst.idx() < self.socs, "SoC {dst} is outside the matrix");
        self.bytes[src.idx() * self.socs + dst.idx()]
    }

    /// Sets the demand from `src` to `dst`.
    pub fn set(&mut self, src: NodeId, dst: NodeId, bytes: u64) -> Result<(), Error> {
        for s in [src, dst] {
            if s.idx() >= self.socs {
                return Err(Error::SocOutOfRange {
                    soc: s.idx(),
                    socs: self.socs,
                });
            }
        }
        if src == dst && bytes != 0 {
            return Err(Error::SelfDemand { soc: src.idx() });
        }
        self.bytes[src.idx() * self.socs + dst.idx()] = bytes;
        Ok(())
    }

    /// The demand of the unordered pair `{a, b}`, both directions together. This is the weight
    /// Algorithm 1 and the OSA matching give a pair; it saturates rather than wraps (a pair would
    /// need 18 EB per interval to reach the bound).
    ///
    /// # Panics
    /// If either SoC is outside the matrix.
    pub fn pair(&self, a: NodeId, b: NodeId) -> u64 {
        self.get(a, b).saturating_add(self.get(b, a))
    }

    /// The rows, `[src * socs + dst]`.
    pub fn as_slice(&self) -> &[u64] {
        &self.bytes
    }

    /// The sum of all entries.
    pub fn total(&self) -> u128 {
        self.bytes.iter().map(|&b| b as u128).sum()
    }

    /// The entry-wise sum of two matrices of the same size (saturating, as [`DemandMatrix::pair`]).
    pub fn sum(&self, other: &DemandMatrix) -> Result<DemandMatrix, Error> {
        if other.socs != self.socs {
            return Err(Error::MatrixSize {
                expected: self.socs,
                found: other.socs,
            });
        }
        Ok(DemandMatrix {
            socs: self.socs,
            bytes: self
                .bytes
                .iter()
                .zip(&other.bytes)
                .map(|(a, b)| a.saturating_add(*b))
                .collect(),
        })
    }

    /// The symmetric matrix of pair demands, `[a * socs + b] = pair(a, b)`: what both topology
    /// generators read, laid out so that a SoC's row is contiguous.
    pub(crate) fn pair_matrix(&self) -> Vec<u64> {
        let n = self.socs;
        let mut out = vec![0u64; n * n];
        for a in 0..n {
            for b in 0..n {
                out[a * n + b] = self.bytes[a * n + b].saturating_add(self.bytes[b * n + a]);
            }
        }
        out
    }
}

fn check_socs(socs: usize) -> Result<(), Error> {
    if socs < 2 {
        return Err(Error::TooFewSocs { socs, min: 2 });
    }
    if socs > MAX_SOCS {
        return Err(Error::TooManySocs {
            socs,
            max: MAX_SOCS,
        });
    }
    Ok(())
}

/// What one SoC sends to the controller at the end of an interval (§4): the bytes it sent to each
/// SoC of the rack, and its two counters of traffic to and from outside the rack. The paper calls
/// the counters T_i and T_e and describes them as bytes "sent and received"; we name them by
/// direction so the ingress/egress reading cannot be mixed up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemandReport {
    /// Bytes sent to each SoC of the rack, indexed by SoC. The entry for the reporting SoC itself
    /// must be zero.
    pub sent_to: Vec<u64>,
    /// Bytes sent to destinations outside the rack (egress).
    pub sent_external: u64,
    /// Bytes received from sources outside the rack (ingress).
    pub received_external: u64,
}

/// The weight of the newest interval in the moving average, `num / den`.
///
/// The default is 1/2: after a change of traffic pattern the estimate holds 50% of the new
/// pattern after one interval, 75% after two and 87.5% after three, so with the paper's
/// reconfiguration period of about a second the topology follows a change within a few seconds,
/// while a destination that is quiet for a single interval keeps half its weight (the bursty
/// per-destination traffic of §6.5's short-flow experiment). 1/1 disables smoothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Smoothing {
    num: u64,
    den: u64,
}

impl Smoothing {
    /// A weight of `num / den` for the newest interval; it must lie in (0, 1].
    pub fn new(num: u64, den: u64) -> Result<Smoothing, Error> {
        if num == 0 || num > den {
            return Err(Error::Smoothing { num, den });
        }
        Ok(Smoothing { num, den })
    }

    /// `new * w + old * (1 - w)`, rounded down. Rounding down keeps a constant input a fixed point
    /// and lets a demand that has stopped decay to exactly zero.
    fn blend(self, old: u64, new: u64) -> u64 {
        let mixed = (self.num as u128 * new as u128 + (self.den - self.num) as u128 * old as u128)
            / self.den as u128;
        // A weighted mean of two u64 values is itself at most u64::MAX.
        mixed as u64
    }
}

impl Default for Smoothing {
    fn default() -> Smoothing {
        Smoothing { num: 1, den: 2 }
    }
}

/// The controller's demand estimate: the internal matrix `dm` and the vectors of external traffic
/// per SoC (the paper's v_i and v_e), all smoothed over intervals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Demand {
    internal: DemandMatrix,
    sent_external: Vec<u64>,
    received_external: Vec<u64>,
}

impl Demand {
    /// A demand with no traffic at all, the estimate before the first interval.
    pub fn zeros(socs: usize) -> Result<Demand, Error> {
        Ok(Demand {
            internal: DemandMatrix::zeros(socs)?,
            sent_external: vec![0; socs],
            received_external: vec![0; socs],
        })
    }

    /// A demand given directly, for experiments that start from a known traffic matrix (§6's
    /// simulations optimise for the whole trace's matrix). `sent_external` and
    /// `received_external` are indexed by SoC.
    pub fn new(
        internal: DemandMatrix,
        sent_external: Vec<u64>,
        received_external: Vec<u64>,
    ) -> Result<Demand, Error> {
        for v in [&sent_external, &received_external] {
            if v.len() != internal.socs() {
                return Err(Error::MatrixSize {
                    expected: internal.socs(),
                    found: v.len(),
                });
            }
        }
        Ok(Demand {
            internal,
            sent_external,
            received_external,
        })
    }

    /// The demand of the first interval: its reports taken as they are, with no history to blend.
    pub fn from_reports(reports: &[DemandReport]) -> Result<Demand, Error> {
        let socs = reports.len();
        Demand::zeros(socs)?.update(reports, Smoothing { num: 1, den: 1 })
    }

    /// The estimate after one more interval: every entry becomes the weighted average of its
    /// previous value and the interval's report (`reports[s]` is SoC `s`'s report).
    pub fn update(&self, reports: &[DemandReport], weight: Smoothing) -> Result<Demand, Error> {
        let n = self.internal.socs();
        if reports.len() != n {
            return Err(Error::ReportCount {
                expected: n,
                found: reports.len(),
            });
        }
        for (s, r) in reports.iter().enumerate() {
            if r.sent_to.len() != n {
                return Err(Error::ReportLength {
                    soc: s,
                    expected: n,
                    found: r.sent_to.len(),
                });
            }
            if r.sent_to[s] != 0 {
                return Err(Error::SelfDemand { soc: s });
            }
        }
        let mut bytes = Vec::with_capacity(n * n);
        for (s, r) in reports.iter().enumerate() {
            let old = &self.internal.bytes[s * n..(s + 1) * n];
            bytes.extend(
                old.iter()
                    .zip(&r.sent_to)
                    .map(|(&o, &x)| weight.blend(o, x)),
            );
        }
        Ok(Demand {
            internal: DemandMatrix { socs: n, bytes },
            sent_external: reports
                .iter()
                .zip(&self.sent_external)
                .map(|(r, &o)| weight.blend(o, r.sent_external))
                .collect(),
            received_external: reports
                .iter()
                .zip(&self.received_external)
                .map(|(r, &o)| weight.blend(o, r.received_external))
                .collect(),
        })
    }

    /// The number of SoCs.
    pub fn socs(&self) -> usize {
        self.internal.socs()
    }

    /// The internal demand matrix (the paper's `dm`).
    pub fn internal(&self) -> &DemandMatrix {
        &self.internal
    }

    /// Bytes `soc` sends out of the rack, per interval.
    ///
    /// # Panics
    /// If `soc` is not in the rack.
    pub fn sent_external(&self, soc: NodeId) -> u64 {
        self.sent_external[soc.idx()]
    }

    /// Bytes `soc` receives from outside the rack, per interval.
    ///
    /// # Panics
    /// If `soc` is not in the rack.
    pub fn received_external(&self, soc: NodeId) -> u64 {
        self.received_external[soc.idx()]
    }

    /// The paper's D_ext: all of `soc`'s external traffic, both directions.
    ///
    /// # Panics
    /// If `soc` is not in the rack.
    pub fn external(&self, soc: NodeId) -> u128 {
        self.sent_external(soc) as u128 + self.received_external(soc) as u128
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn report(sent_to: Vec<u64>, out: u64, inn: u64) -> DemandReport {
        DemandReport {
            sent_to,
            sent_external: out,
            received_external: inn,
        }
    }

    #[test]
    fn the_first_interval_is_taken_as_reported() {
        let d = Demand::from_reports(&[
            report(vec![0, 10, 0], 5, 7),
            report(vec![3, 0, 0], 0, 0),
            report(vec![0, 0, 0], 0, 9),
        ])
        .unwrap();
        assert_eq!(d.internal().as_slice(), &[0, 10, 0, 3, 0, 0, 0, 0, 0]);
        assert_eq!(d.internal().pair(NodeId(0), NodeId(1)), 13);
        assert_eq!(d.external(NodeId(0)), 12);
        assert_eq!(d.external(NodeId(2)), 9);
    }

    #[test]
    fn half_weight_halves_the_gap_each_interval() {
        let w = Smoothing::default();
        let quiet = || vec![report(vec![0, 0], 0, 0), report(vec![0, 0], 0, 0)];
        let mut d = Demand::from_reports(&[report(vec![0, 1000], 80, 0), report(vec![0, 0], 0, 0)])
            .unwrap();
        let mut seen = vec![];
        for _ in 0..3 {
            d = d.update(&quiet(), w).unwrap();
            seen.push((
                d.internal().get(NodeId(0), NodeId(1)),
                d.sent_external(NodeId(0)),
            ));
        }
        assert_eq!(seen, vec![(500, 40), (250, 20), (125, 10)]);
    }

    #[test]
    fn malformed_reports_are_rejected() {
        let d = Demand::zeros(2).unwrap();
        let w = Smoothing::default();
        assert_eq!(
            d.update(&[report(vec![0, 0], 0, 0)], w),
            Err(Error::ReportCount {
                expected: 2,
                found: 1
            })
        );
        assert_eq!(
            d.update(&[report(vec![0, 0], 0, 0), report(vec![0], 0, 0)], w),
            Err(Error::ReportLength {
                soc: 1,
                expected: 2,
                found: 1
            })
        );
        assert_eq!(
            d.update(&[report(vec![0, 0], 0, 0), report(vec![0, 4], 0, 0)], w),
            Err(Error::SelfDemand { soc: 1 })
        );
        assert_eq!(
            Smoothing::new(0, 2),
            Err(Error::Smoothing { num: 0, den: 2 })
        );
        assert_eq!(
            Smoothing::new(3, 2),
            Err(Error::Smoothing { num: 3, den: 2 })
        );
        assert_eq!(Demand::zeros(1), Err(Error::TooFewSocs { socs: 1, min: 2 }));
        assert_eq!(
            DemandMatrix::from_rows(2, vec![0, 1, 2]),
            Err(Error::MatrixLength {
                socs: 2,
                expected: 4,
                found: 3
            })
        );
        assert_eq!(
            DemandMatrix::from_rows(2, vec![0, 1, 2, 5]),
            Err(Error::SelfDemand { soc: 1 })
        );
    }

    proptest! {
        /// A constant input is a fixed point of the average, and the estimate always stays
        /// between the previous value and the new sample.
        #[test]
        fn the_average_stays_between_old_and_new(
            old in any::<u64>(), new in any::<u64>(), num in 1u64..16, extra in 0u64..16,
        ) {
            let w = Smoothing::new(num, num + extra).unwrap();
            let m = w.blend(old, new);
            prop_assert!(m >= old.min(new) && m <= old.max(new));
            prop_assert_eq!(w.blend(new, new), new);
        }
    }
}
