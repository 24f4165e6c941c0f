//! FIFOs of handles linked through one array: a queue is a head, a tail and a length (one
//! 12-byte record, so that an operation touches one cache line of queue state), and a
//! handle's successor lives at `next[handle]`. No queue allocates or has a capacity; a handle
//! is in at most one queue at a time (a cell is on one link or in one output).

use crate::handles::Handle;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Queue {
    head: u32,
    tail: u32,
    len: u32,
}

const EMPTY: Queue = Queue {
    head: NIL,
    tail: NIL,
    len: 0,
};

/// `queues` FIFOs over one handle space. Queues are numbered `0..queues`.
#[derive(Clone, Debug, Default)]
pub struct Fifos {
    q: Vec<Queue>,
    /// Per handle: the next handle in its queue.
    next: Vec<u32>,
    /// Per handle: whether it is in a queue (debug builds).
    #[cfg(debug_assertions)]
    queued: Vec<bool>,
}

impl Fifos {
    pub fn new(queues: usize) -> Fifos {
        Fifos {
            q: vec![EMPTY; queues],
            next: Vec::new(),
            #[cfg(debug_assertions)]
            queued: Vec::new(),
        }
    }

    /// Number of queues.
    pub fn queues(&self) -> usize {
        self.q.len()
    }

    #[inline]
    pub fn len(&self, q: u32) -> usize {
        self.q[q as usize].len as usize
    }

    #[inline]
    pub fn is_empty(&self, q: u32) -> bool {
        self.q[q as usize].len == 0
    }

    /// The oldest handle of queue `q`.
    #[inline]
    pub fn front(&self, q: u32) -> Option<Handle> {
        let h = self.q[q as usize].head;
        (h != NIL).then_some(h)
    }

    /// The newest handle of queue `q`.
    #[inline]
    pub fn back(&self, q: u32) -> Option<Handle> {
        let t = self.q[q as usize].tail;
        (t != NIL).then_some(t)
    }

    /// Makes room in `next` for handle `i` (rare: once per new handle), out of the hot path.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, i: usize) {
        self.next.resize(i + 1, NIL);
        #[cfg(debug_assertions)]
        self.queued.resize(i + 1, false);
    }

    /// Appends `h` to queue `q`.
    #[inline]
    pub fn push_back(&mut self, q: u32, h: Handle) {
        let i = h as usize;
        if i >= self.next.len() {
            self.grow(i);
        }
        #[cfg(debug_assertions)]
        {
            assert!(!self.queued[i], "handle {h} is already in a queue");
            self.queued[i] = true;
        }
        self.next[i] = NIL;
        let queue = &mut self.q[q as usize];
        let tail = queue.tail;
        queue.tail = h;
        queue.len += 1;
        if tail == NIL {
            queue.head = h;
        } else {
            self.next[tail as usize] = h;
        }
    }

    /// Takes the oldest handle of queue `q`.
    #[inline]
    pub fn pop_front(&mut self, q: u32) -> Option<Handle> {
        let queue = &mut self.q[q as usize];
        let h = queue.head;
        if h == NIL {
            return None;
        }
        let n = self.next[h as usize];
        queue.head = n;
        if n == NIL {
            queue.tail = NIL;
        }
        queue.len -= 1;
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
        let moved = self.q[f];
        if t == f || moved.head == NIL {
            return;
        }
        match self.q[t].tail {
            NIL => self.q[t].head = moved.head,
            tail => self.next[tail as usize] = moved.head,
        }
        self.q[t].tail = moved.tail;
        self.q[t].len += moved.len;
        self.q[f] = EMPTY;
    }

    /// The handles of queue `q`, oldest first.
    pub fn iter(&self, q: u32) -> impl Iterator<Item = Handle> + '_ {
        let mut h = self.q[q as usize].head;
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
