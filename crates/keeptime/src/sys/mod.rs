//! Platform back ends. Everything that differs between operating systems lives
//! here, behind the same small set of functions; the algorithm never calls the
//! OS directly (it talks to [`crate::Platform`]).

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub(crate) use linux::*;

#[cfg(not(target_os = "linux"))]
mod fallback;
#[cfg(not(target_os = "linux"))]
pub(crate) use fallback::*;

/// Result of one OS wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OsWake {
    /// The wait ran to its target (the OS may have woken the thread late, never early).
    Completed,
    /// A signal handler ran (EINTR) before the target; the caller decides whether to resume.
    Interrupted,
}
