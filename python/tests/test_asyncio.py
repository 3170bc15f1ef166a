"""keeptime.asyncio and ``async for`` over a Ticker, on real event loops.

Real time: only invariants are asserted (never early, everything finishes,
nothing left armed, other tasks make progress). The figures come from
``python -m keeptime bench-async``.
"""

import asyncio
import gc
import decimal
import fractions
import math
import time

import pytest

import keeptime
import keeptime.asyncio as kta


def loops():
    """asyncio's default loop, and uvloop's when it is installed."""
    out = [pytest.param(asyncio.new_event_loop, id="asyncio")]
    try:
        import uvloop
    except ImportError:
        out.append(pytest.param(None, id="uvloop", marks=pytest.mark.skip(reason="uvloop is not installed")))
    else:
        out.append(pytest.param(uvloop.new_event_loop, id="uvloop"))
    return out


def run(new_loop, coro):
    loop = new_loop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()


def waiter_parks():
    """Waits (up to 10 s) for the process-wide waiter to park."""
    until = time.monotonic() + 10
    while time.monotonic() < until:
        if kta._waiter_state()[1]:
            return True
        time.sleep(0.001)
    return False


def test_keeptime_asyncio_is_reachable_from_the_package():
    assert keeptime.asyncio is kta
    assert kta.sleep.__name__ == "sleep"


@pytest.mark.parametrize("new_loop", loops())
def test_sleeps_are_never_early(new_loop):
    async def main():
        for i in range(300):
            delay = ((i * 7919) % 2_000_000 + 1_000) / 1e9
            deadline = time.monotonic_ns() + math.ceil(delay * 1e9)
            if i % 2:
                assert await kta.sleep(delay, result=i) == i
            else:
                woke = await kta.sleep_until_ns(deadline)
                assert woke >= deadline
            assert time.monotonic_ns() >= deadline, f"sleep({delay}) returned early"

    run(new_loop, main())
    assert kta._waiter_state()[0] == 0


@pytest.mark.parametrize("new_loop", loops())
def test_the_waiter_started_from_the_default_profile_is_never_early(new_loop):
    s = keeptime.Sleeper()
    for _ in range(20):
        s.sleep(0.0003)

    async def main():
        for i in range(40):
            deadline = time.monotonic_ns() + 300_000 + i * 20_000
            assert await kta.sleep_until_ns(deadline) >= deadline
            assert time.monotonic_ns() >= deadline

    keeptime.set_default_profile(s.profile())
    try:
        run(new_loop, main())
    finally:
        keeptime.set_default_profile(None)
    assert kta._waiter_state()[0] == 0


@pytest.mark.parametrize("new_loop", loops())
def test_a_thousand_concurrent_sleeps_finish_never_early(new_loop):
    async def one(deadline):
        woke = await kta.sleep_until_ns(deadline)
        return woke >= deadline and time.monotonic_ns() >= deadline

    async def main():
        start = time.monotonic_ns()
        deadlines = [start + 1_000_000 + (i * 20_011) % 20_000_000 for i in range(1000)]
        results = await asyncio.gather(*(one(d) for d in deadlines))
        # The loop's shared coarse timer has served every coarse sleep.
        timers = kta._timers_of(asyncio.get_running_loop())
        assert timers.coarse == [] and timers.coarse_handle is None
        return results

    results = run(new_loop, main())
    assert len(results) == 1000 and all(results)
    assert kta._waiter_state()[0] == 0


@pytest.mark.parametrize("new_loop", loops())
def test_bursts_past_capacity_complete_never_early_two_rounds(new_loop):
    """1,000 deadlines 5 µs apart, twice on the same loop: past the waiter's
    capacity most sleeps await the loop's own timer; each task checks its own
    clock after ``await``."""

    ahead = [0]

    async def one(deadline):
        # A sleep first polled at or past its deadline, or within its
        # finishing spin, decides nothing; one well ahead of it decides.
        if deadline - time.monotonic_ns() > 5_000_000:
            ahead[0] += 1
        await kta.sleep_until_ns(deadline)
        return time.monotonic_ns() >= deadline

    async def main():
        for _ in range(2):
            start = time.monotonic_ns() + 20_000_000
            results = await asyncio.gather(*(one(start + i * 5_000) for i in range(1000)))
            assert len(results) == 1000 and all(results)
            assert kta._waiter_state()[0] == 0

    _, _, _, coarse0 = keeptime._keeptime._waiter_capacity()
    precise0 = keeptime._keeptime._waiter_precise()
    gc.disable()  # no collection between a task's check and its first step
    try:
        run(new_loop, main())
    finally:
        gc.enable()
    cap, cost, _, coarse = keeptime._keeptime._waiter_capacity()
    precise = keeptime._keeptime._waiter_precise()
    assert cap == kta.capacity() and isinstance(cap, int) and cap >= 1
    assert cost >= 1
    # Each sleep polled well ahead of its deadline was admitted as precise
    # (a timer, or a finish begun with a yield) or decided coarse, at least
    # once; one whose loop timer fired early decides once more, at most.
    decisions = (precise - precise0) + (coarse - coarse0)
    assert ahead[0] <= decisions <= 4000


@pytest.mark.parametrize("new_loop", loops())
def test_cancellation_disarms_the_timer(new_loop):
    def coarse():
        return keeptime._keeptime._waiter_capacity()[3]

    async def main():
        # Each sleep is armed with the waiter, or (past the capacity) coarse:
        # awaiting the loop's own timer. One loop round runs a new task's
        # first step.
        c0 = coarse()
        task = asyncio.ensure_future(kta.sleep(30))
        await asyncio.sleep(0)
        assert kta._waiter_state()[0] + (coarse() - c0) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert kta._waiter_state()[0] == 0
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(kta.sleep(30), 0.005)
        assert kta._waiter_state()[0] == 0
        c0 = coarse()
        many = [asyncio.ensure_future(kta.sleep(30 + i)) for i in range(100)]
        await asyncio.sleep(0)
        assert kta._waiter_state()[0] + (coarse() - c0) == 100
        for t in many:
            t.cancel()
        await asyncio.gather(*many, return_exceptions=True)
        assert kta._waiter_state()[0] == 0

    run(new_loop, main())
    assert waiter_parks(), "the waiter kept running with nothing armed"


@pytest.mark.parametrize("new_loop", loops())
def test_other_tasks_keep_running_while_100_timers_are_pending(new_loop):
    async def main():
        counter = 0
        done = False

        async def count():
            nonlocal counter
            while not done:
                counter += 1
                await asyncio.sleep(0)

        counting = asyncio.ensure_future(count())
        start = time.monotonic_ns()
        await asyncio.gather(*(kta.sleep_until_ns(start + 5_000_000 + i * 50_000) for i in range(100)))
        done = True
        await counting
        return counter

    assert run(new_loop, main()) > 0


def test_bad_input_follows_asyncio_sleep():
    async def main():
        assert await kta.sleep(-1, "r") == "r"  # negative: at once, like asyncio.sleep
        assert await kta.sleep(-math.inf) is None
        assert await kta.sleep(0) is None
        assert await kta.sleep(fractions.Fraction(1, 10_000)) is None
        assert await kta.sleep(decimal.Decimal("0.0001")) is None
        for bad in ["1", None, b"1", [1], 1j]:
            with pytest.raises(TypeError):
                await kta.sleep(bad)
            with pytest.raises(TypeError):
                await asyncio.sleep(bad)  # the same kind of error as asyncio's
        with pytest.raises(ValueError, match="NaN"):
            await kta.sleep(math.nan)
        for huge in [math.inf, 1e300, 2.0**64 / 1e9, 10**30]:
            with pytest.raises(OverflowError):
                await kta.sleep(huge)
        assert kta._waiter_state()[0] == 0

    asyncio.run(main())


def test_async_ticker_ticks_in_order_never_early_and_skips():
    async def main():
        ticker = keeptime.Ticker(0.001, missed="burst")  # every slot, in order
        n = 0
        async for tick in ticker:
            n += 1
            assert tick.index == n and tick.skipped == 0
            assert time.monotonic_ns() >= tick.scheduled_ns
            if n == 20:
                break
        skipping = keeptime.Ticker(0.001)
        first = await skipping.__anext__()
        time.sleep(0.0035)  # the body overruns 3.5 periods
        late = await skipping.__anext__()
        assert late.skipped >= 2 and late.index == first.index + 1 + late.skipped
        nxt = await skipping.__anext__()
        assert nxt.index == late.index + 1 + nxt.skipped
        assert time.monotonic_ns() >= nxt.scheduled_ns
        assert skipping.stats.ticks == 3

    asyncio.run(main())


def test_a_cancelled_async_tick_consumes_no_slot():
    async def main():
        ticker = keeptime.Ticker(60)
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(ticker.__anext__(), 0.005)
        assert ticker.next_index == 1
        assert kta._waiter_state()[0] == 0

    asyncio.run(main())


def test_sleep_needs_a_running_loop():
    with pytest.raises(RuntimeError):
        kta.sleep(0.001).send(None)


@pytest.mark.parametrize("bad", ["0", "-1", "x", "101"])
def test_bench_async_rejects_a_bad_scale(bad, capsys):
    from keeptime.__main__ import main

    with pytest.raises(SystemExit) as e:
        main(["bench-async", "--scale", bad])
    assert e.value.code == 2
    assert "scale" in capsys.readouterr().err or "number" in capsys.readouterr().err


def test_the_module_docs_example_runs():
    import doctest

    failures, tried = doctest.testmod(kta, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0


def test_an_early_loop_timer_hands_the_rest_to_the_waiter():
    # Sleeps to one deadline fill its slot's precise places (at most 250 a
    # 1 ms slot at any capacity); the next ones are coarse, on the loop's own
    # timer (step 3). After the loop's timer returned early, the same sleep
    # arms a coarse timer with the waiter instead (step 2, armed).
    signal = keeptime._keeptime._LoopSignal()
    deadline = time.monotonic_ns() + 3_600_000_000_000
    sleeps = [keeptime._keeptime._AsyncSleep(signal, deadline) for _ in range(300)]
    steps = [s.step() for s in sleeps]
    coarse = [s for s, step in zip(sleeps, steps) if step == 3]
    assert coarse and set(steps) <= {2, 3}
    waiting = kta._waiter_state()[0]
    assert not coarse[0].armed
    coarse[0].waiter_coarse()
    assert coarse[0].step() == 2 and coarse[0].armed
    assert kta._waiter_state()[0] == waiting + 1
    for s in sleeps:
        s.cancel()
    assert kta._waiter_state()[0] == 0


def test_coarse_sleeps_share_one_loop_timer(monkeypatch):
    """On asyncio's own loop the coarse sleeps share one loop timer, armed at
    the earliest deadline: it resolves every sleep due by its time, drops the
    cancelled ones, arms for the next, and a timer that fires early marks the
    loop (its coarse sleeps then take a timer each). A fake clock and a
    recording ``call_later``: decisions only."""
    now = [1_000_000]
    monkeypatch.setattr(kta, "_mono", lambda: now[0])

    class Handle:
        def __init__(self, delay, callback, args):
            self.delay, self.callback, self.args, self.cancelled = delay, callback, args, False

        def cancel(self):
            self.cancelled = True

        def fire(self):
            assert not self.cancelled
            self.callback(*self.args)

    loop = asyncio.new_event_loop()
    handles = []

    def call_later(delay, callback, *args):
        handles.append(Handle(delay, callback, args))
        return handles[-1]

    monkeypatch.setattr(loop, "call_later", call_later)
    try:
        timers = kta._LoopTimers(loop)
        assert not timers.early
        fut = {d: loop.create_future() for d in (1_005_000, 1_003_000, 1_009_000)}
        twin = loop.create_future()
        for d, f in fut.items():
            timers.add_coarse(loop, d, f)
        timers.add_coarse(loop, 1_003_000, twin)
        # Armed for 5 µs ahead, then again for the earlier deadline: one live timer.
        assert [h.cancelled for h in handles] == [True, False]
        assert timers.coarse_handle is handles[1] and handles[1].delay == 3_000 / 1e9
        # At 1.003 ms both sleeps of that deadline are due, the others not.
        now[0] = 1_003_000
        handles[1].fire()
        assert fut[1_003_000].result() is None and twin.result() is None
        assert not fut[1_005_000].done() and not fut[1_009_000].done()
        assert timers.coarse_handle is handles[2] and handles[2].delay == 2_000 / 1e9
        # A cancelled sleep resolves nothing and leaves the heap at the top.
        fut[1_005_000].cancel()
        now[0] = 1_005_400
        handles[2].fire()
        assert not fut[1_009_000].done() and len(timers.coarse) == 1
        assert timers.coarse_handle is handles[3] and handles[3].delay == 3_600 / 1e9
        assert not timers.early
        # Fired 2 µs early: the loop is marked; the sleep is resolved (it
        # finds its deadline not reached and goes on with the waiter).
        now[0] = 1_007_000
        handles[3].fire()
        assert timers.early and fut[1_009_000].done()
        assert timers.coarse == [] and timers.coarse_handle is None and len(handles) == 4
        # Late: every sleep due by the clock is resolved in one firing.
        late = [loop.create_future() for _ in range(3)]
        for i, f in enumerate(late):
            timers.add_coarse(loop, 1_010_000 + i * 1_000, f)
        now[0] = 1_011_500
        handles[4].fire()
        assert [f.done() for f in late] == [True, True, False]
        assert timers.coarse_handle is handles[5] and handles[5].delay == 500 / 1e9
    finally:
        loop.close()


def test_a_loop_not_asyncio_s_own_gives_coarse_sleeps_a_timer_each():
    class Loop(asyncio.AbstractEventLoop):
        def add_reader(self, fd, callback, *args):
            pass

    assert kta._LoopTimers(Loop()).early


def test_cancelled_coarse_sleeps_do_not_pile_up():
    """Far coarse sleeps cancelled in numbers leave the shared timer's heap
    once they are more than 100 and half of it, not at their deadlines an
    hour later. Sleeps to one deadline fill its slot's precise places (at
    most 250 a 1 ms slot at any capacity); the others are coarse."""

    async def main():
        timers = kta._timers_of(asyncio.get_running_loop())
        deadline = time.monotonic_ns() + 3_600_000_000_000
        for _ in range(3):
            tasks = [asyncio.ensure_future(kta.sleep_until_ns(deadline)) for _ in range(600)]
            await asyncio.sleep(0)
            assert len(timers.coarse) >= 300
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            assert len(timers.coarse) <= 2 * kta._CANCELLED_REBUILD + 2
            assert kta._waiter_state()[0] == 0

    run(asyncio.new_event_loop, main())
