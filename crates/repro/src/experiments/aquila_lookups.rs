//! What Aquila's CliqueMap figures (Fig. 7, Fig. 10) share: the value size, the quick clique,
//! a figure of lines over the offered load.

use shoal_aquila::Spec;
use shoal_plot::{Axis, Figure, Kind, Series};

/// §5: 4 KB values.
pub(crate) const VALUE_BYTES: u32 = 4096;

/// Fig. 6's quick clique: 72 hosts on 9 pods of 4 TiNs, 4 global links between pods.
pub(crate) fn quick_clique(spec: &mut Spec) {
    let df = &mut spec.dragonfly;
    (df.pods, df.tins_per_pod, df.global_links) = (9, 4, 4);
    (df.local_ports, df.global_ports) = (6, 8);
}

/// A line's name and its value at a point.
pub(crate) type Line<'a, P> = (&'a str, &'a dyn Fn(&P) -> f64);

/// Lines over the offered load: one series per name, its value at each point.
pub(crate) fn over_load<P>(
    points: &[P],
    load: impl Fn(&P) -> f64,
    y: Axis,
    lines: &[Line<'_, P>],
) -> Figure {
    Figure {
        title: String::new(),
        x: Axis::linear("offered load per host"),
        y,
        series: lines
            .iter()
            .map(|(name, f)| Series::new(*name, points.iter().map(|p| (load(p), f(p))).collect()))
            .collect(),
        kind: Kind::Lines,
    }
}
