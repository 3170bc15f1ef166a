//! The value parsers every command shares: whole numbers, durations, CPU
//! numbers, priorities, tail targets, idle hints. Each bad value is one line
//! naming it and what is accepted. This module uses only the duration parser
//! and the core; a command's own values (a method name, a sample count) are
//! parsed next to its arguments, from these.

use crate::duration::{self, quoted, DurationError};
use keeptime::TailTarget;

/// Longest wait a bench or trace duration may ask for: 1 h.
pub const MAX_WAIT_NS: u64 = 3_600_000_000_000;

/// A non-negative whole number, with messages for the usual mistakes;
/// `what` names the value ("sample count"), `example` is a good one.
pub fn whole(s: &str, what: &str, example: &str) -> Result<u64, String> {
    let q = quoted(s);
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!(
            "negative {what} {q}: expected a whole number, e.g. {example}"
        ));
    }
    t.parse::<u64>().map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => {
            format!("{what} {q} is too large: at most {}", u64::MAX)
        }
        _ => format!("invalid {what} {q}: expected a whole number, e.g. {example}"),
    })
}

/// A wait duration (a bench's `--durations`, the oracle's): 1 ns to 1 h.
pub fn wait_duration(s: &str) -> Result<u64, String> {
    let q = quoted(s);
    let too_long = || format!("duration {q} is too long for a bench: at most 1h per wait");
    let ns = duration::parse_ns(s).map_err(|e| match e {
        DurationError::TooLong(_) => too_long(),
        e => e.to_string(),
    })?;
    if ns == 0 {
        return Err(format!(
            "zero duration {q}: bench durations must be at least 1ns, e.g. 10us"
        ));
    }
    if ns > MAX_WAIT_NS {
        return Err(too_long());
    }
    Ok(ns)
}

/// A `keeptime sleep` operand: any duration, bare numbers in seconds.
pub fn sleep_duration(s: &str) -> Result<u64, String> {
    duration::parse_ns_default_seconds(s).map_err(|e: DurationError| e.to_string())
}

/// A time budget: a duration of more than 0.
pub fn budget(s: &str) -> Result<u64, String> {
    let q = quoted(s);
    match duration::parse_ns(s) {
        Ok(0) => Err(format!(
            "zero budget {q}: the budget must be more than 0, e.g. 30s"
        )),
        Ok(ns) => Ok(ns),
        Err(e) => Err(e.to_string()),
    }
}

/// A positive duration named `what` (`interval`), with `example`.
pub fn positive_duration(s: &str, what: &str, example: &str) -> Result<u64, String> {
    let q = quoted(s);
    let t = s.trim();
    if t.eq_ignore_ascii_case("nan") || t.to_ascii_lowercase().starts_with("nan") {
        return Err(format!(
            "{what} {q} is not a number: expected a positive duration, e.g. {example}"
        ));
    }
    let bare_zero = t.parse::<f64>().is_ok_and(|v| v == 0.0);
    match duration::parse_ns(s) {
        _ if bare_zero => Err(format!(
            "zero {what} {q}: expected a positive duration, e.g. {example}"
        )),
        Ok(0) => Err(format!(
            "zero {what} {q}: expected a positive duration, e.g. {example}"
        )),
        Ok(ns) => Ok(ns),
        Err(DurationError::Negative(_)) => Err(format!(
            "negative {what} {q}: expected a positive duration, e.g. {example}"
        )),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

/// A warm-up count: 0 or more.
pub fn count(s: &str) -> Result<u64, String> {
    whole(s, "warm-up count", "20")
}

/// A CPU number.
pub fn cpu(s: &str) -> Result<u32, String> {
    let q = quoted(s);
    let n = whole(s, "CPU number", "0")?;
    u32::try_from(n).map_err(|_| format!("CPU number {q} is too large"))
}

/// A SCHED_FIFO priority: 1–99.
pub fn priority(s: &str) -> Result<u32, String> {
    let q = quoted(s);
    let n = whole(s, "priority", "50")?;
    if (1..=99).contains(&n) {
        Ok(n as u32)
    } else {
        Err(format!(
            "priority {q} is out of range: SCHED_FIFO priorities are 1 to 99"
        ))
    }
}

/// An idle-latency hint: whole µs, 0 to 2147483647 (an optional `us`/`µs`
/// suffix), as [`keeptime::IdleHint`] parses it.
pub fn idle_hint(s: &str) -> Result<keeptime::IdleHint, String> {
    s.trim().parse().map_err(|e: keeptime::Error| e.to_string())
}

/// A tail target as [`TailTarget`] parses it: a preset name, a share in
/// (0, 1) or a percentage.
pub fn tail_target(s: &str) -> Result<TailTarget, String> {
    s.parse().map_err(|_| {
        format!(
            "tail target {} is not accepted: use relaxed (5 %), balanced (1 %), strict (0.1 %), a share such as 0.01 (strictly between 0 and 1, at least 0.000001) or a percentage such as 1%",
            quoted(s)
        )
    })
}

/// A share of late sleeps, exactly what [`TailTarget`] accepts (a preset,
/// a share, a percentage), as the share it stands for (`1%` → 0.01).
pub fn tail_share(s: &str) -> Result<f64, String> {
    s.parse::<TailTarget>().map(TailTarget::share).map_err(|_| {
        format!(
            "tail {} is not a share in (0, 1): give relaxed, balanced, strict, a fraction or a percentage, e.g. 0.01 or 1% (at least 0.000001)",
            quoted(s)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_errors_name_the_value() {
        assert_eq!(
            whole("-2", "crowd size", "16").unwrap_err(),
            "negative crowd size '-2': expected a whole number, e.g. 16"
        );
        assert!(whole("99999999999999999999999", "x", "1")
            .unwrap_err()
            .contains("too large"));
        assert!(!whole("1\n2", "x", "1").unwrap_err().contains('\n'));
        assert!(priority("0").unwrap_err().contains("1 to 99"));
        assert_eq!(priority("99"), Ok(99));
        assert!(wait_duration("0ms").unwrap_err().contains("at least 1ns"));
        assert!(wait_duration("2h").unwrap_err().contains("1h"));
        assert_eq!(wait_duration("1h"), Ok(MAX_WAIT_NS));
        assert!(budget("0s").unwrap_err().contains("more than 0"));
        assert_eq!(sleep_duration("1.5"), Ok(1_500_000_000));
        assert_eq!(
            positive_duration("0ms", "interval", "1ms").unwrap_err(),
            "zero interval '0ms': expected a positive duration, e.g. 1ms"
        );
        assert_eq!(cpu("3"), Ok(3));
        assert!(cpu("4294967296").unwrap_err().contains("too large"));
    }

    #[test]
    fn tails_accept_exactly_what_a_tail_target_accepts() {
        assert_eq!(tail_share("1%"), Ok(0.01));
        assert_eq!(tail_share("0.001"), Ok(0.001));
        assert_eq!(tail_share(" 5 %"), Ok(0.05));
        assert_eq!(tail_share("strict"), Ok(0.001));
        assert_eq!(tail_share("relaxed"), Ok(0.05));
        for bad in [
            "0",
            "1",
            "100%",
            "-1%",
            "nan",
            "inf",
            "x",
            "",
            "1e400",
            "0.0000001",
        ] {
            assert!(bad.parse::<TailTarget>().is_err(), "{bad}");
            let e = tail_share(bad).unwrap_err();
            assert!(e.contains("(0, 1)") && !e.contains('\n'), "{bad}: {e}");
        }
        for good in ["balanced", "0.5", "50%", "0.000001", "1e-3"] {
            assert_eq!(
                tail_share(good),
                Ok(good.parse::<TailTarget>().unwrap().share()),
                "{good}"
            );
        }
    }
}
