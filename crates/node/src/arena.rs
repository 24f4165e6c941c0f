//! Many FIFO queues sharing one slab of entries.
//!
//! A Shoal node keeps one FIFO per (traffic class, destination), one ready queue per (class,
//! intermediate) and one pending list per intermediate: O(N) queues per node, O(N²) in a rack,
//! almost all of them empty at any time. A `VecDeque` per queue would cost a heap block per
//! non-empty queue and 24-32 bytes per empty one; here every queue is three `u32`s and all entries
//! live in one slab with a free list, so steady-state operation never allocates.

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Entry<T> {
    value: T,
    next: u32,
}

#[derive(Clone, Copy)]
struct Ends {
    head: u32,
    tail: u32,
    len: u32,
}

const EMPTY: Ends = Ends {
    head: NIL,
    tail: NIL,
    len: 0,
};

/// `queues` FIFO queues of `T` over one shared slab.
pub(crate) struct FifoArena<T> {
    slab: Vec<Entry<T>>,
    free: u32,
    ends: Vec<Ends>,
}

impl<T: Copy> FifoArena<T> {
    pub(crate) fn new(queues: usize) -> Self {
        FifoArena {
            slab: Vec::new(),
            free: NIL,
            ends: vec![EMPTY; queues],
        }
    }

    #[inline]
    pub(crate) fn len(&self, q: usize) -> usize {
        self.ends[q].len as usize
    }

    #[inline]
    pub(crate) fn is_empty(&self, q: usize) -> bool {
        self.ends[q].len == 0
    }

    pub(crate) fn push_back(&mut self, q: usize, value: T) {
        let idx = if self.free != NIL {
            let idx = self.free;
            self.free = self.slab[idx as usize].next;
            self.slab[idx as usize] = Entry { value, next: NIL };
            idx
        } else {
            self.slab.push(Entry { value, next: NIL });
            (self.slab.len() - 1) as u32
        };
        let ends = &mut self.ends[q];
        if ends.tail == NIL {
            ends.head = idx;
        } else {
            self.slab[ends.tail as usize].next = idx;
        }
        ends.tail = idx;
        ends.len += 1;
    }

    #[inline]
    pub(crate) fn front(&self, q: usize) -> Option<&T> {
        let head = self.ends[q].head;
        (head != NIL).then(|| &self.slab[head as usize].value)
    }

    pub(crate) fn pop_front(&mut self, q: usize) -> Option<T> {
        let ends = &mut self.ends[q];
        let idx = ends.head;
        if idx == NIL {
            return None;
        }
        let entry = self.slab[idx as usize];
        ends.head = entry.next;
        if ends.head == NIL {
            ends.tail = NIL;
        }
        ends.len -= 1;
        self.slab[idx as usize].next = self.free;
        self.free = idx;
        Some(entry.value)
    }

    /// Keeps the entries of queue `q` for which `keep` returns true, in order; the others are
    /// handed to `removed` in order. Linear in the queue length; used on failures and for the
    /// pending lists, never per cell on the data path of an unfailed rack.
    pub(crate) fn retain(
        &mut self,
        q: usize,
        mut keep: impl FnMut(&T) -> bool,
        mut removed: impl FnMut(T),
    ) {
        let mut cur = self.ends[q].head;
        let mut prev = NIL;
        let mut len = self.ends[q].len;
        while cur != NIL {
            let Entry { value, next } = self.slab[cur as usize];
            if keep(&value) {
                prev = cur;
            } else {
                if prev == NIL {
                    self.ends[q].head = next;
                } else {
                    self.slab[prev as usize].next = next;
                }
                self.slab[cur as usize].next = self.free;
                self.free = cur;
                len -= 1;
                removed(value);
            }
            cur = next;
        }
        self.ends[q].tail = prev;
        if prev == NIL {
            self.ends[q].head = NIL;
        }
        self.ends[q].len = len;
    }

    /// Removes every entry of queue `q`, handing each to `removed` in order.
    pub(crate) fn drain(&mut self, q: usize, removed: impl FnMut(T)) {
        self.retain(q, |_| false, removed);
    }

    /// Visits the entries of queue `q` in order.
    #[cfg(test)]
    pub(crate) fn iter(&self, q: usize) -> impl Iterator<Item = &T> + '_ {
        let mut cur = self.ends[q].head;
        std::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let e = &self.slab[cur as usize];
            cur = e.next;
            Some(&e.value)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The arena against `VecDeque` as the reference, over a pseudo-random operation mix.
    #[test]
    fn behaves_like_independent_vecdeques() {
        let queues = 5;
        let mut arena = FifoArena::new(queues);
        let mut reference: Vec<VecDeque<u32>> = vec![VecDeque::new(); queues];
        let mut x: u64 = 12345;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let q = (x % queues as u64) as usize;
            match (x >> 8) % 7 {
                0..=2 => {
                    arena.push_back(q, step);
                    reference[q].push_back(step);
                }
                3 | 4 => assert_eq!(arena.pop_front(q), reference[q].pop_front()),
                5 => {
                    let m = (x >> 16) % 3;
                    let mut got = Vec::new();
                    arena.retain(q, |v| v % 3 != m as u32, |v| got.push(v));
                    let want: Vec<u32> = reference[q]
                        .iter()
                        .copied()
                        .filter(|v| v % 3 == m as u32)
                        .collect();
                    reference[q].retain(|v| v % 3 != m as u32);
                    assert_eq!(got, want);
                }
                _ => {
                    assert_eq!(arena.front(q).copied(), reference[q].front().copied());
                }
            }
            assert_eq!(arena.len(q), reference[q].len());
            assert!(arena.iter(q).copied().eq(reference[q].iter().copied()));
        }
        // Freed entries are reused: the slab never grows beyond the peak occupancy.
        let peak = arena.slab.len();
        for q in 0..queues {
            arena.drain(q, |_| {});
        }
        for i in 0..peak as u32 {
            arena.push_back(0, i);
        }
        assert_eq!(arena.slab.len(), peak);
    }
}
