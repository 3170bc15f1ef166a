"""The real-clock Ticker: invariants only (deadlines never drift, ticks never early)."""

import itertools
import time

import pytest

import keeptime


def test_ticks_follow_the_absolute_schedule():
    period = 1_000_000
    ticker = keeptime.Ticker.from_ns(period)
    first = ticker.next_deadline_ns
    ticks = list(itertools.islice(ticker, 20))
    for k, tick in enumerate(ticks):
        # Deadlines are start + k·period whatever happened: no drift.
        assert tick.scheduled_ns == first + (tick.index - 1) * period
        assert tick.index == k + 1 + sum(t.skipped for t in ticks[: k + 1])
    now = time.monotonic_ns()
    assert now >= ticks[-1].scheduled_ns
    stats = ticker.stats
    assert stats.ticks == 20
    assert stats.skipped == sum(t.skipped for t in ticks)
    # Recorded at the hand-off (spec/ticker.md): a wait that ends in a spin counts
    # as on time there, so the worst recorded lateness is at most the ticks'.
    assert stats.worst_lateness_ns <= max(t.lateness_ns for t in ticks)


def test_tick_is_never_early():
    ticker = keeptime.Ticker(0.0005)
    for _ in range(50):
        tick = ticker.tick()
        assert time.monotonic_ns() >= tick.scheduled_ns


@pytest.mark.parametrize("missed", ["skip", "burst", "delay"])
def test_missed_policies_after_an_overrun(missed):
    ticker = keeptime.Ticker(0.002, missed=missed)
    assert ticker.missed == missed
    first = ticker.tick()
    time.sleep(0.0075)  # overrun: slots 2, 3 and 4 pass
    late = ticker.tick()
    assert late.lateness_ns > 0
    if missed == "skip":
        assert late.index == 1 + 1 + late.skipped and late.skipped >= 2
    else:
        assert late.index == 2 and late.skipped == 0
    assert ticker.stats.missed >= 1 + late.skipped
    if missed == "delay":
        # The schedule restarts from the late tick: the next slot is one period after it.
        nxt = ticker.next_deadline_ns
        assert nxt - (late.scheduled_ns + late.lateness_ns) == 2_000_000
    assert first.index == 1


def test_default_policy_is_skip():
    assert keeptime.Ticker(1).missed == "skip"
    assert keeptime.Schedule(0, 1).missed == "skip"


def test_reset_restarts_one_period_from_now():
    # The schedule's arithmetic, on simulated time: exact.
    schedule = keeptime.Schedule(0, 10_000_000)
    schedule.reset(30_000_000)  # three periods later, nothing ticked
    assert schedule.next_deadline_ns == 40_000_000
    assert schedule.poll(35_000_000) == 40_000_000
    tick = schedule.woke(40_000_100)
    assert (tick.index, tick.skipped, tick.scheduled_ns) == (1, 0, 40_000_000)
    assert schedule.stats.missed == 0
    # The real ticker: reset reads the clock once, between the caller's two readings.
    ticker = keeptime.Ticker(0.01)
    before = time.monotonic_ns()
    ticker.reset()
    after = time.monotonic_ns()
    assert before + 10_000_000 <= ticker.next_deadline_ns <= after + 10_000_000
    deadline = ticker.next_deadline_ns
    tick = ticker.tick()
    assert time.monotonic_ns() >= deadline
    assert tick.index >= 1 and tick.scheduled_ns >= deadline  # a stall may skip slots, never rewind


def test_period_is_settable():
    ticker = keeptime.Ticker(0.001)
    assert ticker.period == 0.001 and ticker.period_ns == 1_000_000
    ticker.period = 0.002
    assert ticker.period_ns == 2_000_000
    ticker.period_ns = 500_000
    assert ticker.period == 0.0005
    tick = ticker.tick()
    assert time.monotonic_ns() >= tick.scheduled_ns


def test_tick_and_stats_values():
    tick = keeptime.Tick(3, 1_000, 412)
    assert (tick.index, tick.scheduled_ns, tick.lateness_ns, tick.skipped) == (3, 1_000, 412, 0)
    assert repr(tick) == "keeptime.Tick(index=3, scheduled_ns=1000, lateness_ns=412, skipped=0)"
    assert tick == keeptime.Tick(3, 1_000, 412, 0)
    assert len({tick, keeptime.Tick(3, 1_000, 412, 0)}) == 1
    with pytest.raises(AttributeError):
        tick.index = 4
    stats = keeptime.TickerStats(5, 2, 1, 900)
    assert stats.to_dict() == {"ticks": 5, "missed": 2, "skipped": 1, "worst_lateness_ns": 900}
    assert repr(stats) == "keeptime.TickerStats(ticks=5, missed=2, skipped=1, worst_lateness_ns=900)"


def test_ticker_options_and_repr():
    ticker = keeptime.Ticker(0.001, "burst", mode="spin", timer_slack=False)
    assert repr(ticker) == "keeptime.Ticker(period_ns=1000000, missed='burst', next_index=1)"
    assert ticker.tick().index == 1
    assert ticker.next_index == 2
    with pytest.raises(ValueError):
        keeptime.Ticker(0.001, mode="nope")


def test_efficient_ticker_keeps_the_schedule():
    ticker = keeptime.Ticker(0.002, mode="efficient")
    ticks = [ticker.tick() for _ in range(5)]
    assert [t.scheduled_ns - ticks[0].scheduled_ns for t in ticks] == [
        (t.index - 1) * 2_000_000 for t in ticks
    ]


def test_schedule_is_the_pure_state_machine():
    s = keeptime.Schedule(1_000, 100)
    assert s.next_index == 1 and s.next_deadline_ns == 1_100 and s.period_ns == 100
    assert s.poll(1_050) == 1_100  # wait until 1_100
    assert s.woke(1_103) == keeptime.Tick(1, 1_100, 3, 0)
    late = s.poll(1_450)  # slots 2 (1_200), 3 (1_300) and 4 (1_400) passed: skip to 4
    assert late == keeptime.Tick(4, 1_400, 50, 2)
    assert s.stats == keeptime.TickerStats(ticks=2, missed=3, skipped=2, worst_lateness_ns=50)
    s.reset(2_000)
    assert s.next_deadline_ns == 2_100 and s.next_index == 5
    assert "next_index=5" in repr(s)


def test_a_ticker_takes_a_sleepers_settings():
    ticker = keeptime.Ticker(0.001, mode="exact", min_spin=20e-6, tail_target="strict")
    assert ticker.min_spin_ns == 20_000
    assert ticker.tail_target == keeptime.TAIL_STRICT
    assert keeptime.Ticker.from_ns(1_000_000, tail_target=0.02).tail_target == 0.02
    assert keeptime.Ticker(0.001).tail_target == keeptime.Sleeper().tail_target
    assert keeptime.Ticker(0.001).min_spin_ns == 0
    tick = ticker.tick()
    assert time.monotonic_ns() >= tick.scheduled_ns


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"tail_target": 0.0}, ValueError),
        ({"tail_target": 1.0}, ValueError),
        ({"tail_target": float("nan")}, ValueError),
        ({"tail_target": "sometimes"}, ValueError),
        ({"min_spin": -1e-6}, ValueError),
        ({"min_spin": float("nan")}, ValueError),
    ],
)
def test_a_tickers_sleeper_settings_are_checked_as_a_sleepers(kwargs, error):
    with pytest.raises(error):
        keeptime.Sleeper(**kwargs)
    with pytest.raises(error):
        keeptime.Ticker(0.001, **kwargs)
