//! Timed links: a link serializes one cell at a time at its rate and
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

/// One link's timing: every field is read at every send, so a link is one record (one cache
/// line) rather than a column each.
#[derive(Clone, Copy, Debug)]
struct Link {
    busy_until: Time,
    /// Picoseconds per byte when that is exact (0 otherwise: `Rate::serialize` is used).
    ps_per_byte: u64,
    delay: Dur,
    rate: Rate,
}

/// Directed links, numbered `0..len`.
#[derive(Clone, Debug, Default)]
pub struct Links {
    links: Vec<Link>,
}

impl Links {
    pub fn new() -> Links {
        Links::default()
    }

    /// Adds a link of `rate` and propagation `delay`; returns its number.
    pub fn push(&mut self, rate: Rate, delay: Dur) -> u32 {
        assert!(rate.0 > 0, "a link needs a rate");
        let id = self.links.len() as u32;
        self.links.push(Link {
            busy_until: Time::ZERO,
            ps_per_byte: if PS_BITS.is_multiple_of(rate.0) {
                PS_BITS / rate.0
            } else {
                0
            },
            delay,
            rate,
        });
        id
    }

    pub fn len(&self) -> usize {
        self.links.len()
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    pub fn rate(&self, l: u32) -> Rate {
        self.links[l as usize].rate
    }

    pub fn delay(&self, l: u32) -> Dur {
        self.links[l as usize].delay
    }

    #[inline]
    pub fn busy_until(&self, l: u32) -> Time {
        self.links[l as usize].busy_until
    }

    /// Whether link `l` can start a cell at `now`.
    #[inline]
    pub fn is_idle(&self, l: u32, now: Time) -> bool {
        now >= self.links[l as usize].busy_until
    }

    /// Time link `l` takes to serialize `bytes`.
    #[inline]
    pub fn serialize(&self, l: u32, bytes: u64) -> Dur {
        Self::serialize_on(&self.links[l as usize], bytes)
    }

    #[inline]
    fn serialize_on(link: &Link, bytes: u64) -> Dur {
        match link.ps_per_byte {
            0 => link.rate.serialize(bytes),
            p => Dur(bytes * p),
        }
    }

    /// Sends `bytes` on link `l` at `now`: it starts when the link is free (now, or when the
    /// cell ahead has left), and the link is busy until it has left.
    #[inline]
    pub fn send(&mut self, l: u32, now: Time, bytes: u64) -> Departure {
        let link = &mut self.links[l as usize];
        let start = now.max(link.busy_until);
        let done = start + Self::serialize_on(link, bytes);
        link.busy_until = done;
        Departure {
            start,
            done,
            arrive: done + link.delay,
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
