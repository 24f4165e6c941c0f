//! Driving the simulator: a workload's flows through the common fabric interface, or
//! synthetic traffic at full injection for the Dragonfly's theory.

use crate::sim::{Control, Counters, Pattern, Sim, Source};
use crate::spec::Spec;
use shoal_base::{Dur, Time};
use shoal_fabric::{FabricError, FlowBook, Progress, QueueStats, RunLimits, RunOutput};
use shoal_workload::FlowSource;
use std::collections::BTreeMap;

/// Progress is reported every this many events.
const PROGRESS_EVERY: u64 = 1 << 16;

/// Runs the flows of `source` on the clique until `limits`.
pub fn run_flows(
    spec: &Spec,
    source: &mut dyn FlowSource,
    limits: RunLimits,
    progress: &mut dyn Progress,
) -> Result<RunOutput, FabricError> {
    let mut sim = Sim::new(spec, limits.measure_from.unwrap_or(Time::ZERO)).map_err(FabricError)?;
    let hosts = sim.hosts() as usize;
    let mut book = FlowBook::new(hosts, limits);
    let mut active = 0u64;
    let mut flows_at: Option<Time> = None;
    if let Some(until) = limits.until {
        sim.schedule(until, Control::Stop);
    }
    if limits.sample_every.is_some() {
        sim.schedule(Time::ZERO, Control::Sample);
    }
    arm_flows(&mut sim, source, &mut flows_at);
    let mut last = Time::ZERO;
    while let Some((now, control)) = sim.step(None) {
        last = now;
        match control {
            Some(Control::Stop) => break,
            Some(Control::Sample) => {
                let (queued, most) = sim.queued_words();
                book.sample(now, queued * 8, most * 8, active);
                if sim.pending() > 0 || !source.is_exhausted() || active > 0 {
                    let period = limits.sample_every.expect("sampling");
                    sim.schedule(now + period, Control::Sample);
                }
            }
            Some(Control::Flows) => {
                flows_at = None;
                while let Some(flow) = source.next_due(now) {
                    let record = book.open(&flow, now)?;
                    if flow.bytes == 0 {
                        book.complete(record, now, source);
                        continue;
                    }
                    active += 1;
                    sim.add_flow(
                        now,
                        flow.src.0 as u32,
                        record,
                        flow.bytes,
                        flow.dst.0 as u32,
                    );
                }
                arm_flows(&mut sim, source, &mut flows_at);
            }
            None => {
                let delivered = std::mem::take(&mut sim.delivered);
                for &(flow, bytes) in &delivered {
                    if book.deliver(flow, bytes as u64, now, source) {
                        active -= 1;
                        arm_flows(&mut sim, source, &mut flows_at);
                    }
                }
                sim.delivered = delivered;
                sim.delivered.clear();
            }
        }
        if sim.counters.events.is_multiple_of(PROGRESS_EVERY) {
            book.report(now, progress);
        }
        if book.enough_completed() {
            break;
        }
    }
    book.report(last, progress);
    let c = &sim.counters;
    let mut counters = counter_map(c);
    counters.insert("flows_unfinished".into(), active);
    rtt_counters(&mut sim.rtts, &mut counters);
    let queues = QueueStats {
        // In full-size (160 B) cells.
        max_queue: u64::from(c.max_output_words.div_ceil(20)),
        max_node_queue: 0,
        max_node_transit: 0,
        max_reorder_bytes: 0,
    };
    Ok(book.finish(last, queues, counters))
}

/// Schedules the next `Flows` event if the source knows of a flow earlier than the one
/// already scheduled.
fn arm_flows(sim: &mut Sim<'_>, source: &mut dyn FlowSource, flows_at: &mut Option<Time>) {
    if let Some(t) = source.next_start() {
        let t = t.max(sim.now());
        if flows_at.is_none_or(|a| t < a) {
            sim.schedule(t, Control::Flows);
            *flows_at = Some(t);
        }
    }
}

/// The fabric RTTs of a run (IP over GNet with flows: each packet's RTS leaving its host to
/// its acknowledgement's release there) as counters: how many, and their mean, median, 99th
/// percentile and largest in nanoseconds (nearest rank).
fn rtt_counters(rtts: &mut [u64], counters: &mut BTreeMap<String, u64>) {
    if rtts.is_empty() {
        return;
    }
    rtts.sort_unstable();
    let n = rtts.len();
    let rank = |q: f64| rtts[((q * n as f64).ceil() as usize).clamp(1, n) - 1] / 1000;
    let mean = rtts.iter().map(|&r| u128::from(r)).sum::<u128>() / n as u128 / 1000;
    for (k, v) in [
        ("rtt_samples", n as u64),
        ("rtt_mean_ns", mean as u64),
        ("rtt_p50_ns", rank(0.5)),
        ("rtt_p99_ns", rank(0.99)),
        ("rtt_max_ns", rtts[n - 1] / 1000),
    ] {
        counters.insert(k.into(), v);
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
        ("control_cells", c.control_cells),
        ("ctd_drops", c.ctd_drops),
        ("ecn_marks", c.ecn_marks),
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
    sim.schedule(Time::ZERO + warmup + window, Control::Stop);
    while let Some((_, control)) = sim.step(Some(&source)) {
        if control == Some(Control::Stop) {
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
