//! The idle-latency hint: a process-wide, reference-counted PM QoS request on
//! `/dev/cpu_dma_latency` (Linux).
//!
//! While a process holds `/dev/cpu_dma_latency` open with a value written to
//! it, the kernel keeps every CPU out of idle states whose exit latency
//! exceeds that many microseconds; OS waits then wake sooner (cyclictest holds
//! it at 0 for the whole run). The kernel drops the request when the file is
//! closed, so the request lasts exactly as long as the open file.
//!
//! [`IdleLatencyHint::request`] returns a guard. The first live guard opens the
//! device; every guard adds its value; the **strictest (lowest) value among
//! live guards** is the one written; when the last guard is dropped the file is
//! closed and the request ends. The value is written as a native-endian
//! binary `s32`, as cyclictest writes it.
//!
//! **Range.** The kernel takes an `s32` and refuses negative values, so the
//! accepted values are `0..=`[`MAX_LATENCY_US`] (`i32::MAX`); larger values are
//! [`HintError::OutOfRange`]. The kernel's own default, "no constraint", is
//! [`KERNEL_DEFAULT_US`] (2 000 s); values from there up constrain nothing.
//!
//! **Price.** With a low value, idle CPUs poll instead of sleeping: more power,
//! and on a virtual machine the host sees the vCPU as busy.
//!
//! [`query`] reads the state without changing anything (for `keeptime clocks`).
//!
//! ```
//! use keeptime::pmqos::IdleLatencyHint;
//!
//! match IdleLatencyHint::request(0) {
//!     // Held until `hint` is dropped; other guards in the process share it.
//!     Ok(hint) => assert_eq!(hint.in_force_us(), 0),
//!     // Not root, or no such device: say so once and go on without it.
//!     Err(e) => eprintln!("warning: {e}"),
//! }
//! let status = keeptime::pmqos::query();
//! let _ = (status.driver, status.in_force_us, status.may_request);
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The PM QoS CPU latency device.
pub const DEVICE: &str = "/dev/cpu_dma_latency";
/// The largest value accepted: the kernel reads an `s32` (µs).
pub const MAX_LATENCY_US: u32 = i32::MAX as u32;
/// The kernel's default CPU latency constraint (`PM_QOS_CPU_LATENCY_DEFAULT_VALUE`,
/// 2 000 s in µs): what reading the device returns when nobody constrains it.
pub const KERNEL_DEFAULT_US: i32 = 2_000_000_000;

/// Why a hint could not be held. `Display` is one line naming what was refused and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HintError {
    /// The value does not fit the kernel's `s32`.
    OutOfRange {
        /// The requested value, µs.
        value_us: u32,
    },
    /// The device does not exist (kernel without it, container, non-Linux).
    NoDevice {
        /// The device path.
        path: PathBuf,
    },
    /// Opening the device for writing was refused (it is usually root-only).
    NotPermitted {
        /// The device path.
        path: PathBuf,
    },
    /// Any other failure to open or write the device.
    Io {
        /// The device path.
        path: PathBuf,
        /// What failed: `open` or `write`.
        op: &'static str,
        /// The OS's message.
        message: String,
    },
}

impl fmt::Display for HintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HintError::OutOfRange { value_us } => write!(
                f,
                "idle latency {value_us} µs is out of range: the kernel accepts 0 to {MAX_LATENCY_US} µs"
            ),
            HintError::NoDevice { path } => write!(
                f,
                "{} not held: no such device (no PM QoS CPU latency interface here)",
                path.display()
            ),
            HintError::NotPermitted { path } => write!(
                f,
                "{} not held: permission denied (writing it needs root or write access to the device)",
                path.display()
            ),
            HintError::Io { path, op, message } => {
                write!(f, "{} not held: {op} failed: {message}", path.display())
            }
        }
    }
}

impl std::error::Error for HintError {}

impl HintError {
    fn from_io(path: &Path, op: &'static str, e: &io::Error) -> Self {
        let path = path.to_path_buf();
        match e.kind() {
            io::ErrorKind::NotFound => HintError::NoDevice { path },
            io::ErrorKind::PermissionDenied => HintError::NotPermitted { path },
            _ => match e.raw_os_error() {
                Some(libc::ENODEV) | Some(libc::ENXIO) => HintError::NoDevice { path },
                Some(libc::EPERM) | Some(libc::EACCES) => HintError::NotPermitted { path },
                _ => HintError::Io {
                    path,
                    op,
                    message: e.to_string(),
                },
            },
        }
    }
}

/// An open request: takes the value in force. Dropping it ends the request.
pub trait Request: Send {
    /// Makes `value_us` the request's value.
    fn write_value(&mut self, value_us: i32) -> Result<(), HintError>;
}

/// Opens requests: the real device, or a fake in tests.
pub trait Device: Send + Sync {
    /// Opens one request.
    fn open(&self) -> Result<Box<dyn Request>, HintError>;
}

/// A PM QoS device file at a path (normally [`DEVICE`]).
#[derive(Clone, Debug)]
pub struct DeviceFile {
    path: PathBuf,
}

impl DeviceFile {
    /// The device at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        DeviceFile { path: path.into() }
    }
}

struct OpenFile {
    file: std::fs::File,
    path: PathBuf,
}

impl Request for OpenFile {
    fn write_value(&mut self, value_us: i32) -> Result<(), HintError> {
        use std::io::Write;
        // One write of the binary s32: the device takes a 4-byte write as the value.
        self.file
            .write_all(&value_us.to_ne_bytes())
            .map_err(|e| HintError::from_io(&self.path, "write", &e))
    }
}

impl Device for DeviceFile {
    fn open(&self) -> Result<Box<dyn Request>, HintError> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&self.path)
            .map_err(|e| HintError::from_io(&self.path, "open", &e))?;
        Ok(Box::new(OpenFile {
            file,
            path: self.path.clone(),
        }))
    }
}

#[derive(Default)]
struct State {
    open: Option<Box<dyn Request>>,
    /// Live guards and their values.
    values: BTreeMap<u64, u32>,
    next_id: u64,
    written: Option<u32>,
}

impl State {
    fn strictest(&self) -> Option<u32> {
        self.values.values().copied().min()
    }
}

/// The reference-counted holder of one device. The process uses one, behind
/// [`IdleLatencyHint::request`]; tests make their own with a fake [`Device`].
pub struct Registry {
    device: Box<dyn Device>,
    state: Mutex<State>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("in_force_us", &self.in_force_us())
            .finish()
    }
}

impl Registry {
    /// A holder of `device`, with no request open.
    pub fn new(device: impl Device + 'static) -> Arc<Self> {
        Arc::new(Registry {
            device: Box::new(device),
            state: Mutex::new(State::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a request for at most `max_latency_us`: opens the device if no
    /// guard is live, and writes the value if it is stricter than the one in force.
    ///
    /// # Errors
    /// [`HintError::OutOfRange`] above [`MAX_LATENCY_US`]; the device's open
    /// or write error otherwise. On error nothing changes.
    pub fn request(self: &Arc<Self>, max_latency_us: u32) -> Result<IdleLatencyHint, HintError> {
        let value = i32::try_from(max_latency_us).map_err(|_| HintError::OutOfRange {
            value_us: max_latency_us,
        })?;
        let mut st = self.lock();
        let opened_now = st.open.is_none();
        if opened_now {
            st.open = Some(self.device.open()?);
        }
        if st.written.map_or(true, |w| max_latency_us < w) {
            let written = st
                .open
                .as_mut()
                .map_or(Ok(()), |req| req.write_value(value));
            if let Err(e) = written {
                if opened_now {
                    st.open = None;
                }
                return Err(e);
            }
            st.written = Some(max_latency_us);
        }
        let id = st.next_id;
        st.next_id += 1;
        st.values.insert(id, max_latency_us);
        Ok(IdleLatencyHint {
            registry: Arc::clone(self),
            id,
            value_us: max_latency_us,
        })
    }

    /// The value this holder has in force (the strictest live guard's), or
    /// `None` when no guard is live.
    pub fn in_force_us(&self) -> Option<u32> {
        self.lock().written
    }

    /// Live guards.
    pub fn holders(&self) -> usize {
        self.lock().values.len()
    }

    fn release(&self, id: u64) {
        let mut st = self.lock();
        st.values.remove(&id);
        match st.strictest() {
            None => {
                // Closing the file ends the kernel's request.
                st.open = None;
                st.written = None;
            }
            Some(v) if Some(v) != st.written => {
                let ok = st
                    .open
                    .as_mut()
                    .is_some_and(|req| req.write_value(v as i32).is_ok());
                // A failed relaxation leaves the stricter value in force: still safe.
                if ok {
                    st.written = Some(v);
                }
            }
            Some(_) => {}
        }
    }
}

/// The process's holder: of [`DEVICE`], or of the path given to [`set_process_device`].
static PROCESS: Mutex<Option<Arc<Registry>>> = Mutex::new(None);

#[cfg(test)]
thread_local! {
    /// A test's own holder for requests made on its thread (see `with_test_registry`).
    static TEST_REGISTRY: std::cell::RefCell<Option<Arc<Registry>>> =
        const { std::cell::RefCell::new(None) };
}

/// The holder every request of the process goes through: [`IdleLatencyHint::request`],
/// and every sleeper or ticker built with an [`IdleHint`](crate::IdleHint).
pub(crate) fn global() -> Arc<Registry> {
    #[cfg(test)]
    if let Some(reg) = TEST_REGISTRY.with(|t| t.borrow().clone()) {
        return reg;
    }
    let mut process = PROCESS.lock().unwrap_or_else(|e| e.into_inner());
    Arc::clone(process.get_or_insert_with(|| Registry::new(DeviceFile::new(DEVICE))))
}

/// Runs `f` with this thread's requests going to `registry` (a fake [`Device`]).
#[cfg(test)]
pub(crate) fn with_test_registry<R>(registry: &Arc<Registry>, f: impl FnOnce() -> R) -> R {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            TEST_REGISTRY.with(|t| *t.borrow_mut() = None);
        }
    }
    TEST_REGISTRY.with(|t| *t.borrow_mut() = Some(Arc::clone(registry)));
    let _reset = Reset;
    f()
}

/// **For tests of the runtimes built on the core** (the Python and C
/// bindings): makes every later request of this process go to the device
/// file at `path` instead of [`DEVICE`] (`None`: back to [`DEVICE`]), so a
/// test can see a refusal (a path that does not exist) or read back the value
/// written (a regular file) without touching the real device. Live requests
/// keep the device they opened. A program has no reason to call it.
pub fn set_process_device(path: Option<PathBuf>) {
    let device = DeviceFile::new(path.unwrap_or_else(|| PathBuf::from(DEVICE)));
    *PROCESS.lock().unwrap_or_else(|e| e.into_inner()) = Some(Registry::new(device));
}

/// The one-line stderr warning of a refused hint:
/// `keeptime: warning: <reason>; sleeping without the idle-latency hint`.
pub fn refusal_warning(error: &HintError) -> String {
    format!("keeptime: warning: {error}; sleeping without the idle-latency hint")
}

/// Whether the caller is the first in the process to report a refused hint:
/// `true` exactly once per process (the first call), `false` ever after.
///
/// spec/idle-hint.md: a refusal is said **once per process**. Every runtime
/// on the core (the sleeper's own stderr line, Python's `warnings.warn`, …)
/// asks this before warning, so the process warns once in total.
pub fn claim_refusal_warning() -> bool {
    static WARNED: AtomicBool = AtomicBool::new(false);
    !WARNED.swap(true, Ordering::Relaxed)
}

/// A live idle-latency request. The strictest live request of the process is
/// in force; dropping the last one closes the device and ends it.
#[derive(Debug)]
pub struct IdleLatencyHint {
    registry: Arc<Registry>,
    id: u64,
    value_us: u32,
}

impl IdleLatencyHint {
    /// Asks the kernel to keep CPU wake-up latency at most `max_latency_us`
    /// while the returned guard lives (process-wide, shared with every other
    /// guard; the lowest value wins). `0` is cyclictest's default.
    ///
    /// # Errors
    /// Out of range (> [`MAX_LATENCY_US`]), no device, or not permitted; the
    /// message says which. Nothing is held then.
    pub fn request(max_latency_us: u32) -> Result<IdleLatencyHint, HintError> {
        global().request(max_latency_us)
    }

    /// The value this guard asked for.
    pub fn value_us(&self) -> u32 {
        self.value_us
    }

    /// The value in force for the process (≤ [`value_us`](Self::value_us)).
    pub fn in_force_us(&self) -> u32 {
        self.registry.in_force_us().unwrap_or(self.value_us)
    }
}

impl Drop for IdleLatencyHint {
    fn drop(&mut self) {
        self.registry.release(self.id);
    }
}

/// The machine's idle-latency state, read without changing anything.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct IdleLatencyStatus {
    /// The cpuidle driver (`none`, `haltpoll`, `intel_idle`, `acpi_idle`, …).
    pub driver: Option<String>,
    /// The cpuidle governor (`menu`, `teo`, `haltpoll`, …).
    pub governor: Option<String>,
    /// The CPU latency constraint in force system-wide, µs, as the device
    /// reads back ([`KERNEL_DEFAULT_US`] = unconstrained); `None` if unreadable.
    pub in_force_us: Option<i32>,
    /// Why `in_force_us` could not be read.
    pub read_error: Option<String>,
    /// Whether this process may open the device for writing (hold a request).
    pub may_request: bool,
    /// Why not, when it may not (which permission or what is missing).
    pub request_refused: Option<String>,
}

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// Reads the constraint in force from a PM QoS device (a binary `s32`).
/// Opening it read-only adds no constraint.
pub fn read_in_force(path: &Path) -> Result<i32, HintError> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| HintError::from_io(path, "open", &e))?;
    let mut buf = [0u8; 4];
    f.read_exact(&mut buf).map_err(|e| HintError::Io {
        path: path.to_path_buf(),
        op: "read",
        message: e.to_string(),
    })?;
    Ok(i32::from_ne_bytes(buf))
}

/// Whether this process may open `path` for writing, checked with the
/// effective ids (`faccessat(…, W_OK, AT_EACCESS)`), without opening it.
pub fn may_write(path: &Path) -> Result<(), HintError> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| HintError::Io {
            path: path.to_path_buf(),
            op: "access",
            message: "path contains a NUL byte".into(),
        })?;
        // SAFETY: `c` is a valid NUL-terminated path; faccessat only reads it.
        let rc =
            unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) };
        if rc == 0 {
            Ok(())
        } else {
            Err(HintError::from_io(
                path,
                "access",
                &io::Error::last_os_error(),
            ))
        }
    }
    #[cfg(not(unix))]
    {
        Err(HintError::NoDevice {
            path: path.to_path_buf(),
        })
    }
}

/// The idle-latency state under `root` (normally `/`): cpuidle driver and
/// governor, the constraint in force and whether this process may change it.
pub fn query_at(root: &Path) -> IdleLatencyStatus {
    let cpuidle = root.join("sys/devices/system/cpu/cpuidle");
    let device = root.join(DEVICE.trim_start_matches('/'));
    let (in_force_us, read_error) = match read_in_force(&device) {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let (may_request, request_refused) = match may_write(&device) {
        Ok(()) => (true, None),
        Err(e) => (false, Some(e.to_string())),
    };
    IdleLatencyStatus {
        driver: read_trimmed(&cpuidle.join("current_driver")),
        governor: read_trimmed(&cpuidle.join("current_governor")),
        in_force_us,
        read_error,
        may_request,
        request_refused,
    }
}

/// [`query_at`] the real root.
pub fn query() -> IdleLatencyStatus {
    query_at(Path::new("/"))
}

/// A fake PM QoS device for tests: it logs what is done to it, or refuses.
#[cfg(test)]
pub(crate) mod fake {
    use super::{Device, HintError, Request};
    use std::sync::{Arc, Mutex};

    /// What was done to a [`Fake`] device, in order.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub(crate) enum Event {
        Open,
        Write(i32),
        Close,
    }

    /// A device that logs opens, writes and closes; `refuse_open` makes
    /// opening fail with that error, `refuse_write` makes writes fail.
    #[derive(Clone, Default)]
    pub(crate) struct Fake {
        pub(crate) log: Arc<Mutex<Vec<Event>>>,
        pub(crate) refuse_open: Option<HintError>,
        pub(crate) refuse_write: bool,
    }

    struct FakeRequest(Fake);

    impl Request for FakeRequest {
        fn write_value(&mut self, v: i32) -> Result<(), HintError> {
            if self.0.refuse_write {
                return Err(HintError::Io {
                    path: "fake".into(),
                    op: "write",
                    message: "refused".into(),
                });
            }
            self.0.log.lock().unwrap().push(Event::Write(v));
            Ok(())
        }
    }

    impl Drop for FakeRequest {
        fn drop(&mut self) {
            self.0.log.lock().unwrap().push(Event::Close);
        }
    }

    impl Device for Fake {
        fn open(&self) -> Result<Box<dyn Request>, HintError> {
            if let Some(e) = &self.refuse_open {
                return Err(e.clone());
            }
            self.log.lock().unwrap().push(Event::Open);
            Ok(Box::new(FakeRequest(self.clone())))
        }
    }

    impl Fake {
        /// Everything done to the device so far.
        pub(crate) fn log(&self) -> Vec<Event> {
            self.log.lock().unwrap().clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fake::{Event, Fake};
    use super::*;

    fn log(f: &Fake) -> Vec<Event> {
        f.log()
    }

    #[test]
    fn strictest_live_value_is_in_force_and_last_drop_closes() {
        use Event::*;
        let fake = Fake::default();
        let reg = Registry::new(fake.clone());
        assert_eq!(reg.in_force_us(), None);
        let a = reg.request(50).unwrap();
        assert_eq!(log(&fake), [Open, Write(50)]);
        let b = reg.request(10).unwrap(); // stricter: rewritten
        let c = reg.request(30).unwrap(); // looser: nothing written
        assert_eq!(log(&fake), [Open, Write(50), Write(10)]);
        assert_eq!((reg.in_force_us(), reg.holders()), (Some(10), 3));
        assert_eq!(
            (b.value_us(), b.in_force_us(), a.in_force_us()),
            (10, 10, 10)
        );
        drop(b); // the strictest goes: relax to the next strictest
        assert_eq!(log(&fake), [Open, Write(50), Write(10), Write(30)]);
        drop(a); // 30 still strictest: no write
        assert_eq!(reg.in_force_us(), Some(30));
        drop(c); // last one: closed, no request left
        assert_eq!(log(&fake), [Open, Write(50), Write(10), Write(30), Close]);
        assert_eq!((reg.in_force_us(), reg.holders()), (None, 0));
        // A new request opens again.
        let d = reg.request(0).unwrap();
        assert_eq!(log(&fake)[5..], [Open, Write(0)]);
        drop(d);
        assert_eq!(log(&fake).last(), Some(&Close));
    }

    #[test]
    fn equal_values_share_one_write() {
        use Event::*;
        let fake = Fake::default();
        let reg = Registry::new(fake.clone());
        let a = reg.request(0).unwrap();
        let b = reg.request(0).unwrap();
        drop(a);
        assert_eq!(log(&fake), [Open, Write(0)]);
        drop(b);
        assert_eq!(log(&fake), [Open, Write(0), Close]);
    }

    #[test]
    fn range_is_the_kernels_s32() {
        let fake = Fake::default();
        let reg = Registry::new(fake.clone());
        let e = reg.request(MAX_LATENCY_US + 1).unwrap_err();
        assert_eq!(
            e,
            HintError::OutOfRange {
                value_us: 2_147_483_648
            }
        );
        assert_eq!(
            e.to_string(),
            "idle latency 2147483648 µs is out of range: the kernel accepts 0 to 2147483647 µs"
        );
        assert_eq!(log(&fake), []); // nothing opened
        let top = reg.request(MAX_LATENCY_US).unwrap();
        assert_eq!(log(&fake), [Event::Open, Event::Write(i32::MAX)]);
        drop(top);
    }

    #[test]
    fn refusals_leave_nothing_held() {
        let fake = Fake {
            refuse_open: Some(HintError::NotPermitted {
                path: "/dev/cpu_dma_latency".into(),
            }),
            ..Fake::default()
        };
        let reg = Registry::new(fake.clone());
        let e = reg.request(0).unwrap_err();
        assert!(e.to_string().contains("permission denied"), "{e}");
        assert_eq!((reg.in_force_us(), reg.holders()), (None, 0));

        let fake = Fake {
            refuse_write: true,
            ..Fake::default()
        };
        let reg = Registry::new(fake.clone());
        assert!(reg.request(5).is_err());
        // Opened, the write failed, and the file was closed again.
        assert_eq!(log(&fake), [Event::Open, Event::Close]);
        assert_eq!(reg.holders(), 0);
    }

    #[test]
    fn errors_map_from_errno() {
        let p = Path::new("/x");
        let nf = io::Error::from_raw_os_error(libc::ENOENT);
        let ac = io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(
            HintError::from_io(p, "open", &nf),
            HintError::NoDevice { path: p.into() }
        );
        assert_eq!(
            HintError::from_io(p, "open", &ac),
            HintError::NotPermitted { path: p.into() }
        );
        assert!(!HintError::NoDevice { path: p.into() }
            .to_string()
            .contains('\n'));
    }

    #[test]
    fn device_file_writes_a_binary_s32_and_query_reads_it() {
        let dir = std::env::temp_dir().join(format!("keeptime-pmqos-{}", std::process::id()));
        let dev = dir.join("dev/cpu_dma_latency");
        let idle = dir.join("sys/devices/system/cpu/cpuidle");
        std::fs::create_dir_all(dev.parent().unwrap()).unwrap();
        std::fs::create_dir_all(&idle).unwrap();
        std::fs::write(&dev, KERNEL_DEFAULT_US.to_ne_bytes()).unwrap();
        std::fs::write(idle.join("current_driver"), "haltpoll\n").unwrap();
        std::fs::write(idle.join("current_governor"), "haltpoll\n").unwrap();

        let st = query_at(&dir);
        assert_eq!(st.driver.as_deref(), Some("haltpoll"));
        assert_eq!(st.governor.as_deref(), Some("haltpoll"));
        assert_eq!(st.in_force_us, Some(KERNEL_DEFAULT_US));

        let reg = Registry::new(DeviceFile::new(&dev));
        let h = reg.request(7).unwrap();
        assert_eq!(read_in_force(&dev).unwrap(), 7);
        drop(h);

        let missing = query_at(&dir.join("nowhere"));
        assert_eq!((missing.driver, missing.in_force_us), (None, None));
        assert!(!missing.may_request);
        assert!(missing.request_refused.unwrap().contains("no such device"));
        let e = Registry::new(DeviceFile::new(dir.join("nope")))
            .request(0)
            .unwrap_err();
        assert!(matches!(e, HintError::NoDevice { .. }));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
