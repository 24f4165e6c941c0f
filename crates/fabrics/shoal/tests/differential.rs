//! The differential harness: the fast rack engine against the node engine, the reference model
//! (DESIGN.md principle 1: a second engine only on proven equality).
//!
//! Every case runs one scenario on both engines and demands identical run outputs: every flow
//! record, the counters, the queue statistics, the delivered and measured bytes and the sampled
//! series (everything the CLI writes to flows.csv, summary.json and series.csv), compared as
//! their full `Debug` rendering. Random small racks vary every key the fast engine covers
//! (nodes, channels, delay, arrangement, cell and packet sizes, ready queues, the age rule,
//! interleaving) under every workload kind, with and without sampling and measurement windows.
//! Features the fast engine lacks (classes, failures, corruption) must fall back to the node
//! engine: identical results plus the `engine_fallback` counter.
//!
//! The quick part runs by default; the long part (more and larger racks) with
//! `cargo test -p shoal-rack --test differential -- --ignored`.

use proptest::prelude::*;
use shoal_base::rng::stream;
use shoal_base::{ChannelId, Dur, NodeId, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_rack::{Engine, Failure, RackConfig, ShoalRack};
use shoal_schedule::{Arrangement, Component};
use shoal_workload::{
    Arrivals, ClosedLoop, ClosedLoopSpec, FlowSource, IterSource, Matrix, OpenLoop, OpenLoopSpec,
    SizeDist, patterns,
};

/// A workload, rebuilt afresh for each engine.
#[derive(Clone, Debug)]
enum Workload {
    Permutation {
        pairs: usize,
        bytes: u64,
    },
    Incast {
        senders: usize,
        bytes: u64,
    },
    RandomPairs {
        count: usize,
        bytes: u64,
    },
    Periodic {
        bytes: u64,
        period_slots: u64,
        count: usize,
    },
    OpenLoop {
        matrix: u8,
        load_gap_slots: f64,
        flows: u64,
    },
    ClosedLoop {
        per_source: u32,
        flows: u64,
    },
}

fn source(w: &Workload, cfg: &RackConfig, seed: u64) -> Box<dyn FlowSource> {
    let n = cfg.nodes as usize;
    let rng = &mut stream(seed, "differential", 0);
    let slot = cfg.slot;
    match *w {
        Workload::Permutation { pairs, bytes } => Box::new(IterSource::new(patterns::permutation(
            n,
            pairs.min(n),
            bytes,
            Time::ZERO,
            rng,
        ))),
        Workload::Incast { senders, bytes } => {
            let senders: Vec<NodeId> = (1..=senders.min(n - 1) as u16).map(NodeId).collect();
            Box::new(IterSource::new(patterns::incast(
                &senders,
                NodeId(0),
                bytes,
                Time::ZERO,
            )))
        }
        Workload::RandomPairs { count, bytes } => Box::new(IterSource::new(
            patterns::random_pairs(n, count, bytes, Time::ZERO, rng),
        )),
        Workload::Periodic {
            bytes,
            period_slots,
            count,
        } => {
            let a = patterns::periodic(
                NodeId(0),
                NodeId(n as u16 - 1),
                bytes,
                Time::ZERO,
                Dur(period_slots * slot.0),
                count,
            );
            let b = patterns::periodic(
                NodeId(n as u16 - 1),
                NodeId(0),
                bytes / 2 + 1,
                Time(slot.0 / 2),
                Dur(period_slots * slot.0 + 1),
                count,
            );
            Box::new(IterSource::new(patterns::merge(vec![a, b])))
        }
        Workload::OpenLoop {
            matrix,
            load_gap_slots,
            flows,
        } => {
            let matrix = match matrix % 4 {
                0 => Matrix::Uniform,
                1 => Matrix::Permutation { pairs: n / 2 + 1 },
                2 => Matrix::AllToAll,
                _ => Matrix::Hotspot {
                    hot: vec![NodeId(1)],
                    fraction: 0.5,
                },
            };
            let spec = OpenLoopSpec {
                nodes: n,
                sizes: SizeDist::Pareto {
                    shape: 1.05,
                    mean: 2_000.0,
                    cap: Some(60_000),
                },
                arrivals: Arrivals::Poisson {
                    mean_gap_ps: load_gap_slots * slot.0 as f64,
                },
                matrix,
                max_flows: Some(flows),
                until: None,
            };
            Box::new(OpenLoop::new(spec, seed).expect("valid open loop"))
        }
        Workload::ClosedLoop { per_source, flows } => {
            let spec = ClosedLoopSpec {
                nodes: n,
                sizes: SizeDist::Pareto {
                    shape: 1.2,
                    mean: 3_000.0,
                    cap: Some(40_000),
                },
                matrix: Matrix::Uniform,
                per_source,
                start: Time::ZERO,
                max_flows: Some(flows),
                max_per_source: None,
            };
            Box::new(ClosedLoop::new(spec, seed).expect("valid closed loop"))
        }
    }
}

fn run(
    cfg: &RackConfig,
    engine: Engine,
    threads: usize,
    w: &Workload,
    limits: RunLimits,
) -> RunOutput {
    let cfg = RackConfig {
        engine,
        ..cfg.clone()
    };
    let mut rack = ShoalRack::new(cfg, 5).expect("valid rack");
    rack.set_threads(threads);
    let mut flows = source(w, rack.config(), 17);
    rack.run(flows.as_mut(), limits, &mut NoProgress)
        .expect("run")
}

/// Runs `w` on both engines, the fast one on `threads` threads; it must have run (or, with
/// `fallback`, fallen back) and the outputs must be identical. Returns the output.
fn same(
    cfg: &RackConfig,
    w: &Workload,
    limits: RunLimits,
    fallback: bool,
    threads: usize,
) -> RunOutput {
    let probe = ShoalRack::new(
        RackConfig {
            engine: Engine::Fast,
            ..cfg.clone()
        },
        5,
    )
    .expect("valid rack");
    let expect = if fallback {
        (Engine::Node, true)
    } else {
        (Engine::Fast, false)
    };
    assert_eq!(probe.engine_used(), expect);
    let node = run(cfg, Engine::Node, 1, w, limits);
    let mut fast = run(cfg, Engine::Fast, threads, w, limits);
    assert_eq!(
        fast.counters.remove("engine_fallback"),
        fallback.then_some(1),
        "the fallback is reported exactly when it happens"
    );
    let (a, b) = (format!("{node:?}"), format!("{fast:?}"));
    if a != b {
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let from = at.saturating_sub(200);
        panic!(
            "the engines differ ({w:?} on {cfg:?}, {threads} threads):\nnode …{}\nfast …{}",
            &a[from..(at + 200).min(a.len())],
            &b[from..(at + 200).min(b.len())]
        );
    }
    node
}

fn small_rack(nodes: u16) -> RackConfig {
    RackConfig {
        verify_schedule: false,
        ..RackConfig::paper(nodes)
    }
}

fn slots(cfg: &RackConfig, n: u64) -> Time {
    Time(n * cfg.slot.0)
}

fn limits(cfg: &RackConfig, until_slots: u64, sample: Option<u64>, measure: bool) -> RunLimits {
    RunLimits {
        until: Some(slots(cfg, until_slots)),
        completed_flows: None,
        measured_flows: None,
        measure_from: measure.then(|| slots(cfg, until_slots / 3)),
        sample_every: sample.map(|s| Dur(s * cfg.slot.0)),
    }
}

fn workload() -> impl Strategy<Value = Workload> {
    prop_oneof![
        (1usize..40, 1u64..20_000)
            .prop_map(|(pairs, bytes)| Workload::Permutation { pairs, bytes }),
        (1usize..40, 1u64..5_000).prop_map(|(senders, bytes)| Workload::Incast { senders, bytes }),
        (1usize..120, 1u64..8_000)
            .prop_map(|(count, bytes)| Workload::RandomPairs { count, bytes }),
        (1u64..3_000, 1u64..200, 1usize..30).prop_map(|(bytes, period_slots, count)| {
            Workload::Periodic {
                bytes,
                period_slots,
                count,
            }
        }),
        (0u8..4, 0.5f64..30.0, 1u64..300).prop_map(|(matrix, load_gap_slots, flows)| {
            Workload::OpenLoop {
                matrix,
                load_gap_slots,
                flows,
            }
        }),
        (1u32..4, 1u64..200)
            .prop_map(|(per_source, flows)| Workload::ClosedLoop { per_source, flows }),
    ]
}

/// A random rack within the fast engine's features.
fn rack(max_nodes: u16) -> impl Strategy<Value = RackConfig> {
    (
        (2u16..=max_nodes, 1u8..=4, 1u32..=6, any::<bool>()),
        (any::<bool>(), any::<bool>(), any::<bool>()),
        (9u16..=64, 1u32..=3_000),
    )
        .prop_map(
            |((nodes, channels, delay, aware), (ready, age, interleave), (cell, packet))| {
                RackConfig {
                    channels,
                    delay_slots: delay,
                    arrangement: if aware {
                        Arrangement::PropagationAware
                    } else {
                        Arrangement::Cyclic
                    },
                    ready_queue: ready,
                    age_rule: age,
                    interleave_flows: interleave,
                    cell_bytes: cell,
                    packet_bytes: packet,
                    ..small_rack(nodes)
                }
            },
        )
}

/// Whether the rack builds: not every combination does (a small cyclic schedule has fewer
/// columns than channels); proptest draws another in its place.
fn builds(cfg: &RackConfig) -> bool {
    ShoalRack::new(cfg.clone(), 5).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_small_racks_are_identical_on_both_engines(
        cfg in rack(20),
        w in workload(),
        until in 200u64..3_000,
        sample in proptest::option::of(1u64..500),
        measure in any::<bool>(),
        threads in 1usize..=3,
    ) {
        prop_assume!(builds(&cfg));
        same(&cfg, &w, limits(&cfg, until, sample, measure), false, threads);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// The long part: larger racks and longer runs.
    #[test]
    #[ignore = "long: cargo test -p shoal-rack --release --test differential -- --ignored"]
    fn random_racks_are_identical_on_both_engines(
        cfg in rack(80),
        w in workload(),
        until in 1_000u64..30_000,
        sample in proptest::option::of(1u64..2_000),
        measure in any::<bool>(),
        threads in 1usize..=3,
    ) {
        prop_assume!(builds(&cfg));
        same(&cfg, &w, limits(&cfg, until, sample, measure), false, threads);
    }
}

/// The runs the figures make, scaled down: Fig. 12's permutation with measurement and
/// sampling, and Fig. 15's open loop until a number of flows completes.
#[test]
fn figure_runs_scaled_down_are_identical() {
    let cfg = small_rack(64);
    let w = Workload::Permutation {
        pairs: 64,
        bytes: 1 << 40,
    };
    let out = same(&cfg, &w, limits(&cfg, 4_000, Some(256), true), false, 2);
    assert!(out.counters["data_cells_sent"] > 0);
    let w = Workload::OpenLoop {
        matrix: 0,
        load_gap_slots: 4.0,
        flows: 5_000,
    };
    let lim = RunLimits {
        completed_flows: Some(1_000),
        ..RunLimits::default()
    };
    let out = same(&cfg, &w, lim, false, 3);
    assert!(out.records.iter().filter(|r| r.finish.is_some()).count() >= 1_000);
}

/// Classes, failures and corruption are not in the fast engine: it falls back, and says so.
#[test]
fn what_the_fast_engine_lacks_runs_on_the_node_engine() {
    let w = Workload::RandomPairs {
        count: 60,
        bytes: 6_000,
    };
    let base = small_rack(16);
    let lim = limits(&base, 3_000, Some(100), false);
    let classes = RackConfig {
        classes: 2,
        ..base.clone()
    };
    let failure = RackConfig {
        failures: vec![Failure {
            component: Component::NodeLink(ChannelId(0), NodeId(3)),
            at: slots(&base, 100),
        }],
        ..base.clone()
    };
    let corruption = RackConfig {
        header_bit_error_rate: 1e-3,
        ..base.clone()
    };
    let auto = |cfg: &RackConfig| {
        ShoalRack::new(
            RackConfig {
                engine: Engine::Auto,
                ..cfg.clone()
            },
            5,
        )
        .expect("valid rack")
        .engine_used()
    };
    for cfg in [classes, failure, corruption] {
        same(&cfg, &w, lim, true, 1);
        // The default takes the node engine without a note: nothing was asked of `fast`.
        assert_eq!(auto(&cfg), (Engine::Node, false));
    }
    // And the same rack without them runs on the fast engine, by name or by default.
    same(&base, &w, lim, false, 1);
    assert_eq!(auto(&base), (Engine::Fast, false));
    assert_eq!(RackConfig::paper(16).engine, Engine::Auto);
}
