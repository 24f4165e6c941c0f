//! The rack's slot clock: `CLOCK_MONOTONIC`, which every process of the machine (and of every
//! network namespace) reads alike, so that processes started apart agree on when slot `s` begins:
//! at `t0 + s × slot`.
//!
//! This stands in for §3.4's rack-wide synchronisation (a distributed clock plus WhiteRabbit);
//! on one host the kernel's clock is common by construction. `std::time::Instant` reads the same
//! clock but cannot be handed to another process, hence the raw nanoseconds.

use nix::time::{ClockId, clock_gettime};
use std::time::Duration;

/// Nanoseconds on `CLOCK_MONOTONIC`.
pub fn now_ns() -> u64 {
    let t = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC is always there");
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// Asks the kernel to wake this thread within a microsecond of the time it asks for, instead of
/// the default 50 µs of timer slack: slots are tens of microseconds.
pub fn tighten_timer_slack() {
    // Best effort: without it sleeps are merely coarser, which the late-slot count shows.
    let _ = nix::sys::prctl::set_timerslack(1_000);
}

/// The slot grid of one rack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotClock {
    /// `CLOCK_MONOTONIC` nanoseconds at which slot 0 begins.
    pub t0_ns: u64,
    /// Slot length in nanoseconds.
    pub slot_ns: u64,
}

impl SlotClock {
    /// When slot `s` begins.
    pub fn start_of(&self, slot: u64) -> u64 {
        self.t0_ns + slot * self.slot_ns
    }

    /// Nanoseconds since slot 0 began (0 before it).
    pub fn since_t0(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.t0_ns)
    }

    /// Sleeps until slot `slot` begins; returns how late the caller is, 0 if it was early.
    pub fn wait_for(&self, slot: u64) -> u64 {
        let start = self.start_of(slot);
        let now = now_ns();
        if now >= start {
            return now - start;
        }
        std::thread::sleep(Duration::from_nanos(start - now));
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_never_runs_backwards_and_sleeps_reach_their_slot() {
        tighten_timer_slack();
        let clock = SlotClock {
            t0_ns: now_ns(),
            slot_ns: 200_000,
        };
        let mut last = 0;
        for s in 1..5 {
            clock.wait_for(s);
            let now = now_ns();
            assert!(now >= clock.start_of(s), "woke before slot {s}");
            assert!(now >= last);
            last = now;
        }
    }
}
