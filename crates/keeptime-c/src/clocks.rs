//! The clock report as a JSON string, and the function that frees strings
//! this library returns.

use crate::status::kt_status::{KT_EINVAL, KT_EPANIC};
use crate::status::{guard, require, write_out};
use std::ffi::{c_char, c_int, CString};
use std::ptr;

/// Inspects every clock and the machine (what `keeptime clocks` shows) and
/// stores the report as a NUL-terminated UTF-8 JSON object in `*json`; free
/// it with `kt_string_free`.
///
/// The object has `clocks` (per clock: `name`, `resolution_ns`,
/// `granularity_ns`, `read_cost_ns`, `monotonic_violations`, …), `machine`
/// (clocksource, TSC flags, timer slack, idle states, virtualisation,
/// preemption model, …) and `findings` (`code`, `severity`, plain-language
/// `message`): the serialization of the Rust core's `clocks::ClockReport`,
/// field names in snake_case with their unit.
///
/// Takes about 50–150 ms of spinning on the calling thread. It reports the
/// calling thread's timer slack, so call it before the thread's first
/// keeptime sleep (which sets 1 ns) if the default is what you want to see.
///
/// Returns `KT_OK`, or `KT_ENULL` if `json` is NULL (nothing is measured).
///
/// ```c
/// char *json = NULL;
/// if (kt_clocks_json(&json) == KT_OK) { puts(json); kt_string_free(json); }
/// ```
///
/// # Safety
/// `json` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_clocks_json(json: *mut *mut c_char) -> c_int {
    guard(|| {
        require(json)?;
        // SAFETY: checked non-NULL; valid by the caller's contract.
        unsafe { json.write(ptr::null_mut()) };
        let report = keeptime_core::clocks::inspect();
        let text = serde_json::to_string(&report).map_err(|_| KT_EPANIC)?;
        // serde_json escapes NUL inside strings, so there is none to reject.
        let text = CString::new(text).map_err(|_| KT_EPANIC)?;
        // SAFETY: as above.
        unsafe { write_out(json, text.into_raw()) }
    })
}

/// The findings the core makes from a clock report's parts, by the rules of
/// `spec/clocks.md`: `parts_json` is a NUL-terminated UTF-8 JSON object
/// `{"clocks": [...], "machine": {...}, "idle_latency": {...} or null}` in
/// the shape of `kt_clocks_json`'s report (absent fields are unknown). Stores
/// the findings, a JSON array of `{severity, code, message}` in report order,
/// in `*findings_json`; free it with `kt_string_free`. This is how a report
/// made elsewhere (a saved one, or one a test builds) gets its findings.
///
/// Returns `KT_OK`, `KT_ENULL` if a pointer is NULL, or `KT_EINVAL` if
/// `parts_json` is not UTF-8 or not such an object (`*findings_json` is then
/// NULL).
///
/// # Safety
/// `parts_json` is NULL or a NUL-terminated string; `findings_json` is NULL
/// or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_clock_findings_json(
    parts_json: *const c_char,
    findings_json: *mut *mut c_char,
) -> c_int {
    guard(|| {
        require(parts_json)?;
        require(findings_json)?;
        // SAFETY: checked non-NULL; valid by the caller's contract.
        unsafe { findings_json.write(ptr::null_mut()) };
        // SAFETY: checked non-NULL; NUL-terminated by the caller's contract.
        let text = unsafe { std::ffi::CStr::from_ptr(parts_json) }
            .to_str()
            .map_err(|_| KT_EINVAL)?;
        let findings = findings_of(text).ok_or(KT_EINVAL)?;
        let out = serde_json::to_string(&findings).map_err(|_| KT_EPANIC)?;
        let out = CString::new(out).map_err(|_| KT_EPANIC)?;
        // SAFETY: as above.
        unsafe { write_out(findings_json, out.into_raw()) }
    })
}

/// The findings of a report's parts in JSON, or `None` if they don't parse.
fn findings_of(text: &str) -> Option<Vec<keeptime_core::clocks::Finding>> {
    use keeptime_core::clocks::{ClockInfo, IdleLatency, MachineInfo};
    let mut parts: serde_json::Value = serde_json::from_str(text).ok()?;
    if !parts.is_object() {
        return None;
    }
    let mut take = |key: &str| {
        parts
            .get_mut(key)
            .map(serde_json::Value::take)
            .unwrap_or_default()
    };
    let clocks: Vec<ClockInfo> = serde_json::from_value(take("clocks")).ok()?;
    let machine: MachineInfo = serde_json::from_value(take("machine")).ok()?;
    let idle: Option<IdleLatency> = serde_json::from_value(take("idle_latency")).ok()?;
    Some(keeptime_core::clocks::findings(
        &clocks,
        &machine,
        idle.as_ref(),
    ))
}

/// Frees a string returned by this library (`kt_clocks_json`,
/// `kt_clock_findings_json`).
/// `kt_string_free(NULL)` does nothing; never pass a string from elsewhere.
///
/// # Safety
/// `s` is NULL or a string from this library, not freed before.
#[no_mangle]
pub unsafe extern "C" fn kt_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: the caller's contract: it came from `CString::into_raw`.
        drop(unsafe { CString::from_raw(s) });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::kt_status::KT_ENULL;

    #[test]
    fn null_out_pointer_is_enull() {
        // SAFETY: NULL is allowed.
        assert_eq!(
            unsafe { kt_clocks_json(ptr::null_mut()) },
            KT_ENULL as c_int
        );
        // SAFETY: NULL is a no-op.
        unsafe { kt_string_free(ptr::null_mut()) };
    }
}
