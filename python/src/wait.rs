//! Waiting with the GIL released, and Ctrl-C while waiting.
//!
//! Every wait runs detached from the interpreter (`Python::detach`), so other
//! Python threads run while one thread sleeps. The core calls the interrupt
//! check whenever a signal interrupts the OS wait (EINTR) and every 10 ms of a
//! long spin; the check re-attaches and runs Python's signal handlers
//! (`PyErr_CheckSignals`). If a handler raises (SIGINT's default handler
//! raises `KeyboardInterrupt`), the wait stops and the exception propagates,
//! exactly as with `time.sleep`.
//!
//! Why no chunking of long sleeps: a process-directed signal (Ctrl-C, `kill`)
//! is delivered by Linux to the main thread when it does not block it, and
//! Python runs signal handlers only on the main thread, so a main thread
//! sleeping in `clock_nanosleep` always gets the EINTR it needs. A sleep on
//! another thread is not interrupted, as with `time.sleep`.

use keeptime::{Interrupted, Sleeper};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::cell::RefCell;

thread_local! {
    /// The free functions' sleeper: one per thread, so each thread learns the
    /// overshoot of its own waits and no thread waits for another's lock.
    static THREAD_SLEEPER: RefCell<Sleeper> = RefCell::new(Sleeper::new());
}

/// Runs `wait` (a core wait taking an interrupt check) with the GIL released.
/// Returns what it returned, or the exception a signal handler raised.
pub fn detached<T, F>(py: Python<'_>, wait: F) -> PyResult<T>
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

/// Sleeps until `deadline_ns` with this thread's sleeper, releasing the GIL;
/// returns the first clock reading after the wait. A past deadline returns at
/// once without releasing the GIL (one clock read: what makes `sleep(0)` cheap).
pub fn sleep_until_on_thread(py: Python<'_>, deadline_ns: u64) -> PyResult<u64> {
    let now = keeptime::os::monotonic_ns();
    if now >= deadline_ns {
        return Ok(now);
    }
    detached(py, |keep_going| {
        THREAD_SLEEPER.with(|cell| match cell.try_borrow_mut() {
            Ok(mut sleeper) => sleeper.sleep_until_ns_interruptible(deadline_ns, keep_going),
            // A signal handler that sleeps, run from inside this thread's own
            // sleep: use a fresh sleeper rather than fail.
            Err(_) => Sleeper::new().sleep_until_ns_interruptible(deadline_ns, keep_going),
        })
    })
}
