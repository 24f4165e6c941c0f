//! The namespace rack: processes in network namespaces, veth links, TUN devices, and an
//! unmodified `ping` across it. Needs root, iproute2, /dev/net/tun and the built `shoal` binary;
//! where any is missing (CI may lack namespaces) the test says why and passes without running,
//! so look for the "skipped:" line.

use shoal_live::fabric::RackSpec;
use shoal_live::netns::{NetRack, NetRackSpec, read_counters, unavailable};
use std::path::PathBuf;
use std::time::Duration;

/// The `shoal` binary next to this test's, if it has been built.
fn shoal_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?;
    let bin = dir.join("shoal");
    bin.exists().then_some(bin)
}

#[test]
fn ping_crosses_a_rack_of_processes_in_namespaces() {
    if let Some(why) = unavailable() {
        println!("skipped: {why}");
        return;
    }
    let Some(exe) = shoal_binary() else {
        println!("skipped: the shoal binary is not built (cargo build -p shoal-cli)");
        return;
    };
    if std::process::Command::new("ping")
        .arg("-V")
        .output()
        .is_err()
    {
        println!("skipped: ping is not installed (scripts/install-live-deps.sh)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("shoal-live-netns-{}", std::process::id()));
    let rack = NetRack::up(NetRackSpec {
        rack: RackSpec {
            nodes: 4,
            channels: 1,
            switch_ports: 4,
            delay_slots: 1,
        },
        slot_ns: 500_000,
        grace_ns: 3_000_000_000,
        corrupt_prob: 0.0,
        seed: 1,
        pcap: false,
        backlog_bytes: 64 * 1024,
        prefix: format!("shoaltest{}", std::process::id() % 10_000),
        dir: dir.clone(),
        exe,
        startup_ns: 2_000_000_000,
    })
    .unwrap();
    std::thread::sleep(Duration::from_millis(2_500));
    let out = rack
        .command(0, "ping")
        .args(["-c", "3", "-W", "10", "10.0.0.3"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let counters: Vec<_> = (0..4).filter_map(|i| read_counters(&dir, i)).collect();
    rack.down().unwrap();
    assert!(text.contains(" 0% packet loss"), "{text}");
    assert_eq!(counters.len(), 4);
    for c in &counters {
        assert_eq!(c["driver"]["violations"], 0);
        assert_eq!(c["driver"]["crc_failures"], 0);
        assert_eq!(c["node_stats"]["peers_failed"], 0);
    }
    let _ = std::fs::remove_dir_all(dir);
}
