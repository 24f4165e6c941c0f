//! htsim's connection-matrix (`.cm`) files, so that the same permutation or trace runs in
//! htsim and here (issue 21).
//!
//! The format, as htsim's loader (`ConnectionMatrix::load`) reads it: whitespace-separated
//! tokens; blank lines and lines starting with `#` are skipped; a header of `Nodes N` and
//! `Connections C` (and `Triggers T`, `Failures F`) before the first connection; then one
//! connection a line, `S->D` followed by key-value pairs: `start T` (picoseconds, a number:
//! htsim's loader reads it as picoseconds, although its own `save` writes microseconds, which
//! only agree at 0), `size B` (bytes; 0 means the flow never ends), `id I` (non-zero), and the
//! keys for htsim's triggers and priorities.
//!
//! Our choices: triggers (flows started by another's completion), failures and priorities are
//! refused with the line that asks for them rather than ignored, since a run without them is
//! not the run the file describes; `size` is required (htsim leaves it unset otherwise);
//! `Connections` must count the connection lines; a flow of size 0 gets [`UNBOUNDED_BYTES`].
//! Flows are handed out sorted by start time (ties in file order), with ids `0..` in that order.

use crate::flow::Flow;
use shoal_base::{NodeId, Time};
use std::collections::BTreeSet;
use std::path::Path;
use thiserror::Error;

/// The size given to a connection of size 0 (htsim: "send until the run ends"): 2^50 bytes,
/// which a 400 Gb/s host takes over six hours to send, longer than any run here.
pub const UNBOUNDED_BYTES: u64 = 1 << 50;

/// A bad connection matrix: the file, the 1-based line (0: the file as a whole) and why.
#[derive(Debug, Error, PartialEq)]
#[error("{origin}:{line}: {reason}")]
pub struct CmError {
    pub origin: String,
    pub line: usize,
    pub reason: String,
}

/// Reads the connection matrix at `path` for a network of `nodes` hosts.
pub fn read(path: &Path, nodes: usize) -> Result<Vec<Flow>, CmError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| CmError {
        origin: origin.clone(),
        line: 0,
        reason: format!("cannot read: {e}"),
    })?;
    parse(&text, &origin, nodes)
}

/// Parses a connection matrix (`origin` names it in errors) for a network of `nodes` hosts.
pub fn parse(text: &str, origin: &str, nodes: usize) -> Result<Vec<Flow>, CmError> {
    let err = |line: usize, reason: String| CmError {
        origin: origin.to_owned(),
        line,
        reason,
    };
    let mut declared_nodes: Option<usize> = None;
    let mut declared_conns: Option<usize> = None;
    let mut flows: Vec<Flow> = Vec::new();
    let mut ids = BTreeSet::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let tokens: Vec<&str> = raw.split_whitespace().collect();
        let Some(&first) = tokens.first() else {
            continue;
        };
        if first.starts_with('#') {
            continue;
        }
        let Some((src, dst)) = first.split_once("->") else {
            if !flows.is_empty() {
                return Err(err(
                    line,
                    format!("`{first}` after the first connection: expected `SRC->DST ...`"),
                ));
            }
            let count = |what: &str| -> Result<usize, CmError> {
                match tokens.as_slice() {
                    [_, n] => n
                        .parse()
                        .map_err(|_| err(line, format!("{what} `{n}` is not a whole number"))),
                    _ => Err(err(line, format!("expected `{what} N`"))),
                }
            };
            match first {
                "Nodes" => declared_nodes = Some(count("Nodes")?),
                "Connections" => declared_conns = Some(count("Connections")?),
                "Triggers" | "Failures" => {
                    if count(first)? > 0 {
                        return Err(err(line, format!("{first} are not modelled here")));
                    }
                }
                "trigger" | "failure" => {
                    return Err(err(line, format!("htsim's {first}s are not modelled here")));
                }
                other => return Err(err(line, format!("unknown header line `{other}`"))),
            }
            continue;
        };
        let Some(n) = declared_nodes else {
            return Err(err(line, "a connection before the `Nodes N` line".into()));
        };
        let node = |what: &str, text: &str| -> Result<NodeId, CmError> {
            let v: usize = text
                .parse()
                .map_err(|_| err(line, format!("{what} `{text}` is not a host number")))?;
            if v >= n {
                return Err(err(line, format!("{what} {v} is not below Nodes {n}")));
            }
            Ok(NodeId(v as u16))
        };
        let (src, dst) = (node("source", src)?, node("destination", dst)?);
        if src == dst {
            return Err(err(line, format!("host {} sends to itself", src.0)));
        }
        let (mut start, mut size) = (None, None);
        let mut rest = tokens[1..].iter();
        while let Some(&key) = rest.next() {
            let mut value = || {
                rest.next()
                    .copied()
                    .ok_or_else(|| err(line, format!("`{key}` without a value")))
            };
            match key {
                "start" => {
                    let v = value()?;
                    let ps: f64 = v
                        .parse()
                        .ok()
                        .filter(|t: &f64| t.is_finite() && *t >= 0.0 && *t < u64::MAX as f64)
                        .ok_or_else(|| {
                            err(line, format!("start `{v}` is not a time in picoseconds"))
                        })?;
                    start = Some(Time(ps.round() as u64));
                }
                "size" => {
                    let v = value()?;
                    let bytes: u64 = v
                        .parse()
                        .map_err(|_| err(line, format!("size `{v}` is not a byte count")))?;
                    size = Some(if bytes == 0 { UNBOUNDED_BYTES } else { bytes });
                }
                "id" => {
                    let v = value()?;
                    let id: u64 =
                        v.parse().ok().filter(|&id| id != 0).ok_or_else(|| {
                            err(line, format!("id `{v}` is not a non-zero number"))
                        })?;
                    if !ids.insert(id) {
                        return Err(err(line, format!("id {id} is given twice")));
                    }
                }
                "trigger" | "send_done_trigger" | "recv_done_trigger" | "addon" | "prio" => {
                    return Err(err(
                        line,
                        format!("`{key}` (htsim's triggers and priorities) is not modelled here"),
                    ));
                }
                other => return Err(err(line, format!("unknown connection key `{other}`"))),
            }
        }
        let start = start.ok_or_else(|| err(line, "no `start` time".into()))?;
        let bytes = size.ok_or_else(|| err(line, "no `size` (bytes; 0: unbounded)".into()))?;
        flows.push(Flow {
            id: 0,
            src,
            dst,
            bytes,
            start,
            class: 0,
        });
    }
    let n = declared_nodes.ok_or_else(|| err(0, "no `Nodes N` line".into()))?;
    if n > nodes {
        return Err(err(
            0,
            format!("Nodes {n} is more than the {nodes} hosts of the network"),
        ));
    }
    match declared_conns {
        Some(c) if c == flows.len() => {}
        Some(c) => {
            return Err(err(
                0,
                format!("Connections {c}, but {} connection lines", flows.len()),
            ));
        }
        None => return Err(err(0, "no `Connections C` line".into())),
    }
    flows.sort_by_key(|f| f.start);
    for (id, f) in flows.iter_mut().enumerate() {
        f.id = id as u64;
    }
    Ok(flows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    fn parse_ok(text: &str, nodes: usize) -> Vec<Flow> {
        parse(text, "t.cm", nodes).expect("valid")
    }

    fn reason(text: &str, nodes: usize) -> (usize, String) {
        let e = parse(text, "t.cm", nodes).expect_err("invalid");
        assert_eq!(e.origin, "t.cm");
        (e.line, e.reason)
    }

    /// Writes flows the way htsim's generators (`gen_permutation.py`) do.
    fn write(nodes: usize, flows: &[Flow]) -> String {
        let mut s = format!(
            "# written by the test\nNodes {nodes}\nConnections {}\n",
            flows.len()
        );
        for (i, f) in flows.iter().enumerate() {
            let size = if f.bytes == UNBOUNDED_BYTES {
                0
            } else {
                f.bytes
            };
            s += &format!(
                "{}->{} id {} start {} size {size}\n",
                f.src.0,
                f.dst.0,
                i + 1,
                f.start.0
            );
        }
        s
    }

    #[test]
    fn htsims_own_permutation_lines_read() {
        let flows = parse_ok(
            "Nodes 4\nConnections 3\n0->2 start 0.000000 size 0\n\
             1->3 start 5000 size 9000\n3->1 start 0 size 1\n",
            4,
        );
        assert_eq!(flows.len(), 3);
        // Sorted by start, ties in file order, ids renumbered.
        let got: Vec<_> = flows
            .iter()
            .map(|f| (f.id, f.src.0, f.dst.0, f.bytes, f.start.0))
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, 2, UNBOUNDED_BYTES, 0),
                (1, 3, 1, 1, 0),
                (2, 1, 3, 9000, 5000)
            ]
        );
    }

    #[test]
    fn random_matrices_round_trip() {
        let mut rng = shoal_base::rng::stream(7, "connection_matrix.test", 0);
        for _ in 0..50 {
            let nodes = rng.random_range(2..300usize);
            let count = rng.random_range(0..200usize);
            let mut flows: Vec<Flow> = (0..count)
                .map(|_| {
                    let src = rng.random_range(0..nodes);
                    let dst = (src + rng.random_range(1..nodes)) % nodes;
                    let bytes = if rng.random_bool(0.2) {
                        UNBOUNDED_BYTES
                    } else {
                        rng.random_range(1..1u64 << 40)
                    };
                    Flow {
                        id: 0,
                        src: NodeId(src as u16),
                        dst: NodeId(dst as u16),
                        bytes,
                        start: Time(rng.random_range(0..1u64 << 40)),
                        class: 0,
                    }
                })
                .collect();
            let got = parse_ok(&write(nodes, &flows), nodes);
            flows.sort_by_key(|f| f.start);
            for (i, f) in flows.iter_mut().enumerate() {
                f.id = i as u64;
            }
            assert_eq!(got, flows);
        }
    }

    #[test]
    fn bad_files_name_the_line_and_the_reason() {
        let head = "Nodes 4\nConnections 1\n";
        let cases: [(&str, usize, &str); 10] = [
            ("0->4 start 0 size 1\n", 3, "not below Nodes 4"),
            ("2->2 start 0 size 1\n", 3, "sends to itself"),
            ("0->1 size 1\n", 3, "no `start`"),
            ("0->1 start 0\n", 3, "no `size`"),
            ("0->1 start -1 size 1\n", 3, "picoseconds"),
            ("0->1 start 0 size 1 prio 3\n", 3, "not modelled"),
            (
                "0->1 start 0 size 1 colour red\n",
                3,
                "unknown connection key",
            ),
            ("0->1 start 0 size\n", 3, "without a value"),
            ("0->1 start 0 size 1 id 0\n", 3, "non-zero"),
            ("0->x start 0 size 1\n", 3, "not a host number"),
        ];
        for (body, line, want) in cases {
            let (l, r) = reason(&format!("{head}{body}"), 4);
            assert_eq!(l, line, "{body}: {r}");
            assert!(r.contains(want), "{body}: {r}");
        }
        assert_eq!(
            reason("0->1 start 0 size 1\n", 4),
            (1, "a connection before the `Nodes N` line".into())
        );
        assert!(
            reason("Nodes 8\nConnections 0\n", 4)
                .1
                .contains("more than")
        );
        assert!(
            reason("Nodes 4\nConnections 2\n0->1 start 0 size 1\n", 4)
                .1
                .contains("2")
        );
        assert!(
            reason("Nodes 4\nTriggers 1\n", 4)
                .1
                .contains("not modelled")
        );
    }
}
