//! Trace replay: flows read lazily from a CSV file with columns `src,dst,size_bytes,start_ns`,
//! in file order.
//!
//! Format: one flow a line, four integer columns; an optional header line with exactly these
//! names; lines whose first field starts with `#` are comments; blank lines are ignored; no
//! quoting. The file must be sorted by `start_ns` (ties allowed).
//!
//! Contract: a stream can fail half way, so the error is kept, not dropped. A [`TraceSource`]
//! yields the flows up to the first bad line, then ends; [`TraceSource::take_error`] then says
//! whether it ended at the end of the file (`None`) or at an error. Callers that must not start
//! a run on a bad trace call [`validate`] first, which reads the whole file.

use crate::flow::Flow;
use crate::source::FlowSource;
use serde::Serialize;
use shoal_base::{Dur, NodeId, Time};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use thiserror::Error;

const COLUMNS: [&str; 4] = ["src", "dst", "size_bytes", "start_ns"];

/// A bad trace: the file, the 1-based line and what is wrong.
#[derive(Debug, Error)]
pub enum TraceError {
    #[error("{origin}: cannot read: {source}")]
    Io {
        origin: String,
        #[source]
        source: io::Error,
    },
    #[error("{origin}:{line}: {reason}")]
    Line {
        origin: String,
        line: u64,
        reason: TraceIssue,
    },
}

/// What is wrong with one line of a trace.
#[derive(Debug, Error, PartialEq)]
pub enum TraceIssue {
    #[error("expected 4 columns src,dst,size_bytes,start_ns, found {0}")]
    Columns(usize),
    #[error(
        "{column} `{text}` is not a non-negative integer (a header must read exactly \
         src,dst,size_bytes,start_ns)"
    )]
    NotInteger { column: &'static str, text: String },
    #[error("src and dst are both node {0}")]
    SelfLoop(u64),
    #[error("{column} {node} is outside the rack of {nodes} nodes")]
    NodeOutOfRange {
        column: &'static str,
        node: u64,
        nodes: usize,
    },
    #[error("size_bytes is 0: a flow carries at least one byte")]
    ZeroSize,
    #[error("start_ns {0} is beyond the simulated time range")]
    StartTooLate(u64),
    #[error(
        "start_ns {this} is before the previous flow's {prev}: the trace must be sorted by start_ns"
    )]
    Unsorted { prev: u64, this: u64 },
    #[error("unreadable CSV: {0}")]
    Csv(String),
}

/// Feeds csv every line, blank ones as a single space, so csv never skips a line and record k
/// is line k (csv's own line numbers lose count over skipped blank lines).
struct KeepBlankLines<R> {
    inner: R,
    at_line_start: bool,
    newline_owed: bool,
}

impl<R: BufRead> Read for KeepBlankLines<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.newline_owed {
            self.newline_owed = false;
            out[0] = b'\n';
            return Ok(1);
        }
        let buf = self.inner.fill_buf()?;
        if buf.is_empty() {
            return Ok(0);
        }
        if self.at_line_start && buf[0] == b'\n' {
            self.inner.consume(1);
            self.newline_owed = true;
            out[0] = b' ';
            return Ok(1);
        }
        // Up to the end of this line, so the next read sees the start of the next one.
        let n = out.len().min(buf.len());
        let n = buf[..n]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(n, |i| i + 1);
        out[..n].copy_from_slice(&buf[..n]);
        self.at_line_start = buf[n - 1] == b'\n';
        self.inner.consume(n);
        Ok(n)
    }
}

/// A trace read lazily, one flow per line, as an iterator and a [`FlowSource`]. Ids are 0, 1, …
/// in file order; the traffic class is 0. See the module's contract on errors.
pub struct TraceSource<R: BufRead> {
    csv: csv::Reader<KeepBlankLines<R>>,
    record: csv::ByteRecord,
    origin: String,
    nodes: usize,
    line: u64,
    last_ns: u64,
    next_id: u64,
    peeked: Option<Flow>,
    error: Option<TraceError>,
    done: bool,
}

impl TraceSource<BufReader<File>> {
    /// Opens the trace at `path` for a rack of `nodes` nodes.
    pub fn open(path: impl AsRef<Path>, nodes: usize) -> Result<Self, TraceError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        match File::open(path) {
            Ok(f) => Ok(TraceSource::new(BufReader::new(f), &origin, nodes)),
            Err(source) => Err(TraceError::Io { origin, source }),
        }
    }
}

impl<R: BufRead> TraceSource<R> {
    /// Reads a trace from `reader`; `origin` names it in errors.
    pub fn new(reader: R, origin: &str, nodes: usize) -> Self {
        let csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .quoting(false)
            .trim(csv::Trim::All)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_reader(KeepBlankLines {
                inner: reader,
                at_line_start: true,
                newline_owed: false,
            });
        TraceSource {
            csv,
            record: csv::ByteRecord::new(),
            origin: origin.to_string(),
            nodes,
            line: 0,
            last_ns: 0,
            next_id: 0,
            peeked: None,
            error: None,
            done: false,
        }
    }

    /// The error the trace stopped at, once; `None` if it has not stopped at one (yet).
    pub fn take_error(&mut self) -> Option<TraceError> {
        self.error.take()
    }

    /// Reads lines until a flow, the end, or an error (kept, and the stream ends).
    fn read_flow(&mut self) -> Option<Flow> {
        while !self.done {
            match self.csv.read_byte_record(&mut self.record) {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.line += 1;
                    self.fail(TraceIssue::Csv(e.to_string()));
                }
            }
            if self.done {
                break;
            }
            self.line += 1;
            match self.parse() {
                Ok(Some(flow)) => return Some(flow),
                Ok(None) => {}
                Err(issue) => self.fail(issue),
            }
        }
        None
    }

    fn fail(&mut self, reason: TraceIssue) {
        self.done = true;
        self.error = Some(TraceError::Line {
            origin: self.origin.clone(),
            line: self.line,
            reason,
        });
    }

    /// The flow on the current line, or `None` for a blank, comment or header line.
    fn parse(&mut self) -> Result<Option<Flow>, TraceIssue> {
        let r = &self.record;
        let first = r.get(0).unwrap_or_default();
        if first.starts_with(b"#") || (r.len() == 1 && first.is_empty()) {
            return Ok(None);
        }
        if self.next_id == 0 && r.iter().eq(COLUMNS.iter().map(|c| c.as_bytes())) {
            return Ok(None);
        }
        if r.len() != COLUMNS.len() {
            return Err(TraceIssue::Columns(r.len()));
        }
        let mut v = [0u64; 4];
        for (i, column) in COLUMNS.iter().enumerate() {
            let text = &r[i];
            v[i] = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| TraceIssue::NotInteger {
                    column,
                    text: String::from_utf8_lossy(text).into_owned(),
                })?;
        }
        let [src, dst, bytes, start_ns] = v;
        for (column, node) in [("src", src), ("dst", dst)] {
            if node >= self.nodes as u64 || node > u64::from(u16::MAX) {
                return Err(TraceIssue::NodeOutOfRange {
                    column,
                    node,
                    nodes: self.nodes,
                });
            }
        }
        if src == dst {
            return Err(TraceIssue::SelfLoop(src));
        }
        if bytes == 0 {
            return Err(TraceIssue::ZeroSize);
        }
        let start = start_ns
            .checked_mul(1_000)
            .ok_or(TraceIssue::StartTooLate(start_ns))?;
        if start_ns < self.last_ns {
            return Err(TraceIssue::Unsorted {
                prev: self.last_ns,
                this: start_ns,
            });
        }
        self.last_ns = start_ns;
        let flow = Flow {
            id: self.next_id,
            src: NodeId(src as u16),
            dst: NodeId(dst as u16),
            bytes,
            start: Time(start),
            class: 0,
        };
        self.next_id += 1;
        Ok(Some(flow))
    }
}

impl<R: BufRead> Iterator for TraceSource<R> {
    type Item = Flow;

    fn next(&mut self) -> Option<Flow> {
        self.peeked.take().or_else(|| self.read_flow())
    }
}

impl<R: BufRead> FlowSource for TraceSource<R> {
    fn next_due(&mut self, now: Time) -> Option<Flow> {
        if self.next_start()? <= now {
            self.peeked.take()
        } else {
            None
        }
    }

    fn next_start(&mut self) -> Option<Time> {
        if self.peeked.is_none() {
            self.peeked = self.read_flow();
        }
        self.peeked.map(|f| f.start)
    }

    /// True at the end of the file or at the first error ([`TraceSource::take_error`]).
    fn is_exhausted(&mut self) -> bool {
        self.next_start().is_none()
    }
}

/// What [`validate`] found in a good trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TraceStats {
    pub flows: u64,
    pub bytes: u64,
    pub last_start: Time,
    /// The longest wait for a flow: from time 0 to the first start, or between two starts.
    pub max_gap: Dur,
}

/// Reads the whole trace at `path` and checks every line for a rack of `nodes` nodes.
pub fn validate(path: impl AsRef<Path>, nodes: usize) -> Result<TraceStats, TraceError> {
    let mut trace = TraceSource::open(path, nodes)?;
    let mut stats = TraceStats {
        flows: 0,
        bytes: 0,
        last_start: Time::ZERO,
        max_gap: Dur(0),
    };
    for f in trace.by_ref() {
        stats.flows += 1;
        stats.bytes = stats.bytes.saturating_add(f.bytes);
        stats.max_gap = stats.max_gap.max(Dur(f.start.0 - stats.last_start.0));
        stats.last_start = f.start;
    }
    match trace.take_error() {
        Some(e) => Err(e),
        None => Ok(stats),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, nodes: usize) -> (Vec<Flow>, Option<String>) {
        let mut t = TraceSource::new(text.as_bytes(), "t.csv", nodes);
        let flows: Vec<Flow> = t.by_ref().collect();
        (flows, t.take_error().map(|e| e.to_string()))
    }

    fn error(text: &str) -> String {
        read(text, 8).1.expect("an error")
    }

    #[test]
    fn a_good_trace_streams_in_file_order() {
        let text = "# a trace\nsrc,dst,size_bytes,start_ns\n\n0,1,1500,0\n  # mid\n2, 3 ,64,10\r\n\
                    \n7,0,9000,10\n1,2,1,25";
        let (flows, err) = read(text, 8);
        assert_eq!(err, None);
        let got: Vec<(u64, u16, u16, u64, u64)> = flows
            .iter()
            .map(|f| (f.id, f.src.0, f.dst.0, f.bytes, f.start.0))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 0, 1, 1500, 0),
                (1, 2, 3, 64, 10_000),
                (2, 7, 0, 9000, 10_000),
                (3, 1, 2, 1, 25_000)
            ]
        );
        // As a FlowSource.
        let mut t = TraceSource::new(text.as_bytes(), "t.csv", 8);
        assert_eq!(t.next_start(), Some(Time(0)));
        assert_eq!(t.next_due(Time(0)).map(|f| f.id), Some(0));
        assert_eq!(t.next_due(Time(9_999)), None);
        assert_eq!(t.next_due(Time(10_000)).map(|f| f.id), Some(1));
        assert_eq!(t.next_due(Time(10_000)).map(|f| f.id), Some(2));
        assert!(!t.is_exhausted());
        assert_eq!(t.next_due(Time(99_999)).map(|f| f.id), Some(3));
        assert!(t.is_exhausted());
        assert!(t.take_error().is_none());
    }

    #[test]
    fn each_bad_line_is_an_error_with_file_line_and_reason() {
        assert_eq!(
            error("0,1,10,0\n\n0,1,10\n"),
            "t.csv:3: expected 4 columns src,dst,size_bytes,start_ns, found 3"
        );
        assert_eq!(
            error("# x\n0,1,1.5,0\n"),
            "t.csv:2: size_bytes `1.5` is not a non-negative integer (a header must read \
             exactly src,dst,size_bytes,start_ns)"
        );
        assert!(error("src,dst,bytes,start_ns\n").starts_with("t.csv:1: src `src` is not"));
        assert!(error("0,-1,5,0\n").starts_with("t.csv:1: dst `-1` is not"));
        assert_eq!(
            error("0,1,5,0\n3,3,5,1\n"),
            "t.csv:2: src and dst are both node 3"
        );
        assert_eq!(
            error("0,8,5,0\n"),
            "t.csv:1: dst 8 is outside the rack of 8 nodes"
        );
        assert_eq!(
            error("0,1,0,0\n"),
            "t.csv:1: size_bytes is 0: a flow carries at least one byte"
        );
        assert_eq!(
            error("0,1,5,20\n\n# c\n1,0,5,19\n"),
            "t.csv:4: start_ns 19 is before the previous flow's 20: the trace must be sorted \
             by start_ns"
        );
        assert_eq!(
            error("0,1,5,18446744073709551615\n"),
            "t.csv:1: start_ns 18446744073709551615 is beyond the simulated time range"
        );
        let mut t = TraceSource::new(&b"0,1,5,\xff\n"[..], "t.csv", 8);
        assert_eq!(t.next(), None);
        let e = t.take_error().unwrap().to_string();
        assert!(e.starts_with("t.csv:1: start_ns `\u{fffd}` is not"), "{e}");
        assert!(
            read("0,1,5,7\n", 70_000).1.is_none(),
            "a rack larger than ids is fine"
        );
        assert!(
            read("0,65536,5,7\n", 70_000)
                .1
                .unwrap()
                .contains("dst 65536 is outside")
        );
    }

    #[test]
    fn flows_before_an_error_are_delivered_and_the_error_kept() {
        let (flows, err) = read("0,1,5,0\n1,2,5,1\n2,2,5,2\n3,4,5,3\n", 8);
        assert_eq!(flows.len(), 2);
        assert_eq!(err.as_deref(), Some("t.csv:3: src and dst are both node 2"));
        let mut t = TraceSource::new("1,1,1,1\n".as_bytes(), "t.csv", 8);
        assert!(t.is_exhausted(), "a source stops at the first error");
        assert!(t.take_error().is_some());
        assert!(t.take_error().is_none(), "taken once");
    }

    #[test]
    fn validate_reads_the_whole_file() {
        let dir = std::env::temp_dir().join(format!("shoal-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.csv");
        std::fs::write(&good, "src,dst,size_bytes,start_ns\n0,1,100,5\n1,0,50,9\n").unwrap();
        let stats = validate(&good, 2).unwrap();
        assert_eq!(
            stats,
            TraceStats {
                flows: 2,
                bytes: 150,
                last_start: Time(9_000),
                // 5 ns from time 0 to the first start, 4 ns to the second.
                max_gap: Dur(5_000),
            }
        );
        let bad = dir.join("bad.csv");
        std::fs::write(&bad, "0,1,100,5\n".repeat(1000) + "0,1,100,4\n").unwrap();
        let e = validate(&bad, 2).unwrap_err().to_string();
        assert!(e.ends_with("bad.csv:1001: start_ns 4 is before the previous flow's 5: the trace must be sorted by start_ns"), "{e}");
        let missing = validate(dir.join("missing.csv"), 2).unwrap_err();
        assert!(matches!(missing, TraceError::Io { .. }));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
