//! A folded Clos whose edge devices have many links into the fabric: Stardust's Fabric
//! Adapters (the topology's hosts) over one or two tiers of Fabric Elements (Stardust §3, §6.2).
//!
//! The edge devices are grouped in pods. Each pod has `fe1_per_pod` first-tier switches and
//! every edge device of the pod has `parallel` unbundled links to each of them, so an edge
//! device has `fe1_per_pod · parallel` links (the paper's t). With `fe2 = 0` there is one pod
//! and no second tier: the single-tier system (FA-FE-FA, the Arista 7500E of §6.1). With
//! `fe2 > 0` every first-tier switch has one link up to each of the `fe2` second-tier switches,
//! and a second-tier switch has one link down to every first-tier switch (FA-FE1-FE2-FE1-FA,
//! §6.2: 256 FAs × 32 links, 128 FE1 of 64 down and 64 up, 64 FE2 of 128 links).
//!
//! Node order: edge devices (pod-major: device `a` of pod `p` is `p · fas_per_pod + a`), then
//! first-tier switches (pod-major), then second-tier switches. Port order, down ports first:
//! - edge device: port `f · parallel + r` is its `r`-th link to first-tier switch `f` of its pod;
//! - first-tier switch: port `a · parallel + r` is the `r`-th link to edge device `a` of its pod,
//!   then `fas_per_pod · parallel + s` goes up to second-tier switch `s`;
//! - second-tier switch: port `g` goes to first-tier switch `g` (global first-tier number).
//!
//! Shortest paths never cross an edge device: every first-tier switch of a pod reaches each of
//! the pod's edge devices in one hop, and any other device in three through the second tier.

use crate::graph::{Kind, Topology, TopologyError, Wiring, check_rate, check_size};
use shoal_base::{Dur, Rate};

/// Parameters of a cell Clos; [`CellClos::build`] validates and wires them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellClos {
    /// Edge devices (Fabric Adapters): a whole number of pods.
    pub fas: u32,
    /// Edge devices per pod (all of them when `fe2 = 0`).
    pub fas_per_pod: u32,
    /// First-tier switches per pod.
    pub fe1_per_pod: u32,
    /// Links between each edge device and each first-tier switch of its pod.
    pub parallel: u32,
    /// Second-tier switches; 0 for a single-tier fabric.
    pub fe2: u32,
    /// Rate of every link.
    pub rate: Rate,
    /// Propagation delay of every link.
    pub link_delay: Dur,
}

impl CellClos {
    /// Links from each edge device into the fabric (t).
    pub fn fa_links(&self) -> u32 {
        self.fe1_per_pod * self.parallel
    }

    pub fn pods(&self) -> u32 {
        self.fas / self.fas_per_pod.max(1)
    }

    pub fn build(&self) -> Result<Topology, TopologyError> {
        for (name, value) in [
            ("fas", self.fas),
            ("fas_per_pod", self.fas_per_pod),
            ("fe1_per_pod", self.fe1_per_pod),
            ("parallel", self.parallel),
        ] {
            if value == 0 {
                return Err(TopologyError(format!(
                    "cell Clos {name} must be at least 1, got 0"
                )));
            }
        }
        check_rate("cell Clos rate", self.rate)?;
        if !self.fas.is_multiple_of(self.fas_per_pod) {
            return Err(TopologyError(format!(
                "{} fabric adapters do not fill whole pods of {}",
                self.fas, self.fas_per_pod
            )));
        }
        if self.fe2 == 0 && self.fas != self.fas_per_pod {
            return Err(TopologyError(format!(
                "a single-tier fabric (no second tier) is one pod: fas_per_pod must equal fas \
                 ({}), got {}",
                self.fas, self.fas_per_pod
            )));
        }
        let pods = u128::from(self.fas / self.fas_per_pod);
        let fe1 = pods * u128::from(self.fe1_per_pod);
        check_size(
            "this cell Clos",
            u128::from(self.fas),
            fe1 + u128::from(self.fe2),
        )?;
        let ports = u128::from(self.fas_per_pod) * u128::from(self.parallel)
            + u128::from(self.fe2)
            + u128::from(self.fe1_per_pod) * u128::from(self.parallel);
        if ports > u128::from(u16::MAX) {
            return Err(TopologyError(format!(
                "a cell Clos device would need {ports} ports, more than {}",
                u16::MAX
            )));
        }

        // check_size bounded the node count by u16::MAX, so these products fit u32.
        let (fas, per_pod, f1, par, fe2) = (
            self.fas,
            self.fas_per_pod,
            self.fe1_per_pod,
            self.parallel,
            self.fe2,
        );
        let fe1 = fe1 as u32;
        let fe1_0 = fas;
        let fe2_0 = fe1_0 + fe1;
        let port_counts = (0..fas)
            .map(|_| f1 * par)
            .chain((0..fe1).map(|_| per_pod * par + fe2))
            .chain((0..fe2).map(|_| fe1));
        let mut w = Wiring::new(fas as usize, port_counts);
        let (rate, delay) = (self.rate, self.link_delay);
        for fa in 0..fas {
            let (pod, a) = (fa / per_pod, fa % per_pod);
            for f in 0..f1 {
                let sw = fe1_0 + pod * f1 + f;
                for r in 0..par {
                    w.connect((fa, f * par + r), (sw, a * par + r), rate, delay)?;
                }
            }
        }
        for g in 0..fe1 {
            for s in 0..fe2 {
                w.connect((fe1_0 + g, per_pod * par + s), (fe2_0 + s, g), rate, delay)?;
            }
        }
        let tiers = if fe2 == 0 { 1 } else { 2 };
        let description = format!(
            "cell Clos, {tiers} tier(s): {fas} fabric adapters x {} links, {fe1} first-tier \
             elements ({} down{}), {fe2} second-tier elements, {} Gb/s links, {} per link",
            f1 * par,
            per_pod * par,
            if fe2 > 0 {
                format!(", {fe2} up")
            } else {
                String::new()
            },
            rate.as_gbps_f64(),
            delay,
        );
        w.finish(
            format!("cell-clos {fas}x{}", f1 * par),
            Kind::CellClos {
                fas,
                fas_per_pod: per_pod,
                fe1_per_pod: f1,
                parallel: par,
                fe2,
            },
            description,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clos(fas: u32, per_pod: u32, f1: u32, par: u32, fe2: u32) -> CellClos {
        CellClos {
            fas,
            fas_per_pod: per_pod,
            fe1_per_pod: f1,
            parallel: par,
            fe2,
            rate: Rate::gbps(50),
            link_delay: Dur::from_ns(500),
        }
    }

    #[test]
    fn the_two_tier_setup_of_section_6_2_has_the_papers_counts() {
        let t = clos(256, 64, 32, 1, 64).build().unwrap();
        assert_eq!(t.hosts(), 256);
        assert_eq!(t.switches(), 128 + 64);
        for fa in 0..256 {
            assert_eq!(t.ports(fa), 32);
        }
        for fe1 in 256..384 {
            assert_eq!(t.ports(fe1), 128, "64 down + 64 up");
        }
        for fe2 in 384..448 {
            assert_eq!(t.ports(fe2), 128);
        }
        assert_eq!(t.link_count(), 256 * 32 + 128 * 64);
        // Within a pod: through each of its 32 first-tier elements; across pods: up any of 32,
        // through any of 64 second-tier elements, down through any of the 32 of the far pod.
        assert_eq!(t.distance(0, 1), 2);
        assert_eq!(t.shortest_paths(0, 1), 32);
        assert_eq!(t.distance(0, 64), 4);
        assert_eq!(t.shortest_paths(0, 64), 32 * 64 * 32);
        // A first-tier element sends a remote destination up on all 64 links, a local one down.
        assert_eq!(t.next_hops(256, 200).len(), 64);
        assert_eq!(t.next_hops(256, 5), &[5]);
    }

    #[test]
    fn a_single_tier_with_parallel_links_reaches_everyone_in_two_hops() {
        // The Arista 7500E of §6.1: 24 FAs, 12 FEs (here 3 links per pair).
        let t = clos(24, 24, 12, 3, 0).build().unwrap();
        assert_eq!(t.switches(), 12);
        assert_eq!(t.ports(0), 36);
        assert_eq!(t.ports(24), 72);
        assert_eq!(t.link(0, 4).peer, 24 + 1);
        assert_eq!(t.link(0, 4).peer_port, 1);
        assert_eq!(t.next_hops(0, 23).len(), 36);
        // Through any of 12 elements, over any of 3 links up and any of 3 down.
        assert_eq!(t.shortest_paths(0, 23), 12 * 3 * 3);
        assert_eq!(t.next_hops(24 + 5, 7), &[21, 22, 23]);
    }

    #[test]
    fn bad_shapes_are_refused_with_the_reason() {
        assert!(clos(10, 4, 2, 1, 2).build().is_err(), "partial pod");
        assert!(clos(8, 4, 2, 1, 0).build().is_err(), "two pods, no tier 2");
        assert!(clos(8, 8, 0, 1, 0).build().is_err());
        let e = clos(8, 8, 2, 0, 0).build().unwrap_err();
        assert!(e.0.contains("parallel"), "{e}");
    }
}
