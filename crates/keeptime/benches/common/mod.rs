//! Formatting shared by the benches (`peers`, `async`): one way to print a
//! figure, so their tables read alike.

use std::time::Duration;

/// Signed nanoseconds in ns, µs or ms with two decimals.
pub fn fmt_ns(ns: i64) -> String {
    let a = ns.unsigned_abs() as f64;
    if a < 1_000.0 {
        format!("{ns} ns")
    } else if a < 1_000_000.0 {
        format!("{:.2} µs", ns as f64 / 1e3)
    } else {
        format!("{:.2} ms", ns as f64 / 1e6)
    }
}

/// A duration as a table title (`1 ms`, `2.50 ms`, `250 µs`).
pub fn fmt_d(d: Duration) -> String {
    fmt_ns(d.as_nanos() as i64).replace(".00", "")
}

/// A target's verdict word.
pub fn ok(b: bool) -> &'static str {
    if b {
        "met"
    } else {
        "MISSED"
    }
}
