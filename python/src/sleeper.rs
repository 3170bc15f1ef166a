//! `keeptime.Sleeper` and the free sleep functions.

use crate::convert::{deadline_arg, mode_arg, ns_arg, seconds_to_ns, Length};
use crate::wait::{self, sleep_until_on_thread};
use keeptime::Mode;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, TryLockError};

/// Sleep for `seconds` (a float or an int), precisely.
#[pyfunction]
pub fn sleep(py: Python<'_>, seconds: &Bound<'_, PyAny>) -> PyResult<()> {
    let ns = seconds_to_ns(seconds, Length::Sleep)?;
    let deadline = keeptime::os::monotonic_ns().saturating_add(ns);
    sleep_until_on_thread(py, deadline).map(drop)
}

/// Sleep for `ns` nanoseconds (an int), precisely.
#[pyfunction]
pub fn sleep_ns(py: Python<'_>, ns: &Bound<'_, PyAny>) -> PyResult<()> {
    let ns = ns_arg(ns, Length::Sleep)?;
    let deadline = keeptime::os::monotonic_ns().saturating_add(ns);
    sleep_until_on_thread(py, deadline).map(drop)
}

/// Sleep until `deadline_ns` on the monotonic clock; return the clock then.
#[pyfunction]
pub fn sleep_until_ns(py: Python<'_>, deadline_ns: &Bound<'_, PyAny>) -> PyResult<u64> {
    let deadline = deadline_arg(deadline_ns)?;
    sleep_until_on_thread(py, deadline)
}

/// A precise sleeper with its own learned margins and mode.
///
/// Thread safety: the object may be shared and passed between threads, but it
/// sleeps for one thread at a time (its margins are one estimator); a second
/// thread calling it while it sleeps gets `RuntimeError`. The mode can be read
/// and changed from any thread at any time; it applies from the next sleep.
#[pyclass(name = "Sleeper", module = "keeptime", frozen)]
pub struct PySleeper {
    inner: Mutex<keeptime::Sleeper>,
    mode: AtomicU8,
    timer_slack: bool,
}

fn mode_code(mode: Mode) -> u8 {
    match mode {
        Mode::Exact => 0,
        Mode::Efficient => 1,
        Mode::Spin => 2,
    }
}

fn mode_from_code(code: u8) -> Mode {
    match code {
        1 => Mode::Efficient,
        2 => Mode::Spin,
        _ => Mode::Exact,
    }
}

impl PySleeper {
    fn sleep_until(&self, py: Python<'_>, deadline_ns: u64) -> PyResult<u64> {
        let now = keeptime::os::monotonic_ns();
        if now >= deadline_ns {
            return Ok(now);
        }
        let mut guard = match self.inner.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                return Err(PyRuntimeError::new_err(
                    "this Sleeper is already sleeping in another thread; \
                     use one Sleeper per thread (keeptime.sleep keeps one per thread for you)",
                ))
            }
        };
        let sleeper: &mut keeptime::Sleeper = &mut guard;
        sleeper.set_mode(mode_from_code(self.mode.load(Ordering::Relaxed)));
        wait::sleep_until(py, sleeper, deadline_ns)
    }
}

#[pymethods]
impl PySleeper {
    #[new]
    #[pyo3(signature = (mode = "exact", *, timer_slack = true))]
    fn new(mode: &str, timer_slack: bool) -> PyResult<Self> {
        let mode = mode_arg(mode)?;
        let sleeper = keeptime::Sleeper::builder()
            .mode(mode)
            .timer_slack(timer_slack)
            .build();
        Ok(PySleeper {
            inner: Mutex::new(sleeper),
            mode: AtomicU8::new(mode_code(mode)),
            timer_slack,
        })
    }

    /// Sleep for `seconds` (a float or an int).
    fn sleep(&self, py: Python<'_>, seconds: &Bound<'_, PyAny>) -> PyResult<()> {
        let ns = seconds_to_ns(seconds, Length::Sleep)?;
        let deadline = keeptime::os::monotonic_ns().saturating_add(ns);
        self.sleep_until(py, deadline).map(drop)
    }

    /// Sleep for `ns` nanoseconds (an int).
    fn sleep_ns(&self, py: Python<'_>, ns: &Bound<'_, PyAny>) -> PyResult<()> {
        let ns = ns_arg(ns, Length::Sleep)?;
        let deadline = keeptime::os::monotonic_ns().saturating_add(ns);
        self.sleep_until(py, deadline).map(drop)
    }

    /// Sleep until `deadline_ns` (a `time.monotonic_ns()` reading).
    fn sleep_until_ns(&self, py: Python<'_>, deadline_ns: &Bound<'_, PyAny>) -> PyResult<u64> {
        let deadline = deadline_arg(deadline_ns)?;
        self.sleep_until(py, deadline)
    }

    /// The mode: "exact", "efficient" or "spin".
    #[getter]
    fn mode(&self) -> String {
        mode_from_code(self.mode.load(Ordering::Relaxed)).to_string()
    }

    #[setter]
    fn set_mode(&self, mode: &str) -> PyResult<()> {
        let mode = mode_arg(mode)?;
        self.mode.store(mode_code(mode), Ordering::Relaxed);
        Ok(())
    }

    /// Whether waiting threads get a 1 ns Linux timer slack.
    #[getter]
    fn timer_slack(&self) -> bool {
        self.timer_slack
    }

    fn __repr__(&self) -> String {
        format!(
            "keeptime.Sleeper(mode='{}', timer_slack={})",
            self.mode(),
            if self.timer_slack { "True" } else { "False" }
        )
    }
}
