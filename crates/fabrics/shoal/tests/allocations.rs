//! Principle 7: no heap allocation per cell. A counting allocator watches a steady full
//! permutation: allocations grow with the run only while queues and lists reach their high-water
//! marks, so doubling the run adds (almost) none, against hundreds of thousands of cells moved.

use shoal_base::Time;
use shoal_base::rng::stream;
use shoal_fabric::{Fabric, NoProgress, RunLimits};
use shoal_rack::ShoalRack;
use shoal_workload::{IterSource, patterns};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations and data cells of a 64-node full permutation run for `slots` slots.
fn run(slots: u64) -> (u64, u64) {
    let cfg = shoal_rack::RackConfig::paper(64);
    let slot = cfg.slot;
    let flows = patterns::permutation(64, 64, 1 << 40, Time::ZERO, &mut stream(9, "alloc", 0));
    let mut rack = ShoalRack::new(cfg, 1).expect("valid rack");
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let limits = RunLimits {
        until: Some(Time(slot.0 * slots)),
        ..RunLimits::default()
    };
    let out = rack
        .run(&mut IterSource::new(flows), limits, &mut NoProgress)
        .expect("run");
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    (allocations, out.counters["data_cells_sent"])
}

#[test]
fn steady_state_moves_cells_without_allocating() {
    let (a1, c1) = run(4_000);
    let (a2, c2) = run(8_000);
    println!("{a1} allocations for {c1} cells, {a2} for {c2}");
    assert!(c2 - c1 > 100_000, "the second half moved {} cells", c2 - c1);
    assert!(
        a2 - a1 < 100,
        "{} more allocations for {} more cells",
        a2 - a1,
        c2 - c1
    );
}
