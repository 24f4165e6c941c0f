//! What Fig. 9 plots, measured during a run from `RunLimits::measure_from` on: the fabric
//! traversal latency of data cells (from the source adapter's link to the destination
//! adapter), and the queue of the last stage's links (element outputs that lead to an
//! adapter) as a data cell arriving there finds it.
//!
//! The queue is counted in data cells "in system": those waiting in the output plus the one the
//! link is serializing, if it is a data cell. That is the quantity §4.3's M/D/1 model describes
//! ([`crate::models::md1_distribution`]: the number a departure leaves behind, which for
//! Poisson arrivals is also what an arrival finds and the time average), so the measured
//! distribution and the model's are read on the same axis.
//!
//! Per stage of the fabric (the element outputs whose links go from one tier to the next, see
//! [`Stage`]) the run also records what the queues' inputs look like: how many data cells
//! enter one output in windows of 1, 4, 16 and 64 cell times, against Poisson arrivals at the
//! same rate (which M/D/1 assumes: a variance-to-mean ratio of 1 at every window), how often a
//! cell follows one of its own source adapter, the longest queue an arriving cell found and
//! the FCI marks the stage set; and the same counts for the last stage's outputs into one
//! adapter taken together (what the links share out). They say where the fabric is burstier
//! than the model, why, and which stage FCI acts on.

use shoal_base::{Dur, Time};
use shoal_metrics::LatencyHistogram;

/// Fig. 9's measurements of one run.
#[derive(Clone, Debug, Default)]
pub struct Observations {
    /// The window measured: from `RunLimits::measure_from` (or 0) to the end of the run.
    pub from: Time,
    pub to: Time,
    /// `last_stage_queue[k]`: data cells that found `k` data cells in the last-stage output
    /// they arrived at.
    pub last_stage_queue: Vec<u64>,
    /// Directed links of the last stage (element to adapter).
    pub last_stage_links: u32,
    /// Data cells and their payload bytes that entered the last stage in the window.
    pub last_stage_cells: u64,
    pub last_stage_payload: u64,
    /// Control cells (credits, statuses) that entered the last stage in the window: they share
    /// its links ahead of the data cells.
    pub last_stage_control: u64,
    /// Traversal of data cells that arrived at their adapter in the window.
    pub traversal: LatencyHistogram,
    /// The stages of element outputs, in the order a cell crosses them (up, then down).
    pub stages: Vec<Stage>,
    /// The last stage's links taken together per adapter they lead to: what one adapter
    /// receives from the fabric (`links` is the adapters).
    pub into_adapters: Stage,
    /// Per directed link, and per adapter for `into_adapters`: the windows being counted
    /// (empty after the run).
    open: Vec<OpenLink>,
    open_adapters: Vec<OpenLink>,
}

/// Window lengths over which arrivals are counted, in cell times: powers of 4, so that one
/// division gives the window of every length.
pub const WINDOWS: [u64; 4] = [1, 4, 16, 64];

/// Cell times within which two cells entering one output count as near each other.
pub const NEAR: u64 = 4;

/// Not a stage: a link an adapter sends on.
const NO_STAGE: u8 = u8::MAX;

/// The element outputs whose links lead from tier `from` to tier `to` (adapters are tier 0,
/// the elements next to them 1, ...), measured in the window unless said otherwise.
#[derive(Clone, Debug, Default)]
pub struct Stage {
    pub from: u32,
    pub to: u32,
    pub links: u32,
    /// Data cells that entered these outputs.
    pub cells: u64,
    /// Most data cells an arriving data cell found in one of these outputs (waiting, and the
    /// one on the link).
    pub longest: u32,
    /// Data cells these outputs marked with FCI, in the window and before it (warm-up).
    pub fci_marked: u64,
    pub fci_marked_before: u64,
    /// Data cells that entered an output right after a data cell from the same source adapter:
    /// at any interval, and within [`NEAR`] cell times of it.
    pub same_source: u64,
    pub same_source_near: u64,
    /// Per window length of [`WINDOWS`]: the sum and sum of squares, over every output and
    /// every whole window, of the data cells that entered one output in one window.
    sums: [(u64, u64); 4],
    /// Whole windows of each length, over all outputs (set when the run ends).
    windows: [u64; 4],
    /// `per_slot[k]`: windows of one cell time in which k data cells entered an output.
    per_slot: Vec<u64>,
}

impl Stage {
    /// Mean data cells entering one output per window of `WINDOWS[i]` cell times.
    pub fn mean(&self, i: usize) -> f64 {
        self.sums[i].0 as f64 / self.windows[i].max(1) as f64
    }

    /// The index of dispersion (variance over mean) of the data cells entering one output in
    /// a window of `WINDOWS[i]` cell times: 1 for Poisson arrivals at every window, above 1
    /// for arrivals that come together, below for arrivals more regular than Poisson.
    pub fn dispersion(&self, i: usize) -> f64 {
        let n = self.windows[i].max(1) as f64;
        let mean = self.sums[i].0 as f64 / n;
        let var = self.sums[i].1 as f64 / n - mean * mean;
        if mean > 0.0 { var / mean } else { f64::NAN }
    }

    /// P(k data cells enter an output in one cell time), k = 0, 1, ...
    pub fn per_slot(&self) -> Vec<f64> {
        let n = self.windows[0].max(1) as f64;
        let busy: u64 = self.per_slot.iter().skip(1).sum();
        let mut p: Vec<f64> = self.per_slot.iter().map(|&c| c as f64 / n).collect();
        if let Some(z) = p.first_mut() {
            *z = self.windows[0].saturating_sub(busy) as f64 / n;
        }
        p
    }

    /// A short name: "1->2" for the outputs of tier 1 up to tier 2.
    pub fn name(&self) -> String {
        format!("{}->{}", self.from, self.to)
    }

    fn close(&mut self, i: usize, count: u32) {
        let c = count as u64;
        self.sums[i].0 += c;
        self.sums[i].1 += c * c;
        if i == 0 {
            let k = count as usize;
            if k >= self.per_slot.len() {
                self.per_slot.resize(k + 1, 0);
            }
            self.per_slot[k] += 1;
        }
    }
}

/// The windows one directed link (or one adapter's links together) is counting: for each
/// length, the window's number and the cells that entered in it so far.
#[derive(Clone, Copy, Debug)]
struct OpenLink {
    stage: u8,
    cell_ps: u64,
    /// The source adapter of the last data cell that entered, and its cell time.
    last_src: u32,
    last_slot: u64,
    at: [u64; 4],
    count: [u32; 4],
}

impl OpenLink {
    fn new(stage: u8, cell_ps: u64) -> OpenLink {
        OpenLink {
            stage,
            cell_ps: cell_ps.max(1),
            last_src: u32::MAX,
            last_slot: 0,
            at: [0; 4],
            count: [0; 4],
        }
    }

    /// A data cell from `src` entered in cell time `slot` (of the window), finding `found`.
    #[inline]
    fn enter(&mut self, s: &mut Stage, slot: u64, src: u32, found: u32) {
        s.cells += 1;
        s.longest = s.longest.max(found);
        if self.last_src == src {
            s.same_source += 1;
            s.same_source_near += (slot - self.last_slot < NEAR) as u64;
        }
        self.last_src = src;
        self.last_slot = slot;
        for i in 0..WINDOWS.len() {
            let at = slot >> (2 * i);
            if at != self.at[i] {
                if self.count[i] > 0 {
                    s.close(i, self.count[i]);
                }
                self.at[i] = at;
                self.count[i] = 0;
            }
            self.count[i] += 1;
        }
    }

    /// The run's `span` ended: the window it ended in counts if whole.
    fn finish(&self, s: &mut Stage, span: u64) {
        for (i, w) in WINDOWS.iter().enumerate() {
            let whole = span / (self.cell_ps * w);
            s.windows[i] += whole;
            if self.count[i] > 0 && self.at[i] < whole {
                s.close(i, self.count[i]);
            }
        }
    }
}

impl Observations {
    /// Fresh observations from `from` on, for a fabric whose directed links each lead from
    /// tier `tiers[l].0` to tier `tiers[l].1` and take `cell_ps[l]` to send a data cell;
    /// `owned_by_element[l]` says which are element outputs (the stages).
    pub(crate) fn new(
        from: Time,
        tiers: &[(u32, u32)],
        owned_by_element: &[bool],
        cell_ps: &[u64],
    ) -> Observations {
        // Up the tiers first, then down: the order a cell crosses them.
        let mut pairs: Vec<(u32, u32)> = tiers
            .iter()
            .zip(owned_by_element)
            .filter_map(|(&t, &e)| e.then_some(t))
            .collect();
        pairs.sort_by_key(|&(a, b)| (b < a, if b > a { a } else { u32::MAX - a }, b));
        pairs.dedup();
        let mut stages: Vec<Stage> = pairs
            .iter()
            .map(|&(from, to)| Stage {
                from,
                to,
                ..Stage::default()
            })
            .collect();
        let open = tiers
            .iter()
            .enumerate()
            .map(|(l, t)| {
                let stage = match pairs.iter().position(|p| p == t) {
                    Some(i) if owned_by_element[l] => {
                        stages[i].links += 1;
                        i as u8
                    }
                    _ => NO_STAGE,
                };
                OpenLink::new(stage, cell_ps[l])
            })
            .collect();
        Observations {
            from,
            stages,
            into_adapters: Stage {
                from: 1,
                to: 0,
                ..Stage::default()
            },
            open,
            ..Observations::default()
        }
    }

    /// A data cell from adapter `src` entered the output of directed link `link` at `now`,
    /// finding `found` data cells there; `to_adapter`: the adapter the link leads to, if it
    /// does.
    #[inline]
    pub(crate) fn entered(
        &mut self,
        now: Time,
        link: u32,
        src: u32,
        found: u32,
        to_adapter: Option<u32>,
    ) {
        let o = &mut self.open[link as usize];
        let slot = (now.0 - self.from.0) / o.cell_ps;
        o.enter(&mut self.stages[o.stage as usize], slot, src, found);
        if let Some(fa) = to_adapter {
            let fa = fa as usize;
            if fa >= self.open_adapters.len() {
                self.open_adapters
                    .resize(fa + 1, OpenLink::new(NO_STAGE, o.cell_ps));
                self.into_adapters.links = self.open_adapters.len() as u32;
            }
            self.open_adapters[fa].enter(&mut self.into_adapters, slot, src, found);
        }
    }

    /// Output `link` marked a data cell with FCI at `now`.
    pub(crate) fn fci_marked(&mut self, now: Time, link: u32) {
        let s = &mut self.stages[self.open[link as usize].stage as usize];
        if now >= self.from {
            s.fci_marked += 1;
        } else {
            s.fci_marked_before += 1;
        }
    }

    /// The run ended at `to`: the windows it ended in are closed if whole, and every stage's
    /// count of whole windows set.
    pub(crate) fn finish(&mut self, to: Time) {
        self.to = to;
        let span = to.0.saturating_sub(self.from.0);
        for o in std::mem::take(&mut self.open) {
            if o.stage != NO_STAGE {
                o.finish(&mut self.stages[o.stage as usize], span);
            }
        }
        for o in std::mem::take(&mut self.open_adapters) {
            o.finish(&mut self.into_adapters, span);
        }
    }

    pub(crate) fn queue_seen(&mut self, cells: u32, payload: u16) {
        let k = cells as usize;
        if k >= self.last_stage_queue.len() {
            self.last_stage_queue.resize(k + 1, 0);
        }
        self.last_stage_queue[k] += 1;
        self.last_stage_cells += 1;
        self.last_stage_payload += payload as u64;
    }

    pub(crate) fn control_seen(&mut self) {
        self.last_stage_control += 1;
    }

    pub(crate) fn traversed(&mut self, d: Dur) {
        self.traversal.record(d);
    }

    /// The window's length.
    pub fn window(&self) -> Dur {
        Dur(self.to.0.saturating_sub(self.from.0))
    }

    /// P(an arriving data cell finds at least `k` cells), from the histogram.
    pub fn queue_tail(&self, k: usize) -> f64 {
        let total: u64 = self.last_stage_queue.iter().sum();
        if total == 0 {
            return 0.0;
        }
        let at_least: u64 = self.last_stage_queue.iter().skip(k).sum();
        at_least as f64 / total as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;
    use shoal_base::rng::stream;

    const CELL: u64 = 1000;

    /// `links` element outputs from tier 2 to 1 (and one adapter link, which is no stage),
    /// each sending a cell in `CELL` ps.
    fn obs(links: usize) -> Observations {
        let mut tiers = vec![(0, 1)];
        tiers.extend(std::iter::repeat_n((2, 1), links));
        let by_element: Vec<bool> = tiers.iter().map(|t| t.0 > 0).collect();
        Observations::new(Time::ZERO, &tiers, &by_element, &vec![CELL; tiers.len()])
    }

    #[test]
    fn stages_come_in_the_order_cells_cross_them_and_adapter_links_are_none() {
        let tiers = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 2),
            (2, 1),
            (1, 0),
            (1, 2),
            (1, 0),
        ];
        let by_element: Vec<bool> = tiers.iter().map(|t| t.0 > 0).collect();
        let o = Observations::new(Time::ZERO, &tiers, &by_element, &[CELL; 8]);
        let names: Vec<String> = o.stages.iter().map(Stage::name).collect();
        assert_eq!(names, ["1->2", "2->3", "3->2", "2->1", "1->0"]);
        let links: Vec<u32> = o.stages.iter().map(|s| s.links).collect();
        assert_eq!(links, [2, 1, 1, 1, 2]);
    }

    #[test]
    fn one_cell_every_cell_time_has_no_variance_and_pairs_together_double_it() {
        // Evenly spaced: every window holds exactly its length in cells.
        let mut o = obs(1);
        for t in 0..6400 {
            o.entered(Time(t * CELL + 1), 1, 0, 0, None);
        }
        o.finish(Time(6400 * CELL));
        let s = &o.stages[0];
        for (i, w) in WINDOWS.iter().enumerate() {
            assert_eq!(s.mean(i), *w as f64);
            assert_eq!(s.dispersion(i), 0.0);
        }
        // Two cells at once every other cell time: 2, 0, 2, 0 per cell time (variance 1 over a
        // mean of 1), and evenly 2 per 2 cell times at every longer window.
        let mut o = obs(1);
        for t in (0..6400).step_by(2) {
            o.entered(Time(t * CELL), 1, 0, 0, None);
            o.entered(Time(t * CELL), 1, 0, 1, None);
        }
        o.finish(Time(6400 * CELL));
        let s = &o.stages[0];
        assert_eq!((s.mean(0), s.dispersion(0)), (1.0, 1.0));
        assert_eq!(s.per_slot(), [0.5, 0.0, 0.5]);
        for i in 1..WINDOWS.len() {
            assert_eq!(s.dispersion(i), 0.0);
        }
        assert_eq!(s.longest, 1);
    }

    /// Poisson arrivals on 8 outputs at `rate` cells per cell time, in batches of `batch`
    /// cells that arrive together.
    fn poisson(rate: f64, batch: u32, seed: u64) -> Stage {
        let links = 8;
        let span = 200_000 * CELL;
        let mut o = obs(links);
        let mut rng = stream(seed, "observe", 0);
        for l in 1..=links as u32 {
            let mut t = 0.0;
            loop {
                let u: f64 = rng.random_range(f64::EPSILON..1.0);
                t += -u.ln() / (rate / batch as f64) * CELL as f64;
                if t >= span as f64 {
                    break;
                }
                for _ in 0..batch {
                    o.entered(Time(t as u64), l, 0, 0, None);
                }
            }
        }
        o.finish(Time(span));
        o.stages.swap_remove(0)
    }

    #[test]
    fn poisson_arrivals_have_a_dispersion_of_one_and_batches_of_b_one_of_b() {
        // The count in a window of a Poisson process has its mean for variance; a compound
        // Poisson process of batches of b has b times its mean (E[X^2]/E[X] = b). 1.6 M
        // windows of one cell time: the estimates are within a few percent.
        let s = poisson(0.5, 1, 1);
        for (i, w) in WINDOWS.iter().enumerate() {
            let d = s.dispersion(i);
            assert!((d - 1.0).abs() < 0.05, "window {w}: {d}");
            assert!((s.mean(i) / (0.5 * *w as f64) - 1.0).abs() < 0.01);
        }
        // P(k in one cell time) is Poisson's.
        let p = s.per_slot();
        for (k, &ours) in p.iter().enumerate().take(4) {
            let model = (-0.5f64).exp() * 0.5f64.powi(k as i32) / [1.0, 1.0, 2.0, 6.0][k];
            assert!(
                (ours / model - 1.0).abs() < 0.05,
                "k = {k}: {ours} vs {model}"
            );
        }
        let s = poisson(0.5, 3, 2);
        for (i, w) in WINDOWS.iter().enumerate() {
            let d = s.dispersion(i);
            assert!((d / 3.0 - 1.0).abs() < 0.05, "window {w}: {d}");
        }
    }

    #[test]
    fn a_cell_after_one_of_its_own_source_is_counted_and_near_within_four_cell_times() {
        let mut o = obs(2);
        // Output 1: sources 5, 5 (1 cell time later), 6, 5, 5 (10 cell times later).
        // Output 2: source 5 (its first cell: follows nothing).
        for (t, l, src) in [
            (0, 1, 5),
            (1, 1, 5),
            (2, 1, 6),
            (3, 1, 5),
            (13, 1, 5),
            (14, 2, 5),
        ] {
            o.entered(Time(t * CELL), l, src, 0, None);
        }
        o.finish(Time(20 * CELL));
        let s = &o.stages[0];
        assert_eq!((s.cells, s.same_source, s.same_source_near), (6, 2, 1));
    }

    #[test]
    fn fci_marks_count_in_the_window_or_before_it_and_the_last_partial_window_is_left_out() {
        let tiers = [(1, 0), (1, 0)];
        let mut o = Observations::new(Time(10 * CELL), &tiers, &[true; 2], &[CELL; 2]);
        o.fci_marked(Time(CELL), 0);
        o.fci_marked(Time(10 * CELL), 1);
        o.fci_marked(Time(12 * CELL), 1);
        assert_eq!(
            (o.stages[0].fci_marked_before, o.stages[0].fci_marked),
            (1, 2)
        );
        // 10.5 cell times measured on two outputs: 10 whole windows of one cell time each,
        // 2 of four; the cell at 20.2 is in no whole window.
        o.entered(Time(12 * CELL), 0, 0, 0, None);
        o.entered(Time(20 * CELL + CELL / 5), 1, 0, 0, None);
        o.finish(Time(20 * CELL + CELL / 2));
        let s = &o.stages[0];
        assert_eq!(
            (s.windows[0], s.windows[1], s.sums[0].0, s.sums[1].0),
            (20, 4, 1, 1)
        );
        assert_eq!(s.cells, 2);
    }
}
