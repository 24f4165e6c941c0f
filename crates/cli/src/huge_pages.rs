//! Transparent huge pages for the simulator's state, asked of glibc's allocator at start-up.
//!
//! A 512-node rack keeps 64 bytes per node pair plus queues and flow records (about 140 MiB
//! for the datacenter workload of §7.3), and every node-channel-slot reaches into it in an order
//! no cache predicts: with 4 KiB pages most of those accesses also miss the TLB. glibc backs its
//! heap with transparent huge pages when the tunable `glibc.malloc.hugetlb=1` is set, and it
//! reads tunables only when a process starts, so `shoal` sets it and executes itself again,
//! once, before doing anything else. Side by side on the benchmark machine (BENCHMARKS.md):
//! +5 to +25% on `shoal bench --datacenter` at 512 nodes, +7 to +8% at 1,024, no change at
//! 128 nodes, mixed on the full permutation. Results do not depend on it: only where memory
//! lies changes.
//!
//! `SHOAL_HUGE_PAGES=0` turns it off. It is skipped where it cannot help or would get in the
//! way: off Linux or glibc, when `GLIBC_TUNABLES` already names the tunable (a user's choice is
//! kept), and under valgrind, which would stop following the process at the new execution.

/// The environment variable that turns huge pages off when set to `0`.
pub const SWITCH: &str = "SHOAL_HUGE_PAGES";

/// The glibc tunable, set to 1 to back the heap with transparent huge pages.
const TUNABLE: &str = "glibc.malloc.hugetlb";

/// Executes this program again with the tunable set, unless it is set already or should not
/// be. Returns only if it did not (or the execution failed, which leaves ordinary pages).
pub fn reexec_with_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        // Set by the first execution: a second never happens, even if the C library drops the
        // tunable from the environment (as it does for set-user-ID programs).
        const DONE: &str = "SHOAL_HUGE_PAGES_SET";
        if std::env::var_os(DONE).is_some() || std::env::var_os(SWITCH).is_some_and(|v| v == "0") {
            return;
        }
        let tunables = match std::env::var("GLIBC_TUNABLES") {
            Ok(t) => t,
            Err(std::env::VarError::NotPresent) => String::new(),
            // Not ours to rewrite.
            Err(std::env::VarError::NotUnicode(_)) => return,
        };
        if tunables.contains(TUNABLE)
            || std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("vgpreload"))
        {
            return;
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let value = if tunables.is_empty() {
            format!("{TUNABLE}=1")
        } else {
            format!("{tunables}:{TUNABLE}=1")
        };
        let mut args = std::env::args_os();
        let mut command = std::process::Command::new(exe);
        if let Some(arg0) = args.next() {
            command.arg0(arg0);
        }
        // `exec` returns only if it failed; then this process goes on with ordinary pages.
        let _ = command
            .args(args)
            .env("GLIBC_TUNABLES", value)
            .env(DONE, "1")
            .exec();
    }
}

/// Whether this process asked for huge pages, with the kernel's setting that decides whether
/// it gets them, for reports: "off", or e.g. "on (kernel: always [madvise] never)".
pub fn status() -> String {
    let asked = cfg!(all(target_os = "linux", target_env = "gnu"))
        && std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains(&format!("{TUNABLE}=1")));
    if !asked {
        return "off".into();
    }
    match std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled") {
        Ok(mode) => format!("on (kernel: {})", mode.trim()),
        Err(_) => "on (kernel setting unknown)".into(),
    }
}
