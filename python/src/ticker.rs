//! `keeptime.Ticker`, `keeptime.Schedule`, `keeptime.Tick`, `keeptime.TickerStats`.

use crate::convert::{missed_arg, ns_arg, seconds_to_ns, Length};
use crate::idle_hint::{idle_hint_arg, HintSlot, PyIdleHintStatus};
use crate::sleeper::SleeperSettings;
use crate::wait;
use keeptime::{Schedule, Step, TickNs, TickerStats};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

fn zero_period(_: keeptime::Error) -> PyErr {
    PyValueError::new_err("ticker period must be greater than zero")
}

/// One delivered slot of a :class:`Ticker` (or :class:`Schedule`): which
/// slot, when it was due, how late it was delivered and how many slots were
/// dropped just before it. Immutable, hashable, compares by value.
///
/// >>> keeptime.Tick(3, scheduled_ns=5_000_000, lateness_ns=412)
/// keeptime.Tick(index=3, scheduled_ns=5000000, lateness_ns=412, skipped=0)
#[pyclass(name = "Tick", module = "keeptime", frozen, eq, hash)]
pub struct PyTick {
    /// Slot number ``k`` (the first tick is 1), due at ``start + k * period``
    /// (for ``missed="delay"``, counted from the latest restart).
    #[pyo3(get)]
    index: u64,
    /// When this slot was due, on the ``time.monotonic_ns()`` clock.
    #[pyo3(get)]
    scheduled_ns: u64,
    /// Set once, by the tick that makes the object: the object is made before
    /// the wait's final spin and this is the one field written after it.
    lateness_ns: AtomicU64,
    /// Slots dropped just before this one (``missed="skip"`` only).
    #[pyo3(get)]
    skipped: u64,
}

impl PyTick {
    fn fields(&self) -> (u64, u64, u64, u64) {
        (
            self.index,
            self.scheduled_ns,
            self.lateness_ns.load(Ordering::Relaxed),
            self.skipped,
        )
    }
}

impl PartialEq for PyTick {
    fn eq(&self, other: &Self) -> bool {
        self.fields() == other.fields()
    }
}

impl Eq for PyTick {}

impl Hash for PyTick {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.fields().hash(state);
    }
}

impl From<TickNs> for PyTick {
    fn from(t: TickNs) -> Self {
        PyTick {
            index: t.index,
            scheduled_ns: t.scheduled_ns,
            lateness_ns: AtomicU64::new(t.lateness_ns),
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
            lateness_ns: AtomicU64::new(lateness_ns),
            skipped,
        }
    }

    /// How long after ``scheduled_ns`` the tick was delivered, ns (0 if
    /// earlier, which only ``mode="efficient"`` can do).
    #[getter]
    fn lateness_ns(&self) -> u64 {
        self.lateness_ns.load(Ordering::Relaxed)
    }

    fn __repr__(&self) -> String {
        format!(
            "keeptime.Tick(index={}, scheduled_ns={}, lateness_ns={}, skipped={})",
            self.index,
            self.scheduled_ns,
            self.lateness_ns(),
            self.skipped
        )
    }
}

/// Counters of a :class:`Ticker` or :class:`Schedule` since it was made.
///
/// >>> stats = keeptime.TickerStats(ticks=10, missed=1)
/// >>> stats.to_dict()
/// {'ticks': 10, 'missed': 1, 'skipped': 0, 'worst_lateness_ns': 0}
#[pyclass(name = "TickerStats", module = "keeptime", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyTickerStats {
    /// Ticks delivered.
    #[pyo3(get)]
    ticks: u64,
    /// Deadlines that had passed when ``tick()`` was called: late deliveries
    /// plus skipped slots.
    #[pyo3(get)]
    missed: u64,
    /// Slots dropped by ``missed="skip"``.
    #[pyo3(get)]
    skipped: u64,
    /// Largest lateness of any delivered tick, ns.
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

    /// The counters as a dict, in field order.
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

/// The pure state machine behind :class:`Ticker`, with no clock of its own:
/// deadlines ``start_ns + k * period_ns``, the missed-tick policy and the
/// stats (spec/ticker.md). For simulations, and for driving a schedule from
/// your own event loop; the spec's ticker vectors run through it.
///
/// Call :meth:`poll` with the current time. An ``int`` answer is a deadline:
/// wait until it, then call :meth:`woke` with the time you woke to get the
/// :class:`Tick`. A :class:`Tick` answer means the deadline had passed and the
/// tick is delivered at once, as the policy says.
///
/// >>> s = keeptime.Schedule(start_ns=1_000, period_ns=100)
/// >>> s.poll(1_050)                          # slot 1 is due at 1_100: wait
/// 1100
/// >>> s.woke(1_103)
/// keeptime.Tick(index=1, scheduled_ns=1100, lateness_ns=3, skipped=0)
/// >>> s.poll(1_450)                          # slots 2-4 passed: skip to 4
/// keeptime.Tick(index=4, scheduled_ns=1400, lateness_ns=50, skipped=2)
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

    /// ``tick()`` was called at ``now_ns``: returns the deadline to wait for
    /// (an ``int``; then call :meth:`woke`), or the :class:`Tick` delivered at
    /// once because the deadline had passed (``missed`` decides which slot).
    fn poll<'py>(&mut self, py: Python<'py>, now_ns: u64) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.inner.poll(now_ns) {
            Step::Wait { deadline_ns } => deadline_ns.into_pyobject(py)?.into_any(),
            Step::Now(tick) => Bound::new(py, PyTick::from(tick))?.into_any(),
        })
    }

    /// The wait asked for by :meth:`poll` ended at ``woke_ns``: the tick.
    fn woke(&mut self, woke_ns: u64) -> PyTick {
        self.inner.woke(woke_ns).into()
    }

    /// Restart from ``now_ns``: the next slot is due one period later; slot
    /// numbers continue.
    fn reset(&mut self, now_ns: u64) {
        self.inner.reset(now_ns);
    }

    /// The period, ns. Setting it (``0`` is a ``ValueError``) makes the next
    /// slot due one new period after the last delivered slot's deadline.
    #[getter]
    fn period_ns(&self) -> u64 {
        self.inner.period_ns()
    }

    #[setter]
    fn set_period_ns(&mut self, period_ns: &Bound<'_, PyAny>) -> PyResult<()> {
        let period = ns_arg(period_ns, Length::Period)?;
        self.inner.set_period(period).map_err(zero_period)
    }

    /// The missed-tick policy: ``"skip"``, ``"burst"`` or ``"delay"``.
    #[getter]
    fn missed(&self) -> String {
        self.inner.policy().to_string()
    }

    /// Index of the next slot.
    #[getter]
    fn next_index(&self) -> u64 {
        self.inner.next_index()
    }

    /// Deadline of the next slot, ns (saturates at 2**64 - 1).
    #[getter]
    fn next_deadline_ns(&self) -> u64 {
        self.inner.next_deadline_ns()
    }

    /// The counters so far (a :class:`TickerStats`).
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

/// A fixed-rate loop on an absolute schedule: slot ``k`` (k = 1, 2, …) is
/// due at ``start + k * period``, ``start`` being when the ticker was made
/// (or last :meth:`reset`). Deadlines are never computed from "now", so the
/// loop does not drift however long its body takes.
///
/// Iterating (``for tick in ticker``, endless) or calling :meth:`tick` waits
/// precisely until the next slot with the ticker's own sleeper (``mode``,
/// ``timer_slack``, ``min_spin`` and ``tail_target`` as for :class:`Sleeper`,
/// with the same errors), GIL released, and returns a
/// :class:`Tick`. ``period`` is in seconds (:meth:`from_ns` takes ns); zero
/// or negative is a ``ValueError``.
///
/// When the body overran a deadline, ``missed`` decides (the timeline of
/// each policy on one overrun is drawn in the ticker spec, ``spec/ticker.md``):
///
/// * ``"skip"`` (default): deliver the latest passed slot at once, drop the
///   ones before it (``tick.skipped``); for control, audio and game loops.
/// * ``"burst"``: deliver every missed slot at once, one per call, until
///   caught up; for loops that must process every slot.
/// * ``"delay"``: deliver the late slot and restart the schedule from now.
///
/// ``profile`` (a :class:`Profile`, or the path of one; default ``None``)
/// starts the ticker's sleeper from what an earlier run on this machine
/// learned, as for :class:`Sleeper`; without one it starts from the default
/// profile in force (:func:`set_default_profile`), if one is set.
///
/// ``idle_hint_us`` (an int from 0 to 2**31 - 1, default ``None``) asks the
/// kernel to keep CPU wake-up latency at most that many µs while the ticker
/// lives, as for :class:`Sleeper` (its docstring has the details). **The
/// price:** idle CPUs poll instead of sleeping (more power; on a VM the host
/// sees the vCPU as busy). A refusal warns once per process and changes
/// nothing else; read :attr:`idle_hint_status`.
///
/// Threads: the schedule and the sleeper are locked separately, so any thread
/// may read ``stats`` or change ``period`` while another waits in ``tick()``
/// (the wait then continues to the new deadline); a second thread calling
/// ``tick()`` at the same time gets ``RuntimeError``.
///
/// >>> import itertools
/// >>> ticker = keeptime.Ticker(0.001, missed="skip")   # 1 kHz
/// >>> for tick in itertools.islice(ticker, 5):
/// ...     pass                                  # the loop body
/// >>> ticker.stats.ticks
/// 5
/// >>> tick.index == 5 + ticker.stats.skipped
/// True
#[pyclass(name = "Ticker", module = "keeptime", frozen)]
pub struct PyTicker {
    schedule: Mutex<Schedule>,
    sleeper: Mutex<keeptime::Sleeper>,
    /// The sleeper's `min_spin` and `tail_target`, fixed at construction
    /// (readable while another thread waits in `tick()`).
    min_spin_ns: u64,
    tail_target: keeptime::TailTarget,
    /// The idle-latency request (`idle_hint_us`), held while this object lives.
    idle_hint: HintSlot,
}

impl PyTicker {
    fn schedule(&self) -> MutexGuard<'_, Schedule> {
        self.schedule.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn next_tick<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTick>> {
        let mut sleeper =
            match self.sleeper.try_lock() {
                Ok(guard) => guard,
                Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => return Err(PyRuntimeError::new_err(
                    "this Ticker is already ticking in another thread (or in the code a signal \
                     handler interrupted)",
                )),
            };
        let s: &mut keeptime::Sleeper = &mut sleeper;
        let mode = s.mode();
        // The core's ticker loop (spec/ticker.md, *The driver*): the schedule
        // is locked only to poll and to record, so other threads may reset
        // it or change its period during the wait (the driver then polls
        // again). A wait that ends in a spin is recorded at the hand-off;
        // the Tick object is made before the final spin too, and only its
        // lateness is written after it.
        let (tick, handoff) = keeptime::drive_tick(
            &mut &self.schedule,
            keeptime::os::monotonic_ns(),
            |deadline| {
                wait::sleep_to_handoff(py, mode, deadline, |deadline, lead, keep_going| {
                    s.sleep_until_ns_to_handoff_with_lead(deadline, lead, keep_going)
                })
            },
        )?;
        drop(sleeper);
        let tick = Bound::new(py, PyTick::from(tick))?;
        if let Some(late) = handoff.and_then(|h| h.finish_overrun(&keeptime::System::default())) {
            tick.get().lateness_ns.store(late, Ordering::Relaxed);
        }
        Ok(tick)
    }
}

#[pymethods]
impl PyTicker {
    #[new]
    #[pyo3(signature = (period, missed = "skip", *, mode = "exact", timer_slack = true, min_spin = None, tail_target = None, idle_hint_us = None, profile = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        period: &Bound<'_, PyAny>,
        missed: &str,
        mode: &str,
        timer_slack: bool,
        min_spin: Option<&Bound<'_, PyAny>>,
        tail_target: Option<&Bound<'_, PyAny>>,
        idle_hint_us: Option<&Bound<'_, PyAny>>,
        profile: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let period_ns = seconds_to_ns(period, Length::Period)?;
        let settings = SleeperSettings::parse(mode, timer_slack, min_spin, tail_target)?;
        Self::build(py, period_ns, missed, settings, idle_hint_us, profile)
    }

    /// A ticker whose period is ``period_ns`` nanoseconds (an int); otherwise
    /// as the constructor.
    ///
    /// >>> keeptime.Ticker.from_ns(250_000).period
    /// 0.00025
    #[staticmethod]
    #[pyo3(signature = (period_ns, missed = "skip", *, mode = "exact", timer_slack = true, min_spin = None, tail_target = None, idle_hint_us = None, profile = None))]
    #[allow(clippy::too_many_arguments)]
    fn from_ns(
        py: Python<'_>,
        period_ns: &Bound<'_, PyAny>,
        missed: &str,
        mode: &str,
        timer_slack: bool,
        min_spin: Option<&Bound<'_, PyAny>>,
        tail_target: Option<&Bound<'_, PyAny>>,
        idle_hint_us: Option<&Bound<'_, PyAny>>,
        profile: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let period_ns = ns_arg(period_ns, Length::Period)?;
        let settings = SleeperSettings::parse(mode, timer_slack, min_spin, tail_target)?;
        Self::build(py, period_ns, missed, settings, idle_hint_us, profile)
    }

    /// Wait for the next slot (or return at once if its deadline passed, as
    /// ``missed`` says) and return its :class:`Tick`. Ctrl-C raises
    /// ``KeyboardInterrupt``; an interrupted wait consumes no slot.
    fn tick<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTick>> {
        self.next_tick(py)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTick>> {
        self.next_tick(py)
    }

    /// ``async for tick in ticker``: the same endless schedule, each wait a
    /// precise ``keeptime.asyncio`` wait that holds the event loop for at
    /// most a few µs (the ticker's ``mode`` applies to blocking ticks only).
    /// A cancelled wait consumes no slot.
    fn __aiter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The awaitable of the next tick (see :meth:`__aiter__`).
    fn __anext__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let py = slf.py();
        py.import("keeptime.asyncio")?
            .getattr("_next_tick")?
            .call1((slf,))
    }

    /// For ``keeptime.asyncio``: the next slot at ``now_ns``, a :class:`Tick`
    /// delivered at once or the deadline (an ``int``) to wait for.
    fn _poll<'py>(&self, py: Python<'py>, now_ns: u64) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.schedule().poll(now_ns) {
            Step::Wait { deadline_ns } => deadline_ns.into_pyobject(py)?.into_any(),
            Step::Now(tick) => Bound::new(py, PyTick::from(tick))?.into_any(),
        })
    }

    /// For ``keeptime.asyncio``: the wait for ``deadline_ns`` ended at
    /// ``woke_ns``; the :class:`Tick`, or ``None`` if the schedule changed
    /// meanwhile (reset, new period) and the caller must poll again.
    fn _woke(&self, deadline_ns: u64, woke_ns: u64) -> Option<PyTick> {
        self.schedule()
            .woke_for(deadline_ns, woke_ns)
            .map(PyTick::from)
    }

    /// The shortest spin that finishes each wait, ns (``min_spin``).
    #[getter]
    fn min_spin_ns(&self) -> u64 {
        self.min_spin_ns
    }

    /// The share of waits allowed to end late (``tail_target``), e.g. 0.01.
    #[getter]
    fn tail_target(&self) -> f64 {
        self.tail_target.share()
    }

    /// Whether a thread is inside ``tick()`` right now (for tests that must
    /// know another thread is waiting, without guessing how long it takes).
    #[getter]
    fn _ticking(&self) -> bool {
        matches!(self.sleeper.try_lock(), Err(TryLockError::WouldBlock))
    }

    /// Restart the schedule from now: the next slot is due one period from
    /// now; slot numbers continue.
    fn reset(&self) {
        self.schedule().reset(keeptime::os::monotonic_ns());
    }

    /// The counters since creation (a :class:`TickerStats` snapshot; readable
    /// from any thread, also while another waits in ``tick()``).
    #[getter]
    fn stats(&self) -> PyTickerStats {
        self.schedule().stats().into()
    }

    /// The period in seconds. Setting it (zero is a ``ValueError``) makes the
    /// next slot due one new period after the last delivered slot's deadline.
    #[getter]
    fn period(&self) -> f64 {
        self.schedule().period_ns() as f64 / 1e9
    }

    #[setter]
    fn set_period(&self, period: &Bound<'_, PyAny>) -> PyResult<()> {
        let period_ns = seconds_to_ns(period, Length::Period)?;
        self.schedule().set_period(period_ns).map_err(zero_period)
    }

    /// The period in nanoseconds (settable, like :attr:`period`).
    #[getter]
    fn period_ns(&self) -> u64 {
        self.schedule().period_ns()
    }

    #[setter]
    fn set_period_ns(&self, period_ns: &Bound<'_, PyAny>) -> PyResult<()> {
        let period_ns = ns_arg(period_ns, Length::Period)?;
        self.schedule().set_period(period_ns).map_err(zero_period)
    }

    /// The missed-tick policy: ``"skip"``, ``"burst"`` or ``"delay"``.
    #[getter]
    fn missed(&self) -> String {
        self.schedule().policy().to_string()
    }

    /// The idle-latency hint asked for, µs, or ``None``; settable from any
    /// thread as :attr:`Sleeper.idle_hint_us`.
    #[getter]
    fn idle_hint_us(&self) -> Option<u32> {
        self.idle_hint.asked_us()
    }

    #[setter]
    fn set_idle_hint_us(&self, py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let hint = idle_hint_arg(value)?;
        self.idle_hint.set(py, hint)
    }

    /// Whether the idle-latency hint is held, was refused or was not asked
    /// for: an :class:`IdleHintStatus`.
    #[getter]
    fn idle_hint_status(&self) -> PyIdleHintStatus {
        self.idle_hint.status()
    }

    /// Index of the next slot.
    #[getter]
    fn next_index(&self) -> u64 {
        self.schedule().next_index()
    }

    /// When the next slot is due, on the ``time.monotonic_ns()`` clock.
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
    fn build(
        py: Python<'_>,
        period_ns: u64,
        missed: &str,
        settings: SleeperSettings,
        idle_hint_us: Option<&Bound<'_, PyAny>>,
        profile: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let missed = missed_arg(missed)?;
        // From the profile given, else from the default profile in force.
        let sleeper = match profile {
            Some(p) => crate::profile::with_profile_arg(py, p, |p| settings.builder().profile(p))?,
            None => settings.builder().with_default_profile(),
        }
        .build();
        let (min_spin_ns, tail_target) = (settings.min_spin_ns, settings.target);
        let hint = idle_hint_arg(idle_hint_us)?;
        // Requested before the schedule starts (the request may open a device).
        let idle_hint = HintSlot::request(py, hint)?;
        let start = keeptime::os::monotonic_ns();
        let schedule = Schedule::new(start, period_ns, missed).map_err(zero_period)?;
        Ok(PyTicker {
            schedule: Mutex::new(schedule),
            sleeper: Mutex::new(sleeper),
            min_spin_ns,
            tail_target,
            idle_hint,
        })
    }
}
