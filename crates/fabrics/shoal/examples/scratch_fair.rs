use shoal_base::{Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits};
use shoal_rack::{RackConfig, ShoalRack};
use shoal_schedule::Arrangement;
use shoal_workload::patterns;

fn main() {
    let n: usize = std::env::var("N").map(|v| v.parse().unwrap()).unwrap_or(64);
    let flows_n: usize = std::env::var("F").map(|v| v.parse().unwrap()).unwrap_or(50);
    let cfg = RackConfig {
        nodes: n as u16,
        channels: 4,
        channel_rate: Rate::gbps(25),
        slot: Dur(23_250),
        guard: Dur(2_750),
        cell_bytes: 64,
        header_bytes: 8,
        overhead_bytes: 0,
        delay_slots: 2,
        switch_ports: 64,
        arrangement: Arrangement::PropagationAware,
        classes: 1,
        low_class_queue_cells: 64,
        ready_queue: std::env::var("NORQ").is_err(),
        age_rule: true,
        packet_bytes: 56_000,
        failures: vec![],
        header_bit_error_rate: 0.0,
        verify_schedule: false,
    };
    let mut rack = ShoalRack::new(cfg.clone(), 1).unwrap();
    let e = rack.epoch_slots();
    let mut rng = shoal_base::rng::stream(7, "fair", 0);
    let mut flows = patterns::random_pairs(n, flows_n, 10_000_000_000, Time::ZERO, &mut rng);
    // one flow per pair (Shoal aggregates a pair's traffic)
    let mut seen = std::collections::BTreeSet::new();
    flows.retain(|f| seen.insert((f.src, f.dst)));
    for (i, f) in flows.iter_mut().enumerate() {
        f.id = i as u64;
    }
    let pairs: Vec<(NodeId, NodeId)> = flows.iter().map(|f| (f.src, f.dst)).collect();
    let slots = e * std::env::var("EP")
        .map(|v| v.parse().unwrap())
        .unwrap_or(400u64);
    let until = Time(cfg.slot.0 * slots);
    let from = Time(cfg.slot.0 * slots / 4);
    let out = rack
        .run(
            &mut flows.clone().into_iter(),
            RunLimits {
                until: Some(until),
                measure_from: Some(from),
                ..Default::default()
            },
            &mut NoProgress,
        )
        .unwrap();
    // per-flow throughput: need per-flow delivered bytes; with one flow per pair and distinct dsts? use per-destination if unique dst
    let secs = (until.0 - from.0) as f64 / 1e12;
    let link = 56.0 * 8.0 / (e as f64 * cfg.slot.0 as f64 / 1e12);
    let ideal = shoal_metrics::maxmin::shoal_maxmin(n, link * (n - 1) as f64, &pairs).unwrap();
    let uniform =
        shoal_metrics::maxmin::shoal_maxmin_uniform(n, link * (n - 1) as f64, &pairs).unwrap();
    let ideal = if std::env::var("U").is_ok() {
        uniform
    } else {
        ideal
    };
    let mut ratios = vec![];
    for (fi, _) in pairs.iter().enumerate() {
        let got = out.measured_flow_bytes[fi] as f64 * 8.0 / secs;
        ratios.push(got / ideal[fi]);
    }
    if std::env::var("DETAIL").is_ok() {
        let mut outdeg = vec![0; n];
        let mut indeg = vec![0; n];
        for p in &pairs {
            outdeg[p.0.idx()] += 1;
            indeg[p.1.idx()] += 1;
        }
        let mut buckets = std::collections::BTreeMap::new();
        for (fi, p) in pairs.iter().enumerate() {
            let e = buckets
                .entry((outdeg[p.0.idx()], indeg[p.1.idx()]))
                .or_insert((0, 0.0f64, f64::MAX, 0.0f64));
            e.0 += 1;
            e.1 += ratios[fi];
            e.2 = e.2.min(ratios[fi]);
            e.3 = e.3.max(ratios[fi]);
        }
        for (k, v) in buckets {
            println!(
                "out {} in {}: n {} mean {:.3} min {:.3} max {:.3}",
                k.0,
                k.1,
                v.0,
                v.1 / v.0 as f64,
                v.2,
                v.3
            );
        }
    }
    ratios.sort_by(f64::total_cmp);
    let within = ratios.iter().filter(|r| (**r - 1.0).abs() <= 0.1).count();
    println!(
        "N={n} flows={} measured={} within10%={} ({:.1}%) min {:.3} p1 {:.3} median {:.3} max {:.3}",
        pairs.len(),
        ratios.len(),
        within,
        100.0 * within as f64 / ratios.len() as f64,
        ratios[0],
        ratios[ratios.len() / 100],
        ratios[ratios.len() / 2],
        ratios[ratios.len() - 1]
    );
}
