//! ASTRA-sim's Chakra execution traces as a dependency graph (`kind = "chakra"`): one file
//! per rank, `PREFIX.<rank>.et` (rank 0, 1, … with no gap, as Chakra's tools name them),
//! each a stream of protobuf messages ([`schema`]). Rank r runs on node `nodes[r]`.
//!
//! How nodes become tasks of a [`Dag`]:
//! - `COMP_NODE`: a compute step of the rank's node lasting the node's `duration_micros`
//!   field (µs; the schema keeps it as a field of `Node`, not an attribute).
//! - `COMM_SEND_NODE` on rank s with attribute `comm_dst` = d, and `COMM_RECV_NODE` on rank d
//!   with `comm_src` = s: one send of the send node's `comm_size` bytes from s's node to d's.
//!   The k-th send from s to d carrying `comm_tag` t matches the k-th receive on d from s
//!   carrying t, in file order; sends and receives without a tag match in file order per
//!   (s, d) pair, apart from the tagged ones. A receive's `comm_size`, when given, must equal
//!   its send's. The send starts once both nodes' dependencies have finished (a rendezvous:
//!   the receiver has posted its receive), and both nodes finish when it is delivered.
//! - `COMM_COLL_NODE`: expanded with the collective generator ([`crate::collective`]) over
//!   the ranks of its process group, with the operation of `comm_type` (ALL_REDUCE,
//!   ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL; the others are refused), S = `comm_size` as
//!   NCCL's tests count it (see [`crate::collective`]), the operation's default algorithm
//!   (ring, or direct for all-to-all), one iteration, messages whole. The trace does not say
//!   which ranks a process group holds, so the import reads it from the traces: a collective
//!   with no `pg_name` attribute runs over every rank, and one naming a group over the ranks
//!   whose traces hold a collective naming that group. The k-th collective of a group in each
//!   member's file (file order) is the same collective; their `comm_type` and `comm_size`
//!   must agree. Each rank enters it (a zero-time step) once its own node's dependencies have
//!   finished; each send of the collective waits for both its ends to have entered, and a
//!   rank's node finishes (another zero-time step) when every send it sends or receives in
//!   the collective is delivered.
//! - Every other node (`MEM_LOAD_NODE`, `MEM_STORE_NODE`, `METADATA_NODE`, `INVALID_NODE`,
//!   types this schema does not name): a zero-time step of the rank's node, kept so that the
//!   dependencies through it hold.
//!
//! - A node other than a memory node whose attribute `is_cpu_op` is true, whatever its type:
//!   a compute step of its `duration_micros`, as ASTRA-sim runs it (a host-side operation,
//!   such as the CPU half of a PyTorch collective, moves no bytes on the fabric).
//!
//! A node's dependencies are its `data_deps` and, with [`CtrlDeps::Order`], its `ctrl_deps`:
//! ids of nodes of the same file. ASTRA-sim's feeder waits for the data dependencies only,
//! and traces converted from PyTorch use `ctrl_deps` for the operation that called the node
//! (its parent, often absent from the file), not for an order: [`CtrlDeps::Ignore`] reads
//! them as ASTRA-sim does. Integer attributes may be of any of the schema's integer members
//! (Chakra writes `comm_src`, `comm_dst` and `comm_tag` as `int32_val`, `comm_type` and
//! `comm_size` as `int64_val`).
//!
//! Tasks are numbered 0, 1, … in the order first met walking the ranks in order and each
//! file in order: a compute or zero-time node one task, a send/receive pair one task (at
//! whichever of its two nodes comes first), a collective `n` entry steps, then the
//! generator's tasks in its order, then `n` exit steps (n its ranks). Errors name the file,
//! the node id and the reason, before the run.

pub mod schema;

use crate::collective::{CollectiveSpec, MAX_TASKS, Op};
use crate::dag::{Dag, DagError, Task, Work};
use schema::{Node, Value, comm_type, node_type};
use shoal_base::{Dur, NodeId};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The longest compute node, µs (a longer one is a mistyped unit, as for `kind = "dag"`).
pub const MAX_DURATION_US: u64 = 1_000_000;

/// What a node's `ctrl_deps` are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtrlDeps {
    /// Dependencies, as `data_deps` are (each must name a node of the file).
    Order,
    /// Not read, as ASTRA-sim's feeder does not.
    Ignore,
}

impl CtrlDeps {
    /// The name scenario files use.
    pub fn name(self) -> &'static str {
        match self {
            CtrlDeps::Order => "order",
            CtrlDeps::Ignore => "ignore",
        }
    }
}

/// Traces that cannot be run.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ChakraError {
    #[error("{prefix}: {reason}")]
    Files { prefix: String, reason: String },
    #[error("{file}: cannot read: {reason}")]
    Io { file: String, reason: String },
    #[error("{file}: byte {offset}: {reason}")]
    Decode {
        file: String,
        offset: usize,
        reason: String,
    },
    #[error("{file}: node {node}: {reason}")]
    Node {
        file: String,
        node: u64,
        reason: String,
    },
    #[error("{0}")]
    Graph(String),
}

/// The trace file of rank `rank` for `prefix` (`DIR/PREFIX`): `DIR/PREFIX.<rank>.et`.
pub fn file_of(prefix: &Path, rank: usize) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(format!(".{rank}.et"));
    PathBuf::from(name)
}

/// The files of `prefix`, rank 0 first, up to the first rank with none; at least rank 0's.
pub fn files(prefix: &Path) -> Result<Vec<PathBuf>, ChakraError> {
    let found: Vec<PathBuf> = (0..)
        .map(|r| file_of(prefix, r))
        .take_while(|p| p.is_file())
        .collect();
    if found.is_empty() {
        return Err(ChakraError::Files {
            prefix: prefix.display().to_string(),
            reason: format!(
                "no trace {}: one file per rank is expected, named PREFIX.<rank>.et from rank 0",
                file_of(prefix, 0).display()
            ),
        });
    }
    Ok(found)
}

/// A trace imported: its graph, and for each task (by id) the rank and node id it came from
/// (a collective's sends: the sender's node).
#[derive(Clone, Debug)]
pub struct Imported {
    pub dag: Dag,
    pub origin: Vec<(u32, u64)>,
}

/// Reads the traces of `prefix`, one per entry of `nodes` (rank r on node `nodes[r]`).
pub fn read(prefix: &Path, nodes: &[NodeId], ctrl: CtrlDeps) -> Result<Imported, ChakraError> {
    let paths = files(prefix)?;
    if paths.len() != nodes.len() {
        return Err(ChakraError::Files {
            prefix: prefix.display().to_string(),
            reason: format!(
                "{} trace files (ranks 0 to {}), but {} ranks are placed on nodes",
                paths.len(),
                paths.len() - 1,
                nodes.len()
            ),
        });
    }
    let mut ranks = Vec::with_capacity(paths.len());
    for p in &paths {
        let name = p.display().to_string();
        let bytes = std::fs::read(p).map_err(|e| ChakraError::Io {
            file: name.clone(),
            reason: e.to_string(),
        })?;
        let (_, list) = schema::decode_file(&bytes).map_err(|e| ChakraError::Decode {
            file: name.clone(),
            offset: e.offset,
            reason: e.reason,
        })?;
        ranks.push((name, list));
    }
    import(ranks, nodes, ctrl)
}

/// What one trace node does, checked.
#[derive(Clone, Debug)]
enum Kind {
    Compute(Dur),
    Zero,
    Send {
        peer: u32,
        tag: Option<i64>,
        bytes: u64,
    },
    Recv {
        peer: u32,
        tag: Option<i64>,
        bytes: Option<u64>,
    },
    Coll {
        op: Op,
        bytes: u64,
        group: Option<String>,
    },
}

/// One rank's nodes, checked: kinds, dependencies as places in the file.
struct Rank {
    file: String,
    ids: Vec<u64>,
    kinds: Vec<Kind>,
    deps: Vec<Vec<usize>>,
}

/// The graph of the decoded files (name and nodes, rank 0 first), rank r on `nodes[r]`.
pub fn import(
    files: Vec<(String, Vec<Node>)>,
    nodes: &[NodeId],
    ctrl: CtrlDeps,
) -> Result<Imported, ChakraError> {
    let n = files.len();
    if nodes.len() != n {
        return Err(ChakraError::Graph(format!(
            "{n} traces, but {} ranks are placed on nodes",
            nodes.len()
        )));
    }
    let mut seen_nodes = BTreeMap::new();
    for (r, node) in nodes.iter().enumerate() {
        if let Some(first) = seen_nodes.insert(*node, r) {
            return Err(ChakraError::Graph(format!(
                "ranks {first} and {r} are both placed on node {}: give each rank its own node",
                node.0
            )));
        }
    }
    let ranks: Vec<Rank> = files
        .into_iter()
        .enumerate()
        .map(|(r, (file, list))| check_rank(r as u32, n as u32, file, list, ctrl))
        .collect::<Result<_, _>>()?;
    let pairs = match_pairs(&ranks)?;
    let colls = match_collectives(&ranks)?;
    Builder::new(&ranks, nodes).build(&pairs, &colls)
}

/// A node's integer attribute `name`, if present.
fn int_attr(node: &Node, name: &str) -> Result<Option<i64>, String> {
    let mut found = node.attr.iter().filter(|a| a.name == name);
    let Some(a) = found.next() else {
        return Ok(None);
    };
    if found.next().is_some() {
        return Err(format!("attribute {name} is given twice"));
    }
    match &a.value {
        Some(Value::Int32(v) | Value::Sint32(v)) => Ok(Some(i64::from(*v))),
        Some(Value::Int64(v) | Value::Sint64(v)) => Ok(Some(*v)),
        Some(Value::Uint32(v)) => Ok(Some(i64::from(*v))),
        Some(Value::Uint64(v)) => i64::try_from(*v)
            .map(Some)
            .map_err(|_| format!("attribute {name} = {v} is out of range")),
        _ => Err(format!("attribute {name} holds no integer value")),
    }
}

/// A node's non-negative integer attribute `name`, required.
fn count_attr(node: &Node, name: &str, what: &str) -> Result<u64, String> {
    match int_attr(node, name)? {
        None => Err(format!("{what} without attribute {name}")),
        Some(v) if v < 0 => Err(format!("attribute {name} = {v} is negative")),
        Some(v) => Ok(v as u64),
    }
}

/// A peer rank named by attribute `name` of a node of rank `own` among `n` ranks.
fn peer_attr(node: &Node, name: &str, what: &str, own: u32, n: u32) -> Result<u32, String> {
    let v = count_attr(node, name, what)?;
    if v >= u64::from(n) {
        return Err(format!(
            "attribute {name} = {v} names no rank: the traces hold ranks 0 to {}",
            n - 1
        ));
    }
    if v == u64::from(own) {
        return Err(format!("attribute {name} = {v} is the node's own rank"));
    }
    Ok(v as u32)
}

/// A compute step of the node's `duration_micros`.
fn compute(node: &Node) -> Result<Kind, String> {
    let us = node.duration_micros;
    if us > MAX_DURATION_US {
        return Err(format!(
            "duration_micros = {us}: more than {MAX_DURATION_US} µs (a second; a mistyped \
             unit?)"
        ));
    }
    Ok(Kind::Compute(Dur(us * 1_000_000)))
}

/// Whether the node says it runs on the host (attribute `is_cpu_op`; false when absent).
fn is_cpu_op(node: &Node) -> Result<bool, String> {
    let mut found = node.attr.iter().filter(|a| a.name == "is_cpu_op");
    match (found.next(), found.next()) {
        (None, _) => Ok(false),
        (Some(_), Some(_)) => Err("attribute is_cpu_op is given twice".to_owned()),
        (Some(a), None) => match a.value {
            Some(Value::Bool(b)) => Ok(b),
            _ => Err("attribute is_cpu_op holds no bool value".to_owned()),
        },
    }
}

fn kind_of(node: &Node, own: u32, n: u32) -> Result<Kind, String> {
    let memory = matches!(node.r#type, node_type::MEM_LOAD | node_type::MEM_STORE);
    if !memory && is_cpu_op(node)? {
        return compute(node);
    }
    Ok(match node.r#type {
        node_type::COMP => compute(node)?,
        node_type::COMM_SEND => {
            let bytes = count_attr(node, "comm_size", "a send")?;
            if bytes == 0 {
                return Err("a send of comm_size = 0 bytes".to_owned());
            }
            Kind::Send {
                peer: peer_attr(node, "comm_dst", "a send", own, n)?,
                tag: int_attr(node, "comm_tag")?,
                bytes,
            }
        }
        node_type::COMM_RECV => Kind::Recv {
            peer: peer_attr(node, "comm_src", "a receive", own, n)?,
            tag: int_attr(node, "comm_tag")?,
            bytes: int_attr(node, "comm_size")?
                .map(|v| u64::try_from(v).map_err(|_| format!("comm_size = {v} is negative")))
                .transpose()?,
        },
        node_type::COMM_COLL => {
            let t =
                int_attr(node, "comm_type")?.ok_or("a collective without attribute comm_type")?;
            let op = match t {
                comm_type::ALL_REDUCE => Op::AllReduce,
                comm_type::ALL_GATHER => Op::AllGather,
                comm_type::REDUCE_SCATTER => Op::ReduceScatter,
                comm_type::ALL_TO_ALL => Op::AllToAll,
                other => {
                    let name = usize::try_from(other)
                        .ok()
                        .and_then(|i| comm_type::NAMES.get(i))
                        .map_or_else(|| "not in the schema".to_owned(), |s| s.to_string());
                    return Err(format!(
                        "comm_type {other} ({name}) is not supported: the collectives built \
                         are ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER and ALL_TO_ALL"
                    ));
                }
            };
            let mut group = node.attr.iter().filter(|a| a.name == "pg_name");
            let group = match (group.next(), group.next()) {
                (None, _) => None,
                (Some(_), Some(_)) => return Err("attribute pg_name is given twice".to_owned()),
                (Some(a), None) => match &a.value {
                    Some(Value::String(s)) => Some(s.clone()),
                    _ => return Err("attribute pg_name holds no string".to_owned()),
                },
            };
            Kind::Coll {
                op,
                bytes: count_attr(node, "comm_size", "a collective")?,
                group,
            }
        }
        node_type::INVALID | node_type::METADATA | node_type::MEM_LOAD | node_type::MEM_STORE => {
            Kind::Zero
        }
        _ => Kind::Zero,
    })
}

fn check_rank(
    r: u32,
    n: u32,
    file: String,
    list: Vec<Node>,
    ctrl: CtrlDeps,
) -> Result<Rank, ChakraError> {
    let err = |node: u64, reason: String| ChakraError::Node {
        file: file.clone(),
        node,
        reason,
    };
    let mut place = BTreeMap::new();
    for (i, node) in list.iter().enumerate() {
        if place.insert(node.id, i).is_some() {
            return Err(err(node.id, "the id is given twice".to_owned()));
        }
    }
    let mut kinds = Vec::with_capacity(list.len());
    let mut deps = Vec::with_capacity(list.len());
    for node in &list {
        kinds.push(kind_of(node, r, n).map_err(|e| err(node.id, e))?);
        let mut own = Vec::new();
        let mut seen = BTreeSet::new();
        let ctrl_deps: &[u64] = match ctrl {
            CtrlDeps::Order => &node.ctrl_deps,
            CtrlDeps::Ignore => &[],
        };
        for &d in node.data_deps.iter().chain(ctrl_deps) {
            if d == node.id {
                return Err(err(node.id, "the node depends on itself".to_owned()));
            }
            let Some(&p) = place.get(&d) else {
                return Err(err(
                    node.id,
                    format!("depends on node {d}, which the file does not hold"),
                ));
            };
            // A node may name another as both a data and a control dependency.
            if seen.insert(p) {
                own.push(p);
            }
        }
        deps.push(own);
    }
    Ok(Rank {
        ids: list.iter().map(|n| n.id).collect(),
        file,
        kinds,
        deps,
    })
}

/// Each send and receive node's partner: `(rank, place)` of the send, keyed by both ends.
type Pairs = BTreeMap<(u32, usize), (u32, usize)>;

fn match_pairs(ranks: &[Rank]) -> Result<Pairs, ChakraError> {
    type Key = (u32, u32, Option<i64>);
    let mut sends: BTreeMap<Key, Vec<(u32, usize)>> = BTreeMap::new();
    let mut recvs: BTreeMap<Key, Vec<(u32, usize)>> = BTreeMap::new();
    for (r, rank) in ranks.iter().enumerate() {
        let r = r as u32;
        for (i, k) in rank.kinds.iter().enumerate() {
            match *k {
                Kind::Send { peer, tag, .. } => {
                    sends.entry((r, peer, tag)).or_default().push((r, i))
                }
                Kind::Recv { peer, tag, .. } => {
                    recvs.entry((peer, r, tag)).or_default().push((r, i))
                }
                _ => {}
            }
        }
    }
    let tag_text =
        |tag: Option<i64>| tag.map_or_else(|| "no tag".to_owned(), |t| format!("tag {t}"));
    let node_err = |(r, i): (u32, usize), reason: String| {
        let rank = &ranks[r as usize];
        ChakraError::Node {
            file: rank.file.clone(),
            node: rank.ids[i],
            reason,
        }
    };
    let mut pairs = Pairs::new();
    let empty = Vec::new();
    let keys: BTreeSet<Key> = sends.keys().chain(recvs.keys()).copied().collect();
    for key @ (s, d, tag) in keys {
        let ss = sends.get(&key).unwrap_or(&empty);
        let rs = recvs.get(&key).unwrap_or(&empty);
        for (k, (&send, &recv)) in ss.iter().zip(rs).enumerate() {
            let Kind::Send { bytes, .. } = ranks[send.0 as usize].kinds[send.1] else {
                unreachable!("a send key holds sends")
            };
            if let Kind::Recv {
                bytes: Some(got), ..
            } = ranks[recv.0 as usize].kinds[recv.1]
                && got != bytes
            {
                return Err(node_err(
                    recv,
                    format!(
                        "receive {} from rank {s} ({}) has comm_size {got}, its send (node {} \
                         of {}) {bytes}",
                        k + 1,
                        tag_text(tag),
                        ranks[s as usize].ids[send.1],
                        ranks[s as usize].file
                    ),
                ));
            }
            pairs.insert(send, send);
            pairs.insert(recv, send);
        }
        if ss.len() > rs.len() {
            return Err(node_err(
                ss[rs.len()],
                format!(
                    "a send to rank {d} ({}) with no matching receive: {} holds {} such \
                     receives from rank {s}, this is send {}",
                    tag_text(tag),
                    ranks[d as usize].file,
                    rs.len(),
                    rs.len() + 1
                ),
            ));
        }
        if rs.len() > ss.len() {
            return Err(node_err(
                rs[ss.len()],
                format!(
                    "a receive from rank {s} ({}) with no matching send: {} holds {} such \
                     sends to rank {d}, this is receive {}",
                    tag_text(tag),
                    ranks[s as usize].file,
                    ss.len(),
                    ss.len() + 1
                ),
            ));
        }
    }
    Ok(pairs)
}

/// One collective of the traces: its operation and size, and each member rank's node.
struct Coll {
    op: Op,
    bytes: u64,
    /// `(rank, place)` of each member's node, ranks ascending.
    members: Vec<(u32, usize)>,
}

/// The collectives, and each collective node's index among them.
struct Colls {
    list: Vec<Coll>,
    of: BTreeMap<(u32, usize), usize>,
}

fn match_collectives(ranks: &[Rank]) -> Result<Colls, ChakraError> {
    // Each group's nodes, per member rank, in file order.
    let mut groups: BTreeMap<Option<String>, BTreeMap<u32, Vec<usize>>> = BTreeMap::new();
    for (r, rank) in ranks.iter().enumerate() {
        for (i, k) in rank.kinds.iter().enumerate() {
            if let Kind::Coll { group, .. } = k {
                groups
                    .entry(group.clone())
                    .or_default()
                    .entry(r as u32)
                    .or_default()
                    .push(i);
            }
        }
    }
    let mut list = Vec::new();
    let mut of = BTreeMap::new();
    for (group, mut members) in groups {
        let name = group.as_ref().map_or_else(
            || "with no pg_name".to_owned(),
            |g| format!("of group {g:?}"),
        );
        if group.is_none() {
            // No group named: every rank takes part.
            for r in 0..ranks.len() as u32 {
                members.entry(r).or_default();
            }
        }
        let most = members.values().map(Vec::len).max().unwrap_or(0);
        if members.len() < 2 {
            let (&r, nodes) = members.iter().next().expect("a group has a member");
            let rank = &ranks[r as usize];
            return Err(ChakraError::Node {
                file: rank.file.clone(),
                node: rank.ids[nodes[0]],
                reason: format!(
                    "a collective {name}, which no other rank's trace holds: a collective \
                     needs at least 2 ranks"
                ),
            });
        }
        for (&r, nodes) in &members {
            if nodes.len() < most {
                let (&other, theirs) = members
                    .iter()
                    .find(|(_, v)| v.len() == most)
                    .expect("the largest is a member");
                let rank = &ranks[other as usize];
                return Err(ChakraError::Node {
                    file: rank.file.clone(),
                    node: rank.ids[theirs[nodes.len()]],
                    reason: format!(
                        "collective {} {name} in this file has no counterpart in {} (which \
                         holds {} of them)",
                        nodes.len() + 1,
                        ranks[r as usize].file,
                        nodes.len()
                    ),
                });
            }
        }
        for k in 0..most {
            let at: Vec<(u32, usize)> = members.iter().map(|(&r, v)| (r, v[k])).collect();
            let kind = |(r, i): (u32, usize)| match &ranks[r as usize].kinds[i] {
                Kind::Coll { op, bytes, .. } => (*op, *bytes),
                _ => unreachable!("a group holds collectives"),
            };
            let first = kind(at[0]);
            for &m in &at[1..] {
                if kind(m) != first {
                    let rank = &ranks[m.0 as usize];
                    let (op, bytes) = kind(m);
                    return Err(ChakraError::Node {
                        file: rank.file.clone(),
                        node: rank.ids[m.1],
                        reason: format!(
                            "collective {} {name} is {op} of {bytes} B here, {} of {} B in {} \
                             (node {})",
                            k + 1,
                            first.0,
                            first.1,
                            ranks[at[0].0 as usize].file,
                            ranks[at[0].0 as usize].ids[at[0].1]
                        ),
                    });
                }
            }
            for &m in &at {
                of.insert(m, list.len());
            }
            list.push(Coll {
                op: first.0,
                bytes: first.1,
                members: at,
            });
        }
    }
    Ok(Colls { list, of })
}

/// Builds the tasks: ids allocated walking the ranks and files in order, then each task's
/// dependencies from the [`Ends`] of the nodes it waits for.
struct Builder<'a> {
    ranks: &'a [Rank],
    nodes: &'a [NodeId],
    /// For each node (by rank and place), the task its dependents wait for: its own, its
    /// pair's send, or its collective's exit step for its rank.
    exits: Vec<Vec<u64>>,
    tasks: Vec<Task>,
    origin: Vec<(u32, u64)>,
}

impl<'a> Builder<'a> {
    fn new(ranks: &'a [Rank], nodes: &'a [NodeId]) -> Self {
        Builder {
            exits: ranks.iter().map(|r| vec![0; r.ids.len()]).collect(),
            ranks,
            nodes,
            tasks: Vec::new(),
            origin: Vec::new(),
        }
    }

    fn node_err(&self, (r, i): (u32, usize), reason: String) -> ChakraError {
        let rank = &self.ranks[r as usize];
        ChakraError::Node {
            file: rank.file.clone(),
            node: rank.ids[i],
            reason,
        }
    }

    /// The exits of the nodes the nodes `at` wait for, each once, ascending.
    fn after(&self, at: &[(u32, usize)]) -> Vec<u64> {
        let set: BTreeSet<u64> = at
            .iter()
            .flat_map(|&(r, i)| {
                self.ranks[r as usize].deps[i]
                    .iter()
                    .map(move |&d| self.exits[r as usize][d])
            })
            .collect();
        set.into_iter().collect()
    }

    /// Adds `task` (its id the next one), made from node `from`.
    fn push(&mut self, task: Task, from: (u32, usize)) {
        debug_assert_eq!(
            task.id,
            self.tasks.len() as u64,
            "tasks are pushed in id order"
        );
        self.origin
            .push((from.0, self.ranks[from.0 as usize].ids[from.1]));
        self.tasks.push(task);
    }

    fn build(mut self, pairs: &Pairs, colls: &Colls) -> Result<Imported, ChakraError> {
        // The collectives' graphs, built once each.
        let mut plans: Vec<Dag> = Vec::with_capacity(colls.list.len());
        let mut planned = 0u64;
        for c in &colls.list {
            let spec = CollectiveSpec {
                op: c.op,
                algorithm: c.op.default_algorithm(),
                ranks: c
                    .members
                    .iter()
                    .map(|&(r, _)| self.nodes[r as usize])
                    .collect(),
                message_bytes: c.bytes,
                chunks: 1,
                iterations: 1,
                compute: Dur(0),
                group_size: 0,
            };
            let plan = spec
                .build()
                .map_err(|e| self.node_err(c.members[0], format!("the collective: {e}")))?;
            planned += plan.dag.tasks().len() as u64;
            if planned > MAX_TASKS {
                return Err(self.node_err(
                    c.members[0],
                    format!("the collectives so far make more than {MAX_TASKS} tasks"),
                ));
            }
            plans.push(plan.dag);
        }
        // Each pair's receive, by its send.
        let recv_of: BTreeMap<(u32, usize), (u32, usize)> = pairs
            .iter()
            .filter(|(at, send)| at != send)
            .map(|(&recv, &send)| (send, recv))
            .collect();
        // First pass: ids, in blocks met walking the ranks and files in order.
        let mut units = Vec::new();
        let mut next = 0u64;
        let mut pair_id: BTreeMap<(u32, usize), u64> = BTreeMap::new();
        let mut coll_base: BTreeMap<usize, u64> = BTreeMap::new();
        for (r, rank) in self.ranks.iter().enumerate() {
            let r = r as u32;
            for (i, k) in rank.kinds.iter().enumerate() {
                let exit = match k {
                    Kind::Compute(_) | Kind::Zero => {
                        units.push(Unit::Node((r, i)));
                        next += 1;
                        next - 1
                    }
                    Kind::Send { .. } | Kind::Recv { .. } => {
                        let send = pairs[&(r, i)];
                        *pair_id.entry(send).or_insert_with(|| {
                            units.push(Unit::Pair(send, recv_of[&send]));
                            next += 1;
                            next - 1
                        })
                    }
                    Kind::Coll { .. } => {
                        let c = colls.of[&(r, i)];
                        let size = colls.list[c].members.len() as u64;
                        let inner = plans[c].tasks().len() as u64;
                        let base = *coll_base.entry(c).or_insert_with(|| {
                            units.push(Unit::Coll(c));
                            next += 2 * size + inner;
                            next - 2 * size - inner
                        });
                        let k = colls.list[c]
                            .members
                            .iter()
                            .position(|&m| m == (r, i))
                            .expect("a member of its collective")
                            as u64;
                        base + size + inner + k
                    }
                };
                self.exits[r as usize][i] = exit;
            }
        }
        if next > MAX_TASKS {
            return Err(ChakraError::Graph(format!(
                "the traces make {next} tasks, more than the {MAX_TASKS} a run may hold"
            )));
        }
        // Second pass: the tasks, in id order.
        for unit in units {
            match unit {
                Unit::Node(at) => {
                    let delay = match self.ranks[at.0 as usize].kinds[at.1] {
                        Kind::Compute(d) => d,
                        _ => Dur(0),
                    };
                    let id = self.tasks.len() as u64;
                    let t = Task::compute(id, self.nodes[at.0 as usize], delay, self.after(&[at]));
                    self.push(t, at);
                }
                Unit::Pair(send, recv) => {
                    let Kind::Send { bytes, .. } = self.ranks[send.0 as usize].kinds[send.1] else {
                        unreachable!("a pair starts at a send")
                    };
                    let id = self.tasks.len() as u64;
                    let (src, dst) = (self.nodes[send.0 as usize], self.nodes[recv.0 as usize]);
                    let t = Task::send(id, src, dst, bytes, self.after(&[send, recv]));
                    self.push(t, send);
                }
                Unit::Coll(c) => self.collective(&colls.list[c], &plans[c]),
            }
        }
        let origin = std::mem::take(&mut self.origin);
        let dag = Dag::new(self.tasks).map_err(|e| match e {
            DagError::Cycle(ids) => {
                let on: Vec<String> = ids
                    .iter()
                    .map(|&id| {
                        let (r, node) = origin[id as usize];
                        format!("{} node {node}", self.ranks[r as usize].file)
                    })
                    .collect();
                ChakraError::Graph(format!(
                    "the dependencies form a cycle (the ranks would wait for each other for \
                     ever): {} -> {}",
                    on.join(" -> "),
                    on[0]
                ))
            }
            other => ChakraError::Graph(format!("the traces' graph: {other}")),
        })?;
        if dag.sends() == 0 {
            return Err(ChakraError::Graph(
                "the traces hold no send, receive or collective: nothing to run".to_owned(),
            ));
        }
        Ok(Imported { dag, origin })
    }

    /// A collective's tasks: an entry step per member, the generator's tasks (ids shifted,
    /// each send also waiting for both its ends' entries), an exit step per member.
    fn collective(&mut self, c: &Coll, plan: &Dag) {
        let n = c.members.len() as u64;
        let base = self.tasks.len() as u64;
        let member_of: BTreeMap<NodeId, usize> = c
            .members
            .iter()
            .enumerate()
            .map(|(k, &(r, _))| (self.nodes[r as usize], k))
            .collect();
        for &m in &c.members {
            let id = self.tasks.len() as u64;
            let t = Task::compute(id, self.nodes[m.0 as usize], Dur(0), self.after(&[m]));
            self.push(t, m);
        }
        let place: BTreeMap<u64, u64> = plan
            .tasks()
            .iter()
            .enumerate()
            .map(|(k, t)| (t.id, base + n + k as u64))
            .collect();
        let mut touched: Vec<Vec<u64>> = vec![Vec::new(); c.members.len()];
        for t in plan.tasks() {
            let id = place[&t.id];
            let mut after: Vec<u64> = t.after.iter().map(|d| place[d]).collect();
            let from = match t.work {
                Work::Send { src, dst, .. } => {
                    let (s, d) = (member_of[&src], member_of[&dst]);
                    after.extend([base + s as u64, base + d as u64]);
                    touched[s].push(id);
                    touched[d].push(id);
                    s
                }
                Work::Compute { node } => member_of[&node],
            };
            let task = Task {
                id,
                work: t.work,
                after,
                delay: t.delay,
            };
            self.push(task, c.members[from]);
        }
        for (k, &m) in c.members.iter().enumerate() {
            let id = self.tasks.len() as u64;
            let after = std::mem::take(&mut touched[k]);
            self.push(
                Task::compute(id, self.nodes[m.0 as usize], Dur(0), after),
                m,
            );
        }
    }
}

/// What a block of task ids stands for.
enum Unit {
    /// A compute or zero-time node.
    Node((u32, usize)),
    /// A send node and its receive.
    Pair((u32, usize), (u32, usize)),
    /// A collective, by index.
    Coll(usize),
}
