//! `shoal bench --stardust`: how fast the Stardust simulator moves cells, in cell-hops (a data
//! or control cell put on one fabric link, adapter to element or element to element or
//! adapter) and events per second of wall clock, with the process's peak memory.
//!
//! It times a scenario exactly as `shoal run` runs it (by default Fig. 10(a)'s permutation on
//! the 432-node fat-tree, `scenarios/stardust-fig10a.toml`), building the network untimed.
//! Beside it runs the bare event queue for the same number of events (each event scheduling
//! one successor), the floor any model on this engine pays.

use serde::Serialize;
use shoal_base::{Dur, Time};
use shoal_fabric::bench::{ScenarioRun, hold_model, peak_rss_bytes, wall_seconds};
use shoal_fabric::{FabricError, NoProgress};
use std::fmt;

/// What the run measured; rates are per second of wall-clock time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StardustBenchReport {
    /// The scenario's name and file.
    pub scenario: String,
    pub origin: String,
    pub hosts: usize,
    pub simulated_ms: f64,
    pub wall_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    pub cell_hops: u64,
    pub cell_hops_per_s: f64,
    /// Events per cell-hop: what a cell costs the event queue.
    pub events_per_cell_hop: f64,
    /// Mean payload rate per host over the measured span (`run.measure_from_us` to the end),
    /// in Gb/s.
    pub goodput_gbps_per_host: f64,
    pub fe_drops: u64,
    pub reference_wall_s: f64,
    pub reference_events_per_s: f64,
    /// Peak resident set of the process when the run ended.
    pub peak_rss_bytes: Option<u64>,
}

/// Times the run, then the reference loop.
pub fn run(r: ScenarioRun<'_>) -> Result<StardustBenchReport, FabricError> {
    if r.fabric.name() != "stardust" {
        return Err(FabricError(format!(
            "{}: runs fabric {:?}, not stardust",
            r.origin,
            r.fabric.name()
        )));
    }
    let Some(end) = r.limits.until else {
        return Err(FabricError(format!(
            "{}: the scenario sets no run.until_us: a benchmark times a fixed simulated span",
            r.origin
        )));
    };
    let from = r.limits.measure_from.unwrap_or(Time::ZERO);
    let mut outcome = Err(FabricError("not run".into()));
    let wall_s = wall_seconds(|| outcome = r.fabric.run(r.flows, r.limits, &mut NoProgress));
    let out = outcome?;
    let peak_rss = peak_rss_bytes();
    let count = |key: &str| {
        out.counters
            .get(key)
            .copied()
            .ok_or_else(|| FabricError(format!("the run reported no {key:?} counter")))
    };
    let events = count("events")?;
    let cell_hops = count("cell_hops")?;
    // As many pending as the fat-tree has links carrying a cell each way, a cell time apart.
    let reference_wall_s = wall_seconds(|| hold_model(events, 4096, Dur(409_600)));
    let secs = end.0.saturating_sub(from.0) as f64 * 1e-12;
    let goodput =
        out.measured_flow_bytes.iter().sum::<u64>() as f64 * 8.0 / secs / 1e9 / r.hosts as f64;
    Ok(StardustBenchReport {
        scenario: r.scenario,
        origin: r.origin,
        hosts: r.hosts,
        simulated_ms: end.0 as f64 * 1e-9,
        wall_s,
        events,
        events_per_s: events as f64 / wall_s,
        cell_hops,
        cell_hops_per_s: cell_hops as f64 / wall_s,
        events_per_cell_hop: events as f64 / cell_hops.max(1) as f64,
        goodput_gbps_per_host: goodput,
        fe_drops: count("fe_drops")?,
        reference_wall_s,
        reference_events_per_s: events as f64 / reference_wall_s,
        peak_rss_bytes: peak_rss,
    })
}

impl fmt::Display for StardustBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "shoal bench --stardust: {} ({}), {} hosts, {} ms simulated",
            self.scenario, self.origin, self.hosts, self.simulated_ms
        )?;
        writeln!(
            f,
            "  simulator  {:>7.2} s  {:>6.2} M events/s  {:>6.2} M cell-hops/s  ({} events, {} cell-hops, {:.2} events per cell-hop)",
            self.wall_s,
            self.events_per_s / 1e6,
            self.cell_hops_per_s / 1e6,
            self.events,
            self.cell_hops,
            self.events_per_cell_hop
        )?;
        writeln!(
            f,
            "  reference  {:>7.2} s  {:>6.2} M events/s (bare event queue); simulator/reference = {:.2}",
            self.reference_wall_s,
            self.reference_events_per_s / 1e6,
            self.wall_s / self.reference_wall_s
        )?;
        write!(
            f,
            "  goodput {:.3} Gb/s per host, {} cells dropped in the fabric",
            self.goodput_gbps_per_host, self.fe_drops
        )?;
        if let Some(rss) = self.peak_rss_bytes {
            write!(f, ", peak RSS {:.0} MB", rss as f64 / 1e6)?;
        }
        Ok(())
    }
}
