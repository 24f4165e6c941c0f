//! Stardust's Fig. 11 (§7, Appendix A, Appendix D): the cost and power of a data-center
//! network of Fabric Adapters and Fabric Elements against fat-trees of ToR-class switches
//! with their links bundled 1, 2 or 4 to a port (25G, 50G, 100G), for the same hosts.
//!
//! §7's assumptions, each a field: 25G serial links; a ToR and a Fabric Adapter platform cost
//! the same, a Fabric Element platform 0.67 of that (the silicon-area ratio of Fig. 10(d));
//! 40 servers per ToR/adapter on direct-attach cables, no over-subscription; 100 m fibres in
//! the last tier (except in a one-tier network) and 10 m fibres in every other. Devices and
//! links per ToR follow Appendix A's Table 2 ([`shoal_stardust::models::fat_tree`]): an n-tier
//! network of radix-k switches with t bundles up from each ToR has (2n − 1)·t/k switches and
//! n·t bundles per ToR and holds up to d·k^n/2^(n−1) hosts; a network of fewer hosts takes
//! the fewest tiers that hold them and its share of devices.
//!
//! The paper's price list (Appendix D, Table 3: list prices of September 2018) and its power
//! table (Fig. 10(d)) did not survive the extraction; the prices and watts here are ours,
//! stated in their fields, so the figures are relative, as the paper's are.

use crate::error::{SizingError, check_range};
use serde::Serialize;
use shoal_stardust::models::{element_table_bits, ethernet_table_bits, fat_tree, hosts};

/// Fig. 11's inputs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct StardustCostSpec {
    /// §7: "25G as the link speed".
    pub lane_gbps: f64,
    /// Ours: a device of 128 serial links of 25G (3.2 Tb/s, the 2018 generation of both the
    /// ToR and the Fabric Element silicon).
    pub device_lanes: u32,
    /// §7: 40 servers per ToR or adapter, each on one lane.
    pub servers_per_tor: u32,
    /// §7: a Fabric Element platform costs 0.67 of a ToR (Fig. 10(d)'s area per Tb/s).
    pub fe_cost_ratio: f64,
    /// Ours: a Fabric Element draws the same share of a ToR's power as its area (Fig. 10(d)'s
    /// power column is lost).
    pub fe_power_ratio: f64,
    /// Ours: a ToR or adapter platform, dollars.
    pub tor_usd: f64,
    /// Ours: a transceiver of 1, 2 and 4 lanes (25G SFP28 SR, 50G, 100G QSFP28 SR4), dollars.
    pub transceiver_usd: [f64; 3],
    /// Ours: a fibre cable costs this per fibre-metre (two fibres a lane) plus its connectors.
    pub fibre_usd_per_m: f64,
    pub cable_connectors_usd: f64,
    /// Ours: a server's direct-attach cable, dollars.
    pub dac_usd: f64,
    /// §7: fibre lengths in the last tier and in the others, metres.
    pub last_tier_m: f64,
    pub other_tier_m: f64,
    /// Ours: a ToR platform's power (§7: "from 150W to 310W" across vendors; the middle).
    pub tor_watts: f64,
    /// Ours: a transceiver of 1, 2 and 4 lanes, watts.
    pub transceiver_watts: [f64; 3],
}

impl Default for StardustCostSpec {
    fn default() -> StardustCostSpec {
        StardustCostSpec {
            lane_gbps: 25.0,
            device_lanes: 128,
            servers_per_tor: 40,
            fe_cost_ratio: 0.67,
            fe_power_ratio: 0.67,
            tor_usd: 10_000.0,
            transceiver_usd: [100.0, 200.0, 350.0],
            fibre_usd_per_m: 0.15,
            cable_connectors_usd: 10.0,
            dac_usd: 40.0,
            last_tier_m: 100.0,
            other_tier_m: 10.0,
            tor_watts: 230.0,
            transceiver_watts: [1.0, 1.5, 3.5],
        }
    }
}

/// The most tiers a network is sized to.
const MAX_TIERS: u32 = 6;

/// One network for a host count.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NetworkCost {
    /// Lanes per link bundle (1 for Stardust, whose links are never bundled).
    pub bundle: u32,
    pub stardust: bool,
    pub tiers: u32,
    pub tors: u64,
    /// Switches above the ToRs (Fabric Elements in Stardust), and their ports.
    pub switches: u64,
    pub radix: u32,
    /// Link bundles between devices, and the transceivers at their ends.
    pub bundles: u64,
    pub transceivers: u64,
    pub cost_usd: f64,
    /// The devices above the ToRs with their links (the "network fabric" of §7's power).
    pub fabric_watts: f64,
    /// ToRs and switches; and with every transceiver.
    pub devices_watts: f64,
    pub total_watts: f64,
    /// Appendix C: the lookup table each switch above the ToRs holds, bits: an exact-match
    /// IPv4 entry per host in a fat-tree's switch, an entry per adapter in a Fabric Element.
    pub table_bits: f64,
}

/// Sizes the network of `hosts` hosts, Stardust or a fat-tree with links bundled `bundle`
/// lanes to a port.
pub fn network(
    spec: &StardustCostSpec,
    host_count: usize,
    stardust: bool,
    bundle: u32,
) -> Result<NetworkCost, SizingError> {
    check_range("stardust_lane_gbps", spec.lane_gbps, 1e-3, 1e6)?;
    check_range("stardust_fe_cost_ratio", spec.fe_cost_ratio, 0.0, 100.0)?;
    check_range("stardust_fe_power_ratio", spec.fe_power_ratio, 0.0, 100.0)?;
    for (key, v) in [
        ("stardust_tor_usd", spec.tor_usd),
        ("stardust_fibre_usd_per_m", spec.fibre_usd_per_m),
        ("stardust_cable_connectors_usd", spec.cable_connectors_usd),
        ("stardust_dac_usd", spec.dac_usd),
        ("stardust_last_tier_m", spec.last_tier_m),
        ("stardust_other_tier_m", spec.other_tier_m),
        ("stardust_tor_watts", spec.tor_watts),
    ] {
        check_range(key, v, 0.0, 1e12)?;
    }
    let slot = match bundle {
        1 => 0,
        2 => 1,
        4 => 2,
        _ => {
            return Err(SizingError::new(
                "stardust_bundle",
                format!("links bundle 1, 2 or 4 lanes, not {bundle}"),
            ));
        }
    };
    for v in [spec.transceiver_usd[slot], spec.transceiver_watts[slot]] {
        check_range("stardust_transceiver", v, 0.0, 1e12)?;
    }
    let d = spec.servers_per_tor;
    if d == 0 || 2 * d > spec.device_lanes {
        return Err(SizingError::new(
            "stardust_servers_per_tor",
            format!(
                "a ToR of {} lanes holds 1 to {} servers with as many lanes up, not {d}",
                spec.device_lanes,
                spec.device_lanes / 2
            ),
        ));
    }
    if host_count < 2 {
        return Err(SizingError::new(
            "nodes",
            "a network needs at least two hosts",
        ));
    }
    let radix = spec.device_lanes / bundle;
    let t = (d / bundle).max(1) as f64;
    let k = radix as f64;
    let tiers = (1..=MAX_TIERS)
        .find(|&n| hosts(n, k, d as f64) >= host_count as f64)
        .ok_or_else(|| {
            SizingError::new(
                "nodes",
                format!(
                    "{host_count} hosts need more than {MAX_TIERS} tiers of {radix}-port \
                     devices"
                ),
            )
        })?;
    let per_tor = fat_tree(tiers, k, t, bundle as f64);
    let tors = host_count.div_ceil(d as usize) as u64;
    let switches = (per_tor.switches_per_tor * tors as f64).ceil() as u64;
    let bundles = tiers as u64 * t as u64 * tors;
    let transceivers = 2 * bundles;
    let last_tier = if tiers > 1 { t as u64 * tors } else { 0 };
    let cable = |m: f64| spec.cable_connectors_usd + spec.fibre_usd_per_m * m * 2.0 * bundle as f64;
    let fibres_usd = last_tier as f64 * cable(spec.last_tier_m)
        + (bundles - last_tier) as f64 * cable(spec.other_tier_m);
    let (switch_usd, switch_watts) = if stardust {
        (
            spec.fe_cost_ratio * spec.tor_usd,
            spec.fe_power_ratio * spec.tor_watts,
        )
    } else {
        (spec.tor_usd, spec.tor_watts)
    };
    let optics_watts = transceivers as f64 * spec.transceiver_watts[slot];
    let cost_usd = tors as f64 * spec.tor_usd
        + switches as f64 * switch_usd
        + transceivers as f64 * spec.transceiver_usd[slot]
        + fibres_usd
        + host_count as f64 * spec.dac_usd;
    // The fabric: the switches above the ToRs and the optics of every link but the ToRs' own
    // ends of the first tier.
    let fabric_optics = (transceivers - t as u64 * tors) as f64 * spec.transceiver_watts[slot];
    let fabric_watts = switches as f64 * switch_watts + fabric_optics;
    let devices_watts = tors as f64 * spec.tor_watts + switches as f64 * switch_watts;
    Ok(NetworkCost {
        bundle,
        stardust,
        tiers,
        tors,
        switches,
        radix,
        bundles,
        transceivers,
        cost_usd,
        fabric_watts,
        devices_watts,
        total_watts: devices_watts + optics_watts,
        // An element's links stay unbundled whatever its transceivers carry: its table names
        // one of all its lanes.
        table_bits: if stardust {
            element_table_bits(host_count as f64, d as f64, spec.device_lanes as f64)
        } else {
            ethernet_table_bits(host_count as f64, k)
        },
    })
}

/// Stardust and the fat-trees of 25G, 50G and 100G links for `hosts` hosts.
///
/// Stardust's links are unbundled, so its tiers are those of 25G links; but "if a network can
/// be constructed with a similar number of tiers using, e.g., 400G and 100G transceivers, then
/// Stardust supports building the network using the least expensive option" (§7): its cost is
/// the least over the bundlings that need no more tiers.
pub fn compare(spec: &StardustCostSpec, hosts: usize) -> Result<[NetworkCost; 4], SizingError> {
    let fat = [
        network(spec, hosts, false, 1)?,
        network(spec, hosts, false, 2)?,
        network(spec, hosts, false, 4)?,
    ];
    let mut best = network(spec, hosts, true, 1)?;
    for bundle in [2, 4] {
        let n = network(spec, hosts, true, bundle)?;
        if n.tiers == best.tiers && n.cost_usd < best.cost_usd {
            best = n;
        }
    }
    Ok([best, fat[0], fat[1], fat[2]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_table_2() {
        let s = StardustCostSpec::default();
        // One tier of 128-port elements holds 40 x 128 = 5,120 hosts; 128 adapters of 40
        // uplinks need 40 elements, 5,120 bundles.
        let n = network(&s, 5_120, true, 1).unwrap();
        assert_eq!(
            (n.tiers, n.tors, n.switches, n.bundles),
            (1, 128, 40, 5_120)
        );
        // 100G bundles: radix 32, t = 10; one tier holds 1,280, two tiers 40 x 32^2 / 2.
        let f = network(&s, 5_120, false, 4).unwrap();
        assert_eq!((f.radix, f.tiers), (32, 2));
        // 3 t / k switches per ToR: 128 x 3 x 10 / 32 = 120; 2 t bundles per ToR.
        assert_eq!((f.switches, f.bundles), (120, 2_560));
        assert_eq!(network(&s, 20_481, false, 4).unwrap().tiers, 3);
        assert_eq!(network(&s, 20_480, false, 4).unwrap().tiers, 2);
    }

    #[test]
    fn stardust_is_the_cheapest_fat_tree_of_its_tiers_with_element_prices() {
        // With elements priced and powered as ToRs, Stardust is the cheapest fat-tree among
        // those with as few tiers as the 25G one.
        let s = StardustCostSpec {
            fe_cost_ratio: 1.0,
            fe_power_ratio: 1.0,
            ..StardustCostSpec::default()
        };
        for h in [100, 1_000, 5_000, 20_000, 50_000, 400_000] {
            let [sd, fat @ ..] = compare(&s, h).unwrap();
            let same = fat.iter().filter(|f| f.tiers == fat[0].tiers);
            let cheapest = same
                .min_by(|a, b| a.cost_usd.total_cmp(&b.cost_usd))
                .unwrap();
            assert_eq!(sd.tiers, fat[0].tiers, "{h} hosts");
            assert_eq!(sd.cost_usd, cheapest.cost_usd, "{h} hosts");
            assert_eq!(sd.total_watts, cheapest.total_watts);
        }
        // At 0.67, against the fat-tree of its own bundling, the saving is exactly a third of
        // the elements' price.
        let d = StardustCostSpec::default();
        let [sd, fat @ ..] = compare(&d, 50_000).unwrap();
        let ft = fat.iter().find(|f| f.bundle == sd.bundle).unwrap();
        let saved = ft.cost_usd - sd.cost_usd;
        assert!((saved - 0.33 * d.tor_usd * sd.switches as f64).abs() < 1e-9 * saved);
    }

    #[test]
    fn cost_grows_with_the_hosts_and_a_tier_adds_links() {
        let s = StardustCostSpec::default();
        let mut last = [0.0; 4];
        for h in (1..200).map(|i| i * 977) {
            let c = compare(&s, h).unwrap();
            for (i, n) in c.iter().enumerate() {
                assert!(n.cost_usd > last[i], "{h} hosts, network {i}");
                last[i] = n.cost_usd;
                // Table 2: n t bundles per ToR.
                assert_eq!(n.bundles, n.tiers as u64 * (40 / n.bundle) as u64 * n.tors);
            }
        }
    }

    #[test]
    fn element_tables_hold_adapters_and_switch_tables_hosts() {
        let s = StardustCostSpec::default();
        let [sd, fat @ ..] = compare(&s, 20_000).unwrap();
        // 500 adapters of 40 servers, a link of 128 (7 bits) each, however they are carried.
        let bits = |radix: u32| f64::from(radix).log2().ceil();
        assert_eq!(sd.table_bits, 500.0 * 7.0);
        for f in fat {
            assert_eq!(f.table_bits, 20_000.0 * (32.0 + bits(f.radix)));
            assert!(f.table_bits > 40.0 * sd.table_bits);
        }
    }

    #[test]
    fn bad_inputs_name_their_key() {
        let s = StardustCostSpec::default();
        assert_eq!(
            network(&s, 1000, false, 3).unwrap_err().key,
            "stardust_bundle"
        );
        assert_eq!(network(&s, 1, true, 1).unwrap_err().key, "nodes");
        let bad = StardustCostSpec {
            fe_cost_ratio: f64::NAN,
            ..s
        };
        assert_eq!(
            network(&bad, 100, true, 1).unwrap_err().key,
            "stardust_fe_cost_ratio"
        );
        let wide = StardustCostSpec {
            servers_per_tor: 65,
            ..s
        };
        assert_eq!(
            network(&wide, 100, true, 1).unwrap_err().key,
            "stardust_servers_per_tor"
        );
    }
}
