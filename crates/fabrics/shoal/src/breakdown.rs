//! Where a short flow's time goes (`rack.breakdown = true`, issue 36 step 3): each completed
//! flow of at most [`SHORT_FLOW_MAX_BYTES`] split into parts that add up to its FCT exactly,
//! written as `breakdown.csv` beside flows.csv, in integer picoseconds (the rack's clock) so
//! that the columns add up exactly.
//!
//! A flow completes when its last byte is delivered in order, which is no earlier than the
//! arrival of the flow's cell that reached the destination last: its *critical cell*. The
//! parts follow that cell's way through the rack (§3.3), each the time between two stamps:
//!
//! | part | from | to | what it is (§ of the paper) |
//! |---|---|---|---|
//! | `subflow_ps` | the flow's start | its subflow was free | the next slot boundary (the host hands flows over at slot starts), then the pair's earlier cells on the same subflow `i → j`: one cell at a time, the next once the feedback for the previous one is back (§3.3.2) or, on the direct path, once it left |
//! | `held_ps` | free | admitted | held by congestion control (Eq. 2) or by the selective admission of new flows' cells (§3.3.3, `len(Q_ij) ≤ 2^age`) |
//! | `ready_ps` | admitted | cut into `Q_ij` | in the ready queue `R_ij` behind the local cell already in `Q_ij` (§3.3.3, Eq. 4) |
//! | `source_queue_ps` | cut | left the source | in `Q_ij` until the slot to `j` (the static schedule) and behind the transit cells ahead of it |
//! | `first_hop_ps` | left the source | arrived at `j` | the wire (`delay_slots`) |
//! | `intermediate_ps` | arrived at `j` | left `j` | in `Q_jk` at the intermediate until the slot to the destination and behind the cells ahead (§3.3.3, Eq. 5); 0 on the direct path |
//! | `second_hop_ps` | left `j` | arrived | the wire again; 0 on the direct path |
//! | `reassembly_ps` | arrived | the last byte delivered in order | waiting for cells of the pair's other flows that precede it in the pair's sequence (§3.3.2: one Shoal flow per pair) |
//!
//! Stamps are slot starts, as the rack's clock; a stamp earlier than the one before it (a
//! subflow that was free before the flow started) counts from the one before, so every part is
//! at least zero and the parts add up to `finish − start` of the flow's record to the
//! picosecond (a test holds it). The columns `path` (`direct` or `detour`) and `via` (the
//! intermediate `j`) say which way the critical cell went.
//!
//! The stamps ride beside the cells, never in them: the fast engine's records and results stay
//! as they are without the breakdown (the golden and differential tests hold it), and with it
//! too (a test compares the runs). The node engine does not take them: a rack it runs refuses
//! `rack.breakdown` with the reason.

use shoal_base::Time;
use shoal_metrics::{FlowRecord, SHORT_FLOW_MAX_BYTES};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A stamp not taken yet.
const UNSET: u64 = u64::MAX;

/// The slots at which one cell passed each point of its way (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamps {
    free: u64,
    admitted: u64,
    cut: u64,
    left_source: u64,
    at_via: u64,
    left_via: u64,
    arrived: u64,
    /// The intermediate `j`; the destination itself on the direct path.
    via: u16,
}

/// Key of a cell while it exists: (source, destination, sequence number). The sequence space
/// of a pair (2^15 cells) is far larger than the cells a pair has under way at once.
#[inline]
pub(crate) fn cell_key(src: u16, dst: u16, seq: u16) -> u64 {
    (src as u64) << 32 | (dst as u64) << 16 | seq as u64
}

/// Key of subflow `i → j` of node `i`'s local flow record `f`.
#[inline]
fn sub_key(i: usize, f: u32, j: usize) -> u64 {
    (i as u64) << 48 | (f as u64) << 16 | j as u64
}

/// The stamps one part of the fast engine keeps for the cells and subflows of its nodes, in
/// ordered maps (only looked up, never iterated; an observation, so their log-time lookups
/// cost only runs that ask for it).
#[derive(Default)]
pub(crate) struct Trace {
    /// The slot being run (or the slot flows are submitted at).
    pub now: u64,
    /// (free, admitted) per subflow of a local flow.
    subs: BTreeMap<u64, (u64, u64)>,
    /// Cells in this part's queues, or on the wire towards them.
    cells: BTreeMap<u64, Stamps>,
    /// Cells sent in this slot: (receiver, key, stamps), handed to the receiver's part between
    /// slots (`FastRack::step`).
    pub outbox: Vec<(u16, u64, Stamps)>,
    /// Per workload flow (its tag), the stamps of its cell that arrived last so far.
    last: BTreeMap<u32, Stamps>,
}

impl Trace {
    /// Subflow `i → j` of flow record `f` can carry a cell from now on.
    pub fn free(&mut self, i: usize, f: u32, j: usize) {
        self.subs.insert(sub_key(i, f, j), (self.now, UNSET));
    }

    /// Subflow `i → j` passed Eq. 2 and the age rule now.
    pub fn admitted(&mut self, i: usize, f: u32, j: usize) {
        let now = self.now;
        self.subs
            .entry(sub_key(i, f, j))
            .and_modify(|s| s.1 = now)
            .or_insert((now, now));
    }

    /// A cell of subflow `i → j` of flow `f` was cut into `Q_ij` now.
    pub fn cut(&mut self, i: usize, f: u32, j: usize, key: u64) {
        let now = self.now;
        let (free, admitted) = self
            .subs
            .get(&sub_key(i, f, j))
            .copied()
            .unwrap_or((now, now));
        let stamps = Stamps {
            free,
            admitted: if admitted == UNSET { now } else { admitted },
            cut: now,
            left_source: UNSET,
            at_via: UNSET,
            left_via: UNSET,
            arrived: UNSET,
            via: j as u16,
        };
        self.cells.insert(key, stamps);
    }

    /// The cell `key` left its queue now towards `to`: its source's if `first`, else its
    /// intermediate's.
    pub fn left(&mut self, key: u64, to: u16, first: bool) {
        if let Some(mut s) = self.cells.remove(&key) {
            if first {
                s.left_source = self.now;
            } else {
                s.left_via = self.now;
            }
            self.outbox.push((to, key, s));
        }
    }

    /// Takes a cell sent towards one of this part's nodes.
    pub fn incoming(&mut self, key: u64, s: Stamps) {
        self.cells.insert(key, s);
    }

    /// The cell `key` arrived now at its intermediate.
    pub fn at_via(&mut self, key: u64) {
        if let Some(s) = self.cells.get_mut(&key) {
            s.at_via = self.now;
        }
    }

    /// The cell `key` of workload flow `tag` arrived now at its destination.
    pub fn arrived(&mut self, key: u64, tag: u32) {
        if let Some(mut s) = self.cells.remove(&key) {
            s.arrived = self.now;
            if s.left_via == UNSET {
                // The direct path: no intermediate.
                s.at_via = self.now;
                s.left_via = self.now;
            }
            self.last.insert(tag, s);
        }
    }

    /// The stamps of flow `tag`'s last-arrived cell, forgotten here.
    pub fn take_last(&mut self, tag: u32) -> Option<Stamps> {
        self.last.remove(&tag)
    }
}

/// The parts of one flow's FCT, in picoseconds, in the order of the table above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    pub subflow: u64,
    pub held: u64,
    pub ready: u64,
    pub source_queue: u64,
    pub first_hop: u64,
    pub intermediate: u64,
    pub second_hop: u64,
    pub reassembly: u64,
}

impl Parts {
    /// The parts of a flow that started at `start` and finished at `finish`, from its critical
    /// cell's stamps (slots of `slot_ps`). Each stamp counts from the later of itself and the
    /// stamp before it, the first from `start`; `None` if a stamp lies past `finish` (a bug).
    fn of(start: Time, finish: Time, s: &Stamps, slot_ps: u64) -> Option<Parts> {
        let mut at = start.0;
        let mut step = |slot: u64| {
            let t = slot.saturating_mul(slot_ps).max(at);
            let d = t - at;
            at = t;
            d
        };
        let p = Parts {
            subflow: step(s.free),
            held: step(s.admitted),
            ready: step(s.cut),
            source_queue: step(s.left_source),
            first_hop: step(s.at_via),
            intermediate: step(s.left_via),
            second_hop: step(s.arrived),
            reassembly: 0,
        };
        let reassembly = finish.0.checked_sub(at)?;
        Some(Parts { reassembly, ..p })
    }

    /// All parts added up.
    pub fn sum(&self) -> u64 {
        self.subflow
            + self.held
            + self.ready
            + self.source_queue
            + self.first_hop
            + self.intermediate
            + self.second_hop
            + self.reassembly
    }
}

/// The rows of `breakdown.csv`, collected as short flows complete.
pub(crate) struct Rows {
    slot_ps: u64,
    text: String,
    /// Short flows completed whose critical cell had no stamps (should stay 0).
    pub missing: u64,
}

/// The header of `breakdown.csv`.
pub const HEADER: &str = "id,src,dst,bytes,fct_ps,path,via,subflow_ps,held_ps,ready_ps,\
                          source_queue_ps,first_hop_ps,intermediate_ps,second_hop_ps,\
                          reassembly_ps";

impl Rows {
    pub fn new(slot_ps: u64) -> Self {
        let mut text = String::from(HEADER);
        text.push('\n');
        Rows {
            slot_ps,
            text,
            missing: 0,
        }
    }

    /// Adds the row of `rec`, just completed, if it is a short flow.
    pub fn add(&mut self, rec: &FlowRecord, stamps: Option<Stamps>) {
        let Some(finish) = rec.finish else { return };
        if rec.bytes > SHORT_FLOW_MAX_BYTES {
            return;
        }
        let Some((s, p)) =
            stamps.and_then(|s| Some((s, Parts::of(rec.start, finish, &s, self.slot_ps)?)))
        else {
            self.missing += 1;
            return;
        };
        let path = if s.via == rec.dst.0 {
            "direct"
        } else {
            "detour"
        };
        let _ = write!(
            self.text,
            "{},{},{},{},{},{path},{},",
            rec.id,
            rec.src.0,
            rec.dst.0,
            rec.bytes,
            finish.0 - rec.start.0,
            s.via
        );
        let parts = [
            p.subflow,
            p.held,
            p.ready,
            p.source_queue,
            p.first_hop,
            p.intermediate,
            p.second_hop,
            p.reassembly,
        ];
        for (k, v) in parts.iter().enumerate() {
            let sep = if k + 1 == parts.len() { '\n' } else { ',' };
            let _ = write!(self.text, "{v}{sep}");
        }
    }

    pub fn into_text(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_before_the_start_count_from_it_and_the_parts_add_up() {
        let s = Stamps {
            free: 0,
            admitted: 3,
            cut: 3,
            left_source: 10,
            at_via: 12,
            left_via: 50,
            arrived: 52,
            via: 7,
        };
        // Starts 5 slots and 40 ps in (slots of 1,000 ps): the free and admitted stamps lie
        // before it.
        let p = Parts::of(Time(5_040), Time(60_000), &s, 1_000).expect("in order");
        assert_eq!(
            p,
            Parts {
                subflow: 0,
                held: 0,
                ready: 0,
                source_queue: 4_960,
                first_hop: 2_000,
                intermediate: 38_000,
                second_hop: 2_000,
                reassembly: 8_000,
            }
        );
        assert_eq!(p.sum(), 60_000 - 5_040);
        assert_eq!(Parts::of(Time(0), Time(51_000), &s, 1_000), None);
    }
}
