//! Stardust Fig. 7 and Appendix F: two 100 Gb/s ports A and B on one egress device, 100 Gb/s
//! towards A from each of two input devices and 100 Gb/s towards B from the first. An Ethernet
//! fabric's middle stage (200 Gb/s towards the egress device) drops from every stream, so
//! "only 66% of B traffic passes" (Fig. 7); with A's traffic in a higher class B's is dropped
//! whole and the egress device delivers 100 Gb/s (App. F). Stardust's egress schedulers credit
//! A's sources at 50 Gb/s each and B's at 100 Gb/s, so both ports run at their rate: "twice
//! the throughput using the standard Ethernet switch".
//!
//! App. F is a worked example, not a measurement, so the Ethernet side is its fluid arithmetic
//! (`models::ethernet_fabric`) and Stardust's side is simulated (`scenarios/stardust-fig7.toml`:
//! three adapters over four elements, each adapter's links carrying 200 Gb/s of packet bytes
//! as the Ethernet middle stage does). Quick and full runs are the same (the fabric is small).
//!
//! Claims, fixed before the first run (throughputs in packet payload, as a share of a port's):
//! - Fig. 7, one class: Stardust delivers B at its port rate, [0.975, 1] (Ethernet: 2/3);
//! - Fig. 7, one class: Stardust's throughput over the Ethernet fabric's, 1.2 ± 0.03 (the
//!   paper's 200 against 166.7 Gb/s);
//! - App. F, two classes: the same ratio, 2 ± 0.05 (200 against 100 Gb/s);
//! - no cell or packet lost in either run.
//!
//! Also reported, without a claim: the App. F ratio when Stardust's links have the Ethernet
//! middle stage's raw capacity (`link_gbps = 50`), where cell headers and credit cells cost it
//! about 8% of the fabric.

use crate::experiments::stardust_fig9::{LOSSES, set, spec, within};
use crate::{Claim, Options, ReproError};
use shoal_base::{NodeId, Time};
use shoal_fabric::{Fabric, NoProgress};
use shoal_scenario::Scenario;
use shoal_stardust::Stardust;
use shoal_stardust::models::{EthStream, ethernet_fabric};
use shoal_workload::{Flow, IterSource};
use toml::Value;

const FIG: &str = "Stardust Fig. 7, App. F";
const SCENARIO: &str = include_str!("../../../../scenarios/stardust-fig7.toml");
/// Egress ports A and B (nodes of adapter 2) and B's source (port 1 of adapter 0).
const A: usize = 4;
const B: usize = 5;
const B_SOURCE: u16 = 1;
const LINE_RATE: f64 = 0.975;
const FIG7_RATIO: (f64, f64) = (1.2, 0.03);
const APP_F_RATIO: (f64, f64) = (2.0, 0.05);

/// One Stardust run: what A and B delivered as a share of a port's payload rate, and the
/// cells or packets lost.
struct Delivered {
    a: f64,
    b: f64,
    losses: u64,
}

fn run_stardust(base: &Scenario, classes: bool) -> Result<Delivered, ReproError> {
    let s = if classes {
        base.clone()
    } else {
        set(base, &[("stardust.classes", Value::Integer(1))])?
    };
    let spec = spec(&s)?;
    let net = spec.network().map_err(|e| ReproError(e.to_string()))?;
    let (mut source, _) = s.source().map_err(|e| ReproError(e.to_string()))?;
    let mut flows = Vec::new();
    while let Some(f) = source.next_due(Time(u64::MAX)) {
        flows.push(f);
    }
    let (bytes, start) = match flows.first() {
        Some(f) => (f.bytes, f.start),
        None => return Err(ReproError("the workload has no flow".into())),
    };
    flows.push(Flow {
        id: flows.len() as u64,
        src: NodeId(B_SOURCE),
        dst: NodeId(B as u16),
        bytes,
        start,
        class: classes as u8,
    });
    let out = Stardust::new(net)
        .run(&mut IterSource::new(flows), s.limits, &mut NoProgress)
        .map_err(|e| ReproError(e.to_string()))?;
    let from = s.limits.measure_from.unwrap_or(Time::ZERO);
    let until = s
        .limits
        .until
        .ok_or_else(|| ReproError("the scenario needs run.until_us".into()))?;
    let secs = (until.0 - from.0) as f64 / 1e12;
    let payload_bps = spec.adapter.port_rate.0 as f64
        * (spec.packet_bytes - spec.header_bytes) as f64
        / spec.packet_bytes as f64;
    let share = |node: usize| out.delivered_bytes[node] as f64 * 8.0 / secs / payload_bps;
    Ok(Delivered {
        a: share(A),
        b: share(B),
        losses: LOSSES.iter().map(|k| out.counters[*k]).sum(),
    })
}

/// The Ethernet fabric of the example, in port rates: (A, B) delivered.
fn ethernet(classes: bool) -> (f64, f64) {
    let stream = |port, class| EthStream {
        port,
        class,
        offered: 1.0,
    };
    let b_class = classes as u8;
    let out = ethernet_fabric(&[stream(0, 0), stream(0, 0), stream(1, b_class)], 2.0, 1.0);
    (out[0] + out[1], out[2])
}

pub(crate) fn run(
    _opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let base = shoal_scenario::parse(SCENARIO, "scenarios/stardust-fig7.toml")
        .map_err(|e| ReproError(e.to_string()))?;
    let fig7 = run_stardust(&base, false)?;
    let app_f = run_stardust(&base, true)?;
    let raw = run_stardust(
        &set(&base, &[("stardust.link_gbps", Value::Float(50.0))])?,
        true,
    )?;
    let (eth7_a, eth7_b) = ethernet(false);
    let (ethf_a, ethf_b) = ethernet(true);
    let ratio7 = (fig7.a + fig7.b) / (eth7_a + eth7_b);
    let ratio_f = (app_f.a + app_f.b) / (ethf_a + ethf_b);
    let ratio_raw = (raw.a + raw.b) / (ethf_a + ethf_b);
    progress(&format!(
        "port shares delivered (A, B): Fig. 7 Stardust ({:.4}, {:.4}), Ethernet \
         ({eth7_a:.4}, {eth7_b:.4}); App. F Stardust ({:.4}, {:.4}), Ethernet ({ethf_a:.4}, \
         {ethf_b:.4}); at equal raw link capacity Stardust ({:.4}, {:.4}), ratio {ratio_raw:.3}",
        fig7.a, fig7.b, app_f.a, app_f.b, raw.a, raw.b
    ));
    Ok(vec![
        Claim::new(
            FIG,
            "Fig. 7: B runs at its port rate (Ethernet passes 2/3)",
            "100 Gb/s at B (Ethernet: 66%)",
            format!("{:.4} of B's port rate (Ethernet {eth7_b:.4})", fig7.b),
            format!("[{LINE_RATE}, 1]"),
            (LINE_RATE..=1.0).contains(&fig7.b),
        ),
        Claim::new(
            FIG,
            "Fig. 7: Stardust's throughput over the Ethernet fabric's",
            "200 / 166.7 Gb/s = 1.2",
            format!(
                "{ratio7:.3} ({:.1} / {:.1} Gb/s)",
                100.0 * (fig7.a + fig7.b),
                100.0 * (eth7_a + eth7_b)
            ),
            format!("{} ± {}", FIG7_RATIO.0, FIG7_RATIO.1),
            within(ratio7, FIG7_RATIO),
        ),
        Claim::new(
            FIG,
            "App. F, two classes: Stardust delivers twice the Ethernet fabric's throughput",
            "2 (200 / 100 Gb/s)",
            format!(
                "{ratio_f:.3} ({:.1} / {:.1} Gb/s)",
                100.0 * (app_f.a + app_f.b),
                100.0 * (ethf_a + ethf_b)
            ),
            format!("{} ± {}", APP_F_RATIO.0, APP_F_RATIO.1),
            within(ratio_f, APP_F_RATIO),
        ),
        Claim::new(
            FIG,
            "no cell or packet lost inside Stardust",
            "0",
            format!("{} (Fig. 7), {} (App. F)", fig7.losses, app_f.losses),
            "0",
            fig7.losses == 0 && app_f.losses == 0,
        ),
    ])
}
