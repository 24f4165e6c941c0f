//! Handles of a struct-of-arrays store: the store's columns are the fabric's own `Vec`s,
//! indexed by handle; this hands the handles out and takes them back.

/// A slot of a struct-of-arrays store.
pub type Handle = u32;

/// Hands out `u32` handles, reusing the last freed first (a LIFO): a run whose population of
/// live cells is steady keeps reusing the same, recently touched slots, and the columns never
/// grow past the most cells ever alive at once ([`Handles::high_water`]).
#[derive(Clone, Debug, Default)]
pub struct Handles {
    free: Vec<Handle>,
    /// Slots ever created: `0..created` are valid column indices.
    created: u32,
    /// Per slot, whether it is live (debug builds: a double free or a use of a freed handle is
    /// a model bug, caught where it happens).
    #[cfg(debug_assertions)]
    live_bits: Vec<bool>,
}

impl Handles {
    pub fn new() -> Handles {
        Handles::default()
    }

    /// A free handle. When it is new (`h == high_water() - 1` after the call), the caller's
    /// columns need one more element.
    #[inline]
    pub fn alloc(&mut self) -> Handle {
        let h = match self.free.pop() {
            Some(h) => h,
            None => {
                let h = self.created;
                self.created = h.checked_add(1).expect("fewer than 2^32 live handles");
                h
            }
        };
        #[cfg(debug_assertions)]
        {
            if h as usize == self.live_bits.len() {
                self.live_bits.push(false);
            }
            assert!(!self.live_bits[h as usize], "handle {h} given out twice");
            self.live_bits[h as usize] = true;
        }
        h
    }

    /// Takes `h` back; it is the next one [`Handles::alloc`] gives.
    #[inline]
    pub fn free(&mut self, h: Handle) {
        debug_assert!(h < self.created, "handle {h} was never given out");
        #[cfg(debug_assertions)]
        {
            assert!(self.live_bits[h as usize], "handle {h} freed twice");
            self.live_bits[h as usize] = false;
        }
        self.free.push(h);
    }

    /// Handles live now.
    pub fn live(&self) -> usize {
        self.created as usize - self.free.len()
    }

    /// Slots ever created: the length the store's columns need.
    pub fn high_water(&self) -> usize {
        self.created as usize
    }

    /// Whether `h` is live (debug builds only know; release builds say `true` for any handle
    /// ever given out).
    pub fn is_live(&self, h: Handle) -> bool {
        #[cfg(debug_assertions)]
        {
            self.live_bits.get(h as usize).copied().unwrap_or(false)
        }
        #[cfg(not(debug_assertions))]
        {
            h < self.created
        }
    }
}
