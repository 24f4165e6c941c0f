//! The ideal switch as a scenario names it: `fabric = "ideal-switch"` and its `[switch]` table.

use crate::IdealSwitch;
use serde::Deserialize;
use shoal_base::{Dur, Rate};
use shoal_fabric::config::{ConfigError, IntRule, Keys, TableError, TomlOut, read_table};
use shoal_fabric::config::{dur_ns, float, value};
use shoal_fabric::{Fabric, FabricKind, ResolvedFabric, Resolving};
use shoal_metrics::IdealFct;

/// Defaults of the `[switch]` keys: the host links of §7.3's packet baselines, so that the
/// floor is drawn for the same hosts the baselines have.
pub mod defaults {
    /// §7.3: 512 nodes.
    pub const HOSTS: i64 = 512;
    /// §7.3: "The interface bandwidth of each node is 50 Gbps".
    pub const LINK_GBPS: f64 = 50.0;
    /// The packet baselines' choice (the paper gives none): 100 ns per link.
    pub const LINK_DELAY_NS: f64 = 100.0;
    /// §7.3: 1500 B packets.
    pub const PACKET_BYTES: i64 = 1500;
    /// The packet baselines' TCP/IP headers.
    pub const HEADER_BYTES: i64 = 40;
}

const HOSTS: IntRule = IntRule::new("switch.hosts", 2, u16::MAX as i64);
const PACKET_BYTES: IntRule = IntRule::new("switch.packet_bytes", 2, 65_535);
const HEADER_BYTES: IntRule = IntRule::new("switch.header_bytes", 0, 4096);

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of switch keys")]
struct RawSwitch {
    hosts: Option<i64>,
    link_gbps: Option<f64>,
    link_delay_ns: Option<f64>,
    packet_bytes: Option<i64>,
    header_bytes: Option<i64>,
}

/// The switch a scenario describes.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchSpec {
    pub hosts: u16,
    /// Rate of every link (each host's, and each switch port's).
    pub link_rate: Rate,
    /// Propagation delay of each link, host to switch or switch to host.
    pub link_delay: Dur,
    /// Full packet on the wire, header included.
    pub packet_bytes: u32,
    pub header_bytes: u32,
}

impl SwitchSpec {
    /// Payload bytes per full packet.
    pub fn mss(&self) -> u32 {
        self.packet_bytes - self.header_bytes
    }

    /// Checks every rule the values obey (`keys`: which the file gives, to blame the right one).
    pub fn validate(&self, keys: &Keys<'_>) -> Result<(), ConfigError> {
        HOSTS.check(self.hosts as i64)?;
        PACKET_BYTES.check(self.packet_bytes as i64)?;
        HEADER_BYTES.check(self.header_bytes as i64)?;
        if self.link_rate.0 == 0 {
            return Err(value(
                "switch.link_gbps",
                "below 1 b/s: a link must carry something",
            ));
        }
        if self.header_bytes >= self.packet_bytes {
            return Err(value(
                keys.blame(&["switch.header_bytes", "switch.packet_bytes"]),
                format!(
                    "a {} B packet leaves no payload after a {} B header",
                    self.packet_bytes, self.header_bytes
                ),
            ));
        }
        Ok(())
    }
}

/// The registry's entry for the ideal switch.
pub struct Kind;

impl FabricKind for Kind {
    fn names(&self) -> &'static [&'static str] {
        &["ideal-switch"]
    }

    fn tables(&self) -> &'static [&'static str] {
        &["switch"]
    }

    fn resolve(&self, input: &Resolving<'_>) -> Result<Box<dyn ResolvedFabric>, TableError> {
        use defaults as d;
        let keys = input.keys;
        let raw: RawSwitch = read_table(input.text, "switch")?.unwrap_or_default();
        let link_rate = keys.gbps("switch.link_gbps", raw.link_gbps.unwrap_or(d::LINK_GBPS))?;
        let spec = SwitchSpec {
            hosts: HOSTS.read(raw.hosts, d::HOSTS)?,
            link_rate,
            link_delay: keys.ns(
                "switch.link_delay_ns",
                raw.link_delay_ns.unwrap_or(d::LINK_DELAY_NS),
                false,
            )?,
            packet_bytes: PACKET_BYTES.read(raw.packet_bytes, d::PACKET_BYTES)?,
            header_bytes: HEADER_BYTES.read(raw.header_bytes, d::HEADER_BYTES)?,
        };
        spec.validate(keys)?;
        Ok(Box::new(spec))
    }
}

impl ResolvedFabric for SwitchSpec {
    fn name(&self) -> &str {
        "ideal-switch"
    }

    fn nodes(&self) -> usize {
        self.hosts as usize
    }

    fn node_rate(&self) -> Rate {
        self.link_rate
    }

    /// A lower bound on a lone flow's FCT, tight to within one packet's serialization: its
    /// n = ⌈B / mss⌉ packets leave the host back to back, (B + n·h) / R, and the last is
    /// serialized once more by the switch (store and forward) after two propagation delays.
    /// Since n·h ≥ B·h / mss and the last packet holds at least its header, B·(1 + h/mss) / R
    /// + 2·d + h / R never exceeds that: a slowdown on this switch is at least 1.
    fn ideal_fct(&self) -> Result<IdealFct, ConfigError> {
        let header = self.link_rate.serialize(self.header_bytes as u64);
        Ok(IdealFct {
            rate_bps: self.link_rate.0 as f64,
            base_latency: Dur(2 * self.link_delay.0 + header.0),
            header_overhead: self.header_bytes as f64 / self.mss() as f64,
        })
    }

    fn queue_unit(&self) -> &'static str {
        "packets"
    }

    fn write_toml(&self, t: &mut TomlOut) {
        t.header("[switch]");
        t.kv("hosts", self.hosts);
        t.kv("link_gbps", float(self.link_rate.0 as f64 / 1e9));
        t.kv("link_delay_ns", dur_ns(self.link_delay));
        t.kv("packet_bytes", self.packet_bytes);
        t.kv("header_bytes", self.header_bytes);
    }

    fn build(&self) -> Result<Box<dyn Fabric>, ConfigError> {
        self.validate(&shoal_fabric::config::NO_KEYS)?;
        Ok(Box::new(IdealSwitch::new(self.clone())))
    }
}
