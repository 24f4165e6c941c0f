//! The `[failure]` table of an Aquila scenario: links that fail under synthetic load and the
//! controller's delay before the SDN removes them. Run by `shoal repro aquila-failure`
//! ([`super::failure::fail_links`]); a `shoal run` refuses it, since flows would stall on the
//! cells lost with a link (the transports here resend only what a CTD drops). Any link may
//! fail, the last between two TiNs or two pods too (its cells then take the escape VCs,
//! `crate::escape`), as long as the links left connect the clique and the header's hop count
//! (`clique.hop_limit`) covers the longest route of the tables without them.

use super::failure::LinkFailure;
use crate::routing::{LevelRule, Router};
use serde::Deserialize;
use shoal_base::{Dur, Time};
use shoal_fabric::config::{Keys, TableError, TomlOut, dur_us, read_table, time_us, value};
use shoal_topology::{Dragonfly, DragonflyPort};

/// The defaults. The paper gives no controller delay; a real SDN reacts in milliseconds, far
/// beyond what a cell-level run can cover, so we take 10 µs: long enough for the cells queued
/// behind a failed link to wait for the new tables, short enough that the run sees the time
/// after it. 12 packets per host keep the clique loaded past both (about 30 µs at 25 Gb/s).
pub mod defaults {
    pub const SDN_DELAY_US: f64 = 10.0;
    pub const PACKETS: i64 = 12;
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a link: { tin, port, at_us }")]
struct RawLink {
    tin: i64,
    port: i64,
    at_us: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of failure keys")]
struct RawFailure {
    links: Option<Vec<RawLink>>,
    sdn_delay_us: Option<f64>,
    packets: Option<i64>,
}

/// A resolved `[failure]` table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FailureSpec {
    pub links: Vec<LinkFailure>,
    pub sdn_delay: Dur,
    /// Packets each host sends (uniform random destinations, at its full rate).
    pub packets: u64,
}

impl FailureSpec {
    /// Reads the `[failure]` table of `text` for the clique `df` whose cells start with
    /// `hop_limit` hops; `None` when there is none. Every link must exist, the links left
    /// must connect the clique, and no route of the tables may be longer than `hop_limit`.
    pub fn read(
        text: &str,
        keys: &Keys<'_>,
        df: &Dragonfly,
        hop_limit: u8,
    ) -> Result<Option<FailureSpec>, TableError> {
        let Some(raw): Option<RawFailure> = read_table(text, "failure")? else {
            return Ok(None);
        };
        let topo = df
            .build()
            .map_err(|e| value("failure.links", format!("the clique does not build: {e}")))?;
        let mut router = Router::new(df, &topo, LevelRule::AfterEveryGlobal);
        let list = raw.links.ok_or_else(|| keys.missing("failure.links"))?;
        if list.is_empty() {
            return Err(value("failure.links", "empty: no link fails").into());
        }
        let mut links = Vec::with_capacity(list.len());
        for (i, l) in list.into_iter().enumerate() {
            let key = format!("failure.links[{i}]");
            if l.tin < 0 || l.tin >= i64::from(df.tins()) {
                return Err(value(
                    &key,
                    format!(
                        "TiN {} is not a TiN of the clique (0 to {})",
                        l.tin,
                        df.tins() - 1
                    ),
                )
                .into());
            }
            let tin = l.tin as u32;
            let ports = topo.ports(tin);
            if l.port < 0 || l.port >= ports as i64 {
                return Err(value(
                    &key,
                    format!(
                        "TiN {tin} has {ports} network ports: port {} does not exist",
                        l.port
                    ),
                )
                .into());
            }
            let port = l.port as u32;
            router.remove_link(tin, port).map_err(|e| value(&key, e))?;
            let longest = router.longest_route();
            if longest > u16::from(hop_limit) {
                return Err(value(
                    "clique.hop_limit",
                    format!(
                        "{hop_limit} hops: without the link of {key} a route of the tables \
                         may take up to {longest} (escape routes included), so its cells \
                         would be dropped; set it to at least {longest}"
                    ),
                )
                .into());
            }
            let at = keys.us(&format!("{key}.at_us"), l.at_us, false)?;
            links.push(LinkFailure {
                at: Time(at),
                tin,
                port,
            });
        }
        let sdn_delay = Dur(keys.us(
            "failure.sdn_delay_us",
            raw.sdn_delay_us.unwrap_or(defaults::SDN_DELAY_US),
            false,
        )?);
        let packets = keys.int(
            "failure.packets",
            raw.packets,
            defaults::PACKETS,
            1,
            1 << 20,
        )? as u64;
        Ok(Some(FailureSpec {
            links,
            sdn_delay,
            packets,
        }))
    }

    /// The table as a scenario writes it.
    pub fn write_toml(&self, df: &Dragonfly, t: &mut TomlOut) {
        t.header("[failure]");
        let links: Vec<String> = self
            .links
            .iter()
            .map(|l| {
                let kind = match df.port_kind(l.tin, l.port) {
                    DragonflyPort::Local { .. } => "local",
                    DragonflyPort::Global { .. } => "global",
                };
                format!(
                    "{{ tin = {}, port = {}, at_us = {} }},  # {kind}",
                    l.tin,
                    l.port,
                    time_us(l.at)
                )
            })
            .collect();
        t.line("links = [");
        for l in links {
            t.line(&format!("  {l}"));
        }
        t.line("]");
        t.kv("sdn_delay_us", dur_us(self.sdn_delay));
        t.kv("packets", self.packets);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Spec;
    use shoal_fabric::config::NO_KEYS;

    /// Both links between TiNs 5 and 4 of a 9 x 4 clique with two of each: the last ones.
    const LAST: &str = "[failure]\nlinks = [\n  { tin = 5, port = 0, at_us = 1.0 },\n  \
                        { tin = 5, port = 1, at_us = 1.0 },\n]\n";

    fn clique() -> Dragonfly {
        Dragonfly {
            pods: 9,
            tins_per_pod: 4,
            local_links: 2,
            global_links: 2,
            local_ports: 6,
            global_ports: 4,
            ..Spec::aquila().dragonfly
        }
    }

    fn error(text: &str, hop_limit: u8) -> String {
        match FailureSpec::read(text, &NO_KEYS, &clique(), hop_limit) {
            Err(TableError::Config(e)) => e.to_string(),
            other => panic!("{other:?}"),
        }
    }

    /// The limit must cover the longest route of every table on the way, and no more.
    #[test]
    fn the_last_link_needs_a_hop_limit_for_the_escape_routes() {
        let df = clique();
        let topo = df.build().unwrap();
        let mut r = Router::new(&df, &topo, LevelRule::AfterEveryGlobal);
        r.remove_link(5, 0).unwrap();
        let first = r.longest_route();
        r.remove_link(5, 1).unwrap();
        let need = first.max(r.longest_route()) as u8;
        assert!(need > crate::spec::defaults::HOP_LIMIT, "{need}");
        let e = error(LAST, need - 1);
        assert!(
            e.starts_with(&format!("clique.hop_limit: {} hops", need - 1)),
            "{e}"
        );
        assert!(e.contains("failure.links[1]"), "{e}");
        let f = FailureSpec::read(LAST, &NO_KEYS, &df, need)
            .unwrap()
            .unwrap();
        assert_eq!(f.links.len(), 2);
        assert_eq!(f.packets, defaults::PACKETS as u64);
    }

    #[test]
    fn a_link_that_cuts_a_tin_off_is_refused_by_key() {
        // Every one of TiN 7's ten links (six local, four global).
        let links: String = (0..10)
            .map(|p| format!("{{ tin = 7, port = {p}, at_us = 1.0 }},"))
            .collect();
        let e = error(&format!("[failure]\nlinks = [{links}]\n"), 63);
        assert!(e.starts_with("failure.links[9]: "), "{e}");
        assert!(e.contains("no working path between TiN 0 and TiN 7"), "{e}");
    }
}
