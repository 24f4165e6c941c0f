//! An 8-node (or any size) live rack of processes in network namespaces: one namespace per node
//! and one for the switch, joined by veth pairs; in each node's namespace a TUN device carries
//! the kernel's IP packets (`tun.rs`). Everything is created with iproute2's `ip` and removed
//! on the way out (also if the rack is dropped on an error).
//!
//! Layout, with prefix `shoal` (`--prefix`):
//!
//! ```text
//!  namespace shoal-n<i>                         namespace shoal-sw
//!  shoal0 (TUN) 10.0.0.<i+1>/24                 switch process, UDP port 9000
//!  fab0 10.201.<i>.2/24  <== veth pair ==>      sw<i> 10.201.<i>.1/24
//!  node process: UDP 10.201.<i>.2:9000
//! ```
//!
//! Each process reads the rack's parameters from one JSON file ([`ProcConfig`]) and writes its
//! counters, events and capture under the run folder.

use crate::clock::{SlotClock, now_ns};
use crate::driver::{Driver, DriverSpec, Stop};
use crate::fabric::{LiveFabric, RackSpec};
use crate::switch::{SwitchSpec, run_switch};
use crate::tun::{DEVICE, Tun, TunHost, node_ip};
use serde::{Deserialize, Serialize};
use shoal_base::NodeId;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

/// The UDP port of every cell link.
const PORT: u16 = 9000;

/// Bytes of payload arena per node process.
const ARENA_BYTES: usize = 32 << 20;

/// What every process of a namespace rack reads.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProcConfig {
    pub rack: RackSpec,
    pub slot_ns: u64,
    /// `CLOCK_MONOTONIC` ns at which slot 0 begins.
    pub t0_ns: u64,
    pub grace_ns: u64,
    pub corrupt_prob: f64,
    pub seed: u64,
    pub pcap: bool,
    /// Per node: the most bytes it holds submitted but unsent before dropping IP packets.
    pub backlog_bytes: u64,
    /// Per node: its address, and the switch's address on its link.
    pub node_addrs: Vec<SocketAddr>,
    pub switch_addrs: Vec<SocketAddr>,
    /// The run folder: `rack.json`, `stop_slot` (the slot at which the nodes stop),
    /// `stop_switch` (written once they have), `node<i>/`, `switch/`.
    pub dir: PathBuf,
}

impl ProcConfig {
    pub fn load(path: &Path) -> io::Result<ProcConfig> {
        let text = std::fs::read_to_string(path)?;
        serde_json::from_str(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    fn clock(&self) -> SlotClock {
        SlotClock {
            t0_ns: self.t0_ns,
            slot_ns: self.slot_ns,
        }
    }

    fn fabric(&self) -> io::Result<Arc<LiveFabric>> {
        LiveFabric::new(self.rack.clone())
            .map(Arc::new)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
    }

    fn stop(&self) -> Stop {
        Stop::File(self.dir.join("stop_slot"))
    }
}

/// Runs `ip` with `args`; an error names the command and what `ip` said.
fn ip(args: &[&str]) -> io::Result<()> {
    let out = Command::new("ip").args(args).output()?;
    if out.status.success() {
        return Ok(());
    }
    Err(io::Error::other(format!(
        "ip {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// The most nodes a namespace rack has: they are numbered 10.0.0.1 to 10.0.0.250.
pub const MAX_NODES: u16 = 250;

/// Why this machine cannot host a namespace rack, if it cannot: the tests and the CLI say so
/// instead of failing obscurely.
pub fn unavailable() -> Option<String> {
    if !nix::unistd::geteuid().is_root() {
        return Some("network namespaces and TUN devices need root".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("iproute2's `ip` is not installed (scripts/install-live-deps.sh)".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing (no TUN support)".into());
    }
    let probe = format!("shoal-probe-{}", std::process::id());
    if let Err(e) = ip(&["netns", "add", &probe]) {
        return Some(format!("cannot create a network namespace: {e}"));
    }
    let _ = ip(&["netns", "del", &probe]);
    None
}

/// The parameters of a namespace rack.
#[derive(Clone, Debug)]
pub struct NetRackSpec {
    pub rack: RackSpec,
    pub slot_ns: u64,
    pub grace_ns: u64,
    pub corrupt_prob: f64,
    pub seed: u64,
    pub pcap: bool,
    pub backlog_bytes: u64,
    /// Names: `<prefix>-sw`, `<prefix>-n<i>`.
    pub prefix: String,
    pub dir: PathBuf,
    /// The `shoal` binary, run as `shoal live node` and `shoal live switch` in the namespaces.
    pub exe: PathBuf,
    /// Time from start-up to slot 0, for the processes to start and create their devices.
    pub startup_ns: u64,
}

/// A running namespace rack.
pub struct NetRack {
    pub spec: NetRackSpec,
    pub config: ProcConfig,
    switch: Option<Child>,
    nodes: Vec<Option<Child>>,
}

impl NetRack {
    pub fn node_ns(&self, i: usize) -> String {
        format!("{}-n{i}", self.spec.prefix)
    }

    fn switch_ns(prefix: &str) -> String {
        format!("{prefix}-sw")
    }

    /// Creates the namespaces, links and processes; slot 0 begins `startup_ns` later.
    pub fn up(spec: NetRackSpec) -> io::Result<NetRack> {
        let n = spec.rack.nodes as usize;
        if n > MAX_NODES as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the namespace rack numbers nodes 10.0.0.1-250",
            ));
        }
        remove_namespaces(&spec.prefix);
        std::fs::create_dir_all(&spec.dir)?;
        let _ = std::fs::remove_file(spec.dir.join("stop_slot"));
        let _ = std::fs::remove_file(spec.dir.join("stop_switch"));
        let sw = Self::switch_ns(&spec.prefix);
        let mut rack = NetRack {
            config: ProcConfig {
                rack: spec.rack.clone(),
                slot_ns: spec.slot_ns,
                t0_ns: 0,
                grace_ns: spec.grace_ns,
                corrupt_prob: spec.corrupt_prob,
                seed: spec.seed,
                pcap: spec.pcap,
                backlog_bytes: spec.backlog_bytes,
                node_addrs: (0..n)
                    .map(|i| SocketAddrV4::new(Ipv4Addr::new(10, 201, i as u8, 2), PORT).into())
                    .collect(),
                switch_addrs: (0..n)
                    .map(|i| SocketAddrV4::new(Ipv4Addr::new(10, 201, i as u8, 1), PORT).into())
                    .collect(),
                dir: spec.dir.clone(),
            },
            switch: None,
            nodes: (0..n).map(|_| None).collect(),
            spec,
        };
        ip(&["netns", "add", &sw])?;
        ip(&["-n", &sw, "link", "set", "lo", "up"])?;
        for i in 0..n {
            let ns = rack.node_ns(i);
            ip(&["netns", "add", &ns])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            let port = format!("sw{i}");
            ip(&[
                "link", "add", &port, "netns", &sw, "type", "veth", "peer", "name", "fab0",
                "netns", &ns,
            ])?;
            ip(&[
                "-n",
                &sw,
                "addr",
                "add",
                &format!("10.201.{i}.1/24"),
                "dev",
                &port,
            ])?;
            ip(&["-n", &sw, "link", "set", &port, "up"])?;
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("10.201.{i}.2/24"),
                "dev",
                "fab0",
            ])?;
            ip(&["-n", &ns, "link", "set", "fab0", "up"])?;
            // Only IPv4 crosses the rack: keep IPv6 chatter off the TUN device.
            let _ = Command::new("ip")
                .args(["netns", "exec", &ns, "sh", "-c"])
                .arg("echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6")
                .status();
        }
        rack.config.t0_ns = now_ns() + rack.spec.startup_ns;
        let config_path = rack.spec.dir.join("rack.json");
        crate::events::write_json_atomically(&config_path, &rack.config)?;
        let exe = rack.spec.exe.to_string_lossy().into_owned();
        let cfg = config_path.to_string_lossy().into_owned();
        let log = |name: &str| -> io::Result<Stdio> {
            Ok(std::fs::File::create(rack.spec.dir.join(name))?.into())
        };
        rack.switch = Some(
            Command::new("ip")
                .args([
                    "netns", "exec", &sw, &exe, "live", "switch", "--config", &cfg,
                ])
                .stdout(log("switch.log")?)
                .stderr(log("switch.log")?)
                .spawn()?,
        );
        for i in 0..n {
            let ns = rack.node_ns(i);
            let id = i.to_string();
            rack.nodes[i] = Some(
                Command::new("ip")
                    .args(["netns", "exec", &ns, &exe, "live", "node", "--config", &cfg])
                    .args(["--id", &id])
                    .stdin(Stdio::null())
                    .stdout(log(&format!("node{i}.log"))?)
                    .stderr(log(&format!("node{i}.log"))?)
                    .spawn()?,
            );
        }
        Ok(rack)
    }

    /// A command run inside node `i`'s namespace.
    pub fn command(&self, i: usize, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.node_ns(i), program])
            .stdin(Stdio::null());
        c
    }

    /// The process id of node `i`, while it runs.
    pub fn pid(&self, i: usize) -> Option<u32> {
        self.nodes.get(i)?.as_ref().map(Child::id)
    }

    /// `kill -9` of node `i`'s process; returns when it was sent (`CLOCK_MONOTONIC` ns).
    pub fn kill(&mut self, i: usize) -> io::Result<u64> {
        let mut child = self.nodes[i]
            .take()
            .ok_or_else(|| io::Error::other(format!("node {i} is not running")))?;
        let at = now_ns();
        child.kill()?;
        child.wait()?;
        Ok(at)
    }

    /// Whether a process of the rack has exited on its own (it failed): its name and status.
    pub fn exited(&mut self) -> Option<String> {
        if let Some(c) = &mut self.switch
            && let Ok(Some(st)) = c.try_wait()
        {
            return Some(format!("the switch exited: {st}"));
        }
        for (i, c) in self.nodes.iter_mut().enumerate() {
            if let Some(c) = c
                && let Ok(Some(st)) = c.try_wait()
            {
                return Some(format!("node {i} exited: {st}"));
            }
        }
        None
    }

    /// The slot the rack has reached, from the nodes' counters files.
    pub fn slot(&self) -> u64 {
        (0..self.nodes.len())
            .filter_map(|i| read_counters(&self.spec.dir, i))
            .filter_map(|v| v["driver"]["slot"].as_u64())
            .max()
            .unwrap_or(0)
    }

    /// Stops every process at one slot (a second ahead of the furthest node), waits for them,
    /// and removes the namespaces.
    pub fn down(mut self) -> io::Result<()> {
        let ahead = 1_000_000_000 / self.spec.slot_ns + 64;
        std::fs::write(
            self.spec.dir.join("stop_slot"),
            (self.slot() + ahead).to_string(),
        )?;
        for c in self.nodes.iter_mut().flatten() {
            c.wait()?;
        }
        std::fs::write(self.spec.dir.join("stop_switch"), "0")?;
        if let Some(c) = &mut self.switch {
            c.wait()?;
        }
        self.nodes.clear();
        self.switch = None;
        remove_namespaces(&self.spec.prefix);
        Ok(())
    }
}

impl Drop for NetRack {
    /// On an error path: kill what still runs and remove the namespaces.
    fn drop(&mut self) {
        for c in self.nodes.iter_mut().flatten().chain(self.switch.as_mut()) {
            let _ = c.kill();
            let _ = c.wait();
        }
        remove_namespaces(&self.spec.prefix);
    }
}

/// Removes every namespace named `<prefix>-*` (deleting a namespace removes its veth ends).
pub fn remove_namespaces(prefix: &str) {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    for name in listed.lines().filter_map(|l| l.split_whitespace().next()) {
        if name.starts_with(&format!("{prefix}-")) {
            let _ = ip(&["netns", "del", name]);
        }
    }
}

/// Node `i`'s counters file, as JSON, if it is there.
pub fn read_counters(dir: &Path, i: usize) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join(format!("node{i}/counters.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

/// `shoal live node`: one node in the current namespace, with its TUN device.
pub fn run_node_process(config: &Path, id: NodeId) -> io::Result<()> {
    let cfg = ProcConfig::load(config)?;
    let fabric = cfg.fabric()?;
    let n = cfg.rack.nodes as usize;
    if id.idx() >= n {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no such node"));
    }
    let socket = UdpSocket::bind(cfg.node_addrs[id.idx()])?;
    let tun = Tun::create(DEVICE)?;
    ip(&["addr", "add", &format!("{}/24", node_ip(id)), "dev", DEVICE])?;
    ip(&["link", "set", DEVICE, "up"])?;
    if now_ns() >= cfg.t0_ns {
        return Err(io::Error::other(
            "started after slot 0: the others would take this node for dead",
        ));
    }
    let spec = DriverSpec {
        id,
        clock: cfg.clock(),
        grace_ns: cfg.grace_ns,
        switch_addr: cfg.switch_addrs[id.idx()],
        check_bounds: false,
        dir: Some(cfg.dir.join(format!("node{}", id.0))),
        pcap: cfg.pcap,
        arena_bytes: ARENA_BYTES,
        crash_at: None,
    };
    let host = TunHost::new(id, n, tun, cfg.backlog_bytes);
    let mut driver = Driver::new(spec, fabric, socket, host)?;
    driver.run(&cfg.stop())?;
    Ok(())
}

/// `shoal live switch`: the circuit switches, in the switch's namespace.
pub fn run_switch_process(config: &Path) -> io::Result<()> {
    let cfg = ProcConfig::load(config)?;
    let fabric = cfg.fabric()?;
    let socket = UdpSocket::bind(SocketAddr::from((Ipv4Addr::UNSPECIFIED, PORT)))?;
    let spec = SwitchSpec {
        nodes: cfg.node_addrs.clone(),
        corrupt_prob: cfg.corrupt_prob,
        seed: cfg.seed,
        dir: Some(cfg.dir.join("switch")),
    };
    run_switch(
        socket,
        fabric,
        spec,
        &Stop::File(cfg.dir.join("stop_switch")),
    )?;
    Ok(())
}
