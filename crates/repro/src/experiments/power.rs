//! §5's power comparison of a 512-node rack, from `shoal-sizing`'s model: the switch counts
//! come from the two Clos networks (the schedule crate's for Shoal, a folded Clos for the
//! packet network), the NIC powers from 12.4 W per 100 Gb/s, the 10x of SoC integration and
//! Appendix B's 11%, so every number below is recomputed from the paper's inputs, not quoted.
//!
//! The figure draws the same model from 64 to 2,048 nodes on 64-port switches: below k hosts
//! the packet network is one switch while Shoal's fabric keeps both stages (§3.2), so the
//! saving only appears once the packet network needs two tiers.
//!
//! The model is instantaneous; quick mode is the full experiment.

use crate::plot::emit;
use crate::{Claim, Options, ReproError};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_sizing::power::{PowerComparison, PowerSpec, compare_power};
use shoal_sizing::rack::{ShoalSpec, size_rack};

const FIG: &str = "Shoal §5";

/// §5's rack (`ShoalSpec::default()`) with `nodes` nodes, against its packet network.
fn compare(nodes: usize) -> Result<PowerComparison, ReproError> {
    let err = |e: &dyn std::fmt::Display| ReproError(e.to_string());
    let spec = ShoalSpec {
        nodes,
        ..ShoalSpec::default()
    };
    let clos = size_rack(&spec).map_err(|e| err(&e))?.clos;
    compare_power(&clos, nodes, spec.channel_rate, &PowerSpec::default()).map_err(|e| err(&e))
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let p = compare(512)?;
    progress(&format!(
        "Shoal {} switches {:.1} W + NICs {:.1} W = {:.1} W; packet {} switches {:.1} W + \
         NICs {:.1} W = {:.1} W",
        p.shoal.switches,
        p.shoal.switches_watts,
        p.shoal.nics_watts,
        p.shoal.total_watts,
        p.packet.switches,
        p.packet.switches_watts,
        p.packet.nics_watts,
        p.packet.total_watts
    ));
    let count = |claim: &str, paper: usize, ours: usize| {
        Claim::new(
            FIG,
            claim,
            paper.to_string(),
            ours.to_string(),
            "exact",
            paper == ours,
        )
    };
    let claims = vec![
        count(
            "packet switches (64 x 50 Gb/s) for 512 nodes, non-blocking folded Clos",
            24,
            p.packet.switches,
        ),
        count(
            "circuit switches (64 x 50 Gb/s) for 512 nodes at 100 Gb/s each",
            48,
            p.shoal.switches,
        ),
        Claim::relative(
            FIG,
            "Shoal NIC power, 100 Gb/s, SoC-integrated, +11%",
            "W",
            1.37,
            p.shoal.nic_watts,
            0.01,
        ),
        Claim::relative(
            FIG,
            "packet network NIC power, 50 Gb/s, SoC-integrated",
            "W",
            0.62,
            p.packet.nic_watts,
            0.01,
        ),
        Claim::relative(
            FIG,
            "Shoal network power, 512 nodes",
            "kW",
            2.55,
            p.shoal.total_watts / 1e3,
            0.01,
        ),
        Claim::relative(
            FIG,
            "packet network power, 512 nodes",
            "kW",
            8.72,
            p.packet.total_watts / 1e3,
            0.01,
        ),
        Claim::new(
            FIG,
            "Shoal's power is 71% lower",
            "71%",
            format!("{:.1}%", p.reduction * 100.0),
            "±1 point",
            (p.reduction - 0.71).abs() <= 0.01,
        ),
    ];

    let mut shoal = Vec::new();
    let mut packet = Vec::new();
    for nodes in [64usize, 128, 256, 512, 1024, 2048] {
        let p = compare(nodes)?;
        progress(&format!(
            "{nodes} nodes: Shoal {:.2} kW, packet {:.2} kW ({} tier(s)), {:.0}% lower",
            p.shoal.total_watts / 1e3,
            p.packet.total_watts / 1e3,
            p.packet.tiers,
            p.reduction * 100.0
        ));
        shoal.push((nodes as f64, p.shoal.total_watts / 1e3));
        packet.push((nodes as f64, p.packet.total_watts / 1e3));
    }
    let fig = Figure {
        title: "Network power, 64-port switches (§5's model)".into(),
        x: Axis::log("Rack nodes"),
        y: Axis::log("Power (kW)"),
        series: vec![
            Series::new("Shoal (2 x 50 Gb/s per node)", shoal),
            Series::new("Packet network (50 Gb/s per host)", packet),
        ],
        kind: Kind::Lines,
    };
    emit(opts, fig, "sec5-power", progress)?;
    Ok(claims)
}
