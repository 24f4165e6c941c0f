//! `shoal run --replications N`: the same scenario (each sweep point) under N seeds, and each
//! metric's mean with its 95% confidence interval over them.

use crate::run::Summary;
use rand::Rng;
use shoal_metrics::{MeanCi, mean_ci95};
use shoal_scenario::{Scenario, SweepValue};

/// The file of the intervals, beside the table of runs.
pub(crate) const CI_FILE: &str = "ci.csv";

/// The seed of replication `r` of a scenario whose seed is `base`: `base` itself for the first,
/// so that one replication is the plain run, then a draw of the seeded stream
/// `("replication", r)`, within the 0..2^63 a seed may take.
pub(crate) fn seed(base: u64, r: u64) -> u64 {
    if r == 0 {
        return base;
    }
    shoal_base::rng::stream(base, "replication", r).next_u64() >> 1
}

/// One run of a sweep or a replicated scenario.
pub(crate) struct Point {
    /// The swept value, if the scenario sweeps.
    pub value: Option<SweepValue>,
    pub replication: u64,
    pub sc: Scenario,
    /// Its results folder, inside the sweep's.
    pub folder: String,
}

impl Point {
    /// What progress lines call it.
    pub(crate) fn label(&self, parameter: Option<&str>, replications: u64) -> String {
        let replica = format!("replication {} (seed {})", self.replication, self.sc.seed);
        match (&self.value, parameter) {
            (Some(v), Some(p)) if replications > 1 => format!("{p} = {v}, {replica}"),
            (Some(v), Some(p)) => format!("{p} = {v}"),
            _ => replica,
        }
    }

    /// The setting it sweeps, as the results database records it.
    pub(crate) fn swept(&self, parameter: Option<&str>) -> Option<String> {
        Some(format!("{} = {}", parameter?, self.value.as_ref()?))
    }
}

/// Every (point, replication), point-major: `i-<value>` folders as without replications when
/// there is one, `i-<value>-r<r>` with several, `r<r>` for a scenario that does not sweep.
pub(crate) fn expand(base: &[(Option<SweepValue>, Scenario)], replications: u64) -> Vec<Point> {
    let mut points = Vec::with_capacity(base.len() * replications as usize);
    for (i, (value, sc)) in base.iter().enumerate() {
        for r in 0..replications {
            let folder = match value {
                Some(v) if replications == 1 => format!("{i}-{}", crate::run::safe(&v.to_string())),
                Some(v) => format!("{i}-{}-r{r}", crate::run::safe(&v.to_string())),
                None => format!("r{r}"),
            };
            let sc = if r == 0 {
                sc.clone()
            } else {
                sc.clone().with_seed(seed(sc.seed, r))
            };
            points.push(Point {
                value: value.clone(),
                replication: r,
                sc,
                folder,
            });
        }
    }
    points
}

/// The metrics whose intervals are reported: name (the summary's field) and value.
type Metric = (&'static str, fn(&Summary) -> Option<f64>);

const METRICS: [Metric; 9] = [
    ("flows_completed", |s| Some(s.flows_completed as f64)),
    ("short_fct_mean_us", |s| {
        s.short_fct_us.as_ref().map(|f| f.mean)
    }),
    ("short_fct_p99_us", |s| {
        s.short_fct_us.as_ref().map(|f| f.p99)
    }),
    ("short_fct_p999_us", |s| {
        s.short_fct_us.as_ref().map(|f| f.p999)
    }),
    ("short_slowdown_p99", |s| {
        s.short_slowdown.as_ref().map(|f| f.p99)
    }),
    ("long_goodput_gbps", |s| s.long_goodput_gbps),
    ("delivered_gbps_per_node", |s| s.delivered_gbps_per_node),
    ("max_queue_cells", |s| Some(s.max_queue_cells as f64)),
    ("realised_load", |s| s.realised_load),
];

/// One point's intervals: per metric, over the replications that have a value.
pub(crate) struct Intervals {
    pub value: Option<SweepValue>,
    /// The scenario's name (a comparison has several per point).
    pub name: String,
    pub runs: usize,
    pub metrics: Vec<(&'static str, Option<MeanCi>)>,
}

/// The intervals of each point (of each scenario at a point, in a comparison) over its
/// replications, which come one after the other (`points` and `summaries` in the same order,
/// every replication present).
pub(crate) fn intervals(
    points: &[Point],
    summaries: &[impl std::borrow::Borrow<Summary>],
) -> Vec<Intervals> {
    let mut out: Vec<Intervals> = Vec::new();
    let mut start = 0;
    while start < points.len() {
        let end = start
            + points[start..]
                .iter()
                .take_while(|p| {
                    p.value == points[start].value && p.sc.name == points[start].sc.name
                })
                .count();
        let group = &summaries[start..end];
        let metrics = METRICS
            .iter()
            .map(|(name, f)| {
                let values: Vec<f64> = group.iter().filter_map(|s| f(s.borrow())).collect();
                (*name, mean_ci95(&values))
            })
            .collect();
        out.push(Intervals {
            value: points[start].value.clone(),
            name: points[start].sc.name.clone(),
            runs: group.len(),
            metrics,
        });
        start = end;
    }
    out
}

/// `ci.csv`: per point (and scenario, when `named`) and metric, the replications with a value,
/// the mean and the bounds of the 95% interval (empty with fewer than two values).
pub(crate) fn write_csv(
    f: &mut std::fs::File,
    parameter: Option<&str>,
    all: &[Intervals],
    named: bool,
) -> std::io::Result<()> {
    let mut w = csv::Writer::from_writer(std::io::BufWriter::new(f));
    let mut header: Vec<&str> = parameter.into_iter().collect();
    if named {
        header.push("scenario");
    }
    header.extend(["metric", "n", "mean", "ci95_low", "ci95_high"]);
    w.write_record(&header)?;
    for point in all {
        for (name, ci) in &point.metrics {
            let mut row: Vec<String> = point.value.iter().map(|v| v.to_string()).collect();
            if named {
                row.push(point.name.clone());
            }
            row.push((*name).to_owned());
            match ci {
                Some(ci) => {
                    let bound = |sign: f64| {
                        ci.half_width
                            .map_or_else(String::new, |h| (ci.mean + sign * h).to_string())
                    };
                    row.extend([
                        ci.n.to_string(),
                        ci.mean.to_string(),
                        bound(-1.0),
                        bound(1.0),
                    ]);
                }
                None => row.extend(["0".to_owned(), String::new(), String::new(), String::new()]),
            }
            w.write_record(&row)?;
        }
    }
    w.flush()
}

/// The table on stdout: per point (and scenario, when `named`), the main metrics as mean ±
/// half the 95% interval.
pub(crate) fn print(parameter: Option<&str>, all: &[Intervals], named: bool) {
    let shown = [
        "short_fct_mean_us",
        "short_fct_p99_us",
        "long_goodput_gbps",
        "max_queue_cells",
    ];
    let mut header: Vec<&str> = parameter.into_iter().collect();
    if named {
        header.push("scenario");
    }
    header.extend([
        "runs",
        "short mean us",
        "short p99 us",
        "long Gb/s",
        "max queue",
    ]);
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|point| {
            let mut row: Vec<String> = point.value.iter().map(|v| v.to_string()).collect();
            if named {
                row.push(point.name.clone());
            }
            row.push(point.runs.to_string());
            for name in shown {
                let ci = point
                    .metrics
                    .iter()
                    .find(|(n, _)| *n == name)
                    .and_then(|m| m.1);
                row.push(match ci {
                    None => "-".to_owned(),
                    Some(MeanCi {
                        mean,
                        half_width: Some(h),
                        ..
                    }) => format!("{mean:.3} ± {h:.3}"),
                    Some(MeanCi { mean, .. }) => format!("{mean:.3}"),
                });
            }
            row
        })
        .collect();
    crate::repro::print_table(&header, &rows);
    println!("(mean ± half the 95% confidence interval over the replications; all in {CI_FILE})");
}
