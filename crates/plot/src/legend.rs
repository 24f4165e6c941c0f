//! Where the legend goes: the plot corner the data leaves emptiest, so it hides no curve.

use crate::figure::Kind;
use crate::plan::Plan;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Corner {
    UpperRight,
    UpperLeft,
    LowerRight,
    LowerLeft,
}

/// Samples taken along each line segment or bar to see what a corner would cover.
const SAMPLES: usize = 8;

/// The legend's share of the plot's height: one row of about 6% per series.
pub(crate) fn height(series: usize) -> f64 {
    (0.1 + 0.06 * series as f64).min(0.9)
}

/// The corner with the least data under the legend's box, and how many samples that still
/// covers; ties go to the first in reading preference.
pub(crate) fn corner(plan: &Plan) -> (Corner, usize) {
    let (w, h) = (0.4, height(plan.fig.series.len()));
    let corners = [
        (Corner::UpperRight, 1.0 - w, 1.0, 1.0 - h, 1.0),
        (Corner::UpperLeft, 0.0, w, 1.0 - h, 1.0),
        (Corner::LowerRight, 1.0 - w, 1.0, 0.0, h),
        (Corner::LowerLeft, 0.0, w, 0.0, h),
    ];
    let mut counts = [0usize; 4];
    each_sample(plan, |(u, v)| {
        for (count, &(_, x0, x1, y0, y1)) in counts.iter_mut().zip(&corners) {
            if (x0..=x1).contains(&u) && (y0..=y1).contains(&v) {
                *count += 1;
            }
        }
    });
    let mut best = 0;
    for (i, &count) in counts.iter().enumerate() {
        if count < counts[best] {
            best = i;
        }
    }
    (corners[best].0, counts[best])
}

/// Visits the figure's marks in plot coordinates (0..1 on each axis), without collecting them:
/// a long series would otherwise cost memory for a legend's sake.
fn each_sample(plan: &Plan, mut visit: impl FnMut((f64, f64))) {
    let norm = |&(x, y): &(f64, f64)| (plan.x.norm(x), plan.y.norm(y));
    let steps = || (0..=SAMPLES).map(|k| k as f64 / SAMPLES as f64);
    for (i, s) in plan.fig.series.iter().enumerate() {
        match plan.fig.kind {
            Kind::Points => s.points.iter().map(norm).for_each(&mut visit),
            Kind::Lines | Kind::Curve => {
                s.points.iter().map(norm).for_each(&mut visit);
                for pair in s.points.windows(2) {
                    let (a, b) = (norm(&pair[0]), norm(&pair[1]));
                    steps().map(|t| lerp(a, b, t)).for_each(&mut visit);
                }
            }
            Kind::Bars { .. } => {
                for &(x, y) in &s.points {
                    let (left, right) = plan.bar_span(x, i);
                    let u = plan.x.norm((left + right) / 2.0);
                    let (base, top) = (plan.y.norm(plan.y.bar_base()), plan.y.norm(y));
                    steps()
                        .map(|t| (u, base + (top - base) * t))
                        .for_each(&mut visit);
                }
            }
        }
    }
}

fn lerp(a: (f64, f64), b: (f64, f64), t: f64) -> (f64, f64) {
    (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Figure, Series};

    fn place(points: Vec<(f64, f64)>) -> (Corner, usize) {
        let fig = Figure {
            title: String::new(),
            x: Axis::linear("x").with_range(0.0, 10.0),
            y: Axis::linear("y").with_range(0.0, 10.0),
            series: vec![Series::new("a", points), Series::new("b", vec![(5.0, 5.0)])],
            kind: Kind::Lines,
        };
        match Plan::new(&fig) {
            Ok(plan) => corner(&plan),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn avoids_the_data() {
        assert_eq!(
            place(vec![(0.0, 0.0), (10.0, 10.0)]),
            (Corner::UpperLeft, 0)
        );
        assert_eq!(
            place(vec![(0.0, 10.0), (10.0, 0.0)]),
            (Corner::UpperRight, 0)
        );
        assert_eq!(
            place(vec![(0.0, 9.0), (10.0, 9.0)]),
            (Corner::LowerRight, 0)
        );
        let zigzag = vec![
            (0.0, 0.0),
            (0.0, 10.0),
            (10.0, 10.0),
            (10.0, 0.0),
            (0.0, 0.0),
        ];
        assert!(place(zigzag).1 > 0);
    }
}
