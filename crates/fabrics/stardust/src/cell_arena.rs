//! Cells on the fabric stored once: from the moment a cell leaves its source adapter until it
//! reaches an adapter again it stays in one slot of a [`CellArena`], and the wires and the
//! elements' output queues move its 4-byte [`CellId`] instead of its 104 bytes. A cell is in
//! at most one queue at a time (a wire or an output queue), so the queues are linked lists
//! threaded through one array of next-indices beside the cells: a queue is three `u32`s, and
//! no queue allocates. Freed slots are reused last-freed first, so a steady state allocates
//! nothing.

use crate::cell::Cell;

/// A cell's slot in its [`CellArena`].
pub type CellId = u32;

const NIL: u32 = u32::MAX;

/// One FIFO of cells in a [`CellArena`]; only the arena that filled it may operate on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellQueue {
    head: u32,
    tail: u32,
    len: u32,
}

impl Default for CellQueue {
    fn default() -> Self {
        CellQueue {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl CellQueue {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cell queued last.
    pub fn back(&self) -> Option<CellId> {
        (self.tail != NIL).then_some(self.tail)
    }
}

/// Storage for the cells on the fabric, and the links of the queues that hold them.
#[derive(Default)]
pub struct CellArena {
    cells: Vec<Cell>,
    /// Per slot: the next cell in its queue (kept apart from the cells, so that walking a
    /// queue's links touches 4 bytes per cell rather than a cell's cache lines).
    next: Vec<u32>,
    /// Free slots, a stack.
    free: Vec<u32>,
}

impl CellArena {
    /// Stores `cell`, in no queue yet.
    #[inline]
    pub fn insert(&mut self, cell: Cell) -> CellId {
        if let Some(id) = self.free.pop() {
            self.cells[id as usize] = cell;
            self.next[id as usize] = NIL;
            id
        } else {
            self.cells.push(cell);
            self.next.push(NIL);
            (self.cells.len() - 1) as CellId
        }
    }

    /// Takes cell `id` out (it must be in no queue); its slot is free again.
    #[inline]
    pub fn remove(&mut self, id: CellId) -> Cell {
        self.free.push(id);
        self.cells[id as usize]
    }

    #[inline]
    pub fn get(&self, id: CellId) -> &Cell {
        &self.cells[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: CellId) -> &mut Cell {
        &mut self.cells[id as usize]
    }

    /// Appends cell `id` (in no queue) to `q`.
    #[inline]
    pub fn push_back(&mut self, q: &mut CellQueue, id: CellId) {
        self.next[id as usize] = NIL;
        if q.tail == NIL {
            q.head = id;
        } else {
            self.next[q.tail as usize] = id;
        }
        q.tail = id;
        q.len += 1;
    }

    /// Takes the oldest cell of `q` off it (the cell stays stored).
    #[inline]
    pub fn pop_front(&mut self, q: &mut CellQueue) -> Option<CellId> {
        let id = q.head;
        if id == NIL {
            return None;
        }
        q.head = self.next[id as usize];
        if q.head == NIL {
            q.tail = NIL;
        }
        q.len -= 1;
        Some(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{Body, Control};
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn cell(tag: u32) -> Cell {
        Cell {
            src: tag,
            dst: 0,
            fci: false,
            sent_at: 0,
            body: Body::Control(Control::Credit {
                port: 0,
                class: 0,
                bytes: tag,
            }),
        }
    }

    proptest! {
        /// Any sequence of inserts, moves between queues and removals: every queue holds the
        /// cells a `VecDeque` of cells holds, in the same order, and the slots in use never
        /// exceed the most cells stored at once.
        #[test]
        fn queues_match_vecdeques(ops in proptest::collection::vec((0u8..4, 0usize..3), 1..300)) {
            let mut arena = CellArena::default();
            let mut queues = [CellQueue::default(); 3];
            let mut model: [VecDeque<u32>; 3] = Default::default();
            let (mut tag, mut stored, mut most) = (0u32, 0usize, 0usize);
            for (op, q) in ops {
                match op {
                    0 | 1 => {
                        let id = arena.insert(cell(tag));
                        arena.push_back(&mut queues[q], id);
                        model[q].push_back(tag);
                        tag += 1;
                        stored += 1;
                    }
                    2 => {
                        // Move the head to the next queue, by handle.
                        let to = (q + 1) % 3;
                        if let Some(id) = arena.pop_front(&mut queues[q]) {
                            arena.push_back(&mut queues[to], id);
                            let t = model[q].pop_front().unwrap();
                            model[to].push_back(t);
                        } else {
                            prop_assert!(model[q].is_empty());
                        }
                    }
                    _ => {
                        if let Some(id) = arena.pop_front(&mut queues[q]) {
                            prop_assert_eq!(Some(arena.remove(id).src), model[q].pop_front());
                            stored -= 1;
                        } else {
                            prop_assert!(model[q].is_empty());
                        }
                    }
                }
                most = most.max(stored);
                for (queue, m) in queues.iter().zip(&model) {
                    prop_assert_eq!(queue.len(), m.len());
                    let back = queue.back().map(|id| arena.get(id).src);
                    prop_assert_eq!(back, m.back().copied());
                }
            }
            prop_assert!(arena.cells.len() <= most, "slots are reused before new ones are taken");
            for (queue, m) in queues.iter_mut().zip(&mut model) {
                while let Some(id) = arena.pop_front(queue) {
                    prop_assert_eq!(Some(arena.get(id).src), m.pop_front());
                }
                prop_assert!(m.is_empty());
            }
        }
    }
}
