//! The `[bootstrap]` table of an Aquila scenario: which TiNs reach the DCN and how long each
//! step of §4.4 takes. Read by `shoal repro aquila-bootstrap`; a `shoal run` starts from a
//! bootstrapped clique and does not use it.

use super::bootstrap::Timing;
use serde::Deserialize;
use shoal_base::Dur;
use shoal_fabric::config::{ConfigError, Keys, TableError, TomlOut, float, read_table, value};
use shoal_topology::{Dragonfly, NodeIdx};

/// The defaults, in seconds. The paper gives no step time, only the outcome: TiNs bootstrap
/// in 3 to 48 minutes, DCN-connected ones fastest, a full clique in about 2.5 hours. The
/// DCN-connected TiN's three steps are chosen to sum to its 3 minutes; the PMOS steps assume
/// that a TCP session needs a tenth of the routing state and that PMOS carries it ten times
/// slower than TCP (so `pmos_program` equals `tcp_program`, and the rest over TCP is 90% of
/// it). Fixed before the first run of `aquila-bootstrap`.
pub mod defaults {
    pub const DCN_DHCP_S: f64 = 10.0;
    pub const TCP_CONNECT_S: f64 = 20.0;
    pub const TCP_PROGRAM_S: f64 = 150.0;
    pub const PMOS_DHCP_S: f64 = 20.0;
    pub const PMOS_PROGRAM_S: f64 = 150.0;
    pub const TCP_PROGRAM_REST_S: f64 = 135.0;
    /// §4.4's example: TiNs 1 and 3 of pods 1 and k (here 0-based, k the last pod).
    pub const DCN_TINS_IN_POD: [u32; 2] = [0, 2];
}

/// Longest step time a scenario may give: a year, far inside what [`Dur`] counts.
const MAX_S: f64 = 3.2e7;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of bootstrap keys")]
struct RawBootstrap {
    dcn_tins: Option<Vec<[i64; 2]>>,
    dcn_dhcp_s: Option<f64>,
    tcp_connect_s: Option<f64>,
    tcp_program_s: Option<f64>,
    pmos_dhcp_s: Option<f64>,
    pmos_program_s: Option<f64>,
    tcp_program_rest_s: Option<f64>,
}

/// A resolved `[bootstrap]` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BootstrapSpec {
    /// The DCN-connected TiNs as (pod, TiN in pod), 0-based.
    pub dcn_tins: Vec<(u32, u32)>,
    pub timing: Timing,
}

impl BootstrapSpec {
    /// The defaults on `df`: §4.4's example of DCN-connected TiNs.
    pub fn paper(df: &Dragonfly) -> BootstrapSpec {
        use defaults as d;
        let secs = |s: f64| Dur::from_ps((s * 1e12) as u64);
        let mut pods = vec![0, df.pods - 1];
        pods.dedup();
        let dcn_tins = pods
            .into_iter()
            .flat_map(|p| {
                d::DCN_TINS_IN_POD
                    .iter()
                    .filter(|&&t| t < df.tins_per_pod)
                    .map(move |&t| (p, t))
            })
            .collect();
        BootstrapSpec {
            dcn_tins,
            timing: Timing {
                dcn_dhcp: secs(d::DCN_DHCP_S),
                tcp_connect: secs(d::TCP_CONNECT_S),
                tcp_program: secs(d::TCP_PROGRAM_S),
                pmos_dhcp: secs(d::PMOS_DHCP_S),
                pmos_program: secs(d::PMOS_PROGRAM_S),
                tcp_program_rest: secs(d::TCP_PROGRAM_REST_S),
            },
        }
    }

    /// The DCN-connected TiNs as topology indices.
    pub fn dcn_indices(&self, df: &Dragonfly) -> Vec<NodeIdx> {
        self.dcn_tins
            .iter()
            .map(|&(p, t)| p * df.tins_per_pod + t)
            .collect()
    }

    /// Reads the `[bootstrap]` table of `text` for the clique `df`; `None` when there is none.
    pub fn read(
        text: &str,
        keys: &Keys<'_>,
        df: &Dragonfly,
    ) -> Result<Option<BootstrapSpec>, TableError> {
        let Some(raw): Option<RawBootstrap> = read_table(text, "bootstrap")? else {
            return Ok(None);
        };
        use defaults as d;
        let paper = BootstrapSpec::paper(df);
        let secs = |key: &str, v: Option<f64>, default: f64| -> Result<Dur, ConfigError> {
            let s = keys.num(key, v.unwrap_or(default), 0.0, false)?;
            if s > MAX_S {
                return Err(value(
                    key,
                    format!("{s} s is out of range: at most {MAX_S} s"),
                ));
            }
            let ps = (s * 1e12).round();
            // A time that is not zero but rounds to it is a typo for a unit, not a time to
            // clamp (as `Keys::us` refuses it).
            if s > 0.0 && ps < 1.0 {
                return Err(value(key, format!("{s:e} s is below one picosecond")));
            }
            Ok(Dur::from_ps(ps as u64))
        };
        let dcn_tins = match raw.dcn_tins {
            None => paper.dcn_tins,
            Some(list) => {
                let key = "bootstrap.dcn_tins";
                if list.is_empty() {
                    return Err(value(key, "empty: the controller would reach no TiN").into());
                }
                let mut out: Vec<(u32, u32)> = Vec::with_capacity(list.len());
                for (i, [pod, tin]) in list.into_iter().enumerate() {
                    let key = format!("{key}[{i}]");
                    if pod < 0 || pod >= i64::from(df.pods) {
                        return Err(value(
                            &key,
                            format!(
                                "pod {pod} is not a pod of the clique (0 to {})",
                                df.pods - 1
                            ),
                        )
                        .into());
                    }
                    if tin < 0 || tin >= i64::from(df.tins_per_pod) {
                        return Err(value(
                            &key,
                            format!(
                                "TiN {tin} is not a TiN of a pod (0 to {})",
                                df.tins_per_pod - 1
                            ),
                        )
                        .into());
                    }
                    let at = (pod as u32, tin as u32);
                    if out.contains(&at) {
                        return Err(
                            value(&key, format!("pod {pod} TiN {tin} is listed twice")).into()
                        );
                    }
                    out.push(at);
                }
                out
            }
        };
        let timing = Timing {
            dcn_dhcp: secs("bootstrap.dcn_dhcp_s", raw.dcn_dhcp_s, d::DCN_DHCP_S)?,
            tcp_connect: secs(
                "bootstrap.tcp_connect_s",
                raw.tcp_connect_s,
                d::TCP_CONNECT_S,
            )?,
            tcp_program: secs(
                "bootstrap.tcp_program_s",
                raw.tcp_program_s,
                d::TCP_PROGRAM_S,
            )?,
            pmos_dhcp: secs("bootstrap.pmos_dhcp_s", raw.pmos_dhcp_s, d::PMOS_DHCP_S)?,
            pmos_program: secs(
                "bootstrap.pmos_program_s",
                raw.pmos_program_s,
                d::PMOS_PROGRAM_S,
            )?,
            tcp_program_rest: secs(
                "bootstrap.tcp_program_rest_s",
                raw.tcp_program_rest_s,
                d::TCP_PROGRAM_REST_S,
            )?,
        };
        Ok(Some(BootstrapSpec { dcn_tins, timing }))
    }

    /// The table as a scenario writes it.
    pub fn write_toml(&self, t: &mut TomlOut) {
        let s = |d: Dur| float(d.as_secs_f64());
        t.header("[bootstrap]");
        let list: Vec<String> = self
            .dcn_tins
            .iter()
            .map(|(p, i)| format!("[{p}, {i}]"))
            .collect();
        t.kv("dcn_tins", format!("[{}]", list.join(", ")));
        let tm = &self.timing;
        t.kv("dcn_dhcp_s", s(tm.dcn_dhcp));
        t.kv("tcp_connect_s", s(tm.tcp_connect));
        t.kv("tcp_program_s", s(tm.tcp_program));
        t.kv("pmos_dhcp_s", s(tm.pmos_dhcp));
        t.kv("pmos_program_s", s(tm.pmos_program));
        t.kv("tcp_program_rest_s", s(tm.tcp_program_rest));
    }
}
