//! The hosts above the nodes: they hand each workload flow to its source node and watch the
//! in-order byte stream at the destination to see when the flow's last byte arrives.
//!
//! Each workload flow is one message to its source node, tagged with the flow's position in
//! `records`; every cell cut from it carries the tag (a [`FlowTag`] payload), so deliveries name
//! their flow whether the node interleaves the flows of a pair or serves them in turn.

use shoal_base::{NodeId, Time};
use shoal_metrics::FlowRecord;
use shoal_node::{Delivery, Node, Payload};
use shoal_workload::Flow;

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

pub struct Hosts {
    pub records: Vec<FlowRecord>,
    remaining: Vec<u64>,
    pub completed: u64,
    /// Flows that can never complete (source failed, destination unreachable at submission).
    pub refused: u64,
    measure_from: Time,
    /// Payload bytes delivered in order at each node since `measure_from`.
    pub delivered_bytes: Vec<u64>,
    /// Payload bytes of each flow delivered since `measure_from`.
    pub measured_flow_bytes: Vec<u64>,
    /// Payload bytes delivered in order since the run began.
    pub delivered_total: u64,
}

impl Hosts {
    pub fn new(n: usize, measure_from: Time) -> Self {
        Hosts {
            records: Vec::new(),
            remaining: Vec::new(),
            completed: 0,
            refused: 0,
            measure_from,
            delivered_bytes: vec![0; n],
            measured_flow_bytes: Vec::new(),
            delivered_total: 0,
        }
    }

    /// Hands `flow` to its source node at `slot`.
    pub fn inject(
        &mut self,
        flow: &Flow,
        slot: u64,
        node: Option<&mut Node<FlowTag>>,
        packet_bytes: u32,
    ) {
        let pos = self.records.len() as u32;
        self.records.push(FlowRecord {
            id: flow.id,
            src: flow.src,
            dst: flow.dst,
            bytes: flow.bytes,
            start: flow.start,
            finish: None,
        });
        self.remaining.push(flow.bytes);
        self.measured_flow_bytes.push(0);
        let accepted = node.is_some_and(|node| {
            node.submit(
                slot,
                flow.dst,
                flow.class,
                flow.bytes,
                packet_bytes,
                FlowTag(pos),
            )
            .is_ok()
        });
        if !accepted {
            self.refused += 1;
        }
    }

    /// Accounts one in-order delivery at `dst`, received at `now`; returns the record of the
    /// flow it completed, if any.
    pub fn on_delivery(
        &mut self,
        dst: NodeId,
        d: Delivery<FlowTag>,
        now: Time,
    ) -> Option<&FlowRecord> {
        let pos = d.payload.0;
        debug_assert_eq!(
            self.records[pos as usize].dst, dst,
            "a cell delivered off its flow"
        );
        self.delivered_total += d.len as u64;
        if now >= self.measure_from {
            self.delivered_bytes[dst.idx()] += d.len as u64;
            self.measured_flow_bytes[pos as usize] += d.len as u64;
        }
        let rem = &mut self.remaining[pos as usize];
        *rem -= d.len as u64;
        if *rem == 0 {
            self.records[pos as usize].finish = Some(now);
            self.completed += 1;
            return Some(&self.records[pos as usize]);
        }
        None
    }
}
