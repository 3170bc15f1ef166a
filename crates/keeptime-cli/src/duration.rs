//! Durations as people type them: `10ms`, `2.5ms`, `250us`, `250µs`, `1e-3s`.
//!
//! The grammar is `[+]DIGITS[.DIGITS][e[+-]DIGITS]UNIT` (or `.DIGITS`), with
//! `UNIT` one of [`UNITS`]. The decimal is converted exactly (no floating
//! point) and rounded *up* to whole nanoseconds, so a sleep is never shortened
//! by rounding. Anything that does not fit in a `u64` of nanoseconds (about
//! 584 years) is an error, never a wrap or a panic.

use std::fmt;

/// Accepted units and their length in nanoseconds, as listed in error messages.
pub const UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// The units as shown to users.
pub const UNITS_HELP: &str = "ns, us (or µs), ms, s, min, h";

/// Why a duration was not accepted. Its `Display` is one line that names the
/// bad value and says what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DurationError {
    /// Nothing (or only blanks) was given.
    Empty,
    /// A leading minus sign.
    Negative(String),
    /// No digits where the number should be, or a malformed exponent.
    NotANumber(String),
    /// A number without a unit where a unit is required.
    MissingUnit(String),
    /// Something after the number that is not a unit.
    UnknownUnit {
        /// The whole input.
        input: String,
        /// The part that is not a unit.
        unit: String,
    },
    /// More than `u64::MAX` nanoseconds.
    TooLong(String),
}

/// `'text'` with control characters and quotes escaped, so a message that
/// quotes user input stays on one line.
pub fn quoted(text: &str) -> String {
    format!("'{}'", text.escape_debug())
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DurationError::Empty => write!(
                f,
                "empty duration: expected a number and a unit, e.g. 10ms or 2.5us (units: {UNITS_HELP})"
            ),
            DurationError::Negative(s) => write!(
                f,
                "negative duration {}: durations must be zero or more, e.g. 10ms",
                quoted(s)
            ),
            DurationError::NotANumber(s) => write!(
                f,
                "invalid duration {}: expected a decimal number and a unit, e.g. 10ms, 2.5us or 1e-3s (units: {UNITS_HELP})",
                quoted(s)
            ),
            DurationError::MissingUnit(s) => write!(
                f,
                "duration {} has no unit: add one of {UNITS_HELP}, e.g. {}ms",
                quoted(s),
                s.escape_debug()
            ),
            DurationError::UnknownUnit { input, unit } => write!(
                f,
                "unknown unit {} in duration {}: accepted units are {UNITS_HELP}",
                quoted(unit),
                quoted(input)
            ),
            DurationError::TooLong(s) => write!(
                f,
                "duration {} is too long: at most {} ns (about 584 years)",
                quoted(s),
                u64::MAX
            ),
        }
    }
}

impl std::error::Error for DurationError {}

/// Parses a duration that must carry a unit (`--durations`, `--budget`) into
/// nanoseconds.
///
/// ```
/// use keeptime_cli::duration::parse_ns;
/// assert_eq!(parse_ns("2.5ms"), Ok(2_500_000));
/// assert_eq!(parse_ns("250µs"), Ok(250_000));
/// assert_eq!(parse_ns("1.5ns"), Ok(2)); // rounded up
/// assert!(parse_ns("5parsecs").is_err());
/// ```
pub fn parse_ns(input: &str) -> Result<u64, DurationError> {
    parse_with_default(input, None)
}

/// Parses a duration the way GNU `sleep` does: a bare number means seconds.
pub fn parse_ns_default_seconds(input: &str) -> Result<u64, DurationError> {
    parse_with_default(input, Some(1_000_000_000))
}

/// Largest power of ten kept in the mantissa; further digits only decide the
/// rounding (they are below a nanosecond or the value overflows anyway).
const MANTISSA_CAP: u128 = 10u128.pow(20);
/// Exponents are clamped to this; anything beyond is zero or overflow.
const EXPONENT_CLAMP: i64 = 1_000;

/// A decimal being read: the value is `mantissa × 10^exp10`, plus a little
/// more when `sticky` (digits dropped past [`MANTISSA_CAP`] were not all zero).
#[derive(Default)]
struct Decimal {
    mantissa: u128,
    exp10: i64,
    sticky: bool,
}

impl Decimal {
    fn push(&mut self, digit: u8, fraction: bool) {
        if self.mantissa < MANTISSA_CAP {
            self.mantissa = self.mantissa * 10 + u128::from(digit);
            if fraction {
                self.exp10 -= 1;
            }
        } else {
            if !fraction {
                self.exp10 += 1;
            }
            self.sticky |= digit != 0;
        }
    }
}

fn parse_with_default(input: &str, default_unit_ns: Option<u64>) -> Result<u64, DurationError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(DurationError::Empty);
    }
    let owned = || s.to_owned();
    let body = match s.as_bytes()[0] {
        b'-' => return Err(DurationError::Negative(owned())),
        b'+' => &s[1..],
        _ => s,
    };

    let bytes = body.as_bytes();
    let mut i = 0;
    let mut dec = Decimal::default();
    let mut digits = 0usize;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        dec.push(bytes[i] - b'0', false);
        digits += 1;
        i += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            dec.push(bytes[i] - b'0', true);
            digits += 1;
            i += 1;
        }
    }
    if digits == 0 {
        return Err(DurationError::NotANumber(owned()));
    }
    // An exponent: `e` followed by an optional sign and at least one digit.
    // (No unit starts with `e`, so `e` here is never the start of a unit.)
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        i += 1;
        let negative = match bytes.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i64 = 0;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            e = (e * 10 + i64::from(bytes[i] - b'0')).min(EXPONENT_CLAMP);
            i += 1;
        }
        if i == start {
            return Err(DurationError::NotANumber(owned()));
        }
        dec.exp10 = dec.exp10.saturating_add(if negative { -e } else { e });
    }

    let unit = &body[i..];
    let unit_ns = if unit.is_empty() {
        match default_unit_ns {
            Some(ns) => ns,
            None => return Err(DurationError::MissingUnit(owned())),
        }
    } else {
        match UNITS.iter().find(|(name, _)| *name == unit) {
            Some(&(_, ns)) => ns,
            None => {
                return Err(DurationError::UnknownUnit {
                    input: owned(),
                    unit: unit.to_owned(),
                })
            }
        }
    };

    scale(dec.mantissa, dec.exp10, dec.sticky, unit_ns)
        .ok_or_else(|| DurationError::TooLong(owned()))
}

/// `ceil(mantissa * 10^exp10 * unit_ns)` (plus one when `sticky` and the
/// product is whole), or `None` past `u64::MAX`.
fn scale(mantissa: u128, exp10: i64, sticky: bool, unit_ns: u64) -> Option<u64> {
    if mantissa == 0 {
        return Some(0);
    }
    // mantissa < 10^21 and unit_ns < 2^42, so this cannot overflow a u128.
    let n = mantissa * u128::from(unit_ns);
    let value = if exp10 >= 0 {
        let factor = 10u128.checked_pow(u32::try_from(exp10).ok()?)?;
        // Dropped digits only happen for integers already past u64 range.
        n.checked_mul(factor)?.checked_add(u128::from(sticky))?
    } else {
        let divisor_exp = u32::try_from(-exp10).unwrap_or(u32::MAX);
        match 10u128.checked_pow(divisor_exp) {
            Some(divisor) => {
                let whole = n / divisor;
                let exact = n % divisor == 0 && !sticky;
                whole + u128::from(!exact)
            }
            // 10^39 and beyond exceeds any n: the value is a fraction of a nanosecond.
            None => 1,
        }
    };
    u64::try_from(value).ok()
}

/// Splits a comma-separated list and parses every item with `parse`; the
/// first bad item's error is returned.
pub fn parse_list<T, E>(input: &str, parse: impl Fn(&str) -> Result<T, E>) -> Result<Vec<T>, E> {
    input.split(',').map(parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn units() {
        assert_eq!(parse_ns("7ns"), Ok(7));
        assert_eq!(parse_ns("7us"), Ok(7_000));
        assert_eq!(parse_ns("7µs"), Ok(7_000));
        assert_eq!(parse_ns("7μs"), Ok(7_000));
        assert_eq!(parse_ns("7ms"), Ok(7_000_000));
        assert_eq!(parse_ns("7s"), Ok(7_000_000_000));
        assert_eq!(parse_ns("2min"), Ok(120_000_000_000));
        assert_eq!(parse_ns("1h"), Ok(3_600_000_000_000));
    }

    #[test]
    fn decimals_are_exact_and_round_up() {
        assert_eq!(parse_ns("2.5ms"), Ok(2_500_000));
        assert_eq!(parse_ns("0.1s"), Ok(100_000_000));
        assert_eq!(parse_ns(".5us"), Ok(500));
        assert_eq!(parse_ns("5.us"), Ok(5_000));
        assert_eq!(parse_ns("1.5ns"), Ok(2));
        assert_eq!(parse_ns("0.000000001s"), Ok(1));
        assert_eq!(parse_ns("0.0000000011s"), Ok(2));
        assert_eq!(parse_ns("1.00000000000000000000000001ns"), Ok(2));
        assert_eq!(parse_ns("1.00000000000000000000000000ns"), Ok(1));
        assert_eq!(parse_ns("+3ms"), Ok(3_000_000));
        assert_eq!(parse_ns(" 3ms "), Ok(3_000_000));
    }

    #[test]
    fn exponents() {
        assert_eq!(parse_ns("1e-3s"), Ok(1_000_000));
        assert_eq!(parse_ns("2.5E2us"), Ok(250_000));
        assert_eq!(parse_ns("1e+2ns"), Ok(100));
        assert_eq!(parse_ns("1e-999999999999s"), Ok(1));
        assert_eq!(parse_ns("0e999999999999s"), Ok(0));
        assert!(matches!(parse_ns("1e30s"), Err(DurationError::TooLong(_))));
        assert!(matches!(
            parse_ns("1e999999999999s"),
            Err(DurationError::TooLong(_))
        ));
        assert!(matches!(parse_ns("1es"), Err(DurationError::NotANumber(_))));
        assert!(matches!(
            parse_ns("1e-s"),
            Err(DurationError::NotANumber(_))
        ));
    }

    #[test]
    fn limits() {
        assert_eq!(parse_ns("18446744073709551615ns"), Ok(u64::MAX));
        assert!(matches!(
            parse_ns("18446744073709551616ns"),
            Err(DurationError::TooLong(_))
        ));
        assert!(matches!(
            parse_ns("18446744073.709551616s"),
            Err(DurationError::TooLong(_))
        ));
        assert_eq!(parse_ns("18446744073.709551615s"), Ok(u64::MAX));
        assert!(matches!(
            parse_ns("99999999999999999999999999999999999999999999ns"),
            Err(DurationError::TooLong(_))
        ));
        assert_eq!(parse_ns("0ns"), Ok(0));
        assert_eq!(
            parse_ns("000000000000000000000000000000000000000001ns"),
            Ok(1)
        );
    }

    #[test]
    fn errors_name_the_value_and_what_is_accepted() {
        let e = parse_ns("5parsecs").unwrap_err();
        assert_eq!(
            e,
            DurationError::UnknownUnit {
                input: "5parsecs".into(),
                unit: "parsecs".into()
            }
        );
        let msg = e.to_string();
        assert!(msg.contains("'parsecs'") && msg.contains("'5parsecs'") && msg.contains("ms"));
        assert!(matches!(parse_ns("-5ms"), Err(DurationError::Negative(_))));
        assert!(matches!(parse_ns(""), Err(DurationError::Empty)));
        assert!(matches!(parse_ns("   "), Err(DurationError::Empty)));
        assert!(matches!(parse_ns("ms"), Err(DurationError::NotANumber(_))));
        assert!(matches!(parse_ns("."), Err(DurationError::NotANumber(_))));
        assert!(matches!(parse_ns("10"), Err(DurationError::MissingUnit(_))));
        assert!(matches!(parse_ns("inf"), Err(DurationError::NotANumber(_))));
        assert!(matches!(
            parse_ns("NaNs"),
            Err(DurationError::NotANumber(_))
        ));
        assert!(matches!(
            parse_ns("10 ms"),
            Err(DurationError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_ns("1.2.3ms"),
            Err(DurationError::UnknownUnit { .. })
        ));
        for e in [
            parse_ns("e10\nZs").unwrap_err(),
            parse_ns("5\n\rms").unwrap_err(),
            parse_ns("-\n").unwrap_err(),
            parse_ns("").unwrap_err(),
            parse_ns("-1s").unwrap_err(),
            parse_ns("x").unwrap_err(),
            parse_ns("1").unwrap_err(),
            parse_ns("1e40s").unwrap_err(),
        ] {
            assert!(!e.to_string().contains('\n'));
        }
    }

    #[test]
    fn bare_numbers_are_seconds_for_sleep() {
        assert_eq!(parse_ns_default_seconds("2"), Ok(2_000_000_000));
        assert_eq!(parse_ns_default_seconds("0.25"), Ok(250_000_000));
        assert_eq!(parse_ns_default_seconds("5ms"), Ok(5_000_000));
    }

    #[test]
    fn lists() {
        assert_eq!(
            parse_list("250us,2.5ms,1s", parse_ns),
            Ok(vec![250_000, 2_500_000, 1_000_000_000])
        );
        assert!(parse_list("1ms,,2ms", parse_ns).is_err());
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = parse_ns(&s);
            let _ = parse_ns_default_seconds(&s);
        }

        #[test]
        fn number_like_input_never_panics(s in "[-+]?[0-9]{0,45}(\\.[0-9]{0,45})?([eE][-+]?[0-9]{0,25})?(ns|us|µs|ms|s|min|h|x)?") {
            let _ = parse_ns(&s);
        }

        #[test]
        fn whole_nanoseconds_round_trip(n in any::<u64>()) {
            prop_assert_eq!(parse_ns(&format!("{n}ns")), Ok(n));
        }

        #[test]
        fn seconds_with_nine_decimals_round_trip(n in any::<u64>()) {
            let s = format!("{}.{:09}s", n / 1_000_000_000, n % 1_000_000_000);
            prop_assert_eq!(parse_ns(&s), Ok(n));
        }

        #[test]
        fn units_scale(n in 0u64..=18_446_744_073_709, unit in 0usize..UNITS.len()) {
            let (name, ns) = UNITS[unit];
            let expected = n.checked_mul(ns);
            let got = parse_ns(&format!("{n}{name}"));
            match expected {
                Some(v) => prop_assert_eq!(got, Ok(v)),
                None => prop_assert!(matches!(got, Err(DurationError::TooLong(_)))),
            }
        }

        #[test]
        fn exponent_form_agrees(n in 0u64..1_000_000_000, e in 0i64..10) {
            // n × 10^-e seconds, written both ways.
            let scaled = format!("{n}e-{e}s");
            let via_ns = (u128::from(n) * 1_000_000_000).div_ceil(10u128.pow(e as u32));
            prop_assert_eq!(parse_ns(&scaled), Ok(via_ns as u64));
        }

        #[test]
        fn rounding_never_shortens(ms in 0u64..1_000_000, frac in 0u64..1_000_000) {
            let s = format!("{ms}.{frac:06}ms");
            let exact_ns_times_1000 = u128::from(ms) * 1_000_000_000 + u128::from(frac) * 1_000;
            let got = u128::from(parse_ns(&s).unwrap());
            prop_assert!(got * 1000 >= exact_ns_times_1000);
            prop_assert!(got * 1000 < exact_ns_times_1000 + 1000);
        }
    }
}
