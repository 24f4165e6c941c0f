//! Many FIFO queues sharing one slab of entries.
//!
//! For models with very many mostly-empty queues. A Shoal node keeps one FIFO per (traffic
//! class, destination), one ready queue per (class, intermediate), one pending list and one
//! in-flight list per intermediate: O(N) queues per node, O(N²) in a rack, almost all of them
//! empty at any time. A `VecDeque` per queue would cost a heap block per non-empty queue; here a
//! queue is a [`Fifo`] of two `u32`s that the owner keeps wherever its hot state lives (so that
//! one cache line holds everything about one peer), and all entries live in one [`Slab`] with a
//! free list, so steady-state operation never allocates.

const NIL: u32 = u32::MAX;

/// The two ends of one queue in a [`Slab`]. Only the slab that filled it may operate on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fifo {
    head: u32,
    tail: u32,
}

impl Fifo {
    pub const EMPTY: Fifo = Fifo {
        head: NIL,
        tail: NIL,
    };

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

impl Default for Fifo {
    fn default() -> Self {
        Fifo::EMPTY
    }
}

#[derive(Clone, Copy)]
struct Entry<T> {
    value: T,
    next: u32,
}

/// Storage for the entries of any number of [`Fifo`]s.
pub struct Slab<T> {
    entries: Vec<Entry<T>>,
    /// Indices of free entries, a stack: taking one needs no read of the entry itself, which
    /// in a big slab is a cache miss (a free list threaded through the entries costs one on
    /// every push).
    free: Vec<u32>,
}

impl<T: Copy> Default for Slab<T> {
    fn default() -> Self {
        Slab::new()
    }
}

impl<T: Copy> Slab<T> {
    pub fn new() -> Self {
        Slab {
            entries: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Entries ever allocated (the high-water mark of all queues together).
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    #[inline]
    pub fn push_back(&mut self, q: &mut Fifo, value: T) {
        let idx = if let Some(idx) = self.free.pop() {
            self.entries[idx as usize] = Entry { value, next: NIL };
            idx
        } else {
            self.entries.push(Entry { value, next: NIL });
            // Room for every entry on the free stack, so that freeing never allocates.
            self.free
                .reserve(self.entries.capacity().saturating_sub(self.free.len()));
            (self.entries.len() - 1) as u32
        };
        if q.tail == NIL {
            q.head = idx;
        } else {
            self.entries[q.tail as usize].next = idx;
        }
        q.tail = idx;
    }

    #[inline]
    pub fn front(&self, q: &Fifo) -> Option<&T> {
        (q.head != NIL).then(|| &self.entries[q.head as usize].value)
    }

    #[inline]
    pub fn pop_front(&mut self, q: &mut Fifo) -> Option<T> {
        let idx = q.head;
        if idx == NIL {
            return None;
        }
        let entry = self.entries[idx as usize];
        q.head = entry.next;
        if q.head == NIL {
            q.tail = NIL;
        }
        self.free.push(idx);
        Some(entry.value)
    }

    /// Hint: the head of `q` will be read soon.
    /// Hint: the head of `q` will be read soon.
    #[inline]
    pub fn prefetch_front(&self, q: &Fifo) {
        if let Some(e) = self.entries.get(q.head as usize) {
            crate::hint::prefetch(e);
        }
    }

    /// Hint: an entry will be appended to `q` soon (its tail is linked to the new entry, which
    /// is taken from the free list).
    #[inline]
    pub fn prefetch_back(&self, q: &Fifo) {
        if let Some(e) = self.entries.get(q.tail as usize) {
            crate::hint::prefetch(e);
        }
        if let Some(e) = self.free.last().and_then(|&f| self.entries.get(f as usize)) {
            crate::hint::prefetch(e);
        }
    }

    /// Hint: entries will be pushed soon; fetches the top of the free list (the first stage of
    /// [`Slab::prefetch_free`]).
    #[inline]
    pub fn prefetch_free_list(&self) {
        if let Some(top) = self.free.last() {
            crate::hint::prefetch(top);
        }
    }

    /// Hint: `count` entries will be pushed soon, into the entries freed last.
    #[inline]
    pub fn prefetch_free(&self, count: usize) {
        for &f in self.free.iter().rev().take(count) {
            if let Some(e) = self.entries.get(f as usize) {
                crate::hint::prefetch(e);
            }
        }
    }

    /// Keeps the entries for which `keep` returns true, in order; hands the others to `removed`
    /// in order and returns how many it removed. Linear in the queue length.
    pub fn retain(
        &mut self,
        q: &mut Fifo,
        mut keep: impl FnMut(&T) -> bool,
        mut removed: impl FnMut(T),
    ) -> usize {
        let mut cur = q.head;
        let mut prev = NIL;
        let mut count = 0;
        while cur != NIL {
            let Entry { value, next } = self.entries[cur as usize];
            if keep(&value) {
                prev = cur;
            } else {
                if prev == NIL {
                    q.head = next;
                } else {
                    self.entries[prev as usize].next = next;
                }
                self.free.push(cur);
                count += 1;
                removed(value);
            }
            cur = next;
        }
        q.tail = prev;
        if prev == NIL {
            q.head = NIL;
        }
        count
    }

    /// Empties the queue, handing each entry to `removed` in order; returns the count.
    pub fn drain(&mut self, q: &mut Fifo, removed: impl FnMut(T)) -> usize {
        self.retain(q, |_| false, removed)
    }

    /// The entries of a queue in order.
    pub fn iter<'a>(&'a self, q: &Fifo) -> impl Iterator<Item = &'a T> + 'a {
        let mut cur = q.head;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let e = &self.entries[cur as usize];
            cur = e.next;
            Some(&e.value)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Queues of one slab against `VecDeque`s as the reference, over a pseudo-random operation
    /// mix.
    #[test]
    fn behaves_like_independent_vecdeques() {
        let queues = 5;
        let mut slab = Slab::new();
        let mut heads = vec![Fifo::EMPTY; queues];
        let mut reference: Vec<VecDeque<u32>> = vec![VecDeque::new(); queues];
        let mut x: u64 = 12345;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let q = (x % queues as u64) as usize;
            match (x >> 8) % 7 {
                0..=2 => {
                    slab.push_back(&mut heads[q], step);
                    reference[q].push_back(step);
                }
                3 | 4 => assert_eq!(slab.pop_front(&mut heads[q]), reference[q].pop_front()),
                5 => {
                    let m = ((x >> 16) % 3) as u32;
                    let mut got = Vec::new();
                    let removed = slab.retain(&mut heads[q], |v| v % 3 != m, |v| got.push(v));
                    assert_eq!(removed, got.len());
                    let want: Vec<u32> = reference[q]
                        .iter()
                        .copied()
                        .filter(|v| v % 3 == m)
                        .collect();
                    reference[q].retain(|v| v % 3 != m);
                    assert_eq!(got, want);
                }
                _ => {
                    assert_eq!(
                        slab.front(&heads[q]).copied(),
                        reference[q].front().copied()
                    );
                }
            }
            assert_eq!(heads[q].is_empty(), reference[q].is_empty());
            assert!(
                slab.iter(&heads[q])
                    .copied()
                    .eq(reference[q].iter().copied())
            );
        }
        // Freed entries are reused: the slab never grows beyond the peak occupancy.
        let peak = slab.capacity();
        for head in &mut heads {
            slab.retain(head, |_| false, |_| {});
            assert!(head.is_empty());
        }
        for i in 0..peak as u32 {
            slab.push_back(&mut heads[0], i);
        }
        assert_eq!(slab.capacity(), peak);
    }
}
