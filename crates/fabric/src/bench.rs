//! What every fabric's benchmark needs from the machine: a wall clock around the timed run and
//! the process's peak memory, and the bare event queue's rate to compare with.

use crate::{Fabric, FabricError, NoProgress, RunLimits, RunOutput};
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

/// A scenario run once under the wall clock, with what every fabric's report takes from it.
pub struct TimedRun {
    pub scenario: String,
    pub origin: String,
    pub hosts: usize,
    pub out: RunOutput,
    pub wall_s: f64,
    pub simulated_ms: f64,
    /// Mean payload rate per host over the measured span (`run.measure_from_us` to the end),
    /// in Gb/s.
    pub goodput_gbps_per_host: f64,
}

impl ScenarioRun<'_> {
    /// Runs the scenario once, timed; it must set `run.until_us`, since a benchmark times a
    /// fixed simulated span.
    pub fn time(self) -> Result<TimedRun, FabricError> {
        let Some(end) = self.limits.until else {
            return Err(FabricError(format!(
                "{}: the scenario sets no run.until_us: a benchmark times a fixed simulated span",
                self.origin
            )));
        };
        let from = self.limits.measure_from.unwrap_or(Time::ZERO);
        let mut outcome = Err(FabricError("not run".into()));
        let (fabric, flows, limits) = (self.fabric, self.flows, self.limits);
        let wall_s = wall_seconds(|| outcome = fabric.run(flows, limits, &mut NoProgress));
        let out = outcome?;
        let secs = end.0.saturating_sub(from.0) as f64 * 1e-12;
        let bits = out.measured_flow_bytes.iter().sum::<u64>() as f64 * 8.0;
        Ok(TimedRun {
            goodput_gbps_per_host: bits / secs / 1e9 / self.hosts as f64,
            scenario: self.scenario,
            origin: self.origin,
            hosts: self.hosts,
            out,
            wall_s,
            simulated_ms: end.0 as f64 * 1e-9,
        })
    }
}

impl TimedRun {
    /// The run's counter `key`, or an error naming it.
    pub fn counter(&self, key: &str) -> Result<u64, FabricError> {
        self.out.counters.get(key).copied().ok_or_else(|| {
            FabricError(format!(
                "{}: the run reported no {key:?} counter",
                self.origin
            ))
        })
    }
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
