//! `keeptime.Profile`: start a sleeper from what an earlier run on this
//! machine learned (`spec/estimator.md`, *Profile*).

use keeptime::profile::{Fingerprint, Profile, ProfileError};
use pyo3::exceptions::{
    PyFileNotFoundError, PyOSError, PyPermissionError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};

pyo3::create_exception!(
    keeptime,
    PyProfileError,
    PyValueError,
    "A host profile that is not valid (``code`` is the spec's error code, ``line`` the 1-based line) or was made on another machine (``code == \"machine_mismatch\"``, ``key`` the differing field)."
);

/// The Python error for a profile the core refused: `keeptime.ProfileError`
/// with `code`, `line`, `path` and, for another machine, `key`.
fn profile_error(py: Python<'_>, path: &Path, e: &ProfileError) -> PyErr {
    let err = PyProfileError::new_err(format!("{}: {e}", path.display()));
    let value = err.value(py);
    let set = |name: &str, v: Bound<'_, PyAny>| value.setattr(name, v);
    let key = e
        .mismatch()
        .map(|(k, _, _)| k.to_string().into_pyobject(py).map(Bound::into_any))
        .transpose();
    let done = (|| -> PyResult<()> {
        set("code", e.code().into_pyobject(py)?.into_any())?;
        set("line", e.line().into_pyobject(py)?.into_any())?;
        set(
            "path",
            path.display().to_string().into_pyobject(py)?.into_any(),
        )?;
        set("key", key?.unwrap_or_else(|| py.None().into_bound(py)))?;
        Ok(())
    })();
    match done {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// Reads, parses and (unless `ignore_machine`) checks a profile file.
pub(crate) fn load(py: Python<'_>, path: &Path, ignore_machine: bool) -> PyResult<Profile> {
    let bytes = std::fs::read(path).map_err(|e| {
        let msg = format!("{}: cannot read the profile: {e}", path.display());
        match e.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
            _ => PyOSError::new_err(msg),
        }
    })?;
    let profile = Profile::parse_bytes(&bytes).map_err(|e| profile_error(py, path, &e))?;
    if !ignore_machine {
        profile
            .check_machine(&Fingerprint::this_machine())
            .map_err(|e| profile_error(py, path, &e))?;
    }
    Ok(profile)
}

/// A host profile: this machine's fingerprint and, per OS-wait length, the
/// last wake-ups and the cost of an OS wait that an earlier run learned.
///
/// A fresh :class:`Sleeper` needs hundreds of sleeps before its margins
/// settle (until then one slow wake-up is its margin, and it spins for it);
/// ``Sleeper(profile=...)`` starts from a profile instead. Write one with
/// ``keeptime trace --profile FILE`` (the ``keeptime`` command) or
/// :meth:`Sleeper.profile` and :meth:`write`.
///
/// >>> s = keeptime.Sleeper()
/// >>> for _ in range(20):
/// ...     s.sleep(0.0003)
/// >>> p = s.profile()
/// >>> sum(p.samples) > 0
/// True
/// >>> fresh = keeptime.Sleeper(profile=p)    # or profile="host.profile"
#[pyclass(name = "Profile", module = "keeptime", frozen)]
pub struct PyProfile {
    pub(crate) inner: Profile,
}

#[pymethods]
impl PyProfile {
    /// Read the profile at ``path`` (a str or path-like). A profile made on
    /// another machine is refused unless ``ignore_machine``.
    ///
    /// Raises :class:`ProfileError` (a ``ValueError``) for a file that is
    /// not a valid profile (the message names the file, the line and what
    /// was expected there; ``code`` and ``line`` say it too) or that was
    /// made on another machine (``code == "machine_mismatch"``, ``key`` the
    /// first differing field; the message gives both values), and
    /// ``OSError`` (``FileNotFoundError``, ...) for a file that cannot be read.
    #[staticmethod]
    #[pyo3(signature = (path, *, ignore_machine = false))]
    fn load(py: Python<'_>, path: PathBuf, ignore_machine: bool) -> PyResult<Self> {
        load(py, &path, ignore_machine).map(|inner| PyProfile { inner })
    }

    /// Write the profile to ``path`` (replacing the file); ``OSError`` if
    /// it cannot be written.
    fn write(&self, path: PathBuf) -> PyResult<()> {
        std::fs::write(&path, self.inner.to_text()).map_err(|e| {
            PyOSError::new_err(format!("{}: cannot write the profile: {e}", path.display()))
        })
    }

    /// The machine it was made on: a dict of the fingerprint's fields
    /// (``cpu_vendor``, ``cpu_model``, ``cpus_online``, ``virtualization``,
    /// ``cpuidle_driver``, ``clocksource``, ``kernel_release``; ``"-"`` for
    /// unknown).
    #[getter]
    fn machine<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.inner.machine().fields() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// Remembered wake-ups per OS-wait length bucket (12 ints).
    #[getter]
    fn samples(&self) -> Vec<usize> {
        self.inner.samples().to_vec()
    }

    /// The profile's text, as :meth:`write` writes it.
    fn text(&self) -> String {
        self.inner.to_text()
    }

    fn __repr__(&self) -> String {
        let n = self.inner.samples();
        format!(
            "Profile({} wake-ups in {} buckets)",
            n.iter().sum::<usize>(),
            n.iter().filter(|&&k| k > 0).count()
        )
    }
}

/// `f` of the profile a ``profile`` argument names: a :class:`Profile`, or
/// the path of one, read as :meth:`Profile.load` reads it (refused if made
/// on another machine); ``TypeError`` for anything else.
pub(crate) fn with_profile_arg<T>(
    py: Python<'_>,
    arg: &Bound<'_, PyAny>,
    f: impl FnOnce(&Profile) -> T,
) -> PyResult<T> {
    if let Ok(p) = arg.cast::<PyProfile>() {
        return Ok(f(&p.get().inner));
    }
    let path: PathBuf = arg.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "profile must be a keeptime.Profile or a path (str or os.PathLike), not {}",
            arg.get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string())
        ))
    })?;
    Ok(f(&load(py, &path, false)?))
}

/// Set the profile that keeptime's own sleepers start from: the per-thread
/// sleepers behind :func:`sleep`, :func:`sleep_ns` and
/// :func:`sleep_until_ns`, and the waiter behind
/// :func:`keeptime.asyncio.sleep`. ``profile`` is a :class:`Profile`, the
/// path of one (read as :meth:`Profile.load` reads it: a profile made on
/// another machine is a :class:`ProfileError`), or ``None`` to clear it.
///
/// Each of those sleepers, at its next sleep, is replaced by a new one
/// started from the profile, as ``Sleeper(profile=...)`` starts one: no
/// learning period of hundreds of sleeps in which one slow wake-up is the
/// margin. What it had learned is dropped; ``None`` replaces each with a
/// fresh one. A :class:`Sleeper` you made is never touched; a
/// :class:`Ticker` made after the call starts from the profile too, and
/// keeps its sleeper. Set it once, at start-up: each change throws away
/// what they learned since.
///
/// Without a line of code: in a program that never calls this, the
/// environment variable ``KEEPTIME_PROFILE`` (a path, if set and not empty)
/// names the profile, read once, at the first sleep (``KEEPTIME_PROFILE=
/// host.profile python app.py``). A file that cannot be loaded fails
/// nothing: one line on stderr says why, and the sleepers start fresh. A
/// call made before that first sleep wins: the variable is then never read.
///
/// >>> s = keeptime.Sleeper()
/// >>> s.sleep(300e-6)
/// >>> keeptime.set_default_profile(s.profile())   # or "host.profile"
/// >>> keeptime.sleep(300e-6)                      # planned on its wake-ups
/// >>> keeptime.set_default_profile(None)
#[pyfunction]
pub fn set_default_profile(py: Python<'_>, profile: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match profile {
        None => keeptime::set_default_profile(None),
        Some(p) => with_profile_arg(py, p, |p| keeptime::set_default_profile(Some(p)))?,
    }
    Ok(())
}

/// What the sleeper behind :func:`sleep` and the other free functions has
/// learned on this thread, as a :class:`Profile` of this machine (what
/// ``Sleeper.profile()`` gives for a sleeper of your own). Write it at the
/// end of a run and start the next from it (``KEEPTIME_PROFILE=app.profile``
/// or :func:`set_default_profile`): the wake-ups of the program's own
/// sleeps, in the order it makes its OS waits, which a profile recorded by
/// ``keeptime trace --profile`` (each length in a block of its own) does not
/// have. A thread that has not slept gives its sleeper as it would start
/// (the default profile in force, else nothing learned); the call does not
/// reset it.
///
/// >>> keeptime.sleep(300e-6)
/// >>> p = keeptime.thread_profile()                # p.write("app.profile")
/// >>> sum(p.samples) > 0
/// True
#[pyfunction]
pub fn thread_profile(py: Python<'_>) -> PyProfile {
    PyProfile {
        inner: py.detach(keeptime::thread_profile),
    }
}
