//! Failures in a running two-tier fabric (§5.9, Appendix E): a link or an element fails under
//! load; the devices learn it from their reachability messages only (the failed part falls
//! silent), reroute within the time Appendix E's model predicts, lose no cell but those on
//! the failed link or in the failed element (each given up once by the destination's
//! reassembly), and carry the load on what is left, FCI slowing the credits where the
//! capacity towards an adapter shrank.

mod common;

use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_stardust::config::{AdapterConfig, IngressFull};
use shoal_stardust::models::Reachability as Model;
use shoal_stardust::reachability::ReachConfig;
use shoal_stardust::{Failure, Network, Stardust};
use shoal_topology::CellClos;
use shoal_workload::{Flow, IterSource};

const FAS: u32 = 8;
const LINK_DELAY_NS: u64 = 500;
/// A reachability message every microsecond (ten times Table 4's rate, to keep the test
/// short), 4 adapters per message (M = 2), three to agree (§5.9).
const REACH: ReachConfig = ReachConfig {
    interval: Dur::from_us(1),
    bitmap: 4,
    confirm: 3,
    error_window: 64,
    error_limit: 4,
};

/// Two pods of 4 adapters, 4 first-tier elements per pod, 4 second-tier elements: every
/// adapter has 4 links of 50 Gb/s (187.5 Gb/s of cell payload) and one port.
fn network(port_gbps: u64) -> Network {
    let topo = CellClos {
        fas: FAS,
        fas_per_pod: 4,
        fe1_per_pod: 4,
        parallel: 1,
        fe2: 4,
        rate: Rate::gbps(50),
        link_delay: Dur::from_ns(LINK_DELAY_NS),
    }
    .build()
    .unwrap();
    let a = AdapterConfig {
        fas: FAS,
        port_rate: Rate::gbps(port_gbps),
        ingress_buffer_bytes: 32 << 20,
        ingress_full: IngressFull::Pause,
        ..common::adapter_config()
    };
    let p = common::net_params(3, REACH);
    Network::new(topo, a, p)
}

const FAIL_AT: Time = Time(100_000_000);
const MEASURE_FROM: Time = Time(250_000_000);
const UNTIL: Time = Time(450_000_000);

/// Every adapter sends to the one in the same place of the other pod, without end.
fn run(failure: Option<Failure>, port_gbps: u64) -> RunOutput {
    let flows: Vec<Flow> = (0..FAS as u16)
        .map(|s| Flow {
            id: s as u64,
            src: NodeId(s),
            dst: NodeId((s + 4) % FAS as u16),
            bytes: 1 << 40,
            start: Time::ZERO,
            class: 0,
        })
        .collect();
    let mut fabric = Stardust::new(network(port_gbps));
    if let Some(f) = failure {
        fabric.fail(FAIL_AT, f).unwrap();
    }
    let limits = RunLimits {
        until: Some(UNTIL),
        measure_from: Some(MEASURE_FROM),
        ..RunLimits::default()
    };
    fabric
        .run(&mut IterSource::new(flows), limits, &mut NoProgress)
        .unwrap()
}

/// Appendix E for this network: 2n − 1 = 3 hops of (t + pd) · M · th, plus our local
/// detection (th intervals of silence and half an interval).
fn predicted_ps() -> u64 {
    let model = Model {
        f: 1e9,
        c: 1000.0,
        bytes: 64.0,
        b: REACH.bitmap as f64,
        h: 1.0,
        hosts: FAS as f64,
        n: 2,
        th: REACH.confirm as f64,
        pd: vec![LINK_DELAY_NS as f64 * 1e-9; 3],
        s: 50e9,
    };
    (model.recovery() * 1e12) as u64 + REACH.timeout().0
}

fn c(out: &RunOutput, k: &str) -> u64 {
    out.counters[k]
}

/// Runs with and without `failure`; checks what every failure must do.
fn check(failure: Failure, port_gbps: u64) -> (RunOutput, RunOutput) {
    let base = run(None, port_gbps);
    let out = run(Some(failure), port_gbps);
    assert_eq!(
        c(&base, "reach_table_updates"),
        0,
        "nothing changes without a failure"
    );
    assert_eq!(c(&base, "failure_data_lost"), 0);
    // Rerouted within the model's time, and nothing sent into the failed link after its ends
    // found it silent.
    let rerouted = c(&out, "failure_rerouted_ps");
    assert!(rerouted > 0, "{failure:?}: no table changed");
    assert!(
        rerouted <= predicted_ps(),
        "{failure:?}: rerouted after {rerouted} ps, Appendix E {} ps",
        predicted_ps()
    );
    assert!(c(&out, "failure_last_use_ps") <= REACH.timeout().0 + 100_000);
    // Lost: only cells on the failed link or in the failed element, each given up once by its
    // destination.
    let lost = c(&out, "failure_data_lost");
    assert!(lost > 0, "{failure:?}: a loaded link carried cells");
    assert_eq!(c(&out, "lost_cells"), lost, "{failure:?}");
    for k in [
        "fe_drops",
        "late_cells",
        "unroutable_cells",
        "ingress_drops",
    ] {
        assert_eq!(c(&out, k), 0, "{failure:?}: {k}");
    }
    (out, base)
}

/// Bytes delivered after recovery against the run without the failure, the least over all
/// adapters.
fn kept(out: &RunOutput, base: &RunOutput) -> f64 {
    out.delivered_bytes
        .iter()
        .zip(&base.delivered_bytes)
        .map(|(&o, &b)| o as f64 / b as f64)
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn a_failed_link_between_tiers_is_routed_around_within_the_model_time() {
    // First-tier element 0 of pod 0 (node 8) loses its link up to second-tier element 0. At
    // 120 Gb/s per port (128 Gb/s of cells) the element's three links left up (150 Gb/s)
    // still carry its quarter of the pod's traffic.
    let (out, base) = check(Failure::Link { dev: FAS, port: 4 }, 120);
    let k = kept(&out, &base);
    assert!(
        k >= 0.97,
        "after recovery each adapter gets {k:.3} of its bytes"
    );
}

#[test]
fn a_failed_element_falls_silent_and_is_routed_around() {
    // Second-tier element 0 (node 16) fails whole: 12 of the 16 links between the tiers
    // remain, 150 Gb/s per first-tier element for 128 Gb/s of cells.
    let (out, base) = check(Failure::Device { dev: 2 * FAS }, 120);
    let k = kept(&out, &base);
    assert!(
        k >= 0.97,
        "after recovery each adapter gets {k:.3} of its bytes"
    );
}

#[test]
fn a_failed_last_stage_link_makes_fci_slow_the_credits_of_its_adapter() {
    // Adapter 4 loses its link from first-tier element 0 of pod 1: three links of 50 Gb/s
    // (140.6 Gb/s of payload) are left for its 150 Gb/s port's credits. Its last-stage queues
    // build; FCI must slow adapter 4's credits, with no cell dropped.
    let (out, base) = check(Failure::Link { dev: 4, port: 0 }, 150);
    assert_eq!(
        c(&base, "fe_fci_marked"),
        0,
        "the intact fabric carries 150 Gb/s per port"
    );
    assert!(
        c(&out, "fe_fci_marked") > 0,
        "FCI readjusts the credit rate"
    );
    // Adapter 4 gets at most what its three links carry, and most of it; the others keep
    // their rate.
    let share = out.delivered_bytes[4] as f64 / base.delivered_bytes[4] as f64;
    assert!(share <= 140.7 / 150.0 + 0.01, "adapter 4 got {share:.3}");
    assert!(share >= 0.8, "adapter 4 got {share:.3}");
    for a in (0..FAS as usize).filter(|&a| a != 4) {
        let k = out.delivered_bytes[a] as f64 / base.delivered_bytes[a] as f64;
        assert!(k >= 0.97, "adapter {a} got {k:.3}");
    }
}

#[test]
fn credit_lost_with_a_failed_link_does_not_hold_egress_headroom_for_ever() {
    // Every adapter sends 4 MB to its peer in the other pod (about 280 us at 120 Gb/s) and,
    // long after, 100 KB more. The link failed at 100 us takes data cells (and perhaps
    // credits) with it: the credit that paid for them never comes back (and the packets they
    // cut never arrive: with no transport above, those flows never finish, so the run stops
    // at 1.5 ms). Once the second round is over every byte that can arrive has, so nothing
    // may stay on the books.
    let flows: Vec<Flow> = [(0u64, 4u64 << 20), (1_000_000_000, 100_000)]
        .into_iter()
        .enumerate()
        .flat_map(|(round, (start, bytes))| {
            (0..FAS as u16).map(move |s| Flow {
                id: round as u64 * FAS as u64 + s as u64,
                src: NodeId(s),
                dst: NodeId((s + 4) % FAS as u16),
                bytes,
                start: Time(start),
                class: 0,
            })
        })
        .collect();
    let mut fabric = Stardust::new(network(120));
    fabric
        .fail(FAIL_AT, Failure::Link { dev: FAS, port: 4 })
        .unwrap();
    let out = fabric
        .run(
            &mut IterSource::new(flows),
            RunLimits {
                until: Some(Time(1_500_000_000)),
                ..RunLimits::default()
            },
            &mut NoProgress,
        )
        .unwrap();
    let second = &out.records[FAS as usize..];
    assert!(second.iter().all(|r| r.finish.is_some()));
    let lost = c(&out, "failure_data_lost");
    assert!(lost > 0, "the failed link carried cells");
    assert_eq!(c(&out, "credit_outstanding_end_bytes"), 0);
    // What was written off is what was lost: at most a full cell per lost data cell and a
    // credit per lost control cell, and at least a byte per lost data cell.
    let off = c(&out, "credit_written_off_bytes");
    assert!(off >= lost, "written off {off} B for {lost} lost cells");
    assert!(off <= lost * 240 + c(&out, "failure_control_lost") * 4096);
}
