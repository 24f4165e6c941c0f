//! `shoal bench`: how fast the slotted simulator runs the rack of Fig. 12, next to a reference
//! loop that does the least any slotted simulator of this fabric must do.
//!
//! The unit is the *node-channel-slot*: one node on one channel in one slot (a 512-node rack
//! with 4 channels has 2,048 of them per slot), which costs one transmission and one reception.
//!
//! **The simulator run.** The rack of Fig. 12 (§7.1: 4 channels of 25 Gb/s, 23.25 ns slots,
//! 64 B cells, propagation-aware schedule, delay of 2 slots, ready queues and the age rule on)
//! under `pairs` flows of a random permutation (`pairs == nodes` is the full permutation, the
//! worst case for throughput), each far too long to finish. The rack runs `warmup_slots` until
//! queues and congestion control settle, then `slots` are timed: node logic, engine, medium and
//! hosts, exactly as `Fabric::run` drives them. Building the rack is not timed.
//!
//! **Both engines.** The simulator run is made twice, on the fast engine (`rack.engine =
//! "fast"`) and then on the node engine, the reference model; each is timed the same way and
//! the benchmark fails unless both sent and delivered exactly the same cells. With `threads`
//! above one, the fast engine is timed once more with its parts on that many threads
//! (`Fabric::set_threads`), and must again send and deliver the same cells.
//!
//! **The reference loop.** For the same node count, channels and number of slots, it walks the
//! same schedule table and, for every node-channel-slot `i → j`, moves the head cell record of
//! the ring buffer `(i, j)` to the ring buffer `(j, dst)` of its next hop (or counts it
//! delivered when `j` is its destination), topping up `(i, j)` with a new cell of `i`'s flow
//! when it is empty: two-hop Valiant load balancing of the same permutation. Its rings hold
//! 8-byte cell records, one ring per ordered pair (O(N²) entries, like the simulator's queues).
//! A ring is 32 bytes (three records, head and length), indexed `[node][peer]`.
//! It does **not** model the delay line, feedback and congestion control (Eq. 1-6), the age
//! rule, reassembly and in-order delivery, flow records, statistics, failures or corruption.
//! So it is a floor on the memory traffic of a cell-level simulation, not a competitor: the
//! ratio says how much of the simulator's cost is the protocol itself, on any machine.

use crate::config::{Engine, RackConfig};
use crate::endpoint::PeerTable;
use crate::rack::{ShoalRack, Sim, Step};
use serde::Serialize;
use shoal_base::rng::stream;
use shoal_base::{Dur, Time};
use shoal_engine::{IDLE, SlotSchedule};
use shoal_fabric::bench::{peak_rss_bytes, wall_seconds};
use shoal_fabric::{Fabric, FabricError, NoProgress, RunLimits};
use shoal_workload::{Flow, FlowSource, IterSource, patterns};
use std::fmt;

/// What to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BenchOptions {
    /// Nodes in the rack.
    pub nodes: u16,
    /// Flows of the permutation; `nodes` is the full permutation.
    pub pairs: usize,
    /// Timed slots.
    pub slots: u64,
    /// Slots run before timing starts.
    pub warmup_slots: u64,
    /// Threads for a second timing of the fast engine; 1 times it on one thread only.
    pub threads: usize,
}

impl Default for BenchOptions {
    /// The Fig. 12 full permutation at 512 nodes: 20 epochs of warm-up, then 20,000 slots
    /// (about 156 epochs, 465 µs of simulated time, 41 million node-channel-slots).
    fn default() -> Self {
        BenchOptions {
            nodes: 512,
            pairs: 512,
            slots: 20_000,
            warmup_slots: 2_560,
            threads: 1,
        }
    }
}

/// What a benchmark measured. Rates are per second of wall-clock time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BenchReport {
    pub nodes: u16,
    pub channels: u8,
    pub pairs: usize,
    pub slots: u64,
    pub warmup_slots: u64,
    /// Wall-clock time of the timed slots of the simulator on the node engine (the fields
    /// without `fast_` are the node engine's).
    pub wall_s: f64,
    pub node_channel_slots_per_s: f64,
    /// Wall-clock nanoseconds per node-channel-slot.
    pub ns_per_node_channel_slot: f64,
    /// Data cells transmitted (first and second hops) per second.
    pub cells_per_s: f64,
    pub reference_wall_s: f64,
    pub reference_node_channel_slots_per_s: f64,
    /// Simulator rate over reference rate (below 1: slower than the reference).
    pub ratio_to_reference: f64,
    /// The process's peak resident set (VmHWM in /proc/self/status) after both engines ran
    /// and before the reference loop allocates its rings, if the system says: the larger of
    /// the two engines' memory plus whatever the process held before.
    pub peak_rss_bytes: Option<u64>,
    /// The fast engine, which runs first: wall-clock time of the timed slots, its rate, its
    /// rate over the reference's, and the peak resident set after it ran.
    pub fast_wall_s: f64,
    pub fast_node_channel_slots_per_s: f64,
    pub fast_ratio_to_reference: f64,
    pub fast_peak_rss_bytes: Option<u64>,
    /// The fast engine on `threads` threads (when more than one): its wall-clock time, rate,
    /// and speed-up over its own one-thread rate.
    pub threads: usize,
    pub parallel_wall_s: Option<f64>,
    pub parallel_node_channel_slots_per_s: Option<f64>,
    pub parallel_speedup: Option<f64>,
    /// What the parallel engine pays per slot besides the work: the mean wall-clock time of
    /// one slot's hand-over to a pool of `threads − 1` threads and back with nothing to do, in
    /// microseconds; and the one-thread work of a slot, for the model in BENCHMARKS.md.
    pub slot_sync_us: Option<f64>,
    pub slot_work_us: f64,
    /// Payload delivered in order per destination of a flow, over the timed slots.
    pub avg_destination_gbps: f64,
    /// The same as a fraction of what a node can receive (a full cell on every channel in
    /// every slot): about one half is the max-min share of a full permutation (§6.2, §7.2).
    pub avg_destination_share: f64,
}

/// Flows far too long to finish within any benchmark.
const HUGE_BYTES: u64 = 1 << 50;
const SEED: u64 = 1;

/// The paper's rack (`RackConfig::paper`) on `nodes` nodes, with as many of its 4 channels as
/// a small rack's schedule can use: below about 16 nodes, 4 channels leave too few columns or
/// too short an epoch to absorb the 2-slot delay, so the benchmarks step down a channel at a
/// time, and at last to a 1-slot delay (the report says which rack ran).
pub(crate) fn paper_rack_for(nodes: u16) -> Result<RackConfig, FabricError> {
    let paper = RackConfig::paper(nodes);
    let mut last = None;
    for delay_slots in [paper.delay_slots, 1] {
        for channels in (1..=paper.channels).rev() {
            let cfg = RackConfig {
                channels,
                delay_slots,
                ..paper.clone()
            };
            match cfg.validate(&shoal_fabric::config::NO_KEYS) {
                Ok(_) => return Ok(cfg),
                Err(e) => last = Some(e),
            }
        }
    }
    Err(FabricError(format!(
        "bench: no rack of {nodes} nodes: {}",
        last.map_or_else(String::new, |e| e.to_string())
    )))
}

/// Runs the simulator and the reference loop once each, in this process. Fails for options or
/// a rack that cannot run (no pairs, more pairs than nodes, no timed slot, a node count the
/// schedule or the Clos cannot serve).
pub fn run(opts: &BenchOptions) -> Result<BenchReport, FabricError> {
    if opts.pairs == 0 || opts.pairs > opts.nodes as usize {
        return Err(FabricError(format!(
            "bench: pairs must be 1 to {} (the node count), got {}",
            opts.nodes, opts.pairs
        )));
    }
    if opts.slots == 0 {
        return Err(FabricError("bench: slots must be at least 1".into()));
    }
    let cfg = paper_rack_for(opts.nodes)?;
    let (channels, slot) = (cfg.channels, cfg.slot);
    // What a destination could receive if every slot brought it a full cell on every channel.
    let ideal_gbps =
        (channels as u64 * cfg.payload_bytes() as u64 * 8) as f64 / slot.0 as f64 * 1e3;
    let rack = rack_for(&cfg, Engine::Node)?;
    let flows = patterns::permutation(
        opts.nodes as usize,
        opts.pairs,
        HUGE_BYTES,
        Time::ZERO,
        &mut stream(SEED, "bench.workload", 0),
    );

    let fast = time_engine(&rack_for(&cfg, Engine::Fast)?, &flows, opts)?;
    let fast_peak_rss_bytes = peak_rss_bytes();
    let parallel = match opts.threads {
        0 => return Err(FabricError("bench: threads must be at least 1".into())),
        1 => None,
        t => {
            let mut rack = rack_for(&cfg, Engine::Fast)?;
            rack.set_threads(t);
            let timed = time_engine(&rack, &flows, opts)?;
            if (timed.cells, timed.bytes) != (fast.cells, fast.bytes) {
                return Err(FabricError(format!(
                    "bench: the fast engine on {t} threads differs from one thread: {} data \
                     cells and {} B delivered against {} and {} B",
                    timed.cells, timed.bytes, fast.cells, fast.bytes
                )));
            }
            Some(timed.wall_s)
        }
    };
    let slot_sync_us = match opts.threads {
        1 => None,
        t => {
            // The engine's own mechanism (`fast.rs`): a pool kept for the run, one scope per
            // slot whose other parts go to the pool while the caller runs the first.
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t - 1)
                .build()
                .map_err(|e| FabricError(format!("bench: cannot start {t} threads: {e}")))?;
            const ROUNDS: u32 = 20_000;
            let wall = wall_seconds(|| {
                for _ in 0..ROUNDS {
                    pool.in_place_scope(|scope| {
                        for _ in 1..t {
                            scope.spawn(|_| {
                                std::hint::black_box(0);
                            });
                        }
                    });
                }
            });
            Some(wall / ROUNDS as f64 * 1e6)
        }
    };
    let node = time_engine(&rack_for(&cfg, Engine::Node)?, &flows, opts)?;
    // Measured before the reference runs, so that it is the simulators'.
    let peak_rss_bytes = peak_rss_bytes();
    if (fast.cells, fast.bytes) != (node.cells, node.bytes) {
        return Err(FabricError(format!(
            "bench: the engines differ: fast sent {} data cells and delivered {} B, node {} and {} B",
            fast.cells, fast.bytes, node.cells, node.bytes
        )));
    }
    let wall_s = node.wall_s;

    let mut reference = Reference::new(&rack.table, &flows);
    reference.run(opts.warmup_slots);
    let reference_wall_s = wall_seconds(|| reference.run(opts.slots));
    // Its work must stay observable, or the optimiser could drop it.
    std::hint::black_box(reference.delivered);

    let ncs = opts.slots as f64 * opts.nodes as f64 * channels as f64;
    let rate = ncs / wall_s;
    let reference_rate = ncs / reference_wall_s;
    let fast_rate = ncs / fast.wall_s;
    let window = Dur(slot.0 * opts.slots);
    let delivered_bits = node.bytes as f64 * 8.0;
    let gbps = delivered_bits / window.as_secs_f64() / 1e9 / opts.pairs as f64;
    Ok(BenchReport {
        nodes: opts.nodes,
        channels,
        pairs: opts.pairs,
        slots: opts.slots,
        warmup_slots: opts.warmup_slots,
        wall_s,
        node_channel_slots_per_s: rate,
        ns_per_node_channel_slot: 1e9 / rate,
        cells_per_s: node.cells as f64 / wall_s,
        reference_wall_s,
        reference_node_channel_slots_per_s: reference_rate,
        ratio_to_reference: rate / reference_rate,
        peak_rss_bytes,
        avg_destination_gbps: gbps,
        avg_destination_share: gbps / ideal_gbps,
        fast_wall_s: fast.wall_s,
        fast_node_channel_slots_per_s: fast_rate,
        fast_ratio_to_reference: fast_rate / reference_rate,
        fast_peak_rss_bytes,
        threads: opts.threads,
        parallel_wall_s: parallel,
        parallel_node_channel_slots_per_s: parallel.map(|w| ncs / w),
        parallel_speedup: parallel.map(|w| fast.wall_s / w),
        slot_sync_us,
        slot_work_us: fast.wall_s / opts.slots as f64 * 1e6,
    })
}

fn rack_for(cfg: &RackConfig, engine: Engine) -> Result<ShoalRack, FabricError> {
    let cfg = RackConfig {
        engine,
        ..cfg.clone()
    };
    ShoalRack::new(cfg, SEED).map_err(|e| FabricError(e.to_string()))
}

/// One engine's timed window.
struct Timed {
    wall_s: f64,
    /// Data cells sent and bytes delivered in the window.
    cells: u64,
    bytes: u64,
}

/// Warms `rack` up under `flows` and times `opts.slots` slots of it.
fn time_engine(
    rack: &ShoalRack,
    flows: &[Flow],
    opts: &BenchOptions,
) -> Result<Timed, FabricError> {
    let mut sim = rack.start(RunLimits::default())?;
    let mut pending = IterSource::new(flows.iter().copied());
    advance(&mut sim, &mut pending, opts.warmup_slots)?;
    let before = sim.totals();
    let mut outcome = Ok(());
    let wall_s = wall_seconds(|| outcome = advance(&mut sim, &mut pending, opts.slots));
    outcome?;
    let after = sim.totals();
    Ok(Timed {
        wall_s,
        cells: after.data_cells_sent - before.data_cells_sent,
        bytes: after.bytes_delivered - before.bytes_delivered,
    })
}

/// Runs `slots` slots of `sim`, which must not end.
fn advance(sim: &mut Sim<'_>, flows: &mut dyn FlowSource, slots: u64) -> Result<(), FabricError> {
    for _ in 0..slots {
        if sim.step(flows, &mut NoProgress)? == Step::Done {
            return Err(FabricError("bench: the run ended early".into()));
        }
    }
    Ok(())
}

impl fmt::Display for BenchReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = |x: f64| x / 1e6;
        writeln!(
            f,
            "shoal bench: {} nodes x {} channels, {} pairs, {} slots timed after {} of warm-up",
            self.nodes, self.channels, self.pairs, self.slots, self.warmup_slots
        )?;
        writeln!(
            f,
            "  fast       {:>9.2} M node-channel-slots/s  ({:.1} ns each, {:.2} s); fast/reference = {:.3}",
            m(self.fast_node_channel_slots_per_s),
            1e9 / self.fast_node_channel_slots_per_s,
            self.fast_wall_s,
            self.fast_ratio_to_reference
        )?;
        if let (Some(rate), Some(wall), Some(up)) = (
            self.parallel_node_channel_slots_per_s,
            self.parallel_wall_s,
            self.parallel_speedup,
        ) {
            writeln!(
                f,
                "  fast x{:<3}  {:>9.2} M node-channel-slots/s  ({:.1} ns each, {:.2} s); {:.2}x one thread",
                self.threads,
                m(rate),
                1e9 / rate,
                wall,
                up
            )?;
        }
        if let Some(sync) = self.slot_sync_us {
            writeln!(
                f,
                "  per slot   {:.1} us of work on one thread, {:.1} us to start and join {} threads",
                self.slot_work_us,
                sync,
                self.threads - 1
            )?;
        }
        writeln!(
            f,
            "  node       {:>9.2} M node-channel-slots/s  ({:.1} ns each, {:.2} s, {:.2} M data cells/s)",
            m(self.node_channel_slots_per_s),
            self.ns_per_node_channel_slot,
            self.wall_s,
            m(self.cells_per_s)
        )?;
        writeln!(
            f,
            "  reference  {:>9.2} M node-channel-slots/s  ({:.2} s); node/reference = {:.3}",
            m(self.reference_node_channel_slots_per_s),
            self.reference_wall_s,
            self.ratio_to_reference
        )?;
        let mib = |r: Option<u64>| {
            r.map_or("unknown".to_string(), |b| {
                format!("{:.0} MiB", b as f64 / 1048576.0)
            })
        };
        let (fast_rss, rss) = (mib(self.fast_peak_rss_bytes), mib(self.peak_rss_bytes));
        write!(
            f,
            "  peak RSS   {fast_rss} after fast, {rss} after both; destinations receive {:.2} Gb/s on average ({:.1}% of the ideal)",
            self.avg_destination_gbps,
            100.0 * self.avg_destination_share
        )
    }
}

/// A cell as the reference moves it: destination, source, sequence number and payload length,
/// 16 bits each, packed in one word as a simulator would keep a queued cell header.
#[derive(Clone, Copy, Default)]
struct RefCell(u64);

impl RefCell {
    fn new(dst: u16, src: u16, seq: u16, len: u16) -> Self {
        RefCell(dst as u64 | (src as u64) << 16 | (seq as u64) << 32 | (len as u64) << 48)
    }

    fn dst(self) -> usize {
        (self.0 & 0xffff) as usize
    }

    fn len(self) -> u64 {
        self.0 >> 48
    }
}

const RING: usize = 3;

/// A FIFO of at most `RING` cells, half a cache line.
#[derive(Clone, Copy, Default)]
#[repr(align(32))]
struct Ring {
    head: u16,
    len: u16,
    cells: [RefCell; RING],
}

/// The reference loop: see the module documentation.
struct Reference<'t> {
    table: &'t PeerTable,
    n: usize,
    /// `[node][peer]`.
    rings: Vec<Ring>,
    /// Per node: the destination of its flow, or `u16::MAX`.
    dst: Vec<u16>,
    seq: Vec<u16>,
    slot: u64,
    delivered: u64,
}

impl<'t> Reference<'t> {
    fn new(table: &'t PeerTable, flows: &[Flow]) -> Self {
        let n = table.nodes();
        let mut dst = vec![u16::MAX; n];
        for f in flows {
            dst[f.src.idx()] = f.dst.0;
        }
        Reference {
            table,
            n,
            rings: vec![Ring::default(); n * n],
            dst,
            seq: vec![0; n],
            slot: 0,
            delivered: 0,
        }
    }

    fn run(&mut self, slots: u64) {
        let table = self.table;
        let channels = table.channels();
        for _ in 0..slots {
            for (i, row) in table.peers(self.slot).chunks_exact(channels).enumerate() {
                for &j in row {
                    if j != IDLE {
                        self.transmit(i, j as usize);
                    }
                }
            }
            self.slot += 1;
        }
    }

    #[inline]
    fn transmit(&mut self, i: usize, j: usize) {
        let n = self.n;
        let ring = &mut self.rings[i * n + j];
        if ring.len == 0 && self.dst[i] != u16::MAX {
            ring.cells[ring.head as usize] = RefCell::new(self.dst[i], i as u16, self.seq[i], 56);
            ring.len = 1;
            self.seq[i] = self.seq[i].wrapping_add(1);
        }
        if ring.len == 0 {
            return;
        }
        let cell = ring.cells[ring.head as usize];
        let k = cell.dst();
        if k == j {
            self.delivered += cell.len();
        } else {
            let next = &mut self.rings[j * n + k];
            if next.len as usize == RING {
                // No room at the next hop: the cell waits (never happens under a permutation,
                // where each ring receives at most one cell per epoch and sends one).
                return;
            }
            next.cells[(next.head as usize + next.len as usize) % RING] = cell;
            next.len += 1;
        }
        let ring = &mut self.rings[i * n + j];
        ring.head = ((ring.head as usize + 1) % RING) as u16;
        ring.len -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_count_gets_a_rack_with_as_many_channels_as_fit() {
        let mut channels_seen = Vec::new();
        for nodes in 2..=80u16 {
            let cfg = paper_rack_for(nodes).unwrap_or_else(|e| panic!("{nodes} nodes: {e}"));
            assert!(cfg.validate(&shoal_fabric::config::NO_KEYS).is_ok());
            // Never fewer channels than a smaller rack managed, and the paper's 4 soon.
            if let Some(&last) = channels_seen.last() {
                assert!(
                    cfg.channels >= last,
                    "{nodes} nodes: {} channels",
                    cfg.channels
                );
            }
            channels_seen.push(cfg.channels);
        }
        assert_eq!(paper_rack_for(16).expect("a rack").channels, 4);
        assert_eq!(paper_rack_for(512).expect("a rack"), RackConfig::paper(512));
    }

    #[test]
    fn a_small_bench_runs_and_delivers_about_half_of_a_node() {
        let report = run(&BenchOptions {
            nodes: 32,
            pairs: 32,
            slots: 2_000,
            warmup_slots: 400,
            threads: 2,
        })
        .unwrap();
        assert!(report.node_channel_slots_per_s > 0.0);
        assert!(report.reference_node_channel_slots_per_s > 0.0);
        assert!(report.fast_node_channel_slots_per_s > 0.0);
        assert!(report.parallel_speedup.is_some_and(|x| x > 0.0));
        assert!(report.slot_sync_us.is_some_and(|x| x > 0.0));
        assert!(
            (0.4..0.6).contains(&report.avg_destination_share),
            "{report}"
        );
        assert!(report.to_string().contains("reference"));
    }
}
