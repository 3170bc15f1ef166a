"""The native half of keeptime (Rust, PyO3). Import from ``keeptime`` instead."""

from os import PathLike
from typing import Awaitable, Callable, Dict, List, Optional, Tuple, Union, final

from typing_extensions import Literal, Self, SupportsIndex, TypeAlias

_Mode: TypeAlias = Literal["exact", "efficient", "spin"]
"""A Sleeper's mode (any case is accepted)."""
_Missed: TypeAlias = Literal["skip", "burst", "delay"]
"""A ticker's missed-tick policy (any case is accepted)."""
_Seconds: TypeAlias = Union[float, SupportsIndex]
"""A length in seconds: a float, or an int (or anything with ``__index__``)."""
_TailTarget: TypeAlias = Union[float, Literal["relaxed", "balanced", "strict"]]
"""A tail target: a share strictly between 0 and 1, or a preset name (any case is accepted)."""

__all__ = ['__version__', 'sleep', 'sleep_ns', 'sleep_until_ns', 'Sleeper', 'SleeperStats', 'Profile', 'ProfileError', 'set_default_profile', 'thread_profile', 'TAIL_RELAXED', 'TAIL_BALANCED', 'TAIL_STRICT', 'Ticker', 'Tick', 'TickerStats', 'Schedule', 'IdleHintStatus', '_set_idle_hint_device', '_set_warm_up', '_warm_up_lead_ns', '_clocks_json', '_clock_findings_json', '_timer_slack_ns', '_set_timer_slack_ns', '_measure_core', '_LoopSignal', '_AsyncSleep', '_async_deadline_ns', '_waiter_state', '_waiter_capacity', '_waiter_precise']

__version__: str
TAIL_RELAXED: float
"""Tail target preset: 5 % of exact sleeps may end late (0.05)."""
TAIL_BALANCED: float
"""Tail target preset: 1 % of exact sleeps may end late (0.01, the default)."""
TAIL_STRICT: float
"""Tail target preset: 0.1 % of exact sleeps may end late (0.001)."""

def sleep(seconds: _Seconds) -> None:
    """Sleep for ``seconds``, precisely: never shorter, typically well under a µs longer.

    GIL released; Ctrl-C raises KeyboardInterrupt. ValueError for negative or
    NaN, OverflowError past 2**64 - 1 ns, TypeError for a non-number.
    """

def sleep_ns(ns: SupportsIndex) -> None:
    """Sleep for ``ns`` nanoseconds (ints only), precisely."""

def sleep_until_ns(deadline_ns: SupportsIndex) -> int:
    """Sleep until ``deadline_ns`` (a ``time.monotonic_ns()`` reading); return the clock then (>= deadline)."""

@final
class Sleeper:
    """A precise sleeper with its own learned wake-ups, mode, tail target and stats.

    Shareable between threads, but sleeps for one thread at a time (RuntimeError otherwise).
    """

    def __new__(
        cls,
        mode: _Mode = "exact",
        *,
        timer_slack: bool = True,
        min_spin: Optional[_Seconds] = None,
        tail_target: Optional[_TailTarget] = None,
        idle_hint_us: Optional[int] = None,
        profile: Union[Profile, str, PathLike[str], None] = None,
    ) -> Self: ...
    def sleep(self, seconds: _Seconds) -> None:
        """Sleep for ``seconds`` in this sleeper's mode."""
    def sleep_ns(self, ns: SupportsIndex) -> None:
        """Sleep for ``ns`` nanoseconds in this sleeper's mode."""
    def sleep_until_ns(self, deadline_ns: SupportsIndex) -> int:
        """Sleep until ``deadline_ns``; return the clock then (before it only in "efficient" mode)."""
    @property
    def mode(self) -> str:
        """"exact", "efficient" or "spin"; settable from any thread, applies from the next sleep."""
    @mode.setter
    def mode(self, mode: _Mode) -> Self: ...
    @property
    def timer_slack(self) -> bool:
        """Whether waiting threads get a 1 ns Linux timer slack."""
    @property
    def min_spin_ns(self) -> int:
        """The shortest final spin of an exact sleep, ns (0: only what the tail target needs)."""
    @property
    def tail_target(self) -> float:
        """Share of exact sleeps allowed to end late (e.g. 0.01); settable to a share in (0, 1) or a preset name."""
    @tail_target.setter
    def tail_target(self, target: _TailTarget) -> Self: ...
    @property
    def idle_hint_us(self) -> Optional[int]:
        """The idle-latency hint asked for, µs (a PM QoS request while the sleeper lives;
        price: idle CPUs poll, more power, a VM's vCPU looks busy), or None; settable."""
    @idle_hint_us.setter
    def idle_hint_us(self, value: Optional[int]) -> Self: ...
    @property
    def idle_hint_status(self) -> IdleHintStatus:
        """Whether the idle-latency hint is held (and the value in force), refused (and why) or not asked."""
    @property
    def _sleeping(self) -> bool: ...
    def stats(self) -> SleeperStats:
        """What this sleeper has spent since it was made (or since reset_stats)."""
    def reset_stats(self) -> None:
        """Start the stats afresh; what was learned is kept."""
    def profile(self) -> Profile:
        """A Profile of what this sleeper has learned, made on this machine."""

class ProfileError(ValueError):
    """A host profile that is not valid, or was made on another machine."""

    code: str
    """The spec's error code: "truncated", "bad_number", "machine_mismatch", ..."""
    line: int
    """The 1-based line of the error."""
    path: str
    """The profile's file."""
    key: Optional[str]
    """For "machine_mismatch": the first fingerprint field that differs."""

@final
class Profile:
    """A host profile: what an earlier run on this machine learned; start a Sleeper from it."""

    @staticmethod
    def load(path: Union[str, PathLike[str]], *, ignore_machine: bool = False) -> Profile:
        """Read a profile; ProfileError if invalid or from another machine, OSError if unreadable."""
    def write(self, path: Union[str, PathLike[str]]) -> None:
        """Write the profile to ``path``."""
    @property
    def machine(self) -> Dict[str, str]:
        """The fingerprint of the machine it was made on."""
    @property
    def samples(self) -> List[int]:
        """Remembered wake-ups per OS-wait length bucket (12 ints)."""
    def text(self) -> str:
        """The profile's text."""

def set_default_profile(profile: Union[Profile, str, PathLike[str], None]) -> None:
    """Start keeptime's own sleepers (the free functions', keeptime.asyncio's waiter) from ``profile``; None clears it."""

def thread_profile() -> Profile:
    """What this thread's sleeper behind the free functions has learned, as a Profile of this machine."""

@final
class SleeperStats:
    """What a Sleeper has spent: sleeps, late sleeps, OS waits, spin time, CPU estimate."""

    def __new__(
        cls,
        sleeps: int = 0,
        late: int = 0,
        os_waits: int = 0,
        spin_ns: int = 0,
        cpu_estimate_ns: int = 0,
        unproven_sleeps: int = 0,
    ) -> Self: ...
    @property
    def sleeps(self) -> int:
        """Sleeps that had to wait."""
    @property
    def late(self) -> int:
        """Sleeps that ended after their deadline because an OS wait woke the thread late."""
    @property
    def os_waits(self) -> int:
        """OS waits issued."""
    @property
    def spin_ns(self) -> int:
        """Time spent spinning, ns."""
    @property
    def cpu_estimate_ns(self) -> int:
        """Estimated thread CPU, ns: the learned cost of each OS wait plus the spin."""
    @property
    def unproven_sleeps(self) -> int:
        """Sleeps planned on a margin learned from fewer samples than the tail target needs."""
    @property
    def late_share(self) -> float:
        """late / sleeps (0.0 before the first sleep)."""
    def to_dict(self) -> dict[str, int]:
        """The counters as a dict, in field order."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Tick:
    """One delivered slot of a Ticker: immutable, hashable, compares by value."""

    def __new__(
        cls, index: int, scheduled_ns: int, lateness_ns: int = 0, skipped: int = 0) -> Self: ...
    @property
    def index(self) -> int:
        """Slot number k (the first tick is 1), due at start + k * period."""
    @property
    def scheduled_ns(self) -> int:
        """When this slot was due, on the time.monotonic_ns() clock."""
    @property
    def lateness_ns(self) -> int:
        """How long after scheduled_ns the tick was delivered, ns."""
    @property
    def skipped(self) -> int:
        """Slots dropped just before this one (missed="skip" only)."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class TickerStats:
    """Counters of a Ticker or Schedule since it was made."""

    def __new__(
        cls, ticks: int = 0, missed: int = 0, skipped: int = 0, worst_lateness_ns: int = 0) -> Self: ...
    @property
    def ticks(self) -> int:
        """Ticks delivered."""
    @property
    def missed(self) -> int:
        """Deadlines that had passed when tick() was called: late deliveries plus skipped slots."""
    @property
    def skipped(self) -> int:
        """Slots dropped by missed="skip"."""
    @property
    def worst_lateness_ns(self) -> int:
        """Largest lateness of any delivered tick, ns."""
    def to_dict(self) -> dict[str, int]:
        """The counters as a dict, in field order."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class Schedule:
    """The pure state machine behind Ticker: deadlines start_ns + k * period_ns, policy, stats."""

    def __new__(
        cls, start_ns: SupportsIndex, period_ns: SupportsIndex, missed: _Missed = "skip") -> Self: ...
    def poll(self, now_ns: int) -> Union[int, Tick]:
        """tick() was called at now_ns: the deadline to wait for (then call woke()), or a Tick delivered at once."""
    def woke(self, woke_ns: int) -> Tick:
        """The wait asked for by poll() ended at woke_ns: the tick."""
    def reset(self, now_ns: int) -> None:
        """Restart from now_ns: the next slot is due one period later."""
    @property
    def period_ns(self) -> int:
        """The period, ns (settable; 0 is a ValueError)."""
    @period_ns.setter
    def period_ns(self, period_ns: SupportsIndex) -> Self: ...
    @property
    def missed(self) -> str:
        """"skip", "burst" or "delay"."""
    @property
    def next_index(self) -> int:
        """Index of the next slot."""
    @property
    def next_deadline_ns(self) -> int:
        """Deadline of the next slot, ns."""
    @property
    def stats(self) -> TickerStats:
        """The counters so far."""

@final
class IdleHintStatus:
    """Whether a Sleeper's or Ticker's idle-latency hint is in force: immutable, compares by value."""

    @property
    def state(self) -> Literal["not asked", "held", "refused"]:
        """"not asked", "held" or "refused"."""
    @property
    def asked_us(self) -> Optional[int]:
        """The value asked for, µs (None when not asked)."""
    @property
    def in_force_us(self) -> Optional[int]:
        """The value in force for the process while held, µs (<= asked_us); None otherwise."""
    @property
    def reason(self) -> Optional[str]:
        """Why it was refused (the device and the reason); None otherwise."""
    @property
    def held(self) -> bool:
        """Whether the request is held."""
    def __eq__(self, other: object, /) -> bool: ...

@final
class Ticker:
    """A fixed-rate loop on an absolute schedule: slot k is due at start + k * period.

    ``for tick in Ticker(0.001): ...`` is an endless 1 kHz loop that does not drift.
    """

    def __new__(
        cls,
        period: _Seconds,
        missed: _Missed = "skip",
        *,
        mode: _Mode = "exact",
        timer_slack: bool = True,
        min_spin: Optional[_Seconds] = None,
        tail_target: Optional[_TailTarget] = None,
        idle_hint_us: Optional[int] = None,
        profile: Union[Profile, str, PathLike[str], None] = None,
    ) -> Self: ...
    @staticmethod
    def from_ns(
        period_ns: SupportsIndex,
        missed: _Missed = "skip",
        *,
        mode: _Mode = "exact",
        timer_slack: bool = True,
        min_spin: Optional[_Seconds] = None,
        tail_target: Optional[_TailTarget] = None,
        idle_hint_us: Optional[int] = None,
        profile: Union[Profile, str, PathLike[str], None] = None,
    ) -> Ticker:
        """A ticker whose period is given in nanoseconds."""
    def tick(self) -> Tick:
        """Wait for the next slot (or return at once if it passed) and return its Tick."""
    def __iter__(self) -> Self: ...
    def __next__(self) -> Tick: ...
    def __aiter__(self) -> Self:
        """``async for tick in ticker``: each wait a precise keeptime.asyncio wait."""
    def __anext__(self) -> Awaitable[Tick]: ...
    def _poll(self, now_ns: int) -> Union[int, Tick]: ...
    def _woke(self, deadline_ns: int, woke_ns: int) -> Optional[Tick]: ...
    @property
    def _ticking(self) -> bool: ...
    @property
    def min_spin_ns(self) -> int:
        """The shortest spin that finishes each wait, ns."""
    @property
    def tail_target(self) -> float:
        """The share of waits allowed to end late, e.g. 0.01."""
    def reset(self) -> None:
        """Restart the schedule from now: the next slot is due one period from now."""
    @property
    def stats(self) -> TickerStats:
        """The counters since creation (readable from any thread)."""
    @property
    def period(self) -> float:
        """The period in seconds (settable; zero is a ValueError)."""
    @period.setter
    def period(self, period: _Seconds) -> Self: ...
    @property
    def period_ns(self) -> int:
        """The period in nanoseconds (settable)."""
    @period_ns.setter
    def period_ns(self, period_ns: SupportsIndex) -> Self: ...
    @property
    def missed(self) -> str:
        """"skip", "burst" or "delay"."""
    @property
    def next_index(self) -> int:
        """Index of the next slot."""
    @property
    def next_deadline_ns(self) -> int:
        """When the next slot is due, on the time.monotonic_ns() clock."""
    @property
    def idle_hint_us(self) -> Optional[int]:
        """The idle-latency hint asked for, µs, or None; settable (see Sleeper.idle_hint_us)."""
    @idle_hint_us.setter
    def idle_hint_us(self, value: Optional[int]) -> Self: ...
    @property
    def idle_hint_status(self) -> IdleHintStatus:
        """Whether the idle-latency hint is held, refused or not asked."""

# Private helpers of the package (bench, clocks, warm return).
def _set_idle_hint_device(path: Optional[str]) -> None:
    """For tests only: later idle-hint requests of this process go to ``path`` (None: the real device)."""
def _clock_findings_json(parts_json: str) -> str: ...
def _clocks_json(
    reads_per_batch: Optional[int] = None,
    batches: Optional[int] = None,
    granularity_reads: Optional[int] = None,
    time_limit_per_clock_ns: Optional[int] = None,
    tsc_calibration_ns: Optional[int] = None,
) -> str: ...
def _set_warm_up(function: Optional[Callable[[], object]]) -> None: ...
def _warm_up_lead_ns() -> int: ...
def _timer_slack_ns() -> Optional[int]: ...
def _set_timer_slack_ns(ns: int) -> None: ...
def _measure_core(
    mode: _Mode, duration_ns: int, samples: int, warmup: int, tail_target: Optional[_TailTarget] = None
) -> Tuple[List[int], List[int], int, int, Tuple[int, int, int, int, int]]: ...

# keeptime.asyncio's native half: one loop's wake-up channel, one sleep.
@final
class _LoopSignal:
    def __new__(cls) -> Self: ...
    def fileno(self) -> int: ...
    def drain(self) -> List[int]: ...
    def lead_ns(self, remaining_ns: int) -> int: ...
    def finish_spin_ns(self) -> int: ...

@final
class _AsyncSleep:
    def __new__(cls, signal: _LoopSignal, deadline_ns: int) -> Self: ...
    def step(self) -> int: ...
    def cancel(self) -> None: ...
    def waiter_coarse(self) -> None: ...
    @property
    def armed(self) -> bool: ...
    @property
    def id(self) -> int: ...
    @property
    def woke_ns(self) -> int: ...
    @property
    def deadline_ns(self) -> int: ...

def _async_deadline_ns(delay: float) -> Optional[int]: ...
def _waiter_state() -> Tuple[int, bool]: ...
def _waiter_capacity() -> Tuple[int, int, int, int]: ...
def _waiter_precise() -> int: ...
