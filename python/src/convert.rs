//! Python arguments to nanoseconds, with the errors `time.sleep` users expect:
//! `ValueError` for negative and NaN, `OverflowError` for too large,
//! `TypeError` for anything that is not a number.

use keeptime::{MissedTicks, Mode, TailTarget};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyFloat, PyString};

const NANOS_PER_SEC: u64 = 1_000_000_000;
/// 2**64 as a float: the first value that does not fit in `u64` nanoseconds.
const NS_LIMIT: f64 = 18_446_744_073_709_551_616.0;

/// What a duration argument is, for its error messages.
#[derive(Clone, Copy)]
pub enum Length {
    /// A sleep: zero is fine, negative is not.
    Sleep,
    /// A ticker period: must be greater than zero.
    Period,
    /// A sleeper's shortest final spin: zero is fine, negative is not.
    MinSpin,
}

impl Length {
    fn negative(self) -> PyErr {
        PyValueError::new_err(match self {
            Length::Sleep => "sleep length must be non-negative",
            Length::Period => "ticker period must be greater than zero",
            Length::MinSpin => "min_spin must be non-negative",
        })
    }

    fn too_large(self) -> PyErr {
        PyOverflowError::new_err(match self {
            Length::Sleep => "sleep length is too large (at most 2**64 - 1 ns, 584 years)",
            Length::Period => "ticker period is too large (at most 2**64 - 1 ns, 584 years)",
            Length::MinSpin => "min_spin is too large (at most 2**64 - 1 ns, 584 years)",
        })
    }

    fn check(self, ns: u64) -> PyResult<u64> {
        match self {
            Length::Period if ns == 0 => Err(self.negative()),
            _ => Ok(ns),
        }
    }
}

/// Seconds as `time.sleep` takes them (a float, or an int or anything with
/// `__index__`), rounded up to whole nanoseconds so a wait is never shorter
/// than asked (CPython's own rounding for timeouts).
pub fn seconds_to_ns(obj: &Bound<'_, PyAny>, what: Length) -> PyResult<u64> {
    if let Ok(f) = obj.cast::<PyFloat>() {
        let secs = f.value();
        if secs.is_nan() {
            return Err(PyValueError::new_err("Invalid value NaN (not a number)"));
        }
        if secs < 0.0 {
            return Err(what.negative());
        }
        let ns = (secs * 1e9).ceil();
        if ns >= NS_LIMIT {
            return Err(what.too_large());
        }
        // In range and non-negative, so the cast is exact.
        return what.check(ns as u64);
    }
    let secs = int_arg(obj, what)?;
    what.check(
        secs.checked_mul(NANOS_PER_SEC)
            .ok_or_else(|| what.too_large())?,
    )
}

/// Whole nanoseconds: an int (or anything with `__index__`); floats are a
/// `TypeError`, as for `range()`.
pub fn ns_arg(obj: &Bound<'_, PyAny>, what: Length) -> PyResult<u64> {
    what.check(int_arg(obj, what)?)
}

/// A monotonic-clock reading in nanoseconds (`time.monotonic_ns()`).
pub fn deadline_arg(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    match obj.extract::<u64>() {
        Ok(ns) => Ok(ns),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            if obj.lt(0)? {
                Err(PyValueError::new_err(
                    "deadline must be non-negative (a time.monotonic_ns() reading)",
                ))
            } else {
                Err(PyOverflowError::new_err(
                    "deadline is too large (at most 2**64 - 1 ns)",
                ))
            }
        }
        Err(e) => Err(e),
    }
}

fn int_arg(obj: &Bound<'_, PyAny>, what: Length) -> PyResult<u64> {
    match obj.extract::<u64>() {
        Ok(v) => Ok(v),
        // u64 extraction raises OverflowError both for negative and for huge ints.
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            if obj.lt(0)? {
                Err(what.negative())
            } else {
                Err(what.too_large())
            }
        }
        Err(e) => Err(e),
    }
}

/// `"exact"`, `"efficient"` or `"spin"` (any case).
pub fn mode_arg(name: &str) -> PyResult<Mode> {
    name.parse().map_err(|_| {
        PyValueError::new_err(format!(
            "mode must be 'exact', 'efficient' or 'spin', not '{name}'"
        ))
    })
}

/// `"skip"`, `"burst"` or `"delay"` (any case).
pub fn missed_arg(name: &str) -> PyResult<MissedTicks> {
    name.parse().map_err(|_| {
        PyValueError::new_err(format!(
            "missed must be 'skip', 'burst' or 'delay', not '{name}'"
        ))
    })
}

/// The smallest tail target (spec/sleep.md): 1 ppm.
const MIN_TAIL_SHARE: f64 = 1e-6;

/// What a tail target accepts, for its error messages.
const TAIL_TARGET_ACCEPTS: &str =
    "a share strictly between 0 and 1 (at least 1e-06, e.g. 0.01 for 1 %) or 'relaxed', 'balanced' or 'strict'";

/// A tail target: a share in `(0, 1)` (a float, an int, or anything with
/// `__float__`), or a preset name `"relaxed"`, `"balanced"` or `"strict"`
/// (any case). `TypeError` for anything else, `ValueError` for NaN, a share
/// out of range or an unknown name: never clamped.
pub fn tail_target_arg(obj: &Bound<'_, PyAny>) -> PyResult<TailTarget> {
    let bad_value = || -> PyResult<PyErr> {
        Ok(PyValueError::new_err(format!(
            "tail_target must be {TAIL_TARGET_ACCEPTS}, not {}",
            obj.repr()?
        )))
    };
    if let Ok(name) = obj.cast::<PyString>() {
        return match name.to_cow()?.trim().to_ascii_lowercase().as_str() {
            "relaxed" => Ok(TailTarget::RELAXED),
            "balanced" => Ok(TailTarget::BALANCED),
            "strict" => Ok(TailTarget::STRICT),
            _ => Err(bad_value()?),
        };
    }
    let share = match obj.extract::<f64>() {
        Ok(share) => share,
        // An int too large for a float is a number out of range.
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => return Err(bad_value()?),
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "tail_target must be {TAIL_TARGET_ACCEPTS}, not '{}'",
                obj.get_type().name()?
            )))
        }
    };
    // spec/sleep.md rejects shares below 10⁻⁶ (the core would round 5e-7 up to 1 ppm).
    match TailTarget::new(share) {
        Ok(target) if share >= MIN_TAIL_SHARE => Ok(target),
        _ => Err(bad_value()?),
    }
}
