//! `shoal bench --psn`: the packet simulator's speed on a scenario, by default the htsim
//! examples' files (`scenarios/htsim-*.toml`), so that what is timed is what is validated.
//!
//! It reports events and packet-hops per second of wall clock, the peak RSS and the mean
//! goodput per host over the scenario's measured span. Next to it runs a reference loop in the
//! same process: the same number of events through the bare event queue (each event schedules
//! one successor a fixed gap later), the floor any model on this engine pays. It states no
//! ratio to htsim: a ratio is only measured side by side (`scripts/vs-htsim.sh`).

use serde::Serialize;
use shoal_base::Dur;
use shoal_fabric::FabricError;
use shoal_fabric::bench::{ScenarioRun, hold_model, peak_rss_bytes, wall_seconds};
use std::fmt;

/// What the run measured; rates are per second of wall-clock time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PsnBenchReport {
    /// The scenario's name and file.
    pub scenario: String,
    pub origin: String,
    pub hosts: usize,
    pub simulated_ms: f64,
    pub wall_s: f64,
    pub events: u64,
    pub events_per_s: f64,
    pub packet_hops_per_s: f64,
    /// Mean payload rate per host over the measured span (`run.measure_from_us` to the end),
    /// in Gb/s.
    pub goodput_gbps_per_host: f64,
    pub packets_dropped: u64,
    pub packets_trimmed: u64,
    pub reference_wall_s: f64,
    pub reference_events_per_s: f64,
    pub peak_rss_bytes: Option<u64>,
}

/// Times the run, then the reference loop.
pub fn run(r: ScenarioRun<'_>) -> Result<PsnBenchReport, FabricError> {
    let t = r.time()?;
    let (events, wall_s) = (t.counter("events")?, t.wall_s);
    let reference_wall_s = wall_seconds(|| {
        // As many pending as a busy network has (about one per host per hop in flight).
        hold_model(events, 4096, Dur(7_200_000))
    });
    Ok(PsnBenchReport {
        packet_hops_per_s: t.counter("packet_hops")? as f64 / wall_s,
        packets_dropped: t.counter("packets_dropped")?,
        packets_trimmed: t.counter("packets_trimmed")?,
        goodput_gbps_per_host: t.goodput_gbps_per_host,
        scenario: t.scenario,
        origin: t.origin,
        hosts: t.hosts,
        simulated_ms: t.simulated_ms,
        wall_s,
        events,
        events_per_s: events as f64 / wall_s,
        reference_wall_s,
        reference_events_per_s: events as f64 / reference_wall_s,
        peak_rss_bytes: peak_rss_bytes(),
    })
}

impl fmt::Display for PsnBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "shoal bench --psn: {} ({}), {} hosts, {} ms simulated",
            self.scenario, self.origin, self.hosts, self.simulated_ms
        )?;
        writeln!(
            f,
            "  simulator  {:>7.2} s  {:>6.2} M events/s  {:>6.2} M packet-hops/s  ({} events)",
            self.wall_s,
            self.events_per_s / 1e6,
            self.packet_hops_per_s / 1e6,
            self.events
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
            "  goodput {:.3} Gb/s per host, {} dropped, {} trimmed",
            self.goodput_gbps_per_host, self.packets_dropped, self.packets_trimmed
        )?;
        if let Some(rss) = self.peak_rss_bytes {
            write!(f, ", peak RSS {:.0} MB", rss as f64 / 1e6)?;
        }
        write!(
            f,
            "\n  (no htsim ratio here: scripts/vs-htsim.sh measures both side by side)"
        )
    }
}
