"""keeptime: precise waiting for Python (sleeps, tickers, clock inspection)."""

from keeptime import asyncio as asyncio
from keeptime._clocks import (
    ClockInfo as ClockInfo,
    ClockReport as ClockReport,
    DeviceAccess as DeviceAccess,
    Finding as Finding,
    IdleLatency as IdleLatency,
    IdleState as IdleState,
    MachineInfo as MachineInfo,
    TscInfo as TscInfo,
    Virtualization as Virtualization,
    clocks as clocks,
)
from keeptime._keeptime import (
    IdleHintStatus as IdleHintStatus,
    Profile as Profile,
    ProfileError as ProfileError,
    Schedule as Schedule,
    Sleeper as Sleeper,
    SleeperStats as SleeperStats,
    TAIL_BALANCED as TAIL_BALANCED,
    TAIL_RELAXED as TAIL_RELAXED,
    TAIL_STRICT as TAIL_STRICT,
    Tick as Tick,
    Ticker as Ticker,
    TickerStats as TickerStats,
    __version__ as __version__,
    sleep as sleep,
    sleep_ns as sleep_ns,
    sleep_until_ns as sleep_until_ns,
)

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
    "sleep",
    "sleep_ns",
    "sleep_until_ns",
]

def _warm_up() -> int: ...
