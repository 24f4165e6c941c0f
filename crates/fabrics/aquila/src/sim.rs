//! The clique on the discrete-event engine: TiN cell switches (per-VC input FIFOs, iSLIP
//! crossbar, per-(port, VC) output queues, output scheduling), GNet links with credit-based
//! link-level flow control, and hosts that cut IP packets into cells.
//!
//! # IP over GNet (§3.3)
//!
//! With [`Injection::RtsCts`] a host's ingress announces each packet by a 16 B RTS (its own
//! class of VCs, routed minimally and deterministically by the flow-invariant fields) and holds
//! it; the RTS is handed to the destination TiN's [`Egress`] as it leaves the switch towards
//! the destination's endpoint port, and the egress's CTS (or CTD) goes back the same way from
//! that port, in a class of VCs of its own. Only a CTS lets the packet's data cells go, routed
//! by the clique's mode; the egress reassembles them and releases packets in RTS order. The
//! IP engine's cells share the host's endpoint port, control cells first (our choice: the
//! paper puts the IP engine on an internal switch port of its own; at 16 B per 4 KB packet the
//! difference is 0.4% of the port).
//!
//! # 1RMA (§3.4)
//!
//! A read's Req leaves the initiator host's endpoint port with the control cells; at the
//! target its arrival starts a PCIe read (`crate::rma::Pcie`), each completion of which becomes
//! a Resp cell on the target's endpoint port, taking turns with IP data cells; the initiator
//! completes the read when its last Resp is in. Reads come from CliqueMap-like lookups
//! (`crate::cliquemap`), or from `Sim::issue_read`.
//!
//! # Swift (§5)
//!
//! Hosts run Swift (`crate::swift`) as the paper's workloads do: every IP connection (sender,
//! receiver) that carries flows or RPC packets announces a packet only while its window has
//! room; the receiver acknowledges each packet on release by a one-cell IP packet, whose
//! return gives the packet's fabric RTT (RTS out to the acknowledgement's release). A packet
//! a CTD drops leaves the window, cuts it (a loss) and waits to be announced again, so every
//! flow and RPC completes; a dropped acknowledgement is announced again at once. CliqueMap
//! lookups by 1RMA wait in the client's software until their (initiator, target) window lets
//! them go: the read's execution time starts then, and its fabric delay (the execution less
//! the target's PCIe read) is Swift's signal. Synthetic traffic (`Source::Saturate`) and raw
//! cells run without a window: they have no acknowledgements.
//!
//! # A cell's hop
//!
//! 1. An output port sends the head cell of a VC that has credit for it downstream: the link
//!    is busy for the cell's serialization; its head reaches the far input after the link's
//!    delay (PHY, wire, FEC), its tail one serialization later. Credits are counted in words
//!    and the sender spends them as it sends.
//! 2. At the input the cell joins its VC's FIFO. A FIFO that would overflow is a model error
//!    and counted (`credit_overflows`; the tests hold it at zero): the sender's credits are
//!    the only thing that keeps it from happening.
//! 3. Once the cell is at the head of its FIFO and the fall-through time after its head has
//!    passed, its route is chosen (adaptive routing reads the output queues at that moment)
//!    and it requests its output in iSLIP.
//! 4. Matched, it crosses the crossbar into the output queue of (port, VC); input and output
//!    are busy until it has crossed and its tail has arrived. Then the input FIFO's space is
//!    free and a credit goes back upstream, arriving after the link's delay (credits ride the
//!    reverse link's control ordered sets, which take no cell bandwidth).
//! 5. Cut-through: the output may send the cell before its tail has arrived, as long as its own
//!    tail does not leave before the tail came in.
//!
//! A TiN arbitrates (one iSLIP round over its inputs holding a cell) when a head becomes
//! ready, when a crossing ends, and when an output sends a cell while the last round left a
//! head that the freed space could let go; one queued event per TiN and time at most.
//!
//! The output scheduler serves the control VCs first (strict priority), then the data VCs
//! round-robin, a cell at a time, with bulk IP's class (Fig. 8) weighted round-robin against
//! the low-latency data class, 1 cell for 8. Endpoints always drain: the ejection port towards a host has no credit limit
//! (with RTS/CTS, §3.3, reassembly space is granted before data is sent).

use crate::cliquemap::{Bulk, Client, Lookups, RPC_REQUEST_BYTES, Transport};
use crate::ipgnet::{COS, Egress, EgressConfig, Grant, Rts};
use crate::islip::{Islip, Request};
use crate::rma::{Pcie, REQ_WORDS, Rma};
use crate::routing::{Candidates, Hop, InKind, LEVELS, LevelRule, Mode, Router, route_hash, vc};
use crate::spec::{Injection, Spec};
use crate::swift::{Swift, SwiftConfig};
use crate::wire::{VCS, WORD};
use rand::RngExt;
use shoal_base::rng::{StreamRng, stream};
use shoal_base::{Dur, Fifo, Rate, Slab, Time};
use shoal_fabric::Calendar;
use shoal_fabric::event_loop::Event;
use shoal_metrics::LatencyHistogram;
use shoal_topology::DragonflyPort;
use std::collections::{BTreeMap, VecDeque};

const NONE: u32 = u32::MAX;
// A port's VCs are the bits of a u32 mask.
const _: () = assert!(VCS == 32);

/// Synthetic traffic at full rate (a host given no source sends the flows handed to it).
pub enum Source {
    /// Every host always has a packet of `mtu` to send, to a destination the pattern draws,
    /// until it has sent `packets` of them (`None`: forever).
    Saturate {
        pattern: Pattern,
        packets: Option<u64>,
    },
}

/// Destinations of synthetic traffic (Dragonfly theory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Any other host, uniformly.
    UniformRandom,
    /// A uniformly chosen host of the next pod: pod `p` sends to pod `p + 1` (mod pods).
    PodShift,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Ev {
    /// A cell's head reaches input port `port` (global port index).
    Arrive {
        port: u32,
        cell: u32,
    },
    Arbitrate {
        tin: u32,
    },
    /// A cell has crossed from `input`; its input FIFO space is free.
    Crossed {
        input: u32,
        vc: u8,
        words: u8,
    },
    /// Output port `port`'s link has finished sending a cell.
    LinkFree {
        port: u32,
    },
    /// A head cell of output port `port` has become ready.
    Send {
        port: u32,
    },
    /// Credit for `words` of VC `vc` reaches the sender side of `port`.
    Credit {
        port: u32,
        vc: u8,
        words: u8,
    },
    /// Host `host`'s injection link is free.
    HostSend {
        host: u32,
    },
    /// A cell's tail reaches host `host`.
    Eject {
        cell: u32,
    },
    /// A CliqueMap client's next lookup arrives.
    Lookup {
        host: u32,
    },
    /// A PCIe completion of 1RMA read `read` is off the target's PCIe link.
    Completion {
        read: u32,
    },
    /// The backend's software has served IP RPC `rpc`: its response goes out.
    Serve {
        rpc: u32,
    },
    /// A window below one packet lets host `host` send again (Swift's pacing).
    Pace {
        host: u32,
    },
    /// Host `host`'s acknowledgement `packet`, dropped by a CTD, is announced again.
    Resend {
        host: u32,
        packet: u32,
    },
    /// Host `host`'s next bulk IP message arrives.
    Bulk {
        host: u32,
    },
}

/// What a cell is (§3.1's cell types: IP over GNet's and 1RMA's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Data,
    Rts,
    Cts,
    Ctd,
    /// A 1RMA read request; its cell's `packet` is the read.
    RmaReq,
    /// One PCIe completion of a 1RMA read; its cell's `packet` is the read.
    RmaResp,
}

/// Requests, grants and data each have a class of VCs of their own, so that no RTS waits
/// behind data and no grant behind an RTS (the grant is what drains the data: sharing VCs
/// would let a full fabric of requests block the grants that end it). 1RMA's Req has a class
/// of its own too, for the same reason (a Resp must never block the Req that frees it); Resp
/// shares the data class, the low-latency IP's (§3.4). All four are in the low-latency half
/// of the VCs (classes 0-4). With bulk IP beside the lookups (Fig. 8), IP's data cells move to
/// [`BULK_CLASS`], the first of the bulk half, and Resp cells with them when 1RMA runs at low
/// priority.
const CLASSES_USED: usize = 6;

/// The class of bulk IP's data cells (Fig. 8).
const BULK_CLASS: u8 = 5;

/// The VCs of the bulk class.
const BULK_VCS: u32 = ((1 << LEVELS) - 1) << (BULK_CLASS * LEVELS);

/// Output ports and host links serve up to this many cells of the low-latency data class for
/// one of the bulk class when both wait (weighted round-robin; §3.1 names WRR between VCs and
/// gives no weights: we take the 8:1 between classes of Fig. 8's experiment).
const HIGH_CELLS_PER_BULK: u8 = 8;

impl Kind {
    /// The class of a cell of this kind when IP and 1RMA share the low-latency class.
    const fn class(self) -> u8 {
        match self {
            Kind::Data | Kind::RmaResp => 0,
            Kind::Rts => 1,
            Kind::Cts | Kind::Ctd => 2,
            Kind::RmaReq => 3,
        }
    }
}

/// The VCs of the control classes (RTS, then CTS and CTD, then 1RMA's Req), served before
/// data (§3.3: at high priority; §3.4: Req like a CTS).
const CONTROL_VCS: u32 = ((1 << (3 * LEVELS)) - 1) << (Kind::Rts.class() * LEVELS);
const _: () = assert!(Kind::Cts.class() == Kind::Rts.class() + 1);
const _: () = assert!(Kind::RmaReq.class() == Kind::Cts.class() + 1);

/// A control cell (RTS, CTS, CTD): 16 B (§3.3).
const CONTROL_WORDS: u8 = 2;

/// The names of the simulator's event kinds, as `Counters::events_by_kind` counts them.
pub const EVENT_KINDS: [&str; 14] = [
    "arrive",
    "arbitrate",
    "crossed",
    "link_free",
    "send",
    "credit",
    "host_send",
    "eject",
    "lookup",
    "completion",
    "serve",
    "pace",
    "resend",
    "bulk",
];

impl Ev {
    const fn kind(&self) -> usize {
        match self {
            Ev::Arrive { .. } => 0,
            Ev::Arbitrate { .. } => 1,
            Ev::Crossed { .. } => 2,
            Ev::LinkFree { .. } => 3,
            Ev::Send { .. } => 4,
            Ev::Credit { .. } => 5,
            Ev::HostSend { .. } => 6,
            Ev::Eject { .. } => 7,
            Ev::Lookup { .. } => 8,
            Ev::Completion { .. } => 9,
            Ev::Serve { .. } => 10,
            Ev::Pace { .. } => 11,
            Ev::Resend { .. } => 12,
            Ev::Bulk { .. } => 13,
        }
    }
}

/// What routing a head cell came to.
enum Routed {
    Chosen,
    /// Every candidate is on a failed link the SDN has not removed yet.
    Waits,
    /// The tables have no route for it (`crate::escape`: a cell on VC 31 whose route a later
    /// removal cut).
    Stranded,
}

/// A cell in the fabric (no payload bytes: DESIGN.md principle 7).
#[derive(Clone, Copy, Debug)]
struct Cell {
    kind: Kind,
    /// Packet bytes it carries (data cells).
    carried: u8,
    /// The packet it belongs to (data) or is about (RTS, CTS, CTD): the ingress slot.
    packet: u32,
    dst_host: u32,
    dst_tin: u32,
    hash: u64,
    words: u8,
    class: u8,
    /// Level on the link it is on.
    level: u8,
    from: InKind,
    hops_left: u8,
    /// Chosen output (global port index) and its level, once routed at this TiN.
    out: u32,
    out_level: u8,
    /// When the head may request the crossbar, and when the tail is in.
    ready: Time,
    tail: Time,
    injected: Time,
    non_minimal: bool,
}

/// What arbitration reads of the head cell of an input FIFO, kept beside the FIFO so that a
/// blocked head costs no look-up of the cell itself.
#[derive(Clone, Copy, Debug)]
struct Head {
    ready: Time,
    /// Output queue (port · VCS + VC) once routed, else `NONE`.
    oq: u32,
    words: u8,
}

/// One input VC of a port: its FIFO, the head's arbitration state and the words held, in
/// one record, so that an arrival, a look at the head and a crossing touch one cache line
/// rather than one of each of three arrays.
#[derive(Clone, Copy, Debug)]
struct InVc {
    head: Head,
    fifo: Fifo,
    words: u32,
}

/// One output VC of a port: its queue, the words queued and the credits of the far input's
/// FIFO of that VC, in one record for the same reason.
#[derive(Clone, Copy, Debug)]
struct OutVc {
    fifo: Fifo,
    words: u32,
    credits: u32,
}

const NO_HEAD: Head = Head {
    ready: Time::ZERO,
    oq: NONE,
    words: 0,
};

/// An IP packet being carried.
#[derive(Clone, Copy, Debug)]
struct Packet {
    src_host: u32,
    /// When its RTS went on the wire (IP over GNet), and for an acknowledgement, when the
    /// RTS of the packet it acknowledges did: the start of that packet's fabric RTT.
    rts_at: Time,
    ack_for: Option<Time>,
    /// For an acknowledgement, the wire bytes of the packet it acknowledges.
    acked_wire: u32,
    /// Reassembly descriptor its CTS named (IP over GNet).
    desc: u32,
    flow: u32,
    seq: u32,
    payload: u32,
    wire: u32,
    cells_left: u32,
    dst_host: u32,
    /// The CliqueMap IP RPC it carries (request or response), else `NONE`.
    rpc: u32,
}

/// A host: its link into the TiN, its flows, the packet it is cutting.
struct Host {
    tin: u32,
    port: u32,
    busy: bool,
    flows: VecDeque<u32>,
    /// The packet being cut: its index and the wire bytes not yet in a cell.
    cutting: Option<(u32, u32)>,
    /// Credits of the endpoint port's FIFO, per class of cell.
    credits: [u32; CLASSES_USED],
    /// IP over GNet: control cells to send (RTSs of its packets, CTSs and CTDs its TiN's
    /// egress issues for its port), packets granted and waiting to be cut, and packets
    /// announced and not yet completely sent.
    control: VecDeque<(Kind, u32)>,
    granted: VecDeque<u32>,
    announced: u32,
    /// Acknowledgements to announce ahead of everything and past the ingress limit.
    ahead: VecDeque<u32>,
    /// Packets of a connection under Swift waiting for its window, in order: RPC requests
    /// and responses, and packets a CTD dropped, to be sent again.
    waiting: VecDeque<u32>,
    /// CliqueMap lookups by 1RMA waiting in the client's software for their target's window.
    pending_reads: VecDeque<PendingRead>,
    /// When a pacing wake-up is due.
    pace_at: Option<Time>,
    /// As a CliqueMap backend serving IP RPCs: when its software is free.
    serve_free: Time,
    sent_packets: u64,
    rng: StreamRng,
    /// 1RMA as a target: the reads whose next completion is off PCIe and waits for the link,
    /// one entry per completion; whether a Resp cell goes before an IP data cell next; the
    /// host's PCIe link.
    resps: VecDeque<u32>,
    resp_turn: bool,
    /// Low-latency cells sent since the last bulk one (weighted round-robin).
    high_run: u8,
    pcie: Pcie,
    /// The host's CliqueMap client, when lookups run.
    client: Option<Client>,
}

/// A lookup by 1RMA not yet issued to the hardware.
#[derive(Clone, Copy, Debug)]
struct PendingRead {
    target: u32,
    bytes: u32,
    arrived: Time,
}

/// A connection's congestion state: Pony Express's IP connection between two hosts, or
/// 1RMA's from an initiator to a target.
#[derive(Clone, Copy, Debug)]
struct Conn {
    swift: Swift,
    inflight_bytes: u64,
}

/// Admits `bytes` more on connection `key` of `conns` if its window lets them go at `now`
/// (in packets of `mtu` bytes), counting them in flight; else says when pacing would.
fn admit(
    conns: &mut BTreeMap<(u32, u32), Conn>,
    cfg: &SwiftConfig,
    mtu: u32,
    key: (u32, u32),
    now: Time,
    bytes: u32,
) -> Result<(), Option<Time>> {
    let c = conns.entry(key).or_insert_with(|| Conn {
        swift: Swift::new(cfg),
        inflight_bytes: 0,
    });
    c.swift
        .admits(now, c.inflight_bytes as f64 / f64::from(mtu))?;
    c.inflight_bytes += u64::from(bytes);
    c.swift.sent(now);
    Ok(())
}

/// A 1RMA read.
#[derive(Clone, Copy, Debug)]
struct Read {
    initiator: u32,
    target: u32,
    bytes: u32,
    /// The lookup's arrival at the client (before its window let it go), and the command's
    /// arrival at the initiator's engine.
    arrived: Time,
    issued: Time,
    /// Whether the read went through its connection's Swift window (lookups do).
    windowed: bool,
    /// The Req's arrival at the target, and the last completion off its PCIe link.
    at_target: Time,
    pcie_done: Time,
    /// When its last Resp cell left the target's engine.
    last_sent: Time,
    /// Bytes not yet put in a Resp cell at the target; Resp cells still to arrive; bytes
    /// arrived; times the read completed (must end at 1).
    unsent: u32,
    cells_left: u32,
    received: u32,
    completions: u32,
    done: Option<Time>,
}

/// A CliqueMap lookup by IP RPC: a request packet to the backend, whose software serves it,
/// and the value back in as many packets as it takes.
#[derive(Clone, Copy, Debug)]
struct Rpc {
    client: u32,
    server: u32,
    bytes: u32,
    issued: Time,
    /// Response packets still to arrive; value bytes arrived; times it completed.
    packets_left: u32,
    received: u32,
    completions: u32,
    done: Option<Time>,
}

/// A lookup by IP RPC as a run reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RpcRecord {
    pub client: u32,
    pub server: u32,
    pub bytes: u32,
    pub received: u32,
    pub completions: u32,
    pub issued: Time,
    /// When the value's last packet was released to the client.
    pub done: Option<Time>,
}

impl RpcRecord {
    /// The lookup's latency: issued to the value's last packet released to the client.
    pub fn latency(&self) -> Option<Dur> {
        self.done.map(|d| d - self.issued)
    }
}

/// A 1RMA read as a run reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadRecord {
    pub initiator: u32,
    pub target: u32,
    pub bytes: u32,
    /// Bytes its Resp cells brought, and how many times it completed.
    pub received: u32,
    pub completions: u32,
    /// The lookup's arrival at the client, and the command's at the initiator's engine (after
    /// Swift's window let it go).
    pub arrived: Time,
    pub issued: Time,
    /// When the initiator issued its completion.
    pub done: Option<Time>,
    /// Its PCIe part: at the target (Req in to last completion off PCIe) and the initiator's
    /// completion delay.
    pub pcie: Dur,
    /// Of the fabric's part, the time its last Resp cell waited for the target's link after
    /// coming off PCIe: behind earlier Resp cells, its own read's (the link is slower than
    /// PCIe) and other reads'.
    pub target_wait: Dur,
}

impl ReadRecord {
    /// Total execution time (§5: command received to completion issued).
    pub fn execution(&self) -> Option<Dur> {
        self.done.map(|d| d - self.issued)
    }

    /// The fabric's part of it: the execution time less the PCIe part.
    pub fn fabric(&self) -> Option<Dur> {
        self.execution().map(|e| Dur(e.0 - self.pcie.0))
    }

    /// The lookup's latency as its client sees it: arrival to completion, the wait for the
    /// window included.
    pub fn lookup_latency(&self) -> Option<Dur> {
        self.done.map(|d| d - self.arrived)
    }
}

/// Per-flow state for in-order delivery.
#[derive(Clone, Copy, Default)]
struct FlowState {
    dst_host: u32,
    unsent: u64,
    next_seq: u32,
    deliver_seq: u32,
}

/// What a run counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub cells_injected: u64,
    pub cells_delivered: u64,
    pub cell_hops: u64,
    pub non_minimal_cells: u64,
    pub packets_delivered: u64,
    /// Cells that found their input FIFO full: must stay 0 (credits prevent it).
    pub credit_overflows: u64,
    /// Cells with no hop left at a TiN not their destination (dropped, counted).
    pub hop_limit_drops: u64,
    /// Cells lost with a failed link: on its wire or in its output queues when it failed.
    pub link_failure_drops: u64,
    /// Cells that moved onto the escape VCs (`crate::escape`), and cells on them that a later
    /// removal left with no route (dropped, counted).
    pub escaped_cells: u64,
    pub stranded_drops: u64,
    pub events: u64,
    /// Events by kind, in the order of [`EVENT_KINDS`]: where a run's events go.
    pub events_by_kind: [u64; EVENT_KINDS.len()],
    /// Most words ever held in one input FIFO, and its capacity.
    pub max_input_words: u32,
    pub max_output_words: u32,
    /// Wire bytes delivered to hosts since `measure_from`.
    pub measured_wire_bytes: u64,
    /// Sum of data cell latencies (injection to ejection), ps.
    pub cell_latency_sum: u128,
    /// IP over GNet: RTS, CTS and CTD cells sent; packets dropped on a CTD; packets released
    /// with an ECN mark.
    pub control_cells: u64,
    pub ctd_drops: u64,
    pub ecn_marks: u64,
    /// Packets a CTD dropped that were announced again (every one but synthetic traffic's).
    pub resent_packets: u64,
    /// 1RMA: reads issued and completed; Req and Resp cells sent.
    pub rma_reads_issued: u64,
    pub rma_reads_completed: u64,
    pub rma_req_cells: u64,
    pub rma_resp_cells: u64,
    /// CliqueMap lookups by IP RPC issued and completed.
    pub rpcs_issued: u64,
    pub rpcs_completed: u64,
}

/// The simulator's state.
pub(crate) struct Sim<'a> {
    spec: &'a Spec,
    router: Router,
    q: Calendar<Ev>,
    /// First global port index of each TiN; a TiN's ports are its network ports, then one
    /// endpoint port per host.
    base: Vec<u32>,
    /// Per port: its TiN.
    tin: Vec<u32>,
    /// Per port: peer port (network) or host (endpoint), link rate and delay, kind.
    far: Vec<u32>,
    is_endpoint: Vec<bool>,
    rate: Vec<Rate>,
    delay: Vec<Dur>,
    /// Per port: input FIFO capacity per VC (words).
    in_cap: Vec<u32>,
    in_busy: Vec<Time>,
    xbar_out_busy: Vec<Time>,
    link_busy: Vec<bool>,
    send_at: Vec<Option<Time>>,
    rr: Vec<u8>,
    /// Per port: bit `v` set when the input FIFO, or the output queue, of VC `v` holds a
    /// cell, so that arbitration and output scheduling visit only VCs with something to do.
    in_mask: Vec<u32>,
    /// Bit `port % 64` of word `port / 64` set when the port's `in_mask` is not empty, so that
    /// an arbitration round visits only the inputs holding a cell (most rounds find few).
    in_ports: Vec<u64>,
    out_mask: Vec<u32>,
    /// Per (port, VC), at `port · VCS + VC`: its input FIFO, and its output queue with the
    /// credits of the far input.
    vin: Vec<InVc>,
    vout: Vec<OutVc>,
    /// Per TiN.
    arb_at: Vec<Option<Time>>,
    /// Per TiN, the times of its `Arbitrate` events in the queue, so that a wake at one of
    /// them reuses it instead of adding another (an earlier wake leaves the later event in
    /// the queue; the round at the earlier time wakes the later one again).
    arb_queued: Vec<Vec<Time>>,
    /// Per TiN: whether its last arbitration round left a head that space freed in an output
    /// queue could let go (a routed head whose output queue was full while the crossbar
    /// output was free, a request iSLIP left unmatched, a head dropped with another behind
    /// it). Without one, a round woken by an output sending a cell would do nothing, and
    /// none is scheduled; every other wake (a head's ready time, a crossing's end) stays.
    arb_blocked: Vec<bool>,
    /// The TiN whose arbitration round is running, and whether an output of it sent a cell
    /// during the round (the wake that follows waits for the round's end, when it is known
    /// whether a head is blocked).
    in_round: Option<u32>,
    round_freed: bool,
    islip: Vec<Islip>,
    slab: Slab<u32>,
    cells: Vec<Cell>,
    free_cells: Vec<u32>,
    packets: Vec<Packet>,
    free_packets: Vec<u32>,
    hosts: Vec<Host>,
    /// Per TiN, IP over GNet's egress (empty in raw-cell mode).
    egress: Vec<Egress>,
    flows: Vec<FlowState>,
    /// Packets complete at their destination but waiting for an earlier one of their flow.
    held: BTreeMap<(u32, u32), u32>,
    pub(crate) counters: Counters,
    measure_from: Time,
    rng: StreamRng,
    cand: Candidates,
    requests: Vec<Request>,
    req_ports: Vec<(u32, u32)>,
    matched: Vec<usize>,
    /// Packets delivered in order: (flow, payload bytes, time), drained by the caller.
    pub(crate) delivered: Vec<(u32, u32)>,
    /// Fabric RTTs of the packets whose acknowledgement came back after `measure_from`.
    /// Histograms, not lists: a long run's memory does not grow with its packets and cells.
    pub(crate) rtts: LatencyHistogram,
    /// Fabric latencies of the data cells delivered after `measure_from`, when kept (flow
    /// runs): a cell's injection onto its host's link to its tail's arrival at the destination
    /// host, so the host's own queue of packets is not in it.
    pub(crate) cell_latencies: Option<LatencyHistogram>,
    /// 1RMA reads, by id; the CliqueMap lookups, when they run.
    reads: Vec<Read>,
    lookups: Option<Lookups>,
    rpcs: Vec<Rpc>,
    /// Swift's connections: IP ones by (sender, receiver), 1RMA's by (initiator, target).
    conns: BTreeMap<(u32, u32), Conn>,
    rma_conns: BTreeMap<(u32, u32), Conn>,
    /// Classes of IP's data cells and of 1RMA's Resp cells (both 0 unless bulk IP runs).
    data_class: u8,
    resp_class: u8,
    /// Per port: low-latency data cells sent since the last bulk one.
    high_run: Vec<u8>,
    /// Bulk IP beside the lookups, its arrivals per host, and the payload it delivered.
    bulk: Option<Bulk>,
    bulk_clients: Vec<Client>,
    pub(crate) bulk_delivered: u64,
    /// Per port: its link has failed (`control/sim_failure.rs`); how many links have.
    down: Vec<bool>,
    down_links: u32,
}

impl<'a> Sim<'a> {
    pub(crate) fn new(spec: &'a Spec, measure_from: Time) -> Result<Sim<'a>, String> {
        spec.rma.check()?;
        spec.swift_ip.check()?;
        spec.swift_rma.check()?;
        if spec.injection == Injection::RtsCts && spec.ctd_depth == 0 {
            return Err(
                "a CTD depth of 0 drops every packet, and the transport resends \
                        what a CTD drops, forever"
                    .into(),
            );
        }
        if spec.injection == Injection::RtsCts && spec.mtu_bytes > spec.reassembly_bytes {
            return Err(format!(
                "an MTU of {} B does not fit the egress's {} B of reassembly space: every \
                 packet would be dropped",
                spec.mtu_bytes, spec.reassembly_bytes
            ));
        }
        let df = &spec.dragonfly;
        let topo = df.build().map_err(|e| e.to_string())?;
        let router = Router::new(df, &topo, LevelRule::AfterEveryGlobal);
        let tins = df.tins();
        let hpt = spec.hosts_per_tin;
        let mut base = vec![0u32];
        for x in 0..tins {
            base.push(base[x as usize] + topo.ports(x) as u32 + hpt);
        }
        let ports = base[tins as usize] as usize;
        let mut tin = vec![0; ports];
        for x in 0..tins {
            tin[base[x as usize] as usize..base[x as usize + 1] as usize].fill(x);
        }
        let mut far = vec![0; ports];
        let mut is_endpoint = vec![false; ports];
        let mut rate = vec![spec.host_rate; ports];
        let mut delay = vec![spec.host_delay; ports];
        let mut in_cap = vec![spec.endpoint_vc_words; ports];
        for x in 0..tins {
            let n = topo.ports(x) as u32;
            for p in 0..n {
                let i = (base[x as usize] + p) as usize;
                let link = topo.link(x, p);
                far[i] = base[link.peer as usize] + link.peer_port;
                rate[i] = link.rate;
                delay[i] = link.delay;
                in_cap[i] = match df.port_kind(x, p) {
                    DragonflyPort::Local { .. } => spec.local_vc_words,
                    DragonflyPort::Global { .. } => spec.global_vc_words,
                };
            }
            for h in 0..hpt {
                let i = (base[x as usize] + n + h) as usize;
                far[i] = x * hpt + h;
                is_endpoint[i] = true;
            }
        }
        let vout = (0..ports * VCS)
            .map(|i| OutVc {
                fifo: Fifo::EMPTY,
                words: 0,
                credits: if is_endpoint[i / VCS] {
                    u32::MAX
                } else {
                    in_cap[far[i / VCS] as usize]
                },
            })
            .collect();
        let hosts = (0..tins * hpt)
            .map(|h| Host {
                tin: h / hpt,
                port: base[(h / hpt) as usize] + topo.ports(h / hpt) as u32 + h % hpt,
                busy: false,
                flows: VecDeque::new(),
                cutting: None,
                credits: [spec.endpoint_vc_words; CLASSES_USED],
                control: VecDeque::new(),
                granted: VecDeque::new(),
                announced: 0,
                ahead: VecDeque::new(),
                waiting: VecDeque::new(),
                pending_reads: VecDeque::new(),
                pace_at: None,
                serve_free: Time::ZERO,
                sent_packets: 0,
                rng: stream(spec.seed, "aquila.host", h as u64),
                resps: VecDeque::new(),
                resp_turn: true,
                high_run: 0,
                pcie: Pcie::default(),
                client: None,
            })
            .collect();
        let islip = (0..tins)
            .map(|x| Islip::new((base[x as usize + 1] - base[x as usize]) as usize, VCS))
            .collect();
        let egress = match spec.injection {
            Injection::RawCells => Vec::new(),
            Injection::RtsCts => {
                let cfg = EgressConfig {
                    ports: hpt as usize,
                    reassembly_bytes: spec.reassembly_bytes,
                    window: spec.cts_window,
                    ctd_depth: spec.ctd_depth,
                    ecn_depth: spec.ecn_depth,
                    // One class of service: a quantum of one packet per visit.
                    quantum: [spec.mtu_bytes; COS],
                };
                vec![Egress::new(cfg); tins as usize]
            }
        };
        Ok(Sim {
            spec,
            egress,
            router,
            q: Calendar::new(),
            base,
            tin,
            far,
            is_endpoint,
            rate,
            delay,
            in_cap,
            in_busy: vec![Time::ZERO; ports],
            xbar_out_busy: vec![Time::ZERO; ports],
            link_busy: vec![false; ports],
            send_at: vec![None; ports],
            rr: vec![0; ports],
            in_mask: vec![0; ports],
            in_ports: vec![0; ports.div_ceil(64)],
            out_mask: vec![0; ports],
            vin: vec![
                InVc {
                    head: NO_HEAD,
                    fifo: Fifo::EMPTY,
                    words: 0,
                };
                ports * VCS
            ],
            vout,
            arb_at: vec![None; tins as usize],
            arb_queued: (0..tins).map(|_| Vec::with_capacity(4)).collect(),
            arb_blocked: vec![false; tins as usize],
            in_round: None,
            round_freed: false,
            islip,
            slab: Slab::new(),
            cells: Vec::new(),
            free_cells: Vec::new(),
            packets: Vec::new(),
            free_packets: Vec::new(),
            hosts,
            flows: Vec::new(),
            held: BTreeMap::new(),
            counters: Counters::default(),
            measure_from,
            rng: stream(spec.seed, "aquila.routing", 0),
            cand: Candidates::default(),
            requests: Vec::new(),
            req_ports: Vec::new(),
            matched: Vec::new(),
            delivered: Vec::new(),
            rtts: LatencyHistogram::new(),
            cell_latencies: None,
            reads: Vec::new(),
            lookups: None,
            rpcs: Vec::new(),
            conns: BTreeMap::new(),
            rma_conns: BTreeMap::new(),
            data_class: 0,
            resp_class: 0,
            high_run: vec![0; ports],
            bulk: None,
            bulk_clients: Vec::new(),
            bulk_delivered: 0,
            down: vec![false; ports],
            down_links: 0,
        })
    }

    pub(crate) fn hosts(&self) -> u32 {
        self.hosts.len() as u32
    }

    /// Words queued in all input FIFOs and output queues, and in the fullest output queue.
    pub(crate) fn queued_words(&self) -> (u64, u64) {
        let ins = self.vin.iter().map(|q| u64::from(q.words));
        let total = ins
            .chain(self.vout.iter().map(|q| u64::from(q.words)))
            .sum();
        let most = self
            .vout
            .iter()
            .map(|q| u64::from(q.words))
            .max()
            .unwrap_or(0);
        (total, most)
    }

    /// Hands host `host` a flow (record `flow`, `bytes` of payload for host `dst`) to send.
    pub(crate) fn add_flow(&mut self, now: Time, host: u32, flow: u32, bytes: u64, dst: u32) {
        if self.flows.len() <= flow as usize {
            self.flows.resize(flow as usize + 1, FlowState::default());
        }
        self.flows[flow as usize].unsent = bytes;
        self.flows[flow as usize].dst_host = dst;
        self.hosts[host as usize].flows.push_back(flow);
        self.host_send(now, host, None);
    }

    /// Starts every host on synthetic traffic.
    pub(crate) fn start_saturation(&mut self, source: &Source) {
        for h in 0..self.hosts() {
            self.host_send(Time::ZERO, h, Some(source));
        }
    }

    /// The calendar of the simulator's events (the flow run's loop schedules its own on it).
    pub(crate) fn calendar(&mut self) -> &mut Calendar<Ev> {
        &mut self.q
    }

    /// For the synthetic drivers: pops and handles one event; `None` when none is left, else
    /// its time and whether it was the stop.
    pub(crate) fn step(&mut self, source: Option<&Source>) -> Option<(Time, bool)> {
        let (now, ev) = self.q.pop()?;
        self.counters.events += 1;
        let Event::Model(ev) = ev else {
            return Some((now, matches!(ev, Event::Stop)));
        };
        self.handle(now, ev, source);
        Some((now, false))
    }

    /// Handles one of the simulator's events.
    pub(crate) fn handle(&mut self, now: Time, ev: Ev, source: Option<&Source>) {
        self.counters.events_by_kind[ev.kind()] += 1;
        match ev {
            Ev::Arrive { port, cell } => self.arrive(now, port, cell),
            Ev::Arbitrate { tin } => {
                let queued = &mut self.arb_queued[tin as usize];
                let i = queued.iter().position(|&t| t == now).expect("queued");
                queued.swap_remove(i);
                if self.arb_at[tin as usize] == Some(now) {
                    self.arb_at[tin as usize] = None;
                    self.arbitrate(now, tin);
                }
            }
            Ev::Crossed { input, vc, words } => self.crossed(now, input, vc, words),
            Ev::LinkFree { port } => {
                self.link_busy[port as usize] = false;
                self.try_send(now, port);
            }
            Ev::Send { port } => {
                if self.send_at[port as usize] == Some(now) {
                    self.send_at[port as usize] = None;
                }
                self.try_send(now, port);
            }
            Ev::Credit { port, vc, words } => {
                self.vout[port as usize * VCS + vc as usize].credits += words as u32;
                self.try_send(now, port);
            }
            Ev::HostSend { host } => {
                self.hosts[host as usize].busy = false;
                self.host_send(now, host, source);
            }
            Ev::Eject { cell } => self.eject(now, cell),
            Ev::Lookup { host } => self.lookup(now, host),
            Ev::Completion { read } => {
                let target = self.reads[read as usize].target;
                self.hosts[target as usize].resps.push_back(read);
                self.wake_host(now, target);
            }
            Ev::Serve { rpc } => self.respond(now, rpc),
            Ev::Pace { host } => {
                if self.hosts[host as usize].pace_at == Some(now) {
                    self.hosts[host as usize].pace_at = None;
                }
                self.issue_reads(now, host);
                self.wake_host(now, host);
            }
            Ev::Resend { host, packet } => {
                self.hosts[host as usize].ahead.push_back(packet);
                self.wake_host(now, host);
            }
            Ev::Bulk { host } => self.bulk_message(now, host),
        }
    }

    /// Puts the host's next cell on its link into the TiN, if the link is free and the
    /// endpoint port's FIFO has credit for it. Control cells (IP over GNet's, 1RMA's Req) go
    /// first; then 1RMA's Resp cells and IP data cells take turns, a cell each; with IP over
    /// GNet, data only of packets granted.
    fn host_send(&mut self, now: Time, host: u32, source: Option<&Source>) {
        if self.hosts[host as usize].busy {
            return;
        }
        if self.spec.injection == Injection::RtsCts {
            self.announce(now, host, source);
        }
        if self.send_control(now, host) {
            return;
        }
        // Resp and IP data in one class take turns a cell each; with Resp in the low-latency
        // class and IP data in the bulk one, Resp goes first up to HIGH_CELLS_PER_BULK cells.
        let split = self.resp_class != self.data_class;
        let h = &self.hosts[host as usize];
        let resp_first = if split {
            h.high_run < HIGH_CELLS_PER_BULK
        } else {
            h.resp_turn
        };
        if resp_first && self.send_resp(now, host) {
            let h = &mut self.hosts[host as usize];
            h.resp_turn = false;
            h.high_run = h.high_run.saturating_add(1);
            return;
        }
        if self.send_ip_data(now, host, source) {
            let h = &mut self.hosts[host as usize];
            h.resp_turn = true;
            h.high_run = 0;
            return;
        }
        if self.send_resp(now, host) {
            let h = &mut self.hosts[host as usize];
            h.high_run = h.high_run.saturating_add(1);
        }
    }

    /// Sends the host's next IP data cell if it has one and credit for it; true if it did.
    fn send_ip_data(&mut self, now: Time, host: u32, source: Option<&Source>) -> bool {
        let rts_cts = self.spec.injection == Injection::RtsCts;
        let h = &mut self.hosts[host as usize];
        if h.cutting.is_none() {
            if rts_cts {
                let Some(packet) = h.granted.pop_front() else {
                    return false;
                };
                h.cutting = Some((packet, self.packets[packet as usize].wire));
            } else {
                let Some(packet) = self.new_packet(now, host, source) else {
                    return false;
                };
                self.hosts[host as usize].cutting =
                    Some((packet, self.packets[packet as usize].wire));
            }
        }
        let h = &self.hosts[host as usize];
        let (packet, left) = h.cutting.expect("a packet");
        let mut words = 0u8;
        let per = (crate::wire::MAX_CELL_LEN - crate::wire::HEADER_LEN) as u32;
        let carried = left.min(per);
        Spec::cell_words(carried, |w| words = w);
        let class = self.data_class as usize;
        if h.credits[class] < words as u32 {
            return false; // a credit from the TiN will call again
        }
        let left = left - carried;
        let h = &mut self.hosts[host as usize];
        h.credits[class] -= words as u32;
        h.cutting = (left > 0).then_some((packet, left));
        if left == 0 && rts_cts {
            h.announced -= 1; // the ingress buffer has sent it all
        }
        let p = self.packets[packet as usize];
        let hash = route_hash(host, p.dst_host, 0);
        self.inject(
            now,
            host,
            Kind::Data,
            carried as u8,
            packet,
            p.dst_host,
            hash,
            words,
        );
        true
    }

    /// Sends the host's next control cell if its class has credit; true if it did.
    fn send_control(&mut self, now: Time, host: u32) -> bool {
        let h = &self.hosts[host as usize];
        let Some(&(kind, id)) = h.control.front() else {
            return false;
        };
        let class = kind.class() as usize;
        let words = if kind == Kind::RmaReq {
            REQ_WORDS
        } else {
            CONTROL_WORDS
        };
        if h.credits[class] < u32::from(words) {
            return false;
        }
        let h = &mut self.hosts[host as usize];
        h.control.pop_front();
        h.credits[class] -= u32::from(words);
        // An RTS goes to the packet's destination, a grant back to its source, both routed
        // deterministically by the flow-invariant fields (§3.3); a Req to the read's target,
        // routed like data (the hash serves the deterministic modes).
        let (to, hash) = match kind {
            Kind::RmaReq => {
                let r = self.reads[id as usize];
                self.counters.rma_req_cells += 1;
                (r.target, route_hash(r.initiator, r.target, 0))
            }
            Kind::Rts => {
                self.packets[id as usize].rts_at = now;
                let p = self.packets[id as usize];
                self.counters.control_cells += 1;
                (p.dst_host, route_hash(p.src_host, p.dst_host, 0))
            }
            _ => {
                let p = self.packets[id as usize];
                self.counters.control_cells += 1;
                (p.src_host, route_hash(p.dst_host, p.src_host, 0))
            }
        };
        self.inject(now, host, kind, 0, id, to, hash, words);
        true
    }

    /// Sends the host's next 1RMA Resp cell (one PCIe completion of a read it is the target
    /// of) if it has one and credit for it; true if it did.
    fn send_resp(&mut self, now: Time, host: u32) -> bool {
        let h = &self.hosts[host as usize];
        let Some(&read) = h.resps.front() else {
            return false;
        };
        let r = self.reads[read as usize];
        let carried = r.unsent.min(self.spec.rma.completion_bytes);
        let words = Rma::resp_words(carried);
        let class = self.resp_class as usize;
        if h.credits[class] < u32::from(words) {
            return false;
        }
        let h = &mut self.hosts[host as usize];
        h.resps.pop_front();
        h.credits[class] -= u32::from(words);
        let r = &mut self.reads[read as usize];
        r.unsent -= carried;
        if r.unsent == 0 {
            r.last_sent = now;
        }
        let r = *r;
        self.counters.rma_resp_cells += 1;
        let hash = route_hash(r.target, r.initiator, 0);
        let carried = u8::try_from(carried).expect("a completion fits a cell (Rma::check)");
        self.inject(
            now,
            host,
            Kind::RmaResp,
            carried,
            read,
            r.initiator,
            hash,
            words,
        );
        true
    }

    /// Starts CliqueMap lookups on every host: each its own Poisson process.
    pub(crate) fn start_lookups(&mut self, lookups: Lookups) {
        self.lookups = Some(lookups);
        for h in 0..self.hosts() {
            let mut client = Client::new(self.spec.seed, h);
            let at = client.next_arrival(lookups.qps_per_client);
            self.hosts[h as usize].client = Some(client);
            if at < lookups.until {
                self.q.schedule(at, Ev::Lookup { host: h });
            }
        }
    }

    /// Starts bulk IP beside the lookups: IP's data cells move to the bulk class, 1RMA's Resp
    /// cells with them if they share its VCs; every host draws its messages' arrivals and
    /// destinations from a stream of its own.
    pub(crate) fn start_bulk(&mut self, bulk: Bulk, until: Time) {
        self.bulk = Some(bulk);
        self.data_class = BULK_CLASS;
        self.resp_class = if bulk.rma_shares_bulk_vcs {
            BULK_CLASS
        } else {
            Kind::RmaResp.class()
        };
        for h in 0..self.hosts() {
            let mut c = Client::on_stream(self.spec.seed, "aquila.bulk", h);
            let at = c.next_arrival(bulk.qps_per_host);
            self.bulk_clients.push(c);
            if at < until {
                self.q.schedule(at, Ev::Bulk { host: h });
            }
        }
    }

    /// Host `host`'s bulk message arrives: a flow to a uniformly drawn other host; the next
    /// is drawn.
    fn bulk_message(&mut self, now: Time, host: u32) {
        let bulk = self.bulk.expect("bulk traffic was started");
        let until = self.lookups.expect("bulk runs beside lookups").until;
        let hosts = self.hosts();
        let c = &mut self.bulk_clients[host as usize];
        let dst = c.backend(host, hosts);
        let next = c.next_arrival(bulk.qps_per_host);
        if next < until {
            self.q.schedule(next, Ev::Bulk { host });
        }
        let flow = self.flows.len() as u32;
        self.add_flow(now, host, flow, u64::from(bulk.bytes), dst);
    }

    /// Client `host`'s lookup arrives: a 1RMA read of a value from a backend; the next one
    /// is drawn.
    fn lookup(&mut self, now: Time, host: u32) {
        let lookups = self.lookups.expect("lookups were started");
        let hosts = self.hosts();
        let client = self.hosts[host as usize]
            .client
            .as_mut()
            .expect("every host is a client");
        let target = client.backend(host, hosts);
        let next = client.next_arrival(lookups.qps_per_client);
        if next < lookups.until {
            self.q.schedule(next, Ev::Lookup { host });
        }
        match lookups.transport {
            Transport::Rma => {
                self.hosts[host as usize]
                    .pending_reads
                    .push_back(PendingRead {
                        target,
                        bytes: lookups.value_bytes,
                        arrived: now,
                    });
                self.issue_reads(now, host);
            }
            Transport::IpRpc { .. } => self.issue_rpc(now, host, target, lookups.value_bytes),
        }
    }

    /// A lookup by IP RPC: the request packet is announced at once.
    fn issue_rpc(&mut self, now: Time, client: u32, server: u32, bytes: u32) {
        let id = self.rpcs.len() as u32;
        self.rpcs.push(Rpc {
            client,
            server,
            bytes,
            issued: now,
            packets_left: 0,
            received: 0,
            completions: 0,
            done: None,
        });
        self.counters.rpcs_issued += 1;
        self.send_rpc_packet(now, client, server, RPC_REQUEST_BYTES, id);
    }

    /// Announces an RPC packet of `payload` bytes from `src` to `dst`.
    fn send_rpc_packet(&mut self, now: Time, src: u32, dst: u32, payload: u32, rpc: u32) {
        let wire = payload + self.spec.header_bytes;
        let packet = self.alloc_packet(Packet {
            src_host: src,
            rts_at: Time::ZERO,
            ack_for: None,
            acked_wire: 0,
            desc: NONE,
            flow: NONE,
            seq: 0,
            payload,
            wire,
            cells_left: Spec::cells_of(wire),
            dst_host: dst,
            rpc,
        });
        self.hosts[src as usize].waiting.push_back(packet);
        self.wake_host(now, src);
    }

    /// An RPC packet is released to its host: a request queues for the backend's software
    /// (one request at a time, each taking the transport's service time); a response brings
    /// its part of the value, and the last completes the lookup.
    fn rpc_packet_in(&mut self, now: Time, p: &Packet) {
        let Some(Lookups {
            transport: Transport::IpRpc { service },
            ..
        }) = self.lookups
        else {
            unreachable!("RPC packets only come from IP RPC lookups");
        };
        let r = &mut self.rpcs[p.rpc as usize];
        if p.dst_host == r.server {
            let h = &mut self.hosts[r.server as usize];
            h.serve_free = now.max(h.serve_free) + service;
            self.q.schedule(h.serve_free, Ev::Serve { rpc: p.rpc });
            return;
        }
        r.received += p.payload;
        r.packets_left -= 1;
        if r.packets_left == 0 {
            r.completions += 1;
            r.done = Some(now);
            self.counters.rpcs_completed += 1;
        }
    }

    /// The backend's software has served RPC `rpc`: the value goes back in full packets.
    fn respond(&mut self, now: Time, rpc: u32) {
        let r = self.rpcs[rpc as usize];
        let mss = self.spec.mss();
        self.rpcs[rpc as usize].packets_left = r.bytes.div_ceil(mss);
        let mut left = r.bytes;
        while left > 0 {
            let payload = left.min(mss);
            left -= payload;
            self.send_rpc_packet(now, r.server, r.client, payload, rpc);
        }
    }

    /// The lookups by IP RPC issued at or after `from`, as records.
    pub(crate) fn rpc_records(&self, from: Time) -> Vec<RpcRecord> {
        self.rpcs
            .iter()
            .filter(|r| r.issued >= from)
            .map(|r| RpcRecord {
                client: r.client,
                server: r.server,
                bytes: r.bytes,
                received: r.received,
                completions: r.completions,
                issued: r.issued,
                done: r.done,
            })
            .collect()
    }

    /// Issues the client's lookups by 1RMA that their targets' windows let go, in order of
    /// arrival (a lookup to a target whose window is closed does not hold back the others).
    fn issue_reads(&mut self, now: Time, host: u32) {
        let mut i = 0;
        while let Some(&r) = self.hosts[host as usize].pending_reads.get(i) {
            let key = (host, r.target);
            let mtu = self.spec.mtu_bytes;
            match admit(
                &mut self.rma_conns,
                &self.spec.swift_rma,
                mtu,
                key,
                now,
                r.bytes,
            ) {
                Ok(()) => {
                    self.hosts[host as usize].pending_reads.remove(i);
                    self.start_read(now, host, r, true);
                }
                Err(at) => {
                    self.pace(host, at);
                    i += 1;
                }
            }
        }
    }

    /// Has host `host` try again at `at`, if pacing named a time.
    fn pace(&mut self, host: u32, at: Option<Time>) {
        let Some(t) = at else { return };
        let h = &mut self.hosts[host as usize];
        if h.pace_at.is_none_or(|p| t < p) {
            h.pace_at = Some(t);
            self.q.schedule(t, Ev::Pace { host });
        }
    }

    /// The initiator's 1RMA engine receives a read command at once (no window): its Req joins
    /// the control cells.
    #[cfg(test)]
    pub(crate) fn issue_read(&mut self, now: Time, initiator: u32, target: u32, bytes: u32) {
        let r = PendingRead {
            target,
            bytes,
            arrived: now,
        };
        self.start_read(now, initiator, r, false);
    }

    /// The initiator's 1RMA engine receives the command of read `r`: its Req joins the control
    /// cells.
    fn start_read(&mut self, now: Time, initiator: u32, r: PendingRead, windowed: bool) {
        let PendingRead {
            target,
            bytes,
            arrived,
        } = r;
        let id = self.reads.len() as u32;
        self.reads.push(Read {
            initiator,
            target,
            bytes,
            arrived,
            issued: now,
            windowed,
            at_target: Time::ZERO,
            pcie_done: Time::ZERO,
            last_sent: Time::ZERO,
            unsent: bytes,
            cells_left: self.spec.rma.completions(bytes),
            received: 0,
            completions: 0,
            done: None,
        });
        self.counters.rma_reads_issued += 1;
        self.hosts[initiator as usize]
            .control
            .push_back((Kind::RmaReq, id));
        self.wake_host(now, initiator);
    }

    /// A Req reaches its target: the engine reads the value over PCIe; each completion will
    /// wait for the host's link as a Resp cell.
    fn rma_request(&mut self, now: Time, read: u32) {
        let rma = self.spec.rma;
        let r = self.reads[read as usize];
        let mut last = now;
        let q = &mut self.q;
        self.hosts[r.target as usize]
            .pcie
            .read(&rma, now, r.bytes, |at, _| {
                last = at;
                q.schedule(at, Ev::Completion { read });
            });
        let r = &mut self.reads[read as usize];
        r.at_target = now;
        r.pcie_done = last;
    }

    /// A Resp reaches the initiator: its bytes are written; with the last, the read completes
    /// and, for a lookup, its connection's Swift learns the read's fabric delay: the time
    /// since the command less what the target held it (its PCIe read, which the Resp reports,
    /// as Swift separates the remote end's delay from the fabric's).
    fn rma_response(&mut self, now: Time, read: u32, carried: u8) {
        let delay = self.spec.rma.completion_delay;
        let r = &mut self.reads[read as usize];
        r.received += u32::from(carried);
        r.cells_left -= 1;
        if r.cells_left > 0 {
            return;
        }
        r.completions += 1;
        r.done = Some(now + delay);
        self.counters.rma_reads_completed += 1;
        let r = *r;
        if r.windowed {
            let fabric = Dur((now - r.issued).0 - (r.pcie_done - r.at_target).0);
            let cfg = &self.spec.swift_rma;
            let mtu = f64::from(self.spec.mtu_bytes);
            let c = self
                .rma_conns
                .get_mut(&(r.initiator, r.target))
                .expect("a windowed read's connection");
            c.swift.on_ack(cfg, now, fabric, f64::from(r.bytes) / mtu);
            c.inflight_bytes -= u64::from(r.bytes);
            self.issue_reads(now, r.initiator);
        }
    }

    /// The reads issued at or after `from`, as records.
    pub(crate) fn read_records(&self, from: Time) -> Vec<ReadRecord> {
        let delay = self.spec.rma.completion_delay;
        self.reads
            .iter()
            .filter(|r| r.issued >= from)
            .map(|r| ReadRecord {
                initiator: r.initiator,
                target: r.target,
                bytes: r.bytes,
                received: r.received,
                completions: r.completions,
                arrived: r.arrived,
                issued: r.issued,
                done: r.done,
                pcie: (r.pcie_done - r.at_target) + delay,
                target_wait: Dur(r.last_sent.0.saturating_sub(r.pcie_done.0)),
            })
            .collect()
    }

    /// The ingress announces its acknowledgements, then, while it holds fewer than its limit,
    /// the packets waiting for their connection's window that it now lets go, then new
    /// packets (of flows, as their windows let them go).
    fn announce(&mut self, now: Time, host: u32, source: Option<&Source>) {
        let h = &mut self.hosts[host as usize];
        while let Some(ack) = h.ahead.pop_front() {
            h.announced += 1;
            h.control.push_back((Kind::Rts, ack));
        }
        let mut i = 0;
        while self.hosts[host as usize].announced < self.spec.ingress_packets
            && let Some(&packet) = self.hosts[host as usize].waiting.get(i)
        {
            let p = self.packets[packet as usize];
            match self.admit_ip(now, host, p.dst_host, p.wire) {
                Ok(()) => {
                    let h = &mut self.hosts[host as usize];
                    h.waiting.remove(i);
                    h.announced += 1;
                    h.control.push_back((Kind::Rts, packet));
                }
                Err(at) => {
                    self.pace(host, at);
                    i += 1;
                }
            }
        }
        while self.hosts[host as usize].announced < self.spec.ingress_packets {
            let Some(packet) = self.new_packet(now, host, source) else {
                return;
            };
            let h = &mut self.hosts[host as usize];
            h.announced += 1;
            h.control.push_back((Kind::Rts, packet));
        }
    }

    /// Puts a cell from `host` on its link into the TiN.
    #[allow(clippy::too_many_arguments)]
    fn inject(
        &mut self,
        now: Time,
        host: u32,
        kind: Kind,
        carried: u8,
        packet: u32,
        dst_host: u32,
        hash: u64,
        words: u8,
    ) {
        let cell = Cell {
            kind,
            carried,
            packet,
            dst_host,
            dst_tin: dst_host / self.spec.hosts_per_tin,
            hash,
            words,
            class: match kind {
                Kind::Data => self.data_class,
                Kind::RmaResp => self.resp_class,
                _ => kind.class(),
            },
            level: 0,
            from: InKind::Endpoint,
            hops_left: self.spec.hop_limit,
            out: NONE,
            out_level: 0,
            ready: Time::ZERO,
            tail: Time::ZERO,
            injected: now,
            non_minimal: false,
        };
        let id = self.alloc_cell(cell);
        let h = &mut self.hosts[host as usize];
        h.busy = true;
        let port = h.port;
        let ser = self.spec.host_rate.serialize(words as u64 * WORD as u64);
        self.q.schedule(now + ser, Ev::HostSend { host });
        self.launch(now, port, id, ser);
        self.counters.cells_injected += 1;
    }

    /// Admits a packet of `wire` bytes on the IP connection from `src` to `dst`.
    fn admit_ip(&mut self, now: Time, src: u32, dst: u32, wire: u32) -> Result<(), Option<Time>> {
        let (cfg, mtu) = (&self.spec.swift_ip, self.spec.mtu_bytes);
        admit(&mut self.conns, cfg, mtu, (src, dst), now, wire)
    }

    /// A new packet of the host's traffic, if it has one: synthetic traffic's at once, a
    /// flow's when its connection's window lets it go (the flows take turns).
    fn new_packet(&mut self, now: Time, host: u32, source: Option<&Source>) -> Option<u32> {
        let spec = self.spec;
        let (flow, seq, payload, dst_host) = match source {
            Some(Source::Saturate { pattern, packets }) => {
                let h = &mut self.hosts[host as usize];
                if packets.is_some_and(|n| h.sent_packets >= n) {
                    return None;
                }
                h.sent_packets += 1;
                let n = self.hosts.len() as u32;
                let df = &spec.dragonfly;
                let hpt = spec.hosts_per_tin;
                let h = &mut self.hosts[host as usize];
                let dst = match pattern {
                    Pattern::UniformRandom => {
                        let d = h.rng.random_range(0..n - 1);
                        if d >= host { d + 1 } else { d }
                    }
                    Pattern::PodShift => {
                        let pod = (df.pod_of(h.tin) + 1) % df.pods;
                        let per_pod = df.tins_per_pod * hpt;
                        pod * per_pod + h.rng.random_range(0..per_pod)
                    }
                };
                (NONE, 0, spec.mss(), dst)
            }
            None => {
                let (flow, payload) = self.next_flow(now, host)?;
                let h = &mut self.hosts[host as usize];
                let f = &mut self.flows[flow as usize];
                f.unsent -= payload as u64;
                let seq = f.next_seq;
                f.next_seq += 1;
                if f.unsent > 0 {
                    h.flows.push_back(flow);
                }
                (flow, seq, payload, f.dst_host)
            }
        };
        let wire = payload + spec.header_bytes;
        let packet = Packet {
            src_host: host,
            rts_at: Time::ZERO,
            ack_for: None,
            acked_wire: 0,
            desc: NONE,
            flow,
            seq,
            payload,
            wire,
            cells_left: Spec::cells_of(wire),
            dst_host,
            rpc: NONE,
        };
        Some(self.alloc_packet(packet))
    }

    /// The first of the host's flows, in turn, whose connection admits its next packet, taken
    /// off the turn with that packet's payload; flows whose windows are closed keep their
    /// order. Raw cells have no acknowledgements, so no window: the next flow goes.
    fn next_flow(&mut self, now: Time, host: u32) -> Option<(u32, u32)> {
        let mss = u64::from(self.spec.mss());
        let windowed = self.spec.injection == Injection::RtsCts;
        for _ in 0..self.hosts[host as usize].flows.len() {
            let flow = self.hosts[host as usize].flows.pop_front()?;
            let f = self.flows[flow as usize];
            let payload = f.unsent.min(mss) as u32;
            let wire = payload + self.spec.header_bytes;
            if !windowed {
                return Some((flow, payload));
            }
            match self.admit_ip(now, host, f.dst_host, wire) {
                Ok(()) => return Some((flow, payload)),
                Err(at) => {
                    self.hosts[host as usize].flows.push_back(flow);
                    self.pace(host, at);
                }
            }
        }
        None
    }

    fn alloc_packet(&mut self, packet: Packet) -> u32 {
        if let Some(id) = self.free_packets.pop() {
            self.packets[id as usize] = packet;
            id
        } else {
            self.packets.push(packet);
            self.packets.len() as u32 - 1
        }
    }

    /// Has the host try to send now, unless its link is busy (it will try when free).
    fn wake_host(&mut self, now: Time, host: u32) {
        let h = &mut self.hosts[host as usize];
        if !h.busy {
            h.busy = true;
            self.q.schedule(now, Ev::HostSend { host });
        }
    }

    fn alloc_cell(&mut self, cell: Cell) -> u32 {
        if let Some(id) = self.free_cells.pop() {
            self.cells[id as usize] = cell;
            id
        } else {
            self.cells.push(cell);
            self.cells.len() as u32 - 1
        }
    }

    /// Puts cell `id` on the wire towards input port `to`, starting now, taking `ser`.
    fn launch(&mut self, now: Time, to: u32, id: u32, ser: Dur) {
        let delay = self.delay[to as usize];
        let c = &mut self.cells[id as usize];
        c.tail = now + delay + ser;
        c.ready = now + delay + self.spec.fall_through;
        self.q
            .schedule(now + delay, Ev::Arrive { port: to, cell: id });
    }

    fn tin_of(&self, port: u32) -> u32 {
        self.tin[port as usize]
    }

    fn arrive(&mut self, now: Time, port: u32, id: u32) {
        if self.down_links > 0 && self.down[port as usize] {
            self.counters.link_failure_drops += 1;
            self.free_cell(id);
            return;
        }
        let c = self.cells[id as usize];
        let v = vc(c.class, c.level) as usize;
        let qi = port as usize * VCS + v;
        if self.vin[qi].words + c.words as u32 > self.in_cap[port as usize] {
            self.counters.credit_overflows += 1;
            self.free_cell(id);
            return;
        }
        self.vin[qi].words += c.words as u32;
        self.counters.max_input_words = self.counters.max_input_words.max(self.vin[qi].words);
        let was_empty = self.vin[qi].fifo.is_empty();
        self.slab.push_back(&mut self.vin[qi].fifo, id);
        self.in_mask[port as usize] |= 1 << v;
        self.in_ports[port as usize / 64] |= 1 << (port % 64);
        if was_empty {
            self.vin[qi].head = Head {
                ready: c.ready,
                oq: NONE,
                words: c.words,
            };
            let tin = self.tin_of(port);
            self.wake_arbiter(tin, c.ready.max(now));
        }
        let _ = now;
    }

    fn wake_arbiter(&mut self, tin: u32, at: Time) {
        let a = &mut self.arb_at[tin as usize];
        if a.is_none_or(|t| at < t) {
            *a = Some(at);
            let queued = &mut self.arb_queued[tin as usize];
            if !queued.contains(&at) {
                queued.push(at);
                self.q.schedule(at, Ev::Arbitrate { tin });
            }
        }
    }

    /// An output queue of TiN `tin` has sent a cell: a head its fullness held may go now.
    fn space_freed(&mut self, tin: u32, now: Time) {
        if self.in_round == Some(tin) {
            self.round_freed = true;
        } else if self.arb_blocked[tin as usize] {
            self.wake_arbiter(tin, now);
        }
    }

    /// Chooses the route of the head cell `id` at TiN `tin`, recording it in the cell.
    fn route(&mut self, tin: u32, id: u32) -> Routed {
        let c = self.cells[id as usize];
        let mode = self.mode_of(&c);
        let allow = mode.non_minimal();
        let mut cand = std::mem::take(&mut self.cand);
        self.router
            .candidates(tin, c.from, c.level, c.dst_tin, allow, &mut cand);
        let mut forced = false;
        if self.down_links > 0 {
            if cand.minimal.is_empty() && cand.non_minimal.is_empty() {
                self.cand = cand;
                return Routed::Stranded;
            }
            match self.avoid_failed(tin, &mut cand) {
                None => {
                    self.cand = cand;
                    return Routed::Waits;
                }
                Some(f) => forced = f,
            }
        }
        let (hop, non_min) = self.choose(tin, &c, &cand);
        let non_min = non_min || forced;
        self.cand = cand;
        let base = self.base[tin as usize];
        let out = match hop.port {
            Some(p) => base + p,
            None => base + self.router.ports(tin) as u32 + c.dst_host % self.spec.hosts_per_tin,
        };
        let cell = &mut self.cells[id as usize];
        cell.out = out;
        cell.out_level = hop.level;
        if non_min {
            cell.non_minimal = true;
        }
        Routed::Chosen
    }

    /// Data cells and 1RMA's Req and Resp (§3.4: freely reordered, adaptively routed) follow
    /// the clique's routing mode; RTS, CTS and CTD are routed minimally and
    /// deterministically, so that the RTSs of a flow arrive in the order sent (§3.3).
    fn mode_of(&self, c: &Cell) -> Mode {
        match c.kind {
            Kind::Data | Kind::RmaReq | Kind::RmaResp => self.spec.mode,
            Kind::Rts | Kind::Cts | Kind::Ctd => Mode::MinimalDeterministic,
        }
    }

    /// The routing mode's choice among the candidates; true if it is non-minimal.
    fn choose(&mut self, tin: u32, c: &Cell, cand: &Candidates) -> (Hop, bool) {
        let spec = self.spec;
        let mode = self.mode_of(c);
        match mode {
            Mode::Deterministic | Mode::MinimalDeterministic => {
                let hop = crate::cdg::deterministic(cand, mode, c.hash ^ u64::from(tin));
                let non_min = cand.non_minimal.contains(&hop);
                (hop, non_min)
            }
            Mode::Valiant => {
                let list = if cand.non_minimal.is_empty() {
                    &cand.minimal
                } else {
                    &cand.non_minimal
                };
                let hop = list[self.rng.random_range(0..list.len())];
                (hop, !cand.non_minimal.is_empty())
            }
            Mode::FullyAdaptive | Mode::MinimalAdaptive => {
                let base = self.base[tin as usize];
                let depth = |s: &Self, h: &Hop| match h.port {
                    Some(p) => {
                        s.vout[(base + p) as usize * VCS + vc(c.class, h.level) as usize].words
                    }
                    None => 0,
                };
                let best_min = self.sample_best(&cand.minimal, 2, &depth);
                if cand.non_minimal.is_empty() {
                    return (best_min.0, false);
                }
                let best_non = self.sample_best(&cand.non_minimal, 3, &depth);
                let weighted = best_non.1 * spec.nonminimal_weight + spec.nonminimal_bias_words;
                if weighted < best_min.1 {
                    (best_non.0, true)
                } else {
                    (best_min.0, false)
                }
            }
        }
    }

    /// The least deep of `k` candidates drawn at random without replacement (all if fewer),
    /// the first drawn winning ties.
    fn sample_best(
        &mut self,
        list: &[Hop],
        k: usize,
        depth: &dyn Fn(&Self, &Hop) -> u32,
    ) -> (Hop, u32) {
        let n = list.len();
        let mut picked = [usize::MAX; 3];
        let mut best: Option<(Hop, u32)> = None;
        for i in 0..k.min(n) {
            let mut j = self.rng.random_range(0..n - i);
            // The j-th index not yet picked.
            let mut sorted = picked;
            sorted[..i].sort_unstable();
            for &p in &sorted[..i] {
                if p <= j {
                    j += 1;
                }
            }
            picked[i] = j;
            let d = depth(self, &list[j]);
            if best.is_none_or(|(_, b)| d < b) {
                best = Some((list[j], d));
            }
        }
        best.expect("at least one candidate")
    }

    /// One arbitration round of TiN `tin` at `now`.
    fn arbitrate(&mut self, now: Time, tin: u32) {
        let (lo, hi) = (self.base[tin as usize], self.base[tin as usize + 1]);
        self.requests.clear();
        self.req_ports.clear();
        let mut next_ready: Option<Time> = None;
        let mut blocked = false;
        self.in_round = Some(tin);
        self.round_freed = false;
        // The inputs holding a cell, a word of `in_ports` at a time (only the input being
        // visited can change its bit during the round: arrivals are events of their own).
        for w in lo / 64..hi.div_ceil(64) {
            let mut ports = self.in_ports[w as usize] & span(w, lo, hi);
            while ports != 0 {
                let port = w * 64 + ports.trailing_zeros();
                ports &= ports - 1;
                if self.in_busy[port as usize] > now {
                    continue;
                }
                let mut vcs = self.in_mask[port as usize];
                while vcs != 0 {
                    let v = vcs.trailing_zeros() as usize;
                    vcs &= vcs - 1;
                    let qi = port as usize * VCS + v;
                    let head = self.vin[qi].head;
                    if head.ready > now {
                        next_ready = Some(next_ready.map_or(head.ready, |t| t.min(head.ready)));
                        continue;
                    }
                    let mut oq = head.oq;
                    if oq == NONE {
                        let id = *self
                            .slab
                            .front(&self.vin[qi].fifo)
                            .expect("a VC in the mask holds a cell");
                        let c = self.cells[id as usize];
                        if c.hops_left == 0 && c.dst_tin != tin {
                            self.counters.hop_limit_drops += 1;
                            self.drop_head(now, port, v as u8, id);
                            blocked = true;
                            continue;
                        }
                        match self.route(tin, id) {
                            Routed::Chosen => {}
                            // Every candidate is on a failed link: the cell waits for the
                            // SDN's new tables, whose update wakes this TiN.
                            Routed::Waits => continue,
                            Routed::Stranded => {
                                self.counters.stranded_drops += 1;
                                self.drop_head(now, port, v as u8, id);
                                blocked = true;
                                continue;
                            }
                        }
                        let c = self.cells[id as usize];
                        oq = c.out * VCS as u32 + u32::from(vc(c.class, c.out_level));
                        self.vin[qi].head.oq = oq;
                    }
                    let out = oq / VCS as u32;
                    // A crossbar output busy is woken by its crossing's end; a full queue
                    // only by its output sending.
                    if self.xbar_out_busy[out as usize] > now {
                        continue;
                    }
                    if self.vout[oq as usize].words + head.words as u32 > self.spec.output_vc_words
                    {
                        blocked = true;
                        continue;
                    }
                    let id = *self
                        .slab
                        .front(&self.vin[qi].fifo)
                        .expect("a VC in the mask holds a cell");
                    self.requests.push(Request {
                        input: (port - lo) as u16,
                        vc: v as u8,
                        output: (out - lo) as u16,
                    });
                    self.req_ports.push((port, id));
                }
            }
        }
        if !self.requests.is_empty() {
            self.matched.clear();
            self.islip[tin as usize].arbitrate(
                &self.requests,
                self.spec.islip_iterations,
                &mut self.matched,
            );
            let matched = std::mem::take(&mut self.matched);
            for &m in &matched {
                let r = self.requests[m];
                let (port, id) = self.req_ports[m];
                self.cross(now, port, r.vc, id);
            }
            blocked |= matched.len() < self.requests.len();
            self.matched = matched;
        }
        self.in_round = None;
        self.arb_blocked[tin as usize] = blocked;
        if self.round_freed && blocked {
            self.wake_arbiter(tin, now);
        }
        if let Some(t) = next_ready {
            self.wake_arbiter(tin, t);
        }
    }

    /// Drops the head cell of an input FIFO (hop limit): its space and credit go back.
    fn drop_head(&mut self, now: Time, port: u32, v: u8, id: u32) {
        self.pop_input(port, v);
        let words = self.cells[id as usize].words;
        self.free_input(now, port, v, words);
        self.free_cell(id);
    }

    /// Moves cell `id` from input `port` across the crossbar into its output queue.
    fn cross(&mut self, now: Time, port: u32, v: u8, id: u32) {
        self.pop_input(port, v);
        let c = self.cells[id as usize];
        let out = c.out;
        let xbar = self
            .spec
            .crossbar_rate
            .serialize(c.words as u64 * WORD as u64);
        let done = (now + xbar).max(c.tail);
        self.in_busy[port as usize] = done;
        self.xbar_out_busy[out as usize] = done;
        self.q.schedule(
            done,
            Ev::Crossed {
                input: port,
                vc: v,
                words: c.words,
            },
        );
        // On the next link the cell travels at its new level; its own tail must not leave
        // before it came in.
        let ser_out = self.rate[out as usize].serialize(c.words as u64 * WORD as u64);
        let cell = &mut self.cells[id as usize];
        if cell.out_level >= LEVELS && cell.level < LEVELS {
            self.counters.escaped_cells += 1;
        }
        cell.level = cell.out_level;
        cell.ready = now.max(Time(c.tail.0.saturating_sub(ser_out.0)));
        let oq = out as usize * VCS + vc(c.class, c.out_level) as usize;
        self.vout[oq].words += c.words as u32;
        self.counters.max_output_words = self.counters.max_output_words.max(self.vout[oq].words);
        self.slab.push_back(&mut self.vout[oq].fifo, id);
        self.out_mask[out as usize] |= 1 << vc(c.class, c.out_level);
        self.try_send(now, out);
    }

    /// Takes the head cell off input FIFO (`port`, `v`).
    fn pop_input(&mut self, port: u32, v: u8) {
        let qi = port as usize * VCS + v as usize;
        self.slab.pop_front(&mut self.vin[qi].fifo);
        match self.slab.front(&self.vin[qi].fifo) {
            None => {
                self.in_mask[port as usize] &= !(1 << v);
                if self.in_mask[port as usize] == 0 {
                    self.in_ports[port as usize / 64] &= !(1 << (port % 64));
                }
            }
            Some(&id) => {
                let c = &self.cells[id as usize];
                self.vin[qi].head = Head {
                    ready: c.ready,
                    oq: NONE,
                    words: c.words,
                };
            }
        }
    }

    fn crossed(&mut self, now: Time, input: u32, v: u8, words: u8) {
        self.free_input(now, input, v, words);
        let tin = self.tin_of(input);
        self.wake_arbiter(tin, now);
    }

    /// Frees `words` of input FIFO (`port`, `v`) and returns the credit upstream.
    fn free_input(&mut self, now: Time, port: u32, v: u8, words: u8) {
        let qi = port as usize * VCS + v as usize;
        self.vin[qi].words -= words as u32;
        let up = self.far[port as usize];
        if self.is_endpoint[port as usize] {
            self.hosts[up as usize].credits[(v / LEVELS) as usize] += words as u32;
            self.wake_host(now, up);
        } else {
            let at = now + self.delay[port as usize];
            self.q.schedule(
                at,
                Ev::Credit {
                    port: up,
                    vc: v,
                    words,
                },
            );
        }
    }

    /// Sends the next cell of output `port` if its link is free: the VCs of RTS, CTS and CTD
    /// first (§3.3: they travel at high priority), then the others, each group in round-robin
    /// order; a VC eligible when its head cell is ready and has credit downstream.
    fn try_send(&mut self, now: Time, port: u32) {
        let p = port as usize;
        if self.link_busy[p] || self.down[p] {
            return;
        }
        let mut wake: Option<Time> = None;
        // The VCs holding a cell, in round-robin order from the pointer.
        let start = self.rr[p] as u32;
        let mask = self.out_mask[p];
        let (high, bulk) = (mask & !CONTROL_VCS & !BULK_VCS, mask & BULK_VCS);
        let data = if self.high_run[p] < HIGH_CELLS_PER_BULK {
            [high, bulk]
        } else {
            [bulk, high]
        };
        for group in [mask & CONTROL_VCS, data[0], data[1]] {
            let mut vcs = group.rotate_right(start);
            while vcs != 0 {
                let k = vcs.trailing_zeros();
                vcs &= vcs - 1;
                let v = ((start + k) % VCS as u32) as usize;
                let oq = p * VCS + v;
                let id = *self
                    .slab
                    .front(&self.vout[oq].fifo)
                    .expect("a VC in the mask holds a cell");
                let c = self.cells[id as usize];
                if c.ready > now {
                    wake = Some(wake.map_or(c.ready, |t| t.min(c.ready)));
                    continue;
                }
                if self.vout[oq].credits < c.words as u32 {
                    continue;
                }
                self.slab.pop_front(&mut self.vout[oq].fifo);
                if self.vout[oq].fifo.is_empty() {
                    self.out_mask[p] &= !(1 << v);
                }
                self.vout[oq].words -= c.words as u32;
                if !self.is_endpoint[p] {
                    self.vout[oq].credits -= c.words as u32;
                }
                self.rr[p] = ((v + 1) % VCS) as u8;
                if BULK_VCS & 1 << v != 0 {
                    self.high_run[p] = 0;
                } else if CONTROL_VCS & 1 << v == 0 {
                    self.high_run[p] = self.high_run[p].saturating_add(1);
                }
                self.link_busy[p] = true;
                let ser = self.rate[p].serialize(c.words as u64 * WORD as u64);
                self.q.schedule(now + ser, Ev::LinkFree { port });
                let tin = self.tin_of(port);
                self.space_freed(tin, now);
                if self.is_endpoint[p] {
                    let at = now + self.delay[p] + ser;
                    self.q.schedule(at, Ev::Eject { cell: id });
                } else {
                    self.counters.cell_hops += 1;
                    let cell = &mut self.cells[id as usize];
                    cell.hops_left = cell.hops_left.saturating_sub(1);
                    cell.out = NONE;
                    cell.from = match self.router.far_end(tin, port - self.base[tin as usize]).2 {
                        InKind::Global => InKind::Global,
                        _ => InKind::Local,
                    };
                    let to = self.far[p];
                    self.launch(now, to, id, ser);
                }
                return;
            }
        }
        // Nothing sendable: the link idles until a credit, a new cell or a head's ready time.
        if let Some(t) = wake
            && self.send_at[p].is_none_or(|a| t < a)
        {
            self.send_at[p] = Some(t);
            self.q.schedule(t, Ev::Send { port });
        }
    }

    fn eject(&mut self, now: Time, id: u32) {
        let c = self.cells[id as usize];
        self.counters.cells_delivered += 1;
        if c.non_minimal {
            self.counters.non_minimal_cells += 1;
        }
        self.free_cell(id);
        if c.kind == Kind::Data {
            self.counters.cell_latency_sum += u128::from(now.0 - c.injected.0);
            if now >= self.measure_from {
                self.counters.measured_wire_bytes += c.words as u64 * WORD as u64;
                if let Some(l) = &mut self.cell_latencies {
                    l.record(now - c.injected);
                }
            }
        }
        match c.kind {
            Kind::RmaReq => return self.rma_request(now, c.packet),
            Kind::RmaResp => return self.rma_response(now, c.packet, c.carried),
            _ => {}
        }
        let p = self.packets[c.packet as usize];
        match c.kind {
            Kind::Data if self.spec.injection == Injection::RawCells => self.reassemble_raw(c),
            Kind::Data => {
                self.egress[c.dst_tin as usize].on_data(p.desc, u32::from(c.carried));
                self.pump_egress(now, c.dst_tin);
            }
            Kind::Rts => {
                let flow = if p.flow == NONE {
                    1 << 63 | u64::from(p.src_host) << 32 | u64::from(p.dst_host)
                } else {
                    u64::from(p.flow)
                };
                self.egress[c.dst_tin as usize].on_rts(Rts {
                    src: p.src_host,
                    slot: c.packet,
                    port: (p.dst_host % self.spec.hosts_per_tin) as u8,
                    cos: 0,
                    bytes: p.wire,
                    flow,
                });
                self.pump_egress(now, c.dst_tin);
            }
            Kind::Cts => {
                self.hosts[c.dst_host as usize].granted.push_back(c.packet);
                self.wake_host(now, c.dst_host);
            }
            Kind::RmaReq | Kind::RmaResp => unreachable!("handled above"),
            Kind::Ctd => self.dropped(now, c.dst_host, c.packet),
        }
    }

    /// A CTD reached the ingress of host `host`: it drops `packet`. The transport sends it
    /// again: a packet of a connection when its window, cut by Swift's decrease for a loss,
    /// lets it go; an acknowledgement, which no window holds, after a retransmission delay of
    /// one base target (ours: sent again at once, acknowledgements to a congested port would
    /// keep its host's control cells ahead of the data that drains that port). Synthetic
    /// traffic's packets are lost.
    fn dropped(&mut self, now: Time, host: u32, packet: u32) {
        self.counters.ctd_drops += 1;
        self.hosts[host as usize].announced -= 1;
        let p = self.packets[packet as usize];
        if p.ack_for.is_some() {
            self.counters.resent_packets += 1;
            let at = now + self.spec.swift_ip.base_target;
            self.q.schedule(at, Ev::Resend { host, packet });
            return;
        } else if p.flow != NONE || p.rpc != NONE {
            self.counters.resent_packets += 1;
            let c = self
                .conns
                .get_mut(&(host, p.dst_host))
                .expect("an admitted packet's connection");
            c.swift.on_loss(&self.spec.swift_ip, now);
            c.inflight_bytes -= u64::from(p.wire);
            self.hosts[host as usize].waiting.push_front(packet);
        } else {
            self.free_packets.push(packet);
        }
        self.wake_host(now, host);
    }

    /// Raw-cell mode: a packet is complete when its last cell is in, and leaves in its flow's
    /// order.
    fn reassemble_raw(&mut self, c: Cell) {
        let p = &mut self.packets[c.packet as usize];
        p.cells_left -= 1;
        if p.cells_left > 0 {
            return;
        }
        let p = *p;
        self.free_packets.push(c.packet);
        self.counters.packets_delivered += 1;
        if p.flow == NONE {
            return;
        }
        // In order within the flow: hold a packet until those before it have left.
        let f = &mut self.flows[p.flow as usize];
        if p.seq != f.deliver_seq {
            self.held.insert((p.flow, p.seq), p.payload);
            return;
        }
        f.deliver_seq += 1;
        self.delivered.push((p.flow, p.payload));
        while let Some(bytes) = self
            .held
            .remove(&(p.flow, self.flows[p.flow as usize].deliver_seq))
        {
            self.flows[p.flow as usize].deliver_seq += 1;
            self.delivered.push((p.flow, bytes));
        }
    }

    /// Sends the grants TiN `tin`'s egress has issued (each from the port of the packet's
    /// destination) and hands its released packets to their hosts.
    fn pump_egress(&mut self, now: Time, tin: u32) {
        while let Some(g) = self.egress[tin as usize].poll_grant() {
            let (kind, slot) = match g {
                Grant::Cts { slot, desc, .. } => {
                    self.packets[slot as usize].desc = desc;
                    (Kind::Cts, slot)
                }
                Grant::Ctd { slot, .. } => (Kind::Ctd, slot),
            };
            let port_host = self.packets[slot as usize].dst_host;
            self.hosts[port_host as usize]
                .control
                .push_back((kind, slot));
            self.wake_host(now, port_host);
        }
        while let Some(r) = self.egress[tin as usize].poll_release() {
            let p = self.packets[r.rts.slot as usize];
            self.free_packets.push(r.rts.slot);
            self.counters.packets_delivered += 1;
            if r.ecn {
                self.counters.ecn_marks += 1;
            }
            if p.flow != NONE {
                self.delivered.push((p.flow, p.payload));
                self.acknowledge(now, &p);
            }
            if p.rpc != NONE {
                self.acknowledge(now, &p);
                self.rpc_packet_in(now, &p);
            }
            if let Some(start) = p.ack_for {
                if start >= self.measure_from {
                    self.rtts.record(now - start);
                }
                self.acknowledged(now, &p, start);
            }
        }
    }

    /// An acknowledgement `ack` is back at the packet's sender: its connection's Swift learns
    /// the packet's fabric RTT (its RTS leaving to the acknowledgement's release) and the
    /// packet leaves the window.
    fn acknowledged(&mut self, now: Time, ack: &Packet, rts_at: Time) {
        let (sender, receiver) = (ack.dst_host, ack.src_host);
        let cfg = &self.spec.swift_ip;
        let mtu = f64::from(self.spec.mtu_bytes);
        let c = self
            .conns
            .get_mut(&(sender, receiver))
            .expect("an acknowledged packet's connection");
        c.swift
            .on_ack(cfg, now, now - rts_at, f64::from(ack.acked_wire) / mtu);
        c.inflight_bytes -= u64::from(ack.acked_wire);
        self.wake_host(now, sender);
    }

    /// The destination acknowledges a flow's or an RPC's packet at once (no host processing: the fabric
    /// RTT of §5 excludes it) by a one-cell IP packet of the headers alone, as the transports
    /// under the paper's workloads do; it goes through RTS/CTS like any packet, so a round
    /// trip is §3.4's six GNet half round trips.
    fn acknowledge(&mut self, now: Time, p: &Packet) {
        let wire = self.spec.header_bytes.max(WORD as u32);
        let ack = self.alloc_packet(Packet {
            src_host: p.dst_host,
            rts_at: Time::ZERO,
            ack_for: Some(p.rts_at),
            acked_wire: p.wire,
            desc: NONE,
            flow: NONE,
            seq: 0,
            payload: 0,
            wire,
            cells_left: Spec::cells_of(wire),
            dst_host: p.src_host,
            rpc: NONE,
        });
        self.hosts[p.dst_host as usize].ahead.push_back(ack);
        self.wake_host(now, p.dst_host);
    }

    fn free_cell(&mut self, id: u32) {
        self.free_cells.push(id);
    }

    /// Cells anywhere in the fabric: injected and neither delivered nor dropped.
    pub(crate) fn cells_in_flight(&self) -> u64 {
        self.counters.cells_injected
            - self.counters.cells_delivered
            - self.counters.credit_overflows
            - self.counters.hop_limit_drops
            - self.counters.link_failure_drops
            - self.counters.stranded_drops
    }

    /// Whether every credit is back where it started and every FIFO empty.
    pub(crate) fn at_rest(&self) -> bool {
        let fifos = self.vin.iter().all(|q| q.words == 0) && self.vout.iter().all(|q| q.words == 0);
        let credits = (0..self.far.len()).all(|p| {
            self.is_endpoint[p]
                || self.down[p]
                || (0..VCS)
                    .all(|v| self.vout[p * VCS + v].credits == self.in_cap[self.far[p] as usize])
        });
        let hosts = self.hosts.iter().all(|h| {
            h.credits.iter().all(|&c| c == self.spec.endpoint_vc_words)
                && h.announced == 0
                && h.control.is_empty()
                && h.resps.is_empty()
                && h.ahead.is_empty()
                && h.waiting.is_empty()
                && h.pending_reads.is_empty()
                && h.flows.is_empty()
        });
        let conns = self
            .conns
            .values()
            .chain(self.rma_conns.values())
            .all(|c| c.inflight_bytes == 0);
        let egress = self.egress.iter().all(|e| {
            (0..e.config().ports as u8)
                .all(|p| e.arriving(p) == 0 && e.free_bytes(p) == e.config().reassembly_bytes)
        });
        fifos && credits && hosts && egress && conns
    }

    pub(crate) fn now(&self) -> Time {
        self.q.now()
    }

    /// Events waiting.
    pub(crate) fn pending(&self) -> usize {
        self.q.len()
    }
}

/// The bits of word `w` of a port bitset that fall in ports `lo..hi`.
fn span(w: u32, lo: u32, hi: u32) -> u64 {
    let from = lo.saturating_sub(w * 64).min(64);
    let to = (hi - w * 64).min(64);
    let upto = if to == 64 { u64::MAX } else { (1u64 << to) - 1 };
    let below = if from == 64 {
        u64::MAX
    } else {
        (1u64 << from) - 1
    };
    upto & !below
}

#[path = "control/sim_failure.rs"]
mod failure;

#[cfg(test)]
#[path = "sim_swift_tests.rs"]
mod swift_tests;

#[cfg(test)]
mod span_tests {
    use super::span;

    /// Against the bit-by-bit reference, for every range of up to 200 ports.
    #[test]
    fn span_holds_exactly_the_ports_of_the_range_in_the_word() {
        for lo in 0..200u32 {
            for hi in lo + 1..=200 {
                for w in lo / 64..hi.div_ceil(64) {
                    let want = (0..64)
                        .filter(|b| (lo..hi).contains(&(w * 64 + b)))
                        .fold(0u64, |m, b| m | 1 << b);
                    assert_eq!(span(w, lo, hi), want, "word {w} of {lo}..{hi}");
                }
            }
        }
    }
}
