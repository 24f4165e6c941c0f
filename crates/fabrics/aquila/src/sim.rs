//! The clique on the discrete-event engine: TiN cell switches (per-VC input FIFOs, iSLIP
//! crossbar, per-(port, VC) output queues, output scheduling), GNet links with credit-based
//! link-level flow control, and hosts that cut IP packets into cells.
//!
//! # Layout, along the paper's parts
//!
//! This file holds the state, its construction and the event dispatch: the switch part's
//! state ([`Switch`]), the host driver's ([`HostDriver`]), and what both use (the routing
//! tables, the calendar, the counters). The behaviour is in
//! - `sim/switch.rs`: the TiN switch and the GNet links (a cell's hop, below);
//! - `sim/hosts.rs`: the host driver: the hosts' links into their TiNs, the cells delivered
//!   to them, Swift's pacing, the workloads; it drives
//! - `sim/ipgnet.rs`: IP over GNet at the hosts and their TiNs' egress (§3.3), and
//! - `sim/rma.rs`: 1RMA at the hosts (§3.4);
//! - `control/sim_failure.rs`: link failures and the SDN's table updates.
//!
//! The host driver sees the rest only through a [`Ctx`] (calendar, counters, switch), and the
//! switch calls the driver at one place (an endpoint FIFO's credit); `Sim::handle` gives the
//! hosts' events to the driver. So the rebuilt switch data path (issue 38) can replace the
//! switch part alone: [`Switch`], `sim/switch.rs`, and the three calls the driver makes of
//! it (`Switch::alloc_cell`, `Switch::launch`, and reading and freeing a delivered cell).
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
//! ready, when a crossing ends, and when an output sends a cell from a VC whose fullness held
//! a routed head; one queued event per TiN and time at most. A request iSLIP leaves
//! unmatched is presented again at the next crossing end (the round matched another).
//!
//! What the data path does not make events of (issue 38): a link's end is a busy-until time,
//! looked at by the output's next `Send`, queued only while cells wait; a TiN-to-TiN credit
//! is a record landing at a known time (`shoal_cellnet::Landings`), read by the sender when it
//! next looks, which a credit wakes only if the sender waits for it (a host and its endpoint
//! port's credits alike); a crossing's end is known when the cell is matched, so its FIFO
//! space is accounted then and its round queued.
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
use shoal_base::{Dur, Rate, Time};
use shoal_cellnet::{Fifos, Handles, Landings};
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
    /// Output port `port` may send: its link frees, a head cell becomes ready, or a credit it
    /// waits for lands.
    Send {
        port: u32,
    },
    /// An endpoint credit host `host` waits for lands (credits are records, not events:
    /// `shoal_cellnet::Landings`; one wakes its sender only if the sender waits for it).
    HostCredit {
        host: u32,
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
pub const EVENT_KINDS: [&str; 12] = [
    "arrive",
    "arbitrate",
    "send",
    "host_credit",
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
            Ev::Send { .. } => 2,
            Ev::HostCredit { .. } => 3,
            Ev::HostSend { .. } => 4,
            Ev::Eject { .. } => 5,
            Ev::Lookup { .. } => 6,
            Ev::Completion { .. } => 7,
            Ev::Serve { .. } => 8,
            Ev::Pace { .. } => 9,
            Ev::Resend { .. } => 10,
            Ev::Bulk { .. } => 11,
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

/// What the switch reads and writes of a cell at each hop (no payload bytes: DESIGN.md
/// principle 7), in the switch's column indexed by the cell's handle. What only the hosts read,
/// at ejection, is a [`Load`] in the host driver's column, so a hop never loads it.
#[derive(Clone, Copy, Debug)]
struct Cell {
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
    non_minimal: bool,
}

/// The host driver's part of a cell: what it is, what it carries, when it was injected.
#[derive(Clone, Copy, Debug)]
struct Load {
    kind: Kind,
    /// Packet bytes it carries (data cells).
    carried: u8,
    /// The packet it belongs to (data) or is about (RTS, CTS, CTD): the ingress slot.
    packet: u32,
    injected: Time,
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
    words: u32,
}

/// One output VC of a port: its queue, the words queued and the credits of the far input's
/// FIFO of that VC, in one record for the same reason.
#[derive(Clone, Copy, Debug)]
struct OutVc {
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
    /// When its first data cell left its host, and for an acknowledgement, when the acked
    /// packet's did: the start of the RTT without the admission's wait (Fig. 6's other reading).
    data_at: Time,
    ack_data_at: Time,
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
    /// Credits of the endpoint port's FIFO, per class of cell; the classes its last try to
    /// send found short of credit (a credit for one of them wakes it when it lands), and the
    /// time of that wake, if one is queued.
    credits: [u32; CLASSES_USED],
    credit_wait: u32,
    credit_wake: Option<Time>,
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

/// The simulator's state: the switch part, the host driver, and what both use (the tables,
/// the event calendar, the counters).
pub(crate) struct Sim<'a> {
    spec: &'a Spec,
    router: Router,
    q: Calendar<Ev>,
    pub(crate) counters: Counters,
    /// The TiN switches and the GNet links (`sim/switch.rs`).
    sw: Switch,
    /// The hosts and their protocols (`sim/hosts.rs`, `sim/ipgnet.rs`, `sim/rma.rs`).
    pub(crate) hd: HostDriver<'a>,
}

/// The switch part's state: ports, VC FIFOs and queues, arbiters, the cells in the fabric.
pub(crate) struct Switch {
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
    /// Per port: until when its input is crossing a cell, and that cell's VC and words, which
    /// its FIFO holds until then (the space and the credit are freed at the crossing's end).
    in_busy: Vec<Time>,
    crossing: Vec<(u8, u8)>,
    xbar_out_busy: Vec<Time>,
    /// Per input port, the VCs whose head a round found routed to a crossbar output still
    /// crossing another cell; rounds skip them until that crossing has ended (a round at or
    /// after its end releases them first). Per output port, those heads (input FIFO index
    /// `port · VCS + VC`), and per TiN, its outputs with any. Skipping is exact: such a head
    /// has no side effect in a round but to be passed over, its route stays, and only a
    /// crossing (which needs its request) or a failure (which releases every head of the TiN)
    /// changes it.
    xbar_wait: Vec<u32>,
    xbar_waiters: Vec<Vec<u32>>,
    waiting_outs: Vec<Vec<u32>>,
    /// Per port: when its output link has finished sending its last cell; the time of the
    /// output's next `Send`, if one is queued.
    link_until: Vec<Time>,
    send_at: Vec<Option<Time>>,
    /// Per port: the credits in flight back to its sender, and the VCs its last look found
    /// with a ready head and too little credit (a credit for one of them wakes the output
    /// when it lands).
    landings: Landings,
    credit_wait: Vec<u32>,
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
    /// Per TiN, the ends of its crossings still to come: each is a round (the input and the
    /// crossbar output free then), never superseded by an earlier wake.
    arb_done: Vec<Vec<Time>>,
    /// Per output port: the VCs whose queue a routed head found too full in a round. Only a
    /// cell leaving one of them can let such a head go: that send wakes the TiN. (A request
    /// iSLIP left unmatched needs no wake of its own: the round matched another, whose
    /// crossing's end is a round.)
    space_wait: Vec<u32>,
    /// The TiN whose arbitration round is running, and whether an output of it freed space a
    /// head waits for during the round (the wake then follows the round).
    in_round: Option<u32>,
    round_freed: bool,
    islip: Vec<Islip>,
    /// The cells in the fabric: their handles, and the switch's column of them.
    handles: Handles,
    cells: Vec<Cell>,
    /// The cells queued: input FIFO (port, VC) is queue `port · VCS + VC`, output queue
    /// (port, VC) the same index plus `out_queues`.
    fifos: Fifos,
    out_queues: u32,
    rng: StreamRng,
    cand: Candidates,
    requests: Vec<Request>,
    req_ports: Vec<(u32, u32)>,
    matched: Vec<usize>,
    /// Per port: low-latency data cells sent since the last bulk one.
    high_run: Vec<u8>,
    /// Per port: its link has failed (`control/sim_failure.rs`); how many links have.
    down: Vec<bool>,
    down_links: u32,
    /// The fall-through time after a cell's head before it may request the crossbar.
    fall_through: Dur,
}

/// The host driver's state: every host, its packets, flows and reads, Swift's connections,
/// the TiNs' IP egress, and what the hosts measured.
pub(crate) struct HostDriver<'a> {
    spec: &'a Spec,
    packets: Vec<Packet>,
    free_packets: Vec<u32>,
    hosts: Vec<Host>,
    /// Per TiN, IP over GNet's egress (empty in raw-cell mode).
    egress: Vec<Egress>,
    flows: Vec<FlowState>,
    /// Packets complete at their destination but waiting for an earlier one of their flow.
    held: BTreeMap<(u32, u32), u32>,
    measure_from: Time,
    /// Packets delivered in order: (flow, payload bytes, time), drained by the caller.
    pub(crate) delivered: Vec<(u32, u32)>,
    /// Fabric RTTs of the packets whose acknowledgement came back after `measure_from`.
    /// Histograms, not lists: a long run's memory does not grow with its packets and cells.
    pub(crate) rtts: LatencyHistogram,
    /// The same RTTs counted from the packet's first data cell leaving its host.
    pub(crate) data_rtts: LatencyHistogram,
    /// Per RTT, its time in IP over GNet's admission: RTS out to first data cell out, for the
    /// packet and for its acknowledgement.
    pub(crate) admissions: LatencyHistogram,
    /// Per cell handle, the host's part of the cell (`Load`).
    loads: Vec<Load>,
    /// Per host, the endpoint credits on their way back to it (the FIFO's space freed when a
    /// crossing ends), by class.
    landings: Landings,
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
    /// Bulk IP beside the lookups, its arrivals per host, and the payload it delivered.
    bulk: Option<Bulk>,
    bulk_clients: Vec<Client>,
    pub(crate) bulk_delivered: u64,
}

/// What the host driver reaches of the rest of the simulator: the event calendar, the
/// counters, and the switch (a host puts its cells on its endpoint port, takes delivered ones).
pub(crate) struct Ctx<'s> {
    q: &'s mut Calendar<Ev>,
    counters: &'s mut Counters,
    sw: &'s mut Switch,
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
                credit_wait: 0,
                credit_wake: None,
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
            router,
            q: Calendar::new(),
            counters: Counters::default(),
            sw: Switch {
                base,
                tin,
                far,
                is_endpoint,
                rate,
                delay,
                in_cap,
                in_busy: vec![Time::ZERO; ports],
                crossing: vec![(0, 0); ports],
                xbar_out_busy: vec![Time::ZERO; ports],
                xbar_wait: vec![0; ports],
                xbar_waiters: vec![Vec::new(); ports],
                waiting_outs: vec![Vec::new(); tins as usize],
                link_until: vec![Time::ZERO; ports],
                send_at: vec![None; ports],
                landings: Landings::new(ports),
                credit_wait: vec![0; ports],
                rr: vec![0; ports],
                in_mask: vec![0; ports],
                in_ports: vec![0; ports.div_ceil(64)],
                out_mask: vec![0; ports],
                vin: vec![
                    InVc {
                        head: NO_HEAD,
                        words: 0,
                    };
                    ports * VCS
                ],
                vout,
                arb_at: vec![None; tins as usize],
                arb_queued: (0..tins).map(|_| Vec::with_capacity(4)).collect(),
                arb_done: (0..tins).map(|_| Vec::with_capacity(4)).collect(),
                space_wait: vec![0; ports],
                in_round: None,
                round_freed: false,
                islip,
                handles: Handles::new(),
                cells: Vec::new(),
                fifos: Fifos::new(2 * ports * VCS),
                out_queues: (ports * VCS) as u32,
                rng: stream(spec.seed, "aquila.routing", 0),
                cand: Candidates::default(),
                requests: Vec::new(),
                req_ports: Vec::new(),
                matched: Vec::new(),
                high_run: vec![0; ports],
                down: vec![false; ports],
                down_links: 0,
                fall_through: spec.fall_through,
            },
            hd: HostDriver {
                spec,
                egress,
                packets: Vec::new(),
                free_packets: Vec::new(),
                hosts,
                flows: Vec::new(),
                held: BTreeMap::new(),
                measure_from,
                delivered: Vec::new(),
                rtts: LatencyHistogram::new(),
                data_rtts: LatencyHistogram::new(),
                admissions: LatencyHistogram::new(),
                loads: Vec::new(),
                landings: Landings::new((tins * hpt) as usize),
                cell_latencies: None,
                reads: Vec::new(),
                lookups: None,
                rpcs: Vec::new(),
                conns: BTreeMap::new(),
                rma_conns: BTreeMap::new(),
                data_class: 0,
                resp_class: 0,
                bulk: None,
                bulk_clients: Vec::new(),
                bulk_delivered: 0,
            },
        })
    }

    pub(crate) fn hosts(&self) -> u32 {
        self.hd.hosts()
    }

    /// The host driver and what it reaches of the rest: disjoint borrows of the simulator.
    fn driver(&mut self) -> (&mut HostDriver<'a>, Ctx<'_>) {
        let cx = Ctx {
            q: &mut self.q,
            counters: &mut self.counters,
            sw: &mut self.sw,
        };
        (&mut self.hd, cx)
    }

    /// Hands host `host` a flow (record `flow`, `bytes` of payload for host `dst`) to send.
    pub(crate) fn add_flow(&mut self, now: Time, host: u32, flow: u32, bytes: u64, dst: u32) {
        let (hd, mut cx) = self.driver();
        hd.add_flow(&mut cx, now, host, flow, bytes, dst);
    }

    /// Starts every host on synthetic traffic.
    pub(crate) fn start_saturation(&mut self, source: &Source) {
        let (hd, mut cx) = self.driver();
        hd.start_saturation(&mut cx, source);
    }

    /// Starts CliqueMap lookups on every host.
    pub(crate) fn start_lookups(&mut self, lookups: Lookups) {
        let (hd, mut cx) = self.driver();
        hd.start_lookups(&mut cx, lookups);
    }

    /// Starts bulk IP beside the lookups, arriving until `until`.
    pub(crate) fn start_bulk(&mut self, bulk: Bulk, until: Time) {
        let (hd, mut cx) = self.driver();
        hd.start_bulk(&mut cx, bulk, until);
    }

    /// A 1RMA read command at `initiator`'s engine now, without a window.
    #[cfg(test)]
    pub(crate) fn issue_read(&mut self, now: Time, initiator: u32, target: u32, bytes: u32) {
        let (hd, mut cx) = self.driver();
        hd.issue_read(&mut cx, now, initiator, target, bytes);
    }

    /// The reads issued at or after `from`, as records.
    pub(crate) fn read_records(&self, from: Time) -> Vec<ReadRecord> {
        self.hd.read_records(from)
    }

    /// The lookups by IP RPC issued at or after `from`, as records.
    pub(crate) fn rpc_records(&self, from: Time) -> Vec<RpcRecord> {
        self.hd.rpc_records(from)
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
                let t = tin as usize;
                let queued = &mut self.sw.arb_queued[t];
                let i = queued.iter().position(|&t| t == now).expect("queued");
                queued.swap_remove(i);
                let done = &mut self.sw.arb_done[t];
                let crossing_ended = done
                    .iter()
                    .position(|&t| t == now)
                    .map(|i| done.swap_remove(i));
                if self.sw.arb_at[t] == Some(now) || crossing_ended.is_some() {
                    // A round now stands for any later wake: the round's end asks again.
                    self.sw.arb_at[t] = None;
                    self.arbitrate(now, tin);
                }
            }
            Ev::Send { port } => {
                if self.sw.send_at[port as usize] == Some(now) {
                    self.sw.send_at[port as usize] = None;
                }
                self.try_send(now, port);
            }
            ev => {
                let (hd, mut cx) = self.driver();
                hd.handle(&mut cx, now, ev, source);
            }
        }
    }

    /// Whether every credit is back where it started and every FIFO empty.
    pub(crate) fn at_rest(&self) -> bool {
        let now = self.q.now();
        let crossing = (0..self.sw.far.len()).any(|p| self.sw.in_busy[p] > now);
        let fifos = !crossing
            && self.sw.vin.iter().all(|q| q.words == 0)
            && self.sw.vout.iter().all(|q| q.words == 0);
        let credits = (0..self.sw.far.len()).all(|p| {
            let mut have: [u32; VCS] = std::array::from_fn(|v| self.sw.vout[p * VCS + v].credits);
            for c in self.sw.landings.in_flight(p as u32) {
                have[c.vc as usize] += c.n;
            }
            self.sw.is_endpoint[p]
                || self.sw.down[p]
                || have
                    .iter()
                    .all(|&c| c == self.sw.in_cap[self.sw.far[p] as usize])
        });
        let hosts = self.hd.hosts.iter().enumerate().all(|(i, h)| {
            let mut have = h.credits;
            for c in self.hd.landings.in_flight(i as u32) {
                have[c.vc as usize] += c.n;
            }
            have.iter().all(|&c| c == self.spec.endpoint_vc_words)
                && h.announced == 0
                && h.control.is_empty()
                && h.resps.is_empty()
                && h.ahead.is_empty()
                && h.waiting.is_empty()
                && h.pending_reads.is_empty()
                && h.flows.is_empty()
        });
        let conns = self
            .hd
            .conns
            .values()
            .chain(self.hd.rma_conns.values())
            .all(|c| c.inflight_bytes == 0);
        let egress = self.hd.egress.iter().all(|e| {
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

mod hosts;
mod ipgnet;
mod rma;
mod switch;

#[path = "control/sim_failure.rs"]
mod failure;

#[cfg(test)]
#[path = "sim_swift_tests.rs"]
mod swift_tests;
