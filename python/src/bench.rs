//! Native helpers for `python -m keeptime bench` (private: `keeptime._keeptime._*`).

use crate::convert::{mode_arg, tail_target_arg};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

/// The calling thread's Linux timer slack in ns, or None where there is none.
#[pyfunction]
pub fn _timer_slack_ns() -> Option<u64> {
    keeptime::os::timer_slack_ns().ok()
}

/// Sets the calling thread's Linux timer slack (ns >= 1).
#[pyfunction]
pub fn _set_timer_slack_ns(ns: u64) -> PyResult<()> {
    keeptime::os::set_timer_slack_ns(ns).map_err(|e| PyOSError::new_err(e.to_string()))
}

/// The bench's reference row: a `keeptime::Sleeper` in `mode` driven by a
/// Rust loop (no Python between the waits), sleep-style like the Python
/// rows: `warmup` unrecorded waits, then `samples` waits of `duration_ns`,
/// each error the first clock reading after the wait minus its deadline, each
/// return that reading minus the one the wait returned. Returns
/// `(errors, returns, wall_ns, cpu_ns, stats)`, `stats` the sleeper's
/// `(sleeps, late, os_waits, spin_ns, cpu_estimate_ns)` over the samples;
/// the GIL is released throughout.
#[pyfunction]
#[pyo3(signature = (mode, duration_ns, samples, warmup, tail_target = None))]
pub fn _measure_core(
    py: Python<'_>,
    mode: &str,
    duration_ns: u64,
    samples: usize,
    warmup: usize,
    tail_target: Option<&Bound<'_, PyAny>>,
) -> PyResult<CoreMeasurement> {
    let mode = mode_arg(mode)?;
    let target = match tail_target {
        Some(target) => tail_target_arg(target)?,
        None => keeptime::TailTarget::default(),
    };
    Ok(py.detach(|| {
        let mut sleeper = keeptime::Sleeper::builder()
            .mode(mode)
            .tail_target(target)
            .build();
        let wait = |sleeper: &mut keeptime::Sleeper| {
            let deadline = keeptime::os::monotonic_ns().saturating_add(duration_ns);
            let returned = sleeper.sleep_until_ns(deadline);
            let woke = keeptime::os::monotonic_ns();
            (woke as i64 - deadline as i64, woke as i64 - returned as i64)
        };
        for _ in 0..warmup {
            wait(&mut sleeper);
        }
        sleeper.reset_stats();
        let mut errors = Vec::with_capacity(samples);
        let mut returns = Vec::with_capacity(samples);
        let cpu_start = keeptime::os::thread_cpu_ns();
        let wall_start = keeptime::os::monotonic_ns();
        for _ in 0..samples {
            let (error, returned) = wait(&mut sleeper);
            errors.push(error);
            returns.push(returned);
        }
        let wall = keeptime::os::monotonic_ns() - wall_start;
        let cpu = keeptime::os::thread_cpu_ns() - cpu_start;
        let st = sleeper.stats();
        let counters = (
            st.sleeps,
            st.late,
            st.os_waits,
            st.spin_ns,
            st.cpu_estimate_ns,
        );
        (errors, returns, wall, cpu, counters)
    }))
}

/// What [`_measure_core`] returns: errors, returns, wall ns, CPU ns, sleeper
/// stats.
type CoreMeasurement = (Vec<i64>, Vec<i64>, u64, u64, (u64, u64, u64, u64, u64));
