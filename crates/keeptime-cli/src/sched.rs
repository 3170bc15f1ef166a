//! Where and how urgently the measuring thread runs: `--pin` (CPU affinity)
//! and `--priority` (SCHED_FIFO). Linux only; failures say what is missing.

use std::fmt;

/// Why the thread could not be placed as asked. `Display` is one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedError {
    /// The CPU is not one this process may run on.
    CpuNotAllowed {
        /// The requested CPU.
        cpu: u32,
        /// The allowed CPUs, as a list like `0-1`.
        allowed: String,
    },
    /// SCHED_FIFO was refused.
    PriorityNotPermitted {
        /// The requested priority.
        priority: u32,
        /// This process's RLIMIT_RTPRIO soft limit, if readable.
        rlimit: Option<u64>,
    },
    /// Some other OS error.
    Os {
        /// What was being attempted.
        what: &'static str,
        /// The OS's message.
        message: String,
    },
    /// Not available on this OS.
    Unsupported(&'static str),
}

impl fmt::Display for SchedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedError::CpuNotAllowed { cpu, allowed } => write!(
                f,
                "--pin {cpu}: CPU {cpu} is not in this process's allowed CPUs ({allowed})"
            ),
            SchedError::PriorityNotPermitted { priority, rlimit } => {
                write!(
                    f,
                    "--priority {priority}: SCHED_FIFO not permitted: needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least {priority} (`ulimit -r`"
                )?;
                match rlimit {
                    Some(r) if *r == u64::MAX => write!(f, " is unlimited)"),
                    Some(r) => write!(f, " is {r})"),
                    None => write!(f, ")"),
                }
            }
            SchedError::Os { what, message } => write!(f, "{what}: {message}"),
            SchedError::Unsupported(what) => write!(f, "{what} is only supported on Linux"),
        }
    }
}

impl std::error::Error for SchedError {}

#[cfg(target_os = "linux")]
mod imp {
    use super::SchedError;
    use std::io;

    pub fn allowed_cpus() -> Option<Vec<usize>> {
        // SAFETY: an all-zero cpu_set_t is a valid empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
        let rc =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return None;
        }
        let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: CPU_ISSET reads a valid set at an index below its size.
        Some(
            (0..max)
                .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
                .collect(),
        )
    }

    /// `0-3,6` style list.
    pub(super) fn cpu_list(cpus: &[usize]) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < cpus.len() {
            let start = cpus[i];
            let mut end = start;
            while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
                i += 1;
                end = cpus[i];
            }
            parts.push(if start == end {
                start.to_string()
            } else {
                format!("{start}-{end}")
            });
            i += 1;
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(",")
        }
    }

    pub fn pin(cpu: u32) -> Result<(), SchedError> {
        let allowed = allowed_cpus().unwrap_or_default();
        let not_allowed = || SchedError::CpuNotAllowed {
            cpu,
            allowed: cpu_list(&allowed),
        };
        let index = cpu as usize;
        if index >= 8 * std::mem::size_of::<libc::cpu_set_t>() || !allowed.contains(&index) {
            return Err(not_allowed());
        }
        // SAFETY: as above; `index` is below the set's size.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::CPU_SET(index, &mut set) };
        // SAFETY: `set` is a valid cpu_set_t of the size passed; pid 0 is this thread.
        let rc =
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINVAL) => Err(not_allowed()),
            _ => Err(SchedError::Os {
                what: "--pin: sched_setaffinity failed",
                message: err.to_string(),
            }),
        }
    }

    fn rtprio_limit() -> Option<u64> {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `lim` is a valid, writable rlimit.
        let rc = unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut lim) };
        if rc != 0 {
            None
        } else if lim.rlim_cur == libc::RLIM_INFINITY {
            Some(u64::MAX)
        } else {
            // rlim_t is u64 on x86_64 glibc but not on every Linux target.
            #[allow(clippy::unnecessary_cast)]
            Some(lim.rlim_cur as u64)
        }
    }

    pub fn fifo(priority: u32) -> Result<(), SchedError> {
        let param = libc::sched_param {
            sched_priority: priority as libc::c_int,
        };
        // SAFETY: `param` is a valid sched_param; pid 0 is the calling thread.
        let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EPERM) => Err(SchedError::PriorityNotPermitted {
                priority,
                rlimit: rtprio_limit(),
            }),
            _ => Err(SchedError::Os {
                what: "--priority: sched_setscheduler(SCHED_FIFO) failed",
                message: err.to_string(),
            }),
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::SchedError;

    pub fn allowed_cpus() -> Option<Vec<usize>> {
        None
    }

    pub(super) fn cpu_list(cpus: &[usize]) -> String {
        format!("{cpus:?}")
    }

    pub fn pin(_cpu: u32) -> Result<(), SchedError> {
        Err(SchedError::Unsupported("--pin"))
    }

    pub fn fifo(_priority: u32) -> Result<(), SchedError> {
        Err(SchedError::Unsupported("--priority"))
    }
}

/// The CPUs this process may run on (`sched_getaffinity`), if readable.
pub fn allowed_cpus() -> Option<Vec<usize>> {
    imp::allowed_cpus()
}

/// `0-3,6` style list of `cpus`.
pub fn cpu_list(cpus: &[usize]) -> String {
    imp::cpu_list(cpus)
}

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: u32) -> Result<(), SchedError> {
    imp::pin(cpu)
}

/// Runs the calling thread under SCHED_FIFO at `priority` (1–99).
pub fn set_fifo_priority(priority: u32) -> Result<(), SchedError> {
    imp::fifo(priority)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn cpu_lists() {
        assert_eq!(imp::cpu_list(&[0, 1]), "0-1");
        assert_eq!(imp::cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(imp::cpu_list(&[]), "none");
    }

    #[test]
    fn messages_say_what_is_missing() {
        let e = SchedError::PriorityNotPermitted {
            priority: 50,
            rlimit: Some(0),
        };
        let s = e.to_string();
        assert!(s.contains("CAP_SYS_NICE") && s.contains("RLIMIT_RTPRIO") && s.contains("is 0"));
        assert!(!s.contains('\n'));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn impossible_cpu_is_refused() {
        let e = pin_to_cpu(100_000).unwrap_err();
        assert!(e.to_string().contains("100000"));
    }
}
