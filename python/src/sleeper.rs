//! `keeptime.Sleeper` and the free sleep functions.

use crate::convert::{deadline_arg, mode_arg, ns_arg, seconds_to_ns, Length};
use crate::wait::{self, sleep_until_on_thread};
use keeptime::Mode;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, TryLockError};

/// Sleep for ``seconds`` (a float or an int), precisely: like ``time.sleep``
/// but never shorter and typically well under a microsecond longer.
///
/// The wait is an absolute OS wait until a learned margin before the
/// deadline, then a spin on the clock, all with the GIL released; the margin
/// is learned per thread. Ctrl-C raises ``KeyboardInterrupt`` as with
/// ``time.sleep``. ``sleep(0)`` returns at once (about 0.1 µs).
///
/// Raises ``ValueError`` for a negative or NaN length, ``OverflowError`` past
/// 2**64 - 1 ns (584 years), ``TypeError`` for anything but a number.
///
/// >>> import time
/// >>> start = time.monotonic_ns()
/// >>> keeptime.sleep(0.0001)                 # 100 µs
/// >>> time.monotonic_ns() - start >= 100_000
/// True
#[pyfunction]
pub fn sleep(py: Python<'_>, seconds: &Bound<'_, PyAny>) -> PyResult<()> {
    let ns = seconds_to_ns(seconds, Length::Sleep)?;
    let deadline = keeptime::os::monotonic_ns().saturating_add(ns);
    sleep_until_on_thread(py, deadline).map(drop)
}

/// Sleep for ``ns`` nanoseconds (an int), precisely; see :func:`sleep`.
///
/// Accepts ints only (or objects with ``__index__``): a float is a
/// ``TypeError``, a negative length a ``ValueError``.
///
/// >>> keeptime.sleep_ns(250_000)             # 250 µs
#[pyfunction]
pub fn sleep_ns(py: Python<'_>, ns: &Bound<'_, PyAny>) -> PyResult<()> {
    let ns = ns_arg(ns, Length::Sleep)?;
    let deadline = keeptime::os::monotonic_ns().saturating_add(ns);
    sleep_until_on_thread(py, deadline).map(drop)
}

/// Sleep until ``deadline_ns``, a reading of ``time.monotonic_ns()``
/// (``CLOCK_MONOTONIC``; on Linux also ``time.perf_counter_ns()``), and return
/// the first clock reading after the wait: never before the deadline. A
/// deadline in the past returns at once. Deadlines computed as
/// ``start + k * period`` give a loop that does not drift (or use
/// :class:`Ticker`).
///
/// >>> import time
/// >>> deadline = time.monotonic_ns() + 2_000_000
/// >>> woke = keeptime.sleep_until_ns(deadline)
/// >>> woke >= deadline and time.monotonic_ns() >= woke
/// True
#[pyfunction]
pub fn sleep_until_ns(py: Python<'_>, deadline_ns: &Bound<'_, PyAny>) -> PyResult<u64> {
    let deadline = deadline_arg(deadline_ns)?;
    sleep_until_on_thread(py, deadline)
}

/// A precise sleeper with its own learned margins, mode and knobs.
///
/// ``mode`` trades accuracy for CPU:
///
/// * ``"exact"`` (default): OS waits end a learned margin before the deadline
///   and a spin finishes the sleep. Never early; typically within a fraction
///   of a microsecond, at the CPU cost of the margin (a few µs) per sleep.
/// * ``"efficient"``: one OS wait shortened by the learned *median*
///   overshoot, no spin. Almost no CPU, but **may return a few µs early**
///   (about half of the time) and cannot wait less than the OS's wake-up
///   latency.
/// * ``"spin"``: a pure spin on the clock (yielding after 50 µs): the most
///   accurate, and a whole core for the whole wait.
///
/// ``timer_slack=True`` sets the waiting thread's Linux timer slack to 1 ns
/// (per thread, and it stays); ``False`` leaves the default 50 µs and the
/// margins learn the larger overshoot.
///
/// ``min_spin`` (seconds, default 0) is the shortest spin that finishes an
/// ``"exact"`` sleep: the last OS wait ends at least that long before the
/// deadline. The learned margin covers roughly the 97th percentile of the
/// OS's wake-up overshoot; on virtual machines the rarest wake-ups come tens
/// of µs late, and ``min_spin=60e-6`` buys spin-level p99 accuracy at a CPU
/// price of 60 µs per sleep.
///
/// The free functions (:func:`sleep` and friends) keep one exact-mode
/// sleeper per thread for you; make a ``Sleeper`` for another mode or knob.
///
/// Threads: a Sleeper may be shared and passed between threads but sleeps
/// for one thread at a time (its margins are one estimator): a second thread
/// calling it during a sleep gets ``RuntimeError``. ``mode`` may be read and
/// set from any thread at any time and applies from the next sleep.
///
/// >>> s = keeptime.Sleeper(mode="efficient")
/// >>> s
/// keeptime.Sleeper(mode='efficient', timer_slack=True)
/// >>> s.sleep(0.0005)                        # ~500 µs, almost no CPU
/// >>> s.mode = "exact"
/// >>> s.sleep_ns(100_000)                    # 100 µs, never early
#[pyclass(name = "Sleeper", module = "keeptime", frozen)]
pub struct PySleeper {
    inner: Mutex<keeptime::Sleeper>,
    mode: AtomicU8,
    timer_slack: bool,
    min_spin_ns: u64,
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
                    "this Sleeper is already sleeping in another thread (or in the code a signal \
                     handler interrupted); use one Sleeper per thread (keeptime.sleep keeps one per \
                     thread for you)",
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
    #[pyo3(signature = (mode = "exact", *, timer_slack = true, min_spin = None))]
    fn new(mode: &str, timer_slack: bool, min_spin: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let mode = mode_arg(mode)?;
        let min_spin_ns = match min_spin {
            Some(seconds) => seconds_to_ns(seconds, Length::MinSpin)?,
            None => 0,
        };
        let sleeper = keeptime::Sleeper::builder()
            .mode(mode)
            .timer_slack(timer_slack)
            .min_spin(std::time::Duration::from_nanos(min_spin_ns))
            .build();
        Ok(PySleeper {
            inner: Mutex::new(sleeper),
            mode: AtomicU8::new(mode_code(mode)),
            timer_slack,
            min_spin_ns,
        })
    }

    /// Sleep for ``seconds`` (a float or an int) in this sleeper's mode; errors
    /// as for :func:`keeptime.sleep`.
    fn sleep(&self, py: Python<'_>, seconds: &Bound<'_, PyAny>) -> PyResult<()> {
        let ns = seconds_to_ns(seconds, Length::Sleep)?;
        let deadline = keeptime::os::monotonic_ns().saturating_add(ns);
        self.sleep_until(py, deadline).map(drop)
    }

    /// Sleep for ``ns`` nanoseconds (an int) in this sleeper's mode.
    fn sleep_ns(&self, py: Python<'_>, ns: &Bound<'_, PyAny>) -> PyResult<()> {
        let ns = ns_arg(ns, Length::Sleep)?;
        let deadline = keeptime::os::monotonic_ns().saturating_add(ns);
        self.sleep_until(py, deadline).map(drop)
    }

    /// Sleep until ``deadline_ns`` (a ``time.monotonic_ns()`` reading) and
    /// return the first clock reading after the wait (before the deadline
    /// only in ``"efficient"`` mode).
    fn sleep_until_ns(&self, py: Python<'_>, deadline_ns: &Bound<'_, PyAny>) -> PyResult<u64> {
        let deadline = deadline_arg(deadline_ns)?;
        self.sleep_until(py, deadline)
    }

    /// The mode: ``"exact"``, ``"efficient"`` or ``"spin"`` (settable, any
    /// case; an unknown name is a ``ValueError``).
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

    /// Whether waiting threads get a 1 ns Linux timer slack (read-only).
    #[getter]
    fn timer_slack(&self) -> bool {
        self.timer_slack
    }

    /// The shortest final spin of an exact sleep, in nanoseconds (read-only).
    #[getter]
    fn min_spin_ns(&self) -> u64 {
        self.min_spin_ns
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let min_spin = if self.min_spin_ns == 0 {
            String::new()
        } else {
            // Python's own float repr, so the repr reads back as written.
            let seconds = pyo3::types::PyFloat::new(py, self.min_spin_ns as f64 / 1e9);
            format!(", min_spin={}", seconds.repr()?)
        };
        Ok(format!(
            "keeptime.Sleeper(mode='{}', timer_slack={}{})",
            self.mode(),
            if self.timer_slack { "True" } else { "False" },
            min_spin
        ))
    }
}
