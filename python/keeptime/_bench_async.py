"""``python -m keeptime bench-async``: precise sleeps in asyncio, measured.

Compares ``asyncio.sleep`` (the loop's own timer) and
``keeptime.asyncio.sleep`` on asyncio's default loop (and on uvloop's when it
is installed), alone and under load, in one run, methods interleaved:

* single sleeps of 250 µs, 1 ms, 2.5 ms and 10 ms, with the blocking
  ``keeptime.sleep`` as the reference;
* *burst*: 1,000 tasks, each sleeping until its own deadline, the deadlines
  5 µs apart; two rounds of each method on the same loop;
* *tick*: 10, 100 and 1,000 tasks, each ticking at 1 kHz (deadline
  ``start + phase + k·1 ms``, phases spread over the period) for 2 s × scale,
  in two rounds of half that per method (the loop's timer, keeptime,
  keeptime, the loop's timer);
* *crowd*: 1,000 tasks, each sleeping 10 ms 24 times, deadlines spread over
  one period, in eight rounds of three per method, taking turns as the
  ticks do (A B B A, four times). A round lasts about 40 ms, and how its
  tasks, which set each deadline from their last wake-up, fall into step
  with the loop's millisecond wake-ups moves its p50 by hundreds of µs from
  one round to the next, whichever the method: the row pools enough rounds
  to measure the method rather than one round.

One sample's error is the task's own first ``time.monotonic_ns()`` reading
after its ``await`` returns − the deadline; a reading before the deadline is
*early*. Percentiles are nearest-rank (``keeptime._stats.percentile``). CPU =
*process* CPU time ÷ wall time over the cell (keeptime's waiter thread
counts). Capacity = ``keeptime.asyncio.capacity()`` after the cell: the
deadlines per second the waiter states it serves precisely; a load row's rate
is the deadlines per second it asks for. Precise = the waiter's precise
admissions during the cell ÷ its sleeps (the rest were served coarse). One
loop of each kind serves the whole run, as an application has.
"""

from __future__ import annotations

import asyncio
import platform
import time
from dataclasses import dataclass, field
import functools
from typing import Any, Awaitable, Callable, Coroutine, List, Optional, TextIO, Tuple

import keeptime
import keeptime.asyncio as kta
from keeptime import _format
from keeptime._stats import percentile

DURATIONS_NS = (250_000, 1_000_000, 2_500_000, 10_000_000)
SAMPLES = {250_000: 800, 1_000_000: 400, 2_500_000: 200, 10_000_000: 60}
ROUNDS = 4
BURST_GAP_NS = 5_000
TICK_PERIOD_NS = 1_000_000
TICK_TASKS = (10, 100, 1000)
#: The crowd's rounds per method: twice this (module docs, *crowd*).
CROWD_PAIRS = 4
#: Targets: single-sleep p50 of keeptime.asyncio.sleep; load p50 up to the capacity.
SINGLE_P50_NS = 5_000
LOAD_P50_NS = 20_000
CAPACITY_TARGET = 20_000

#: Sleeps until an absolute ``time.monotonic_ns()`` deadline.
SleepUntil = Callable[[int], Awaitable[object]]


async def _asyncio_until(deadline_ns: int) -> None:
    await asyncio.sleep(max(deadline_ns - time.monotonic_ns(), 0) / 1e9)


SLEEPS: Tuple[Tuple[str, SleepUntil], ...] = (
    ("asyncio.sleep", _asyncio_until),
    ("keeptime.asyncio.sleep", kta.sleep_until_ns),
)


@dataclass
class Cell:
    errors: List[int] = field(default_factory=list)
    cpu_ns: int = 0
    wall_ns: int = 0
    #: Precise deadlines the waiter admitted meanwhile.
    precise: int = 0

    def add(self, other: "Cell") -> None:
        self.errors += other.errors
        self.cpu_ns += other.cpu_ns
        self.wall_ns += other.wall_ns
        self.precise += other.precise


@dataclass
class Summary:
    p50: int
    p99: int
    max: int
    early: int
    cpu: float
    capacity: int
    n: int
    #: Precise admissions per sleep (a re-armed timer counts twice).
    precise: float


def summarize(c: Cell) -> Summary:
    e = sorted(c.errors)
    return Summary(
        percentile(e, 500),
        percentile(e, 990),
        e[-1],
        sum(1 for x in e if x < 0),
        100 * c.cpu_ns / max(c.wall_ns, 1),
        kta.capacity(),
        len(e),
        c.precise / max(len(e), 1),
    )


def _measured(loop: asyncio.AbstractEventLoop, main: Callable[[], Coroutine[Any, Any, List[int]]]) -> Cell:
    precise0 = keeptime._keeptime._waiter_precise()
    cpu0, wall0 = time.process_time_ns(), time.monotonic_ns()
    errors = loop.run_until_complete(main())
    return Cell(
        errors,
        time.process_time_ns() - cpu0,
        time.monotonic_ns() - wall0,
        keeptime._keeptime._waiter_precise() - precise0,
    )


def _blocking(n: int, d: int) -> Cell:
    mono, sleep, secs = time.monotonic_ns, keeptime.sleep, d / 1e9
    errors = []
    cpu0, wall0 = time.process_time_ns(), mono()
    for _ in range(n):
        deadline = mono() + d
        sleep(secs)
        errors.append(mono() - deadline)
    return Cell(errors, time.process_time_ns() - cpu0, mono() - wall0)


def _single(n: int, loop: asyncio.AbstractEventLoop, until: SleepUntil, d: int) -> Cell:
    mono = time.monotonic_ns

    async def main() -> List[int]:
        errors = []
        for _ in range(n):
            deadline = mono() + d
            await until(deadline)
            errors.append(mono() - deadline)
        return errors

    return _measured(loop, main)


def _tasks(loop: asyncio.AbstractEventLoop, until: SleepUntil, lists: List[List[int]]) -> Cell:
    mono = time.monotonic_ns

    async def one(deadlines: List[int]) -> List[int]:
        errors = []
        for deadline in deadlines:
            await until(deadline)
            errors.append(mono() - deadline)
        return errors

    async def main() -> List[int]:
        results = await asyncio.gather(*(one(d) for d in lists))
        return [e for errors in results for e in errors]

    return _measured(loop, main)


def _burst(loop: asyncio.AbstractEventLoop, until: SleepUntil) -> Cell:
    start = time.monotonic_ns() + 20_000_000  # after the 1,000 tasks started
    return _tasks(loop, until, [[start + i * BURST_GAP_NS] for i in range(1000)])


def _tick(loop: asyncio.AbstractEventLoop, until: SleepUntil, n: int, length_ns: int) -> Cell:
    start = time.monotonic_ns() + 20_000_000
    ticks = length_ns // TICK_PERIOD_NS
    return _tasks(
        loop,
        until,
        [[start + i * TICK_PERIOD_NS // n + k * TICK_PERIOD_NS for k in range(1, ticks + 1)] for i in range(n)],
    )


def _crowd(loop: asyncio.AbstractEventLoop, until: SleepUntil, d: int, per_task: int) -> Cell:
    mono = time.monotonic_ns

    async def one(i: int) -> List[int]:
        await asyncio.sleep(i * d / 1000 / 1e9)  # spread the deadlines over one period
        errors = []
        for _ in range(per_task):
            deadline = mono() + d
            await until(deadline)
            errors.append(mono() - deadline)
        return errors

    async def main() -> List[int]:
        results = await asyncio.gather(*(one(i) for i in range(1000)))
        return [e for errors in results for e in errors]

    return _measured(loop, main)


HEAD = ("method", "samples", "p50 error", "p99 error", "max error", "early", "process CPU", "precise", "capacity /s")


def _row(first: Tuple[str, ...], method: str, s: Summary) -> str:
    cells = first + (
        method,
        str(s.n),
        _format.ns(s.p50),
        _format.ns(s.p99),
        _format.ns(s.max),
        str(s.early),
        f"{s.cpu:.1f} %",
        # Only keeptime's async sleeps go through the waiter's admission.
        f"{100 * min(s.precise, 1.0):.1f} %" if method.startswith("keeptime.asyncio") else "—",
        str(s.capacity),
    )
    return "| " + " | ".join(cells) + " |\n"


def _head(first: Tuple[str, ...]) -> str:
    cols = first + HEAD
    return "| " + " | ".join(cols) + " |\n|" + "---|" * len(first) + "---|" + "---:|" * (len(HEAD) - 1) + "\n"


def loops(use_uvloop: bool = True) -> List[Tuple[str, Callable[[], asyncio.AbstractEventLoop]]]:
    """asyncio's default loop, and uvloop's if it is installed (and wanted)."""
    out: List[Tuple[str, Callable[[], asyncio.AbstractEventLoop]]] = [("asyncio", asyncio.new_event_loop)]
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            out.append(("uvloop", uvloop.new_event_loop))
    return out


def run(scale: float = 1.0, use_uvloop: bool = True, out: Optional[TextIO] = None) -> str:
    """Runs the benchmark; returns (and writes to ``out``) the Markdown report."""
    text: List[str] = []

    def emit(s: str) -> None:
        text.append(s)
        if out is not None:
            out.write(s)
            out.flush()

    # One loop of each kind for the whole run, as an application has: what
    # keeptime learns about a loop (wake-up latency, round trip) is kept.
    lps = [(name, new_loop()) for name, new_loop in loops(use_uvloop)]
    try:
        _run(lps, scale, emit)
        return "".join(text)
    finally:
        for _, loop in lps:
            loop.close()


def _ok(b: bool) -> str:
    return "met" if b else "MISSED"


@dataclass
class Verdict:
    label: str
    rate: int
    never_worse: bool
    within: Optional[bool]
    cpu: Optional[bool]
    early: bool

    def met(self) -> bool:
        return self.never_worse and self.early and self.within is not False and self.cpu is not False

    def line(self) -> str:
        extra = ""
        if self.within is not None:
            extra += f", within capacity p50 ≤ 20 µs: {_ok(self.within)}"
        if self.cpu is not None:
            extra += f", past capacity CPU ≤ 2× asyncio.sleep's: {_ok(self.cpu)}"
        return (
            f"{self.label} ({self.rate} deadlines/s): keeptime p50 and p99 ≤ asyncio.sleep's: "
            f"{_ok(self.never_worse)}{extra}, zero early: {_ok(self.early)}\n"
        )


def _verdict(label: str, rate: int, t: Summary, k: Summary) -> Verdict:
    within = rate <= k.capacity
    return Verdict(
        label,
        rate,
        k.p50 <= t.p50 and k.p99 <= t.p99,
        (k.p50 <= LOAD_P50_NS) if within else None,
        None if within else k.cpu <= 2 * t.cpu,
        k.early == 0,
    )


def _interleaved(round_of: Callable[[SleepUntil], Cell], pairs: int = 1) -> List[Summary]:
    """``2 · pairs`` rounds of a load row, ``round_of(until)`` for each method
    of ``SLEEPS`` in turn, every second round in the opposite order (A B B A,
    ``pairs`` times), so that a drift of the machine within the row hits both
    alike; each method's rounds pooled."""
    cells = [Cell() for _ in SLEEPS]
    for _ in range(pairs):
        for order in ((0, 1), (1, 0)):
            for i in order:
                cells[i].add(round_of(SLEEPS[i][1]))
    return [summarize(c) for c in cells]


def _run(lps: List[Tuple[str, asyncio.AbstractEventLoop]], scale: float, emit: Callable[[str], None]) -> None:
    emit(
        f"keeptime bench-async (Python {platform.python_version()}): loops {', '.join(n for n, _ in lps)}; "
        "error = the task's first reading after `await` − deadline; CPU = process CPU ÷ wall\n"
    )
    all_met = True
    for d in DURATIONS_NS:
        per_round = max(5, int(SAMPLES[d] * scale) // ROUNDS)
        methods: List[Tuple[str, str, Callable[[int], Cell]]] = [
            ("plain thread", "keeptime.sleep (blocking)", functools.partial(_blocking, d=d))
        ]
        for name, loop in lps:
            for label, until in SLEEPS:
                methods.append((name, label, functools.partial(_single, loop=loop, until=until, d=d)))
        for _, _, fn in methods:
            fn(20)  # warm-up: margins and leads learned
        cells = [Cell() for _ in methods]
        for _ in range(ROUNDS):
            for cell, (_, _, fn) in zip(cells, methods):
                cell.add(fn(per_round))
        sums = [summarize(c) for c in cells]
        emit(f"\n## single sleeps of {_format.duration(d)}\n\n")
        emit(_head(("loop",)))
        for (lp, m, _), s in zip(methods, sums):
            emit(_row((lp,), m, s))
        for (lp, m, _), s in zip(methods, sums):
            if m == "keeptime.asyncio.sleep":
                met = s.p50 <= SINGLE_P50_NS and s.early == 0
                all_met &= met
                emit(
                    f"\nkeeptime.asyncio.sleep({_format.duration(d)}) on {lp}: p50 {_format.ns(s.p50)} ≤ 5 µs "
                    f"and zero early: {_ok(met)}\n"
                )

    verdicts: List[Verdict] = []
    burst_rate = 1_000_000_000 // BURST_GAP_NS
    emit(f"\n## burst: 1,000 tasks sleeping until deadlines {_format.ns(BURST_GAP_NS)} apart, two rounds\n\n")
    emit(_head(("loop", "round")))
    for name, loop in lps:
        for rnd in (1, 2):
            sums = [summarize(_burst(loop, until)) for _, until in SLEEPS]
            for (label, _), s in zip(SLEEPS, sums):
                emit(_row((name, str(rnd)), label, s))
            verdicts.append(_verdict(f"{name} burst round {rnd}", burst_rate, sums[0], sums[1]))

    length_ns = max(250_000_000, int(2_000_000_000 * scale))
    emit(
        f"\n## tick: tasks each ticking at 1 kHz for {length_ns / 1e9:.2f} s "
        f"(two rounds of {length_ns / 2e9:.2f} s per method, taking turns)\n\n"
    )
    emit(_head(("loop", "tasks")))
    for name, loop in lps:
        for n in TICK_TASKS:
            sums = _interleaved(functools.partial(_tick, loop, n=n, length_ns=length_ns // 2))
            for (label, _), s in zip(SLEEPS, sums):
                emit(_row((name, str(n)), label, s))
            verdicts.append(_verdict(f"{name} tick {n} tasks", n * 1_000, sums[0], sums[1]))

    d = 10_000_000
    per_round = max(2, int(3 * scale))
    emit(
        f"\n## crowd: 1,000 tasks, each sleeping {_format.duration(d)} {2 * CROWD_PAIRS * per_round} times "
        f"(deadlines spread over one period; {2 * CROWD_PAIRS} rounds of {per_round} per method, taking turns)\n\n"
    )
    emit(_head(("loop",)))
    for name, loop in lps:
        sums = _interleaved(functools.partial(_crowd, loop, d=d, per_task=per_round), CROWD_PAIRS)
        for (label, _), s in zip(SLEEPS, sums):
            emit(_row((name,), label, s))
        verdicts.append(_verdict(f"{name} crowd", 1000 * 1_000_000_000 // d, sums[0], sums[1]))

    emit("\n")
    for v in verdicts:
        emit(v.line())
        all_met &= v.met()
    cap, cost, armed, coarse = keeptime._keeptime._waiter_capacity()
    cap_met = cap >= CAPACITY_TARGET
    all_met &= cap_met
    emit(
        f"\nstated capacity keeptime.asyncio.capacity() = {cap} deadlines/s (cost {_format.ns(cost)} per precise "
        f"deadline) ≥ 20,000/s: {_ok(cap_met)}; timers armed {armed}, coarse decisions {coarse}\n"
    )
    emit(f"all targets: {_ok(all_met)}\n")
