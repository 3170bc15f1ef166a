//! The opt-in idle-latency hint of a sleeper or ticker (spec/idle-hint.md):
//! a PM QoS CPU latency request on `/dev/cpu_dma_latency`, held per process
//! and reference-counted by the core.

use crate::sleep::kt_sleeper;
use crate::status::kt_status::KT_EINVAL;
use crate::status::{guard, handle, handle_ref, write_out, Status};
use crate::ticker::kt_ticker;
use keeptime_core::pmqos::{self, HintError};
use keeptime_core::{IdleHint, IdleHintStatus};
use std::ffi::{c_char, c_int, CStr};

/// `kt_sleeper_set_idle_hint` / `kt_ticker_set_idle_hint` value that gives
/// the hint up (the object no longer holds the request).
pub const KT_IDLE_HINT_NONE: i64 = -1;
/// The largest idle-latency hint, µs (2147483647, as an `int64_t`): the
/// kernel reads an `s32`.
pub const KT_IDLE_HINT_MAX_US: i64 = i32::MAX as i64;

/// Whether an object's idle-latency hint is in force (`kt_idle_hint_status.state`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum kt_idle_hint_state {
    /// No hint was asked for: the device was never opened for it.
    KT_IDLE_HINT_NOT_ASKED = 0,
    /// The request is held while the object lives.
    KT_IDLE_HINT_HELD = 1,
    /// The device could not be opened or written: the object works exactly
    /// as without the hint (the process said so once on stderr).
    KT_IDLE_HINT_REFUSED = 2,
}

/// Why a hint was refused (`kt_idle_hint_status.refusal`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum kt_idle_hint_refusal {
    /// Not refused.
    KT_IDLE_REFUSED_NONE = 0,
    /// No such device (kernel without PM QoS, container, non-Linux).
    KT_IDLE_REFUSED_NO_DEVICE = 1,
    /// Permission denied: writing the device needs root or write access to it.
    KT_IDLE_REFUSED_NOT_PERMITTED = 2,
    /// Another failure to open or write it (the stderr warning has the OS's message).
    KT_IDLE_REFUSED_OTHER = 3,
}

/// An object's idle-latency hint: `kt_sleeper_idle_hint`, `kt_ticker_idle_hint`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct kt_idle_hint_status {
    /// `KT_IDLE_HINT_NOT_ASKED`, `KT_IDLE_HINT_HELD` or `KT_IDLE_HINT_REFUSED`.
    pub state: kt_idle_hint_state,
    /// Why it was refused; `KT_IDLE_REFUSED_NONE` unless refused.
    pub refusal: kt_idle_hint_refusal,
    /// The value asked for, µs; -1 when not asked.
    pub asked_us: i64,
    /// The value in force for the process (the strictest live request), µs:
    /// `<= asked_us` when held; -1 otherwise.
    pub in_force_us: i64,
}

fn hint_from_c(max_latency_us: i64) -> Result<Option<IdleHint>, Status> {
    if max_latency_us == KT_IDLE_HINT_NONE {
        return Ok(None);
    }
    let us = u32::try_from(max_latency_us).map_err(|_| KT_EINVAL)?;
    IdleHint::from_micros(us).map(Some).map_err(|_| KT_EINVAL)
}

fn status_to_c(status: IdleHintStatus) -> kt_idle_hint_status {
    use kt_idle_hint_refusal::*;
    use kt_idle_hint_state::*;
    match status {
        IdleHintStatus::NotAsked => kt_idle_hint_status {
            state: KT_IDLE_HINT_NOT_ASKED,
            refusal: KT_IDLE_REFUSED_NONE,
            asked_us: -1,
            in_force_us: -1,
        },
        IdleHintStatus::Held {
            asked_us,
            in_force_us,
        } => kt_idle_hint_status {
            state: KT_IDLE_HINT_HELD,
            refusal: KT_IDLE_REFUSED_NONE,
            asked_us: asked_us.into(),
            in_force_us: in_force_us.into(),
        },
        IdleHintStatus::Refused { asked_us, error } => kt_idle_hint_status {
            state: KT_IDLE_HINT_REFUSED,
            refusal: match error {
                HintError::NoDevice { .. } => KT_IDLE_REFUSED_NO_DEVICE,
                HintError::NotPermitted { .. } => KT_IDLE_REFUSED_NOT_PERMITTED,
                _ => KT_IDLE_REFUSED_OTHER,
            },
            asked_us: asked_us.into(),
            in_force_us: -1,
        },
    }
}

/// Asks the kernel to keep CPU wake-up latency at most `max_latency_us`
/// microseconds while this sleeper lives (0, what cyclictest holds, is the
/// usual choice), or gives the hint up with `KT_IDLE_HINT_NONE` (-1): a PM
/// QoS CPU latency request on `/dev/cpu_dma_latency`.
///
/// With a cpuidle driver that has deep or polling idle states (`haltpoll`,
/// `intel_idle`, `acpi_idle`) OS waits then wake sooner and tighter, so exact
/// sleeps spin less. On an AMD EPYC KVM guest with `haltpoll`, 0 brought
/// wake-ups from 26 µs to 15 µs late at p50 and the least CPU for 1 % late
/// 1 ms sleeps from 6.6 % to 2.15 %. With no cpuidle driver (`none`) it
/// changes little.
///
/// **Price:** idle CPUs poll instead of sleeping: more power, and on a
/// virtual machine the host sees the vCPU as busy.
///
/// The request is per process and reference-counted: every sleeper and
/// ticker with a hint holds a share until it is freed (or its hint given
/// up); the strictest live value is in force; freeing the last one closes
/// the device, which ends the request. A new value is requested before the
/// old one is released.
///
/// If the device cannot be opened or written (not root, no such device),
/// the hint is refused: the call still returns `KT_OK`, the sleeper works
/// exactly as without it, and the first refusal in the process prints one
/// line on stderr (`keeptime: warning: <reason>; sleeping without the
/// idle-latency hint`). `kt_sleeper_idle_hint` says which.
///
/// Returns `KT_OK`; `KT_ENULL` if `sleeper` is NULL; `KT_EINVAL` for a value
/// below -1 or above `KT_IDLE_HINT_MAX_US` (2147483647; nothing is requested
/// and the sleeper keeps its hint).
///
/// ```c
/// kt_sleeper_set_idle_hint(s, 0);
/// kt_idle_hint_status h;
/// kt_sleeper_idle_hint(s, &h);
/// if (h.state == KT_IDLE_HINT_HELD) printf("%lld us in force\n", (long long)h.in_force_us);
/// ```
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_set_idle_hint(
    sleeper: *mut kt_sleeper,
    max_latency_us: i64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle(sleeper) }?;
        let hint = hint_from_c(max_latency_us)?;
        s.inner.set_idle_hint(hint);
        Ok(())
    })
}

/// Stores in `*status` whether this sleeper's idle-latency hint is held
/// (and the value in force for the process), was refused (and why), or was
/// not asked for.
///
/// Returns `KT_OK`, or `KT_ENULL` if either pointer is NULL.
///
/// # Safety
/// `sleeper` is NULL or a live sleeper; `status` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_idle_hint(
    sleeper: *const kt_sleeper,
    status: *mut kt_idle_hint_status,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { handle_ref(sleeper) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(status, status_to_c(s.inner.idle_hint_status())) }
    })
}

/// `kt_sleeper_set_idle_hint` for a ticker's sleeper: the request is held
/// while the ticker lives. Same values, price and errors.
///
/// # Safety
/// `ticker` is NULL or a live ticker not in use by another thread.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_set_idle_hint(
    ticker: *mut kt_ticker,
    max_latency_us: i64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle(ticker) }?;
        let hint = hint_from_c(max_latency_us)?;
        t.inner.set_idle_hint(hint);
        Ok(())
    })
}

/// `kt_sleeper_idle_hint` for a ticker.
///
/// # Safety
/// `ticker` is NULL or a live ticker; `status` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn kt_ticker_idle_hint(
    ticker: *const kt_ticker,
    status: *mut kt_idle_hint_status,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let t = unsafe { handle_ref(ticker) }?;
        // SAFETY: the caller's contract.
        unsafe { write_out(status, status_to_c(t.inner.idle_hint_status())) }
    })
}

/// **For tests only**: makes every later idle-hint request of this process
/// go to the file at `path` instead of `/dev/cpu_dma_latency` (NULL: back to
/// the device), so a test can see a refusal (a path that does not exist) or
/// read back the value written (a regular file) without touching the real
/// device. Live requests keep the device they opened. A program has no
/// reason to call it.
///
/// Returns `KT_OK`.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn kt_testing_set_idle_hint_device(path: *const c_char) -> c_int {
    guard(|| {
        let path = if path.is_null() {
            None
        } else {
            use std::os::unix::ffi::OsStrExt;
            // SAFETY: non-NULL and NUL-terminated by the caller's contract.
            let bytes = unsafe { CStr::from_ptr(path) }.to_bytes();
            Some(std::ffi::OsStr::from_bytes(bytes).into())
        };
        pmqos::set_process_device(path);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_map_to_hints_or_einval() {
        assert_eq!(hint_from_c(-1), Ok(None));
        assert_eq!(hint_from_c(0), Ok(Some(IdleHint::ZERO)));
        assert_eq!(hint_from_c(KT_IDLE_HINT_MAX_US), Ok(Some(IdleHint::MAX)));
        for bad in [-2, i64::MIN, KT_IDLE_HINT_MAX_US + 1, 1 << 32, i64::MAX] {
            assert_eq!(hint_from_c(bad), Err(KT_EINVAL), "{bad}");
        }
    }

    #[test]
    fn statuses_map_to_c() {
        let refused = |error| status_to_c(IdleHintStatus::Refused { asked_us: 3, error });
        let c = refused(HintError::NotPermitted { path: "/x".into() });
        assert_eq!(
            (c.state, c.refusal, c.asked_us, c.in_force_us),
            (
                kt_idle_hint_state::KT_IDLE_HINT_REFUSED,
                kt_idle_hint_refusal::KT_IDLE_REFUSED_NOT_PERMITTED,
                3,
                -1
            )
        );
        let c = status_to_c(IdleHintStatus::Held {
            asked_us: 9,
            in_force_us: 0,
        });
        assert_eq!((c.asked_us, c.in_force_us), (9, 0));
        assert_eq!(
            status_to_c(IdleHintStatus::NotAsked).state,
            kt_idle_hint_state::KT_IDLE_HINT_NOT_ASKED
        );
    }
}
