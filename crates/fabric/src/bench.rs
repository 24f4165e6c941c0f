//! What every fabric's benchmark needs from the machine: a wall clock around the timed run and
//! the process's peak memory, and the bare event queue's rate to compare with.

use crate::{Fabric, RunLimits};
use shoal_base::{Dur, Time};
use shoal_engine::EventQueue;
use shoal_workload::FlowSource;

/// A scenario to time, as `shoal run` would run it: its fabric, built, and its flows.
pub struct ScenarioRun<'a> {
    pub scenario: String,
    /// Where the scenario came from (its file), for messages.
    pub origin: String,
    pub hosts: usize,
    pub fabric: &'a mut dyn Fabric,
    pub flows: &'a mut dyn FlowSource,
    pub limits: RunLimits,
}

/// Wall-clock seconds that `f` takes.
// Models must not read clocks (clippy.toml); a benchmark exists to read one, and this is the
// only place in the libraries that does.
#[allow(clippy::disallowed_methods)]
pub fn wall_seconds(f: impl FnOnce()) -> f64 {
    let t0 = std::time::Instant::now();
    f();
    t0.elapsed().as_secs_f64()
}

/// Peak resident set of this process (VmHWM from /proc/self/status), in bytes, where the system
/// says.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The reference an event-driven fabric's benchmark is measured against: `events` events
/// through the bare event queue, each scheduling one successor `gap` (plus up to 63 ns) later,
/// with `pending` events in the queue (the hold model). A fabric passes about as many pending
/// events and as long a gap as its own runs have, so that the ratio measures the model's work,
/// not the queue's.
pub fn hold_model(events: u64, pending: u64, gap: Dur) {
    let mut q = EventQueue::new();
    for i in 0..pending {
        q.schedule(Time(i * 997), i as u32);
    }
    let mut n = 0;
    while let Some((t, e)) = q.pop() {
        n += 1;
        if n >= events {
            break;
        }
        q.schedule(t + gap + Dur((e as u64 % 64) * 1_000), e);
    }
    std::hint::black_box(q.len());
}
