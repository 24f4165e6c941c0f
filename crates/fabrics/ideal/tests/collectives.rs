//! Collectives on the ideal switch against the textbook's cost model, every expected value
//! computed from the switch's parameters alone (link rate B, link delay d, packet and header
//! sizes), never from a run.
//!
//! On this switch a send of c payload bytes alone on its links takes the wire time of its
//! bytes and headers, c·(1 + h/mss)/B rounded up to whole packets, plus a one-way latency
//! L = 2·d + one packet's serialization (the switch stores and forwards the last packet). A
//! ring all-reduce is 2(n−1) such steps of S/n, halving-doubling 2·log2(n) steps of S/2 … S/n
//! … S/2, and a direct all-to-all one step in which each link carries (n−1) chunks of S/n.

use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits};
use shoal_ideal::cost::SendCost as Model;
use shoal_ideal::{IdealSwitch, SwitchSpec};
use shoal_workload::collective::{Algorithm, CollectiveSpec, Op};
use shoal_workload::dag::DagSource;

fn switch(hosts: u16) -> SwitchSpec {
    SwitchSpec {
        hosts,
        link_rate: Rate(10_000_000_000),
        link_delay: Dur(500_000),
        packet_bytes: 1500,
        header_bytes: 40,
    }
}

fn job(op: Op, algorithm: Algorithm, n: u16, bytes: u64) -> CollectiveSpec {
    CollectiveSpec {
        op,
        algorithm,
        // Ranks spread over the switch, not in port order, so nothing hides in the numbering.
        ranks: (0..n).map(|i| NodeId((i * 5 + 3) % (2 * n))).collect(),
        message_bytes: bytes,
        chunks: 1,
        iterations: 1,
        compute: Dur(0),
        group_size: 0,
    }
}

/// Each iteration's completion time in seconds on the switch.
fn run(sw: &SwitchSpec, spec: &CollectiveSpec) -> Vec<f64> {
    let plan = spec.build().expect("a valid job");
    let mut source = DagSource::new(plan.dag.clone(), Time::ZERO);
    let out = IdealSwitch::new(sw.clone())
        .run(&mut source, RunLimits::default(), &mut NoProgress)
        .expect("runs");
    assert_eq!(out.records.len() as u128, spec.sends(), "every send ran");
    plan.iteration_times(0, out.records.iter().map(|r| (r.id, r.start, r.finish)))
        .into_iter()
        .map(|t| t.expect("every send delivered").0 as f64 * 1e-12)
        .collect()
}

fn within(measured: f64, expected: f64, tolerance: f64, what: &str) {
    let err = (measured - expected).abs() / expected;
    // Shown with --nocapture: the numbers behind each verdict.
    eprintln!(
        "{what}: measured {measured:.6e}, theory {expected:.6e} ({:+.3}%)",
        (measured / expected - 1.0) * 100.0
    );
    assert!(
        err <= tolerance,
        "{what}: measured {:.3} us, theory {:.3} us ({:.2}% off)",
        measured * 1e6,
        expected * 1e6,
        err * 100.0
    );
}

#[test]
fn ring_all_reduce_takes_2_n_minus_1_steps_of_s_over_n() {
    let sw = switch(64);
    let m = Model::of(&sw);
    for n in [4u16, 8, 16] {
        // From one packet a step (latency-bound) to megabytes (bandwidth-bound).
        for s in [1000 * n as u64, 4 << 20, 16 << 20] {
            let t = run(&sw, &job(Op::AllReduce, Algorithm::Ring, n, s))[0];
            let steps = 2.0 * (n as f64 - 1.0);
            let c = s as f64 / n as f64;
            let expected = steps * m.wire(c) + steps * m.latency(c);
            within(t, expected, 0.05, &format!("ring all-reduce n={n} S={s}"));
            // The textbook's form, headers left out of the rate: 2(n−1)/n · S/B + 2(n−1)·L.
            let textbook = steps / n as f64 * s as f64 / m.rate + steps * m.latency(c);
            within(
                t,
                textbook,
                0.05,
                &format!("ring all-reduce n={n} S={s}, textbook"),
            );
        }
    }
}

#[test]
fn a_large_ring_all_reduce_runs_at_the_link_rate_in_bus_bandwidth() {
    // busbw = S/t · 2(n−1)/n (NCCL's definition) equals B within 5% once latency is small:
    // headers cost 40/1460 of it here, latency under 1%.
    let sw = switch(32);
    let n = 16u16;
    let s = 64u64 << 20;
    let t = run(&sw, &job(Op::AllReduce, Algorithm::Ring, n, s))[0];
    let algbw = s as f64 * 8.0 / t;
    let busbw = algbw * Op::AllReduce.bus_factor(n as usize);
    within(busbw, sw.link_rate.0 as f64, 0.05, "ring bus bandwidth");
    assert!(busbw < sw.link_rate.0 as f64, "faster than the link");
}

#[test]
fn direct_all_to_all_takes_n_minus_1_chunks_on_each_link_and_one_latency() {
    let sw = switch(32);
    let m = Model::of(&sw);
    for n in [4u16, 8, 16] {
        for s in [1460 * n as u64, 1 << 20, 8 << 20] {
            let t = run(&sw, &job(Op::AllToAll, Algorithm::Direct, n, s))[0];
            let c = s as f64 / n as f64;
            let expected = (n as f64 - 1.0) * m.wire(c) + m.latency(c);
            within(t, expected, 0.05, &format!("all-to-all n={n} S={s}"));
        }
    }
}

#[test]
fn halving_doubling_takes_2_log2_n_steps() {
    let sw = switch(32);
    let m = Model::of(&sw);
    for n in [4u16, 8, 16] {
        let levels = n.ilog2();
        for s in [1460 * n as u64, 1 << 20, 16 << 20] {
            let t = run(&sw, &job(Op::AllReduce, Algorithm::HalvingDoubling, n, s))[0];
            // Halving sends S/2, S/4, … S/n; doubling S/n, … S/2: 2·log2(n) steps.
            let expected: f64 = (1..=levels)
                .map(|k| {
                    let c = s as f64 / (1u64 << k) as f64;
                    2.0 * (m.wire(c) + m.latency(c))
                })
                .sum();
            within(t, expected, 0.05, &format!("halving-doubling n={n} S={s}"));
        }
        // Latency-bound, halving-doubling's 2·log2(n) steps beat the ring's 2(n−1): the
        // measured ratio is the model's.
        let small = 64 * n as u64;
        let hd = run(
            &sw,
            &job(Op::AllReduce, Algorithm::HalvingDoubling, n, small),
        )[0];
        let ring = run(&sw, &job(Op::AllReduce, Algorithm::Ring, n, small))[0];
        let c = small as f64 / n as f64;
        let ring_model = 2.0 * (n as f64 - 1.0) * (m.wire(c) + m.latency(c));
        let hd_model: f64 = (1..=levels)
            .map(|k| {
                let c = small as f64 / (1u64 << k) as f64;
                2.0 * (m.wire(c) + m.latency(c))
            })
            .sum();
        assert!(hd < ring, "n={n}: halving-doubling {hd} s, ring {ring} s");
        within(
            ring / hd,
            ring_model / hd_model,
            0.05,
            &format!("ring/halving-doubling n={n}"),
        );
    }
}

#[test]
fn ring_all_gather_and_reduce_scatter_take_n_minus_1_steps() {
    let sw = switch(16);
    let m = Model::of(&sw);
    let n = 8u16;
    let s = 8u64 << 20;
    let c = s as f64 / n as f64;
    let expected = (n as f64 - 1.0) * (m.wire(c) + m.latency(c));
    for op in [Op::AllGather, Op::ReduceScatter] {
        let t = run(&sw, &job(op, Algorithm::Ring, n, s))[0];
        within(t, expected, 0.05, op.name());
        let busbw = s as f64 * 8.0 / t * op.bus_factor(n as usize);
        within(
            busbw,
            sw.link_rate.0 as f64,
            0.05,
            &format!("{op} bus bandwidth"),
        );
    }
}

#[test]
fn iterations_repeat_with_the_compute_time_between_them() {
    let sw = switch(16);
    let mut spec = job(Op::AllReduce, Algorithm::Ring, 8, 1 << 20);
    spec.iterations = 3;
    spec.compute = Dur(20_000_000);
    let plan = spec.build().expect("valid");
    let mut source = DagSource::new(plan.dag.clone(), Time::ZERO);
    let out = IdealSwitch::new(sw.clone())
        .run(&mut source, RunLimits::default(), &mut NoProgress)
        .expect("runs");
    let times = plan.iteration_times(0, out.records.iter().map(|r| (r.id, r.start, r.finish)));
    let times: Vec<u64> = times.into_iter().map(|t| t.expect("done").0).collect();
    // The switch is deterministic and the iterations identical: the same time each.
    assert!(times.iter().all(|&t| t == times[0]), "{times:?}");
    let end = out
        .records
        .iter()
        .filter_map(|r| r.finish)
        .max()
        .expect("done");
    assert_eq!(end.0, 3 * times[0] + 2 * spec.compute.0);
}

#[test]
fn double_binary_tree_latency_bound_takes_2_floor_log2_n_hops() {
    // A tiny message: the critical path runs from the deepest leaf up to the root and back,
    // 2·⌊log2 n⌋ hops of S/2, against the ring's 2(n−1) hops. At each hop two sends share a
    // link (two children into their parent going up, a parent to its two children going
    // down), so a hop costs two packets' wire time and one latency: T = 2h·(2·wire + L).
    let sw = switch(64);
    let m = Model::of(&sw);
    for n in [7u16, 8, 16, 31] {
        let s = 64u64;
        let t = run(&sw, &job(Op::AllReduce, Algorithm::DoubleBinaryTree, n, s))[0];
        let h = (n as f64).log2().floor();
        let c = s as f64 / 2.0;
        let expected = 2.0 * h * (2.0 * m.wire(c) + m.latency(c));
        within(
            t,
            expected,
            0.05,
            &format!("double binary tree n={n} S={s}"),
        );
        let ring = run(&sw, &job(Op::AllReduce, Algorithm::Ring, n, s))[0];
        assert!(t < ring, "n={n}: tree {t} s, ring {ring} s");
    }
}

#[test]
fn a_pipelined_double_binary_tree_moves_2s_through_each_link() {
    // Large S in c chunks: a rank inner in one tree sends S/2 up and S down in it and S/2
    // up the other (and receives as much), so its link carries 2S, four streams of S/2. A
    // pipeline of 2h hops (h = ⌊log2 n⌋), each a link shared four ways, moving c pieces of
    // w = wire(S/(2c)): T = (c + 2h − 1)·4w + 2h·L, i.e. 2S/B (headers included) plus the
    // fill and drain.
    let sw = switch(32);
    let m = Model::of(&sw);
    for n in [8u16, 13, 16] {
        let s = 32u64 << 20;
        let c = 64u32;
        let mut spec = job(Op::AllReduce, Algorithm::DoubleBinaryTree, n, s);
        spec.chunks = c;
        let t = run(&sw, &spec)[0];
        let piece = s as f64 / 2.0 / c as f64;
        let h = (n as f64).log2().floor();
        let expected =
            (c as f64 + 2.0 * h - 1.0) * 4.0 * m.wire(piece) + 2.0 * h * m.latency(piece);
        within(t, expected, 0.05, &format!("pipelined tree n={n} c={c}"));
        // Without chunks each hop carries S/2 whole: 2·⌊log2 n⌋ store-and-forward hops.
        spec.chunks = 1;
        let whole = run(&sw, &spec)[0];
        assert!(whole > 1.5 * t, "n={n}: whole {whole} s, pipelined {t} s");
    }
}

#[test]
fn staged_all_to_all_takes_a_step_inside_groups_then_one_across() {
    // Groups of g, m = n/g: step 0 each link carries g − 1 messages of m·S/n, step 1 m − 1
    // messages of g·S/n, one latency each: T = (g−1)·S·m/n/B + (m−1)·S·g/n/B + 2L.
    let sw = switch(32);
    let md = Model::of(&sw);
    for (n, g) in [(16u16, 4usize), (16, 2), (12, 3)] {
        for s in [1460 * n as u64, 4 << 20] {
            let s = s / n as u64 * n as u64;
            let mut spec = job(Op::AllToAll, Algorithm::Staged, n, s);
            spec.group_size = g;
            let t = run(&sw, &spec)[0];
            let m = n as usize / g;
            let (c0, c1) = (
                s as f64 * m as f64 / n as f64,
                s as f64 * g as f64 / n as f64,
            );
            let expected = (g as f64 - 1.0) * md.wire(c0)
                + md.latency(c0)
                + (m as f64 - 1.0) * md.wire(c1)
                + md.latency(c1);
            within(
                t,
                expected,
                0.05,
                &format!("staged all-to-all n={n} g={g} S={s}"),
            );
        }
    }
}

#[test]
fn chunking_a_ring_costs_one_latency_per_extra_chunk() {
    // A ring already keeps every link busy: with c chunks the sends on each anti-diagonal
    // (step s, chunk k with s + k fixed) share the link and finish together, so
    // T = 2(n−1)·c·wire(S/(nc)) + (2(n−1) + c − 1)·L.
    let sw = switch(16);
    let m = Model::of(&sw);
    let n = 8u16;
    let s = 8u64 << 20;
    for c in [1u32, 4, 16] {
        let mut spec = job(Op::AllReduce, Algorithm::Ring, n, s);
        spec.chunks = c;
        let t = run(&sw, &spec)[0];
        let piece = s as f64 / n as f64 / c as f64;
        let steps = 2.0 * (n as f64 - 1.0);
        let expected =
            steps * c as f64 * m.wire(piece) + (steps + c as f64 - 1.0) * m.latency(piece);
        within(t, expected, 0.05, &format!("ring n={n} c={c}"));
    }
}
