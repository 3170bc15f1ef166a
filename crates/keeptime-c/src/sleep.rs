//! Precise sleeps: the thread's own sleeper (`kt_sleep_ns`,
//! `kt_sleep_until_ns`) and explicit `kt_sleeper` handles with a mode.

use crate::status::kt_status::{KT_EINTR, KT_EINVAL};
use crate::status::{
    free, give, guard, guard_value, handle, handle_ref, require, write_out, Status,
};
use keeptime_core::{
    Handoff, Interrupted, Mode, Sleeper, SleeperBuilder, SleeperStats, System, TailTarget,
};
use std::ffi::{c_int, c_void};
use std::ptr;
use std::time::Duration;

/// How a sleeper finishes a wait: the trade between accuracy and CPU. Passed
/// as an `int`; other values are `KT_EINVAL`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum kt_mode {
    /// Spin-finished (the default): per sleep, the plan with the least
    /// expected CPU (one or two OS waits, then a spin on the clock, or a pure
    /// spin) whose predicted share of late sleeps meets the sleeper's tail
    /// target (`kt_sleeper_set_tail_target`, default 1 %), from this
    /// machine's learned wake-ups. Never returns early; outside that share,
    /// within a fraction of a microsecond after the deadline.
    KT_MODE_EXACT = 0,
    /// OS-only, compensated: one OS wait that ends the
    /// learned median overshoot before the deadline, no spin. Almost no CPU,
    /// but **may return before the deadline** (about half the time, by a few
    /// µs). The one documented exception to "never early".
    KT_MODE_EFFICIENT = 1,
    /// Pure spin on the clock with the CPU's pause hint: the most accurate,
    /// and a whole core for the whole wait (after 50 µs it yields while the
    /// deadline is more than 20 µs away). Never returns early.
    KT_MODE_SPIN = 2,
}

/// `kt_sleeper_create` flag: leave the calling thread's Linux timer slack
/// alone (default 50 µs) instead of setting it to 1 ns. The sleeper then
/// learns the larger overshoot and spins for it.
pub const KT_SLEEPER_KEEP_TIMER_SLACK: u32 = 1;

/// `kt_sleeper_create` flag: start the sleeper from the default profile in
/// force (`kt_set_default_profile`), if one is set, as a ticker made by
/// `kt_ticker_create` starts; a later change does not touch it. Not with
/// `kt_sleeper_create_with_profile` (`KT_EINVAL`): that one starts from the
/// profile it is given.
pub const KT_SLEEPER_DEFAULT_PROFILE: u32 = 2;

/// Asked while a wait is in progress, with the `ctx` given to the waiting
/// call: after every signal that interrupts the OS wait (EINTR) and every
/// 10 ms of a long spin. Return nonzero to keep waiting, 0 to give up (the
/// call then returns `KT_EINTR`). It runs on the waiting thread; it must not
/// `longjmp` out or unwind (C++ exceptions) through keeptime.
#[allow(non_camel_case_types)]
pub type kt_keep_going_fn = Option<unsafe extern "C" fn(ctx: *mut c_void) -> c_int>;

/// A precise sleeper with its own learned wake-up model, mode, tail target
/// and stats (opaque).
///
/// Create with `kt_sleeper_new` or `kt_sleeper_create`, free with
/// `kt_sleeper_free`. Use it from one thread at a time (it may move between
/// threads); give each waiting thread its own.
#[allow(non_camel_case_types)]
pub struct kt_sleeper {
    pub(crate) inner: Sleeper,
}

/// C value ↔ Rust value.
fn modes() -> [(kt_mode, Mode); 3] {
    [
        (kt_mode::KT_MODE_EXACT, Mode::Exact),
        (kt_mode::KT_MODE_EFFICIENT, Mode::Efficient),
        (kt_mode::KT_MODE_SPIN, Mode::Spin),
    ]
}

pub(crate) fn mode_from_c(mode: c_int) -> Result<Mode, Status> {
    modes()
        .into_iter()
        .find(|(c, _)| *c as c_int == mode)
        .map(|(_, m)| m)
        .ok_or(KT_EINVAL)
}

fn mode_to_c(mode: Mode) -> c_int {
    modes()
        .into_iter()
        .find(|(_, m)| *m == mode)
        .map_or(kt_mode::KT_MODE_EXACT, |(c, _)| c) as c_int
}

pub(crate) fn duration_from_c(ns: i64) -> Result<Duration, Status> {
    u64::try_from(ns)
        .map(Duration::from_nanos)
        .map_err(|_| KT_EINVAL)
}

/// Runs a wait with an optional C callback as the interrupt check.
///
/// # Safety
/// `keep_going` is NULL or a function safe to call with `ctx`.
pub(crate) unsafe fn with_keep_going<R>(
    keep_going: kt_keep_going_fn,
    ctx: *mut c_void,
    wait: impl FnOnce(&mut dyn FnMut() -> bool) -> Result<R, Interrupted>,
) -> Result<R, Interrupted> {
    let mut check = || match keep_going {
        // SAFETY: the caller's contract.
        Some(f) => (unsafe { f(ctx) }) != 0,
        None => true,
    };
    wait(&mut check)
}

/// A wait in two pieces (`spec/sleep.md`, *Hand-off*): `wait` runs inside
/// [`guard`] (its status; a panic is `KT_EPANIC`) up to the core's hand-off,
/// all bookkeeping done; the final spin then runs here, outside it, so the
/// spin's exit is the call's return but for storing the reading it returns
/// (`None` when `wait` failed). `wait` sets `*status` to `KT_EINTR` (or
/// another code) for a wait that ended early but still has a reading.
#[inline(always)]
fn wait_then_finish(
    wait: impl FnOnce(&mut Result<(), Status>) -> Result<Handoff, Status>,
) -> (c_int, Option<u64>) {
    let mut handoff = None;
    let code = guard(|| {
        let mut status = Ok(());
        handoff = Some(wait(&mut status)?);
        status
    });
    (code, handoff.map(|h| h.finish(&System::default())))
}

/// Writes `woke` through `woke_ns` unless either is absent.
///
/// # Safety
/// `woke_ns` is NULL or valid for a write.
#[inline(always)]
unsafe fn store(woke_ns: *mut u64, woke: Option<u64>) {
    if let (Some(woke), false) = (woke, woke_ns.is_null()) {
        // SAFETY: non-NULL and valid by the caller's contract.
        unsafe { woke_ns.write(woke) };
    }
}

/// The thread's own sleeper (the core's) up to the hand-off.
fn thread_sleep_to_handoff(deadline_ns: u64) -> Handoff {
    keeptime_core::sleep_to_handoff(deadline_ns, &mut || true)
        .unwrap_or_else(|Interrupted { at_ns }| Handoff::done(at_ns)) // never: the check never stops
}

/// Nanoseconds on the monotonic clock: `CLOCK_MONOTONIC` on Linux, the clock
/// every keeptime deadline is measured on.
///
/// Cost: one vDSO call, about 20–30 ns on a TSC clocksource. Cannot fail
/// (returns 0 only if keeptime itself failed internally).
#[no_mangle]
pub extern "C" fn kt_now_ns() -> u64 {
    guard_value(0, keeptime_core::os::monotonic_ns)
}

/// Sleeps for `duration_ns` nanoseconds, precisely: never less, typically
/// well under a microsecond more. Uses the calling thread's own sleeper in
/// `KT_MODE_EXACT` (created on first use; it sets the thread's Linux timer
/// slack to 1 ns).
///
/// Returns `KT_OK`, or `KT_EINVAL` for a negative duration (without waiting).
/// A duration of 0 returns at once.
///
/// Cost: the spin its plan leaves (a few µs on most machines) per call, plus
/// one or two OS waits, at the default tail target (1 % of sleeps late).
#[no_mangle]
pub extern "C" fn kt_sleep_ns(duration_ns: i64) -> c_int {
    wait_then_finish(|_| {
        let ns = u64::try_from(duration_ns).map_err(|_| KT_EINVAL)?;
        let deadline = keeptime_core::os::monotonic_ns().saturating_add(ns);
        Ok(thread_sleep_to_handoff(deadline))
    })
    .0
}

/// Sleeps until `deadline_ns` on the monotonic clock (see `kt_now_ns`),
/// precisely: never returns before it. A deadline in the past returns at once
/// (after one clock read). Uses the calling thread's own sleeper.
///
/// Returns `KT_OK`.
///
/// ```c
/// uint64_t next = kt_now_ns();
/// for (;;) { next += 500000; kt_sleep_until_ns(next); work(); }  // 2 kHz, no drift
/// ```
#[no_mangle]
pub extern "C" fn kt_sleep_until_ns(deadline_ns: u64) -> c_int {
    wait_then_finish(|_| Ok(thread_sleep_to_handoff(deadline_ns))).0
}

/// A new sleeper in `mode` (`KT_MODE_EXACT`, `KT_MODE_EFFICIENT` or
/// `KT_MODE_SPIN`) that sets its thread's timer slack to 1 ns; NULL for an
/// unknown mode. `kt_sleeper_create` says why it failed.
#[no_mangle]
pub extern "C" fn kt_sleeper_new(mode: c_int) -> *mut kt_sleeper {
    let mut out = ptr::null_mut();
    // SAFETY: `out` is a valid local.
    unsafe { kt_sleeper_create(mode, 0, &mut out) };
    out
}

/// A sleeper's builder from `kt_sleeper_create`'s `mode` and `flags`
/// (`KT_EINVAL` for an unknown mode or flag).
pub(crate) fn builder_from_c(mode: c_int, flags: u32) -> Result<SleeperBuilder, Status> {
    let mode = mode_from_c(mode)?;
    if flags & !(KT_SLEEPER_KEEP_TIMER_SLACK | KT_SLEEPER_DEFAULT_PROFILE) != 0 {
        return Err(KT_EINVAL);
    }
    let builder = Sleeper::builder()
        .mode(mode)
        .timer_slack(flags & KT_SLEEPER_KEEP_TIMER_SLACK == 0);
    Ok(if flags & KT_SLEEPER_DEFAULT_PROFILE != 0 {
        builder.with_default_profile()
    } else {
        builder
    })
}

/// Creates a sleeper in `mode` and stores it in `*out`. `flags` is 0 or a
/// combination of `KT_SLEEPER_KEEP_TIMER_SLACK` and
/// `KT_SLEEPER_DEFAULT_PROFILE`.
///
/// Returns `KT_OK`; `KT_ENULL` if `out` is NULL; `KT_EINVAL` for an unknown
/// mode or flag (then `*out` is set to NULL).
///
/// # Safety
/// `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_create(
    mode: c_int,
    flags: u32,
    out: *mut *mut kt_sleeper,
) -> c_int {
    guard(|| {
        require(out)?;
        // SAFETY: checked non-NULL; valid by the caller's contract.
        unsafe { out.write(ptr::null_mut()) };
        let inner = builder_from_c(mode, flags)?.build();
        // SAFETY: as above.
        unsafe { give(out, kt_sleeper { inner }) };
        Ok(())
    })
}

/// Sleeps for `duration_ns` with this sleeper (its mode, tail target and
/// what it learned).
///
/// Returns `KT_OK`; `KT_ENULL` if `sleeper` is NULL; `KT_EINVAL` for a
/// negative duration (without waiting).
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_sleep_ns(sleeper: *mut kt_sleeper, duration_ns: i64) -> c_int {
    wait_then_finish(|_| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(sleeper) }?;
        let ns = u64::try_from(duration_ns).map_err(|_| KT_EINVAL)?;
        let deadline = keeptime_core::os::monotonic_ns().saturating_add(ns);
        Ok(s.inner.sleep_to_handoff(deadline))
    })
    .0
}

/// Sleeps until `deadline_ns` on the monotonic clock with this sleeper. If
/// `woke_ns` is not NULL, stores the first clock reading taken after the wait
/// (`>= deadline_ns` except in `KT_MODE_EFFICIENT`).
///
/// Returns `KT_OK`, or `KT_ENULL` if `sleeper` is NULL.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread;
/// `woke_ns` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_sleep_until_ns(
    sleeper: *mut kt_sleeper,
    deadline_ns: u64,
    woke_ns: *mut u64,
) -> c_int {
    let (code, woke) = wait_then_finish(|_| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(sleeper) }?;
        Ok(s.inner.sleep_to_handoff(deadline_ns))
    });
    // SAFETY: the caller's contract.
    unsafe { store(woke_ns, woke) };
    code
}

/// `kt_sleeper_sleep_until_ns` that can be given up: `keep_going(ctx)` is
/// asked after every signal that interrupts the OS wait and every 10 ms of a
/// long spin (see `kt_keep_going_fn`); when it returns 0 the call returns
/// `KT_EINTR` and stores the clock reading at that moment in `*woke_ns` (if
/// not NULL). A NULL `keep_going` never gives up. This is how a long wait
/// lets a SIGINT handler's flag stop it.
///
/// Returns `KT_OK`, `KT_EINTR`, or `KT_ENULL` if `sleeper` is NULL.
///
/// # Safety
/// As `kt_sleeper_sleep_until_ns`; `keep_going` is NULL or a function safe to
/// call with `ctx`.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_sleep_until_ns_interruptible(
    sleeper: *mut kt_sleeper,
    deadline_ns: u64,
    keep_going: kt_keep_going_fn,
    ctx: *mut c_void,
    woke_ns: *mut u64,
) -> c_int {
    let (code, woke) = wait_then_finish(|status| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(sleeper) }?;
        // SAFETY: the caller's contract.
        let result = unsafe {
            with_keep_going(keep_going, ctx, |check| {
                s.inner.sleep_until_ns_to_handoff(deadline_ns, check)
            })
        };
        Ok(result.unwrap_or_else(|Interrupted { at_ns }| {
            *status = Err(KT_EINTR);
            Handoff::done(at_ns)
        }))
    });
    // SAFETY: the caller's contract.
    unsafe { store(woke_ns, woke) };
    code
}

/// Stores this sleeper's mode (`KT_MODE_*`) in `*mode`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper; `mode` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_mode(sleeper: *const kt_sleeper, mode: *mut c_int) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle_ref(sleeper) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(mode, mode_to_c(s.inner.mode())) }
    })
}

/// Switches this sleeper's mode; what it learned, its tail target and its
/// stats are kept.
///
/// Returns `KT_OK`; `KT_ENULL` if `sleeper` is NULL; `KT_EINVAL` for an
/// unknown mode (the sleeper is unchanged).
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_set_mode(sleeper: *mut kt_sleeper, mode: c_int) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(sleeper) }?;
        s.inner.set_mode(mode_from_c(mode)?);
        Ok(())
    })
}

/// Sets the shortest spin that finishes an exact sleep, in nanoseconds
/// (default 0: only what the tail target needs): the last OS wait then ends
/// at least this long before the deadline. A floor under the planner, which
/// already sizes the spin for the tail target (`kt_sleeper_set_tail_target`)
/// from the learned wake-ups; use it to cover a tail the target allows.
///
/// Returns `KT_OK`; `KT_ENULL` if `sleeper` is NULL; `KT_EINVAL` for a
/// negative value (the sleeper is unchanged).
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_set_min_spin_ns(
    sleeper: *mut kt_sleeper,
    min_spin_ns: i64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(sleeper) }?;
        let min_spin = duration_from_c(min_spin_ns)?;
        s.inner.set_min_spin(min_spin);
        Ok(())
    })
}

/// Stores this sleeper's shortest final spin (ns) in `*min_spin_ns`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper; `min_spin_ns` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_min_spin_ns(
    sleeper: *const kt_sleeper,
    min_spin_ns: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle_ref(sleeper) }?;
        let ns = u64::try_from(s.inner.min_spin().as_nanos()).unwrap_or(u64::MAX);
        // SAFETY: the caller's contract.
        unsafe { write_out(min_spin_ns, ns) }
    })
}

/// Tail target preset: 5 % of exact sleeps may end late (the cheapest).
pub const KT_TAIL_RELAXED: f64 = 0.05;
/// Tail target preset: 1 % of exact sleeps may end late (the default): a
/// spin-level p99.
pub const KT_TAIL_BALANCED: f64 = 0.01;
/// Tail target preset: 0.1 % of exact sleeps may end late: a spin-level
/// p99.9, at a higher CPU price.
pub const KT_TAIL_STRICT: f64 = 0.001;

/// Sets the tail target of an exact sleeper: the share of its sleeps allowed
/// to end late because the OS woke the thread after the deadline, strictly
/// between 0 and 1 and at least 0.000001 (`KT_TAIL_RELAXED` 0.05,
/// `KT_TAIL_BALANCED` 0.01 (the default), `KT_TAIL_STRICT` 0.001, or any
/// share). Each sleep then takes the plan with the least expected CPU whose
/// predicted late share meets it; a stricter target spins longer. The share
/// is held in parts per million (`round(share * 1e6)`); what was learned is
/// kept.
///
/// Returns `KT_OK`; `KT_ENULL` if `sleeper` is NULL; `KT_EINVAL` for NaN, a
/// share <= 0, >= 1 or below 0.000001 (the sleeper is unchanged: nothing is
/// clamped).
///
/// ```c
/// kt_sleeper_set_tail_target(s, KT_TAIL_STRICT);   // at most 0.1 % late
/// kt_sleeper_set_tail_target(s, 0.002);            // at most 0.2 % late
/// ```
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_set_tail_target(sleeper: *mut kt_sleeper, share: f64) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(sleeper) }?;
        s.inner.set_tail_target(tail_target_from_c(share)?);
        Ok(())
    })
}

/// A tail target from a C share: NaN and shares outside (0, 1) are the
/// core's errors; spec/sleep.md also rejects shares below 10⁻⁶ (the core
/// rounds 5e-7 up to 1 ppm).
pub(crate) fn tail_target_from_c(share: f64) -> Result<TailTarget, Status> {
    let target = TailTarget::new(share).map_err(|_| KT_EINVAL)?;
    if share < 1e-6 {
        return Err(KT_EINVAL);
    }
    Ok(target)
}

/// Stores this sleeper's tail target (a share, e.g. 0.01) in `*share`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper; `share` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_tail_target(
    sleeper: *const kt_sleeper,
    share: *mut f64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle_ref(sleeper) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(share, s.inner.tail_target().share()) }
    })
}

/// What a sleeper has spent since it was created (or since
/// `kt_sleeper_reset_stats`): see `kt_sleeper_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct kt_sleep_stats {
    /// Sleeps that had to wait (the deadline had not passed when called).
    pub sleeps: u64,
    /// Sleeps that ended after their deadline because an OS wait woke the
    /// thread late (a spin-finished sleep is never counted here); the tail
    /// target bounds `late / sleeps`.
    pub late: u64,
    /// OS waits issued (a wait resumed after a signal counts once).
    pub os_waits: u64,
    /// Time spent spinning, ns.
    pub spin_ns: u64,
    /// Estimated thread CPU, ns: the learned CPU cost of each OS wait (the
    /// thread CPU clock is sampled on every 8th wait) plus `spin_ns`.
    pub cpu_estimate_ns: u64,
    /// Sleeps planned on a margin learned from fewer samples than the tail
    /// target needs: the sleeper cannot promise the target for these, only
    /// its most cautious margin (a young sleeper at a strict target has many).
    pub unproven_sleeps: u64,
}

impl From<SleeperStats> for kt_sleep_stats {
    fn from(s: SleeperStats) -> Self {
        kt_sleep_stats {
            sleeps: s.sleeps,
            late: s.late,
            os_waits: s.os_waits,
            spin_ns: s.spin_ns,
            cpu_estimate_ns: s.cpu_estimate_ns,
            unproven_sleeps: s.unproven_sleeps,
        }
    }
}

/// Stores this sleeper's stats in `*stats`: sleeps, late sleeps, OS waits,
/// spin time and estimated CPU, so a program sees what precision costs on
/// its machine (late share = `late / sleeps`; CPU share over a span =
/// `cpu_estimate_ns / span`).
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// ```c
/// kt_sleep_stats st;
/// kt_sleeper_stats(s, &st);
/// printf("%llu of %llu late\n", (unsigned long long)st.late, (unsigned long long)st.sleeps);
/// ```
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread; `stats`
/// is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_stats(
    sleeper: *const kt_sleeper,
    stats: *mut kt_sleep_stats,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle_ref(sleeper) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(stats, s.inner.stats().into()) }
    })
}

/// Starts this sleeper's stats afresh (all zero); what it learned is kept.
///
/// Returns `KT_OK`, or `KT_ENULL` if `sleeper` is NULL.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_reset_stats(sleeper: *mut kt_sleeper) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        unsafe { handle(sleeper) }?.inner.reset_stats();
        Ok(())
    })
}

/// Frees a sleeper. `kt_sleeper_free(NULL)` does nothing.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_free(sleeper: *mut kt_sleeper) {
    // SAFETY: the caller's contract.
    unsafe { free(sleeper) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::kt_status::KT_ENULL;

    #[test]
    fn null_sleeper_is_enull_and_free_null_is_noop() {
        // SAFETY: NULL is allowed everywhere here.
        unsafe {
            assert_eq!(kt_sleeper_sleep_ns(ptr::null_mut(), 1), KT_ENULL as c_int);
            kt_sleeper_free(ptr::null_mut());
        }
    }

    #[test]
    fn tail_target_rejects_what_is_not_a_share() {
        let s = kt_sleeper_new(kt_mode::KT_MODE_EXACT as c_int);
        let mut share = 0.0;
        // SAFETY: `s` is live and freed once; `share` is a valid local.
        unsafe {
            for bad in [
                f64::NAN,
                0.0,
                -0.01,
                1.0,
                1.5,
                5e-7,
                9.99e-7,
                0.9999996,
                f64::INFINITY,
            ] {
                assert_eq!(
                    kt_sleeper_set_tail_target(s, bad),
                    KT_EINVAL as c_int,
                    "{bad}"
                );
            }
            assert_eq!(kt_sleeper_tail_target(s, &mut share), 0);
            assert_eq!(share, KT_TAIL_BALANCED);
            assert_eq!(kt_sleeper_set_tail_target(s, KT_TAIL_STRICT), 0);
            assert_eq!(kt_sleeper_tail_target(s, &mut share), 0);
            assert_eq!(share, KT_TAIL_STRICT);
            kt_sleeper_free(s);
        }
        for (c, core) in [
            (KT_TAIL_RELAXED, TailTarget::RELAXED),
            (KT_TAIL_BALANCED, TailTarget::BALANCED),
            (KT_TAIL_STRICT, TailTarget::STRICT),
        ] {
            assert_eq!(TailTarget::new(c).unwrap(), core);
        }
    }

    #[test]
    fn negative_duration_is_einval() {
        assert_eq!(kt_sleep_ns(-1), KT_EINVAL as c_int);
        assert_eq!(kt_sleep_ns(i64::MIN), KT_EINVAL as c_int);
    }
}
