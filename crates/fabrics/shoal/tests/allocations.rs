//! Principle 7: no heap allocation per cell. A counting allocator watches a steady full
//! permutation: allocations grow with the run only while queues and lists reach their high-water
//! marks, so doubling the run adds (almost) none, against hundreds of thousands of cells moved.

use shoal_base::Time;
use shoal_base::rng::stream;
use shoal_fabric::{Fabric, NoProgress, RunLimits};
use shoal_rack::{Engine, ShoalRack};
use shoal_workload::{IterSource, patterns};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    /// Allocations made by this thread: the test harness allocates on other threads (output
    /// capture, the runner), and counting those made the totals vary from run to run.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: a thread being torn down has no counter, and its allocations do not matter.
    let _ = ALLOCATIONS.try_with(|a| a.set(a.get() + 1));
}

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: the caller upholds `alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and data cells of a 64-node full permutation run for `slots` slots on `engine`.
fn run(slots: u64, engine: Engine) -> (u64, u64) {
    let cfg = shoal_rack::RackConfig {
        engine,
        ..shoal_rack::RackConfig::paper(64)
    };
    let slot = cfg.slot;
    let flows = patterns::permutation(64, 64, 1 << 40, Time::ZERO, &mut stream(9, "alloc", 0));
    let mut rack = ShoalRack::new(cfg, 1).expect("valid rack");
    let before = allocations();
    let limits = RunLimits {
        until: Some(Time(slot.0 * slots)),
        ..RunLimits::default()
    };
    let out = rack
        .run(&mut IterSource::new(flows), limits, &mut NoProgress)
        .expect("run");
    let made = allocations() - before;
    (made, out.counters["data_cells_sent"])
}

#[test]
fn steady_state_moves_cells_without_allocating() {
    for engine in [Engine::Node, Engine::Fast] {
        let (a1, c1) = run(4_000, engine);
        let (a2, c2) = run(8_000, engine);
        println!("{engine:?}: {a1} allocations for {c1} cells, {a2} for {c2}");
        assert!(c2 - c1 > 100_000, "the second half moved {} cells", c2 - c1);
        // The longer run may even allocate less (e.g. a vector's growth falling differently).
        let more = a2.saturating_sub(a1);
        assert!(
            more < 100,
            "{engine:?}: {more} more allocations for {} more cells",
            c2 - c1
        );
    }
}
