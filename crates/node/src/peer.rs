//! What a node keeps about each peer, packed so that one cache line holds everything a
//! channel-slot touches.
//!
//! In every slot a node sends to one peer per channel and receives from another, and over an
//! epoch it visits all N−1 of them, so per-peer state is read in an order that no cache predicts.
//! With the state split over a dozen arrays each visit cost a dozen cache misses; grouped here it
//! costs one. Queue entries live in slabs owned by the node; only their heads live here.

use crate::frame::CellRec;
use shoal_base::Fifo;

/// The queues of one traffic class towards one peer.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Lane {
    /// `Q[class][peer]`: our cells detoured via the peer and transit cells destined to it.
    pub q: Fifo,
    /// `R[class][peer]`: local flows allowed to put a cell into `q` (Eq. 4).
    pub ready: Fifo,
    /// 16 bits suffice: a queue of the highest class holds at most one cell per subflow
    /// through it (N − 2 sources and our own flow, Eq. 3 and 5) plus our own cells moved off
    /// failed paths, fewer than 2N; a lower class's transit cells stop at the tail-drop limit.
    /// `NodeConfig::validate` caps N and that limit so that both stay below 2^16 (`MAX_NODES`);
    /// a ready queue holds at most one flow per destination.
    pub q_len: u16,
    pub ready_len: u16,
    /// Cells that have left `q` from its head, wrapping: with a ticket taken on arrival it tells
    /// how many cells are still ahead of a given one.
    pub departed: u16,
    /// `q` holds one of our cells (ready-queue mode keeps at most one, Eq. 5).
    pub local_in_q: bool,
}

pub(crate) const ALIVE: u8 = 1;
/// Set last-cell-dropped in our next cell to the peer.
pub(crate) const LCD_OUT: u8 = 2;

/// Everything about one peer. Classes other than the highest keep their lanes elsewhere, and the
/// payload handle of `last_tx` lives in `Node::last_tx_payload`, so that a payload handle of any
/// size leaves this record one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(crate) struct Peer {
    /// Class 0.
    pub lane: Lane,
    /// Local flows whose subflow via this peer waits for Eq. 2 or the age rule.
    pub pending: Fifo,
    /// (slot sent, flow) of our cells this peer has not yet acknowledged with feedback.
    pub inflight: Fifo,
    /// (class, dst) of the queue the peer's last cell joined here (see `node::join_last_rx`),
    /// or `NONE`.
    pub last_rx: u32,
    /// The peer's last cell leaves its queue here once that queue's `departed` counter passes
    /// this value (cells ahead of it on arrival plus departures so far, wrapping).
    pub rx_ticket: u16,
    /// The slots within the epoch in which we transmit to the peer and it transmits to us
    /// (`NodeConfig::tx_slot`, `rx_slot`), kept here because the feedback for the peer needs
    /// them and this line is in cache when it does: read from the configuration they cost a
    /// cache miss each at 512 nodes.
    pub tx_phase: u16,
    pub rx_phase: u16,
    pub flags: u8,
    /// The last cell we sent to the peer, for retransmission (App. C, D) and failures (§3.5).
    pub last_tx: Option<CellRec>,
}

impl Peer {
    pub fn new(alive: bool, tx_phase: u16, rx_phase: u16) -> Self {
        Peer {
            tx_phase,
            rx_phase,
            lane: Lane::default(),
            pending: Fifo::EMPTY,
            inflight: Fifo::EMPTY,
            last_rx: crate::node::NONE,
            rx_ticket: 0,
            flags: if alive { ALIVE } else { 0 },
            last_tx: None,
        }
    }

    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    #[inline]
    pub fn set(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }

    /// Clears `flag` and says whether it was set.
    #[inline]
    pub fn take(&mut self, flag: u8) -> bool {
        let was = self.has(flag);
        self.flags &= !flag;
        was
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_of_the_simulator_fills_exactly_one_cache_line() {
        assert_eq!(std::mem::size_of::<Peer>(), 64);
    }
}
