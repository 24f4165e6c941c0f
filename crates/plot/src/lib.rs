//! Figures out: turns one figure's data into `stem.svg`, `stem.png` and `stem.csv`, so that
//! `shoal repro` writes every figure with the axes and units the paper draws.
//!
//! ```no_run
//! use shoal_plot::{Axis, Figure, Kind, Series};
//!
//! let fig = Figure {
//!     title: "Permutation traffic".into(),
//!     x: Axis::linear("Load").with_range(0.0, 1.0),
//!     y: Axis::log("FCT (µs)"),
//!     series: vec![
//!         Series::new("Shoal", vec![(0.2, 3.1), (0.5, 4.0), (0.8, 9.5)]),
//!         Series::new("Ideal", vec![(0.2, 2.0), (0.5, 2.5), (0.8, 4.0)]),
//!     ],
//!     kind: Kind::Lines,
//! };
//! let written = shoal_plot::write(&fig, "out/figures".as_ref(), "fig7")?;
//! println!("{}", written.png.display());
//! # Ok::<(), shoal_plot::PlotError>(())
//! ```
//!
//! Axes fit the data with a margin (whole decades on log axes) unless given a range, which
//! then clips the data as the paper's axes do. Several series get a legend in the emptiest
//! corner; each series keeps a fixed colour and marker shape by position. The CSV is tidy
//! (`series,x,y`, one row per point, bar rows naming their category) and its numbers parse back
//! to the exact values drawn. Anything that cannot be drawn (no points, NaN, a non-positive
//! value on a log axis, a bad range) is a [`PlotError`] naming the series and point, checked
//! before any file is written.

#![forbid(unsafe_code)]

mod clip;
mod draw;
mod error;
mod figure;
mod font;
mod label;
mod legend;
mod plan;
mod style;
mod table;

use std::fs;
use std::path::{Path, PathBuf};

pub use error::{AxisName, PlotError};
pub use figure::{Axis, Figure, Kind, Scale, Series};

/// The files one figure was written to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub svg: PathBuf,
    pub png: PathBuf,
    pub csv: PathBuf,
}

/// Writes `dir/stem.svg`, `dir/stem.png` and `dir/stem.csv`, creating `dir` if needed.
pub fn write(fig: &Figure, dir: &Path, stem: &str) -> Result<Written, PlotError> {
    if stem.is_empty() || stem == "." || stem == ".." || stem.contains(['/', '\\']) {
        return Err(PlotError::Stem(stem.to_owned()));
    }
    let plan = plan::Plan::new(fig)?;
    font::ensure()?;
    let written = Written {
        svg: dir.join(format!("{stem}.svg")),
        png: dir.join(format!("{stem}.png")),
        csv: dir.join(format!("{stem}.csv")),
    };
    let svg = draw::svg(&plan).map_err(|message| PlotError::Draw {
        path: written.svg.clone(),
        message,
    })?;
    fs::create_dir_all(dir).map_err(|source| PlotError::Io {
        path: dir.to_owned(),
        source,
    })?;
    for (path, body) in [(&written.svg, svg), (&written.csv, table::csv(fig))] {
        fs::write(path, body).map_err(|source| PlotError::Io {
            path: path.clone(),
            source,
        })?;
    }
    draw::png(&plan, &written.png).map_err(|message| {
        // plotters saves what it drew so far when dropped; leave no half-drawn image behind.
        let _ = fs::remove_file(&written.png);
        PlotError::Draw {
            path: written.png.clone(),
            message,
        }
    })?;
    Ok(written)
}
