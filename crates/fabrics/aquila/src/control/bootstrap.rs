//! The in-band bootstrap of §4.4 as a discrete-event simulation.
//!
//! The controller reaches the clique only through the DCN. A DCN-connected TiN gets its address
//! by DHCP over the DCN, then the controller (which keeps retrying) opens a TCP session to its
//! CPU and programs its routing tables. A TiN under a TCP session becomes a *proxy*: over PMOS,
//! the slow point-to-point channel between the CPUs of directly connected TiNs (§3.5), it
//! relays a neighbour's DHCP, then the controller programs enough of the neighbour's routing
//! state through it for a TCP session over GNet; once that session is up the proxy moves on to
//! its next neighbour ("in turn"), the new TiN is a proxy itself, and the rest of its state
//! goes over its own session. The waves run side by side.
//!
//! Choices where §4.4 is silent, each a parameter of [`Timing`] (defaults in
//! `scenarios/aquila-bootstrap.toml`):
//! - **Who bootstraps whom.** The controller knows the wiring from its configuration, so it
//!   plans the waves before it starts: wave `d` is the TiNs at hop distance `d` from the
//!   DCN-connected set (a BFS over the Dragonfly's links), and each TiN of wave `d` is given to
//!   the neighbour in wave `d − 1` that has the fewest targets so far (the lowest index on a
//!   tie). A proxy serves its targets one at a time, in index order. The plan does not depend
//!   on the times, so every bootstrap time is a max-plus expression of the step times: later
//!   steps never make any TiN earlier.
//! - **A TiN's bootstrap time** is from the moment the controller could first reach it (its
//!   proxy's session up; time 0 for a DCN-connected TiN) to its routing tables fully
//!   programmed: it includes the wait while its proxy serves earlier targets. The clique's
//!   total is the last TiN's completion.

use shoal_base::{Dur, Time};
use shoal_engine::EventQueue;
use shoal_topology::{NodeIdx, Topology};

/// How long each step of §4.4 takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// A DCN-connected TiN's DHCP over the DCN (discover relayed by the spine to the server,
    /// offer, request, acknowledgement).
    pub dcn_dhcp: Dur,
    /// From a TiN knowing its address to the controller's TCP session with its CPU (the
    /// controller retries its connection; this is its wait and the handshake).
    pub tcp_connect: Dur,
    /// All of a TiN's configuration and routing state programmed over its TCP session.
    pub tcp_program: Dur,
    /// A target's DHCP relayed over PMOS by its proxy and the proxy's session.
    pub pmos_dhcp: Dur,
    /// Enough of a target's routing state programmed over PMOS for a TCP session over GNet.
    pub pmos_program: Dur,
    /// The rest of a target's state over its own session, once that is up.
    pub tcp_program_rest: Dur,
}

impl Timing {
    /// How long a proxy is busy with one target: DHCP and the first routes over PMOS, then
    /// the target's TCP session.
    pub fn proxy_busy(&self) -> Dur {
        self.pmos_dhcp + self.pmos_program + self.tcp_connect
    }

    /// A DCN-connected TiN's time with nothing to wait for.
    pub fn dcn_alone(&self) -> Dur {
        self.dcn_dhcp + self.tcp_connect + self.tcp_program
    }

    /// A PMOS target's own steps, without waiting for its proxy.
    pub fn target_alone(&self) -> Dur {
        self.proxy_busy() + self.tcp_program_rest
    }
}

/// The waves the controller plans from the wiring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Each TiN's wave (0 for the DCN-connected ones).
    pub wave: Vec<u32>,
    /// Each TiN's proxy (`None` in wave 0).
    pub proxy: Vec<Option<NodeIdx>>,
    /// Each proxy's targets in the order it serves them.
    pub targets: Vec<Vec<NodeIdx>>,
}

impl Plan {
    /// The plan for `topo` from the DCN-connected TiNs `dcn`. Errors name a TiN that does not
    /// exist or that no wave reaches.
    pub fn new(topo: &Topology, dcn: &[NodeIdx]) -> Result<Plan, String> {
        let n = topo.nodes();
        if dcn.is_empty() {
            return Err("no DCN-connected TiN: the controller reaches no TiN".into());
        }
        let mut wave = vec![u32::MAX; n];
        let mut layer = Vec::new();
        for &t in dcn {
            if t as usize >= n {
                return Err(format!("DCN-connected TiN {t} does not exist ({n} TiNs)"));
            }
            if wave[t as usize] == 0 {
                return Err(format!("DCN-connected TiN {t} is listed twice"));
            }
            wave[t as usize] = 0;
            layer.push(t);
        }
        layer.sort_unstable();
        let mut proxy = vec![None; n];
        let mut targets = vec![Vec::new(); n];
        let mut d = 0;
        while !layer.is_empty() {
            d += 1;
            let mut next = Vec::new();
            for &p in &layer {
                for link in topo.links(p) {
                    if wave[link.peer as usize] == u32::MAX {
                        wave[link.peer as usize] = d;
                        next.push(link.peer);
                    }
                }
            }
            next.sort_unstable();
            for &t in &next {
                let best = topo
                    .links(t)
                    .iter()
                    .map(|l| l.peer)
                    .filter(|&q| wave[q as usize] == d - 1)
                    .min_by_key(|&q| (targets[q as usize].len(), q))
                    .expect("a TiN of wave d has a neighbour in wave d - 1");
                proxy[t as usize] = Some(best);
                targets[best as usize].push(t);
            }
            layer = next;
        }
        if let Some(t) = wave.iter().position(|&w| w == u32::MAX) {
            return Err(format!("TiN {t} is connected to no DCN-connected TiN"));
        }
        Ok(Plan {
            wave,
            proxy,
            targets,
        })
    }

    /// Waves after the first: the greatest hop distance from the DCN-connected set.
    pub fn depth(&self) -> u32 {
        self.wave.iter().copied().max().unwrap_or(0)
    }
}

/// One TiN's bootstrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TinBoot {
    pub wave: u32,
    pub proxy: Option<NodeIdx>,
    /// When the controller could first reach it (its proxy's session up).
    pub reachable: Time,
    /// When the controller's TCP session with its CPU came up.
    pub session: Time,
    /// When its routing tables were fully programmed.
    pub done: Time,
}

impl TinBoot {
    /// Its bootstrap time: from reachable to done.
    pub fn time(&self) -> Dur {
        self.done.since(self.reachable)
    }
}

/// A clique's bootstrap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bootstrap {
    pub tins: Vec<TinBoot>,
}

impl Bootstrap {
    /// The whole clique's bootstrap: the last TiN's completion.
    pub fn total(&self) -> Dur {
        self.tins
            .iter()
            .map(|b| b.done.since(Time::ZERO))
            .max()
            .unwrap_or(Dur::ZERO)
    }

    pub fn waves(&self) -> u32 {
        self.tins.iter().map(|b| b.wave).max().unwrap_or(0)
    }
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The controller's TCP session with this TiN's CPU is up.
    Session(NodeIdx),
    /// This TiN's routing tables are fully programmed.
    Programmed(NodeIdx),
}

/// Runs the bootstrap of `plan` with the step times `t`.
pub fn bootstrap(plan: &Plan, t: &Timing) -> Bootstrap {
    let n = plan.wave.len();
    let mut q = EventQueue::new();
    let mut session = vec![None; n];
    let mut done = vec![None; n];
    // The next target each proxy serves.
    let mut cursor = vec![0usize; n];
    let mut dcn: Vec<NodeIdx> = (0..n as NodeIdx)
        .filter(|&x| plan.wave[x as usize] == 0)
        .collect();
    dcn.sort_unstable();
    for &x in &dcn {
        q.schedule(Time::ZERO + t.dcn_dhcp + t.tcp_connect, Event::Session(x));
    }
    let serve_next = |q: &mut EventQueue<Event>, cursor: &mut [usize], p: NodeIdx, now: Time| {
        if let Some(&next) = plan.targets[p as usize].get(cursor[p as usize]) {
            cursor[p as usize] += 1;
            q.schedule(now + t.proxy_busy(), Event::Session(next));
        }
    };
    while let Some((now, ev)) = q.pop() {
        match ev {
            Event::Session(x) => {
                debug_assert!(session[x as usize].is_none(), "one session per TiN");
                session[x as usize] = Some(now);
                let rest = match plan.proxy[x as usize] {
                    None => t.tcp_program,
                    Some(p) => {
                        // The proxy is free for its next target.
                        serve_next(&mut q, &mut cursor, p, now);
                        t.tcp_program_rest
                    }
                };
                q.schedule(now + rest, Event::Programmed(x));
                serve_next(&mut q, &mut cursor, x, now);
            }
            Event::Programmed(x) => {
                debug_assert!(done[x as usize].is_none(), "programmed once");
                done[x as usize] = Some(now);
            }
        }
    }
    let tins = (0..n)
        .map(|x| {
            let proxy = plan.proxy[x];
            TinBoot {
                wave: plan.wave[x],
                proxy,
                reachable: proxy.map_or(Time::ZERO, |p| {
                    session[p as usize].expect("a proxy's session comes first")
                }),
                session: session[x].expect("every planned TiN gets a session"),
                done: done[x].expect("every session ends programmed"),
            }
        })
        .collect();
    Bootstrap { tins }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::table::BootstrapSpec;
    use shoal_base::Rate;
    use shoal_topology::Dragonfly;

    fn clique(pods: u32, tins: u32, global_links: u32) -> Dragonfly {
        let mut df = Dragonfly::aquila(
            Rate::gbps(25),
            Rate::gbps(25),
            Dur::from_ns(20),
            Dur::from_ns(250),
        );
        df.pods = pods;
        df.tins_per_pod = tins;
        df.global_links = global_links;
        df.global_ports = 8;
        df
    }

    fn sizes() -> Vec<Dragonfly> {
        vec![
            clique(1, 6, 1),
            clique(9, 4, 1),
            clique(17, 2, 1),
            clique(24, 12, 4),
            clique(48, 12, 2),
        ]
    }

    fn run(df: &Dragonfly, t: &Timing) -> (Topology, Plan, Bootstrap) {
        let topo = df.build().unwrap();
        let spec = BootstrapSpec::paper(df);
        let plan = Plan::new(&topo, &spec.dcn_indices(df)).unwrap();
        let b = bootstrap(&plan, t);
        (topo, plan, b)
    }

    fn paper_timing() -> Timing {
        BootstrapSpec::paper(&clique(1, 1, 1)).timing
    }

    #[test]
    fn every_tin_is_bootstrapped_once_after_its_proxy() {
        let t = paper_timing();
        for df in sizes() {
            let (topo, plan, b) = run(&df, &t);
            let n = topo.nodes();
            // Each TiN is a DCN-connected one or the target of exactly one proxy.
            let mut owners = vec![0u32; n];
            for (x, w) in plan.wave.iter().enumerate() {
                owners[x] += u32::from(*w == 0);
            }
            for list in &plan.targets {
                for &x in list {
                    owners[x as usize] += 1;
                }
            }
            assert!(owners.iter().all(|&c| c == 1), "{owners:?}");
            assert_eq!(b.tins.len(), n);
            for (x, tb) in b.tins.iter().enumerate() {
                match tb.proxy {
                    None => {
                        assert_eq!(tb.session, Time::ZERO + t.dcn_dhcp + t.tcp_connect);
                        assert_eq!(tb.done, tb.session + t.tcp_program);
                        assert_eq!(tb.time(), t.dcn_alone());
                    }
                    Some(p) => {
                        let pb = &b.tins[p as usize];
                        assert_eq!(tb.wave, pb.wave + 1, "TiN {x}");
                        assert!(topo.links(p).iter().any(|l| l.peer as usize == x));
                        assert_eq!(tb.reachable, pb.session);
                        assert!(tb.session >= pb.session + t.proxy_busy(), "TiN {x}");
                        assert_eq!(tb.done, tb.session + t.tcp_program_rest);
                        assert!(tb.time() >= t.target_alone());
                    }
                }
            }
            // A proxy serves one target at a time.
            for (p, list) in plan.targets.iter().enumerate() {
                let mut prev = b.tins[p].session;
                for &x in list {
                    let s = b.tins[x as usize].session;
                    assert_eq!(s, prev + t.proxy_busy(), "proxy {p}, target {x}");
                    prev = s;
                }
            }
            let max = b.tins.iter().map(|tb| tb.done).max().unwrap();
            assert_eq!(b.total(), max.since(Time::ZERO));
        }
    }

    #[test]
    fn waves_are_the_hop_distance_from_the_dcn_set() {
        for df in sizes() {
            let (topo, plan, b) = run(&df, &paper_timing());
            let dcn = BootstrapSpec::paper(&df).dcn_indices(&df);
            // The topology's own shortest-path distances, an independent BFS.
            let depth = (0..topo.nodes() as NodeIdx)
                .map(|x| dcn.iter().map(|&d| topo.distance(d, x)).min().unwrap())
                .collect::<Vec<_>>();
            assert_eq!(plan.wave, depth);
            assert_eq!(b.waves(), *depth.iter().max().unwrap());
        }
    }

    /// One pod, one DCN-connected TiN: it serves the others in turn, so the last finishes
    /// after its session, n − 1 proxy turns and the rest of its state.
    #[test]
    fn one_pod_with_one_dcn_tin_is_served_in_turn() {
        let t = paper_timing();
        let df = clique(1, 7, 1);
        let topo = df.build().unwrap();
        let plan = Plan::new(&topo, &[3]).unwrap();
        let b = bootstrap(&plan, &t);
        let dcn = t.dcn_dhcp + t.tcp_connect;
        let expect = dcn.0 + 6 * t.proxy_busy().0 + t.tcp_program_rest.0;
        assert_eq!(b.total(), Dur(expect.max(t.dcn_alone().0)));
        assert_eq!(b.waves(), 1);
        let mut times: Vec<u64> = b.tins.iter().map(|tb| tb.time().0).collect();
        times.sort_unstable();
        // The k-th target waited k − 1 turns.
        for k in 1..7u64 {
            assert_eq!(
                times
                    .iter()
                    .filter(|&&v| v == k * t.proxy_busy().0 + t.tcp_program_rest.0)
                    .count(),
                1
            );
        }
    }

    #[test]
    fn later_steps_never_make_a_tin_earlier() {
        let base = paper_timing();
        let df = clique(9, 4, 1);
        let (_, _, b0) = run(&df, &base);
        let more = Dur::from_us(37_000_000);
        let bumps: [fn(&mut Timing, Dur); 6] = [
            |t, d| t.dcn_dhcp = t.dcn_dhcp + d,
            |t, d| t.tcp_connect = t.tcp_connect + d,
            |t, d| t.tcp_program = t.tcp_program + d,
            |t, d| t.pmos_dhcp = t.pmos_dhcp + d,
            |t, d| t.pmos_program = t.pmos_program + d,
            |t, d| t.tcp_program_rest = t.tcp_program_rest + d,
        ];
        for (i, bump) in bumps.iter().enumerate() {
            let mut t = base;
            bump(&mut t, more);
            let (_, _, b) = run(&df, &t);
            assert!(b.total() > b0.total() || i == 2, "parameter {i}");
            assert!(b.total() >= b0.total(), "parameter {i}");
            for (x, (a, c)) in b0.tins.iter().zip(&b.tins).enumerate() {
                assert!(c.done >= a.done, "parameter {i}, TiN {x}");
            }
        }
    }

    #[test]
    fn a_plan_refuses_what_the_controller_cannot_do() {
        let df = clique(2, 3, 1);
        let topo = df.build().unwrap();
        assert!(Plan::new(&topo, &[]).unwrap_err().contains("no DCN"));
        assert!(
            Plan::new(&topo, &[6])
                .unwrap_err()
                .contains("does not exist")
        );
        assert!(Plan::new(&topo, &[1, 1]).unwrap_err().contains("twice"));
    }

    #[test]
    fn the_same_plan_and_timing_give_the_same_bootstrap() {
        let df = clique(24, 12, 4);
        let (_, _, a) = run(&df, &paper_timing());
        let (_, _, b) = run(&df, &paper_timing());
        assert_eq!(a, b);
    }
}
