//! The messages of a Chakra execution trace, declared as Rust structs so that `prost` decodes
//! them without `protoc`. The field numbers are those of `schema/protobuf/et_def.proto` in
//! mlcommons/chakra at commit 21585d8f2d65603d791d2121e3d4632351120262. Only the fields the
//! import reads are declared (with a node's name and the metadata's version and attributes, so
//! that a trace written with them reads in Chakra's tools), and prost skips the others (a
//! node's `start_time_micros`, `inputs`, `outputs`, an attribute's `doc_string`, list and
//! floating-point values) as unknown fields.
//!
//! A trace file is a stream of length-prefixed messages, as Chakra's `protoio` writes them:
//! each message is preceded by its length in bytes as a varint (at most 32 bits), the first
//! message a `GlobalMetadata`, every later one a `Node`. There is no magic number; a file
//! compressed with gzip (which `protoio` can also read) is refused with a hint to decompress it.

use prost::Message;

/// `GlobalMetadata`: the first message of a file.
#[derive(Clone, PartialEq, Message)]
pub struct GlobalMetadata {
    #[prost(string, tag = "1")]
    pub version: String,
    #[prost(message, repeated, tag = "2")]
    pub attr: Vec<AttributeProto>,
}

/// `Node`: one operation of a rank's trace.
#[derive(Clone, PartialEq, Message)]
pub struct Node {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(string, tag = "2")]
    pub name: String,
    /// A `NodeType` value ([`node_type`]; an enum on the wire, and values the schema does not
    /// name are kept).
    #[prost(int32, tag = "3")]
    pub r#type: i32,
    #[prost(uint64, repeated, tag = "4")]
    pub ctrl_deps: Vec<u64>,
    #[prost(uint64, repeated, tag = "5")]
    pub data_deps: Vec<u64>,
    /// How long the operation ran, in µs: the duration of a compute node.
    #[prost(uint64, tag = "7")]
    pub duration_micros: u64,
    #[prost(message, repeated, tag = "10")]
    pub attr: Vec<AttributeProto>,
}

/// `AttributeProto`: a named value. The communication parameters of a node are attributes
/// (`comm_type`, `comm_size`, `comm_src`, `comm_dst`, `comm_tag`, `pg_name`), not fields.
#[derive(Clone, PartialEq, Message)]
pub struct AttributeProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(oneof = "Value", tags = "7, 9, 11, 13, 15, 17, 27, 29")]
    pub value: Option<Value>,
}

/// The scalar members of `AttributeProto.value` the import can use.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Value {
    #[prost(int32, tag = "7")]
    Int32(i32),
    #[prost(int64, tag = "9")]
    Int64(i64),
    #[prost(uint32, tag = "11")]
    Uint32(u32),
    #[prost(uint64, tag = "13")]
    Uint64(u64),
    #[prost(sint32, tag = "15")]
    Sint32(i32),
    #[prost(sint64, tag = "17")]
    Sint64(i64),
    #[prost(bool, tag = "27")]
    Bool(bool),
    #[prost(string, tag = "29")]
    String(String),
}

/// `NodeType`'s values.
pub mod node_type {
    pub const INVALID: i32 = 0;
    pub const METADATA: i32 = 1;
    pub const MEM_LOAD: i32 = 2;
    pub const MEM_STORE: i32 = 3;
    pub const COMP: i32 = 4;
    pub const COMM_SEND: i32 = 5;
    pub const COMM_RECV: i32 = 6;
    pub const COMM_COLL: i32 = 7;
}

/// `CollectiveCommType`'s values, with their names for errors.
pub mod comm_type {
    pub const ALL_REDUCE: i64 = 0;
    pub const ALL_GATHER: i64 = 2;
    pub const ALL_TO_ALL: i64 = 6;
    pub const REDUCE_SCATTER: i64 = 7;
    /// The schema's names by value (0 to 9).
    pub const NAMES: [&str; 10] = [
        "ALL_REDUCE",
        "REDUCE",
        "ALL_GATHER",
        "GATHER",
        "SCATTER",
        "BROADCAST",
        "ALL_TO_ALL",
        "REDUCE_SCATTER",
        "REDUCE_SCATTER_BLOCK",
        "BARRIER",
    ];
}

impl AttributeProto {
    /// An attribute holding an integer of the schema's `int64_val` (how Chakra's tools write
    /// `comm_type` and `comm_size`).
    pub fn int64(name: &str, v: i64) -> AttributeProto {
        AttributeProto {
            name: name.to_owned(),
            value: Some(Value::Int64(v)),
        }
    }

    /// An attribute holding an `int32_val` (how Chakra's tools write `comm_src`, `comm_dst`
    /// and `comm_tag`).
    pub fn int32(name: &str, v: i32) -> AttributeProto {
        AttributeProto {
            name: name.to_owned(),
            value: Some(Value::Int32(v)),
        }
    }

    /// An attribute holding a `string_val` (`pg_name`).
    pub fn string(name: &str, v: &str) -> AttributeProto {
        AttributeProto {
            name: name.to_owned(),
            value: Some(Value::String(v.to_owned())),
        }
    }
}

/// A file's bytes as Chakra's tools frame them: `meta`, then each of `nodes`, each message
/// after its varint length.
pub fn encode_file(meta: &GlobalMetadata, nodes: &[Node]) -> Vec<u8> {
    let mut out = Vec::new();
    meta.encode_length_delimited(&mut out)
        .expect("a Vec grows as needed");
    for n in nodes {
        n.encode_length_delimited(&mut out)
            .expect("a Vec grows as needed");
    }
    out
}

/// Why a file's bytes are not a trace: the byte offset of the message at fault and the reason.
#[derive(Debug, PartialEq, Eq)]
pub struct FrameError {
    pub offset: usize,
    pub reason: String,
}

/// The metadata and nodes of a file's bytes, in file order.
pub fn decode_file(bytes: &[u8]) -> Result<(GlobalMetadata, Vec<Node>), FrameError> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return Err(FrameError {
            offset: 0,
            reason: "compressed with gzip: decompress it first (gunzip)".to_owned(),
        });
    }
    if bytes.is_empty() {
        return Err(FrameError {
            offset: 0,
            reason: "empty: a trace starts with its GlobalMetadata message".to_owned(),
        });
    }
    let mut at = 0;
    let meta = next(bytes, &mut at, "GlobalMetadata")?;
    let mut nodes = Vec::new();
    while at < bytes.len() {
        nodes.push(next(bytes, &mut at, "Node")?);
    }
    Ok((meta, nodes))
}

/// The message of type `M` framed at `*at`, moving `*at` past it.
fn next<M: Message + Default>(bytes: &[u8], at: &mut usize, what: &str) -> Result<M, FrameError> {
    let offset = *at;
    let fail = |reason: String| FrameError { offset, reason };
    let mut rest = &bytes[offset..];
    let len = prost::encoding::decode_varint(&mut rest).map_err(|e| {
        fail(format!(
            "the length of a {what} message is not a varint: {e}"
        ))
    })?;
    if len > u64::from(u32::MAX) {
        return Err(fail(format!(
            "a {what} message of {len} bytes: more than a 32-bit length"
        )));
    }
    let len = len as usize;
    if len > rest.len() {
        return Err(fail(format!(
            "truncated: a {what} message of {len} bytes, {} left in the file",
            rest.len()
        )));
    }
    let msg = M::decode(&rest[..len]).map_err(|e| fail(format!("not a {what} message: {e}")))?;
    *at = bytes.len() - rest.len() + len;
    Ok(msg)
}
