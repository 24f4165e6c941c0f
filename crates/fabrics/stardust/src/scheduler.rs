//! The egress scheduler of one Fabric Adapter port (§4.1): it knows every VOQ that holds data
//! for the port (from their status messages) and hands out credits, round-robin among the
//! VOQs of a class and across classes by strict priority or weights. How fast it hands them
//! out, and whether the egress buffer has room, is the adapter's business
//! ([`crate::adapter`]); this part only chooses who gets the next credit and keeps the books.

use crate::config::{ClassPolicy, MAX_CLASSES};
use std::collections::VecDeque;

/// A VOQ's state as this scheduler knows it.
#[derive(Clone, Copy, Debug, Default)]
struct VoqView {
    on: bool,
    in_ring: bool,
    /// Sequence number of the newest status applied.
    seq: u32,
    seen: bool,
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
    /// Credit bytes handed out and not yet come back as data or returned unused.
    outstanding: u64,
}

impl PortScheduler {
    pub fn new(fas: u32, classes: u8, policy: ClassPolicy) -> PortScheduler {
        PortScheduler {
            classes,
            policy,
            rings: (0..classes).map(|_| VecDeque::new()).collect(),
            views: vec![VoqView::default(); fas as usize * classes as usize],
            on: [0; MAX_CLASSES],
            turn: 0,
            turn_left: 0,
            outstanding: 0,
        }
    }

    /// Applies a status from the VOQ of `src`, `class`: newer statuses change its state,
    /// returned bytes always come off the outstanding credit.
    pub fn status(&mut self, src: u32, class: u8, seq: u32, on: bool, returned: u32) {
        self.outstanding = self.outstanding.saturating_sub(returned as u64);
        let i = src as usize * self.classes as usize + class as usize;
        let v = &mut self.views[i];
        // Sequence numbers wrap: newer means ahead by less than half the space.
        if v.seen && seq.wrapping_sub(v.seq) as i32 <= 0 {
            return;
        }
        v.seen = true;
        v.seq = seq;
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

    /// Data bytes of credited VOQs have arrived.
    pub fn arrived(&mut self, bytes: u64) {
        self.outstanding = self.outstanding.saturating_sub(bytes);
    }

    pub fn outstanding(&self) -> u64 {
        self.outstanding
    }

    /// Whether some VOQ asks for credit.
    pub fn wants(&self) -> bool {
        self.on[..self.classes as usize].iter().any(|&n| n > 0)
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
                self.outstanding += bytes as u64;
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
        let mut s = PortScheduler::new(4, 2, ClassPolicy::Strict);
        s.status(1, 1, 1, true, 0);
        s.status(2, 0, 1, true, 0);
        s.status(3, 0, 1, true, 0);
        let got: Vec<_> = (0..4).map(|_| s.pick(100).unwrap()).collect();
        assert_eq!(got, vec![(2, 0), (3, 0), (2, 0), (3, 0)]);
        s.status(2, 0, 2, false, 0);
        s.status(3, 0, 2, false, 50);
        assert_eq!(s.pick(100), Some((1, 1)));
        assert_eq!(s.outstanding(), 500 - 50);
    }

    #[test]
    fn a_stale_status_does_not_undo_a_newer_one() {
        let mut s = PortScheduler::new(2, 1, ClassPolicy::Strict);
        s.status(0, 0, 2, false, 0);
        s.status(0, 0, 1, true, 30); // overtaken by the off above
        assert!(!s.wants());
        assert_eq!(s.pick(10), None);
    }

    #[test]
    fn weights_share_credits_in_proportion() {
        let mut w = [0; MAX_CLASSES];
        w[0] = 3;
        w[1] = 1;
        let mut s = PortScheduler::new(2, 2, ClassPolicy::Weighted(w));
        s.status(0, 0, 1, true, 0);
        s.status(1, 1, 1, true, 0);
        let mut per = [0; 2];
        for _ in 0..400 {
            per[s.pick(1).unwrap().1 as usize] += 1;
        }
        assert_eq!(per, [300, 100]);
    }
}
