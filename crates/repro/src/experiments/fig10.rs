//! Fig. 10 (§6.2): a 7:1 synchronized incast of seven cells per sender on the 8-node prototype.
//! The paper: slowest FCT 6.9 µs (7 epochs of queueing, 3.76 µs, plus two hops of 1.57 µs),
//! fastest 6.05 µs, and the destination's queue at each intermediate grows to 7 cells (Eq. 5).
//!
//! The run is tiny; quick mode runs it unchanged.

use crate::plot::emit;
use crate::point;
use crate::{Claim, Options, ReproError};
use shoal_plot::{Axis, Figure, Kind, Series};

const FIG: &str = "Shoal Fig. 10";

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let s = point::scenario("fig10-prototype-incast")?;
    let out = point::run(&s, opts)?;
    let fcts: Vec<f64> = out
        .records
        .iter()
        .map(|r| r.fct().map(|d| d.as_us_f64()))
        .collect::<Option<_>>()
        .ok_or_else(|| ReproError("a flow of the incast did not complete".into()))?;
    let slowest = fcts.iter().copied().fold(f64::MIN, f64::max);
    let fastest = fcts.iter().copied().fold(f64::MAX, f64::min);
    let q = out.queues.max_queue;
    progress(&format!("FCTs {fcts:.2?} us, max queue {q}"));
    let mut sorted = fcts.clone();
    sorted.sort_by(f64::total_cmp);
    let fig = Figure {
        title: "Shoal Fig. 10: 7:1 incast on the prototype, each flow's completion time".into(),
        x: Axis::linear("Flow, fastest first"),
        y: Axis::linear("Flow completion time (us)"),
        series: vec![
            Series::new(
                "Shoal",
                sorted
                    .iter()
                    .enumerate()
                    .map(|(i, &f)| ((i + 1) as f64, f))
                    .collect(),
            ),
            Series::new("paper: fastest and slowest", vec![(1.0, 6.05), (7.0, 6.9)]),
        ],
        kind: Kind::Points,
    };
    emit(opts, fig, "fig10-prototype-incast", progress)?;
    Ok(vec![
        Claim::relative(
            FIG,
            "slowest flow completion time",
            "us",
            6.9,
            slowest,
            0.10,
        ),
        Claim::relative(
            FIG,
            "fastest flow completion time",
            "us",
            6.05,
            fastest,
            0.10,
        ),
        Claim::new(
            FIG,
            "largest queue at an intermediate node",
            "7 cells",
            format!("{q} cells"),
            "6 to 7 (Eq. 5: one local cell, one per other sender)",
            (6..=7).contains(&q),
        ),
    ])
}
