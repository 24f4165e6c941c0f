//! Sets of the clique's ports as bits of u64 words, by global port index, for the arbiter's
//! bookkeeping: which inputs hold a cell, which a round must look at again, and, per output,
//! which inputs of its TiN wait for it. A TiN's ports are consecutive, so a TiN's part of a set
//! is a few words whatever its size (one word while it has at most 64 ports and they do not
//! straddle a word).

/// A set of ports.
#[derive(Clone, Debug)]
pub(crate) struct PortBits(Vec<u64>);

impl PortBits {
    pub(crate) fn new(ports: usize) -> PortBits {
        PortBits(vec![0; ports.div_ceil(64)])
    }

    pub(crate) fn insert(&mut self, port: u32) {
        self.0[port as usize / 64] |= 1 << (port % 64);
    }

    pub(crate) fn remove(&mut self, port: u32) {
        self.0[port as usize / 64] &= !(1 << (port % 64));
    }

    pub(crate) fn contains(&self, port: u32) -> bool {
        self.0[port as usize / 64] & 1 << (port % 64) != 0
    }

    /// Word `w` of the set.
    pub(crate) fn word(&self, w: u32) -> u64 {
        self.0[w as usize]
    }

    /// Takes the members of ports `lo..hi` in word `w` out of the set and returns them.
    pub(crate) fn take(&mut self, w: u32, lo: u32, hi: u32) -> u64 {
        let bits = self.0[w as usize] & span(w, lo, hi);
        self.0[w as usize] &= !bits;
        bits
    }

    /// Whether any of ports `lo..hi` is in the set.
    pub(crate) fn any_in(&self, lo: u32, hi: u32) -> bool {
        (lo / 64..hi.div_ceil(64)).any(|w| self.0[w as usize] & span(w, lo, hi) != 0)
    }

    /// Adds every port of `lo..hi`.
    pub(crate) fn insert_range(&mut self, lo: u32, hi: u32) {
        for w in lo / 64..hi.div_ceil(64) {
            self.0[w as usize] |= span(w, lo, hi);
        }
    }
}

/// Per output port, the inputs of its TiN whose head cell waits for it: a set of ports in the
/// words that the TiN's ports span.
#[derive(Clone, Debug)]
pub(crate) struct Waiters {
    /// Per port: where its words start in `words`, and the first global word its TiN spans.
    at: Vec<u32>,
    first_word: Vec<u32>,
    words: Vec<u64>,
}

impl Waiters {
    /// For the TiNs whose ports are `base[x]..base[x + 1]`.
    pub(crate) fn new(base: &[u32]) -> Waiters {
        let (mut at, mut first_word) = (Vec::new(), Vec::new());
        let mut len = 0u32;
        for x in base.windows(2) {
            let (lo, hi) = (x[0], x[1]);
            let n = (hi - 1) / 64 - lo / 64 + 1;
            for _ in lo..hi {
                at.push(len);
                first_word.push(lo / 64);
                len += n;
            }
        }
        at.push(len);
        Waiters {
            at,
            first_word,
            words: vec![0; len as usize],
        }
    }

    /// Input `input` (of the same TiN) waits for output `out`.
    pub(crate) fn insert(&mut self, out: u32, input: u32) {
        let o = out as usize;
        let k = self.at[o] + input / 64 - self.first_word[o];
        self.words[k as usize] |= 1 << (input % 64);
    }

    pub(crate) fn contains(&self, out: u32, input: u32) -> bool {
        let o = out as usize;
        let k = self.at[o] + input / 64 - self.first_word[o];
        self.words[k as usize] & 1 << (input % 64) != 0
    }

    /// Moves the inputs waiting for `out` into `into`.
    pub(crate) fn take_into(&mut self, out: u32, into: &mut PortBits) {
        let o = out as usize;
        let first = self.first_word[o] as usize;
        for (k, w) in self.words[self.at[o] as usize..self.at[o + 1] as usize]
            .iter_mut()
            .enumerate()
        {
            into.0[first + k] |= std::mem::take(w);
        }
    }
}

/// The bits of word `w` of a port bitset that fall in ports `lo..hi`.
fn span(w: u32, lo: u32, hi: u32) -> u64 {
    let from = lo.saturating_sub(w * 64).min(64);
    let to = (hi - w * 64).min(64);
    let upto = if to == 64 { u64::MAX } else { (1u64 << to) - 1 };
    let below = if from == 64 {
        u64::MAX
    } else {
        (1u64 << from) - 1
    };
    upto & !below
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Against the bit-by-bit reference, for every range of up to 200 ports.
    #[test]
    fn span_holds_exactly_the_ports_of_the_range_in_the_word() {
        for lo in 0..200u32 {
            for hi in lo + 1..=200 {
                for w in lo / 64..hi.div_ceil(64) {
                    let want = (0..64)
                        .filter(|b| (lo..hi).contains(&(w * 64 + b)))
                        .fold(0u64, |m, b| m | 1 << b);
                    assert_eq!(span(w, lo, hi), want, "word {w} of {lo}..{hi}");
                }
            }
        }
    }

    /// TiN sizes from 1 to 150 ports, so that some straddle words.
    fn bases() -> impl Strategy<Value = Vec<u32>> {
        prop::collection::vec(1u32..150, 1..6).prop_map(|sizes| {
            let mut base = vec![0];
            for s in sizes {
                base.push(base.last().unwrap() + s);
            }
            base
        })
    }

    proptest! {
        /// Waiters and the set they move into behave as a set of ports per output, against
        /// `BTreeSet`s; `take` and `any_in` see exactly a TiN's ports.
        #[test]
        fn waiters_move_exactly_the_inputs_inserted(
            base in bases(),
            ops in prop::collection::vec((0u32..1000, 0u32..1000, any::<bool>()), 1..200),
        ) {
            let ports = *base.last().unwrap();
            let tin_of = |p: u32| base.windows(2).position(|x| (x[0]..x[1]).contains(&p)).unwrap();
            let mut waiters = Waiters::new(&base);
            let mut bits = PortBits::new(ports as usize);
            let mut model: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); ports as usize];
            let mut set = BTreeSet::new();
            for (a, b, take) in ops {
                let out = a % ports;
                let x = tin_of(out);
                let input = base[x] + b % (base[x + 1] - base[x]);
                if take {
                    waiters.take_into(out, &mut bits);
                    set.extend(std::mem::take(&mut model[out as usize]));
                } else {
                    waiters.insert(out, input);
                    model[out as usize].insert(input);
                }
                prop_assert!(waiters.contains(out, input) == model[out as usize].contains(&input));
            }
            for x in 0..base.len() - 1 {
                let (lo, hi) = (base[x], base[x + 1]);
                let expect: BTreeSet<u32> = set.range(lo..hi).copied().collect();
                prop_assert_eq!(bits.any_in(lo, hi), !expect.is_empty());
                for p in lo..hi {
                    prop_assert_eq!(bits.contains(p), expect.contains(&p));
                }
                let mut got = BTreeSet::new();
                for w in lo / 64..hi.div_ceil(64) {
                    let mut m = bits.take(w, lo, hi);
                    while m != 0 {
                        got.insert(w * 64 + m.trailing_zeros());
                        m &= m - 1;
                    }
                }
                prop_assert_eq!(got, expect);
                prop_assert!(!bits.any_in(lo, hi));
            }
        }
    }
}
