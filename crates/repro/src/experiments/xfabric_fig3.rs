//! XFabric Fig. 3 (§6.3): path length as the traffic skew falls. (a) Clustered: SoCs in clusters
//! of c, all-to-all inside each, c from 2 to all SoCs; (b) random destinations: each SoC sends to
//! k random others. Paper (343 SoCs): the reconfigurable fabrics beat the static ones by up to
//! 3.5x at high skew, reach one hop when clusters are small, become comparable to Random at
//! all-to-all, and XFabric and OSA barely differ.
//!
//! Every pair with traffic carries the same bytes, so the path length per byte is the mean over
//! pairs; it is computed on the shortest paths (`ForwardingTables::mean_hops`), which is what the
//! flow simulator's path length is, without routing subflows. OSA's exact b-matching runs at every
//! point (`shoal_xfabric::max_weight_b_matching`: at 343 SoCs each in about a second).
//!
//! Tolerances, fixed before running: ±20% on the 3.5x (the best Random / XFabric ratio over k; the
//! torus ratio is reported beside it), XFabric within 10% of Random at all-to-all and of OSA
//! everywhere, XFabric and OSA within
//! 10% of one hop for clusters of 2.
//! Full: 343 SoCs, c in {2, 4, 7, 14, 28, 49, 98, 172, 343}, k in {1, 2, 4, 8, 16, 32, 64, 128,
//! 342}. Quick: 64 SoCs, c in {2, 4, 8, 16, 32, 64}, k in {1, 2, 4, 8, 16, 63}; same claims.

use super::xfabric_common::{NAMES, PORTS, SEED, err, mean_hops, rack};
use crate::plot::emit;
use crate::{Claim, Options, ReproError};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_workload::{Flow, clustered, random_destinations};
use shoal_xfabric::{
    SocGraph, demand_of, generate_topology, osa_topology, random_regular, torus_3d, torus_sides,
};

const FIG: &str = "XFabric Fig. 3";
const BYTES: u64 = 1 << 20;

/// Path lengths at one point of a sweep, in `NAMES` order.
struct Point {
    x: usize,
    hops: [f64; 4],
}

fn sweep(
    socs: usize,
    xs: &[usize],
    flows: &dyn Fn(usize) -> Result<Vec<Flow>, ReproError>,
    statics: &[SocGraph; 2],
    what: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Point>, ReproError> {
    let rack = rack(socs)?;
    let mut out = Vec::new();
    for &x in xs {
        let dm = demand_of(&flows(x)?, socs).map_err(|e| err("demand")(&e))?;
        let xf = generate_topology(&rack, &dm, SEED).map_err(|e| err("XFabric")(&e))?;
        let osa = osa_topology(&dm, PORTS, SEED).map_err(|e| err("OSA")(&e))?;
        let hops = [
            mean_hops(xf.graph(), &dm)?,
            mean_hops(&osa, &dm)?,
            mean_hops(&statics[0], &dm)?,
            mean_hops(&statics[1], &dm)?,
        ];
        progress(&format!(
            "{what} = {x}: XFabric {:.3}, OSA {:.3}, torus {:.3}, Random {:.3} hops",
            hops[0], hops[1], hops[2], hops[3]
        ));
        out.push(Point { x, hops });
    }
    Ok(out)
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let (socs, cs, ks): (usize, Vec<usize>, Vec<usize>) = if opts.quick {
        (64, vec![2, 4, 8, 16, 32, 64], vec![1, 2, 4, 8, 16, 63])
    } else {
        (
            343,
            vec![2, 4, 7, 14, 28, 49, 98, 172, 343],
            vec![1, 2, 4, 8, 16, 32, 64, 128, 342],
        )
    };
    let (a, b, c) = torus_sides(socs);
    let statics = [
        torus_3d(a, b, c).map_err(|e| err("torus")(&e))?,
        random_regular(socs, PORTS, SEED).map_err(|e| err("random")(&e))?,
    ];
    let clus = sweep(
        socs,
        &cs,
        &|c| clustered(socs, c, BYTES, SEED).map_err(|e| err("clustered")(&e)),
        &statics,
        "cluster size",
        progress,
    )?;
    let dest = sweep(
        socs,
        &ks,
        &|k| random_destinations(socs, k, BYTES, SEED).map_err(|e| err("destinations")(&e)),
        &statics,
        "destinations",
        progress,
    )?;

    let scale = format!("({socs} SoCs)");
    let c = |s: &str| format!("{s} {scale}");
    let mut claims = Vec::new();
    let best = |pts: &[Point], i: usize| {
        pts.iter()
            .map(|p| p.hops[i] / p.hops[0])
            .fold(f64::NAN, f64::max)
    };
    let mut ratio = Claim::relative(
        FIG,
        &c("(b) best Random / XFabric path length at high skew"),
        "x",
        3.5,
        best(&dest, 3),
        0.20,
    );
    ratio.ours = format!("{} (torus / XFabric {:.2} x)", ratio.ours, best(&dest, 2));
    let top = dest
        .iter()
        .max_by(|p, q| (p.hops[3] / p.hops[0]).total_cmp(&(q.hops[3] / q.hops[0])));
    if let Some(p) = top {
        ratio = ratio.because(format!(
            "at {socs} SoCs the best ratio is at k = {} destinations a SoC, Random {:.3} against XFabric \
             {:.3} hops: the ratio is set by Random's path length, which grows with the SoCs; at \
             the paper's 343 the same sweep gives 3.49x (docs/results/xfabric.md, 'What the \
             misses say')",
            p.x, p.hops[3], p.hops[0]
        ));
    }
    claims.push(ratio);
    let first = &clus[0];
    let one_hop = c(&format!(
        "(a) clusters of {}: traffic goes over one hop",
        first.x
    ));
    // Both reconfigurable fabrics, within 10% of one hop (no path is shorter than one hop, so the
    // lower side holds by construction; the tolerance is two-sided all the same).
    claims.push(Claim::new(
        FIG,
        &one_hop,
        "1 hop",
        format!(
            "XFabric {:.3}, OSA {:.3} hops",
            first.hops[0], first.hops[1]
        ),
        "±10% (both)",
        first.hops[..2].iter().all(|h| (h - 1.0).abs() <= 0.10),
    ));
    for (name, pts, clustered) in [
        ("(a) clustered", &clus, true),
        ("(b) random destinations", &dest, false),
    ] {
        let last = &pts[pts.len() - 1];
        let gap = (last.hops[0] - last.hops[3]).abs() / last.hops[3];
        claims.push(Claim::new(
            FIG,
            &c(&format!(
                "{name}: XFabric comparable to Random at all-to-all"
            )),
            "comparable",
            format!(
                "{:.3} vs {:.3} hops ({:.1}% apart)",
                last.hops[0],
                last.hops[3],
                gap * 100.0
            ),
            "within 10%",
            gap <= 0.10,
        ));
        let same = c(&format!("{name}: XFabric and OSA almost the same"));
        let apart = |p: &Point| (p.hops[0] - p.hops[1]).abs() / p.hops[1];
        let worst = pts.iter().map(apart).fold(0.0, f64::max);
        let widest = pts.iter().max_by(|p, q| apart(p).total_cmp(&apart(q)));
        let why = widest.map_or_else(String::new, |p| {
            let at = format!(
                "widest at {}: XFabric {:.3} against OSA {:.3} hops",
                if clustered {
                    format!("clusters of {}", p.x)
                } else {
                    format!("k = {} destinations a SoC", p.x)
                },
                p.hops[0],
                p.hops[1]
            );
            if clustered && p.x % 2 == 1 {
                format!(
                    "{at}: a crosspoint joins at most {} disjoint pairs of an odd cluster of {}, \
                     so XFabric cannot give every pair a circuit where one switch (OSA) can \
                     (docs/results/xfabric.md, 'What the misses say')",
                    (p.x - 1) / 2,
                    p.x
                )
            } else {
                format!("{at}; the cause is not yet known")
            }
        });
        claims.push(
            Claim::new(
                FIG,
                &same,
                "almost no difference",
                format!(
                    "at most {:.1}% apart over all {} points",
                    worst * 100.0,
                    pts.len()
                ),
                "within 10%",
                worst <= 0.10,
            )
            .because(why),
        );
    }
    plot(
        opts,
        &clus,
        "xfabric-fig3a-clustered",
        "Cluster size (SoCs)",
        progress,
    )?;
    plot(
        opts,
        &dest,
        "xfabric-fig3b-destinations",
        "Destinations per SoC",
        progress,
    )?;
    Ok(claims)
}

fn plot(
    opts: &Options,
    pts: &[Point],
    stem: &str,
    x: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<(), ReproError> {
    let series = NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            Series::new(
                *name,
                pts.iter()
                    .filter(|p| !p.hops[i].is_nan())
                    .map(|p| (p.x as f64, p.hops[i]))
                    .collect(),
            )
        })
        .collect();
    let fig = Figure {
        title: "XFabric Fig. 3".into(),
        x: Axis::log(x),
        y: Axis::linear("Average path length (hops)"),
        series,
        kind: Kind::Lines,
    };
    emit(opts, fig, stem, progress)
}
