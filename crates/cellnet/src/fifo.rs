//! FIFOs of handles linked through one array: a queue is a head, a tail and a length, and a
//! handle's successor lives at `next[handle]`. No queue allocates or has a capacity; a handle
//! is in at most one queue at a time (a cell is on one link or in one output).

use crate::handles::Handle;

const NIL: u32 = u32::MAX;

/// `queues` FIFOs over one handle space. Queues are numbered `0..queues`.
#[derive(Clone, Debug, Default)]
pub struct Fifos {
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
    /// Per handle: the next handle in its queue.
    next: Vec<u32>,
    /// Per handle: whether it is in a queue (debug builds).
    #[cfg(debug_assertions)]
    queued: Vec<bool>,
}

impl Fifos {
    pub fn new(queues: usize) -> Fifos {
        Fifos {
            head: vec![NIL; queues],
            tail: vec![NIL; queues],
            len: vec![0; queues],
            next: Vec::new(),
            #[cfg(debug_assertions)]
            queued: Vec::new(),
        }
    }

    /// Number of queues.
    pub fn queues(&self) -> usize {
        self.head.len()
    }

    #[inline]
    pub fn len(&self, q: u32) -> usize {
        self.len[q as usize] as usize
    }

    #[inline]
    pub fn is_empty(&self, q: u32) -> bool {
        self.len[q as usize] == 0
    }

    /// The oldest handle of queue `q`.
    #[inline]
    pub fn front(&self, q: u32) -> Option<Handle> {
        let h = self.head[q as usize];
        (h != NIL).then_some(h)
    }

    /// The newest handle of queue `q`.
    #[inline]
    pub fn back(&self, q: u32) -> Option<Handle> {
        let t = self.tail[q as usize];
        (t != NIL).then_some(t)
    }

    /// Appends `h` to queue `q`.
    #[inline]
    pub fn push_back(&mut self, q: u32, h: Handle) {
        let i = h as usize;
        if i >= self.next.len() {
            self.next.resize(i + 1, NIL);
            #[cfg(debug_assertions)]
            self.queued.resize(i + 1, false);
        }
        #[cfg(debug_assertions)]
        {
            assert!(!self.queued[i], "handle {h} is already in a queue");
            self.queued[i] = true;
        }
        self.next[i] = NIL;
        let q = q as usize;
        match self.tail[q] {
            NIL => self.head[q] = h,
            t => self.next[t as usize] = h,
        }
        self.tail[q] = h;
        self.len[q] += 1;
    }

    /// Takes the oldest handle of queue `q`.
    #[inline]
    pub fn pop_front(&mut self, q: u32) -> Option<Handle> {
        let qi = q as usize;
        let h = self.head[qi];
        if h == NIL {
            return None;
        }
        let n = self.next[h as usize];
        self.head[qi] = n;
        if n == NIL {
            self.tail[qi] = NIL;
        }
        self.len[qi] -= 1;
        #[cfg(debug_assertions)]
        {
            self.queued[h as usize] = false;
        }
        Some(h)
    }

    /// Moves every handle of `from` to the back of `to`, in order, in constant time (an
    /// output's cells going to another when its link is excluded).
    pub fn append(&mut self, to: u32, from: u32) {
        let (t, f) = (to as usize, from as usize);
        if t == f || self.head[f] == NIL {
            return;
        }
        match self.tail[t] {
            NIL => self.head[t] = self.head[f],
            tail => self.next[tail as usize] = self.head[f],
        }
        self.tail[t] = self.tail[f];
        self.len[t] += self.len[f];
        self.head[f] = NIL;
        self.tail[f] = NIL;
        self.len[f] = 0;
    }

    /// The handles of queue `q`, oldest first.
    pub fn iter(&self, q: u32) -> impl Iterator<Item = Handle> + '_ {
        let mut h = self.head[q as usize];
        std::iter::from_fn(move || {
            if h == NIL {
                return None;
            }
            let out = h;
            h = self.next[h as usize];
            Some(out)
        })
    }
}
