//! Waiting with the GIL released, Ctrl-C while waiting, and a warm return.
//!
//! **GIL.** Every wait runs detached from the interpreter (`Python::detach`),
//! so other Python threads run while one thread sleeps.
//!
//! **Ctrl-C.** The core calls the interrupt check whenever a signal
//! interrupts the OS wait (EINTR) and every 10 ms of a long spin; the check
//! re-attaches and runs Python's signal handlers (`PyErr_CheckSignals`). If a
//! handler raises (SIGINT's default handler raises `KeyboardInterrupt`), the
//! wait stops and the exception propagates, exactly as with `time.sleep`.
//! Long sleeps are not chunked: Linux delivers a process-directed signal
//! (Ctrl-C, `kill`) to the main thread when it does not block it, and Python
//! runs handlers only on the main thread, so a main thread sleeping in
//! `clock_nanosleep` always gets the EINTR it needs. A sleep on another
//! thread is not interrupted, as with `time.sleep`.
//!
//! **Warm return.** After an OS wait the CPU's caches hold whatever ran
//! meanwhile, and the interpreter's first bytecodes after the sleep returns
//! miss in them: on a busy machine that costs 1–5 µs of lateness *after* a
//! deadline the core met to within 0.1 µs. So a spin-finished wait ends in
//! three steps: the core's wait until `deadline − lead`; one call of a tiny
//! Python function with the GIL held (`keeptime._warm_up`, set at import),
//! which pulls the interpreter's hot path back into the caches; then a
//! detached finish: the core's last phase, a spin under a spin slot (else a
//! spin that yields on every iteration). In a crowd (more sleepers inside a
//! sleep than CPUs, `System::crowded`) there is no warm return: one core
//! call, one GIL hand-over per sleep. `lead` follows the observed cost of that
//! step per thread (a decaying maximum, 2–100 µs). The GIL is held only for
//! the warm-up call itself (about 0.1 µs warm; measured up to ~50 µs after a
//! 10 ms idle on the project VM, where a cold interpreter otherwise made
//! 10 ms sleeps ~35 µs late at the median), never for waiting; the price is a
//! spin of about half the lead per sleep (~0.7 % CPU at 10 ms there).

use keeptime::{Interrupted, Mode, Sleeper, SleeperStats};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};

/// Shortest lead: covers the re-attach and a warm call on a quiet machine.
pub const MIN_LEAD_NS: u64 = 2_000;
/// Longest lead: past this, warming would cost more CPU than it saves time.
/// (20 µs was too short after 10 ms idles on the project VM: the warm-up
/// call itself then took ~45 µs and the sleep returned ~30 µs late.)
pub const MAX_LEAD_NS: u64 = 100_000;
/// Lead of a thread's first sleeps.
const INITIAL_WARM_COST_NS: u64 = 3_000;

thread_local! {
    /// The free functions' sleeper: one per thread, so each thread learns the
    /// overshoot of its own waits and no thread waits for another's lock.
    static THREAD_SLEEPER: RefCell<Sleeper> = RefCell::new(Sleeper::new());
    /// Decaying maximum of this thread's warm-up cost (re-attach + call), ns.
    static WARM_COST_NS: Cell<u64> = const { Cell::new(INITIAL_WARM_COST_NS) };
}

/// The warm-up function, registered once by `keeptime/__init__.py`.
static WARM_UP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Whether waits end with the warm-up (on unless `_set_warm_up(None)`).
static WARM_UP_ON: AtomicBool = AtomicBool::new(true);

/// Registers the function called just before a spin-finished wait ends
/// (once; later calls only switch it back on), or with None switches the
/// warm return off (for measuring what it buys).
#[pyfunction]
pub fn _set_warm_up(py: Python<'_>, function: Option<Py<PyAny>>) {
    match function {
        Some(f) => {
            let _ = WARM_UP.set(py, f);
            WARM_UP_ON.store(true, Ordering::Relaxed);
        }
        None => WARM_UP_ON.store(false, Ordering::Relaxed),
    }
}

/// How long before the deadline this thread starts the warm-up.
fn lead_ns() -> u64 {
    let cost = WARM_COST_NS.with(Cell::get);
    (cost + cost / 2 + 500).clamp(MIN_LEAD_NS, MAX_LEAD_NS)
}

/// One warm-up cost observed: the estimate jumps up to it, or decays by
/// 1/16 toward it, so one slow warm-up is forgotten within a few dozen sleeps.
fn observe_warm_cost(cost_ns: u64) {
    WARM_COST_NS.with(|c| {
        let est = c.get();
        c.set(cost_ns.max(est - est / 16).min(4 * MAX_LEAD_NS));
    });
}

/// Runs `wait` (a core wait taking an interrupt check) with the GIL released.
/// Returns what it returned, or the exception a signal handler raised.
fn detached<T, F>(py: Python<'_>, wait: F) -> PyResult<T>
where
    T: Send,
    F: Send + FnOnce(&mut dyn FnMut() -> bool) -> Result<T, Interrupted>,
{
    let mut raised: Option<PyErr> = None;
    let result = py.detach(|| {
        let mut keep_going = || match Python::attach(|py| py.check_signals()) {
            Ok(()) => true,
            Err(err) => {
                raised = Some(err);
                false
            }
        };
        wait(&mut keep_going)
    });
    result.map_err(|Interrupted { at_ns }| {
        raised
            .unwrap_or_else(|| PyRuntimeError::new_err(format!("sleep interrupted at {at_ns} ns")))
    })
}

/// Sleeps until `deadline_ns` with `sleeper`, GIL released, returning the
/// first clock reading after the wait; spin-finished modes end with the warm
/// return described above. Never before the deadline except in
/// [`Mode::Efficient`].
pub fn sleep_until(py: Python<'_>, sleeper: &mut Sleeper, deadline_ns: u64) -> PyResult<u64> {
    sleep_until_late(py, sleeper, deadline_ns, &mut false)
}

/// [`sleep_until`] for a sleep that had to wait (the deadline had not passed),
/// adding what it spent to `stats` as spec/sleep.md counts one sleep: the
/// core's own stats cannot, because the warm return makes one Python sleep
/// up to two core calls, the first to `deadline_ns − lead`. So this counts
/// one sleep; late only when the sleep ended after `deadline_ns` straight
/// from an OS wait; and the OS waits, spin and CPU estimate of both calls.
pub fn sleep_until_counted(
    py: Python<'_>,
    sleeper: &mut Sleeper,
    deadline_ns: u64,
    stats: &mut SleeperStats,
) -> PyResult<u64> {
    let before = sleeper.stats();
    let mut late = false;
    let result = sleep_until_late(py, sleeper, deadline_ns, &mut late);
    let after = sleeper.stats();
    stats.sleeps += 1;
    stats.late += u64::from(late);
    stats.os_waits += after.os_waits.wrapping_sub(before.os_waits);
    stats.spin_ns = stats
        .spin_ns
        .saturating_add(after.spin_ns.wrapping_sub(before.spin_ns));
    stats.cpu_estimate_ns = stats
        .cpu_estimate_ns
        .saturating_add(after.cpu_estimate_ns.wrapping_sub(before.cpu_estimate_ns));
    result
}

/// Whether the core call just made counted a late sleep.
fn counted_late(sleeper: &Sleeper, late_before: u64) -> bool {
    sleeper.stats().late > late_before
}

/// [`sleep_until`], setting `late` when the sleep ended after `deadline_ns`
/// straight from an OS wait (not after a spin or the warm-up call).
fn sleep_until_late(
    py: Python<'_>,
    sleeper: &mut Sleeper,
    deadline_ns: u64,
    late: &mut bool,
) -> PyResult<u64> {
    let warm_up = match (sleeper.mode(), WARM_UP.get(py)) {
        (Mode::Efficient, _) | (_, None) => None,
        _ if !WARM_UP_ON.load(Ordering::Relaxed) => None,
        // In a crowd (more sleepers than CPUs) the warm return's second core
        // call costs a second GIL hand-over per sleep, and the GIL is what
        // the crowd queues for: one core call, as the crowd rule plans it.
        (Mode::Exact, _) if keeptime::System::crowded() => None,
        (_, Some(f)) => Some(f),
    };
    let late_before = sleeper.stats().late;
    let Some(warm_up) = warm_up else {
        let woke = detached(py, |keep_going| {
            sleeper.sleep_until_ns_interruptible(deadline_ns, keep_going)
        })?;
        *late = counted_late(sleeper, late_before);
        return Ok(woke);
    };
    let early = deadline_ns.saturating_sub(lead_ns());
    let woke = detached(py, |keep_going| {
        sleeper.sleep_until_ns_interruptible(early, keep_going)
    })?;
    if woke >= deadline_ns {
        // The core counted it late against `early`: late against the deadline
        // too if it woke after it from an OS wait.
        *late = woke > deadline_ns && counted_late(sleeper, late_before);
        return Ok(woke);
    }
    warm_up.call0(py)?;
    let warmed = keeptime::os::monotonic_ns();
    observe_warm_cost(warmed.saturating_sub(woke));
    if warmed >= deadline_ns {
        return Ok(warmed);
    }
    // At most MAX_LEAD_NS to go: the core's last phase (a spin under a
    // process-wide spin slot, else a spin yielding per iteration), so the warm
    // return keeps the spin-slot rule (pausing spinners stay below the CPUs).
    let late_before = sleeper.stats().late;
    let woke = detached(py, |keep_going| {
        sleeper.finish_until_ns_interruptible(deadline_ns, keep_going)
    })?;
    *late = counted_late(sleeper, late_before);
    Ok(woke)
}

/// This thread's current warm-up lead, ns (for the bench and tests).
#[pyfunction]
pub fn _warm_up_lead_ns() -> u64 {
    lead_ns()
}

/// Sleeps until `deadline_ns` with this thread's sleeper (see [`sleep_until`]).
/// A past deadline returns at once without releasing the GIL (one clock read:
/// what makes `sleep(0)` cheap).
pub fn sleep_until_on_thread(py: Python<'_>, deadline_ns: u64) -> PyResult<u64> {
    let now = keeptime::os::monotonic_ns();
    if now >= deadline_ns {
        return Ok(now);
    }
    THREAD_SLEEPER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut sleeper) => sleep_until(py, &mut sleeper, deadline_ns),
        // A signal handler that sleeps, run from inside this thread's own
        // sleep: use a fresh sleeper rather than fail.
        Err(_) => sleep_until(py, &mut Sleeper::new(), deadline_ns),
    })
}
