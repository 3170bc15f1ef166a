//! Status codes, their messages, and the guard that keeps Rust panics on the
//! Rust side of the C boundary.

use std::ffi::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a call did: every `int` a keeptime call returns is one of these.
/// `KT_OK` is 0, errors are negative; `kt_strerror` describes each.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types, clippy::upper_case_acronyms)]
pub enum kt_status {
    /// The call succeeded.
    KT_OK = 0,
    /// A pointer argument that must not be NULL was NULL; nothing was done.
    KT_ENULL = -1,
    /// An argument was out of range: a negative duration, a zero or negative
    /// period, an unknown mode, policy or flag, a tail target that is not a
    /// share strictly between 0 and 1, an idle-latency hint outside
    /// -1..=2147483647 µs. Nothing was changed.
    KT_EINVAL = -2,
    /// The wait was given up because the `kt_keep_going_fn` callback returned 0.
    KT_EINTR = -3,
    /// Internal error: keeptime panicked and the panic was caught at the C
    /// boundary (the process keeps running). Free the object the call was
    /// made on; its state is unspecified. Please report it.
    KT_EPANIC = -4,
    /// A host profile could not be read or written, is not a valid profile,
    /// or was made on another machine; the call's error message says which
    /// (`kt_profile_load`).
    KT_EPROFILE = -5,
}

use kt_status::{KT_EINTR, KT_EINVAL, KT_ENULL, KT_EPANIC, KT_EPROFILE, KT_OK};

impl kt_status {
    fn from_code(code: c_int) -> Option<kt_status> {
        [KT_OK, KT_ENULL, KT_EINVAL, KT_EINTR, KT_EPANIC, KT_EPROFILE]
            .into_iter()
            .find(|s| *s as c_int == code)
    }
}

/// A short English description of a status code (`kt_status`), for messages and logs.
///
/// Never returns NULL: an unknown code gives "unknown keeptime status". The
/// string is static; do not free it.
///
/// ```c
/// int rc = kt_sleep_ns(-5);
/// if (rc != KT_OK) fprintf(stderr, "sleep: %s\n", kt_strerror(rc));
/// ```
#[no_mangle]
pub extern "C" fn kt_strerror(status: c_int) -> *const c_char {
    let msg: &'static [u8] = match kt_status::from_code(status) {
        Some(KT_OK) => b"success\0",
        Some(KT_ENULL) => b"a required pointer argument was NULL\0",
        Some(KT_EINVAL) => {
            b"invalid argument (negative duration, zero period, tail target not in (0, 1), idle hint not in -1..2147483647 us, or unknown mode, policy or flag)\0"
        }
        Some(KT_EINTR) => b"wait interrupted by the keep_going callback\0",
        Some(KT_EPANIC) => {
            b"internal error in keeptime (a Rust panic was caught at the C boundary)\0"
        }
        Some(KT_EPROFILE) => {
            b"host profile unreadable, malformed or made on another machine (see the call's error message)\0"
        }
        None => b"unknown keeptime status\0",
    };
    msg.as_ptr().cast()
}

/// Why a call failed: a status other than `KT_OK`.
pub(crate) type Status = kt_status;

/// Runs `f`, turning its result into a status code and a panic into
/// `KT_EPANIC`, so no unwind ever crosses the `extern "C"` boundary.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), Status>) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => KT_OK as c_int,
        Ok(Err(status)) => status as c_int,
        Err(_) => KT_EPANIC as c_int,
    }
}

/// Runs `f` for its value, or `fallback` if it panicked.
pub(crate) fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// The object behind a handle, or `KT_ENULL`.
///
/// # Safety
/// `ptr` is NULL or a live handle of this type from this library, used by
/// one thread at a time.
pub(crate) unsafe fn handle<'a, T>(ptr: *mut T) -> Result<&'a mut T, Status> {
    // SAFETY: the caller's contract.
    unsafe { ptr.as_mut() }.ok_or(KT_ENULL)
}

/// The object behind a read-only handle, or `KT_ENULL`.
///
/// # Safety
/// As [`handle`].
pub(crate) unsafe fn handle_ref<'a, T>(ptr: *const T) -> Result<&'a T, Status> {
    // SAFETY: the caller's contract.
    unsafe { ptr.as_ref() }.ok_or(KT_ENULL)
}

/// Writes `value` through an out pointer, or fails with `KT_ENULL`.
///
/// # Safety
/// `out` is NULL or valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(out: *mut T, value: T) -> Result<(), Status> {
    if out.is_null() {
        return Err(KT_ENULL);
    }
    // SAFETY: non-null and valid by the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// Checks that an out pointer is usable before any work is done, so a call
/// that will fail with `KT_ENULL` has no side effect (no wait, no tick).
pub(crate) fn require<T>(ptr: *const T) -> Result<(), Status> {
    if ptr.is_null() {
        Err(KT_ENULL)
    } else {
        Ok(())
    }
}

/// Moves a new object into a handle for C, written to `*out`.
///
/// # Safety
/// `out` is valid for a write of a pointer (checked non-NULL by the caller).
pub(crate) unsafe fn give<T>(out: *mut *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { out.write(Box::into_raw(Box::new(value))) };
}

/// Takes back and drops an object given with [`give`]; NULL is a no-op.
///
/// # Safety
/// `ptr` is NULL or came from [`give`] and was not freed before.
pub(crate) unsafe fn free<T>(ptr: *mut T) {
    if ptr.is_null() {
        return;
    }
    // A panic in a destructor must not unwind into C either; there is
    // nothing to report from a void function, so it is dropped.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(ptr) });
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    struct PanicsOnDrop;

    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            panic!("destructor panicked");
        }
    }

    // No C call can make the core panic; these prove the boundary holds if
    // one ever does.
    #[test]
    fn a_panic_becomes_kt_epanic() {
        assert_eq!(guard(|| panic!("boom")), KT_EPANIC as c_int);
        assert_eq!(guard_value(7u64, || panic!("boom")), 7);
        assert_eq!(guard(|| Err(KT_EINVAL)), KT_EINVAL as c_int);
        assert_eq!(guard(|| Ok(())), KT_OK as c_int);
    }

    #[test]
    fn a_panicking_destructor_does_not_unwind_out_of_free() {
        let mut out = std::ptr::null_mut();
        // SAFETY: `out` is a valid local; the pointer is freed once.
        unsafe {
            give(&mut out, PanicsOnDrop);
            free(out);
        }
    }

    #[test]
    fn every_status_has_its_own_message() {
        let text = |code| {
            // SAFETY: kt_strerror returns a static NUL-terminated string.
            unsafe { std::ffi::CStr::from_ptr(kt_strerror(code)) }
                .to_str()
                .unwrap()
        };
        let unknown = text(99);
        assert_eq!(unknown, "unknown keeptime status");
        for code in [KT_OK, KT_ENULL, KT_EINVAL, KT_EINTR, KT_EPANIC, KT_EPROFILE] {
            assert_ne!(text(code as c_int), unknown);
        }
    }
}
