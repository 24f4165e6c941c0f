//! XFabric Fig. 6(b) (§6.5): the CDF over SoCs of the time from the first crosspoint's switch to
//! the SoC using its new forwarding tables, one reconfiguration of the 27-SoC rack under the
//! prototype's control plane (`ReconfigTiming::prototype()`: 1 ms USB messages, the controller
//! reaching the crosspoints one at a time and waiting for each acknowledgement, no relay between
//! micro-controllers, 40 µs to reprogram an ASIC). Paper: every server within 11 ms; the last
//! crosspoint switches 8 ms after the first (over its 7 crosspoint units; ours has the 6 internal
//! ones, the uplink crosspoint is not reconfigured here).
//!
//! The protocol simulation is `shoal_xfabric::reconfig`. The prototype starts from a 3x3x3 torus,
//! which is not a plan of the crosspoint rack (its links do not join ports of equal index), so the
//! old configuration here is Algorithm 1 on no demand (a random spanning structure), and the new
//! one Algorithm 1 on a dense all-to-all demand of random volumes (the all-to-all workload the
//! paper runs before reconfiguring). Quick and full are the same runs: they take milliseconds.
//!
//! The SoCs' table swap (`ReconfigTiming::table_swap`: from a SoC's decision to switch to its
//! packet switch forwarding by the new tables, and flooding the message on) is not in the paper:
//! the prototype's switch is a user-level process behind two kernel drivers on Windows Server
//! 2008 R2 (§5), which "pushes" the new table into the switch. With none, §4's MAC check and flood
//! put every SoC on its new tables within tens of µs of the first crosspoint, and the paper's 11 ms
//! spread cannot appear. Our stated choice is 1 ms, the order of the prototype's other software
//! control path (its USB messages, 1 ms) and of the finest timer of its operating system; a guess,
//! not a measurement. The run is repeated at 0, 1, 2 and 4 ms so the figure shows how the spread
//! follows the swap; the claims are checked at the chosen 1 ms.

use super::xfabric_common::{PORTS, SEED, err};
use crate::plot::emit;
use crate::{Claim, Options, ReproError};
use shoal_base::{Dur, NodeId};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_xfabric::{
    DemandMatrix, Rack, RackSpec, ReconfigParams, ReconfigTiming, dense_random_demand,
    generate_topology, reconfigure,
};

const FIG: &str = "XFabric Fig. 6(b)";
const SOCS: usize = 27;
/// The table swaps the run is repeated at, in µs.
const SWAPS_US: [u64; 4] = [0, 1_000, 2_000, 4_000];
/// The swap the claims are checked at (see the module documentation).
const CHOSEN_SWAP_US: u64 = 1_000;

/// One reconfiguration's outcome at one table swap: the SoCs' delays after the first crosspoint,
/// sorted, and the last crosspoint's.
struct Run {
    swap_us: u64,
    delays: Vec<Dur>,
    last_xp: Dur,
    consistent: bool,
}

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let rack = Rack::new(
        RackSpec {
            socs: SOCS,
            ports_per_soc: PORTS,
            uplinks: 4,
        },
        SEED,
    )
    .map_err(|e| err("rack")(&e))?;
    let none = DemandMatrix::zeros(SOCS).map_err(|e| err("demand")(&e))?;
    let old = generate_topology(&rack, &none, SEED).map_err(|e| err("old plan")(&e))?;
    let new = generate_topology(&rack, &dense_random_demand(SOCS, SEED), SEED)
        .map_err(|e| err("new plan")(&e))?;
    let ms = |d: Dur| d.0 as f64 * 1e-9;
    let mut runs = Vec::new();
    for swap_us in SWAPS_US {
        let params = ReconfigParams {
            timing: ReconfigTiming {
                table_swap: Dur::from_us(swap_us),
                ..ReconfigTiming::prototype()
            },
            controller_soc: NodeId(0),
            seed: SEED,
            ..ReconfigParams::default()
        };
        let out = reconfigure(&old, &new, &params).map_err(|e| err("reconfiguration")(&e))?;
        let first = out
            .first_switch
            .ok_or_else(|| ReproError("no crosspoint switched".into()))?;
        let mut delays: Vec<Dur> = out
            .soc_switch
            .iter()
            .map(|t| t.map(|t| t.since(first)))
            .collect::<Option<_>>()
            .ok_or_else(|| ReproError("a SoC never switched".into()))?;
        delays.sort_unstable();
        let last_xp = out.last_switch.map_or(Dur::ZERO, |t| t.since(first));
        progress(&format!(
            "table swap {:.1} ms: {} switched ports, {} local triggers, {} flood messages; \
             SoCs switched {:.3}-{:.3} ms after the first crosspoint (median {:.3}), the last \
             crosspoint {:.3} ms after it",
            swap_us as f64 * 1e-3,
            out.switched_ports,
            out.local_triggers,
            out.flood_messages,
            ms(delays[0]),
            ms(delays[SOCS - 1]),
            ms(delays[SOCS / 2]),
            ms(last_xp)
        ));
        runs.push(Run {
            swap_us,
            delays,
            last_xp,
            consistent: out.consistent_version() == Some(params.old_version + 1),
        });
    }
    let series = runs
        .iter()
        .map(|r| {
            let cdf = (r.delays.iter().enumerate())
                .map(|(i, &d)| (ms(d), (i + 1) as f64 / SOCS as f64))
                .collect();
            Series::new(format!("table swap {} ms", r.swap_us as f64 * 1e-3), cdf)
        })
        .collect();
    let fig = Figure {
        title: "XFabric Fig. 6(b): reconfiguration delay, 27 SoCs".into(),
        x: Axis::linear("Time since the first crosspoint switched (ms)"),
        y: Axis::linear("CDF of SoCs"),
        series,
        kind: Kind::Lines,
    };
    emit(opts, fig, "xfabric-fig6b-reconfiguration-delay", progress)?;
    let chosen = runs
        .iter()
        .find(|r| r.swap_us == CHOSEN_SWAP_US)
        .ok_or_else(|| ReproError("the chosen table swap was not run".into()))?;
    let last = |r: &Run| ms(r.delays[SOCS - 1]);
    let others = (runs.iter())
        .filter(|r| r.swap_us != CHOSEN_SWAP_US)
        .map(|r| format!("{} ms: {:.3}", r.swap_us as f64 * 1e-3, last(r)))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(vec![
        // "All servers are reconfigured within 11 ms": the CDF's last point, a number, so
        // two-sided, with the crosspoints' ±2 ms (fixed before the run).
        Claim::new(
            FIG,
            &format!(
                "last SoC on its new tables, after the first crosspoint switched (table swap {} ms)",
                CHOSEN_SWAP_US as f64 * 1e-3
            ),
            "11 ms",
            format!("{:.3} ms (other swaps {others})", last(chosen)),
            "±2 ms",
            (last(chosen) - 11.0).abs() <= 2.0,
        )
        .because(format!(
            "the last SoC switches {:.2} table swaps after the first crosspoint (median {:.2}): \
             SoCs on its changed ports switch one swap after it and flood, the others one swap \
             after the flood reaches them, so the spread follows the swap (other swaps \
             {others}); the prototype's swap is not given, and 11 ms would need one of about \
             5.5 ms (docs/results/xfabric.md, 'Fig. 6')",
            last(chosen) / (CHOSEN_SWAP_US as f64 * 1e-3),
            ms(chosen.delays[SOCS / 2]) / (CHOSEN_SWAP_US as f64 * 1e-3)
        )),
        Claim::new(
            FIG,
            "last crosspoint switched after the first",
            "8 ms",
            format!("{:.3} ms", ms(chosen.last_xp)),
            "±2 ms",
            (ms(chosen.last_xp) - 8.0).abs() <= 2.0,
        )
        .because(format!(
            "the controller reaches the {PORTS} crosspoints one at a time, {:.2} ms an exchange \
             (a {:.0} ms USB message there, {:.0} us of reprogramming, the acknowledgement back); \
             the prototype's 8 ms over its 7 units is about 1.3 ms an exchange, so its \
             acknowledgement cost less than a USB delay or was not awaited, which the paper does \
             not say (docs/results/xfabric.md, 'Fig. 6')",
            ms(chosen.last_xp) / (PORTS - 1) as f64,
            ms(ReconfigTiming::prototype().control_latency),
            ReconfigTiming::prototype().reprogram.0 as f64 * 1e-6
        )),
        Claim::new(
            FIG,
            "one consistent configuration after, at every table swap",
            "yes",
            format!(
                "{} of {} runs",
                runs.iter().filter(|r| r.consistent).count(),
                runs.len()
            ),
            "the new version",
            runs.iter().all(|r| r.consistent),
        ),
    ])
}
