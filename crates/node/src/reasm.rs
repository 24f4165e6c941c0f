//! In-order reassembly at the destination (§3.5 "Cell reordering and reassembly").
//!
//! Cells of one flow travel through every intermediate node and arrive out of order. Each
//! (source, class) has an expected sequence number; a cell that matches it is delivered at once,
//! together with the run of buffered successors it unblocks; a later one waits in a ring indexed
//! by its distance from the expected number. Sequence numbers are 15 bits, compared as serial
//! numbers, so a flow may have at most 2^14 cells outstanding out of order.
//!
//! Public so that the simulator's fast engine reassembles with this same code.

use crate::frame::SEQ_MODULUS;

/// Rings larger than this are freed once idle (`release_if_idle`). A ring grows to the
/// furthest a cell has run ahead, and a destination keeps one per source it has heard from:
/// kept at their largest, they held most of the memory of a million-flow run (about 1.4 GiB of
/// 1.8 at 512 nodes).
pub const KEEP_SLOTS: usize = 16;

/// Largest distance ahead of the expected cell that can be buffered.
pub const WINDOW: u32 = SEQ_MODULUS / 2;

#[derive(Clone, Copy, Debug)]
pub struct Held<P> {
    pub len: u16,
    pub sop: bool,
    pub eop: bool,
    pub payload: P,
}

/// What became of an arriving cell.
#[derive(Debug, PartialEq, Eq)]
pub enum Placed {
    /// It was the expected cell: deliver it, then call `pop_ready` until it returns `None`.
    InOrder,
    /// Buffered until the gap before it fills.
    Buffered,
    /// Already delivered or already buffered. In serial-number arithmetic a cell 2^14 or more
    /// ahead is indistinguishable from an old one, so it lands here too.
    Duplicate,
}

#[derive(Default)]
pub struct Reassembly<P> {
    expected: u16,
    /// Ring of held cells; slot `(head + d) & mask` holds the cell `d` ahead of `expected`.
    ring: Vec<Option<Held<P>>>,
    head: usize,
    held: u32,
    held_bytes: u64,
    /// A cell arrived since the last `release_if_idle`.
    touched: bool,
}

impl<P: Copy> Reassembly<P> {
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }

    /// Places an arriving cell with sequence number `seq`.
    pub fn place(&mut self, seq: u16, cell: Held<P>) -> Placed {
        self.touched = true;
        let ahead = (seq as u32 + SEQ_MODULUS - self.expected as u32) % SEQ_MODULUS;
        if ahead == 0 {
            self.advance();
            return Placed::InOrder;
        }
        if ahead >= WINDOW {
            // Behind the expected number in serial arithmetic: delivered before.
            return Placed::Duplicate;
        }
        let ahead = ahead as usize;
        if ahead >= self.ring.len() {
            self.grow(ahead + 1);
        }
        let mask = self.ring.len() - 1;
        let slot = &mut self.ring[(self.head + ahead) & mask];
        if slot.is_some() {
            return Placed::Duplicate;
        }
        *slot = Some(cell);
        self.held += 1;
        self.held_bytes += cell.len as u64;
        Placed::Buffered
    }

    /// Whether the ring is larger than `KEEP_SLOTS` (the node lists such rings to sweep).
    pub fn is_large(&self) -> bool {
        self.ring.len() > KEEP_SLOTS
    }

    /// Frees the ring if it holds nothing and no cell arrived since the previous call; says
    /// whether the ring is still large. The node calls it every `SWEEP_SLOTS` on its large
    /// rings: a ring in use is touched between sweeps and kept, so a long flow never pays an
    /// allocation per cell, while the ring of a pair whose flows ended goes within two sweeps.
    pub fn release_if_idle(&mut self) -> bool {
        let idle = !self.touched && self.held == 0;
        self.touched = false;
        if idle {
            self.ring = Vec::new();
            self.head = 0;
        }
        self.is_large()
    }

    /// Hint: a cell with sequence number `seq` will be placed soon.
    #[inline]
    pub fn prefetch(&self, seq: u16) {
        let ahead = (seq as u32 + SEQ_MODULUS - self.expected as u32) % SEQ_MODULUS;
        if let Some(slot) = self
            .ring
            .get(self.head.wrapping_add(ahead as usize) & self.ring.len().wrapping_sub(1))
        {
            shoal_base::hint::prefetch(slot);
        }
    }

    /// Gives up on the cells missing before the first held one: the expected number jumps to it,
    /// so that `pop_ready` delivers from there. Returns how many sequence numbers were skipped
    /// (0 when nothing is held).
    pub fn skip_to_held(&mut self) -> u32 {
        if self.held == 0 {
            return 0;
        }
        let mut skipped = 0;
        while self.ring[self.head].is_none() {
            self.advance();
            skipped += 1;
        }
        skipped
    }

    /// The next buffered cell that is now in order, if any.
    pub fn pop_ready(&mut self) -> Option<Held<P>> {
        if self.held == 0 {
            return None;
        }
        let cell = self.ring[self.head].take()?;
        self.held -= 1;
        self.held_bytes -= cell.len as u64;
        self.advance();
        Some(cell)
    }

    fn advance(&mut self) {
        self.expected = ((self.expected as u32 + 1) % SEQ_MODULUS) as u16;
        if !self.ring.is_empty() {
            self.head = (self.head + 1) & (self.ring.len() - 1);
        }
    }

    /// Grows the ring to a power of two of at least `need` slots, keeping held cells at their
    /// distance from the expected one.
    fn grow(&mut self, need: usize) {
        let cap = need.next_power_of_two().max(8);
        let mut ring = vec![None; cap];
        let old = self.ring.len();
        for (d, slot) in ring.iter_mut().enumerate().take(old) {
            *slot = self.ring[(self.head + d) & (old - 1)].take();
        }
        self.ring = ring;
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(len: u16) -> Held<u32> {
        Held {
            len,
            sop: false,
            eop: false,
            payload: len as u32,
        }
    }

    /// Feeds `order` (a permutation of 0..n, offset by `base`) and returns the delivery order.
    fn deliver(base: u16, order: &[u16]) -> Vec<u32> {
        let mut r: Reassembly<u32> = Reassembly {
            expected: base,
            ..Default::default()
        };
        let mut out = Vec::new();
        for &k in order {
            let seq = ((base as u32 + k as u32) % SEQ_MODULUS) as u16;
            match r.place(seq, held(k)) {
                Placed::InOrder => {
                    out.push(k as u32);
                    while let Some(c) = r.pop_ready() {
                        out.push(c.payload);
                    }
                }
                Placed::Buffered => {}
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(r.held_bytes(), 0);
        out
    }

    #[test]
    fn any_arrival_order_is_delivered_in_order_across_the_wrap() {
        let n = 40u16;
        let mut order: Vec<u16> = (0..n).collect();
        let mut x: u32 = 7;
        for i in (1..order.len()).rev() {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            order.swap(i, (x as usize >> 8) % (i + 1));
        }
        let want: Vec<u32> = (0..n as u32).collect();
        assert_eq!(deliver(0, &order), want);
        assert_eq!(deliver(SEQ_MODULUS as u16 - 10, &order), want);
        let reversed: Vec<u16> = (0..n).rev().collect();
        assert_eq!(deliver(5, &reversed), want);
    }

    #[test]
    fn a_large_ring_is_freed_only_when_drained_and_idle_and_grows_again() {
        let mut r: Reassembly<u32> = Reassembly::default();
        for seq in (1..=100).rev() {
            assert_eq!(r.place(seq, held(seq)), Placed::Buffered);
        }
        assert!(r.is_large());
        // Holding cells: kept, however long.
        assert!(r.release_if_idle() && r.release_if_idle());
        assert_eq!(r.place(0, held(0)), Placed::InOrder);
        let mut next = 1;
        while let Some(c) = r.pop_ready() {
            assert_eq!(c.payload, next);
            next += 1;
        }
        assert_eq!((next, r.held), (101, 0));
        // Drained but touched since the last sweep: kept; then idle: freed.
        assert!(r.release_if_idle());
        assert!(!r.release_if_idle());
        assert!(r.ring.is_empty());
        // The next burst grows it again and is delivered in order as before.
        assert_eq!(r.place(103, held(103)), Placed::Buffered);
        assert_eq!(r.place(102, held(102)), Placed::Buffered);
        assert_eq!(r.place(101, held(101)), Placed::InOrder);
        assert_eq!(r.pop_ready().map(|c| c.payload), Some(102));
        assert_eq!(r.pop_ready().map(|c| c.payload), Some(103));
        assert!(r.pop_ready().is_none());
        assert!(!r.is_large());
    }

    #[test]
    fn skipping_a_hole_delivers_what_it_held_back_and_refuses_the_lost_cell_later() {
        let mut r: Reassembly<u32> = Reassembly::default();
        assert_eq!(r.skip_to_held(), 0, "nothing held, nothing to give up");
        assert_eq!(r.place(0, held(1)), Placed::InOrder);
        assert_eq!(r.place(3, held(3)), Placed::Buffered);
        assert_eq!(r.place(4, held(4)), Placed::Buffered);
        assert_eq!(r.skip_to_held(), 2, "cells 1 and 2 given up");
        assert_eq!(r.pop_ready().map(|c| c.payload), Some(3));
        assert_eq!(r.pop_ready().map(|c| c.payload), Some(4));
        assert!(r.pop_ready().is_none());
        assert_eq!(r.place(2, held(2)), Placed::Duplicate);
        assert_eq!(r.place(5, held(5)), Placed::InOrder);
    }

    #[test]
    fn duplicates_are_refused() {
        let mut r: Reassembly<u32> = Reassembly::default();
        assert_eq!(r.place(0, held(1)), Placed::InOrder);
        assert_eq!(r.place(0, held(1)), Placed::Duplicate);
        assert_eq!(r.place(3, held(1)), Placed::Buffered);
        assert_eq!(r.place(3, held(1)), Placed::Duplicate);
        assert_eq!(r.held_bytes(), 1);
        // Half the sequence space behind the expected number counts as already delivered.
        assert_eq!(r.place((1 + WINDOW) as u16, held(1)), Placed::Duplicate);
        assert_eq!(r.place(WINDOW as u16, held(1)), Placed::Buffered);
    }
}
