"""Threads: per-thread estimator state, the GIL released while waiting."""

import threading
import time

import pytest

import keeptime


def test_eight_threads_never_return_early():
    early = []
    errors = []

    def worker(seed):
        try:
            for i in range(150):
                ns = (10_000, 50_000, 100_000, 300_000, 1_000_000)[(seed + i) % 5]
                deadline = time.monotonic_ns() + ns
                if i % 2:
                    keeptime.sleep_until_ns(deadline)
                else:
                    keeptime.sleep_ns(ns)
                now = time.monotonic_ns()
                if now < deadline:
                    early.append((seed, i, deadline - now))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not early


def test_gil_is_released_while_sleeping():
    # A C extension holding the GIL for 200 ms would let the counter make no
    # progress at all; with the GIL released it counts freely.
    count = 0
    stop = threading.Event()

    def counter():
        nonlocal count
        while not stop.is_set():
            count += 1

    t = threading.Thread(target=counter)
    t.start()
    try:
        while count == 0:  # the counter runs (the GIL switches every 5 ms)
            pass
        before = count
        keeptime.sleep(0.2)
        assert count > before
        before = count
        keeptime.Sleeper(mode="spin").sleep(0.05)
        assert count > before
        before = count
        ticker = keeptime.Ticker(0.05)
        ticker.tick()
        assert count > before
    finally:
        stop.set()
        t.join()


def _until_busy(probe, thread):
    """Call ``probe()`` until it raises RuntimeError (the other thread is inside its wait).

    Synchronises on what the object says, not on a guess of how long a thread takes to start."""
    while thread.is_alive():
        try:
            probe()
        except RuntimeError as e:
            return e
    pytest.fail("the other thread ended its wait before it was ever seen inside it")


def test_a_sleeper_sleeps_for_one_thread_at_a_time():
    s = keeptime.Sleeper()

    def long_sleep():
        while True:  # the probe below may hold the sleeper for a µs as this thread starts
            try:
                return s.sleep(1)
            except RuntimeError:
                continue

    t = threading.Thread(target=long_sleep)
    t.start()
    try:
        busy = _until_busy(lambda: s.sleep(1e-6), t)
        assert "already sleeping in another thread" in str(busy)
        s.mode = "spin"  # the mode can change any time; it applies from the next sleep
        assert s.mode == "spin"
    finally:
        t.join()
    s.sleep(0.001)  # free again


def test_ticker_can_be_inspected_and_changed_while_another_thread_ticks():
    ticker = keeptime.Ticker(0.3)
    result = []
    t = threading.Thread(target=lambda: result.append(ticker.tick()))
    t.start()
    while not ticker._ticking:  # the other thread holds the ticker's wait
        assert t.is_alive(), "the ticking thread ended before it was seen waiting"
    assert ticker.stats.ticks == 0  # readable during the wait
    with pytest.raises(RuntimeError, match="already ticking"):
        ticker.tick()
    ticker.period = 0.4  # honoured by the waiting thread: slot 1 is now due at start + 0.4 s
    t.join()
    (tick,) = result
    assert tick.index == 1
    assert tick.scheduled_ns == ticker.next_deadline_ns - 400_000_000
    assert time.monotonic_ns() >= tick.scheduled_ns


def test_sleeper_and_ticker_can_move_between_threads():
    s = keeptime.Sleeper()
    ticker = keeptime.Ticker(0.001)
    ticks = []
    early = []

    def use():
        deadline = time.monotonic_ns() + 50_000_000  # no preemption outlasts 50 ms between two reads
        s.sleep_until_ns(deadline)
        if time.monotonic_ns() < deadline:
            early.append(deadline)
        tick = ticker.tick()
        if time.monotonic_ns() < tick.scheduled_ns:
            early.append(tick.scheduled_ns)
        ticks.append(tick)

    for _ in range(3):
        t = threading.Thread(target=use)
        t.start()
        t.join()
    assert not early
    # One sleeper: what it spent in three threads is in one account.
    assert s.stats().sleeps == 3
    # One schedule: slots in order, each due a whole number of periods after the first.
    indices = [t.index for t in ticks]
    assert indices[0] >= 1 and indices == sorted(set(indices))
    for t in ticks:
        assert t.scheduled_ns - ticks[0].scheduled_ns == (t.index - ticks[0].index) * 1_000_000
    assert ticker.stats.ticks == 3
    assert ticker.stats.skipped == indices[-1] - 3
    assert ticker.next_index == indices[-1] + 1
