//! One line per duration saying what keeptime bought: its accuracy against a
//! pure spin measured in the same run, and its CPU against the spin and the
//! plain OS sleep. It says so when keeptime loses. The baselines are found
//! by family (`methods[].family`), so every runtime's cells are read alike.

use super::format;
use crate::bench::{CellResult, Family};

/// keeptime's p99 counts as spin-level when it is within this many ns, or
/// half the spin's own p99, of the spin's p99.
pub const SPIN_LEVEL_SLACK_NS: i64 = 250;

/// The hand-off check: keeptime's caller-side p50 may exceed the pure
/// spin's by at most this much.
pub const HANDOFF_P50_SLACK_NS: i64 = 150;
/// The hand-off check: keeptime's share of waits more than 2 µs late may
/// exceed the pure spin's by at most this many percentage points.
pub const HANDOFF_LATE_POINTS: f64 = 1.5;
/// The hand-off check: keeptime's return p90 (caller reading − keeptime's
/// own last reading) at most this.
pub const HANDOFF_RETURN_P90_NS: i64 = 100;

/// The cell of the method every runtime calls `keeptime` (its default sleeper).
fn keeptime<'a>(results: &[&'a CellResult]) -> Option<&'a CellResult> {
    results.iter().copied().find(|r| r.method == "keeptime")
}

/// The first cell of `family`, in run order.
fn first_of<'a>(results: &[&'a CellResult], family: Family) -> Option<&'a CellResult> {
    results.iter().copied().find(|r| r.family == Some(family))
}

/// The same run's pure spin: a spin with pause, else a busy loop, else
/// keeptime's own spin mode.
pub fn pure_spin<'a>(results: &[&'a CellResult]) -> Option<&'a CellResult> {
    first_of(results, Family::SpinWithPause)
        .or_else(|| first_of(results, Family::BusyLoop))
        .or_else(|| {
            results
                .iter()
                .copied()
                .find(|r| r.method == "keeptime-spin")
        })
}

/// The same run's plain OS sleep: its first method of the OS-sleep family.
pub fn os_sleep<'a>(results: &[&'a CellResult]) -> Option<&'a CellResult> {
    first_of(results, Family::OsSleep)
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "MISSED"
    }
}

/// keeptime against the same run's pure spin, seen from the caller, one
/// line: `keeptime p50 ≤ spin p50 + 150 ns: met (…); late share ≤ spin's +
/// 1.5 points: met (…); return p90 ≤ 100 ns: met (…)`. `None` without a
/// `keeptime` cell or a pure spin.
pub fn handoff_line(results: &[&CellResult]) -> Option<String> {
    let k = keeptime(results)?;
    let s = pure_spin(results)?;
    let p50 = format!(
        "keeptime p50 ≤ spin p50 + {HANDOFF_P50_SLACK_NS} ns: {} ({} vs {} {})",
        met(k.stats.p50_ns <= s.stats.p50_ns.saturating_add(HANDOFF_P50_SLACK_NS)),
        format::ns(k.stats.p50_ns),
        s.method,
        format::ns(s.stats.p50_ns)
    );
    let late = match (k.late_share, s.late_share) {
        (Some(kl), Some(sl)) => format!(
            "late share ≤ spin's + {HANDOFF_LATE_POINTS} points: {} ({} vs {})",
            met(100.0 * kl <= 100.0 * sl + HANDOFF_LATE_POINTS),
            format::percent(100.0 * kl),
            format::percent(100.0 * sl)
        ),
        _ => format!("late share ≤ spin's + {HANDOFF_LATE_POINTS} points: not recorded"),
    };
    let ret = match k.ret {
        Some(r) => format!(
            "return p90 ≤ {HANDOFF_RETURN_P90_NS} ns: {} ({})",
            met(r.p90_ns <= HANDOFF_RETURN_P90_NS),
            format::ns(r.p90_ns)
        ),
        None => format!("return p90 ≤ {HANDOFF_RETURN_P90_NS} ns: not recorded"),
    };
    Some(format!("{p50}; {late}; {ret}"))
}

/// The verdict for one duration's results, or `None` without a `keeptime` cell.
pub fn verdict(results: &[&CellResult]) -> Option<String> {
    let k = keeptime(results)?;
    let ks = &k.stats;
    let mut line = format!(
        "keeptime: p99 {} at {} CPU",
        format::ns(ks.p99_ns),
        format::percent(ks.cpu_percent)
    );

    if let Some(s) = pure_spin(results) {
        let ss = &s.stats;
        let tolerance = (ss.p99_ns.abs() / 2).max(SPIN_LEVEL_SLACK_NS);
        let accuracy = if ks.p99_ns.saturating_mul(2) < ss.p99_ns && ss.p99_ns > SPIN_LEVEL_SLACK_NS
        {
            format!(
                "a better p99 than the pure spin ({} {})",
                s.method,
                format::ns(ss.p99_ns)
            )
        } else if ks.p99_ns <= ss.p99_ns.saturating_add(tolerance) {
            "spin-level accuracy".to_string()
        } else {
            format!(
                "p99 {}× the pure spin's ({} {})",
                format::ratio(ks.p99_ns as f64 / ss.p99_ns.max(1) as f64),
                s.method,
                format::ns(ss.p99_ns)
            )
        };
        let cpu = if ks.cpu_percent > 0.0 && ks.cpu_percent * 1.5 <= ss.cpu_percent {
            format!(
                "at 1/{} of its CPU",
                format::ratio(ss.cpu_percent / ks.cpu_percent)
            )
        } else if ks.cpu_percent < ss.cpu_percent * 0.95 {
            format!(
                "but little CPU saved against the spin ({})",
                format::percent(ss.cpu_percent)
            )
        } else {
            format!(
                "but no CPU saved against the spin ({})",
                format::percent(ss.cpu_percent)
            )
        };
        line.push_str(&format!(" — {accuracy} {cpu}"));
    }

    if let Some(o) = os_sleep(results) {
        let os = &o.stats;
        let versus = if ks.p99_ns < os.p99_ns {
            format!(
                "{}× the accuracy of {}",
                format::ratio(os.p99_ns.max(1) as f64 / ks.p99_ns.max(1) as f64),
                o.method
            )
        } else {
            format!("no more accurate than {}", o.method)
        };
        line.push_str(&format!(
            "; {versus} (p99 {} at {} CPU)",
            format::ns(os.p99_ns),
            format::percent(os.cpu_percent)
        ));
    }

    if ks.early > 0 {
        line.push_str(&format!(
            "; WARNING: {} early returns, which keeptime must never do",
            ks.early
        ));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::stats::Stats;

    fn cell(method: &str, p99: i64, cpu: f64) -> CellResult {
        let mut errors = vec![p99; 10];
        let mut stats = Stats::from_errors(&mut errors, 1_000, 0).unwrap();
        stats.cpu_percent = cpu;
        let family = crate::report::input::family_of_v1(method);
        CellResult {
            method: method.into(),
            family,
            duration_ns: 1_000_000,
            warmup: 0,
            timer_slack_ns: Some(1),
            stats,
            late_share: None,
            ret: None,
            sleeper: None,
        }
    }

    #[test]
    fn baselines_are_found_by_family() {
        // Another runtime's names: its OS sleep and busy loop by family.
        let mut k = cell("keeptime", 300, 2.0);
        k.family = Some(Family::Keeptime);
        let mut spin = cell("go-spin", 250, 99.0);
        spin.family = Some(Family::BusyLoop);
        let mut sleep = cell("time-sleep", 60_000, 0.1);
        sleep.family = Some(Family::OsSleep);
        let mut unknown = cell("mystery", 1, 0.0);
        unknown.family = None;
        let v = verdict(&[&unknown, &sleep, &spin, &k]).unwrap();
        assert!(v.contains("spin-level accuracy"), "{v}");
        assert!(v.contains("accuracy of time-sleep"), "{v}");
        assert!(pure_spin(&[&unknown, &sleep]).is_none());
    }

    #[test]
    fn the_handoff_line_compares_keeptime_with_the_spin() {
        let mut k = cell("keeptime", 300, 2.0);
        let mut s = cell("spin-pause", 250, 99.0);
        k.stats.p50_ns = 240;
        s.stats.p50_ns = 90;
        k.late_share = Some(0.02);
        s.late_share = Some(0.01);
        k.ret = Some(crate::bench::result::Return {
            p50_ns: 30,
            p90_ns: 100,
        });
        assert_eq!(
            handoff_line(&[&s, &k]).unwrap(),
            "keeptime p50 ≤ spin p50 + 150 ns: met (240 ns vs spin-pause 90 ns); \
             late share ≤ spin's + 1.5 points: met (2.0 % vs 1.0 %); \
             return p90 ≤ 100 ns: met (100 ns)"
        );
        k.stats.p50_ns = 241;
        k.late_share = Some(0.026);
        k.ret = Some(crate::bench::result::Return {
            p50_ns: 30,
            p90_ns: 101,
        });
        assert_eq!(
            handoff_line(&[&s, &k]).unwrap(),
            "keeptime p50 ≤ spin p50 + 150 ns: MISSED (241 ns vs spin-pause 90 ns); \
             late share ≤ spin's + 1.5 points: MISSED (2.6 % vs 1.0 %); \
             return p90 ≤ 100 ns: MISSED (101 ns)"
        );
        k.late_share = None;
        k.ret = None;
        assert!(handoff_line(&[&s, &k]).unwrap().ends_with(
            "late share ≤ spin's + 1.5 points: not recorded; return p90 ≤ 100 ns: not recorded"
        ));
        assert!(handoff_line(&[&k]).is_none());
        assert!(handoff_line(&[&s]).is_none());
    }

    #[test]
    fn keeptime_wins() {
        let (k, s, o) = (
            cell("keeptime", 300, 2.1),
            cell("spin-pause", 250, 99.0),
            cell("sleep-default-slack", 57_000, 0.1),
        );
        let v = verdict(&[&s, &o, &k]).unwrap();
        assert_eq!(
            v,
            "keeptime: p99 300 ns at 2.1 % CPU — spin-level accuracy at 1/47 of its CPU; \
             190× the accuracy of sleep-default-slack (p99 57.0 µs at 0.10 % CPU)"
        );
    }

    #[test]
    fn keeptime_loses_honestly() {
        let (k, s) = (
            cell("keeptime", 25_000, 98.0),
            cell("spin-pause", 2_000, 99.0),
        );
        let v = verdict(&[&s, &k]).unwrap();
        assert!(v.contains("12× the pure spin's"), "{v}");
        assert!(v.contains("but no CPU saved"), "{v}");
        // 73 % against the spin's 100 %: some, but less than a third.
        let k73 = cell("keeptime", 25_000, 73.0);
        let s100 = cell("spin-pause", 2_000, 100.0);
        let v = verdict(&[&s100, &k73]).unwrap();
        assert!(v.contains("but little CPU saved against the spin"), "{v}");
        let o = cell("sleep-default-slack", 20_000, 0.1);
        assert!(verdict(&[&k, &o])
            .unwrap()
            .contains("no more accurate than"));
        assert!(verdict(&[&s, &o]).is_none());
        let preempted_spin = cell("spin-pause", 4_000_000, 70.0);
        let k = cell("keeptime", 95_000, 0.3);
        let v = verdict(&[&preempted_spin, &k]).unwrap();
        assert!(
            v.contains("a better p99 than the pure spin (spin-pause 4.00 ms)"),
            "{v}"
        );
    }
}
