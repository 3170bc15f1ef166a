"""The crowd row of ``python -m keeptime bench``: many threads, each
sleeping in a loop, more of them than CPUs.

``threads`` threads each run ``deadline = time.monotonic_ns() + d``, the
wait, ``error = time.monotonic_ns() − deadline`` for ``seconds`` seconds,
first with their own ``keeptime.Sleeper()`` (exact mode, default tail
target), then with ``time.sleep`` as the baseline, in the same run. Columns:
p50, p99 and max of the error over every sleep of every thread, early
returns, the late share (error > 2 µs) and the process CPU (process CPU time
÷ wall time, in % of one core) while the crowd ran.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Callable, List, Sequence

import keeptime
from keeptime import _format, _stats

#: Threads in the default crowd.
DEFAULT_THREADS = 16
#: Each thread's sleep.
DEFAULT_DURATION_NS = 1_000_000
#: How long each method's crowd runs, seconds (two methods: ~3 s in all).
DEFAULT_SECONDS = 1.5
#: A sleep whose error exceeds this is counted late.
LATE_NS = 2_000
#: Unrecorded sleeps per thread before the measured ones.
WARMUP = 20
#: The methods, in the order they run and print.
METHODS = ("keeptime", "time-sleep")


@dataclass(frozen=True)
class CrowdRow:
    """One method's figures over every sleep of every thread of the crowd."""

    method: str
    threads: int
    duration_ns: int
    samples: int
    p50_ns: int
    p99_ns: int
    max_ns: int
    early: int
    late: int  # sleeps whose error exceeded LATE_NS
    cpu_percent: float  # process CPU time ÷ wall time, % of one core

    @property
    def late_share(self) -> float:
        """``late / samples`` (0.0 without samples)."""
        return self.late / self.samples if self.samples else 0.0


def row_of(method: str, threads: int, duration_ns: int, errors: Sequence[int], wall_ns: int, cpu_ns: int) -> CrowdRow:
    """The row of a crowd's errors (ns, every thread's) and its process CPU.

    >>> r = row_of("keeptime", 2, 1_000_000, [100, -5, 3_000, 200], wall_ns=1_000, cpu_ns=250)
    >>> (r.samples, r.p50_ns, r.p99_ns, r.max_ns, r.early, r.late, r.cpu_percent)
    (4, 100, 3000, 3000, 1, 1, 25.0)
    """
    s = sorted(errors)

    def pick(q_per_mille: int) -> int:
        return _stats.percentile(s, q_per_mille) if s else 0

    return CrowdRow(
        method=method,
        threads=threads,
        duration_ns=duration_ns,
        samples=len(s),
        p50_ns=pick(500),
        p99_ns=pick(990),
        max_ns=s[-1] if s else 0,
        early=sum(1 for e in s if e < 0),
        late=sum(1 for e in s if e > LATE_NS),
        cpu_percent=100.0 * cpu_ns / wall_ns if wall_ns > 0 else 0.0,
    )


def _waiter(method: str) -> Callable[[float], None]:
    if method == "keeptime":
        return keeptime.Sleeper().sleep  # one per thread: what each learns is its own
    if method == "time-sleep":
        return time.sleep
    raise ValueError(f"unknown crowd method {method!r} (expected one of {', '.join(METHODS)})")


def run_one(method: str, threads: int, duration_ns: int = DEFAULT_DURATION_NS, seconds: float = DEFAULT_SECONDS) -> CrowdRow:
    """``threads`` threads each sleeping ``duration_ns`` in a loop for ``seconds``."""
    if threads < 1:
        raise ValueError(f"a crowd needs at least 1 thread, not {threads}")
    _waiter(method)  # an unknown method fails before any thread starts
    mono = time.monotonic_ns
    seconds_each = duration_ns / 1e9
    start = threading.Barrier(threads + 1)
    span_ns = int(seconds * 1e9)
    per_thread: List[List[int]] = [[] for _ in range(threads)]
    stop_at = [0]

    def work(errors: List[int]) -> None:
        wait = _waiter(method)
        for _ in range(WARMUP):
            wait(seconds_each)
        start.wait()
        end = stop_at[0]
        append = errors.append
        while True:
            deadline = mono() + duration_ns
            wait(seconds_each)
            woke = mono()
            append(woke - deadline)
            if woke >= end:
                break

    workers = [threading.Thread(target=work, args=(errs,), daemon=True) for errs in per_thread]
    for w in workers:
        w.start()
    # Everyone has warmed up when the barrier opens; the measured span starts
    # there. The workers read stop_at only after it opens.
    cpu0 = time.process_time_ns()
    wall0 = mono()
    stop_at[0] = wall0 + span_ns
    start.wait()
    for w in workers:
        w.join()
    wall = mono() - wall0
    cpu = time.process_time_ns() - cpu0
    errors = [e for errs in per_thread for e in errs]
    return row_of(method, threads, duration_ns, errors, wall, cpu)


def run(threads: int = DEFAULT_THREADS, duration_ns: int = DEFAULT_DURATION_NS, seconds: float = DEFAULT_SECONDS) -> List[CrowdRow]:
    """Every crowd method, one after the other, in one run."""
    return [run_one(m, threads, duration_ns, seconds) for m in METHODS]


def rows(crowd: Sequence[CrowdRow]) -> List[List[str]]:
    """The table's cells, header first.

    >>> r = CrowdRow("keeptime", 16, 1_000_000, 20_000, 812, 9_300, 180_000, 0, 300, 41.26)
    >>> rows([r])
    [['crowd 16 × 1 ms', 'p50', 'p99', 'max', 'early', 'late > 2 µs', 'CPU', 'sleeps'], ['keeptime', '812 ns', '9.30 µs', '180 µs', '0', '1.5 %', '41 %', '20000']]
    """
    first = crowd[0] if crowd else None
    title = f"crowd {first.threads} × {_format.duration(first.duration_ns)}" if first else "crowd"
    out = [[title, "p50", "p99", "max", "early", f"late > {_format.duration(LATE_NS)}", "CPU", "sleeps"]]
    for r in crowd:
        out.append(
            [
                r.method,
                _format.ns(r.p50_ns),
                _format.ns(r.p99_ns),
                _format.ns(r.max_ns),
                str(r.early),
                _format.percent(100 * r.late_share),
                _format.percent(r.cpu_percent),
                str(r.samples),
            ]
        )
    return out


def table(crowd: Sequence[CrowdRow]) -> str:
    """:func:`rows` as aligned text, with a line on what the columns are."""
    cells = rows(crowd)
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    lines = [
        ("  " + r[0].ljust(widths[0]) + "".join("  " + t.rjust(w) for t, w in zip(r[1:], widths[1:]))).rstrip()
        for r in cells
    ]
    note = (
        "  every thread sleeps in a loop, all at once; error over every sleep of every thread; "
        "CPU = process CPU time ÷ wall time (% of one core)"
    )
    return "\n".join(lines + [note]) + "\n"


def table_markdown(crowd: Sequence[CrowdRow]) -> str:
    """:func:`rows` as a Markdown table."""
    cells = rows(crowd)
    out = ["| " + " | ".join(cells[0]) + " |", "|:---|" + "---:|" * (len(cells[0]) - 1)]
    out += ["| " + " | ".join(r) + " |" for r in cells[1:]]
    return "\n".join(out) + "\n"


def parse_threads(text: str) -> int:
    """``--crowd N``: a whole number of threads, 0 for no crowd row.

    >>> parse_threads("16"), parse_threads(" 0 ")
    (16, 0)
    """
    t = text.strip()
    if not re.fullmatch(r"[0-9]+", t):
        raise ValueError(f"--crowd takes a whole number of threads (0 for none), not {text!r}")
    n = int(t)
    if n > 4096:
        raise ValueError(f"--crowd takes at most 4096 threads, not {n}")
    return n

