//! `shoal cell`: decode and encode the 8-byte Shoal cell header.

use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use serde_json::{Value, json};
use shoal_cell::{CLASSES, CellKind, Error, HEADER_LEN, HeaderRepr, MAX_FEEDBACK, MAX_NODES};
use shoal_cell::{MAX_PAYLOAD_LEN, SEQ_MODULUS};
use std::process::ExitCode;

/// Decode or encode a Shoal cell header.
///
/// The header is 8 bytes: dst (10 bits), src (10), seq (15), feedback (10), sop, eop, lcd,
/// class (2), len (6) and a CRC-8 over the first 7 bytes (layout in crates/cell).
#[derive(Args)]
pub struct CellArgs {
    #[command(subcommand)]
    command: CellCommand,
}

#[derive(Subcommand)]
enum CellCommand {
    Decode(DecodeArgs),
    Encode(EncodeArgs),
}

/// Decode a header from hex and print it as JSON.
///
/// Takes 16 hex digits (8 bytes), or a whole cell of any length from 8 bytes up, whose first 8
/// bytes are decoded. Spaces, colons and a leading 0x are ignored. On success prints the header
/// as JSON on stdout and exits 0; otherwise prints {"error": KIND, "message": ...} on stdout
/// (KIND: bad_hex, truncated, crc, malformed; a CRC error also gives the stored and computed
/// CRC) and exits 1.
#[derive(Args)]
#[command(after_help = "Examples:\n  shoal cell decode 01403000003900e4\n  \
    shoal cell decode '01:40:30:00:00:39:00:e4'")]
struct DecodeArgs {
    /// The bytes in hex (several arguments are joined).
    #[arg(required = true, value_name = "HEX")]
    hex: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Kind {
    /// Payload-carrying cell (len >= 1).
    Data,
    /// Empty cell that still carries feedback and lcd.
    Idle,
    /// Notice that the sender can no longer reach `dst` (§3.5).
    Unreachable,
}

/// Encode a header and print its 8 bytes as 16 hex digits.
///
/// Fields out of range (dst/src 0-1023, seq 0-32767, feedback 0-1023, class 0-3, len 1-63 for
/// data and 0 otherwise, src != dst) are refused with exit status 1.
#[derive(Args)]
#[command(
    after_help = "Examples:\n  shoal cell encode --dst 5 --src 3 --kind idle --lcd --feedback 7\n  \
    shoal cell encode --dst 341 --src 682 --seq 21845 --len 40 --eop --class 2 --json"
)]
struct EncodeArgs {
    /// Final destination node (0-1023).
    #[arg(long)]
    dst: u64,
    /// Source node (0-1023), not the previous hop.
    #[arg(long)]
    src: u64,
    /// Sequence number per (src, dst), 0-32767.
    #[arg(long, default_value_t = 0)]
    seq: u64,
    /// Rate-limit feedback: a queue length in cells, 0-1023.
    #[arg(long, default_value_t = 0)]
    feedback: u64,
    /// Set "last cell dropped".
    #[arg(long)]
    lcd: bool,
    /// Traffic class, 0 (highest priority) to 3.
    #[arg(long, default_value_t = 0)]
    class: u64,
    /// Cell kind.
    #[arg(long, value_enum, default_value = "data")]
    kind: Kind,
    /// Start of packet (data cells only).
    #[arg(long)]
    sop: bool,
    /// End of packet (data cells only).
    #[arg(long)]
    eop: bool,
    /// Payload bytes (data cells: 1-63; default 56, a full 64 B cell).
    #[arg(long)]
    len: Option<u64>,
    /// Also print the header as JSON: {"hex": ..., "header": ...}; errors as JSON too.
    #[arg(long)]
    json: bool,
}

pub fn main(args: CellArgs) -> Result<ExitCode> {
    match args.command {
        CellCommand::Decode(d) => Ok(decode(&d.hex.join(""))),
        CellCommand::Encode(e) => Ok(encode(&e)),
    }
}

fn error_json(kind: &str, message: String) -> Value {
    json!({ "error": kind, "message": message })
}

fn cell_error_json(e: &Error) -> Value {
    let kind = match e {
        Error::Truncated { .. } => "truncated",
        Error::Crc { .. } => "crc",
        Error::Malformed(_) => "malformed",
        Error::FieldRange { .. } => "field_range",
    };
    let mut v = error_json(kind, e.to_string());
    if let Error::Crc { stored, computed } = e {
        v["stored"] = json!(format!("{stored:#04x}"));
        v["computed"] = json!(format!("{computed:#04x}"));
    }
    v
}

fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let cleaned: String = text
        .trim()
        .trim_start_matches("0x")
        .trim_start_matches("0X")
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ':')
        .collect();
    if let Some(bad) = cleaned.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(format!("{bad:?} is not a hex digit"));
    }
    if cleaned.len() % 2 == 1 {
        return Err(format!(
            "{} hex digits is not a whole number of bytes",
            cleaned.len()
        ));
    }
    Ok(cleaned
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            let digit = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            digit(pair[0]) << 4 | digit(pair[1])
        })
        .collect())
}

fn decode(hex: &str) -> ExitCode {
    let (out, code) = match parse_hex(hex) {
        Err(message) => (error_json("bad_hex", message), ExitCode::FAILURE),
        Ok(bytes) => match HeaderRepr::from_bytes(&bytes) {
            Ok(repr) => (json!(repr), ExitCode::SUCCESS),
            Err(e) => (cell_error_json(&e), ExitCode::FAILURE),
        },
    };
    println!("{out}");
    code
}

/// Checks `value` against a field's maximum before narrowing it.
fn field(name: &'static str, value: u64, max: u64) -> Result<u64, Error> {
    if value > max {
        return Err(Error::FieldRange {
            field: name,
            value,
            max,
        });
    }
    Ok(value)
}

fn build(e: &EncodeArgs) -> Result<HeaderRepr, Error> {
    let node_max = MAX_NODES as u64 - 1;
    let len = field(
        "len",
        e.len.unwrap_or(match e.kind {
            Kind::Data => (shoal_cell::DEFAULT_CELL_LEN - HEADER_LEN) as u64,
            _ => 0,
        }),
        u64::from(MAX_PAYLOAD_LEN),
    )? as u8;
    let kind = match e.kind {
        Kind::Data => CellKind::Data {
            sop: e.sop,
            eop: e.eop,
            len,
        },
        Kind::Idle | Kind::Unreachable if e.sop || e.eop || len > 0 => {
            return Err(Error::Malformed(
                "idle and unreachable cells carry no payload and no sop/eop flags",
            ));
        }
        Kind::Idle => CellKind::Idle,
        Kind::Unreachable => CellKind::Unreachable,
    };
    Ok(HeaderRepr {
        kind,
        dst: field("dst", e.dst, node_max)? as u16,
        src: field("src", e.src, node_max)? as u16,
        seq: field("seq", e.seq, u64::from(SEQ_MODULUS) - 1)? as u16,
        feedback: field("feedback", e.feedback, u64::from(MAX_FEEDBACK))? as u16,
        lcd: e.lcd,
        class: field("class", e.class, CLASSES as u64 - 1)? as u8,
    })
}

fn encode(e: &EncodeArgs) -> ExitCode {
    match build(e).and_then(|repr| Ok((repr, repr.to_bytes()?))) {
        Ok((repr, bytes)) => {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            if e.json {
                println!("{}", json!({ "hex": hex, "header": repr }));
            } else {
                println!("{hex}");
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            if e.json {
                println!("{}", cell_error_json(&err));
            } else {
                eprintln!("shoal: error: {err}");
            }
            ExitCode::FAILURE
        }
    }
}
