//! The simulator against the live rack: the same node in the same order per slot, so the slot
//! counts must agree exactly, however late the live slots ran.

use shoal_live::compare::{compare, default_scenario};

#[test]
fn the_live_rack_completes_every_flow_in_the_slot_the_simulator_does() {
    let c = compare(&default_scenario(300_000), 1).unwrap();
    assert_eq!(c.live_violations, 0);
    assert_eq!(c.live_mismatches, 0);
    assert!(c.slots_agree(), "{}", c.markdown());
}
