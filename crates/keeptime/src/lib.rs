//! # keeptime
//!
//! Precise waiting: the accuracy of a spin at the CPU cost of a sleep.
//!
//! On Linux a plain 100 µs `std::thread::sleep` takes ~155 µs (50 µs of timer
//! slack plus the wake-up); a busy loop is exact but burns a core. keeptime
//! waits in the OS with an absolute deadline until a *learned* margin before
//! the deadline, then spins the last few microseconds:
//!
//! ```
//! use std::time::{Duration, Instant};
//!
//! keeptime::sleep(Duration::from_micros(100));          // 100 µs, to a fraction of a µs
//! let deadline = Instant::now() + Duration::from_millis(2);
//! keeptime::sleep_until(deadline);                      // never before `deadline`
//! assert!(Instant::now() >= deadline);
//!
//! let mut ticker = keeptime::Ticker::new(Duration::from_millis(1))?; // 1 kHz, no drift
//! for tick in ticker.by_ref().take(5) {
//!     let _ = (tick.index, tick.lateness, tick.skipped);
//! }
//!
//! let mut s = keeptime::Sleeper::builder().mode(keeptime::Mode::Efficient).build();
//! s.sleep(Duration::from_micros(500));                   // no spin; may end a few µs early
//! # Ok::<(), keeptime::Error>(())
//! ```
//!
//! ## The contract
//!
//! * [`sleep_until`] never returns before its deadline on the monotonic clock
//!   (`CLOCK_MONOTONIC`, the clock of [`Instant`]), and
//!   returns as soon after it as it can; [`sleep`] is `sleep_until(now + d)`.
//!   [`Mode::Efficient`] is the one, explicitly named, exception.
//! * OS waits use an absolute deadline (`clock_nanosleep` with `TIMER_ABSTIME`
//!   on Linux; `std::thread::sleep` elsewhere), so a signal (EINTR) resumes
//!   toward the same deadline and nothing accumulates.
//! * The margin is learned online from observed overshoot, per thread for the
//!   free functions and per [`Sleeper`] otherwise ([`estimate`], `spec/estimator.md`).
//! * Waiting threads get a 1 ns Linux timer slack ([`SleeperBuilder::timer_slack`] opts out).
//! * At most one thread per CPU but one spins at a time in the whole process;
//!   the others finish with an OS wait, so many sleepers on few cores never
//!   snowball into everyone spinning.
//! * Durations past the clock's range saturate to an effectively unbounded
//!   wait; nothing panics on any input.
//! * Opt-in: [`SleeperBuilder::idle_hint`] holds a PM QoS CPU latency
//!   request (`/dev/cpu_dma_latency`, per process, reference-counted) while
//!   the sleeper lives, so OS waits wake sooner on machines with deep idle
//!   states; the price is power (idle CPUs poll). A refusal never fails.
//! * Opt-in: [`SleeperBuilder::profile`] starts a sleeper from a host
//!   [`profile`] (what an earlier run on this machine learned, from
//!   `keeptime trace --profile FILE` or [`Sleeper::profile`]) instead of
//!   spinning through its first hundreds of sleeps while it learns; a
//!   profile from another machine is refused. [`set_default_profile`] starts
//!   keeptime's own sleepers from one too: those behind [`sleep`] and the
//!   other free functions, and the async waiter's; so does the environment
//!   variable `KEEPTIME_PROFILE` ([`PROFILE_ENV`]) in a program that sets
//!   none.
//!
//! ## Async code
//!
//! With the `tokio` feature, `keeptime::tokio` has `sleep`, `sleep_until`
//! and `interval` futures with the same never-early contract, woken by one
//! process-wide precise waiter thread (`keeptime::waiter`, feature `async`)
//! that learns the executor's wake-up latency; one sleep holds an executor
//! thread for at most ~4 µs per poll.
//!
//! ## Testing code that waits
//!
//! Every decision goes through the [`Platform`] trait; [`sim::SimPlatform`]
//! simulates time with scripted OS overshoots, for keeptime's tests and yours.

#![warn(missing_docs)]

pub mod clocks;
mod default_profile;
mod error;
pub mod estimate;
mod idle_hint;
pub mod os;
mod platform;
pub mod pmqos;
pub mod profile;
pub mod sim;
mod sleep;
pub mod stats;
mod sys;
mod ticker;
#[cfg(feature = "tokio")]
pub mod tokio;
#[cfg(feature = "trace")]
pub mod trace;
#[cfg(feature = "async")]
pub mod waiter;

use std::cell::RefCell;
use std::time::{Duration, Instant};

pub use default_profile::{set_default_profile, PROFILE_ENV};
pub use error::Error;
pub use estimate::MarginEstimator;
pub use idle_hint::{IdleHint, IdleHintHolder, IdleHintStatus};
pub use platform::{Platform, System};
pub use sleep::{
    crowd_spin_cap, explores, plan_efficient, plan_exact, Handoff, Interrupted, Mode, OsWaitPlan,
    PlanStep, Sleeper, SleeperBuilder, SleeperStats, TailTarget, CROWD_PAUSE_NS,
    CROWD_SPIN_DIVISOR, EXPLORE_COST_DIV, EXPLORE_EVERY, EXPLORE_YOUNG_SLEEPS, HANDOFF_NS,
    INTERRUPT_POLL_NS, MIN_OS_WAIT_NS, SPIN_NEAR_NS, SPIN_YIELD_AFTER_NS, SPLITS_NS,
};
pub use sys::OsWake;
pub use ticker::{
    drive_tick, drive_tick_async, MissedTicks, Schedule, ScheduleCell, Step, Tick, TickNs, Ticker,
    TickerStats, WaitEnd,
};

thread_local! {
    /// This thread's sleeper behind the free functions, started from the
    /// default profile if one is set ([`set_default_profile`]).
    static THREAD_SLEEPER: RefCell<default_profile::DefaultSleeper<System>> =
        RefCell::new(default_profile::DefaultSleeper::new(thread_sleeper_settings));
}

/// The settings of a thread's sleeper behind the free functions.
fn thread_sleeper_settings() -> (SleeperBuilder, System) {
    (Sleeper::builder(), System::new(true))
}

/// A host profile of what this thread's sleeper behind the free functions
/// ([`sleep`], [`sleep_until`], …) has learned, as [`Sleeper::profile`]
/// makes one (`spec/estimator.md`, *Default sleepers*, *Saving what they
/// learned*).
///
/// Write it at the end of a run and start the next from it
/// (`KEEPTIME_PROFILE=app.profile`, or [`set_default_profile`]): its
/// default sleepers then plan from their first sleep on what this one
/// learned. Such a profile carries the wake-ups of the program's own
/// sleeps, in the order it makes its OS waits, where a trace's
/// (`keeptime trace --profile`) records each length in a block of its own;
/// on a host where a short wait right after a long one wakes later, a
/// trace's profile underestimates the second wait of a two-wait plan.
///
/// A thread that has not slept gives its sleeper as it would start: from
/// the default profile in force (or the one `KEEPTIME_PROFILE` names), else
/// empty. The call neither replaces nor resets the sleeper. Called from
/// inside a sleep of this thread (an interrupt check), it gives the profile
/// a new default sleeper would start from.
///
/// ```no_run
/// keeptime::sleep(std::time::Duration::from_millis(10));
/// // ... at the end of the run:
/// keeptime::thread_profile().write("app.profile")?;
/// # Ok::<(), keeptime::profile::ProfileError>(())
/// ```
pub fn thread_profile() -> profile::Profile {
    THREAD_SLEEPER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => s.get().profile(),
        Err(_) => default_profile::DefaultSleeper::new(thread_sleeper_settings)
            .get()
            .profile(),
    })
}

/// Sleeps for `duration`, precisely: never less, typically well under a
/// microsecond more. Uses this thread's own [`Sleeper`] in [`Mode::Exact`].
///
/// `Duration::MAX` (or anything past the clock's range) saturates to an
/// effectively unbounded wait; it never panics.
///
/// Cost: about the CPU time of the learned margin (a few µs) per call, plus
/// one or two OS waits.
#[inline]
pub fn sleep(duration: Duration) {
    sleep_until_monotonic_ns(os::monotonic_ns().saturating_add(platform::duration_ns(duration)));
}

/// Sleeps until `deadline`, precisely: never before it. A deadline in the past
/// returns at once (after one clock read).
#[inline]
pub fn sleep_until(deadline: Instant) {
    sleep_until_monotonic_ns(System::default().ns_from_instant(deadline));
}

/// Sleeps until `deadline_ns` on the monotonic clock ([`os::monotonic_ns`];
/// `CLOCK_MONOTONIC` nanoseconds on Linux) and returns the first clock reading
/// after the deadline.
///
/// The thread's sleeper does everything but the last few µs of the final
/// spin ([`HANDOFF_NS`]); that spin runs here, after the sleeper is put
/// back, so the loop's exit is the return to the caller.
#[inline]
pub fn sleep_until_monotonic_ns(deadline_ns: u64) -> u64 {
    match sleep_to_handoff(deadline_ns, &mut || true) {
        Ok(handoff) => handoff.finish(&System::default()),
        Err(Interrupted { at_ns }) => at_ns, // unreachable: the check never stops
    }
}

/// [`sleep_to_handoff`] with a last stretch of at least `lead_ns` for the
/// binding's own work before the return
/// ([`Sleeper::sleep_until_ns_to_handoff_with_lead`]).
#[inline]
pub fn sleep_to_handoff_with_lead(
    deadline_ns: u64,
    lead_ns: u64,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<Handoff, Interrupted> {
    THREAD_SLEEPER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => s
            .get()
            .sleep_until_ns_to_handoff_with_lead(deadline_ns, lead_ns, keep_going),
        Err(_) => {
            Sleeper::new().sleep_until_ns_to_handoff_with_lead(deadline_ns, lead_ns, keep_going)
        }
    })
}

/// This thread's sleeper, up to the sleep's hand-off: everything but the
/// last few µs of the final spin, with an interrupt check as in
/// [`Sleeper::sleep_until_ns_interruptible`]. The caller spins the rest with
/// [`Handoff::finish`] (on [`System`]) as its very last step; a language
/// binding re-acquires its runtime in between (`spec/sleep.md`, *Hand-off*).
#[inline]
pub fn sleep_to_handoff(
    deadline_ns: u64,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<Handoff, Interrupted> {
    THREAD_SLEEPER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => s.get().sleep_until_ns_to_handoff(deadline_ns, keep_going),
        // Only reachable if a sleep is started from within a sleep on the same
        // thread (e.g. from a signal handler); use a fresh sleeper rather than
        // panic (a one-off: not started from the default profile).
        Err(_) => Sleeper::new().sleep_until_ns_to_handoff(deadline_ns, keep_going),
    })
}
