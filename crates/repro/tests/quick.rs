//! Every experiment's quick version passes (the paper-scale ones are the ignored tests of
//! `paper_scale.rs`).

mod common;

#[test]
fn fig9_prototype_throughput() {
    common::check("fig9", true);
    common::figure_written("fig9", "fig09-prototype-throughput");
}

#[test]
fn fig10_prototype_incast() {
    common::check("fig10", true);
    common::figure_written("fig10", "fig10-prototype-incast");
}

#[test]
fn fig12_permutation_throughput() {
    common::check("fig12", true);
    common::figure_written("fig12", "fig12-permutation-throughput");
}

#[test]
fn fairness() {
    // With the §3.3.3 ready queue, 200 random flows miss (the sources' local flows share one
    // place per queue); without it, and for the one-flow-per-source control, every claim holds.
    common::check_known_misses("fairness", true, |c| {
        c.claim.starts_with("200 random flows") && c.claim.contains("optimisations on")
    });
}

#[test]
fn fig13_incast() {
    common::check("fig13", true);
    common::figure_written("fig13", "fig13-incast");
}

#[test]
fn fig14_detour_optimisations() {
    common::check("fig14", true);
    common::figure_written("fig14", "fig14-detour-optimisations");
}

#[test]
fn fig15_datacenter_workload() {
    common::check("fig15", true);
}

/// `--threads` cuts the fast engine's racks into parts; no claim may change with it.
#[test]
fn claims_do_not_depend_on_the_threads_inside_a_run() {
    for name in ["fig12", "fig15"] {
        assert_eq!(
            common::run_on(name, true, 1),
            common::run_on(name, true, 3),
            "{name}"
        );
    }
}

/// Fig. 17's tail-FCT claim at 40% failed misses at this scale as at full scale (a
/// bandwidth-bound flow loses 40% of its slots, so its FCT grows at least 1.67x against the
/// paper's 1.5x; see docs/results/shoal-datacenter.md). The test holds the claims that do
/// pass, and that every claim is reported.
#[test]
fn fig17_node_failures() {
    common::check_claims("fig17", true, 3, &["short-flow p99.9 FCT at 40% failed"]);
}

/// At high load our tail FCT does not grow with the node count (0.98-1.00x against the
/// paper's 1.2x; see docs/results/shoal-datacenter.md): that ratio misses, the three others
/// hold.
#[test]
fn epoch_size() {
    common::check_claims(
        "epoch",
        true,
        4,
        &["tail FCT with twice the nodes, high load"],
    );
}

#[test]
fn fig18_disaggregated() {
    common::check("fig18", true);
}

#[test]
fn table1_failure_costs() {
    // One counting for every row (the simulator's symmetric detection): a leaf-spine link then
    // costs both directions, about twice the table's one-direction 2/N, and that row misses.
    common::check_known_misses("table1", true, |c| {
        c.claim.starts_with("slots lost to a leaf-spine link")
    });
}

#[test]
fn sizing_models() {
    common::check("sizing", true);
}

#[test]
fn stardust_models() {
    // Four printed numbers do not follow from the paper's own inputs (App. B's 6.06, §4.1's
    // 2,000 B, §6.2's "at most 5µs" against 5.24 us, Table 2's four tiers); their claims stay
    // misses that say why. Every other claim holds.
    let claims = common::run("stardust-models", true);
    for c in &claims {
        let inconsistent = c.verdict == shoal_repro::Verdict::PaperInconsistent;
        assert_eq!(c.pass(), !inconsistent, "{}: ours {}", c.claim, c.ours);
        if inconsistent {
            assert!(
                c.why.contains("(test: shoal-stardust models::tests::"),
                "{}",
                c.why
            );
        }
    }
    assert_eq!(claims.iter().filter(|c| !c.pass()).count(), 4);
}

/// Stardust's Fig. 11 with our prices and watts (the paper's are lost): always the cheapest
/// and the fabric's power saving hold; the halving and the whole network's power saving miss,
/// each saying why.
#[test]
fn stardust_fig11_cost_and_power() {
    common::check_known_misses("stardust-fig11", true, |c| {
        c.claim.starts_with("a large DCN's cost cut in half")
            || c.claim.contains("of the entire network's power")
    });
    for c in common::run("stardust-fig11", true) {
        assert_eq!(c.pass(), c.why.is_empty(), "{}", c.claim);
    }
}

/// Aquila's Dragonfly claims on the 9 x 4 clique. Three are known misses that say why:
/// uniform random saturates below 1 (raw cells and RTS/CTS alike) and Valiant stays below the
/// paper's 0.49 (the clique's own wiring bounds it lower); every other claim holds.
#[test]
fn aquila_theory() {
    common::check_claims(
        "aquila-theory",
        true,
        7,
        &["uniform random", "pod shift, Valiant"],
    );
}

/// Aquila Fig. 6 on 72 hosts, 200 µs a load: the two RTT bounds and the load carried at 90%
/// offered as claims, pinned (the tail at 70% load misses, saying why, as at full scale; the
/// one at 90% passes; the fabric carries about 0.75 where 0.9 is offered, a miss), and the
/// plotted RTTs: positive, the median below the 99th percentile at every load, and both
/// growing with the load.
#[test]
fn aquila_fig6() {
    common::check_claims(
        "aquila-fig6",
        true,
        3,
        &["99th-percentile fabric RTT at 70% load", "near line rate"],
    );
    let csv = std::fs::read_to_string(common::plots_dir("aquila-fig6").join("aquila-fig6.csv"))
        .expect("aquila-fig6.csv written");
    let series = |name: &str| -> Vec<(f64, f64)> {
        csv.lines()
            .filter_map(|l| l.strip_prefix(name)?.strip_prefix(','))
            .map(|xy| {
                let (x, y) = xy.split_once(',').expect("x,y");
                (x.parse().expect("load"), y.parse().expect("RTT"))
            })
            .collect()
    };
    let (p50, p99) = (series("median"), series("99th percentile"));
    // The RTT from the first data cell leaves out the admission: positive, and at most the
    // RTT from the RTS at every load (each sample is shorter).
    let data = series("p99 from the first data cell");
    assert_eq!(data.len(), 3, "one data-cell p99 per load: {csv}");
    for (d, t) in data.iter().zip(&p99) {
        assert!(0.0 < d.1 && d.1 <= t.1, "load {}: {} > {}", d.0, d.1, t.1);
    }
    assert_eq!(p50.len(), 3, "one median per load: {csv}");
    assert_eq!(p99.len(), 3, "one p99 per load: {csv}");
    for (m, t) in p50.iter().zip(&p99) {
        assert_eq!(m.0, t.0, "same loads");
        assert!(
            0.0 < m.1 && m.1 <= t.1,
            "load {}: median {} p99 {}",
            m.0,
            m.1,
            t.1
        );
    }
    for w in [&p50, &p99] {
        assert!(
            w.windows(2).all(|p| p[0].0 < p[1].0 && p[0].1 < p[1].1),
            "RTT grows with the load: {w:?}"
        );
    }
}

/// Aquila Fig. 7 on 72 hosts: the median read near 4 µs holds; two known misses say why
/// (the tail at load 0.9, which Swift's per-connection windows never hold back, and the
/// fabric part, below the paper's 2.5-3 µs at the model's per-hop latencies).
#[test]
fn aquila_fig7() {
    common::check_claims(
        "aquila-fig7",
        true,
        3,
        &["99th-percentile", "median fabric part"],
    );
}

/// Aquila Fig. 8 on 72 hosts: 1RMA alone passes; sharing the bulk VCs misses, saying why; and
/// beside bulk IP in its own VC class the 99th percentile sits at the 5 us bound (5.01 us since
/// issue 38's rebuild changed same-time event order; the old path's own p99 there spans
/// 4.38-5.53 us over seeds 1-20, above 5 on two of them: the quick verdict of one seed at this
/// bound is seed noise, and docs/design/aquila-datapath.md records the flip).
#[test]
fn aquila_fig8() {
    common::check_claims(
        "aquila-fig8",
        true,
        3,
        &["L 1RMA sharing VCs", "H 1RMA + L bulk IP"],
    );
}

/// Aquila Fig. 9 on 72 hosts: two claims (the tail grows with the RPC size where pods are
/// joined by less than a TiN's injection, and not where they match it); both miss here, each
/// saying why (docs/results/aquila-fig9.md).
#[test]
fn aquila_fig9() {
    common::check_claims(
        "aquila-fig9",
        true,
        2,
        &["25 Gb/s between pods", "100 Gb/s between pods"],
    );
}

/// Aquila Fig. 10 on 72 hosts: all four claims are known misses (the model's IP RPC has no
/// host software besides the backend's 1 µs per request), each saying why.
#[test]
fn aquila_fig10() {
    common::check_claims("aquila-fig10", true, 4, &["1RMA's"]);
}

#[test]
fn section_5_power() {
    common::check("power", true);
}

#[test]
fn fig11_relative_cost() {
    common::check("fig11", true);
}

/// Shoal against its Fig. 15 baselines on the paper's 512 nodes, loads 0.2 and 0.7, 10,000
/// completed flows on every fabric: about a millisecond of simulated time, far from the steady
/// state of the full scale's million flows, but on the full scale's rack, so that the verdicts
/// are the full scale's except where the short run shows (docs/results/baselines.md, "Quick and
/// full scale"). Every verdict is pinned: a change that flips one updates the pin and says why.
/// The figures are written.
#[test]
fn fig15_baselines() {
    let dir = common::plots_dir("fig15-baselines");
    // The misses the full scale has too: the tail ratios against DCTCP and DCQCN at low and
    // high load (1.3-1.4x against 3x and 2x) and the torus's "up to" tail ratio (below its
    // band here, above it at full scale). Two verdicts differ from the full scale's: NDP's
    // mean ratio (0.95x, "slightly higher" misses; 1.01x at full scale) and NDP's high-load
    // tail (1.37x passes; 1.22x at full scale). The torus's goodput claim is not reported: no
    // torus long flow completes in 10,000 flows.
    let claims = common::run("fig15-baselines", true);
    assert_eq!(claims.len(), 15, "{} claims", claims.len());
    let misses = [
        "short-flow p99 FCT, DCTCP / Shoal, low load",
        "short-flow p99 FCT, DCTCP / Shoal, high load",
        "short-flow p99 FCT, DCQCN / Shoal, low load",
        "short-flow p99 FCT, DCQCN / Shoal, high load",
        "short-flow mean FCT, Shoal / NDP",
        "short-flow p99 FCT, torus / Shoal",
    ];
    for c in &claims {
        let miss = misses.iter().any(|m| c.claim.starts_with(m));
        assert_eq!(c.pass(), !miss, "{}: ours {}", c.claim, c.ours);
    }
    for stem in [
        "fig15-baselines-short-mean",
        "fig15-baselines-short-p99",
        "fig15-baselines-long-goodput",
    ] {
        assert!(
            dir.join(format!("{stem}.csv")).exists(),
            "{stem} not written"
        );
    }
}

/// Stardust Fig. 9 scaled down (32 adapters x 8 links in two pods, 100 us of warm-up and 200
/// us measured per utilisation, against 256 x 32 and 1 ms at full scale), the same claims.
/// The last-stage queue at low utilisations (0.5 to 0.7) misses, saying why: it has a heavier
/// tail than the M/D/1 bound (largest ratio 3.3-5.8 at u = 0.5 to
/// 0.7), as at full scale (3.8-13 at 0.5-0.7, 2.8 at 0.95). The stage lines of the progress
/// say why: an adapter receives its cells in credit-sized bursts (variance over mean 3.9 to
/// 7.8 over 1 to 64 cell times at 0.5, Poisson's is 1) and each of its last-stage links keeps
/// part of that (1.1 to 1.4); with 2 KB credits the ratio at 8 cells and u = 0.5 is 4.4, with
/// 8 KB 43 (docs/results/stardust.md, Fig. 9). FCI holds the 120% case at 0.93
/// (0.9 ± 0.05). Every verdict is pinned (u = 0.9 passes near the edge of its tolerance, 1.06
/// against 1.2); on two threads (the points at once) the claims are the same, numbers
/// included.
#[test]
fn stardust_fig9_two_tier_load() {
    let claims = common::check_claims(
        "stardust-fig9",
        true,
        11,
        &[
            "last-stage queue at utilisation 0.5 ",
            "last-stage queue at utilisation 0.6 ",
            "last-stage queue at utilisation 0.7 ",
        ],
    );
    common::same_on_threads("stardust-fig9", true, 2, &claims);
}

/// Stardust §5.9 / App. E on Fig. 9's quick network at 0.8: a link between the tiers and a
/// second-tier element fail mid-run; every claim passes. With `--threads 3` the three runs (no
/// failure, a link, an element) run at once and give the same claims, numbers included.
#[test]
fn stardust_failures() {
    let claims = common::run("stardust-failures", true);
    assert_eq!(claims.len(), 6);
    let failed: Vec<_> = claims
        .iter()
        .filter(|c| !c.pass())
        .map(|c| &c.claim)
        .collect();
    assert!(failed.is_empty(), "failed claims {failed:?}");
    common::same_on_threads("stardust-failures", true, 3, &claims);
}

/// Stardust §5.3's incast example at 16 adapters: every claim passes, even draining included
/// (first completion 0.993 of the last; 0.988, a miss, while a VOQ waited for credit covering
/// its whole next packet instead of carrying the surplus as a debt).
#[test]
fn stardust_incast() {
    common::check("stardust-incast", true);
}

/// Stardust Fig. 7 / App. F: two ports, three flows, against the Ethernet fabric's arithmetic.
#[test]
fn stardust_fig7() {
    common::check("stardust-fig7", true);
}

/// Stardust Fig. 10(a) at k = 6: with the cell links at the credit rate after cell headers and
/// credit cells (§4.1, §6.2), TCP over Stardust reaches 0.967 of the line rate over 30-60 ms,
/// under the setup's fluid bound (0.986) but above the paper's 0.94 ± 0.02, so the mean
/// misses high while every flow reaches 9.35 Gb/s (the 9.44 Gb/s claim holds). DCTCP's holds,
/// and DCQCN's over htsim's span (50.3%); MPTCP, with 8 subflows over the 9 paths between two
/// pods of k = 6, runs at 97.6%, above the paper's 90% on k = 12 (where it measures 88.9%).
#[test]
fn stardust_fig10a_permutation() {
    common::check_known_misses("stardust-fig10a", true, |c| {
        c.claim.contains("mean utilisation of a permutation") || c.claim.starts_with("MPTCP")
    });
}

/// Stardust Fig. 10(c) at k = 6: incasts of 4 to 53 backends. Stardust's last completion is
/// far below DCTCP's, not equal to it: DCTCP's 53 senders overflow the 100-packet queue and
/// wait out htsim's 250 ms minimum RTO (478 drops, 48 timeouts); Stardust loses nothing and
/// its first completion is 0.98 of its last; MPTCP is slower than both.
#[test]
fn stardust_fig10c_incast() {
    common::check_known_misses("stardust-fig10c", true, |c| {
        c.claim.contains("equals DCTCP")
    });
}

/// Aquila §4.4's bootstrap of the full clique (the quick version is the full one). The
/// clique's total is a known miss that says why; the per-TiN claims hold.
#[test]
fn aquila_bootstrap() {
    common::check_claims("aquila-bootstrap", true, 4, &["full clique"]);
}

/// Aquila §3.2's link failures on the 9 x 4 clique (the quick version is the full one): every
/// claim, each a model invariant where the paper gives no number, holds.
#[test]
fn aquila_failure() {
    common::check_claims("aquila-failure", true, 6, &[]);
}

/// Stardust Fig. 10(b) at k = 6: the pair's 1 MB flows over Stardust finish in under 1 ms and
/// faster than over DCTCP, DCQCN and MPTCP at every size; the Facebook Web distribution is not
/// checked (a miss).
#[test]
fn stardust_fig10b_fct() {
    common::check_known_misses("stardust-fig10b", true, |c| {
        c.claim.contains("Facebook Web")
    });
}

/// Collectives on every fabric (issue 35): theory checks only; every one passes but the
/// double binary tree's pipelined model at 8 ranks and 2 MiB, whose fill term overestimates
/// a pipeline of 16 pieces through 6 hops (it passes at full scale, 128 pieces); the six
/// figures are written.
#[test]
fn collectives() {
    common::check_claims(
        "collectives",
        true,
        25,
        &["ideal switch: double binary tree all-reduce completion against its pipelined"],
    );
    for stem in [
        "collectives-ring",
        "collectives-halving-doubling",
        "collectives-double-binary-tree",
        "collectives-all-to-all",
        "collectives-staged-all-to-all",
        "collectives-interference",
    ] {
        common::figure_written("collectives", stem);
    }
}
