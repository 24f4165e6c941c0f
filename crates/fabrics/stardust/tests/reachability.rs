//! The reachability protocol on whole networks, devices exchanging messages every interval:
//! from nothing it converges to the shortest paths of the folded Clos, and after any single
//! failure (a link, or a device falling silent) it converges again within Appendix E's time
//! (local detection, then (2n − 1) hops of M · th messages), to tables that deliver every cell
//! to every adapter still connected and never use what failed.

use proptest::prelude::*;
use shoal_base::{Dur, Rate, Time};
use shoal_stardust::reach::ReachTable;
use shoal_stardust::reachability::{ReachConfig, Reachability};
use shoal_topology::{CellClos, Topology};

#[derive(Clone, Copy, Debug)]
enum Failure {
    /// Node, port: the link both ways.
    Link(u32, u32),
    Device(u32),
}

struct Net {
    topo: Topology,
    devs: Vec<Reachability>,
    dead_link: Option<(u32, u32)>,
    dead_dev: Option<u32>,
    /// Time of the last change of any forwarding table.
    last_change: Time,
}

/// Tiers: hops from the nearest adapter.
fn tiers(topo: &Topology) -> Vec<u32> {
    (0..topo.nodes() as u32)
        .map(|n| {
            (0..topo.hosts() as u32)
                .map(|h| if h == n { 0 } else { topo.distance(n, h) })
                .min()
                .unwrap_or(0)
        })
        .collect()
}

impl Net {
    fn new(topo: Topology, cfg: ReachConfig) -> Net {
        let tier = tiers(&topo);
        let fas = topo.hosts() as u32;
        let devs = (0..topo.nodes() as u32)
            .map(|n| {
                let up = topo
                    .links(n)
                    .iter()
                    .map(|l| tier[l.peer as usize] > tier[n as usize])
                    .collect();
                Reachability::new(cfg, fas, (n < fas).then_some(n), up)
            })
            .collect();
        Net {
            topo,
            devs,
            dead_link: None,
            dead_dev: None,
            last_change: Time::ZERO,
        }
    }

    fn link_dead(&self, n: u32, p: u32) -> bool {
        let l = self.topo.link(n, p);
        self.dead_dev.is_some_and(|d| d == n || d == l.peer)
            || self
                .dead_link
                .is_some_and(|(a, b)| (a, b) == (n, p) || (a, b) == (l.peer, l.peer_port))
    }

    /// One interval at `now`: every device finds the links silent since the last interval
    /// (at their exact deadlines), then every live device sends one message on every live
    /// link, and they arrive at once (no propagation delay).
    fn step(&mut self, now: Time) {
        for d in &mut self.devs {
            while let Some(t) = d.poll_timeout().filter(|&t| t <= now) {
                d.handle_timeout(t);
                if d.poll_changed() {
                    self.last_change = self.last_change.max(t);
                }
            }
        }
        let mut mail = Vec::new();
        for n in 0..self.topo.nodes() as u32 {
            for p in 0..self.topo.ports(n) as u32 {
                if !self.link_dead(n, p) {
                    let m = self.devs[n as usize].next_message(p);
                    let l = self.topo.link(n, p);
                    mail.push((l.peer, l.peer_port, m));
                }
            }
        }
        for (n, p, m) in mail {
            self.devs[n as usize].handle_message(now, p, &m);
        }
        for d in &mut self.devs {
            if d.poll_changed() {
                self.last_change = now;
            }
        }
    }

    /// Steps from `from` until no table has changed for `quiet`; returns the time reached.
    fn run_until_quiet(&mut self, from: Time, interval: Dur, quiet: Dur) -> Time {
        let mut now = from;
        self.last_change = from;
        loop {
            self.step(now);
            if now.0 - self.last_change.0 >= quiet.0 {
                return now;
            }
            now += interval;
            assert!(now.0 - from.0 < 1000 * quiet.0, "never settles");
        }
    }

    fn table(&self, n: u32) -> &ReachTable {
        self.devs[n as usize].table()
    }
}

fn clos(pods: u32, per_pod: u32, fe1: u32, par: u32, fe2: u32) -> Topology {
    CellClos {
        fas: pods * per_pod,
        fas_per_pod: per_pod,
        fe1_per_pod: fe1,
        parallel: par,
        fe2: if pods > 1 { fe2.max(1) } else { 0 },
        rate: Rate::gbps(50),
        link_delay: Dur::from_ns(500),
    }
    .build()
    .expect("a valid Clos")
}

/// Whether adapter `dst` is reachable from adapter `src` over live links through elements
/// only (adapters do not forward).
fn connected(net: &Net, src: u32, dst: u32) -> bool {
    let fas = net.topo.hosts() as u32;
    let mut seen = vec![false; net.topo.nodes()];
    let mut stack = vec![src];
    seen[src as usize] = true;
    while let Some(n) = stack.pop() {
        if n == dst {
            return true;
        }
        if n < fas && n != src {
            continue;
        }
        for p in 0..net.topo.ports(n) as u32 {
            let peer = net.topo.link(n, p).peer;
            if !net.link_dead(n, p) && !seen[peer as usize] {
                seen[peer as usize] = true;
                stack.push(peer);
            }
        }
    }
    false
}

/// Follows every choice the tables offer from `src` towards `dst`: each path must reach `dst`
/// over live links within `max_hops` without meeting a device with nowhere to send it.
fn delivers(net: &Net, src: u32, dst: u32, max_hops: u32) -> Result<(), String> {
    let mut frontier = vec![(src, 0u32)];
    while let Some((n, hops)) = frontier.pop() {
        if n == dst {
            continue;
        }
        if hops >= max_hops {
            return Err(format!(
                "{src} -> {dst}: longer than {max_hops} hops at {n}"
            ));
        }
        let links: Vec<u32> = net.table(n).members(dst).collect();
        if links.is_empty() {
            return Err(format!("{src} -> {dst}: dead end at {n}"));
        }
        for p in links {
            if net.link_dead(n, p) {
                return Err(format!("{src} -> {dst}: {n} uses failed port {p}"));
            }
            frontier.push((net.topo.link(n, p).peer, hops + 1));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn reachability_converges_after_any_single_failure(
        pods in 1u32..4,
        per_pod in 1u32..4,
        fe1 in 1u32..4,
        par in 1u32..3,
        fe2 in 1u32..4,
        bitmap in 1u32..5,
        confirm in 1u32..4,
        pick in any::<u64>(),
        fail_device in any::<bool>(),
    ) {
        prop_assume!(pods * per_pod >= 2);
        let topo = clos(pods, per_pod, fe1, par, fe2);
        let interval = Dur::from_us(10);
        let cfg = ReachConfig { interval, bitmap, confirm, error_window: 16, error_limit: 2 };
        let mut net = Net::new(topo, cfg);
        let fas = net.topo.hosts() as u32;
        let m = fas.div_ceil(bitmap) as u64;
        let tiers = if pods > 1 { 2u64 } else { 1 };
        // Appendix E with no propagation delay: (2n − 1) hops of t · M · th, after the failure
        // is detected locally (th silent intervals and our half interval of slack).
        let hops = 2 * tiers - 1;
        let bound = Dur(cfg.timeout().0 + hops * interval.0 * m * confirm as u64);
        let quiet = Dur(bound.0 + 2 * interval.0 * m * confirm as u64);

        // From nothing: the shortest paths of the intact Clos.
        let t0 = net.run_until_quiet(Time::ZERO, interval, quiet);
        for n in 0..net.topo.nodes() as u32 {
            prop_assert_eq!(net.table(n), &ReachTable::converged(&net.topo, n), "node {}", n);
        }

        // One failure, a third of an interval after a round of messages.
        let failure = if fail_device {
            Failure::Device((pick % net.topo.nodes() as u64) as u32)
        } else {
            let n = (pick % net.topo.nodes() as u64) as u32;
            Failure::Link(n, ((pick >> 32) % net.topo.ports(n) as u64) as u32)
        };
        match failure {
            Failure::Link(n, p) => net.dead_link = Some((n, p)),
            Failure::Device(d) => net.dead_dev = Some(d),
        }
        let failed_at = t0 + Dur(interval.0 / 3);
        net.run_until_quiet(t0 + interval, interval, quiet);
        let took = net.last_change.0.saturating_sub(failed_at.0);
        prop_assert!(took <= bound.0, "{failure:?}: settled after {took} ps, bound {} ps", bound.0);

        for src in 0..fas {
            for dst in 0..fas {
                if src == dst || net.dead_dev.is_some_and(|d| d == src || d == dst) {
                    continue;
                }
                if connected(&net, src, dst) {
                    let r = delivers(&net, src, dst, 2 * tiers as u32);
                    prop_assert!(r.is_ok(), "{:?}: {}", failure, r.unwrap_err());
                } else {
                    prop_assert_eq!(net.table(src).count(dst), 0, "{:?}: {} still sends to unreachable {}", failure, src, dst);
                }
            }
        }
    }
}
