//! The §4 reconfiguration protocol driven end to end: the controller killed after every message
//! it sends, the local trigger switched off, and the frames lost per link (§6.5's bound of four).

use shoal_base::{Dur, NodeId};
use shoal_workload::clustered;
use shoal_xfabric::{
    CircuitPlan, Rack, RackSpec, ReconfigParams, ReconfigTiming, controller_messages, demand_of,
    generate_topology, reconfigure,
};

/// Two plans of one rack for two different clustered workloads.
fn plans(socs: usize, d: usize) -> (CircuitPlan, CircuitPlan) {
    let rack = Rack::new(
        RackSpec {
            socs,
            ports_per_soc: d,
            uplinks: 2,
        },
        5,
    )
    .unwrap();
    let plan = |seed| {
        let flows = clustered(socs, 4, 1 << 20, seed).unwrap();
        generate_topology(&rack, &demand_of(&flows, socs).unwrap(), seed).unwrap()
    };
    let (old, new) = (plan(1), plan(2));
    assert!(old.graph().is_connected() && new.graph().is_connected());
    assert_ne!(old.circuits(), new.circuits());
    (old, new)
}

fn run(
    old: &CircuitPlan,
    new: &CircuitPlan,
    kill_after: Option<usize>,
    t: ReconfigTiming,
) -> shoal_xfabric::ReconfigOutcome {
    let params = ReconfigParams {
        timing: t,
        old_version: 41,
        controller_soc: NodeId(3),
        kill_after,
        seed: 9,
    };
    reconfigure(old, new, &params).unwrap()
}

/// Killed after any message, the rack settles on one version with tables matching the circuits:
/// the old one if no reconfigure went out, the new one otherwise.
#[test]
fn a_controller_killed_at_any_message_leaves_one_consistent_configuration() {
    for (socs, d) in [(16, 4), (27, 6)] {
        let (old, new) = plans(socs, d);
        let total = controller_messages(socs, d);
        let first_trigger = d + socs + 1;
        for k in 0..=total {
            let out = run(&old, &new, Some(k), ReconfigTiming::default());
            let want = if k >= first_trigger { 42 } else { 41 };
            assert_eq!(out.controller_sent, k, "n={socs} k={k}");
            assert_eq!(
                out.consistent_version(),
                Some(want),
                "n={socs} k={k}: {out:?}"
            );
        }
        let out = run(&old, &new, None, ReconfigTiming::default());
        assert_eq!(out.controller_sent, total);
        assert_eq!(out.consistent_version(), Some(42));
    }
}

/// Without traffic there is no local trigger: a controller that dies between the first
/// reconfigure and the flood leaves the crosspoints switched (by their broadcast) and the SoCs on
/// stale tables. This is the failure §4's MAC check is there for.
#[test]
fn without_the_local_trigger_a_death_before_the_flood_leaves_stale_tables() {
    let (socs, d) = (16, 4);
    let (old, new) = plans(socs, d);
    let idle = ReconfigTiming {
        first_frame: None,
        ..ReconfigTiming::default()
    };
    for k in d + socs + 1..controller_messages(socs, d) {
        let out = run(&old, &new, Some(k), idle);
        assert_eq!(out.consistent_version(), None, "k={k}");
        assert!(out.crosspoint_versions.iter().all(|&v| v == 42), "k={k}");
        assert!(out.soc_versions.iter().all(|&v| v == 41), "k={k}");
    }
    let out = run(&old, &new, None, idle);
    assert_eq!(out.consistent_version(), Some(42));
    assert_eq!(out.local_triggers, 0);
}

/// §6.5: with a 20 ns switching time and 64 B frames, a full-duplex link loses at most four frames
/// per reconfiguration, at 1 and at 10 Gb/s, whatever the frames' phase.
#[test]
fn at_most_four_frames_lost_per_link() {
    let (old, new) = plans(27, 6);
    for rate in [1_000_000_000, 10_000_000_000] {
        for seed in 0..20 {
            let t = ReconfigTiming {
                line_rate_bps: rate,
                ..ReconfigTiming::default()
            };
            let params = ReconfigParams {
                timing: t,
                seed,
                ..ReconfigParams::default()
            };
            let out = reconfigure(&old, &new, &params).unwrap();
            assert!(out.switched_ports > 0);
            assert!(
                out.max_lost_per_link() <= 4,
                "rate {rate} seed {seed}: {}",
                out.max_lost_per_link()
            );
            let mean = out.mean_lost_per_switched_link().unwrap();
            assert!(mean > 0.0 && mean <= 4.0, "{mean}");
        }
    }
    // A cut longer than a frame loses more: the bound is a property of the 20 ns switch.
    let slow = ReconfigTiming {
        switching: Dur::from_ns(500),
        ..ReconfigTiming::default()
    };
    let out = run(&old, &new, None, slow);
    assert!(out.max_lost_per_link() > 4);
}

/// With the controller alive, every SoC is on the new tables within §6.5's 11 ms of the first
/// crosspoint switching, and a run is a pure function of its inputs.
#[test]
fn a_full_reconfiguration_is_fast_and_deterministic() {
    let (old, new) = plans(27, 6);
    let out = run(&old, &new, None, ReconfigTiming::default());
    let first = out.first_switch.unwrap();
    let last = out.soc_switch.iter().map(|t| t.unwrap()).max().unwrap();
    eprintln!(
        "27 SoCs: every SoC on the new tables {} after the first switch; {} local triggers, {} \
         flood messages, {} switched ports losing {:.2} frames each on average (max {})",
        last.since(first),
        out.local_triggers,
        out.flood_messages,
        out.switched_ports,
        out.mean_lost_per_switched_link().unwrap(),
        out.max_lost_per_link()
    );
    assert!(
        last.since(first) <= Dur::from_us(11_000),
        "{}",
        last.since(first)
    );
    assert_eq!(out, run(&old, &new, None, ReconfigTiming::default()));
}
