//! `shoal schedule`: build a fabric schedule and its Clos, verify them, report.

use anyhow::{Context, Result};
use clap::Args;
use shoal_schedule::{Arrangement, FabricSpec, VerifiedFabric, schedule_report};
use std::io::Write;
use std::process::ExitCode;

/// Build a fabric schedule and its Clos of circuit switches, verify them, and report.
///
/// The schedule connects every ordered pair of nodes once per epoch (§3.2, Fig. 3); each
/// channel has its own two-tier Clos plane of PORTS-port switches (§3.4, §4.1). The verifier
/// checks from the switches' port maps that no two cells collide and that together they realise
/// exactly the schedule. A configuration that cannot be built, or (a bug) fails verification,
/// is reported on stderr with exit status 1.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  shoal schedule --nodes 8 --ports 4 --channels 1\n  \
    shoal schedule --nodes 512 --ports 64 --channels 4 --delay-slots 2\n  \
    shoal schedule --nodes 8 --ports 4 --channels 1 --json > schedule.json"
)]
pub struct ScheduleArgs {
    /// Nodes in the rack (2 to 65535; the paper: 8 in the prototype, 512 in §7).
    #[arg(long, value_name = "N")]
    nodes: usize,
    /// Ports per circuit switch, even and at least 4; a plane connects up to PORTS²/2 nodes.
    #[arg(long, value_name = "K")]
    ports: usize,
    /// Channels (parallel lanes) per node, each switched by its own plane (§7.1: 4).
    #[arg(long, value_name = "C")]
    channels: usize,
    /// Column order: `cyclic` (Fig. 3) or `propagation-aware` (Appendix A, absorbs delay).
    #[arg(long, default_value = "propagation-aware", value_parser = parse_arrangement)]
    arrangement: Arrangement,
    /// Node-to-node latency in slots that the schedule must absorb (j -> i at least this many
    /// slots after i -> j). Default: none required.
    #[arg(long, value_name = "D")]
    delay_slots: Option<u32>,
    /// Print the full report (schedule, every switch's port map in every slot, verdict) as JSON
    /// on stdout instead of the summary. Large for big racks.
    #[arg(long)]
    json: bool,
}

fn parse_arrangement(s: &str) -> Result<Arrangement, String> {
    s.parse()
        .map_err(|e: shoal_schedule::UnknownArrangement| e.to_string())
}

pub fn main(args: ScheduleArgs) -> Result<ExitCode> {
    let spec = FabricSpec {
        nodes: args.nodes,
        channels: args.channels,
        arrangement: args.arrangement,
        delay_slots: args.delay_slots,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        let report = schedule_report(spec, args.ports).context("cannot build the fabric")?;
        serde_json::to_writer(&mut out, &report)?;
        writeln!(out)?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let fabric = VerifiedFabric::build(spec, args.ports).context("cannot build the fabric")?;
    let s = fabric.schedule();
    let shape = fabric.clos().shape();
    let v = fabric.verdict();
    let delay = match s.delay_slots() {
        Some(d) => format!(", absorbing {d} slot(s) of delay"),
        None => String::new(),
    };
    writeln!(
        out,
        "schedule    {} nodes, {} channel(s), {} arrangement{delay}",
        s.nodes(),
        s.channels(),
        s.arrangement()
    )?;
    writeln!(
        out,
        "epoch       {} slots ({} columns over {} channel(s))",
        s.epoch_slots(),
        s.columns(),
        s.channels()
    )?;
    writeln!(
        out,
        "turnaround  at least {} slots from i -> j to j -> i",
        s.min_turnaround()
    )?;
    writeln!(
        out,
        "Clos        per plane: {}-port switches, {} leaves of {} node ports, {} spines, \
         {} parallel link(s) per leaf-spine pair, {} switches ({} in {} plane(s))",
        shape.ports(),
        shape.leaves(),
        shape.nodes_per_leaf(),
        shape.spines(),
        shape.links_per_leaf_spine(),
        shape.switches_per_plane(),
        shape.switches_per_plane() * shape.planes(),
        shape.planes()
    )?;
    writeln!(
        out,
        "routing     {} (slot, channel) column(s) needed edge colouring",
        fabric.clos().coloured_columns()
    )?;
    writeln!(
        out,
        "verified    contention-free: {} ordered pairs each served once per epoch, {} \
         transmissions traced through {} switches, {} (switch, port, slot) checks",
        v.pairs_checked, v.transmissions_traced, v.switches, v.port_slot_checks
    )?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
