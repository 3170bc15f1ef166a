//! Numbers for people: nanoseconds with the unit chosen by size, percentages
//! and ratios with as many digits as matter.

/// Three significant digits (whole numbers from 100 up).
fn sig3(x: f64) -> String {
    let a = x.abs();
    if a >= 99.95 {
        format!("{x:.0}")
    } else if a >= 9.995 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The unit for a value of `abs_ns` nanoseconds: (divisor, name).
fn unit_for(abs_ns: f64) -> (f64, &'static str) {
    if abs_ns < 999.5 {
        (1.0, "ns")
    } else if abs_ns < 999_500.0 {
        (1e3, "µs")
    } else if abs_ns < 999_500_000.0 {
        (1e6, "ms")
    } else {
        (1e9, "s")
    }
}

/// A signed time in ns with an automatic unit: `212 ns`, `54.3 µs`, `-1.20 ms`.
pub fn ns(v: i64) -> String {
    ns_f64(v as f64)
}

/// Like [`ns`] for fractional nanoseconds (means, deviations).
pub fn ns_f64(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let (div, unit) = unit_for(v.abs());
    if div == 1.0 {
        format!("{v:.0} {unit}")
    } else {
        format!("{} {unit}", sig3(v / div))
    }
}

/// `mean ± σ` in the unit of the larger of the two: `12.3 ± 4.50 µs`.
pub fn mean_sd(mean: f64, sd: f64) -> String {
    if !mean.is_finite() || !sd.is_finite() {
        return "n/a".into();
    }
    let (div, unit) = unit_for(mean.abs().max(sd.abs()));
    if div == 1.0 {
        format!("{mean:.0} ± {sd:.0} {unit}")
    } else {
        format!("{} ± {} {unit}", sig3(mean / div), sig3(sd / div))
    }
}

/// A cell's return column: `12 ns / 40 ns` (p50 / p90), or `—` for a
/// method that returns no clock reading of its own.
pub fn return_pair(ret: Option<crate::bench::result::Return>) -> String {
    match ret {
        Some(r) => format!("{} / {}", ns(r.p50_ns), ns(r.p90_ns)),
        None => "—".into(),
    }
}

/// A requested duration, exactly when it is round: `10 ms`, `2.5 ms`, `250 µs`.
pub fn duration(ns: u64) -> String {
    let (div, unit) = if ns >= 1_000_000_000 {
        (1_000_000_000u64, "s")
    } else if ns >= 1_000_000 {
        (1_000_000, "ms")
    } else if ns >= 1_000 {
        (1_000, "µs")
    } else {
        (1, "ns")
    };
    let whole = ns / div;
    let frac = ns % div;
    if frac == 0 {
        return format!("{whole} {unit}");
    }
    let digits = div.ilog10() as usize;
    let s = format!("{frac:0digits$}");
    format!("{whole}.{} {unit}", s.trim_end_matches('0'))
}

/// A percentage: `98 %`, `2.1 %`, `0.05 %`.
pub fn percent(p: f64) -> String {
    if !p.is_finite() {
        return "n/a".into();
    }
    if p >= 9.95 {
        format!("{p:.0} %")
    } else if p >= 0.995 {
        format!("{p:.1} %")
    } else {
        format!("{p:.2} %")
    }
}

/// A ratio for "N× …" and "1/N of …": `47`, `2.3`.
pub fn ratio(r: f64) -> String {
    if r >= 9.5 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(ns(0), "0 ns");
        assert_eq!(ns(212), "212 ns");
        assert_eq!(ns(999), "999 ns");
        assert_eq!(ns(1_000), "1.00 µs");
        assert_eq!(ns(54_321), "54.3 µs");
        assert_eq!(ns(-1_204_000), "-1.20 ms");
        assert_eq!(ns(999_999), "1.00 ms");
        assert_eq!(ns(2_500_000_000), "2.50 s");
        assert_eq!(ns(i64::MIN), "-9223372037 s");
        assert_eq!(ns_f64(f64::NAN), "n/a");
        assert_eq!(mean_sd(12_345.0, 4_500.0), "12.3 ± 4.50 µs");
        assert_eq!(mean_sd(80.0, 1_500.0), "0.08 ± 1.50 µs");
        assert_eq!(mean_sd(80.4, 12.2), "80 ± 12 ns");
    }

    #[test]
    fn durations() {
        assert_eq!(duration(10_000_000), "10 ms");
        assert_eq!(duration(2_500_000), "2.5 ms");
        assert_eq!(duration(250_000), "250 µs");
        assert_eq!(duration(1_000_000_000), "1 s");
        assert_eq!(duration(1_000_000_001), "1.000000001 s");
        assert_eq!(duration(7), "7 ns");
        assert_eq!(duration(u64::MAX), "18446744073.709551615 s");
    }

    #[test]
    fn percents_and_ratios() {
        assert_eq!(percent(98.4), "98 %");
        assert_eq!(percent(2.12), "2.1 %");
        assert_eq!(percent(0.051), "0.05 %");
        assert_eq!(ratio(47.2), "47");
        assert_eq!(ratio(2.34), "2.3");
    }
}
