//! Stardust's analytic statements, computed by `shoal_stardust::models` from the inputs the
//! paper states: Appendix A's fat-tree arithmetic (Table 2) and Fig. 2's scale against the link
//! bundle, Appendix B's packet-processing parallelism, the minimum credit size (§4.1), the
//! element memory of §6.2, Appendix E's reachability recovery and overhead with §5.9's example,
//! and §4.3's M/D/1 bound on the last-stage queue.
//!
//! Where a printed number does not follow from the stated inputs the claim is a miss that
//! shows both and says why; no input is tuned to meet a number. One input is lost with the
//! paper's Table 4: the size B of a reachability message. We take 24 B (a 128-bit bitmap for
//! the message's 128 adapters and an 8 B header, our choice) and say so in the claim.
//!
//! The figure draws the exact M/D/1 queue distribution at the utilisations of Fig. 9 (right):
//! the model the simulated last-stage queues are read against.

use crate::plot::emit;
use crate::{Claim, Options, ReproError};
use shoal_plot::{Axis, Figure, Kind, Series};
use shoal_stardust::models::{
    Reachability, element_memory, fat_tree, hosts, md1_distribution, min_credit_bytes, parallelism,
    queue_drain_s, radix, tail,
};

const FIG: &str = "Stardust models";

pub(crate) fn run(
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Claim>, ReproError> {
    let mut claims = Vec::new();
    let rel = |claim: &str, unit: &str, paper: f64, ours: f64, r: f64| {
        Claim::relative(FIG, claim, unit, paper, ours, r)
    };

    // Appendix B and §2.3: 12.8 Tb/s, 1 GHz, one packet per clock, a 20 B gap.
    let p64 = parallelism(12.8e12, 64.0, 20.0, 1e9, 1.0);
    let p256 = parallelism(12.8e12, 256.0, 20.0, 1e9, 1.0);
    claims.push(rel(
        "App. B: P = 19.047 at 64 B (12.8 Tb/s, 1 GHz, 20 B gap)",
        "",
        19.047,
        p64,
        0.001,
    ));
    claims.push(
        rel(
            "App. B: P = 6.06 at 256 B (12.8 Tb/s, 1 GHz, 20 B gap)",
            "",
            6.06,
            p256,
            0.01,
        )
        .paper_inconsistent(
            "Eq. 1 gives 5.80 with the 20 B gap, as §2.3's 5.8 Gpps; 6.06 needs an 8 B gap \
             (test: shoal-stardust models::tests::app_b_p_at_256_b_is_5_80_from_eq_1)",
        ),
    );
    claims.push(rel("§2.3: 19.05 Gpps at 64 B", "Gpps", 19.05, p64, 0.001));
    claims.push(rel("§2.3: 5.8 Gpps at 256 B", "Gpps", 5.8, p256, 0.01));

    // §4.1: the minimum credit size.
    let credit = min_credit_bytes(10e12, 1e9, 2.0);
    claims.push(
        rel(
            "§4.1: minimum credit 2,000 B (10 Tb/s adapter, 1 GHz, a credit every 2 clocks)",
            "B",
            2000.0,
            credit,
            0.01,
        )
        .paper_inconsistent(
            "10 Tb/s / (1 GHz / 2) is 20,000 bits = 2,500 B; 2,000 B follows at 8 Tb/s \
             (test: shoal-stardust models::tests::min_credit_at_10_tbps_is_2_500_b)",
        ),
    );

    // §6.2: element memory and the longest wait in it.
    let mem = element_memory(128.0, 256.0, 256.0);
    claims.push(Claim::new(
        FIG,
        "§6.2: 128 cells x 256 B x 256 links = 8 MB of element memory",
        "8 MB",
        format!("{:.3} MiB", mem / (1024.0 * 1024.0)),
        "exact (MiB)",
        mem == 8.0 * 1024.0 * 1024.0,
    ));
    // "At most": an upper bound, checked one way.
    let wait = queue_drain_s(128.0, 256.0, 50e9) * 1e6;
    claims.push(
        Claim::new(
            FIG,
            "§6.2: at most 5 us in the element (128 cells of 256 B at 50 Gb/s)",
            "<= 5 us",
            format!("{wait:.2} us"),
            "<= 5 us (an upper bound)",
            wait <= 5.0,
        )
        .paper_inconsistent(format!(
            "128 cells x 256 B at 50 Gb/s take {wait:.2} us to drain, above the printed bound; \
             under it only at the 1.05 speed-up's 52.5 Gb/s, and §6.2's links are 50 Gb/s \
             (test: shoal-stardust models::tests::element_wait_of_128_cells_at_50_gbps_is_5_24_us)"
        )),
    );
    // §6.2's 128 cells per link at fs = 1.05: the M/D/1 tail there, and §4.3's o(fs^-2N).
    let fs: f64 = 1.05;
    let dist = md1_distribution(1.0 / fs, 400);
    let decay = dist[201] / dist[200];
    claims.push(rel(
        "§4.3: the last-stage queue's tail falls by fs^-2 per cell (M/D/1, fs = 1.05)",
        "per cell",
        fs.powi(-2),
        decay,
        0.01,
    ));
    // A buffer of 128 cells overflows when a 129th would be held: P(Q >= 129), the queue
    // counted with the cell being sent (M/D/1's embedded chain).
    let overflow = tail(&dist, 129);
    progress(&format!(
        "M/D/1 at utilisation 1/1.05: P(Q >= 129 cells) = {overflow:.3e}"
    ));
    claims.push(Claim::new(
        FIG,
        "§6.2: 128 cells per link suffice at fs = 1.05 (M/D/1, the cell being sent counted: \
         P(Q >= 129), a cell beyond the 128, below 1e-5; the threshold is ours, the paper \
         states none)",
        "suffice (no number; 1e-5 is ours)",
        format!("{overflow:.2e}"),
        "< 1e-5 (ours)",
        overflow < 1e-5,
    ));

    // Appendix E with Table 4 and §5.9: 32K hosts, 40 per adapter, 128 adapters per message,
    // a message every 10,000 clocks at 1 GHz, two tiers, three updates. Table 4 gives link
    // propagation delays of 50 ns and 500 ns (10 m and 100 m of fibre) without saying which
    // hop has which: ours are 500, 500 and 50 ns, and the claim says so.
    let r = Reachability {
        f: 1e9,
        c: 10_000.0,
        bytes: 24.0,
        b: 128.0,
        h: 40.0,
        hosts: 32_768.0,
        n: 2,
        th: 3.0,
        pd: vec![500e-9, 500e-9, 50e-9],
        s: 50e9,
    };
    claims.push(Claim::new(
        FIG,
        "§5.9: seven messages report 32K hosts (40 per adapter, 128 adapters a message)",
        "7",
        format!("{}", r.messages()),
        "exact",
        r.messages() == 7.0,
    ));
    let one = r.interval() * r.messages() * 3.0 * 1e6;
    claims.push(rel(
        "§5.9: 10,000 clocks x 7 messages x 3 hops = 210 us",
        "us",
        210.0,
        one,
        0.001,
    ));
    claims.push(rel(
        "§5.9: three consecutive updates take about 630 us",
        "us",
        630.0,
        r.recovery_without_propagation() * 1e6,
        0.001,
    ));
    claims.push(rel(
        "App. E: recovery from a failed link takes 652 us (with propagation; which hop has \
         which of Table 4's 500 ns and 50 ns is ours: 500, 500, 50 ns, the split that gives \
         652; all at 500 ns gives 661.5 us, 500, 50, 50 ns 642.6 us)",
        "us",
        652.0,
        r.recovery() * 1e6,
        0.01,
    ));
    let over = r.overhead() * 100.0;
    claims.push(Claim::new(
        FIG,
        "App. E: reachability messages take 0.04% of a 50 Gb/s link (B = 24 B, ours: Table 4's B is lost)",
        "0.04%",
        format!("{over:.4}%"),
        "rounds to 0.04%",
        (over - 0.04).abs() < 0.005,
    ));

    // Fig. 2 and Appendix A: a 12.8 Tb/s device of 50 Gb/s lanes, 40 hosts per ToR.
    let h = |n: u32, l: f64| hosts(n, radix(12_800.0, 50.0, l), 40.0);
    claims.push(Claim::new(
        FIG,
        "Fig. 2: a link bundle of one gives a 1-tier network of over ten thousand hosts",
        "> 10,000",
        format!("{}", h(1, 1.0)),
        "> 10,000",
        h(1, 1.0) > 10_000.0,
    ));
    claims.push(rel(
        "Fig. 2: a link bundle of eight holds an eighth of that in one tier",
        "",
        0.125,
        h(1, 8.0) / h(1, 1.0),
        0.001,
    ));
    claims.push(rel(
        "Fig. 2: two tiers with a link bundle of eight connect only 20K hosts",
        "hosts",
        20_000.0,
        h(2, 8.0),
        0.05,
    ));
    claims.push(rel(
        "Fig. 2: a link bundle of one connects x64 as many in two tiers",
        "x",
        64.0,
        h(2, 1.0) / h(2, 8.0),
        0.001,
    ));
    // Table 2, in units of t·k^(n-1) (switches) and t·k^n (bundles).
    let (k, t, l) = (16.0, 1.0, 1.0);
    for (n, switches, bundles, links) in [
        (1, 1.0, 1.0, 1.0),
        (2, 1.5, 1.0, 2.0),
        (3, 1.25, 0.75, 3.0),
        (4, 0.875, 0.875, 7.0),
    ] {
        let f = fat_tree(n, k, t, l);
        let kn1 = t * k.powi(n as i32 - 1);
        let kn = t * k.powi(n as i32);
        let ours = (f.switches / kn1, f.bundles / kn, f.links_per_tor / (t * l));
        let ok = (ours.0 - switches).abs() < 1e-9
            && (ours.1 - bundles).abs() < 1e-9
            && (ours.2 - links).abs() < 1e-9;
        let claim = format!(
            "Table 2, {n} tier(s): switches, link bundles and links per ToR \
             (units t·k^(n-1), t·k^n, t·l)"
        );
        claims.push(
            Claim::new(
                FIG,
                &claim,
                format!("{switches}, {bundles}, {links}"),
                format!("{}, {}, {}", ours.0, ours.1, ours.2),
                "exact",
                ok,
            )
            .paper_inconsistent(
                "four tiers of t·k⁴/8 bundles each make t·k⁴/2 bundles and 4·t·l links per \
                 ToR; the printed 7/8 and 7 do not follow from the tiers (test: shoal-stardust \
                 models::tests::table_2_four_tiers_follow_from_the_tiers)",
            ),
        );
    }

    // The figure: the M/D/1 queue at Fig. 9's utilisations.
    let mut series = Vec::new();
    for u in [0.5, 0.6, 0.7, 0.8, 0.9, 0.95] {
        let d = md1_distribution(u, 60);
        let pts: Vec<(f64, f64)> = (0..=60)
            .map(|q| (q as f64, tail(&d, q)))
            .filter(|&(_, p)| p > 1e-12)
            .collect();
        series.push(Series::new(format!("utilisation {u}"), pts));
    }
    let fig = Figure {
        title: "M/D/1 queue of a last-stage link (§4.3, Fig. 9 right's model)".into(),
        x: Axis::linear("Queue size (cells)"),
        y: Axis::log("P(queue >= x)"),
        series,
        kind: Kind::Lines,
    };
    emit(opts, fig, "stardust-md1", progress)?;
    Ok(claims)
}
