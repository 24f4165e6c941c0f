//! A Stardust network built and ready to run: the topology (its hosts are the Fabric
//! Adapters, its switches the Fabric Elements), the adapters' and elements' parameters, and
//! flat per-directed-link tables so the event loop indexes arrays and never searches.

use crate::adapter::Adapter;
use crate::config::{AdapterConfig, ElementConfig};
use crate::element::Element;
use crate::hosts::HostTransport;
use crate::reach::ReachTable;
use crate::reachability::{ReachConfig, Reachability};
use shoal_base::rng::stream;
use shoal_base::{Dur, Rate, Time};
use shoal_topology::Topology;

/// What a network needs beyond its topology and adapters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetParams {
    /// Data cells of an element's shared pool, per link.
    pub pool_cells_per_link: u32,
    /// FCI marking threshold of an element's output queue, in cells.
    pub fci_threshold: u32,
    /// Host packets: full size on the host link, and the headers in it.
    pub packet_bytes: u32,
    pub header_bytes: u32,
    /// Propagation delay of a host's link to its adapter.
    pub host_delay: Dur,
    /// The run's seed (the spraying permutations derive from it).
    pub seed: u64,
    /// The reachability protocol (§5.9, Appendix E).
    pub reach: ReachConfig,
}

/// What fails during a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The link at device `dev`'s port `port`, both ways: cells on it are lost; the devices at
    /// its ends stop hearing each other.
    Link { dev: u32, port: u32 },
    /// A device: every link of it, its queued cells, and its reachability messages.
    Device { dev: u32 },
}

pub struct Network {
    pub topo: Topology,
    pub adapter: AdapterConfig,
    /// Data cells of an element's shared pool, per link (§6.2: 128 cells of 256 B per link).
    pub pool_cells_per_link: u32,
    /// FCI marking threshold of an element's output queue, in cells.
    pub fci_threshold: u32,
    /// Host packets: full size on the host link, and the headers in it.
    pub packet_bytes: u32,
    pub header_bytes: u32,
    /// Propagation delay of a host's link to its adapter.
    pub host_delay: Dur,
    /// An adapter pauses its hosts at this many ingress bytes, and releases them at
    /// `resume_at`.
    pub pause_at: u64,
    pub resume_at: u64,
    pub seed: u64,
    pub reach: ReachConfig,
    /// Failures to inject during a run.
    pub failures: Vec<(Time, Failure)>,
    /// What the hosts run above the fabric (none unless set).
    pub transport: HostTransport,
    /// First directed-link index of each device.
    base: Vec<u32>,
    /// Per directed link: owner (device, port), and the reverse link.
    owner: Vec<(u32, u32)>,
    reverse: Vec<u32>,
    /// Per directed link: its rate and propagation delay (read per cell, so kept flat here
    /// rather than looked up in the topology's adjacency).
    wires: Vec<(Rate, Dur)>,
}

impl Network {
    pub fn new(topo: Topology, adapter: AdapterConfig, p: NetParams) -> Network {
        let NetParams {
            pool_cells_per_link,
            fci_threshold,
            packet_bytes,
            header_bytes,
            host_delay,
            seed,
            reach,
        } = p;
        let mut base = Vec::with_capacity(topo.nodes() + 1);
        let mut owner = Vec::new();
        let mut total = 0u32;
        for n in 0..topo.nodes() as u32 {
            base.push(total);
            for p in 0..topo.ports(n) as u32 {
                owner.push((n, p));
            }
            total += topo.ports(n) as u32;
        }
        base.push(total);
        let reverse = owner
            .iter()
            .map(|&(n, p)| {
                let l = topo.link(n, p);
                base[l.peer as usize] + l.peer_port
            })
            .collect();
        let wires = owner
            .iter()
            .map(|&(n, p)| {
                let l = topo.link(n, p);
                (l.rate, l.delay)
            })
            .collect();
        // Pause the hosts with room left for what every host link may still deliver: a packet
        // being sent and a link's worth in flight each way, per port.
        let in_flight = adapter.port_rate.bytes_in(Dur(2 * host_delay.0)) + 2 * packet_bytes as u64;
        let headroom = adapter.ports as u64 * in_flight;
        let pause_at = adapter.ingress_buffer_bytes.saturating_sub(headroom);
        Network {
            topo,
            adapter,
            pool_cells_per_link,
            fci_threshold,
            packet_bytes,
            header_bytes,
            host_delay,
            pause_at,
            resume_at: pause_at.saturating_sub(headroom),
            seed,
            reach,
            failures: Vec::new(),
            transport: HostTransport::None,
            base,
            owner,
            reverse,
            wires,
        }
    }

    pub fn fas(&self) -> usize {
        self.topo.hosts()
    }

    /// Host ports per adapter.
    pub fn ports(&self) -> u32 {
        self.adapter.ports as u32
    }

    /// Nodes of the scenario: every port of every adapter.
    pub fn nodes(&self) -> usize {
        self.fas() * self.adapter.ports as usize
    }

    pub fn mss(&self) -> u32 {
        self.packet_bytes - self.header_bytes
    }

    pub fn directed_links(&self) -> usize {
        self.owner.len()
    }

    /// Directed link of device `dev`'s port `port`.
    #[inline]
    pub fn link(&self, dev: u32, port: u32) -> u32 {
        self.base[dev as usize] + port
    }

    #[inline]
    pub fn owner(&self, link: u32) -> (u32, u32) {
        self.owner[link as usize]
    }

    /// The device and port at the far end of `link`.
    #[inline]
    pub fn peer(&self, link: u32) -> (u32, u32) {
        self.owner[self.reverse[link as usize] as usize]
    }

    /// The same link in the other direction.
    #[inline]
    pub fn reverse(&self, link: u32) -> u32 {
        self.reverse[link as usize]
    }

    pub fn ports_of(&self, dev: u32) -> u32 {
        self.base[dev as usize + 1] - self.base[dev as usize]
    }

    #[inline]
    pub fn rate_delay(&self, link: u32) -> (Rate, Dur) {
        self.wires[link as usize]
    }

    /// Fresh adapters with converged forwarding tables.
    pub fn adapters(&self) -> Vec<Adapter> {
        (0..self.fas() as u32)
            .map(|fa| {
                Adapter::new(
                    fa,
                    self.adapter,
                    ReachTable::converged(&self.topo, fa),
                    stream(self.seed, "stardust.spray", fa as u64),
                )
            })
            .collect()
    }

    /// Fresh elements with converged forwarding tables.
    pub fn elements(&self) -> Vec<Element> {
        (self.fas() as u32..self.topo.nodes() as u32)
            .map(|n| {
                Element::new(
                    self.element_config(n),
                    ReachTable::converged(&self.topo, n),
                    stream(self.seed, "stardust.spray", n as u64),
                )
            })
            .collect()
    }

    /// Tier of every device: hops from the nearest adapter (adapters 0, first-tier elements 1,
    /// ...). A link goes up when its peer's tier is higher.
    pub fn tiers(&self) -> Vec<u32> {
        let fas = self.fas() as u32;
        (0..self.topo.nodes() as u32)
            .map(|n| {
                if n < fas {
                    0
                } else {
                    (0..fas)
                        .map(|h| self.topo.distance(n, h))
                        .min()
                        .unwrap_or(0)
                }
            })
            .collect()
    }

    /// Every device's reachability protocol, converged at time 0: each link valid and each
    /// neighbour's advertisement known, as th messages of every chunk would have left them.
    pub fn reachability(&self) -> Vec<Reachability> {
        let tier = self.tiers();
        let fas = self.fas() as u32;
        let mut devs: Vec<Reachability> = (0..self.topo.nodes() as u32)
            .map(|n| {
                let up = self
                    .topo
                    .links(n)
                    .iter()
                    .map(|l| tier[l.peer as usize] > tier[n as usize])
                    .collect();
                Reachability::new(self.reach, fas, (n < fas).then_some(n), up)
            })
            .collect();
        // Each round tells every device what its neighbours advertise now; a round changes
        // nothing once every advertisement has crossed the network's diameter.
        loop {
            let adverts: Vec<Vec<bool>> = (0..self.directed_links() as u32)
                .map(|l| {
                    let (n, p) = self.owner(l);
                    (0..fas)
                        .map(|d| devs[n as usize].advertises(p, d))
                        .collect()
                })
                .collect();
            let before: Vec<ReachTable> = devs.iter().map(|d| d.table().clone()).collect();
            for l in 0..self.directed_links() as u32 {
                let (n, p) = self.peer(l);
                let adv = &adverts[l as usize];
                devs[n as usize].assume(Time::ZERO, p, |d| adv[d as usize]);
            }
            let settled = devs.iter().zip(&before).all(|(d, b)| d.table() == b)
                && (0..self.directed_links() as u32).all(|l| {
                    let (n, p) = self.owner(l);
                    (0..fas).all(|d| {
                        devs[n as usize].advertises(p, d) == adverts[l as usize][d as usize]
                    })
                });
            if settled {
                break;
            }
        }
        for d in &mut devs {
            d.settle();
        }
        devs
    }

    /// An element's pool is `pool_cells_per_link` per link; it pauses its upstream links while it still
    /// has room for what they may already have sent: a round trip of each link in cells.
    fn element_config(&self, n: u32) -> ElementConfig {
        let links = self.topo.ports(n) as u32;
        // Saturating: a link as long as a continent holds more cells than a pool could, and
        // the element then pauses its sources whenever anything is queued.
        let in_flight = self
            .topo
            .links(n)
            .iter()
            .map(|l| {
                l.rate.bytes_in(Dur(l.delay.0.saturating_mul(2))) / self.adapter.cell_bytes as u64
                    + 2
            })
            .fold(0u64, u64::saturating_add)
            .min(u32::MAX as u64) as u32;
        let pool_cells = self.pool_cells_per_link * links;
        let pause_cells = pool_cells.saturating_sub(in_flight);
        ElementConfig {
            pool_cells,
            fci_threshold: self.fci_threshold,
            pause_cells,
            resume_cells: pause_cells.saturating_sub(links),
            permutation_rounds: self.adapter.permutation_rounds,
        }
    }
}
