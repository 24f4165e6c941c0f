//! `shoal bench --aquila`: how fast the clique simulator moves cells, in cell-hops (a cell
//! crossing one TiN-to-TiN link) per second of wall-clock time on one core.
//!
//! Every host injects synthetic traffic at its full rate (100% offered load) for the whole
//! run, so the fabric is as busy as it gets: the case that sets the cost per cell-hop. Building
//! the clique (topology, routing tables, buffers) is timed apart from the run.
//!
//! Beside it, a reference loop pushes the run's event count through the bare event queue (each
//! event schedules one successor), the floor any model on this engine pays.

use crate::routing::Mode;
use crate::sim::{EVENT_KINDS, Pattern, Sim, Source};
use crate::spec::Spec;
use serde::Serialize;
use shoal_base::{Dur, Time};
use shoal_fabric::bench::{hold_model, peak_rss_bytes, wall_seconds};
use std::fmt;

/// What to run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AquilaBenchOptions {
    pub pods: u32,
    pub tins_per_pod: u32,
    pub pattern: BenchPattern,
    pub mode: &'static str,
    /// Simulated microseconds.
    pub sim_us: u64,
}

/// The traffic pattern, by name for the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum BenchPattern {
    UniformRandom,
    PodShift,
}

impl Default for AquilaBenchOptions {
    /// The full clique (48 pods of 12 TiNs, 1,152 hosts), adaptive routing, uniform random
    /// traffic, 20 µs.
    fn default() -> Self {
        AquilaBenchOptions {
            pods: 48,
            tins_per_pod: 12,
            pattern: BenchPattern::UniformRandom,
            mode: Mode::FullyAdaptive.name(),
            sim_us: 20,
        }
    }
}

/// What the run measured; rates are per second of wall-clock time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AquilaBenchReport {
    pub options: AquilaBenchOptions,
    /// How hosts inject: the clique's default, IP over GNet's RTS/CTS admission.
    pub injection: &'static str,
    pub hosts: u32,
    pub build_s: f64,
    pub wall_s: f64,
    pub events: u64,
    /// Events by kind (`EVENT_KINDS`), so that the cost per cell-hop can be read as events.
    pub events_by_kind: Vec<(&'static str, u64)>,
    pub cell_hops: u64,
    pub cells_delivered: u64,
    pub cell_hops_per_s: f64,
    pub events_per_s: f64,
    /// Wire bytes delivered over what the hosts could inject, over the whole run.
    pub throughput: f64,
    pub reference_wall_s: f64,
    pub reference_events_per_s: f64,
    pub peak_rss_bytes: Option<u64>,
}

/// The clique of `opts`: the full one's links, switch and hosts, with its pod count and pod
/// size; a pod keeps 24 local and 8 global ports' worth of links where they fit.
pub fn spec(opts: &AquilaBenchOptions) -> Result<Spec, String> {
    let full = Spec::aquila();
    let mode =
        Mode::from_name(opts.mode).ok_or_else(|| format!("no routing mode {}", opts.mode))?;
    let mut df = full.dragonfly.clone();
    df.pods = opts.pods;
    df.tins_per_pod = opts.tins_per_pod;
    df.local_ports = df.local_ports.max(df.local_links * opts.tins_per_pod);
    df.global_ports = df
        .global_ports
        .max((df.global_links * opts.pods.saturating_sub(1)).div_ceil(opts.tins_per_pod));
    Ok(Spec {
        dragonfly: df,
        mode,
        ..full
    })
}

/// Runs the clique of `opts` and the reference loop.
pub fn run(opts: &AquilaBenchOptions) -> Result<AquilaBenchReport, String> {
    let spec = spec(opts)?;
    let pattern = match opts.pattern {
        BenchPattern::UniformRandom => Pattern::UniformRandom,
        BenchPattern::PodShift => Pattern::PodShift,
    };
    let source = Source::Saturate {
        pattern,
        packets: None,
    };
    let end = Time::ZERO + Dur::from_us(opts.sim_us);
    let mut built = None;
    let build_s = wall_seconds(|| built = Some(Sim::new(&spec, Time::ZERO)));
    let mut sim = built.expect("built")?;
    let wall_s = wall_seconds(|| {
        sim.start_saturation(&source);
        sim.calendar().stop_at(end);
        while let Some((_, stop)) = sim.step(Some(&source)) {
            if stop {
                break;
            }
        }
    });
    let c = sim.counters.clone();
    let reference_wall_s = wall_seconds(|| {
        // About as many pending as the clique has (a few per host).
        hold_model(c.events, u64::from(sim.hosts()) * 8, Dur(20_000))
    });
    let capacity = spec.host_rate.bytes_in(end - Time::ZERO) as f64 * f64::from(sim.hosts());
    Ok(AquilaBenchReport {
        options: opts.clone(),
        injection: spec.injection.name(),
        hosts: sim.hosts(),
        build_s,
        wall_s,
        events: c.events,
        events_by_kind: EVENT_KINDS
            .iter()
            .copied()
            .zip(c.events_by_kind)
            .filter(|&(_, n)| n > 0)
            .collect(),
        cell_hops: c.cell_hops,
        cells_delivered: c.cells_delivered,
        cell_hops_per_s: c.cell_hops as f64 / wall_s,
        events_per_s: c.events as f64 / wall_s,
        throughput: c.measured_wire_bytes as f64 / capacity,
        reference_wall_s,
        reference_events_per_s: c.events as f64 / reference_wall_s,
        peak_rss_bytes: peak_rss_bytes(),
    })
}

impl fmt::Display for AquilaBenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.options;
        writeln!(
            f,
            "shoal bench --aquila: {} pods x {} TiNs ({} hosts), {:?}, {} routing, {} injection, {} us simulated",
            o.pods, o.tins_per_pod, self.hosts, o.pattern, o.mode, self.injection, o.sim_us
        )?;
        writeln!(
            f,
            "  simulator  {:>7.2} s  {:>6.2} M cell-hops/s  {:>6.2} M events/s  ({} cell-hops, {} events; built in {:.2} s)",
            self.wall_s,
            self.cell_hops_per_s / 1e6,
            self.events_per_s / 1e6,
            self.cell_hops,
            self.events,
            self.build_s
        )?;
        writeln!(
            f,
            "  reference  {:>7.2} s  {:>6.2} M events/s (bare event queue); simulator/reference = {:.2}",
            self.reference_wall_s,
            self.reference_events_per_s / 1e6,
            self.wall_s / self.reference_wall_s
        )?;
        let per_hop: Vec<String> = self
            .events_by_kind
            .iter()
            .map(|&(k, n)| format!("{k} {:.2}", n as f64 / self.cell_hops.max(1) as f64))
            .collect();
        writeln!(f, "  events per cell-hop: {}", per_hop.join(", "))?;
        write!(
            f,
            "  delivered {:.3} of injection capacity ({} cells)",
            self.throughput, self.cells_delivered
        )?;
        if let Some(rss) = self.peak_rss_bytes {
            write!(f, ", peak RSS {:.0} MB", rss as f64 / 1e6)?;
        }
        Ok(())
    }
}
