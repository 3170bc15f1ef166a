//! Waiting with the GIL released, Ctrl-C while waiting, and the return
//! through the core's hand-off.
//!
//! **GIL.** Every wait runs detached from the interpreter (`Python::detach`),
//! so other Python threads run while one thread sleeps.
//!
//! **Hand-off.** A wait is the core's sleep up to its hand-off
//! (`spec/sleep.md`, *Hand-off*): everything but the last few µs of the final
//! spin ([`keeptime::HANDOFF_NS`]), with the GIL released. Then the thread
//! re-attaches to the interpreter, and the last thing before returning to
//! Python is [`keeptime::Handoff::finish`], the pause spin to the deadline,
//! with the GIL held. So the GIL is taken back before the deadline, not
//! after it, and the spin's exit is the return: what Python measures right
//! after the call is the deadline plus the return into the interpreter.
//! One GIL hand-over per sleep, in a crowd too.
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

use keeptime::{Handoff, Interrupted, Sleeper, System};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

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

/// Sleeps until `deadline_ns` with `sleeper` up to the hand-off, GIL
/// released; the caller finishes it with [`Handoff::finish`] as its last
/// step, GIL held (see the module docs).
pub fn sleep_to_handoff(
    py: Python<'_>,
    sleeper: &mut Sleeper,
    deadline_ns: u64,
) -> PyResult<Handoff> {
    detached(py, |keep_going| {
        sleeper.sleep_until_ns_to_handoff(deadline_ns, keep_going)
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
    let handoff = detached(py, |keep_going| {
        keeptime::sleep_to_handoff(deadline_ns, keep_going)
    })?;
    Ok(finish(handoff))
}
