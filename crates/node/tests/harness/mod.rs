//! A tiny virtual-time rack for node tests: N nodes on the cyclic schedule (slot s connects i to
//! i + 1 + (s mod (N−1))), one channel, a fixed delay, and hooks to kill nodes, cut paths and
//! corrupt cells. It is independent of the engine crate, so node behaviour is tested on its own.

#![allow(dead_code)]

use shoal_base::NodeId;
use shoal_node::{Delivery, Event, Frame, Node, NodeConfig, Rx};
use std::collections::VecDeque;

type InFlight = (u64, usize, usize, Option<Frame<()>>);

pub struct MiniRack {
    pub nodes: Vec<Node>,
    pub n: usize,
    pub delay: u64,
    pub slot: u64,
    wire: VecDeque<InFlight>,
    pub delivered: Vec<Vec<Delivery<()>>>,
    pub events: Vec<(usize, Event)>,
    /// Dead nodes neither send nor receive.
    pub dead: Vec<bool>,
    /// (from, to) pairs whose path is cut.
    pub cut: Vec<(usize, usize)>,
    /// Called for every transmitted frame (slot, from, to); true corrupts it.
    pub corrupt: Box<dyn FnMut(u64, usize, usize) -> bool>,
}

impl MiniRack {
    pub fn new(n: usize, delay: u64, tweak: impl Fn(&mut NodeConfig)) -> Self {
        let nodes = (0..n)
            .map(|i| {
                // Slot s connects i to i + 1 + s: i sends to j in slot j − i − 1 (mod N).
                let slot = |from: usize, to: usize| ((to + 2 * n - from - 1) % n) as u16;
                let tx = (0..n)
                    .map(|j| if j == i { u16::MAX } else { slot(i, j) })
                    .collect();
                let rx = (0..n)
                    .map(|j| if j == i { u16::MAX } else { slot(j, i) })
                    .collect();
                let mut cfg = NodeConfig::new(
                    NodeId(i as u16),
                    n as u16,
                    (n - 1) as u32,
                    delay as u32,
                    tx,
                    rx,
                );
                tweak(&mut cfg);
                Node::new(cfg).expect("valid config")
            })
            .collect();
        MiniRack {
            nodes,
            n,
            delay,
            slot: 0,
            wire: VecDeque::new(),
            delivered: vec![Vec::new(); n],
            events: Vec::new(),
            dead: vec![false; n],
            cut: Vec::new(),
            corrupt: Box::new(|_, _, _| false),
        }
    }

    pub fn peer(&self, slot: u64, i: usize) -> usize {
        (i + 1 + (slot % (self.n as u64 - 1)) as usize) % self.n
    }

    pub fn submit(&mut self, src: usize, dst: usize, bytes: u64) {
        let slot = self.slot;
        self.nodes[src]
            .submit(slot, NodeId(dst as u16), 0, bytes, 1500, ())
            .expect("submit");
    }

    pub fn step(&mut self) {
        let s = self.slot;
        while let Some(&(at, from, to, frame)) = self.wire.front() {
            if at > s {
                break;
            }
            self.wire.pop_front();
            if self.dead[to] {
                continue;
            }
            let rx = match frame {
                None => Rx::Missing,
                Some(f) if (self.corrupt)(s, from, to) => Rx::Corrupt {
                    feedback: f.feedback,
                },
                Some(f) => Rx::Cell(f),
            };
            self.nodes[to].handle_rx(s, NodeId(from as u16), rx);
        }
        for i in 0..self.n {
            let j = self.peer(s, i);
            let frame = if self.dead[i] || self.cut.contains(&(i, j)) {
                None
            } else {
                self.nodes[i].poll_tx(s, NodeId(j as u16))
            };
            self.wire.push_back((s + self.delay, i, j, frame));
        }
        for i in 0..self.n {
            while let Some(d) = self.nodes[i].poll_delivered() {
                self.delivered[i].push(d);
            }
            while let Some(e) = self.nodes[i].poll_event() {
                self.events.push((i, e));
            }
        }
        self.slot += 1;
    }

    pub fn run(&mut self, slots: u64) {
        for _ in 0..slots {
            self.step();
        }
    }

    /// Bytes delivered at `dst` from `src`.
    pub fn bytes(&self, src: usize, dst: usize) -> u64 {
        self.delivered[dst]
            .iter()
            .filter(|d| d.src.idx() == src)
            .map(|d| d.len as u64)
            .sum()
    }

    /// Steps until no live node holds data or queued cells and the wire has delivered what was
    /// on it, or `limit` slots pass; returns the slot reached.
    pub fn run_until_quiet(&mut self, limit: u64) -> u64 {
        let mut quiet_since = None;
        while self.slot < limit {
            self.step();
            let busy = self
                .nodes
                .iter()
                .zip(&self.dead)
                .any(|(n, &dead)| !dead && !n.is_quiet());
            if busy {
                quiet_since = None;
            } else if *quiet_since.get_or_insert(self.slot) + self.delay < self.slot {
                break;
            }
        }
        self.slot
    }
}
