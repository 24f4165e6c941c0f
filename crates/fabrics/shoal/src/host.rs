//! The hosts above the nodes: they hand each workload flow to its source node and watch the
//! in-order byte stream at the destination to see when the flow's last byte arrives.
//!
//! Each workload flow is one message to its source node, tagged with the flow's position in
//! the flow book; every cell cut from it carries the tag (a [`FlowTag`] payload), so deliveries name
//! their flow whether the node interleaves the flows of a pair or serves them in turn.

use shoal_base::{NodeId, Time};
use shoal_fabric::{FabricError, FlowBook, RunLimits};
use shoal_node::{Delivery, Payload};
use shoal_workload::{Flow, FlowSource};

/// The payload handle of the simulated cells: which workload flow (position in
/// `Hosts::records`) the cell's bytes belong to. The simulator carries no payload bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowTag(pub u32);

impl Payload for FlowTag {
    type Packet = FlowTag;
    #[inline]
    fn fragment(packet: FlowTag, _: u64, _: u16) -> FlowTag {
        packet
    }
}

/// The rack's hosts: the shared flow book, and the flows the rack refused.
pub struct Hosts {
    pub book: FlowBook,
    /// Flows that can never complete (source failed, destination unreachable at submission).
    pub refused: u64,
}

impl Hosts {
    pub fn new(n: usize, limits: RunLimits) -> Self {
        Hosts {
            book: FlowBook::new(n, limits),
            refused: 0,
        }
    }

    /// Opens `flow` in the book and hands it to its source node through `submit` (given the
    /// flow's tag; false: the node refused it or has failed).
    pub fn inject(
        &mut self,
        flow: &Flow,
        submit: impl FnOnce(FlowTag) -> bool,
    ) -> Result<(), FabricError> {
        let pos = self.book.open(flow, flow.start)?;
        if !submit(FlowTag(pos)) {
            self.refused += 1;
        }
        Ok(())
    }

    /// Accounts one in-order delivery at `dst`, received at `now` (a completion goes back to
    /// `flows`); true when it completed its flow.
    pub fn on_delivery(
        &mut self,
        dst: NodeId,
        d: Delivery<FlowTag>,
        now: Time,
        flows: &mut dyn FlowSource,
    ) -> bool {
        let pos = d.payload.0;
        debug_assert_eq!(
            self.book.record(pos).dst,
            dst,
            "a cell delivered off its flow"
        );
        self.book.deliver(pos, d.len as u64, now, flows)
    }

    /// Flows handed over and neither completed nor refused.
    pub fn active(&self) -> u64 {
        self.book.opened() - self.book.completed() - self.refused
    }
}
