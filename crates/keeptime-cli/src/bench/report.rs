//! The bench result document: the project's one result format, written by the
//! Rust bench here and by the Python, Go, Java and C benches. The types
//! serialize to exactly the JSON described in `spec/bench-result.md` and
//! validated by `spec/bench-result.schema.json`.

use super::methods::Method;
use super::result::{CellResult, CrowdResult, Family};
use serde::Serialize;
use std::time::{SystemTime, UNIX_EPOCH};

/// `"format"` of every bench result document.
pub const FORMAT: &str = "keeptime-bench";
/// `"version"` of the format this code writes.
pub const VERSION: u32 = 2;
/// Every version `keeptime report` reads.
pub const READABLE_VERSIONS: [u32; 2] = [1, 2];

/// A whole bench run.
#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    /// Always [`FORMAT`].
    pub format: &'static str,
    /// Always [`VERSION`].
    pub version: u32,
    /// When the run started, RFC 3339 UTC (`2026-11-21T19:30:27Z`).
    pub created: String,
    /// What produced the document.
    pub tool: Tool,
    /// The language runtime the waits ran in.
    pub runtime: Runtime,
    /// The machine the waits ran on.
    pub machine: Machine,
    /// How the run was set up.
    pub parameters: Parameters,
    /// What each method named in `results` is.
    pub methods: Vec<MethodInfo>,
    /// One entry per method and duration, in run order.
    pub results: Vec<CellResult>,
    /// The machine's clock report (`keeptime clocks --json`), when taken;
    /// optional in the format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clocks: Option<keeptime::clocks::ClockReport>,
    /// `--crowd N`: one row per method of N threads sleeping at once;
    /// optional in the format, absent without `--crowd`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crowd: Option<Vec<CrowdResult>>,
}

/// The program that measured.
#[derive(Clone, Debug, Serialize)]
pub struct Tool {
    /// `"keeptime"` for this binary.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// The language runtime.
#[derive(Clone, Debug, Serialize)]
pub struct Runtime {
    /// `"rust"`, `"python"`, `"go"`, `"java"`, `"c"`.
    pub language: String,
    /// The implementation: `"rustc"`, `"cpython"`, `"gc"`, `"openjdk"`, `"gcc"`.
    pub name: String,
    /// Its version, e.g. `"1.95.0"`.
    pub version: String,
}

impl Tool {
    /// This `keeptime` binary.
    pub fn this() -> Self {
        Tool {
            name: "keeptime".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

impl Runtime {
    /// The Rust compiler this binary was built with.
    pub fn this() -> Self {
        Runtime {
            language: "rust".into(),
            name: "rustc".into(),
            version: env!("KEEPTIME_RUSTC_VERSION").into(),
        }
    }
}

/// The machine, flattened from [`keeptime::clocks::MachineInfo`]. Every field
/// but `os` and `arch` may be `null` where it cannot be read.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Machine {
    /// `"linux"`, `"macos"`, `"windows"`, …
    pub os: String,
    /// `"x86_64"`, `"aarch64"`, …
    pub arch: String,
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// CPU model name.
    pub cpu_model: Option<String>,
    /// CPUs online.
    pub cpus: Option<u64>,
    /// Current clocksource, e.g. `"tsc"`.
    pub clocksource: Option<String>,
    /// The waiting thread's timer slack before the bench changed it, ns.
    pub timer_slack_ns: Option<u64>,
    /// Hypervisor (`"KVM"`, …), `null` on bare metal or when unknown.
    pub virtualization: Option<String>,
    /// Kernel preemption model, e.g. `"PREEMPT_DYNAMIC"`.
    pub preemption: Option<String>,
}

impl Machine {
    /// This machine, with `timer_slack_ns` as found at start-up.
    pub fn this(timer_slack_ns: Option<u64>) -> Self {
        Machine::from_info(&crate::clocks::machine_info(), timer_slack_ns)
    }

    /// The fields of `info`, with the given start-up timer slack (falling
    /// back to the slack `info` read).
    pub fn from_info(info: &keeptime::clocks::MachineInfo, timer_slack_ns: Option<u64>) -> Self {
        Machine {
            os: info.os.clone(),
            arch: info.arch.clone(),
            kernel: info.kernel_release.clone(),
            cpu_model: info.cpu_model.clone(),
            cpus: info.cpus_online.map(|n| n as u64),
            clocksource: info.clocksource.clone(),
            timer_slack_ns: timer_slack_ns.or(info.timer_slack_ns),
            virtualization: info.virtualization.as_ref().map(|v| v.hypervisor.clone()),
            preemption: match info.preemption {
                keeptime::clocks::Preemption::Unknown => None,
                p => Some(match &info.preemption_mode {
                    Some(mode) => format!("{p} ({mode})"),
                    None => p.to_string(),
                }),
            },
        }
    }
}

/// How the run was set up.
#[derive(Clone, Debug, Serialize)]
pub struct Parameters {
    /// How each wait's deadline was chosen: `"sleep"` = each wait is
    /// `duration` from a clock reading taken just before it.
    pub schedule: &'static str,
    /// Which CPU time `cpu_percent` counts: `"thread"` (the waiting thread's,
    /// `CLOCK_THREAD_CPUTIME_ID`) or `"process"` where a runtime cannot
    /// measure one thread.
    pub cpu_clock: &'static str,
    /// The durations, ns, in run order.
    pub durations_ns: Vec<u64>,
    /// The methods, in run order.
    pub methods: Vec<String>,
    /// `--samples`, if given.
    pub samples: Option<u64>,
    /// `--warmup`, if given.
    pub warmup: Option<u64>,
    /// The time budget applied, ns, if any.
    pub budget_ns: Option<u64>,
    /// `--pin`: the CPU the waiting thread was pinned to.
    pub pin_cpu: Option<u32>,
    /// `--priority`: the SCHED_FIFO priority of the waiting thread.
    pub priority: Option<u32>,
    /// `--idle-hint`: the idle-latency hint keeptime's sleepers asked for, µs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_hint_us: Option<u32>,
}

/// What a method is.
#[derive(Clone, Debug, Serialize)]
pub struct MethodInfo {
    /// The name used in `results`.
    pub name: String,
    /// One line.
    pub description: String,
    /// What kind of wait it is.
    pub family: Family,
    /// Whether it may return before its deadline by design.
    pub may_return_early: bool,
}

impl From<Method> for MethodInfo {
    fn from(m: Method) -> Self {
        MethodInfo {
            name: m.name().into(),
            description: m.description().into(),
            family: m.family(),
            may_return_early: m.may_return_early(),
        }
    }
}

/// RFC 3339 UTC timestamp of `t`, to the second.
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_289_427)),
            "2026-11-21T19:30:27Z"
        );
    }
}
