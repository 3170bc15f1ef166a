//! `keeptime.Ticker`, `keeptime.Schedule`, `keeptime.Tick`, `keeptime.TickerStats`.

use crate::convert::{missed_arg, mode_arg, ns_arg, seconds_to_ns, Length};
use crate::wait;
use keeptime::{MissedTicks, Schedule, Step, TickNs, TickerStats};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

fn zero_period(_: keeptime::Error) -> PyErr {
    PyValueError::new_err("ticker period must be greater than zero")
}

/// One delivered slot of a Ticker.
#[pyclass(name = "Tick", module = "keeptime", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyTick {
    #[pyo3(get)]
    index: u64,
    #[pyo3(get)]
    scheduled_ns: u64,
    #[pyo3(get)]
    lateness_ns: u64,
    #[pyo3(get)]
    skipped: u64,
}

impl From<TickNs> for PyTick {
    fn from(t: TickNs) -> Self {
        PyTick {
            index: t.index,
            scheduled_ns: t.scheduled_ns,
            lateness_ns: t.lateness_ns,
            skipped: t.skipped,
        }
    }
}

#[pymethods]
impl PyTick {
    #[new]
    #[pyo3(signature = (index, scheduled_ns, lateness_ns = 0, skipped = 0))]
    fn new(index: u64, scheduled_ns: u64, lateness_ns: u64, skipped: u64) -> Self {
        PyTick {
            index,
            scheduled_ns,
            lateness_ns,
            skipped,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "keeptime.Tick(index={}, scheduled_ns={}, lateness_ns={}, skipped={})",
            self.index, self.scheduled_ns, self.lateness_ns, self.skipped
        )
    }
}

/// Counters of a Ticker or Schedule.
#[pyclass(name = "TickerStats", module = "keeptime", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyTickerStats {
    #[pyo3(get)]
    ticks: u64,
    #[pyo3(get)]
    missed: u64,
    #[pyo3(get)]
    skipped: u64,
    #[pyo3(get)]
    worst_lateness_ns: u64,
}

impl From<TickerStats> for PyTickerStats {
    fn from(s: TickerStats) -> Self {
        PyTickerStats {
            ticks: s.ticks,
            missed: s.missed,
            skipped: s.skipped,
            worst_lateness_ns: s.worst_lateness_ns,
        }
    }
}

#[pymethods]
impl PyTickerStats {
    #[new]
    #[pyo3(signature = (ticks = 0, missed = 0, skipped = 0, worst_lateness_ns = 0))]
    fn new(ticks: u64, missed: u64, skipped: u64, worst_lateness_ns: u64) -> Self {
        PyTickerStats {
            ticks,
            missed,
            skipped,
            worst_lateness_ns,
        }
    }

    #[allow(clippy::wrong_self_convention)] // Python's name for it, as on the clock report
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("ticks", self.ticks)?;
        d.set_item("missed", self.missed)?;
        d.set_item("skipped", self.skipped)?;
        d.set_item("worst_lateness_ns", self.worst_lateness_ns)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "keeptime.TickerStats(ticks={}, missed={}, skipped={}, worst_lateness_ns={})",
            self.ticks, self.missed, self.skipped, self.worst_lateness_ns
        )
    }
}

/// The pure schedule behind Ticker.
#[pyclass(name = "Schedule", module = "keeptime")]
pub struct PySchedule {
    inner: Schedule,
}

#[pymethods]
impl PySchedule {
    #[new]
    #[pyo3(signature = (start_ns, period_ns, missed = "skip"))]
    fn new(
        start_ns: &Bound<'_, PyAny>,
        period_ns: &Bound<'_, PyAny>,
        missed: &str,
    ) -> PyResult<Self> {
        let start = ns_arg(start_ns, Length::Sleep)?;
        let period = ns_arg(period_ns, Length::Period)?;
        let inner = Schedule::new(start, period, missed_arg(missed)?).map_err(zero_period)?;
        Ok(PySchedule { inner })
    }

    /// tick() was called at `now_ns`.
    fn poll<'py>(&mut self, py: Python<'py>, now_ns: u64) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.inner.poll(now_ns) {
            Step::Wait { deadline_ns } => deadline_ns.into_pyobject(py)?.into_any(),
            Step::Now(tick) => Bound::new(py, PyTick::from(tick))?.into_any(),
        })
    }

    /// The wait asked for by poll() ended at `woke_ns`.
    fn woke(&mut self, woke_ns: u64) -> PyTick {
        self.inner.woke(woke_ns).into()
    }

    /// Restart from `now_ns`: the next slot is due one period later.
    fn reset(&mut self, now_ns: u64) {
        self.inner.reset(now_ns);
    }

    #[getter]
    fn period_ns(&self) -> u64 {
        self.inner.period_ns()
    }

    #[setter]
    fn set_period_ns(&mut self, period_ns: &Bound<'_, PyAny>) -> PyResult<()> {
        let period = ns_arg(period_ns, Length::Period)?;
        self.inner.set_period(period).map_err(zero_period)
    }

    #[getter]
    fn missed(&self) -> String {
        self.inner.policy().to_string()
    }

    #[getter]
    fn next_index(&self) -> u64 {
        self.inner.next_index()
    }

    #[getter]
    fn next_deadline_ns(&self) -> u64 {
        self.inner.next_deadline_ns()
    }

    #[getter]
    fn stats(&self) -> PyTickerStats {
        self.inner.stats().into()
    }

    fn __repr__(&self) -> String {
        format!(
            "keeptime.Schedule(period_ns={}, missed='{}', next_index={}, next_deadline_ns={})",
            self.inner.period_ns(),
            self.inner.policy(),
            self.inner.next_index(),
            self.inner.next_deadline_ns()
        )
    }
}

/// A fixed-rate loop on an absolute schedule.
///
/// Thread safety: the schedule (stats, period, reset) and the sleeper are
/// locked separately, so any thread may read `stats` or change `period` while
/// another waits in `tick()`; a change made during a wait is honoured (the
/// wait continues to the new deadline). Only one thread can be inside
/// `tick()` at a time: a second gets `RuntimeError`.
#[pyclass(name = "Ticker", module = "keeptime", frozen)]
pub struct PyTicker {
    schedule: Mutex<Schedule>,
    sleeper: Mutex<keeptime::Sleeper>,
}

impl PyTicker {
    fn schedule(&self) -> MutexGuard<'_, Schedule> {
        self.schedule.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn next_tick(&self, py: Python<'_>) -> PyResult<PyTick> {
        let mut sleeper = match self.sleeper.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => {
                return Err(PyRuntimeError::new_err(
                    "this Ticker is already ticking in another thread",
                ))
            }
        };
        loop {
            let now = keeptime::os::monotonic_ns();
            let deadline = match self.schedule().poll(now) {
                Step::Now(tick) => return Ok(tick.into()),
                Step::Wait { deadline_ns } => deadline_ns,
            };
            let s: &mut keeptime::Sleeper = &mut sleeper;
            let woke = wait::sleep_until(py, s, deadline)?;
            let mut schedule = self.schedule();
            // Another thread may have reset the ticker or changed its period
            // while this one waited: then wait again, for the new deadline.
            if schedule.next_deadline_ns() == deadline {
                return Ok(schedule.woke(woke).into());
            }
        }
    }
}

#[pymethods]
impl PyTicker {
    #[new]
    #[pyo3(signature = (period, missed = "skip", *, mode = "exact", timer_slack = true))]
    fn new(
        period: &Bound<'_, PyAny>,
        missed: &str,
        mode: &str,
        timer_slack: bool,
    ) -> PyResult<Self> {
        let period_ns = seconds_to_ns(period, Length::Period)?;
        Self::build(period_ns, missed_arg(missed)?, mode, timer_slack)
    }

    /// A ticker whose period is given in nanoseconds.
    #[staticmethod]
    #[pyo3(signature = (period_ns, missed = "skip", *, mode = "exact", timer_slack = true))]
    fn from_ns(
        period_ns: &Bound<'_, PyAny>,
        missed: &str,
        mode: &str,
        timer_slack: bool,
    ) -> PyResult<Self> {
        let period_ns = ns_arg(period_ns, Length::Period)?;
        Self::build(period_ns, missed_arg(missed)?, mode, timer_slack)
    }

    /// Wait for the next slot (or return at once if it already passed).
    fn tick(&self, py: Python<'_>) -> PyResult<PyTick> {
        self.next_tick(py)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<PyTick> {
        self.next_tick(py)
    }

    /// Restart the schedule from now.
    fn reset(&self) {
        self.schedule().reset(keeptime::os::monotonic_ns());
    }

    #[getter]
    fn stats(&self) -> PyTickerStats {
        self.schedule().stats().into()
    }

    #[getter]
    fn period(&self) -> f64 {
        self.schedule().period_ns() as f64 / 1e9
    }

    #[setter]
    fn set_period(&self, period: &Bound<'_, PyAny>) -> PyResult<()> {
        let period_ns = seconds_to_ns(period, Length::Period)?;
        self.schedule().set_period(period_ns).map_err(zero_period)
    }

    #[getter]
    fn period_ns(&self) -> u64 {
        self.schedule().period_ns()
    }

    #[setter]
    fn set_period_ns(&self, period_ns: &Bound<'_, PyAny>) -> PyResult<()> {
        let period_ns = ns_arg(period_ns, Length::Period)?;
        self.schedule().set_period(period_ns).map_err(zero_period)
    }

    #[getter]
    fn missed(&self) -> String {
        self.schedule().policy().to_string()
    }

    #[getter]
    fn next_index(&self) -> u64 {
        self.schedule().next_index()
    }

    #[getter]
    fn next_deadline_ns(&self) -> u64 {
        self.schedule().next_deadline_ns()
    }

    fn __repr__(&self) -> String {
        let s = self.schedule();
        format!(
            "keeptime.Ticker(period_ns={}, missed='{}', next_index={})",
            s.period_ns(),
            s.policy(),
            s.next_index()
        )
    }
}

impl PyTicker {
    fn build(period_ns: u64, missed: MissedTicks, mode: &str, timer_slack: bool) -> PyResult<Self> {
        let sleeper = keeptime::Sleeper::builder()
            .mode(mode_arg(mode)?)
            .timer_slack(timer_slack)
            .build();
        let start = keeptime::os::monotonic_ns();
        let schedule = Schedule::new(start, period_ns, missed).map_err(zero_period)?;
        Ok(PyTicker {
            schedule: Mutex::new(schedule),
            sleeper: Mutex::new(sleeper),
        })
    }
}
