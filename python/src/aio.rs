//! The native half of `keeptime.asyncio`: precise sleeps for asyncio (and
//! uvloop) over the core's process-wide precise waiter (`keeptime::waiter`).
//!
//! The waiter thread never takes the GIL. When a timer fires it records the
//! sleep's id in its loop's `_LoopSignal` and writes one byte to a socket
//! pair whose read end the loop watches (`loop.add_reader`); the loop wakes,
//! `keeptime.asyncio` drains the ids and resolves the futures the sleeps
//! await. Each loop has its own learned wake-up latency (the time from the
//! byte written to the sleeping coroutine running again), learned with the
//! core's `MarginEstimator` (`WakeLatency`), and each sleep ends in the
//! coroutine: yields to the loop while more than one loop round trip
//! remains, then spins that last round trip with the GIL held
//! (`keeptime::waiter::next_step`). A round trip of an asyncio loop costs
//! 5-20 µs of Python on the project VM, so spinning less would only end the
//! sleep a round late; the round trip is learned per loop (a decaying
//! maximum, 4-50 µs), and it is the longest one sleep holds the loop.
//!
//! Past the waiter's capacity (`keeptime::waiter::capacity`; past twice it,
//! all but a trickle), or while the loop is behind on the sleeps already
//! fired, a sleep is *coarse*: no timer
//! with the waiter, `step()` answers 3 and the coroutine awaits the loop's
//! own timer (as `asyncio.sleep` does) to its deadline, then finishes as
//! usual: it degrades to the loop's own timer, at its cost. If that timer
//! returns before the deadline (uvloop's millisecond clock), the sleep asks
//! for the waiter's coarse timer for the rest (`waiter_coarse`).

use keeptime::waiter::{
    PreciseWait, Progress, Step, WakeLatency, FINISH_SPIN_NS, MAX_FINISH_SPIN_NS,
};
use pyo3::exceptions::{PyOverflowError, PyValueError};
use pyo3::prelude::*;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Wake, Waker};

/// 2**64 as a float: the first value that does not fit in `u64` nanoseconds.
const NS_LIMIT: f64 = 18_446_744_073_709_551_616.0;

/// `asyncio.sleep`'s conventions for `delay` (seconds, anything `float()`
/// accepts: a non-number is a `TypeError`), then keeptime's for what asyncio
/// leaves open: NaN is a `ValueError`, past 2**64 - 1 ns an `OverflowError`.
/// `None` means "zero or negative: return at once".
#[pyfunction]
pub fn _async_deadline_ns(delay: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    let secs: f64 = delay.extract()?;
    if secs.is_nan() {
        return Err(PyValueError::new_err("Invalid delay: NaN (not a number)"));
    }
    if secs <= 0.0 {
        return Ok(None);
    }
    let ns = (secs * 1e9).ceil();
    let too_large =
        || PyOverflowError::new_err("sleep length is too large (at most 2**64 - 1 ns, 584 years)");
    if ns >= NS_LIMIT {
        return Err(too_large());
    }
    keeptime::os::monotonic_ns()
        .checked_add(ns as u64)
        .map(Some)
        .ok_or_else(too_large)
}

struct SignalInner {
    write: UnixStream,
    fired: Mutex<Vec<u64>>,
    latency: WakeLatency,
    /// Decaying maximum of the loop's round trip (yield, other ready tasks,
    /// back), ns: the finishing spin, so a sleep never ends a round late.
    round_ns: AtomicU64,
}

/// A loop's first round-trip estimate, ns.
const INITIAL_ROUND_NS: u64 = 10_000;

impl SignalInner {
    /// One round trip observed: the estimate jumps up to it or decays by
    /// 1/16 toward it (a slow round is forgotten within a few dozen).
    fn observe_round(&self, ns: u64) {
        let est = self.round_ns.load(Ordering::Relaxed);
        let next = ns.max(est - est / 16).min(MAX_FINISH_SPIN_NS);
        self.round_ns.store(next, Ordering::Relaxed);
    }
}

impl SignalInner {
    fn fire(&self, id: u64) {
        let mut fired = self.fired.lock().unwrap_or_else(PoisonError::into_inner);
        let first = fired.is_empty();
        fired.push(id);
        drop(fired);
        if first {
            // Non-blocking: a full buffer already holds a wake-up for the loop.
            let _ = (&self.write).write(&[1]);
        }
    }
}

/// One loop's wake-up channel and learned wake-up latency.
#[pyclass(name = "_LoopSignal", module = "keeptime._keeptime", frozen)]
pub struct LoopSignal {
    read: UnixStream,
    inner: Arc<SignalInner>,
}

#[pymethods]
impl LoopSignal {
    #[new]
    fn new() -> PyResult<Self> {
        let (read, write) = UnixStream::pair()?;
        read.set_nonblocking(true)?;
        write.set_nonblocking(true)?;
        Ok(LoopSignal {
            read,
            inner: Arc::new(SignalInner {
                write,
                fired: Mutex::new(Vec::new()),
                // One event loop runs its tasks on one thread.
                latency: WakeLatency::with_threads(1),
                round_ns: AtomicU64::new(INITIAL_ROUND_NS),
            }),
        })
    }

    /// The file descriptor the loop watches for readability.
    fn fileno(&self) -> i32 {
        self.read.as_raw_fd()
    }

    /// Empties the channel; returns the ids of the sleeps whose timers fired.
    fn drain(&self) -> Vec<u64> {
        let mut buf = [0u8; 256];
        loop {
            match (&self.read).read(&mut buf) {
                Ok(n) if n == buf.len() => continue,
                Ok(_) => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => break, // WouldBlock: empty
            }
        }
        std::mem::take(
            &mut *self
                .inner
                .fired
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// The finishing spin (ns) of this loop's sleeps: the decaying maximum
    /// of its observed round trip, 4-50 µs.
    fn finish_spin_ns(&self) -> u64 {
        self.inner
            .round_ns
            .load(Ordering::Relaxed)
            .clamp(FINISH_SPIN_NS, MAX_FINISH_SPIN_NS)
    }

    /// The lead (ns) this loop's sleeps with `remaining_ns` to go are woken
    /// early by: the learned margin of the loop's wake-up latency.
    fn lead_ns(&self, remaining_ns: u64) -> u64 {
        self.inner.latency.lead_ns(remaining_ns)
    }
}

struct SleepWake {
    id: u64,
    signal: Arc<SignalInner>,
}

impl Wake for SleepWake {
    fn wake(self: Arc<Self>) {
        self.signal.fire(self.id);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.signal.fire(self.id);
    }
}

/// `step()`'s answers.
const DONE: u8 = 0;
const YIELD: u8 = 1;
const WAIT: u8 = 2;
const COARSE: u8 = 3;

/// One precise asyncio sleep: `keeptime.asyncio` calls `step()` each time
/// the coroutine runs and does what it answers.
#[pyclass(name = "_AsyncSleep", module = "keeptime._keeptime")]
pub struct AsyncSleep {
    wait: PreciseWait,
    signal: Arc<SignalInner>,
    waker: Waker,
    id: u64,
    woke_ns: u64,
    /// When the last step answered "yield", ns (0: it did not).
    yielded_at_ns: u64,
}

#[pymethods]
impl AsyncSleep {
    #[new]
    fn new(signal: &LoopSignal, deadline_ns: u64) -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let inner = Arc::clone(&signal.inner);
        let mut wait = PreciseWait::new(deadline_ns);
        wait.set_caller_coarse(true);
        AsyncSleep {
            wait,
            waker: Waker::from(Arc::new(SleepWake {
                id,
                signal: Arc::clone(&inner),
            })),
            signal: inner,
            id,
            woke_ns: 0,
            yielded_at_ns: 0,
        }
    }

    /// 0: done (``woke_ns`` is the first clock reading at or past the
    /// deadline); 1: yield to the loop once and call again; 2: await the
    /// future registered under ``id`` (the timer is armed); 3: coarse, await
    /// the loop's own timer until ``deadline_ns`` and call again.
    fn step(&mut self) -> u8 {
        if self.yielded_at_ns != 0 {
            let round = keeptime::os::monotonic_ns().saturating_sub(self.yielded_at_ns);
            self.signal.observe_round(round);
            self.yielded_at_ns = 0;
        }
        let spin = self.signal.round_ns.load(Ordering::Relaxed);
        self.wait.set_finish_spin_ns(spin);
        match self.wait.poll(&self.signal.latency, &self.waker) {
            Progress::Ready(now) => {
                self.woke_ns = now;
                DONE
            }
            Progress::Pending(Step::Yield) => {
                self.yielded_at_ns = keeptime::os::monotonic_ns();
                YIELD
            }
            Progress::Pending(Step::Arm { lead_ns: 0 }) if !self.wait.is_armed() => COARSE,
            Progress::Pending(_) => WAIT,
        }
    }

    /// The loop's own timer returned before the deadline (uvloop's clock is
    /// in whole milliseconds): from now on this sleep's coarse waits are the
    /// waiter's coarse timers (`step()` answers 2, not 3), so the rest is
    /// not another early wait on the same timer.
    fn waiter_coarse(&mut self) {
        self.wait.set_caller_coarse(false);
    }

    /// Disarms the timer (cancellation, or the end of the sleep).
    fn cancel(&mut self) {
        self.wait.disarm();
    }

    /// Whether a timer is armed for this sleep.
    #[getter]
    fn armed(&self) -> bool {
        self.wait.is_armed()
    }

    /// This sleep's id (what ``_LoopSignal.drain`` returns when it fires).
    #[getter]
    fn id(&self) -> u64 {
        self.id
    }

    /// The deadline (a ``time.monotonic_ns()`` reading).
    #[getter]
    fn deadline_ns(&self) -> u64 {
        self.wait.deadline_ns()
    }

    /// The clock reading that ended the sleep (0 before).
    #[getter]
    fn woke_ns(&self) -> u64 {
        self.woke_ns
    }
}

/// The process-wide waiter's state: ``(pending timers, idle)``.
#[pyfunction]
pub fn _waiter_state() -> (usize, bool) {
    let s = keeptime::waiter::stats();
    (s.pending, s.idle)
}

/// The process-wide waiter's stated capacity and load: ``(deadlines per
/// second served precisely, learned cost of one precise deadline in ns,
/// timers armed, coarse decisions)``.
#[pyfunction]
pub fn _waiter_capacity() -> (u64, u64, u64, u64) {
    let s = keeptime::waiter::stats();
    (s.capacity_per_s, s.cost_ns, s.armed, s.coarse)
}

/// Precise deadlines the process-wide waiter admitted since the process
/// started (precise timers armed, and finishes begun with a yield).
#[pyfunction]
pub fn _waiter_precise() -> u64 {
    keeptime::waiter::stats().precise
}
