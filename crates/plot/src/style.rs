//! The fixed look: colours and marker shapes per series, so a series keeps its look across
//! figures and stays tellable apart in greyscale print.

use plotters::style::RGBColor;

/// Okabe-Ito's colour-blind-safe palette without its yellow, which vanishes on white.
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// Marker radius in pixels.
const R: f64 = 4.5;

pub(crate) fn colour(series: usize) -> RGBColor {
    PALETTE[series % PALETTE.len()]
}

/// The marker of a series as a polygon around (0, 0), in pixels. Five shapes against seven
/// colours repeat a pairing only after 35 series.
pub(crate) fn marker(series: usize) -> Vec<(i32, i32)> {
    let unit: &[(f64, f64)] = match series % 5 {
        0 => &[],
        1 => &[(-0.8, -0.8), (0.8, -0.8), (0.8, 0.8), (-0.8, 0.8)],
        2 => &[(0.0, -1.1), (1.0, 0.7), (-1.0, 0.7)],
        3 => &[(0.0, -1.2), (1.2, 0.0), (0.0, 1.2), (-1.2, 0.0)],
        _ => &[(0.0, 1.1), (1.0, -0.7), (-1.0, -0.7)],
    };
    if unit.is_empty() {
        // A circle, as a polygon so every marker is the same element type.
        return (0..12)
            .map(|k| {
                let a = std::f64::consts::TAU * k as f64 / 12.0;
                px(a.cos(), a.sin())
            })
            .collect();
    }
    unit.iter().map(|&(u, v)| px(u, v)).collect()
}

fn px(u: f64, v: f64) -> (i32, i32) {
    ((u * R).round() as i32, (v * R).round() as i32)
}
