//! Fixed-rate tickers (`kt_ticker`), as specified in `spec/ticker.md`, and
//! the tick types and missed-tick policies they share with the pure
//! schedule ([`schedule`]).

use crate::sleep::{
    builder_from_c, duration_from_c, kt_keep_going_fn, mode_from_c, tail_target_from_c,
    with_keep_going, KT_SLEEPER_DEFAULT_PROFILE,
};
use crate::status::kt_status::{KT_EINTR, KT_EINVAL};
use crate::status::{free, give, guard, handle, handle_ref, require, write_out, Status};
use keeptime_core::{MissedTicks, TickNs, Ticker, TickerStats};
use std::ffi::{c_int, c_void};
use std::ptr;
use std::time::Duration;

pub(crate) mod schedule;

/// What a ticker does when a tick is asked for after the next deadline
/// already passed (the loop body overran). Passed as an `int`; other values
/// are `KT_EINVAL`.
///
/// The timeline of each policy on one overrun is drawn in the ticker spec
/// (`spec/ticker.md`, *Missed ticks at a glance*).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum kt_missed {
    /// The default: deliver the latest slot whose deadline passed, at once,
    /// and drop the ones before it (`kt_tick.skipped` says how many). Keeps
    /// the phase; never more than one late tick in a row. Right for control,
    /// audio and game loops that want the current slot, not stale ones.
    KT_MISSED_SKIP = 0,
    /// Deliver every late slot at once, one per call, until caught up. For
    /// loops that must process every slot (counting, sampling).
    KT_MISSED_BURST = 1,
    /// Deliver the late slot at once and restart the schedule from now.
    /// Keeps the rate, gives up the phase.
    KT_MISSED_DELAY = 2,
}

/// C value ↔ Rust value.
fn policies() -> [(kt_missed, MissedTicks); 3] {
    [
        (kt_missed::KT_MISSED_SKIP, MissedTicks::Skip),
        (kt_missed::KT_MISSED_BURST, MissedTicks::Burst),
        (kt_missed::KT_MISSED_DELAY, MissedTicks::Delay),
    ]
}

/// One tick: which slot was delivered, and how late.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct kt_tick {
    /// Slot number k (the first tick is 1), due at `start + k * period`
    /// (for `KT_MISSED_DELAY`, counted from the latest restart).
    pub index: u64,
    /// The deadline of this slot, monotonic nanoseconds.
    pub scheduled_ns: u64,
    /// How long after `scheduled_ns` the tick was delivered (0 if earlier,
    /// which only `KT_MODE_EFFICIENT` can do).
    pub lateness_ns: u64,
    /// Slots dropped just before this one (`KT_MISSED_SKIP` only).
    pub skipped: u64,
}

/// Counters of a ticker or schedule since it was created.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct kt_stats {
    /// Ticks delivered.
    pub ticks: u64,
    /// Deadlines that had passed when a tick was asked for: late deliveries
    /// plus skipped slots.
    pub missed: u64,
    /// Slots dropped by `KT_MISSED_SKIP`.
    pub skipped: u64,
    /// Largest lateness of any delivered tick, in nanoseconds.
    pub worst_lateness_ns: u64,
}

/// A fixed-rate loop on an absolute schedule (opaque).
///
/// Slot k is due at `start + k * period`, where `start` is when the ticker was
/// created (or last reset): deadlines are never accumulated from "now", so
/// the loop does not drift however long its body runs. `kt_ticker_wait`
/// sleeps precisely until the next slot with the ticker's own sleeper.
///
/// ```c
/// kt_ticker *t = kt_ticker_new(1000000, KT_MISSED_SKIP);  // 1 kHz
/// kt_tick tick;
/// while (kt_ticker_wait(t, &tick) == KT_OK) { control_step(tick.index); }
/// kt_ticker_free(t);
/// ```
///
/// Use it from one thread at a time (it may move between threads).
#[allow(non_camel_case_types)]
pub struct kt_ticker {
    pub(crate) inner: Ticker,
}

pub(crate) fn policy_from_c(policy: c_int) -> Result<MissedTicks, Status> {
    policies()
        .into_iter()
        .find(|(c, _)| *c as c_int == policy)
        .map(|(_, p)| p)
        .ok_or(KT_EINVAL)
}

fn policy_to_c(policy: MissedTicks) -> c_int {
    policies()
        .into_iter()
        .find(|(_, p)| *p == policy)
        .map_or(kt_missed::KT_MISSED_SKIP, |(c, _)| c) as c_int
}

/// A positive period: zero would be a busy loop, negative is a bug.
fn period_from_c(period_ns: i64) -> Result<Duration, Status> {
    match duration_from_c(period_ns)? {
        d if d.is_zero() => Err(KT_EINVAL),
        d => Ok(d),
    }
}

impl From<TickNs> for kt_tick {
    fn from(t: TickNs) -> Self {
        kt_tick {
            index: t.index,
            scheduled_ns: t.scheduled_ns,
            lateness_ns: t.lateness_ns,
            skipped: t.skipped,
        }
    }
}

impl From<TickerStats> for kt_stats {
    fn from(s: TickerStats) -> Self {
        kt_stats {
            ticks: s.ticks,
            missed: s.missed,
            skipped: s.skipped,
            worst_lateness_ns: s.worst_lateness_ns,
        }
    }
}

/// A new ticker with period `period_ns` and missed-tick policy `policy`
/// (`KT_MISSED_SKIP`, `KT_MISSED_BURST` or `KT_MISSED_DELAY`), waiting in
/// `KT_MODE_EXACT`, starting now: the first tick is due one period from now.
/// NULL for a zero or negative period or an unknown policy;
/// `kt_ticker_create` says why it failed. Its sleeper starts from the
/// default profile in force, as in `kt_ticker_create`.
#[no_mangle]
pub extern "C" fn kt_ticker_new(period_ns: i64, policy: c_int) -> *mut kt_ticker {
    let mut out = ptr::null_mut();
    // SAFETY: `out` is a valid local.
    unsafe {
        kt_ticker_create(
            period_ns,
            policy,
            crate::sleep::kt_mode::KT_MODE_EXACT as c_int,
            &mut out,
        )
    };
    out
}

/// Creates a ticker whose sleeper waits in `mode` (`KT_MODE_*`), starting
/// now, and stores it in `*out`. The sleeper starts from the default profile
/// in force (`kt_set_default_profile`), if one is set; a later change does
/// not touch it.
///
/// Returns `KT_OK`; `KT_ENULL` if `out` is NULL; `KT_EINVAL` for a zero or
/// negative period, an unknown policy or mode (then `*out` is set to NULL).
///
/// # Safety
/// `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_create(
    period_ns: i64,
    policy: c_int,
    mode: c_int,
    out: *mut *mut kt_ticker,
) -> c_int {
    guard(|| {
        require(out)?;
        // SAFETY: checked non-NULL; valid by the caller's contract.
        unsafe { out.write(ptr::null_mut()) };
        let period = period_from_c(period_ns)?;
        let policy = policy_from_c(policy)?;
        // keeptime's own sleeper: from the default profile in force, if any.
        let sleeper = builder_from_c(mode, KT_SLEEPER_DEFAULT_PROFILE)?.build();
        let inner = Ticker::with_sleeper(period, policy, sleeper).map_err(|_| KT_EINVAL)?;
        // SAFETY: as above.
        unsafe { give(out, kt_ticker { inner }) };
        Ok(())
    })
}

/// Creates a ticker that waits with a copy of `sleeper`, starting now, and
/// stores it in `*out`: the sleeper's mode, tail target, min spin, timer
/// slack and what it has learned carry over, and its idle-latency request
/// is shared (held while either lives). `sleeper` stays the caller's,
/// unchanged.
///
/// ```c
/// kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
/// kt_sleeper_set_tail_target(s, 0.001);
/// kt_ticker *t = NULL;
/// int rc = kt_ticker_create_with_sleeper(1000000, KT_MISSED_SKIP, s, &t);
/// ```
///
/// Returns `KT_OK`; `KT_ENULL` if `sleeper` or `out` is NULL; `KT_EINVAL`
/// for a zero or negative period or an unknown policy (then `*out` is set
/// to NULL when `out` is not NULL).
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread; `out`
/// is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_create_with_sleeper(
    period_ns: i64,
    policy: c_int,
    sleeper: *const crate::sleep::kt_sleeper,
    out: *mut *mut kt_ticker,
) -> c_int {
    guard(|| {
        require(out)?;
        // SAFETY: checked non-NULL; valid by the caller's contract.
        unsafe { out.write(ptr::null_mut()) };
        // SAFETY: the caller's contract.
        let sleeper = unsafe { handle_ref(sleeper) }?.inner.clone();
        let inner =
            Ticker::with_sleeper(period_from_c(period_ns)?, policy_from_c(policy)?, sleeper)
                .map_err(|_| KT_EINVAL)?;
        // SAFETY: as above.
        unsafe { give(out, kt_ticker { inner }) };
        Ok(())
    })
}

/// Waits for the next slot (or returns at once if its deadline already
/// passed, as the policy says) and stores it in `*tick`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL (then nothing
/// waits and no slot is used).
///
/// # Safety
/// `ticker` is NULL or a live ticker not in use by another thread; `tick` is
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_wait(ticker: *mut kt_ticker, tick: *mut kt_tick) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { kt_ticker_wait_interruptible(ticker, None, ptr::null_mut(), tick) }
}

/// `kt_ticker_wait` that can be given up: `keep_going(ctx)` is asked after
/// every signal that interrupts the OS wait and every 10 ms of a long spin
/// (see `kt_keep_going_fn`); when it returns 0 the call returns `KT_EINTR`,
/// `*tick` is left unchanged and no slot is used. A NULL `keep_going` never
/// gives up.
///
/// Returns `KT_OK`, `KT_EINTR`, or `KT_ENULL` if `ticker` or `tick` is NULL.
///
/// # Safety
/// As `kt_ticker_wait`; `keep_going` is NULL or a function safe to call with
/// `ctx`.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_wait_interruptible(
    ticker: *mut kt_ticker,
    keep_going: kt_keep_going_fn,
    ctx: *mut c_void,
    tick: *mut kt_tick,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle(ticker) }?;
        require(tick)?;
        // SAFETY: the caller's contract.
        let next = unsafe {
            with_keep_going(keep_going, ctx, |check| {
                t.inner.tick_ns_interruptible(check)
            })
        }
        .map_err(|_| KT_EINTR)?;
        // SAFETY: the caller's contract.
        unsafe { write_out(tick, next.into()) }
    })
}

/// Stores the ticker's counters in `*stats`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `stats` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_stats(ticker: *const kt_ticker, stats: *mut kt_stats) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle_ref(ticker) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(stats, t.inner.stats().into()) }
    })
}

/// Restarts the schedule from now: the next slot is due one period from now.
/// Slot numbers continue; the counters are kept.
///
/// Returns `KT_OK`, or `KT_ENULL` if `ticker` is NULL.
///
/// # Safety
/// `ticker` is NULL or a live ticker not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_reset(ticker: *mut kt_ticker) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        unsafe { handle(ticker) }?.inner.reset();
        Ok(())
    })
}

/// Changes the period: the next slot is due one new period after the last
/// delivered slot's deadline (or after the start if none was delivered).
///
/// Returns `KT_OK`; `KT_ENULL` if `ticker` is NULL; `KT_EINVAL` for a zero
/// or negative period (the ticker is unchanged).
///
/// # Safety
/// `ticker` is NULL or a live ticker not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_set_period(ticker: *mut kt_ticker, period_ns: i64) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle(ticker) }?;
        let period = period_from_c(period_ns)?;
        t.inner.set_period(period).map_err(|_| KT_EINVAL)
    })
}

/// Stores the ticker's period in nanoseconds in `*period_ns`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `period_ns` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_period_ns(
    ticker: *const kt_ticker,
    period_ns: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle_ref(ticker) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(period_ns, t.inner.schedule().period_ns()) }
    })
}

/// Stores the ticker's missed-tick policy (`KT_MISSED_*`) in `*policy`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `policy` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_policy(ticker: *const kt_ticker, policy: *mut c_int) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle_ref(ticker) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(policy, policy_to_c(t.inner.missed_ticks())) }
    })
}

/// Stores when the next slot is due (monotonic nanoseconds, see
/// `kt_now_ns`) in `*deadline_ns`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `deadline_ns` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_next_deadline_ns(
    ticker: *const kt_ticker,
    deadline_ns: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle_ref(ticker) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(deadline_ns, t.inner.schedule().next_deadline_ns()) }
    })
}

/// Sets the mode of the ticker's sleeper (`KT_MODE_*`), as
/// `kt_sleeper_set_mode` does for a sleeper; applies from the next wait.
///
/// Returns `KT_OK`; `KT_ENULL` if `ticker` is NULL; `KT_EINVAL` for an
/// unknown mode (the ticker is unchanged).
///
/// # Safety
/// `ticker` is NULL or a live ticker not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_set_mode(ticker: *mut kt_ticker, mode: c_int) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle(ticker) }?;
        t.inner.sleeper_mut().set_mode(mode_from_c(mode)?);
        Ok(())
    })
}

/// Sets the tail target of the ticker's sleeper, as
/// `kt_sleeper_set_tail_target` does for a sleeper (same range, same
/// presets `KT_TAIL_*`; nothing is clamped).
///
/// ```c
/// kt_ticker *t = kt_ticker_new(1000000, KT_MISSED_SKIP);
/// kt_ticker_set_tail_target(t, KT_TAIL_STRICT);   // at most 0.1 % of ticks late
/// ```
///
/// Returns `KT_OK`; `KT_ENULL` if `ticker` is NULL; `KT_EINVAL` for NaN, a
/// share <= 0, >= 1 or below 0.000001 (the ticker is unchanged).
///
/// # Safety
/// `ticker` is NULL or a live ticker not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_set_tail_target(ticker: *mut kt_ticker, share: f64) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle(ticker) }?;
        t.inner
            .sleeper_mut()
            .set_tail_target(tail_target_from_c(share)?);
        Ok(())
    })
}

/// Stores the tail target of the ticker's sleeper (a share) in `*share`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `share` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_tail_target(ticker: *const kt_ticker, share: *mut f64) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle_ref(ticker) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(share, t.inner.sleeper().tail_target().share()) }
    })
}

/// Sets the shortest spin that finishes each of the ticker's waits, in
/// nanoseconds, as `kt_sleeper_set_min_spin_ns` does for a sleeper.
///
/// Returns `KT_OK`; `KT_ENULL` if `ticker` is NULL; `KT_EINVAL` for a
/// negative value (the ticker is unchanged).
///
/// # Safety
/// `ticker` is NULL or a live ticker not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_set_min_spin_ns(
    ticker: *mut kt_ticker,
    min_spin_ns: i64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle(ticker) }?;
        let min_spin = duration_from_c(min_spin_ns)?;
        t.inner.sleeper_mut().set_min_spin(min_spin);
        Ok(())
    })
}

/// Stores the shortest final spin of the ticker's sleeper (ns) in `*min_spin_ns`.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `min_spin_ns` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_min_spin_ns(
    ticker: *const kt_ticker,
    min_spin_ns: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle_ref(ticker) }?;
        let ns = u64::try_from(t.inner.sleeper().min_spin().as_nanos()).unwrap_or(u64::MAX);
        // SAFETY: the caller's contract.
        unsafe { write_out(min_spin_ns, ns) }
    })
}

/// Frees a ticker. `kt_ticker_free(NULL)` does nothing.
///
/// # Safety
/// `ticker` is NULL or a live ticker, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_free(ticker: *mut kt_ticker) {
    // SAFETY: the caller's contract.
    unsafe { free(ticker) }
}
