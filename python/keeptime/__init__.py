"""keeptime: precise waiting for Python.

Sleeps that end within a fraction of a microsecond of their deadline at the
CPU cost of a sleep, fixed-rate tickers that do not drift, and an honest
report on the machine's clocks. The waiting runs in Rust (the ``keeptime``
crate) with the GIL released.

>>> import itertools, time, keeptime
>>> keeptime.sleep(0.0001)                       # 100 µs, like time.sleep
>>> deadline = time.monotonic_ns() + 2_000_000
>>> keeptime.sleep_until_ns(deadline) >= deadline  # never early
True
>>> ticker = keeptime.Ticker(0.001, missed="burst")  # 1 kHz, every slot
>>> [tick.index for tick in itertools.islice(ticker, 3)]
[1, 2, 3]
>>> keeptime.clocks().clock("MONOTONIC").read_cost_ns > 0   # the clock report
True

The clock is ``time.monotonic_ns()`` (``CLOCK_MONOTONIC`` on Linux, the same
clock as ``time.perf_counter_ns()`` there).
"""

import time as _time

try:
    from keeptime import _keeptime
except ImportError as e:  # pragma: no cover - only in an unbuilt source tree
    raise ImportError(
        f"keeptime's native module is not built next to {__file__}: this is the source tree. "
        "Install the package (pip install ./python) and run from another directory, "
        "or build in place with maturin develop."
    ) from e
from keeptime._keeptime import (
    IdleHintStatus,
    Profile,
    ProfileError,
    Schedule,
    Sleeper,
    SleeperStats,
    TAIL_BALANCED,
    TAIL_RELAXED,
    TAIL_STRICT,
    Tick,
    Ticker,
    TickerStats,
    __version__,
    set_default_profile,
    sleep,
    sleep_ns,
    sleep_until_ns,
    thread_profile,
)
from keeptime._clocks import (
    ClockInfo,
    ClockReport,
    DeviceAccess,
    Finding,
    IdleLatency,
    IdleState,
    MachineInfo,
    TscInfo,
    Virtualization,
    clocks,
)


def _warm_up(_read=_time.monotonic_ns, _sleep=sleep):
    """Called by keeptime with the GIL held a few µs before a wait's final
    spin, so that what runs right after the wait finds the CPU caches warm:
    the interpreter loop, a builtin call with an int result (like the clock
    read that typically follows a wait), and keeptime's own entry path (the
    next ``keeptime.sleep`` of a loop; ``sleep(0.0)`` returns at once). See
    python/src/wait.rs for why and what it costs."""
    _sleep(0.0)
    return _read()


_keeptime._set_warm_up(_warm_up)


def __getattr__(name: str) -> object:
    # keeptime.asyncio imports asyncio (tens of ms): only when first used.
    if name == "asyncio":
        import keeptime.asyncio

        return keeptime.asyncio
    raise AttributeError(f"module 'keeptime' has no attribute {name!r}")

__all__ = [
    "ClockInfo",
    "ClockReport",
    "DeviceAccess",
    "Finding",
    "IdleHintStatus",
    "IdleLatency",
    "IdleState",
    "MachineInfo",
    "Profile",
    "ProfileError",
    "Schedule",
    "Sleeper",
    "SleeperStats",
    "TAIL_BALANCED",
    "TAIL_RELAXED",
    "TAIL_STRICT",
    "Tick",
    "Ticker",
    "TickerStats",
    "TscInfo",
    "Virtualization",
    "__version__",
    "clocks",
    "set_default_profile",
    "sleep",
    "sleep_ns",
    "sleep_until_ns",
    "thread_profile",
]
