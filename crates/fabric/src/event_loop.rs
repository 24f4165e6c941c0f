//! The run loop every event-driven fabric shares, written once: the "flows are due" event armed
//! through the [`FlowBook`], `Stop` at `RunLimits::until`, a `Sample` every
//! `RunLimits::sample_every` from time 0, due flows opened (a flow of no bytes completes when it
//! starts), progress every 2^16 events, and the stop once `completed_flows` have completed. A
//! fabric implements [`EventFabric`]: how its network moves bytes, as events of its own type on
//! a [`Calendar`] it owns, and [`run`] drives it.
//!
//! Equal times pop in the order they were scheduled, so the order of every schedule call is
//! part of a fabric's results; the loop's order is fixed here (see [`EventFabric::FLOWS_FIRST`]).

use crate::{FabricError, FlowBook, Progress, RunOutput};
use shoal_base::Time;
use shoal_engine::EventQueue;
use shoal_workload::{Flow, FlowSource};

/// Progress is reported every this many events: often enough that a fabric whose events are
/// slow (XFabric's fluid model re-solves its flows' rates on each, milliseconds with thousands
/// of flows open) still shows a line every few seconds; a report costs the CLI one clock read.
const PROGRESS_EVERY: u64 = 1 << 10;

/// An event on a fabric's calendar: one of the loop's own or one of the model's.
#[derive(Clone, Copy, Debug)]
pub enum Event<E> {
    /// Flows are due.
    Flows,
    Sample,
    Stop,
    Model(E),
}

/// The discrete-event queue of a fabric's run: the model schedules its own events on it, the
/// loop its `Flows`, `Sample` and `Stop`.
pub struct Calendar<E> {
    q: EventQueue<Event<E>>,
}

impl<E: Copy> Default for Calendar<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> Calendar<E> {
    pub fn new() -> Self {
        Calendar {
            q: EventQueue::new(),
        }
    }

    /// Schedules the model's `event` at `at` (not before [`Calendar::now`]).
    #[inline]
    pub fn schedule(&mut self, at: Time, event: E) {
        self.q.schedule(at, Event::Model(event));
    }

    /// Schedules the run's stop at `at` ([`run`] stops at `RunLimits::until`; a driver of its
    /// own, e.g. of synthetic load without a flow source, may stop where it likes).
    pub fn stop_at(&mut self, at: Time) {
        self.q.schedule(at, Event::Stop);
    }

    fn sample_at(&mut self, at: Time) {
        self.q.schedule(at, Event::Sample);
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event<E>)> {
        self.q.pop()
    }

    /// The time of the last event popped.
    pub fn now(&self) -> Time {
        self.q.now()
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Schedules the next `Flows` event if `source` knows of a flow earlier than the one already
    /// scheduled. The loop arms it when flows were due; the model calls this when a flow
    /// completes (a closed-loop source may then have a new one).
    pub fn arm_flows(&mut self, book: &mut FlowBook, source: &mut dyn FlowSource) {
        if let Some(t) = book.arm_arrival(source, self.q.now()) {
            self.q.schedule(t, Event::Flows);
        }
    }
}

/// A fabric whose network runs on a [`Calendar`]: what [`run`] needs of it.
pub trait EventFabric {
    /// The model's own events.
    type Event: Copy;

    /// Whether the first `Flows` event is scheduled before `Stop` and the first `Sample` (true)
    /// or after them. Equal times pop in scheduling order, so this decides, e.g., whether a
    /// sample at time 0 sees the flows that start at 0; Aquila's clique was written with them
    /// after, and keeps its results.
    const FLOWS_FIRST: bool = true;

    /// The fabric's calendar and book (it owns both: its model schedules on the one and counts
    /// deliveries on the other).
    fn calendar_and_book(&mut self) -> (&mut Calendar<Self::Event>, &mut FlowBook);

    /// Schedules the model's first events of its own (after the loop's); may refuse to run.
    fn start(&mut self) -> Result<(), FabricError> {
        Ok(())
    }

    /// Called with each event as it is popped, before it is handled: a flow-level model moves
    /// its flows to `now` here.
    fn advance(&mut self, _now: Time) {}

    /// Handles one of the model's events at `now`.
    fn handle(
        &mut self,
        now: Time,
        event: Self::Event,
        source: &mut dyn FlowSource,
    ) -> Result<(), FabricError>;

    /// `flow` is due at `now` and the book opened it as `record`. A flow of no bytes only takes
    /// its place in the model's tables: the loop completes it after this call.
    fn add_flow(&mut self, now: Time, record: u32, flow: &Flow) -> Result<(), FabricError>;

    /// Every flow due at `now` has been added (flows that start together may start moving
    /// together).
    fn flows_added(&mut self, _now: Time) {}

    /// Records a sample of the fabric at `now` in the book ([`FlowBook::sample`]); returns
    /// whether anything can still happen, i.e. whether to sample again a period later.
    fn sample(&mut self, now: Time, source: &mut dyn FlowSource) -> bool;

    /// Called after each event that did not stop the run.
    fn settle(&mut self) {}

    /// The run's output once it has stopped, `events` having been popped: the book's
    /// [`FlowBook::finish`] at the calendar's time, with what the model measured.
    fn finish(self, events: u64) -> RunOutput;
}

/// Runs `fabric` on the flows of `source` until its book's limits.
pub fn run<F: EventFabric>(
    mut fabric: F,
    source: &mut dyn FlowSource,
    progress: &mut dyn Progress,
) -> Result<RunOutput, FabricError> {
    let (q, book) = fabric.calendar_and_book();
    let limits = book.limits();
    if F::FLOWS_FIRST {
        q.arm_flows(book, source);
    }
    if let Some(until) = limits.until {
        q.stop_at(until);
    }
    if limits.sample_every.is_some() {
        q.sample_at(Time::ZERO);
    }
    if !F::FLOWS_FIRST {
        q.arm_flows(book, source);
    }
    fabric.start()?;
    let mut events = 0u64;
    loop {
        let (q, book) = fabric.calendar_and_book();
        let Some((now, event)) = q.pop() else {
            break;
        };
        events += 1;
        if events.is_multiple_of(PROGRESS_EVERY) {
            book.report(now, progress);
        }
        fabric.advance(now);
        match event {
            Event::Model(e) => fabric.handle(now, e, source)?,
            Event::Flows => start_due(&mut fabric, now, source)?,
            Event::Sample => {
                if fabric.sample(now, source)
                    && let Some(period) = limits.sample_every
                {
                    fabric.calendar_and_book().0.sample_at(now + period);
                }
            }
            Event::Stop => break,
        }
        fabric.settle();
        let book = fabric.calendar_and_book().1;
        if book.enough_completed() || book.past_horizon(now) {
            break;
        }
    }
    let (q, book) = fabric.calendar_and_book();
    book.report(q.now(), progress);
    Ok(fabric.finish(events))
}

/// The `Flows` event: every flow due now is opened and added, then the next one armed.
fn start_due<F: EventFabric>(
    fabric: &mut F,
    now: Time,
    source: &mut dyn FlowSource,
) -> Result<(), FabricError> {
    fabric.calendar_and_book().1.arrival_fired();
    while let Some(flow) = source.next_due(now) {
        let record = fabric.calendar_and_book().1.open(&flow, now)?;
        fabric.add_flow(now, record, &flow)?;
        if flow.bytes == 0 {
            fabric.calendar_and_book().1.complete(record, now, source);
        }
    }
    fabric.flows_added(now);
    let (q, book) = fabric.calendar_and_book();
    q.arm_flows(book, source);
    Ok(())
}

#[cfg(test)]
mod tests {
    //! A model with one wire per flow: a flow of `b` bytes arrives whole `b` picoseconds after
    //! it starts (one `Delivered` event), so every record has a closed form to check.
    use super::*;
    use crate::{NoProgress, RunLimits, RunOutput};
    use shoal_base::{Dur, NodeId};
    use shoal_workload::IterSource;

    struct Wire<const FIRST: bool> {
        q: Calendar<u32>,
        book: FlowBook,
        active: u64,
    }

    impl<const FIRST: bool> EventFabric for Wire<FIRST> {
        type Event = u32;
        const FLOWS_FIRST: bool = FIRST;

        fn calendar_and_book(&mut self) -> (&mut Calendar<u32>, &mut FlowBook) {
            (&mut self.q, &mut self.book)
        }

        fn handle(
            &mut self,
            now: Time,
            record: u32,
            source: &mut dyn FlowSource,
        ) -> Result<(), FabricError> {
            let bytes = self.book.record(record).bytes;
            assert!(self.book.deliver(record, bytes, now, source));
            self.active -= 1;
            self.q.arm_flows(&mut self.book, source);
            Ok(())
        }

        fn add_flow(&mut self, now: Time, record: u32, flow: &Flow) -> Result<(), FabricError> {
            if flow.bytes > 0 {
                self.active += 1;
                self.q.schedule(now + Dur(flow.bytes), record);
            }
            Ok(())
        }

        fn sample(&mut self, now: Time, source: &mut dyn FlowSource) -> bool {
            self.book.sample(now, 0, 0, self.active);
            !self.q.is_empty() || !source.is_exhausted() || self.active > 0
        }

        fn finish(self, events: u64) -> RunOutput {
            let counters = [("events".to_string(), events)].into();
            self.book.finish(self.q.now(), Default::default(), counters)
        }
    }

    fn flow(id: u64, start: u64, bytes: u64) -> Flow {
        Flow {
            id,
            src: NodeId(0),
            dst: NodeId(1),
            bytes,
            start: Time(start),
            class: 0,
        }
    }

    fn run_wire<const FIRST: bool>(
        source: &mut dyn FlowSource,
        limits: RunLimits,
    ) -> (u64, RunOutput) {
        let wire = Wire::<FIRST> {
            q: Calendar::new(),
            book: FlowBook::new(2, limits),
            active: 0,
        };
        let out = run(wire, source, &mut NoProgress).expect("runs");
        (out.counters["events"], out)
    }

    #[test]
    fn every_flow_completes_its_bytes_after_it_starts() {
        let flows = vec![
            flow(0, 0, 10),
            flow(1, 0, 0),
            flow(2, 5, 3),
            flow(3, 100, 7),
        ];
        let mut source = IterSource::new(flows.clone());
        let (events, out) = run_wire::<true>(&mut source, RunLimits::default());
        for (r, f) in out.records.iter().zip(&flows) {
            assert_eq!(r.finish, Some(f.start + Dur(f.bytes)), "flow {}", f.id);
        }
        // Three flow starts (times 0, 5, 100) and three deliveries: a zero-byte flow has none.
        assert_eq!(events, 6);
        assert_eq!(out.sim_time, Time(107));
    }

    #[test]
    fn a_run_stops_at_until_with_later_flows_unopened_or_unfinished() {
        let flows = vec![flow(0, 0, 50), flow(1, 10, 100), flow(2, 60, 1)];
        let mut source = IterSource::new(flows);
        let limits = RunLimits {
            until: Some(Time(40)),
            ..RunLimits::default()
        };
        let (_, out) = run_wire::<true>(&mut source, limits);
        assert_eq!(out.sim_time, Time(40));
        assert_eq!(out.records.len(), 2);
        assert!(out.records.iter().all(|r| r.finish.is_none()));
    }

    #[test]
    fn a_run_stops_once_enough_flows_completed() {
        let flows: Vec<Flow> = (0..10).map(|i| flow(i, i * 10, 5)).collect();
        let mut source = IterSource::new(flows);
        let limits = RunLimits {
            completed_flows: Some(4),
            ..RunLimits::default()
        };
        let (_, out) = run_wire::<true>(&mut source, limits);
        let done = out.records.iter().filter(|r| r.finish.is_some()).count();
        assert_eq!(done, 4);
        // The fourth flow (start 30) completes at 35, before the fifth starts at 40.
        assert_eq!(out.sim_time, Time(35));
        assert_eq!(out.records.len(), 4);
    }

    /// Equal times pop in scheduling order: whether a sample at time 0 sees the flows that
    /// start at 0 is decided by `FLOWS_FIRST`.
    #[test]
    fn the_first_sample_sees_flows_at_zero_only_when_flows_come_first() {
        let limits = RunLimits {
            sample_every: Some(Dur(4)),
            ..RunLimits::default()
        };
        let flows = vec![flow(0, 0, 10), flow(1, 0, 10)];
        let (_, first) = run_wire::<true>(&mut IterSource::new(flows.clone()), limits);
        let (_, after) = run_wire::<false>(&mut IterSource::new(flows), limits);
        assert_eq!(first.series.samples[0].active_flows, 2);
        assert_eq!(after.series.samples[0].active_flows, 0);
        for out in [&first, &after] {
            let times: Vec<u64> = out.series.samples.iter().map(|s| s.time.0).collect();
            // Samples every 4 ps while anything can happen: the flows end at 10.
            assert_eq!(times, vec![0, 4, 8, 12]);
            assert_eq!(out.records, first.records);
        }
    }

    /// A source that hands out its next flow only when the one before completed (a closed
    /// loop): the model's `arm_flows` on completion is what keeps the run going.
    struct OneAtATime {
        left: u64,
        due: Option<Flow>,
    }

    impl FlowSource for OneAtATime {
        fn next_due(&mut self, now: Time) -> Option<Flow> {
            self.due.take_if(|f| f.start <= now)
        }
        fn next_start(&mut self) -> Option<Time> {
            self.due.map(|f| f.start)
        }
        fn is_exhausted(&mut self) -> bool {
            self.due.is_none() && self.left == 0
        }
        fn on_complete(&mut self, id: u64, _: NodeId, at: Time) {
            if self.left > 0 {
                self.left -= 1;
                self.due = Some(flow(id + 1, at.0 + 1, 2));
            }
        }
    }

    #[test]
    fn completions_arm_the_flows_of_a_closed_loop() {
        let mut source = OneAtATime {
            left: 4,
            due: Some(flow(0, 0, 2)),
        };
        let (_, out) = run_wire::<true>(&mut source, RunLimits::default());
        let finishes: Vec<Option<Time>> = out.records.iter().map(|r| r.finish).collect();
        // Each flow takes 2 ps and the next starts 1 ps after: 0-2, 3-5, 6-8, 9-11, 12-14.
        let want: Vec<Option<Time>> = (0..5).map(|i| Some(Time(3 * i + 2))).collect();
        assert_eq!(finishes, want);
    }
}
