//! R2C2 on a 4×4×2 torus: the rate computation against the max-min water-filling reference
//! (`shoal_metrics::maxmin::MaxMin`), dimension-order against multipath routing on a case worked
//! out by hand, measured throughput against the reference, a short flow that completes, and
//! slow-paced flows that must not time out.

mod common;

use common::{flow, run_window};
use rand::RngExt;
use shoal_base::{Dur, Rate, Time};
use shoal_fabric::RunOutput;
use shoal_metrics::maxmin::MaxMin;
use shoal_psn::r2c2::{RateController, Route, Routing, max_min};
use shoal_psn::{NetConfig, PacketFabric, PathChoice};
use shoal_topology::{Topology, Torus};
use shoal_transport::{R2c2, R2c2Config};
use shoal_workload::{Flow, IterSource};
use std::collections::BTreeMap;

/// Shoal §7.3: 100 Gb/s per node over six links.
const LINK: Rate = Rate(100_000_000_000 / 6);

fn torus() -> Topology {
    Torus {
        x: 4,
        y: 4,
        z: 2,
        rate: LINK,
        link_delay: Dur::from_ns(100),
    }
    .build()
    .expect("valid")
}

/// Host (x, y, z) of the 4×4×2 torus.
fn at(x: u32, y: u32, z: u32) -> u32 {
    x + 4 * (y + 4 * z)
}

/// Long flows whose dimension-order routes overlap (0→1→2 is shared by the first two, ...).
fn pairs() -> Vec<(u32, u32)> {
    vec![
        (at(0, 0, 0), at(2, 0, 0)),
        (at(1, 0, 0), at(3, 0, 0)),
        (at(0, 0, 0), at(1, 1, 0)),
        (at(0, 1, 0), at(1, 0, 0)),
        (at(0, 0, 1), at(2, 0, 0)),
        (at(3, 0, 0), at(0, 0, 0)),
        (at(1, 3, 1), at(1, 1, 0)),
    ]
}

fn routes(topo: &Topology, routing: Routing) -> (RateController, Vec<Route>) {
    let ctl = RateController::new(topo, routing);
    let routes = pairs()
        .into_iter()
        .map(|(s, d)| ctl.route(topo, s, d))
        .collect();
    (ctl, routes)
}

/// The water-filling reference for single-path routes.
fn reference(capacity: &[f64], routes: &[Route]) -> Vec<f64> {
    let mut m = MaxMin::new();
    for &c in capacity {
        m.add_link(c);
    }
    for r in routes {
        assert!(r.iter().all(|&(_, f)| f == 1.0), "single path");
        let links: Vec<usize> = r.iter().map(|&(l, _)| l as usize).collect();
        m.add_entity(&links);
    }
    m.solve().expect("solvable")
}

/// Max-min optimality, independent of how the rates were found: no link is over capacity, and
/// every flow crosses a saturated link on which no flow has a higher rate.
fn assert_max_min(capacity: &[f64], routes: &[Route], rates: &[f64]) {
    let mut load = vec![0.0; capacity.len()];
    for (r, &x) in routes.iter().zip(rates) {
        for &(l, f) in r {
            load[l as usize] += f * x;
        }
    }
    for (l, (&u, &c)) in load.iter().zip(capacity).enumerate() {
        assert!(u <= c * (1.0 + 1e-9), "link {l} over capacity: {u} > {c}");
    }
    for (i, r) in routes.iter().enumerate() {
        let bottleneck = r.iter().any(|&(l, _)| {
            load[l as usize] >= capacity[l as usize] * (1.0 - 1e-9)
                && routes
                    .iter()
                    .zip(rates)
                    .filter(|(o, _)| o.iter().any(|&(m, _)| m == l))
                    .all(|(_, &x)| x <= rates[i] * (1.0 + 1e-9))
        });
        assert!(bottleneck, "flow {i} at {} has no bottleneck", rates[i]);
    }
}

#[test]
fn computed_rates_equal_the_water_filling_reference() {
    let topo = torus();
    let (ctl, routes) = routes(&topo, Routing::DimensionOrder);
    let refs: Vec<&[(u32, f64)]> = routes.iter().map(|r| r.as_slice()).collect();
    let ours = max_min(ctl.capacity(), &refs);
    let oracle = reference(ctl.capacity(), &routes);
    for (i, (a, b)) in ours.iter().zip(&oracle).enumerate() {
        assert!((a - b).abs() <= 1e-9 * b, "flow {i}: {a} vs reference {b}");
    }
    assert_max_min(ctl.capacity(), &routes, &ours);
    // Multipath has per-link fractions, outside `MaxMin`'s model: check optimality directly.
    let (ctl, routes) = self::routes(&topo, Routing::Multipath);
    let refs: Vec<&[(u32, f64)]> = routes.iter().map(|r| r.as_slice()).collect();
    let rates = max_min(ctl.capacity(), &refs);
    assert_max_min(ctl.capacity(), &routes, &rates);
    for r in &routes {
        // Every flow leaves its source whole and arrives whole.
        let out: f64 = r.iter().map(|&(_, f)| f).sum();
        assert!(out >= 1.0 - 1e-12);
    }
}

#[test]
fn dimension_order_and_multipath_differ_as_worked_out_by_hand() {
    // A: (0,0,0) → (1,1,0); B: (0,0,0) → (1,0,0). Dimension order sends A over +x first, onto
    // B's only link: C/2 each. Multipath sends half of A over +y, so that link carries
    // a/2 + b = C at a = b = 2C/3.
    let topo = torus();
    let c = LINK.0 as f64;
    for (routing, want) in [
        (Routing::DimensionOrder, c / 2.0),
        (Routing::Multipath, 2.0 * c / 3.0),
    ] {
        let mut ctl = RateController::new(&topo, routing);
        ctl.insert(0, ctl.route(&topo, at(0, 0, 0), at(1, 1, 0)));
        ctl.insert(1, ctl.route(&topo, at(0, 0, 0), at(1, 0, 0)));
        for (f, rate) in ctl.solve() {
            assert!(
                (rate - want).abs() <= 1e-9 * want,
                "{routing:?} flow {f}: {rate}"
            );
        }
    }
}

/// Runs `flows` to `end_us`, measuring from `warm_us`; returns each flow's wire rate (payload
/// plus headers, b/s) over the window, and the run.
fn run(path: PathChoice, flows: Vec<Flow>, warm_us: u64, end_us: u64) -> (Vec<f64>, RunOutput) {
    let net = NetConfig {
        path,
        ..NetConfig::ecn(100, 100)
    };
    let cfg = R2c2Config::paper();
    assert_eq!(net.header_bytes, cfg.header_bytes);
    let mut fabric = PacketFabric::new(torus(), net, R2c2(cfg)).expect("valid");
    let mut source = IterSource::new(flows);
    let (warm, end) = (Time(warm_us * 1_000_000), Time(end_us * 1_000_000));
    let (out, gbps) = run_window(&mut fabric, &mut source, (warm, end), None);
    let mtu = (cfg.mss + cfg.header_bytes) as f64 / cfg.mss as f64;
    (gbps.iter().map(|g| g * mtu * 1e9).collect(), out)
}

#[test]
fn measured_throughput_matches_the_reference() {
    let topo = torus();
    for (path, routing) in [
        (PathChoice::Ecmp, Routing::DimensionOrder),
        (PathChoice::Spray, Routing::Multipath),
    ] {
        let (ctl, routes) = routes(&topo, routing);
        let refs: Vec<&[(u32, f64)]> = routes.iter().map(|r| r.as_slice()).collect();
        let want = max_min(ctl.capacity(), &refs);
        let big = 1 << 34;
        let mut flows: Vec<Flow> = pairs()
            .into_iter()
            .enumerate()
            .map(|(i, (s, d))| flow(i as u64, s, d, big, Time(i as u64 * 1_000_000)))
            .collect();
        // A 100 KB flow on a shared link finishes early: its finish must release its share.
        flows.push(flow(
            99,
            at(0, 0, 0),
            at(1, 0, 0),
            100_000,
            Time(10_000_000),
        ));
        let (got, out) = run(path, flows, 300, 1_000);
        assert!(
            out.records[7].finish.is_some(),
            "{path:?}: the 100 KB flow finished"
        );
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            let ratio = g / w;
            println!(
                "{path:?} flow {i}: {:.3} Gb/s, reference {:.3} Gb/s",
                g / 1e9,
                w / 1e9
            );
            assert!((ratio - 1.0).abs() < 0.05, "{path:?} flow {i}: {g} vs {w}");
        }
        assert_eq!(out.counters["packets_dropped"], 0);
        assert_eq!(out.counters["retransmission_timeouts"], 0);
    }
}

#[test]
fn a_short_flow_completes() {
    let big = 1 << 34;
    let flows = vec![
        flow(0, at(0, 0, 0), at(2, 0, 0), big, Time::ZERO),
        flow(1, at(1, 0, 0), at(3, 0, 0), big, Time::ZERO),
        flow(2, at(0, 0, 0), at(2, 0, 0), 20_000, Time(5_000_000)),
    ];
    let (_, out) = run(PathChoice::Ecmp, flows, 0, 200);
    let rec = out.records[2];
    let fct = rec.finish.expect("the short flow completes") - rec.start;
    // 20 KB (21 wire packets) at 98% of a third of 100/6 Gb/s takes 32 µs (all three cross
    // 1→2): anything within 2 × that plus the broadcast is sane.
    println!("short flow FCT {fct}");
    assert!(fct < Dur::from_us(70), "FCT {fct}");
}

#[test]
fn batched_computations_never_lag_an_event_by_more_than_one_interval() {
    // Every event applied in (k·I, (k+1)·I] is computed at (k+1)·I, never at its own instant
    // and never later than I after it, whatever the interval.
    for interval in [Dur(1), Dur(7), Dur::from_ns(1_572), Dur::from_us(3)] {
        let mut last = Time::ZERO;
        for now in (0..2_000u64).map(|i| Time(i * 1_237 + i * i % 5)) {
            let at = shoal_psn::r2c2::next_solve(now, interval);
            assert!(
                now < at && at <= now + interval,
                "{now} -> {at} ({interval})"
            );
            assert_eq!(at.0 % interval.0, 0, "off the grid");
            assert!(at >= last, "grid points go backwards");
            last = at;
        }
    }
}

#[test]
fn kept_lists_give_max_min_bit_for_bit() {
    // Random starts and finishes (ids increasing, as the simulator's records), a computation
    // after some of them: each must be bit for bit `max_min` over the flows present in id order,
    // the computation from scratch the controller made before it kept its lists.
    let topo = torus();
    let hosts = topo.hosts() as u32;
    for routing in [Routing::DimensionOrder, Routing::Multipath] {
        for seed in 0..10 {
            let mut rng = shoal_base::rng::stream(seed, "test.r2c2.kept", 0);
            let mut ctl = RateController::new(&topo, routing);
            let mut present: BTreeMap<u32, Route> = BTreeMap::new();
            for id in 0..400u32 {
                let (s, d) = (rng.random_range(0..hosts), rng.random_range(0..hosts));
                if s != d {
                    let route = ctl.route(&topo, s, d);
                    ctl.insert(id, route.clone());
                    present.insert(id, route);
                }
                if rng.random_bool(0.45) && !present.is_empty() {
                    let gone = *present
                        .keys()
                        .nth(rng.random_range(0..present.len()))
                        .expect("present");
                    assert!(ctl.remove(gone));
                    present.remove(&gone);
                }
                if rng.random_bool(0.2) || id == 399 {
                    let routes: Vec<&[(u32, f64)]> = present.values().map(Vec::as_slice).collect();
                    let want = max_min(ctl.capacity(), &routes);
                    let got = ctl.solve();
                    assert_eq!(got.len(), want.len(), "{routing:?} seed {seed}");
                    for (&(f, g), (&pf, w)) in got.iter().zip(present.keys().zip(&want)) {
                        assert_eq!(f, pf, "{routing:?} seed {seed}");
                        assert_eq!(g.to_bits(), w.to_bits(), "{routing:?} flow {f}: {g} vs {w}");
                    }
                }
            }
        }
    }
}

/// The single-link max-min share of a newcomer loading link `l` with `own`, every other flow
/// held at its rate, by bisection on the link's load (an independent reference).
fn share_by_bisection(capacity: f64, on: &[(f64, f64)], own: f64) -> f64 {
    let load = |x: f64| own * x + on.iter().map(|&(c, r)| c * r.min(x)).sum::<f64>();
    let (mut lo, mut hi) = (0.0, capacity / own);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if load(mid) <= capacity {
            lo = mid
        } else {
            hi = mid
        }
    }
    lo
}

#[test]
fn a_new_flow_starts_at_its_least_single_link_share() {
    let topo = torus();
    for routing in [Routing::DimensionOrder, Routing::Multipath] {
        let (mut ctl, routes) = routes(&topo, routing);
        for (i, r) in routes.iter().enumerate() {
            ctl.insert(i as u32, r.clone());
        }
        let rates: Vec<f64> = ctl.solve().iter().map(|&(_, x)| x).collect();
        for (s, d) in [
            (at(0, 0, 0), at(3, 1, 0)),
            (at(1, 0, 0), at(2, 0, 0)),
            (at(2, 3, 1), at(0, 0, 0)),
        ] {
            let route = ctl.route(&topo, s, d);
            let want = route
                .iter()
                .map(|&(l, own)| {
                    let on: Vec<(f64, f64)> = routes
                        .iter()
                        .zip(&rates)
                        .filter_map(|(r, &x)| {
                            r.iter().find(|&&(m, _)| m == l).map(|&(_, c)| (c, x))
                        })
                        .collect();
                    share_by_bisection(ctl.capacity()[l as usize], &on, own)
                })
                .fold(f64::INFINITY, f64::min);
            let got = ctl.start_rate(&route);
            assert!(
                (got - want).abs() <= 1e-9 * want,
                "{routing:?} {s}->{d}: {got} vs {want}"
            );
        }
    }
    // Flows sharing one path and nothing else: the newcomer's share is the exact max-min
    // rate, C / (n + 1).
    let mut ctl = RateController::new(&topo, Routing::DimensionOrder);
    let route = ctl.route(&topo, at(0, 0, 0), at(2, 1, 0));
    for i in 0..4 {
        ctl.insert(i, route.clone());
    }
    ctl.solve();
    let c = LINK.0 as f64;
    assert!((ctl.start_rate(&route) - c / 5.0).abs() <= 1e-9 * c);
}

#[test]
fn flows_paced_at_a_few_mbps_see_no_spurious_timeout() {
    // 600 flows over one 16.7 Gb/s link get 28 Mb/s each: the 8 packets one ack covers take
    // 2.4 ms to send, longer than the 1 ms timeout, as in an overloaded torus. Nothing is lost,
    // so the timer must never fire, and the link stays full.
    let flows: Vec<Flow> = (0..600)
        .map(|i| flow(i, at(0, 0, 0), at(1, 0, 0), 1 << 30, Time(i * 1_000)))
        .collect();
    let (got, out) = run(PathChoice::Ecmp, flows, 1_000, 4_000);
    assert_eq!(out.counters["packets_dropped"], 0);
    assert_eq!(out.counters["retransmission_timeouts"], 0);
    let total: f64 = got.iter().sum();
    assert!(
        total > 0.9 * LINK.0 as f64,
        "the link carries {:.2} Gb/s",
        total / 1e9
    );
}
