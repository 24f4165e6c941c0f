//! `shoal plot`: a figure from any CSV with a header, e.g. a sweep's `sweep.csv`.

use anyhow::{Context, Result, bail};
use clap::Args;
use shoal_plot::{Axis, Figure, Kind, Series};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Plot columns of CSV files against one of their columns, as SVG, PNG and a `series,x,y` CSV.
///
/// Made for the `sweep.csv` that `shoal run` writes for a sweep (its first column is the swept
/// key) and the `compare.csv` of `shoal compare`, but any CSV with a header row works. Empty
/// cells are skipped (a sweep leaves a column empty where a point has no value, e.g. no long
/// flow completed). Several files go on one figure: runs made apart (Shoal's sweep and a
/// comparison of its baselines) are drawn together, each file's rows split into series by
/// --series (a file without that column is one series, named after the file).
#[derive(Args)]
#[command(
    after_help = "Examples:\n  shoal plot out/fig15-datacenter/sweep.csv --x workload.load \
    --y short_fct_mean_us --y short_fct_p99_us --ylabel 'FCT (µs)'\n  \
    shoal plot sweep.csv --x workload.load --y max_queue_cells --log-y --out fig16\n  \
    shoal plot out/fig15-datacenter/sweep.csv out/compare/compare.csv --x workload.load \
    --y short_fct_p99_us --series fabric --rename sweep=shoal"
)]
pub struct PlotArgs {
    /// The CSV files (one or more; each must have the x and y columns).
    #[arg(value_name = "FILE.csv", required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// The column on the x axis.
    #[arg(long, value_name = "COLUMN")]
    x: String,
    /// A column to plot against it (repeat for several series, each column once).
    #[arg(long, value_name = "COLUMN", required = true)]
    y: Vec<String>,
    /// Split the rows into one series per value of this column (e.g. fabric or scenario); a
    /// file without it is one series named after the file's stem. Without it, each y column
    /// is a series (named after its file too when there are several files).
    #[arg(long, value_name = "COLUMN")]
    series: Option<String>,
    /// Show series NAME as TEXT in the legend (repeatable), e.g. --rename dctcp=DCTCP.
    #[arg(long, value_name = "NAME=TEXT")]
    rename: Vec<String>,
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
    let mut series: Vec<Series> = Vec::new();
    for file in &args.files {
        read_file(&args, file, &mut series)?;
    }
    if series.iter().all(|s| s.points.is_empty()) {
        bail!(
            "{}: no row has a number in the columns to plot",
            shown_files(&args.files)
        );
    }
    rename(&mut series, &args.rename)?;
    // A series with no value is named, not silently left out of the figure.
    for s in series.iter().filter(|s| s.points.is_empty()) {
        eprintln!("shoal plot: {}: no value to plot, not drawn", s.name);
    }
    series.retain(|s| !s.points.is_empty());
    let stem = args.out.clone().unwrap_or_else(|| {
        let name = format!("plot-{}", args.y.join("-"));
        args.files[0].with_file_name(name)
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
    let csv_out = dir.join(format!("{file_stem}.csv"));
    if let Some(input) = args
        .files
        .iter()
        .find(|f| crate::folder::same_file(&csv_out, f))
    {
        bail!(
            "--out {}: the figure's data would be written to {}, the file it is drawn from; \
             choose another --out",
            stem.display(),
            input.display()
        );
    }
    let ylabel = args.ylabel.clone().unwrap_or_else(|| args.y.join(", "));
    let y = if args.log_y {
        Axis::log(ylabel)
    } else {
        Axis::linear(ylabel)
    };
    let figure = Figure {
        title: args
            .title
            .clone()
            .unwrap_or_else(|| shown_files(&args.files)),
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

fn shown_files(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The series `name` in `all`, added (last) if new.
fn series_named<'a>(all: &'a mut Vec<Series>, name: &str) -> &'a mut Series {
    match all.iter().position(|s| s.name == name) {
        Some(i) => &mut all[i],
        None => {
            all.push(Series::new(name, Vec::new()));
            all.last_mut().expect("just pushed")
        }
    }
}

/// Adds the points of `file` to `series`: per row, the y columns against the x column, into
/// the series the row belongs to (see `PlotArgs::series`).
fn read_file(args: &PlotArgs, file: &Path, series: &mut Vec<Series>) -> Result<()> {
    let shown = file.display().to_string();
    let mut reader =
        csv::Reader::from_path(file).with_context(|| format!("cannot read {shown}"))?;
    let header = reader
        .headers()
        .with_context(|| format!("{shown}: no header row"))?
        .clone();
    if header.is_empty() {
        bail!("{shown}: the file is empty: it has no header row naming the columns");
    }
    let position = |name: &str| header.iter().position(|h| h == name);
    let column = |name: &str| {
        position(name).with_context(|| {
            let known: Vec<&str> = header.iter().collect();
            format!("{shown}: no column {name:?}; columns: {}", known.join(", "))
        })
    };
    let xi = column(&args.x)?;
    let ys: Vec<usize> = args.y.iter().map(|y| column(y)).collect::<Result<_>>()?;
    let split = args.series.as_deref().and_then(position);
    // What names a row's series when no column does: the file, if the figure has several.
    let stem = file
        .file_stem()
        .map_or_else(|| shown.clone(), |s| s.to_string_lossy().into_owned());
    let fixed = (args.series.is_some() || args.files.len() > 1).then_some(stem);
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
        let group = match split {
            Some(i) => Some(record.get(i).unwrap_or("").trim().to_owned()),
            None => fixed.clone(),
        };
        for (&i, name) in ys.iter().zip(&args.y) {
            let label = match &group {
                Some(g) if args.y.len() == 1 => g.clone(),
                Some(g) => format!("{g}: {name}"),
                None => name.clone(),
            };
            let s = series_named(series, &label);
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
    Ok(())
}

/// Applies the `--rename NAME=TEXT` settings; a NAME no series has is refused, naming those
/// there are.
fn rename(series: &mut [Series], settings: &[String]) -> Result<()> {
    for setting in settings {
        let Some((from, to)) = setting.split_once('=') else {
            bail!("--rename {setting:?}: expected NAME=TEXT, e.g. dctcp=DCTCP");
        };
        let names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
        let Some(s) = series.iter_mut().find(|s| s.name == from) else {
            bail!(
                "--rename {setting:?}: no series is named {from:?}; the series: {}",
                names.join(", ")
            );
        };
        s.name = to.to_owned();
    }
    Ok(())
}
