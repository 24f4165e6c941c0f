//! XFabric's Production stand-in examined (issue 22): which Fig. 2 and Fig. 4 claims on Production
//! survive across the plausible range of the stand-in's parameters.
//!
//! The real trace is not public, and §6.1 states only its structure (339 servers, heavy traffic
//! inside hostname groups, many-to-one flows to a server of another group, uplink traffic for
//! unknown addresses), no number. The stand-in's parameters are the keys of
//! `xfabric_production.toml` beside this file (`[production]`, each base value an assumption; not
//! in `scenarios/`, since `shoal run` cannot read it) and its `[sweep]` moves one key at a time
//! over the range we call plausible, fixed before running. At each point, 343 SoCs as Fig. 2 and
//! 4(b): XFabric (its uplink placement, then Algorithm 1), the 7x7x7 torus and the random 6-regular
//! graph, path lengths per byte over shortest paths (what Fig. 4 measures; Fig. 2's flow simulator
//! reports the same mean path length) and Fig. 4(b)'s uplink paths. OSA is left out: Fig. 2's
//! XFabric ≈ OSA claim stays with `xfabric-fig2`.
//!
//! Beside each point, what decides XFabric's path length: the SoCs' peers (distinct SoCs a SoC
//! exchanges bytes with inside the rack), their median and the share of SoCs with more than d = 6.
//!
//! Claims: each Fig. 2/4 Production claim with the tolerance of its experiment, checked at every
//! point; it "survives" if it holds at every point of the range, and the claim row lists where it
//! holds. Quick: 64 SoCs (4x4x4 torus), the base point and one point per swept key's ends.

use super::xfabric_common::{PORTS, SEED, err, hops_without_osa, on_production_stand_in};
use crate::{Claim, Options, ReproError};
use serde::Deserialize;
use shoal_base::NodeId;
use shoal_workload::{ProductionParams, production_like};
use shoal_xfabric::{Demand, full_demand_of};

const FIG: &str = "XFabric Production stand-in";
const FILE: &str = "crates/repro/src/experiments/xfabric_production.toml";
const TEXT: &str = include_str!("xfabric_production.toml");

/// `[production]`: the stand-in's parameters (`shoal_workload::ProductionParams`, bytes fixed).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Production {
    trace_servers: usize,
    group_min: usize,
    group_max: usize,
    intra_group_ppm: u32,
    many_to_one_ppm: u32,
    hub_groups_ppm: u32,
    external_ppm: u32,
    egress_ppm: u32,
    external_servers_ppm: u32,
    background_pairs_per_server: usize,
}

/// `[sweep]`: the values each key takes, one key at a time.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sweep {
    groups: Vec<[usize; 2]>,
    background_pairs_per_server: Vec<usize>,
    intra_group_ppm: Vec<u32>,
    many_to_one_ppm: Vec<u32>,
    hub_groups_ppm: Vec<u32>,
    external_servers_ppm: Vec<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    production: Production,
    sweep: Sweep,
}

impl Production {
    fn params(&self) -> ProductionParams {
        ProductionParams {
            trace_servers: self.trace_servers,
            group_min: self.group_min,
            group_max: self.group_max,
            intra_group_ppm: self.intra_group_ppm,
            many_to_one_ppm: self.many_to_one_ppm,
            hub_groups_ppm: self.hub_groups_ppm,
            external_ppm: self.external_ppm,
            egress_ppm: self.egress_ppm,
            external_servers_ppm: self.external_servers_ppm,
            background_pairs_per_server: self.background_pairs_per_server,
            ..ProductionParams::default()
        }
    }
}

/// The points of the sweep: a label and the parameters, the base point first.
fn points(file: &File, quick: bool) -> Vec<(String, Production)> {
    let base = file.production;
    let s = &file.sweep;
    let mut out = vec![("base".to_owned(), base)];
    let mut add = |label: String, p: Production| {
        if !out.iter().any(|(_, q)| q.params() == p.params()) {
            out.push((label, p));
        }
    };
    // The quick run keeps each key's two ends.
    fn ends<T: Copy>(v: &[T], quick: bool) -> Vec<T> {
        if quick && v.len() > 2 {
            vec![v[0], v[v.len() - 1]]
        } else {
            v.to_vec()
        }
    }
    for [lo, hi] in ends(&s.groups, quick) {
        add(
            format!("groups {lo}-{hi}"),
            Production {
                group_min: lo,
                group_max: hi,
                ..base
            },
        );
    }
    for v in ends(&s.background_pairs_per_server, quick) {
        add(
            format!("background pairs {v}"),
            Production {
                background_pairs_per_server: v,
                ..base
            },
        );
    }
    for v in ends(&s.intra_group_ppm, quick) {
        add(
            format!("intra-group {}%", v / 10_000),
            Production {
                intra_group_ppm: v,
                ..base
            },
        );
    }
    for v in ends(&s.many_to_one_ppm, quick) {
        add(
            format!("many-to-one {}%", v / 10_000),
            Production {
                many_to_one_ppm: v,
                ..base
            },
        );
    }
    for v in ends(&s.hub_groups_ppm, quick) {
        add(
            format!("hub groups {}%", v / 10_000),
            Production {
                hub_groups_ppm: v,
                ..base
            },
        );
    }
    for v in ends(&s.external_servers_ppm, quick) {
        add(
            format!("front ends {}%", v / 10_000),
            Production {
                external_servers_ppm: v,
                ..base
            },
        );
    }
    out
}

/// What one point measured.
struct Point {
    label: String,
    /// Path length per byte: XFabric, torus, Random.
    hops: [f64; 3],
    /// Uplink path length per byte, same order.
    uplink: [f64; 3],
    /// Median peers per SoC, and the share of SoCs with more than d.
    median_peers: usize,
    over_d: f64,
}

/// Distinct SoCs each SoC exchanges internal bytes with (either direction).
fn peers(demand: &Demand) -> Vec<usize> {
    let n = demand.socs();
    let m = demand.internal();
    (0..n)
        .map(|s| {
            (0..n)
                .filter(|&t| {
                    t != s && {
                        let (a, b) = (NodeId(s as u16), NodeId(t as u16));
                        m.get(a, b) + m.get(b, a) > 0
                    }
                })
                .count()
        })
        .collect()
}

fn measure(socs: usize, label: &str, p: &Production) -> Result<Point, ReproError> {
    let (flows, _) = production_like(socs, &p.params(), SEED)
        .map_err(|e| ReproError(format!("{FILE}: {label}: {e}")))?;
    let demand = full_demand_of(&flows, socs).map_err(|e| err("demand")(&e))?;
    let (hops, uplink) = hops_without_osa(socs, &demand)?;
    let mut k = peers(&demand);
    let over_d = k.iter().filter(|&&x| x > PORTS).count() as f64 / k.len() as f64;
    k.sort_unstable();
    Ok(Point {
        label: label.to_owned(),
        hops,
        uplink,
        median_peers: k[k.len() / 2],
        over_d,
    })
}

/// One claim of Fig. 2 or 4 on Production: its text, the paper's value, the tolerance, and the
/// check at one point (ours as text, pass).
struct Check {
    claim: &'static str,
    paper: &'static str,
    tolerance: &'static str,
    at: fn(&Point) -> (String, bool),
}

/// The Production claims of `xfabric-fig2` and `xfabric-fig4` that need no OSA, with their
/// tolerances.
const CHECKS: [Check; 5] = [
    Check {
        claim: "Fig. 2 XFabric path length",
        paper: "1.06 hops",
        tolerance: "±15%",
        at: |p| {
            let h = p.hops[0];
            (format!("{h:.2}"), (h - 1.06).abs() <= 0.15 * 1.06)
        },
    },
    Check {
        claim: "Fig. 2 3D torus / XFabric path length",
        paper: "6.00 x",
        tolerance: "±25%",
        at: |p| {
            let r = p.hops[1] / p.hops[0];
            (format!("{r:.2}"), (r - 6.0).abs() <= 0.25 * 6.0)
        },
    },
    Check {
        claim: "Fig. 2 Random / XFabric path length",
        paper: "3.70 x",
        tolerance: "±25%",
        at: |p| {
            let r = p.hops[2] / p.hops[0];
            (format!("{r:.2}"), (r - 3.7).abs() <= 0.25 * 3.7)
        },
    },
    Check {
        claim: "Fig. 4(b) XFabric uplink path shorter than Random",
        paper: "32%",
        tolerance: "±10 points",
        at: |p| {
            let cut = 1.0 - p.uplink[0] / p.uplink[2];
            (format!("{:.0}%", cut * 100.0), (cut - 0.32).abs() <= 0.10)
        },
    },
    Check {
        claim: "Fig. 4(b) XFabric uplink path shorter than 3D torus",
        paper: "37%",
        tolerance: "±10 points",
        at: |p| {
            let cut = 1.0 - p.uplink[0] / p.uplink[1];
            (format!("{:.0}%", cut * 100.0), (cut - 0.37).abs() <= 0.10)
        },
    },
];

fn load() -> Result<File, ReproError> {
    let file: File = toml::from_str(TEXT).map_err(|e| ReproError(format!("{FILE}: {e}")))?;
    if file.sweep.groups.iter().any(|[lo, hi]| lo > hi || *lo < 2) {
        return Err(ReproError(format!(
            "{FILE}: sweep.groups: each [min, max] needs 2 <= min <= max"
        )));
    }
    Ok(file)
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let file = load()?;
    let socs = if opts.quick { 64 } else { 343 };
    let mut pts = Vec::new();
    for (label, p) in points(&file, opts.quick) {
        let pt = measure(socs, &label, &p)?;
        progress(&format!(
            "{socs} SoCs, {label}: peers median {}, {:.0}% over d; path XFabric {:.3}, \
             torus {:.3}, Random {:.3}; uplink path {:.3}, {:.3}, {:.3}",
            pt.median_peers,
            pt.over_d * 100.0,
            pt.hops[0],
            pt.hops[1],
            pt.hops[2],
            pt.uplink[0],
            pt.uplink[1],
            pt.uplink[2]
        ));
        pts.push(pt);
    }
    let mut claims = Vec::new();
    for check in &CHECKS {
        let claim = format!(
            "{} holds over the plausible range ({socs} SoCs)",
            check.claim
        );
        let mut held = Vec::new();
        let mut missing = false;
        let mut values = Vec::new();
        for p in &pts {
            let (ours, pass) = (check.at)(p);
            missing |= ours.contains("NaN");
            if pass {
                held.push(p.label.as_str());
            }
            values.push(format!("{}: {ours}", p.label));
        }
        claims.push(if missing {
            Claim::not_checked(FIG, &claim, check.paper, "a point measured no uplink path")
        } else {
            Claim::new(
                FIG,
                &claim,
                check.paper,
                format!(
                    "holds at {} of {} points ({}); {}",
                    held.len(),
                    pts.len(),
                    if held.is_empty() {
                        "none".to_owned()
                    } else {
                        held.join(", ")
                    },
                    values.join("; ")
                ),
                format!("{} at every point", check.tolerance),
                held.len() == pts.len(),
            )
        });
    }
    Ok(claims.into_iter().map(on_production_stand_in).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scenario_file_parses_and_every_point_is_a_valid_stand_in() {
        let file = load().unwrap();
        let pts = points(&file, false);
        assert_eq!(pts[0].0, "base");
        assert_eq!(pts[0].1.params(), ProductionParams::default());
        for (label, p) in &pts {
            production_like(64, &p.params(), SEED).unwrap_or_else(|e| panic!("{label}: {e}"));
        }
        // One key at a time: every point differs from the base in one key (two for the groups).
        assert!(pts.len() > 10, "{}", pts.len());
    }

    #[test]
    fn an_unknown_key_is_refused_naming_it() {
        let bad = TEXT.replace("group_min = 3", "group_mn = 3");
        let e = toml::from_str::<File>(&bad).unwrap_err().to_string();
        assert!(e.contains("group_mn"), "{e}");
    }
}
