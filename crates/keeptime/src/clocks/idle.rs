//! The idle-latency part of the clock report (`spec/clocks.md`,
//! *Idle latency*; `spec/idle-hint.md`, *Reporting*): the cpuidle driver and
//! governor, the PM QoS CPU latency in force, whether this process may hold
//! a request and, when it may not, the device's mode and owner beside this
//! process's credentials, so the report can name the missing permission.

use super::{Finding, MachineInfo, Severity};
use crate::pmqos::{self, IdleLatencyStatus};

/// The PM QoS device's permission bits and owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceAccess {
    /// Permission bits (`0o600` for the usual root-only device).
    pub mode: u32,
    /// Owner uid.
    pub uid: u32,
    /// Group gid.
    pub gid: u32,
}

/// The idle-latency state of the machine and of this process.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct IdleLatency {
    /// Driver, governor, value in force, whether this process may hold a request.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub status: IdleLatencyStatus,
    /// The device's mode and owner, when it exists.
    pub device: Option<DeviceAccess>,
    /// This process's effective uid.
    pub euid: Option<u32>,
    /// This process's effective gid and supplementary groups.
    pub groups: Vec<u32>,
}

impl IdleLatency {
    /// This machine and process, read without changing anything.
    pub fn read() -> Self {
        let status = pmqos::query();
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let device = std::fs::metadata(pmqos::DEVICE).ok().map(|m| DeviceAccess {
                mode: m.mode() & 0o7777,
                uid: m.uid(),
                gid: m.gid(),
            });
            // SAFETY: these calls only read the process's credentials.
            let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
            let mut groups = vec![egid];
            // SAFETY: with size 0, getgroups only counts the groups.
            let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
            if n > 0 {
                let mut buf = vec![0 as libc::gid_t; n as usize];
                // SAFETY: `buf` has room for the `n` entries getgroups may write.
                let got = unsafe { libc::getgroups(n, buf.as_mut_ptr()) };
                buf.truncate(usize::try_from(got).unwrap_or(0));
                groups.extend(buf.into_iter().filter(|g| *g != egid));
            }
            IdleLatency {
                status,
                device,
                euid: Some(euid),
                groups,
            }
        }
        #[cfg(not(unix))]
        {
            IdleLatency {
                status,
                device: None,
                euid: None,
                groups: Vec::new(),
            }
        }
    }
}

/// Drivers whose idle states have an exit latency the PM QoS request caps.
pub const HINTABLE_DRIVERS: [&str; 3] = ["haltpoll", "intel_idle", "acpi_idle"];

/// The finding on the idle-latency hint (`spec/clocks.md`): worth it with a
/// driver that has exit latency, little effect with driver `none`; nothing
/// when the driver is unknown.
pub(crate) fn idle_finding(idle: &IdleLatency, m: &MachineInfo) -> Option<Finding> {
    let driver = idle.status.driver.as_deref().or(m.idle_driver.as_deref())?;
    if driver == "none" {
        return Some(Finding {
            severity: Severity::Info,
            code: "idle_hint_little_effect".into(),
            message: "No cpuidle driver (none): idle CPUs already poll or halt with no exit \
                      latency to cap, so the idle-latency hint (--idle-hint, a PM QoS request \
                      on /dev/cpu_dma_latency) changes little here."
                .into(),
        });
    }
    let latent: Vec<String> = m
        .idle_states
        .iter()
        .filter(|s| !s.disabled && s.exit_latency_us > 0)
        .map(|s| format!("{} {} µs", s.name, s.exit_latency_us))
        .collect();
    if !HINTABLE_DRIVERS.contains(&driver) && latent.is_empty() {
        return None;
    }
    let mut message = format!("The cpuidle driver {driver}");
    if latent.is_empty() {
        message.push_str(" has idle states with exit latency");
    } else {
        message.push_str(&format!(
            " has idle states with exit latency ({})",
            latent.join(", ")
        ));
    }
    message.push_str(
        ": the opt-in idle-latency hint (--idle-hint 0, a PM QoS request held on \
         /dev/cpu_dma_latency as cyclictest does) makes OS waits wake sooner and tighter, so \
         exact sleeps spin less (on an AMD EPYC KVM guest with haltpoll: 15 µs late at p50 \
         instead of 26 µs; `keeptime latency --dma-latency 0` measures it here). Its price \
         is power: idle CPUs poll instead of sleeping, and on a virtual machine the host sees \
         the vCPU as busy.",
    );
    if let Some(v) = idle
        .status
        .in_force_us
        .filter(|&v| v < pmqos::KERNEL_DEFAULT_US)
    {
        message.push_str(&format!(" Some process already holds {v} µs."));
    }
    if !idle.status.may_request {
        message.push_str(" This process may not hold it (see \"may request\" above).");
    }
    Some(Finding {
        severity: Severity::Info,
        code: "idle_hint_available".into(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clocks::IdleState;

    fn machine(driver: &str, states: &[(&str, u64)]) -> MachineInfo {
        MachineInfo {
            idle_driver: Some(driver.into()),
            idle_states: states
                .iter()
                .map(|&(name, exit_latency_us)| IdleState {
                    name: name.into(),
                    exit_latency_us,
                    target_residency_us: None,
                    disabled: false,
                })
                .collect(),
            ..MachineInfo::default()
        }
    }

    fn idle(driver: Option<&str>, in_force_us: Option<i32>, may_request: bool) -> IdleLatency {
        IdleLatency {
            status: IdleLatencyStatus {
                driver: driver.map(Into::into),
                in_force_us,
                may_request,
                ..IdleLatencyStatus::default()
            },
            ..IdleLatency::default()
        }
    }

    #[test]
    fn the_idle_hint_findings_say_what_the_hint_does_here() {
        let f = idle_finding(
            &idle(Some("none"), Some(pmqos::KERNEL_DEFAULT_US), true),
            &machine("none", &[]),
        )
        .unwrap();
        assert_eq!(
            (f.severity, f.code.as_str()),
            (Severity::Info, "idle_hint_little_effect")
        );
        assert_eq!(
            f.message,
            "No cpuidle driver (none): idle CPUs already poll or halt with no exit latency to cap, so the idle-latency hint (--idle-hint, a PM QoS request on /dev/cpu_dma_latency) changes little here."
        );

        let halt = idle(Some("haltpoll"), Some(0), false);
        let f = idle_finding(&halt, &machine("haltpoll", &[("POLL", 0), ("haltpoll", 1)])).unwrap();
        assert_eq!(f.code, "idle_hint_available");
        assert_eq!(
            f.message,
            "The cpuidle driver haltpoll has idle states with exit latency (haltpoll 1 µs): the opt-in idle-latency hint (--idle-hint 0, a PM QoS request held on /dev/cpu_dma_latency as cyclictest does) makes OS waits wake sooner and tighter, so exact sleeps spin less (on an AMD EPYC KVM guest with haltpoll: 15 µs late at p50 instead of 26 µs; `keeptime latency --dma-latency 0` measures it here). Its price is power: idle CPUs poll instead of sleeping, and on a virtual machine the host sees the vCPU as busy. Some process already holds 0 µs. This process may not hold it (see \"may request\" above)."
        );
        let intel = idle(Some("intel_idle"), Some(pmqos::KERNEL_DEFAULT_US), true);
        let f = idle_finding(&intel, &machine("intel_idle", &[("C6", 133)])).unwrap();
        assert!(f.message.starts_with(
            "The cpuidle driver intel_idle has idle states with exit latency (C6 133 µs): "
        ));
        assert!(
            f.message.ends_with("sees the vCPU as busy."),
            "{}",
            f.message
        );
        // An unknown driver without exit latencies, or no cpuidle at all: nothing to say.
        let other = idle(Some("psci_idle"), None, false);
        assert_eq!(
            idle_finding(&other, &machine("psci_idle", &[("WFI", 0)])),
            None
        );
        assert_eq!(
            idle_finding(&idle(None, None, false), &MachineInfo::default()),
            None
        );
    }
}
