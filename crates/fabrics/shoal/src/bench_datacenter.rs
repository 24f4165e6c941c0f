//! `shoal bench --datacenter`: how fast the rack runs the datacenter workload of §7.3 (Fig. 15),
//! the run whose speed issue 3 targets (one load point of one million flows on 512 nodes in two
//! minutes on one core).
//!
//! The rack of §7.1 (`RackConfig::paper`) under Pareto flow sizes (shape 1.05, mean 100 KB,
//! clamped at 1 GB), Poisson arrivals at `load` by §7.3's definition with R = 50 Gb/s (as
//! `scenarios/fig15-datacenter.toml` explains) and uniform pairs, run through `Fabric::run`
//! until `flows` flows have completed. Everything from the first slot is timed: at this load
//! the rack is never idle for long, and the run's whole cost is what a user waits for.

use crate::rack::ShoalRack;
use serde::Serialize;
use shoal_base::Rate;
use shoal_fabric::bench::{peak_rss_bytes, wall_seconds};
use shoal_fabric::{Fabric, FabricError, NoProgress, RunLimits};
use shoal_workload::generator::OpenLoopSpec;
use shoal_workload::{Arrivals, Matrix, OpenLoop, SizeDist};
use std::fmt;

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DatacenterOptions {
    pub nodes: u16,
    /// Offered load, L = F/(R·N·τ) with R = 50 Gb/s.
    pub load: f64,
    /// Completed flows at which the run stops.
    pub flows: u64,
}

impl Default for DatacenterOptions {
    /// One Fig. 15 point at 512 nodes and L = 0.5, cut to 20,000 flows (about 10 s).
    fn default() -> Self {
        DatacenterOptions {
            nodes: 512,
            load: 0.5,
            flows: 20_000,
        }
    }
}

/// What the run measured; rates are per second of wall-clock time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DatacenterReport {
    pub options: DatacenterOptions,
    /// The engine that ran: the default's choice (`rack.engine = "auto"`, the fast engine for
    /// this rack since 2026-11-27; the figures in BENCHMARKS.md before that are the node's).
    pub engine: &'static str,
    pub flows_completed: u64,
    pub sim_time_us: f64,
    pub wall_s: f64,
    pub node_channel_slots_per_s: f64,
    /// Data cells transmitted (first and second hops) per second.
    pub cells_per_s: f64,
    pub completed_flows_per_s: f64,
    /// Data cells sent per node-channel-slot: how loaded the slots of this run were.
    pub data_cell_share: f64,
    /// One million completed flows at this rate. A lower bound for the full run: long flows
    /// accumulate, so later slots carry more data (over a million flows at 512 nodes and
    /// L = 0.5, 54% of node-channel-slots carry a data cell, against 37% in the first 20,000).
    pub wall_s_per_million_flows: f64,
    /// Peak resident set of the process (VmHWM), if the system says.
    pub peak_rss_bytes: Option<u64>,
}

const SEED: u64 = 1;

/// Runs the workload once. Fails for a load or rack that cannot run.
pub fn run(opts: &DatacenterOptions) -> Result<DatacenterReport, FabricError> {
    let bad = |e: &dyn fmt::Display| FabricError(format!("bench --datacenter: {e}"));
    let cfg = crate::bench::paper_rack_for(opts.nodes)?;
    let mut rack = ShoalRack::new(cfg, SEED).map_err(|e| bad(&e))?;
    let sizes = SizeDist::pareto(1.05, 100e3, Some(1_000_000_000)).map_err(|e| bad(&e))?;
    let arrivals = Arrivals::poisson_for_load(
        opts.load,
        sizes.expected_mean(),
        Rate::gbps(50),
        opts.nodes as usize,
    )
    .map_err(|e| bad(&e))?;
    if let Some(gap) = arrivals.mean_gap_ps()
        && gap > shoal_workload::arrivals::MAX_MEAN_GAP_PS
    {
        return Err(bad(&format!(
            "load {} makes flows arrive {:.3e} s apart across the rack, above the 1 s allowed: \
             the simulator would step through hours of idle slots",
            opts.load,
            gap * 1e-12
        )));
    }
    let mut source = OpenLoop::new(
        OpenLoopSpec {
            nodes: opts.nodes as usize,
            sizes,
            arrivals,
            matrix: Matrix::Uniform,
            max_flows: None,
            until: None,
        },
        SEED,
    )
    .map_err(|e| bad(&e))?;
    let limits = RunLimits {
        completed_flows: Some(opts.flows),
        ..RunLimits::default()
    };
    let mut outcome = Err(FabricError(
        "bench --datacenter: the run did not start".into(),
    ));
    let wall_s = wall_seconds(|| outcome = rack.run(&mut source, limits, &mut NoProgress));
    let out = outcome?;
    let rss = peak_rss_bytes();
    let completed = out.records.iter().filter(|r| r.finish.is_some()).count() as u64;
    let count = |k: &str| out.counters.get(k).copied().unwrap_or(0) as f64;
    let per_s = |x: f64| x / wall_s;
    Ok(DatacenterReport {
        options: *opts,
        engine: rack.engine_used().0.name(),
        flows_completed: completed,
        sim_time_us: out.sim_time.as_us_f64(),
        wall_s,
        node_channel_slots_per_s: per_s(count("node_channel_slots")),
        cells_per_s: per_s(count("data_cells_sent")),
        completed_flows_per_s: per_s(completed as f64),
        data_cell_share: count("data_cells_sent") / count("node_channel_slots").max(1.0),
        wall_s_per_million_flows: 1e6 * wall_s / completed.max(1) as f64,
        peak_rss_bytes: rss,
    })
}

impl fmt::Display for DatacenterReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.options;
        writeln!(
            f,
            "datacenter workload: {} nodes, load {}, {} flows completed in {:.1} us simulated \
             ({} engine)",
            o.nodes, o.load, self.flows_completed, self.sim_time_us, self.engine
        )?;
        writeln!(
            f,
            "wall time    {:.2} s: {:.2} M node-channel-slots/s, {:.2} M cells/s, {:.0} flows/s",
            self.wall_s,
            self.node_channel_slots_per_s / 1e6,
            self.cells_per_s / 1e6,
            self.completed_flows_per_s
        )?;
        writeln!(
            f,
            "data cells   in {:.1}% of node-channel-slots",
            100.0 * self.data_cell_share
        )?;
        writeln!(
            f,
            "1M flows     at least {:.0} s at this rate: later slots carry more data as long flows \
             accumulate (issue 3 target: 120 s at 512 nodes, load 0.5)",
            self.wall_s_per_million_flows
        )?;
        match self.peak_rss_bytes {
            Some(b) => write!(f, "peak RSS     {:.0} MiB", b as f64 / (1 << 20) as f64),
            None => write!(f, "peak RSS     unknown"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_datacenter_bench_completes_its_flows() {
        let r = run(&DatacenterOptions {
            nodes: 16,
            load: 0.3,
            flows: 200,
        })
        .expect("runs");
        assert!(r.flows_completed >= 200);
        assert!(r.sim_time_us > 0.0 && r.node_channel_slots_per_s > 0.0);
        // Every completed flow sent at least one cell, and no slot carries two.
        assert!(r.data_cell_share > 0.0 && r.data_cell_share <= 1.0);
        assert!(
            run(&DatacenterOptions {
                load: -1.0,
                ..DatacenterOptions::default()
            })
            .is_err()
        );
    }
}
