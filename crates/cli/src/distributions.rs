//! Beside a comparison's percentile tables, the distributions behind them: the CDF of the
//! short-flow FCT and the 99th-percentile slowdown against flow size, one series per fabric
//! (each flow's FCT over one reference fabric's ideal FCT for it, the same for every fabric,
//! so that a higher slowdown is a longer FCT: `Reference`),
//! read back from each run's flows.csv (so that runs kept by a resumed comparison, or run by
//! Slurm, are drawn like those just run).
//!
//! The flows are the ones the summary's statistics cover: started at or after
//! `run.measure_from_us`, completed; the CDF takes the short ones (at most
//! `SHORT_FLOW_MAX_BYTES`, as `short_fct_us` does), so its 99% point is the table's p99.

use crate::folder::Folder;
use anyhow::{Context, Result};
use shoal_metrics::{IdealFct, SHORT_FLOW_MAX_BYTES};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::Scenario;
use std::collections::BTreeMap;
use std::path::Path;

/// At most this many points per CDF: a run of a million flows draws as well with a thousand.
const CDF_POINTS: usize = 1000;

/// Size bins per decade of flow size.
const BINS_PER_DECADE: f64 = 4.0;

/// The measured, completed flows of one run.
pub(crate) struct RunFlows {
    /// Short flows' FCTs, µs, ascending.
    short_fct_us: Vec<f64>,
    /// (bytes, slowdown) of every flow whose ideal FCT is known.
    slowdowns: Vec<(u64, f64)>,
}

impl RunFlows {
    /// Adds the flows of `other` (another replication of the same run).
    pub(crate) fn pool(&mut self, other: RunFlows) {
        self.short_fct_us.extend(other.short_fct_us);
        self.short_fct_us.sort_by(f64::total_cmp);
        self.slowdowns.extend(other.slowdowns);
    }
}

/// The denominator of every fabric's slowdowns in one comparison: the ideal FCT of the ideal
/// output-queued switch when the comparison has one, else of its first scenario. Each
/// fabric's own ideal FCT (summary.json's `short_slowdown`) comes from a different model of
/// "alone on the idle fabric" (Shoal's a lower bound, the packet fabrics' the longest path
/// with full packets), so slowdowns over their own ideals do not compare across fabrics.
pub(crate) struct Reference {
    /// The scenario whose ideal FCT it is.
    pub name: String,
    ideal: IdealFct,
}

impl Reference {
    pub(crate) fn of(scenarios: &[&Scenario]) -> Result<Reference> {
        let Some(sc) = scenarios
            .iter()
            .find(|sc| sc.fabric_name() == "ideal-switch")
            .or(scenarios.first())
        else {
            anyhow::bail!("a comparison of no scenario has no reference ideal FCT");
        };
        Ok(Reference {
            name: sc.name.clone(),
            ideal: sc.ideal_fct()?,
        })
    }
}

/// Reads `folder/flows.csv`, written by the run of `sc`; slowdowns over `reference`.
pub(crate) fn read(sc: &Scenario, folder: &Path, reference: &Reference) -> Result<RunFlows> {
    let path = folder.join("flows.csv");
    let from = sc.limits.measure_from.map_or(0.0, |t| t.as_us_f64());
    let ideal = &reference.ideal;
    let mut reader =
        csv::Reader::from_path(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut short_fct_us = Vec::new();
    let mut slowdowns = Vec::new();
    for (line, record) in reader.deserialize::<FlowRow>().enumerate() {
        let row =
            record.with_context(|| format!("{}: row {}: not a flow", path.display(), line + 2))?;
        let Some(fct) = row.fct_us.filter(|_| row.start_us >= from) else {
            continue;
        };
        if row.bytes <= SHORT_FLOW_MAX_BYTES {
            short_fct_us.push(fct);
        }
        if let Some(alone) = ideal.ideal_fct(row.bytes).filter(|d| d.ps() > 0) {
            slowdowns.push((row.bytes, fct / alone.as_us_f64()));
        }
    }
    short_fct_us.sort_by(f64::total_cmp);
    Ok(RunFlows {
        short_fct_us,
        slowdowns,
    })
}

/// The columns of flows.csv this reads.
#[derive(serde::Deserialize)]
struct FlowRow {
    bytes: u64,
    start_us: f64,
    fct_us: Option<f64>,
}

/// The empirical CDF of `sorted` (ascending): the point (x_i, i/n) at each value, or, past
/// `max` values, at `max` ranks spread evenly from the first to the last.
pub(crate) fn cdf(sorted: &[f64], max: usize) -> Vec<(f64, f64)> {
    let n = sorted.len();
    let at = |i: usize| (sorted[i], (i + 1) as f64 / n as f64);
    if n <= max || max < 2 {
        return (0..n).map(at).collect();
    }
    (0..max).map(|k| at(k * (n - 1) / (max - 1))).collect()
}

/// The nearest-rank 99th percentile of slowdown in each size bin (`BINS_PER_DECADE` per
/// decade of bytes), at the bin's geometric centre, in size order.
pub(crate) fn p99_by_size(slowdowns: &[(u64, f64)]) -> Vec<(f64, f64)> {
    let mut bins: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    for &(bytes, s) in slowdowns.iter().filter(|(b, _)| *b > 0) {
        let bin = ((bytes as f64).log10() * BINS_PER_DECADE).floor() as i64;
        bins.entry(bin).or_default().push(s);
    }
    bins.into_iter()
        .map(|(bin, mut v)| {
            v.sort_by(f64::total_cmp);
            let rank = ((0.99 * v.len() as f64).ceil() as usize).clamp(1, v.len());
            let centre = 10f64.powf((bin as f64 + 0.5) / BINS_PER_DECADE);
            (centre, v[rank - 1])
        })
        .collect()
}

/// Draws `fct_cdf<suffix>` and `slowdown_by_size<suffix>` (SVG, PNG, CSV) into `folder`, a
/// series per named run that has flows to draw.
pub(crate) fn figures(
    folder: &Folder,
    suffix: &str,
    runs: &[(String, RunFlows)],
    reference: &Reference,
) -> Result<()> {
    let cdfs = runs
        .iter()
        .map(|(name, r)| Series::new(name.clone(), cdf(&r.short_fct_us, CDF_POINTS)));
    let cdf_figure = Figure {
        title: String::new(),
        x: Axis::log("short-flow FCT (µs)"),
        y: Axis::linear("fraction of short flows (CDF)").with_range(0.0, 1.0),
        series: cdfs.collect(),
        kind: Kind::Curve,
    };
    let by_size = runs
        .iter()
        .map(|(name, r)| Series::new(name.clone(), p99_by_size(&r.slowdowns)));
    let size_figure = Figure {
        title: String::new(),
        x: Axis::log("flow size (bytes)"),
        y: Axis::log(format!(
            "slowdown, 99th percentile (FCT / {}'s ideal FCT)",
            reference.name
        )),
        series: by_size.collect(),
        kind: Kind::Lines,
    };
    for (stem, mut fig) in [("fct_cdf", cdf_figure), ("slowdown_by_size", size_figure)] {
        let stem = format!("{stem}{suffix}");
        fig.series.retain(|s| !s.points.is_empty());
        if fig.series.is_empty() {
            eprintln!("shoal compare: {stem}: no run has completed flows to draw, no figure");
            continue;
        }
        shoal_plot::write(&fig, folder.path(), &stem)
            .map_err(|e| anyhow::anyhow!("{stem}: cannot write the figure: {e}"))?;
        for ext in ["svg", "png", "csv"] {
            folder.note(&format!("{stem}.{ext}"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cdf_rises_to_one_and_keeps_its_ends_when_thinned() {
        let values: Vec<f64> = (1..=5000).map(|i| i as f64 * 0.5).collect();
        let whole = cdf(&values, 10_000);
        assert_eq!(whole.len(), 5000);
        assert_eq!(whole[0], (0.5, 1.0 / 5000.0));
        let thin = cdf(&values, 100);
        assert_eq!(thin.len(), 100);
        assert_eq!(thin[0], whole[0]);
        assert_eq!(*thin.last().unwrap(), (2500.0, 1.0));
        assert!(thin.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        // Each thinned point lies on the full CDF.
        assert!(thin.iter().all(|p| whole.contains(p)));
        assert!(cdf(&[], 100).is_empty());
    }

    #[test]
    fn each_size_bin_gets_its_nearest_rank_p99() {
        // Bin [1000, 1778) bytes holds slowdowns 1..=200; bin [10^4.25, 10^4.5) holds one.
        let mut flows: Vec<(u64, f64)> = (1..=200).map(|i| (1000 + i, i as f64)).collect();
        flows.push((20_000, 7.0));
        let bins = p99_by_size(&flows);
        assert_eq!(bins.len(), 2);
        // Rank ceil(0.99 · 200) = 198.
        assert_eq!(bins[0].1, 198.0);
        assert!((bins[0].0 - 10f64.powf(3.125)).abs() < 1e-9);
        assert_eq!(bins[1].1, 7.0);
        assert!(bins[1].0 > 10f64.powf(4.25) && bins[1].0 < 10f64.powf(4.5));
    }
}
