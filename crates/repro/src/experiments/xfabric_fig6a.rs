//! XFabric Fig. 6(a) (§6.5): the time to generate a topology, Algorithm 1 against OSA's exact
//! b-matching, from 27 to 1,024 SoCs (d = 6), on the skewed random demand of
//! [`skewed_random_demand`] (8 destinations per SoC; the paper does not say what it timed).
//! Paper: XFabric under 700 ms up to 512 SoCs and about 3 s at 1,024; OSA 20.5 s at 1,024, over
//! 6 times XFabric.
//!
//! A wall-clock measure on whatever machine runs it, so it is reported, not asserted in tests:
//! XFabric's time is the median of five runs, OSA's one run (five below 256 SoCs). Full: 27, 64,
//! 128, 256, 512 and 1,024 SoCs (a few seconds, most of it OSA at 1,024). Quick: 27, 64 and 128;
//! its claims at 1,024 SoCs are then not checked.
//!
//! Claims: the paper's bound (under 700 ms up to 512 SoCs) as a bound; its numbers at 1,024 SoCs
//! (XFabric about 3 s, OSA 20.5 s, their ratio 6.8, the shape Fig. 6(a) plots) each within a
//! factor of 2 either way, fixed before the run.
//! `cargo bench -p shoal-xfabric --bench topology` times the same with a dense demand beside it.

use super::xfabric_common::{PORTS, SEED, err};
use crate::plot::emit;
use crate::{Claim, Options, ReproError};
use shoal_fabric::bench::wall_seconds;
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_xfabric::{Rack, RackSpec, generate_topology, osa_topology, skewed_random_demand};

const FIG: &str = "XFabric Fig. 6(a)";
const DESTINATIONS: usize = 8;

/// The median of `runs` timings of `f`, in seconds.
fn median_seconds<E>(runs: usize, mut f: impl FnMut() -> Result<(), E>) -> Result<f64, E> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut outcome = Ok(());
        samples.push(wall_seconds(|| outcome = f()));
        outcome?;
    }
    samples.sort_by(f64::total_cmp);
    Ok(samples[runs / 2])
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let sizes: &[usize] = if opts.quick {
        &[27, 64, 128]
    } else {
        &[27, 64, 128, 256, 512, 1024]
    };
    let mut pts = Vec::new();
    for &socs in sizes {
        let demand = skewed_random_demand(socs, DESTINATIONS, SEED);
        let rack = Rack::new(
            RackSpec {
                socs,
                ports_per_soc: PORTS,
                uplinks: 8,
            },
            SEED,
        )
        .map_err(|e| err("rack")(&e))?;
        let xfabric = median_seconds(5, || generate_topology(&rack, &demand, SEED).map(|_| ()))
            .map_err(|e| err("XFabric")(&e))?;
        let osa_runs = if socs < 256 { 5 } else { 1 };
        let osa = median_seconds(osa_runs, || osa_topology(&demand, PORTS, SEED).map(|_| ()))
            .map_err(|e| err("OSA")(&e))?;
        progress(&format!(
            "{socs} SoCs: XFabric {:.2} ms, OSA {:.1} ms, OSA / XFabric {:.0}",
            xfabric * 1e3,
            osa * 1e3,
            osa / xfabric
        ));
        pts.push((socs, xfabric, osa));
    }
    let fig = Figure {
        title: "XFabric Fig. 6(a): topology generation".into(),
        x: Axis::linear("Number of SoCs"),
        y: Axis::log("OSA time / XFabric time"),
        series: vec![Series::new(
            "OSA / XFabric",
            pts.iter().map(|&(n, x, o)| (n as f64, o / x)).collect(),
        )],
        kind: Kind::Lines,
    };
    emit(opts, fig, "xfabric-fig6a-generation", progress)?;

    let mut claims = Vec::new();
    let up_to_512 = pts.iter().filter(|p| p.0 <= 512);
    let worst = up_to_512.clone().map(|p| p.1).fold(0.0, f64::max);
    claims.push(Claim::new(
        FIG,
        "XFabric generation time, up to 512 SoCs",
        "< 700 ms",
        format!("{:.2} ms at most", worst * 1e3),
        "< 700 ms",
        worst < 0.7,
    ));
    // At 1,024 SoCs the paper gives numbers (about 3 s, 20.5 s, so a ratio of 6.8, "over 6
    // times"): each is compared two-sided, within a factor of 2 either way (fixed before the run;
    // timings on other hardware and code are not expected closer). The figure's shape is the
    // ratio; a quick run stops below 1,024 SoCs and leaves them not checked.
    const TOP: usize = 1024;
    let (xf_claim, osa_claim, ratio_claim) = (
        "XFabric generation time at 1,024 SoCs",
        "OSA generation time at 1,024 SoCs",
        "OSA / XFabric generation time at 1,024 SoCs",
    );
    match pts.iter().find(|p| p.0 == TOP) {
        Some(&(_, x, o)) => {
            claims.push(Claim::factor(
                FIG,
                xf_claim,
                "about 3 s",
                (3.0, x),
                format!("{:.2} ms", x * 1e3),
                2.0,
            ));
            claims.push(Claim::factor(
                FIG,
                osa_claim,
                "20.5 s",
                (20.5, o),
                format!("{o:.2} s"),
                2.0,
            ));
            claims.push(Claim::factor(
                FIG,
                ratio_claim,
                "6.8 (20.5 s / about 3 s; \"over 6 times\")",
                (20.5 / 3.0, o / x),
                format!("{:.0} ({o:.2} s vs {:.2} ms)", o / x, x * 1e3),
                2.0,
            ));
        }
        None => {
            let why = "1,024 SoCs was not run (quick)";
            claims.push(Claim::not_checked(FIG, xf_claim, "about 3 s", why));
            claims.push(Claim::not_checked(FIG, osa_claim, "20.5 s", why));
            claims.push(Claim::not_checked(FIG, ratio_claim, "6.8", why));
        }
    }
    Ok(claims)
}
