//! XFabric Fig. 4 (§6.3), the Production workload: (a) path length as the rack grows, XFabric
//! against Random and the 3D torus (paper: 1.6 hops at worst, at 512 SoCs); (b) the path length
//! of ingress/egress traffic between a SoC and its gateway (paper, 343 SoCs: XFabric 32% shorter
//! than Random and 37% shorter than the torus). XFabric places its uplinks itself (§4); the
//! static topologies spread theirs evenly and send each SoC's traffic to the nearest (§6.1).
//!
//! The Production stand-in is subsampled below 339 SoCs and grown by duplication above, as §6.1
//! scales the trace. Path lengths are per byte over shortest paths (`ForwardingTables`), as in
//! Fig. 3. Tolerances, fixed before running: ±20% on the 1.6 hops; the two reductions within 10
//! percentage points of the paper's; XFabric shorter than both static topologies at every
//! size (the paper does not order Random and the torus, and a 3x3x3 torus is shorter than Random).
//! Full: 27, 64, 125, 216, 343 and 512 SoCs (cubes, so the torus is a cube), (b) at 343.
//! Quick: 27, 64 and 125 SoCs, (b) at 125; the same claims, the 1.6 hops then checked at 125.

use super::xfabric_common::{SEED, err, hops_without_osa, on_production_stand_in};
use crate::plot::emit;
use crate::{Claim, Options, ReproError};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_workload::{ProductionParams, production_like};
use shoal_xfabric::full_demand_of;

const FIG: &str = "XFabric Fig. 4";
const NAMES: [&str; 3] = ["XFabric", "3D torus", "Random"];

/// One rack size: path lengths and uplink path lengths, in `NAMES` order.
struct Point {
    socs: usize,
    hops: [f64; 3],
    uplink: [f64; 3],
}

fn measure(socs: usize) -> Result<Point, ReproError> {
    let (flows, _) = production_like(socs, &ProductionParams::default(), SEED)
        .map_err(|e| err("production")(&e))?;
    let demand = full_demand_of(&flows, socs).map_err(|e| err("demand")(&e))?;
    let (hops, uplink) = hops_without_osa(socs, &demand)?;
    Ok(Point { socs, hops, uplink })
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let (sizes, at_b): (&[usize], usize) = if opts.quick {
        (&[27, 64, 125], 125)
    } else {
        (&[27, 64, 125, 216, 343, 512], 343)
    };
    let mut pts = Vec::new();
    for &n in sizes {
        let p = measure(n)?;
        progress(&format!(
            "{n} SoCs: path XFabric {:.3}, torus {:.3}, Random {:.3} hops; uplink path {:.3}, {:.3}, {:.3}",
            p.hops[0], p.hops[1], p.hops[2], p.uplink[0], p.uplink[1], p.uplink[2]
        ));
        pts.push(p);
    }
    let mut claims = Vec::new();
    let largest = &pts[pts.len() - 1];
    claims.push(Claim::relative(
        FIG,
        &format!("(a) XFabric path length at {} SoCs", largest.socs),
        "hops",
        1.6,
        largest.hops[0],
        0.20,
    ));
    let ordered = pts.iter().all(|p| p.hops[0] < p.hops[1].min(p.hops[2]));
    claims.push(Claim::new(
        FIG,
        "(a) XFabric shortest at every size",
        "XFabric < Random, torus",
        pts.iter()
            .map(|p| {
                format!(
                    "{}: {:.2} vs {:.2}/{:.2}",
                    p.socs, p.hops[0], p.hops[2], p.hops[1]
                )
            })
            .collect::<Vec<_>>()
            .join(", "),
        "ordering",
        ordered,
    ));
    let b = pts
        .iter()
        .find(|p| p.socs == at_b)
        .ok_or_else(|| ReproError("no point for (b)".into()))?;
    for (i, name, paper) in [(2, "Random", 0.32), (1, "3D torus", 0.37)] {
        let ours = 1.0 - b.uplink[0] / b.uplink[i];
        claims.push(Claim::points(
            FIG,
            &format!("(b) XFabric uplink path shorter than {name} ({at_b} SoCs)"),
            paper,
            ours,
            10.0,
            &format!("{:.3} vs {:.3} hops", b.uplink[0], b.uplink[i]),
        ));
    }
    plot(opts, &pts, b, progress)?;
    // Every claim of the figure is on the Production workload.
    Ok(claims.into_iter().map(on_production_stand_in).collect())
}

fn plot(
    opts: &Options,
    pts: &[Point],
    b: &Point,
    progress: &mut dyn FnMut(&str),
) -> Result<(), ReproError> {
    let series = NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            Series::new(
                *name,
                pts.iter().map(|p| (p.socs as f64, p.hops[i])).collect(),
            )
        })
        .collect();
    let fig = Figure {
        title: "XFabric Fig. 4(a): Production".into(),
        x: Axis::linear("Number of SoCs"),
        y: Axis::linear("Average path length (hops)"),
        series,
        kind: Kind::Lines,
    };
    emit(opts, fig, "xfabric-fig4a-scale", progress)?;
    let fig = Figure {
        title: format!("XFabric Fig. 4(b): Production, {} SoCs", b.socs),
        x: Axis::linear("Fabric"),
        y: Axis::linear("Uplink path length (hops)"),
        series: vec![Series::new(
            "uplink path",
            (0..3).map(|i| (i as f64, b.uplink[i])).collect(),
        )],
        kind: Kind::Bars {
            categories: NAMES.iter().map(|s| s.to_string()).collect(),
        },
    };
    emit(opts, fig, "xfabric-fig4b-uplinks", progress)
}
