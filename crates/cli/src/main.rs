//! `shoal`: run scenarios, check fabric schedules, decode and encode cell headers, reproduce the
//! paper's figures.

#![deny(unsafe_code)]

mod batch;
mod bench;
mod cell;
mod claims_index;
mod compare;
mod distributions;
mod folder;
mod huge_pages;
mod live;
mod plot;
mod record;
mod replicate;
mod report;
mod repro;
mod run;
mod runs;
mod schedule;
mod size;
mod slurm;
mod timeseries;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "shoal",
    version,
    about = "Simulate and compare rack fabrics: Shoal (NSDI 2019), Stardust, XFabric, Aquila, the packet baselines and the ideal switch",
    long_about = "Simulate and compare rack fabrics on identical flows: Shoal (NSDI 2019, the \
        centre: its schedules, cells and live rack too), Stardust, XFabric, Aquila, the packet \
        baselines (DCTCP, DCQCN, NDP, TCP, R2C2) and the ideal output-queued switch.\n\n\
        Scenarios are TOML files (see docs/scenarios.md; `scenario.fabric` picks the fabric); \
        `shoal run` with no file runs the built-in default, the Shoal paper's 512-node rack \
        under a permutation.\n\n\
        Environment: SHOAL_HUGE_PAGES=0 keeps ordinary memory pages (by default, on Linux with \
        glibc, shoal runs itself again with glibc's transparent huge pages asked for, which \
        makes large racks faster and changes no result).",
    after_help = "Examples:\n  shoal run\n  shoal run scenarios/default.toml --seed 7 --out out/seed7\n  \
        shoal schedule --nodes 8 --ports 4 --channels 1\n  shoal cell decode 01403000003900e4\n  \
        shoal repro --list\n  shoal bench\n  shoal plot out/x/sweep.csv --x workload.load --y short_fct_p99_us"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Run(run::RunArgs),
    Compare(compare::CompareArgs),
    Schedule(schedule::ScheduleArgs),
    Cell(cell::CellArgs),
    Repro(repro::ReproArgs),
    Bench(bench::BenchArgs),
    Plot(plot::PlotArgs),
    Runs(runs::RunsArgs),
    Report(report::ReportArgs),
    Size(Box<size::SizeArgs>),
    Live(live::LiveArgs),
    /// One task of a Slurm job array that `--backend slurm` submitted (its script calls this).
    #[command(hide = true)]
    SlurmTask(slurm::TaskArgs),
}

/// A closed standard output (`shoal repro --list | head`) ends the program quietly with the
/// status a shell expects (128 + SIGPIPE), as other Unix tools do. Rust's runtime ignores
/// SIGPIPE, which turns every later print into a panic; this puts the default action back.
#[cfg(unix)]
#[allow(unsafe_code)]
fn default_sigpipe() {
    // SAFETY: `signal` with `SIG_DFL` installs no handler of ours (nothing to be async-signal
    // safe), and runs first in `main`, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

fn main() -> ExitCode {
    default_sigpipe();
    huge_pages::reexec_with_huge_pages();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::main(args),
        Command::Compare(args) => compare::main(args),
        Command::Schedule(args) => schedule::main(args),
        Command::Cell(args) => cell::main(args),
        Command::Repro(args) => repro::main(args),
        Command::Bench(args) => bench::main(args),
        Command::Plot(args) => plot::main(args),
        Command::Runs(args) => runs::main(args),
        Command::Report(args) => report::main(args),
        Command::Size(args) => size::main(*args),
        Command::Live(args) => live::main(args),
        Command::SlurmTask(args) => slurm::task_main(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("shoal: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
