//! `shoal bench`: how fast the simulator runs the paper's rack.

use crate::huge_pages;
use anyhow::{Result, bail};
use clap::Args;
use clap::ValueEnum;
use serde::Serialize;
use shoal_aquila::bench::{self as aquila_bench, AquilaBenchOptions, BenchPattern};
use shoal_aquila::routing::Mode;
use shoal_fabric::bench::ScenarioRun;
use shoal_psn::bench as psn_bench;
use shoal_rack::bench::{self, BenchOptions};
use shoal_rack::bench_datacenter::{self, DatacenterOptions};
use shoal_stardust::bench as stardust_bench;
use std::fmt::Display;
use std::process::ExitCode;

/// Measure the simulator's speed on the rack of Fig. 12 (512 nodes, 4 × 25 Gb/s channels,
/// full permutation), next to a reference loop that only moves cell records.
///
/// The unit is the node-channel-slot: one node on one channel in one slot (2,048 per slot at
/// 512 nodes). The default times 20,000 slots after 2,560 of warm-up (a few seconds); building
/// the rack is not timed. Prints a short report, or with --json the report as JSON on stdout.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  shoal bench\n  shoal bench --seconds 10 --json > bench.json\n  \
    shoal bench --nodes 1024 --pairs 1024 --slots 5000\n  shoal bench --psn dctcp\n  \
    shoal bench --psn ndp --sim-ms 2\n  shoal bench --aquila\n  \
    shoal bench --aquila --pods 9 --tins-per-pod 4 --sim-us 100\n  \
    shoal bench --stardust\n  shoal bench --stardust --sim-ms 100 --json"
)]
pub struct BenchArgs {
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Aim for about this many seconds of timed simulation (a short calibration run sizes
    /// --slots). Default: the fixed 20,000 slots.
    #[arg(long, value_name = "S", conflicts_with = "slots")]
    seconds: Option<f64>,
    /// Nodes in the rack, 2 to 16384 [default: 512].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u16).range(2..=i64::from(shoal_rack::MAX_NODES)))]
    nodes: Option<u16>,
    /// Flows of the permutation; equal to --nodes for the full permutation [default: nodes].
    #[arg(long, value_name = "P")]
    pairs: Option<usize>,
    /// Timed slots [default: 20000].
    #[arg(long)]
    slots: Option<u64>,
    /// Slots run before timing starts [default: 2560].
    #[arg(long)]
    warmup_slots: Option<u64>,
    /// Also time the fast engine with its rack cut into this many parts on as many threads,
    /// and report the speed-up over one thread (the outputs must not change) [default: 1].
    #[arg(long, value_name = "T",
          value_parser = clap::value_parser!(u64).range(1..=1024),
          conflicts_with_all = ["datacenter", "psn", "aquila"])]
    threads: Option<u64>,
    /// Time the datacenter workload of §7.3 (Fig. 15: Pareto sizes, Poisson arrivals, uniform
    /// pairs) instead of the permutation, from the first slot until --flows have completed.
    #[arg(long, conflicts_with_all = ["pairs", "slots", "warmup_slots", "seconds"])]
    datacenter: bool,
    /// With --datacenter: the offered load, L = F/(R·N·τ) with R = 50 Gb/s [default: 0.5].
    //
    // clap waives `requires` when the required option conflicts with one given (`--slots 10
    // --load 0.5` ran the permutation and ignored --load), so the options --datacenter
    // conflicts with are listed here too: every use without --datacenter is an error.
    #[arg(long, value_name = "L", requires = "datacenter",
          conflicts_with_all = ["pairs", "slots", "warmup_slots", "seconds", "psn"])]
    load: Option<f64>,
    /// With --datacenter: completed flows at which the run stops, at least 1 [default: 20000].
    #[arg(long, value_name = "M", requires = "datacenter",
          conflicts_with_all = ["pairs", "slots", "warmup_slots", "seconds", "psn"],
          value_parser = completed_flows)]
    flows: Option<u64>,
    /// Time the packet-switched simulator on the scenario file of htsim's permutation example
    /// for this transport (scenarios/htsim-TRANSPORT-permutation.toml: a 432-host k=12
    /// fat-tree, 10 Gb/s, 9000 B packets), exactly the workload `shoal run` validates. No
    /// ratio to htsim is printed: scripts/vs-htsim.sh measures both side by side.
    #[arg(long, value_enum, value_name = "TRANSPORT", group = "scenario_bench",
          conflicts_with_all = ["datacenter", "pairs", "slots", "warmup_slots", "seconds", "nodes"])]
    psn: Option<PsnTransport>,
    /// With --psn: another scenario file of that transport to time. With --stardust: another
    /// Stardust scenario file.
    #[arg(long, value_name = "FILE", requires = "scenario_bench",
          conflicts_with_all = ["datacenter", "pairs", "slots", "warmup_slots", "seconds", "nodes",
                                "load", "flows"])]
    scenario: Option<std::path::PathBuf>,
    /// With --psn or --stardust: simulated milliseconds, goodput measured over the last 90%
    /// [default: the scenario's run.until_us and run.measure_from_us].
    //
    // As for --load: the options --psn conflicts with are listed, since clap waives `requires`
    // when the required option conflicts with one given.
    #[arg(long, value_name = "MS", requires = "scenario_bench",
          conflicts_with_all = ["datacenter", "pairs", "slots", "warmup_slots", "seconds", "nodes",
                                "load", "flows"])]
    sim_ms: Option<u64>,
    /// Time the Aquila clique simulator instead: every host injecting at its full rate, in
    /// cell-hops per second [default: the full clique, 48 pods x 12 TiNs, uniform random].
    #[arg(long, conflicts_with_all = ["datacenter", "psn", "pairs", "slots", "warmup_slots",
                                      "seconds", "nodes", "load", "flows", "sim_ms"])]
    aquila: bool,
    /// With --aquila: pods of the clique, 2 to 64 [default: 48].
    #[arg(long, value_name = "P", requires = "aquila",
          value_parser = clap::value_parser!(u32).range(2..=64))]
    pods: Option<u32>,
    /// With --aquila: TiNs per pod, 1 to 16 [default: 12].
    #[arg(long, value_name = "T", requires = "aquila",
          value_parser = clap::value_parser!(u32).range(1..=16))]
    tins_per_pod: Option<u32>,
    /// With --aquila: traffic pattern [default: uniform].
    #[arg(long, value_enum, value_name = "PATTERN", requires = "aquila")]
    pattern: Option<AquilaPattern>,
    /// With --aquila: routing mode (adaptive, minimal-adaptive, deterministic,
    /// minimal-deterministic, valiant) [default: adaptive].
    #[arg(long, value_name = "MODE", requires = "aquila", value_parser = routing_mode)]
    routing: Option<Mode>,
    /// With --aquila: simulated microseconds, 1 to 1,000,000 [default: 20].
    #[arg(long, value_name = "US", requires = "aquila",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    sim_us: Option<u64>,
    /// Time the Stardust simulator on a scenario file (default: Fig. 10(a)'s permutation on
    /// the 432-node k=12 fat-tree, scenarios/stardust-fig10a.toml) in cell-hops and events per
    /// second, then the packet engine on the same fat-tree (htsim's DCTCP permutation,
    /// scenarios/htsim-dctcp-permutation.toml) for the same simulated span, in packet-hops.
    #[arg(long, group = "scenario_bench",
          conflicts_with_all = ["datacenter", "pairs", "slots", "warmup_slots", "seconds", "nodes",
                                "load", "flows", "aquila", "threads"])]
    stardust: bool,
}

/// The traffic patterns of `--aquila`.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum AquilaPattern {
    Uniform,
    PodShift,
}

fn routing_mode(text: &str) -> Result<Mode, String> {
    Mode::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
        format!("not a routing mode; one of {}", names.join(", "))
    })
}

/// `--flows`: a run that stops at 0 completed flows measures nothing.
fn completed_flows(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("must be at least 1: the run stops once that many flows completed".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// The transports of htsim's examples.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum PsnTransport {
    Dctcp,
    Ndp,
}

impl PsnTransport {
    fn name(self) -> &'static str {
        match self {
            PsnTransport::Dctcp => "dctcp",
            PsnTransport::Ndp => "ndp",
        }
    }

    /// The repository's scenario file of htsim's example for this transport.
    fn scenario(self) -> std::path::PathBuf {
        let scenarios = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
        std::path::Path::new(scenarios).join(format!("htsim-{}-permutation.toml", self.name()))
    }
}

pub fn main(args: BenchArgs) -> Result<ExitCode> {
    eprintln!(
        "shoal bench: huge pages {}; {}=0 turns them off",
        huge_pages::status(),
        huge_pages::SWITCH
    );
    if args.datacenter {
        return datacenter(&args);
    }
    if let Some(transport) = args.psn {
        return psn(&args, transport);
    }
    if args.aquila {
        return aquila(&args);
    }
    if args.stardust {
        return stardust(&args);
    }
    let defaults = BenchOptions::default();
    let nodes = args.nodes.unwrap_or(defaults.nodes);
    let mut opts = BenchOptions {
        nodes,
        pairs: args.pairs.unwrap_or(nodes as usize),
        slots: args.slots.unwrap_or(defaults.slots),
        warmup_slots: args.warmup_slots.unwrap_or(defaults.warmup_slots),
        threads: args.threads.map_or(defaults.threads, |t| t as usize),
    };
    if let Some(seconds) = args.seconds {
        if !(seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0) {
            bail!("--seconds must be above 0 and at most a day, got {seconds}");
        }
        eprintln!("shoal bench: calibrating");
        let probe = bench::run(&BenchOptions {
            slots: 1_000,
            warmup_slots: opts.warmup_slots.min(1_000),
            ..opts
        })?;
        let per_slot = probe.wall_s / probe.slots as f64;
        opts.slots = ((seconds / per_slot).round() as u64).max(1);
    }
    eprintln!(
        "shoal bench: {} nodes, {} pairs, {} slots after {} of warm-up",
        opts.nodes, opts.pairs, opts.slots, opts.warmup_slots
    );
    let report = bench::run(&opts)?;
    print_report(args.json, &report)
}

/// Prints the report, as text or as JSON with the memory setting it ran under added.
fn print_report<R: Serialize + Display>(json: bool, report: &R) -> Result<ExitCode> {
    if json {
        let mut value = serde_json::to_value(report)?;
        if let Some(fields) = value.as_object_mut() {
            fields.insert("huge_pages".into(), huge_pages::status().into());
        }
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("{report}");
    }
    Ok(ExitCode::SUCCESS)
}

fn datacenter(args: &BenchArgs) -> Result<ExitCode> {
    let defaults = DatacenterOptions::default();
    let opts = DatacenterOptions {
        nodes: args.nodes.unwrap_or(defaults.nodes),
        load: args.load.unwrap_or(defaults.load),
        flows: args.flows.unwrap_or(defaults.flows),
    };
    eprintln!(
        "shoal bench: datacenter workload, {} nodes, load {}, until {} flows complete",
        opts.nodes, opts.load, opts.flows
    );
    let report = bench_datacenter::run(&opts)?;
    print_report(args.json, &report)
}

/// Loads a scenario to time, with `--sim-ms` (goodput over its last 90%) if given.
fn timed_scenario(path: &std::path::Path, sim_ms: Option<u64>) -> Result<shoal_scenario::Scenario> {
    let scenario = shoal_scenario::load(path)?;
    let Some(ms) = sim_ms else {
        return Ok(scenario);
    };
    if ms == 0 {
        bail!("--sim-ms must be at least 1");
    }
    let us = ms as f64 * 1000.0;
    Ok(scenario.with_settings(&[
        ("run.until_us", toml::Value::Float(us)),
        ("run.measure_from_us", toml::Value::Float(us / 10.0)),
    ])?)
}

/// Times the packet simulator on `scenario` (read from `path`).
fn time_psn(
    scenario: &shoal_scenario::Scenario,
    path: &std::path::Path,
) -> Result<psn_bench::PsnBenchReport> {
    time_scenario(scenario, path, psn_bench::run)
}

/// Says what runs, then times `bench` on `scenario` (read from `path`), its fabric and flows
/// built as `shoal run` builds them.
fn time_scenario<R>(
    scenario: &shoal_scenario::Scenario,
    path: &std::path::Path,
    bench: impl FnOnce(ScenarioRun<'_>) -> Result<R, shoal_fabric::FabricError>,
) -> Result<R> {
    eprintln!(
        "shoal bench: {} ({}), {} hosts",
        scenario.name,
        path.display(),
        scenario.nodes()
    );
    let mut fabric = scenario.build_fabric()?;
    let (mut flows, _) = scenario.source()?;
    Ok(bench(ScenarioRun {
        scenario: scenario.name.clone(),
        origin: path.display().to_string(),
        hosts: scenario.nodes(),
        fabric: fabric.as_mut(),
        flows: flows.as_mut(),
        limits: scenario.limits,
    })?)
}

fn psn(args: &BenchArgs, transport: PsnTransport) -> Result<ExitCode> {
    let path = args
        .scenario
        .clone()
        .unwrap_or_else(|| transport.scenario());
    let scenario = timed_scenario(&path, args.sim_ms)?;
    if scenario.fabric_name() != transport.name() {
        bail!(
            "{}: the scenario runs fabric {:?}, not --psn {}",
            path.display(),
            scenario.fabric_name(),
            transport.name()
        );
    }
    let report = time_psn(&scenario, &path)?;
    print_report(args.json, &report)
}

/// `--stardust`: the Stardust run, then the packet engine on the same fat-tree.
#[derive(Serialize)]
struct StardustBeside {
    stardust: stardust_bench::StardustBenchReport,
    /// htsim's DCTCP permutation on the same k=12 fat-tree, for the same simulated span.
    packet: psn_bench::PsnBenchReport,
}

impl Display for StardustBeside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{}", self.stardust)?;
        writeln!(f, "beside it, the packet engine on the same fat-tree:")?;
        write!(f, "{}", self.packet)
    }
}

fn stardust(args: &BenchArgs) -> Result<ExitCode> {
    let scenarios = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios"));
    let path = args
        .scenario
        .clone()
        .unwrap_or_else(|| scenarios.join("stardust-fig10a.toml"));
    let scenario = timed_scenario(&path, args.sim_ms)?;
    if scenario.fabric_name() != "stardust" {
        bail!(
            "{}: the scenario runs fabric {:?}, not stardust",
            path.display(),
            scenario.fabric_name()
        );
    }
    let report = time_scenario(&scenario, &path, stardust_bench::run)?;
    // The packet engine for the Stardust run's span and measured window.
    let dctcp_path = PsnTransport::Dctcp.scenario();
    let until = scenario.limits.until.map_or(0.0, |t| t.0 as f64 / 1e6);
    let from = scenario
        .limits
        .measure_from
        .map_or(0.0, |t| t.0 as f64 / 1e6);
    let dctcp = shoal_scenario::load(&dctcp_path)?.with_settings(&[
        ("run.until_us", toml::Value::Float(until)),
        ("run.measure_from_us", toml::Value::Float(from)),
    ])?;
    let packet = time_psn(&dctcp, &dctcp_path)?;
    print_report(
        args.json,
        &StardustBeside {
            stardust: report,
            packet,
        },
    )
}

fn aquila(args: &BenchArgs) -> Result<ExitCode> {
    let defaults = AquilaBenchOptions::default();
    let opts = AquilaBenchOptions {
        pods: args.pods.unwrap_or(defaults.pods),
        tins_per_pod: args.tins_per_pod.unwrap_or(defaults.tins_per_pod),
        pattern: match args.pattern {
            None => defaults.pattern,
            Some(AquilaPattern::Uniform) => BenchPattern::UniformRandom,
            Some(AquilaPattern::PodShift) => BenchPattern::PodShift,
        },
        mode: args.routing.map_or(defaults.mode, Mode::name),
        sim_us: args.sim_us.unwrap_or(defaults.sim_us),
    };
    eprintln!(
        "shoal bench: aquila, {} pods x {} TiNs, {:?}, {} routing, {} us",
        opts.pods, opts.tins_per_pod, opts.pattern, opts.mode, opts.sim_us
    );
    let report = aquila_bench::run(&opts).map_err(anyhow::Error::msg)?;
    print_report(args.json, &report)
}
