//! Stardust Fig. 10(a) (§6.3, App. G): a permutation on htsim's 432-node fat-tree (k = 12,
//! 10 Gb/s), TCP NewReno over Stardust against the packet baselines on the same network. The
//! paper: Stardust's mean utilisation 94%, "9.44Gbps on 96% of flows"; DCTCP 49%, DCQCN 47%,
//! MPTCP 90%.
//!
//! Stardust runs `scenarios/stardust-fig10a.toml`; DCTCP runs
//! `scenarios/htsim-dctcp-permutation.toml` (htsim's own example), DCQCN
//! `scenarios/stardust-fig10a-dcqcn.toml` and MPTCP `scenarios/stardust-fig10a-mptcp.toml`, for
//! the same warm-up and measured time. Full scale: k = 12, 2 ms of warm-up and 8 ms measured.
//! Quick: k = 6 (54 hosts), 1 ms and 2 ms. DCQCN and MPTCP are claimed over htsim's span
//! instead, from its 30 ms sample to 210 ms (quick: 30 to 60 ms), and their common-span figure
//! is shown beside it: every flow starts at once at t = 0, and both converge from that start
//! for tens of milliseconds (DCQCN recovers from the start's cuts by additive increase alone,
//! R_AI per 55 us timer, since hyper increase needs five 10 MB byte counts; LIA grows a
//! connection by a segment over its 8 subflows per round trip), so 2-10 ms measures the start,
//! not the permutation htsim's runs measured (see docs/results/stardust.md). Claims, fixed
//! before the first run:
//! - Stardust's mean utilisation 0.94 ± 0.02;
//! - the share of Stardust's flows at 9.44 Gb/s or within 1% under it, 0.96 ± 0.04;
//! - DCTCP's mean utilisation 0.49 ± 0.05 (htsim's example, which the paper reran);
//! - DCQCN's mean utilisation 0.47 ± 0.05 (over htsim's span);
//! - MPTCP's mean utilisation 0.90 ± 0.05 (over htsim's span; 8 subflows under LIA, each on its
//!   own path).

use crate::experiments::stardust_fig9::{set, within};
use crate::{Claim, Options, ReproError};
use shoal_fabric::{NoProgress, RunOutput};
use shoal_scenario::Scenario;
use toml::Value;

const FIG: &str = "Stardust Fig. 10(a)";
const STARDUST: &str = include_str!("../../../../scenarios/stardust-fig10a.toml");
const DCTCP: &str = include_str!("../../../../scenarios/htsim-dctcp-permutation.toml");
const DCQCN: &str = include_str!("../../../../scenarios/stardust-fig10a-dcqcn.toml");
const MPTCP: &str = include_str!("../../../../scenarios/stardust-fig10a-mptcp.toml");
const LINE_BPS: f64 = 10e9;
const MEAN: (f64, f64) = (0.94, 0.02);
const FLOW_RATE_BPS: f64 = 9.44e9;
const FLOW_SHARE: (f64, f64) = (0.96, 0.04);
const DCTCP_MEAN: (f64, f64) = (0.49, 0.05);
const DCQCN_MEAN: (f64, f64) = (0.47, 0.05);
const MPTCP_MEAN: (f64, f64) = (0.90, 0.05);
/// Where htsim's span starts: the DCTCP example's first rate sample counted (`measure_from_us` of
/// `htsim-dctcp-permutation.toml`).
const HTSIM_FROM_US: f64 = 30_000.0;

/// Per-flow utilisation over the measured window.
fn utilisations(s: &Scenario, out: &RunOutput) -> Result<Vec<f64>, ReproError> {
    let from = s.limits.measure_from.map_or(0, |t| t.0);
    let until = s
        .limits
        .until
        .ok_or_else(|| ReproError("the scenarios need run.until_us".into()))?;
    let secs = (until.0 - from) as f64 / 1e12;
    Ok(out
        .measured_flow_bytes
        .iter()
        .map(|&b| b as f64 * 8.0 / secs / LINE_BPS)
        .collect())
}

fn run_one(s: &Scenario) -> Result<Vec<f64>, ReproError> {
    let mut fabric = s.build_fabric().map_err(|e| ReproError(e.to_string()))?;
    let (mut flows, _) = s.source().map_err(|e| ReproError(e.to_string()))?;
    let out = fabric
        .run(flows.as_mut(), s.limits, &mut NoProgress)
        .map_err(|e| ReproError(e.to_string()))?;
    utilisations(s, &out)
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len().max(1) as f64
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let parse = |text: &str, name: &str| {
        shoal_scenario::parse(text, name).map_err(|e| ReproError(e.to_string()))
    };
    let mut stardust = parse(STARDUST, "scenarios/stardust-fig10a.toml")?;
    let mut dctcp = parse(DCTCP, "scenarios/htsim-dctcp-permutation.toml")?;
    let mut dcqcn = parse(DCQCN, "scenarios/stardust-fig10a-dcqcn.toml")?;
    let mut mptcp = parse(MPTCP, "scenarios/stardust-fig10a-mptcp.toml")?;
    let (k, from, until, htsim_until) = if opts.quick {
        (6, 1000.0, 3000.0, 60_000.0)
    } else {
        (12, 2000.0, 10000.0, 210_000.0)
    };
    let pairs = Value::Integer(k * k * k / 4);
    let window = [
        ("run.measure_from_us", Value::Float(from)),
        ("run.until_us", Value::Float(until)),
        ("workload.pairs", pairs),
    ];
    stardust = set(&stardust, &window)?;
    stardust = set(&stardust, &[("stardust.k", Value::Integer(k))])?;
    dctcp = set(&dctcp, &window)?;
    dctcp = set(&dctcp, &[("network.k", Value::Integer(k))])?;
    dcqcn = set(&dcqcn, &window)?;
    dcqcn = set(&dcqcn, &[("network.k", Value::Integer(k))])?;
    mptcp = set(&mptcp, &window)?;
    mptcp = set(&mptcp, &[("network.k", Value::Integer(k))])?;

    let ours = run_one(&stardust)?;
    let theirs = run_one(&dctcp)?;
    let htsim_span = [
        ("run.measure_from_us", Value::Float(HTSIM_FROM_US)),
        ("run.until_us", Value::Float(htsim_until)),
    ];
    let (q_start, q) = (
        mean(&run_one(&dcqcn)?),
        mean(&run_one(&set(&dcqcn, &htsim_span)?)?),
    );
    let (mp_start, mp) = (
        mean(&run_one(&mptcp)?),
        mean(&run_one(&set(&mptcp, &htsim_span)?)?),
    );
    let spans = |long: f64, start: f64| {
        format!(
            "{:.1}% over {:.0}-{:.0} ms ({:.1}% over {:.0}-{:.0} ms)",
            100.0 * long,
            HTSIM_FROM_US / 1e3,
            htsim_until / 1e3,
            100.0 * start,
            from / 1e3,
            until / 1e3
        )
    };
    let floor = FLOW_RATE_BPS * 0.99 / LINE_BPS;
    let at_rate = ours.iter().filter(|&&u| u >= floor).count() as f64 / ours.len().max(1) as f64;
    let (m, d) = (mean(&ours), mean(&theirs));
    let least = ours.iter().cloned().fold(f64::INFINITY, f64::min);
    progress(&format!(
        "k = {k}, {} flows, {from}-{until} us: Stardust mean {m:.4} (least \
         {least:.4}, {at_rate:.3} at >= {:.2} Gb/s), DCTCP mean {d:.4}, over {HTSIM_FROM_US}-{htsim_until} us DCQCN mean {q:.4} and \
         MPTCP mean {mp:.4} ({q_start:.4} and {mp_start:.4} over the common span)",
        ours.len(),
        floor * 10.0
    ));
    let measured = format!(
        "mean {:.1}%, least flow {:.1}%, {:.1}% of flows at >= {:.2} Gb/s over {from}-{until} us \
         at k = {k}",
        100.0 * m,
        100.0 * least,
        100.0 * at_rate,
        floor * 10.0
    );
    let short = if m < MEAN.0 {
        format!(
            "{measured}: a 10 Gb/s link carries at most 9.47 Gb/s of payload after our 16 B cell \
             headers and 64 B credit cells and there is no speed-up, so FCI holds every port \
             below that ceiling and TCP loses more on top; the paper's 9.44 Gb/s sits just under \
             it (docs/results/stardust.md, 'What held Stardust at 57%, measured')"
        )
    } else {
        format!("{measured}; the cause is not yet known")
    };
    let paths = (k * k / 4) as u64;
    let mp_why = if mp > MPTCP_MEAN.0 {
        format!(
            "{:.1}% at k = {k}, where a pair in different pods has (k/2)² = {paths} shortest \
             paths for its 8 subflows, each pinned to one of its own (docs/results/stardust.md, \
             'Fig. 10(a)')",
            100.0 * mp
        )
    } else {
        format!(
            "{:.1}% at k = {k} over htsim's span; the cause is not yet known",
            100.0 * mp
        )
    };
    Ok(vec![
        Claim::new(
            FIG,
            "TCP over Stardust: mean utilisation of a permutation",
            "94%",
            format!("{:.1}%", 100.0 * m),
            format!("± {} points", 100.0 * MEAN.1),
            within(m, MEAN),
        )
        .because(short.clone()),
        Claim::new(
            FIG,
            "TCP over Stardust: flows at 9.44 Gb/s",
            "96% of flows",
            format!(
                "{:.1}% of flows at >= {:.2} Gb/s",
                100.0 * at_rate,
                floor * 10.0
            ),
            format!("± {} points", 100.0 * FLOW_SHARE.1),
            within(at_rate, FLOW_SHARE),
        )
        .because(short),
        Claim::new(
            FIG,
            "DCTCP (packet engine, htsim's example): mean utilisation",
            "49%",
            format!("{:.1}%", 100.0 * d),
            format!("± {} points", 100.0 * DCTCP_MEAN.1),
            within(d, DCTCP_MEAN),
        ),
        Claim::new(
            FIG,
            "DCQCN (packet engine, over htsim's span from 30 ms): mean utilisation",
            "47%",
            spans(q, q_start),
            format!("± {} points", 100.0 * DCQCN_MEAN.1),
            within(q, DCQCN_MEAN),
        ),
        Claim::new(
            FIG,
            "MPTCP (packet engine, 8 subflows, LIA, over htsim's span from 30 ms): mean utilisation",
            "90%",
            spans(mp, mp_start),
            format!("± {} points", 100.0 * MPTCP_MEAN.1),
            within(mp, MPTCP_MEAN),
        )
        .because(mp_why),
    ])
}
