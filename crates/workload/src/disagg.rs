//! The disaggregated-rack workload of the Shoal paper (§7.4). The paper maps each rack node to
//! one resource (CPU, memory or storage), creates flows between them "following the
//! distributions observed" in the traces of Gao et al. (OSDI 2016, "Network Requirements for
//! Resource Disaggregation") for six applications (batch processing, graph processing,
//! interactive queries and relational queries), finds the result far more skewed than §7.3
//! (more than 84% of flows among a third of the nodes) and runs it with a mean inter-arrival
//! time of 12.65 ns rack-wide.
//!
//! Those traces are not available, so this module is a **parameterised model** of what the text
//! states, not a replay. Every number in an [`AppProfile`] is our assumption, written in the
//! profile (its `rationale` and each class's `what`) and printed by [`AppProfile::describe`];
//! all fields are public and serialisable so a scenario can override and print them.
//!
//! The model, per flow: pick a traffic class (a role pair such as memory→CPU) by weight; with
//! probability `hot_share` draw both endpoints from the *hot* nodes of their roles (the first
//! `hot_nodes` fraction of each role, about a third of the rack), otherwise uniformly from all
//! nodes of the role; draw the size from the class's distribution. Starts are Poisson.

use crate::arrivals::{ArrivalError, Arrivals, load_of};
use crate::generator::{Draw, PAIRS_STREAM, Paced, SIZES_STREAM, paced_flow_source};
use crate::matrix::shuffle;
use crate::sizes::{Bytes, SizeDist, SizeError};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use shoal_base::rng::{StreamRng, stream};
use shoal_base::{NodeId, Rate, Time};
use std::fmt;
use thiserror::Error;

/// §7.4's mean inter-arrival time of flows across the rack: 12.65 ns.
pub const PAPER_MEAN_GAP_PS: f64 = 12_650.0;

/// The stream that shuffles nodes into roles.
const LAYOUT_STREAM: &str = "workload.disagg.layout";

mod apps;
mod profile;

pub use apps::App;
pub use profile::{AppProfile, PerRole, Role, TrafficClass};

/// A profile or rack that cannot make a disaggregated workload.
#[derive(Debug, Error, PartialEq)]
pub enum DisaggError {
    #[error("a disaggregated rack of {0} nodes: need between 2 and 65536")]
    Nodes(usize),
    #[error("{role} share {value} must be a finite number >= 0")]
    RoleShare { role: Role, value: f64 },
    #[error("role shares sum to 0: no node would have a role")]
    NoRoles,
    #[error("{roles} roles need at least {roles} nodes, the rack has {nodes}")]
    TooSmall { roles: usize, nodes: usize },
    #[error("the profile has no traffic class with a positive weight")]
    NoTraffic,
    #[error("class {class}: weight {weight} must be a finite number >= 0")]
    Weight { class: usize, weight: f64 },
    #[error("class {class}: sizes: {source}")]
    Sizes {
        class: usize,
        #[source]
        source: SizeError,
    },
    #[error("class {class} involves {role} nodes, but the {role} share is 0")]
    RoleWithoutNodes { class: usize, role: Role },
    #[error(
        "class {class} sends {role} to {role}: needs at least 2 {role} nodes ({which}), has {have}"
    )]
    SameRole {
        class: usize,
        role: Role,
        which: &'static str,
        have: usize,
    },
    #[error("hot node fraction {0} must lie in (0, 1]")]
    HotNodes(f64),
    #[error("hot share {0} must lie within 0..=1")]
    HotShare(f64),
    #[error("arrivals: {0}")]
    Arrivals(#[from] ArrivalError),
}

/// The parameters of a [`Disagg`] generator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DisaggSpec {
    pub nodes: usize,
    pub profile: AppProfile,
    /// Mean gap between flows across the rack, in picoseconds (Poisson).
    pub mean_gap_ps: f64,
    pub max_flows: Option<u64>,
    /// Stop at the first flow that would start at or after this time.
    pub until: Option<Time>,
}

impl DisaggSpec {
    /// `app`'s profile on `nodes` nodes with the paper's 12.65 ns gap and no limit.
    pub fn paper(app: App, nodes: usize) -> DisaggSpec {
        DisaggSpec {
            nodes,
            profile: app.profile(),
            mean_gap_ps: PAPER_MEAN_GAP_PS,
            max_flows: None,
            until: None,
        }
    }
}

/// The rack's nodes by role: each role's nodes in shuffled order, its first `hot[r]` hot.
struct Layout {
    nodes: [Vec<NodeId>; 3],
    hot: [usize; 3],
}

impl Layout {
    /// Largest-remainder apportionment of `n` nodes to the role shares, then at least one node
    /// per role with a positive share; node ids are shuffled into roles, so roles do not sit in
    /// contiguous id ranges (which would matter to topologies that are not all-to-all).
    fn new(p: &AppProfile, n: usize, rng: &mut StreamRng) -> Result<Layout, DisaggError> {
        let shares = Role::ALL.map(|r| p.roles.get(r));
        let roles = shares.iter().filter(|&&s| s > 0.0).count();
        if n < roles {
            return Err(DisaggError::TooSmall { roles, nodes: n });
        }
        let total: f64 = shares.iter().sum();
        let ideal = shares.map(|s| s / total * n as f64);
        let mut count = ideal.map(|x| x.floor() as usize);
        let mut by_remainder = [0, 1, 2];
        by_remainder.sort_by(|&a, &b| {
            (ideal[b] - ideal[b].floor()).total_cmp(&(ideal[a] - ideal[a].floor()))
        });
        let short = n.saturating_sub(count.iter().sum());
        for &r in by_remainder.iter().take(short) {
            count[r] += 1;
        }
        for r in 0..3 {
            if shares[r] > 0.0 && count[r] == 0 {
                let largest = (0..3).max_by_key(|&q| (count[q], 3 - q)).unwrap_or(0);
                count[largest] -= 1;
                count[r] += 1;
            }
        }
        let mut ids: Vec<NodeId> = (0..n).map(|i| NodeId(i as u16)).collect();
        shuffle(&mut ids, rng);
        let mut rest = ids.as_slice();
        let nodes = count.map(|c| {
            let (mine, others) = rest.split_at(c);
            rest = others;
            mine.to_vec()
        });
        let hot = count.map(|c| {
            if c == 0 {
                0
            } else {
                ((p.hot_nodes * c as f64).floor() as usize).clamp(1, c)
            }
        });
        let layout = Layout { nodes, hot };
        layout.check_same_role_classes(p)?;
        Ok(layout)
    }

    /// A class within one role needs two distinct nodes in every pool it draws from.
    fn check_same_role_classes(&self, p: &AppProfile) -> Result<(), DisaggError> {
        for (i, c) in p.classes.iter().enumerate() {
            if c.weight == 0.0 || c.from != c.to {
                continue;
            }
            let r = c.from.idx();
            let mut pools = vec![("all", self.nodes[r].len())];
            if p.hot_share > 0.0 {
                pools.push(("hot", self.hot[r]));
            }
            for (which, have) in pools {
                if have < 2 {
                    return Err(DisaggError::SameRole {
                        class: i,
                        role: c.from,
                        which,
                        have,
                    });
                }
            }
        }
        Ok(())
    }

    fn pool(&self, role: Role, hot: bool) -> &[NodeId] {
        let all = &self.nodes[role.idx()];
        if hot {
            &all[..self.hot[role.idx()]]
        } else {
            all
        }
    }

    /// P(a node in role `r`'s pool is picked), as an endpoint of a class, for a hot (or cold)
    /// node: h/k + (1−h)/n (or (1−h)/n). Within one role the destination, uniform over the
    /// pool without the source, has the same marginal.
    fn pick_probability(&self, r: Role, hot_node: bool, hot_share: f64) -> f64 {
        let (k, n) = (self.hot[r.idx()] as f64, self.nodes[r.idx()].len() as f64);
        let cold = (1.0 - hot_share) / n;
        if hot_node { hot_share / k + cold } else { cold }
    }
}

struct DisaggDraw {
    layout: Layout,
    classes: Vec<(Role, Role, SizeDist, StreamRng)>,
    /// Normalised cumulative class weights; the last is exactly 1.
    cum: Vec<f64>,
    hot_share: f64,
    pair_rng: StreamRng,
}

impl Draw for DisaggDraw {
    fn draw(&mut self) -> (NodeId, NodeId, u64) {
        let rng = &mut self.pair_rng;
        let u: f64 = rng.random();
        // Zero-weight classes repeat the previous cumulative value and are never picked.
        let c = self.cum.partition_point(|&w| w <= u);
        let (from, to, sizes, size_rng) = &mut self.classes[c];
        let hot = rng.random_bool(self.hot_share);
        let src_pool = self.layout.pool(*from, hot);
        let dst_pool = self.layout.pool(*to, hot);
        let i = rng.random_range(0..src_pool.len());
        let j = if from == to {
            // Same pool: uniform over it without the source (validated: at least 2 nodes).
            let j = rng.random_range(0..dst_pool.len() - 1);
            if j >= i { j + 1 } else { j }
        } else {
            rng.random_range(0..dst_pool.len())
        };
        (src_pool[i], dst_pool[j], sizes.sample(size_rng))
    }
}

/// A disaggregated-rack workload streaming flows like [`crate::OpenLoop`]: ids 0, 1, … in
/// start order, Poisson starts, pairs and sizes per the profile. Streams: gaps from
/// `workload.arrivals`, classes and endpoints from `workload.pairs`, sizes from
/// `workload.sizes` indexed by class, the role layout from `workload.disagg.layout`.
pub struct Disagg {
    spec: DisaggSpec,
    seed: u64,
    paced: Paced<DisaggDraw>,
}

impl Disagg {
    pub fn new(spec: DisaggSpec, seed: u64) -> Result<Disagg, DisaggError> {
        if !(2..=u16::MAX as usize + 1).contains(&spec.nodes) {
            return Err(DisaggError::Nodes(spec.nodes));
        }
        let p = &spec.profile;
        p.validate()?;
        let arrivals = Arrivals::Poisson {
            mean_gap_ps: spec.mean_gap_ps,
        };
        arrivals.validate()?;
        let layout = Layout::new(p, spec.nodes, &mut stream(seed, LAYOUT_STREAM, 0))?;
        let total = p.total_weight();
        let mut acc = 0.0;
        let mut cum: Vec<f64> = p
            .classes
            .iter()
            .map(|c| {
                acc += c.weight;
                acc / total
            })
            .collect();
        // The last positive-weight class ends at exactly 1, so a draw in [0, 1) always lands.
        let last = p.classes.iter().rposition(|c| c.weight > 0.0).unwrap_or(0);
        cum[last..].fill(1.0);
        let classes = p
            .classes
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let rng = stream(seed, SIZES_STREAM, i as u64);
                (c.from, c.to, c.sizes.clone(), rng)
            })
            .collect();
        let draw = DisaggDraw {
            layout,
            classes,
            cum,
            hot_share: p.hot_share,
            pair_rng: stream(seed, PAIRS_STREAM, 0),
        };
        let paced = Paced::new(&arrivals, seed, draw, spec.max_flows, spec.until);
        Ok(Disagg { spec, seed, paced })
    }

    pub fn spec(&self) -> &DisaggSpec {
        &self.spec
    }

    fn layout(&self) -> &Layout {
        &self.paced.draw().layout
    }

    /// The role of node `n`, if it is in the rack.
    pub fn role_of(&self, n: NodeId) -> Option<Role> {
        Role::ALL
            .into_iter()
            .find(|r| self.layout().nodes[r.idx()].contains(&n))
    }

    /// The hot nodes (about `hot_nodes` of each role), in id order.
    pub fn hot_nodes(&self) -> Vec<NodeId> {
        let mut hot: Vec<NodeId> = Role::ALL
            .iter()
            .flat_map(|&r| self.layout().pool(r, true).iter().copied())
            .collect();
        hot.sort_unstable();
        hot
    }

    /// The expected fraction of flows with both endpoints hot: per class, `hot_share` plus
    /// the uniform draws that land on two hot nodes, (k_f/n_f)(k_t/n_t), or k(k−1)/(n(n−1))
    /// within one role.
    pub fn expected_hot_fraction(&self) -> f64 {
        let (p, l) = (&self.spec.profile, self.layout());
        let total = p.total_weight();
        let share = |r: Role| l.hot[r.idx()] as f64 / l.nodes[r.idx()].len() as f64;
        p.classes
            .iter()
            .filter(|c| c.weight > 0.0)
            .map(|c| {
                let both = if c.from == c.to {
                    let (k, n) = (
                        l.hot[c.from.idx()] as f64,
                        l.nodes[c.from.idx()].len() as f64,
                    );
                    k * (k - 1.0) / (n * (n - 1.0))
                } else {
                    share(c.from) * share(c.to)
                };
                c.weight / total * (p.hot_share + (1.0 - p.hot_share) * both)
            })
            .sum()
    }

    /// The parameters and what they imply, for a run to print.
    pub fn summary(&self, node_rate: Rate) -> DisaggSummary {
        let (p, l) = (&self.spec.profile, self.layout());
        let mean = p.expected_mean();
        let offered_load =
            load_of(mean, node_rate, self.spec.nodes, self.spec.mean_gap_ps).unwrap_or(f64::NAN);
        // Bytes a node of each role and tier sends and receives per rack-wide flow, relative
        // to the mean flow; the offered load times nodes times that is its own load.
        let total = p.total_weight();
        let mut peak: f64 = 0.0;
        for role in Role::ALL {
            if l.nodes[role.idx()].is_empty() {
                continue;
            }
            for hot_node in [true, false] {
                if !hot_node && l.hot[role.idx()] == l.nodes[role.idx()].len() {
                    continue;
                }
                let pick = l.pick_probability(role, hot_node, p.hot_share);
                let (mut sent, mut received) = (0.0, 0.0);
                for c in p.classes.iter().filter(|c| c.weight > 0.0) {
                    let bytes = c.weight / total * c.sizes.expected_mean() * pick;
                    if c.from == role {
                        sent += bytes;
                    }
                    if c.to == role {
                        received += bytes;
                    }
                }
                let busiest = sent.max(received) / mean * self.spec.nodes as f64;
                peak = peak.max(offered_load * busiest);
            }
        }
        DisaggSummary {
            seed: self.seed,
            spec: self.spec.clone(),
            role_nodes: PerRole::from_fn(|r| l.nodes[r.idx()].len()),
            hot_nodes: l.hot.iter().sum(),
            expected_hot_fraction: self.expected_hot_fraction(),
            expected_mean_bytes: mean,
            node_rate,
            offered_load,
            peak_node_load: peak,
        }
    }
}

paced_flow_source!(Disagg);

/// A [`Disagg`]'s parameters with what they imply.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DisaggSummary {
    pub seed: u64,
    pub spec: DisaggSpec,
    pub role_nodes: PerRole<usize>,
    pub hot_nodes: usize,
    pub expected_hot_fraction: f64,
    pub expected_mean_bytes: f64,
    pub node_rate: Rate,
    /// The paper's L = F/(R·N·τ) over the whole rack.
    pub offered_load: f64,
    /// The load offered to the busiest node (send or receive side), on average: skew puts
    /// hot nodes well above `offered_load`, and above 1 they cannot keep up.
    pub peak_node_load: f64,
}

impl fmt::Display for DisaggSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.spec;
        let r = &self.role_nodes;
        write!(
            f,
            "disaggregated {} (seed {}): {} nodes ({} CPU, {} memory, {} storage; {} hot), \
             mean flow {}, Poisson mean gap {:.3} ns, offered load {:.3} (busiest node {:.3}) at \
             {} Gb/s per node, {:.1}% of flows among hot nodes expected",
            s.profile.name,
            self.seed,
            s.nodes,
            r.cpu,
            r.memory,
            r.storage,
            self.hot_nodes,
            Bytes(self.expected_mean_bytes),
            s.mean_gap_ps / 1e3,
            self.offered_load,
            self.peak_node_load,
            self.node_rate.as_gbps_f64(),
            self.expected_hot_fraction * 100.0,
        )?;
        if let Some(m) = s.max_flows {
            write!(f, "; at most {m} flows")?;
        }
        if let Some(u) = s.until {
            write!(f, "; until {u}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::Flow;

    fn spec(app: App, flows: u64) -> DisaggSpec {
        DisaggSpec {
            max_flows: Some(flows),
            ..DisaggSpec::paper(app, 512)
        }
    }

    #[test]
    fn every_preset_puts_more_than_84_percent_of_flows_among_a_third_of_the_nodes() {
        for app in App::all() {
            let g = Disagg::new(spec(app, 200_000), 1).unwrap();
            let hot = g.hot_nodes();
            assert!(
                hot.len() * 3 <= 512,
                "{}: {} hot nodes",
                app.name(),
                hot.len()
            );
            let mut is_hot = [false; 512];
            for n in &hot {
                is_hot[n.idx()] = true;
            }
            let expected = g.expected_hot_fraction();
            let flows: Vec<Flow> = g.collect();
            let among = flows
                .iter()
                .filter(|f| is_hot[f.src.idx()] && is_hot[f.dst.idx()])
                .count() as f64
                / flows.len() as f64;
            assert!(among > 0.84, "{}: {:.3} among hot nodes", app.name(), among);
            // Binomial standard error at 200k flows is below 0.001; allow 5 of them.
            let tol = 5.0 * (expected * (1.0 - expected) / 200_000.0).sqrt();
            assert!(
                (among - expected).abs() < tol,
                "{}: {among} vs {expected}",
                app.name()
            );
        }
    }

    #[test]
    fn flows_follow_the_role_pairs_and_class_shares() {
        for app in App::all() {
            let p = app.profile();
            let g = Disagg::new(spec(app, 100_000), 2).unwrap();
            let roles: Vec<Role> = (0..512).map(|n| g.role_of(NodeId(n)).unwrap()).collect();
            let flows: Vec<Flow> = g.collect();
            let total: f64 = p.classes.iter().map(|c| c.weight).sum();
            for (from, to) in [(Role::Memory, Role::Cpu), (Role::Cpu, Role::Cpu)] {
                let w: f64 = p
                    .classes
                    .iter()
                    .filter(|c| c.from == from && c.to == to)
                    .map(|c| c.weight / total)
                    .sum();
                let k = flows
                    .iter()
                    .filter(|f| roles[f.src.idx()] == from && roles[f.dst.idx()] == to)
                    .count() as f64;
                let sd = (100_000.0 * w * (1.0 - w)).sqrt();
                assert!(
                    (k - 100_000.0 * w).abs() <= 5.0 * sd + 1e-9,
                    "{}",
                    app.name()
                );
            }
            for f in &flows {
                assert_ne!(f.src, f.dst);
                let pair = (roles[f.src.idx()], roles[f.dst.idx()]);
                assert!(
                    p.classes.iter().any(|c| (c.from, c.to) == pair),
                    "{}: {pair:?} is no class",
                    app.name()
                );
            }
        }
    }

    #[test]
    fn presets_keep_every_node_below_its_rate_at_the_paper_gap() {
        for app in App::all() {
            let s = Disagg::new(spec(app, 1), 1)
                .unwrap()
                .summary(Rate::gbps(100));
            assert!(s.peak_node_load < 1.0, "{s}");
            assert!(
                s.peak_node_load > 2.0 * s.offered_load,
                "skew loads hot nodes: {s}"
            );
            let described = s.spec.profile.describe();
            assert!(described.contains("assumption"), "{described}");
        }
    }

    #[test]
    fn sample_mean_matches_the_profile_mean() {
        for app in [App::HadoopSort, App::MemcachedYcsb] {
            let g = Disagg::new(spec(app, 400_000), 3).unwrap();
            let mean = g.spec().profile.expected_mean();
            let flows: Vec<Flow> = g.collect();
            let sample = flows.iter().map(|f| f.bytes as f64).sum::<f64>() / flows.len() as f64;
            // Heavy-tailed classes: a loose 3% (their capped sd is a few times the mean,
            // giving a standard error near 0.5% at 400k flows).
            assert!(
                (sample / mean - 1.0).abs() < 0.03,
                "{}: {sample} vs {mean}",
                app.name()
            );
        }
    }

    #[test]
    fn same_seed_same_flows_and_sizes_do_not_move_pairs() {
        let a: Vec<Flow> = Disagg::new(spec(App::SparkSql, 5_000), 4)
            .unwrap()
            .collect();
        let b: Vec<Flow> = Disagg::new(spec(App::SparkSql, 5_000), 4)
            .unwrap()
            .collect();
        assert_eq!(a, b);
        let mut s = spec(App::SparkSql, 5_000);
        for c in &mut s.profile.classes {
            c.sizes = SizeDist::Fixed(1);
        }
        let c: Vec<Flow> = Disagg::new(s, 4).unwrap().collect();
        let key = |f: &Flow| (f.src, f.dst, f.start);
        assert!(a.iter().map(key).eq(c.iter().map(key)));
    }

    #[test]
    fn profiles_serialise_and_bad_ones_are_errors() {
        let p = App::GraphlabCf.profile();
        let json = serde_json::to_string(&p).unwrap();
        let back: AppProfile = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        let app: App = serde_json::from_str("\"timely-pagerank\"").unwrap();
        assert_eq!(app.name(), "timely-pagerank");

        let err = |f: &dyn Fn(&mut DisaggSpec)| {
            let mut s = spec(App::HadoopSort, 10);
            f(&mut s);
            Disagg::new(s, 1).err().unwrap()
        };
        assert_eq!(err(&|s| s.nodes = 1), DisaggError::Nodes(1));
        assert_eq!(
            err(&|s| s.nodes = 2),
            DisaggError::TooSmall { roles: 3, nodes: 2 }
        );
        assert!(matches!(
            err(&|s| s.profile.roles.cpu = -1.0),
            DisaggError::RoleShare {
                role: Role::Cpu,
                ..
            }
        ));
        assert!(matches!(
            err(&|s| s.profile.classes[0].sizes = SizeDist::Fixed(0)),
            DisaggError::Sizes { class: 0, .. }
        ));
        assert_eq!(
            err(&|s| s.profile.roles.storage = 0.0),
            DisaggError::RoleWithoutNodes {
                class: 2,
                role: Role::Storage
            }
        );
        assert!(matches!(
            err(&|s| s.nodes = 8),
            DisaggError::SameRole {
                role: Role::Cpu,
                which: "hot",
                have: 1,
                ..
            }
        ));
        assert_eq!(
            err(&|s| s.profile.hot_share = 2.0),
            DisaggError::HotShare(2.0)
        );
        assert_eq!(
            err(&|s| s.profile.hot_nodes = 0.0),
            DisaggError::HotNodes(0.0)
        );
        assert!(matches!(
            err(&|s| s.mean_gap_ps = 0.0),
            DisaggError::Arrivals(_)
        ));
        assert_eq!(
            err(&|s| s.profile.classes.iter_mut().for_each(|c| c.weight = 0.0)),
            DisaggError::NoTraffic
        );
    }
}
