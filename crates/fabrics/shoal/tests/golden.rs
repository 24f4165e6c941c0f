//! Golden runs: the simulator's results, pinned bit for bit.
//!
//! Performance work on the node, the engine and the rack must not change any result. Each case
//! below runs a small rack and hashes everything in its `RunOutput` (every flow record with its
//! finish time, the counters, the queue statistics, the delivered and measured bytes); the pins
//! were computed with the code before any optimisation (debug and release agree). A changed pin
//! means a changed simulation: find out why before re-pinning, and re-pin only for a deliberate
//! change of the model.
//!
//! `link_failure` was pinned after one fix that came first: a queue emptied by a failure no
//! longer leaves a stale departure count behind (before, feedback computed from it underflowed,
//! which panics in debug builds and wraps to the maximum feedback in release).
//!
//! Re-pinned for model changes: `node_failure` (a flow to a silent peer continues through the
//! other intermediates and is abandoned only when none can reach the peer), `header_corruption`
//! and `two_classes` (a cell the peer dropped is queued again at the tail of its class's queue
//! instead of taking the next slot; lower-class tail drop counts transit cells only); then all
//! but the prototype, when feedback learned that a queued cell still leaves in the current slot
//! if this node's transmission to its next hop comes on a later channel of that slot; then
//! `node_failure`, `header_corruption`, `random_pairs_64`, `two_classes` and
//! `without_optimisations`, whose pairs carry several flows, when the flows of a pair came to
//! share it packet by packet (`random_pairs_64_fifo` keeps the old pin with that off); then
//! `node_failure` and `link_failure`, when unreachable notices stopped taking data's slots
//! (they ride in cells that would carry nothing, and go ahead of data once per 8 epochs).

use shoal_base::rng::stream;
use shoal_base::{ChannelId, Dur, NodeId, Rate, Time};
use shoal_fabric::{Fabric, NoProgress, RunLimits, RunOutput};
use shoal_rack::{Engine, Failure, RackConfig, ShoalRack};
use shoal_schedule::{Arrangement, Component};
use shoal_workload::{Flow, IterSource, patterns};

/// 64-bit FNV-1a, fed field by field in a fixed order.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn u64(&mut self, v: u64) {
        self.bytes(&v.to_le_bytes());
    }
}

fn digest(out: &RunOutput) -> u64 {
    let mut h = Fnv::new();
    h.u64(out.records.len() as u64);
    for r in &out.records {
        h.u64(r.id);
        h.u64(r.src.0 as u64);
        h.u64(r.dst.0 as u64);
        h.u64(r.bytes);
        h.u64(r.start.0);
        h.u64(r.finish.map_or(u64::MAX, |t| t.0));
    }
    h.u64(out.sim_time.0);
    h.u64(out.queues.max_queue);
    h.u64(out.queues.max_node_queue);
    h.u64(out.queues.max_reorder_bytes);
    h.u64(out.counters.len() as u64);
    for (k, v) in &out.counters {
        h.bytes(k.as_bytes());
        h.u64(*v);
    }
    for list in [&out.delivered_bytes, &out.measured_flow_bytes] {
        h.u64(list.len() as u64);
        for &b in list {
            h.u64(b);
        }
    }
    h.0
}

/// The rack of Fig. 12 (§7.1) with `nodes` nodes. Spelled out here rather than taken from
/// `RackConfig::paper`, so that the pins cannot move with that default.
fn fig12(nodes: u16) -> RackConfig {
    RackConfig {
        nodes,
        channels: 4,
        channel_rate: Rate::gbps(25),
        slot: Dur::from_ps(23_250),
        guard: Dur::from_ps(2_750),
        cell_bytes: 64,
        header_bytes: 8,
        overhead_bytes: 0,
        delay_slots: 2,
        switch_ports: 64,
        arrangement: Arrangement::PropagationAware,
        classes: 1,
        low_class_queue_cells: 64,
        ready_queue: true,
        age_rule: true,
        packet_bytes: 1500,
        interleave_flows: true,
        failures: Vec::new(),
        header_bit_error_rate: 0.0,
        verify_schedule: false,
        engine: Engine::Node,
        breakdown: false,
    }
}

/// The 8-node prototype of §6: one 10 Gb/s channel, 76.8 ns slots with a 6.4 ns guard band and
/// 24 B of MAC framing, 4-port switches, and 1.57 µs node to node (21 slots, longer than the
/// 7-slot epoch, so the cyclic schedule).
fn prototype() -> RackConfig {
    RackConfig {
        nodes: 8,
        channels: 1,
        channel_rate: Rate::gbps(10),
        slot: Dur::from_ps(76_800),
        guard: Dur::from_ps(6_400),
        overhead_bytes: 24,
        delay_slots: 1_570_000u64.div_ceil(76_800) as u32,
        switch_ports: 4,
        arrangement: Arrangement::Cyclic,
        ..fig12(8)
    }
}

/// Runs the case on the node engine and on the fast engine (which falls back to the node
/// engine for what it lacks, adding only its `engine_fallback` counter): both must give the pin.
fn run(cfg: RackConfig, flows: Vec<Flow>, limits: RunLimits) -> u64 {
    let digests = [Engine::Node, Engine::Fast].map(|engine| {
        let cfg = RackConfig {
            engine,
            ..cfg.clone()
        };
        let mut rack = ShoalRack::new(cfg, 11).expect("valid rack");
        let mut out = rack
            .run(&mut IterSource::new(flows.clone()), limits, &mut NoProgress)
            .expect("run");
        out.counters.remove("engine_fallback");
        digest(&out)
    });
    assert_eq!(
        digests[0], digests[1],
        "the fast engine differs from the node engine"
    );
    digests[0]
}

fn slots(cfg: &RackConfig, n: u64) -> Time {
    Time(cfg.slot.0 * n)
}

#[test]
fn prototype_incast() {
    let senders: Vec<NodeId> = (1..8).map(NodeId).collect();
    let flows = patterns::incast(&senders, NodeId(0), 7 * 56, Time::ZERO);
    let got = run(prototype(), flows, RunLimits::default());
    assert_eq!(got, 13_295_892_914_572_203_607, "pin");
}

#[test]
fn random_pairs_64() {
    let flows = patterns::random_pairs(64, 200, 20_000, Time::ZERO, &mut stream(1, "golden", 0));
    let got = run(fig12(64), flows, RunLimits::default());
    assert_eq!(got, 14_261_706_161_664_542_595, "pin");
}

/// The same flows served first come, first served per pair: still the pin of before
/// interleaving existed.
#[test]
fn random_pairs_64_fifo() {
    let flows = patterns::random_pairs(64, 200, 20_000, Time::ZERO, &mut stream(1, "golden", 0));
    let cfg = RackConfig {
        interleave_flows: false,
        ..fig12(64)
    };
    let got = run(cfg, flows, RunLimits::default());
    assert_eq!(got, 1_077_253_700_959_395_023, "pin");
}

#[test]
fn permutation_128_measured() {
    let cfg = fig12(128);
    let epoch = 32;
    let flows = patterns::permutation(128, 128, 1 << 40, Time::ZERO, &mut stream(2, "golden", 0));
    let limits = RunLimits {
        until: Some(slots(&cfg, 40 * epoch)),
        measure_from: Some(slots(&cfg, 10 * epoch)),
        ..RunLimits::default()
    };
    let got = run(cfg, flows, limits);
    assert_eq!(got, 14_728_776_045_992_106_152, "pin");
}

/// The benchmark's rack (Fig. 12, 512 nodes), briefly.
#[test]
fn permutation_512_short() {
    let cfg = fig12(512);
    let epoch = 128;
    let flows = patterns::permutation(512, 512, 1 << 40, Time::ZERO, &mut stream(8, "golden", 0));
    let limits = RunLimits {
        until: Some(slots(&cfg, 5 * epoch)),
        measure_from: Some(slots(&cfg, 2 * epoch)),
        ..RunLimits::default()
    };
    let got = run(cfg, flows, limits);
    assert_eq!(got, 2_308_480_150_606_873_272, "pin");
}

#[test]
fn node_failure() {
    let mut cfg = fig12(32);
    cfg.failures = vec![Failure {
        component: Component::Node(NodeId(5)),
        at: slots(&cfg, 300),
    }];
    let flows = patterns::random_pairs(32, 120, 30_000, Time::ZERO, &mut stream(3, "golden", 0));
    let got = run(cfg, flows, RunLimits::default());
    assert_eq!(got, 7_156_678_003_969_545_790, "pin");
}

#[test]
fn link_failure() {
    let mut cfg = fig12(32);
    cfg.switch_ports = 8;
    cfg.failures = vec![Failure {
        component: Component::NodeLink(ChannelId(1), NodeId(9)),
        at: slots(&cfg, 200),
    }];
    let flows = patterns::permutation(32, 32, 40_000, Time::ZERO, &mut stream(4, "golden", 0));
    let got = run(cfg, flows, RunLimits::default());
    assert_eq!(got, 354_626_527_957_406_833, "pin");
}

#[test]
fn header_corruption() {
    let mut cfg = fig12(32);
    cfg.header_bit_error_rate = 2e-4;
    let flows = patterns::random_pairs(32, 100, 20_000, Time::ZERO, &mut stream(5, "golden", 0));
    let got = run(cfg, flows, RunLimits::default());
    assert_eq!(got, 10_187_797_550_097_238_009, "pin");
}

/// Two classes (App. C), half the flows in each, with tail drops and retransmissions in the
/// lower one. The time limit turns a livelock regression into a wrong pin rather than a hang.
#[test]
fn two_classes() {
    let mut cfg = fig12(16);
    cfg.classes = 2;
    cfg.low_class_queue_cells = 8;
    let mut flows = patterns::random_pairs(16, 80, 20_000, Time::ZERO, &mut stream(6, "golden", 0));
    for f in flows.iter_mut().filter(|f| f.id % 2 == 1) {
        f.class = 1;
    }
    let limits = RunLimits {
        until: Some(slots(&cfg, 20_000)),
        ..RunLimits::default()
    };
    let got = run(cfg, flows, limits);
    assert_eq!(got, 5_535_780_840_573_015_799, "pin");
}

/// The "without optimizations" variant of Fig. 14: no ready queues and no age rule.
#[test]
fn without_optimisations() {
    let mut cfg = fig12(16);
    cfg.ready_queue = false;
    cfg.age_rule = false;
    let flows = patterns::random_pairs(16, 60, 20_000, Time::ZERO, &mut stream(7, "golden", 0));
    let got = run(cfg, flows, RunLimits::default());
    assert_eq!(got, 11_529_707_010_090_331_189, "pin");
}
