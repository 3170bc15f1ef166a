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

The targets (``TARGET_P50_NS`` at ``TARGET_DURATIONS_NS``, in
:mod:`keeptime._bench_text`, which writes the result as text and Markdown)
are printed after the tables, met or MISSED, for ``keeptime.sleep`` and
``Ticker``.
"""

from __future__ import annotations

import datetime
import platform
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO

import keeptime
from keeptime import _format, _keeptime, _stats

#: The durations measured by default: 10 µs, 250 µs, 1 ms, 2.5 ms, 10 ms.
DEFAULT_DURATIONS_NS = (10_000, 250_000, 1_000_000, 2_500_000, 10_000_000)
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


#: The methods whose sleeper learns from its own waits (the wake-up model).
LEARNING_METHODS = frozenset(
    {"keeptime", "keeptime-sleep", "keeptime-ticker", "keeptime-efficient", "keeptime-rust"}
)


def default_warmup(d_ns: int, method: str = "") -> int:
    """Unrecorded waits before a cell (the CLI's rule): about 50 ms of them,
    10 to 1000; for a method whose sleeper learns (``LEARNING_METHODS``),
    about 1 s but at least 300 where they take at most 5 s, 10 to 3000: a
    fresh sleeper spends several times its later CPU while it learns (at 1 %
    it sets its largest wake-up aside from 199 of them), and the cells
    measure what it does once it has."""
    per = d_ns + PLANNING_OVERHEAD_NS
    if method in LEARNING_METHODS:
        floor = min(300, 5_000_000_000 // per)
        return max(10, min(3_000, max(1_000_000_000 // per, floor)))
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


def _plan_cell(config: Config, d: int, share_ns: Optional[int], method: str = "") -> CellPlan:
    warmup = config.warmup if config.warmup is not None else default_warmup(d, method)
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
        plan = _plan_cell(config, d, share_ns, name)
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
