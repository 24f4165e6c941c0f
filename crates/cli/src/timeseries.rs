//! A comparison's time series: what each run sampled (`run.sample_every_us`, its series.csv)
//! drawn over time, one series per scenario, so that queues and flows in progress can be
//! compared fabric by fabric, not only their summaries.

use crate::folder::Folder;
use anyhow::{Context, Result};
use shoal_plot::{Axis, Figure, Kind, Series};
use std::path::Path;

/// The columns drawn: series.csv's name, the figure's axis label.
const COLUMNS: [(&str, &str); 2] = [
    ("queued_bytes", "bytes queued in the fabric (as stored)"),
    ("active_flows", "flows in progress"),
];

/// One run's samples: (time in µs, one value per column of [`COLUMNS`]).
pub(crate) type Samples = Vec<(f64, [f64; 2])>;

/// `folder/series.csv`, or `None` when the run sampled nothing.
pub(crate) fn read(folder: &Path) -> Result<Option<Samples>> {
    let path = folder.join("series.csv");
    if !path.is_file() {
        return Ok(None);
    }
    let mut reader =
        csv::Reader::from_path(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let header = reader.headers()?.clone();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("{}: no column {name}", path.display()))
    };
    let time = column("time_ns")?;
    let drawn = [column(COLUMNS[0].0)?, column(COLUMNS[1].0)?];
    let mut samples = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let record = record?;
        let number = |i: usize| {
            record[i].parse::<f64>().with_context(|| {
                format!(
                    "{}: row {}: {:?} is not a number",
                    path.display(),
                    line + 2,
                    &record[i]
                )
            })
        };
        samples.push((number(time)? / 1e3, [number(drawn[0])?, number(drawn[1])?]));
    }
    Ok(Some(samples))
}

/// Draws `<column><suffix>` for each column, a series per named run that sampled.
pub(crate) fn figures(folder: &Folder, suffix: &str, runs: &[(String, Samples)]) -> Result<()> {
    if runs.is_empty() {
        return Ok(());
    }
    for (i, (column, label)) in COLUMNS.iter().enumerate() {
        let fig = Figure {
            title: String::new(),
            x: Axis::linear("simulated time (µs)"),
            y: Axis::linear(*label),
            series: runs
                .iter()
                .map(|(name, samples)| {
                    Series::new(
                        name.clone(),
                        samples.iter().map(|(t, v)| (*t, v[i])).collect(),
                    )
                })
                .collect(),
            kind: Kind::Curve,
        };
        let stem = format!("{column}{suffix}");
        shoal_plot::write(&fig, folder.path(), &stem)
            .map_err(|e| anyhow::anyhow!("{stem}: cannot write the figure: {e}"))?;
        for ext in ["svg", "png", "csv"] {
            folder.note(&format!("{stem}.{ext}"))?;
        }
    }
    Ok(())
}
