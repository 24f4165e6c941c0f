//! `rack.breakdown`: where a short flow's time goes (`breakdown.rs`). The parts add up to each
//! flow's FCT exactly, asking for them changes no result, they do not depend on the thread
//! count, and a lone cell's parts are what the schedule and the wire allow.

use shoal_base::{NodeId, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_metrics::SHORT_FLOW_MAX_BYTES;
use shoal_rack::{BREAKDOWN_HEADER, Engine, RackConfig, ShoalRack};
use shoal_workload::{Arrivals, Flow, IterSource, Matrix, OpenLoop, OpenLoopSpec, SizeDist};

/// 64 nodes of the paper's rack (§7.1) under Pareto flows (the §7.3 shape, a smaller mean so
/// that many flows complete) at about half the load the rack carries.
fn loaded(breakdown: bool, threads: usize) -> RunOutput {
    let cfg = RackConfig {
        breakdown,
        engine: Engine::Fast,
        ..RackConfig::paper(64)
    };
    let slot = cfg.slot.0 as f64;
    let spec = OpenLoopSpec {
        nodes: 64,
        sizes: SizeDist::Pareto {
            shape: 1.05,
            mean: 20_000.0,
            cap: Some(2_000_000),
        },
        // A flow every 8 slots over 64 nodes: about 0.5 of 38.5 Gb/s of own traffic per
        // node at the mean drawn (about 9 KB).
        arrivals: Arrivals::Poisson {
            mean_gap_ps: 8.0 * slot,
        },
        matrix: Matrix::Uniform,
        max_flows: Some(3_000),
        until: None,
    };
    let mut rack = ShoalRack::new(cfg, 4).expect("valid rack");
    rack.set_threads(threads);
    let mut flows = OpenLoop::new(spec, 9).expect("valid open loop");
    rack.run(&mut flows, RunLimits::default(), &mut NoProgress)
        .expect("run")
}

/// The rows of `breakdown.csv`, each as its fields.
fn rows(out: &RunOutput) -> Vec<Vec<String>> {
    let text = &out.tables["breakdown.csv"];
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(BREAKDOWN_HEADER));
    lines
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect()
}

fn int(s: &str) -> u64 {
    s.parse().expect("an integer")
}

#[test]
fn the_parts_add_up_to_every_short_flows_fct_and_change_no_result() {
    let with = loaded(true, 1);
    let without = loaded(false, 1);
    assert!(without.tables.is_empty());
    let mut counters = with.counters.clone();
    assert_eq!(counters.remove("breakdown_missing"), Some(0));
    assert_eq!(counters, without.counters);
    assert_eq!(with.records, without.records);
    assert_eq!(with.queues, without.queues);
    assert_eq!(with.delivered_bytes, without.delivered_bytes);

    let short: Vec<_> = with
        .records
        .iter()
        .filter(|r| r.finish.is_some() && r.bytes <= SHORT_FLOW_MAX_BYTES)
        .collect();
    let rows = rows(&with);
    assert!(short.len() > 2_000, "{} short flows", short.len());
    assert_eq!(rows.len(), short.len(), "one row per completed short flow");
    let mut by_id: Vec<_> = rows.iter().collect();
    by_id.sort_by_key(|r| int(&r[0]));
    let mut detours = 0;
    for (row, rec) in by_id.iter().zip(short.iter().copied()) {
        assert_eq!(int(&row[0]), rec.id);
        let fct = rec.finish.expect("completed").0 - rec.start.0;
        assert_eq!(int(&row[4]), fct, "fct_ps of flow {}", rec.id);
        let parts: u64 = row[7..15].iter().map(|x| int(x)).sum();
        assert_eq!(parts, fct, "the parts of flow {}: {row:?}", rec.id);
        let direct = row[6] == row[2];
        assert_eq!(row[5], if direct { "direct" } else { "detour" });
        if direct {
            assert_eq!((int(&row[12]), int(&row[13])), (0, 0), "{row:?}");
        } else {
            detours += 1;
        }
    }
    // One connection in 63 is the destination itself.
    assert!(detours * 10 > rows.len() * 9, "{detours} of {}", rows.len());
}

#[test]
fn the_breakdown_does_not_depend_on_the_thread_count() {
    assert_eq!(
        loaded(true, 1).tables["breakdown.csv"],
        loaded(true, 3).tables["breakdown.csv"]
    );
}

/// A single cell on the idle rack: nothing holds it, and it waits for the schedule only.
#[test]
fn a_lone_cell_waits_for_the_schedule_and_the_wire_only() {
    let cfg = RackConfig {
        breakdown: true,
        ..RackConfig::paper(64)
    };
    let (slot, delay) = (cfg.slot.0, cfg.delay_slots as u64);
    let mut rack = ShoalRack::new(cfg, 1).expect("valid rack");
    let epoch = rack.epoch_slots() * slot;
    // 40 flows of one cell, far apart, from node 3 to node 40, each starting mid-slot.
    let flows: Vec<Flow> = (0..40u64)
        .map(|k| Flow {
            id: k,
            src: NodeId(3),
            dst: NodeId(40),
            bytes: 50,
            start: Time(k * 10 * epoch + 7 * k * slot + slot / 3),
            class: 0,
        })
        .collect();
    let out = rack
        .run(
            &mut IterSource::new(flows),
            RunLimits::default(),
            &mut NoProgress,
        )
        .expect("run");
    let rows = rows(&out);
    assert_eq!(rows.len(), 40);
    for row in &rows {
        let p: Vec<u64> = row[7..15].iter().map(|x| int(x)).collect();
        // Handed over at the next slot start; nothing held, no other local cell.
        assert!(p[0] < slot, "{row:?}");
        assert_eq!((p[1], p[2]), (0, 0), "{row:?}");
        // The first connection the node meets is the one it takes (§3.2), within an epoch.
        assert!(p[3] < epoch, "{row:?}");
        assert_eq!(p[4], delay * slot, "{row:?}");
        if row[5] == "detour" {
            // At the intermediate: at most an epoch for its slot to the destination.
            assert!(p[5] < epoch, "{row:?}");
            assert_eq!(p[6], delay * slot, "{row:?}");
        }
        assert_eq!(p[7], 0, "{row:?}");
    }
}

#[test]
fn the_node_engine_refuses_the_breakdown_with_its_reason() {
    let cfg = RackConfig {
        breakdown: true,
        engine: Engine::Node,
        ..RackConfig::paper(16)
    };
    let err = ShoalRack::new(cfg, 1).err().expect("refused");
    assert_eq!(err.key, "rack.breakdown");
    assert!(err.reason.contains("fast engine"), "{}", err.reason);
    let cfg = RackConfig {
        breakdown: true,
        classes: 2,
        ..RackConfig::paper(16)
    };
    let err = ShoalRack::new(cfg, 1).err().expect("refused");
    assert!(err.reason.contains("traffic classes"), "{}", err.reason);
}
