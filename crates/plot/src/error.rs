//! Typed errors: every input that cannot be drawn is named here rather than panicking.

use std::fmt;
use std::path::PathBuf;

/// Which axis an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisName {
    X,
    Y,
}

impl fmt::Display for AxisName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AxisName::X => "x",
            AxisName::Y => "y",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("figure {title:?} has no points to draw")]
    Empty { title: String },
    #[error("series {series:?} point {index} ({x}, {y}) is not a finite number")]
    NonFinite {
        series: String,
        index: usize,
        x: f64,
        y: f64,
    },
    #[error("series {series:?} point {index} has {axis} = {value}, which a log axis cannot show")]
    NonPositiveOnLog {
        series: String,
        index: usize,
        axis: AxisName,
        value: f64,
    },
    #[error(
        "{axis} axis range [{lo}, {hi}] cannot be drawn: it needs finite bounds with lo < hi, \
         hi - lo at least 1e-9 of their size, and on a log axis lo > 0 and a finite hi / lo"
    )]
    Range { axis: AxisName, lo: f64, hi: f64 },
    #[error("bars put categories on x: the x axis must be linear with no fixed range")]
    BarsAxis,
    #[error(
        "series {series:?} point {index} has x = {x}, not the index of one of {count} categories"
    )]
    Category {
        series: String,
        index: usize,
        x: f64,
        count: usize,
    },
    #[error("file stem {0:?} must be a plain, non-empty file name")]
    Stem(String),
    #[error("the embedded font could not be loaded")]
    Font,
    #[error("drawing {path}: {message}")]
    Draw { path: PathBuf, message: String },
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}
