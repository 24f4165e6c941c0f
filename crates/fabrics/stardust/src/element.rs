//! The Fabric Element (§4.2, Fig. 6) as a sans-IO state machine: a cell switch that reads a
//! cell's destination adapter and kind, never a packet. Each cell goes to one of the links its
//! forwarding table says reach the destination, chosen per cell by the same permuted
//! round-robin as the adapters'. Data and control cells wait in separate queues per output
//! (two crossbars): control first. Data cells share one pool; a data cell leaving a queue that
//! holds more than the FCI threshold carries FCI to its destination; when the pool runs high
//! the element pauses its upstream links, the last resort before a drop (§5.6), and a cell
//! that still finds the pool full is dropped and counted.
//!
//! The cells and the output queues are the run's [`Cells`]: an output is the directed link it
//! sends on, numbered from the element's first link.

use crate::cell_arena::{CellId, Cells};
use crate::config::ElementConfig;
use crate::reach::ReachTable;
use crate::spray::Sprayer;
use shoal_base::rng::StreamRng;

/// Counters of one element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ElementStats {
    pub data_cells: u64,
    pub control_cells: u64,
    pub fci_marked: u64,
    pub dropped: u64,
    pub unroutable: u64,
    pub pauses: u64,
    /// Most data cells in one output queue, and in the pool.
    pub max_queue: u64,
    pub max_pool: u64,
}

/// What receiving a cell asks of the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// Queued at this output, which may be idle: start it if it is free.
    Queued(u32),
    /// Dropped (full pool, or no link reaches its destination).
    Dropped,
}

pub struct Element {
    cfg: ElementConfig,
    /// The forwarding table lives in the sprayer, laid out for the pick.
    sprayer: Sprayer,
    /// The run's number of this element's output 0; its outputs are the next `links`.
    base: u32,
    links: u32,
    pool: u32,
    paused: bool,
    /// Pause state changes the caller has not yet sent upstream.
    pause_change: Option<bool>,
    stats: ElementStats,
}

impl Element {
    pub fn new(cfg: ElementConfig, reach: ReachTable, rng: StreamRng) -> Element {
        let links = reach.links();
        Element {
            cfg,
            sprayer: Sprayer::new(&reach, cfg.permutation_rounds, rng),
            base: 0,
            links: links as u32,
            pool: 0,
            paused: false,
            pause_change: None,
            stats: ElementStats::default(),
        }
    }

    /// The element whose output 0 is the run's directed link `base`.
    pub fn at_links(self, base: u32) -> Element {
        Element { base, ..self }
    }

    pub fn stats(&self) -> &ElementStats {
        &self.stats
    }

    /// A new forwarding table (the reachability protocol's).
    pub fn set_reach(&mut self, table: &ReachTable) {
        self.sprayer.set_table(table);
    }

    /// Data cells queued at output `link`.
    pub fn queue_len(&self, cells: &Cells, link: u32) -> usize {
        cells.waiting(self.base + link).1
    }

    pub fn pool(&self) -> u32 {
        self.pool
    }

    /// Cells waiting in all outputs: (data, control).
    pub fn queued_split(&self, cells: &Cells) -> (u64, u64) {
        (self.base..self.base + self.links)
            .map(|l| cells.waiting(l))
            .fold((0, 0), |(d, c), (wc, wd)| (d + wd as u64, c + wc as u64))
    }

    /// Cell `id` of `cells` arrived on some link. A cell dropped is the caller's to free.
    pub fn receive(&mut self, cells: &mut Cells, id: CellId) -> Received {
        let Some(out) = self.sprayer.next(cells.dst(id)) else {
            self.stats.unroutable += 1;
            return Received::Dropped;
        };
        let link = self.base + out;
        if cells.is_data(id) {
            if self.pool >= self.cfg.pool_cells {
                self.stats.dropped += 1;
                return Received::Dropped;
            }
            self.pool += 1;
            self.stats.data_cells += 1;
            cells.enqueue(link, id);
            let depth = cells.waiting(link).1 as u64;
            self.stats.max_queue = self.stats.max_queue.max(depth);
            self.stats.max_pool = self.stats.max_pool.max(self.pool as u64);
            if !self.paused && self.pool >= self.cfg.pause_cells {
                self.paused = true;
                self.pause_change = Some(true);
                self.stats.pauses += 1;
            }
        } else {
            self.stats.control_cells += 1;
            cells.enqueue(link, id);
        }
        Received::Queued(out)
    }

    /// The next cell output `link` sends (control first, data unless the link is `paused` by
    /// the element downstream), FCI set if its queue is above the threshold.
    pub fn next_tx(&mut self, cells: &mut Cells, link: u32, paused: bool) -> Option<CellId> {
        let link = self.base + link;
        let depth = cells.waiting(link).1 as u32;
        let c = cells.dequeue(link, paused)?;
        if !cells.is_data(c) {
            return Some(c);
        }
        if depth > self.cfg.fci_threshold {
            cells.mark_fci(c);
            self.stats.fci_marked += 1;
        }
        self.pool -= 1;
        if self.paused && self.pool <= self.cfg.resume_cells {
            self.paused = false;
            self.pause_change = Some(false);
        }
        Some(c)
    }

    /// Output `link` was excluded from the forwarding table: its waiting cells are sprayed
    /// again over the links that still reach their destinations (those that none reaches are
    /// dropped, freed and counted as unroutable). Returns the outputs that got cells.
    pub fn reroute(&mut self, cells: &mut Cells, link: u32) -> Vec<u32> {
        let mut kicked = Vec::new();
        let mut waiting = Vec::new();
        cells.drain(self.base + link, &mut waiting);
        for id in waiting {
            match self.sprayer.next(cells.dst(id)) {
                Some(out) => {
                    cells.enqueue(self.base + out, id);
                    kicked.push(out);
                }
                None => {
                    self.stats.unroutable += 1;
                    self.pool -= cells.is_data(id) as u32;
                    cells.free(id);
                }
            }
        }
        kicked.sort_unstable();
        kicked.dedup();
        kicked
    }

    /// A change of the pause this element asks of its upstream links, to be sent on all of
    /// them.
    pub fn poll_pause(&mut self) -> Option<bool> {
        self.pause_change.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::{Body, Cell, Control, Data, Frag, MAX_FRAGS};
    use shoal_base::rng::stream;

    fn data(dst: u32) -> Cell {
        Cell {
            src: 0,
            dst,
            fci: false,
            sent_at: 0,
            body: Body::Data(Data {
                port: 0,
                class: 0,
                seq: 0,
                bytes: 240,
                frags: 1,
                frag: [Frag::default(); MAX_FRAGS],
            }),
        }
    }

    fn credit(dst: u32) -> Cell {
        Cell {
            body: Body::Control(Control::Credit {
                port: 0,
                class: 0,
                bytes: 4096,
            }),
            ..data(dst)
        }
    }

    /// An element with the arena its cells live in.
    struct Fe {
        e: Element,
        cells: Cells,
    }

    impl Fe {
        fn receive(&mut self, cell: Cell) -> Received {
            let id = self.cells.insert(&cell);
            self.e.receive(&mut self.cells, id)
        }

        fn next_tx(&mut self, link: u32, paused: bool) -> Option<Cell> {
            let id = self.e.next_tx(&mut self.cells, link, paused)?;
            Some(self.cells.remove(id))
        }
    }

    /// Two links, destination 0 on link 0 only, destination 1 on both.
    fn element(pool: u32, pause: u32) -> Fe {
        let mut r = ReachTable::new(2, 2);
        r.set(0, 0, true);
        r.set(1, 0, true);
        r.set(1, 1, true);
        let e = Element::new(
            ElementConfig {
                pool_cells: pool,
                fci_threshold: 3,
                pause_cells: pause,
                resume_cells: pause - 2,
                permutation_rounds: 2,
            },
            r,
            stream(1, "fe", 0),
        );
        Fe {
            e,
            cells: Cells::new(2),
        }
    }

    #[test]
    fn cells_follow_the_table_and_control_overtakes_data() {
        let mut e = element(100, 90);
        for _ in 0..3 {
            assert_eq!(e.receive(data(0)), Received::Queued(0));
        }
        assert_eq!(e.receive(credit(0)), Received::Queued(0));
        assert!(!e.next_tx(0, false).unwrap().is_data());
        // Paused downstream: control still goes, data waits.
        e.receive(credit(0));
        assert!(!e.next_tx(0, true).unwrap().is_data());
        assert_eq!(e.next_tx(0, true), None);
        // Destination 1 alternates over both links.
        let a = e.receive(data(1));
        let b = e.receive(data(1));
        assert_ne!(a, b);
    }

    #[test]
    fn fci_marks_exactly_the_cells_that_leave_a_queue_above_the_threshold() {
        let mut e = element(100, 90);
        for _ in 0..6 {
            e.receive(data(0));
        }
        // Depths at departure 6, 5, 4, 3, 2, 1 against a threshold of 3.
        let marks: Vec<bool> = (0..6).map(|_| e.next_tx(0, false).unwrap().fci).collect();
        assert_eq!(marks, [true, true, true, false, false, false]);
        assert_eq!(e.e.stats().fci_marked, 3);
    }

    #[test]
    fn the_pool_pauses_upstream_before_it_drops() {
        let mut e = element(10, 6);
        for i in 0..10 {
            assert_eq!(e.receive(data(0)), Received::Queued(0), "cell {i}");
            if i == 5 {
                assert_eq!(e.e.poll_pause(), Some(true), "paused at 6 cells");
            }
        }
        assert_eq!(e.e.stats().dropped, 0, "no drop below the pool's size");
        assert_eq!(e.receive(data(0)), Received::Dropped);
        assert_eq!(e.e.stats().dropped, 1);
        for _ in 0..7 {
            e.next_tx(0, false);
        }
        assert_eq!(e.e.poll_pause(), Some(false), "released at 4 cells");
    }
}
