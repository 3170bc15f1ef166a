//! One line per duration saying what keeptime bought: its accuracy against a
//! pure spin measured in the same run, and its CPU against the spin and the
//! plain OS sleep. It says so when keeptime loses.

use super::format;
use crate::bench::CellResult;

/// The pure-spin baselines, most representative first.
const SPIN: [&str; 3] = ["spin-pause", "busy-loop", "keeptime-spin"];
/// The OS-sleep baselines, most representative first.
const OS_SLEEP: [&str; 3] = [
    "sleep-default-slack",
    "sleep-slack-1ns",
    "clock-nanosleep-abs",
];

/// keeptime's p99 counts as spin-level when it is within this many ns, or
/// half the spin's own p99, of the spin's p99.
pub const SPIN_LEVEL_SLACK_NS: i64 = 250;

fn find<'a>(results: &[&'a CellResult], names: &[&str]) -> Option<&'a CellResult> {
    names
        .iter()
        .find_map(|n| results.iter().copied().find(|r| r.method == *n))
}

/// The verdict for one duration's results, or `None` without a `keeptime` cell.
pub fn verdict(results: &[&CellResult]) -> Option<String> {
    let k = find(results, &["keeptime"])?;
    let ks = &k.stats;
    let mut line = format!(
        "keeptime: p99 {} at {} CPU",
        format::ns(ks.p99_ns),
        format::percent(ks.cpu_percent)
    );

    if let Some(s) = find(results, &SPIN) {
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
        } else {
            format!(
                "but no CPU saved against the spin ({})",
                format::percent(ss.cpu_percent)
            )
        };
        line.push_str(&format!(" — {accuracy} {cpu}"));
    }

    if let Some(o) = find(results, &OS_SLEEP) {
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
        CellResult {
            method: method.into(),
            duration_ns: 1_000_000,
            warmup: 0,
            timer_slack_ns: Some(1),
            stats,
            sleeper: None,
        }
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
        assert!(v.contains("no CPU saved"), "{v}");
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
