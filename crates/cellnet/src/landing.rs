//! Link-level credits on their way back to a link's sender, each with the time it lands. The
//! receiver knows, when it frees a slot, when that slot's credit reaches the sender (the
//! freeing plus the link's delay), so the credit is a record the sender reads when it next
//! considers sending rather than an event of its own. One receiver frees its slots in time
//! order, so each link's records are a FIFO whose landing times do not decrease.

use crate::Ring;
use shoal_base::Time;

/// One credit in flight: `n` units of VC `vc`, landing at `at`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Landing {
    pub at: Time,
    pub vc: u8,
    pub n: u32,
}

/// The credits in flight towards the senders of links `0..len`, one FIFO per link.
#[derive(Clone, Debug, Default)]
pub struct Landings {
    rings: Vec<Ring<Landing>>,
}

impl Landings {
    pub fn new(links: usize) -> Landings {
        Landings {
            rings: vec![Ring::new(); links],
        }
    }

    /// A credit of `n` for VC `vc` of link `l`, landing at `at` (no earlier than the link's
    /// last one).
    #[inline]
    pub fn push(&mut self, l: u32, at: Time, vc: u8, n: u32) {
        let ring = &mut self.rings[l as usize];
        debug_assert!(
            ring.iter().last().is_none_or(|b| b.at <= at),
            "a link's credits land in time order"
        );
        ring.push_back(Landing { at, vc, n });
    }

    /// Takes every credit of link `l` that has landed by `now`, oldest first.
    #[inline]
    pub fn land(&mut self, l: u32, now: Time, mut take: impl FnMut(u8, u32)) {
        let ring = &mut self.rings[l as usize];
        while let Some(c) = ring.front().copied().filter(|c| c.at <= now) {
            ring.pop_front();
            take(c.vc, c.n);
        }
    }

    /// When the first credit of link `l` for one of the VCs of mask `vcs` (bit `v` for VC
    /// `v`) lands: the time its sender, stalled on those VCs, looks again.
    pub fn next_for(&self, l: u32, vcs: u32) -> Option<Time> {
        self.rings[l as usize]
            .iter()
            .find(|c| vcs & 1 << c.vc != 0)
            .map(|c| c.at)
    }

    /// The credits of link `l` still in flight, oldest first.
    pub fn in_flight(&self, l: u32) -> impl Iterator<Item = &Landing> + '_ {
        self.rings[l as usize].iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credits_land_in_order_and_only_once_due() {
        let mut l = Landings::new(2);
        l.push(1, Time(10), 3, 2);
        l.push(1, Time(20), 5, 4);
        l.push(1, Time(20), 3, 1);
        assert_eq!(l.next_for(1, 1 << 5), Some(Time(20)));
        assert_eq!(l.next_for(1, 1 << 3), Some(Time(10)));
        assert_eq!(l.next_for(0, u32::MAX), None);
        let mut got = Vec::new();
        l.land(1, Time(9), |v, n| got.push((v, n)));
        assert!(got.is_empty());
        l.land(1, Time(10), |v, n| got.push((v, n)));
        assert_eq!(got, [(3, 2)]);
        assert_eq!(l.in_flight(1).count(), 2);
        l.land(1, Time(25), |v, n| got.push((v, n)));
        assert_eq!(got, [(3, 2), (5, 4), (3, 1)]);
        assert_eq!(l.in_flight(1).count(), 0);
    }
}
