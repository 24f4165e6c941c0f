//! Timed links in struct-of-arrays form: a link serializes one cell at a time at its rate and
//! delivers it after its delay. A link is free again at `busy_until`; a cell sent on a busy
//! link starts when it frees (the caller decides when to send: that is where its queueing
//! discipline lives). Serialization is the exact `Rate::serialize` (rounded up to the
//! picosecond), by a multiplication where the rate divides 8 Tb·ps evenly.

use shoal_base::{Dur, Rate, Time};

/// When a cell sent on a link starts, finishes leaving, and reaches the far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    pub start: Time,
    pub done: Time,
    pub arrive: Time,
}

/// Bits times picoseconds per second: a byte at `r` b/s takes `PS_BITS / r` ps.
const PS_BITS: u64 = 8 * 1_000_000_000_000;

/// Directed links, numbered `0..len`.
#[derive(Clone, Debug, Default)]
pub struct Links {
    busy_until: Vec<Time>,
    delay: Vec<Dur>,
    rate: Vec<Rate>,
    /// Picoseconds per byte when that is exact (0 otherwise: `Rate::serialize` is used).
    ps_per_byte: Vec<u64>,
}

impl Links {
    pub fn new() -> Links {
        Links::default()
    }

    /// Adds a link of `rate` and propagation `delay`; returns its number.
    pub fn push(&mut self, rate: Rate, delay: Dur) -> u32 {
        assert!(rate.0 > 0, "a link needs a rate");
        let id = self.busy_until.len() as u32;
        self.busy_until.push(Time::ZERO);
        self.delay.push(delay);
        self.rate.push(rate);
        self.ps_per_byte.push(if PS_BITS.is_multiple_of(rate.0) {
            PS_BITS / rate.0
        } else {
            0
        });
        id
    }

    pub fn len(&self) -> usize {
        self.busy_until.len()
    }

    pub fn is_empty(&self) -> bool {
        self.busy_until.is_empty()
    }

    pub fn rate(&self, l: u32) -> Rate {
        self.rate[l as usize]
    }

    pub fn delay(&self, l: u32) -> Dur {
        self.delay[l as usize]
    }

    pub fn busy_until(&self, l: u32) -> Time {
        self.busy_until[l as usize]
    }

    /// Whether link `l` can start a cell at `now`.
    #[inline]
    pub fn is_idle(&self, l: u32, now: Time) -> bool {
        now >= self.busy_until[l as usize]
    }

    /// Time link `l` takes to serialize `bytes`.
    #[inline]
    pub fn serialize(&self, l: u32, bytes: u64) -> Dur {
        let i = l as usize;
        match self.ps_per_byte[i] {
            0 => self.rate[i].serialize(bytes),
            p => Dur(bytes * p),
        }
    }

    /// Sends `bytes` on link `l` at `now`: it starts when the link is free (now, or when the
    /// cell ahead has left), and the link is busy until it has left.
    #[inline]
    pub fn send(&mut self, l: u32, now: Time, bytes: u64) -> Departure {
        let i = l as usize;
        let start = now.max(self.busy_until[i]);
        let done = start + self.serialize(l, bytes);
        self.busy_until[i] = done;
        Departure {
            start,
            done,
            arrive: done + self.delay[i],
        }
    }
}

/// Link-level credits per (link, virtual channel), in the receiver's buffer units (words,
/// cells): a sender spends them as it sends and the receiver gives them back as its buffer
/// drains (the caller delays the return by the reverse link's delay).
#[derive(Clone, Debug, Default)]
pub struct LinkCredits {
    vcs: u32,
    left: Vec<u32>,
    full: Vec<u32>,
}

impl LinkCredits {
    /// `links` links of `vcs` channels, each starting with `per_vc` credits.
    pub fn new(links: usize, vcs: u32, per_vc: u32) -> LinkCredits {
        let n = links * vcs as usize;
        LinkCredits {
            vcs,
            left: vec![per_vc; n],
            full: vec![per_vc; n],
        }
    }

    #[inline]
    fn at(&self, l: u32, vc: u32) -> usize {
        debug_assert!(vc < self.vcs, "no channel {vc}");
        l as usize * self.vcs as usize + vc as usize
    }

    /// Credits left on (`l`, `vc`).
    #[inline]
    pub fn left(&self, l: u32, vc: u32) -> u32 {
        self.left[self.at(l, vc)]
    }

    /// Spends `n` credits if there are that many; says whether it did.
    #[inline]
    pub fn take(&mut self, l: u32, vc: u32, n: u32) -> bool {
        let i = self.at(l, vc);
        if self.left[i] < n {
            return false;
        }
        self.left[i] -= n;
        true
    }

    /// `n` credits come back. More than were spent is a model bug.
    #[inline]
    pub fn give(&mut self, l: u32, vc: u32, n: u32) {
        let i = self.at(l, vc);
        self.left[i] += n;
        assert!(
            self.left[i] <= self.full[i],
            "link {l} channel {vc}: {} credits returned, at most {} exist",
            self.left[i],
            self.full[i]
        );
    }
}
