//! The discrete-event engine: a monotone event queue over integer-picosecond time.
//!
//! Events are small `Copy` values chosen by the model (an enum of compact ids, never a boxed
//! closure), so the hot loop neither allocates nor dispatches dynamically; the model owns the
//! `match` that routes each event to its component. The queue is a radix heap (O(1) push, pop
//! cost set by the key distance, not the queue size: see DEPENDENCIES.md) keyed by time alone.
//! Events due at the same picosecond come out in an order the heap fixes from the sequence of
//! operations (last in, first out within a bucket): unspecified, but a pure function of what was
//! scheduled when, so a run is byte-identical for a seed. Keying by `(time, insertion number)`
//! would make ties FIFO, but the 128-bit keys made the queue 1.8x slower and the DCTCP benchmark
//! 15% slower (BENCHMARKS.md), and no model here depends on the order of simultaneous events.
//!
//! There is deliberately no peek: a radix heap may not take a key below the last one popped, so
//! looking ahead would forbid scheduling anything earlier than the event looked at. A model that
//! stops or samples at a given time schedules an event of its own for it.

use radix_heap::RadixHeapMap;
use shoal_base::Time;
use std::cmp::Reverse;

/// Pending events in time order; ties in a deterministic order (see the module doc).
pub struct EventQueue<E> {
    // radix-heap is a max-heap: `Reverse` turns it into the min-heap a simulator needs.
    heap: RadixHeapMap<Reverse<u64>, E>,
    scheduled: u64,
    now: Time,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: RadixHeapMap::new(),
            scheduled: 0,
            now: Time(0),
        }
    }

    /// The time of the last event popped (the simulation clock).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events scheduled since the queue was made (each is popped at most once, so this bounds
    /// the events processed; benchmarks report it as a rate).
    pub fn scheduled(&self) -> u64 {
        self.scheduled
    }

    /// Schedules `event` at `at`.
    ///
    /// # Panics
    /// If `at` is before the current time: an event in the past is a model bug, and accepting it
    /// would break the monotone queue's ordering silently.
    #[inline]
    pub fn schedule(&mut self, at: Time, event: E) {
        assert!(
            at >= self.now,
            "event scheduled in the past: at {} < now {}",
            at,
            self.now
        );
        self.heap.push(Reverse(at.0), event);
        self.scheduled += 1;
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let (Reverse(t), e) = self.heap.pop()?;
        self.now = Time(t);
        Some((self.now, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_come_out_together_and_in_the_same_order_every_time() {
        let order = || {
            let mut q = EventQueue::new();
            for i in 0..100u32 {
                q.schedule(Time(7 + (i % 3) as u64), i);
            }
            std::iter::from_fn(|| q.pop()).collect::<Vec<_>>()
        };
        let first = order();
        assert_eq!(first, order());
        assert!(first.windows(2).all(|w| w[0].0 <= w[1].0));
        let mut ids: Vec<u32> = first.iter().map(|&(_, e)| e).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..100).collect::<Vec<_>>());
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn an_event_in_the_past_is_refused() {
        let mut q = EventQueue::new();
        q.schedule(Time(10), ());
        q.pop();
        q.schedule(Time(9), ());
    }

    proptest! {
        /// Against a reference: everything scheduled, sorted by time, where each event may
        /// schedule a follow-up at a random later time (the hold model of a simulator). Events
        /// come out in time order, each exactly once.
        #[test]
        fn pops_every_event_once_in_time_order(
            initial in prop::collection::vec(0u64..1_000, 1..200),
            follow in prop::collection::vec(prop::option::of(0u64..500), 0..400),
        ) {
            let mut q = EventQueue::new();
            let mut all: Vec<(u64, usize)> = Vec::new();
            for &t in &initial {
                q.schedule(Time(t), all.len());
                all.push((t, all.len()));
            }
            let mut popped = Vec::new();
            let mut follow = follow.into_iter();
            while let Some((t, id)) = q.pop() {
                popped.push((t.0, id));
                if let Some(Some(gap)) = follow.next() {
                    q.schedule(Time(t.0 + gap), all.len());
                    all.push((t.0 + gap, all.len()));
                }
            }
            prop_assert!(popped.windows(2).all(|w| w[0].0 <= w[1].0));
            popped.sort_unstable();
            all.sort_unstable();
            prop_assert_eq!(popped, all);
        }
    }
}
