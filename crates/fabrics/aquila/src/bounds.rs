//! Saturation bounds of a clique from its own wiring: the exact expected load of every network
//! channel (one direction of a local or global link) when every host injects a pattern at its
//! full rate and each hop splits a cell's probability evenly over the routing tables'
//! candidates, and the fraction of injection at which the first channel fills.
//!
//! Why: a bound derived from a pod's global links alone (Valiant's (G - g) r / 2I) assumes the
//! local links never bind. Which links bind depends on where a pod's global links leave from
//! (the wiring, `shoal_topology::Dragonfly`'s striping) and on what the routing tables send
//! over them; on the full clique's striped wiring Valiant under pod shift is bound by local
//! links, below the global-links figure. So every saturation claim is set against the bound
//! computed here from the [`Router`] the simulator itself builds.
//!
//! The loads are a flow computation, not a simulation: for each destination TiN, the demand of
//! every source enters at its endpoint and moves hop by hop (routes are acyclic and at most
//! [`ROUTE_HOPS`] long), each state `(TiN, input kind, level)` passing its flow evenly to the
//! list of candidates the mode would draw from: the minimal list for [`Routes::Minimal`]; for
//! [`Routes::Valiant`], as the simulator's Valiant mode draws, the non-minimal list at the
//! source and the minimal list after it. Adaptive routing draws by queue depth; its bound is
//! taken as the best fixed mix of the two ([`Loads::mixed_bound`]).
//!
//! A host's cells also cross its TiN's crossbar through the host's one endpoint port each way,
//! at the crossbar's rate (`Spec::crossbar_rate`): where that is below the host's rate, it
//! bounds every pattern at crossbar rate over host rate, whatever the links carry.

use crate::routing::{Candidates, InKind, LevelRule, ROUTE_HOPS, Router};
use crate::sim::Pattern;
use crate::spec::Spec;
use shoal_topology::{Dragonfly, DragonflyPort};

/// Which of the routing tables' candidates a cell is spread over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routes {
    /// Every hop over the minimal candidates.
    Minimal,
    /// The non-minimal candidates at the source (where it has any), minimal ones after.
    Valiant,
}

/// The expected load of every network channel at full injection.
#[derive(Clone, Debug, PartialEq)]
pub struct Loads {
    /// `load[x][p]`: bits per second on port `p` of TiN `x`, outbound, when every host injects
    /// at its full rate.
    pub load: Vec<Vec<f64>>,
    /// `capacity[x][p]`: the port's link rate in bits per second.
    pub capacity: Vec<Vec<f64>>,
    /// `global[x][p]`: whether the port is a global link.
    pub global: Vec<Vec<bool>>,
    /// A host's endpoint port (each way) over its injection: crossbar rate over host rate.
    pub endpoint: f64,
}

/// Which channels fill first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    Local,
    Global,
    /// The hosts' endpoint ports across the crossbar.
    Endpoint,
}

/// The fraction of injection at which the first channel fills.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// Of the hosts' injection; above 1 when every channel has room for more than the hosts
    /// inject (the hosts' own links then bind).
    pub throughput: f64,
    /// The binding channels' kind.
    pub binding: Binding,
    /// Of the mixed bound: the share of traffic on the first routes (minimal); 1 otherwise.
    pub share: f64,
}

impl Bound {
    /// What binds, for claim texts.
    pub fn binding(&self) -> &'static str {
        match self.binding {
            Binding::Local => "local links",
            Binding::Global => "global links",
            Binding::Endpoint => "the hosts' endpoint ports",
        }
    }
}

/// The loads of `pattern` on `spec`'s clique, routed as `routes` says.
pub fn loads(spec: &Spec, pattern: Pattern, routes: Routes) -> Result<Loads, String> {
    let df = &spec.dragonfly;
    let topo = df
        .build()
        .map_err(|e| format!("the clique's wiring: {e}"))?;
    let router = Router::new(df, &topo, LevelRule::AfterEveryGlobal);
    let tins = df.tins() as usize;
    let mut load: Vec<Vec<f64>> = (0..tins)
        .map(|x| vec![0.0; router.ports(x as u32)])
        .collect();
    let global: Vec<Vec<bool>> = (0..tins)
        .map(|x| {
            (0..router.ports(x as u32))
                .map(|p| {
                    matches!(
                        df.port_kind(x as u32, p as u32),
                        DragonflyPort::Global { .. }
                    )
                })
                .collect()
        })
        .collect();
    let capacity = global
        .iter()
        .map(|ports| {
            ports
                .iter()
                .map(|&g| {
                    if g {
                        df.global_rate.0 as f64
                    } else {
                        df.local_rate.0 as f64
                    }
                })
                .collect()
        })
        .collect();
    let per_tin = spec.host_rate.0 as f64 * f64::from(spec.hosts_per_tin);
    let states = tins * 3 * usize::from(crate::routing::LEVELS);
    let index = |x: u32, from: InKind, level: u8| {
        (x as usize * 3 + from as usize) * usize::from(crate::routing::LEVELS) + usize::from(level)
    };
    let mut now = vec![0.0f64; states];
    let mut next = vec![0.0f64; states];
    let mut cand = Candidates::default();
    let valiant = routes == Routes::Valiant;
    for d in 0..df.tins() {
        now.fill(0.0);
        let mut any = false;
        for s in 0..df.tins() {
            let demand = per_tin * demand_share(spec, df, pattern, s, d);
            if demand > 0.0 && s != d {
                now[index(s, InKind::Endpoint, 0)] = demand;
                any = true;
            }
        }
        if !any {
            continue;
        }
        // A route's hops, then its ejection at the destination.
        for _ in 0..=ROUTE_HOPS {
            next.fill(0.0);
            for (i, &flow) in now.iter().enumerate() {
                if flow == 0.0 {
                    continue;
                }
                let level = (i % usize::from(crate::routing::LEVELS)) as u8;
                let from = match (i / usize::from(crate::routing::LEVELS)) % 3 {
                    0 => InKind::Endpoint,
                    1 => InKind::Local,
                    _ => InKind::Global,
                };
                let x = (i / (3 * usize::from(crate::routing::LEVELS))) as u32;
                router.candidates(x, from, level, d, valiant, &mut cand);
                let list = if valiant && !cand.non_minimal.is_empty() {
                    &cand.non_minimal
                } else {
                    &cand.minimal
                };
                if list.is_empty() {
                    return Err(format!("TiN {x} has no route to TiN {d}: not a clique"));
                }
                let each = flow / list.len() as f64;
                for hop in list {
                    let Some(port) = hop.port else { continue };
                    load[x as usize][port as usize] += each;
                    let (y, _, kind) = router.far_end(x, port);
                    next[index(y, kind, hop.level)] += each;
                }
            }
            std::mem::swap(&mut now, &mut next);
        }
        if now.iter().any(|&f| f != 0.0) {
            return Err(format!(
                "flow to TiN {d} still in the fabric after {ROUTE_HOPS} hops: a route is longer \
                 than the tables allow"
            ));
        }
    }
    Ok(Loads {
        load,
        capacity,
        global,
        endpoint: spec.crossbar_rate.0 as f64 / spec.host_rate.0 as f64,
    })
}

/// The share of TiN `s`'s injection bound for TiN `d` under `pattern` (`s`'s own TiN included
/// for uniform random: the other host of a shared TiN, which crosses no network link).
fn demand_share(spec: &Spec, df: &Dragonfly, pattern: Pattern, s: u32, d: u32) -> f64 {
    let hpt = f64::from(spec.hosts_per_tin);
    match pattern {
        Pattern::UniformRandom => {
            let others = f64::from(spec.hosts()) - 1.0;
            if s == d {
                (hpt - 1.0) / others
            } else {
                hpt / others
            }
        }
        Pattern::PodShift => {
            if df.pod_of(d) == (df.pod_of(s) + 1) % df.pods {
                1.0 / f64::from(df.tins_per_pod)
            } else {
                0.0
            }
        }
    }
}

impl Loads {
    /// The fraction of injection at which the first channel fills.
    pub fn bound(&self) -> Bound {
        self.mix(self, 1.0)
    }

    /// The best bound of a fixed split of traffic: a share `a` over `self`'s routes and the
    /// rest over `other`'s, maximised over `a` in steps of 1/1000 (the bound of one split is
    /// the minimum of quasi-concave functions of `a`, so a grid this fine is within a few
    /// thousandths of the optimum). An adaptive router that could hold that split would
    /// carry this much; it is not an upper bound on every adaptive policy.
    pub fn mixed_bound(&self, other: &Loads) -> Bound {
        (0..=1000)
            .map(|i| self.mix(other, f64::from(i) / 1000.0))
            .fold(None, |best: Option<Bound>, b| match best {
                Some(x) if x.throughput >= b.throughput => Some(x),
                _ => Some(b),
            })
            .expect("1001 splits")
    }

    fn mix(&self, other: &Loads, a: f64) -> Bound {
        let mut best = Bound {
            throughput: self.endpoint,
            binding: Binding::Endpoint,
            share: a,
        };
        for (x, ports) in self.load.iter().enumerate() {
            for (p, &l) in ports.iter().enumerate() {
                let load = a * l + (1.0 - a) * other.load[x][p];
                if load <= 0.0 {
                    continue;
                }
                let t = self.capacity[x][p] / load;
                if t < best.throughput {
                    best.throughput = t;
                    best.binding = if self.global[x][p] {
                        Binding::Global
                    } else {
                        Binding::Local
                    };
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::Rate;

    /// 3 pods of 2 TiNs, one host each, one local link between the TiNs of a pod and one
    /// global link between two pods; pod `p`'s link to its lower-numbered other pod leaves
    /// from its TiN 0, the other from its TiN 1. So the global links join TiNs 0-2 (pods 0-1),
    /// 1-4 (pods 0-2) and 3-5 (pods 1-2).
    fn tiny() -> Spec {
        let mut spec = Spec::aquila();
        let df = &mut spec.dragonfly;
        df.pods = 3;
        df.tins_per_pod = 2;
        df.local_links = 1;
        df.global_links = 1;
        df.local_ports = 1;
        df.global_ports = 1;
        df.local_rate = Rate::gbps(40);
        df.global_rate = Rate::gbps(20);
        spec.hosts_per_tin = 1;
        spec.host_rate = Rate::gbps(10);
        spec.crossbar_rate = Rate::gbps(1000);
        spec
    }

    /// A host faster than its endpoint port is bound by the port: 56 / 100 Gb/s, however much
    /// room the links have.
    #[test]
    fn a_host_faster_than_its_crossbar_port_is_bound_by_it() {
        let spec = Spec {
            crossbar_rate: Rate::gbps(56),
            host_rate: Rate::gbps(100),
            ..tiny()
        };
        let mut spec = spec;
        spec.dragonfly.local_rate = Rate::gbps(1000);
        spec.dragonfly.global_rate = Rate::gbps(1000);
        let b = loads(&spec, Pattern::UniformRandom, Routes::Minimal)
            .unwrap()
            .bound();
        assert!((b.throughput - 0.56).abs() < 1e-12, "{b:?}");
        assert_eq!(b.binding, Binding::Endpoint);
    }

    /// The load on the link from TiN `x` to TiN `y`, in units of a TiN's injection.
    fn on(spec: &Spec, l: &Loads, x: u32, y: u32) -> f64 {
        let topo = spec.dragonfly.build().unwrap();
        let links = topo.links(x);
        let p = links.iter().position(|k| k.peer == y).expect("a link");
        l.load[x as usize][p] / spec.host_rate.0 as f64
    }

    /// By hand, uniform random over minimal routes: each TiN sends 1/5 of its injection to
    /// each other TiN. Local link 0 -> 1 carries 0 -> 1 (1/5), 0's traffic to pod 2 via the
    /// holder 1 (2/5), and what pod 1 sends to TiN 1 after landing on TiN 0 (2/5): 1. A global
    /// link carries its pod pair's 4 flows: 4/5. Bound: min(40 / 10, 20 / 8) = 2.5.
    #[test]
    fn uniform_minimal_on_a_tiny_clique_matches_the_hand_count() {
        let spec = tiny();
        let l = loads(&spec, Pattern::UniformRandom, Routes::Minimal).unwrap();
        for (x, y) in [(0, 1), (1, 0), (2, 3), (3, 2), (4, 5), (5, 4)] {
            assert!((on(&spec, &l, x, y) - 1.0).abs() < 1e-12, "{x}->{y}");
        }
        for (x, y) in [(0, 2), (2, 0), (1, 4), (4, 1), (3, 5), (5, 3)] {
            assert!((on(&spec, &l, x, y) - 0.8).abs() < 1e-12, "{x}->{y}");
        }
        let b = l.bound();
        assert!(
            (b.throughput - 2.5).abs() < 1e-12 && b.binding == Binding::Global,
            "{b:?}"
        );
        // At 40 Gb/s per host the global links bind first: 20 / (0.8 x 40) = 0.625.
        let fast = Spec {
            host_rate: Rate::gbps(40),
            ..spec
        };
        let b = loads(&fast, Pattern::UniformRandom, Routes::Minimal)
            .unwrap()
            .bound();
        assert!(
            (b.throughput - 0.625).abs() < 1e-12 && b.binding == Binding::Global,
            "{b:?}"
        );
    }

    /// By hand, Valiant under pod shift (pod p to pod p + 1): pod 0's TiN 1 holds no link to
    /// pod 1, so TiN 0's only detour is the local link to TiN 1, and TiN 1's is its own global
    /// link to pod 2; in pod 2 the cells cross to TiN 5, the holder of pod 2's link to pod 1,
    /// and land on TiN 3. Each pod's 2 units take one such chain, and the three chains overlap
    /// so that six channels (0->1, 1->4, 4->5, 5->3, 3->2, 2->0) carry 4 units each and the
    /// other six none: the bound is min(40, 20) / (4 x 10) = 0.5, set by the global links.
    #[test]
    fn valiant_pod_shift_on_a_tiny_clique_matches_the_hand_count() {
        let spec = tiny();
        let l = loads(&spec, Pattern::PodShift, Routes::Valiant).unwrap();
        for (x, y) in [(0, 1), (1, 4), (4, 5), (5, 3), (3, 2), (2, 0)] {
            assert!((on(&spec, &l, x, y) - 4.0).abs() < 1e-12, "{x}->{y}");
        }
        for (x, y) in [(1, 0), (4, 1), (5, 4), (3, 5), (2, 3), (0, 2)] {
            assert_eq!(on(&spec, &l, x, y), 0.0, "{x}->{y}");
        }
        let b = l.bound();
        assert!(
            (b.throughput - 0.5).abs() < 1e-12 && b.binding == Binding::Global,
            "{b:?}"
        );
        // Minimal routes under pod shift: each pod's 2 units leave over its one link to the
        // next pod (0 -> 2, 3 -> 5, 4 -> 1: 20 Gb/s for 20, bound 1), after one unit crossed
        // to the holder (1 -> 0, 2 -> 3, 5 -> 4) and before one unit crosses from the landing
        // TiN (2 -> 3, 5 -> 4, 1 -> 0): 2 units on those local links. The two route sets share
        // no channel, so a share a of minimal routes is bound by min(20 / 20a, 20 / 40(1 - a))
        // on the global links (the local ones have room): best at a = 2/3, 1.5.
        let m = loads(&spec, Pattern::PodShift, Routes::Minimal).unwrap();
        assert!((on(&spec, &m, 0, 2) - 2.0).abs() < 1e-12);
        assert!((on(&spec, &m, 1, 0) - 2.0).abs() < 1e-12);
        assert!((m.bound().throughput - 1.0).abs() < 1e-12);
        let mix = m.mixed_bound(&l);
        assert!((mix.throughput - 1.5).abs() < 2e-3, "{mix:?}");
        assert!((mix.share - 2.0 / 3.0).abs() < 2e-3, "{mix:?}");
    }

    /// Flow is conserved: what the loads put on links equals each route's hops times its
    /// share, so the total over all channels, divided by the injection, is the mean hop count,
    /// which for minimal uniform random on the quick 9 x 4 clique lies between 1 and 3.
    #[test]
    fn mean_minimal_hops_lie_between_one_and_three() {
        let mut spec = Spec::aquila();
        let df = &mut spec.dragonfly;
        (df.pods, df.tins_per_pod, df.global_links, df.global_ports) = (9, 4, 1, 2);
        (df.local_ports, df.local_links) = (6, 2);
        let l = loads(&spec, Pattern::UniformRandom, Routes::Minimal).unwrap();
        let total: f64 = l.load.iter().flatten().sum();
        let injected = spec.host_rate.0 as f64 * f64::from(spec.hosts());
        let hops = total / injected;
        assert!((1.0..3.0).contains(&hops), "{hops}");
    }
}
