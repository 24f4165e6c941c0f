//! What every fabric's benchmark needs from the machine: a wall clock around the timed run and
//! the process's peak memory.

/// Wall-clock seconds that `f` takes.
// Models must not read clocks (clippy.toml); a benchmark exists to read one, and this is the
// only place in the libraries that does.
#[allow(clippy::disallowed_methods)]
pub fn wall_seconds(f: impl FnOnce()) -> f64 {
    let t0 = std::time::Instant::now();
    f();
    t0.elapsed().as_secs_f64()
}

/// Peak resident set of this process (VmHWM from /proc/self/status), in bytes, where the system
/// says.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
