//! Driving the simulator: a workload's flows through the common fabric interface, or
//! synthetic traffic at full injection for the Dragonfly's theory.

use crate::cliquemap::{Bulk, Lookups, Transport};
use crate::sim::{Counters, Ev, Pattern, ReadRecord, RpcRecord, Sim, Source};
use crate::spec::Injection;
use crate::spec::Spec;
use shoal_base::{Dur, Time};
use shoal_fabric::{Calendar, EventFabric, event_loop};
use shoal_fabric::{FabricError, FlowBook, Progress, QueueStats, RunLimits, RunOutput};
use shoal_metrics::LatencyHistogram;
use shoal_workload::{Flow, FlowSource};
use std::collections::BTreeMap;

/// Runs the flows of `source` on the clique until `limits`.
pub fn run_flows(
    spec: &Spec,
    source: &mut dyn FlowSource,
    limits: RunLimits,
    progress: &mut dyn Progress,
) -> Result<RunOutput, FabricError> {
    let mut sim = Sim::new(spec, limits.measure_from.unwrap_or(Time::ZERO)).map_err(FabricError)?;
    sim.hd.cell_latencies = Some(LatencyHistogram::new());
    let book = FlowBook::new(sim.hosts() as usize, limits);
    let run = FlowRun {
        sim,
        book,
        active: 0,
    };
    event_loop::run(run, source, progress)
}

/// The clique running a workload's flows: the simulator, the book, the flows in progress.
struct FlowRun<'a> {
    sim: Sim<'a>,
    book: FlowBook,
    active: u64,
}

impl EventFabric for FlowRun<'_> {
    type Event = Ev;

    /// The clique's driver first scheduled its stop and first sample, then the flows.
    const FLOWS_FIRST: bool = false;

    fn calendar_and_book(&mut self) -> (&mut Calendar<Ev>, &mut FlowBook) {
        (self.sim.calendar(), &mut self.book)
    }

    fn handle(
        &mut self,
        now: Time,
        ev: Ev,
        source: &mut dyn FlowSource,
    ) -> Result<(), FabricError> {
        self.sim.handle(now, ev, None);
        let delivered = std::mem::take(&mut self.sim.hd.delivered);
        for &(flow, bytes) in &delivered {
            if self.book.deliver(flow, bytes as u64, now, source) {
                self.active -= 1;
                self.sim.calendar().arm_flows(&mut self.book, source);
            }
        }
        self.sim.hd.delivered = delivered;
        self.sim.hd.delivered.clear();
        Ok(())
    }

    fn add_flow(&mut self, now: Time, record: u32, flow: &Flow) -> Result<(), FabricError> {
        if flow.bytes > 0 {
            self.active += 1;
            let (src, dst) = (flow.src.0 as u32, flow.dst.0 as u32);
            self.sim.add_flow(now, src, record, flow.bytes, dst);
        }
        Ok(())
    }

    fn sample(&mut self, now: Time, source: &mut dyn FlowSource) -> bool {
        let (queued, most) = self.sim.queued_words();
        self.book.sample(now, queued * 8, most * 8, self.active);
        self.sim.pending() > 0 || !source.is_exhausted() || self.active > 0
    }

    fn finish(mut self, events: u64) -> RunOutput {
        self.sim.counters.events = events;
        let c = &self.sim.counters;
        let mut counters = counter_map(c);
        counters.insert("flows_unfinished".into(), self.active);
        percentile_counters("rtt", &self.sim.hd.rtts, &mut counters);
        percentile_counters("data_rtt", &self.sim.hd.data_rtts, &mut counters);
        percentile_counters("admission", &self.sim.hd.admissions, &mut counters);
        if let Some(l) = &self.sim.hd.cell_latencies {
            percentile_counters("cell_latency", l, &mut counters);
        }
        let queues = QueueStats {
            // In full-size (160 B) cells.
            max_queue: u64::from(c.max_output_words.div_ceil(20)),
            max_node_queue: 0,
            max_node_transit: 0,
            max_reorder_bytes: 0,
        };
        self.book.finish(self.sim.now(), queues, counters)
    }
}

/// Latencies as counters `<name>_samples`, and `<name>_mean_ns`, `_p50_ns`, `_p99_ns`,
/// `_max_ns` (nanoseconds, rounded down): the fabric RTTs of a run (IP over GNet with flows:
/// each packet's RTS leaving its host to its acknowledgement's release there) and its data
/// cells' fabric latencies. Count, mean and max are exact; the percentiles are nearest-rank
/// within 1/1024 of the exact ones (`LatencyHistogram`), plus the nanosecond they are
/// rounded to.
fn percentile_counters(name: &str, h: &LatencyHistogram, counters: &mut BTreeMap<String, u64>) {
    let (Some(mean), Some(p50), Some(p99), Some(max)) =
        (h.mean(), h.quantile(0.5), h.quantile(0.99), h.max())
    else {
        return;
    };
    let ns = |d: Dur| d.ps() / 1000;
    for (k, v) in [
        ("samples", h.count()),
        ("mean_ns", ns(mean)),
        ("p50_ns", ns(p50)),
        ("p99_ns", ns(p99)),
        ("max_ns", ns(max)),
    ] {
        counters.insert(format!("{name}_{k}"), v);
    }
}

fn counter_map(c: &Counters) -> BTreeMap<String, u64> {
    [
        ("events", c.events),
        ("cells_injected", c.cells_injected),
        ("cells_delivered", c.cells_delivered),
        ("cell_hops", c.cell_hops),
        ("non_minimal_cells", c.non_minimal_cells),
        ("packets_delivered", c.packets_delivered),
        ("credit_overflows", c.credit_overflows),
        ("hop_limit_drops", c.hop_limit_drops),
        ("link_failure_drops", c.link_failure_drops),
        ("control_cells", c.control_cells),
        ("ctd_drops", c.ctd_drops),
        ("resent_packets", c.resent_packets),
        ("ecn_marks", c.ecn_marks),
        ("rma_reads_issued", c.rma_reads_issued),
        ("rma_reads_completed", c.rma_reads_completed),
        ("rma_req_cells", c.rma_req_cells),
        ("rma_resp_cells", c.rma_resp_cells),
        ("rpcs_issued", c.rpcs_issued),
        ("rpcs_completed", c.rpcs_completed),
        ("max_input_fifo_words", u64::from(c.max_input_words)),
        ("max_output_queue_words", u64::from(c.max_output_words)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// What a run of synthetic traffic measured.
#[derive(Clone, Debug)]
pub struct Saturation {
    /// Wire bytes delivered in the measurement window over what the hosts could inject in it.
    pub throughput: f64,
    /// Of the cells delivered, the fraction that left their pod non-minimally.
    pub non_minimal_fraction: f64,
    pub counters: Counters,
}

/// Every host injects `pattern` at its full rate (100% offered load) for `warmup + window`;
/// throughput is measured over the window.
pub fn saturate(
    spec: &Spec,
    pattern: Pattern,
    warmup: Dur,
    window: Dur,
) -> Result<Saturation, String> {
    let mut sim = Sim::new(spec, Time::ZERO + warmup)?;
    let source = Source::Saturate {
        pattern,
        packets: None,
    };
    sim.start_saturation(&source);
    sim.calendar().stop_at(Time::ZERO + warmup + window);
    while let Some((_, stop)) = sim.step(Some(&source)) {
        if stop {
            break;
        }
    }
    let capacity = spec.host_rate.bytes_in(window) as f64 * f64::from(sim.hosts());
    let c = sim.counters.clone();
    Ok(Saturation {
        throughput: c.measured_wire_bytes as f64 / capacity,
        non_minimal_fraction: c.non_minimal_cells as f64 / c.cells_delivered.max(1) as f64,
        counters: c,
    })
}

/// How a drained run ended.
#[derive(Clone, Debug)]
pub struct Drained {
    pub counters: Counters,
    /// Every FIFO empty and every credit back where it started.
    pub at_rest: bool,
    /// Cells injected and neither delivered nor dropped.
    pub in_flight: u64,
    pub end: Time,
}

/// Every host sends `packets` full packets of `pattern` as fast as it can, then the clique
/// runs until no event is left: a deadlock would leave cells in flight.
pub fn drain(spec: &Spec, pattern: Pattern, packets: u64) -> Result<Drained, String> {
    let mut sim = Sim::new(spec, Time::ZERO)?;
    let source = Source::Saturate {
        pattern,
        packets: Some(packets),
    };
    sim.start_saturation(&source);
    let mut end = Time::ZERO;
    while let Some((now, _)) = sim.step(Some(&source)) {
        end = now;
    }
    Ok(Drained {
        counters: sim.counters.clone(),
        at_rest: sim.at_rest(),
        in_flight: sim.cells_in_flight(),
        end,
    })
}

/// How a run of CliqueMap lookups ended.
#[derive(Clone, Debug)]
pub struct LookupRun {
    /// The lookups issued from `measure_from` on (every one of them ran to its end): 1RMA
    /// reads or IP RPCs, as the transport was.
    pub reads: Vec<ReadRecord>,
    pub rpcs: Vec<RpcRecord>,
    pub counters: Counters,
    /// Every FIFO empty and every credit back where it started.
    pub at_rest: bool,
    /// Cells injected and neither delivered nor dropped.
    pub in_flight: u64,
    /// Payload of bulk IP delivered between `measure_from` and the lookups' end.
    pub bulk_payload_bytes: u64,
}

/// Every host runs `lookups` (1RMA reads or IP RPCs) until `lookups.until`, then the clique runs
/// until no event is left, so that every read issued has run to its end.
pub fn lookups(spec: &Spec, lookups: Lookups, measure_from: Time) -> Result<LookupRun, String> {
    lookups_beside(spec, lookups, None, measure_from)
}

/// [`lookups`], with `bulk` IP traffic beside them (Fig. 8) when given: its messages arrive
/// until `lookups.until` and run to their end too.
pub fn lookups_beside(
    spec: &Spec,
    lookups: Lookups,
    bulk: Option<Bulk>,
    measure_from: Time,
) -> Result<LookupRun, String> {
    lookups.check()?;
    let ip = matches!(lookups.transport, Transport::IpRpc { .. }) || bulk.is_some();
    if ip && spec.injection != Injection::RtsCts {
        return Err("IP RPCs and bulk IP need IP over GNet (injection rts-cts)".into());
    }
    let mut sim = Sim::new(spec, measure_from)?;
    sim.start_lookups(lookups);
    if let Some(b) = bulk {
        b.check()?;
        sim.start_bulk(b, lookups.until);
    }
    while let Some((now, _)) = sim.step(None) {
        if now >= measure_from && now < lookups.until {
            let bytes: u64 = sim.hd.delivered.iter().map(|&(_, b)| u64::from(b)).sum();
            sim.hd.bulk_delivered += bytes;
        }
        sim.hd.delivered.clear();
    }
    Ok(LookupRun {
        reads: sim.read_records(measure_from),
        rpcs: sim.rpc_records(measure_from),
        counters: sim.counters.clone(),
        at_rest: sim.at_rest(),
        in_flight: sim.cells_in_flight(),
        bulk_payload_bytes: sim.hd.bulk_delivered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The counters from the histogram against the exact ones from every value kept and
        /// sorted (nearest rank, as the run reported them before): count and max exact, mean
        /// within a nanosecond, p50 and p99 within 1/1024 plus a nanosecond. Latencies from a
        /// few nanoseconds to a few milliseconds, as a clique's cells and packets see them.
        #[test]
        fn counters_match_the_exact_quantiles_within_the_stated_error(
            values in prop::collection::vec(1_000u64..5_000_000_000, 1..2_000),
        ) {
            let mut h = LatencyHistogram::new();
            values.iter().for_each(|&v| h.record(Dur(v)));
            let mut counters = BTreeMap::new();
            percentile_counters("x", &h, &mut counters);
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let n = sorted.len();
            let rank = |q: f64| sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1] / 1000;
            let mean = sorted.iter().map(|&v| u128::from(v)).sum::<u128>() / n as u128 / 1000;
            prop_assert_eq!(counters["x_samples"], n as u64);
            prop_assert_eq!(counters["x_max_ns"], sorted[n - 1] / 1000);
            prop_assert!(counters["x_mean_ns"].abs_diff(mean as u64) <= 1);
            for (key, exact) in [("x_p50_ns", rank(0.5)), ("x_p99_ns", rank(0.99))] {
                let got = counters[key];
                prop_assert!(
                    got.abs_diff(exact) as f64 <= exact as f64 / 1024.0 + 1.0,
                    "{}: {} against exact {}", key, got, exact
                );
            }
        }
    }

    /// No sample, no counter (a run without RTTs reports none rather than zeros).
    #[test]
    fn an_empty_histogram_gives_no_counters() {
        let mut counters = BTreeMap::new();
        percentile_counters("x", &LatencyHistogram::new(), &mut counters);
        assert!(counters.is_empty());
    }
}
