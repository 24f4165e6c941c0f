//! A FIFO of small `Copy` records in one power-of-two buffer: credits, requests and statuses
//! waiting at an adapter as records rather than as cells. It grows by doubling when full and
//! never shrinks, so a steady state does not allocate.

/// A ring of `T`s, oldest first.
#[derive(Clone, Debug)]
pub struct Ring<T: Copy + Default> {
    buf: Vec<T>,
    /// Index of the oldest record; `buf.len()` is zero or a power of two.
    head: usize,
    len: usize,
}

impl<T: Copy + Default> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new(),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy + Default> Ring<T> {
    pub fn new() -> Ring<T> {
        Ring::default()
    }

    /// A ring with room for at least `n` records before it grows.
    pub fn with_capacity(n: usize) -> Ring<T> {
        Ring {
            buf: vec![T::default(); n.next_power_of_two()],
            head: 0,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buf.len() - 1
    }

    #[inline]
    pub fn push_back(&mut self, x: T) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let at = (self.head + self.len) & self.mask();
        self.buf[at] = x;
        self.len += 1;
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let x = self.buf[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(x)
    }

    #[inline]
    pub fn front(&self) -> Option<&T> {
        (self.len > 0).then(|| &self.buf[self.head])
    }

    /// The `i`-th oldest record.
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| &self.buf[(self.head + i) & self.mask()])
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self.buf[(self.head + i) & self.mask()])
    }

    pub fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// Doubles the buffer, the records laid out from index 0 again.
    fn grow(&mut self) {
        let cap = (self.buf.len() * 2).max(4);
        let mut buf = vec![T::default(); cap];
        for (i, slot) in buf.iter_mut().enumerate().take(self.len) {
            *slot = self.buf[(self.head + i) & self.mask()];
        }
        self.buf = buf;
        self.head = 0;
    }
}
