//! In-order delivery at a receiver: a cumulative point plus the segments that arrived beyond a
//! gap. Shared by the window transports (TCP, DCTCP, DCQCN's go-back-N aside) and NDP.

use std::collections::BTreeMap;

/// Tracks which payload bytes of a flow have arrived.
#[derive(Clone, Debug, Default)]
pub struct Reassembly {
    /// Every byte below this has arrived.
    next: u64,
    /// Segments beyond `next`, by offset, with their lengths (few: only while a gap is open).
    ahead: BTreeMap<u64, u32>,
    ahead_bytes: u64,
}

impl Reassembly {
    /// Records `len` bytes at `seq`; returns whether any were new.
    pub fn insert(&mut self, seq: u64, len: u32) -> bool {
        let end = seq + len as u64;
        if end <= self.next {
            return false;
        }
        if seq > self.next {
            if self.ahead.contains_key(&seq) {
                return false;
            }
            self.ahead.insert(seq, len);
            self.ahead_bytes += len as u64;
            return true;
        }
        self.next = end;
        // Segments start at multiples of the segment size, so a gap closes exactly.
        while let Some(entry) = self.ahead.first_entry() {
            let (&s, &l) = (entry.key(), entry.get());
            if s > self.next {
                break;
            }
            entry.remove();
            self.ahead_bytes -= l as u64;
            self.next = self.next.max(s + l as u64);
        }
        true
    }

    /// Every byte below this has arrived.
    pub fn in_order(&self) -> u64 {
        self.next
    }

    /// Bytes that arrived beyond the first gap.
    pub fn held(&self) -> u64 {
        self.ahead_bytes
    }

    /// Whether the segment at `seq` has already arrived.
    pub fn has(&self, seq: u64) -> bool {
        seq < self.next || self.ahead.contains_key(&seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any arrival order of any duplicates ends with everything in order and nothing held,
        /// and the in-order point never exceeds the first missing segment.
        #[test]
        fn any_order_reassembles(order in Just((0u64..40).collect::<Vec<_>>()).prop_shuffle(),
                                 dups in prop::collection::vec(0u64..40, 0..20)) {
            let mut r = Reassembly::default();
            let mut seen = [false; 40];
            for &i in order.iter().chain(dups.iter()) {
                let fresh = r.insert(i * 100, 100);
                prop_assert_eq!(fresh, !seen[i as usize]);
                seen[i as usize] = true;
                let first_missing = seen.iter().position(|s| !s).unwrap_or(40) as u64;
                prop_assert_eq!(r.in_order(), first_missing * 100);
                let beyond = seen.iter().enumerate().filter(|&(j, &s)| s && j as u64 > first_missing).count() as u64;
                prop_assert_eq!(r.held(), beyond * 100);
            }
            prop_assert_eq!(r.in_order(), 4000);
            prop_assert_eq!(r.held(), 0);
        }
    }
}
