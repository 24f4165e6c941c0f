//! Stardust Fig. 9 (§6.2): the two-tier fabric with two long-running flows from every adapter
//! to every other, at fabric utilisations 0.5 to 0.95 and an oversubscribed 1.2. The paper:
//! the traversal latency is tight, "even at 95% utilization ... bound by 13 microseconds"; the
//! last stage's queue "is an exponential function of fabric utilization, conforming to the
//! theoretical M/D/1 model" (§4.3 calls that model the worst case); FCI reduces the 120% case
//! to an effective utilisation of 0.9; "in all runs no cells were lost". §6.2 sizes the
//! element memory at 128 cells per link.
//!
//! Full scale: `scenarios/stardust-fig9.toml` (256 adapters x 32 links, 128 + 64 elements,
//! 130,560 flows, 200 us of warm-up and 1 ms measured per point). A point takes from about 25
//! minutes of CPU (u = 0.5) to about twice that (1.2), more than a working session for all
//! seven, so `--scale "utilisations=0.95,1.2"` runs some of the figure's points: each claim is
//! checked on the points it needs and says "not checked" without them. Quick mode: the same shape
//! at an eighth of the adapters and a quarter of the links (32 adapters x 8 links in two pods,
//! 16 + 16 elements, 1,984 flows, 100 us of warm-up and 200 us measured). Same claims.
//!
//! The utilisation u is set at the edge: each adapter's one host port runs at u times the
//! adapter's data capacity into the fabric, after cell headers and credit cells (the scenario
//! file works it out). The last stage's queue is read against two M/D/1 queues: at u (the
//! paper's axis) and at the share of the last stage's link time actually taken, which is
//! §4.3's bound: data cells as they go on the wire (header and payload: the last cell of a
//! burst is shorter) and the 64 B control cells (credits, and statuses of VOQs turning on and
//! off) that share the links ahead of the data. Until session 21 the load counted data cells
//! whole and no control cell. The queue is the data cells an arriving data cell finds, the one
//! being sent counted: what M/D/1's embedded chain gives (`md1_distribution`). The
//! claims were fixed before the first run:
//! - traversal at u = 0.95: the longest measured ≤ 13 us;
//! - at every u < 1: the measured P(queue ≥ k) at most 1.2 times the M/D/1 bound's at every k
//!   where that bound is at least 1e-3 (the 20% is sampling error at ~10^3 samples in the
//!   tail and more);
//! - the tail grows with the utilisation: P(queue ≥ 2) strictly increases from u to u;
//! - no queue above §6.2's 128 cells per link at any u < 1;
//! - at 1.2: the effective utilisation 0.9 ± 0.05;
//! - no cell lost, dropped or given up in any run.

use crate::at_once;
use crate::plot::emit;
use crate::point;
use crate::scale::Settings;
use crate::{Claim, Options, ReproError, ScaleSpec};
use shoal_fabric::{Fabric, NoProgress, RunOutput};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::Scenario;
use shoal_stardust::models::{md1_distribution, tail};
use shoal_stardust::observe::{NEAR, Stage, WINDOWS};
use shoal_stardust::{Observations, Stardust, StardustSpec};
use toml::Value;

const FIG: &str = "Stardust Fig. 9";
const UTILISATIONS: [f64; 7] = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.2];
/// §6.2: element memory of 128 cells per link.
const CELLS_PER_LINK: u64 = 128;
/// The M/D/1 bound is compared where its tail is at least this.
const TAIL_FLOOR: f64 = 1e-3;
const BOUND_SLACK: f64 = 1.2;

/// One utilisation's results.
struct Point {
    u: f64,
    obs: Observations,
    out: RunOutput,
    /// Cells per cell time the last stage carried, each counted as a full cell.
    rho_cells: f64,
    /// The share of the last stage's link time taken: the data cells (header and payload, as
    /// they go on the wire) and the control cells (credits, statuses) that go ahead of them.
    rho_link: f64,
    /// Data payload the last stage carried over its data capacity (the paper's utilisation).
    u_eff: f64,
}

/// An adapter's capacity for data into the fabric, b/s: its links at the link rate, less the
/// cell headers, less a credit cell for every credit's worth of data cells (§6.2: "after
/// deducting ... cell headers and control cell overheads").
pub(crate) fn link_data_bps(spec: &StardustSpec) -> f64 {
    let a = &spec.adapter;
    let payload = a.cell_payload() as f64;
    let per_credit = a.credit_bytes as f64 / payload * a.cell_bytes as f64;
    spec.link_rate.0 as f64 * payload
        / a.cell_bytes as f64
        / (1.0 + a.control_bytes as f64 / per_credit)
}

/// Whether `x` is within `tol` of `centre`, edges included (a share of exactly 100% is within
/// 4 points of 96%, which `1.0 - 0.96` in binary floating point is not).
pub(crate) fn within(x: f64, (centre, tol): (f64, f64)) -> bool {
    (x - centre).abs() <= tol + 1e-9
}

pub(crate) fn set(s: &Scenario, settings: &[(&str, Value)]) -> Result<Scenario, ReproError> {
    s.with_settings(settings)
        .map_err(|e| ReproError(e.to_string()))
}

pub(crate) fn spec(s: &Scenario) -> Result<&StardustSpec, ReproError> {
    s.spec::<StardustSpec>()
        .ok_or_else(|| ReproError("the scenario is not a Stardust fabric".into()))
}

fn run_point(base: &Scenario, u: f64) -> Result<Point, ReproError> {
    let b = spec(base)?;
    let links = b
        .topology()
        .map_err(|e| ReproError(e.to_string()))?
        .ports(0) as f64;
    let port_gbps = u * links * link_data_bps(b) / 1e9;
    let s = set(base, &[("stardust.port_gbps", Value::Float(port_gbps))])?;
    let spec = spec(&s)?;
    let net = spec.network().map_err(|e| ReproError(e.to_string()))?;
    let mut fabric = Stardust::new(net);
    let (mut flows, _) = s.source().map_err(|e| ReproError(e.to_string()))?;
    let out = fabric
        .run(flows.as_mut(), s.limits, &mut NoProgress)
        .map_err(|e| ReproError(e.to_string()))?;
    let obs = fabric.observations().clone();
    let secs = obs.window().0 as f64 / 1e12;
    let n = obs.last_stage_links as f64;
    let cell_s = spec.adapter.cell_bytes as f64 * 8.0 / spec.link_rate.0 as f64;
    let rho_cells = obs.last_stage_cells as f64 * cell_s / (n * secs);
    let a = &spec.adapter;
    let wire_bytes = obs.last_stage_cells as f64 * a.cell_header_bytes as f64
        + obs.last_stage_payload as f64
        + obs.last_stage_control as f64 * a.control_bytes as f64;
    let rho_link = wire_bytes * 8.0 / (spec.link_rate.0 as f64 * n * secs);
    let u_eff = obs.last_stage_payload as f64 * 8.0 / (n * link_data_bps(spec) * secs);
    Ok(Point {
        u,
        obs,
        out,
        rho_cells,
        rho_link,
        u_eff,
    })
}

/// The quick version's network and run: 32 adapters x 8 links in two pods, 16 + 16 elements,
/// two flows between every pair, 100 us of warm-up and 200 us measured.
pub(crate) fn quick_settings() -> Vec<(&'static str, Value)> {
    let fas = 32i64;
    vec![
        ("stardust.fas", Value::Integer(fas)),
        ("stardust.fas_per_pod", Value::Integer(16)),
        ("stardust.fe1_per_pod", Value::Integer(8)),
        ("stardust.fe2", Value::Integer(16)),
        ("workload.flows", Value::Integer(2 * fas * (fas - 1))),
        ("run.measure_from_us", Value::Float(100.0)),
        ("run.until_us", Value::Float(300.0)),
    ]
}

/// Counters that must stay zero in a lossless run.
pub(crate) const LOSSES: [&str; 6] = [
    "fe_drops",
    "lost_cells",
    "late_cells",
    "reassembly_drops",
    "unroutable_cells",
    "ingress_drops",
];

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let mut base = point::scenario("stardust-fig9")?;
    if opts.quick {
        base = set(&base, &quick_settings())?;
    }
    // Quick mode's scale is fixed (`Options::scale`).
    let us = if opts.quick {
        UTILISATIONS.to_vec()
    } else {
        utilisations(opts.scale.as_deref())?
    };
    // Each point is its own simulation from the same scenario: with `--threads` they run at
    // once, and the results do not depend on it.
    let pts = at_once::map(
        &us,
        opts.threads,
        |&u| {
            let p = run_point(&base, u)?;
            let line = point_line(u, &p);
            Ok((p, line))
        },
        progress,
    )?;
    plot(opts, &pts, progress)?;
    Ok(claims(&pts))
}

/// A point's progress line: what the claims read from it (P(Q>=2) for the rising tail), so
/// that points run in separate groups can still be read together, then its stages' lines.
fn point_line(u: f64, p: &Point) -> String {
    let t = &p.obs.traversal;
    let us = |q: f64| t.quantile(q).map_or(f64::NAN, |d| d.as_us_f64());
    format!(
        "u {u}: carried {:.3} (cells {:.3}, with control cells {:.3}), traversal p50 {:.2} us p99.99 \
         {:.2} us max {:.2} us, last-stage P(Q>=2) {:.2e} P(Q>=8) {:.2e}, max queue {}, FCI marks {}, \
         pauses {}, {} cells measured, losses {:?}",
        p.u_eff,
        p.rho_cells,
        p.rho_link,
        us(0.5),
        us(0.9999),
        t.max().map_or(f64::NAN, |d| d.as_us_f64()),
        p.obs.queue_tail(2),
        p.obs.queue_tail(8),
        p.obs.last_stage_queue.len().saturating_sub(1),
        p.out.counters["fe_fci_marked"],
        p.out.counters["fe_pauses"],
        p.obs.last_stage_cells,
        LOSSES.map(|k| p.out.counters[k]),
    ) + &stage_lines(&p.obs)
}

/// Per stage of element outputs, and for the last stage's outputs into one adapter taken
/// together: the arrivals' variance-to-mean ratio over windows of 1, 4, 16 and 64 cell times
/// (Poisson arrivals, which M/D/1 assumes, give 1 at each), how often two or more cells enter
/// in one cell time against Poisson at the same rate, how often a cell follows one of its own
/// source adapter, the longest queue found and the FCI marks set (in the window, and before
/// it).
fn stage_lines(obs: &Observations) -> String {
    let mut out = String::new();
    let adapters = (
        format!(
            "1->0 into one adapter ({} adapters)",
            obs.into_adapters.links
        ),
        &obs.into_adapters,
    );
    let stages = obs
        .stages
        .iter()
        .map(|s| (format!("{} ({} outputs)", s.name(), s.links), s));
    for (name, s) in stages.chain([adapters]) {
        let d: Vec<String> = (0..WINDOWS.len())
            .map(|i| format!("{:.2}", s.dispersion(i)))
            .collect();
        let lambda = s.mean(0);
        let share = |n: u64| 100.0 * n as f64 / s.cells.max(1) as f64;
        out += &format!(
            "\n  stage {name}: {} cells, {lambda:.3} per cell time; variance/mean over {} cell \
             times {} (Poisson 1); P(>= 2 in a cell time) {:.2e} (Poisson {:.2e}); after a cell \
             of the same source {:.2}% (within {NEAR} cell times {:.2}%); longest queue {}; FCI \
             marks {} (before the window {})",
            s.cells,
            WINDOWS.map(|w| w.to_string()).join(", "),
            d.join(" "),
            s.per_slot().iter().skip(2).sum::<f64>(),
            1.0 - (-lambda).exp() * (1.0 + lambda),
            share(s.same_source),
            share(s.same_source_near),
            s.longest,
            s.fci_marked,
            s.fci_marked_before,
        );
    }
    out
}

/// Why the last stage's queue exceeds M/D/1's: its arrivals, measured, against Poisson's.
fn burstier(obs: &Observations) -> String {
    let d = |s: &Stage| {
        (0..WINDOWS.len())
            .map(|i| format!("{:.2}", s.dispersion(i)))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let last = obs.stages.last().map_or_else(
        || "not measured".to_owned(),
        |s| {
            format!(
                "{} ({:.1}% of its cells after one of their own source)",
                d(s),
                100.0 * s.same_source as f64 / s.cells.max(1) as f64
            )
        },
    );
    format!(
        "the last stage's arrivals are burstier than M/D/1's Poisson ones (variance/mean 1 at \
         every window): over {} cell times {last} on one link, {} into one adapter: a credit's \
         cells cross the fabric together and every element sprays them independently \
         (docs/results/stardust.md, 'What makes the last stage burstier than M/D/1')",
        WINDOWS.map(|w| w.to_string()).join(" / "),
        d(&obs.into_adapters)
    )
}

/// The `--scale` settings stardust-fig9 takes.
pub(crate) const SCALE: ScaleSpec = ScaleSpec {
    keys: &["utilisations"],
    check: |text| utilisations(Some(text)).map(drop),
};

/// The points to run: the figure's, or those of them `settings` names (in the figure's order).
/// Only the figure's points are taken: the claims are made at them.
fn utilisations(settings: Option<&str>) -> Result<Vec<f64>, ReproError> {
    let Some(text) = settings else {
        return Ok(UTILISATIONS.to_vec());
    };
    let set = Settings::new(text, SCALE.keys);
    let mut chosen = UTILISATIONS.to_vec();
    for (key, value) in set.pairs()? {
        let asked = set.list(key, value)?;
        if let Some(u) = asked.iter().find(|u| !UTILISATIONS.contains(u)) {
            return Err(set.bad(&format!(
                "{key}: {u} is not one of the figure's points ({})",
                UTILISATIONS.map(|u| u.to_string()).join(", ")
            )));
        }
        chosen.retain(|u| asked.contains(u));
    }
    Ok(chosen)
}

/// What a claim over every point below 1 says when the run had only some of them.
fn missing_points(under: &[&Point]) -> Option<String> {
    let all = UTILISATIONS.iter().filter(|&&u| u < 1.0).count();
    (under.len() < all).then(|| {
        let had: Vec<String> = under.iter().map(|p| p.u.to_string()).collect();
        format!(
            "not checked: needs u = 0.5 to 0.95, this run had {}",
            if had.is_empty() {
                "none".to_owned()
            } else {
                had.join(", ")
            }
        )
    })
}

fn claims(pts: &[Point]) -> Vec<Claim> {
    let mut claims = Vec::new();
    let under: Vec<&Point> = pts.iter().filter(|p| p.u < 1.0).collect();

    match pts.iter().find(|p| p.u == 0.95) {
        Some(p) => {
            let max = p.obs.traversal.max().map(|d| d.as_us_f64());
            claims.push(Claim::new(
                FIG,
                "traversal latency at 95% utilisation bound by 13 us (longest cell measured)",
                "<= 13 us",
                max.map_or("no cell".into(), |m| format!("{m:.2} us")),
                "<= 13 us",
                max.is_some_and(|m| m <= 13.0),
            ));
        }
        None => claims.push(Claim::new(
            FIG,
            "traversal latency at 95% utilisation bound by 13 us",
            "<= 13 us",
            "not checked",
            "<= 13 us",
            false,
        )),
    }

    for p in &under {
        let bound = md1_distribution(p.rho_link.min(0.9999), 2000);
        let nominal = md1_distribution(p.u, 2000);
        let mut worst = 0.0f64;
        let mut at = 0;
        let mut k = 1;
        // Within the distribution computed: near rho = 1 its tail beyond is still above the
        // floor, and `tail` reads the rest as one value.
        while k < bound.len() && tail(&bound, k) >= TAIL_FLOOR {
            let r = p.obs.queue_tail(k) / tail(&bound, k);
            if r > worst {
                worst = r;
                at = k;
            }
            k += 1;
        }
        let k_nom = (1..2000)
            .find(|&k| tail(&nominal, k) < TAIL_FLOOR)
            .unwrap_or(0);
        claims.push(
            Claim::new(
                FIG,
                &format!(
                    "last-stage queue at utilisation {} within the M/D/1 bound (§4.3) at the load \
                 carried (the links' time taken by data cells, each a full cell, and by the \
                 control cells ahead of them; queue: data cells an arriving data cell finds, the \
                 one in service counted), wherever the bound's tail is >= 1e-3",
                    p.u
                ),
                "M/D/1 is the worst case",
                format!(
                    "largest ratio {worst:.2} (at {at} cells) against M/D/1 at {:.3} of the \
                 links' time ({:.3} counting data cells whole, control cells left out); \
                 P(Q >= {k_nom}) = {:.2e} vs M/D/1 at u: {:.2e}",
                    p.rho_link,
                    p.rho_cells,
                    p.obs.queue_tail(k_nom),
                    tail(&nominal, k_nom)
                ),
                format!("ratio <= {BOUND_SLACK}"),
                k > 1 && worst <= BOUND_SLACK,
            )
            .because(burstier(&p.obs)),
        );
    }

    let missing = missing_points(&under);
    let tails: Vec<f64> = under.iter().map(|p| p.obs.queue_tail(2)).collect();
    let rising = missing.is_none() && tails.windows(2).all(|w| w[1] > w[0]);
    claims.push(Claim::new(
        FIG,
        "the last-stage queue's tail grows with the utilisation (P(Q >= 2), u = 0.5 to 0.95)",
        "exponential in the utilisation",
        missing.clone().unwrap_or_else(|| {
            tails
                .iter()
                .map(|t| format!("{t:.2e}"))
                .collect::<Vec<_>>()
                .join(", ")
        }),
        "strictly increasing",
        rising,
    ));

    let longest = under
        .iter()
        .map(|p| p.obs.last_stage_queue.len().saturating_sub(1) as u64)
        .max();
    claims.push(Claim::new(
        FIG,
        "§6.2: 128 cells per link hold the last stage's queue at every utilisation below 1",
        "<= 128 cells",
        match (&missing, longest) {
            (None, Some(m)) => format!("{m} cells"),
            (Some(why), Some(m)) => format!("{why} (longest {m} cells)"),
            (Some(why), None) => why.clone(),
            (None, None) => "not checked".into(),
        },
        "<= 128 cells",
        missing.is_none() && longest.is_some_and(|m| m <= CELLS_PER_LINK),
    ));

    let over = pts.iter().find(|p| p.u > 1.0);
    claims.push(Claim::new(
        FIG,
        "oversubscribed 120%: FCI holds the effective utilisation at 0.9",
        "0.9",
        over.map_or("not checked".into(), |p| format!("{:.3}", p.u_eff)),
        "±0.05",
        over.is_some_and(|p| (p.u_eff - 0.9).abs() <= 0.05),
    ));

    let lost: u64 = pts
        .iter()
        .map(|p| LOSSES.iter().map(|k| p.out.counters[*k]).sum::<u64>())
        .sum();
    claims.push(Claim::new(
        FIG,
        "no cell lost in the fabric in any run (drops, losses, reassembly give-ups)",
        "0",
        if pts.len() == UTILISATIONS.len() {
            format!("{lost}")
        } else {
            format!(
                "not checked: needs every point, this run had {} ({lost} lost)",
                pts.iter()
                    .map(|p| p.u.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        "exact",
        pts.len() == UTILISATIONS.len() && lost == 0,
    ));
    claims
}

fn plot(opts: &Options, pts: &[Point], progress: &mut dyn FnMut(&str)) -> Result<(), ReproError> {
    let quantiles = [
        0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 0.9999,
        0.99999, 1.0,
    ];
    let latency: Vec<Series> = pts
        .iter()
        .map(|p| {
            let pts = quantiles
                .iter()
                .filter_map(|&q| {
                    let d = p.obs.traversal.quantile(q)?;
                    Some((d.as_us_f64(), (1.0 - q).max(1e-6)))
                })
                .collect();
            Series::new(format!("utilisation {}", p.u), pts)
        })
        .collect();
    emit(
        opts,
        Figure {
            title: "Fabric traversal latency of cells (Stardust Fig. 9, left)".into(),
            x: Axis::linear("Traversal latency (us)"),
            y: Axis::log("P(latency >= x)"),
            series: latency,
            kind: Kind::Lines,
        },
        "stardust-fig9-latency",
        progress,
    )?;
    let mut queue = Vec::new();
    for p in pts {
        let measured: Vec<(f64, f64)> = (0..p.obs.last_stage_queue.len())
            .map(|k| (k as f64, p.obs.queue_tail(k)))
            .filter(|&(_, t)| t > 0.0)
            .collect();
        queue.push(Series::new(format!("measured, u = {}", p.u), measured));
        if p.u < 1.0 {
            let d = md1_distribution(p.u, 200);
            let model = (0..=200)
                .map(|k| (k as f64, tail(&d, k)))
                .filter(|&(_, t)| t > 1e-7)
                .collect();
            queue.push(Series::new(format!("M/D/1, u = {}", p.u), model));
        }
    }
    emit(
        opts,
        Figure {
            title: "Last-stage queue size (Stardust Fig. 9, right) against M/D/1".into(),
            x: Axis::linear("Queue size (cells, found by an arriving cell)"),
            y: Axis::log("P(queue >= x)"),
            series: queue,
            kind: Kind::Lines,
        },
        "stardust-fig9-queue",
        progress,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_picks_some_of_the_figures_points_in_its_order_and_refuses_others() {
        assert_eq!(utilisations(None).unwrap(), UTILISATIONS.to_vec());
        assert_eq!(
            utilisations(Some("utilisations=1.2,0.95")).unwrap(),
            vec![0.95, 1.2]
        );
        let err = utilisations(Some("utilisations=0.85")).unwrap_err();
        assert!(
            err.0.contains("0.85 is not one of the figure's points"),
            "{}",
            err.0
        );
        let err = utilisations(Some("points=0.5")).unwrap_err();
        assert!(err.0.contains("unknown key \"points\""), "{}", err.0);
    }

    #[test]
    fn claims_without_their_points_say_not_checked_and_fail() {
        let claims = claims(&[]);
        assert!(!claims.is_empty());
        for c in &claims {
            assert!(!c.pass(), "{c:?}");
            assert!(c.ours.starts_with("not checked"), "{c:?}");
        }
    }
}
