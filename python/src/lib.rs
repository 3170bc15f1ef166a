//! The native half of the `keeptime` Python package: `keeptime._keeptime`.

mod aio;
mod bench;
mod clocks;
mod convert;
mod idle_hint;
mod profile;
mod sleeper;
mod ticker;
mod wait;

use pyo3::prelude::*;

#[pymodule]
fn _keeptime(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(sleeper::sleep, m)?)?;
    m.add_function(wrap_pyfunction!(sleeper::sleep_ns, m)?)?;
    m.add_function(wrap_pyfunction!(sleeper::sleep_until_ns, m)?)?;
    m.add_class::<sleeper::PySleeper>()?;
    m.add_class::<sleeper::PySleeperStats>()?;
    m.add_class::<profile::PyProfile>()?;
    m.add_function(wrap_pyfunction!(profile::set_default_profile, m)?)?;
    m.add_function(wrap_pyfunction!(profile::thread_profile, m)?)?;
    m.add("ProfileError", m.py().get_type::<profile::PyProfileError>())?;
    m.add("TAIL_RELAXED", keeptime::TailTarget::RELAXED.share())?;
    m.add("TAIL_BALANCED", keeptime::TailTarget::BALANCED.share())?;
    m.add("TAIL_STRICT", keeptime::TailTarget::STRICT.share())?;
    m.add_class::<ticker::PyTicker>()?;
    m.add_class::<ticker::PyTick>()?;
    m.add_class::<ticker::PyTickerStats>()?;
    m.add_class::<ticker::PySchedule>()?;
    m.add_class::<idle_hint::PyIdleHintStatus>()?;
    m.add_function(wrap_pyfunction!(idle_hint::_set_idle_hint_device, m)?)?;
    m.add_function(wrap_pyfunction!(wait::_set_warm_up, m)?)?;
    m.add_function(wrap_pyfunction!(wait::_warm_up_lead_ns, m)?)?;
    m.add_function(wrap_pyfunction!(clocks::_clocks_json, m)?)?;
    m.add_function(wrap_pyfunction!(clocks::_clock_findings_json, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_timer_slack_ns, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_set_timer_slack_ns, m)?)?;
    m.add_function(wrap_pyfunction!(bench::_measure_core, m)?)?;
    m.add_class::<aio::LoopSignal>()?;
    m.add_class::<aio::AsyncSleep>()?;
    m.add_function(wrap_pyfunction!(aio::_async_deadline_ns, m)?)?;
    m.add_function(wrap_pyfunction!(aio::_waiter_state, m)?)?;
    m.add_function(wrap_pyfunction!(aio::_waiter_capacity, m)?)?;
    m.add_function(wrap_pyfunction!(aio::_waiter_precise, m)?)?;
    Ok(())
}
