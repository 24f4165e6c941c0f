//! The dependency-graph file of `kind = "dag"`: a CSV of tasks, one a line, for users who
//! bring their own training step (sends between nodes and compute steps, each after the tasks
//! it names). The header is required and exact:
//!
//! ```text
//! id,kind,src,dst,bytes,duration_us,after
//! 0,send,0,1,1048576,,
//! 1,send,1,0,1048576,,
//! 2,compute,0,,,50,0 1
//! 3,send,0,2,4096,,2
//! ```
//!
//! - `id`: a unique integer naming the task (any order, gaps allowed).
//! - `kind`: `send` (bytes from `src` to `dst`, a flow of the fabric) or `compute` (node `src`
//!   busy for `duration_us`, no bytes moved).
//! - `src`, `dst`: node ids below the fabric's node count; `dst` differs from `src`, and is
//!   empty for a compute step.
//! - `bytes`: a send's size, at least 1; empty for a compute step.
//! - `duration_us`: a compute step's duration (required, 0 to 1,000,000 µs); for a send an
//!   optional wait after its dependencies (empty: none).
//! - `after`: the ids of the tasks this one waits for, separated by spaces (empty: it starts
//!   with the run). A send finishes when its last byte is delivered, a compute step its
//!   duration after its release.
//!
//! Every error names the file, the line, the column and the reason; unknown ids, repeated ids
//! and cycles (with the lines of the tasks on it) are refused before the run.

use crate::collective::MAX_TASKS;
use crate::dag::{Dag, DagError, Task, Work};
use shoal_base::{Dur, NodeId};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use thiserror::Error;

/// The header a file must start with.
pub const COLUMNS: [&str; 7] = ["id", "kind", "src", "dst", "bytes", "duration_us", "after"];
/// The longest compute step or wait, µs (a longer one is a mistyped unit).
pub const MAX_DURATION_US: f64 = 1e6;

/// A file that cannot be run.
#[derive(Debug, Error)]
pub enum DagFileError {
    #[error("{origin}: cannot read: {reason}")]
    Io { origin: String, reason: String },
    #[error("{origin}:{line}: {field}: {reason}")]
    Field {
        origin: String,
        line: u64,
        field: &'static str,
        reason: String,
    },
    #[error("{origin}:{line}: {reason}")]
    Line {
        origin: String,
        line: u64,
        reason: String,
    },
    #[error("{origin}: {reason}")]
    File { origin: String, reason: String },
}

/// The graph of the file at `path` for a fabric of `nodes` nodes.
pub fn read(path: &Path, nodes: usize) -> Result<Dag, DagFileError> {
    let origin = path.display().to_string();
    let file = File::open(path).map_err(|e| DagFileError::Io {
        origin: origin.clone(),
        reason: e.to_string(),
    })?;
    parse(BufReader::new(file), &origin, nodes)
}

/// The graph of the CSV text `reader` yields; `origin` names it in errors.
pub fn parse(reader: impl std::io::Read, origin: &str, nodes: usize) -> Result<Dag, DagFileError> {
    let file_err = |reason: String| DagFileError::File {
        origin: origin.to_owned(),
        reason,
    };
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(reader);
    let mut tasks: Vec<Task> = Vec::new();
    // Each task's line, by id.
    let mut lines: BTreeMap<u64, u64> = BTreeMap::new();
    let mut header_seen = false;
    for record in csv.records() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            DagFileError::Line {
                origin: origin.to_owned(),
                line,
                reason: format!("not CSV text: {e}"),
            }
        })?;
        let line = record.position().map_or(0, |p| p.line());
        if !header_seen {
            header_seen = true;
            let got: Vec<&str> = record.iter().collect();
            if got != COLUMNS {
                return Err(DagFileError::Line {
                    origin: origin.to_owned(),
                    line,
                    reason: format!(
                        "the header must be {:?}, got {:?}",
                        COLUMNS.join(","),
                        got.join(",")
                    ),
                });
            }
            continue;
        }
        if record.iter().all(str::is_empty) {
            continue;
        }
        if record.len() != COLUMNS.len() {
            return Err(DagFileError::Line {
                origin: origin.to_owned(),
                line,
                reason: format!("{} fields, the header has {}", record.len(), COLUMNS.len()),
            });
        }
        if tasks.len() as u64 >= MAX_TASKS {
            return Err(file_err(format!("more than {MAX_TASKS} tasks")));
        }
        let task = task(&record, nodes).map_err(|(field, reason)| DagFileError::Field {
            origin: origin.to_owned(),
            line,
            field,
            reason,
        })?;
        if let Some(first) = lines.insert(task.id, line) {
            return Err(DagFileError::Field {
                origin: origin.to_owned(),
                line,
                field: "id",
                reason: format!("id {} is given on line {first} already", task.id),
            });
        }
        tasks.push(task);
    }
    if !header_seen {
        return Err(file_err(format!(
            "empty: a graph file starts with the header {}",
            COLUMNS.join(",")
        )));
    }
    if !tasks.iter().any(|t| matches!(t.work, Work::Send { .. })) {
        return Err(file_err("holds no send: nothing to run".to_owned()));
    }
    let line_of = |id: u64| lines.get(&id).copied().unwrap_or(0);
    Dag::new(tasks).map_err(|e| match e {
        DagError::Unknown { task, dep } => DagFileError::Field {
            origin: origin.to_owned(),
            line: line_of(task),
            field: "after",
            reason: format!("task {task} waits for task {dep}, which the file does not hold"),
        },
        DagError::RepeatedDep { task, dep } => DagFileError::Field {
            origin: origin.to_owned(),
            line: line_of(task),
            field: "after",
            reason: format!("task {dep} is named twice"),
        },
        DagError::Cycle(ids) => {
            let on: Vec<String> = ids
                .iter()
                .map(|&id| format!("{id} (line {})", line_of(id)))
                .collect();
            file_err(format!(
                "the dependencies form a cycle: {} -> {} (each waits for the one after it)",
                on.join(" -> "),
                on[0]
            ))
        }
        other => file_err(other.to_string()),
    })
}

/// One line's task, or the column at fault and why.
fn task(r: &csv::StringRecord, nodes: usize) -> Result<Task, (&'static str, String)> {
    let id = int(&r[0], "id")?;
    let node = |i: usize, field: &'static str| -> Result<NodeId, (&'static str, String)> {
        let v = int(&r[i], field)?;
        if v >= nodes as u64 {
            return Err((
                field,
                format!(
                    "node {v} is not in a fabric of {nodes} nodes (ids 0 to {})",
                    nodes - 1
                ),
            ));
        }
        Ok(NodeId(v as u16))
    };
    let src = node(2, "src")?;
    let duration = |required: bool| -> Result<Dur, (&'static str, String)> {
        let f = "duration_us";
        let text = &r[5];
        if text.is_empty() {
            return match required {
                true => Err((f, "a compute step needs its duration".to_owned())),
                false => Ok(Dur(0)),
            };
        }
        let us: f64 = text
            .parse()
            .map_err(|_| (f, format!("{text:?} is not a number of µs")))?;
        if !(0.0..=MAX_DURATION_US).contains(&us) {
            return Err((
                f,
                format!("{text} µs is outside 0 to {MAX_DURATION_US} (a second; a mistyped unit?)"),
            ));
        }
        Ok(Dur((us * 1e6).round() as u64))
    };
    let after: Vec<u64> = r[6]
        .split_whitespace()
        .map(|d| int(d, "after"))
        .collect::<Result<_, _>>()?;
    if after.contains(&id) {
        return Err(("after", format!("task {id} waits for itself")));
    }
    match &r[1] {
        "send" => {
            let dst = node(3, "dst")?;
            if dst == src {
                return Err(("dst", format!("a send from node {} to itself", src.0)));
            }
            let bytes = int(&r[4], "bytes")?;
            if bytes == 0 {
                return Err(("bytes", "a send of 0 bytes".to_owned()));
            }
            let mut t = Task::send(id, src, dst, bytes, after);
            t.delay = duration(false)?;
            Ok(t)
        }
        "compute" => {
            for (i, field) in [(3, "dst"), (4, "bytes")] {
                if !r[i].is_empty() {
                    return Err((
                        field,
                        "a compute step moves no bytes: leave it empty".to_owned(),
                    ));
                }
            }
            Ok(Task::compute(id, src, duration(true)?, after))
        }
        other => Err(("kind", format!("{other:?}: give send or compute"))),
    }
}

/// A non-negative integer.
fn int(text: &str, field: &'static str) -> Result<u64, (&'static str, String)> {
    if text.is_empty() {
        return Err((field, "empty".to_owned()));
    }
    text.parse()
        .map_err(|_| (field, format!("{text:?} is not a non-negative integer")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "id,kind,src,dst,bytes,duration_us,after\n";

    fn err(body: &str) -> String {
        parse(format!("{HEAD}{body}").as_bytes(), "g.csv", 4)
            .expect_err("refused")
            .to_string()
    }

    #[test]
    fn a_graph_reads_with_its_sends_compute_and_dependencies() {
        let dag = parse(
            format!("{HEAD}10,send,0,1,1000,,\n11,compute,1,,,2.5,10\n\n12,send,1,3,7,1,11 10\n")
                .as_bytes(),
            "g.csv",
            4,
        )
        .expect("valid");
        assert_eq!(dag.sends(), 2);
        let t = dag.task(11).expect("held");
        assert_eq!((t.delay, t.after.clone()), (Dur(2_500_000), vec![10]));
        assert_eq!(dag.task(12).expect("held").after, vec![11, 10]);
        assert_eq!(dag.task(12).expect("held").delay, Dur(1_000_000));
    }

    #[test]
    fn bad_lines_are_refused_with_file_line_field_and_reason() {
        let cases = [
            (
                "0,send,0,4,10,,\n",
                "g.csv:2: dst: node 4 is not in a fabric of 4",
            ),
            (
                "0,send,0,0,10,,\n",
                "g.csv:2: dst: a send from node 0 to itself",
            ),
            ("0,send,0,1,0,,\n", "g.csv:2: bytes: a send of 0 bytes"),
            ("0,send,0,1,-3,,\n", "g.csv:2: bytes: \"-3\" is not"),
            ("0,copy,0,1,3,,\n", "g.csv:2: kind: \"copy\""),
            (
                "0,compute,0,,,,\n",
                "g.csv:2: duration_us: a compute step needs",
            ),
            (
                "0,compute,0,1,,5,\n",
                "g.csv:2: dst: a compute step moves no bytes",
            ),
            ("0,compute,0,,,5e7,\n", "g.csv:2: duration_us: 5e7"),
            (
                "0,send,0,1,3,,0\n",
                "g.csv:2: after: task 0 waits for itself",
            ),
            (
                "0,send,0,1,3,,\n0,send,1,0,3,,\n",
                "g.csv:3: id: id 0 is given on line 2",
            ),
            (
                "0,send,0,1,3,,7\n",
                "g.csv:2: after: task 0 waits for task 7",
            ),
            ("0,send,0,1,3,,x\n", "g.csv:2: after: \"x\""),
            ("0,send,0,1,3\n", "g.csv:2: 5 fields"),
            ("0,compute,0,,,1,\n", "g.csv: holds no send"),
            (
                "0,send,0,1,3,,2\n1,send,1,2,3,,0\n2,send,2,3,3,,1\n",
                "cycle: ",
            ),
        ];
        for (body, want) in cases {
            let e = err(body);
            assert!(e.contains(want), "{body}: {e}");
        }
        let e = err("0,send,0,1,3,,2\n1,send,1,2,3,,0\n2,send,2,3,3,,1\n");
        for line in ["(line 2)", "(line 3)", "(line 4)"] {
            assert!(e.contains(line), "the cycle's lines: {e}");
        }
        let e = parse("id,src\n".as_bytes(), "g.csv", 4).expect_err("bad header");
        assert!(
            e.to_string().starts_with("g.csv:1: the header must be"),
            "{e}"
        );
        let e = parse("".as_bytes(), "g.csv", 4).expect_err("empty");
        assert!(e.to_string().contains("empty"), "{e}");
    }
}
