"""The clock report as typed, immutable Python objects.

``keeptime.clocks()`` runs the Rust core's clock inspection (every clock read
back to back, the machine's timing setup, plain-language findings) with the
GIL released and returns a :class:`ClockReport`. Field names and meanings are
the core's (``keeptime::clocks``); ``to_dict()`` gives exactly the JSON that
``keeptime clocks --json`` prints.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from keeptime import _keeptime


def _plain(value: Any) -> Any:
    """Dataclasses to dicts and tuples to lists, recursively (JSON's shapes)."""
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class _Plain:
    def to_dict(self) -> Dict[str, Any]:
        """This object as plain JSON-compatible data (dicts, lists, numbers, strings, None)."""
        plain: Dict[str, Any] = _plain(self)
        return plain


@dataclass(frozen=True)
class ClockInfo(_Plain):
    """What one clock is and how it behaved when read back to back.

    >>> mono = keeptime.clocks().clock("MONOTONIC")
    >>> mono.available and mono.monotonic_violations == 0
    True
    """

    name: str
    """Short upper-case name: "MONOTONIC", "MONOTONIC_RAW", …, "TSC", "RDTSCP"."""
    description: str
    """What the clock counts, in a phrase."""
    id: Optional[int]
    """The clockid_t passed to clock_gettime; None for the TSC and off Linux."""
    resolution_ns: Optional[int]
    """What clock_getres reports (None for the TSC and off Linux)."""
    granularity_ns: Optional[int]
    """Smallest non-zero step seen between two successive reads, ns (None if it never stepped)."""
    granularity_ticks: Optional[int]
    """TSC only: the smallest non-zero step in TSC ticks."""
    repeat_fraction: float
    """Share (0.0–1.0) of successive reads that repeated the previous value."""
    samples: int
    """Successive reads examined for granularity, repeats and monotonicity."""
    read_cost_ns: float
    """Cost of one read in ns (median over batches)."""
    monotonic_violations: int
    """Reads that returned less than the read before (0 for a working monotonic clock)."""
    frequency_hz: Optional[int]
    """TSC only: ticks per second."""
    frequency_source: Optional[str]
    """TSC only: "cpuid_leaf15", "hypervisor_cpuid" or "measured_against_monotonic_raw"."""
    available: bool
    """Whether the clock could be read at all."""
    error: Optional[str]
    """Why the clock is unavailable, in words."""

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> ClockInfo:
        return cls(**d)


@dataclass(frozen=True)
class TscInfo(_Plain):
    """The TSC as /proc/cpuinfo and CPUID describe it."""

    constant_tsc: bool
    """Ticks at a fixed rate whatever the CPU's frequency."""
    nonstop_tsc: bool
    """Keeps ticking in deep idle states."""
    tsc_known_freq: bool
    """The kernel got the frequency from the CPU or hypervisor, not by calibration."""
    tsc_reliable: bool
    """The kernel trusts the TSC without watchdog checks."""
    rdtscp: bool
    """The rdtscp instruction is available."""
    reported_frequency_hz: Optional[int]
    """The frequency CPUID states, if any."""
    measured_frequency_hz: Optional[int]
    """The frequency counted against CLOCK_MONOTONIC_RAW."""

    @property
    def invariant(self) -> bool:
        """Constant rate and never stops: TSC ticks convert to time."""
        return self.constant_tsc and self.nonstop_tsc


@dataclass(frozen=True)
class IdleState(_Plain):
    """One CPU idle state (C-state) and what waking from it costs."""

    name: str
    """The state's name ("POLL", "C1", "C6", …)."""
    exit_latency_us: int
    """Worst-case time to wake from this state, µs, as the driver states it."""
    target_residency_us: Optional[int]
    """The shortest idle period for which the kernel chooses this state, µs."""
    disabled: bool
    """Whether the state is disabled (for CPU 0)."""


@dataclass(frozen=True)
class Virtualization(_Plain):
    """The hypervisor a machine runs under and how that was found out."""

    hypervisor: str
    """"KVM", "Xen", "VMware", "Hyper-V", …, or "unknown"."""
    source: str
    """Where that came from: "cpuid", "/sys/hypervisor/type", …"""


@dataclass(frozen=True)
class MachineInfo(_Plain):
    """The machine's timing-relevant configuration; anything unreadable is None (or empty)."""

    os: str
    """"linux", "macos", "windows", …"""
    arch: str
    """"x86_64", "aarch64", …"""
    kernel_release: Optional[str]
    """uname -r."""
    kernel_version: Optional[str]
    """uname -v (it names the preemption model)."""
    cpu_model: Optional[str]
    """The CPU's model name."""
    cpus_online: Optional[int]
    """CPUs online."""
    cpus_available: Optional[int]
    """CPUs this process may run on."""
    clocksource: Optional[str]
    """The current clocksource: "tsc" is read through the vDSO; "hpet"/"acpi_pm" make every read a system call."""
    available_clocksources: Tuple[str, ...]
    """All clocksources the kernel considers usable."""
    tsc: Optional[TscInfo]
    """The TSC's flags and frequency (None off x86_64)."""
    timer_slack_ns: Optional[int]
    """The inspecting thread's timer slack (Linux default 50 000 ns; 1 once keeptime has slept on it)."""
    tick_hz: Optional[int]
    """The kernel tick rate (CONFIG_HZ)."""
    high_resolution_timers: Optional[bool]
    """Whether high-resolution timers are active."""
    high_resolution_timers_source: Optional[str]
    """Where high_resolution_timers came from."""
    idle_driver: Optional[str]
    """The cpuidle driver ("intel_idle", "acpi_idle", "haltpoll", "none")."""
    idle_states: Tuple[IdleState, ...]
    """CPU 0's idle states, shallowest first."""
    cpufreq_driver: Optional[str]
    """The cpufreq driver of CPU 0."""
    cpufreq_governor: Optional[str]
    """The cpufreq governor of CPU 0."""
    virtualization: Optional[Virtualization]
    """The hypervisor, None when there is no sign of one."""
    steal_fraction: Optional[float]
    """Share of CPU time the hypervisor took since boot, 0.0–1.0."""
    preemption: str
    """"rt", "full", "dynamic", "none_or_voluntary" or "unknown"."""
    preemption_mode: Optional[str]
    """For "dynamic": the mode chosen at boot, when readable."""
    tai_offset_s: Optional[int]
    """CLOCK_TAI − CLOCK_REALTIME in whole seconds."""

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> MachineInfo:
        d = dict(d)
        d["available_clocksources"] = tuple(d["available_clocksources"])
        d["tsc"] = TscInfo(**d["tsc"]) if d["tsc"] is not None else None
        d["idle_states"] = tuple(IdleState(**s) for s in d["idle_states"])
        v = d["virtualization"]
        d["virtualization"] = Virtualization(**v) if v is not None else None
        return cls(**d)


@dataclass(frozen=True)
class DeviceAccess(_Plain):
    """The PM QoS device's permission bits and owner."""

    mode: int
    """Permission bits (0o600 for the usual root-only device)."""
    uid: int
    """Owner uid."""
    gid: int
    """Group gid."""


@dataclass(frozen=True)
class IdleLatency(_Plain):
    """The cpuidle driver, the PM QoS CPU latency in force, and whether this process may hold a request."""

    driver: Optional[str]
    """The cpuidle driver ("none", "haltpoll", "intel_idle", "acpi_idle", …)."""
    governor: Optional[str]
    """The cpuidle governor ("menu", "teo", "haltpoll", …)."""
    in_force_us: Optional[int]
    """The CPU latency constraint in force system-wide, µs (2 000 000 000 = unconstrained); None if unreadable."""
    read_error: Optional[str]
    """Why in_force_us could not be read."""
    may_request: bool
    """Whether this process may open /dev/cpu_dma_latency for writing (hold the idle hint)."""
    request_refused: Optional[str]
    """Why not, when it may not."""
    device: Optional[DeviceAccess]
    """The device's mode and owner, when it exists."""
    euid: Optional[int]
    """This process's effective uid."""
    groups: Tuple[int, ...]
    """This process's effective gid and supplementary groups."""

    @classmethod
    def _from_dict(cls, d: Dict[str, Any]) -> IdleLatency:
        d = dict(d)
        d["device"] = DeviceAccess(**d["device"]) if d["device"] is not None else None
        d["groups"] = tuple(d["groups"])
        return cls(**d)


@dataclass(frozen=True)
class Finding(_Plain):
    """One observation about the machine, in plain words."""

    severity: str
    """"warning" or "info"."""
    code: str
    """Stable identifier, e.g. "timer_slack_default"."""
    message: str
    """One or two sentences for a person."""

    def __str__(self) -> str:
        return f"{self.severity}: {self.message}"


@dataclass(frozen=True)
class ClockReport(_Plain):
    """Everything the clock inspection found.

    >>> report = keeptime.clocks()
    >>> report.clock("monotonic").name
    'MONOTONIC'
    >>> sorted(report.to_dict())
    ['clocks', 'findings', 'idle_latency', 'machine']
    """

    clocks: Tuple[ClockInfo, ...]
    """One entry per clock, in the core's fixed order (MONOTONIC first)."""
    machine: MachineInfo
    """The machine: kernel, CPU, clocksource, timers, idle states."""
    idle_latency: Optional[IdleLatency]
    """The idle-latency state (spec/clocks.md); None in a report made from parts."""
    findings: Tuple[Finding, ...]
    """What the numbers mean for precise waiting, warnings first."""

    def clock(self, name: str) -> Optional[ClockInfo]:
        """The clock called ``name`` ("MONOTONIC", "TSC", …; any case), or None."""
        return next((c for c in self.clocks if c.name.lower() == name.lower()), None)

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The report as JSON, the same document ``keeptime clocks --json`` prints."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> ClockReport:
        """A report from its ``to_dict()`` / JSON form."""
        return cls(
            clocks=tuple(ClockInfo._from_dict(c) for c in d["clocks"]),
            machine=MachineInfo._from_dict(d["machine"]),
            idle_latency=(
                IdleLatency._from_dict(d["idle_latency"]) if d.get("idle_latency") is not None else None
            ),
            findings=tuple(Finding(**f) for f in d["findings"]),
        )


def clocks(
    *,
    reads_per_batch: Optional[int] = None,
    batches: Optional[int] = None,
    granularity_reads: Optional[int] = None,
    time_limit_per_clock: Optional[float] = None,
    tsc_calibration: Optional[float] = None,
) -> ClockReport:
    """Inspect every clock and the machine; return a :class:`ClockReport`.

    Takes well under a second (typically 50–150 ms, spinning on the calling
    thread with the GIL released). The options are the core's
    ``InspectOptions`` (None keeps its default; times in seconds); smaller
    values are faster and noisier. The reported timer slack is the calling
    thread's: 1 ns once keeptime has slept on it.

    >>> report = keeptime.clocks()
    >>> report.clock("MONOTONIC").read_cost_ns > 0
    True
    >>> for finding in report.findings:   # doctest: +SKIP
    ...     print(finding)
    warning: Running under KVM: wake-ups and spins are subject to the host's scheduling ...
    """
    raw = _keeptime._clocks_json(
        reads_per_batch,
        batches,
        granularity_reads,
        None if time_limit_per_clock is None else _seconds_ns(time_limit_per_clock),
        None if tsc_calibration is None else _seconds_ns(tsc_calibration),
    )
    return ClockReport.from_dict(json.loads(raw))


def _seconds_ns(seconds: float) -> int:
    if not seconds >= 0:
        raise ValueError("inspection times must be non-negative seconds")
    return int(seconds * 1e9)
