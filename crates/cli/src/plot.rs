//! `shoal plot`: a figure from any CSV with a header, e.g. a sweep's `sweep.csv`.

use anyhow::{Context, Result, bail};
use clap::Args;
use shoal_plot::{Axis, Figure, Kind, Series};
use std::path::PathBuf;
use std::process::ExitCode;

/// Plot columns of a CSV file against one of its columns, as SVG, PNG and a `series,x,y` CSV.
///
/// Made for the `sweep.csv` that `shoal run` writes for a sweep (its first column is the swept
/// key), but any CSV with a header row works. Empty cells are skipped (a sweep leaves a column
/// empty where a point has no value, e.g. no long flow completed).
#[derive(Args)]
#[command(
    after_help = "Examples:\n  shoal plot out/fig15-datacenter/sweep.csv --x workload.load \
    --y short_fct_mean_us --y short_fct_p99_us --ylabel 'FCT (µs)'\n  \
    shoal plot sweep.csv --x workload.load --y max_queue_cells --log-y --out fig16"
)]
pub struct PlotArgs {
    /// The CSV file.
    #[arg(value_name = "FILE.csv")]
    file: PathBuf,
    /// The column on the x axis.
    #[arg(long, value_name = "COLUMN")]
    x: String,
    /// A column to plot against it (repeat for several series, each column once).
    #[arg(long, value_name = "COLUMN", required = true)]
    y: Vec<String>,
    /// Label of the y axis [default: the y column when there is one].
    #[arg(long, value_name = "TEXT")]
    ylabel: Option<String>,
    /// Label of the x axis [default: the x column].
    #[arg(long, value_name = "TEXT")]
    xlabel: Option<String>,
    /// Title [default: the file name].
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// A logarithmic y axis (every y value must then be above 0).
    #[arg(long)]
    log_y: bool,
    /// Where to write: OUT.svg, OUT.png and OUT.csv [default: beside the file, named after
    /// the y columns].
    #[arg(long, value_name = "OUT")]
    out: Option<PathBuf>,
}

pub fn main(args: PlotArgs) -> Result<ExitCode> {
    // Two series of one column would be drawn on top of each other under one name.
    for (i, y) in args.y.iter().enumerate() {
        if args.y[..i].contains(y) {
            bail!("--y {y:?} is given twice");
        }
    }
    let shown = args.file.display().to_string();
    let mut reader =
        csv::Reader::from_path(&args.file).with_context(|| format!("cannot read {shown}"))?;
    let header = reader
        .headers()
        .with_context(|| format!("{shown}: no header row"))?
        .clone();
    if header.is_empty() {
        bail!("{shown}: the file is empty: it has no header row naming the columns");
    }
    let column = |name: &str| {
        header.iter().position(|h| h == name).with_context(|| {
            let known: Vec<&str> = header.iter().collect();
            format!("{shown}: no column {name:?}; columns: {}", known.join(", "))
        })
    };
    let xi = column(&args.x)?;
    let ys: Vec<usize> = args.y.iter().map(|y| column(y)).collect::<Result<_>>()?;
    let mut series: Vec<Series> = args.y.iter().map(|y| Series::new(y, Vec::new())).collect();
    for (row, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("{shown}:{}: unreadable row", row + 2))?;
        // The line the row starts on (a quoted cell may span lines).
        let line = record.position().map_or(row as u64 + 2, |p| p.line());
        // Checked here, where the file and line are known: the figure can only name the
        // series and the point's index.
        let number = |i: usize, name: &str| -> Result<Option<f64>> {
            let cell = record.get(i).unwrap_or("").trim();
            if cell.is_empty() {
                return Ok(None);
            }
            let value = cell.parse::<f64>().with_context(|| {
                format!("{shown}:{line}: column {name:?}: {cell:?} is not a number")
            })?;
            if !value.is_finite() {
                bail!("{shown}:{line}: column {name:?}: {cell:?} is not a finite number");
            }
            Ok(Some(value))
        };
        let Some(x) = number(xi, &args.x)? else {
            continue;
        };
        for ((s, &i), name) in series.iter_mut().zip(&ys).zip(&args.y) {
            if let Some(y) = number(i, name)? {
                if args.log_y && y <= 0.0 {
                    bail!(
                        "{shown}:{line}: column {name:?}: {y} cannot be shown on a log axis \
                         (--log-y needs values above 0)"
                    );
                }
                s.points.push((x, y));
            }
        }
    }
    if series.iter().all(|s| s.points.is_empty()) {
        bail!("{shown}: no row has a number in the columns to plot");
    }
    let stem = args.out.clone().unwrap_or_else(|| {
        let name = format!("plot-{}", args.y.join("-"));
        args.file.with_file_name(name)
    });
    let dir = stem.parent().map(PathBuf::from).unwrap_or_default();
    let file_stem = stem
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .context("--out names no file")?;
    // The folder is made here, so that an error names it and says what failed.
    if !dir.as_os_str().is_empty() {
        let (out, folder) = (stem.display(), dir.display());
        if dir.exists() && !dir.is_dir() {
            bail!("--out {out}: {folder} is not a folder");
        }
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("--out {out}: cannot create the folder {folder}"))?;
    }
    // The figure's CSV is OUT.csv: never the file it is drawn from.
    let same = |a: &std::path::Path, b: &std::path::Path| {
        a.canonicalize()
            .ok()
            .is_some_and(|a| b.canonicalize().ok() == Some(a))
    };
    let csv_out = dir.join(format!("{file_stem}.csv"));
    if same(&csv_out, &args.file) {
        bail!(
            "--out {}: the figure's data would be written to {}, the file it is drawn from; \
             choose another --out",
            stem.display(),
            csv_out.display()
        );
    }
    let ylabel = args.ylabel.clone().unwrap_or_else(|| args.y.join(", "));
    let y = if args.log_y {
        Axis::log(ylabel)
    } else {
        Axis::linear(ylabel)
    };
    let figure = Figure {
        title: args.title.clone().unwrap_or_else(|| shown.clone()),
        x: Axis::linear(args.xlabel.clone().unwrap_or_else(|| args.x.clone())),
        y,
        series,
        kind: Kind::Lines,
    };
    // The error's own message holds its cause: as a chain, anyhow would print the cause twice.
    let written = shoal_plot::write(&figure, &dir, &file_stem)
        .map_err(|e| anyhow::anyhow!("cannot write the figure: {e}"))?;
    println!(
        "wrote {}, {} and {}",
        written.svg.display(),
        written.png.display(),
        written.csv.display()
    );
    Ok(ExitCode::SUCCESS)
}
