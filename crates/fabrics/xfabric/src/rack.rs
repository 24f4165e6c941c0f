//! The physical rack of §3: what can be wired to what. Every later step (Algorithm 1, uplink
//! placement, the cost model) reads its sizes and its fixed circuits from here, so the layer-1
//! constraints live in one place.
//!
//! A rack has n SoCs, each with d internal ports and one uplink port. Internal port c of every SoC
//! is wired to internal crosspoint c, so there are d internal crosspoints of n ports each, and a
//! circuit on crosspoint c can join any two SoCs through their port c. The uplink crosspoint has
//! n + l ports: port s is SoC s's uplink port and port n + k is uplink k to the data center.

use crate::error::Error;
use crate::graph::node;
use rand::RngExt;
use shoal_base::{NodeId, rng};
use std::fmt;

/// The largest rack this model builds. The controller keeps dense n×n demand matrices (8 bytes an
/// entry), so 4,096 SoCs already take 128 MiB per matrix; the paper's racks have at most 1,024.
pub const MAX_SOCS: usize = 4096;

/// The most internal ports a SoC may have: the controller keeps a SoC's free crosspoints as one bit
/// each in a `u64`.
pub const MAX_PORTS: usize = 64;

/// An internal crosspoint switch, which is also the index of the SoC port wired to it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Crosspoint(pub u8);

impl Crosspoint {
    pub const fn idx(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Crosspoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "x{}", self.0)
    }
}

/// The sizes of a rack, as a user states them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RackSpec {
    /// n: the number of SoCs.
    pub socs: usize,
    /// d: internal ports per SoC, which is also the number of internal crosspoints.
    pub ports_per_soc: usize,
    /// l: uplinks from the rack to the data center.
    pub uplinks: usize,
}

impl Default for RackSpec {
    /// The rack of the paper's simulations (§6.1): 343 SoCs, d = 6, l = 8.
    fn default() -> RackSpec {
        RackSpec {
            socs: 343,
            ports_per_soc: 6,
            uplinks: 8,
        }
    }
}

/// A static circuit between two crosspoints, used only in racks with an odd number of SoCs: port
/// `a_crosspoint` of SoC `a` is joined for good to port `b_crosspoint` of SoC `b`. It is a link of
/// every topology the rack instantiates, and neither port is ever free for a circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CrossCircuit {
    pub a: NodeId,
    pub a_crosspoint: Crosspoint,
    pub b: NodeId,
    pub b_crosspoint: Crosspoint,
}

/// A validated rack: its sizes and, for odd n, its static cross-circuits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rack {
    spec: RackSpec,
    cross: Vec<CrossCircuit>,
}

impl Rack {
    /// Validates `spec` and, if n is odd, draws the static cross-circuits from `seed`.
    ///
    /// Odd n (§6.1): a crosspoint with an odd number of SoC ports can establish at most (n − 1) / 2
    /// circuits, so one port of every crosspoint would stay idle. The paper pairs the crosspoints
    /// ((0, 1), (2, 3), (4, 5) for d = 6) and, in each pair, statically joins a random SoC's port on
    /// the first crosspoint to a different random SoC's port on the second. Each crosspoint then
    /// has an even number of reconfigurable ports left. Our reading: the two SoCs are drawn
    /// uniformly and independently per pair (only required to differ), so one SoC may hold more
    /// than one cross-circuit; with odd d the last crosspoint has no partner and keeps one idle
    /// port. For even n there are no cross-circuits and `seed` is not used.
    pub fn new(spec: RackSpec, seed: u64) -> Result<Rack, Error> {
        let RackSpec {
            socs,
            ports_per_soc: d,
            uplinks,
        } = spec;
        if socs < 2 {
            return Err(Error::TooFewSocs { socs, min: 2 });
        }
        if socs > MAX_SOCS {
            return Err(Error::TooManySocs {
                socs,
                max: MAX_SOCS,
            });
        }
        if d == 0 {
            return Err(Error::NoPorts);
        }
        if d > MAX_PORTS {
            return Err(Error::TooManyPorts {
                ports: d,
                max: MAX_PORTS,
            });
        }
        if uplinks == 0 {
            return Err(Error::NoUplinks);
        }
        if uplinks > socs {
            return Err(Error::TooManyUplinks { uplinks, socs });
        }
        let mut cross = Vec::new();
        if socs % 2 == 1 {
            for pair in 0..d / 2 {
                let mut r = rng::stream(seed, "xfabric.rack.cross_circuits", pair as u64);
                let a = r.random_range(0..socs);
                // Draw b from the other n − 1 SoCs, uniformly.
                let b = (a + 1 + r.random_range(0..socs - 1)) % socs;
                cross.push(CrossCircuit {
                    a: node(a),
                    a_crosspoint: Crosspoint(2 * pair as u8),
                    b: node(b),
                    b_crosspoint: Crosspoint(2 * pair as u8 + 1),
                });
            }
        }
        Ok(Rack { spec, cross })
    }

    /// The sizes the rack was built from.
    pub fn spec(&self) -> RackSpec {
        self.spec
    }

    /// n: the number of SoCs.
    pub fn socs(&self) -> usize {
        self.spec.socs
    }

    /// d: internal ports per SoC, and internal crosspoints.
    pub fn ports_per_soc(&self) -> usize {
        self.spec.ports_per_soc
    }

    /// l: uplinks to the data center.
    pub fn uplinks(&self) -> usize {
        self.spec.uplinks
    }

    /// Ports on each internal crosspoint: one per SoC (the paper's s = n).
    pub fn internal_crosspoint_ports(&self) -> usize {
        self.spec.socs
    }

    /// Ports on the uplink crosspoint: one per SoC uplink port and one per uplink (s = n + l).
    pub fn uplink_crosspoint_ports(&self) -> usize {
        self.spec.socs + self.spec.uplinks
    }

    /// The uplink crosspoint port of uplink `k`; SoC `s`'s uplink port is port `s`.
    pub fn uplink_port(&self, k: usize) -> usize {
        self.spec.socs + k
    }

    /// The static cross-circuits (empty when n is even).
    pub fn cross_circuits(&self) -> &[CrossCircuit] {
        &self.cross
    }

    /// Internal SoC ports that no topology can ever use: one on every crosspoint that is left with
    /// an odd number of reconfigurable ports (with odd n and odd d, the unpaired crosspoint).
    pub fn idle_ports(&self) -> usize {
        if self.spec.socs.is_multiple_of(2) {
            0
        } else {
            self.spec.ports_per_soc - 2 * self.cross.len()
        }
    }

    /// For each SoC, a bit per crosspoint on which its port is reconfigurable (not held by a
    /// cross-circuit): the starting state of Algorithm 1.
    pub(crate) fn reconfigurable_ports(&self) -> Vec<u64> {
        let all = if self.spec.ports_per_soc == 64 {
            u64::MAX
        } else {
            (1u64 << self.spec.ports_per_soc) - 1
        };
        let mut mask = vec![all; self.spec.socs];
        for c in &self.cross {
            mask[c.a.idx()] &= !(1 << c.a_crosspoint.idx());
            mask[c.b.idx()] &= !(1 << c.b_crosspoint.idx());
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(socs: usize, d: usize, l: usize) -> RackSpec {
        RackSpec {
            socs,
            ports_per_soc: d,
            uplinks: l,
        }
    }

    #[test]
    fn port_counts_follow_the_paper() {
        let r = Rack::new(RackSpec::default(), 1).unwrap();
        assert_eq!(r.internal_crosspoint_ports(), 343);
        assert_eq!(r.uplink_crosspoint_ports(), 351);
        assert_eq!(r.uplink_port(0), 343);
        let even = Rack::new(spec(256, 6, 4), 1).unwrap();
        assert!(even.cross_circuits().is_empty());
        assert_eq!(even.idle_ports(), 0);
        assert!(even.reconfigurable_ports().iter().all(|&m| m == 0b11_1111));
    }

    #[test]
    fn odd_racks_pair_crosspoints_with_static_circuits() {
        for seed in 0..50 {
            let r = Rack::new(RackSpec::default(), seed).unwrap();
            assert_eq!(r.cross_circuits().len(), 3);
            assert_eq!(r.idle_ports(), 0);
            for (i, c) in r.cross_circuits().iter().enumerate() {
                assert_eq!(c.a_crosspoint, Crosspoint(2 * i as u8));
                assert_eq!(c.b_crosspoint, Crosspoint(2 * i as u8 + 1));
                assert_ne!(c.a, c.b);
            }
            // Each crosspoint loses exactly one reconfigurable port, leaving an even number.
            let mask = r.reconfigurable_ports();
            for x in 0..6 {
                let free = mask.iter().filter(|&&m| m & (1 << x) != 0).count();
                assert_eq!(free, 342);
            }
        }
        let odd_d = Rack::new(spec(7, 5, 1), 3).unwrap();
        assert_eq!(odd_d.cross_circuits().len(), 2);
        assert_eq!(odd_d.idle_ports(), 1);
    }

    #[test]
    fn the_cross_circuits_depend_on_the_seed_only() {
        let a = Rack::new(RackSpec::default(), 9).unwrap();
        let b = Rack::new(RackSpec::default(), 9).unwrap();
        assert_eq!(a, b);
        let differ = (10..20).any(|s| Rack::new(RackSpec::default(), s).unwrap() != a);
        assert!(differ);
    }

    #[test]
    fn impossible_racks_are_rejected() {
        assert_eq!(
            Rack::new(spec(1, 6, 1), 0),
            Err(Error::TooFewSocs { socs: 1, min: 2 })
        );
        assert_eq!(Rack::new(spec(8, 0, 1), 0), Err(Error::NoPorts));
        assert_eq!(
            Rack::new(spec(8, 65, 1), 0),
            Err(Error::TooManyPorts { ports: 65, max: 64 })
        );
        assert_eq!(Rack::new(spec(8, 6, 0), 0), Err(Error::NoUplinks));
        assert_eq!(
            Rack::new(spec(8, 6, 9), 0),
            Err(Error::TooManyUplinks {
                uplinks: 9,
                socs: 8
            })
        );
        assert_eq!(
            Rack::new(spec(5000, 6, 1), 0),
            Err(Error::TooManySocs {
                socs: 5000,
                max: 4096
            })
        );
        let wide = Rack::new(spec(4, 64, 1), 0).unwrap();
        assert_eq!(wide.reconfigurable_ports()[0], u64::MAX);
    }
}
