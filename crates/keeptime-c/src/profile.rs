//! Host profiles: start a sleeper from what an earlier run on this machine
//! learned (`spec/estimator.md`, *Profile*).

use crate::sleep::{builder_from_c, kt_sleeper, KT_SLEEPER_DEFAULT_PROFILE};
use crate::status::kt_status::{KT_EINVAL, KT_ENULL, KT_EPROFILE};
use crate::status::{free, give, guard, handle_ref, require, Status};
use keeptime_core::profile::Profile;
use std::ffi::{c_char, c_int, CStr, CString};
use std::ptr;

/// A host profile read from a file (opaque): this machine's fingerprint and,
/// per OS-wait length, its last wake-ups and the cost of an OS wait. Write
/// one with `keeptime trace --profile FILE` or `kt_sleeper_write_profile`;
/// load it with `kt_profile_load`, start sleepers from it with
/// `kt_sleeper_create_with_profile`, free it with `kt_profile_free`.
#[allow(non_camel_case_types)]
pub struct kt_profile {
    inner: Profile,
}

/// `kt_profile_load` flag: load a profile made on another machine (the
/// fingerprint is not compared; every other check still applies).
pub const KT_PROFILE_IGNORE_MACHINE: u32 = 1;

/// Stores `message` in `*error` (a string to free with `kt_string_free`)
/// unless `error` is NULL.
///
/// # Safety
/// `error` is NULL or valid for writing a pointer.
unsafe fn tell(error: *mut *mut c_char, message: &str) {
    if error.is_null() {
        return;
    }
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    // SAFETY: non-NULL and valid by the caller's contract.
    unsafe { error.write(text.into_raw()) };
}

/// A path argument as a Rust string, or `KT_ENULL` / `KT_EINVAL` (not UTF-8).
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
unsafe fn path_arg<'a>(path: *const c_char) -> Result<&'a str, Status> {
    if path.is_null() {
        return Err(KT_ENULL);
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(path) }
        .to_str()
        .map_err(|_| KT_EINVAL)
}

/// Reads the host profile at `path` (a NUL-terminated UTF-8 path) and stores
/// it in `*out`. Unless `flags` has `KT_PROFILE_IGNORE_MACHINE`, a profile
/// made on another machine is refused. Nothing is loaded from a bad file.
///
/// On `KT_EPROFILE`, if `error` is not NULL, `*error` is set to a one-line
/// message to free with `kt_string_free`: the file, the line and what was
/// expected there, or the fingerprint field that differs and both values,
/// e.g. `host.profile: line 7: made on another machine: clocksource is
/// "hpet" in the profile, "tsc" here (load it anyway with ignore_machine)`.
/// On every other return `*error` is set to NULL.
///
/// Returns `KT_OK`; `KT_ENULL` if `path` or `out` is NULL; `KT_EINVAL` for
/// an unknown flag or a path that is not UTF-8; `KT_EPROFILE` for a file
/// that cannot be read, is not a valid profile, or was made on another
/// machine (`*out` is then NULL).
///
/// ```c
/// kt_profile *p = NULL; char *why = NULL;
/// if (kt_profile_load("host.profile", 0, &p, &why) != KT_OK) {
///     fprintf(stderr, "%s\n", why); kt_string_free(why);
/// }
/// ```
///
/// # Safety
/// `path` is NULL or NUL-terminated; `out` and `error` are NULL or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_profile_load(
    path: *const c_char,
    flags: u32,
    out: *mut *mut kt_profile,
    error: *mut *mut c_char,
) -> c_int {
    if !error.is_null() {
        // SAFETY: non-NULL and valid by the caller's contract.
        unsafe { error.write(ptr::null_mut()) };
    }
    guard(|| {
        require(out)?;
        // SAFETY: checked non-NULL; valid by the caller's contract.
        unsafe { out.write(ptr::null_mut()) };
        // SAFETY: the caller's contract.
        let path = unsafe { path_arg(path) }?;
        if flags & !KT_PROFILE_IGNORE_MACHINE != 0 {
            return Err(KT_EINVAL);
        }
        let loaded = if flags & KT_PROFILE_IGNORE_MACHINE != 0 {
            Profile::load_ignoring_machine(path)
        } else {
            Profile::load(path)
        };
        match loaded {
            Ok(inner) => {
                // SAFETY: as above.
                unsafe { give(out, kt_profile { inner }) };
                Ok(())
            }
            Err(e) => {
                // SAFETY: the caller's contract.
                unsafe { tell(error, &e.to_string()) };
                Err(KT_EPROFILE)
            }
        }
    })
}

/// Creates a sleeper as `kt_sleeper_create` does (`mode`, `flags`), started
/// from `profile`: its model answers at once as one that made the profile's
/// OS waits, then learns and forgets as any sleeper's. The profile is copied;
/// free it whenever you like.
///
/// Returns `KT_OK`; `KT_ENULL` if `profile` or `out` is NULL; `KT_EINVAL`
/// for an unknown mode or flag, or `KT_SLEEPER_DEFAULT_PROFILE` (`*out` is
/// then NULL).
///
/// # Safety
/// `profile` is NULL or a live profile; `out` is NULL or valid for writing a
/// pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_create_with_profile(
    mode: c_int,
    flags: u32,
    profile: *const kt_profile,
    out: *mut *mut kt_sleeper,
) -> c_int {
    guard(|| {
        require(out)?;
        // SAFETY: checked non-NULL; valid by the caller's contract.
        unsafe { out.write(ptr::null_mut()) };
        // SAFETY: the caller's contract.
        let profile = unsafe { handle_ref(profile) }?;
        if flags & KT_SLEEPER_DEFAULT_PROFILE != 0 {
            return Err(KT_EINVAL);
        }
        let inner = builder_from_c(mode, flags)?.profile(&profile.inner).build();
        // SAFETY: as above.
        unsafe { give(out, kt_sleeper { inner }) };
        Ok(())
    })
}

/// Sets the profile that keeptime's own sleepers start from, or clears it
/// with NULL (`spec/estimator.md`, *Default sleepers*). Those are the
/// per-thread sleepers behind `kt_sleep_ns`, `kt_sleep_until_ns` and the
/// other `kt_sleep*` functions, and the async waiter's: each one, at its
/// next sleep, is replaced by a new sleeper started from `profile` (as
/// `kt_sleeper_create_with_profile` starts one), dropping what it had
/// learned and its stats; NULL replaces each with a fresh one. A
/// `kt_sleeper` you created is never touched. The profile is copied; free it
/// whenever you like. Set it once, at start-up, before the first sleep.
///
/// Without a line of code: in a program that never calls this, the
/// environment variable `KEEPTIME_PROFILE` (a path, if set and not empty)
/// names the profile, read once, when the first of those sleepers is made
/// (`KEEPTIME_PROFILE=host.profile ./app`). A file that cannot be loaded
/// fails nothing: one line on stderr says why, and they start fresh. A call
/// made before then wins: the variable is then never read.
///
/// ```c
/// kt_profile *p = NULL;
/// if (kt_profile_load("host.profile", 0, &p, NULL) == KT_OK) {
///     kt_set_default_profile(p); // kt_sleep_ns now plans on its wake-ups
///     kt_profile_free(p);
/// }
/// ```
///
/// Returns `KT_OK`.
///
/// # Safety
/// `profile` is NULL or a live profile.
#[no_mangle]
pub unsafe extern "C" fn kt_set_default_profile(profile: *const kt_profile) -> c_int {
    guard(|| {
        // SAFETY: NULL or live by the caller's contract.
        let profile = unsafe { profile.as_ref() };
        keeptime_core::set_default_profile(profile.map(|p| &p.inner));
        Ok(())
    })
}

/// Writes a host profile of what `sleeper` has learned, on this machine, to
/// `path` (replacing the file): a later run starts from it with
/// `kt_profile_load` and `kt_sleeper_create_with_profile`.
///
/// Returns `KT_OK`; `KT_ENULL` if `sleeper` or `path` is NULL; `KT_EINVAL`
/// for a path that is not UTF-8; `KT_EPROFILE` if the file cannot be
/// written (then `*error`, if `error` is not NULL, holds the message, to
/// free with `kt_string_free`; it is NULL on every other return).
///
/// # Safety
/// `sleeper` is NULL or a live sleeper not in use by another thread; `path`
/// is NULL or NUL-terminated; `error` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_sleeper_write_profile(
    sleeper: *const kt_sleeper,
    path: *const c_char,
    error: *mut *mut c_char,
) -> c_int {
    let profile = || {
        // SAFETY: the caller's contract.
        Ok(unsafe { handle_ref(sleeper) }?.inner.profile())
    };
    // SAFETY: the caller's contract.
    unsafe { write_profile(path, error, profile) }
}

/// Writes the profile `profile()` makes to `path`: the body of the
/// `kt_*_write_profile` functions (`*error` cleared first, set on
/// `KT_EPROFILE`).
///
/// # Safety
/// `path` is NULL or NUL-terminated; `error` is NULL or valid for writing a
/// pointer.
unsafe fn write_profile(
    path: *const c_char,
    error: *mut *mut c_char,
    profile: impl FnOnce() -> Result<keeptime_core::profile::Profile, Status>,
) -> c_int {
    if !error.is_null() {
        // SAFETY: non-NULL and valid by the caller's contract.
        unsafe { error.write(ptr::null_mut()) };
    }
    guard(|| {
        let profile = profile()?;
        // SAFETY: the caller's contract.
        let path = unsafe { path_arg(path) }?;
        profile.write(path).map_err(|e| {
            // SAFETY: the caller's contract.
            unsafe { tell(error, &e.to_string()) };
            KT_EPROFILE
        })
    })
}

/// Writes a host profile of what the calling thread's sleeper behind
/// `kt_sleep_ns`, `kt_sleep_until_ns` and the other `kt_sleep*` functions
/// has learned, on this machine, to `path` (replacing the file): at the end
/// of a run, for the next to start from (`KEEPTIME_PROFILE=path`, or
/// `kt_profile_load` and `kt_set_default_profile`). It holds the wake-ups of
/// the program's own sleeps, in the order it made its OS waits, which a
/// profile recorded by `keeptime trace --profile` (each length in a block
/// of its own) does not. A thread that has not slept writes its sleeper as
/// it would start (the default profile in force, else nothing learned); the
/// call does not reset it.
///
/// Returns `KT_OK`; `KT_ENULL` if `path` is NULL; `KT_EINVAL` for a path
/// that is not UTF-8; `KT_EPROFILE` if the file cannot be written (then
/// `*error`, if `error` is not NULL, holds the message, to free with
/// `kt_string_free`; it is NULL on every other return).
///
/// # Safety
/// `path` is NULL or NUL-terminated; `error` is NULL or valid for writing a
/// pointer.
#[no_mangle]
pub unsafe extern "C" fn kt_thread_write_profile(
    path: *const c_char,
    error: *mut *mut c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { write_profile(path, error, || Ok(keeptime_core::thread_profile())) }
}

/// Frees a profile from `kt_profile_load`; NULL is a no-op.
///
/// # Safety
/// `profile` is NULL or a profile not freed before.
#[no_mangle]
pub unsafe extern "C" fn kt_profile_free(profile: *mut kt_profile) {
    // SAFETY: the caller's contract.
    unsafe { free(profile) };
}
