//! Cells on the fabric as `u32` handles into struct-of-arrays columns
//! (`docs/design/cell-datapath.md` §2.1): a cell is written into its slot once, when its
//! adapter packs it, and read there by every device it crosses until its destination adapter
//! takes it in and frees the slot; links, adapters and elements move only its handle. The
//! columns are split by who reads them, so that a hop touches the few bytes it needs (the
//! destination, the kind and the size: one 8-byte record) and not the fragment list.
//!
//! The same store holds every directed link's queues of waiting cells, two per link (control
//! ahead of data, §4.2's two crossbars), linked through one array (`cellnet::Fifos`): an
//! adapter's queue for a fabric link and an element's output queue are the same kind of
//! record, and no queue allocates.

use crate::cell::{Body, Cell, Data};
use shoal_cellnet::{Fifos, Handle, Handles};

/// A cell's slot in its [`Cells`].
pub type CellId = Handle;

const DATA: u8 = 1;
const FCI: u8 = 2;

/// What every hop reads of a cell, together.
#[derive(Clone, Copy, Default)]
struct Hot {
    /// The destination adapter.
    dst: u32,
    /// Payload bytes of a data cell, 0 for a control cell.
    payload: u16,
    /// [`DATA`], [`FCI`].
    flags: u8,
}

/// The cells of one run and the queues of its directed links.
#[derive(Default)]
pub struct Cells {
    handles: Handles,
    /// Read at every hop.
    hot: Vec<Hot>,
    /// Read at the adapters only.
    src: Vec<u32>,
    sent_at: Vec<u64>,
    body: Vec<Body>,
    /// Per directed link `l`: control cells in queue `2l`, data cells in `2l + 1`.
    queues: Fifos,
}

impl Cells {
    /// A store for a fabric of `links` directed links.
    pub fn new(links: usize) -> Cells {
        Cells {
            queues: Fifos::new(2 * links),
            ..Cells::default()
        }
    }

    /// Stores `cell` (in no queue yet).
    #[inline]
    pub fn insert(&mut self, cell: &Cell) -> CellId {
        let (flags, payload) = match &cell.body {
            Body::Data(d) => (DATA | if cell.fci { FCI } else { 0 }, d.bytes),
            Body::Control(_) => (if cell.fci { FCI } else { 0 }, 0),
        };
        let h = self.handles.alloc();
        let i = h as usize;
        let hot = Hot {
            dst: cell.dst,
            payload,
            flags,
        };
        if i == self.hot.len() {
            self.hot.push(hot);
            self.src.push(cell.src);
            self.sent_at.push(cell.sent_at);
            self.body.push(cell.body);
        } else {
            self.hot[i] = hot;
            self.src[i] = cell.src;
            self.sent_at[i] = cell.sent_at;
            self.body[i] = cell.body;
        }
        h
    }

    /// Frees cell `id` (in no queue).
    #[inline]
    pub fn free(&mut self, id: CellId) {
        self.handles.free(id);
    }

    /// Cell `id` as a value, and its slot freed (for tests and tools that look at cells whole).
    pub fn remove(&mut self, id: CellId) -> Cell {
        let cell = self.get(id);
        self.free(id);
        cell
    }

    /// Cell `id` as a value.
    pub fn get(&self, id: CellId) -> Cell {
        let i = id as usize;
        Cell {
            src: self.src[i],
            dst: self.hot[i].dst,
            fci: self.hot[i].flags & FCI != 0,
            sent_at: self.sent_at[i],
            body: self.body[i],
        }
    }

    /// Cells stored now.
    pub fn live(&self) -> usize {
        self.handles.live()
    }

    #[inline]
    pub fn dst(&self, id: CellId) -> u32 {
        self.hot[id as usize].dst
    }

    #[inline]
    pub fn src(&self, id: CellId) -> u32 {
        self.src[id as usize]
    }

    #[inline]
    pub fn is_data(&self, id: CellId) -> bool {
        self.hot[id as usize].flags & DATA != 0
    }

    #[inline]
    pub fn fci(&self, id: CellId) -> bool {
        self.hot[id as usize].flags & FCI != 0
    }

    #[inline]
    pub fn mark_fci(&mut self, id: CellId) {
        self.hot[id as usize].flags |= FCI;
    }

    /// Payload bytes of a data cell, 0 for a control cell.
    #[inline]
    pub fn payload(&self, id: CellId) -> u16 {
        self.hot[id as usize].payload
    }

    /// Bytes on a fabric link, a data cell's header and payload or a control cell, and
    /// whether it is a data cell.
    #[inline]
    pub fn wire_bytes(&self, id: CellId, header: u32, control: u32) -> (u32, bool) {
        let hot = self.hot[id as usize];
        if hot.flags & DATA != 0 {
            (header + hot.payload as u32, true)
        } else {
            (control, false)
        }
    }

    #[inline]
    pub fn sent_at(&self, id: CellId) -> u64 {
        self.sent_at[id as usize]
    }

    #[inline]
    pub fn set_sent_at(&mut self, id: CellId, at: u64) {
        self.sent_at[id as usize] = at;
    }

    #[inline]
    pub fn body(&self, id: CellId) -> &Body {
        &self.body[id as usize]
    }

    /// The data part of a data cell.
    #[inline]
    pub fn data(&self, id: CellId) -> Option<&Data> {
        match &self.body[id as usize] {
            Body::Data(d) => Some(d),
            Body::Control(_) => None,
        }
    }

    // ------------------------------------------------------------ link queues

    /// Queues cell `id` for directed link `link`, behind the cells of its kind.
    #[inline]
    pub fn enqueue(&mut self, link: u32, id: CellId) {
        let q = 2 * link + self.is_data(id) as u32;
        self.queues.push_back(q, id);
    }

    /// The next cell directed link `link` sends: control first, data unless `hold_data`.
    #[inline]
    pub fn dequeue(&mut self, link: u32, hold_data: bool) -> Option<CellId> {
        match self.queues.pop_front(2 * link) {
            Some(c) => Some(c),
            None if hold_data => None,
            None => self.queues.pop_front(2 * link + 1),
        }
    }

    /// Control and data cells waiting for `link`.
    #[inline]
    pub fn waiting(&self, link: u32) -> (usize, usize) {
        (self.queues.len(2 * link), self.queues.len(2 * link + 1))
    }

    /// Takes every cell waiting for `link` off it, control first, into `out`.
    pub fn drain(&mut self, link: u32, out: &mut Vec<CellId>) {
        for q in [2 * link, 2 * link + 1] {
            while let Some(id) = self.queues.pop_front(q) {
                out.push(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{Control, Frag, MAX_FRAGS};
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn cell(tag: u32, data: bool) -> Cell {
        let body = if data {
            Body::Data(Data {
                port: 0,
                class: 0,
                seq: tag,
                bytes: (tag % 200) as u16 + 1,
                frags: 1,
                frag: [Frag::default(); MAX_FRAGS],
            })
        } else {
            Body::Control(Control::Credit {
                port: 0,
                class: 0,
                bytes: tag,
            })
        };
        Cell {
            src: tag,
            dst: tag / 2,
            fci: tag.is_multiple_of(3),
            sent_at: tag as u64 * 7,
            body,
        }
    }

    proptest! {
        /// Any sequence of inserts onto links, departures and frees: a cell reads back whole
        /// as it went in, each link sends its control cells first and each kind in order, and
        /// the slots never exceed the most cells stored at once.
        #[test]
        fn links_send_control_first_and_cells_read_back(
            ops in proptest::collection::vec((0u8..4, 0u32..3, any::<bool>()), 1..300)
        ) {
            let mut cells = Cells::new(3);
            let mut model: [[VecDeque<Cell>; 2]; 3] = Default::default();
            let (mut tag, mut most) = (0u32, 0usize);
            for (op, link, data) in ops {
                if op < 2 {
                    let c = cell(tag, data);
                    let id = cells.insert(&c);
                    cells.enqueue(link, id);
                    model[link as usize][data as usize].push_back(c);
                    tag += 1;
                } else {
                    let hold = op == 3 && data;
                    let m = &mut model[link as usize];
                    let want = m[0].pop_front().or_else(|| if hold { None } else { m[1].pop_front() });
                    let got = cells.dequeue(link, hold).map(|id| cells.remove(id));
                    prop_assert_eq!(got, want);
                }
                most = most.max(cells.live());
                for (l, m) in model.iter().enumerate() {
                    prop_assert_eq!(cells.waiting(l as u32), (m[0].len(), m[1].len()));
                }
            }
            prop_assert!(cells.hot.len() <= most, "slots are reused before new ones are taken");
        }
    }
}
