//! Cuts lines at the plot's edges: plotters draws whatever it is given, so data outside a fixed
//! range would otherwise spill over the axes and title.

use crate::plan::AxisPlan;

/// The parts of a polyline inside the plot, each with at least two points. Points inside are
/// kept exactly; cut ends are found in drawn space (log10 on log axes) so they sit on the line
/// as drawn.
pub(crate) fn runs(points: &[(f64, f64)], x: &AxisPlan, y: &AxisPlan) -> Vec<Vec<(f64, f64)>> {
    let lo = (x.drawn(x.lo), y.drawn(y.lo));
    let hi = (x.drawn(x.hi), y.drawn(y.hi));
    let mut out = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    for pair in points.windows(2) {
        let (p, q) = (pair[0], pair[1]);
        let a = (x.drawn(p.0), y.drawn(p.1));
        let b = (x.drawn(q.0), y.drawn(q.1));
        let Some((t0, t1)) = clip(a, b, lo, hi) else {
            flush(&mut run, &mut out);
            continue;
        };
        let at = |t: f64| {
            let (u, v) = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
            (x.value_at(u), y.value_at(v))
        };
        if t0 > 0.0 || run.is_empty() {
            flush(&mut run, &mut out);
            run.push(if t0 > 0.0 { at(t0) } else { p });
        }
        run.push(if t1 < 1.0 { at(t1) } else { q });
        if t1 < 1.0 {
            flush(&mut run, &mut out);
        }
    }
    flush(&mut run, &mut out);
    out
}

fn flush(run: &mut Vec<(f64, f64)>, out: &mut Vec<Vec<(f64, f64)>>) {
    if run.len() >= 2 {
        out.push(std::mem::take(run));
    } else {
        run.clear();
    }
}

/// Liang-Barsky: the parameter interval of segment `a -> b` inside the box `lo..hi`.
fn clip(a: (f64, f64), b: (f64, f64), lo: (f64, f64), hi: (f64, f64)) -> Option<(f64, f64)> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - lo.0),
        (dx, hi.0 - a.0),
        (-dy, a.1 - lo.1),
        (dy, hi.1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
            continue;
        }
        let r = q / p;
        if p < 0.0 {
            t0 = t0.max(r);
        } else {
            t1 = t1.min(r);
        }
        if t0 > t1 {
            return None;
        }
    }
    Some((t0, t1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Scale;

    fn axis(scale: Scale, lo: f64, hi: f64) -> AxisPlan<'static> {
        AxisPlan {
            scale,
            lo,
            hi,
            categories: None,
        }
    }

    #[test]
    fn keeps_inside_points_and_cuts_at_edges() {
        let (x, y) = (
            axis(Scale::Linear, 0.0, 10.0),
            axis(Scale::Linear, 0.0, 10.0),
        );
        let line = [(1.0, 1.0), (2.0, 2.0), (2.0, 20.0), (3.0, 3.0), (4.0, 4.0)];
        let got = runs(&line, &x, &y);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0][..2], [(1.0, 1.0), (2.0, 2.0)]);
        assert_eq!(got[0][2], (2.0, 10.0));
        assert_eq!(got[1].last(), Some(&(4.0, 4.0)));
        assert!((got[1][0].1 - 10.0).abs() < 1e-12);
        assert!(runs(&[(20.0, 20.0), (30.0, 30.0)], &x, &y).is_empty());
        assert!(runs(&[(5.0, 5.0)], &x, &y).is_empty());
    }

    #[test]
    fn cuts_log_axes_in_drawn_space() {
        let (x, y) = (axis(Scale::Log, 1.0, 100.0), axis(Scale::Log, 1.0, 100.0));
        let got = runs(&[(1.0, 1.0), (1e4, 1e4)], &x, &y);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0][0], (1.0, 1.0));
        assert!((got[0][1].0 - 100.0).abs() < 1e-9 && (got[0][1].1 - 100.0).abs() < 1e-9);
    }
}
