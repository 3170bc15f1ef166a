"""``python -m keeptime bench``: how precisely Python can wait, measured.

Compares ``time.sleep``, a Python busy loop on ``time.perf_counter_ns`` and
keeptime's waits at several durations, in one run on one thread, and writes
the project's bench result document (spec/bench-result.md), the same format
``keeptime bench`` writes, so Python and Rust results sit in one table.

One sample, for every method, measured from the caller: ``deadline =
time.monotonic_ns() + d`` (a ticker's ``tick.scheduled_ns``), the wait, then
``error = time.monotonic_ns() − deadline``, the caller's first clock reading
after the wait returns (``CLOCK_MONOTONIC``, the clock keeptime waits on and
``perf_counter_ns`` also reads on Linux). Where the method returns its own
last reading (``sleep_until_ns``, a tick's ``scheduled_ns + lateness_ns``,
the Rust loop's ``sleep_until_ns``), ``return`` is the caller's reading
minus that one: what the way back into the interpreter costs. CPU =
``time.thread_time_ns()`` ÷ wall time over the measured samples. Each method
has its own loop, so no extra Python call sits between the wait and the
reading; nothing is allocated inside it.

The ``keeptime-rust`` row is the same keeptime wait driven from a Rust loop
(no Python between waits): the core's own figure in the same run, to show
what calling from Python costs.

The keeptime rows with a sleeper of their own (exact mode at the tail target
``--tail-target``, default 1 %) report its stats over the measured samples
(in the JSON as each cell's ``sleeper``): the share of sleeps that ended late
from an OS wait, OS waits per sleep, and the CPU the sleeper estimates it
spent (learned OS-wait costs plus spin time) beside the CPU the thread clock
measured.

The targets (:data:`TARGET_P50_NS` at :data:`TARGET_DURATIONS_NS`) are
printed after the tables, met or MISSED, for ``keeptime.sleep`` and
``Ticker``.
"""

from __future__ import annotations

import datetime
import platform
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO

import keeptime
from keeptime import _format, _keeptime, _stats

#: The durations measured by default: 10 µs, 250 µs, 1 ms, 2.5 ms, 10 ms.
DEFAULT_DURATIONS_NS = (10_000, 250_000, 1_000_000, 2_500_000, 10_000_000)
#: The blocking waits held to a target, and where: caller-measured p50 at most
#: :data:`TARGET_P50_NS`, none early.
TARGET_METHODS = ("keeptime-sleep", "keeptime-ticker")
TARGET_DURATIONS_NS = (250_000, 1_000_000, 2_500_000, 10_000_000)
TARGET_P50_NS = 1_000
#: Default overall time budget, seconds.
DEFAULT_BUDGET_S = 40.0
#: What one sample is assumed to cost beyond its duration when planning.
PLANNING_OVERHEAD_NS = 60_000
#: Most samples one cell stores.
MAX_SAMPLES = 500_000


@dataclass(frozen=True)
class Method:
    """One way of waiting the bench compares."""

    name: str
    description: str
    family: str  # spec/bench-result.md's families
    may_return_early: bool
    default_slack: bool  # runs with the thread's start-up timer slack (else 1 ns)


METHODS = (
    Method(
        "time-sleep",
        "time.sleep(d): CPython's clock_nanosleep (absolute since 3.11) with the thread's default "
        "timer slack, the GIL released",
        "OS sleep",
        False,
        True,
    ),
    Method(
        "busy-loop",
        "while (woke := time.perf_counter_ns()) < deadline: pass — a Python busy loop; "
        "a whole core, and the GIL",
        "busy loop",
        False,
        False,
    ),
    Method(
        "keeptime",
        "keeptime.Sleeper(tail_target=T).sleep_until_ns(deadline) (mode exact, with the sleeper's "
        "stats): the cheapest plan of OS waits then a spin that meets the tail target, GIL released "
        "up to the core's hand-off; never early",
        "keeptime",
        False,
        False,
    ),
    Method(
        "keeptime-sleep",
        "keeptime.sleep(d): the free function on the core's thread sleeper (mode exact, default "
        "tail target); never early",
        "keeptime",
        False,
        False,
    ),
    Method(
        "keeptime-ticker",
        "for tick in keeptime.Ticker(d, tail_target=T): error = reading after the tick − "
        "tick.scheduled_ns; never early",
        "keeptime",
        False,
        False,
    ),
    Method(
        "keeptime-efficient",
        "keeptime.Sleeper(mode='efficient').sleep_until_ns(deadline): one OS wait shortened by the "
        "learned median overshoot; may return early",
        "keeptime",
        True,
        False,
    ),
    Method(
        "keeptime-spin",
        "keeptime.Sleeper(mode='spin').sleep_until_ns(deadline): pure spin with pause (after 50 µs "
        "yielding while the deadline is more than 20 µs away), GIL released up to the hand-off",
        "keeptime",
        False,
        False,
    ),
    Method(
        "keeptime-rust",
        "keeptime Mode exact driven from a Rust loop, no Python between waits: the core's own figure, "
        "for comparison",
        "keeptime",
        False,
        False,
    ),
)
METHODS_BY_NAME = {m.name: m for m in METHODS}


def default_min_samples(d_ns: int) -> int:
    """Fewest samples a cell gets by default: enough for a stable p99 (the CLI's rule)."""
    if d_ns >= 5_000_000:
        return 200
    if d_ns >= 500_000:
        return 1_000
    return 2_000


def default_warmup(d_ns: int) -> int:
    """About 50 ms of unrecorded waits, 10 to 1000 of them (the CLI's rule)."""
    return max(10, min(1_000, 50_000_000 // (d_ns + PLANNING_OVERHEAD_NS)))


# ---------------------------------------------------------------- the loops
#
# One loop per kind of wait, each with everything it calls bound to a local,
# so the only Python work between the end of the wait and the error reading
# is returning from the wait. ``woke`` is the method's first clock reading
# after the wait (spec/bench-result.md): the reading after a sleep returns,
# or the busy loop's own reading that ended it.


def _sleep_loop(sleep: Callable[[float], Any], d: int, errors: List[int], min_n: int, limit_ns: int) -> int:
    mono = time.monotonic_ns
    seconds = d / 1e9
    n = len(errors)
    wall_start = mono()
    i = 0
    while i < n:
        deadline = mono() + d
        sleep(seconds)
        woke = mono()
        errors[i] = woke - deadline
        i += 1
        if woke - wall_start >= limit_ns and i >= min_n:
            break
    return i


def _until_loop(
    sleep_until_ns: Callable[[int], int], d: int, errors: List[int], returns: List[int], min_n: int, limit_ns: int
) -> int:
    mono = time.monotonic_ns
    n = len(errors)
    wall_start = mono()
    i = 0
    while i < n:
        deadline = mono() + d
        returned = sleep_until_ns(deadline)
        woke = mono()
        errors[i] = woke - deadline
        returns[i] = woke - returned
        i += 1
        if woke - wall_start >= limit_ns and i >= min_n:
            break
    return i


def _ticker_loop(ticker: keeptime.Ticker, errors: List[int], returns: List[int], min_n: int, limit_ns: int) -> int:
    mono = time.monotonic_ns
    tick = ticker.tick
    n = len(errors)
    wall_start = mono()
    i = 0
    while i < n:
        t = tick()
        woke = mono()
        errors[i] = woke - t.scheduled_ns
        returns[i] = woke - (t.scheduled_ns + t.lateness_ns)
        i += 1
        if woke - wall_start >= limit_ns and i >= min_n:
            break
    return i


def _busy_loop(d: int, errors: List[int], min_n: int, limit_ns: int) -> int:
    mono = time.monotonic_ns
    pc = time.perf_counter_ns
    n = len(errors)
    wall_start = mono()
    i = 0
    while i < n:
        deadline = mono() + d
        woke = pc()  # on Linux the same clock as monotonic_ns
        while woke < deadline:
            woke = pc()
        errors[i] = woke - deadline  # the loop's own first reading past the deadline
        i += 1
        if woke - wall_start >= limit_ns and i >= min_n:
            break
    return i


#: The sleeper mode of each keeptime row measured from Python.
_SLEEPER_MODES: Dict[str, _keeptime._Mode] = {
    "keeptime": "exact",
    "keeptime-efficient": "efficient",
    "keeptime-spin": "spin",
}


def sleeper_cell(target: float, stats: keeptime.SleeperStats) -> Dict[str, Any]:
    """A cell's ``sleeper``: the tail target and the sleeper's stats over the measured samples.

    The target is written in parts per million (``tail_target_ppm``), as
    spec/bench-result.md defines the field.

    >>> sleeper_cell(0.01, keeptime.SleeperStats(sleeps=10, late=1, os_waits=12, spin_ns=50, cpu_estimate_ns=90))
    {'tail_target_ppm': 10000, 'sleeps': 10, 'late': 1, 'os_waits': 12, 'spin_ns': 50, 'cpu_estimate_ns': 90, 'unproven_sleeps': 0}
    """
    return {"tail_target_ppm": round(target * 1e6), **stats.to_dict()}


def _run_python_cell(
    method: str, d: int, warmup: int, max_n: int, min_n: int, limit_ns: int, tail_target: float
) -> Dict[str, Any]:
    sleeper: Optional[keeptime.Sleeper] = None
    returns: Optional[List[int]] = None
    loop: Callable[[int, List[int], int, int], int]
    if method == "busy-loop":
        loop = _busy_loop
    elif method in _SLEEPER_MODES:
        sleeper = keeptime.Sleeper(_SLEEPER_MODES[method], tail_target=tail_target)
        until = sleeper.sleep_until_ns
        returns = [0] * max(max_n, warmup)

        def loop(d: int, errors: List[int], min_n: int, limit_ns: int) -> int:
            assert returns is not None
            return _until_loop(until, d, errors, returns, min_n, limit_ns)

    elif method == "keeptime-ticker":
        ticker = keeptime.Ticker.from_ns(d, tail_target=tail_target)
        returns = [0] * max(max_n, warmup)

        def loop(d: int, errors: List[int], min_n: int, limit_ns: int) -> int:
            assert returns is not None
            return _ticker_loop(ticker, errors, returns, min_n, limit_ns)

    else:
        sleep: Callable[[float], Any] = keeptime.sleep if method == "keeptime-sleep" else time.sleep

        def loop(d: int, errors: List[int], min_n: int, limit_ns: int) -> int:
            return _sleep_loop(sleep, d, errors, min_n, limit_ns)

    if warmup:
        loop(d, [0] * warmup, warmup, 0)
    if sleeper is not None:
        sleeper.reset_stats()  # what it learned stays; the stats cover the measured samples
    errors = [0] * max_n
    cpu_start = time.thread_time_ns()
    wall_start = time.monotonic_ns()
    n = loop(d, errors, min_n, limit_ns)
    wall = time.monotonic_ns() - wall_start
    cpu = time.thread_time_ns() - cpu_start
    del errors[n:]
    st = _stats.stats(errors, wall, cpu)
    if returns is not None:
        st.update(_stats.return_summary(returns[:n]))
    if sleeper is not None:
        st["sleeper"] = sleeper_cell(sleeper.tail_target, sleeper.stats())
    return st


def _run_rust_cell(d: int, warmup: int, n: int, tail_target: float) -> Dict[str, Any]:
    errors, returns, wall, cpu, counters = _keeptime._measure_core("exact", d, n, warmup, tail_target)
    st = _stats.stats(errors, wall, cpu)
    st.update(_stats.return_summary(returns))
    st["sleeper"] = sleeper_cell(tail_target, keeptime.SleeperStats(*counters))
    return st


# ---------------------------------------------------------------- the run


@dataclass
class Config:
    """What to measure."""

    durations_ns: Sequence[int] = DEFAULT_DURATIONS_NS
    methods: Sequence[str] = tuple(m.name for m in METHODS)
    samples: Optional[int] = None
    warmup: Optional[int] = None
    budget_s: Optional[float] = None
    tail_target: float = keeptime.TAIL_BALANCED


def _rfc3339_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_PREEMPTION = {
    "rt": "PREEMPT_RT",
    "full": "PREEMPT (full)",
    "dynamic": "PREEMPT_DYNAMIC",
    "none_or_voluntary": "none or voluntary",
}


def machine_of(info: keeptime.MachineInfo, timer_slack_ns: Optional[int]) -> Dict[str, Any]:
    """The result format's ``machine``, flattened from the clock report's (as the CLI does)."""
    preemption = _PREEMPTION.get(info.preemption)
    if preemption is not None and info.preemption_mode:
        preemption = f"{preemption} ({info.preemption_mode})"
    return {
        "os": info.os,
        "arch": info.arch,
        "kernel": info.kernel_release,
        "cpu_model": info.cpu_model,
        "cpus": info.cpus_online,
        "clocksource": info.clocksource,
        "timer_slack_ns": timer_slack_ns if timer_slack_ns is not None else info.timer_slack_ns,
        "virtualization": info.virtualization.hypervisor if info.virtualization else None,
        "preemption": preemption,
    }


def _set_slack(ns: Optional[int]) -> Optional[int]:
    if ns is not None:
        try:
            _keeptime._set_timer_slack_ns(ns)
        except OSError:
            pass  # best effort: the slack read back is what gets reported
    return _keeptime._timer_slack_ns()


@dataclass(frozen=True)
class CellPlan:
    """How one cell runs: warm-up waits, then samples until it has
    ``min_samples`` and has used ``time_limit_ns``, or has ``max_samples``."""

    warmup: int
    min_samples: int
    max_samples: int
    time_limit_ns: int
    rust_samples: int  # the keeptime-rust row runs a fixed count


def _plan_cell(config: Config, d: int, share_ns: Optional[int]) -> CellPlan:
    warmup = config.warmup if config.warmup is not None else default_warmup(d)
    if config.samples is not None:
        n = config.samples
        if share_ns is not None:  # --samples with --budget: scale down to fit
            n = max(1, min(n, share_ns // (d + PLANNING_OVERHEAD_NS)))
        return CellPlan(warmup, n, n, 1 << 62, n)
    assert share_ns is not None  # no --samples means a budget
    min_n = default_min_samples(d)
    max_n = max(min_n, min(MAX_SAMPLES, 2 * share_ns // (d + 1_000)))
    rust_n = max(min_n, min(max_n, share_ns // (d + 5_000)))
    return CellPlan(warmup, min_n, max_n, share_ns, rust_n)


def run(config: Config, progress: Optional[TextIO] = None) -> Dict[str, Any]:
    """Runs the bench on the calling thread and returns the result document (a dict)."""
    unknown = [m for m in config.methods if m not in METHODS_BY_NAME]
    if unknown:
        raise ValueError(f"unknown method {unknown[0]!r} (expected one of {', '.join(METHODS_BY_NAME)})")
    tail_target = keeptime.Sleeper(tail_target=config.tail_target).tail_target  # checked, as held
    created = _rfc3339_now()
    startup_slack = _keeptime._timer_slack_ns()  # before anything here changes it
    machine = machine_of(_quick_clocks().machine, startup_slack)

    cells = [(d, m) for d in config.durations_ns for m in config.methods]
    budget_s = config.budget_s
    if budget_s is None and config.samples is None:
        budget_s = DEFAULT_BUDGET_S
    share_ns = int(budget_s * 1e9 / max(len(cells), 1)) if budget_s is not None else None

    results = []
    for index, (d, name) in enumerate(cells):
        method = METHODS_BY_NAME[name]
        plan = _plan_cell(config, d, share_ns)
        if progress is not None:
            progress.write(f"\r\x1b[K[{index + 1}/{len(cells)}] {_format.duration(d)} {name} …")
            progress.flush()
        slack = _set_slack(startup_slack if method.default_slack else 1)
        if name == "keeptime-rust":
            st = _run_rust_cell(d, plan.warmup, plan.rust_samples, tail_target)
        else:
            st = _run_python_cell(
                name, d, plan.warmup, plan.max_samples, plan.min_samples, plan.time_limit_ns, tail_target
            )
        results.append(
            {"method": name, "duration_ns": d, "warmup": plan.warmup, "timer_slack_ns": slack, **st}
        )
    _set_slack(startup_slack)  # leave the thread as it was found
    if progress is not None:
        progress.write("\r\x1b[K")
        progress.flush()

    return {
        "format": "keeptime-bench",
        "version": 2,
        "created": created,
        "tool": {"name": "keeptime-python", "version": keeptime.__version__},
        "runtime": {
            "language": "python",
            "name": platform.python_implementation().lower(),
            "version": platform.python_version(),
        },
        "machine": machine,
        "parameters": {
            "schedule": "sleep",
            "cpu_clock": "thread",
            "durations_ns": list(config.durations_ns),
            "methods": list(config.methods),
            "samples": config.samples,
            "warmup": config.warmup,
            "budget_ns": int(budget_s * 1e9) if budget_s is not None else None,
            "pin_cpu": None,
            "priority": None,
        },
        "methods": [
            {
                "name": m.name,
                "description": m.description,
                "family": m.family,
                "may_return_early": m.may_return_early,
            }
            for m in METHODS
            if m.name in config.methods
        ],
        "results": results,
    }


def _quick_clocks() -> keeptime.ClockReport:
    # Only the machine description is used: measure the clocks briefly.
    return keeptime.clocks(
        reads_per_batch=200, batches=5, granularity_reads=2_000, time_limit_per_clock=0.01, tsc_calibration=0.005
    )


def ffi_cost(calls: int = 200_000, rounds: int = 5) -> Dict[str, float]:
    """Nanoseconds per call of ``keeptime.sleep(0)`` (the whole FFI round trip:
    argument conversion, one clock read, return), with ``time.monotonic_ns()``
    for scale; the best of ``rounds`` rounds of ``calls`` calls."""

    def per_call(f: Callable[..., Any], *args: Any) -> float:
        best = float("inf")
        r = range(calls)
        for _ in range(rounds):
            start = time.perf_counter_ns()
            for _ in r:
                f(*args)
            best = min(best, (time.perf_counter_ns() - start) / calls)
        return best

    return {
        "keeptime.sleep(0)": per_call(keeptime.sleep, 0),
        "keeptime.sleep_ns(0)": per_call(keeptime.sleep_ns, 0),
        "time.monotonic_ns()": per_call(time.monotonic_ns),
    }


def render(doc: Dict[str, Any]) -> str:
    """The human-readable result: header, then one table and verdict per duration."""
    m = doc["machine"]
    where = f"{m['os']} {m['arch']}"
    if m.get("kernel"):
        where += f", kernel {m['kernel']}"
    if m.get("virtualization"):
        where += f", {m['virtualization']} guest"
    if m.get("clocksource"):
        where += f", clocksource {m['clocksource']}"
    if m.get("timer_slack_ns") is not None:
        where += f", default timer slack {_format.duration(m['timer_slack_ns'])}"
    groups = _by_duration(doc)
    methods = len(next(iter(groups.values()), []))
    rt = doc["runtime"]
    out = [
        f"keeptime bench (Python {rt['version']}): {methods} methods × {len(groups)} durations on {where}\n"
        "error = the caller's first clock reading after the wait − deadline (negative = early); "
        "return = that reading − the one the wait returned; "
        "CPU = thread CPU time ÷ wall time; * = best in column\n"
    ]
    for d, cells in groups.items():
        out.append(f"\nwait {_format.duration(d)}\n")
        out.append(_format.table(cells))
        v = _format.verdict(cells)
        if v:
            out.append(v + "\n")
        out.append(sleeper_table(cells))
    t = targets(doc)
    if t:
        out.append(f"\ntargets: p50 ≤ {_format.ns(TARGET_P50_NS)}, none early\n")
        out += [f"  {line}\n" for line in t]
    return "".join(out)


def targets(doc: Dict[str, Any]) -> List[str]:
    """One line per measured target cell (:data:`TARGET_METHODS` at
    :data:`TARGET_DURATIONS_NS`): its p50 and early count, met or MISSED.

    >>> cell = {"method": "keeptime-sleep", "duration_ns": 1_000_000, "p50_ns": 420, "early": 0}
    >>> targets({"results": [cell, dict(cell, method="keeptime-ticker", p50_ns=1_300)]})
    ['keeptime-sleep    1 ms  p50 420 ns  early 0  met', 'keeptime-ticker   1 ms  p50 1.30 µs  early 0  MISSED']
    """
    lines = []
    for c in doc["results"]:
        if c["method"] not in TARGET_METHODS or c["duration_ns"] not in TARGET_DURATIONS_NS:
            continue
        met = c["p50_ns"] <= TARGET_P50_NS and c["early"] == 0
        lines.append(
            f"{c['method']:<16} {_format.duration(c['duration_ns']):>6}  p50 {_format.ns(c['p50_ns'])}  "
            f"early {c['early']}  {'met' if met else 'MISSED'}"
        )
    return lines


def sleeper_rows(cells: Sequence[Dict[str, Any]]) -> List[List[str]]:
    """The keeptime rows' sleeper stats, header first: tail target, late share
    (ended late from an OS wait), OS waits per sleep, and the sleeper's CPU
    estimate ÷ wall time beside the CPU the thread clock measured. Only the
    header without keeptime rows."""
    rows = [["sleeper stats", "target", "late", "OS waits/sleep", "CPU est.", "CPU"]]
    for c in cells:
        s = c.get("sleeper")
        if s is None:
            continue
        sleeps = max(s["sleeps"], 1)
        exact = c["method"] in ("keeptime", "keeptime-rust")
        rows.append(
            [
                c["method"],
                _format.percent(s["tail_target_ppm"] / 1e4) if exact else "—",
                _format.percent(100 * s["late"] / sleeps),
                f"{s['os_waits'] / sleeps:.2f}",
                _format.percent(100 * s["cpu_estimate_ns"] / max(c["wall_ns"], 1)),
                _format.percent(c["cpu_percent"]),
            ]
        )
    return rows


def sleeper_table(cells: Sequence[Dict[str, Any]]) -> str:
    """:func:`sleeper_rows` as aligned text (empty without keeptime rows)."""
    rows = sleeper_rows(cells)
    if len(rows) == 1:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        ("  " + r[0].ljust(widths[0]) + "".join("  " + t.rjust(w) for t, w in zip(r[1:], widths[1:]))).rstrip()
        for r in rows
    ]
    return "\n".join(lines) + "\n"


def sleeper_table_markdown(cells: Sequence[Dict[str, Any]]) -> str:
    """:func:`sleeper_rows` as a Markdown table (empty without keeptime rows)."""
    rows = sleeper_rows(cells)
    if len(rows) == 1:
        return ""
    out = ["| " + " | ".join(rows[0]) + " |", "|:---|" + "---:|" * (len(rows[0]) - 1)]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out) + "\n"


def _by_duration(doc: Dict[str, Any]) -> Dict[int, List[Dict[str, Any]]]:
    groups: Dict[int, List[Dict[str, Any]]] = {}
    for r in doc["results"]:
        groups.setdefault(r["duration_ns"], []).append(r)
    return groups


def markdown(doc: Dict[str, Any]) -> str:
    """The result tables as Markdown (best figures in bold), one per duration."""
    return "\n".join(
        f"wait {_format.duration(d)}\n\n{_format.table_markdown(cells)}"
        + (f"\n{sleeper_table_markdown(cells)}" if len(sleeper_rows(cells)) > 1 else "")
        for d, cells in _by_duration(doc).items()
    )
