//! The serializable report of `shoal schedule --json`.

use serde_json::Value;
use shoal_schedule::{Arrangement, FabricSpec, schedule_report};

fn json(nodes: usize, ports: usize, channels: usize, arrangement: Arrangement) -> Value {
    let spec = FabricSpec {
        nodes,
        channels,
        arrangement,
        delay_slots: Some(0),
    };
    serde_json::to_value(schedule_report(spec, ports).unwrap()).unwrap()
}

#[test]
fn the_prototype_report_lists_the_fabric_the_switches_and_the_verdict() {
    let r = json(8, 4, 1, Arrangement::Cyclic);
    assert_eq!(r["nodes"], 8);
    assert_eq!(r["ports"], 4);
    assert_eq!(r["arrangement"], "cyclic");
    assert_eq!(r["epoch_slots"], 7);
    assert_eq!(r["delay_slots"], 0);
    assert_eq!(r["clos"]["leaves"], 4);
    assert_eq!(r["clos"]["spines"], 2);
    let slot0 = &r["fabric"][0];
    assert_eq!(slot0["slot"], 0);
    assert_eq!(
        slot0["channels"][0]["peers"],
        serde_json::json!([1, 2, 3, 4, 5, 6, 7, 0])
    );
    let switches = r["switches"].as_array().unwrap();
    assert_eq!(switches.len(), 6);
    assert_eq!(
        switches[0]["switch"],
        serde_json::json!({"plane": 0, "kind": {"leaf": 0}})
    );
    assert_eq!(
        switches[5]["switch"]["kind"],
        serde_json::json!({"spine": 1})
    );
    for s in switches {
        let slots = s["slots"].as_array().unwrap();
        assert_eq!(slots.len(), 7);
        assert!(slots.iter().all(|m| m.as_array().unwrap().len() == 4));
    }
    // Leaf 0, slot 0 (shift by one, uplink = (destination port + 0) mod 2): node 0 -> 1 goes
    // up on 2 + 1, node 1 -> 2 on 2 + 0; 7 -> 0 comes back down on 2 + 0, 0 -> 1 on 2 + 1.
    assert_eq!(switches[0]["slots"][0], serde_json::json!([3, 2, 0, 1]));
    assert_eq!(r["verdict"]["pairs_checked"], 56);
    assert_eq!(r["verdict"]["min_turnaround"], 0);
}

#[test]
fn idle_slots_are_null_and_the_report_is_deterministic() {
    let r = json(6, 4, 2, Arrangement::PropagationAware);
    let peers = &r["fabric"][0]["channels"][0]["peers"];
    // Offset 1 mod 7: node 5 would send to the virtual node 6.
    assert_eq!(peers, &serde_json::json!([1, 2, 3, 4, 5, null]));
    assert_eq!(r["arrangement"], "propagation-aware");
    let a = serde_json::to_string(&json(12, 6, 2, Arrangement::PropagationAware)).unwrap();
    let b = serde_json::to_string(&json(12, 6, 2, Arrangement::PropagationAware)).unwrap();
    assert_eq!(a, b);
}
