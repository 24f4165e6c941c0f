//! How a fabric takes flows: by pulling those that are due, and telling the source when one
//! completes. Open-loop sources ignore completions; closed-loop sources start a new flow on each.

use crate::flow::Flow;
use shoal_base::{NodeId, Time};
use std::iter::Peekable;

/// A stream of flows in start order. Fabrics call [`FlowSource::next_due`] at each step of their
/// clock and [`FlowSource::on_complete`] whenever a flow's last byte arrives.
pub trait FlowSource {
    /// The next flow whose start is at or before `now`, or `None` if none is due yet.
    /// Successive flows never start earlier than the ones before them.
    fn next_due(&mut self, now: Time) -> Option<Flow>;
    /// When the next flow starts, if it is already known (fabrics use it to skip idle time).
    fn next_start(&mut self) -> Option<Time>;
    /// Whether no flow will ever come again, whatever completes.
    fn is_exhausted(&mut self) -> bool;
    /// Flow `id` from `src` completed at `at`.
    fn on_complete(&mut self, _id: u64, _src: NodeId, _at: Time) {}
}

/// An open-loop source over an iterator of flows sorted by start time.
pub struct IterSource<I: Iterator<Item = Flow>>(Peekable<I>);

impl<I: Iterator<Item = Flow>> IterSource<I> {
    pub fn new(flows: impl IntoIterator<IntoIter = I>) -> Self {
        IterSource(flows.into_iter().peekable())
    }
}

impl<I: Iterator<Item = Flow>> FlowSource for IterSource<I> {
    fn next_due(&mut self, now: Time) -> Option<Flow> {
        self.0.next_if(|f| f.start <= now)
    }

    fn next_start(&mut self) -> Option<Time> {
        self.0.peek().map(|f| f.start)
    }

    fn is_exhausted(&mut self) -> bool {
        self.0.peek().is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iter_source_hands_out_flows_once_due() {
        let flow = |id, start| Flow {
            id,
            src: NodeId(0),
            dst: NodeId(1),
            bytes: 1,
            start: Time(start),
            class: 0,
        };
        let mut s = IterSource::new(vec![flow(0, 5), flow(1, 5), flow(2, 9)]);
        assert_eq!(s.next_due(Time(4)), None);
        assert_eq!(s.next_start(), Some(Time(5)));
        assert_eq!(s.next_due(Time(5)).map(|f| f.id), Some(0));
        assert_eq!(s.next_due(Time(5)).map(|f| f.id), Some(1));
        assert_eq!(s.next_due(Time(5)), None);
        assert!(!s.is_exhausted());
        assert_eq!(s.next_due(Time(100)).map(|f| f.id), Some(2));
        assert!(s.is_exhausted());
    }
}
