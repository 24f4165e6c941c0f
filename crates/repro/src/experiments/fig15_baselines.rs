//! Fig. 15 (§7.3) against the baselines: the same datacenter workload (Pareto flow sizes,
//! Poisson arrivals, uniform pairs; one seed, so one flow list) on the Shoal rack, on the
//! packet-switched Clos under DCTCP, DCQCN and NDP (50 Gb/s per host), and on the 3D torus
//! under R2C2 (100 Gb/s per node), swept over the load. Paper:
//! - short flows (≤ 100 KB): Shoal's 99th-percentile FCT is 3x lower than DCTCP's and DCQCN's at
//!   low load and 2x at high load, 1.5x and 2x lower than NDP's; its mean FCT is "comparable to
//!   DCQCN and DCTCP and slightly higher than NDP" at low to moderate load;
//! - long flows (≥ 1 MB): Shoal's average goodput is 1.7x that of all three, "even at high load";
//! - against the torus: up to 14.9x lower tail FCT and 4.8x higher goodput, "for all values of
//!   load".
//!
//! Our reading of the loads: Fig. 15 sweeps L from 0.1 to 0.9 and the text does not say which
//! loads it calls low or high, so low is 0.1-0.3, moderate 0.4-0.6 and high 0.7-0.9. A ratio
//! "at low load" is the geometric mean of the ratios at the measured loads of the band; the
//! mean-FCT claims cover low and moderate loads; goodput ratios cover every measured load;
//! "up to" is the largest ratio over the measured loads.
//!
//! Tolerances, fixed before any result was seen: every ratio within ±35% of the paper's;
//! "comparable" means a ratio within ±35% of 1, "slightly higher" a ratio above 1 and at most
//! 1.35.
//!
//! Each run stops when its number of flows has completed, as in the paper, so every fabric
//! reports on the flows it completed first (long flows that are still running are not counted).
//!
//! Full scale: the scenario files (512 nodes, loads 0.1-0.9, one million completed flows per
//! point, R2C2 included: hours of CPU; the torus is the slowest, its high loads longest). The
//! 45 runs are independent and go `--threads` at a time, longest first, each on one thread;
//! the claims do not depend on the thread count.
//! Quick mode: the paper's 512 nodes (the radix-32 Clos, the 8x8x8 torus), loads 0.2 and 0.7,
//! 10,000 completed flows on every fabric, the torus included (no torus long flow completes in
//! so few, so its goodput claim is not reported). Not fewer nodes: every Shoal latency grows
//! with the epoch, so with the node count, while the baselines' do not, and at 64 nodes 11 of
//! the 16 verdicts differed from the full scale's (docs/results/baselines.md, "Quick and full
//! scale"); at 512 nodes and 10,000 flows 13 of the 15 reported agree. Any other scale through
//! `Options::scale` (`shoal repro --scale`), e.g.
//! `nodes=512 loads=0.2,0.7 flows=20000 torus_flows=2000` (`torus_flows=0` leaves R2C2 out);
//! unset keys keep the full scale's values, and quick mode ignores it.

use crate::at_once;
use crate::plot::emit;
use crate::point;
use crate::scale::Settings;
use crate::{Claim, Options, ReproError, ScaleSpec};
use shoal_fabric::bench::wall_seconds;
use shoal_metrics::FlowSummary;
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_scenario::Scenario;

const FIG: &str = "Shoal Fig. 15";
/// Every ratio within this fraction of the paper's (and "comparable" within it of 1).
const TOL: f64 = 0.35;
/// Low load: L in this range (inclusive); high load likewise; low-to-moderate up to `MODERATE`.
const LOW: (f64, f64) = (0.1, 0.3);
const HIGH: (f64, f64) = (0.7, 0.9);
const MODERATE: f64 = 0.6;
/// §7.3's rack: 512 nodes.
const PAPER_NODES: u32 = 512;

/// The fabrics, by embedded scenario and the name their series and claims use.
const SHOAL: (&str, &str) = ("fig15-datacenter", "Shoal");
const PSN: [(&str, &str); 3] = [
    ("fig15-dctcp", "DCTCP"),
    ("fig15-dcqcn", "DCQCN"),
    ("fig15-ndp", "NDP"),
];
const TORUS: (&str, &str) = ("fig15-r2c2", "R2C2 torus");

/// The `--scale` settings fig15-baselines takes.
pub(crate) const SCALE: ScaleSpec = ScaleSpec {
    keys: &["nodes", "loads", "flows", "torus_flows"],
    check: check_scale,
};

fn check_scale(text: &str) -> Result<(), ReproError> {
    Scale::full(&point::scenario(SHOAL.0)?, Some(text)).map(drop)
}

/// How big a run is.
#[derive(Clone, Debug, PartialEq)]
struct Scale {
    nodes: u32,
    loads: Vec<f64>,
    flows: u64,
    /// Completed flows for the torus; 0 leaves it out.
    torus_flows: u64,
}

impl Scale {
    fn quick() -> Scale {
        Scale {
            nodes: PAPER_NODES,
            loads: vec![0.2, 0.7],
            flows: 10_000,
            torus_flows: 10_000,
        }
    }

    /// The scenario files' scale, with `Options::scale` applied.
    fn full(base: &Scenario, settings: Option<&str>) -> Result<Scale, ReproError> {
        let flows = base.limits.completed_flows.unwrap_or(1_000_000);
        let mut s = Scale {
            nodes: base.nodes() as u32,
            loads: point::swept_numbers(base, 0.5),
            flows,
            torus_flows: flows,
        };
        if let Some(text) = settings {
            s.apply(text)?;
        }
        Ok(s)
    }

    /// Applies `key=value` settings separated by white space.
    fn apply(&mut self, text: &str) -> Result<(), ReproError> {
        let set = Settings::new(text, SCALE.keys);
        for (key, value) in set.pairs()? {
            match key {
                "nodes" => {
                    self.nodes = u32::try_from(set.int(key, value)?)
                        .ok()
                        .filter(|&n| n >= 2)
                        .ok_or_else(|| set.bad("nodes must be 2 or more"))?
                }
                "flows" => {
                    self.flows =
                        set.at_least(key, value, 1, "each point runs until that many complete")?
                }
                "torus_flows" => self.torus_flows = set.int(key, value)?,
                _ => self.loads = set.list(key, value)?,
            }
        }
        Ok(())
    }
}

/// One fabric at one load.
struct Point {
    load: f64,
    short_mean_us: f64,
    short_p99_us: f64,
    long_gbps: Option<f64>,
    completed: usize,
    wanted: u64,
    /// Packets dropped and retransmission timeouts (packet fabrics; 0 elsewhere).
    drops: u64,
    timeouts: u64,
    /// Flows still open when the run ended, where the fabric counts them (not Shoal's rack).
    open: Option<u64>,
}

/// One fabric's sweep.
struct Line {
    name: &'static str,
    points: Vec<Point>,
}

impl Line {
    fn at(&self, load: f64) -> Option<&Point> {
        self.points.iter().find(|p| p.load == load)
    }
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let base = point::scenario(SHOAL.0)?;
    let scale = if opts.quick {
        Scale::quick()
    } else {
        Scale::full(&base, opts.scale.as_deref())?
    };
    progress(&format!(
        "fig15-baselines: {} nodes, loads {:?}, {} completed flows per point (torus {})",
        scale.nodes, scale.loads, scale.flows, scale.torus_flows
    ));
    let mut fabrics = vec![SHOAL];
    fabrics.extend(PSN);
    if scale.torus_flows > 0 {
        fabrics.push(TORUS);
    }
    // Every (fabric, load) is its own simulation: they run `--threads` at a time, each on one
    // thread (T runs of one thread use the cores better than one run cut into parts), and the
    // points come back in item order, so the claims do not depend on T.
    let mut runs = Vec::new();
    for &(file, name) in &fabrics {
        let flows = if (file, name) == TORUS {
            scale.torus_flows
        } else {
            scale.flows
        };
        let base = point::scenario(file)?;
        for &load in &scale.loads {
            runs.push(Run {
                name,
                load,
                flows,
                scenario: scaled(&base, scale.nodes, load, flows)?,
            });
        }
    }
    // The longest first, so that the last to finish is a short one: the torus (quadratic in
    // its active flows at high load), then the others, each from its highest load down.
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| {
        let key = |r: &Run| (r.name == TORUS.1, r.load);
        key(&runs[b])
            .partial_cmp(&key(&runs[a]))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let one = Options {
        threads: 1,
        ..opts.clone()
    };
    let scheduled: Vec<&Run> = order.iter().map(|&i| &runs[i]).collect();
    let done = at_once::map(
        &scheduled,
        opts.threads.max(1),
        |r| run_point(&one, r),
        progress,
    )?;
    let mut points: Vec<Option<Point>> = runs.iter().map(|_| None).collect();
    for (i, p) in order.into_iter().zip(done) {
        points[i] = Some(p);
    }
    let mut points = points.into_iter().flatten();
    let lines: Vec<Line> = fabrics
        .iter()
        .map(|&(_, name)| Line {
            name,
            points: points.by_ref().take(scale.loads.len()).collect(),
        })
        .collect();
    plots(opts, &lines, progress)?;
    Ok(claims(&scale, &lines))
}

/// `base` on `nodes` nodes at `load` until `flows` complete, without its sweep. Shoal's rack
/// scales as the other datacenter experiments do; the Clos keeps full bisection on the smallest
/// switches that hold the hosts; the torus takes the most cube-like shape.
fn scaled(base: &Scenario, nodes: u32, load: f64, flows: u64) -> Result<Scenario, ReproError> {
    let Some(net) = base.spec::<shoal_psn::NetworkSpec>() else {
        let nodes =
            u16::try_from(nodes).map_err(|_| ReproError(format!("{nodes} nodes is too many")))?;
        return point::at_load(base, nodes, load, flows);
    };
    let int = |v: u32| toml::Value::Integer(v.into());
    let mut settings = vec![
        ("workload.load", toml::Value::Float(load)),
        ("run.completed_flows", toml::Value::Integer(flows as i64)),
    ];
    if net.topology.hosts() != nodes as usize {
        if base.fabric_name() == "r2c2" {
            let (x, y, z) = torus_shape(nodes);
            settings.extend([
                ("network.x", int(x)),
                ("network.y", int(y)),
                ("network.z", int(z)),
            ]);
        } else {
            settings.extend([
                ("network.hosts", int(nodes)),
                ("network.radix", int(clos_radix(nodes))),
            ]);
        }
    }
    let mut s = base
        .with_settings(&settings)
        .map_err(|e| ReproError(e.to_string()))?;
    s.sweep = None;
    Ok(s)
}

/// The smallest even radix whose two-tier full-bisection Clos holds `hosts` in whole leaves of
/// radix/2 hosts and at most radix leaves (32 for 512 hosts, as the scenario files have).
pub(crate) fn clos_radix(hosts: u32) -> u32 {
    (2..)
        .step_by(2)
        .find(|&r: &u32| hosts.is_multiple_of(r / 2) && hosts / (r / 2) <= r)
        .unwrap_or(hosts * 2)
}

/// x ≥ y ≥ z with x·y·z = `nodes`, x as small as possible and then z as large as possible
/// (8x8x8 for 512, 4x4x4 for 64, 8x4x4 for 128).
fn torus_shape(nodes: u32) -> (u32, u32, u32) {
    let mut best = (nodes, 1, 1);
    for z in 1..=nodes {
        if z * z * z > nodes {
            break;
        }
        if !nodes.is_multiple_of(z) {
            continue;
        }
        let rest = nodes / z;
        for y in z..=rest {
            if y * y > rest {
                break;
            }
            let x = rest / y;
            // The smallest longest side, then the largest shortest one (8x4x4, not 8x8x2).
            if rest.is_multiple_of(y) && (x < best.0 || (x == best.0 && z > best.2)) {
                best = (x, y, z);
            }
        }
    }
    best
}

/// One fabric at one load, ready to run.
struct Run {
    name: &'static str,
    load: f64,
    /// Completed flows it runs until.
    flows: u64,
    scenario: Scenario,
}

/// Runs one point and reads the figure's numbers from it, with its progress line.
fn run_point(opts: &Options, run: &Run) -> Result<(Point, String), ReproError> {
    let (s, name, load, wanted) = (&run.scenario, run.name, run.load, run.flows);
    // Its wall time goes into the progress line only (the budget of issue 36), never into a
    // claim.
    let mut out = None;
    let wall = wall_seconds(|| out = Some(point::run(s, opts)));
    let out = out.expect("wall_seconds runs its closure")?;
    let ideal = s.ideal_fct().map_err(|e| ReproError(e.to_string()))?;
    let fs = FlowSummary::with_ideal(&out.records, &ideal);
    let counter = |k: &str| out.counters.get(k).copied().unwrap_or(0);
    let short = fs
        .short_fct_us
        .ok_or_else(|| ReproError(format!("{name}: no short flow completed at load {load}")))?;
    let p = Point {
        load,
        short_mean_us: short.mean,
        short_p99_us: short.p99,
        long_gbps: fs.long_goodput_gbps.map(|g| g.mean),
        completed: fs.completed,
        wanted,
        drops: counter("packets_dropped"),
        timeouts: counter("retransmission_timeouts"),
        open: out.counters.get("flows_unfinished").copied(),
    };
    let line = format!(
        "fig15-baselines: {name} ({}), load {load}: {} of {wanted} flows completed; short FCT \
         mean {:.2} us, p99 {:.2} us; long goodput {} ({} long flows); {} drops, {} timeouts, {} flows \
         open at the end; {:.0} s wall",
        s.fabric_name(),
        p.completed,
        p.short_mean_us,
        p.short_p99_us,
        p.long_gbps
            .map_or_else(|| "-".to_owned(), |g| format!("{g:.2} Gb/s")),
        fs.long_completed,
        p.drops,
        p.timeouts,
        p.open.map_or_else(|| "-".to_owned(), |n| n.to_string()),
        wall
    );
    Ok((p, line))
}

/// Ratios `f(base, shoal)` at the measured loads of `band` where both have a value.
fn ratios(
    shoal: &Line,
    other: &Line,
    band: (f64, f64),
    f: &dyn Fn(&Point, &Point) -> Option<f64>,
) -> Vec<(f64, f64)> {
    band_points(shoal, band)
        .filter_map(|s| {
            let o = other.at(s.load)?;
            f(o, s).filter(|r| r.is_finite()).map(|r| (s.load, r))
        })
        .collect()
}

/// "0.2: Shoal 11.91 vs DCTCP 22.03 us": one measure of Shoal and `other` at each load of `band`.
fn side_by_side(shoal: &Line, other: &Line, band: (f64, f64), f: fn(&Point) -> f64) -> String {
    let each: Vec<String> = band_points(shoal, band)
        .filter_map(|s| {
            let o = other.at(s.load)?;
            Some(format!(
                "{}: Shoal {:.2} vs {} {:.2} us",
                s.load,
                f(s),
                other.name,
                f(o)
            ))
        })
        .collect();
    each.join(", ")
}

/// A line's points at the loads of `band`, in load order.
fn band_points(line: &Line, (lo, hi): (f64, f64)) -> impl Iterator<Item = &Point> {
    line.points
        .iter()
        .filter(move |p| p.load >= lo - 1e-9 && p.load <= hi + 1e-9)
}

fn geomean(rs: &[(f64, f64)]) -> f64 {
    (rs.iter().map(|(_, r)| r.ln()).sum::<f64>() / rs.len() as f64).exp()
}

/// "2.10x (0.2: 2.10x)": the summary value and the ratio at each load behind it.
fn shown(value: f64, rs: &[(f64, f64)]) -> String {
    let each: Vec<String> = rs.iter().map(|(l, r)| format!("{l}: {r:.2}x")).collect();
    format!("{value:.2}x ({})", each.join(", "))
}

/// A ratio claim within ±`TOL` of the paper's, summarised by `pick` over the loads of `band`;
/// `None` when no measured load falls in the band.
fn ratio_claim(
    claim: &str,
    paper: f64,
    rs: &[(f64, f64)],
    pick: fn(&[(f64, f64)]) -> f64,
) -> Option<Claim> {
    if rs.is_empty() {
        return None;
    }
    let ours = pick(rs);
    Some(Claim::new(
        FIG,
        claim,
        format!("{paper:.1}x"),
        shown(ours, rs),
        format!(
            "±{:.0}% ({:.2}-{:.2}x)",
            TOL * 100.0,
            paper * (1.0 - TOL),
            paper * (1.0 + TOL)
        ),
        (ours - paper).abs() <= TOL * paper,
    ))
}

fn claims(scale: &Scale, lines: &[Line]) -> Vec<Claim> {
    let shoal = &lines[0];
    let all = (f64::MIN, f64::MAX);
    let band = |b: (f64, f64)| format!("L {}-{}", b.0, b.1);
    let tail: &dyn Fn(&Point, &Point) -> Option<f64> =
        &|o, s| Some(o.short_p99_us / s.short_p99_us);
    let mean: &dyn Fn(&Point, &Point) -> Option<f64> =
        &|o, s| Some(s.short_mean_us / o.short_mean_us);
    let goodput: &dyn Fn(&Point, &Point) -> Option<f64> = &|o, s| Some(s.long_gbps? / o.long_gbps?);
    let mut out = Vec::new();

    // Every run completed its flows (otherwise it stopped at another limit and its numbers
    // describe a different set of flows).
    let short: Vec<String> = lines
        .iter()
        .flat_map(|l| {
            l.points
                .iter()
                .filter(|p| (p.completed as u64) < p.wanted)
                .map(move |p| format!("{} at {}: {} of {}", l.name, p.load, p.completed, p.wanted))
        })
        .collect();
    out.push(
        Claim::new(
            FIG,
            "every fabric completes its flows at every load",
            "1,000,000 flows per point",
            if short.is_empty() {
                format!(
                    "all {} runs ({} flows, torus {})",
                    lines.iter().map(|l| l.points.len()).sum::<usize>(),
                    scale.flows,
                    scale.torus_flows
                )
            } else {
                short.join("; ")
            },
            "every run reaches its count",
            short.is_empty(),
        )
        .because(
            "a run ended (its workload or a time limit ran out) before that many flows completed, \
         so its figures describe the flows it finished",
        ),
    );

    for (line, (low, high)) in lines[1..].iter().zip([(3.0, 2.0), (3.0, 2.0), (1.5, 2.0)]) {
        let n = line.name;
        // The measured p99s behind a tail ratio and what they show when it misses, read from
        // the measurement: above a paper's ratio under 2 (NDP at low load), serialisation at
        // half Shoal's bandwidth; a baseline tail past its minimum RTO, timeouts; otherwise, at
        // low load, two fabrics that barely queue, and at high load, how fast each tail rises.
        let tail_why = |b: (f64, f64), paper: f64| {
            let p99s = side_by_side(shoal, line, b, |p| p.short_p99_us);
            let ours = geomean(&ratios(shoal, line, b, tail));
            let losses: Vec<String> = band_points(line, b)
                .filter(|p| p.timeouts > 0)
                .map(|p| format!("{}: {} drops, {} timeouts", p.load, p.drops, p.timeouts))
                .collect();
            if ours > paper && paper < 2.0 {
                format!(
                    "short-flow p99 {p99s}: the tail short flows are near 100 KB, which take 16 us \
                     to serialise at the baselines' 50 Gb/s against 8 us at Shoal's 100, plus 1 us \
                     per link (htsim's): a ratio near 2 with no queueing at all, above the \
                     paper's (docs/results/baselines.md, 'Side by side with htsim')"
                )
            } else if ours > paper && !losses.is_empty() {
                format!(
                    "short-flow p99 {p99s}: {n}'s queues overflow ({}) and its slowest short \
                     flows wait for a retransmission timeout (docs/results/baselines.md, 'Full \
                     scale with htsim's settings')",
                    losses.join("; ")
                )
            } else if b == LOW {
                format!(
                    "short-flow p99 {p99s}: at low load neither fabric queues much; a baseline's \
                     tail is near a 100 KB flow's serialisation at 50 Gb/s (16 us) plus 1 us on \
                     each of its four links (htsim's), Shoal's near the same flow at 100 Gb/s \
                     (8 us) plus its waits for slots, a ratio near 1.5 (docs/results/baselines.md, \
                     'Full scale with htsim's settings')"
                )
            } else {
                let rise = |l: &Line| {
                    let p99: Vec<f64> = band_points(l, b).map(|p| p.short_p99_us).collect();
                    p99.last().zip(p99.first()).map_or(1.0, |(z, a)| z / a)
                };
                format!(
                    "short-flow p99 {p99s}: across the band Shoal's p99 rises {:.2}x and {n}'s \
                     {:.2}x; at high load most of a Shoal short flow's time is spent in the \
                     intermediate node's queue, which is served once per epoch \
                     (docs/results/shoal-datacenter.md, 'Where a short flow's time goes')",
                    rise(shoal),
                    rise(line)
                )
            }
        };
        out.extend(
            ratio_claim(
                &format!("short-flow p99 FCT, {n} / Shoal, low load ({})", band(LOW)),
                low,
                &ratios(shoal, line, LOW, tail),
                geomean,
            )
            .map(|c| c.because(tail_why(LOW, low))),
        );
        out.extend(
            ratio_claim(
                &format!(
                    "short-flow p99 FCT, {n} / Shoal, high load ({})",
                    band(HIGH)
                ),
                high,
                &ratios(shoal, line, HIGH, tail),
                geomean,
            )
            .map(|c| c.because(tail_why(HIGH, high))),
        );
        out.extend(ratio_claim(
            &format!("long-flow goodput, Shoal / {n}, every load"),
            1.7,
            &ratios(shoal, line, all, goodput),
            geomean,
        ));
        let rs = ratios(shoal, line, (0.0, MODERATE), mean);
        if !rs.is_empty() {
            let ours = geomean(&rs);
            let claim = format!("short-flow mean FCT, Shoal / {n}, L ≤ {MODERATE}");
            let means = side_by_side(shoal, line, (0.0, MODERATE), |p| p.short_mean_us);
            // Shoal's waits for its slots grow with the epoch, so with the node count, while
            // the baselines' short flows pay their links' delay at any size: below the paper's
            // 512 nodes the ratio falls with the rack, and a small rack's verdict can differ
            // for that reason. At 512 nodes a miss is said with its numbers and the flows.
            let mean_why = if scale.nodes < PAPER_NODES {
                format!(
                    "short-flow mean {means} at {} nodes: a Shoal cell waits for its slot to a \
                     random intermediate and again for the slot onward, waits that grow with the \
                     epoch and so with the node count, while a baseline's short flow pays 1 us \
                     on each of up to four links (htsim's) at any size: the ratio rises with the \
                     node count (docs/results/baselines.md, 'Quick and full scale')",
                    scale.nodes
                )
            } else {
                format!(
                    "short-flow mean {means} over {} flows a point: the two means are within \
                     {:.0}% of each other (docs/results/baselines.md, 'Quick and full scale')",
                    scale.flows,
                    (ours - 1.0).abs() * 100.0
                )
            };
            out.push(
                if n == "NDP" {
                    Claim::new(
                        FIG,
                        &claim,
                        "slightly higher (> 1x)",
                        shown(ours, &rs),
                        format!("1-{:.2}x", 1.0 + TOL),
                        ours > 1.0 && ours <= 1.0 + TOL,
                    )
                } else {
                    Claim::new(
                        FIG,
                        &claim,
                        "comparable (1x)",
                        shown(ours, &rs),
                        format!("±{:.0}% ({:.2}-{:.2}x)", TOL * 100.0, 1.0 - TOL, 1.0 + TOL),
                        (ours - 1.0).abs() <= TOL,
                    )
                }
                .because(mean_why),
            );
        }
    }

    if let Some(torus) = lines.iter().find(|l| l.name == TORUS.1) {
        let max = |rs: &[(f64, f64)]| rs.iter().map(|(_, r)| *r).fold(f64::MIN, f64::max);
        let tails = ratios(shoal, torus, all, tail);
        let goods = ratios(shoal, torus, all, goodput);
        // What a torus ratio shows: the flows still open at the end of each run (they pile
        // up once the torus saturates, and every max-min share shrinks with them).
        let open: Vec<String> = torus
            .points
            .iter()
            .filter_map(|p| Some(format!("{}: {}", p.load, p.open?)))
            .collect();
        let torus_why = format!(
            "flows still open on the torus when the run ends, by load: {}; a uniform pair \
             crosses k/4 links a dimension on average on a k-ary torus (6 on the 512-node \
             8x8x8) and a node's 100 Gb/s is split over its 6 links, so the torus saturates \
             near L = 1/3 there; above it open flows pile up, every max-min share shrinks with \
             them, and the ratio grows with the run's length (docs/results/baselines.md, 'R2C2 \
             torus at full scale')",
            open.join(", ")
        );
        out.extend(
            ratio_claim(
                "short-flow p99 FCT, torus / Shoal, up to (largest over loads)",
                14.9,
                &tails,
                max,
            )
            .map(|c| c.because(torus_why.clone())),
        );
        out.extend(
            ratio_claim(
                "long-flow goodput, Shoal / torus, up to (largest over loads)",
                4.8,
                &goods,
                max,
            )
            .map(|c| c.because(torus_why.clone())),
        );
        let worst = tails
            .iter()
            .chain(&goods)
            .map(|(_, r)| *r)
            .fold(f64::MAX, f64::min);
        out.push(
            Claim::new(
                FIG,
                "Shoal beats the torus at every load (p99 FCT and goodput)",
                "every load",
                format!(
                    "smallest ratio {worst:.2}x{}",
                    if goods.is_empty() {
                        " (p99 only: no long flow completed on the torus)"
                    } else {
                        ""
                    }
                ),
                "every ratio > 1",
                !tails.is_empty() && worst > 1.0,
            )
            .because(torus_why),
        );
    }
    out
}

/// Fig. 15a (short-flow mean and p99 FCT) and 15b (long-flow goodput), one series per fabric.
fn plots(opts: &Options, lines: &[Line], progress: &mut dyn FnMut(&str)) -> Result<(), ReproError> {
    let series = |f: &dyn Fn(&Point) -> Option<f64>| -> Vec<Series> {
        lines
            .iter()
            .map(|l| {
                Series::new(
                    l.name,
                    l.points
                        .iter()
                        .filter_map(|p| f(p).map(|y| (p.load, y)))
                        .collect(),
                )
            })
            .collect()
    };
    let figures = [
        (
            "fig15-baselines-short-mean",
            "Fig. 15a: short flows (<= 100 KB), mean FCT",
            Axis::log("Mean FCT (µs)"),
            series(&|p| Some(p.short_mean_us)),
        ),
        (
            "fig15-baselines-short-p99",
            "Fig. 15a: short flows (<= 100 KB), 99th-percentile FCT",
            Axis::log("99th-percentile FCT (µs)"),
            series(&|p| Some(p.short_p99_us)),
        ),
        (
            "fig15-baselines-long-goodput",
            "Fig. 15b: long flows (>= 1 MB), average goodput",
            Axis::linear("Average goodput (Gb/s)"),
            series(&|p| p.long_gbps),
        ),
    ];
    for (stem, title, y, series) in figures {
        let fig = Figure {
            title: title.into(),
            x: Axis::linear("Load"),
            y,
            series,
            kind: Kind::Lines,
        };
        emit(opts, fig, stem, progress)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_hold_the_nodes() {
        assert_eq!(clos_radix(512), 32);
        assert_eq!(clos_radix(64), 16);
        assert_eq!(clos_radix(128), 16);
        assert_eq!(torus_shape(512), (8, 8, 8));
        assert_eq!(torus_shape(64), (4, 4, 4));
        assert_eq!(torus_shape(128), (8, 4, 4));
    }

    #[test]
    fn scale_settings_parse() {
        let mut s = Scale::quick();
        s.apply("nodes=512 loads=0.2,0.7 flows=20000 torus_flows=0")
            .unwrap();
        assert_eq!(
            s,
            Scale {
                nodes: 512,
                loads: vec![0.2, 0.7],
                flows: 20_000,
                torus_flows: 0
            }
        );
        assert!(s.apply("nodes=1").is_err());
        assert!(s.apply("speed=3").is_err());
    }

    /// The runs go side by side on `--threads`, each a pure function of its scenario: the
    /// claims (numbers and verdicts) are the same on one thread and on two.
    #[test]
    fn claims_do_not_depend_on_threads() {
        let at = |threads| {
            let opts = Options {
                scale: Some("nodes=16 loads=0.2,0.7 flows=300 torus_flows=300".into()),
                threads,
                ..Options::default()
            };
            run(&opts, &mut |_| {}).expect("a tiny run")
        };
        let one = at(1);
        assert_eq!(one.len(), 15, "{one:?}");
        assert_eq!(one, at(2));
    }
}
