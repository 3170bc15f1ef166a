"""Precise sleeps for asyncio: ``await keeptime.asyncio.sleep(250e-6)``.

``asyncio.sleep`` wakes through the selector, whose timeout is in whole
milliseconds on Linux: a 100 µs sleep takes about 1.1 ms, a 1 ms sleep
1.1-1.2 ms. :func:`sleep` is never early and typically ends within a
microsecond of its deadline, without blocking the event loop:

>>> import asyncio, time, keeptime.asyncio
>>> async def main():
...     deadline = time.monotonic_ns() + 250_000
...     await keeptime.asyncio.sleep(250e-6)          # like asyncio.sleep
...     return time.monotonic_ns() >= deadline
>>> asyncio.run(main())
True

How: keeptime's process-wide waiter thread (Rust, never holding the GIL)
waits with keeptime's precise sleeper and wakes the loop through a socket it
watches (``loop.add_reader``) a *learned* wake-up latency before the
deadline; the coroutine then yields to the loop until the last loop round
trip and spins that with the GIL held (the round trip is learned per loop,
4-50 µs; spinning less would end the sleep one round late). So one sleep
holds the loop for about one round trip per step, never for its length,
and other tasks keep running. The
latency is learned per loop with keeptime's margin estimator (the same
estimator and spec as the blocking sleep's OS waits). Works with any loop
that supports ``add_reader`` (asyncio's default selector loop on Linux and
macOS, uvloop).

Under load: the waiter serves precisely up to its stated capacity,
:func:`capacity` deadlines per second on this host (learned from what a
precise deadline costs the waiter and the loop). Past it, and while the loop
is behind on the sleeps already woken, a sleep is *coarse*; past twice it
(counting concurrent sleeps only), all but a trickle of 0.2 % of a CPU are.
A lone sleeper (no other sleep in progress) is always served precisely. A
coarse sleep awaits the loop's own timer (as ``asyncio.sleep`` does) to its
deadline and finishes in
the next step, with no lead, no yield and no spin, so it degrades to what
``asyncio.sleep`` does, and is still never early. On asyncio's own loops the
coarse sleeps of a loop share one loop timer, armed at the earliest of their
deadlines, which costs a loaded loop less than a timer each (a tick of 1 000
tasks at 1 kHz ended 6-8 ms late at p50 where ``asyncio.sleep`` ended
230-280 ms late, ``docs/async.md``). A loop timer
that returns before the deadline (uvloop's clock is in whole milliseconds)
hands the rest to the waiter's own coarse timer (one OS wake-up serves the
sleeps of the next 250 µs, and a stream of them wakes the waiter at most
once a millisecond), instead of another early wait; a rest within the
loop's round trip is spun only if admitted (a spin of at most 4 µs always
is), so a loaded uvloop is not kept busy spinning its early returns away.

Cancellation (``task.cancel()``, ``asyncio.timeout``, ``wait_for``) raises
``CancelledError`` at once and disarms the timer.

Where it differs from the blocking :func:`keeptime.sleep`: it follows
``asyncio.sleep``'s conventions. A zero or negative delay yields once and
returns (``keeptime.sleep`` raises ``ValueError`` for negative); any real
number is accepted (``float()`` of it: ``Fraction``, ``Decimal``), a
non-number is a ``TypeError``; NaN is a ``ValueError``; a delay past 2**64 - 1
ns (584 years, and ``inf``) is an ``OverflowError`` where ``asyncio.sleep``
would wait forever. The CPU cost is the loop's yields for the last few tens of
µs of each sleep (the learned lead, at most 200 µs) plus the waiter's own
few-µs spin; ``python -m keeptime bench-async`` measures it.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
import types
import weakref
from typing import Awaitable, Dict, Generator, List, Optional, Tuple, TypeVar, overload

from keeptime import _keeptime
from keeptime._keeptime import Tick, Ticker

__all__ = ["sleep", "sleep_until_ns", "capacity"]

_T = TypeVar("_T")

_DONE, _YIELD, _WAIT, _COARSE = 0, 1, 2, 3


#: A loop timer that fires more than this before its time marks a loop whose
#: own timer returns early (uvloop's clock is in whole milliseconds).
_EARLY_NS = 1_000

#: Tie-breaker of coarse sleeps to one deadline (never compares futures).
_SEQ = itertools.count()

#: Cancelled coarse sleeps wait in the heap until they reach its top; past
#: this many, and half the heap, it is rebuilt without them (as asyncio
#: rebuilds its own timer heap).
_CANCELLED_REBUILD = 100


class _LoopTimers:
    """One loop's wake-up channel, the futures its sleeps await, and its
    coarse sleeps.

    The coarse sleeps share one loop timer, armed at the earliest of their
    deadlines (a heap of ``(deadline, seq, future)``), instead of a timer
    handle each: pushing a tuple of integers onto a heap costs a loaded loop
    less than a ``TimerHandle`` on the loop's own heap, whose comparisons are
    Python calls, and the loop wakes for them as it would for their own
    timers (``docs/async.md``, *asyncio's coarse sleeps share one loop
    timer*). That is for asyncio's own loops (``asyncio.BaseEventLoop``),
    whose timer never fires early. On any other loop (uvloop, whose timer
    fires up to a millisecond early), and on one seen to fire early, each
    coarse sleep takes a timer of its own, whose early return hands the rest
    to the waiter (``_coarse``)."""

    __slots__ = ("signal", "futures", "coarse", "coarse_at", "coarse_handle", "cancelled", "early", "__weakref__")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.signal = _keeptime._LoopSignal()
        self.futures: Dict[int, asyncio.Future[None]] = {}
        self.coarse: List[Tuple[int, int, asyncio.Future[None]]] = []
        #: The deadline the loop timer (``coarse_handle``) is armed for.
        self.coarse_at = 0
        self.coarse_handle: Optional[asyncio.TimerHandle] = None
        #: Cancelled sleeps still in the heap.
        self.cancelled = 0
        #: Each coarse sleep takes a loop timer of its own: the loop is not
        #: one of asyncio's own, or its timer was seen to fire early.
        self.early = not isinstance(loop, asyncio.BaseEventLoop)
        loop.add_reader(self.signal.fileno(), self._fired)

    def _fired(self) -> None:
        for sleep_id in self.signal.drain():
            fut = self.futures.pop(sleep_id, None)
            if fut is not None and not fut.done():
                fut.set_result(None)

    def coarse_wait(self, loop: asyncio.AbstractEventLoop, deadline_ns: int) -> Awaitable[None]:
        """What a coarse sleep until ``deadline_ns`` awaits: a future the
        shared loop timer resolves, or on a loop whose timer fires early a
        loop timer of its own (``_coarse``). A cancelled wait is to be told
        (``coarse_cancelled``)."""
        if self.early:
            return _coarse(loop, deadline_ns)
        fut: asyncio.Future[None] = loop.create_future()
        self.add_coarse(loop, deadline_ns, fut)
        return fut

    def add_coarse(self, loop: asyncio.AbstractEventLoop, deadline_ns: int, fut: "asyncio.Future[None]") -> None:
        """Resolves ``fut`` once the loop's timer reaches ``deadline_ns``."""
        heapq.heappush(self.coarse, (deadline_ns, next(_SEQ), fut))
        if self.coarse_handle is None or deadline_ns < self.coarse_at:
            if self.coarse_handle is not None:
                self.coarse_handle.cancel()
            self._arm(loop, deadline_ns)

    def coarse_cancelled(self) -> None:
        """A coarse sleep was cancelled: its entry stays in the heap until it
        reaches the top, or until the cancelled ones are many."""
        if not self.coarse:
            # Not in the heap (a timer of its own): nothing to drop.
            return
        self.cancelled += 1
        if self.cancelled > _CANCELLED_REBUILD and 2 * self.cancelled > len(self.coarse):
            self.coarse = [e for e in self.coarse if not e[2].done()]
            heapq.heapify(self.coarse)
            self.cancelled = 0

    def _arm(self, loop: asyncio.AbstractEventLoop, deadline_ns: int) -> None:
        self.coarse_at = deadline_ns
        self.coarse_handle = loop.call_later(
            max(deadline_ns - _mono(), 0) / 1e9, self._fire_coarse, loop
        )

    def _fire_coarse(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop timer: resolves every coarse sleep due by its time (as
        the loop would have fired their own timers; a sleep that finds its
        deadline not reached goes on with the waiter), then arms for the
        next. Cancelled sleeps leave the heap when they reach its top."""
        self.coarse_handle = None
        now = _mono()
        if now + _EARLY_NS < self.coarse_at:
            self.early = True
        due = max(now, self.coarse_at)
        heap = self.coarse
        while heap and heap[0][0] <= due:
            fut = heapq.heappop(heap)[2]
            if fut.done():
                self.cancelled = max(self.cancelled - 1, 0)
            else:
                fut.set_result(None)
        while heap and heap[0][2].done():
            heapq.heappop(heap)
            self.cancelled = max(self.cancelled - 1, 0)
        if heap:
            self._arm(loop, heap[0][0])


_TIMERS: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopTimers]" = weakref.WeakKeyDictionary()

#: The loop asked for last and its timers, one tuple (assigned at once, so a
#: thread running another loop never pairs one's loop with the other's
#: timers): most programs run one loop, and this spares the weak dictionary.
_LAST: "Optional[Tuple[weakref.ref[asyncio.AbstractEventLoop], _LoopTimers]]" = None


def _timers_of(loop: asyncio.AbstractEventLoop) -> _LoopTimers:
    global _LAST
    last = _LAST
    if last is not None and last[0]() is loop:
        return last[1]
    timers = _TIMERS.get(loop)
    if timers is None:
        timers = _TIMERS[loop] = _LoopTimers(loop)
    _LAST = (weakref.ref(loop), timers)
    return timers


@types.coroutine
def _yield() -> Generator[None, None, None]:
    """One trip round the loop (what ``asyncio.sleep(0)`` does, one frame less)."""
    yield


_mono = time.monotonic_ns


async def _coarse(loop: asyncio.AbstractEventLoop, deadline_ns: int) -> None:
    """A coarse wait on a loop whose timer fires early (uvloop, whose clock
    is in whole milliseconds): a loop timer of its own until the deadline,
    as ``asyncio.sleep`` waits (its steps written out: one coroutine less
    per sleep). It may return before the deadline: the caller hands the
    rest to the waiter. On other loops a coarse sleep shares the loop's
    one coarse timer (``_LoopTimers.coarse_wait``)."""
    fut: asyncio.Future[None] = loop.create_future()
    handle = loop.call_later(max(deadline_ns - _mono(), 0) / 1e9, _set_result, fut)
    try:
        await fut
    finally:
        handle.cancel()


def _set_result(fut: "asyncio.Future[None]") -> None:
    if not fut.done():
        fut.set_result(None)


async def _pause(wait: "_keeptime._AsyncSleep", step: int, timers: _LoopTimers) -> None:
    """What ``wait.step()`` asked for: one loop round, or the timer's firing.
    Cancellation (or the coroutine being closed) disarms the timer."""
    if step == _YIELD:
        await _yield()
        return
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[None] = loop.create_future()
    timers.futures[wait.id] = fut
    try:
        await fut
    except BaseException:
        wait.cancel()
        raise
    finally:
        if timers.futures.get(wait.id) is fut:
            del timers.futures[wait.id]


# The loops below are written out in both functions so that the path from the
# last spin back to the caller is as short as Python allows: the sleep's
# lateness as the caller sees it is mostly that path.


async def sleep_until_ns(deadline_ns: int) -> int:
    """Sleep precisely until ``deadline_ns`` (a ``time.monotonic_ns()``
    reading) and return the first clock reading at or after it (never
    earlier). A past deadline returns at once, without yielding."""
    loop = asyncio.get_running_loop()
    timers = _timers_of(loop)
    wait = _keeptime._AsyncSleep(timers.signal, deadline_ns)
    step = wait.step()
    while step:
        if step == _COARSE:
            try:
                await timers.coarse_wait(loop, deadline_ns)
            except BaseException:
                timers.coarse_cancelled()
                raise
            now = _mono()
            if now >= deadline_ns:
                return now
            # The loop's timer returned early: the rest is the waiter's.
            wait.waiter_coarse()
        else:
            await _pause(wait, step, timers)
        step = wait.step()
    return wait.woke_ns


@overload
async def sleep(delay: float) -> None: ...
@overload
async def sleep(delay: float, result: _T) -> _T: ...


async def sleep(delay: float, result: Optional[_T] = None) -> Optional[_T]:
    """Coroutine that completes after ``delay`` seconds, precisely: never
    earlier, typically within a µs or two after. Returns ``result``, like
    :func:`asyncio.sleep`, whose signature and conventions it follows (see
    the module docs for where it differs from the blocking
    :func:`keeptime.sleep`): zero or negative yields once and returns;
    ``TypeError`` for a non-number, ``ValueError`` for NaN, ``OverflowError``
    past 2**64 - 1 ns."""
    deadline = _keeptime._async_deadline_ns(delay)
    if deadline is None:
        await _yield()
        return result
    loop = asyncio.get_running_loop()
    timers = _timers_of(loop)
    wait = _keeptime._AsyncSleep(timers.signal, deadline)
    step = wait.step()
    while step:
        if step == _COARSE:
            try:
                await timers.coarse_wait(loop, deadline)
            except BaseException:
                timers.coarse_cancelled()
                raise
            if _mono() >= deadline:
                return result
            wait.waiter_coarse()
        else:
            await _pause(wait, step, timers)
        step = wait.step()
    return result


async def _next_tick(ticker: Ticker) -> Tick:
    """``Ticker.__anext__``: the core's ticker loop (the ticker spec's
    *driver*) with a precise asyncio wait as its hook: poll, wait, record,
    poll again at the wait's last reading if the schedule changed meanwhile."""
    step = ticker._poll(time.monotonic_ns())
    while not isinstance(step, Tick):
        woke = await sleep_until_ns(step)
        tick = ticker._woke(step, woke)
        if tick is not None:
            return tick
        step = ticker._poll(woke)
    return step


def capacity() -> int:
    """The waiter's stated capacity: how many deadlines per second it serves
    precisely on this host (``keeptime::waiter::capacity()``: a quarter CPU
    second over the learned cost of one precise deadline, the loop's own steps
    included). Past it, sleeps degrade to the loop's own timer.

    >>> capacity() > 0
    True
    """
    return _keeptime._waiter_capacity()[0]


def _waiter_state() -> "tuple[int, bool]":
    """The process-wide waiter: ``(armed timers, parked)``. For tests."""
    return _keeptime._waiter_state()
