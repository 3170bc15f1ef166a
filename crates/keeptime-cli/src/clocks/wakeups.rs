//! The *wake-ups* part of `keeptime clocks`: how late this machine's OS
//! waits wake and what each costs the waiting thread, from a short recording
//! (the same absolute waits as `keeptime trace`), and which host kind of
//! `docs/measurements.md` the machine is.
//!
//! The host kind is read from what the machine is (CPU vendor and family,
//! hypervisor, cpuidle driver), never from the measured wake-ups, which move
//! with load: the measurement is printed beside it so that the reader sees
//! whether this machine behaves as its kind is documented to.

use crate::output::format;
use keeptime::clocks::MachineInfo;
use keeptime::trace::{record, RecordOptions};

/// The OS-wait lengths measured: a short wait (a two-wait plan's second, a
/// sub-ms sleep's only one), a millisecond, and a long one.
pub const LENGTHS_NS: [u64; 3] = [50_000, 1_000_000, 10_000_000];

/// The short wait also measured right after a long one ([`AFTER_LONG_NS`]),
/// as a two-wait plan's second wait meets it, [`AFTER_WAITS`] times.
pub const AFTER_NS: u64 = 50_000;
/// The long wait before each of those.
pub const AFTER_LONG_NS: u64 = 10_240_000;
/// How many.
pub const AFTER_WAITS: u32 = 25;

/// The recording: two rounds over the lengths in shuffled order, about 0.8 s,
/// then [`AFTER_WAITS`] short waits after a long one, about 0.26 s.
fn options() -> RecordOptions {
    RecordOptions {
        lengths_ns: LENGTHS_NS.to_vec(),
        rounds: 2,
        total_ns: 900_000_000,
        min_block_waits: 25,
        max_block_waits: 200,
        seed: 1,
        after_lengths_ns: vec![AFTER_NS],
        after_long_ns: AFTER_LONG_NS,
        after_waits: AFTER_WAITS,
    }
}

/// One length's wake-ups.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct WakeLength {
    /// The requested OS-wait length, ns.
    pub os_wait_ns: u64,
    /// 0 for waits in a row of their length; else the length of the OS wait
    /// each was made right after, ns.
    pub after_ns: u64,
    /// Waits of this length.
    pub waits: usize,
    /// How late they woke (first clock reading after the wait − its target),
    /// nearest-rank p50, p90 and the largest, ns.
    pub late_p50_ns: i64,
    /// p90.
    pub late_p90_ns: i64,
    /// The largest.
    pub late_max_ns: i64,
    /// Median thread CPU time of one wait, ns.
    pub cpu_p50_ns: u64,
}

/// A host kind of `docs/measurements.md`, and what that page documents of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct HostKind {
    /// Its letter: `A` … `D`.
    pub kind: char,
    /// What it is.
    pub what: &'static str,
    /// How late its OS waits wake, as documented.
    pub documented_late: &'static str,
    /// What one OS wait costs the thread there, as documented.
    pub documented_cpu: &'static str,
}

const KINDS: [HostKind; 4] = [
    HostKind {
        kind: 'A',
        what: "KVM guest, Intel, no cpuidle driver",
        documented_late: "~3 µs",
        documented_cpu: "~2–3 µs",
    },
    HostKind {
        kind: 'B',
        what: "KVM guest, AMD EPYC family 26, cpuidle haltpoll",
        documented_late: "~26 µs at p50",
        documented_cpu: "~20 µs",
    },
    HostKind {
        kind: 'C',
        what: "KVM guest, AMD EPYC family 25, no cpuidle driver",
        documented_late: "4–60 µs at p50, growing with the wait; ~1 % of multi-ms waits 0.3–3 ms",
        documented_cpu: "~9–30 µs",
    },
    HostKind {
        kind: 'D',
        what: "Firecracker KVM guest, AMD EPYC family 25, cpuidle haltpoll",
        documented_late: "17–36 µs at p50 up to 640 µs, 46–108 µs beyond",
        documented_cpu: "17–55 µs",
    },
];

/// What decides the host kind: read from the machine, not measured.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Identity {
    /// `/proc/cpuinfo`'s `vendor_id` (`GenuineIntel`, `AuthenticAMD`).
    pub cpu_vendor: Option<String>,
    /// `/proc/cpuinfo`'s `cpu family`.
    pub cpu_family: Option<u32>,
    /// The hypervisor, as the clock report found it (`KVM`, …).
    pub hypervisor: Option<String>,
    /// The cpuidle driver (none when there is none).
    pub idle_driver: Option<String>,
}

impl Identity {
    /// This machine's: `/proc/cpuinfo` and the clock report's `machine`.
    pub fn of(machine: &MachineInfo) -> Identity {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        Identity::from_parts(&cpuinfo, machine)
    }

    /// From the text of `/proc/cpuinfo` and the clock report's `machine`.
    pub fn from_parts(cpuinfo: &str, machine: &MachineInfo) -> Identity {
        let field = |name: &str| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == name).then(|| v.trim().to_string())
            })
        };
        Identity {
            cpu_vendor: field("vendor_id"),
            cpu_family: field("cpu family").and_then(|f| f.parse().ok()),
            hypervisor: machine
                .virtualization
                .as_ref()
                .map(|v| v.hypervisor.clone()),
            idle_driver: machine
                .idle_driver
                .clone()
                .filter(|d| !d.is_empty() && d != "none"),
        }
    }

    /// The documented host kind this machine is, if any: a KVM guest with
    /// the kind's CPU vendor (and, for AMD, family) and cpuidle driver.
    pub fn host_kind(&self) -> Option<HostKind> {
        if self.hypervisor.as_deref() != Some("KVM") {
            return None;
        }
        let haltpoll = match self.idle_driver.as_deref() {
            None => false,
            Some("haltpoll") => true,
            Some(_) => return None,
        };
        let kind = match (self.cpu_vendor.as_deref()?, self.cpu_family, haltpoll) {
            ("GenuineIntel", _, false) => 'A',
            ("AuthenticAMD", Some(26), true) => 'B',
            ("AuthenticAMD", Some(25), false) => 'C',
            ("AuthenticAMD", Some(25), true) => 'D',
            _ => return None,
        };
        KINDS.iter().copied().find(|k| k.kind == kind)
    }
}

/// The *wake-ups* part: the measured lengths, the host kind, and the
/// `haltpoll` guest's poll window when that driver is in use.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct WakeUps {
    /// One entry per length of [`LENGTHS_NS`], shortest first, then one for
    /// [`AFTER_NS`] right after [`AFTER_LONG_NS`].
    pub lengths: Vec<WakeLength>,
    /// What decided the host kind.
    pub identity: Identity,
    /// The documented host kind this machine is, if any.
    pub host_kind: Option<HostKind>,
    /// `/sys/module/haltpoll/parameters/guest_halt_poll_ns`, with the
    /// `haltpoll` driver: the longest an idle vCPU polls before it halts
    /// (0: it halts at once, so every wake-up goes through the host).
    pub haltpoll_guest_poll_ns: Option<u64>,
}

impl WakeUps {
    /// Records the wake-ups (about 0.8 s) and reads the rest.
    pub fn measure(machine: &MachineInfo) -> WakeUps {
        let length = |after_ns: u64| {
            move |s: keeptime::trace::LengthSummary| WakeLength {
                os_wait_ns: s.os_wait_ns,
                after_ns,
                waits: s.n,
                late_p50_ns: s.overshoot_p50_ns,
                late_p90_ns: s.overshoot_p90_ns,
                late_max_ns: s.overshoot_max_ns,
                cpu_p50_ns: s.thread_cpu_p50_ns,
            }
        };
        let lengths = match record(&options(), |_| {}) {
            Ok(trace) => trace
                .summary()
                .into_iter()
                .map(length(0))
                .chain(trace.after_summary().into_iter().map(length(AFTER_LONG_NS)))
                .collect(),
            Err(_) => Vec::new(),
        };
        let identity = Identity::of(machine);
        let haltpoll_guest_poll_ns = (identity.idle_driver.as_deref() == Some("haltpoll"))
            .then(|| {
                std::fs::read_to_string("/sys/module/haltpoll/parameters/guest_halt_poll_ns")
                    .ok()?
                    .trim()
                    .parse()
                    .ok()
            })
            .flatten();
        WakeUps {
            lengths,
            host_kind: identity.host_kind(),
            identity,
            haltpoll_guest_poll_ns,
        }
    }

    /// The part's lines, `(label, text)`, as `keeptime clocks` prints them.
    pub fn lines(&self) -> Vec<(String, String)> {
        let mut lines: Vec<(String, String)> = self
            .lengths
            .iter()
            .map(|l| {
                (
                    match l.after_ns {
                        0 => format::duration(l.os_wait_ns),
                        a => format!(
                            "{} after {}",
                            format::duration(l.os_wait_ns),
                            format::duration(a)
                        ),
                    },
                    format!(
                        "late p50 {}, p90 {}, largest {}; {} of thread CPU a wait ({} waits)",
                        format::ns(l.late_p50_ns),
                        format::ns(l.late_p90_ns),
                        format::ns(l.late_max_ns),
                        format::ns(i64::try_from(l.cpu_p50_ns).unwrap_or(i64::MAX)),
                        l.waits
                    ),
                )
            })
            .collect();
        lines.extend(host_kind_lines(&self.identity, self.host_kind));
        if let Some(ns) = self.haltpoll_guest_poll_ns {
            lines.push(("haltpoll".into(), haltpoll_text(ns)));
        }
        lines
    }
}

/// The host-kind lines, `(label, text)`: the kind, what its page documents
/// of it, and what identified it (or that no documented kind matches).
pub fn host_kind_lines(id: &Identity, kind: Option<HostKind>) -> Vec<(String, String)> {
    let is = format!(
        "{} family {}, {}, cpuidle {}",
        id.cpu_vendor.as_deref().unwrap_or("unknown vendor"),
        id.cpu_family.map_or("unknown".into(), |f| f.to_string()),
        id.hypervisor
            .as_deref()
            .map_or("not a VM guest".into(), |h| format!("{h} guest")),
        id.idle_driver.as_deref().unwrap_or("none"),
    );
    let mut lines = match kind {
        Some(k) => vec![
            (
                "host kind".to_string(),
                format!("{} in docs/measurements.md: {}", k.kind, k.what),
            ),
            (
                "documented".to_string(),
                format!(
                    "OS waits late by {}; {} of thread CPU each",
                    k.documented_late, k.documented_cpu
                ),
            ),
        ],
        None => vec![(
            "host kind".to_string(),
            "none of docs/measurements.md's A–D: the figures above stand for this machine alone"
                .to_string(),
        )],
    };
    lines.push(("identified by".to_string(), is));
    lines
}

/// The `haltpoll` line: the guest's poll window and what it means.
pub fn haltpoll_text(guest_halt_poll_ns: u64) -> String {
    if guest_halt_poll_ns == 0 {
        "guest_halt_poll_ns 0: an idle vCPU halts at once, never polls first, so every wake-up \
         goes through the host (its own halt polling decides how fast)"
            .into()
    } else {
        format!(
            "guest_halt_poll_ns {}: an idle vCPU polls up to that long (adapting) before it halts",
            format::duration(guest_halt_poll_ns)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keeptime::clocks::Virtualization;

    fn machine(hypervisor: Option<&str>, idle_driver: Option<&str>) -> MachineInfo {
        MachineInfo {
            virtualization: hypervisor.map(|h| Virtualization {
                hypervisor: h.into(),
                source: "cpuid".into(),
            }),
            idle_driver: idle_driver.map(String::from),
            ..MachineInfo::default()
        }
    }

    fn kind(
        vendor: &str,
        family: u32,
        hypervisor: Option<&str>,
        driver: Option<&str>,
    ) -> Option<char> {
        let cpuinfo = format!(
            "processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: 1\n"
        );
        Identity::from_parts(&cpuinfo, &machine(hypervisor, driver))
            .host_kind()
            .map(|k| k.kind)
    }

    #[test]
    fn each_documented_kind_is_named_from_what_the_machine_is() {
        assert_eq!(kind("GenuineIntel", 6, Some("KVM"), None), Some('A'));
        assert_eq!(
            kind("GenuineIntel", 6, Some("KVM"), Some("none")),
            Some('A')
        );
        assert_eq!(
            kind("AuthenticAMD", 26, Some("KVM"), Some("haltpoll")),
            Some('B')
        );
        assert_eq!(kind("AuthenticAMD", 25, Some("KVM"), None), Some('C'));
        assert_eq!(
            kind("AuthenticAMD", 25, Some("KVM"), Some("haltpoll")),
            Some('D')
        );
    }

    #[test]
    fn other_machines_are_no_documented_kind() {
        assert_eq!(kind("GenuineIntel", 6, None, None), None);
        assert_eq!(kind("GenuineIntel", 6, Some("KVM"), Some("haltpoll")), None);
        assert_eq!(
            kind("GenuineIntel", 6, Some("KVM"), Some("intel_idle")),
            None
        );
        assert_eq!(kind("AuthenticAMD", 25, Some("Xen"), None), None);
        assert_eq!(kind("AuthenticAMD", 26, Some("KVM"), None), None);
        assert_eq!(
            kind("AuthenticAMD", 23, Some("KVM"), Some("haltpoll")),
            None
        );
        assert_eq!(
            Identity::from_parts("", &machine(Some("KVM"), None)).host_kind(),
            None
        );
    }

    #[test]
    fn the_lines_say_the_kind_and_the_identity() {
        let id = Identity::from_parts(
            "vendor_id\t: AuthenticAMD\ncpu family\t: 25\n",
            &machine(Some("KVM"), Some("haltpoll")),
        );
        assert_eq!(
            id,
            Identity {
                cpu_vendor: Some("AuthenticAMD".into()),
                cpu_family: Some(25),
                hypervisor: Some("KVM".into()),
                idle_driver: Some("haltpoll".into()),
            }
        );
        let pairs = |v: Vec<(String, String)>| {
            v.into_iter()
                .map(|(k, t)| format!("{k}: {t}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            pairs(host_kind_lines(&id, id.host_kind())),
            [
                "host kind: D in docs/measurements.md: Firecracker KVM guest, AMD EPYC family 25, cpuidle haltpoll",
                "documented: OS waits late by 17–36 µs at p50 up to 640 µs, 46–108 µs beyond; 17–55 µs of thread CPU each",
                "identified by: AuthenticAMD family 25, KVM guest, cpuidle haltpoll",
            ]
        );
        let bare = Identity::default();
        assert_eq!(
            pairs(host_kind_lines(&bare, bare.host_kind())),
            [
                "host kind: none of docs/measurements.md's A–D: the figures above stand for this machine alone",
                "identified by: unknown vendor family unknown, not a VM guest, cpuidle none",
            ]
        );
        let in_a_row = WakeLength {
            os_wait_ns: 50_000,
            after_ns: 0,
            waits: 200,
            late_p50_ns: 26_100,
            late_p90_ns: 31_000,
            late_max_ns: 88_000,
            cpu_p50_ns: 19_500,
        };
        let w = WakeUps {
            lengths: vec![
                in_a_row,
                WakeLength {
                    after_ns: 10_240_000,
                    waits: 25,
                    ..in_a_row
                },
            ],
            host_kind: id.host_kind(),
            identity: id,
            haltpoll_guest_poll_ns: Some(0),
        };
        let lines = w.lines();
        assert_eq!(
            lines[0],
            (
                "50 µs".to_string(),
                "late p50 26.1 µs, p90 31.0 µs, largest 88.0 µs; 19.5 µs of thread CPU a wait (200 waits)"
                    .to_string()
            )
        );
        assert_eq!(
            lines[1],
            (
                "50 µs after 10.24 ms".to_string(),
                "late p50 26.1 µs, p90 31.0 µs, largest 88.0 µs; 19.5 µs of thread CPU a wait (25 waits)"
                    .to_string()
            )
        );
        assert_eq!(lines[2..5], host_kind_lines(&w.identity, w.host_kind)[..]);
        assert_eq!(lines[5], ("haltpoll".to_string(), haltpoll_text(0)));
        assert_eq!(lines.len(), 6);
        assert!(haltpoll_text(200_000).starts_with("guest_halt_poll_ns 200 µs: "));
    }
}
