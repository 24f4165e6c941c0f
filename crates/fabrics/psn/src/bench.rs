//! `shoal bench --psn`: the packet simulator's speed on a scenario, by default the htsim
//! examples' files (`scenarios/htsim-*.toml`), so that what is timed is what is validated.
//!
//! It reports events and packet-hops per second of wall clock, the peak RSS and the mean
//! goodput per host over the scenario's measured span. Next to it runs a reference loop in the
//! same process: the same number of events through the bare event queue (each event schedules
//! one successor a fixed gap later), the floor any model on this engine pays. It states no
//! ratio to htsim: a ratio is only measured side by side (`scripts/vs-htsim.sh`).

use serde::Serialize;
use shoal_base::{Dur, Time};
use shoal_fabric::bench::{ScenarioRun, hold_model, peak_rss_bytes, wall_seconds};
use shoal_fabric::{FabricError, NoProgress, RunOutput};
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
    let Some(end) = r.limits.until else {
        return Err(FabricError(
            "the scenario sets no run.until_us: a benchmark times a fixed simulated span".into(),
        ));
    };
    let from = r.limits.measure_from.unwrap_or(Time::ZERO);
    let mut outcome = Err(FabricError("not run".into()));
    let wall_s = wall_seconds(|| outcome = r.fabric.run(r.flows, r.limits, &mut NoProgress));
    let out: RunOutput = outcome?;
    let events = out.counters["events"];
    let reference_wall_s = wall_seconds(|| {
        // As many pending as a busy network has (about one per host per hop in flight).
        hold_model(events, 4096, Dur(7_200_000))
    });
    let secs = end.0.saturating_sub(from.0) as f64 * 1e-12;
    let goodput =
        out.measured_flow_bytes.iter().sum::<u64>() as f64 * 8.0 / secs / 1e9 / r.hosts as f64;
    Ok(PsnBenchReport {
        scenario: r.scenario,
        origin: r.origin,
        hosts: r.hosts,
        simulated_ms: end.0 as f64 * 1e-9,
        wall_s,
        events,
        events_per_s: events as f64 / wall_s,
        packet_hops_per_s: out.counters["packet_hops"] as f64 / wall_s,
        goodput_gbps_per_host: goodput,
        packets_dropped: out.counters["packets_dropped"],
        packets_trimmed: out.counters["packets_trimmed"],
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
