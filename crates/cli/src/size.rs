//! `shoal size`: the sizing, power and cost of a Shoal rack beside the packet network of the
//! same hosts and bandwidth, and the other fabrics' own models (`shoal-sizing`).

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use shoal_base::{Dur, Rate};
use shoal_schedule::Arrangement;
use shoal_sizing::rack::{Guard, GuardBudget, Latency, PAPER_CABLE_MM};
use shoal_sizing::{Report, SizeSpec, SizingError};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Size a Shoal rack: circuit switches, slot, epoch, latency, NIC memory, power and cost,
/// beside the packet-switched network of the same hosts and bandwidth and XFabric's model.
///
/// Every input defaults to Shoal's §5 rack (512 nodes, 2 x 50 Gb/s channels, 64-port switches,
/// 64 B cells) and the paper's power and cost figures; a scenario file gives the rack instead
/// ([rack]: nodes, channels, channel_gbps, slot_ns, guard_ns, cell and header bytes,
/// delay_slots, switch_ports, arrangement), and flags override either. Prints a summary and
/// one table across fabrics, or with --json everything as one JSON object (docs/outputs.md).
#[derive(Args)]
#[command(
    after_help = "Examples:\n  shoal size\n  shoal size --nodes 1024 --switch-ports 64 --channels 4 \
    --channel-gbps 25\n  shoal size scenarios/fig15-datacenter.toml --json\n  \
    shoal size --circuit-cost-ratio 0.3 --circuit-switch-watts 50"
)]
pub struct SizeArgs {
    /// Scenario file whose [rack] to size (the shoal fabric's). Default: §5's rack.
    #[arg(value_name = "SCENARIO.toml")]
    scenario: Option<PathBuf>,
    /// Nodes in the rack (2 to 65535).
    #[arg(long, value_name = "N")]
    nodes: Option<usize>,
    /// Channels per node, each switched by its own plane of circuit switches.
    #[arg(long, value_name = "C")]
    channels: Option<usize>,
    /// Rate of one channel, and of the circuit switches' ports (Gb/s).
    #[arg(long, value_name = "GBPS")]
    channel_gbps: Option<f64>,
    /// Ports per circuit switch, k (even, at least 4): a two-tier Clos holds k²/2 nodes.
    #[arg(long, value_name = "K")]
    switch_ports: Option<usize>,
    /// Cell size, header included.
    #[arg(long, value_name = "BYTES")]
    cell_bytes: Option<u32>,
    /// Cell header size (Fig. 5: 8).
    #[arg(long, value_name = "BYTES")]
    header_bytes: Option<u32>,
    /// Slot, guard band included. Default: the cell's time on the wire plus the guard band.
    #[arg(long, value_name = "NS")]
    slot_ns: Option<f64>,
    /// Guard band, in all. Default: the sum of its parts below (2.75 ns).
    #[arg(long, value_name = "NS", conflicts_with_all = ["reconfiguration_ns", "cable_tolerance_mm", "sync_ns"])]
    guard_ns: Option<f64>,
    /// Guard band part: switch reconfiguration (§4.1: 2.5 ns at 50 Gb/s).
    #[arg(long, value_name = "NS")]
    reconfiguration_ns: Option<f64>,
    /// Guard band part: how much links of equal length differ, ± mm (§3.4: 20).
    #[arg(long, value_name = "MM")]
    cable_tolerance_mm: Option<u64>,
    /// Guard band part: synchronisation precision (§3.4: 0.05 ns).
    #[arg(long, value_name = "NS")]
    sync_ns: Option<f64>,
    /// Cable a cell crosses from node to node, at 5 ns/m (default 3 m: §3.4's 15 ns).
    #[arg(long, value_name = "M", conflicts_with = "delay_slots")]
    cable_m: Option<f64>,
    /// Latency of each of the two circuit switches a cell crosses (default 0: layer 0).
    #[arg(long, value_name = "NS", conflicts_with = "delay_slots")]
    switch_latency_ns: Option<f64>,
    /// Node-to-node delay in slots, instead of cable and switch latency.
    #[arg(long, value_name = "D")]
    delay_slots: Option<u32>,
    /// Column order: `cyclic` (Fig. 3) or `propagation-aware` (Appendix A, the default).
    #[arg(long, value_parser = parse_arrangement)]
    arrangement: Option<Arrangement>,
    /// On-chip memory the NIC state is held against (default: App. B's Stratix V, 52.43 Mbit).
    #[arg(long, value_name = "MBIT")]
    on_chip_mbit: Option<f64>,
    /// Least width of a node id and a feedback in the NIC state (default 10, Fig. 5).
    #[arg(long, value_name = "BITS")]
    header_bits: Option<u32>,
    /// Width of a feedback's arrival time per rate-limit entry (default 16).
    #[arg(long, value_name = "BITS")]
    timestamp_bits: Option<u32>,
    /// Ports of the packet network's switches (default: the circuit switches').
    #[arg(long, value_name = "K")]
    packet_switch_ports: Option<usize>,
    /// Rate of the packet switches' ports (default: the packet network's host rate).
    #[arg(long, value_name = "GBPS")]
    packet_port_gbps: Option<f64>,
    /// Power of one packet switch (default: 350 W for 64 x 50 Gb/s, in proportion to ports x rate).
    #[arg(long, value_name = "W")]
    packet_switch_watts: Option<f64>,
    /// Power of one circuit switch (default: 38.5 W for 64 x 50 Gb/s, in proportion to ports x
    /// rate).
    #[arg(long, value_name = "W")]
    circuit_switch_watts: Option<f64>,
    /// Power of today's 100 Gb/s NIC (§5: 12.4 W).
    #[arg(long, value_name = "W")]
    nic_watts_per_100g: Option<f64>,
    /// NIC power saved by integration with the SoC (§5: 10x).
    #[arg(long, value_name = "X")]
    soc_integration: Option<f64>,
    /// Shoal NIC's extra power as a fraction (Appendix B: 0.11).
    #[arg(long, value_name = "FRACTION")]
    shoal_nic_overhead: Option<f64>,
    /// Shoal's node rate over the packet network's host rate (§5: 2, for detouring).
    #[arg(long, value_name = "X")]
    detour_factor: Option<f64>,
    /// Circuit switch cost over a packet switch's (default: the area model's 0.15).
    #[arg(long, value_name = "RATIO")]
    circuit_cost_ratio: Option<f64>,
    /// Shoal NIC cost over a packet network NIC's: LOW,HIGH or one value (§5: 2,3).
    #[arg(long, value_name = "LOW,HIGH", value_parser = parse_range)]
    shoal_nic_cost: Option<[f64; 2]>,
    /// A packet network NIC's cost over a packet switch's (reconstructed: 1/128).
    #[arg(long, value_name = "RATIO")]
    nic_to_switch_cost: Option<f64>,
    /// The cost saving whose circuit-switch cost ratio is reported (§5: 0.4).
    #[arg(long, value_name = "FRACTION")]
    target_reduction: Option<f64>,
    /// Area model: a packet switch's memory share (§5: 0.5).
    #[arg(long, value_name = "FRACTION")]
    area_memory: Option<f64>,
    /// Area model: a packet switch's packet-processing share (§5: 0.2).
    #[arg(long, value_name = "FRACTION")]
    area_logic: Option<f64>,
    /// Area model: a packet switch's SerDes share (§5: 0.3).
    #[arg(long, value_name = "FRACTION")]
    area_serdes: Option<f64>,
    /// Area model: a circuit switch's SerDes over a packet switch's (§5: 0.5).
    #[arg(long, value_name = "FRACTION")]
    circuit_serdes_scale: Option<f64>,
    /// XFabric: internal ports per SoC, d (default 6).
    #[arg(long, value_name = "D")]
    xfabric_ports_per_soc: Option<usize>,
    /// XFabric: uplinks to the data center (default 8, or the SoC count if fewer).
    #[arg(long, value_name = "L")]
    xfabric_uplinks: Option<usize>,
    /// Stardust Fig. 11: a Fabric Element platform's price over a ToR's (§7: 0.67).
    #[arg(long, value_name = "RATIO")]
    stardust_fe_cost_ratio: Option<f64>,
    /// Stardust Fig. 11: a Fabric Element's power over a ToR's (ours: 0.67, the area ratio).
    #[arg(long, value_name = "RATIO")]
    stardust_fe_power_ratio: Option<f64>,
    /// Stardust Fig. 11: a ToR or adapter platform's price in dollars (ours: 10000).
    #[arg(long, value_name = "USD")]
    stardust_tor_usd: Option<f64>,
    /// Stardust Fig. 11: a ToR's power (ours: 230 W, §7's range 150-310 W).
    #[arg(long, value_name = "W")]
    stardust_tor_watts: Option<f64>,
    /// Stardust Fig. 11: servers per ToR or adapter (§7: 40).
    #[arg(long, value_name = "D")]
    stardust_servers_per_tor: Option<u32>,
    /// Print everything as one JSON object instead of the summary and table.
    #[arg(long)]
    json: bool,
}

fn parse_arrangement(s: &str) -> Result<Arrangement, String> {
    s.parse()
        .map_err(|e: shoal_schedule::UnknownArrangement| e.to_string())
}

/// "2,3" or "2.5".
fn parse_range(s: &str) -> Result<[f64; 2], String> {
    let num = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| format!("{t:?} is not a number"))
    };
    match s.split_once(',') {
        Some((lo, hi)) => Ok([num(lo)?, num(hi)?]),
        None => num(s).map(|v| [v, v]),
    }
}

/// A flag's duration in nanoseconds.
fn dur(flag: &str, ns: f64) -> Result<Dur> {
    Dur::from_ns_f64(ns).ok_or_else(|| anyhow!("--{flag}: a duration of 0 ns or more, got {ns:?}"))
}

fn rate(flag: &str, gbps: f64) -> Result<Rate> {
    if !(gbps.is_finite() && gbps > 0.0 && gbps <= 100_000.0) {
        bail!("--{flag}: above 0 and at most 100,000 Gb/s, got {gbps:?}");
    }
    Ok(Rate((gbps * 1e9).round() as u64))
}

/// The spec: §5's defaults, the scenario's rack over them, the flags over both.
fn spec(args: &SizeArgs) -> Result<SizeSpec> {
    let mut spec = SizeSpec::default();
    let r = &mut spec.rack;
    if let Some(path) = &args.scenario {
        // The scenario glue: only its resolved [rack] is read.
        let s = shoal_scenario::load(path).map_err(|e| anyhow!("{e}"))?;
        let Some(rack) = s.spec::<shoal_rack::RackSpec>() else {
            bail!(
                "{}: the scenario runs the {} fabric; shoal size reads a Shoal [rack] (give the \
                 host count with --nodes instead)",
                path.display(),
                s.fabric_name()
            );
        };
        let c = &rack.config;
        r.nodes = usize::from(c.nodes);
        r.channels = usize::from(c.channels);
        r.channel_rate = c.channel_rate;
        r.switch_ports = usize::from(c.switch_ports);
        r.cell_bytes = u32::from(c.cell_bytes);
        r.header_bytes = u32::from(c.header_bytes);
        r.overhead_bytes = u32::from(c.overhead_bytes);
        r.slot = Some(c.slot);
        r.guard = Guard::Given(c.guard);
        r.latency = Latency::Slots(c.delay_slots);
        r.arrangement = c.arrangement;
    }
    r.nodes = args.nodes.unwrap_or(r.nodes);
    r.channels = args.channels.unwrap_or(r.channels);
    if let Some(g) = args.channel_gbps {
        r.channel_rate = rate("channel-gbps", g)?;
    }
    r.switch_ports = args.switch_ports.unwrap_or(r.switch_ports);
    r.cell_bytes = args.cell_bytes.unwrap_or(r.cell_bytes);
    r.header_bytes = args.header_bytes.unwrap_or(r.header_bytes);
    if let Some(ns) = args.slot_ns {
        r.slot = Some(dur("slot-ns", ns)?);
    }
    if let Some(ns) = args.guard_ns {
        r.guard = Guard::Given(dur("guard-ns", ns)?);
    }
    if args.reconfiguration_ns.is_some()
        || args.cable_tolerance_mm.is_some()
        || args.sync_ns.is_some()
    {
        let p = GuardBudget::PAPER;
        r.guard = Guard::Budget(GuardBudget {
            reconfiguration: match args.reconfiguration_ns {
                Some(ns) => dur("reconfiguration-ns", ns)?,
                None => p.reconfiguration,
            },
            cable_tolerance_mm: args.cable_tolerance_mm.unwrap_or(p.cable_tolerance_mm),
            sync_precision: match args.sync_ns {
                Some(ns) => dur("sync-ns", ns)?,
                None => p.sync_precision,
            },
        });
    }
    if args.cable_m.is_some() || args.switch_latency_ns.is_some() {
        let (cable_mm, per_switch) = match r.latency {
            Latency::Physical {
                cable_mm,
                per_switch,
            } => (cable_mm, per_switch),
            Latency::Slots(_) => (PAPER_CABLE_MM, Dur(0)),
        };
        r.latency = Latency::Physical {
            cable_mm: match args.cable_m {
                Some(m) if m.is_finite() && (0.0..=1_000.0).contains(&m) => {
                    (m * 1e3).round() as u64
                }
                Some(m) => bail!("--cable-m: 0 to 1,000 m, got {m:?}"),
                None => cable_mm,
            },
            per_switch: match args.switch_latency_ns {
                Some(ns) => dur("switch-latency-ns", ns)?,
                None => per_switch,
            },
        };
    }
    if let Some(d) = args.delay_slots {
        r.latency = Latency::Slots(d);
    }
    r.arrangement = args.arrangement.unwrap_or(r.arrangement);

    if let Some(m) = args.on_chip_mbit {
        if !(m.is_finite() && m > 0.0 && m <= 1e9) {
            bail!("--on-chip-mbit: above 0 and at most 1e9 Mbit, got {m:?}");
        }
        spec.on_chip_bits = (m * 1e6).round() as u64;
    }
    let w = &mut spec.widths;
    w.header_bits = args.header_bits.unwrap_or(w.header_bits);
    w.timestamp_bits = args.timestamp_bits.unwrap_or(w.timestamp_bits);

    let p = &mut spec.power;
    p.packet_switch_ports = args.packet_switch_ports.or(p.packet_switch_ports);
    p.packet_port_gbps = args.packet_port_gbps.or(p.packet_port_gbps);
    p.packet_switch_watts = args.packet_switch_watts.or(p.packet_switch_watts);
    p.circuit_switch_watts = args.circuit_switch_watts.or(p.circuit_switch_watts);
    p.nic.watts_per_100g = args.nic_watts_per_100g.unwrap_or(p.nic.watts_per_100g);
    p.nic.soc_integration = args.soc_integration.unwrap_or(p.nic.soc_integration);
    p.nic.shoal_overhead = args.shoal_nic_overhead.unwrap_or(p.nic.shoal_overhead);
    p.detour_factor = args.detour_factor.unwrap_or(p.detour_factor);

    let c = &mut spec.cost;
    c.circuit_to_packet = args.circuit_cost_ratio.or(c.circuit_to_packet);
    c.shoal_nic_cost = args.shoal_nic_cost.unwrap_or(c.shoal_nic_cost);
    c.nic_to_packet_switch = args.nic_to_switch_cost.unwrap_or(c.nic_to_packet_switch);
    c.target_reduction = args.target_reduction.unwrap_or(c.target_reduction);
    c.area.memory = args.area_memory.unwrap_or(c.area.memory);
    c.area.logic = args.area_logic.unwrap_or(c.area.logic);
    c.area.serdes = args.area_serdes.unwrap_or(c.area.serdes);
    c.area.circuit_serdes_scale = args
        .circuit_serdes_scale
        .unwrap_or(c.area.circuit_serdes_scale);

    let x = &mut spec.xfabric;
    x.ports_per_soc = args.xfabric_ports_per_soc.unwrap_or(x.ports_per_soc);
    x.uplinks = args.xfabric_uplinks.or(x.uplinks);

    let sd = &mut spec.stardust;
    sd.fe_cost_ratio = args.stardust_fe_cost_ratio.unwrap_or(sd.fe_cost_ratio);
    sd.fe_power_ratio = args.stardust_fe_power_ratio.unwrap_or(sd.fe_power_ratio);
    sd.tor_usd = args.stardust_tor_usd.unwrap_or(sd.tor_usd);
    sd.tor_watts = args.stardust_tor_watts.unwrap_or(sd.tor_watts);
    sd.servers_per_tor = args.stardust_servers_per_tor.unwrap_or(sd.servers_per_tor);
    Ok(spec)
}

/// A model's refusal as the flag to change.
fn flag_error(e: SizingError) -> anyhow::Error {
    anyhow!("--{}: {}", e.key.replace('_', "-"), e.reason)
}

pub fn main(args: SizeArgs) -> Result<ExitCode> {
    let spec = spec(&args)?;
    let report = shoal_sizing::size(&spec).map_err(flag_error)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        summary(&mut out, &report)?;
    }
    out.flush().context("cannot write to stdout")?;
    Ok(ExitCode::SUCCESS)
}

fn ns(ps: u64) -> f64 {
    ps as f64 / 1e3
}

/// A duration in the unit that keeps it readable.
fn human(ps: u64) -> String {
    match ps {
        0..1_000_000 => format!("{:.2} ns", ns(ps)),
        1_000_000..1_000_000_000 => format!("{:.2} µs", ps as f64 / 1e6),
        _ => format!("{:.2} ms", ps as f64 / 1e9),
    }
}

fn summary(out: &mut impl Write, r: &Report) -> Result<()> {
    let s = &r.spec.rack;
    let (c, t, q) = (&r.rack.clos, &r.rack.timing, &r.rack.throughput);
    let gbps = s.channel_rate.as_gbps_f64();
    writeln!(
        out,
        "Shoal rack: {} nodes, {} channel(s) x {gbps} Gb/s, {}-port circuit switches, {} B cells",
        s.nodes, s.channels, c.ports, s.cell_bytes
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "fabric   {} plane(s) x ({} leaves + {} spines), {} tiers: {} circuit switches ({}-port \
         switches hold up to {} nodes)",
        c.planes, c.leaves_per_plane, c.spines_per_plane, c.tiers, c.switches, c.ports, c.max_nodes
    )?;
    let guard = match s.guard {
        Guard::Budget(b) => format!(
            " ({:.2} reconfiguration + {:.2} propagation spread + {:.2} sync)",
            ns(b.reconfiguration.0),
            ns(b.propagation_spread().0),
            ns(b.sync_precision.0)
        ),
        Guard::Given(_) => String::new(),
    };
    writeln!(
        out,
        "slot     {:.2} ns = {:.2} ns cell + {:.2} ns guard band{guard}; duty cycle {:.1}%",
        ns(t.slot_ps),
        ns(t.cell_ps),
        ns(t.guard_ps),
        t.duty_cycle * 100.0
    )?;
    writeln!(
        out,
        "epoch    {} slots ({} columns over {} channel(s)) = {}",
        t.epoch_slots,
        t.columns,
        s.channels,
        human(t.epoch_ps)
    )?;
    let path = match s.latency {
        Latency::Physical {
            cable_mm,
            per_switch,
        } => format!(
            "{:.2} ns node to node ({} m at 5 ns/m, 2 x {:.2} ns switching): ",
            ns(t.one_way_ps),
            cable_mm as f64 / 1e3,
            ns(per_switch.0)
        ),
        Latency::Slots(_) => String::new(),
    };
    writeln!(
        out,
        "latency  {path}forwarded {} slot(s) on (turnaround {}); worst case {} unloaded ({} \
         slots), {} with every queue at Eq. 5's bound",
        t.delay_slots,
        t.turnaround_slots,
        human(t.worst_case_unloaded_ps),
        t.worst_case_unloaded_slots,
        human(t.worst_case_queued_ps)
    )?;
    writeln!(
        out,
        "node     {} Gb/s line, {:.1} Gb/s of payload, {:.1} Gb/s guaranteed under any traffic",
        q.node_gbps, q.payload_gbps, q.guaranteed_gbps
    )?;
    let m = &r.memory;
    let mbit = |bits: u64| bits as f64 / 1e6;
    let holds = match m.max_nodes {
        Some(n) => format!("which holds the state of up to {n} nodes"),
        None => "which holds not even two nodes' state".to_string(),
    };
    writeln!(
        out,
        "NIC      on chip {:.2} Mbit (cell cache {:.2}, vectors {:.2}, rate-limit matrix {:.2}; \
         {}-bit ids, {}-bit entries) = {:.1}% of {:.2} Mbit, {holds}; off chip {:.1} MB for \
         the worst case",
        mbit(m.nic.on_chip_bits),
        mbit(m.nic.cell_cache_bits),
        mbit(m.nic.sent_vector_bits + m.nic.received_vector_bits),
        mbit(m.nic.rate_limit_matrix_bits),
        m.nic.id_bits,
        m.nic.entry_bits,
        m.on_chip_share * 100.0,
        mbit(m.on_chip_bits),
        m.nic.buffer_bytes as f64 / 1e6
    )?;
    let (sh, pk) = (&r.power.shoal, &r.power.packet);
    writeln!(
        out,
        "power    Shoal {:.2} kW ({} x {:.2} W switches + {} x {:.2} W NICs) against the packet \
         network's {:.2} kW ({} x {:.2} W + {} x {:.2} W, {} Gb/s hosts): {:.1}% lower",
        sh.total_watts / 1e3,
        sh.switches,
        sh.switch.watts,
        sh.hosts,
        sh.nic_watts,
        pk.total_watts / 1e3,
        pk.switches,
        pk.switch.watts,
        pk.hosts,
        pk.nic_watts,
        pk.host_gbps,
        r.power.reduction * 100.0
    )?;
    let cost = &r.cost;
    let [lo, hi] = cost.by_nic_cost;
    let pct = |v: Option<f64>| v.map_or("never".to_string(), |v| format!("{:.1}%", v * 100.0));
    writeln!(
        out,
        "cost     a circuit switch at {:.1}% of a packet switch (area model {:.1}%): Shoal costs \
         {:.2}-{:.2}x the packet network with NICs {}-{}x; break-even at {}-{}, {:.0}% cheaper \
         at {}-{}",
        cost.circuit_to_packet * 100.0,
        cost.area_ratio * 100.0,
        lo.relative_cost,
        hi.relative_cost,
        lo.shoal_nic_cost,
        hi.shoal_nic_cost,
        pct(lo.break_even_ratio),
        pct(hi.break_even_ratio),
        cost.target_reduction * 100.0,
        pct(lo.target_ratio),
        pct(hi.target_ratio)
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<14} {:>6} {:>9} {:>8} {:>7} {:>10} {:>6} {:>9}  cost",
        "fabric", "hosts", "Gb/s/host", "switches", "ports", "switch W", "NIC W", "total kW"
    )?;
    for row in &r.fabrics {
        let nic = row.nic_watts.map_or("-".to_string(), |w| format!("{w:.2}"));
        let cost = match (row.cost_vs_packet, row.cost_usd) {
            (Some([lo, hi]), Some(usd)) if lo == hi => format!("{lo:.2}x packet, ${usd:.0}"),
            (Some([lo, hi]), _) if lo == hi => format!("{lo:.2}x packet"),
            (Some([lo, hi]), _) => format!("{lo:.2}-{hi:.2}x packet"),
            (None, Some(usd)) => format!("${usd:.0}"),
            (None, None) => "-".to_string(),
        };
        writeln!(
            out,
            "{:<14} {:>6} {:>9} {:>8} {:>7} {:>10.1} {:>6} {:>9.3}  {cost}",
            row.fabric,
            row.hosts,
            row.host_gbps,
            row.switches,
            row.switch_ports,
            row.switches_watts,
            nic,
            row.total_watts / 1e3
        )?;
    }
    for row in &r.fabrics {
        writeln!(out, "  {}: {} ({})", row.fabric, row.note, row.source)?;
    }
    for n in &r.not_sized {
        writeln!(out, "  {}: not sized: {}", n.model, n.reason)?;
    }
    Ok(())
}
