//! `keeptime sleep`: a precise `sleep(1)`. The operands add up like GNU
//! sleep's; the wait is a keeptime [`Sleeper`]: never early, typically well
//! under a microsecond late.
//!
//! A one-shot sleep has nothing learned yet: a fresh sleeper's first OS
//! wake-up after an idle stretch can be 50–100 µs late on a VM, beyond the
//! margin it starts with. So the sleeper waits in [`Mode::Exact`] until
//! [`ONE_SHOT_SPIN_NS`] before the deadline and finishes in [`Mode::Spin`]:
//! at most half a millisecond of CPU once per process, which is less than
//! starting the process costs.

use crate::output::format;
use crate::UsageError;
use anyhow::Result;
use clap::Args;
use keeptime::{os, Mode, Sleeper};

/// `keeptime sleep` options.
#[derive(Debug, Args)]
pub struct SleepArgs {
    /// How long: a number and a unit (ns, us, µs, ms, s, min, h); a bare
    /// number is seconds. Several durations add up.
    #[arg(
        value_name = "DURATION",
        required = true,
        num_args = 1..,
        value_parser = crate::parse::sleep_duration,
        allow_negative_numbers = true
    )]
    pub durations: Vec<u64>,

    /// Print how late it woke after the deadline.
    #[arg(long, short)]
    pub verbose: bool,
}

/// The sum of the operands in ns; an error (not a wrap) past `u64::MAX`.
pub fn total_ns(durations_ns: &[u64]) -> Result<u64, UsageError> {
    durations_ns
        .iter()
        .try_fold(0u64, |acc, &d| acc.checked_add(d))
        .ok_or_else(|| {
            UsageError(format!(
                "the durations add up to more than {} ns (about 584 years)",
                u64::MAX
            ))
        })
}

/// How much of a one-shot sleep is finished by a spin.
pub const ONE_SHOT_SPIN_NS: u64 = 500_000;

/// Sleeps until `deadline_ns`, precisely, once: exact mode to
/// [`ONE_SHOT_SPIN_NS`] before it, then a spin. Returns the first clock
/// reading after the deadline.
pub fn sleep_once_until(deadline_ns: u64) -> u64 {
    let mut sleeper = Sleeper::builder().mode(Mode::Exact).build();
    sleeper.sleep_until_ns(deadline_ns.saturating_sub(ONE_SHOT_SPIN_NS));
    sleeper.set_mode(Mode::Spin);
    sleeper.sleep_until_ns(deadline_ns)
}

/// Sleeps for the sum of `durations_ns`; with `verbose`, says how late it woke.
pub fn run(durations_ns: &[u64], verbose: bool) -> Result<()> {
    let total = total_ns(durations_ns)?;
    let start = os::monotonic_ns();
    let deadline = start.saturating_add(total);
    let woke = sleep_once_until(deadline);
    if verbose {
        let late = woke.saturating_sub(deadline);
        println!(
            "woke {} after the deadline (asked for {}, slept {})",
            format::ns(i64::try_from(late).unwrap_or(i64::MAX)),
            format::duration(total),
            format::ns(i64::try_from(woke - start).unwrap_or(i64::MAX)),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_early() {
        for d in [0, 1_000, 100_000, 700_000, 2_000_000] {
            let deadline = os::monotonic_ns() + d;
            let woke = sleep_once_until(deadline);
            assert!(woke >= deadline && os::monotonic_ns() >= deadline);
        }
    }

    #[test]
    fn operands_add_up_without_wrapping() {
        assert_eq!(total_ns(&[1, 2, 3]).unwrap(), 6);
        assert_eq!(total_ns(&[]).unwrap(), 0);
        assert!(total_ns(&[u64::MAX, 1]).is_err());
    }
}
