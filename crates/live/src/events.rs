//! What happened, when: every failure, corruption, violation and run of late slots, logged as one
//! JSON object per line (`events.jsonl` beside each node's counters) and kept in memory for the
//! caller.

use serde::Serialize;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// One logged event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LoggedEvent {
    /// The node (or, for the switch, `None`) that saw it.
    pub node: Option<u16>,
    /// The slot the observer was in.
    pub slot: u64,
    /// `CLOCK_MONOTONIC` nanoseconds when it was seen.
    pub mono_ns: u64,
    pub what: EventKind,
}

/// The kinds of events.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// No cell came from `peer` in its slot within the grace period; the node now treats it as
    /// failed (§3.5). `last_heard` is the slot of the last cell received from it.
    PeerFailed { peer: u16, last_heard: Option<u64> },
    /// Cells from `src` missing since a peer failed were given up (lost with it; §3.5 leaves
    /// them to the transport above) and what they held back was delivered.
    CellsGivenUp { src: u16, cells: u32 },
    /// A local flow to `dst` was abandoned with bytes unsent (§3.5: the transport recovers).
    FlowAborted { dst: u16, unsent_bytes: u64 },
    /// A cell from `peer` failed its CRC (App. D: the node keeps its feedback, drops it and asks
    /// for it again).
    CorruptCell { peer: u16 },
    /// A cell arrived where the schedule put no circuit, or from another port than the
    /// schedule's, or the switch's circuit disagreed with the sender's peer.
    ScheduleViolation {
        sent_slot: u64,
        channel: u8,
        from: u16,
        to: u16,
        detail: String,
    },
    /// A cell arrived after its reception had been given up (it counted as missing).
    LateCell { peer: u16, sent_slot: u64 },
    /// Slots `first..=last` began at least one slot time after their nominal start; the
    /// driver ran them back to back to catch up. `max_late_ns` is the worst lateness.
    LateSlots {
        first: u64,
        last: u64,
        max_late_ns: u64,
    },
    /// The switch flipped a header bit of a cell on purpose (fault injection, App. D).
    InjectedCorruption {
        sent_slot: u64,
        from: u16,
        to: u16,
        bit: u8,
    },
}

/// An event log: in memory, and in a file when there is one.
pub struct EventLog {
    file: Option<BufWriter<File>>,
    pub events: Vec<LoggedEvent>,
}

impl EventLog {
    pub fn new(path: Option<&Path>) -> io::Result<EventLog> {
        Ok(EventLog {
            file: match path {
                Some(p) => Some(BufWriter::new(File::create(p)?)),
                None => None,
            },
            events: Vec::new(),
        })
    }

    pub fn log(&mut self, e: LoggedEvent) -> io::Result<()> {
        if let Some(f) = &mut self.file {
            serde_json::to_writer(&mut *f, &e)?;
            f.write_all(b"\n")?;
        }
        self.events.push(e);
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// Writes `value` as JSON to `path` through a temporary file and a rename, so that a reader
/// polling the file while the rack runs never sees half of it.
pub fn write_json_atomically(path: &Path, value: &impl Serialize) -> io::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut f = BufWriter::new(File::create(&tmp)?);
    serde_json::to_writer_pretty(&mut f, value)?;
    f.write_all(b"\n")?;
    f.flush()?;
    drop(f);
    std::fs::rename(tmp, path)
}
