//! The opt-in idle-latency hint of `keeptime.Sleeper` and `keeptime.Ticker`
//! (spec/idle-hint.md): the `idle_hint_us` argument, the request each object
//! holds, the once-per-process `RuntimeWarning` on refusal, and
//! `keeptime.IdleHintStatus`.

use keeptime::pmqos::{self, HintError};
use keeptime::{IdleHint, IdleHintHolder, IdleHintStatus};
use pyo3::exceptions::{PyRuntimeWarning, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBool;
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

/// `idle_hint_us`: `None`, or an int from 0 to 2**31 - 1 (whole µs).
/// `TypeError` for anything but an int (a bool or a float included),
/// `ValueError` outside the range: never clamped.
pub fn idle_hint_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<IdleHint>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    let type_error = || -> PyResult<PyErr> {
        Ok(PyTypeError::new_err(format!(
            "idle_hint_us must be an int (whole µs) or None, not '{}'",
            obj.get_type().name()?
        )))
    };
    if obj.is_instance_of::<PyBool>() {
        return Err(type_error()?);
    }
    let value_error = || -> PyResult<PyErr> {
        Ok(PyValueError::new_err(format!(
            "idle_hint_us must be from 0 to 2147483647 µs (the kernel's range), not {}",
            obj.repr()?
        )))
    };
    match obj.extract::<i64>() {
        Ok(us) => match u32::try_from(us).ok().map(IdleHint::from_micros) {
            Some(Ok(hint)) => Ok(Some(hint)),
            _ => Err(value_error()?),
        },
        // An int past i64 raises OverflowError: a number out of range.
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) => {
            Err(value_error()?)
        }
        Err(_) => Err(type_error()?),
    }
}

/// The Python warning of a refused hint (the device and the reason).
fn warning_text(error: &HintError) -> String {
    format!("keeptime: idle-latency hint refused: {error}; sleeping without it")
}

/// The request one Python object holds. Its own lock, so it can be read and
/// changed while the object's sleeper waits in another thread.
#[derive(Default)]
pub struct HintSlot {
    holder: Mutex<IdleHintHolder>,
}

impl HintSlot {
    /// Requests `hint` (nothing for `None`); on a refusal, the process's one
    /// `RuntimeWarning` if no refusal was warned about before (shared with
    /// the core's stderr line, so a process warns once in total).
    pub fn request(py: Python<'_>, hint: Option<IdleHint>) -> PyResult<Self> {
        let slot = HintSlot::default();
        slot.set(py, hint)?;
        Ok(slot)
    }

    /// Replaces the request: the new one is made before the old is released.
    pub fn set(&self, py: Python<'_>, hint: Option<IdleHint>) -> PyResult<()> {
        let holder = IdleHintHolder::request(hint);
        let refusal = holder.refusal().cloned();
        let old = std::mem::replace(&mut *self.lock(), holder);
        drop(old);
        if let Some(error) = refusal {
            if pmqos::claim_refusal_warning() {
                let text = CString::new(warning_text(&error))
                    .unwrap_or_else(|_| c"keeptime: idle-latency hint refused".into());
                PyErr::warn(py, &py.get_type::<PyRuntimeWarning>(), &text, 1)?;
            }
        }
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, IdleHintHolder> {
        self.holder.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value asked for, µs (`None` when not asked).
    pub fn asked_us(&self) -> Option<u32> {
        match self.lock().status() {
            IdleHintStatus::NotAsked => None,
            IdleHintStatus::Held { asked_us, .. } | IdleHintStatus::Refused { asked_us, .. } => {
                Some(asked_us)
            }
        }
    }

    /// What is held now.
    pub fn status(&self) -> PyIdleHintStatus {
        self.lock().status().into()
    }
}

/// Whether a :class:`Sleeper`'s or :class:`Ticker`'s idle-latency hint is in
/// force (``idle_hint_status``): ``state`` is ``"not asked"``, ``"held"``
/// (``in_force_us`` is the value in force for the process, the strictest of
/// its live requests) or ``"refused"`` (``reason`` names the device and why).
/// Immutable, compares by value.
///
/// >>> keeptime.Sleeper().idle_hint_status
/// keeptime.IdleHintStatus(state='not asked', asked_us=None, in_force_us=None, reason=None)
#[pyclass(name = "IdleHintStatus", module = "keeptime", frozen, eq)]
#[derive(Clone, PartialEq, Eq)]
pub struct PyIdleHintStatus {
    /// ``"not asked"``, ``"held"`` or ``"refused"``.
    #[pyo3(get)]
    state: &'static str,
    /// The value asked for, µs (``None`` when not asked).
    #[pyo3(get)]
    asked_us: Option<u32>,
    /// The value in force for the process while held, µs (``<= asked_us``);
    /// ``None`` otherwise.
    #[pyo3(get)]
    in_force_us: Option<u32>,
    /// Why it was refused: the device and the reason; ``None`` otherwise.
    #[pyo3(get)]
    reason: Option<String>,
}

impl From<IdleHintStatus> for PyIdleHintStatus {
    fn from(s: IdleHintStatus) -> Self {
        match s {
            IdleHintStatus::NotAsked => PyIdleHintStatus {
                state: "not asked",
                asked_us: None,
                in_force_us: None,
                reason: None,
            },
            IdleHintStatus::Held {
                asked_us,
                in_force_us,
            } => PyIdleHintStatus {
                state: "held",
                asked_us: Some(asked_us),
                in_force_us: Some(in_force_us),
                reason: None,
            },
            IdleHintStatus::Refused { asked_us, error } => PyIdleHintStatus {
                state: "refused",
                asked_us: Some(asked_us),
                in_force_us: None,
                reason: Some(error.to_string()),
            },
        }
    }
}

fn repr_opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "None".to_owned(), T::to_string)
}

#[pymethods]
impl PyIdleHintStatus {
    /// Whether the request is held (``state == "held"``).
    #[getter]
    fn held(&self) -> bool {
        self.state == "held"
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let reason = match &self.reason {
            Some(r) => r.into_pyobject(py)?.repr()?.to_string(),
            None => "None".to_owned(),
        };
        Ok(format!(
            "keeptime.IdleHintStatus(state='{}', asked_us={}, in_force_us={}, reason={})",
            self.state,
            repr_opt(&self.asked_us),
            repr_opt(&self.in_force_us),
            reason
        ))
    }
}

/// For tests only: every later idle-hint request of this process goes to the
/// file at ``path`` instead of ``/dev/cpu_dma_latency`` (``None``: back to the
/// device), so a test sees a refusal (a path that does not exist) or reads
/// back the value written (a regular file) without touching the real device.
/// Live requests keep the device they opened.
#[pyfunction]
#[pyo3(signature = (path))]
pub fn _set_idle_hint_device(path: Option<PathBuf>) {
    pmqos::set_process_device(path);
}
