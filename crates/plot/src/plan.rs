//! Checks a figure once and fixes everything drawing needs: axis bounds, bar geometry and where
//! the legend goes. Drawing then cannot meet a value it has no answer for.

use crate::error::{AxisName, PlotError};
use crate::figure::{Axis, Figure, Kind, Scale};
use crate::label;
use crate::legend::{self, Corner};

/// Share of a category's width that its group of bars fills.
const GROUP_WIDTH: f64 = 0.8;
/// Margin added on each side of a fitted linear range, as a share of the data's span.
const MARGIN: f64 = 0.05;

/// A checked figure, ready to draw.
pub(crate) struct Plan<'a> {
    pub fig: &'a Figure,
    pub x: AxisPlan<'a>,
    pub y: AxisPlan<'a>,
    /// `None` for a single series: its name would only repeat the title.
    pub legend: Option<Corner>,
}

/// One axis with its final bounds.
pub(crate) struct AxisPlan<'a> {
    pub scale: Scale,
    pub lo: f64,
    pub hi: f64,
    /// Names shown at integer positions instead of numbers (the x axis of bars).
    pub categories: Option<&'a [String]>,
}

impl<'a> Plan<'a> {
    pub fn new(fig: &'a Figure) -> Result<Self, PlotError> {
        if fig.series.iter().all(|s| s.points.is_empty()) {
            return Err(PlotError::Empty {
                title: fig.title.clone(),
            });
        }
        check_points(fig)?;
        let categories = match &fig.kind {
            Kind::Bars { categories } => Some(categories.as_slice()),
            Kind::Lines | Kind::Curve | Kind::Points => None,
        };
        let x = match categories {
            // Every point names a valid category, so there is at least one.
            Some(names) => AxisPlan {
                scale: Scale::Linear,
                lo: -0.5,
                hi: names.len() as f64 - 0.5,
                categories: Some(names),
            },
            None => AxisPlan::fit(&fig.x, AxisName::X, xs(fig), false)?,
        };
        let y = AxisPlan::fit(&fig.y, AxisName::Y, ys(fig), categories.is_some())?;
        let mut plan = Plan {
            fig,
            x,
            y,
            legend: None,
        };
        if fig.series.len() > 1 {
            let (mut corner, covered) = legend::corner(&plan);
            // Every corner has data: a fitted y axis makes room above it instead, up to
            // doubling so the data is not squashed.
            if covered > 0 && fig.y.range.is_none() {
                plan.y
                    .make_headroom(legend::height(fig.series.len()).min(0.5));
                corner = legend::corner(&plan).0;
            }
            plan.legend = Some(corner);
        }
        Ok(plan)
    }

    /// The x extent of bar `series` in category `category`: groups sit side by side, centred on
    /// the category's index.
    pub fn bar_span(&self, category: f64, series: usize) -> (f64, f64) {
        let width = GROUP_WIDTH / self.fig.series.len().max(1) as f64;
        let left = category - GROUP_WIDTH / 2.0 + series as f64 * width;
        (left, left + width)
    }
}

impl AxisPlan<'_> {
    fn fit(
        axis: &Axis,
        name: AxisName,
        values: impl Iterator<Item = f64>,
        from_zero: bool,
    ) -> Result<Self, PlotError> {
        let (lo, hi) = match axis.range {
            Some(range) => range,
            None => {
                let (min, max) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(v), b.max(v))
                });
                match axis.scale {
                    Scale::Linear => fit_linear(min, max, from_zero),
                    Scale::Log => fit_decades(min, max),
                }
            }
        };
        if !drawable(axis.scale, lo, hi) {
            return Err(PlotError::Range { axis: name, lo, hi });
        }
        Ok(AxisPlan {
            scale: axis.scale,
            lo,
            hi,
            categories: None,
        })
    }

    /// Raises `hi` so the current range fills only the lower `1 - share` of the axis (to the
    /// next decade on a log axis); left as is if that would not be drawable.
    fn make_headroom(&mut self, share: f64) {
        let (lo, hi) = (self.drawn(self.lo), self.drawn(self.hi));
        let top = self.value_at(lo + (hi - lo) / (1.0 - share));
        let top = match self.scale {
            Scale::Linear => top,
            Scale::Log => decade_above(top),
        };
        if drawable(self.scale, self.lo, top) {
            self.hi = top;
        }
    }

    pub fn contains(&self, v: f64) -> bool {
        self.lo <= v && v <= self.hi
    }

    /// Where `v` falls along the drawn axis: 0 at `lo`, 1 at `hi`.
    pub fn norm(&self, v: f64) -> f64 {
        let lo = self.drawn(self.lo);
        (self.drawn(v) - lo) / (self.drawn(self.hi) - lo)
    }

    /// The value in the space the axis is drawn in, where straight lines stay straight.
    pub fn drawn(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log => v.log10(),
        }
    }

    /// The inverse of [`Self::drawn`].
    pub fn value_at(&self, t: f64) -> f64 {
        match self.scale {
            Scale::Linear => t,
            Scale::Log => 10f64.powf(t),
        }
    }

    /// Where bars start: zero where the axis shows it, else the nearer bound.
    pub fn bar_base(&self) -> f64 {
        match self.scale {
            Scale::Linear => 0f64.clamp(self.lo, self.hi),
            Scale::Log => self.lo,
        }
    }

    pub fn tick_label(&self, v: f64) -> String {
        if let Some(names) = self.categories {
            return label::category(names, v);
        }
        match self.scale {
            // Ticks computed as 1e-17 mean zero.
            Scale::Linear if v.abs() < (self.hi - self.lo) * 1e-9 => "0".to_owned(),
            Scale::Linear => label::number(v),
            Scale::Log => label::log(v),
        }
    }
}

/// Whether plotters can place ticks on `[lo, hi]`: its tick search loops forever on spans lost
/// in rounding (linear) or on bounds whose ratio overflows (log).
fn drawable(scale: Scale, lo: f64, hi: f64) -> bool {
    let ordered = lo.is_finite() && hi.is_finite() && lo < hi;
    ordered
        && match scale {
            Scale::Linear => hi - lo >= lo.abs().max(hi.abs()) * 1e-9,
            Scale::Log => lo > 0.0 && (hi / lo).is_finite(),
        }
}

/// Rejects what no axis can show, naming the series and point.
fn check_points(fig: &Figure) -> Result<(), PlotError> {
    let categories = match &fig.kind {
        Kind::Bars { categories } => {
            if fig.x.scale == Scale::Log || fig.x.range.is_some() {
                return Err(PlotError::BarsAxis);
            }
            Some(categories.len())
        }
        Kind::Lines | Kind::Curve | Kind::Points => None,
    };
    for s in &fig.series {
        for (index, &(x, y)) in s.points.iter().enumerate() {
            let at = |axis, value| PlotError::NonPositiveOnLog {
                series: s.name.clone(),
                index,
                axis,
                value,
            };
            if !x.is_finite() || !y.is_finite() {
                return Err(PlotError::NonFinite {
                    series: s.name.clone(),
                    index,
                    x,
                    y,
                });
            }
            if let Some(count) = categories {
                if x.fract() != 0.0 || x < 0.0 || x >= count as f64 {
                    return Err(PlotError::Category {
                        series: s.name.clone(),
                        index,
                        x,
                        count,
                    });
                }
            } else if fig.x.scale == Scale::Log && x <= 0.0 {
                return Err(at(AxisName::X, x));
            }
            if fig.y.scale == Scale::Log && y <= 0.0 {
                return Err(at(AxisName::Y, y));
            }
        }
    }
    Ok(())
}

fn xs(fig: &Figure) -> impl Iterator<Item = f64> + '_ {
    fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.0))
}

fn ys(fig: &Figure) -> impl Iterator<Item = f64> + '_ {
    fig.series.iter().flat_map(|s| s.points.iter().map(|p| p.1))
}

/// The data's span plus a margin; bars keep zero as a bound so their heights compare.
fn fit_linear(min: f64, max: f64, from_zero: bool) -> (f64, f64) {
    let (min, max) = if from_zero {
        (min.min(0.0), max.max(0.0))
    } else {
        (min, max)
    };
    let magnitude = min.abs().max(max.abs());
    if magnitude == 0.0 {
        return if from_zero { (0.0, 1.0) } else { (-1.0, 1.0) };
    }
    // A span this small against the values would give ticks no label can tell apart.
    if max - min < magnitude * 1e-6 {
        let pad = magnitude * 0.1;
        return (min - pad, max + pad);
    }
    let pad = (max - min) * MARGIN;
    let lo = if from_zero && min == 0.0 {
        0.0
    } else {
        min - pad
    };
    let hi = if from_zero && max == 0.0 {
        0.0
    } else {
        max + pad
    };
    (lo, hi)
}

/// Whole decades around the data, as log axes in papers are drawn.
fn fit_decades(min: f64, max: f64) -> (f64, f64) {
    let lo = decade_below(min);
    let hi = decade_above(max);
    if lo < hi {
        (lo, hi)
    } else if (hi * 10.0).is_finite() {
        (lo, hi * 10.0)
    } else {
        (lo / 10.0, hi)
    }
}

/// The largest power of ten at most `v` (`v` itself if that power underflows to zero).
fn decade_below(v: f64) -> f64 {
    let mut k = v.log10().floor() as i32;
    if pow10(k) > v {
        k -= 1;
    }
    if pow10(k + 1) <= v {
        k += 1;
    }
    let p = pow10(k);
    if p > 0.0 { p } else { v }
}

/// The smallest power of ten at least `v` (`v` itself if that power overflows).
fn decade_above(v: f64) -> f64 {
    let mut k = v.log10().ceil() as i32;
    if pow10(k) < v {
        k += 1;
    }
    if pow10(k - 1) >= v {
        k -= 1;
    }
    let p = pow10(k);
    if p.is_finite() { p } else { v }
}

/// 10^k correctly rounded, so that a fitted bound equals the literal `1e-5` a caller wrote.
pub(crate) fn pow10(k: i32) -> f64 {
    format!("1e{k}").parse().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_fit_adds_margin_and_bars_keep_zero() {
        assert_eq!(fit_linear(0.0, 10.0, false), (-0.5, 10.5));
        assert_eq!(fit_linear(2.0, 10.0, true), (0.0, 10.5));
        assert_eq!(fit_linear(-4.0, -2.0, true), (-4.2, 0.0));
        assert_eq!(fit_linear(5.0, 5.0, false), (4.5, 5.5));
        assert_eq!(fit_linear(0.0, 0.0, false), (-1.0, 1.0));
        assert_eq!(fit_linear(0.0, 0.0, true), (0.0, 1.0));
    }

    #[test]
    fn log_fit_takes_whole_decades() {
        assert_eq!(fit_decades(1e-5, 1e-3), (1e-5, 1e-3));
        assert_eq!(fit_decades(2.0, 300.0), (1.0, 1000.0));
        assert_eq!(fit_decades(1000.0, 1000.0), (1000.0, 10000.0));
        assert_eq!(fit_decades(0.15, 0.15), (0.1, 1.0));
        for k in -300..300 {
            let p = pow10(k);
            assert_eq!(decade_below(p), p, "{k}");
            assert_eq!(decade_above(p), p, "{k}");
        }
    }

    #[test]
    fn extreme_data_fits_or_fails_cleanly() {
        let (lo, hi) = fit_decades(f64::MIN_POSITIVE / 1e10, f64::MAX);
        assert!(lo > 0.0 && hi == f64::MAX);
        assert!(!drawable(Scale::Log, lo, hi));
        assert!(drawable(Scale::Log, 1e-150, 1e150));
        assert!(!drawable(Scale::Log, 1e-300, 1e300));
        let (lo, hi) = fit_linear(-f64::MAX, f64::MAX, false);
        assert!(!drawable(Scale::Linear, lo, hi));
        assert!(!drawable(Scale::Linear, 1e300, 1e300 * (1.0 + 1e-15)));
        assert!(drawable(Scale::Linear, 0.0, 1e-300));
    }
}
