//! `shoal bench --stardust`: how fast the Stardust simulator moves cells, in cell-hops (a data
//! or control cell put on one fabric link, adapter to element or element to element or
//! adapter) and events per second of wall clock, with the process's peak memory.
//!
//! It times a scenario exactly as `shoal run` runs it (by default Fig. 10(a)'s permutation on
//! the 432-node fat-tree, `scenarios/stardust-fig10a.toml`), building the network untimed.
//! Beside it runs the bare event queue for the same number of events (each event scheduling
//! one successor), the floor any model on this engine pays.

use serde::Serialize;
use shoal_base::Dur;
use shoal_fabric::FabricError;
use shoal_fabric::bench::{ScenarioRun, hold_model, peak_rss_bytes, wall_seconds};
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
    let t = r.time()?;
    let peak_rss = peak_rss_bytes();
    let (events, cell_hops, wall_s) = (t.counter("events")?, t.counter("cell_hops")?, t.wall_s);
    // As many pending as the fat-tree has links carrying a cell each way, a cell time apart.
    let reference_wall_s = wall_seconds(|| hold_model(events, 4096, Dur(409_600)));
    Ok(StardustBenchReport {
        fe_drops: t.counter("fe_drops")?,
        goodput_gbps_per_host: t.goodput_gbps_per_host,
        scenario: t.scenario,
        origin: t.origin,
        hosts: t.hosts,
        simulated_ms: t.simulated_ms,
        wall_s,
        events,
        events_per_s: events as f64 / wall_s,
        cell_hops,
        cell_hops_per_s: cell_hops as f64 / wall_s,
        events_per_cell_hop: events as f64 / cell_hops.max(1) as f64,
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
