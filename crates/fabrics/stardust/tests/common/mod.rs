//! Fixtures the integration tests share: the Fabric Adapter most of them start from (each test
//! names what it changes) and the network parameters of the whole-fabric tests.
#![allow(dead_code)] // each test file uses its own subset

use shoal_base::{Dur, Rate};
use shoal_stardust::NetParams;
use shoal_stardust::config::{AdapterConfig, ClassPolicy, FciReaction, IngressFull, LowLatency};
use shoal_stardust::reachability::ReachConfig;

/// One 50 Gb/s port and one class on each of 8 adapters: 4096-byte credits with a 2 % speed-up,
/// 256-byte cells with 16-byte headers, a 1 MiB egress buffer, an ingress too large to fill
/// (a full one drops), a 50 µs reassembly timeout, no credit kept, FCI windows of 5 µs (a cut
/// of 1/8 times the fraction marked, 1/32 back in a window without marks, never below 1/4),
/// no low-latency class.
pub fn adapter_config() -> AdapterConfig {
    AdapterConfig {
        fas: 8,
        ports: 1,
        classes: 1,
        port_rate: Rate::gbps(50),
        credit_bytes: 4096,
        credit_speedup_ppm: 20_000,
        cell_bytes: 256,
        cell_header_bytes: 16,
        control_bytes: 64,
        egress_buffer_bytes: 1 << 20,
        ingress_buffer_bytes: 1 << 30,
        ingress_full: IngressFull::Drop,
        reassembly_timeout: Dur::from_us(50),
        status_refresh_doublings: 6,
        credit_keep: Dur::ZERO,
        class_policy: ClassPolicy::Strict,
        fci: FciReaction {
            decrease: 1 << 13,
            interval: Dur::from_us(5),
            increase: 1 << 11,
            min_rate: 1 << 14,
        },
        permutation_rounds: 3,
        low_latency: LowLatency::NONE,
    }
}

/// The whole-fabric tests' network: 128 cells of element pool per link, FCI above 32 cells,
/// 1500-byte packets with 40-byte headers, 100 ns at the hosts.
pub fn net_params(seed: u64, reach: ReachConfig) -> NetParams {
    NetParams {
        pool_cells_per_link: 128,
        fci_threshold: 32,
        packet_bytes: 1500,
        header_bytes: 40,
        host_delay: Dur::from_ns(100),
        seed,
        reach,
    }
}

/// A Fabric Adapter alone with the cells it makes and a calendar for its deadlines, driven by
/// cell values: what a test of one adapter hands it and takes from it. Everything else is the
/// adapter's own (`Deref`).
pub struct Fa {
    pub a: shoal_stardust::adapter::Adapter,
    pub cells: shoal_stardust::cell_arena::Cells,
    /// The time of the last input, and the deadlines set so far in the order they were set.
    now: shoal_base::Time,
    calendar: std::collections::BTreeSet<(shoal_base::Time, u64, shoal_stardust::adapter::Timer)>,
    set: u64,
}

impl Fa {
    pub fn new(a: shoal_stardust::adapter::Adapter) -> Fa {
        let cells = shoal_stardust::cell_arena::Cells::new(a.links() as usize);
        Fa {
            a,
            cells,
            now: shoal_base::Time::ZERO,
            calendar: Default::default(),
            set: 0,
        }
    }

    /// Puts the deadlines the adapter set on the calendar.
    fn arm(&mut self) {
        while let Some((t, timer)) = self.a.poll_timer(self.now) {
            self.calendar.insert((t, self.set, timer));
            self.set += 1;
        }
    }

    pub fn handle_packet(
        &mut self,
        now: shoal_base::Time,
        dst: u32,
        port: u16,
        class: u8,
        packet: shoal_stardust::cell::Packet,
        pause_at: u64,
    ) -> bool {
        self.now = now;
        let taken = self
            .a
            .handle_packet(&mut self.cells, now, dst, port, class, packet, pause_at);
        self.arm();
        taken
    }

    pub fn handle_cell(&mut self, now: shoal_base::Time, cell: shoal_stardust::cell::Cell) {
        self.now = now;
        let id = self.cells.insert(&cell);
        self.a.handle_cell(&mut self.cells, now, id);
        self.arm();
    }

    pub fn next_tx(
        &mut self,
        now: shoal_base::Time,
        link: u32,
        paused: bool,
    ) -> Option<shoal_stardust::cell::Cell> {
        let id = self.a.next_tx(&mut self.cells, now, link, paused)?;
        Some(self.cells.remove(id))
    }

    /// The earliest deadline on the calendar.
    pub fn poll_timeout(&mut self) -> Option<shoal_base::Time> {
        self.arm();
        self.calendar.first().map(|e| e.0)
    }

    /// Hands the adapter every deadline due by `now` (a late call serves them all at `now`).
    pub fn handle_timeout(&mut self, now: shoal_base::Time) {
        self.now = now;
        self.arm();
        while let Some(&(t, set, timer)) = self.calendar.first() {
            if t > now {
                break;
            }
            self.calendar.remove(&(t, set, timer));
            self.a.handle_timer(&mut self.cells, now, timer);
            self.arm();
        }
    }

    /// Cells waiting for any link.
    pub fn queued_cells(&self) -> u64 {
        let (data, ctrl) = self.a.queued_split(&self.cells);
        data + ctrl
    }
}

impl std::ops::Deref for Fa {
    type Target = shoal_stardust::adapter::Adapter;
    fn deref(&self) -> &Self::Target {
        &self.a
    }
}

impl std::ops::DerefMut for Fa {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.a
    }
}
