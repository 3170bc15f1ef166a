//! `keeptime.Sleeper` and the free sleep functions.

use crate::convert::{deadline_arg, mode_arg, ns_arg, seconds_to_ns, tail_target_arg, Length};
use crate::idle_hint::{idle_hint_arg, HintSlot, PyIdleHintStatus};
use crate::profile::PyProfile;
use crate::wait::{self, sleep_until_on_thread};
use keeptime::{Mode, SleeperStats, TailTarget};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError, TryLockError};

/// Sleep for ``seconds`` (a float or an int), precisely: like ``time.sleep``
/// but never shorter and typically well under a microsecond longer.
///
/// The wait is the cheapest plan of absolute OS waits then a spin on the
/// clock that keeps at most 1 % of sleeps late (the default tail target;
/// make a :class:`Sleeper` for another), all with the GIL released; what the
/// plan is made from is learned per thread. Ctrl-C raises
/// ``KeyboardInterrupt`` as with ``time.sleep``. ``sleep(0)`` returns at
/// once (about 0.1 µs).
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

/// A precise sleeper with its own learned wake-ups, mode and knobs.
///
/// ``mode`` trades accuracy for CPU:
///
/// * ``"exact"`` (default): per sleep, the plan with the least expected CPU
///   (one or two OS waits then a spin on the clock, or a pure spin) whose
///   predicted share of late sleeps meets ``tail_target``, from this
///   machine's learned OS wake-ups and their CPU cost. Never early; outside
///   that share, within a fraction of a microsecond.
/// * ``"efficient"``: one OS wait shortened by the learned *median*
///   overshoot, no spin. Almost no CPU, but **may return a few µs early**
///   (about half of the time) and cannot wait less than the OS's wake-up
///   latency.
/// * ``"spin"``: a pure spin on the clock (after 50 µs it yields while the
///   deadline is more than 20 µs away): the most accurate, and a whole core
///   for the whole wait.
///
/// ``tail_target`` (exact mode) is the share of sleeps allowed to end late
/// because the OS woke the thread after the deadline: a float strictly
/// between 0 and 1 (at least 1e-06; held in parts per million), or a preset
/// name: ``"relaxed"`` (:data:`TAIL_RELAXED`, 5 %), ``"balanced"``
/// (:data:`TAIL_BALANCED`, 1 %, the default: a spin-level p99) or
/// ``"strict"`` (:data:`TAIL_STRICT`, 0.1 %). A stricter target spins
/// longer. ``TypeError`` for anything but a number or a string,
/// ``ValueError`` for NaN, a share out of range or an unknown name; nothing
/// is clamped. Settable.
///
/// ``timer_slack=True`` sets the waiting thread's Linux timer slack to 1 ns
/// (per thread, and it stays); ``False`` leaves the default 50 µs and the
/// sleeper learns the larger overshoot.
///
/// ``min_spin`` (seconds, default 0) is the shortest spin that finishes an
/// ``"exact"`` sleep: the last OS wait ends at least that long before the
/// deadline. A floor under the plan, which already sizes the spin for the
/// tail target.
///
/// ``idle_hint_us`` (an int from 0 to 2**31 - 1, default ``None``: not
/// asked) asks the kernel to keep CPU wake-up latency at most that many µs
/// while the sleeper lives: a PM QoS request on ``/dev/cpu_dma_latency``, the
/// one cyclictest holds at 0. With a cpuidle driver that has deep or polling
/// idle states (``haltpoll``, ``intel_idle``, ``acpi_idle``) OS waits then
/// wake sooner, so exact sleeps spin less; with no cpuidle driver it changes
/// little. **The price:** idle CPUs poll instead of sleeping, which costs
/// power, and on a virtual machine the host sees the vCPU as busy. The
/// request is per process and reference-counted (the strictest live value is
/// in force; it ends when the last sleeper or ticker holding it is collected).
/// If it is refused (not root, no such device) the sleeper works exactly as
/// without it and the process warns once (``RuntimeWarning``); read
/// :attr:`idle_hint_status`. ``TypeError`` for a non-int, ``ValueError``
/// outside the range.
///
/// ``profile`` (a :class:`Profile`, or the path of one; default ``None``)
/// starts the sleeper from what an earlier run on this machine learned
/// (``keeptime trace --profile FILE``, or :meth:`profile` and
/// :meth:`Profile.write`) instead of from nothing: a fresh sleeper spins for
/// its first hundreds of sleeps while it learns. A path is read as
/// :meth:`Profile.load` reads it: a profile made on another machine is a
/// :class:`ProfileError` (load it with ``ignore_machine=True`` to use it
/// anyway).
///
/// :meth:`stats` says what the sleeper has spent: sleeps, late sleeps, OS
/// waits, spin time and its CPU estimate.
///
/// The free functions (:func:`sleep` and friends) keep one exact-mode
/// sleeper per thread for you; make a ``Sleeper`` for another mode or knob.
///
/// Threads: a Sleeper may be shared and passed between threads but sleeps
/// for one thread at a time (what it learns is one model): a second thread
/// calling it during a sleep gets ``RuntimeError``. ``mode`` and
/// ``tail_target`` may be read and set, and :meth:`stats` read, from any
/// thread at any time; settings apply from the next sleep.
///
/// >>> s = keeptime.Sleeper(mode="efficient")
/// >>> s
/// keeptime.Sleeper(mode='efficient', timer_slack=True)
/// >>> s.sleep(0.0005)                        # ~500 µs, almost no CPU
/// >>> s.mode = "exact"
/// >>> s.sleep_ns(100_000)                    # 100 µs, never early
/// >>> s.tail_target = "strict"               # at most 0.1 % late
/// >>> s.tail_target == keeptime.TAIL_STRICT
/// True
/// >>> s.stats().sleeps
/// 2
#[pyclass(name = "Sleeper", module = "keeptime", frozen)]
pub struct PySleeper {
    inner: Mutex<keeptime::Sleeper>,
    mode: AtomicU8,
    timer_slack: bool,
    min_spin_ns: u64,
    /// The tail target in ppm (always a valid one).
    tail_ppm: AtomicU32,
    /// What this sleeper's sleeps spent (the core sleeper's stats, summed
    /// per sleep); readable during a sleep.
    stats: Mutex<SleeperStats>,
    /// The idle-latency request (`idle_hint_us`), held while this object lives.
    idle_hint: HintSlot,
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

/// A sleeper's settings as Python passes them (``mode``, ``timer_slack``,
/// ``min_spin`` in seconds, ``tail_target``): one parser for `Sleeper` and
/// `Ticker`, so both take the same knobs with the same errors.
pub(crate) struct SleeperSettings {
    pub mode: Mode,
    pub timer_slack: bool,
    pub min_spin_ns: u64,
    pub target: TailTarget,
}

impl SleeperSettings {
    pub fn parse(
        mode: &str,
        timer_slack: bool,
        min_spin: Option<&Bound<'_, PyAny>>,
        tail_target: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Ok(SleeperSettings {
            mode: mode_arg(mode)?,
            timer_slack,
            min_spin_ns: match min_spin {
                Some(seconds) => seconds_to_ns(seconds, Length::MinSpin)?,
                None => 0,
            },
            target: match tail_target {
                Some(target) => tail_target_arg(target)?,
                None => TailTarget::default(),
            },
        })
    }

    pub fn builder(&self) -> keeptime::SleeperBuilder {
        keeptime::Sleeper::builder()
            .mode(self.mode)
            .timer_slack(self.timer_slack)
            .min_spin(std::time::Duration::from_nanos(self.min_spin_ns))
            .tail_target(self.target)
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
        sleeper.set_tail_target(self.tail_target_value());
        let before = sleeper.stats();
        let result = wait::sleep_to_handoff(
            py,
            sleeper.mode(),
            deadline_ns,
            |deadline, lead, keep_going| {
                sleeper.sleep_until_ns_to_handoff_with_lead(deadline, lead, keep_going)
            },
        );
        let spent = sleeper.stats();
        drop(guard);
        // The bookkeeping is done with the GIL held, before the final spin:
        // the core's own account of this sleep (its late count and its spin,
        // the lead included, are against the real deadline).
        let mut stats = self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        stats.sleeps += spent.sleeps.wrapping_sub(before.sleeps);
        stats.late += spent.late.wrapping_sub(before.late);
        stats.os_waits += spent.os_waits.wrapping_sub(before.os_waits);
        stats.unproven_sleeps += spent.unproven_sleeps.wrapping_sub(before.unproven_sleeps);
        stats.spin_ns = stats
            .spin_ns
            .saturating_add(spent.spin_ns.wrapping_sub(before.spin_ns));
        stats.cpu_estimate_ns = stats
            .cpu_estimate_ns
            .saturating_add(spent.cpu_estimate_ns.wrapping_sub(before.cpu_estimate_ns));
        drop(stats);
        Ok(wait::finish(result?))
    }

    fn tail_target_value(&self) -> TailTarget {
        TailTarget::from_ppm(self.tail_ppm.load(Ordering::Relaxed)).unwrap_or_default()
    }
}

#[pymethods]
impl PySleeper {
    #[new]
    #[pyo3(signature = (mode = "exact", *, timer_slack = true, min_spin = None, tail_target = None, idle_hint_us = None, profile = None))]
    fn new(
        py: Python<'_>,
        mode: &str,
        timer_slack: bool,
        min_spin: Option<&Bound<'_, PyAny>>,
        tail_target: Option<&Bound<'_, PyAny>>,
        idle_hint_us: Option<&Bound<'_, PyAny>>,
        profile: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let settings = SleeperSettings::parse(mode, timer_slack, min_spin, tail_target)?;
        let hint = idle_hint_arg(idle_hint_us)?;
        let mut builder = settings.builder();
        if let Some(p) = profile {
            builder = crate::profile::with_profile_arg(py, p, |p| builder.profile(p))?;
        }
        let sleeper = builder.build();
        Ok(PySleeper {
            inner: Mutex::new(sleeper),
            mode: AtomicU8::new(mode_code(settings.mode)),
            timer_slack,
            min_spin_ns: settings.min_spin_ns,
            tail_ppm: AtomicU32::new(settings.target.ppm()),
            stats: Mutex::new(SleeperStats::default()),
            // Checked above, requested last: a bad argument requests nothing.
            idle_hint: HintSlot::request(py, hint)?,
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

    /// The share of exact sleeps allowed to end late because the OS woke the
    /// thread after the deadline, as a float (e.g. ``0.01``). Settable from
    /// any thread to a share in (0, 1) or ``"relaxed"``, ``"balanced"`` or
    /// ``"strict"``; applies from the next sleep; what was learned is kept.
    ///
    /// >>> s = keeptime.Sleeper(tail_target=0.002)
    /// >>> s.tail_target
    /// 0.002
    /// >>> s.tail_target = "relaxed"
    /// >>> s.tail_target
    /// 0.05
    /// >>> s.tail_target = 1.5
    /// Traceback (most recent call last):
    /// ...
    /// ValueError: tail_target must be a share strictly between 0 and 1 (at least 1e-06, e.g. 0.01 for 1 %) or 'relaxed', 'balanced' or 'strict', not 1.5
    #[getter]
    fn tail_target(&self) -> f64 {
        self.tail_target_value().share()
    }

    #[setter]
    fn set_tail_target(&self, target: &Bound<'_, PyAny>) -> PyResult<()> {
        let target = tail_target_arg(target)?;
        self.tail_ppm.store(target.ppm(), Ordering::Relaxed);
        Ok(())
    }

    /// The idle-latency hint asked for, µs, or ``None`` (see the class
    /// docstring for what it does and its price). Settable from any thread
    /// to an int from 0 to 2**31 - 1 or ``None`` (gives it up); the new
    /// request is made before the old one is released.
    #[getter]
    fn idle_hint_us(&self) -> Option<u32> {
        self.idle_hint.asked_us()
    }

    #[setter]
    fn set_idle_hint_us(&self, py: Python<'_>, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let hint = idle_hint_arg(value)?;
        self.idle_hint.set(py, hint)
    }

    /// Whether the idle-latency hint is held (and the value in force for
    /// the process), was refused (and why) or was not asked for: an
    /// :class:`IdleHintStatus`.
    #[getter]
    fn idle_hint_status(&self) -> PyIdleHintStatus {
        self.idle_hint.status()
    }

    /// Whether a thread is inside a sleep of this sleeper right now (for
    /// tests that must know another thread is waiting, without guessing how
    /// long it takes).
    #[getter]
    fn _sleeping(&self) -> bool {
        matches!(self.inner.try_lock(), Err(TryLockError::WouldBlock))
    }

    /// What this sleeper has spent since it was made (or since
    /// :meth:`reset_stats`): a :class:`SleeperStats` snapshot. Readable from
    /// any thread; a sleep in progress is counted when it ends.
    ///
    /// >>> s = keeptime.Sleeper()
    /// >>> for _ in range(3):
    /// ...     s.sleep(0.0002)
    /// >>> st = s.stats()
    /// >>> st.sleeps, st.late <= st.sleeps, st.cpu_estimate_ns >= st.spin_ns
    /// (3, True, True)
    fn stats(&self) -> PySleeperStats {
        (*self.stats.lock().unwrap_or_else(PoisonError::into_inner)).into()
    }

    /// A :class:`Profile` of what this sleeper has learned, made on this
    /// machine: :meth:`Profile.write` it, and start a later run's sleepers
    /// from it (``Sleeper(profile=...)``). ``RuntimeError`` while another
    /// thread sleeps with this sleeper.
    fn profile(&self) -> PyResult<PyProfile> {
        match self.inner.try_lock() {
            Ok(guard) => Ok(PyProfile {
                inner: guard.profile(),
            }),
            Err(TryLockError::Poisoned(poisoned)) => Ok(PyProfile {
                inner: poisoned.into_inner().profile(),
            }),
            Err(TryLockError::WouldBlock) => Err(PyRuntimeError::new_err(
                "this Sleeper is sleeping in another thread; take its profile between sleeps",
            )),
        }
    }

    /// Starts the stats afresh; what the sleeper learned is kept.
    fn reset_stats(&self) {
        *self.stats.lock().unwrap_or_else(PoisonError::into_inner) = SleeperStats::default();
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let min_spin = if self.min_spin_ns == 0 {
            String::new()
        } else {
            // Python's own float repr, so the repr reads back as written.
            let seconds = PyFloat::new(py, self.min_spin_ns as f64 / 1e9);
            format!(", min_spin={}", seconds.repr()?)
        };
        let target = self.tail_target_value();
        let tail_target = if target == TailTarget::default() {
            String::new()
        } else {
            format!(", tail_target={}", PyFloat::new(py, target.share()).repr()?)
        };
        let idle_hint = match self.idle_hint.asked_us() {
            Some(us) => format!(", idle_hint_us={us}"),
            None => String::new(),
        };
        Ok(format!(
            "keeptime.Sleeper(mode='{}', timer_slack={}{}{}{})",
            self.mode(),
            if self.timer_slack { "True" } else { "False" },
            min_spin,
            tail_target,
            idle_hint
        ))
    }
}

/// What a :class:`Sleeper` has spent: sleeps, late sleeps, OS waits, spin
/// time and its CPU estimate (:meth:`Sleeper.stats`). Immutable, hashable,
/// compares by value.
///
/// >>> st = keeptime.SleeperStats(sleeps=200, late=1, os_waits=210, spin_ns=900_000, cpu_estimate_ns=5_100_000)
/// >>> st.late_share
/// 0.005
/// >>> st
/// keeptime.SleeperStats(sleeps=200, late=1, os_waits=210, spin_ns=900000, cpu_estimate_ns=5100000, unproven_sleeps=0)
#[pyclass(name = "SleeperStats", module = "keeptime", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PySleeperStats {
    /// Sleeps that had to wait (the deadline had not passed when called).
    #[pyo3(get)]
    sleeps: u64,
    /// Sleeps that ended after their deadline because an OS wait woke the
    /// thread late (a spin-finished sleep is never counted here): the tail
    /// target bounds ``late / sleeps``.
    #[pyo3(get)]
    late: u64,
    /// OS waits issued (a wait resumed after a signal counts once).
    #[pyo3(get)]
    os_waits: u64,
    /// Time spent spinning, ns.
    #[pyo3(get)]
    spin_ns: u64,
    /// Estimated thread CPU, ns: the learned CPU cost of each OS wait (the
    /// thread CPU clock is sampled on every 8th wait) plus ``spin_ns``.
    #[pyo3(get)]
    cpu_estimate_ns: u64,
    /// Sleeps planned on a margin learned from fewer samples than the tail
    /// target needs: the sleeper cannot promise the target for these, only
    /// its most cautious margin (a young sleeper at a strict target has many).
    #[pyo3(get)]
    unproven_sleeps: u64,
}

impl From<SleeperStats> for PySleeperStats {
    fn from(s: SleeperStats) -> Self {
        PySleeperStats {
            sleeps: s.sleeps,
            late: s.late,
            os_waits: s.os_waits,
            spin_ns: s.spin_ns,
            cpu_estimate_ns: s.cpu_estimate_ns,
            unproven_sleeps: s.unproven_sleeps,
        }
    }
}

#[pymethods]
impl PySleeperStats {
    #[new]
    #[pyo3(signature = (sleeps = 0, late = 0, os_waits = 0, spin_ns = 0, cpu_estimate_ns = 0, unproven_sleeps = 0))]
    fn new(
        sleeps: u64,
        late: u64,
        os_waits: u64,
        spin_ns: u64,
        cpu_estimate_ns: u64,
        unproven_sleeps: u64,
    ) -> Self {
        PySleeperStats {
            sleeps,
            late,
            os_waits,
            spin_ns,
            cpu_estimate_ns,
            unproven_sleeps,
        }
    }

    /// ``late / sleeps`` (0.0 before the first sleep).
    #[getter]
    fn late_share(&self) -> f64 {
        SleeperStats {
            sleeps: self.sleeps,
            late: self.late,
            ..SleeperStats::default()
        }
        .late_share()
    }

    /// The counters as a dict, in field order (without ``late_share``).
    #[allow(clippy::wrong_self_convention)] // Python's name for it, as on TickerStats
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("sleeps", self.sleeps)?;
        d.set_item("late", self.late)?;
        d.set_item("os_waits", self.os_waits)?;
        d.set_item("spin_ns", self.spin_ns)?;
        d.set_item("cpu_estimate_ns", self.cpu_estimate_ns)?;
        d.set_item("unproven_sleeps", self.unproven_sleeps)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "keeptime.SleeperStats(sleeps={}, late={}, os_waits={}, spin_ns={}, cpu_estimate_ns={}, unproven_sleeps={})",
            self.sleeps,
            self.late,
            self.os_waits,
            self.spin_ns,
            self.cpu_estimate_ns,
            self.unproven_sleeps
        )
    }
}
