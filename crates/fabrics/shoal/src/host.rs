//! The hosts above the nodes: they hand each workload flow to its source node and watch the
//! in-order byte stream at the destination to see when the flow's last byte arrives.
//!
//! A node serves everything it holds for one (destination, class) as one FIFO byte stream, so
//! the flows of a pair complete in the order they were submitted; a FIFO of flows per pair is
//! all the bookkeeping needed.

use shoal_base::{FifoArena, NodeId, Time};
use shoal_metrics::FlowRecord;
use shoal_node::{Delivery, Node};
use shoal_workload::Flow;

pub struct Hosts {
    n: usize,
    pub records: Vec<FlowRecord>,
    remaining: Vec<u64>,
    /// `[class][src][dst]` → positions in `records` of flows not yet complete.
    pairs: FifoArena<u32>,
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
    pub fn new(n: usize, classes: u8, measure_from: Time) -> Self {
        Hosts {
            n,
            records: Vec::new(),
            remaining: Vec::new(),
            pairs: FifoArena::new(classes as usize * n * n),
            completed: 0,
            refused: 0,
            measure_from,
            delivered_bytes: vec![0; n],
            measured_flow_bytes: Vec::new(),
            delivered_total: 0,
        }
    }

    fn pair(&self, class: u8, src: NodeId, dst: NodeId) -> usize {
        (class as usize * self.n + src.idx()) * self.n + dst.idx()
    }

    /// Hands `flow` to its source node at `slot`.
    pub fn inject(&mut self, flow: &Flow, slot: u64, node: Option<&mut Node>, packet_bytes: u32) {
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
            node.submit(slot, flow.dst, flow.class, flow.bytes, packet_bytes, ())
                .is_ok()
        });
        if accepted {
            let p = self.pair(flow.class, flow.src, flow.dst);
            self.pairs.push_back(p, pos);
        } else {
            self.refused += 1;
        }
    }

    /// Accounts one in-order delivery at `dst`, received at `now`; returns the record of the
    /// flow it completed, if any.
    pub fn on_delivery(&mut self, dst: NodeId, d: Delivery<()>, now: Time) -> Option<&FlowRecord> {
        let p = self.pair(d.class, d.src, dst);
        let Some(&pos) = self.pairs.front(p) else {
            debug_assert!(false, "bytes delivered for a pair with no flow");
            return None;
        };
        self.delivered_total += d.len as u64;
        if now >= self.measure_from {
            self.delivered_bytes[dst.idx()] += d.len as u64;
            self.measured_flow_bytes[pos as usize] += d.len as u64;
        }
        let rem = &mut self.remaining[pos as usize];
        *rem -= d.len as u64;
        if *rem == 0 {
            self.pairs.pop_front(p);
            self.records[pos as usize].finish = Some(now);
            self.completed += 1;
            return Some(&self.records[pos as usize]);
        }
        None
    }
}
