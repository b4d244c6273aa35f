//! What the engine's benchmarks measure the same way: CPU time and peak resident
//! memory of the whole process, read from `/proc/self`.

/// User plus system CPU time of this process so far, from `/proc/self/stat`.
pub(crate) fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return f64::NAN;
    };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after `)`.
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| fields.get(i)?.parse::<f64>().ok())
        .sum();
    ticks / clock_ticks_per_second()
}

/// The kernel's clock tick rate; 100 on every Linux this runs on (`getconf CLK_TCK`).
fn clock_ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}

/// The peak resident set size, in KiB, from `/proc/self/status`.
pub(crate) fn peak_rss_kb() -> u64 {
    status_kb("VmHWM:")
}

/// The resident set size now, in KiB, from `/proc/self/status`.
#[allow(dead_code)] // Only the soak benchmark reads it; each bench compiles this module.
pub(crate) fn rss_kb() -> u64 {
    status_kb("VmRSS:")
}

/// A field of `/proc/self/status` given in kB.
fn status_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// The options of a benchmark run: every case over http, `jobs` samples in flight.
pub(crate) fn over_http(jobs: usize) -> prill_run::RunOptions {
    prill_run::RunOptions {
        jobs,
        connections: Some(vec![prill_spec::model::data_driven::Connection::Http]),
        ..prill_run::RunOptions::default()
    }
}
