//! The discrete-event engine: a monotone event queue over integer-picosecond time.
//!
//! Events are small values chosen by the model (an enum of compact ids, never a boxed
//! closure), so the hot loop neither allocates nor dispatches dynamically; the model owns the
//! `match` that routes each event to its component.
//!
//! The queue is a calendar: a ring of buckets, each covering `2^BUCKET_SHIFT` ps, with events
//! beyond the ring's horizon kept in a binary heap until the ring reaches them. Scheduling
//! appends to a bucket; the bucket the clock enters is sorted once (a stable sort, so events due
//! at the same picosecond come out in the order they were scheduled) and then read in order. A
//! simulator's events fall a few serialization or propagation times ahead, where buckets hold a
//! handful of events each, so both operations cost a few nanoseconds. The radix heap alone
//! (DEPENDENCIES.md's choice) ran the DCTCP benchmark's hold model at 16-18 M events/s with time
//! keys and half that with FIFO `(time, sequence)` keys; this calendar's numbers are in
//! BENCHMARKS.md.
//!
//! Events pop in (time, scheduling number) order exactly, and every fabric's outputs depend on
//! it: a ring bucket holds its events in scheduling order and is sorted stably by offset; an
//! event scheduled into the clock's own bucket after that sort waits in `late` and pops merged
//! by (time, number), after the sorted events of its time; far events enter the ring in (time,
//! number) order, before anything can be scheduled into their bucket directly. The property
//! tests check this against a binary heap of (time, number). Dense buckets (about 2,900 events
//! on the full Aquila clique, tens on Stardust at k = 12) made the comparison sort the
//! calendar's main cost; from `RADIX_MIN` events a bucket is sorted by a two-pass radix sort on
//! its 12-bit offset, stable and so in the same order, which took the Aquila clique's bucket
//! advance from 194 to 51 instructions per event (callgrind).
//!
//! There is deliberately no peek: a model that stops or samples at a given time schedules an
//! event of its own for it.

use shoal_base::Time;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Each bucket covers 2^12 ps = 4.1 ns. Narrow buckets keep the sort cheap where events are
/// dense: replaying the schedule/pop sequences of the htsim examples' runs (BENCHMARKS.md,
/// "Event queue, issue 21"), 2^12 took 17% fewer instructions than 2^15 on NDP (60 events per
/// 32.8 ns) and 1% more on DCTCP (14), where the clock steps through more, emptier buckets;
/// 2^11 saved 3% more on NDP but needs a ring twice as long for the same horizon.
const BUCKET_SHIFT: u32 = 12;
/// An event in a bucket keeps only its time's offset in the bucket (the low `BUCKET_SHIFT`
/// bits; the bucket gives the rest), as a `u32`: with the packet engine's 12-byte events an
/// entry takes 16 bytes instead of the 24 of a full `u64` time, a third less memory and cache
/// for the thousands of buckets filled at once.
const OFFSET_MASK: u64 = (1 << BUCKET_SHIFT) - 1;
/// Buckets in the ring: 2^12 of them cover 16.8 µs, beyond any serialization or propagation
/// time of the packet networks (a 9000 B packet takes 7.2 µs at 10 Gb/s); longer timers
/// (retransmission timeouts) wait in the far heap. A larger ring holds more memory and misses
/// the cache more (a 2^15 ring ran the DCTCP benchmark 25% slower, BENCHMARKS.md).
const RING: usize = 1 << 12;
const RING_MASK: u64 = RING as u64 - 1;
/// A drained bucket's buffer returns to the spare pool with room for at most this many events.
/// With narrow buckets thousands are filled at once, and each buffer kept the capacity of the
/// densest bucket it had held: on the NDP example's replay the queue's heap peaked at 5.9 MB
/// against 2.6 MB with 32.8 ns buckets; shrunk to 32 events it peaked at 0.9 MB (DCTCP's: 0.7
/// MB against 1.2), for 2-9% more instructions than keeping every buffer whole, and to 16 at
/// 0.5 MB for 2-6% more again. Most of the buckets filled at once hold a few events, so 16 it
/// is (BENCHMARKS.md: with the 16-byte entries, the NDP example's whole-run peak RSS is back to
/// its level before the narrow buckets). A dense bucket regrows its buffer by doubling, a
/// bounded cost per event.
const SPARE_CAP: usize = 16;
/// Buckets of at least this many events are sorted by radix (two passes of `DIGIT` bits over
/// the offset), smaller ones by comparison: on random offsets the radix sort took 0.5 of the
/// comparison sort's time from 16 events (0.2 from 48; busy machine), and the same at 8.
const RADIX_MIN: usize = 16;
const DIGIT: u32 = BUCKET_SHIFT / 2;
const RADIX: usize = 1 << DIGIT;

/// Pending events in time order, FIFO among equal times.
pub struct EventQueue<E> {
    /// The bucket the clock is in, sorted by time (offset in the bucket); `head` is the next
    /// to pop.
    current: Vec<(u32, E)>,
    head: usize,
    /// Absolute number (time >> BUCKET_SHIFT) of the bucket in `current`.
    current_bucket: u64,
    /// Events scheduled into the clock's bucket after it was sorted, ordered by (time,
    /// scheduling number); they pop merged with `current`. A sorted insert into `current`
    /// moved the rest of the bucket each time, which in a dense bucket (the Aquila clique
    /// puts tens of thousands of events in one) was most of the run time.
    late: BinaryHeap<Reverse<Far<E>>>,
    /// Ring of later buckets, each unsorted in scheduling order; bucket `b` at `b & RING_MASK`.
    /// Fixed-size arrays, so that a masked index needs no bounds check.
    ring: Box<[Vec<(u32, E)>; RING]>,
    /// One bit per ring slot: set when the slot holds events.
    occupied: [u64; RING / 64],
    /// Emptied bucket buffers, handed to the next ring slot that fills, each shrunk to
    /// `SPARE_CAP`. Left in its ring slot, every one of the 4,096 slots would grow to the
    /// densest bucket it ever held (1 GB after 20 µs of the Aquila clique with 32.8 ns buckets,
    /// which held ~40,000 events each), so buffers circulate and only as many exist as buckets
    /// are filled at once.
    spare: Vec<Vec<(u32, E)>>,
    /// The radix sort's second buffer, swapped with `current` by each pass.
    scratch: Vec<(u32, E)>,
    /// Events at or beyond `current_bucket + RING` (rare: long timers), ordered by (time,
    /// scheduling number) so they keep their order when they move into the ring.
    far: BinaryHeap<Reverse<Far<E>>>,
    len: usize,
    /// Events scheduled so far: the scheduling number of far events.
    scheduled: u64,
    now: Time,
}

/// A far-future or late event, ordered by time then scheduling number only.
struct Far<E> {
    time: u64,
    number: u64,
    event: E,
}

impl<E> PartialEq for Far<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.number) == (other.time, other.number)
    }
}

impl<E> Eq for Far<E> {}

impl<E> PartialOrd for Far<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Far<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.time, self.number).cmp(&(other.time, other.number))
    }
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            current: Vec::new(),
            head: 0,
            current_bucket: 0,
            late: BinaryHeap::new(),
            ring: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; RING / 64],
            spare: Vec::new(),
            scratch: Vec::new(),
            far: BinaryHeap::new(),
            len: 0,
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
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Schedules `event` at `at`.
    ///
    /// # Panics
    /// If `at` is before the current time: an event in the past is a model bug, and accepting it
    /// would break the queue's ordering silently.
    // Always inlined, as are `pop` and `push_ring`: left to the compiler they became calls
    // whose register saves and restores cost a quarter of the bare queue's instructions (the
    // hold model of `shoal_fabric::bench`).
    #[inline(always)]
    pub fn schedule(&mut self, at: Time, event: E) {
        assert!(
            at >= self.now,
            "event scheduled in the past: at {} < now {}",
            at,
            self.now
        );
        let t = at.0;
        let bucket = t >> BUCKET_SHIFT;
        if bucket == self.current_bucket {
            // After every pending event due at or before `t`: FIFO among ties. Everything in
            // `current` was scheduled before this, so the number orders it after those too.
            self.late.push(Reverse(Far {
                time: t,
                number: self.scheduled,
                event,
            }));
        } else if bucket < self.current_bucket + RING as u64 {
            self.push_ring((bucket & RING_MASK) as usize, t, event);
        } else {
            self.far.push(Reverse(Far {
                time: t,
                number: self.scheduled,
                event,
            }));
        }
        self.len += 1;
        self.scheduled += 1;
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        if self.head == self.current.len() && self.late.is_empty() && !self.advance() {
            return None;
        }
        // The earlier of the sorted bucket's next and the earliest late event; at equal
        // times the bucket's, scheduled first.
        let start = self.current_bucket << BUCKET_SHIFT;
        let late_first = match (self.current.get(self.head), self.late.peek()) {
            (Some(&(offset, _)), Some(Reverse(l))) => l.time < start | offset as u64,
            (None, _) => true,
            (Some(_), None) => false,
        };
        let (t, e) = if late_first {
            let Reverse(l) = self.late.pop().expect("a late event");
            (l.time, l.event)
        } else {
            let (offset, e) = self.current[self.head];
            self.head += 1;
            (start | offset as u64, e)
        };
        self.len -= 1;
        self.now = Time(t);
        Some((self.now, e))
    }

    /// Adds an event to ring slot `slot`, giving an empty slot a spare buffer.
    #[inline(always)]
    fn push_ring(&mut self, slot: usize, t: u64, event: E) {
        let bit = 1 << (slot % 64);
        if self.occupied[slot / 64] & bit == 0 {
            self.occupied[slot / 64] |= bit;
            if let Some(buf) = self.spare.pop() {
                debug_assert!(self.ring[slot].is_empty() && buf.is_empty());
                self.ring[slot] = buf;
            }
        }
        self.ring[slot].push(((t & OFFSET_MASK) as u32, event));
    }

    /// Moves the clock's bucket to the next one holding events; false if there are none.
    fn advance(&mut self) -> bool {
        debug_assert!(self.head == self.current.len() && self.late.is_empty());
        self.current.clear();
        self.head = 0;
        if self.len == 0 {
            return false;
        }
        let next = self.next_ring_bucket();
        let far_next = self.far_bucket();
        let bucket = match (next, far_next) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => unreachable!("{} events pending but none found", self.len),
        };
        self.current_bucket = bucket;
        let slot = (bucket & RING_MASK) as usize;
        if next == Some(bucket) {
            let filled = std::mem::take(&mut self.ring[slot]);
            let mut drained = std::mem::replace(&mut self.current, filled);
            if drained.capacity() > 0 {
                drained.shrink_to(SPARE_CAP);
                self.spare.push(drained);
            }
            self.occupied[slot / 64] &= !(1 << (slot % 64));
        }
        // Far events whose bucket has come within the ring's reach move in, in time order.
        let horizon = bucket + RING as u64;
        while let Some(Reverse(far)) = self.far.peek() {
            let (t, e) = (far.time, far.event);
            let b = t >> BUCKET_SHIFT;
            if b >= horizon {
                break;
            }
            self.far.pop();
            if b == bucket {
                self.current.push(((t & OFFSET_MASK) as u32, e));
            } else {
                self.push_ring((b & RING_MASK) as usize, t, e);
            }
        }
        // Stable: equal times keep their scheduling order. Buckets often fill in time order
        // already (one component's events), and checking is far cheaper than sorting.
        if !self.current.is_sorted_by_key(|&(offset, _)| offset) {
            if self.current.len() < RADIX_MIN {
                self.current.sort_by_key(|&(offset, _)| offset);
            } else {
                radix_sort(&mut self.current, &mut self.scratch);
            }
        }
        true
    }

    /// The first occupied ring bucket after the current one, as an absolute bucket number.
    fn next_ring_bucket(&self) -> Option<u64> {
        let here = (self.current_bucket & RING_MASK) as usize;
        let start = (here + 1) % RING;
        let words = self.occupied.len();
        // The current slot's bit is never set, so one lap from `start` sees every bucket; the
        // start word is looked at twice, first above `start`, at the end below it.
        for i in 0..=words {
            let w = (start / 64 + i) % words;
            let mut bits = self.occupied[w];
            if i == 0 {
                bits &= !0u64 << (start % 64);
            }
            if i == words {
                bits &= !(!0u64 << (start % 64));
            }
            if bits != 0 {
                let slot = w * 64 + bits.trailing_zeros() as usize;
                let offset = (slot + RING - here) % RING;
                return Some(self.current_bucket + offset as u64);
            }
        }
        None
    }

    fn far_bucket(&self) -> Option<u64> {
        self.far.peek().map(|Reverse(f)| f.time >> BUCKET_SHIFT)
    }
}

/// Sorts `events` by offset, stably (the order a stable comparison sort gives), in two
/// counting passes over the offset's halves, through `scratch`; a pass whose digit every event
/// shares is skipped. `scratch` keeps its stale events between calls (each pass overwrites
/// all `n`), so only its growth is filled.
fn radix_sort<E: Copy>(events: &mut Vec<(u32, E)>, scratch: &mut Vec<(u32, E)>) {
    let mut counts = [[0u32; RADIX]; 2];
    for &(offset, _) in events.iter() {
        counts[0][offset as usize % RADIX] += 1;
        counts[1][(offset >> DIGIT) as usize % RADIX] += 1;
    }
    let n = events.len();
    scratch.resize(n, events[0]);
    for (pass, count) in counts.iter_mut().enumerate() {
        let shift = pass as u32 * DIGIT;
        if count[(events[0].0 >> shift) as usize % RADIX] as usize == n {
            continue;
        }
        let mut start = 0;
        for c in count.iter_mut() {
            (*c, start) = (start, start + *c);
        }
        for &e in events.iter() {
            let c = &mut count[(e.0 >> shift) as usize % RADIX];
            scratch[*c as usize] = e;
            *c += 1;
        }
        std::mem::swap(events, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_come_out_in_scheduling_order() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            q.schedule(Time(7), i);
        }
        q.schedule(Time(3), 1000);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        let mut expect = vec![1000];
        expect.extend(0..100);
        assert_eq!(order, expect);
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn an_event_in_the_past_is_refused() {
        let mut q = EventQueue::new();
        q.schedule(Time(10), ());
        q.pop();
        q.schedule(Time(9), ());
    }

    /// A steady stream of dense buckets, each event rescheduling itself a few buckets ahead:
    /// the buffers in use stay as many as the buckets filled at once, however long it runs
    /// (each ring slot kept the capacity of its densest bucket before, so memory grew with the
    /// simulated time until all 4,096 slots had been used).
    #[test]
    fn bucket_buffers_circulate_instead_of_piling_up_in_the_ring() {
        let bucket = 1u64 << BUCKET_SHIFT;
        let mut q = EventQueue::new();
        for i in 0..200u64 {
            q.schedule(Time(i * 7), i);
        }
        let mut n = 0u64;
        while let Some((t, e)) = q.pop() {
            n += 1;
            if n == 2_000_000 {
                break;
            }
            q.schedule(Time(t.0 + bucket * (1 + e % 3)), e);
        }
        let buffers = q
            .ring
            .iter()
            .chain(&q.spare)
            .filter(|b| b.capacity() > 0)
            .count();
        // 2 million events crossed about 20,000 buckets, several times round the ring.
        assert!(q.now().0 / bucket > 2 * RING as u64);
        assert!(buffers <= 6, "{buffers} bucket buffers allocated");
    }

    /// A dense bucket's buffer does not keep its size once drained: the spare pool holds at
    /// most `SPARE_CAP` events per buffer, so memory follows the events pending, not the
    /// densest moment of the run.
    #[test]
    fn drained_buffers_shrink_before_they_are_reused() {
        let mut q = EventQueue::new();
        for b in 1..=3u64 {
            for i in 0..10_000u64 {
                q.schedule(Time((b << BUCKET_SHIFT) + i % 7), i);
            }
        }
        q.schedule(Time(10 << BUCKET_SHIFT), 0);
        let mut n = 0;
        while q.pop().is_some_and(|(t, _)| t.0 < 10 << BUCKET_SHIFT) {
            n += 1;
        }
        assert_eq!(n, 30_000);
        assert!(!q.spare.is_empty());
        assert!(q.spare.iter().all(|b| b.capacity() <= SPARE_CAP));
    }

    #[test]
    fn far_events_keep_their_order_when_they_enter_the_ring() {
        let mut q = EventQueue::new();
        let far = Time(1 << 40); // about 1.1 s: far beyond the ring
        q.schedule(far, 1u32);
        q.schedule(Time(5), 0);
        q.schedule(far, 2);
        q.schedule(Time(far.0 - 1), 3);
        assert_eq!(q.pop(), Some((Time(5), 0)));
        // From inside the ring's reach, an event for the same far time queues behind them.
        q.schedule(Time(far.0 - 10), 4);
        let rest: Vec<(Time, u32)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            rest,
            [
                (Time(far.0 - 10), 4),
                (Time(far.0 - 1), 3),
                (far, 1),
                (far, 2)
            ]
        );
        assert!(q.is_empty());
    }

    /// Gaps from none (an event at the clock's time) and sub-bucket to far beyond the ring.
    fn gap() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0u64),
            0u64..500,
            0u64..1 << 20,
            0u64..1 << 34,
            0u64..1 << 42
        ]
    }

    /// One step of a random use of the queue.
    #[derive(Clone, Debug)]
    enum Op {
        /// Schedule `n` events at `gap` after the clock (several at one time: ties).
        Schedule { gap: u64, n: usize },
        /// Schedule one event at each gap after the clock: a dense, unsorted bucket or two,
        /// sorted by radix when they hold `RADIX_MIN` events or more.
        Burst(Vec<u64>),
        /// Pop up to this many events.
        Pop(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few distinct gaps in a burst make ties; up to two buckets' width spreads it.
        let burst_gap = prop_oneof![0u64..8, 0u64..2 << BUCKET_SHIFT];
        prop_oneof![
            4 => (gap(), 1usize..4).prop_map(|(gap, n)| Op::Schedule { gap, n }),
            1 => prop::collection::vec(burst_gap, 1..300).prop_map(Op::Burst),
            4 => (1usize..40).prop_map(Op::Pop),
        ]
    }

    proptest! {
        /// Against a reference queue (a binary heap of time and scheduling number) over random
        /// interleavings of schedules and pops: the same events pop in the same order, ties
        /// included, with events landing in the clock's own bucket while it drains (at the
        /// clock's time too), dense buckets, the ring and the far heap.
        #[test]
        fn pops_as_a_reference_queue_does(ops in prop::collection::vec(op(), 1..400)) {
            let mut q = EventQueue::new();
            let mut reference = BinaryHeap::new();
            let mut number = 0u32;
            for op in ops {
                let gaps = match op {
                    Op::Schedule { gap, n } => vec![gap; n],
                    Op::Burst(gaps) => gaps,
                    Op::Pop(n) => {
                        for _ in 0..n {
                            let expect = reference.pop().map(|Reverse((t, e))| (Time(t), e));
                            prop_assert_eq!(q.pop(), expect);
                        }
                        Vec::new()
                    }
                };
                for gap in gaps {
                    let t = q.now().0 + gap;
                    q.schedule(Time(t), number);
                    reference.push(Reverse((t, number)));
                    number += 1;
                }
                prop_assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse((t, e))) = reference.pop() {
                prop_assert_eq!(q.pop(), Some((Time(t), e)));
            }
            prop_assert_eq!(q.pop(), None);
        }

        /// The radix sort orders as the stable comparison sort does, ties in their order.
        #[test]
        fn radix_sort_is_the_stable_sort(
            offsets in prop_oneof![
                prop::collection::vec(0u32..4, 1..300),
                prop::collection::vec(0u32..1 << DIGIT, 1..300),
                prop::collection::vec(0u32..1 << BUCKET_SHIFT, 1..300),
            ],
            stale in 0usize..400,
        ) {
            let mut events: Vec<(u32, usize)> =
                offsets.into_iter().enumerate().map(|(i, o)| (o, i)).collect();
            let mut expect = events.clone();
            expect.sort_by_key(|&(offset, _)| offset);
            // A scratch buffer left longer or shorter by an earlier bucket.
            radix_sort(&mut events, &mut vec![(0, usize::MAX); stale]);
            prop_assert_eq!(events, expect);
        }

        /// Against a reference: a stable sort of everything scheduled, where each event may
        /// schedule a follow-up at a random later time (the hold model of a simulator).
        #[test]
        fn pops_in_time_then_scheduling_order(
            initial in prop::collection::vec(gap(), 1..200),
            follow in prop::collection::vec(prop::option::of(gap()), 0..400),
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
                prop_assert_eq!(q.len(), all.len() - popped.len());
            }
            // A stable sort by time keeps scheduling order among ties.
            all.sort_by_key(|&(t, _)| t);
            prop_assert_eq!(popped, all);
        }
    }
}
