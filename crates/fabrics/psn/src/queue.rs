//! A switch or NIC output queue: a data lane and, for NDP, a priority lane (control packets and
//! trimmed headers, served first), with the arrival decision of each discipline. Under the
//! other disciplines control packets queue with the data, as in htsim's queues.

use crate::config::Discipline;
use std::collections::VecDeque;

/// What happened to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admit {
    Queued,
    /// Queued with its CE bit set.
    Marked,
    /// Cut to its header and queued in the priority lane.
    Trimmed,
    Dropped,
}

/// One output queue. Lengths are kept in bytes; limits come from the caller in bytes too.
#[derive(Default)]
pub struct OutQueue {
    data: VecDeque<u32>,
    prio: VecDeque<u32>,
    data_bytes: u64,
    prio_bytes: u64,
}

impl OutQueue {
    /// Decides and performs an arrival. `limit` and `mark_above` are in bytes (`mark_above` only
    /// for ECN at arrival); `trimmed_bytes` is the header size a trimmed packet keeps.
    #[allow(clippy::too_many_arguments)]
    pub fn admit(
        &mut self,
        pkt: u32,
        bytes: u32,
        control: bool,
        discipline: Discipline,
        limit: u64,
        mtu: u64,
        trimmed_bytes: u32,
    ) -> Admit {
        if control && discipline == Discipline::Trim {
            // NDP's switches serve control packets and trimmed headers first. They are small
            // and bounded by the data they answer; a separate limit would only add drops the
            // paper does not model.
            self.prio.push_back(pkt);
            self.prio_bytes += bytes as u64;
            return Admit::Queued;
        }
        let fits = self.data_bytes + bytes as u64 <= limit;
        match discipline {
            Discipline::DropTail | Discipline::Ecn { .. } if !fits => Admit::Dropped,
            Discipline::DropTail => self.push_data(pkt, bytes, Admit::Queued),
            Discipline::Ecn { k, at_dequeue } => {
                // Acks and CNPs share the FIFO but are not ECN-capable.
                let mark = !control && !at_dequeue && self.data_bytes >= k as u64 * mtu;
                self.push_data(pkt, bytes, if mark { Admit::Marked } else { Admit::Queued })
            }
            Discipline::Trim if fits => self.push_data(pkt, bytes, Admit::Queued),
            Discipline::Trim => {
                self.prio.push_back(pkt);
                self.prio_bytes += trimmed_bytes as u64;
                Admit::Trimmed
            }
        }
    }

    fn push_data(&mut self, pkt: u32, bytes: u32, outcome: Admit) -> Admit {
        self.data.push_back(pkt);
        self.data_bytes += bytes as u64;
        outcome
    }

    /// The next packet to send, priority lane first. The caller passes the popped packet's
    /// wire size back through [`OutQueue::account_sent`].
    pub fn pop(&mut self) -> Option<(u32, bool)> {
        if let Some(p) = self.prio.pop_front() {
            return Some((p, true));
        }
        self.data.pop_front().map(|p| (p, false))
    }

    /// Removes a sent packet's bytes from its lane's length.
    pub fn account_sent(&mut self, bytes: u32, from_prio: bool) {
        if from_prio {
            self.prio_bytes -= bytes as u64;
        } else {
            self.data_bytes -= bytes as u64;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty() && self.prio.is_empty()
    }

    /// Packets waiting in both lanes.
    pub fn packets(&self) -> usize {
        self.data.len() + self.prio.len()
    }

    /// Bytes waiting in both lanes.
    pub fn bytes(&self) -> u64 {
        self.data_bytes + self.prio_bytes
    }

    /// Bytes waiting in the data lane (what ECN and the capacity look at).
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 1500;

    #[test]
    fn drop_tail_holds_exactly_its_limit() {
        let mut q = OutQueue::default();
        let outcomes: Vec<Admit> = (0..5)
            .map(|i| q.admit(i, 1500, false, Discipline::DropTail, 3 * MTU, MTU, 64))
            .collect();
        assert_eq!(outcomes[..3], [Admit::Queued; 3]);
        assert_eq!(outcomes[3..], [Admit::Dropped; 2]);
        assert_eq!(q.packets(), 3);
    }

    #[test]
    fn ecn_marks_arrivals_that_find_k_or_more_packets() {
        let mut q = OutQueue::default();
        let ecn = Discipline::Ecn {
            k: 2,
            at_dequeue: false,
        };
        let outcomes: Vec<Admit> = (0..4)
            .map(|i| q.admit(i, 1500, false, ecn, 10 * MTU, MTU, 64))
            .collect();
        assert_eq!(
            outcomes,
            [Admit::Queued, Admit::Queued, Admit::Marked, Admit::Marked]
        );
    }

    #[test]
    fn without_trimming_control_packets_wait_their_turn_and_count() {
        let mut q = OutQueue::default();
        let ecn = Discipline::Ecn {
            k: 1,
            at_dequeue: false,
        };
        assert_eq!(
            q.admit(1, 1500, false, ecn, 2 * MTU, MTU, 64),
            Admit::Queued
        );
        assert_eq!(q.admit(2, 64, true, ecn, 2 * MTU, MTU, 64), Admit::Queued);
        assert_eq!(
            q.admit(3, 1500, false, ecn, 2 * MTU, MTU, 64),
            Admit::Dropped
        );
        assert_eq!(q.pop(), Some((1, false)));
        assert_eq!(q.pop(), Some((2, false)));
    }

    #[test]
    fn trimmed_headers_and_control_overtake_data() {
        let mut q = OutQueue::default();
        assert_eq!(
            q.admit(1, 1500, false, Discipline::Trim, MTU, MTU, 64),
            Admit::Queued
        );
        assert_eq!(
            q.admit(2, 1500, false, Discipline::Trim, MTU, MTU, 64),
            Admit::Trimmed
        );
        assert_eq!(
            q.admit(3, 64, true, Discipline::Trim, MTU, MTU, 64),
            Admit::Queued
        );
        assert_eq!(q.pop(), Some((2, true)));
        assert_eq!(q.pop(), Some((3, true)));
        assert_eq!(q.pop(), Some((1, false)));
        assert_eq!(q.pop(), None);
    }
}
