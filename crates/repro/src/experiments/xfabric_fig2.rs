//! XFabric Fig. 2 (§6.2): path length, path diversity and bottleneck link load of XFabric, OSA,
//! a 3D torus and a random graph on the Production and LiveJournal workloads, each fabric
//! optimised for the workload's whole demand matrix. Paper (343 SoCs): on Production XFabric has
//! 1.06 hops, 6x less than the torus and 3.7x less than Random, and OSA is comparable; on
//! LiveJournal the gain is smaller and OSA is worse than XFabric; the reconfigurable fabrics have
//! less path diversity; the bottleneck links carry about the same load except on the torus.
//!
//! The workloads are stand-ins (`shoal_workload::volumes`): `production_like` rebuilds the
//! trace's stated structure (groups, many-to-one hubs, 15% uplink traffic) and `graph_processing`
//! partitions a 20,000-vertex power-law social graph, not LiveJournal. Metrics come from the
//! flow-level simulator (`shoal_xfabric::flowsim`, 64 subflows per flow, power of two choices).
//!
//! Tolerances, fixed before running: ±15% on XFabric's 1.06 hops, ±25% on the two ratios (they
//! divide two measured numbers), XFabric within 10% of OSA, the three non-torus bottlenecks within
//! 1.5x of each other (the paper: "about the same"); the rest are orderings.
//! Full: 343 SoCs, 7x7x7 torus, 8 uplinks. Quick: 64 SoCs, 4x4x4 torus, 4 uplinks; the same claims
//! against the same 343-SoC numbers, so the ratios are expected to miss there (a 64-SoC torus is
//! much shorter).

use super::xfabric_common::{NAMES, SEED, build, err, on_production_stand_in, simulate_on};
use crate::plot::emit;
use crate::{Claim, Options, ReproError};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_workload::{
    Flow, GraphProcessingParams, ProductionParams, graph_processing, production_like,
};
use shoal_xfabric::{FlowSimReport, full_demand_of};

const FIG: &str = "XFabric Fig. 2";
/// Why a claim is not checked when a measure it needs came out empty.
const NOT_MEASURED: &str = "a fabric's value was not measured";

/// The four fabrics' reports on one workload.
type Row = Vec<FlowSimReport>;

/// One of the simulator's measures.
type Metric = fn(&FlowSimReport) -> Option<f64>;

fn measure(socs: usize, flows: &[Flow]) -> Result<Row, ReproError> {
    let demand = full_demand_of(flows, socs).map_err(|e| err("demand")(&e))?;
    build(&demand)?
        .iter()
        .map(|b| simulate_on(b, flows))
        .collect()
}

fn get(row: &Row, i: usize, f: Metric) -> f64 {
    f(&row[i]).unwrap_or(f64::NAN)
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let socs = if opts.quick { 64 } else { 343 };
    let (production, _) = production_like(socs, &ProductionParams::default(), SEED)
        .map_err(|e| err("production")(&e))?;
    let prod = measure(socs, &production)?;
    progress(&format!("Production over {socs} SoCs done"));
    let graph = graph_processing(socs, &GraphProcessingParams::default(), SEED)
        .map_err(|e| err("graph processing")(&e))?;
    let lj = measure(socs, &graph)?;
    progress(&format!("LiveJournal stand-in over {socs} SoCs done"));
    let rows = [("Production", &prod), ("LiveJournal", &lj)];
    for (w, row) in rows {
        for (name, r) in NAMES.iter().zip(row.iter()) {
            progress(&format!(
                "{w:<11} {name:<8} {:.3} hops, diversity {:.2}, bottleneck {:.2}% of subflows",
                r.mean_hops.unwrap_or(f64::NAN),
                r.mean_path_diversity.unwrap_or(f64::NAN),
                100.0 * r.bottleneck_share.unwrap_or(f64::NAN)
            ));
        }
    }
    let hops = |row: &Row, i| get(row, i, |r| r.mean_hops);
    let div = |row: &Row, i| get(row, i, |r| r.mean_path_diversity);
    let bott = |row: &Row, i| get(row, i, |r| r.bottleneck_share);
    let scale = format!("({socs} SoCs)");
    let c = |s: &str| format!("{s} {scale}");
    let mut claims = vec![
        Claim::relative(
            FIG,
            &c("Production: XFabric path length"),
            "hops",
            1.06,
            hops(&prod, 0),
            0.15,
        ),
        Claim::relative(
            FIG,
            &c("Production: 3D torus / XFabric path length"),
            "x",
            6.0,
            hops(&prod, 2) / hops(&prod, 0),
            0.25,
        ),
        Claim::relative(
            FIG,
            &c("Production: Random / XFabric path length"),
            "x",
            3.7,
            hops(&prod, 3) / hops(&prod, 0),
            0.25,
        ),
    ];
    let comparable = c("Production: XFabric comparable to OSA");
    let gap = (hops(&prod, 0) - hops(&prod, 1)).abs() / hops(&prod, 1);
    claims.push(if gap.is_nan() {
        Claim::not_checked(FIG, &comparable, "comparable", NOT_MEASURED)
    } else {
        Claim::new(
            FIG,
            &comparable,
            "comparable",
            format!(
                "{:.3} vs {:.3} hops ({:.1}% apart)",
                hops(&prod, 0),
                hops(&prod, 1),
                gap * 100.0
            ),
            "within 10%",
            gap <= 0.10,
        )
    });
    let (gain_prod, gain_lj) = (hops(&prod, 3) / hops(&prod, 0), hops(&lj, 3) / hops(&lj, 0));
    let smaller = c("LiveJournal: smaller gain over Random than Production");
    claims.push(if gain_prod.is_nan() || gain_lj.is_nan() {
        Claim::not_checked(FIG, &smaller, "smaller", NOT_MEASURED)
    } else {
        Claim::new(
            FIG,
            &smaller,
            "smaller",
            format!("{gain_lj:.2}x vs {gain_prod:.2}x"),
            "ordering",
            gain_lj < gain_prod && gain_lj > 1.0,
        )
    });
    let osa_worse = c("LiveJournal: OSA worse than XFabric");
    claims.push(if hops(&lj, 1).is_nan() || hops(&lj, 0).is_nan() {
        Claim::not_checked(FIG, &osa_worse, "OSA longer", NOT_MEASURED)
    } else {
        Claim::new(
            FIG,
            &osa_worse,
            "OSA longer",
            format!(
                "OSA {:.3} vs XFabric {:.3} hops",
                hops(&lj, 1),
                hops(&lj, 0)
            ),
            "ordering",
            hops(&lj, 1) > hops(&lj, 0),
        )
        .because(format!(
            "on the LiveJournal stand-in (a partitioned 20,000-vertex power-law graph, not \
             LiveJournal) OSA's exact b-matching gives {:.3} hops, {:.1}% under XFabric's {:.3}; \
             the cause is not yet known (docs/results/xfabric.md, 'What the misses say')",
            hops(&lj, 1),
            100.0 * (1.0 - hops(&lj, 1) / hops(&lj, 0)),
            hops(&lj, 0)
        ))
    });
    for (w, row) in rows {
        let d: Vec<f64> = (0..4).map(|i| div(row, i)).collect();
        let b: Vec<f64> = (0..4).map(|i| bott(row, i)).collect();
        let diversity = c(&format!(
            "{w}: reconfigurable fabrics have less path diversity, torus most"
        ));
        let bottleneck = c(&format!(
            "{w}: torus has the least loaded bottleneck link, the others about the same"
        ));
        // A claim that needs a value the simulator did not measure is not checked, never passed
        // on the values that are there.
        if d.iter().chain(&b).any(|v| v.is_nan()) {
            claims.push(Claim::not_checked(
                FIG,
                &diversity,
                "XFabric, OSA < Random < torus",
                NOT_MEASURED,
            ));
            claims.push(Claim::not_checked(
                FIG,
                &bottleneck,
                "torus lowest, the others about the same",
                NOT_MEASURED,
            ));
            continue;
        }
        claims.push(Claim::new(
            FIG,
            &diversity,
            "XFabric, OSA < Random < torus",
            format!("{:.2}, {:.2}, {:.2}, {:.2}", d[0], d[1], d[3], d[2]),
            "ordering",
            d[0].max(d[1]) < d[3].min(d[2]) && d[2] >= d[3],
        ));
        // §6.2: the torus's bottleneck is the least loaded and the other three "carry about the
        // same load". The paper gives no number for "about the same"; the tolerance, fixed before
        // the run, is the heaviest of the three at most 1.5 times the lightest.
        let others = [b[0], b[1], b[3]];
        let spread = others.iter().fold(f64::MIN, |m, &x| m.max(x))
            / others.iter().fold(f64::MAX, |m, &x| m.min(x));
        claims.push(Claim::new(
            FIG,
            &bottleneck,
            "torus lowest, the others about the same",
            format!(
                "XFabric {:.2}%, OSA {:.2}%, torus {:.2}%, Random {:.2}% (others spread {spread:.2}x)",
                100.0 * b[0],
                100.0 * b[1],
                100.0 * b[2],
                100.0 * b[3]
            ),
            "torus lowest, others within 1.5x",
            others.iter().all(|&o| b[2] <= o) && spread <= 1.5,
        )
        .because({
            let lightest = (0..4)
                .min_by(|&i, &j| b[i].total_cmp(&b[j]))
                .unwrap_or(2);
            format!(
                "measured: the lightest bottleneck is {}'s ({:.2}%, the torus's {:.2}%), the \
                 other three within {spread:.2}x of each other; the cause is not yet known",
                NAMES[lightest],
                100.0 * b[lightest],
                100.0 * b[2]
            )
        }));
    }
    plot(opts, &rows, progress)?;
    Ok(claims
        .into_iter()
        .map(|c| {
            if c.claim.starts_with("Production:") {
                on_production_stand_in(c)
            } else {
                c
            }
        })
        .collect())
}

fn plot(
    opts: &Options,
    rows: &[(&str, &Row); 2],
    progress: &mut dyn FnMut(&str),
) -> Result<(), ReproError> {
    let categories: Vec<String> = rows.iter().map(|(w, _)| w.to_string()).collect();
    let metrics: [(&str, &str, Metric); 3] = [
        (
            "xfabric-fig2a-path-length",
            "Average path length (hops)",
            |r| r.mean_hops,
        ),
        (
            "xfabric-fig2b-path-diversity",
            "Disjoint shortest paths",
            |r| r.mean_path_diversity,
        ),
        (
            "xfabric-fig2c-bottleneck",
            "Subflows on the bottleneck link (%)",
            |r| r.bottleneck_share.map(|s| 100.0 * s),
        ),
    ];
    for (stem, label, f) in metrics {
        let series = NAMES
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let points = rows
                    .iter()
                    .enumerate()
                    .filter_map(|(k, (_, row))| f(&row[i]).map(|v| (k as f64, v)))
                    .collect();
                Series::new(*name, points)
            })
            .collect();
        let fig = Figure {
            title: "XFabric Fig. 2".into(),
            x: Axis::linear("Workload"),
            y: Axis::linear(label),
            series,
            kind: Kind::Bars {
                categories: categories.clone(),
            },
        };
        emit(opts, fig, stem, progress)?;
    }
    Ok(())
}
