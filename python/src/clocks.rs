//! The clock report, handed to Python as the JSON of the core's serde types
//! (`keeptime/_clocks.py` turns it into typed objects).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::time::Duration;

/// Runs `keeptime::clocks::inspect_with` with the GIL released and returns
/// the report as JSON. Options left as None keep the core's defaults.
#[pyfunction]
#[pyo3(signature = (reads_per_batch=None, batches=None, granularity_reads=None, time_limit_per_clock_ns=None, tsc_calibration_ns=None))]
pub fn _clocks_json(
    py: Python<'_>,
    reads_per_batch: Option<usize>,
    batches: Option<usize>,
    granularity_reads: Option<usize>,
    time_limit_per_clock_ns: Option<u64>,
    tsc_calibration_ns: Option<u64>,
) -> PyResult<String> {
    let mut opts = keeptime::clocks::InspectOptions::default();
    if let Some(v) = reads_per_batch {
        opts.reads_per_batch = v;
    }
    if let Some(v) = batches {
        opts.batches = v;
    }
    if let Some(v) = granularity_reads {
        opts.granularity_reads = v;
    }
    if let Some(v) = time_limit_per_clock_ns {
        opts.time_limit_per_clock = Duration::from_nanos(v);
    }
    if let Some(v) = tsc_calibration_ns {
        opts.tsc_calibration = Duration::from_nanos(v);
    }
    let report = py.detach(|| keeptime::clocks::inspect_with(&opts));
    serde_json::to_string(&report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The findings the core makes from a report's parts (`spec/clocks.md`):
/// `parts_json` is `{"clocks": [...], "machine": {...}, "idle_latency": {...} | null}`
/// in the report's JSON shape; the result is the findings' JSON list.
#[pyfunction]
pub fn _clock_findings_json(parts_json: &str) -> PyResult<String> {
    let bad = |e: serde_json::Error| {
        pyo3::exceptions::PyValueError::new_err(format!("report parts: {e}"))
    };
    let mut parts: serde_json::Value = serde_json::from_str(parts_json).map_err(bad)?;
    let mut take = |key: &str| parts.get_mut(key).map(serde_json::Value::take);
    let clocks: Vec<keeptime::clocks::ClockInfo> =
        serde_json::from_value(take("clocks").unwrap_or_default()).map_err(bad)?;
    let machine: keeptime::clocks::MachineInfo =
        serde_json::from_value(take("machine").unwrap_or_default()).map_err(bad)?;
    let idle: Option<keeptime::clocks::IdleLatency> =
        serde_json::from_value(take("idle_latency").unwrap_or_default()).map_err(bad)?;
    let findings = keeptime::clocks::findings(&clocks, &machine, idle.as_ref());
    serde_json::to_string(&findings).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}
