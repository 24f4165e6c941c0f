//! What a figure is: plain data that `shoal-repro` fills in and [`crate::write`] draws.

/// One figure: a title, two axes and the series drawn against them.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Drawn above the plot; empty for none.
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    /// Drawn in order; series `i` takes colour and marker `i` of a fixed palette.
    pub series: Vec<Series>,
    pub kind: Kind,
}

/// One axis, labelled with its unit as the paper labels it (e.g. `"FCT (µs)"`).
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub scale: Scale,
    /// Fixed bounds, as the paper draws them; `None` fits the data with a margin (whole decades
    /// on a log axis). Data outside fixed bounds is clipped.
    pub range: Option<(f64, f64)>,
}

impl Axis {
    /// A linear axis fitted to the data.
    pub fn linear(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Linear,
            range: None,
        }
    }

    /// A base-10 log axis fitted to the data; every value on it must be positive.
    pub fn log(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Log,
            range: None,
        }
    }

    /// The same axis with fixed bounds.
    pub fn with_range(self, lo: f64, hi: f64) -> Self {
        Self {
            range: Some((lo, hi)),
            ..self
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Base 10.
    Log,
}

/// One named series; its points are drawn (and joined, for [`Kind::Lines`] and [`Kind::Curve`]) in the given order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Shown in the legend when the figure has more than one series.
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            points,
        }
    }
}

/// How the series are drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A line with a marker at every point.
    Lines,
    /// A line without markers (the legend shows the series' marker): for distributions of
    /// hundreds of points, such as CDFs, whose markers would hide the line.
    Curve,
    /// Markers only.
    Points,
    /// Grouped bars: a point `(k, v)` of series `i` is bar `i` of category `k`, of height `v`.
    /// The x axis shows the category names, so it must be linear with no fixed range.
    Bars { categories: Vec<String> },
}
