//! Precise delays for event loops and thread pools (`kt_delay_*`): the
//! core's process-wide waiter (`keeptime::waiter`) calls a C callback a
//! learned lead before the deadline, and the caller finishes the wait with a
//! poll that spins at most a few µs. No thread of the caller is held for the
//! wait itself.

use crate::status::kt_status::{KT_EINTR, KT_EINVAL};
use crate::status::{free, give, guard, handle_ref, require, write_out, Status};
use keeptime_core::waiter::{PreciseWait, Progress, WakeLatency};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{RawWaker, RawWakerVTable, Waker};

/// Called when a delay wants to be polled again (`kt_delay_poll`), with the
/// `user_data` given to `kt_delay_start`: from keeptime's waiter thread a
/// learned lead before the deadline, or from inside `kt_delay_start` /
/// `kt_delay_poll` when the rest of the wait is shorter than that lead.
///
/// It must return quickly and must not call any `kt_delay_*` function
/// itself: hand the poll to another thread or a queue (a thread pool's work
/// item, an event loop's ready queue). It must not `longjmp` out or unwind
/// through keeptime.
#[allow(non_camel_case_types)]
pub type kt_delay_fn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// What `kt_delay_poll` found (`*state`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum kt_delay_state {
    /// The deadline has passed: `*now_ns` is the first clock reading at or
    /// after it. The callback is not called again.
    KT_DELAY_READY = 0,
    /// Not yet: the callback will be called when it is time to poll again.
    KT_DELAY_PENDING = 1,
}

/// The shortest finishing spin of a delay, ns (`kt_delay_set_finish_spin_ns`).
pub const KT_DELAY_FINISH_SPIN_MIN_NS: i64 = 4_000;

/// The longest finishing spin of a delay, ns (`kt_delay_set_finish_spin_ns`).
pub const KT_DELAY_FINISH_SPIN_MAX_NS: i64 = 50_000;

/// The callback and its data; `None` once the delay was cancelled or freed.
struct Notify {
    target: Mutex<Option<(unsafe extern "C" fn(*mut c_void), usize)>>,
}

impl Notify {
    fn lock(&self) -> MutexGuard<'_, Option<(unsafe extern "C" fn(*mut c_void), usize)>> {
        self.target.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Calls the callback if the delay is still live. Holding the lock while
    /// it runs is what lets `kt_delay_cancel`/`kt_delay_free` promise that no
    /// call is in flight once they return.
    fn call(&self) {
        let target = self.lock();
        if let Some((f, user_data)) = *target {
            // SAFETY: the contract of kt_delay_start: `f` is safe to call
            // with `user_data` until the delay is cancelled or freed.
            unsafe { f(user_data as *mut c_void) };
        }
    }

    /// No more calls after this returns (waits for one in flight).
    fn stop(&self) {
        *self.lock() = None;
    }
}

fn notify_waker(notify: &Arc<Notify>) -> Waker {
    fn clone(data: *const ()) -> RawWaker {
        // SAFETY: `data` came from Arc::into_raw of an Arc<Notify> that this
        // waker holds one count of.
        unsafe { Arc::increment_strong_count(data.cast::<Notify>()) };
        RawWaker::new(data, &VTABLE)
    }
    fn wake(data: *const ()) {
        wake_by_ref(data);
        drop_waker(data);
    }
    fn wake_by_ref(data: *const ()) {
        // SAFETY: as in `clone`; the count keeps it alive.
        let notify = unsafe { &*data.cast::<Notify>() };
        notify.call();
    }
    fn drop_waker(data: *const ()) {
        // SAFETY: gives back the count this waker held.
        drop(unsafe { Arc::from_raw(data.cast::<Notify>()) });
    }
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, wake, wake_by_ref, drop_waker);
    let data = Arc::into_raw(Arc::clone(notify)).cast::<()>();
    // SAFETY: the vtable keeps the Arc's count balanced; Notify is Sync.
    unsafe { Waker::from_raw(RawWaker::new(data, &VTABLE)) }
}

/// How long after the waiter fires a delay's callback the delay is polled:
/// one model for every delay of the process (the callers of one C library
/// share their thread pool or event loop as a rule).
fn latency() -> &'static WakeLatency {
    static LATENCY: OnceLock<WakeLatency> = OnceLock::new();
    LATENCY.get_or_init(WakeLatency::new)
}

/// A precise delay toward one deadline, driven by callbacks and polls (opaque).
///
/// Create with `kt_delay_start`, free with `kt_delay_free`. `kt_delay_poll`
/// and `kt_delay_cancel` may be called from any thread, also at the same time
/// (a delay has a lock of its own).
#[allow(non_camel_case_types)]
pub struct kt_delay {
    wait: Mutex<PreciseWait>,
    notify: Arc<Notify>,
    waker: Waker,
    cancelled: AtomicBool,
}

impl kt_delay {
    fn wait(&self) -> MutexGuard<'_, PreciseWait> {
        self.wait.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One poll; a yield (the rest is within the lead) calls the callback
    /// at once, outside the delay's lock.
    fn poll(&self) -> Result<Option<u64>, Status> {
        if self.cancelled.load(Ordering::SeqCst) {
            return Err(KT_EINTR);
        }
        let progress = self.wait().poll(latency(), &self.waker);
        match progress {
            Progress::Ready(now) => Ok(Some(now)),
            Progress::Pending(keeptime_core::waiter::Step::Yield) => {
                self.notify.call();
                Ok(None)
            }
            Progress::Pending(_) => Ok(None),
        }
    }

    fn stop(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        self.notify.stop();
        self.wait().disarm();
    }
}

impl Drop for kt_delay {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts a precise delay until `deadline_ns` on the monotonic clock (see
/// `kt_now_ns`) and stores it in `*out`. It arms a timer of keeptime's
/// waiter thread, which calls `callback(user_data)` a learned lead before the
/// deadline (how late the caller's polls come after a callback, learned
/// per process, at most 200 µs); the caller then calls `kt_delay_poll`, which
/// spins the last few µs (at most the finishing spin, 4 µs by default) and
/// returns `KT_DELAY_READY`, or returns `KT_DELAY_PENDING` and the callback
/// comes again. A deadline already near or past calls the callback from
/// inside this call. Never early: a delay is ready only on a clock reading
/// at or after its deadline.
///
/// ```c
/// static void on_due(void *d) { post_to_my_loop(poll_delay, d); }  // must not poll here
/// kt_delay *d;
/// kt_delay_start(kt_now_ns() + 1000000, on_due, d_ctx, &d);
/// // later, on the loop: int state; uint64_t now;
/// // kt_delay_poll(d, &state, &now); if (state == KT_DELAY_READY) { ...; kt_delay_free(d); }
/// ```
///
/// Returns `KT_OK`; `KT_ENULL` if `out` or `callback` is NULL (then `*out`,
/// if given, is set to NULL and nothing is armed).
///
/// # Safety
/// `out` is NULL or valid for writing a pointer; `callback` is safe to call
/// with `user_data` from any thread until `kt_delay_cancel` or
/// `kt_delay_free` returns.
#[no_mangle]
pub unsafe extern "C" fn kt_delay_start(
    deadline_ns: u64,
    callback: kt_delay_fn,
    user_data: *mut c_void,
    out: *mut *mut kt_delay,
) -> c_int {
    guard(|| {
        require(out)?;
        // SAFETY: checked non-NULL; valid by the caller's contract.
        unsafe { out.write(std::ptr::null_mut()) };
        let callback = callback.ok_or(crate::status::kt_status::KT_ENULL)?;
        let notify = Arc::new(Notify {
            target: Mutex::new(Some((callback, user_data as usize))),
        });
        let delay = kt_delay {
            wait: Mutex::new(PreciseWait::new(deadline_ns)),
            waker: notify_waker(&notify),
            notify,
            cancelled: AtomicBool::new(false),
        };
        // The first poll arms the timer (or, near the deadline, asks for a
        // poll at once through the callback; a ready delay does the same so
        // completion is always signalled one way).
        if delay.poll()?.is_some() {
            delay.notify.call();
        }
        // SAFETY: as above.
        unsafe { give(out, delay) };
        Ok(())
    })
}

/// Polls a delay: stores `KT_DELAY_READY` in `*state` and the first clock
/// reading at or after the deadline in `*now_ns` once it has passed (after
/// a spin of at most the finishing spin), else `KT_DELAY_PENDING` (the
/// callback will be called when it is time to poll again; `*now_ns` is
/// left unchanged). Polling a ready delay again is ready at once.
///
/// Returns `KT_OK`; `KT_ENULL` if a pointer is NULL; `KT_EINTR` if the delay
/// was cancelled (nothing is stored).
///
/// # Safety
/// `delay` is NULL or a live delay; `state` and `now_ns` are NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_delay_poll(
    delay: *mut kt_delay,
    state: *mut c_int,
    now_ns: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let delay = unsafe { handle_ref(delay.cast_const()) }?;
        require(state)?;
        require(now_ns)?;
        match delay.poll()? {
            Some(now) => {
                // SAFETY: checked non-NULL; valid by the caller's contract.
                unsafe {
                    write_out(state, kt_delay_state::KT_DELAY_READY as c_int)?;
                    write_out(now_ns, now)?;
                }
            }
            // SAFETY: as above.
            None => unsafe { write_out(state, kt_delay_state::KT_DELAY_PENDING as c_int)? },
        }
        Ok(())
    })
}

/// Cancels a delay: disarms its timer; once this returns the callback is
/// not running and will not be called again (a call in flight is waited
/// for), and `kt_delay_poll` returns `KT_EINTR`. Cancelling twice, or a
/// ready delay, is allowed. The delay must still be freed.
///
/// Returns `KT_OK`, or `KT_ENULL` if `delay` is NULL.
///
/// # Safety
/// `delay` is NULL or a live delay. Not from inside its own callback.
#[no_mangle]
pub unsafe extern "C" fn kt_delay_cancel(delay: *mut kt_delay) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        unsafe { handle_ref(delay.cast_const()) }?.stop();
        Ok(())
    })
}

/// Sets the longest spin one `kt_delay_poll` does to finish this delay, in
/// ns, from `KT_DELAY_FINISH_SPIN_MIN_NS` (4 µs, the default) to
/// `KT_DELAY_FINISH_SPIN_MAX_NS` (50 µs): for a loop or pool whose round
/// trip (callback, queue, poll) is itself longer than 4 µs, so a shorter
/// spin would only make the delay late by one round. Applies from the next poll.
///
/// Returns `KT_OK`; `KT_ENULL` if `delay` is NULL; `KT_EINVAL` outside that
/// range (the delay is unchanged: nothing is clamped).
///
/// # Safety
/// `delay` is NULL or a live delay.
#[no_mangle]
pub unsafe extern "C" fn kt_delay_set_finish_spin_ns(
    delay: *mut kt_delay,
    finish_spin_ns: i64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let delay = unsafe { handle_ref(delay.cast_const()) }?;
        if !(KT_DELAY_FINISH_SPIN_MIN_NS..=KT_DELAY_FINISH_SPIN_MAX_NS).contains(&finish_spin_ns) {
            return Err(KT_EINVAL);
        }
        delay.wait().set_finish_spin_ns(finish_spin_ns as u64);
        Ok(())
    })
}

/// Stores the delay's deadline (monotonic ns) in `*deadline_ns`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `delay` is NULL or a live delay; `deadline_ns` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_delay_deadline_ns(
    delay: *const kt_delay,
    deadline_ns: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let delay = unsafe { handle_ref(delay) }?;
        let deadline = delay.wait().deadline_ns();
        // SAFETY: as above.
        unsafe { write_out(deadline_ns, deadline) }
    })
}

/// Stores the lead (ns) a delay with `remaining_ns` to go would be armed
/// with now: how early the waiter calls the callback, learned from how late
/// this process's polls came after earlier callbacks (at most 200 µs).
///
/// Returns `KT_OK`; `KT_ENULL` if `lead_ns` is NULL; `KT_EINVAL` for a
/// negative `remaining_ns`.
///
/// # Safety
/// `lead_ns` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_delay_lead_ns(remaining_ns: i64, lead_ns: *mut u64) -> c_int {
    guard(|| {
        let remaining = u64::try_from(remaining_ns).map_err(|_| KT_EINVAL)?;
        let lead = latency().lead_ns(remaining);
        // SAFETY: the caller's contract.
        unsafe { write_out(lead_ns, lead) }
    })
}

/// Stores how many precise deadlines per second the process-wide waiter
/// serves on this machine (its stated capacity, `spec/waiter.md`): delays
/// past it are called back at their deadline by a plain OS wait, without the
/// precise finish. Learned from the delays this process has made; a process
/// that has made none states the default, 25 000.
///
/// Returns `KT_OK`, or `KT_ENULL` if `per_second` is NULL.
///
/// # Safety
/// `per_second` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_delay_capacity(per_second: *mut u64) -> c_int {
    guard(|| {
        let capacity = keeptime_core::waiter::capacity();
        // SAFETY: the caller's contract.
        unsafe { write_out(per_second, capacity) }
    })
}

/// Frees a delay, cancelling it first (see `kt_delay_cancel`: no callback
/// runs after this returns). `kt_delay_free(NULL)` does nothing.
///
/// # Safety
/// `delay` is NULL or a live delay, not used afterwards (no other thread is
/// in a call on it). Not from inside its own callback.
#[no_mangle]
pub unsafe extern "C" fn kt_delay_free(delay: *mut kt_delay) {
    // SAFETY: the caller's contract; Drop stops the callback first.
    unsafe { free(delay) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use keeptime_core::waiter::{FINISH_SPIN_NS, MAX_FINISH_SPIN_NS};

    #[test]
    fn the_finishing_spin_range_is_the_cores() {
        assert_eq!(KT_DELAY_FINISH_SPIN_MIN_NS, FINISH_SPIN_NS as i64);
        assert_eq!(KT_DELAY_FINISH_SPIN_MAX_NS, MAX_FINISH_SPIN_NS as i64);
    }
}
