//! The reachability protocol of one device (§4.2, §5.9, Appendix E) as a sans-IO state
//! machine: every device sends, on each of its links, one reachability message every
//! interval t (c clocks at f); a message carries a bitmap of b Fabric Adapters (chunk k covers
//! adapters k·b to k·b + b − 1), so the whole table takes M = ⌈adapters / b⌉ messages, sent
//! round-robin. From what its neighbours advertise, a device builds its forwarding table
//! ([`ReachTable`]); the same messages tell the health of each link:
//! - a link that brings no message for th intervals is excluded (a failed device is silent);
//! - a link whose messages arrive corrupted more than `error_limit` times among the last
//!   `error_window` is excluded, and the device marks it faulty on its own messages on that
//!   link, so that the far end excludes it too (§5.9);
//! - an excluded link is valid again only after th consecutive good messages;
//! - a bit a neighbour advertises changes only after th consecutive messages agree on it
//!   (Appendix E: "multiple updates of a link's value (th) before updating its state"), so
//!   each hop of a change takes about M · t · th, the model's figure.
//!
//! What a device advertises (the paper gives the mechanism, not the rule; ours is the
//! valley-free rule of folded Clos networks): an adapter advertises itself; an element
//! advertises on a link going up (towards a higher tier) the adapters it reaches through its
//! valid links going down, and on a link going down every adapter it reaches through any other
//! valid link (split horizon: never what it learnt on that link). A device forwards towards
//! a destination over the valid links going down that reach it, or, if none does, over the
//! valid links going up that reach it. Cells so go up, then down, never back up, and a
//! converged table is exactly the shortest paths of an intact folded Clos
//! ([`ReachTable::converged`]).

use crate::reach::ReachTable;
use shoal_base::{Dur, Time};

/// Most adapters one message may cover (the bitmap of [`ReachMsg`]).
pub const MAX_BITMAP: u32 = 256;
const BITMAP_WORDS: usize = (MAX_BITMAP / 64) as usize;

/// The protocol's parameters (Appendix E, Table 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReachConfig {
    /// t = c / f, between two messages on a link.
    pub interval: Dur,
    /// b: adapters one message covers, 1 to [`MAX_BITMAP`].
    pub bitmap: u32,
    /// th: consecutive messages that must agree before a bit or a link's validity changes; a
    /// link silent for th intervals (and half an interval of slack) is excluded.
    pub confirm: u32,
    /// Error-rate exclusion: more than `error_limit` corrupted messages among the last
    /// `error_window` (at most 64).
    pub error_window: u32,
    pub error_limit: u32,
}

impl ReachConfig {
    /// How long a valid link may stay silent.
    pub fn timeout(&self) -> Dur {
        Dur(self.confirm as u64 * self.interval.0 + self.interval.0 / 2)
    }
}

/// One reachability message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReachMsg {
    /// Which b adapters the bitmap covers.
    pub chunk: u32,
    /// Bit i: the sender reaches adapter chunk · b + i (through some link other than this one).
    pub bits: [u64; BITMAP_WORDS],
    /// The sender sees too many errors on this link and excludes it.
    pub faulty: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct LinkHealth {
    valid: bool,
    last: Option<Time>,
    /// Good messages since the last bad one or the last exclusion.
    good_run: u32,
    /// The last `error_window` messages, newest in bit 0; 1 = corrupted.
    errors: u64,
    /// We see too many errors and tell the peer.
    faulty_here: bool,
}

/// Counters of one device's protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReachStats {
    pub messages_sent: u64,
    pub messages_received: u64,
    pub corrupted: u64,
    /// Links excluded for silence, for errors (ours or the peer's), and validated again.
    pub silent: u64,
    pub faulty: u64,
    pub validated: u64,
    /// Forwarding table rebuilds.
    pub updates: u64,
}

pub struct Reachability {
    cfg: ReachConfig,
    fas: u32,
    /// This device's adapter number if it is one.
    adapter: Option<u32>,
    /// Per link: it goes up (the peer is a tier above).
    up: Vec<bool>,
    health: Vec<LinkHealth>,
    /// Per link, per adapter: the peer advertises it (confirmed), `words` u64 per link.
    adv: Vec<u64>,
    words: usize,
    /// Per (link, chunk): bits that differ from `adv` and how many messages in a row said so.
    pending: Vec<Option<([u64; BITMAP_WORDS], u32)>>,
    chunks: u32,
    /// Per link: the chunk to send next.
    cursor: Vec<u32>,
    table: ReachTable,
    /// Per adapter: valid links going down, and valid links, whose peers advertise it (what
    /// this device advertises, without scanning its links per message).
    down_count: Vec<u16>,
    all_count: Vec<u16>,
    /// The same as bitmaps of `words` u64 (bit per adapter): down_count > 0, all_count >= 1
    /// and all_count >= 2, so that a message is built a word at a time.
    down_any: Vec<u64>,
    all_one: Vec<u64>,
    all_two: Vec<u64>,
    changed: bool,
    stats: ReachStats,
}

impl Reachability {
    /// A device that has heard nothing yet: no link valid, nothing reachable. `up[l]`: link
    /// `l` leads a tier up.
    pub fn new(cfg: ReachConfig, fas: u32, adapter: Option<u32>, up: Vec<bool>) -> Reachability {
        assert!(
            (1..=MAX_BITMAP).contains(&cfg.bitmap),
            "a message covers 1 to {MAX_BITMAP} adapters"
        );
        assert!(cfg.error_window <= 64 && cfg.confirm >= 1);
        let links = up.len();
        let words = (fas as usize).div_ceil(64).max(1);
        let chunks = fas.div_ceil(cfg.bitmap).max(1);
        Reachability {
            cfg,
            fas,
            adapter,
            up,
            health: vec![LinkHealth::default(); links],
            adv: vec![0; links * words],
            words,
            pending: vec![None; links * chunks as usize],
            chunks,
            cursor: vec![0; links],
            table: ReachTable::new(fas as usize, links),
            down_count: vec![0; fas as usize],
            all_count: vec![0; fas as usize],
            down_any: vec![0; words],
            all_one: vec![0; words],
            all_two: vec![0; words],
            changed: false,
            stats: ReachStats::default(),
        }
    }

    pub fn links(&self) -> usize {
        self.up.len()
    }

    /// M: messages per full table.
    pub fn chunks(&self) -> u32 {
        self.chunks
    }

    pub fn table(&self) -> &ReachTable {
        &self.table
    }

    pub fn stats(&self) -> &ReachStats {
        &self.stats
    }

    pub fn is_valid(&self, link: u32) -> bool {
        self.health[link as usize].valid
    }

    /// Whether the forwarding table changed since the last call.
    pub fn poll_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    fn adv_has(&self, link: usize, dst: u32) -> bool {
        self.adv[link * self.words + (dst as usize >> 6)] >> (dst & 63) & 1 == 1
    }

    /// Whether this device advertises adapter `dst` on link `link`.
    pub fn advertises(&self, link: u32, dst: u32) -> bool {
        if let Some(me) = self.adapter {
            return dst == me;
        }
        let l = link as usize;
        if self.up[l] {
            self.down_count[dst as usize] > 0
        } else {
            let own = self.health[l].valid && self.adv_has(l, dst);
            self.all_count[dst as usize] > own as u16
        }
    }

    /// The next message this device sends on `link`.
    pub fn next_message(&mut self, link: u32) -> ReachMsg {
        let l = link as usize;
        let chunk = self.cursor[l];
        self.cursor[l] = (chunk + 1) % self.chunks;
        let first = chunk * self.cfg.bitmap;
        let count = self.cfg.bitmap.min(self.fas - first);
        let bits = if first.is_multiple_of(64) {
            self.chunk_words(first, count, |w| self.advertised_word(l, w))
        } else {
            let mut bits = [0u64; BITMAP_WORDS];
            for i in 0..count {
                if self.advertises(link, first + i) {
                    bits[i as usize >> 6] |= 1 << (i & 63);
                }
            }
            bits
        };
        self.stats.messages_sent += 1;
        ReachMsg {
            chunk,
            bits,
            faulty: self.health[l].faulty_here,
        }
    }

    /// Word `w` of what this device advertises on link `l` ([`Reachability::advertises`] for
    /// adapters 64·w to 64·w + 63).
    fn advertised_word(&self, l: usize, w: usize) -> u64 {
        if let Some(me) = self.adapter {
            return if me as usize >> 6 == w {
                1 << (me & 63)
            } else {
                0
            };
        }
        if self.up[l] {
            return self.down_any[w];
        }
        if !self.health[l].valid {
            return self.all_one[w];
        }
        // A destination this link's own peer advertises needs another link to it.
        let own = self.adv[l * self.words + w];
        (own & self.all_two[w]) | (!own & self.all_one[w])
    }

    /// The `count` bits from adapter `first` (a multiple of 64) on, word `w` of them read by
    /// `word(first / 64 + w)`.
    fn chunk_words(
        &self,
        first: u32,
        count: u32,
        word: impl Fn(usize) -> u64,
    ) -> [u64; BITMAP_WORDS] {
        let mut bits = [0u64; BITMAP_WORDS];
        let base = first as usize / 64;
        for (i, b) in bits
            .iter_mut()
            .enumerate()
            .take(count.div_ceil(64) as usize)
        {
            let left = count - 64 * i as u32;
            let mask = if left >= 64 {
                u64::MAX
            } else {
                (1 << left) - 1
            };
            *b = word(base + i) & mask;
        }
        bits
    }

    /// The bits of chunk `chunk` that link `link`'s peer is known to advertise.
    fn known(&self, link: usize, chunk: u32) -> [u64; BITMAP_WORDS] {
        let first = chunk * self.cfg.bitmap;
        let count = self.cfg.bitmap.min(self.fas - first);
        if first.is_multiple_of(64) {
            return self.chunk_words(first, count, |w| self.adv[link * self.words + w]);
        }
        let mut bits = [0u64; BITMAP_WORDS];
        for i in 0..count {
            if self.adv_has(link, first + i) {
                bits[i as usize >> 6] |= 1 << (i & 63);
            }
        }
        bits
    }

    /// A good message arrived on `link`.
    pub fn handle_message(&mut self, now: Time, link: u32, msg: &ReachMsg) {
        let l = link as usize;
        self.stats.messages_received += 1;
        let th = self.cfg.confirm;
        let h = &mut self.health[l];
        h.last = Some(now);
        h.errors <<= 1;
        h.good_run = h.good_run.saturating_add(1);
        let mut rebuild = false;
        if msg.faulty {
            h.good_run = 0;
            if h.valid {
                h.valid = false;
                self.stats.faulty += 1;
                rebuild = true;
            }
        } else {
            if h.faulty_here && self.errors(l) <= self.cfg.error_limit {
                self.health[l].faulty_here = false;
            }
            let h = &mut self.health[l];
            if !h.valid && h.good_run >= th && !h.faulty_here {
                h.valid = true;
                self.stats.validated += 1;
                rebuild = true;
            }
        }
        if msg.chunk < self.chunks {
            let p = l * self.chunks as usize + msg.chunk as usize;
            if self.known(l, msg.chunk) == msg.bits {
                self.pending[p] = None;
            } else {
                let count = match self.pending[p] {
                    Some((bits, n)) if bits == msg.bits => n + 1,
                    _ => 1,
                };
                if count >= th {
                    self.pending[p] = None;
                    self.learn(l, msg.chunk, &msg.bits);
                    rebuild |= self.health[l].valid;
                } else {
                    self.pending[p] = Some((msg.bits, count));
                }
            }
        }
        if rebuild {
            self.rebuild();
        }
    }

    fn errors(&self, l: usize) -> u32 {
        let w = self.cfg.error_window;
        let mask = if w >= 64 { u64::MAX } else { (1 << w) - 1 };
        (self.health[l].errors & mask).count_ones()
    }

    /// A message arrived on `link` corrupted (its check failed): it tells nothing but that the
    /// link errs.
    pub fn handle_corrupt(&mut self, now: Time, link: u32) {
        let l = link as usize;
        self.stats.corrupted += 1;
        let h = &mut self.health[l];
        h.last = Some(now);
        h.errors = h.errors << 1 | 1;
        h.good_run = 0;
        if self.errors(l) > self.cfg.error_limit {
            let h = &mut self.health[l];
            h.faulty_here = true;
            if h.valid {
                h.valid = false;
                self.stats.faulty += 1;
                self.rebuild();
            }
        }
    }

    /// When a valid link would next be found silent.
    pub fn poll_timeout(&self) -> Option<Time> {
        let timeout = self.cfg.timeout();
        self.health
            .iter()
            .filter(|h| h.valid)
            .filter_map(|h| h.last.map(|t| t + timeout))
            .min()
    }

    /// Excludes the valid links silent for the timeout by `now`.
    pub fn handle_timeout(&mut self, now: Time) {
        let timeout = self.cfg.timeout();
        let mut rebuild = false;
        for h in &mut self.health {
            if h.valid && h.last.is_some_and(|t| t + timeout <= now) {
                h.valid = false;
                h.good_run = 0;
                self.stats.silent += 1;
                rebuild = true;
            }
        }
        if rebuild {
            self.rebuild();
        }
    }

    fn learn(&mut self, l: usize, chunk: u32, bits: &[u64; BITMAP_WORDS]) {
        let first = chunk * self.cfg.bitmap;
        for i in 0..self.cfg.bitmap.min(self.fas - first) {
            let dst = first + i;
            let w = &mut self.adv[l * self.words + (dst as usize >> 6)];
            if bits[i as usize >> 6] >> (i & 63) & 1 == 1 {
                *w |= 1 << (dst & 63);
            } else {
                *w &= !(1 << (dst & 63));
            }
        }
    }

    /// The forwarding table from the valid links' advertisements: down links that reach a
    /// destination, or else up links that do.
    fn rebuild(&mut self) {
        let mut t = ReachTable::new(self.fas as usize, self.links());
        for dst in 0..self.fas {
            let (mut down, mut all) = (0u16, 0u16);
            for l in 0..self.links() {
                if self.health[l].valid && self.adv_has(l, dst) {
                    all += 1;
                    down += !self.up[l] as u16;
                }
            }
            self.down_count[dst as usize] = down;
            self.all_count[dst as usize] = all;
            let (w, bit) = (dst as usize >> 6, 1u64 << (dst & 63));
            for (map, on) in [
                (&mut self.down_any, down > 0),
                (&mut self.all_one, all >= 1),
                (&mut self.all_two, all >= 2),
            ] {
                if on {
                    map[w] |= bit;
                } else {
                    map[w] &= !bit;
                }
            }
            if Some(dst) == self.adapter {
                continue;
            }
            for going_up in [false, true] {
                let mut any = false;
                for l in 0..self.links() {
                    if self.up[l] == going_up && self.health[l].valid && self.adv_has(l, dst) {
                        t.set(dst, l as u32, true);
                        any = true;
                    }
                }
                if any {
                    break;
                }
            }
        }
        if t != self.table {
            self.table = t;
            self.changed = true;
            self.stats.updates += 1;
        }
    }

    /// The bootstrap ([`Reachability::assume`]) is over: its table changes are not news.
    pub fn settle(&mut self) {
        self.changed = false;
        self.stats = ReachStats::default();
    }

    /// Bootstrap: link `link` is valid since `now` and its peer advertises exactly `adv` (one
    /// bool per adapter), as if th messages had said so. Used to start a network converged.
    pub fn assume(&mut self, now: Time, link: u32, adv: impl Fn(u32) -> bool) {
        let l = link as usize;
        self.health[l] = LinkHealth {
            valid: true,
            last: Some(now),
            good_run: self.cfg.confirm,
            ..LinkHealth::default()
        };
        for dst in 0..self.fas {
            let w = &mut self.adv[l * self.words + (dst as usize >> 6)];
            if adv(dst) {
                *w |= 1 << (dst & 63);
            } else {
                *w &= !(1 << (dst & 63));
            }
        }
        self.rebuild();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ReachConfig {
        ReachConfig {
            interval: Dur::from_us(10),
            bitmap: 4,
            confirm: 3,
            error_window: 16,
            error_limit: 2,
        }
    }

    fn msg(chunk: u32, bits: u64) -> ReachMsg {
        let mut b = [0; BITMAP_WORDS];
        b[0] = bits;
        ReachMsg {
            chunk,
            bits: b,
            faulty: false,
        }
    }

    fn at(us: u64) -> Time {
        Time::ZERO + Dur::from_us(us)
    }

    /// An element with two links down and one up, 8 adapters in two chunks of 4.
    fn element() -> Reachability {
        Reachability::new(cfg(), 8, None, vec![false, false, true])
    }

    #[test]
    fn a_link_is_valid_after_th_good_messages_and_its_bits_after_th_agreeing_ones() {
        let mut r = element();
        for k in 0..2 {
            r.handle_message(at(10 * k), 0, &msg(0, 0b0001));
            assert!(!r.is_valid(0), "message {k}");
        }
        r.handle_message(at(20), 0, &msg(0, 0b0001));
        assert!(r.is_valid(0));
        assert!(r.poll_changed());
        assert_eq!(r.table().members(0).collect::<Vec<_>>(), [0]);
        // A bit changes only after three messages agree.
        r.handle_message(at(30), 0, &msg(0, 0b0011));
        r.handle_message(at(40), 0, &msg(0, 0b0001));
        r.handle_message(at(50), 0, &msg(0, 0b0011));
        r.handle_message(at(60), 0, &msg(0, 0b0011));
        assert!(!r.table().contains(1, 0));
        r.handle_message(at(70), 0, &msg(0, 0b0011));
        assert!(r.table().contains(1, 0));
    }

    #[test]
    fn down_links_first_up_links_otherwise_and_split_horizon() {
        let mut r = element();
        r.assume(Time::ZERO, 0, |d| d == 0);
        r.assume(Time::ZERO, 1, |d| d == 1);
        r.assume(Time::ZERO, 2, |d| d >= 2);
        let m = |d| r.table().members(d).collect::<Vec<_>>();
        assert_eq!((m(0), m(1), m(5)), (vec![0], vec![1], vec![2]));
        // Up: only what the down links reach. Down: everything but what that link said.
        let adv = |r: &Reachability, l| (0..8).filter(|&d| r.advertises(l, d)).collect::<Vec<_>>();
        assert_eq!(adv(&r, 2), [0, 1]);
        assert_eq!(adv(&r, 0), [1, 2, 3, 4, 5, 6, 7]);
        // The message of chunk 1 on link 2 is empty; on link 0 it has all four.
        r.cursor[2] = 1;
        assert_eq!(r.next_message(2).bits[0], 0);
        r.cursor[0] = 1;
        assert_eq!(r.next_message(0).bits[0], 0b1111);
    }

    #[test]
    fn silence_excludes_a_link_and_good_messages_bring_it_back() {
        let mut r = element();
        r.assume(Time::ZERO, 0, |d| d == 0);
        r.assume(Time::ZERO, 2, |_| true);
        assert_eq!(r.poll_timeout(), Some(at(35)));
        r.handle_message(at(10), 0, &msg(0, 0b0001));
        r.handle_timeout(at(35));
        assert!(!r.is_valid(2) && r.is_valid(0));
        assert_eq!(r.table().members(0).collect::<Vec<_>>(), [0]);
        assert_eq!(
            r.table().count(5),
            0,
            "nothing reaches 5 without the up link"
        );
        for k in 0..3 {
            r.handle_message(at(40 + 10 * k), 2, &msg(1, 0b1111));
        }
        assert!(r.is_valid(2));
        assert_eq!(r.table().members(5).collect::<Vec<_>>(), [2]);
        assert_eq!(r.stats().silent, 1);
        assert_eq!(r.stats().validated, 1);
    }

    #[test]
    fn errors_over_the_limit_exclude_a_link_on_both_ends() {
        let mut r = element();
        r.assume(Time::ZERO, 0, |d| d == 0);
        for k in 0..2 {
            r.handle_corrupt(at(k), 0);
        }
        assert!(r.is_valid(0), "two errors are within the limit");
        r.handle_corrupt(at(3), 0);
        assert!(!r.is_valid(0));
        assert!(r.next_message(0).faulty, "the peer is told");
        // Good messages: valid again after th in a row once the window has room.
        r.handle_message(at(4), 0, &msg(0, 0b0001));
        assert!(r.next_message(0).faulty, "still three errors in the window");
        for k in 0..16 {
            r.handle_message(at(5 + k), 0, &msg(0, 0b0001));
        }
        assert!(r.is_valid(0));
        assert!(!r.next_message(0).faulty);
        // The peer's own verdict excludes the link here too.
        let mut bad = msg(0, 0b0001);
        bad.faulty = true;
        r.handle_message(at(30), 0, &bad);
        assert!(!r.is_valid(0));
    }

    proptest::proptest! {
        /// Messages built a word at a time say what `advertises` says bit by bit, and what a
        /// device knows of a chunk is what it learnt, for any table and any bitmap size.
        #[test]
        fn messages_built_by_words_match_the_bits(
            fas in 1u32..300,
            bitmap in proptest::sample::select(vec![1u32, 5, 64, 100, 128, 256]),
            up in proptest::collection::vec(proptest::bool::ANY, 1..6),
            seed in 0u64..1_000,
            adapter in proptest::option::of(0u32..300),
        ) {
            let adapter = adapter.filter(|&a| a < fas);
            let c = ReachConfig { bitmap, ..cfg() };
            let mut r = Reachability::new(c, fas, adapter, up.clone());
            // Pseudo-random advertisements per link, some links left silent (invalid).
            for l in 0..up.len() as u32 {
                let h = |d: u32| (d as u64 * 2_654_435_761 + l as u64 * 40_503 + seed) % 7;
                if h(fas) != 0 {
                    r.assume(Time::ZERO, l, |d| h(d) < 3);
                }
            }
            for l in 0..up.len() as u32 {
                for chunk in 0..r.chunks() {
                    r.cursor[l as usize] = chunk;
                    let m = r.next_message(l);
                    let first = chunk * bitmap;
                    for i in 0..bitmap.min(fas - first) {
                        let bit = m.bits[i as usize >> 6] >> (i & 63) & 1 == 1;
                        proptest::prop_assert_eq!(bit, r.advertises(l, first + i));
                        let known = r.known(l as usize, chunk)[i as usize >> 6] >> (i & 63) & 1;
                        proptest::prop_assert_eq!(known == 1, r.adv_has(l as usize, first + i));
                    }
                    let past = bitmap.min(fas - first) as usize;
                    for i in past..(MAX_BITMAP as usize) {
                        proptest::prop_assert_eq!(m.bits[i >> 6] >> (i & 63) & 1, 0);
                    }
                }
            }
        }
    }
}
