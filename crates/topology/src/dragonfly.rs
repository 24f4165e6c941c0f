//! A Dragonfly (Kim et al., ISCA 2008) as Aquila builds it (§3.2): routers that are also the
//! hosts' NICs (TiNs), grouped in pods; the TiNs of a pod fully meshed by local links, the pods
//! joined all-to-all by global links. The full Aquila clique is 48 pods of 12 TiNs, each TiN
//! with 24 local and 8 global ports, two links between any two TiNs of a pod and two between
//! any two pods (2 × 25 Gb/s); the half-scale clique of Fig. 9 has 24 pods and four links
//! between any two pods.
//!
//! Every TiN is a host of the [`Topology`] (like [`crate::Direct`]: hosts that forward), so a
//! TiN's index is `pod · tins_per_pod + tin`. A TiN lists only its wired ports: first its local
//! ports, `local_links` for each other TiN of its pod in TiN order, then its global ports.
//!
//! Global links are striped over the pod: pod `p` numbers its links to the other pods `q` in
//! the order of `q`, `global_links` per pod, and link `s` leaves from TiN `s mod tins_per_pod`.
//! So the links from one pod to another leave from different TiNs (more minimal paths), and the
//! TiNs of a pod carry equal numbers of global links, or one fewer (at full scale 94 links over
//! 12 TiNs: ten have eight, two have seven; the paper leaves its arrangement out).
//!
//! The generic routing tables of the [`Topology`] are shortest paths in hops, which in a
//! Dragonfly may cross a third pod (global, global) where the Dragonfly's minimal route is
//! local, global, local; a Dragonfly router computes its own routes from the queries here.

use crate::graph::{
    Kind, NodeIdx, PortIdx, Topology, TopologyError, Wiring, check_rate, check_size,
};
use shoal_base::{Dur, Rate};

/// Parameters of a Dragonfly; [`Dragonfly::build`] validates and wires them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dragonfly {
    pub pods: u32,
    pub tins_per_pod: u32,
    /// Parallel links between any two TiNs of a pod.
    pub local_links: u32,
    /// Parallel links between any two pods.
    pub global_links: u32,
    /// Local ports a TiN has: its local links must fit.
    pub local_ports: u32,
    /// Global ports a TiN has: a pod's global links must fit its TiNs' global ports.
    pub global_ports: u32,
    pub local_rate: Rate,
    pub global_rate: Rate,
    pub local_delay: Dur,
    pub global_delay: Dur,
}

/// Which of a TiN's ports a port is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DragonflyPort {
    /// The `link`-th of the parallel links to TiN `tin` of the same pod.
    Local { tin: u32, link: u32 },
    /// A link to pod `pod`.
    Global { pod: u32 },
}

impl Dragonfly {
    /// The full Aquila clique of §3.2 with the given link rates and delays.
    pub fn aquila(
        local_rate: Rate,
        global_rate: Rate,
        local_delay: Dur,
        global_delay: Dur,
    ) -> Dragonfly {
        Dragonfly {
            pods: 48,
            tins_per_pod: 12,
            local_links: 2,
            global_links: 2,
            local_ports: 24,
            global_ports: 8,
            local_rate,
            global_rate,
            local_delay,
            global_delay,
        }
    }

    pub fn tins(&self) -> u32 {
        self.pods * self.tins_per_pod
    }

    pub fn pod_of(&self, tin: NodeIdx) -> u32 {
        tin / self.tins_per_pod
    }

    /// A TiN's index within its pod.
    pub fn tin_in_pod(&self, tin: NodeIdx) -> u32 {
        tin % self.tins_per_pod
    }

    /// Wired local ports of every TiN.
    pub fn local_port_count(&self) -> u32 {
        self.local_links * (self.tins_per_pod - 1)
    }

    /// Global links of a pod, over all its TiNs.
    pub fn pod_global_links(&self) -> u32 {
        self.global_links * (self.pods - 1)
    }

    /// Wired global ports of TiN `tin`.
    pub fn global_port_count(&self, tin: NodeIdx) -> u32 {
        let (total, t, i) = (
            self.pod_global_links(),
            self.tins_per_pod,
            self.tin_in_pod(tin),
        );
        total / t + u32::from(i < total % t)
    }

    /// What port `port` of TiN `tin` is.
    pub fn port_kind(&self, tin: NodeIdx, port: PortIdx) -> DragonflyPort {
        let locals = self.local_port_count();
        if port < locals {
            let other = port / self.local_links;
            let me = self.tin_in_pod(tin);
            let peer = if other < me { other } else { other + 1 };
            return DragonflyPort::Local {
                tin: peer,
                link: port % self.local_links,
            };
        }
        let slot = (port - locals) * self.tins_per_pod + self.tin_in_pod(tin);
        let rank = slot / self.global_links;
        let pod = self.pod_of(tin);
        DragonflyPort::Global {
            pod: if rank < pod { rank } else { rank + 1 },
        }
    }

    /// The port of `tin` that is the `link`-th local link to TiN `peer` of its pod.
    pub fn local_port(&self, tin: NodeIdx, peer: u32, link: u32) -> PortIdx {
        let me = self.tin_in_pod(tin);
        debug_assert!(peer != me && peer < self.tins_per_pod && link < self.local_links);
        let other = if peer < me { peer } else { peer - 1 };
        other * self.local_links + link
    }

    /// The (TiN in pod, port) from which pod `pod`'s `link`-th global link to pod `to` leaves.
    pub fn global_port(&self, pod: u32, to: u32, link: u32) -> (u32, PortIdx) {
        let rank = if to < pod { to } else { to - 1 };
        let slot = rank * self.global_links + link;
        (
            slot % self.tins_per_pod,
            self.local_port_count() + slot / self.tins_per_pod,
        )
    }

    pub fn build(&self) -> Result<Topology, TopologyError> {
        check_rate("dragonfly local rate", self.local_rate)?;
        check_rate("dragonfly global rate", self.global_rate)?;
        if self.pods == 0 || self.tins_per_pod == 0 {
            return Err(TopologyError(format!(
                "a dragonfly of {} pods of {} TiNs has no TiN",
                self.pods, self.tins_per_pod
            )));
        }
        check_size(
            &format!(
                "a dragonfly of {} pods of {} TiNs",
                self.pods, self.tins_per_pod
            ),
            u128::from(self.pods) * u128::from(self.tins_per_pod),
            0,
        )?;
        if self.tins_per_pod > 1 && self.local_links == 0 {
            return Err(TopologyError(
                "a pod of several TiNs needs at least one local link between two TiNs".into(),
            ));
        }
        if self.pods > 1 && self.global_links == 0 {
            return Err(TopologyError(
                "a dragonfly of several pods needs at least one global link between two pods"
                    .into(),
            ));
        }
        let locals = u64::from(self.local_links) * u64::from(self.tins_per_pod - 1);
        if locals > u64::from(self.local_ports) {
            return Err(TopologyError(format!(
                "{} local links to each of {} other TiNs need {locals} local ports, a TiN has {}",
                self.local_links,
                self.tins_per_pod - 1,
                self.local_ports
            )));
        }
        let globals = u64::from(self.global_links) * u64::from(self.pods - 1);
        let room = u64::from(self.global_ports) * u64::from(self.tins_per_pod);
        if globals > room {
            return Err(TopologyError(format!(
                "{} global links to each of {} other pods need {globals} global ports, a pod \
                 has {room} ({} TiNs x {})",
                self.global_links,
                self.pods - 1,
                self.tins_per_pod,
                self.global_ports
            )));
        }
        let tins = self.tins();
        let mut w = Wiring::new(
            tins as usize,
            (0..tins).map(|n| self.local_port_count() + self.global_port_count(n)),
        );
        let t = self.tins_per_pod;
        for pod in 0..self.pods {
            for a in 0..t {
                for b in a + 1..t {
                    for k in 0..self.local_links {
                        let (na, nb) = (pod * t + a, pod * t + b);
                        w.connect(
                            (na, self.local_port(na, b, k)),
                            (nb, self.local_port(nb, a, k)),
                            self.local_rate,
                            self.local_delay,
                        )?;
                    }
                }
            }
            for to in pod + 1..self.pods {
                for k in 0..self.global_links {
                    let (ta, pa) = self.global_port(pod, to, k);
                    let (tb, pb) = self.global_port(to, pod, k);
                    w.connect(
                        (pod * t + ta, pa),
                        (to * t + tb, pb),
                        self.global_rate,
                        self.global_delay,
                    )?;
                }
            }
        }
        let kind = Kind::Dragonfly {
            pods: self.pods,
            tins_per_pod: self.tins_per_pod,
        };
        w.finish(
            format!("dragonfly {}x{}", self.pods, self.tins_per_pod),
            kind,
            format!(
                "dragonfly: {} pods x {} TiNs, {} local links per TiN pair ({} Gb/s, {}), {} \
                 global links per pod pair ({} Gb/s, {})",
                self.pods,
                self.tins_per_pod,
                self.local_links,
                self.local_rate.as_gbps_f64(),
                self.local_delay,
                self.global_links,
                self.global_rate.as_gbps_f64(),
                self.global_delay
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aquila() -> Dragonfly {
        Dragonfly::aquila(
            Rate::gbps(27),
            Rate::gbps(25),
            Dur::from_ns(20),
            Dur::from_ns(550),
        )
    }

    #[test]
    fn the_full_clique_has_the_papers_counts() {
        let d = aquila();
        let t = d.build().unwrap();
        assert_eq!(t.hosts(), 576);
        assert_eq!(d.pod_global_links(), 94, "2 x 47 other pods");
        // 94 links over 12 TiNs: ten with 8 global ports, two with 7.
        let counts: Vec<u32> = (0..12).map(|i| d.global_port_count(i)).collect();
        assert_eq!(counts.iter().sum::<u32>(), 94);
        assert_eq!(counts.iter().filter(|&&c| c == 8).count(), 10);
        // 22 local links (2 to each of 11 peers) plus 7 or 8 global.
        assert_eq!(t.ports(0), 22 + 8);
        assert_eq!(t.link_count(), 576 * 22 / 2 + 48 * 94 / 2);
    }

    /// Every port's description agrees with the wiring: a local port reaches the named TiN of
    /// the same pod, a global one a TiN of the named pod, and the far end says the reverse.
    #[test]
    fn port_kinds_agree_with_the_wires() {
        for d in [
            aquila(),
            Dragonfly {
                pods: 5,
                tins_per_pod: 3,
                local_links: 1,
                global_links: 3,
                local_ports: 2,
                global_ports: 4,
                ..aquila()
            },
        ] {
            let t = d.build().unwrap();
            let mut per_pair = vec![0u32; (d.pods * d.pods) as usize];
            for n in 0..d.tins() {
                for p in 0..t.ports(n) as u32 {
                    let link = t.link(n, p);
                    match d.port_kind(n, p) {
                        DragonflyPort::Local { tin, link: k } => {
                            assert_eq!(link.peer, d.pod_of(n) * d.tins_per_pod + tin);
                            assert_eq!(
                                d.port_kind(link.peer, link.peer_port),
                                DragonflyPort::Local {
                                    tin: d.tin_in_pod(n),
                                    link: k
                                }
                            );
                            assert_eq!(d.local_port(n, tin, k), p);
                        }
                        DragonflyPort::Global { pod } => {
                            assert_eq!(d.pod_of(link.peer), pod);
                            assert_eq!(
                                d.port_kind(link.peer, link.peer_port),
                                DragonflyPort::Global { pod: d.pod_of(n) }
                            );
                            per_pair[(d.pod_of(n) * d.pods + pod) as usize] += 1;
                        }
                    }
                }
            }
            for a in 0..d.pods {
                for b in 0..d.pods {
                    let want = if a == b { 0 } else { d.global_links };
                    assert_eq!(per_pair[(a * d.pods + b) as usize], want, "pods {a}->{b}");
                }
            }
        }
    }

    #[test]
    fn the_links_between_two_pods_leave_from_different_tins() {
        let d = aquila();
        for to in 1..48 {
            let (a, _) = d.global_port(0, to, 0);
            let (b, _) = d.global_port(0, to, 1);
            assert_ne!(a, b);
        }
    }

    #[test]
    fn too_few_ports_and_empty_sizes_are_refused() {
        let mut d = aquila();
        d.global_links = 3; // 141 links, 96 ports
        assert!(d.build().unwrap_err().0.contains("global ports"));
        let mut d = aquila();
        d.local_links = 3; // 33 local links, 24 ports
        assert!(d.build().unwrap_err().0.contains("local ports"));
        let mut d = aquila();
        d.pods = 0;
        assert!(d.build().unwrap_err().0.contains("no TiN"));
        let mut d = aquila();
        d.global_links = 0;
        assert!(d.build().unwrap_err().0.contains("global link"));
    }

    #[test]
    fn the_half_scale_clique_of_fig_9_fits() {
        let d = Dragonfly {
            pods: 24,
            global_links: 4,
            ..aquila()
        };
        let t = d.build().unwrap();
        assert_eq!(t.hosts(), 288);
        assert_eq!(d.pod_global_links(), 92);
    }
}
