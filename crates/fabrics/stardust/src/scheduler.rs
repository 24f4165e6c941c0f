//! The egress scheduler of one Fabric Adapter port (§4.1): it knows every VOQ that holds data
//! for the port (from their status messages) and hands out credits, round-robin among the
//! VOQs of a class and across classes by strict priority or weights. How fast it hands them
//! out, and whether the egress buffer has room, is the adapter's business
//! ([`crate::adapter`]); this part only chooses who gets the next credit and keeps the books.
//!
//! The books are kept per VOQ: credit bytes handed out and not yet come back as data or
//! returned unused. A credit lost on a failed link, or the data it paid for, never comes
//! back; left on the books it would hold egress headroom for ever. So once a VOQ has said
//! "off" and stayed off for the hold time (the reassembly timeout: the scale on which a cell
//! counts as lost), whatever it still owes is written off. That is exact when nothing is
//! lost: an off VOQ gets no credit, a credit crossing its "off" comes back with a newer
//! status (which voids the write-off), and its data has had the hold time to arrive. A VOQ
//! that stays on keeps what it lost on its books until it goes off.

use crate::config::{ClassPolicy, MAX_CLASSES};
use shoal_base::{Dur, Time};
use std::collections::VecDeque;

/// A VOQ's state as this scheduler knows it.
#[derive(Clone, Copy, Debug, Default)]
struct VoqView {
    on: bool,
    in_ring: bool,
    /// Sequence number of the newest status applied.
    seq: u32,
    seen: bool,
    /// Credit bytes handed to it less the data and returned credit that came back. Negative
    /// when the VOQ sent more than its credit (the surplus of its last packet, which later
    /// credits pay off: [`crate::adapter`]).
    outstanding: i64,
}

/// A write-off due: VOQ `(src, class)` said "off" with status `seq`.
#[derive(Clone, Copy, Debug)]
struct Settle {
    at: Time,
    src: u32,
    class: u8,
    seq: u32,
}

pub struct PortScheduler {
    classes: u8,
    policy: ClassPolicy,
    /// Per class, the VOQs (source adapters) in round-robin order; entries whose VOQ went off
    /// are dropped when they come up.
    rings: Vec<VecDeque<u32>>,
    /// Per (source adapter, class).
    views: Vec<VoqView>,
    /// VOQs that are on, per class.
    on: [u32; MAX_CLASSES],
    /// Weighted policy: the class being served and the credits it has left in its turn.
    turn: u8,
    turn_left: u16,
    /// The VOQs' outstanding credit, summed over those that owe data (what may still arrive).
    outstanding: u64,
    /// Write-offs due, in time order (each is `hold` after the status that queued it).
    settle: VecDeque<Settle>,
    hold: Dur,
    written_off: u64,
}

impl PortScheduler {
    /// A scheduler for `fas` source adapters that writes off what an off VOQ still owes after
    /// `hold`.
    pub fn new(fas: u32, classes: u8, policy: ClassPolicy, hold: Dur) -> PortScheduler {
        PortScheduler {
            classes,
            policy,
            rings: (0..classes).map(|_| VecDeque::new()).collect(),
            views: vec![VoqView::default(); fas as usize * classes as usize],
            on: [0; MAX_CLASSES],
            turn: 0,
            turn_left: 0,
            outstanding: 0,
            settle: VecDeque::new(),
            hold,
            written_off: 0,
        }
    }

    fn view(&mut self, src: u32, class: u8) -> &mut VoqView {
        &mut self.views[src as usize * self.classes as usize + class as usize]
    }

    /// Adds `delta` to VOQ `(src, class)`'s books, keeping the sum of what the VOQs owe.
    fn book(&mut self, src: u32, class: u8, delta: i64) {
        let v = self.view(src, class);
        let before = v.outstanding.max(0) as u64;
        v.outstanding += delta;
        let after = v.outstanding.max(0) as u64;
        self.outstanding = self.outstanding + after - before;
    }

    /// `bytes` of VOQ `(src, class)`'s credit came back (as data or returned unused).
    fn pay(&mut self, src: u32, class: u8, bytes: u64) {
        self.book(src, class, -(bytes as i64));
    }

    /// Applies a status received at `now` from the VOQ of `src`, `class`: newer statuses
    /// change its state, returned bytes always come off its outstanding credit.
    pub fn status(&mut self, now: Time, src: u32, class: u8, seq: u32, on: bool, returned: u32) {
        self.pay(src, class, returned as u64);
        let hold = self.hold;
        let v = self.view(src, class);
        // Sequence numbers wrap: newer means ahead by less than half the space.
        if v.seen && seq.wrapping_sub(v.seq) as i32 <= 0 {
            return;
        }
        v.seen = true;
        v.seq = seq;
        if !on && v.outstanding > 0 {
            self.settle.push_back(Settle {
                at: now + hold,
                src,
                class,
                seq,
            });
        }
        let i = src as usize * self.classes as usize + class as usize;
        let v = &mut self.views[i];
        if on != v.on {
            v.on = on;
            if on {
                self.on[class as usize] += 1;
            } else {
                self.on[class as usize] -= 1;
            }
        }
        if on && !v.in_ring {
            v.in_ring = true;
            self.rings[class as usize].push_back(src);
        }
    }

    /// Data bytes of VOQ `(src, class)` have arrived.
    pub fn arrived(&mut self, src: u32, class: u8, bytes: u64) {
        self.pay(src, class, bytes);
    }

    /// Writes off what the VOQs off since the hold time before `now` still owe.
    pub fn settle(&mut self, now: Time) {
        while let Some(&s) = self.settle.front() {
            if s.at > now {
                break;
            }
            self.settle.pop_front();
            let v = self.view(s.src, s.class);
            if v.seq == s.seq && !v.on && v.outstanding > 0 {
                // A debt (data sent ahead of credit) stays: the VOQ's balance carries it too.
                let owed = std::mem::take(&mut v.outstanding) as u64;
                self.outstanding -= owed;
                self.written_off += owed;
            }
        }
    }

    /// Credit bytes handed out and not yet come back or written off.
    pub fn outstanding(&self) -> u64 {
        self.outstanding
    }

    /// Credit bytes written off so far.
    pub fn written_off(&self) -> u64 {
        self.written_off
    }

    /// Whether some VOQ asks for credit that `pick` would give: a class of weight 0 (refused
    /// by the scenario layer) is never picked, so it does not count.
    pub fn wants(&self) -> bool {
        let n = self.classes as usize;
        match self.policy {
            ClassPolicy::Strict => self.on[..n].iter().any(|&v| v > 0),
            ClassPolicy::Weighted(w) => (0..n).any(|c| self.on[c] > 0 && w[c] > 0),
        }
    }

    /// Chooses the VOQ that gets the next credit of `bytes` and books it as outstanding.
    pub fn pick(&mut self, bytes: u32) -> Option<(u32, u8)> {
        let class = self.class()?;
        let ring = &mut self.rings[class as usize];
        loop {
            let src = ring.pop_front()?;
            let v = &mut self.views[src as usize * self.classes as usize + class as usize];
            if v.on {
                ring.push_back(src);
                self.book(src, class, bytes as i64);
                return Some((src, class));
            }
            v.in_ring = false;
        }
    }

    /// The class the next credit goes to.
    fn class(&mut self) -> Option<u8> {
        let n = self.classes;
        match self.policy {
            ClassPolicy::Strict => (0..n).find(|&c| self.on[c as usize] > 0),
            ClassPolicy::Weighted(w) => {
                if self.turn_left > 0 && self.on[self.turn as usize] > 0 {
                    self.turn_left -= 1;
                    return Some(self.turn);
                }
                for step in 1..=n {
                    let c = (self.turn + step) % n;
                    if self.on[c as usize] > 0 && w[c as usize] > 0 {
                        self.turn = c;
                        self.turn_left = w[c as usize] - 1;
                        return Some(c);
                    }
                }
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_within_a_class_and_strict_priority_across() {
        let mut s = PortScheduler::new(4, 2, ClassPolicy::Strict, Dur::from_us(10));
        s.status(Time::ZERO, 1, 1, 1, true, 0);
        s.status(Time::ZERO, 2, 0, 1, true, 0);
        s.status(Time::ZERO, 3, 0, 1, true, 0);
        let got: Vec<_> = (0..4).map(|_| s.pick(100).unwrap()).collect();
        assert_eq!(got, vec![(2, 0), (3, 0), (2, 0), (3, 0)]);
        s.status(Time::ZERO, 2, 0, 2, false, 0);
        s.status(Time::ZERO, 3, 0, 2, false, 50);
        assert_eq!(s.pick(100), Some((1, 1)));
        assert_eq!(s.outstanding(), 500 - 50);
    }

    #[test]
    fn a_stale_status_does_not_undo_a_newer_one() {
        let mut s = PortScheduler::new(2, 1, ClassPolicy::Strict, Dur::from_us(10));
        s.status(Time::ZERO, 0, 0, 2, false, 0);
        s.status(Time::ZERO, 0, 0, 1, true, 30); // overtaken by the off above
        assert!(!s.wants());
        assert_eq!(s.pick(10), None);
    }

    #[test]
    fn weights_share_credits_in_proportion() {
        let mut w = [0; MAX_CLASSES];
        w[0] = 3;
        w[1] = 1;
        let mut s = PortScheduler::new(2, 2, ClassPolicy::Weighted(w), Dur::from_us(10));
        s.status(Time::ZERO, 0, 0, 1, true, 0);
        s.status(Time::ZERO, 1, 1, 1, true, 0);
        let mut per = [0; 2];
        for _ in 0..400 {
            per[s.pick(1).unwrap().1 as usize] += 1;
        }
        assert_eq!(per, [300, 100]);
    }

    /// Issue 37: a class of weight 0 with VOQs asking made `wants` say yes while `pick` gave
    /// nothing, and the adapter asked again for ever. Whatever the weights, `wants` says yes
    /// exactly when `pick` gives a VOQ.
    #[test]
    fn wants_holds_exactly_when_pick_gives_a_voq() {
        for w0 in [0, 1, 5] {
            for (on0, on1) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut w = [0; MAX_CLASSES];
                w[0] = w0;
                w[1] = 2;
                let mut s = PortScheduler::new(2, 2, ClassPolicy::Weighted(w), Dur::from_us(10));
                s.status(Time::ZERO, 0, 0, 1, on0, 0);
                s.status(Time::ZERO, 1, 1, 1, on1, 0);
                for _ in 0..6 {
                    let wants = s.wants();
                    assert_eq!(wants, s.pick(1).is_some(), "w0 {w0} on {on0} {on1}");
                }
            }
        }
    }

    #[test]
    fn what_an_off_voq_still_owes_is_written_off_after_the_hold_and_only_then() {
        let hold = Dur::from_us(10);
        let at = |us| Time::ZERO + Dur::from_us(us);
        let mut s = PortScheduler::new(2, 1, ClassPolicy::Strict, hold);
        s.status(at(0), 0, 0, 1, true, 0);
        s.status(at(0), 1, 0, 1, true, 0);
        for _ in 0..4 {
            s.pick(1000);
        }
        // VOQ 0 spent one credit and returned half of another; the rest (one credit) was lost.
        s.arrived(0, 0, 1000);
        s.status(at(1), 0, 0, 2, false, 500);
        assert_eq!(s.outstanding(), 500 + 2000);
        // Data still in flight when the "off" came is paid as it arrives.
        s.arrived(1, 0, 1500);
        s.settle(at(10));
        assert_eq!(s.outstanding(), 500 + 500, "not before the hold");
        s.settle(at(11));
        assert_eq!(s.outstanding(), 500, "VOQ 1 is on: it keeps its books");
        assert_eq!(s.written_off(), 500);
        // An "off" overtaken by a newer "on" writes off nothing.
        s.status(at(12), 1, 0, 2, false, 0);
        s.status(at(13), 1, 0, 3, true, 0);
        s.settle(at(100));
        assert_eq!((s.outstanding(), s.written_off()), (500, 500));
    }

    #[test]
    fn data_ahead_of_credit_is_a_debt_that_later_credits_pay_and_no_write_off_forgives() {
        let at = |us| Time::ZERO + Dur::from_us(us);
        let mut s = PortScheduler::new(2, 1, ClassPolicy::Strict, Dur::from_us(10));
        s.status(at(0), 0, 0, 1, true, 0);
        s.status(at(0), 1, 0, 1, true, 0);
        s.pick(1000); // VOQ 0
        s.pick(1000); // VOQ 1
        // VOQ 0 sent a 2,500 B packet on its 1,000 B credit: it owes 1,500 B of credit and
        // nothing more may arrive from it, so only VOQ 1's credit is outstanding.
        s.arrived(0, 0, 2500);
        assert_eq!(s.outstanding(), 1000);
        s.pick(1000); // VOQ 0: pays 1,000 of the debt
        s.pick(1000); // VOQ 1
        assert_eq!(s.outstanding(), 2000);
        s.pick(1000); // VOQ 0: 500 B it may still send
        assert_eq!(s.outstanding(), 2500);
        // VOQ 0 goes off owing 500 and sends nothing more: written off after the hold.
        s.status(at(1), 0, 0, 2, false, 0);
        s.settle(at(11));
        assert_eq!((s.outstanding(), s.written_off()), (2000, 500));
        // VOQ 1 sends 2,600 B ahead (600 B of debt) and goes off: the debt is not written off
        // as credit, and its next credit pays it first.
        s.arrived(1, 0, 2600);
        s.status(at(12), 1, 0, 2, false, 0);
        s.settle(at(30));
        assert_eq!((s.outstanding(), s.written_off()), (0, 500));
        s.status(at(31), 1, 0, 3, true, 0);
        s.pick(1000);
        assert_eq!(s.outstanding(), 400);
    }
}
