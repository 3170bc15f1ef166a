//! Waiting with the GIL released, Ctrl-C while waiting, and a warm return
//! through the core's hand-off.
//!
//! **GIL.** Every wait runs detached from the interpreter (`Python::detach`),
//! so other Python threads run while one thread sleeps. One GIL hand-over per
//! sleep: the thread re-attaches once, before the deadline.
//!
//! **Hand-off.** A spin-finished wait ends the way the core's own calls end
//! (`spec/sleep.md`, *Hand-off*): the core's sleep does everything but the
//! last stretch, the thread re-attaches to the interpreter, and the very last
//! step before returning to Python is [`keeptime::Handoff::finish`], the
//! pause spin to the deadline, with the GIL held. So re-attaching happens
//! before the deadline, not after it, and the spin's exit is the return.
//!
//! **Warm return.** After an OS wait the CPU's caches hold whatever ran
//! meanwhile, and both re-attaching and the interpreter's way back to the
//! caller miss in them. On a 2-vCPU Firecracker guest shared with a dozen
//! busy processes, from the core's last reading to the GIL re-attached took
//! 8 µs at the median after 10 ms sleeps (more than the core's 5 µs
//! hand-off), and the way back from the final spin to the caller's next
//! `time.monotonic_ns()` another 20 µs; with the warm-up below, 0 and 6 µs
//! (`keeptime.sleep_until_ns` in a loop, readings on both sides). So the last stretch
//! of a warm return is longer: the binding asks the core for a lead
//! (`spec/sleep.md`, *Hand-off*: the OS waits are planned for `lead` before
//! the deadline, on top of their margins, and the spin hands off `lead`
//! before the deadline, with the sleep's own stats); with the GIL held, one
//! call of a tiny Python function (`keeptime._warm_up`, registered at import)
//! pulls the interpreter's hot path back into the caches; then the final
//! spin to the deadline. `lead` follows the observed cost of re-attaching
//! plus that call per thread (a decaying maximum, 2–100 µs: about 2 µs after
//! 250 µs sleeps, 11 µs after 1 ms and 51 µs after 10 ms on host kind D);
//! the price is about the lead per sleep, spent with the GIL held (the
//! warm-up, then the spin). (As a floor under the margins instead, the lead
//! let a wake-up the margin allowed run the warm-up past the deadline: a
//! sleeper from a host profile, whose margins are tight, returned late in
//! 29–41 % of its 10 ms sleeps by its own reading, 2.4–3.1 % with the lead
//! on top; `docs/python-measurements.md`.) In a crowd (more
//! sleepers inside a sleep than CPUs, `System::crowded`) there is no
//! warm-up: the GIL is what the crowd queues for, so it is held only for the
//! core's own hand-off.
//! Efficient mode has no final spin and no warm-up.
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

use keeptime::{Handoff, Interrupted, Mode, System};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Shortest lead: covers re-attaching and a warm call on a quiet machine.
pub const MIN_LEAD_NS: u64 = 2_000;
/// Longest lead: past this, warming would cost more CPU than it saves time.
pub const MAX_LEAD_NS: u64 = 100_000;
/// Lead of a thread's first sleeps.
const INITIAL_WARM_COST_NS: u64 = 3_000;

thread_local! {
    /// Decaying maximum of this thread's warm-up cost (re-attach + call), ns.
    static WARM_COST_NS: Cell<u64> = const { Cell::new(INITIAL_WARM_COST_NS) };
}

/// The warm-up function, registered once by `keeptime/__init__.py`.
static WARM_UP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Whether waits end with the warm-up (on unless `_set_warm_up(None)`).
static WARM_UP_ON: AtomicBool = AtomicBool::new(true);

/// Registers the function called with the GIL held just before the final
/// spin of a warm return (once; later calls only switch it back on), or with
/// None switches the warm-up off (for measuring what it buys).
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

/// This thread's current warm-up lead, ns (for the bench and tests).
#[pyfunction]
pub fn _warm_up_lead_ns() -> u64 {
    lead_ns()
}

/// How long before the deadline this thread's core sleep hands off.
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

/// Runs `wait` (a core wait up to its hand-off, taking an interrupt check)
/// with the GIL released; returns with the GIL held again. Returns what the
/// wait returned, or the exception a signal handler raised.
fn detached<F>(py: Python<'_>, wait: F) -> PyResult<Handoff>
where
    F: Send + FnOnce(&mut dyn FnMut() -> bool) -> Result<Handoff, Interrupted>,
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

/// Sleeps until `deadline_ns` with `wait` (the core's sleep up to its
/// hand-off, given the deadline and the binding's lead) with the GIL
/// released, then re-attaches and, for a warm return, runs the warm-up.
/// `mode` is the sleeper's. Returns what is left of the sleep: the caller
/// finishes it with [`finish`] as its last step.
pub fn sleep_to_handoff<F>(
    py: Python<'_>,
    mode: Mode,
    deadline_ns: u64,
    wait: F,
) -> PyResult<Handoff>
where
    F: Send + FnOnce(u64, u64, &mut dyn FnMut() -> bool) -> Result<Handoff, Interrupted>,
{
    let warm_up = match mode {
        Mode::Efficient => None,
        _ if !WARM_UP_ON.load(Ordering::Relaxed) => None,
        // In a crowd the GIL is what the sleepers queue for: held only for
        // the core's own hand-off, not for a warm-up and its lead.
        Mode::Exact if System::crowded() => None,
        _ => WARM_UP.get(py),
    };
    let Some(warm_up) = warm_up else {
        return detached(py, |keep_going| wait(deadline_ns, 0, keep_going));
    };
    // The core plans a spin of at least the lead and hands off that early
    // (spec/sleep.md, Hand-off: a binding's lead).
    let lead = lead_ns();
    let handoff = detached(py, |keep_going| wait(deadline_ns, lead, keep_going))?;
    if handoff.until <= handoff.now {
        return Ok(handoff); // ended without a spin (an OS wait woke late)
    }
    warm_up.call0(py)?;
    let warmed = keeptime::os::monotonic_ns();
    observe_warm_cost(warmed.saturating_sub(handoff.now));
    Ok(Handoff {
        now: warmed,
        until: handoff.until,
    })
}

/// The final spin of a wait, GIL held: returns the first clock reading at or
/// after the hand-off's deadline (its `now` when nothing is left to spin).
#[inline(always)]
pub fn finish(handoff: Handoff) -> u64 {
    handoff.finish(&System::default())
}

/// Sleeps until `deadline_ns` with the core's thread sleeper (the one
/// `keeptime::sleep` uses on this thread) and returns the first clock reading
/// after the wait: never before the deadline. A past deadline returns at once
/// without releasing the GIL (one clock read: what makes `sleep(0)` cheap).
#[inline]
pub fn sleep_until_on_thread(py: Python<'_>, deadline_ns: u64) -> PyResult<u64> {
    let now = keeptime::os::monotonic_ns();
    if now >= deadline_ns {
        return Ok(now);
    }
    let handoff = sleep_to_handoff(
        py,
        Mode::Exact,
        deadline_ns,
        |deadline, lead, keep_going| {
            keeptime::sleep_to_handoff_with_lead(deadline, lead, keep_going)
        },
    )?;
    Ok(finish(handoff))
}
