//! Generators that combine sizes, arrivals and a matrix into a stream of flows: [`OpenLoop`]
//! (flows arrive whatever the fabric does) and [`ClosedLoop`] (each source keeps a fixed number
//! of flows outstanding). Both draw lazily, one flow at a time, so a run of a billion flows
//! needs no flow list.
//!
//! Random streams (`shoal_base::rng::stream(seed, label, index)`): gaps from
//! `workload.arrivals`, pairs from `workload.pairs` and sizes from `workload.sizes`. Each draw
//! kind has its own stream, so changing the size distribution leaves arrival times and pairs
//! as they were, and vice versa.

use crate::arrivals::{ArrivalError, Arrivals, Clock, load_of};
use crate::flow::Flow;
use crate::matrix::{Matrix, MatrixError, Pairs};
use crate::sizes::{Bytes, SizeDist, SizeError};
use crate::source::FlowSource;
use serde::{Deserialize, Serialize};
use shoal_base::rng::{StreamRng, stream};
use shoal_base::{NodeId, Rate, Time};
use std::collections::VecDeque;
use std::fmt;
use thiserror::Error;

pub(crate) const ARRIVALS_STREAM: &str = "workload.arrivals";
pub(crate) const PAIRS_STREAM: &str = "workload.pairs";
pub(crate) const SIZES_STREAM: &str = "workload.sizes";

/// A generator that cannot be built from its parameters.
#[derive(Debug, Error, PartialEq)]
pub enum GeneratorError {
    #[error("flow sizes: {0}")]
    Sizes(#[from] SizeError),
    #[error("arrivals: {0}")]
    Arrivals(#[from] ArrivalError),
    #[error("traffic matrix: {0}")]
    Matrix(#[from] MatrixError),
    #[error("all-at-once arrivals need a flow limit: the flows of one instant would never end")]
    Unbounded,
    #[error("a closed loop needs at least one outstanding flow per source")]
    PerSource,
}

/// What a paced generator draws for each flow besides its start time.
pub(crate) trait Draw {
    fn draw(&mut self) -> (NodeId, NodeId, u64);
}

/// The streaming core of the open-loop generators: start times from an arrival clock, the rest
/// from a [`Draw`], a one-flow lookahead for [`FlowSource::next_start`], and the stop rules.
pub(crate) struct Paced<D> {
    clock: Clock,
    gaps: StreamRng,
    draw: D,
    max_flows: Option<u64>,
    until: Option<Time>,
    next_id: u64,
    peeked: Option<Flow>,
    done: bool,
}

impl<D: Draw> Paced<D> {
    pub(crate) fn new(
        arrivals: &Arrivals,
        seed: u64,
        draw: D,
        max_flows: Option<u64>,
        until: Option<Time>,
    ) -> Self {
        Paced {
            clock: arrivals.clock(),
            gaps: stream(seed, ARRIVALS_STREAM, 0),
            draw,
            max_flows,
            until,
            next_id: 0,
            peeked: None,
            done: false,
        }
    }

    fn generate(&mut self) -> Option<Flow> {
        if self.done || self.max_flows.is_some_and(|m| self.next_id >= m) {
            self.done = true;
            return None;
        }
        let start = self.clock.next(&mut self.gaps);
        if self.until.is_some_and(|u| start >= u) {
            self.done = true;
            return None;
        }
        let (src, dst, bytes) = self.draw.draw();
        let flow = Flow {
            id: self.next_id,
            src,
            dst,
            bytes,
            start,
            class: 0,
        };
        self.next_id += 1;
        Some(flow)
    }

    pub(crate) fn next_flow(&mut self) -> Option<Flow> {
        self.peeked.take().or_else(|| self.generate())
    }

    pub(crate) fn next_start(&mut self) -> Option<Time> {
        if self.peeked.is_none() {
            self.peeked = self.generate();
        }
        self.peeked.map(|f| f.start)
    }

    pub(crate) fn next_due(&mut self, now: Time) -> Option<Flow> {
        if self.next_start()? <= now {
            self.peeked.take()
        } else {
            None
        }
    }

    pub(crate) fn draw(&self) -> &D {
        &self.draw
    }
}

/// Implements `Iterator<Item = Flow>` and [`FlowSource`] for a type whose `paced` field is a
/// [`Paced`] generator.
macro_rules! paced_flow_source {
    ($t:ty) => {
        impl Iterator for $t {
            type Item = $crate::flow::Flow;
            fn next(&mut self) -> Option<$crate::flow::Flow> {
                self.paced.next_flow()
            }
        }

        impl $crate::source::FlowSource for $t {
            fn next_due(&mut self, now: shoal_base::Time) -> Option<$crate::flow::Flow> {
                self.paced.next_due(now)
            }
            fn next_start(&mut self) -> Option<shoal_base::Time> {
                self.paced.next_start()
            }
            fn is_exhausted(&mut self) -> bool {
                self.paced.next_start().is_none()
            }
        }
    };
}
pub(crate) use paced_flow_source;

/// The parameters of an [`OpenLoop`] generator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpenLoopSpec {
    pub nodes: usize,
    pub sizes: SizeDist,
    pub arrivals: Arrivals,
    pub matrix: Matrix,
    /// Stop after this many flows.
    pub max_flows: Option<u64>,
    /// Stop at the first flow that would start at or after this time.
    pub until: Option<Time>,
}

/// An open-loop workload: flows of sizes from `sizes`, starting per `arrivals`, between pairs
/// from `matrix`, with ids 0, 1, … in start order. Without `max_flows` or `until` a Poisson
/// stream never ends (the fabric's run limits stop it).
pub struct OpenLoop {
    spec: OpenLoopSpec,
    seed: u64,
    paced: Paced<OpenDraw>,
}

struct OpenDraw {
    pairs: Pairs,
    pair_rng: StreamRng,
    sizes: SizeDist,
    size_rng: StreamRng,
}

impl Draw for OpenDraw {
    fn draw(&mut self) -> (NodeId, NodeId, u64) {
        let (src, dst) = self.pairs.next(&mut self.pair_rng);
        (src, dst, self.sizes.sample(&mut self.size_rng))
    }
}

impl OpenLoop {
    pub fn new(spec: OpenLoopSpec, seed: u64) -> Result<OpenLoop, GeneratorError> {
        spec.sizes.validate()?;
        spec.arrivals.validate()?;
        if matches!(spec.arrivals, Arrivals::AllAtOnce { .. }) && spec.max_flows.is_none() {
            return Err(GeneratorError::Unbounded);
        }
        let mut pair_rng = stream(seed, PAIRS_STREAM, 0);
        let pairs = spec.matrix.build(spec.nodes, &mut pair_rng)?;
        let draw = OpenDraw {
            pairs,
            pair_rng,
            sizes: spec.sizes.clone(),
            size_rng: stream(seed, SIZES_STREAM, 0),
        };
        let paced = Paced::new(&spec.arrivals, seed, draw, spec.max_flows, spec.until);
        Ok(OpenLoop { spec, seed, paced })
    }

    pub fn spec(&self) -> &OpenLoopSpec {
        &self.spec
    }

    /// The parameters and what they imply, for a run to print; the offered load (Poisson only)
    /// is the paper's L for nodes of rate `node_rate`, with the drawn mean flow size.
    pub fn summary(&self, node_rate: Rate) -> OpenLoopSummary {
        let mean = self.paced.draw().sizes.expected_mean();
        let offered_load = self
            .spec
            .arrivals
            .mean_gap_ps()
            .and_then(|gap| load_of(mean, node_rate, self.spec.nodes, gap).ok());
        OpenLoopSummary {
            seed: self.seed,
            spec: self.spec.clone(),
            expected_mean_bytes: mean,
            node_rate,
            offered_load,
        }
    }
}

paced_flow_source!(OpenLoop);

/// An [`OpenLoop`]'s parameters, with the expected mean flow size and offered load.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpenLoopSummary {
    pub seed: u64,
    pub spec: OpenLoopSpec,
    pub expected_mean_bytes: f64,
    pub node_rate: Rate,
    pub offered_load: Option<f64>,
}

impl fmt::Display for OpenLoopSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.spec;
        write!(
            f,
            "open loop (seed {}): {} nodes, {}; sizes {}; {}",
            self.seed, s.nodes, s.matrix, s.sizes, s.arrivals
        )?;
        if let Some(load) = self.offered_load {
            let gbps = self.node_rate.as_gbps_f64();
            write!(f, " (offered load {load:.3} at {gbps} Gb/s per node)")?;
        }
        if let Some(m) = s.max_flows {
            write!(f, "; at most {m} flows")?;
        }
        if let Some(u) = s.until {
            write!(f, "; until {u}")?;
        }
        Ok(())
    }
}

/// The parameters of a [`ClosedLoop`] generator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClosedLoopSpec {
    pub nodes: usize,
    pub sizes: SizeDist,
    /// Decides which nodes send and where each new flow goes (see [`Pairs::dst_for`]).
    pub matrix: Matrix,
    /// Flows each source keeps outstanding.
    pub per_source: u32,
    /// When the first flows start.
    pub start: Time,
    /// Total flows, first ones included; none means the loop runs until the fabric stops.
    pub max_flows: Option<u64>,
    /// Flows each source starts at most, first ones included: a fixed trace per source (XFabric's
    /// prototype replays one per SoC), so that every run carries the same flows whatever order
    /// they complete in. None: only `max_flows` bounds a source.
    #[serde(default)]
    pub max_per_source: Option<u64>,
}

/// A closed-loop workload. Each source of the matrix ([`Pairs::sources`]) starts `per_source`
/// flows at `start`; each completion reported through [`FlowSource::on_complete`] starts a new
/// flow from the same source at the completion time, to a destination drawn from the matrix
/// restricted to that source ([`Pairs::dst_for`]), until `max_flows` flows have been started (and,
/// per source, `max_per_source`).
///
/// Ids are 0, 1, … in hand-out order. Destinations and sizes are drawn when a flow is handed
/// out, from streams of their own per source, so the k-th flow of a source is the same whatever
/// the order in which the fabric completes other sources' flows. Completions the loop did not
/// cause (a source with nothing outstanding) are ignored; a completion reported earlier than a
/// flow already queued starts its flow at that flow's start, keeping starts non-decreasing.
pub struct ClosedLoop {
    spec: ClosedLoopSpec,
    seed: u64,
    pairs: Pairs,
    sources: Vec<NodeId>,
    pair_rngs: Vec<StreamRng>,
    size_rngs: Vec<StreamRng>,
    /// First flows still to hand out: the k-th belongs to `sources[k / per_source]`.
    first_left: std::ops::Range<u64>,
    /// Later flows, (source, start), in start order.
    queue: VecDeque<(NodeId, Time)>,
    outstanding: Vec<u32>,
    /// Flows each source has started.
    started_by: Vec<u64>,
    started: u64,
    next_id: u64,
    last_start: Time,
}

impl ClosedLoop {
    pub fn new(spec: ClosedLoopSpec, seed: u64) -> Result<ClosedLoop, GeneratorError> {
        spec.sizes.validate()?;
        if spec.per_source == 0 || spec.max_per_source == Some(0) {
            return Err(GeneratorError::PerSource);
        }
        let pairs = spec
            .matrix
            .build(spec.nodes, &mut stream(seed, PAIRS_STREAM, 0))?;
        let sources = pairs.sources();
        let per_source = u64::from(spec.per_source).min(spec.max_per_source.unwrap_or(u64::MAX));
        let first = (sources.len() as u64)
            .saturating_mul(per_source)
            .min(spec.max_flows.unwrap_or(u64::MAX));
        let mut outstanding = vec![0; spec.nodes];
        let mut started_by = vec![0; spec.nodes];
        for (i, s) in sources.iter().enumerate() {
            let own = first.saturating_sub(i as u64 * per_source).min(per_source);
            outstanding[s.idx()] = own as u32;
            started_by[s.idx()] = own;
        }
        let per_node = |label: &str| {
            (0..spec.nodes as u64)
                .map(|n| stream(seed, label, n + 1))
                .collect()
        };
        Ok(ClosedLoop {
            pair_rngs: per_node(PAIRS_STREAM),
            size_rngs: per_node(SIZES_STREAM),
            pairs,
            sources,
            first_left: 0..first,
            queue: VecDeque::new(),
            outstanding,
            started_by,
            started: first,
            next_id: 0,
            last_start: spec.start,
            seed,
            spec,
        })
    }

    pub fn spec(&self) -> &ClosedLoopSpec {
        &self.spec
    }

    fn budget_left(&self) -> bool {
        self.spec.max_flows.is_none_or(|m| self.started < m)
    }

    /// Flows each source starts at once.
    fn first_per_source(&self) -> u64 {
        u64::from(self.spec.per_source).min(self.spec.max_per_source.unwrap_or(u64::MAX))
    }

    fn hand_out(&mut self, src: NodeId, start: Time) -> Option<Flow> {
        let s = src.idx();
        let dst = self.pairs.dst_for(src, &mut self.pair_rngs[s])?;
        let bytes = self.spec.sizes.sample(&mut self.size_rngs[s]);
        let id = self.next_id;
        self.next_id += 1;
        Some(Flow {
            id,
            src,
            dst,
            bytes,
            start,
            class: 0,
        })
    }

    /// The next flow's source and start, whether due or not.
    fn peek(&self) -> Option<(NodeId, Time)> {
        if self.first_left.is_empty() {
            self.queue.front().copied()
        } else {
            let i = self.first_left.start / self.first_per_source();
            Some((self.sources[i as usize], self.spec.start))
        }
    }

    /// The parameters and what they imply, for a run to print.
    pub fn summary(&self) -> ClosedLoopSummary {
        ClosedLoopSummary {
            seed: self.seed,
            spec: self.spec.clone(),
            active_sources: self.sources.len(),
            expected_mean_bytes: self.spec.sizes.expected_mean(),
        }
    }
}

impl FlowSource for ClosedLoop {
    fn next_due(&mut self, now: Time) -> Option<Flow> {
        let (src, start) = self.peek().filter(|&(_, start)| start <= now)?;
        if self.first_left.is_empty() {
            self.queue.pop_front();
        } else {
            self.first_left.start += 1;
        }
        self.hand_out(src, start)
    }

    fn next_start(&mut self) -> Option<Time> {
        self.peek().map(|(_, start)| start)
    }

    fn is_exhausted(&mut self) -> bool {
        let sources_done = self
            .spec
            .max_per_source
            .is_some_and(|m| self.sources.iter().all(|s| self.started_by[s.idx()] >= m));
        self.peek().is_none() && (!self.budget_left() || sources_done)
    }

    fn on_complete(&mut self, _id: u64, src: NodeId, at: Time) {
        if self.outstanding.get(src.idx()).is_none_or(|&o| o == 0) {
            return;
        }
        // The completed flow is replaced, so the count stays; without budget it drops.
        let own_budget = self
            .spec
            .max_per_source
            .is_none_or(|m| self.started_by[src.idx()] < m);
        if self.budget_left() && own_budget {
            self.started += 1;
            self.started_by[src.idx()] += 1;
            self.last_start = self.last_start.max(at);
            self.queue.push_back((src, self.last_start));
        } else {
            self.outstanding[src.idx()] -= 1;
        }
    }
}

/// A [`ClosedLoop`]'s parameters, with the number of sources and the expected mean flow size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClosedLoopSummary {
    pub seed: u64,
    pub spec: ClosedLoopSpec,
    pub active_sources: usize,
    pub expected_mean_bytes: f64,
}

impl fmt::Display for ClosedLoopSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.spec;
        write!(
            f,
            "closed loop (seed {}): {} nodes, {}; {} sources with {} flows outstanding each \
             from {}; sizes {}",
            self.seed, s.nodes, s.matrix, self.active_sources, s.per_source, s.start, s.sizes
        )?;
        if let Some(m) = s.max_flows {
            write!(f, "; {m} flows in all")?;
        }
        write!(f, " (mean flow {})", Bytes(self.expected_mean_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(sizes: SizeDist) -> OpenLoopSpec {
        let arrivals = Arrivals::poisson_for_load(0.5, 100e3, Rate::gbps(100), 64).unwrap();
        OpenLoopSpec {
            nodes: 64,
            sizes,
            arrivals,
            matrix: Matrix::Uniform,
            max_flows: Some(20_000),
            until: None,
        }
    }

    fn pareto() -> SizeDist {
        SizeDist::pareto(1.05, 100e3, Some(10_000_000)).unwrap()
    }

    #[test]
    fn open_loop_streams_ids_in_start_order_and_stops_at_the_limit() {
        let flows: Vec<Flow> = OpenLoop::new(spec(pareto()), 1).unwrap().collect();
        assert_eq!(flows.len(), 20_000);
        for (i, w) in flows.windows(2).enumerate() {
            assert!(w[0].start <= w[1].start);
            assert_eq!(w[0].id, i as u64);
            assert_ne!(w[0].src, w[0].dst);
        }
        let again: Vec<Flow> = OpenLoop::new(spec(pareto()), 1).unwrap().collect();
        assert_eq!(flows, again, "a pure function of the seed");
        let other: Vec<Flow> = OpenLoop::new(spec(pareto()), 2).unwrap().collect();
        assert_ne!(flows, other);
    }

    #[test]
    fn changing_sizes_leaves_arrivals_and_pairs_alone() {
        let a: Vec<Flow> = OpenLoop::new(spec(pareto()), 7).unwrap().collect();
        let b: Vec<Flow> = OpenLoop::new(spec(SizeDist::Fixed(1500)), 7)
            .unwrap()
            .collect();
        let key = |f: &Flow| (f.id, f.src, f.dst, f.start);
        assert!(a.iter().map(key).eq(b.iter().map(key)));
        assert!(a.iter().zip(&b).any(|(x, y)| x.bytes != y.bytes));
    }

    #[test]
    fn realised_load_matches_the_requested_load() {
        // L = 0.5 at 64 nodes; the realised gap has standard error gap/√n (exponential gaps).
        let mut s = spec(pareto());
        s.arrivals =
            Arrivals::poisson_for_load(0.5, pareto().expected_mean(), Rate::gbps(100), 64).unwrap();
        s.max_flows = Some(200_000);
        let g = OpenLoop::new(s, 3).unwrap();
        let summary = g.summary(Rate::gbps(100));
        assert!((summary.offered_load.unwrap() - 0.5).abs() < 1e-12);
        let line = summary.to_string();
        assert!(line.contains("offered load 0.500 at 100 Gb/s"), "{line}");
        let last = g.last().unwrap();
        let gap = last.start.0 as f64 / 200_000.0;
        let load = load_of(pareto().expected_mean(), Rate::gbps(100), 64, gap).unwrap();
        assert!(
            (load - 0.5).abs() < 0.5 * 5.0 / (200_000f64).sqrt(),
            "{load}"
        );
        let json = serde_json::to_string(&summary).unwrap();
        assert!(json.contains("\"offered_load\":0.5"), "{json}");
    }

    #[test]
    fn until_stops_before_the_end_time_and_flow_source_hands_out_due_flows() {
        let mut s = spec(SizeDist::Fixed(100));
        s.max_flows = None;
        s.until = Some(Time(1_000_000));
        let flows: Vec<Flow> = OpenLoop::new(s.clone(), 4).unwrap().collect();
        assert!(!flows.is_empty());
        assert!(flows.iter().all(|f| f.start < Time(1_000_000)));
        let mut src = OpenLoop::new(s, 4).unwrap();
        let mut got = Vec::new();
        let mut now = Time::ZERO;
        while !src.is_exhausted() {
            now = src.next_start().unwrap();
            while let Some(f) = src.next_due(now) {
                got.push(f);
            }
        }
        assert_eq!(got, flows);
        assert_eq!(src.next_due(now), None);
    }

    #[test]
    fn all_at_once_needs_a_limit() {
        let mut s = spec(SizeDist::Fixed(100));
        s.arrivals = Arrivals::AllAtOnce { at: Time(5) };
        s.max_flows = None;
        assert!(matches!(
            OpenLoop::new(s.clone(), 1),
            Err(GeneratorError::Unbounded)
        ));
        s.max_flows = Some(3);
        let flows: Vec<Flow> = OpenLoop::new(s, 1).unwrap().collect();
        assert_eq!(flows.len(), 3);
        assert!(flows.iter().all(|f| f.start == Time(5)));
    }

    #[test]
    fn bad_parts_surface_as_errors() {
        let mut s = spec(SizeDist::Fixed(0));
        assert!(matches!(
            OpenLoop::new(s.clone(), 1),
            Err(GeneratorError::Sizes(SizeError::FixedZero))
        ));
        s.sizes = SizeDist::Fixed(1);
        s.matrix = Matrix::Permutation { pairs: 65 };
        assert!(matches!(
            OpenLoop::new(s, 1),
            Err(GeneratorError::Matrix(_))
        ));
    }

    fn closed(max_flows: Option<u64>, matrix: Matrix) -> ClosedLoopSpec {
        ClosedLoopSpec {
            nodes: 8,
            sizes: SizeDist::Fixed(1000),
            matrix,
            per_source: 2,
            start: Time(10),
            max_flows,
            max_per_source: None,
        }
    }

    /// With a budget per source, each source runs its own fixed list: a source that completes
    /// fast does not take another's flows, and the loop ends when every list is done.
    #[test]
    fn closed_loop_per_source_budget_fixes_each_sources_flows() {
        let spec = ClosedLoopSpec {
            max_per_source: Some(3),
            ..closed(None, Matrix::Uniform)
        };
        let mut c = ClosedLoop::new(spec.clone(), 1).unwrap();
        let first: Vec<Flow> = std::iter::from_fn(|| c.next_due(Time(10))).collect();
        assert_eq!(first.len(), 16);
        // Source 0 completes again and again: only one more flow for it.
        for at in [20, 30, 40] {
            c.on_complete(0, NodeId(0), Time(at));
        }
        let more: Vec<Flow> = std::iter::from_fn(|| c.next_due(Time(50))).collect();
        assert_eq!(more.len(), 1);
        assert_eq!(more[0].src, NodeId(0));
        assert!(!c.is_exhausted());
        for src in 1..8 {
            c.on_complete(0, NodeId(src), Time(60));
        }
        let rest: Vec<Flow> = std::iter::from_fn(|| c.next_due(Time(60))).collect();
        assert_eq!(rest.len(), 7);
        assert!(c.is_exhausted(), "every source started its three");
        // The k-th flow of a source is the same whatever the completion order.
        let mut d = ClosedLoop::new(spec, 1).unwrap();
        let again: Vec<Flow> = std::iter::from_fn(|| d.next_due(Time(10))).collect();
        assert_eq!(first, again);
        let zero = ClosedLoopSpec {
            max_per_source: Some(0),
            ..closed(None, Matrix::Uniform)
        };
        assert!(matches!(
            ClosedLoop::new(zero, 1),
            Err(GeneratorError::PerSource)
        ));
    }

    #[test]
    fn closed_loop_starts_per_source_flows_and_one_per_completion() {
        let mut c = ClosedLoop::new(closed(Some(20), Matrix::Uniform), 1).unwrap();
        assert_eq!(c.next_due(Time(9)), None);
        assert_eq!(c.next_start(), Some(Time(10)));
        let first: Vec<Flow> = std::iter::from_fn(|| c.next_due(Time(10))).collect();
        assert_eq!(first.len(), 16);
        for (i, f) in first.iter().enumerate() {
            assert_eq!(f.id, i as u64);
            assert_eq!(f.src, NodeId((i / 2) as u16));
            assert_ne!(f.src, f.dst);
        }
        assert!(!c.is_exhausted());
        // A completion from a node with nothing outstanding changes nothing.
        c.on_complete(99, NodeId(200), Time(50));
        // Completions start flows from the same source at the completion time.
        c.on_complete(0, NodeId(0), Time(50));
        c.on_complete(5, NodeId(2), Time(40));
        assert_eq!(c.next_start(), Some(Time(50)), "starts never go backwards");
        let f = c.next_due(Time(60)).unwrap();
        assert_eq!((f.id, f.src, f.start), (16, NodeId(0), Time(50)));
        let g = c.next_due(Time(60)).unwrap();
        assert_eq!((g.src, g.start), (NodeId(2), Time(50)));
        for (src, at) in [(1, 70), (3, 80), (4, 90)] {
            c.on_complete(0, NodeId(src), Time(at));
        }
        // 16 + 2 + 2 = 20: the fifth completion is past the budget.
        let rest: Vec<Flow> = std::iter::from_fn(|| c.next_due(Time(100))).collect();
        assert_eq!(rest.len(), 2);
        assert!(c.is_exhausted());
    }

    #[test]
    fn closed_loop_budget_can_cut_the_first_flows() {
        let mut c = ClosedLoop::new(closed(Some(3), Matrix::Uniform), 1).unwrap();
        let first: Vec<Flow> = std::iter::from_fn(|| c.next_due(Time(10))).collect();
        assert_eq!(first.len(), 3);
        assert!(c.is_exhausted());
        c.on_complete(0, NodeId(0), Time(20));
        assert_eq!(c.next_start(), None);
    }

    #[test]
    fn closed_loop_follows_the_matrix_per_source() {
        let senders = vec![NodeId(1), NodeId(6)];
        let incast = Matrix::Incast {
            senders,
            dst: NodeId(3),
        };
        let mut c = ClosedLoop::new(closed(None, incast), 2).unwrap();
        let first: Vec<Flow> = std::iter::from_fn(|| c.next_due(Time(10))).collect();
        let srcs: Vec<u16> = first.iter().map(|f| f.src.0).collect();
        assert_eq!(srcs, vec![1, 1, 6, 6]);
        assert!(first.iter().all(|f| f.dst == NodeId(3)));
        assert_eq!(c.summary().active_sources, 2);
        let mut p = ClosedLoop::new(closed(None, Matrix::Permutation { pairs: 8 }), 2).unwrap();
        let flows: Vec<Flow> = std::iter::from_fn(|| p.next_due(Time(10))).collect();
        for w in flows.chunks(2) {
            assert_eq!(w[0].dst, w[1].dst, "a source always goes to its partner");
        }
        let mut dsts: Vec<NodeId> = flows.iter().step_by(2).map(|f| f.dst).collect();
        dsts.sort_unstable();
        dsts.dedup();
        assert_eq!(dsts.len(), 8, "partners are distinct");
        assert!(
            !p.is_exhausted(),
            "no budget: the loop never ends by itself"
        );
    }

    #[test]
    fn closed_loop_pairs_do_not_depend_on_sizes() {
        let run = |sizes: SizeDist| {
            let mut s = closed(Some(40), Matrix::Uniform);
            s.sizes = sizes;
            let mut c = ClosedLoop::new(s, 9).unwrap();
            let mut out = Vec::new();
            let mut t = 10;
            while let Some(f) = c.next_due(Time(t)) {
                out.push(f);
                t += 1;
                c.on_complete(f.id, f.src, Time(t));
            }
            out
        };
        let a = run(SizeDist::Fixed(10));
        let b = run(pareto());
        assert_eq!(a.len(), 40);
        let key = |f: &Flow| (f.id, f.src, f.dst, f.start);
        assert!(a.iter().map(key).eq(b.iter().map(key)));
        let line = ClosedLoop::new(closed(Some(40), Matrix::Uniform), 9)
            .unwrap()
            .summary()
            .to_string();
        assert!(
            line.contains("8 sources with 2 flows outstanding"),
            "{line}"
        );
    }
}
