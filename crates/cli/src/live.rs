//! `shoal live`: the Shoal node over real sockets (crate `shoal-live`).

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use shoal_base::NodeId;
use shoal_live::fabric::RackSpec;
use shoal_live::netns::{self, NetRack, NetRackSpec};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Args)]
#[command(
    about = "Run the unchanged Shoal node live: processes in network namespaces, cells over \
    veth pairs through a software circuit switch, TUN devices for real applications"
)]
pub struct LiveArgs {
    #[command(subcommand)]
    command: LiveCommand,
}

#[derive(Subcommand)]
enum LiveCommand {
    /// Bring up a live rack in network namespaces (needs root; scripts/install-live-deps.sh)
    Rack(RackArgs),
    /// Print the counters of a running (or finished) rack
    Stats(StatsArgs),
    /// Run one scenario in the simulator and on a loopback live rack; print the table
    Compare(CompareArgs),
    /// One node process (started by `live rack` inside its namespace)
    #[command(hide = true)]
    Node {
        #[arg(long)]
        config: PathBuf,
        #[arg(long)]
        id: u16,
    },
    /// The switch process (started by `live rack` inside its namespace)
    #[command(hide = true)]
    Switch {
        #[arg(long)]
        config: PathBuf,
    },
}

/// The rack's shape and timing.
#[derive(Args, Clone)]
struct RackOpts {
    /// Nodes in the rack
    #[arg(long, default_value_t = 8)]
    nodes: u16,
    /// Channels per node (each a Clos plane)
    #[arg(long, default_value_t = 1)]
    channels: u8,
    /// Ports per circuit switch
    #[arg(long, default_value_t = 4)]
    ports: u16,
    /// Slots from transmission to reception (App. A)
    #[arg(long, default_value_t = 2)]
    delay: u32,
    /// Slot length in microseconds: the paper's 23-77 ns scaled to what the host can pace
    #[arg(long, default_value_t = 100.0)]
    slot_us: f64,
    /// How long a reception waits for a late cell before the peer counts as failed
    #[arg(long, default_value_t = 200)]
    grace_ms: u64,
}

impl RackOpts {
    fn spec(&self) -> RackSpec {
        RackSpec {
            nodes: self.nodes,
            channels: self.channels,
            switch_ports: self.ports,
            delay_slots: self.delay,
        }
    }

    fn slot_ns(&self) -> Result<u64> {
        if self.slot_us.is_nan() || self.slot_us < 1.0 {
            bail!("--slot-us must be at least 1 µs, got {}", self.slot_us);
        }
        Ok((self.slot_us * 1e3).round() as u64)
    }
}

#[derive(Args)]
struct RackArgs {
    #[command(flatten)]
    rack: RackOpts,
    /// Run folder: rack.json, per-node counters.json, events.jsonl, cells.pcap, logs
    #[arg(long, default_value = "out/live")]
    out: PathBuf,
    /// Capture every node's cells (DLT 147; assets/wireshark/shoal.lua dissects them)
    #[arg(long)]
    pcap: bool,
    /// Probability that the switch flips a header bit of a cell (App. D)
    #[arg(long, default_value_t = 0.0)]
    corrupt: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Bytes a node holds submitted but unsent before it drops IP packets
    #[arg(long, default_value_t = 64 * 1024)]
    backlog_bytes: u64,
    /// Namespace names: <prefix>-sw, <prefix>-n<i>
    #[arg(long, default_value = "shoal")]
    prefix: String,
    /// Run ping, an HTTP download and iperf3 across the rack, kill -9 a node, check the rest
    #[arg(long)]
    demo: bool,
    /// The node the demo kills
    #[arg(long, default_value_t = 3)]
    kill: usize,
    /// Seconds of iperf3 in the demo
    #[arg(long, default_value_t = 10)]
    iperf_secs: u32,
    /// Without --demo: keep the rack up this many seconds (0: until Ctrl-D on stdin)
    #[arg(long, default_value_t = 0)]
    duration: u64,
}

#[derive(Args)]
struct CompareArgs {
    /// Slot length in microseconds for both (the live rack runs on threads over loopback)
    #[arg(long, default_value_t = 100.0)]
    slot_us: f64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write the table (Markdown) here
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct StatsArgs {
    /// The rack's run folder
    #[arg(default_value = "out/live")]
    dir: PathBuf,
}

pub fn main(args: LiveArgs) -> Result<ExitCode> {
    match args.command {
        LiveCommand::Rack(a) => rack(a),
        LiveCommand::Stats(a) => stats(a),
        LiveCommand::Compare(a) => compare(a),
        LiveCommand::Node { config, id } => {
            netns::run_node_process(&config, NodeId(id)).with_context(|| format!("node {id}"))?;
            Ok(ExitCode::SUCCESS)
        }
        LiveCommand::Switch { config } => {
            netns::run_switch_process(&config).context("switch")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn rack(a: RackArgs) -> Result<ExitCode> {
    // The arguments first: a mistyped rack is named as such even where no rack can run.
    let slot_ns = a.rack.slot_ns()?;
    if !(0.0..=1.0).contains(&a.corrupt) {
        bail!("--corrupt is a probability: 0 to 1, got {}", a.corrupt);
    }
    if a.rack.nodes > netns::MAX_NODES {
        bail!(
            "--nodes: at most {} (the namespace rack numbers nodes 10.0.0.1-250)",
            netns::MAX_NODES
        );
    }
    shoal_live::fabric::LiveFabric::new(a.rack.spec())
        .map_err(|e| anyhow::anyhow!("the rack (--nodes, --channels, --ports, --delay): {e}"))?;
    if let Some(why) = netns::unavailable() {
        bail!("cannot bring up a namespace rack here: {why}");
    }
    let dir = std::path::absolute(&a.out)?;
    let spec = NetRackSpec {
        rack: a.rack.spec(),
        slot_ns,
        grace_ns: a.rack.grace_ms * 1_000_000,
        corrupt_prob: a.corrupt,
        seed: a.seed,
        pcap: a.pcap,
        backlog_bytes: a.backlog_bytes,
        prefix: a.prefix,
        dir: dir.clone(),
        exe: std::env::current_exe()?,
        startup_ns: 2_000_000_000,
    };
    if a.demo {
        let report = shoal_live::demo::run_demo(spec, a.kill, a.iperf_secs)?;
        std::fs::write(dir.join("demo.txt"), report.lines.join("\n") + "\n")?;
        return Ok(if report.ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let n = spec.rack.nodes;
    let rack = NetRack::up(spec)?;
    println!(
        "live rack up: {n} nodes; node i is 10.0.0.(i+1) in namespace {}-n<i>, e.g.\n  \
         ip netns exec {}-n0 ping 10.0.0.2\ncounters: shoal live stats {}",
        rack.spec.prefix,
        rack.spec.prefix,
        dir.display()
    );
    if a.duration > 0 {
        std::thread::sleep(Duration::from_secs(a.duration));
    } else {
        println!("press Ctrl-D to take it down");
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink)? > 0 {}
    }
    rack.down()?;
    Ok(ExitCode::SUCCESS)
}

fn compare(a: CompareArgs) -> Result<ExitCode> {
    if a.slot_us.is_nan() || a.slot_us < 1.0 {
        bail!("--slot-us must be at least 1 µs, got {}", a.slot_us);
    }
    let scenario = shoal_live::compare::default_scenario((a.slot_us * 1e3).round() as u64);
    let c = shoal_live::compare::compare(&scenario, a.seed)?;
    let table = c.markdown();
    print!("{table}");
    if let Some(out) = a.out {
        std::fs::write(&out, &table).with_context(|| format!("writing {}", out.display()))?;
    }
    Ok(if c.slots_agree() {
        ExitCode::SUCCESS
    } else {
        eprintln!("shoal: the live rack and the simulator disagree in slots");
        ExitCode::FAILURE
    })
}

fn stats(a: StatsArgs) -> Result<ExitCode> {
    let cfg = netns::ProcConfig::load(&a.dir.join("rack.json"))
        .with_context(|| format!("{}: not a live rack folder", a.dir.display()))?;
    println!(
        "node  slot  late_slots  cells_sent  cells_recv  crc_fail  missing  violations  queued  max_queue  max_fb_sent  peers_failed  ip_in  ip_out  ip_dropped"
    );
    for i in 0..cfg.rack.nodes as usize {
        let Some(v) = netns::read_counters(&a.dir, i) else {
            println!("{i:>4}  (no counters yet)");
            continue;
        };
        let (d, s, h) = (&v["driver"], &v["node_stats"], &v["host"]);
        let dropped = h["dropped_backlog"].as_u64().unwrap_or(0)
            + h["dropped_not_rack"].as_u64().unwrap_or(0);
        let u = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
        println!(
            "{i:>4}  {:>4}  {:>10}  {:>10}  {:>10}  {:>8}  {:>7}  {:>10}  {:>6}  {:>9}  {:>11}  {:>12}  {:>5}  {:>6}  {:>10}",
            u(&d["slot"]),
            u(&d["late_slots"]),
            u(&d["cells_sent"]),
            u(&d["cells_received"]),
            u(&d["crc_failures"]),
            u(&d["missing"]),
            u(&d["violations"]),
            u(&d["queued_cells"]),
            u(&s["max_queue"]),
            u(&d["max_feedback_sent"]),
            u(&s["peers_failed"]),
            u(&h["packets_in"]),
            u(&h["packets_out"]),
            dropped
        );
    }
    Ok(ExitCode::SUCCESS)
}
