//! Table 1 (§3.5): the fraction of slots one failed component costs in a two-stage Clos of
//! k-port switches with N = k²/2 nodes: node 1/N, node link 1/N, leaf 1/√(2N), leaf-spine link
//! 2/N, spine 2√2/√N.
//!
//! We count, over one epoch of the verified schedule and its port maps, the surviving nodes'
//! send and receive slots lost (`shoal_schedule::failure_cost`), two ways: only transmissions
//! whose path crosses the component ("path only"), and with §3.5's symmetric detection (a pair
//! that loses one direction stops using both). The table matches the symmetric count for the
//! node, node link, leaf and spine, and the path-only count for a leaf-spine link; a full-duplex
//! link under symmetric detection costs about twice the table's 2/N (the table's value is what
//! one direction of the link, a fibre, costs). Each claim names the count it uses.
//!
//! Full mode uses N = 2,048 on 64-port switches (one plane); quick mode N = 512 on 32-port
//! switches, the same N = k²/2 shape.
//!
//! The simulator is checked against the count: a 128-node rack on 16-port switches runs 200
//! epochs with a failed spine, then with a failed leaf-spine link, and the share of scheduled
//! transmissions that were silent (the sender had declared the receiver failed) or lost in the
//! fabric must match the symmetric count, which is what §3.5's detection does.

use crate::{Claim, Options, ReproError};
use shoal_base::{ChannelId, NodeId, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits};
use shoal_rack::{Failure, RackConfig, ShoalRack};
use shoal_schedule::{
    Accounting, Arrangement, Clos, Component, ComponentKind, FabricSchedule, FabricSpec, LeafId,
    SpineId, failure_cost, table1_formula,
};
use shoal_workload::{Flow, IterSource};

const FIG: &str = "Shoal Table 1";

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let (nodes, ports) = if opts.quick { (512, 32) } else { (2048, 64) };
    let err = |e: &dyn std::fmt::Display| ReproError(format!("table1: {e}"));
    let schedule = FabricSchedule::new(FabricSpec {
        nodes,
        channels: 1,
        arrangement: Arrangement::Cyclic,
        delay_slots: None,
    })
    .map_err(|e| err(&e))?;
    let clos = Clos::new(&schedule, ports).map_err(|e| err(&e))?;
    let plane = ChannelId(0);
    let cases = [
        ("a node", Component::Node(NodeId(5)), Accounting::Symmetric),
        (
            "a node link",
            Component::NodeLink(plane, NodeId(5)),
            Accounting::Symmetric,
        ),
        (
            "a leaf switch",
            Component::Leaf(plane, LeafId(1)),
            Accounting::Symmetric,
        ),
        (
            "a leaf-spine link",
            Component::LeafSpineLink(plane, LeafId(1), SpineId(1), 0),
            Accounting::PathOnly,
        ),
        (
            "a spine switch",
            Component::Spine(plane, SpineId(1)),
            Accounting::Symmetric,
        ),
    ];
    let mut claims = Vec::new();
    for (what, component, accounting) in cases {
        let kind: ComponentKind = component.kind();
        let ours = failure_cost(&schedule, &clos, &[component], accounting)
            .map_err(|e| err(&e))?
            .fraction();
        let other = match accounting {
            Accounting::Symmetric => Accounting::PathOnly,
            Accounting::PathOnly => Accounting::Symmetric,
        };
        let alt = failure_cost(&schedule, &clos, &[component], other)
            .map_err(|e| err(&e))?
            .fraction();
        let paper = table1_formula(kind, nodes);
        let name = |a: Accounting| match a {
            Accounting::Symmetric => "symmetric",
            Accounting::PathOnly => "path only",
        };
        progress(&format!(
            "table1: {what}: table {paper:.5}, {} {ours:.5}, {} {alt:.5}",
            name(accounting),
            name(other)
        ));
        claims.push(Claim::new(
            FIG,
            &format!(
                "slots lost to {what}, N = {nodes}, k = {ports} ({})",
                name(accounting)
            ),
            format!("{paper:.5}"),
            format!("{ours:.5} ({} {alt:.5})", name(other)),
            "±10%",
            (ours - paper).abs() <= 0.10 * paper,
        ));
    }
    for (what, component) in [
        ("a spine switch", Component::Spine(plane, SpineId(1))),
        (
            "a leaf-spine link",
            Component::LeafSpineLink(plane, LeafId(1), SpineId(1), 0),
        ),
    ] {
        let (simulated, counted) = simulate(component)?;
        progress(&format!(
            "table1: simulated {what}: {simulated:.5}, symmetric count {counted:.5}"
        ));
        claims.push(Claim::new(
            FIG,
            &format!("the simulator loses what the count says to {what}, N = 128, k = 16"),
            format!("{counted:.5} (our symmetric count)"),
            format!("{simulated:.5}"),
            "±5%",
            (simulated - counted).abs() <= 0.05 * counted,
        ));
    }
    Ok(claims)
}

/// Share of scheduled transmissions lost (silent or dropped in the fabric) when `component`
/// fails at time zero in a 128-node rack on 16-port switches, over 200 epochs; and the
/// symmetric count for the same fabric.
fn simulate(component: Component) -> Result<(f64, f64), ReproError> {
    let err = |e: &dyn std::fmt::Display| ReproError(format!("table1 simulation: {e}"));
    let epoch = 127u64;
    let cfg = RackConfig {
        channels: 1,
        delay_slots: 1,
        switch_ports: 16,
        arrangement: Arrangement::Cyclic,
        failures: vec![Failure {
            component,
            at: Time::ZERO,
        }],
        verify_schedule: true,
        ..RackConfig::paper(128)
    };
    let schedule = FabricSchedule::new(FabricSpec {
        nodes: 128,
        channels: 1,
        arrangement: Arrangement::Cyclic,
        delay_slots: None,
    })
    .map_err(|e| err(&e))?;
    let clos = Clos::new(&schedule, 16).map_err(|e| err(&e))?;
    let counted = failure_cost(&schedule, &clos, &[component], Accounting::Symmetric)
        .map_err(|e| err(&e))?
        .fraction();
    // One endless flow keeps the rack running (an idle rack stops at once); it changes which
    // cells are data, not which slots are used.
    let keep_busy = Flow {
        id: 0,
        src: NodeId(100),
        dst: NodeId(101),
        bytes: u64::MAX / 2,
        start: Time::ZERO,
        class: 0,
    };
    let limits = RunLimits {
        until: Some(Time(cfg.slot.0 * epoch * 200)),
        ..RunLimits::default()
    };
    let mut rack = ShoalRack::new(cfg, 1).map_err(|e| err(&e))?;
    let out = rack
        .run(&mut IterSource::new([keep_busy]), limits, &mut NoProgress)
        .map_err(|e| err(&e))?;
    let c = |k: &str| out.counters.get(k).copied().unwrap_or(0) as f64;
    // Every node has a peer in every slot of the cyclic schedule.
    let scheduled = c("node_channel_slots");
    let sent = c("data_cells_sent") + c("idle_cells_sent") + c("notices_sent");
    let simulated = (scheduled - sent + c("cells_lost_in_fabric")) / scheduled;
    Ok((simulated, counted))
}
