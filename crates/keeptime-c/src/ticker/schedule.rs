//! The pure schedule behind a ticker (`kt_schedule`), as specified in
//! `spec/ticker.md`: no clock of its own; the caller tells it the time.

use crate::status::kt_status::KT_EINVAL;
use crate::status::{free, give, guard, handle, handle_ref, require, write_out};
use crate::ticker::{kt_stats, kt_tick, policy_from_c};
use keeptime_core::{Schedule, Step};
use std::ffi::c_int;
use std::ptr;

/// What `kt_schedule_poll` asks for (`kt_step.kind`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum kt_step_kind {
    /// Wait until `kt_step.deadline_ns`, then call `kt_schedule_woke`.
    KT_STEP_WAIT = 0,
    /// The deadline had passed; `kt_step.tick` is delivered now.
    KT_STEP_NOW = 1,
}

/// What a schedule wants done when a tick is asked for at some time.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct kt_step {
    /// `KT_STEP_WAIT` or `KT_STEP_NOW` (a `kt_step_kind`).
    pub kind: kt_step_kind,
    /// `KT_STEP_WAIT`: the absolute deadline to wait for. 0 for `KT_STEP_NOW`.
    pub deadline_ns: u64,
    /// `KT_STEP_NOW`: the tick delivered at once. All zero for `KT_STEP_WAIT`.
    pub tick: kt_tick,
}

/// The pure state machine behind a ticker, with no clock of its own
/// (opaque): you tell it the time, it tells you what to wait for and what
/// each tick is. For simulations, tests, and loops that wait by other means
/// (an event loop's timer). Follows `spec/ticker.md` exactly.
#[allow(non_camel_case_types)]
pub struct kt_schedule {
    inner: Schedule,
}

/// A new schedule whose slot k is due at `start_ns + k * period_ns`; NULL
/// for a zero period or an unknown policy. `kt_schedule_create` says why.
#[no_mangle]
pub extern "C" fn kt_schedule_new(
    start_ns: u64,
    period_ns: u64,
    policy: c_int,
) -> *mut kt_schedule {
    let mut out = ptr::null_mut();
    // SAFETY: `out` is a valid local.
    unsafe { kt_schedule_create(start_ns, period_ns, policy, &mut out) };
    out
}

/// Creates a schedule whose slot k is due at `start_ns + k * period_ns` and
/// stores it in `*out`. All times are unsigned nanoseconds; arithmetic
/// saturates at 2^64 - 1.
///
/// Returns `KT_OK`; `KT_ENULL` if `out` is NULL; `KT_EINVAL` for a zero
/// period or an unknown policy (then `*out` is set to NULL).
///
/// # Safety
/// `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_schedule_create(
    start_ns: u64,
    period_ns: u64,
    policy: c_int,
    out: *mut *mut kt_schedule,
) -> c_int {
    guard(|| {
        require(out)?;
        // SAFETY: checked non-NULL; valid by the caller's contract.
        unsafe { out.write(ptr::null_mut()) };
        let policy = policy_from_c(policy)?;
        let inner = Schedule::new(start_ns, period_ns, policy).map_err(|_| KT_EINVAL)?;
        // SAFETY: as above.
        unsafe { give(out, kt_schedule { inner }) };
        Ok(())
    })
}

/// A tick is asked for at `now_ns`: stores in `*step` either
/// `KT_STEP_WAIT` with the deadline to wait for (then call
/// `kt_schedule_woke` with the time the wait ended), or `KT_STEP_NOW` with
/// the tick delivered at once because its deadline had passed.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL (the schedule is
/// unchanged).
///
/// # Safety
/// `schedule` is NULL or a live schedule not in use by another thread;
/// `step` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_schedule_poll(
    schedule: *mut kt_schedule,
    now_ns: u64,
    step: *mut kt_step,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(schedule) }?;
        require(step)?;
        let out = match s.inner.poll(now_ns) {
            Step::Wait { deadline_ns } => kt_step {
                kind: kt_step_kind::KT_STEP_WAIT,
                deadline_ns,
                tick: kt_tick::default(),
            },
            Step::Now(tick) => kt_step {
                kind: kt_step_kind::KT_STEP_NOW,
                deadline_ns: 0,
                tick: tick.into(),
            },
        };
        // SAFETY: the caller's contract.
        unsafe { write_out(step, out) }
    })
}

/// The wait asked for by `kt_schedule_poll` ended at `woke_ns`: delivers the
/// slot and stores it in `*tick`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL (the schedule is
/// unchanged).
///
/// # Safety
/// `schedule` is NULL or a live schedule not in use by another thread;
/// `tick` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_schedule_woke(
    schedule: *mut kt_schedule,
    woke_ns: u64,
    tick: *mut kt_tick,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(schedule) }?;
        require(tick)?;
        let next = s.inner.woke(woke_ns);
        // SAFETY: the caller's contract.
        unsafe { write_out(tick, next.into()) }
    })
}

/// Restarts the schedule from `now_ns`: the next slot is due one period
/// later. Slot numbers continue.
///
/// Returns `KT_OK`, or `KT_ENULL` if `schedule` is NULL.
///
/// # Safety
/// `schedule` is NULL or a live schedule not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_schedule_reset(schedule: *mut kt_schedule, now_ns: u64) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        unsafe { handle(schedule) }?.inner.reset(now_ns);
        Ok(())
    })
}

/// Changes the period: the next slot is due one new period after the last
/// delivered slot's deadline (or after the start).
///
/// Returns `KT_OK`; `KT_ENULL` if `schedule` is NULL; `KT_EINVAL` for a zero
/// period (the schedule is unchanged).
///
/// # Safety
/// `schedule` is NULL or a live schedule not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_schedule_set_period(
    schedule: *mut kt_schedule,
    period_ns: u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(schedule) }?;
        s.inner.set_period(period_ns).map_err(|_| KT_EINVAL)
    })
}

/// Stores the schedule's counters in `*stats`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `schedule` is NULL or a live schedule; `stats` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_schedule_stats(
    schedule: *const kt_schedule,
    stats: *mut kt_stats,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle_ref(schedule) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(stats, s.inner.stats().into()) }
    })
}

/// Stores the deadline of the next slot in `*deadline_ns` (saturated at
/// 2^64 - 1).
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `schedule` is NULL or a live schedule; `deadline_ns` is NULL or valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn kt_schedule_next_deadline_ns(
    schedule: *const kt_schedule,
    deadline_ns: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle_ref(schedule) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(deadline_ns, s.inner.next_deadline_ns()) }
    })
}

/// Stores the index of the next slot in `*index`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `schedule` is NULL or a live schedule; `index` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_schedule_next_index(
    schedule: *const kt_schedule,
    index: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle_ref(schedule) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(index, s.inner.next_index()) }
    })
}

/// Frees a schedule. `kt_schedule_free(NULL)` does nothing.
///
/// # Safety
/// `schedule` is NULL or a live schedule, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn kt_schedule_free(schedule: *mut kt_schedule) {
    // SAFETY: the caller's contract.
    unsafe { free(schedule) }
}
