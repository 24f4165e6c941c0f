//! Draws a checked figure with plotters, the same way for the SVG and the PNG.

use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::clip;
use crate::figure::{Kind, Scale};
use crate::font::FAMILY;
use crate::legend::Corner;
use crate::plan::Plan;
use crate::style;

/// Pixels, for both files; about a column-and-a-half figure at screen resolution.
const SIZE: (u32, u32) = (800, 500);

pub(crate) fn svg(plan: &Plan) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        draw(&root, plan)?;
        root.present().map_err(text)?;
    }
    Ok(out)
}

pub(crate) fn png(plan: &Plan, path: &Path) -> Result<(), String> {
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    draw(&root, plan)?;
    root.present().map_err(text)
}

fn text<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> String {
    e.to_string()
}

/// Picks plotters' coordinate types: linear and log axes are different types to it.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, plan: &Plan) -> Result<(), String> {
    root.fill(&WHITE).map_err(text)?;
    let (x, y) = (plan.x.lo..plan.x.hi, plan.y.lo..plan.y.hi);
    match (plan.x.scale, plan.y.scale) {
        (Scale::Linear, Scale::Linear) => chart(root, plan, x, y),
        (Scale::Linear, Scale::Log) => chart(root, plan, x, y.log_scale()),
        (Scale::Log, Scale::Linear) => chart(root, plan, x.log_scale(), y),
        (Scale::Log, Scale::Log) => chart(root, plan, x.log_scale(), y.log_scale()),
    }
}

fn chart<DB, X, Y>(root: &DrawingArea<DB, Shift>, plan: &Plan, x: X, y: Y) -> Result<(), String>
where
    DB: DrawingBackend,
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut builder = ChartBuilder::on(root);
    builder
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(80);
    if !plan.fig.title.is_empty() {
        builder.caption(&plan.fig.title, (FAMILY, 22));
    }
    let mut chart = builder.build_cartesian_2d(x, y).map_err(text)?;

    let x_label = |v: &f64| plan.x.tick_label(*v);
    let y_label = |v: &f64| plan.y.tick_label(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(&plan.fig.x.label)
        .y_desc(&plan.fig.y.label)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .axis_desc_style((FAMILY, 16))
        .label_style((FAMILY, 13))
        .bold_line_style(BLACK.mix(0.12))
        .light_line_style(TRANSPARENT);
    if let Some(names) = plan.x.categories {
        mesh.x_labels(names.len()).disable_x_mesh();
    }
    mesh.draw().map_err(text)?;

    for (i, s) in plan.fig.series.iter().enumerate() {
        let colour = style::colour(i);
        let shape = style::marker(i);
        // Legend glyphs are placed by their left edge; centre the marker on a 20 px line.
        let glyph: Vec<_> = shape.iter().map(|&(x, y)| (x + 10, y)).collect();
        let inside = s
            .points
            .iter()
            .copied()
            .filter(|&(x, y)| plan.x.contains(x) && plan.y.contains(y));
        let marker =
            |p: (f64, f64)| EmptyElement::at(p) + Polygon::new(shape.clone(), colour.filled());
        match &plan.fig.kind {
            Kind::Lines | Kind::Curve => {
                let runs = clip::runs(&s.points, &plan.x, &plan.y);
                let line = colour.stroke_width(2);
                chart
                    .draw_series(runs.into_iter().map(|run| PathElement::new(run, line)))
                    .map_err(text)?;
                let marked = matches!(plan.fig.kind, Kind::Lines);
                chart
                    .draw_series(inside.filter(|_| marked).map(marker))
                    .map_err(text)?
                    .label(&s.name)
                    .legend(move |p| {
                        EmptyElement::at(p)
                            + PathElement::new(vec![(0, 0), (20, 0)], line)
                            + Polygon::new(glyph.clone(), colour.filled())
                    });
            }
            Kind::Points => {
                chart
                    .draw_series(inside.map(marker))
                    .map_err(text)?
                    .label(&s.name)
                    .legend(move |p| {
                        EmptyElement::at(p) + Polygon::new(glyph.clone(), colour.filled())
                    });
            }
            Kind::Bars { .. } => {
                let base = plan.y.bar_base();
                let bars = s.points.iter().map(|&(k, v)| {
                    let (left, right) = plan.bar_span(k, i);
                    Rectangle::new(
                        [(left, base), (right, v.clamp(plan.y.lo, plan.y.hi))],
                        colour.filled(),
                    )
                });
                chart
                    .draw_series(bars)
                    .map_err(text)?
                    .label(&s.name)
                    .legend(move |(px, py)| {
                        Rectangle::new([(px + 4, py - 6), (px + 16, py + 6)], colour.filled())
                    });
            }
        }
    }

    if let Some(corner) = plan.legend {
        chart
            .configure_series_labels()
            .position(match corner {
                Corner::UpperRight => SeriesLabelPosition::UpperRight,
                Corner::UpperLeft => SeriesLabelPosition::UpperLeft,
                Corner::LowerRight => SeriesLabelPosition::LowerRight,
                Corner::LowerLeft => SeriesLabelPosition::LowerLeft,
            })
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK.mix(0.3))
            .label_font((FAMILY, 14))
            .draw()
            .map_err(text)?;
    }
    Ok(())
}
