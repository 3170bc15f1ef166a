"""``python -m keeptime bench-async``: precise sleeps in asyncio, measured.

Compares ``asyncio.sleep`` and ``keeptime.asyncio.sleep`` on asyncio's
default loop (and on uvloop's when it is installed) with the blocking
``keeptime.sleep`` as the reference, in one run, at 100 µs, 1 ms and 10 ms;
then 1,000 concurrent sleeping tasks of each kind.

One sample: ``deadline = time.monotonic_ns() + d``, the wait, then
``error = time.monotonic_ns() − deadline`` (the first clock reading after the
wait returns, as ``python -m keeptime bench``). CPU = *process* CPU time ÷
wall time (keeptime's waiter thread counts). Hold = the duration of one step
of the sleeping coroutine (p99 and max over all steps): how long one sleep
kept the event loop from other tasks; the max includes any preemption of
the loop's thread by the OS. Timing the steps costs the return path a few
µs, so in a cell every sleep with an error sample is followed by one timed
for its hold (the crowd times every sleep). One loop of each kind serves
the whole run. Methods take turns in rounds.
"""

from __future__ import annotations

import asyncio
import platform
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Generator, List, Optional, Sequence, TextIO, Tuple

import keeptime
import keeptime.asyncio as kta
from keeptime import _format

DURATIONS_NS = (100_000, 1_000_000, 10_000_000)
SAMPLES = {100_000: 1_500, 1_000_000: 500, 10_000_000: 100}
ROUNDS = 5


class _Timed:
    """Awaits ``coro``, recording how long each of its steps takes."""

    __slots__ = ("coro", "holds")

    def __init__(self, coro: Any, holds: List[int]) -> None:
        self.coro = coro
        self.holds = holds

    def __await__(self) -> Generator[Any, None, Any]:
        mono = time.monotonic_ns
        coro, holds = self.coro, self.holds
        while True:
            t0 = mono()
            try:
                awaited = coro.send(None)
            except StopIteration as stop:
                holds.append(mono() - t0)
                return stop.value
            holds.append(mono() - t0)
            yield awaited


@dataclass
class Cell:
    errors: List[int] = field(default_factory=list)
    cpu_ns: int = 0
    wall_ns: int = 0
    holds: Optional[List[int]] = None

    def add(self, other: "Cell") -> None:
        self.errors += other.errors
        self.cpu_ns += other.cpu_ns
        self.wall_ns += other.wall_ns
        if other.holds is not None:
            self.holds = (self.holds or []) + other.holds


Sleep = Callable[[float], Awaitable[Any]]


def _blocking(d: int, n: int) -> Cell:
    mono, sleep, secs = time.monotonic_ns, keeptime.sleep, d / 1e9
    errors = []
    cpu0, wall0 = time.process_time_ns(), mono()
    for _ in range(n):
        deadline = mono() + d
        sleep(secs)
        errors.append(mono() - deadline)
    return Cell(errors, time.process_time_ns() - cpu0, mono() - wall0)


def _in_loop(loop: asyncio.AbstractEventLoop, sleep: Sleep, d: int, n: int) -> Cell:
    mono, secs = time.monotonic_ns, d / 1e9
    holds: List[int] = []

    async def main() -> List[int]:
        errors = []
        for _ in range(n):
            deadline = mono() + d
            await sleep(secs)
            errors.append(mono() - deadline)
            await _Timed(sleep(secs), holds)  # the hold, from a sample of its own
        return errors

    cpu0, wall0 = time.process_time_ns(), mono()
    errors = loop.run_until_complete(main())
    return Cell(errors, time.process_time_ns() - cpu0, mono() - wall0, holds)


def _crowd(loop: asyncio.AbstractEventLoop, sleep: Sleep, d: int, per_task: int) -> Cell:
    mono, secs = time.monotonic_ns, d / 1e9
    holds: List[int] = []

    async def one(i: int) -> List[int]:
        await asyncio.sleep(i * secs / 1000)  # spread the deadlines over one period
        errors = []
        for _ in range(per_task):
            deadline = mono() + d
            await _Timed(sleep(secs), holds)
            errors.append(mono() - deadline)
        return errors

    async def main() -> List[int]:
        lists = await asyncio.gather(*(one(i) for i in range(1000)))
        return [e for errors in lists for e in errors]

    cpu0, wall0 = time.process_time_ns(), mono()
    errors = loop.run_until_complete(main())
    return Cell(errors, time.process_time_ns() - cpu0, mono() - wall0, holds)


def _q(sorted_values: Sequence[int], p: float) -> int:
    return sorted_values[round((len(sorted_values) - 1) * p)]


def _summary(c: Cell) -> Tuple[int, int, int, int, float, Optional[Tuple[int, int]]]:
    e = sorted(c.errors)
    hold = None
    if c.holds:
        h = sorted(c.holds)
        hold = (_q(h, 0.99), h[-1])
    return _q(e, 0.5), _q(e, 0.99), e[-1], sum(1 for x in e if x < 0), 100 * c.cpu_ns / max(c.wall_ns, 1), hold


def _row(loop_name: str, method: str, c: Cell) -> Tuple[str, ...]:
    p50, p99, mx, early, cpu, hold = _summary(c)
    hold_s = "— (whole wait)" if hold is None else f"{_format.ns(hold[0])} / {_format.ns(hold[1])}"
    return (loop_name, method, _format.ns(p50), _format.ns(p99), _format.ns(mx), str(early), f"{cpu:.1f} %", hold_s)


def _table(rows: List[Tuple[str, ...]], cpu_label: str = "CPU") -> str:
    head = ("loop", "method", "p50 error", "p99 error", "max error", "early", cpu_label, "hold p99 / max")
    out = ["| " + " | ".join(head) + " |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


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


_SLEEPS: Tuple[Tuple[str, Sleep], ...] = (("asyncio.sleep", asyncio.sleep), ("keeptime.asyncio.sleep", kta.sleep))


def _cell_runner(loop: asyncio.AbstractEventLoop, sleep: Sleep) -> Callable[[int, int], Cell]:
    def runner(d: int, n: int) -> Cell:
        return _in_loop(loop, sleep, d, n)

    return runner


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
        return _run(lps, scale, emit, text)
    finally:
        for _, loop in lps:
            loop.close()


def _run(
    lps: List[Tuple[str, asyncio.AbstractEventLoop]], scale: float, emit: Callable[[str], None], text: List[str]
) -> str:
    methods: List[Tuple[str, str, Callable[[int, int], Cell]]] = [
        ("plain thread", "keeptime.sleep (blocking)", _blocking)
    ]
    for name, loop in lps:
        for label, sleep in _SLEEPS:
            methods.append((name, label, _cell_runner(loop, sleep)))
    emit(
        f"keeptime bench-async (Python {platform.python_version()}): "
        f"loops {', '.join(n for n, _ in lps)}; {ROUNDS} interleaved rounds; CPU = process CPU ÷ wall; "
        "hold = one step of the sleeping coroutine\n"
    )
    for d in DURATIONS_NS:
        per_round = max(5, int(SAMPLES[d] * scale) // ROUNDS)
        for _, _, fn in methods:
            fn(d, 20)  # warm-up: margins and leads learned
        cells = [Cell() for _ in methods]
        for _ in range(ROUNDS):
            for cell, (_, _, fn) in zip(cells, methods):
                cell.add(fn(d, per_round))
        emit(f"\n## {_format.duration(d)} ({per_round * ROUNDS} samples per method)\n\n")
        emit(_table([_row(lp, m, c) for (lp, m, _), c in zip(methods, cells)]))
        ref = _summary(cells[0])
        for (lp, m, _), c in zip(methods, cells):
            if m != "keeptime.asyncio.sleep":
                continue
            s = _summary(c)
            emit(
                f"\nkeeptime.asyncio.sleep on {lp} vs blocking keeptime.sleep: p50 {_format.ns(s[0])} vs "
                f"{_format.ns(ref[0])} (within 2 µs: {_ok(s[0] - ref[0] <= 2_000)}), p99 {_format.ns(s[1])} = "
                f"{s[1] / max(ref[1], 1):.2f}× (≤ 2×: {_ok(s[1] <= 2 * max(ref[1], 1))}), early {s[3]} ({_ok(s[3] == 0)})\n"
            )
    d = 10_000_000
    per_task = max(2, int(5 * scale))
    emit(
        f"\n## crowd: 1,000 concurrent tasks, each sleeping {_format.duration(d)} {per_task} times "
        "(deadlines spread over one period)\n\n"
    )
    rows = []
    for name, loop in lps:
        for label, sleep in _SLEEPS:
            rows.append(_row(name, label, _crowd(loop, sleep, d, per_task)))
    emit(_table(rows, "process CPU"))
    return "".join(text)


def _ok(b: bool) -> str:
    return "met" if b else "MISSED"
