//! `[network]`: the packet-switched baselines of §7.3 (DCTCP, DCQCN, NDP, TCP on a Clos; any of
//! them on a fat-tree or torus). Defaults are the paper's PSN baseline: 512 hosts on a
//! full-bisection Clos at 50 Gb/s, 1500 B packets; DCTCP and DCQCN with ECMP, a window of 35
//! packets and queues of 100; NDP with spraying, an initial window of 35 and queues of 12.
//! DCTCP's switches mark ECN above a threshold, DCQCN's on the DCQCN paper's RED ramp.
//! R2C2 (baseline 1) defaults to the 8×8×8 torus with 100 Gb/s per node over its six links;
//! `path = "ecmp"` routes it in dimension order, `"spray"` over every minimal path.

use super::Ctx;
use crate::ScenarioError;
use crate::network::{NetworkSpec, TopologySpec};
use crate::raw::RawNetwork;
use shoal_base::{Dur, Rate};
use shoal_psn::config::PPM;
use shoal_psn::{Discipline, NetConfig, PathChoice, Pfc, Red, TransportSpec};
use shoal_transport::{DcqcnConfig, NdpConfig, R2c2Config, TcpConfig};

/// The fabrics `[network]` configures.
pub const PACKET_FABRICS: [&str; 5] = ["dctcp", "dcqcn", "ndp", "tcp", "r2c2"];

/// Defaults of the `[network]` keys (docs/scenarios.md lists them with their sources).
pub mod defaults {
    /// §7.3: "a 512-node packet-switched network ... Clos topology with full-bisection".
    pub const HOSTS: i64 = 512;
    /// Ours: 32-port switches give 32 leaves of 16 hosts and 16 spines for 512 hosts.
    pub const RADIX: i64 = 32;
    /// §7.3: "The interface bandwidth of each node is 50 Gbps".
    pub const LINK_GBPS: f64 = 50.0;
    /// Ours (the paper gives none): 100 ns per link, cable and switch latency together.
    pub const LINK_DELAY_NS: f64 = 100.0;
    /// §7.3: "We assume 1500 B packets for all of them".
    pub const PACKET_BYTES: i64 = 1500;
    /// Ours: TCP/IP headers; NDP trims to `CONTROL_BYTES`.
    pub const HEADER_BYTES: i64 = 40;
    /// Ours: acks, nacks, pulls and trimmed headers (htsim's NDP header size).
    pub const CONTROL_BYTES: i64 = 64;
    /// §7.3: queue size of 100 packets (DCTCP, DCQCN, TCP) and 12 packets (NDP).
    pub const QUEUE_PACKETS: i64 = 100;
    pub const NDP_QUEUE_PACKETS: i64 = 12;
    /// Ours (the paper gives none): ECN threshold of 20 full packets.
    pub const ECN_K: i64 = 20;
    /// The DCQCN paper's RED marking (§3.1): Kmin = 5 KB, Kmax = 200 KB, Pmax = 1%, KB read
    /// as 1024 bytes. §7.3's 100-packet queues hold less than Kmax, so there the ramp is cut
    /// off at about 0.7%.
    pub const RED_KMIN_BYTES: i64 = 5 * 1024;
    pub const RED_KMAX_BYTES: i64 = 200 * 1024;
    pub const RED_PMAX: f64 = 0.01;
    /// §7.3: "congestion window size of 35 packets" (DCTCP, DCQCN) and "initial window size of
    /// 35 packets" (NDP). We read the first as the window's size: DCTCP and TCP start at 35
    /// and never exceed it, DCQCN keeps at most 35 packets unacknowledged. Without a cap an
    /// unmarked long flow grows its window into its own host's unbounded NIC queue.
    pub const INITIAL_WINDOW: i64 = 35;
    pub const MAX_WINDOW: i64 = 35;
    /// Ours: 1 ms minimum retransmission timeout.
    pub const RTO_MIN_US: f64 = 1000.0;
    /// RFC 8257: g = 1/16.
    pub const DCTCP_G: f64 = 1.0 / 16.0;
    /// htsim's NDP example: pulls at 99% of the link.
    pub const PULL_PACING: f64 = 0.99;
    /// §7.3, baseline 1: "We arranged the 512 nodes into a 3D torus" (R2C2's default topology).
    pub const TORUS_SIDE: i64 = 8;
    /// §7.3: "an aggregate node bandwidth of 100 Gbps", over a torus node's 6 links.
    pub const TORUS_LINK_GBPS: f64 = 100.0 / 6.0;
    /// Ours: PFC pauses an ingress holding 50 full packets and resumes it at 45 (well above
    /// the ECN threshold, so DCQCN acts first, as the DCQCN paper intends).
    pub const PFC_XOFF_PACKETS: i64 = 50;
    pub const PFC_XON_PACKETS: i64 = 45;
}

/// Which keys each fabric takes beyond the common ones.
fn allowed(fabric: &str, key: &str) -> bool {
    match key {
        "ecn" | "ecn_k" | "ecn_marking" | "red_kmin_bytes" | "red_kmax_bytes" | "red_pmax" => {
            matches!(fabric, "dctcp" | "dcqcn")
        }
        "initial_window" => matches!(fabric, "dctcp" | "tcp" | "ndp"),
        "max_window" => matches!(fabric, "dctcp" | "tcp" | "dcqcn"),
        "rto_min_us" => matches!(fabric, "dctcp" | "tcp" | "ndp" | "r2c2"),
        "dctcp_g" => fabric == "dctcp",
        "pull_pacing" => fabric == "ndp",
        "pfc" | "pfc_xoff_packets" | "pfc_xon_packets" => fabric == "dcqcn",
        _ => true,
    }
}

/// DCQCN's RED marking from `red_kmin_bytes`, `red_kmax_bytes` and `red_pmax`. Without PFC a
/// queue holds at most `queue_bytes`, so Kmin must lie below it or nothing is ever marked;
/// Kmax may lie above it (the ramp is then cut off where the queue overflows).
fn red(
    ctx: &Ctx<'_>,
    raw: &RawNetwork,
    queue_bytes: u64,
    pfc: bool,
    at_dequeue: bool,
) -> Result<Discipline, ScenarioError> {
    use defaults as d;
    let kmin = ctx.int(
        "network.red_kmin_bytes",
        raw.red_kmin_bytes,
        d::RED_KMIN_BYTES,
        0,
        1 << 40,
    )? as u64;
    let kmax = ctx.int(
        "network.red_kmax_bytes",
        raw.red_kmax_bytes,
        d::RED_KMAX_BYTES,
        0,
        1 << 40,
    )? as u64;
    if kmax <= kmin {
        return Err(ctx.value(
            ctx.blame(&["network.red_kmax_bytes", "network.red_kmin_bytes"]),
            format!("{kmax} B is not above red_kmin_bytes = {kmin} B (RED needs kmin < kmax)"),
        ));
    }
    let pmax = ctx.num(
        "network.red_pmax",
        raw.red_pmax.unwrap_or(d::RED_PMAX),
        0.0,
        false,
    )?;
    let pmax_ppm = (pmax * PPM as f64).round();
    if pmax > 1.0 || pmax_ppm < 1.0 {
        return Err(ctx.value(
            "network.red_pmax",
            format!("{pmax} is not a probability in [1e-6, 1] (RED needs 0 < pmax <= 1)"),
        ));
    }
    if !pfc && kmin >= queue_bytes {
        return Err(ctx.value(
            "network.red_kmin_bytes",
            format!(
                "{kmin} B is not below the queue's {queue_bytes} B (queue_packets × packet_bytes): nothing would be marked"
            ),
        ));
    }
    Ok(Discipline::Red(Red {
        kmin_bytes: kmin,
        kmax_bytes: kmax,
        pmax_ppm: pmax_ppm as u32,
        at_dequeue,
    }))
}

pub(super) fn resolve(
    ctx: &Ctx<'_>,
    fabric: &str,
    raw: RawNetwork,
    seed: u64,
) -> Result<NetworkSpec, ScenarioError> {
    use defaults as d;
    let key = |k: &str| format!("network.{k}");
    let given: [(&str, bool); 15] = [
        ("ecn", raw.ecn.is_some()),
        ("red_kmin_bytes", raw.red_kmin_bytes.is_some()),
        ("red_kmax_bytes", raw.red_kmax_bytes.is_some()),
        ("red_pmax", raw.red_pmax.is_some()),
        ("pfc", raw.pfc.is_some()),
        ("pfc_xoff_packets", raw.pfc_xoff_packets.is_some()),
        ("pfc_xon_packets", raw.pfc_xon_packets.is_some()),
        ("max_window", raw.max_window.is_some()),
        ("ecn_k", raw.ecn_k.is_some()),
        ("ecn_marking", raw.ecn_marking.is_some()),
        ("initial_window", raw.initial_window.is_some()),
        ("rto_min_us", raw.rto_min_us.is_some()),
        ("dctcp_g", raw.dctcp_g.is_some()),
        ("pull_pacing", raw.pull_pacing.is_some()),
        ("path", false),
    ];
    for (k, present) in given {
        if present && !allowed(fabric, k) {
            return Err(ctx.value(&key(k), format!("the {fabric} fabric does not use {k}")));
        }
    }
    let r2c2 = fabric == "r2c2";
    let kind = raw
        .topology
        .as_deref()
        .unwrap_or(if r2c2 { "torus" } else { "leaf-spine" });
    let size = |k: &str, v: Option<i64>, default: Option<i64>| -> Result<u32, ScenarioError> {
        match (v, default) {
            (None, None) => Err(ctx.value(&key(k), format!("a {kind} topology needs network.{k}"))),
            (v, default) => Ok(ctx.int(&key(k), v, default.unwrap_or(0), 1, 65_535)? as u32),
        }
    };
    let unused = |pairs: &[(&str, bool)]| -> Result<(), ScenarioError> {
        match pairs.iter().find(|(_, present)| *present) {
            Some((k, _)) => Err(ctx.value(&key(k), format!("a {kind} topology does not use {k}"))),
            None => Ok(()),
        }
    };
    let topology = match kind {
        "leaf-spine" => {
            unused(&[
                ("k", raw.k.is_some()),
                ("oversubscription", raw.oversubscription.is_some()),
                ("x", raw.x.is_some()),
                ("y", raw.y.is_some()),
                ("z", raw.z.is_some()),
            ])?;
            TopologySpec::LeafSpine {
                hosts: size("hosts", raw.hosts, Some(d::HOSTS))?,
                radix: size("radix", raw.radix, Some(d::RADIX))?,
            }
        }
        "fat-tree" => {
            unused(&[
                ("hosts", raw.hosts.is_some()),
                ("radix", raw.radix.is_some()),
                ("x", raw.x.is_some()),
                ("y", raw.y.is_some()),
                ("z", raw.z.is_some()),
            ])?;
            TopologySpec::FatTree {
                k: size("k", raw.k, None)?,
                oversubscription: size("oversubscription", raw.oversubscription, Some(1))?,
            }
        }
        "torus" => {
            unused(&[
                ("hosts", raw.hosts.is_some()),
                ("radix", raw.radix.is_some()),
                ("k", raw.k.is_some()),
                ("oversubscription", raw.oversubscription.is_some()),
            ])?;
            let side = Some(d::TORUS_SIDE);
            TopologySpec::Torus {
                x: size("x", raw.x, side)?,
                y: size("y", raw.y, side)?,
                z: size("z", raw.z, side)?,
            }
        }
        other => {
            return Err(ctx.value(
                "network.topology",
                format!(
                    "unknown topology {other:?}; known: \"leaf-spine\", \"fat-tree\", \"torus\""
                ),
            ));
        }
    };
    if r2c2 && !matches!(topology, TopologySpec::Torus { .. }) {
        return Err(ctx.value(
            "network.topology",
            format!("the r2c2 fabric routes on a torus (§7.3, baseline 1), not a {kind}"),
        ));
    }
    let gbps = ctx.num(
        "network.link_gbps",
        raw.link_gbps.unwrap_or(if r2c2 {
            d::TORUS_LINK_GBPS
        } else {
            d::LINK_GBPS
        }),
        0.0,
        true,
    )?;
    let link_rate = Rate((gbps * 1e9).round() as u64);
    let link_delay = ctx.ns(
        "network.link_delay_ns",
        raw.link_delay_ns.unwrap_or(d::LINK_DELAY_NS),
        false,
    )?;
    let header = ctx.int(
        &key("header_bytes"),
        raw.header_bytes,
        d::HEADER_BYTES,
        1,
        4096,
    )? as u32;
    let packet = ctx.int(
        &key("packet_bytes"),
        raw.packet_bytes,
        d::PACKET_BYTES,
        2,
        65_535,
    )? as u32;
    if packet <= header {
        let (packet_key, header_key) = (key("packet_bytes"), key("header_bytes"));
        return Err(ctx.value(
            ctx.blame(&[&packet_key, &header_key]),
            format!(
                "a {packet} B packet ({packet_key}) leaves no payload after a {header} B header \
                 ({header_key}): the header must be smaller"
            ),
        ));
    }
    let control = ctx.int(
        &key("control_bytes"),
        raw.control_bytes,
        d::CONTROL_BYTES,
        1,
        4096,
    )? as u32;
    let mss = packet - header;
    let queue_default = if fabric == "ndp" {
        d::NDP_QUEUE_PACKETS
    } else {
        d::QUEUE_PACKETS
    };
    let queue = ctx.int(
        &key("queue_packets"),
        raw.queue_packets,
        queue_default,
        1,
        1 << 20,
    )? as u32;
    let path = match (raw.path.as_deref(), fabric) {
        (None, "ndp") | (Some("spray"), _) => PathChoice::Spray,
        (None, _) | (Some("ecmp"), _) => PathChoice::Ecmp,
        (Some(other), _) => {
            return Err(ctx.value(
                "network.path",
                format!("unknown path choice {other:?}; known: \"ecmp\", \"spray\""),
            ));
        }
    };
    let pfc_on = raw.pfc.unwrap_or(false);
    let discipline = match fabric {
        "ndp" => Discipline::Trim,
        "tcp" | "r2c2" => Discipline::DropTail,
        _ => {
            let at_dequeue = match raw.ecn_marking.as_deref() {
                None | Some("departure") => true,
                Some("arrival") => false,
                Some(other) => {
                    return Err(ctx.value(
                        "network.ecn_marking",
                        format!(
                            "unknown marking point {other:?}; known: \"departure\", \"arrival\""
                        ),
                    ));
                }
            };
            let mode = raw.ecn.as_deref().unwrap_or(if fabric == "dcqcn" {
                "red"
            } else {
                "threshold"
            });
            let refuse = |pairs: &[(&str, bool)]| -> Result<(), ScenarioError> {
                match pairs.iter().find(|(_, present)| *present) {
                    Some((k, _)) => {
                        Err(ctx.value(&key(k), format!("{mode:?} ECN marking does not use {k}")))
                    }
                    None => Ok(()),
                }
            };
            match mode {
                "threshold" => {
                    refuse(&[
                        ("red_kmin_bytes", raw.red_kmin_bytes.is_some()),
                        ("red_kmax_bytes", raw.red_kmax_bytes.is_some()),
                        ("red_pmax", raw.red_pmax.is_some()),
                    ])?;
                    let k = ctx.int(&key("ecn_k"), raw.ecn_k, d::ECN_K, 1, queue as i64)? as u32;
                    Discipline::Ecn { k, at_dequeue }
                }
                "red" => {
                    refuse(&[("ecn_k", raw.ecn_k.is_some())])?;
                    red(ctx, &raw, queue as u64 * packet as u64, pfc_on, at_dequeue)?
                }
                other => {
                    return Err(ctx.value(
                        "network.ecn",
                        format!("unknown ECN marking {other:?}; known: \"threshold\", \"red\""),
                    ));
                }
            }
        }
    };
    let pull_pacing = ctx.num(
        "network.pull_pacing",
        raw.pull_pacing.unwrap_or(d::PULL_PACING),
        0.0,
        true,
    )?;
    if pull_pacing > 1.0 {
        return Err(ctx.value(
            "network.pull_pacing",
            format!("{pull_pacing} is above 1: pulls cannot outpace the link"),
        ));
    }
    // The pacer works in whole percent (`NetConfig::pull_pacing`): refuse what it would round.
    let pull_percent = (pull_pacing * 100.0).round();
    if (pull_percent - pull_pacing * 100.0).abs() > 1e-9 || pull_percent < 1.0 {
        return Err(ctx.value(
            "network.pull_pacing",
            format!("{pull_pacing} is not a whole percent (0.01, 0.02, ..., 1)"),
        ));
    }
    let pfc = if pfc_on {
        let xoff = ctx.int(
            &key("pfc_xoff_packets"),
            raw.pfc_xoff_packets,
            d::PFC_XOFF_PACKETS,
            1,
            1 << 20,
        )? as u64;
        let xon = ctx.int(
            &key("pfc_xon_packets"),
            raw.pfc_xon_packets,
            d::PFC_XON_PACKETS.min(xoff as i64 - 1),
            0,
            xoff as i64 - 1,
        )? as u64;
        Some(Pfc {
            xoff_bytes: xoff * (mss + header) as u64,
            xon_bytes: xon * (mss + header) as u64,
        })
    } else {
        if raw.pfc_xoff_packets.is_some() || raw.pfc_xon_packets.is_some() {
            return Err(ctx.value(
                "network.pfc",
                "PFC thresholds are given but pfc is not true",
            ));
        }
        None
    };
    let net = NetConfig {
        pfc,
        discipline,
        queue_packets: queue,
        path,
        header_bytes: header,
        control_bytes: control,
        pull_pacing: pull_percent as u32,
        seed,
    };
    let window = ctx.int(
        &key("initial_window"),
        raw.initial_window,
        d::INITIAL_WINDOW,
        1,
        1 << 20,
    )? as u32;
    let max_window = ctx.int(
        &key("max_window"),
        raw.max_window,
        d::MAX_WINDOW,
        1,
        1 << 20,
    )? as u32;
    if matches!(fabric, "dctcp" | "tcp") && window > max_window {
        return Err(ctx.value(
            "network.initial_window",
            format!("{window} packets exceeds network.max_window = {max_window}"),
        ));
    }
    let rto_min = Dur(ctx.us(
        "network.rto_min_us",
        raw.rto_min_us.unwrap_or(d::RTO_MIN_US),
        true,
    )?);
    let transport = match fabric {
        "ndp" => TransportSpec::Ndp(NdpConfig {
            mss,
            initial_window: window,
            rto: rto_min,
        }),
        "r2c2" => TransportSpec::R2c2(R2c2Config {
            mss,
            header_bytes: header,
            rto: rto_min,
            ..R2c2Config::paper()
        }),
        "dcqcn" => TransportSpec::Dcqcn(DcqcnConfig {
            mss,
            header_bytes: header,
            max_window: Some(max_window),
            ..DcqcnConfig::paper(link_rate)
        }),
        _ => {
            let g_shift = if fabric == "dctcp" {
                let g = ctx.num(
                    "network.dctcp_g",
                    raw.dctcp_g.unwrap_or(d::DCTCP_G),
                    0.0,
                    true,
                )?;
                let shift = (-g.log2()).round();
                if !(1.0..=20.0).contains(&shift) || (g - (-shift).exp2()).abs() > 1e-12 {
                    return Err(ctx.value(
                        "network.dctcp_g",
                        format!("{g} is not a power of two from 1/2 to 1/2^20 (e.g. 0.0625)"),
                    ));
                }
                Some(shift as u32)
            } else {
                None
            };
            TransportSpec::Tcp(TcpConfig {
                mss,
                initial_window: window,
                max_window: Some(max_window),
                rto_min,
                rto_initial: rto_min,
                dctcp_g_shift: g_shift,
                dctcp_alpha_init: 1.0,
            })
        }
    };
    let spec = NetworkSpec {
        topology,
        link_rate,
        link_delay,
        net,
        transport,
    };
    net.validate().map_err(|e| ctx.value("network", e))?;
    let hosts_key = match topology {
        TopologySpec::LeafSpine { .. } => "network.hosts",
        TopologySpec::FatTree { .. } => "network.k",
        TopologySpec::Torus { .. } => "network.x",
    };
    spec.build_topology()
        .map_err(|e| ctx.value(hosts_key, e.0))?;
    if spec.topology.hosts() > u16::MAX as usize {
        return Err(ctx.value(hosts_key, "more hosts than node ids can name (65,535)"));
    }
    Ok(spec)
}
