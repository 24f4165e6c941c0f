//! A clique under synthetic load losing links mid-run (§3.2): adaptive routing avoids a failed
//! link at once, the SDN removes it from the tables after the controller's delay
//! (`control/sim_failure.rs` holds the simulator's side). The run drains, so every cell
//! injected is accounted for: delivered, or lost with a failed link.

#[cfg(test)]
use crate::routing::Candidates;
use crate::sim::{Counters, Pattern, Sim, Source};
use crate::spec::Spec;
use shoal_base::{Dur, Time};

/// A link to fail: network port `port` of TiN `tin`, at `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkFailure {
    pub at: Time,
    pub tin: u32,
    pub port: u32,
}

/// The data cells delivered in one phase of the run and their mean latency (injection to
/// ejection).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Phase {
    pub cells: u64,
    pub mean_latency: Dur,
}

/// How a run with failures ended.
#[derive(Clone, Debug)]
pub struct FailureRun {
    pub counters: Counters,
    /// Every FIFO empty and every credit of a working link back where it started.
    pub at_rest: bool,
    /// Cells injected and neither delivered nor dropped.
    pub in_flight: u64,
    /// Before the first failure; from it to the SDN's last removal; after that.
    pub phases: [Phase; 3],
    pub end: Time,
}

/// What happens at a stop of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Action {
    Fail,
    Remove,
}

/// Every host sends `packets` packets of `pattern` as fast as it can (raw cells: the
/// fabric alone) while the links of `failures` fail, each removed from the tables
/// `sdn_delay` after it failed; the clique then runs until no event is left.
pub fn fail_links(
    spec: &Spec,
    pattern: Pattern,
    packets: u64,
    failures: &[LinkFailure],
    sdn_delay: Dur,
) -> Result<FailureRun, String> {
    run(spec, pattern, packets, failures, sdn_delay, true)
}

/// The same run with no link failing, its phases cut at the same times: the reference the
/// latencies of [`fail_links`] compare with.
pub fn without_failures(
    spec: &Spec,
    pattern: Pattern,
    packets: u64,
    failures: &[LinkFailure],
    sdn_delay: Dur,
) -> Result<FailureRun, String> {
    run(spec, pattern, packets, failures, sdn_delay, false)
}

fn run(
    spec: &Spec,
    pattern: Pattern,
    packets: u64,
    failures: &[LinkFailure],
    sdn_delay: Dur,
    apply: bool,
) -> Result<FailureRun, String> {
    if failures.is_empty() {
        return Err("no link to fail".into());
    }
    let mut sim = Sim::new(spec, Time::ZERO)?;
    let source = Source::Saturate {
        pattern,
        packets: Some(packets),
    };
    let mut actions: Vec<(Time, Action, u32, u32)> = failures
        .iter()
        .flat_map(|f| {
            [
                (f.at, Action::Fail, f.tin, f.port),
                (f.at + sdn_delay, Action::Remove, f.tin, f.port),
            ]
        })
        .collect();
    actions.sort();
    for &(at, ..) in &actions {
        sim.calendar().stop_at(at);
    }
    let first_fail = actions[0].0;
    let last_removal = actions[actions.len() - 1].0;
    sim.start_saturation(&source);
    let mut next = 0;
    let mut marks = Vec::new();
    let mut end = Time::ZERO;
    while let Some((now, stop)) = sim.step(Some(&source)) {
        end = now;
        if !stop {
            continue;
        }
        let (_, action, tin, port) = actions[next];
        next += 1;
        if now == first_fail && marks.is_empty() {
            marks.push(snapshot(&sim.counters));
        }
        match action {
            _ if !apply => {}
            Action::Fail => sim.fail_link(now, tin, port)?,
            Action::Remove => sim.remove_route(now, tin, port)?,
        }
        if next == actions.len() {
            debug_assert_eq!(now, last_removal);
            marks.push(snapshot(&sim.counters));
        }
    }
    marks.push(snapshot(&sim.counters));
    let phase = |a: (u64, u128), b: (u64, u128)| {
        let cells = b.0 - a.0;
        Phase {
            cells,
            mean_latency: Dur((b.1 - a.1).checked_div(u128::from(cells)).unwrap_or(0) as u64),
        }
    };
    Ok(FailureRun {
        phases: [
            phase((0, 0), marks[0]),
            phase(marks[0], marks[1]),
            phase(marks[1], marks[2]),
        ],
        counters: sim.counters.clone(),
        at_rest: sim.at_rest(),
        in_flight: sim.cells_in_flight(),
        end,
    })
}

/// The most cells `links` failed links can hold when they fail, so lose: per link, the output
/// queues of every VC at both ends and both directions' wires, counting every cell as the
/// smallest (two words, 16 B).
pub fn held_at_most(spec: &Spec, links: usize) -> u64 {
    let df = &spec.dragonfly;
    let queues = 2 * crate::wire::VCS as u64 * u64::from(spec.output_vc_words) / 2;
    let ser = df.local_rate.min(df.global_rate).serialize(16);
    let delay = df.local_delay.max(df.global_delay);
    let wires = 2 * (delay.0 / ser.0 + 1);
    links as u64 * (queues + wires)
}

/// Data cells delivered so far and the sum of their latencies.
fn snapshot(c: &Counters) -> (u64, u128) {
    (c.cells_delivered, c.cell_latency_sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdg::Cdg;
    use crate::routing::{LevelRule, Mode, Router};
    use crate::spec::Injection;
    use shoal_base::Rate;
    use shoal_topology::{Dragonfly, DragonflyPort};

    /// 9 pods of 4 TiNs, two links between any two TiNs of a pod and between any two pods
    /// (so one may fail), hosts sending raw cells at 25 Gb/s.
    fn small(mode: Mode) -> Spec {
        let full = Spec::aquila();
        Spec {
            dragonfly: Dragonfly {
                pods: 9,
                tins_per_pod: 4,
                local_links: 2,
                global_links: 2,
                local_ports: 6,
                global_ports: 4,
                ..full.dragonfly.clone()
            },
            host_rate: Rate::gbps(25),
            injection: Injection::RawCells,
            mode,
            ..full
        }
    }

    /// A global link of TiN 0 and a local link inside pod 1, both at 8 µs.
    fn failures(spec: &Spec) -> Vec<LinkFailure> {
        let df = &spec.dragonfly;
        let global = df.local_port_count();
        assert!(matches!(
            df.port_kind(0, global),
            DragonflyPort::Global { .. }
        ));
        assert!(matches!(df.port_kind(5, 0), DragonflyPort::Local { .. }));
        let at = Time::ZERO + Dur::from_us(8);
        vec![
            LinkFailure {
                at,
                tin: 0,
                port: global,
            },
            LinkFailure {
                at,
                tin: 5,
                port: 0,
            },
        ]
    }

    /// Whatever the mode, every cell is delivered but those the failed links held; adaptive
    /// routing (the paper's default) loses some, so the links were loaded when they failed.
    #[test]
    fn only_the_cells_on_a_failed_link_are_lost() {
        for mode in [
            Mode::FullyAdaptive,
            Mode::MinimalAdaptive,
            Mode::Deterministic,
        ] {
            let spec = small(mode);
            let fails = failures(&spec);
            let run =
                fail_links(&spec, Pattern::UniformRandom, 12, &fails, Dur::from_us(8)).unwrap();
            let c = &run.counters;
            assert_eq!(c.credit_overflows, 0, "{mode:?}");
            assert_eq!(c.hop_limit_drops, 0, "{mode:?}");
            assert_eq!(
                run.in_flight, 0,
                "{mode:?}: a cell neither delivered nor lost"
            );
            assert_eq!(
                c.cells_injected,
                c.cells_delivered + c.link_failure_drops,
                "{mode:?}"
            );
            assert!(run.at_rest, "{mode:?}: every working link's credits home");
            assert!(
                c.link_failure_drops <= held_at_most(&spec, fails.len()),
                "{mode:?}"
            );
            if mode == Mode::FullyAdaptive {
                assert!(c.link_failure_drops > 0, "the links were loaded");
            }
            assert!(
                run.phases.iter().all(|p| p.cells > 0),
                "{mode:?}: {:?}",
                run.phases
            );
        }
    }

    /// Up to the failure the run is the reference's, event for event.
    #[test]
    fn before_the_failure_the_run_is_the_reference() {
        let spec = small(Mode::FullyAdaptive);
        let fails = failures(&spec);
        let delay = Dur::from_us(8);
        let with = fail_links(&spec, Pattern::UniformRandom, 12, &fails, delay).unwrap();
        let without = without_failures(&spec, Pattern::UniformRandom, 12, &fails, delay).unwrap();
        assert_eq!(with.phases[0], without.phases[0]);
        assert_eq!(without.counters.link_failure_drops, 0);
        assert_eq!(
            without.counters.cells_delivered,
            without.counters.cells_injected
        );
    }

    #[test]
    fn the_same_failures_give_the_same_run() {
        let spec = small(Mode::FullyAdaptive);
        let fails = failures(&spec);
        let a = fail_links(&spec, Pattern::UniformRandom, 6, &fails, Dur::from_us(4)).unwrap();
        let b = fail_links(&spec, Pattern::UniformRandom, 6, &fails, Dur::from_us(4)).unwrap();
        assert_eq!(a.counters, b.counters);
        assert_eq!(a.phases, b.phases);
    }

    /// The SDN's tables without the failed links stay deadlock-free in every mode.
    #[test]
    fn the_tables_without_the_failed_links_are_acyclic() {
        let spec = small(Mode::FullyAdaptive);
        let df = &spec.dragonfly;
        let topo = df.build().unwrap();
        let mut r = Router::new(df, &topo, LevelRule::AfterEveryGlobal);
        for f in failures(&spec) {
            r.remove_link(f.tin, f.port).unwrap();
            assert!(r.is_removed(f.tin, f.port));
            let (y, py, _) = r.far_end(f.tin, f.port);
            assert!(r.is_removed(y, py));
        }
        for mode in Mode::ALL {
            let g = Cdg::build(&r, mode);
            assert!(g.find_cycle().is_none(), "{mode:?}");
        }
        // No candidate is on a removed port.
        let mut c = Candidates::default();
        for x in 0..df.tins() {
            for d in 0..df.tins() {
                r.candidates(x, crate::routing::InKind::Endpoint, 0, d, true, &mut c);
                assert!(!c.minimal.is_empty(), "{x} -> {d}");
                for h in c.minimal.iter().chain(&c.non_minimal) {
                    assert!(h.port.is_none_or(|p| !r.is_removed(x, p)), "{x} -> {d}");
                }
            }
        }
    }

    /// The last link between two TiNs or two pods is removed now; only a removal that would
    /// cut a TiN off is refused, and a bad port.
    #[test]
    fn only_a_removal_that_cuts_a_tin_off_is_refused() {
        let spec = small(Mode::FullyAdaptive);
        let df = &spec.dragonfly;
        let topo = df.build().unwrap();
        let mut r = Router::new(df, &topo, LevelRule::AfterEveryGlobal);
        r.remove_link(5, 0).unwrap();
        r.remove_link(5, 1).unwrap();
        assert!(r.remove_link(5, 0).unwrap_err().contains("already"));
        assert!(
            r.remove_link(5, 99)
                .unwrap_err()
                .contains("no network port")
        );
        for (t, p) in (0..df.global_links).map(|k| df.global_port(0, 1, k)) {
            r.remove_link(t, p).unwrap();
        }
        // Every link of TiN 7 but its last goes; the last would cut it off.
        let ports = topo.ports(7) as u32;
        for p in 0..ports - 1 {
            r.remove_link(7, p).unwrap();
        }
        let e = r.remove_link(7, ports - 1).unwrap_err();
        assert!(e.contains("no working path between TiN 0 and TiN 7"), "{e}");
        assert!(
            !r.is_removed(7, ports - 1),
            "a refused removal leaves the tables"
        );
        let e = fail_links(&spec, Pattern::UniformRandom, 1, &[], Dur::from_us(1)).unwrap_err();
        assert!(e.contains("no link"));
        let bad = [LinkFailure {
            at: Time::ZERO,
            tin: 99,
            port: 0,
        }];
        let e = fail_links(&spec, Pattern::UniformRandom, 1, &bad, Dur::from_us(1)).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
    }

    /// Both links between TiNs 5 and 4 and both between pods 0 and 1, at 8 µs: the last ones.
    fn last_links(spec: &Spec) -> Vec<LinkFailure> {
        let df = &spec.dragonfly;
        let at = Time::ZERO + Dur::from_us(8);
        let local = (0..df.local_links).map(|k| (5, df.local_port(5, 0, k)));
        let global = (0..df.global_links).map(|k| {
            let (t, p) = df.global_port(0, 1, k);
            (t, p)
        });
        local
            .chain(global)
            .map(|(tin, port)| LinkFailure { at, tin, port })
            .collect()
    }

    /// With the last links gone, cells the tables can no longer route on their class's VCs
    /// take the escape VCs: every cell is still delivered but those the failed links held,
    /// in every mode, with no hop over the limit the new tables call for.
    #[test]
    fn after_the_last_links_fail_cells_escape_and_arrive() {
        for mode in Mode::ALL {
            let mut spec = small(mode);
            let fails = last_links(&spec);
            let topo = spec.dragonfly.build().unwrap();
            let mut r = Router::new(&spec.dragonfly, &topo, LevelRule::AfterEveryGlobal);
            let mut longest = 0;
            for f in &fails {
                r.remove_link(f.tin, f.port).unwrap();
                longest = longest.max(r.longest_route());
            }
            spec.hop_limit = longest as u8;
            let run =
                fail_links(&spec, Pattern::UniformRandom, 12, &fails, Dur::from_us(8)).unwrap();
            let c = &run.counters;
            assert_eq!(c.credit_overflows, 0, "{mode:?}");
            assert_eq!(c.hop_limit_drops, 0, "{mode:?}");
            assert_eq!(run.in_flight, 0, "{mode:?}");
            assert_eq!(
                c.cells_injected,
                c.cells_delivered + c.link_failure_drops + c.stranded_drops,
                "{mode:?}"
            );
            // No cell was on the escape VCs before the removals: none is stranded.
            assert_eq!(c.stranded_drops, 0, "{mode:?}");
            assert!(run.at_rest, "{mode:?}");
            assert!(
                c.link_failure_drops <= held_at_most(&spec, fails.len()),
                "{mode:?}"
            );
            // Minimal modes have no other way from pod 0 to pod 1, or from TiN 5 to TiN 4.
            if !mode.non_minimal() {
                assert!(c.escaped_cells > 0, "{mode:?}");
            }
            assert!(run.phases[2].cells > 0, "{mode:?}");
        }
    }

    /// The hop limit must cover the longest route of the new tables.
    #[test]
    fn a_hop_limit_below_the_new_routes_is_refused() {
        let spec = small(Mode::MinimalAdaptive);
        let e = fail_links(
            &spec,
            Pattern::UniformRandom,
            1,
            &last_links(&spec),
            Dur::from_us(1),
        )
        .unwrap_err();
        assert!(e.contains("hop limit of 6 is below"), "{e}");
    }

    /// A cell on VC 31 may have no route left after a later removal (the ranks or its down
    /// route changed): the tables then give it no candidate, and the simulator drops it.
    #[test]
    fn a_later_removal_can_strand_a_cell_on_the_escape_vcs() {
        let df = Dragonfly {
            pods: 5,
            tins_per_pod: 4,
            local_links: 1,
            global_links: 1,
            local_ports: 3,
            global_ports: 1,
            ..Spec::aquila().dragonfly
        };
        let topo = df.build().unwrap();
        let mut first = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
        first.remove_link(5, 0).unwrap();
        let mut c = Candidates::default();
        let down = crate::routing::ESCAPE_DOWN;
        let routed: Vec<(u32, u32)> = (0..df.tins())
            .flat_map(|x| (0..df.tins()).map(move |d| (x, d)))
            .filter(|&(x, d)| {
                x != d && {
                    first.candidates(x, crate::routing::InKind::Local, down, d, false, &mut c);
                    !c.minimal.is_empty()
                }
            })
            .collect();
        let mut stranded = 0;
        for (x, p) in (0..df.tins()).flat_map(|x| (0..topo.ports(x) as u32).map(move |p| (x, p))) {
            let mut second = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
            second.remove_link(5, 0).unwrap();
            if first.is_removed(x, p) || second.remove_link(x, p).is_err() {
                continue;
            }
            stranded += routed
                .iter()
                .filter(|&&(y, d)| {
                    second.candidates(y, crate::routing::InKind::Local, down, d, false, &mut c);
                    c.minimal.is_empty() && c.non_minimal.is_empty()
                })
                .count();
        }
        assert!(stranded > 0);
    }
}
