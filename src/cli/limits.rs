//! The options every searching command shares (`--threads`, `--max-states`, `--max-memory`,
//! `--timeout`), each validated once, by its clap value parser.

use std::time::Duration;

use clap::Args;
use weft::threads::Threads;

/// Limits and parallelism of a search.
#[derive(Args, Clone, Debug, Default)]
pub struct SearchArgs {
    /// Worker threads (default: all cores; at most 1024).
    #[arg(long, value_name = "N", value_parser = parse_threads, allow_negative_numbers = true)]
    pub threads: Option<Threads>,
    /// Stop a search after this many states (exit code 2: no verdict).
    #[arg(long, value_name = "N", value_parser = parse_max_states, allow_negative_numbers = true)]
    pub max_states: Option<u64>,
    /// Stop a search when weft's memory exceeds this size, e.g. 512M, 8G (default: 85% of the
    /// machine's or the control group's memory; exit code 2: no verdict).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, allow_negative_numbers = true)]
    pub max_memory: Option<u64>,
    /// Stop each assertion (or search) after this long, e.g. 30, 30s, 5m, 1h (exit code 2).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, allow_negative_numbers = true)]
    pub timeout: Option<Duration>,
}

impl SearchArgs {
    /// The worker threads: as given, else one per core.
    pub fn threads(&self) -> Threads {
        self.threads.unwrap_or_else(Threads::all_cores)
    }

    /// The memory and time limits of one search (its time counted from now), interruptible
    /// by Ctrl-C.
    pub fn resource_limits(&self) -> weft::explore::ResourceLimits {
        weft::explore::ResourceLimits {
            max_memory: self.max_memory(),
            deadline: self.timeout.map(|t| std::time::Instant::now() + t),
            interruptible: true,
        }
    }

    /// The memory budget: as given, else the default share of the machine's memory.
    pub fn max_memory(&self) -> Option<u64> {
        self.max_memory
            .or_else(weft::explore::limits::default_memory_budget)
    }
}

fn parse_threads(s: &str) -> Result<Threads, String> {
    s.parse::<Threads>().map_err(|e| e.to_string())
}

fn parse_max_states(s: &str) -> Result<u64, String> {
    match s.trim().parse::<i128>() {
        Ok(n) if n >= 1 && n <= u64::MAX as i128 => Ok(n as u64),
        Ok(_) => Err("the state limit must be at least 1 (the initial state)".into()),
        Err(_) => Err(format!("`{s}` is not a number of states")),
    }
}

/// `123`, `512K`, `512M`, `8G`, `1T` (powers of 1024; a trailing `B`/`iB` allowed).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let digits_end = upper
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(upper.len());
    let (number, unit) = upper.split_at(digits_end);
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("`{s}` is not a size (examples: 512M, 8G)")),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a size (examples: 512M, 8G)"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !(1.0..1.8e19).contains(&bytes) {
        return Err(format!("`{s}` is not a usable memory size"));
    }
    Ok(bytes as u64)
}

/// `90` (seconds), `90s`, `1.5m`, `2h`, `500ms`.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{s}` is not a time (examples: 30, 30s, 5m, 1h)"))?;
    let seconds = match unit {
        "" | "s" => value,
        "ms" => value / 1000.0,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(format!("`{s}` is not a time (examples: 30, 30s, 5m, 1h)")),
    };
    if !(seconds > 0.0 && seconds < 1e9) {
        return Err(format!("`{s}`: the time limit must be positive"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_are_bounded() {
        assert_eq!(parse_threads("4").map(Threads::get), Ok(4));
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("-1").unwrap_err().contains("from 1 to"));
        assert!(parse_threads("100000").unwrap_err().contains("1024"));
        assert!(parse_threads("x").is_err());
    }

    #[test]
    fn sizes_and_times_parse() {
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("8g"), Ok(8 << 30));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_duration("-1").is_err());
        assert!(parse_duration("soon").is_err());
        assert_eq!(parse_max_states("1"), Ok(1));
        assert!(parse_max_states("0").is_err());
        assert!(parse_max_states("-5").is_err());
    }
}
