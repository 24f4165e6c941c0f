//! The XFabric rack as a scenario names it: `fabric = "xfabric"` and its `[xfabric]` table. The
//! `topology` key picks what the rack's SoCs are wired as, so that one scenario file compares
//! XFabric with the topologies of §6.1 on identical flows: `"xfabric"` (d crosspoints, Algorithm
//! 1 every period), `"osa"` (one fully reconfigurable switch, OSA's b-matching every period),
//! `"torus"` (a static 3D torus) and `"random"` (a static random d-regular graph).

use crate::baselines::torus_sides;
use crate::fabric::XFabricRack;
use crate::rack::{Rack, RackSpec};
use serde::Deserialize;
use shoal_base::{Dur, Rate};
use shoal_fabric::config::{ConfigError, IntRule, Keys, TableError, TomlOut, read_table};
use shoal_fabric::config::{dur_ns, float, text, value};
use shoal_fabric::{Fabric, FabricKind, ResolvedFabric, Resolving};
use shoal_metrics::IdealFct;

/// Defaults of the `[xfabric]` keys.
pub mod defaults {
    /// The fabric under test; the others are §6.1's baselines.
    pub const TOPOLOGY: &str = "xfabric";
    /// §6.1: "a rack with 343 SoCs".
    pub const SOCS: i64 = 343;
    /// §6.1: d = 6 internal ports per SoC.
    pub const PORTS_PER_SOC: i64 = 6;
    /// §6.1: l = 8 uplinks.
    pub const UPLINKS: i64 = 8;
    /// §5 and §6.5: the SoCs' 10 Gb/s ports.
    pub const LINK_GBPS: f64 = 10.0;
    /// A hop through a SoC's packet switch and its cable. The paper gives none for the rack it
    /// proposes (the prototype's user-level software switch took about 10 µs); 1 µs is our
    /// choice for a switch in the SoC.
    pub const HOP_DELAY_NS: f64 = 1_000.0;
    /// §4: the rack "is reconfigured every second or so"; also the first reconfiguration, with
    /// the demand measured until then (the rack starts on Algorithm 1 of no demand).
    pub const PERIOD_MS: f64 = 1_000.0;
    /// §6.2: each flow split into f subflows, "f much larger than the number of paths".
    pub const SUBFLOWS: i64 = crate::flowsim::DEFAULT_SUBFLOWS as i64;
}

/// What the rack's SoCs are wired as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topology {
    /// XFabric: d crosspoints, Algorithm 1 on the measured demand every period.
    XFabric,
    /// OSA: one fully reconfigurable switch, a b-matching of the measured demand every period.
    Osa,
    /// A static 3D torus of the most cube-like sides (each at least 2).
    Torus,
    /// A static random d-regular graph drawn from the run seed.
    Random,
}

impl Topology {
    const NAMES: [(&'static str, Topology); 4] = [
        ("xfabric", Topology::XFabric),
        ("osa", Topology::Osa),
        ("torus", Topology::Torus),
        ("random", Topology::Random),
    ];

    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, t)| *t == self)
            .map(|(n, _)| *n)
            .expect("every topology is named")
    }

    /// Whether the controller rewires it every period.
    pub fn reconfigurable(self) -> bool {
        matches!(self, Topology::XFabric | Topology::Osa)
    }
}

const SOCS: IntRule = IntRule::new("xfabric.socs", 2, crate::graph::MAX_GRAPH_SOCS as i64 - 1);
const PORTS_PER_SOC: IntRule = IntRule::new("xfabric.ports_per_soc", 1, 64);
const UPLINKS: IntRule = IntRule::new("xfabric.uplinks", 1, u16::MAX as i64);
const SUBFLOWS: IntRule = IntRule::new("xfabric.subflows", 1, 4096);

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of xfabric keys")]
struct RawXFabric {
    topology: Option<String>,
    socs: Option<i64>,
    ports_per_soc: Option<i64>,
    uplinks: Option<i64>,
    link_gbps: Option<f64>,
    hop_delay_ns: Option<f64>,
    period_ms: Option<f64>,
    subflows: Option<i64>,
}

/// The rack a scenario describes, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct XFabricSpec {
    pub topology: Topology,
    pub socs: u16,
    pub ports_per_soc: u8,
    pub uplinks: u16,
    /// Rate of every circuit, each direction.
    pub link_rate: Rate,
    /// Latency of one hop.
    pub hop_delay: Dur,
    /// Between two reconfigurations (reconfigurable topologies only).
    pub period: Dur,
    pub subflows: u32,
    /// Seeds the cross-circuits, Algorithm 1's ties, the random graph and the path draws.
    pub seed: u64,
}

impl XFabricSpec {
    /// The rack of the crosspoint topologies (XFabric's; OSA and the static graphs take its
    /// sizes).
    pub fn rack(&self) -> Result<Rack, ConfigError> {
        Rack::new(
            RackSpec {
                socs: self.socs as usize,
                ports_per_soc: self.ports_per_soc as usize,
                uplinks: self.uplinks as usize,
            },
            self.seed,
        )
        .map_err(|e| value("xfabric.uplinks", e.to_string()))
    }

    /// Checks every rule the values obey (`keys`: which the file gives, to blame the right one).
    pub fn validate(&self, keys: &Keys<'_>) -> Result<(), ConfigError> {
        SOCS.check(self.socs as i64)?;
        PORTS_PER_SOC.check(self.ports_per_soc as i64)?;
        UPLINKS.check(self.uplinks as i64)?;
        SUBFLOWS.check(self.subflows as i64)?;
        if self.link_rate.0 == 0 {
            return Err(value(
                "xfabric.link_gbps",
                "below 1 b/s: a link must carry something",
            ));
        }
        if self.period.0 == 0 && self.topology.reconfigurable() {
            return Err(value(
                "xfabric.period_ms",
                "a reconfigurable rack needs a period above zero",
            ));
        }
        let (n, d) = (self.socs as usize, self.ports_per_soc as usize);
        let sizes = || keys.blame(&["xfabric.ports_per_soc", "xfabric.socs"]);
        match self.topology {
            Topology::XFabric | Topology::Osa => {
                self.rack().map_err(|e| {
                    value(keys.blame(&["xfabric.uplinks", "xfabric.socs"]), e.reason)
                })?;
                if self.topology == Topology::Osa && d < 2 {
                    return Err(value(
                        "xfabric.ports_per_soc",
                        "OSA needs at least 2 ports per SoC to be connected",
                    ));
                }
            }
            Topology::Torus => {
                if d != 6 {
                    return Err(value(
                        "xfabric.ports_per_soc",
                        format!("a 3D torus uses 6 ports per SoC, not {d}"),
                    ));
                }
                if torus_sides(n).0 < 2 {
                    return Err(value(
                        "xfabric.socs",
                        format!("{n} SoCs are no x * y * z with every side at least 2"),
                    ));
                }
            }
            Topology::Random => {
                if d >= n || (n * d) % 2 == 1 {
                    return Err(value(
                        sizes(),
                        format!("no {d}-regular graph on {n} SoCs (needs d < n, n * d even)"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The registry's entry for the XFabric rack.
pub struct Kind;

impl FabricKind for Kind {
    fn names(&self) -> &'static [&'static str] {
        &["xfabric"]
    }

    fn tables(&self) -> &'static [&'static str] {
        &["xfabric"]
    }

    fn resolve(&self, input: &Resolving<'_>) -> Result<Box<dyn ResolvedFabric>, TableError> {
        use defaults as d;
        let keys = input.keys;
        let raw: RawXFabric = read_table(input.text, "xfabric")?.unwrap_or_default();
        let name = raw.topology.as_deref().unwrap_or(d::TOPOLOGY);
        let topology = Topology::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                value(
                    "xfabric.topology",
                    format!("unknown topology {name:?}; known: xfabric, osa, torus, random"),
                )
            })?;
        let link_rate = keys.gbps("xfabric.link_gbps", raw.link_gbps.unwrap_or(d::LINK_GBPS))?;
        let period_ms = keys.num(
            "xfabric.period_ms",
            raw.period_ms.unwrap_or(d::PERIOD_MS),
            0.0,
            false,
        )?;
        let spec = XFabricSpec {
            topology,
            socs: SOCS.read(raw.socs, d::SOCS)?,
            ports_per_soc: PORTS_PER_SOC.read(raw.ports_per_soc, d::PORTS_PER_SOC)?,
            uplinks: UPLINKS.read(raw.uplinks, d::UPLINKS)?,
            link_rate,
            hop_delay: keys.ns(
                "xfabric.hop_delay_ns",
                raw.hop_delay_ns.unwrap_or(d::HOP_DELAY_NS),
                false,
            )?,
            // A period may be longer than a second (`Keys::ns` bounds delays at one).
            period: Dur(keys.us("xfabric.period_ms", period_ms * 1e3, false)?),
            subflows: SUBFLOWS.read(raw.subflows, d::SUBFLOWS)?,
            seed: input.seed,
        };
        spec.validate(keys)?;
        Ok(Box::new(spec))
    }
}

impl ResolvedFabric for XFabricSpec {
    fn name(&self) -> &str {
        "xfabric"
    }

    fn nodes(&self) -> usize {
        self.socs as usize
    }

    /// A SoC's d ports together: what a flow split over disjoint paths can reach.
    fn node_rate(&self) -> Rate {
        Rate(self.link_rate.0 * self.ports_per_soc as u64)
    }

    /// A lower bound on a lone flow's FCT: its bytes at the SoC's d ports together, after one
    /// hop. No flow-level run beats it (a slowdown is at least 1).
    fn ideal_fct(&self) -> Result<IdealFct, ConfigError> {
        Ok(IdealFct {
            rate_bps: self.node_rate().0 as f64,
            base_latency: self.hop_delay,
            header_overhead: 0.0,
        })
    }

    /// A fluid model queues nothing: its queue statistics are zero.
    fn queue_unit(&self) -> &'static str {
        "bytes"
    }

    fn reseed(&mut self, seed: u64) {
        self.seed = seed;
    }

    fn write_toml(&self, t: &mut TomlOut) {
        t.header("[xfabric]");
        t.kv("topology", text(self.topology.name()));
        t.kv("socs", self.socs);
        t.kv("ports_per_soc", self.ports_per_soc);
        t.kv("uplinks", self.uplinks);
        t.kv("link_gbps", float(self.link_rate.0 as f64 / 1e9));
        t.kv("hop_delay_ns", dur_ns(self.hop_delay));
        t.kv("period_ms", float(self.period.0 as f64 / 1e9));
        t.kv("subflows", self.subflows);
    }

    fn build(&self) -> Result<Box<dyn Fabric>, ConfigError> {
        self.validate(&shoal_fabric::config::NO_KEYS)?;
        Ok(Box::new(XFabricRack::new(self.clone())))
    }
}
