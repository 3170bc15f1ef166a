//! # libkeeptime: keeptime behind a stable C ABI
//!
//! Precise waiting for C and C++: the accuracy of a spin at the CPU cost of a
//! sleep. This crate builds `libkeeptime.a` and `libkeeptime.so`
//! (SONAME `libkeeptime.so.0`); `include/keeptime.h` is generated from these
//! doc comments by cbindgen.
//!
//! ```c
//! #include <keeptime.h>
//! kt_sleep_ns(100000);                                   /* 100 µs, precisely */
//! kt_sleep_until_ns(kt_now_ns() + 5000000);               /* CLOCK_MONOTONIC nanoseconds */
//! kt_ticker *t = kt_ticker_new(1000000, KT_MISSED_SKIP);  /* 1 kHz */
//! kt_tick tick; while (kt_ticker_wait(t, &tick) == KT_OK) { ... }
//! kt_ticker_free(t);
//! kt_sleeper *s = kt_sleeper_new(KT_MODE_EXACT);
//! kt_sleeper_set_tail_target(s, KT_TAIL_STRICT);          /* at most 0.1 % late */
//! kt_sleep_stats st; kt_sleeper_stats(s, &st);           /* sleeps, late, OS waits, CPU */
//! kt_sleeper_set_idle_hint(s, 0);   /* opt-in PM QoS request; price: idle CPUs poll */
//! kt_profile *p; kt_profile_load("host.profile", 0, &p, NULL); /* keeptime trace --profile */
//! kt_sleeper_create_with_profile(KT_MODE_EXACT, 0, p, &s);     /* no learning period */
//! ```
//!
//! ## Conventions
//!
//! * Every call returns a status code: `KT_OK` (0) or a negative `KT_E*`;
//!   `kt_strerror` describes it. The exceptions are `kt_now_ns`,
//!   `kt_strerror`, `kt_version`, the `*_free` functions (void) and the
//!   `*_new` shorthands, which return the handle or NULL.
//! * No call aborts the process: bad arguments are status codes, and a Rust
//!   panic is caught at the boundary and reported as `KT_EPANIC`.
//! * Times are nanoseconds. Absolute times (deadlines, `kt_now_ns`) are
//!   `uint64_t` on `CLOCK_MONOTONIC`; durations and periods are `int64_t`,
//!   so an accidentally negative one (`deadline - now` computed too late) is
//!   `KT_EINVAL` instead of a 584-year sleep.
//! * Handles are opaque; `kt_X_free(NULL)` is a no-op. A handle is used by
//!   one thread at a time; give each waiting thread its own.

#![warn(missing_docs)]
// Every extern fn checks its pointers before use and documents its contract
// under `# Safety`; C callers cannot see Rust `unsafe` anyway.
#![allow(clippy::missing_safety_doc)]

mod clocks;
mod delay;
mod idle_hint;
mod profile;
mod sleep;
mod status;
mod ticker;

use std::ffi::c_char;

pub use clocks::{kt_clock_findings_json, kt_clocks_json, kt_string_free};
pub use delay::{
    kt_delay, kt_delay_cancel, kt_delay_capacity, kt_delay_deadline_ns, kt_delay_fn, kt_delay_free,
    kt_delay_lead_ns, kt_delay_poll, kt_delay_set_finish_spin_ns, kt_delay_start, kt_delay_state,
    KT_DELAY_FINISH_SPIN_MAX_NS, KT_DELAY_FINISH_SPIN_MIN_NS,
};
pub use idle_hint::{
    kt_idle_hint_refusal, kt_idle_hint_state, kt_idle_hint_status, kt_sleeper_idle_hint,
    kt_sleeper_set_idle_hint, kt_testing_set_idle_hint_device, kt_ticker_idle_hint,
    kt_ticker_set_idle_hint, KT_IDLE_HINT_MAX_US, KT_IDLE_HINT_NONE,
};
pub use profile::{
    kt_profile, kt_profile_free, kt_profile_load, kt_set_default_profile,
    kt_sleeper_create_with_profile, kt_sleeper_write_profile, kt_thread_write_profile,
    KT_PROFILE_IGNORE_MACHINE,
};
pub use sleep::{
    kt_keep_going_fn, kt_mode, kt_now_ns, kt_sleep_ns, kt_sleep_stats, kt_sleep_until_ns,
    kt_sleeper, kt_sleeper_create, kt_sleeper_free, kt_sleeper_mode, kt_sleeper_new,
    kt_sleeper_reset_stats, kt_sleeper_set_mode, kt_sleeper_set_tail_target, kt_sleeper_sleep_ns,
    kt_sleeper_sleep_until_ns, kt_sleeper_sleep_until_ns_interruptible, kt_sleeper_stats,
    kt_sleeper_tail_target, KT_SLEEPER_DEFAULT_PROFILE, KT_SLEEPER_KEEP_TIMER_SLACK,
    KT_TAIL_BALANCED, KT_TAIL_RELAXED, KT_TAIL_STRICT,
};
pub use status::{kt_status, kt_strerror};
pub use ticker::schedule::{
    kt_schedule, kt_schedule_create, kt_schedule_free, kt_schedule_new,
    kt_schedule_next_deadline_ns, kt_schedule_next_index, kt_schedule_poll, kt_schedule_reset,
    kt_schedule_set_period, kt_schedule_stats, kt_schedule_woke, kt_step, kt_step_kind,
};
pub use ticker::{
    kt_missed, kt_stats, kt_tick, kt_ticker, kt_ticker_create, kt_ticker_free, kt_ticker_new,
    kt_ticker_next_deadline_ns, kt_ticker_period_ns, kt_ticker_policy, kt_ticker_reset,
    kt_ticker_set_period, kt_ticker_stats, kt_ticker_wait, kt_ticker_wait_interruptible,
};

/// The library's version, e.g. "0.1.0" (static; do not free).
#[no_mangle]
pub extern "C" fn kt_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
