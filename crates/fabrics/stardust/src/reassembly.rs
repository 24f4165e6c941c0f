//! Egress reassembly of one VOQ stream (source adapter, port, class): cells are sprayed over
//! many paths and arrive out of order, so they wait in a reorder window until every earlier
//! cell has come; then their fragments are joined into packets, in the order the VOQ sent
//! them (§4.1). A gap that stays open longer than the reassembly timer (a cell lost with a
//! link) is given up: the packet it cut is dropped and counted, and the stream resumes at the
//! next packet that starts after it.

use crate::cell::{Data, FIRST, LAST, Packet};
use std::collections::VecDeque;

/// What a stream did with the cells it was given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Freed {
    /// Bytes of dropped packets (they leave the egress buffer).
    pub bytes: u64,
    pub packets: u64,
    /// Cells given up for lost.
    pub lost_cells: u64,
}

#[derive(Default)]
pub struct Stream {
    /// The sequence number of the next cell to join.
    next: u32,
    /// Cells from `next` on; `None` where one has not arrived.
    window: VecDeque<Option<Data>>,
    /// The packet being joined: its flow and bytes so far.
    partial: Option<Packet>,
    /// After a loss: fragments are dropped until one starts a packet.
    skipping: bool,
}

impl Stream {
    /// Cells waiting for an earlier one.
    pub fn waiting(&self) -> usize {
        self.window.len()
    }

    /// Whether a cell is missing in front of others (the reassembly timer runs).
    pub fn has_gap(&self) -> bool {
        !self.window.is_empty()
    }

    /// The sequence number of the oldest missing cell (meaningful while [`Stream::has_gap`]):
    /// the reassembly timer times this cell, so a new head restarts it.
    pub fn head(&self) -> u32 {
        self.next
    }

    /// Takes cell `d` in; every packet it completes (with those it unblocks) goes to `out` in
    /// stream order. Returns false for a cell older than the stream (it came after its gap was
    /// given up), which the caller drops.
    pub fn accept(&mut self, d: &Data, out: &mut impl FnMut(Packet), freed: &mut Freed) -> bool {
        let ahead = d.seq.wrapping_sub(self.next);
        if ahead as i32 <= -1 {
            return false;
        }
        let ahead = ahead as usize;
        if ahead >= self.window.len() {
            self.window.resize(ahead + 1, None);
        }
        debug_assert!(self.window[ahead].is_none(), "cell {} twice", d.seq);
        self.window[ahead] = Some(*d);
        self.drain(out, freed);
        true
    }

    /// Gives up the missing cell(s) at the head of the window.
    pub fn give_up(&mut self, out: &mut impl FnMut(Packet), freed: &mut Freed) {
        while let Some(None) = self.window.front() {
            self.window.pop_front();
            self.next = self.next.wrapping_add(1);
            freed.lost_cells += 1;
        }
        if let Some(p) = self.partial.take() {
            freed.bytes += p.wire as u64;
            freed.packets += 1;
        }
        self.skipping = true;
        self.drain(out, freed);
    }

    fn drain(&mut self, out: &mut impl FnMut(Packet), freed: &mut Freed) {
        while let Some(Some(d)) = self.window.front() {
            let d = *d;
            self.window.pop_front();
            self.next = self.next.wrapping_add(1);
            for f in d.fragments() {
                if self.skipping {
                    if f.flags & FIRST == 0 {
                        freed.bytes += f.bytes as u64;
                        continue;
                    }
                    self.skipping = false;
                }
                if f.flags & FIRST != 0 {
                    debug_assert!(self.partial.is_none(), "a packet starts inside another");
                    self.partial = Some(Packet {
                        record: f.record,
                        wire: 0,
                    });
                }
                let p = self
                    .partial
                    .as_mut()
                    .expect("a fragment continues a packet");
                debug_assert_eq!(p.record, f.record, "fragments of two packets interleave");
                p.wire += f.bytes as u32;
                if f.flags & LAST != 0 {
                    out(self.partial.take().expect("the packet"));
                }
            }
        }
    }
}
