//! Failures (§3.5). Every pair of nodes exchanges a cell every epoch, so silence in a peer's slot
//! means the peer or the path to it has failed. The node then (i) stops sending to the peer,
//! (ii) tells every other node it can no longer reach it, (iii) sends its last cell to the peer,
//! if it was one of ours bound elsewhere, by another path, and (iv) discards the cells it was to
//! forward to the peer.
//!
//! Choices where the paper is silent:
//! - (iii) "via some other node": we queue the cell directly to its destination (one hop, no
//!   further detour), which avoids the failed node by construction.
//! - Our own cells queued for the failed intermediate but bound elsewhere are rerouted the same
//!   way rather than discarded: they are not cells "to forward to j".
//! - Notices go out one per cell, in the order failures were detected, in cells that would
//!   otherwise carry nothing, and ahead of data at most once per 8 epochs per peer
//!   (`NOTICE_EVERY_EPOCHS` in `node.rs` says why).
//! - A notice from `m` that it cannot reach `x` blocks subflows via `m` for flows to `x`; our cells
//!   for `x` already queued to `m` are rerouted directly.
//! - Silence from `j` may mean that only the path to `j` failed, so our flow to `j` is not dropped
//!   at once: it loses its direct subflow and goes on through the other intermediates. It is
//!   abandoned (`Event::FlowAborted`) once every subflow is blocked, which happens when every
//!   other node has reported `j` unreachable too, i.e. when `j` itself is gone.

use crate::flow::{Payload, SubState};
use crate::node::{Event, NONE, Node, Origin, Queued};
use crate::peer::{ALIVE, LCD_OUT};
use shoal_base::NodeId;

impl<P: Payload> Node<P> {
    pub(crate) fn peer_failed(&mut self, j: usize) {
        let peer = &mut self.peers[j];
        peer.set(ALIVE | LCD_OUT, false);
        peer.last_rx = NONE;
        let last_tx = peer.last_tx.take();
        self.stats.peers_failed += 1;
        self.unreachable.push(NodeId(j as u16));
        self.events.push_back(Event::PeerFailed(NodeId(j as u16)));

        // (iii) The last cell we sent to j may be lost with it.
        if let Some(cell) = last_tx
            && cell.src == self.me
            && cell.len > 0
            && cell.dst.idx() != j
        {
            self.reroute(cell, self.last_tx_payload[j]);
        }

        // (iv) Cells queued for j: transit cells and ours destined to j are discarded; ours
        // detoured via j are rerouted.
        for c in 0..self.cfg.classes as usize {
            for e in self.take_from_q(c, j, |_| false) {
                match e.origin {
                    Origin::Transit => {
                        self.transit_left(&e.cell);
                        self.stats.discarded_for_failure += 1;
                    }
                    Origin::Local | Origin::Orphan => {
                        if e.origin == Origin::Local {
                            let f = self.flow_of[c * self.n + e.cell.dst.idx()];
                            self.flows[f as usize].refs -= 1;
                            self.flows[f as usize].subs[j].state = SubState::Blocked;
                            self.maybe_free(f);
                        }
                        if e.cell.dst.idx() == j {
                            self.stats.discarded_for_failure += 1;
                        } else {
                            self.reroute(e.cell, e.payload);
                        }
                    }
                }
            }
            let lane = self.lane_mut(c, j);
            lane.local_in_q = false;
            lane.ready_len = 0;
            self.release_refs(c, j, ListKind::Ready);
        }
        self.release_refs(0, j, ListKind::Pending);
        self.release_refs(0, j, ListKind::InFlight);

        // No flow uses j any more, neither as intermediate nor, for flows to j, directly. A flow
        // to j goes on through the other intermediates (only the path to j may have failed);
        // it is abandoned once none is left, e.g. when every node reports j unreachable.
        for fi in 0..self.flow_of.len() {
            let f = self.flow_of[fi];
            if f != NONE {
                self.flows[f as usize].subs[j].state = SubState::Blocked;
                self.abort_if_unroutable(f);
            }
        }
    }

    /// Abandons flow `f` if every one of its subflows is blocked: nothing can carry its data.
    pub(crate) fn abort_if_unroutable(&mut self, f: u32) {
        let me = self.me.idx();
        let flow = &self.flows[f as usize];
        let routable = flow
            .subs
            .iter()
            .enumerate()
            .any(|(j, s)| j != me && s.state != SubState::Blocked);
        if routable || !flow.has_data() {
            return;
        }
        let flow = &mut self.flows[f as usize];
        let unsent_bytes = flow.unsent_bytes();
        let (dst, class) = (flow.dst, flow.class);
        flow.clear_data();
        self.events.push_back(Event::FlowAborted {
            dst,
            class,
            unsent_bytes,
        });
        self.maybe_free(f);
    }

    /// `from` told us it can no longer reach `x`.
    pub(crate) fn on_unreachable(&mut self, from: usize, x: NodeId) {
        if x == self.me || x.idx() >= self.n || from == x.idx() {
            return;
        }
        if !self.blocked.insert((from as u16, x.0)) {
            return;
        }
        for c in 0..self.cfg.classes as usize {
            let f = self.flow_of[c * self.n + x.idx()];
            if f == NONE {
                continue;
            }
            let was = self.flows[f as usize].subs[from].state;
            self.flows[f as usize].subs[from].state = SubState::Blocked;
            self.abort_if_unroutable(f);
            if was == SubState::Queued {
                // Take our queued cell for x off the path through `from`.
                let moved =
                    self.take_from_q(c, from, |e| !(e.origin == Origin::Local && e.cell.dst == x));
                for e in moved {
                    self.flows[f as usize].refs -= 1;
                    if self.cfg.ready_queue {
                        self.lane_mut(c, from).local_in_q = false;
                    }
                    self.reroute(e.cell, e.payload);
                }
                if self.cfg.ready_queue {
                    self.promote(c, from);
                }
                self.maybe_free(f);
            }
        }
    }

    /// Queues one of our cells straight to its destination, outside any subflow.
    fn reroute(&mut self, cell: crate::frame::CellRec, payload: P) {
        let k = cell.dst.idx();
        if !self.peers[k].has(ALIVE) {
            self.stats.discarded_for_failure += 1;
            return;
        }
        self.stats.rerouted += 1;
        self.push_q(
            cell.class as usize,
            k,
            Queued {
                cell,
                payload,
                origin: Origin::Orphan,
            },
        );
    }

    /// Empties a ready (of class `c`), pending or in-flight list of intermediate `j`, blocking
    /// the subflows it held and dropping their references.
    fn release_refs(&mut self, c: usize, j: usize, kind: ListKind) {
        let mut flows = Vec::new();
        match kind {
            ListKind::Ready => {
                let lane = if c == 0 {
                    &mut self.peers[j].lane
                } else {
                    &mut self.low[(c - 1) * self.n + j]
                };
                self.flow_slab.drain(&mut lane.ready, |f| flows.push(f));
            }
            ListKind::Pending => {
                self.flow_slab
                    .drain(&mut self.peers[j].pending, |f| flows.push(f));
            }
            ListKind::InFlight => {
                self.inflight_slab
                    .drain(&mut self.peers[j].inflight, |(_, f)| flows.push(f));
            }
        }
        for f in flows {
            let flow = &mut self.flows[f as usize];
            flow.refs -= 1;
            flow.subs[j].state = SubState::Blocked;
            self.maybe_free(f);
        }
    }
}

#[derive(Clone, Copy)]
enum ListKind {
    Ready,
    Pending,
    InFlight,
}
