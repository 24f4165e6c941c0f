//! The flow bookkeeping every fabric's run shares: flows handed over in start order and checked,
//! one record per flow, bytes delivered in order (per node and per flow, from `measure_from`
//! on), completions handed back to the flow source (closed loops start new flows on them),
//! periodic samples and the stop rules of [`RunLimits`]. A fabric moves bytes; the book
//! counts them.

use crate::{FabricError, Progress, QueueStats, RunLimits, RunOutput};
use shoal_base::Time;
use shoal_metrics::{FlowRecord, Sample, Sampler, TimeSeries};
use shoal_workload::{Flow, FlowSource};
use std::collections::BTreeMap;

/// At most this many flows may be open (started, not finished) at once. Every fabric holds
/// each open flow's state (measured at 0.1-7.5 KB a flow: Shoal's rack the most), so a
/// workload that starts flows faster than the fabric finishes them (a load far above what it
/// carries, millions of flows all at once) would otherwise grow until the machine's memory is
/// gone; at this bound the largest costs about 15 GB. The run stops with an error instead.
pub const MAX_OPEN_FLOWS: u64 = 2_000_000;

/// The records of one run in progress.
pub struct FlowBook {
    nodes: usize,
    limits: RunLimits,
    measure_from: Time,
    records: Vec<FlowRecord>,
    /// Bytes of each flow still to be delivered.
    remaining: Vec<u64>,
    measured_flow_bytes: Vec<u64>,
    delivered: Vec<u64>,
    delivered_total: u64,
    completed: u64,
    /// Of those, flows among the first `measured_flows` (records are opened in start order).
    measured_done: u64,
    /// With `measured_flows` = N: twice the start of the N-th flow, once it has started
    /// (later than 0), when the run stops even if some of the N have not completed.
    horizon: Option<Time>,
    last_start: Time,
    /// For event-driven fabrics: when the pending "flows are due" event fires, if one is.
    arrival_at: Option<Time>,
    sampler: Option<Sampler>,
    series: TimeSeries,
}

impl FlowBook {
    /// An empty book for a fabric of `nodes` nodes running under `limits`.
    pub fn new(nodes: usize, limits: RunLimits) -> FlowBook {
        FlowBook {
            nodes,
            limits,
            measure_from: limits.measure_from.unwrap_or(Time::ZERO),
            records: Vec::new(),
            remaining: Vec::new(),
            measured_flow_bytes: Vec::new(),
            delivered: vec![0; nodes],
            delivered_total: 0,
            completed: 0,
            measured_done: 0,
            horizon: None,
            last_start: Time::ZERO,
            arrival_at: None,
            sampler: limits.sample_every.map(|p| Sampler::new(p, Time::ZERO)),
            series: TimeSeries::new(),
        }
    }

    /// Opens the record of `flow`, handed to the fabric with start time `start`; returns its
    /// index (the position in [`RunOutput::records`]). Refuses flows out of start order and
    /// flows whose ends are not two distinct nodes of the fabric.
    pub fn open(&mut self, flow: &Flow, start: Time) -> Result<u32, FabricError> {
        if flow.start < self.last_start {
            return Err(FabricError(format!(
                "flows must be sorted by start time: flow {} starts at {} after one at {}",
                flow.id, flow.start, self.last_start
            )));
        }
        self.last_start = flow.start;
        let n = self.nodes;
        if flow.src.idx() >= n || flow.dst.idx() >= n || flow.src == flow.dst {
            return Err(FabricError(format!(
                "flow {} goes from node {} to node {} in a fabric of {n} nodes",
                flow.id, flow.src.0, flow.dst.0
            )));
        }
        if self.records.len() as u64 - self.completed >= MAX_OPEN_FLOWS {
            return Err(FabricError(format!(
                "{MAX_OPEN_FLOWS} flows are open at once at {} (started, not finished): \
                 the workload starts flows faster than the fabric finishes them (a load \
                 above what it carries, or too many flows at once?), and their state would \
                 exhaust memory; lower workload.load or workload.flows",
                start
            )));
        }
        let record = self.records.len() as u32;
        // A heavy-tailed size (a 1 GB flow takes 160 ms at 50 Gb/s) would hold a run for the
        // measured flows' slowest straggler, orders of magnitude past the window in which they
        // started: the run stops at twice the last one's start, the unfinished counted as such.
        if self.limits.measured_flows == Some(u64::from(record) + 1) && start > Time::ZERO {
            self.horizon = Some(Time(start.0.saturating_mul(2)));
        }
        self.records.push(FlowRecord {
            id: flow.id,
            src: flow.src,
            dst: flow.dst,
            bytes: flow.bytes,
            start,
            finish: None,
        });
        self.remaining.push(flow.bytes);
        self.measured_flow_bytes.push(0);
        Ok(record)
    }

    /// Counts `bytes` of flow `record` delivered in order at its destination at `now`. When
    /// they are its last, the flow completes at `now`, `source` is told, and this returns true.
    pub fn deliver(
        &mut self,
        record: u32,
        bytes: u64,
        now: Time,
        source: &mut dyn FlowSource,
    ) -> bool {
        let r = record as usize;
        self.delivered_total += bytes;
        if now >= self.measure_from {
            self.delivered[self.records[r].dst.idx()] += bytes;
            self.measured_flow_bytes[r] += bytes;
        }
        let left = &mut self.remaining[r];
        debug_assert!(
            *left >= bytes,
            "flow {record}: more bytes delivered than sent"
        );
        *left -= bytes;
        if *left == 0 {
            self.complete(record, now, source);
            return true;
        }
        false
    }

    /// Completes flow `record` at `now` (a flow of no bytes completes when it starts).
    pub fn complete(&mut self, record: u32, now: Time, source: &mut dyn FlowSource) {
        let rec = &mut self.records[record as usize];
        debug_assert!(rec.finish.is_none(), "flow {record} completes twice");
        rec.finish = Some(now);
        self.completed += 1;
        if self
            .limits
            .measured_flows
            .is_some_and(|n| u64::from(record) < n)
        {
            self.measured_done += 1;
        }
        source.on_complete(rec.id, rec.src, now);
    }

    /// For the event loop at `now`: the time at which to schedule its "flows are due" event,
    /// when `source` knows of a flow earlier than the event already pending (none when it does
    /// not). The loop calls [`FlowBook::arrival_fired`] when that event fires.
    pub(crate) fn arm_arrival(&mut self, source: &mut dyn FlowSource, now: Time) -> Option<Time> {
        let t = source.next_start()?.max(now);
        if self.arrival_at.is_some_and(|a| a <= t) {
            return None;
        }
        self.arrival_at = Some(t);
        Some(t)
    }

    /// The pending "flows are due" event has fired.
    pub(crate) fn arrival_fired(&mut self) {
        self.arrival_at = None;
    }

    /// The limits the run stops at.
    pub fn limits(&self) -> RunLimits {
        self.limits
    }

    pub fn record(&self, record: u32) -> &FlowRecord {
        &self.records[record as usize]
    }

    /// Flows handed over so far.
    pub fn opened(&self) -> u64 {
        self.records.len() as u64
    }

    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// Whether `completed_flows` (of the limits) have completed, or all of the first
    /// `measured_flows`.
    pub fn enough_completed(&self) -> bool {
        self.limits
            .completed_flows
            .is_some_and(|m| self.completed >= m)
            || self
                .limits
                .measured_flows
                .is_some_and(|n| self.measured_done >= n)
    }

    /// Whether the run stops at `now`: its `until` has come, enough flows completed, or the
    /// measured flows' horizon has passed.
    pub fn stops_at(&self, now: Time) -> bool {
        self.limits.until.is_some_and(|u| now >= u)
            || self.enough_completed()
            || self.past_horizon(now)
    }

    /// Whether `now` is past the horizon of the first `measured_flows` (twice the last one's
    /// start): the run stops there, those still in progress counted as not completed.
    pub fn past_horizon(&self, now: Time) -> bool {
        self.horizon.is_some_and(|h| now >= h)
    }

    /// Tells `progress` how far the run is.
    pub fn report(&self, now: Time, progress: &mut dyn Progress) {
        progress.update(now, self.completed);
    }

    /// For a fabric that polls: whether a sample is due at `now` (samples fall on multiples of
    /// `sample_every`).
    pub fn sample_due(&mut self, now: Time) -> bool {
        self.sampler.as_mut().is_some_and(|s| s.due(now))
    }

    /// Records a sample at `now`: the fabric's queues (bytes queued in all, in the longest
    /// queue) and flows in progress, with the book's delivered bytes and completions.
    pub fn sample(&mut self, now: Time, queued_bytes: u64, max_queue_bytes: u64, active: u64) {
        self.series.push(Sample {
            time: now,
            queued_bytes,
            max_queue_bytes,
            delivered_bytes: self.delivered_total,
            completed_flows: self.completed,
            active_flows: active,
        });
    }

    /// The run's output, with what the fabric measured itself.
    pub fn finish(
        self,
        sim_time: Time,
        queues: QueueStats,
        counters: BTreeMap<String, u64>,
    ) -> RunOutput {
        RunOutput {
            records: self.records,
            sim_time,
            queues,
            counters,
            delivered_bytes: self.delivered,
            measured_flow_bytes: self.measured_flow_bytes,
            series: self.series,
            tables: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shoal_base::NodeId;

    /// Issue 37: a workload that starts flows faster than the fabric finishes them grew until
    /// the machine's memory was gone. The book refuses the flow past the bound, and one more
    /// may open once one has finished.
    #[test]
    fn no_more_than_the_bound_of_flows_is_open_at_once() {
        let mut book = FlowBook::new(2, RunLimits::default());
        let flow = |id| Flow {
            id,
            src: NodeId(0),
            dst: NodeId(1),
            bytes: 1,
            start: Time::ZERO,
            class: 0,
        };
        for id in 0..MAX_OPEN_FLOWS {
            book.open(&flow(id), Time::ZERO).expect("below the bound");
        }
        let err = book
            .open(&flow(MAX_OPEN_FLOWS), Time::ZERO)
            .expect_err("past the bound");
        assert!(err.0.contains("open at once"), "{}", err.0);
        let mut source = shoal_workload::IterSource::new(std::iter::empty());
        assert!(book.deliver(0, 1, Time(5), &mut source));
        book.open(&flow(MAX_OPEN_FLOWS), Time(5))
            .expect("one finished, one more may open");
    }
}
