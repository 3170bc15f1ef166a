//! `keeptime clocks`: what this machine's clocks and timers do, in one
//! command. Renders
//! [`keeptime::clocks::inspect`]: a table of the clocks, the machine, and the
//! findings in plain words; or the whole report as JSON.
//!
//! This module is the command: its options, the async waiter's probe and
//! the JSON; [`text`] writes the report in words; [`wakeups`] measures how
//! late the OS waits wake and names the host kind.

use crate::output::format;
use anyhow::Result;
use clap::Args;
use keeptime::clocks::{ClockReport, MachineInfo};
pub use keeptime::clocks::{DeviceAccess, IdleLatency};

pub mod text;
pub mod wakeups;
pub use text::{cpuidle_text, in_force_text, may_hold_text, render};
pub use wakeups::WakeUps;

/// The machine description for bench results, read before anything changed
/// the thread's timer slack.
pub fn machine_info() -> MachineInfo {
    keeptime::clocks::inspect().machine
}

/// `keeptime clocks` options.
#[derive(Debug, Args)]
pub struct ClocksArgs {
    /// Print the whole report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Precise async deadlines the probe waits for, and how long each is.
const PROBE_WAITS: u32 = 200;
const PROBE_WAIT: std::time::Duration = std::time::Duration::from_millis(1);

/// What the process-wide async waiter can serve precisely on this machine
/// (`spec/waiter.md`, *Capacity*), measured by [`keeptime::waiter::probe_capacity`].
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct AsyncWaiter {
    /// Precise deadlines per second the waiter admits; past it, async sleeps
    /// end on the runtime's own timer.
    pub capacity_per_s: u64,
    /// What one precise deadline cost (the waiter's CPU plus the task's
    /// finish), ns.
    pub cost_ns: u64,
    /// The probe: this many waits of `probe_wait_ns`, one after another.
    pub probe_waits: u32,
    /// Length of each probe wait, ns.
    pub probe_wait_ns: u64,
}

impl AsyncWaiter {
    /// Runs the probe (about 0.2 s).
    pub fn probe() -> Self {
        let capacity_per_s = keeptime::waiter::probe_capacity(PROBE_WAITS, PROBE_WAIT);
        AsyncWaiter {
            capacity_per_s,
            cost_ns: keeptime::waiter::stats().cost_ns,
            probe_waits: PROBE_WAITS,
            probe_wait_ns: PROBE_WAIT.as_nanos() as u64,
        }
    }

    /// The report's line: capacity, cost and how it was measured.
    pub fn text(&self) -> String {
        format!(
            "{} precise deadlines/s (one costs {}; from {} waits of {} with a plain thread as the executor: a runtime slower to wake a task pays that too, and a program's own capacity() states its runtime's; past it async sleeps end on the runtime's own timer)",
            self.capacity_per_s,
            format::duration(self.cost_ns),
            self.probe_waits,
            format::duration(self.probe_wait_ns),
        )
    }
}

/// `keeptime clocks --json`: the core's report, the measured wake-ups and
/// host kind, and the async waiter's capacity.
#[derive(serde::Serialize)]
struct ClocksJson<'a> {
    #[serde(flatten)]
    report: &'a ClockReport,
    wake_ups: WakeUps,
    async_waiter: AsyncWaiter,
}

/// Runs `keeptime clocks`.
pub fn run(json: bool) -> Result<()> {
    let report = keeptime::clocks::inspect();
    let wake_ups = WakeUps::measure(&report.machine);
    let waiter = AsyncWaiter::probe();
    if json {
        let doc = ClocksJson {
            report: &report,
            wake_ups,
            async_waiter: waiter,
        };
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let color = console::colors_enabled();
        print!("{}", render(&report, report.idle_latency.as_ref(), color));
        println!(
            "\nwake-ups (absolute OS waits, timer slack 1 ns, two rounds taking turns; late = first reading − target)"
        );
        let lines = wake_ups.lines();
        let width = lines
            .iter()
            .map(|(k, _)| k.chars().count())
            .max()
            .unwrap_or(0)
            .max(15);
        for (k, v) in lines {
            println!("  {k}{}  {v}", " ".repeat(width - k.chars().count()));
        }
        println!("\nasync waiter\n  capacity         {}", waiter.text());
        let value = std::env::var_os(keeptime::PROFILE_ENV);
        println!(
            "\nhost profile\n  {}  {}",
            keeptime::PROFILE_ENV,
            profile_env_text(value.as_deref())
        );
    }
    Ok(())
}

/// What `KEEPTIME_PROFILE` (its value `value`) does for keeptime's own
/// sleepers in a program run here: nothing, a profile that loads on this
/// machine, or the reason it is refused.
pub fn profile_env_text(value: Option<&std::ffi::OsStr>) -> String {
    let Some(path) = value.filter(|v| !v.is_empty()) else {
        return "not set: keeptime's own sleepers start fresh (`keeptime trace --profile FILE` \
                writes one; `KEEPTIME_PROFILE=FILE` starts them from it)"
            .to_string();
    };
    match keeptime::profile::Profile::load(path) {
        Ok(p) => {
            let n = p.samples();
            format!(
                "{}: loads on this machine ({} wake-ups in {} buckets); keeptime's own sleepers start from it",
                path.to_string_lossy(),
                n.iter().sum::<usize>(),
                n.iter().filter(|&&k| k > 0).count()
            )
        }
        Err(e) => format!(
            "{}: refused, keeptime's own sleepers start fresh: {e}",
            path.to_string_lossy()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::profile_env_text;
    use keeptime::profile::Profile;
    use std::ffi::OsStr;

    #[test]
    fn the_host_profile_line_says_what_keeptime_profile_does() {
        assert!(profile_env_text(None).starts_with("not set: keeptime's own sleepers start fresh"));
        assert_eq!(
            profile_env_text(Some(OsStr::new(""))),
            profile_env_text(None)
        );

        let dir = std::env::temp_dir().join(format!("keeptime-cli-env-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut s = keeptime::Sleeper::builder().build_with(keeptime::sim::SimPlatform::new(0));
        for _ in 0..30 {
            s.sleep(std::time::Duration::from_micros(700));
        }
        let good = dir.join("host.profile");
        s.profile().write(&good).unwrap();
        let n = s.profile().samples();
        assert_eq!(
            profile_env_text(Some(good.as_os_str())),
            format!(
                "{}: loads on this machine ({} wake-ups in {} buckets); keeptime's own sleepers start from it",
                good.display(),
                n.iter().sum::<usize>(),
                n.iter().filter(|&&k| k > 0).count()
            )
        );
        let missing = dir.join("missing.profile");
        let why = Profile::load(&missing).unwrap_err();
        assert_eq!(
            profile_env_text(Some(missing.as_os_str())),
            format!(
                "{}: refused, keeptime's own sleepers start fresh: {why}",
                missing.display()
            )
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
