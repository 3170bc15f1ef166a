"""Real-time invariants only: never early. Accuracy is the benchmark's business."""

import time

import pytest

import keeptime

DURATIONS_NS = [0, 1, 1_000, 10_000, 100_000, 1_000_000, 3_000_000]


@pytest.mark.parametrize("ns", DURATIONS_NS)
def test_sleep_is_never_early(ns):
    for _ in range(5):
        start = time.monotonic_ns()
        keeptime.sleep(ns / 1e9)
        assert time.monotonic_ns() - start >= ns


@pytest.mark.parametrize("ns", DURATIONS_NS)
def test_sleep_ns_is_never_early(ns):
    for _ in range(5):
        start = time.monotonic_ns()
        keeptime.sleep_ns(ns)
        assert time.monotonic_ns() - start >= ns


@pytest.mark.parametrize("ns", DURATIONS_NS)
def test_sleep_until_ns_returns_a_reading_at_or_after_the_deadline(ns):
    for _ in range(5):
        deadline = time.monotonic_ns() + ns
        woke = keeptime.sleep_until_ns(deadline)
        after = time.monotonic_ns()
        assert deadline <= woke <= after  # same clock as time.monotonic_ns
        assert time.perf_counter_ns() >= deadline  # and as perf_counter_ns on Linux


def test_past_deadline_returns_at_once():
    now = time.monotonic_ns()
    assert keeptime.sleep_until_ns(0) >= now
    assert keeptime.sleep_until_ns(now - 1_000_000) >= now


def test_int_seconds():
    start = time.monotonic_ns()
    keeptime.sleep(True)  # an int, like time.sleep(True): one second
    assert time.monotonic_ns() - start >= 1_000_000_000


def test_float_seconds_round_up_never_down():
    # 1e-5 s is 10000.000000000002 ns as a float: rounded up to 10001 ns.
    start = time.monotonic_ns()
    keeptime.sleep(1e-5)
    assert time.monotonic_ns() - start >= 10_001


@pytest.mark.parametrize("mode", ["exact", "spin"])
def test_sleeper_modes_are_never_early(mode):
    s = keeptime.Sleeper(mode=mode)
    assert s.mode == mode
    for ns in DURATIONS_NS:
        deadline = time.monotonic_ns() + ns
        assert s.sleep_until_ns(deadline) >= deadline
        start = time.monotonic_ns()
        s.sleep_ns(ns)
        assert time.monotonic_ns() - start >= ns
        start = time.monotonic_ns()
        s.sleep(ns / 1e9)
        assert time.monotonic_ns() - start >= ns


def test_efficient_mode_sleeps_about_as_asked():
    # Efficient may end a few µs early by design; it still sleeps.
    s = keeptime.Sleeper(mode="efficient")
    start = time.monotonic_ns()
    s.sleep(0.002)
    assert time.monotonic_ns() - start >= 1_000_000


def test_timer_slack_knob():
    assert keeptime.Sleeper().timer_slack is True
    s = keeptime.Sleeper("exact", timer_slack=False)
    assert s.timer_slack is False
    deadline = time.monotonic_ns() + 200_000
    assert s.sleep_until_ns(deadline) >= deadline


def test_sleeper_repr():
    assert repr(keeptime.Sleeper()) == "keeptime.Sleeper(mode='exact', timer_slack=True)"
    assert repr(keeptime.Sleeper("spin", timer_slack=False)) == "keeptime.Sleeper(mode='spin', timer_slack=False)"


def test_sleep_returns_none_like_time_sleep():
    assert keeptime.sleep(0) is None
    assert keeptime.sleep_ns(0) is None
    assert keeptime.Sleeper().sleep(0) is None


def test_the_warm_up_runs_before_the_final_spin_only_where_it_belongs():
    from keeptime import _keeptime

    calls = []
    read = time.monotonic_ns

    def counting_read():
        calls.append(read())
        return calls[-1]

    defaults = keeptime._warm_up.__defaults__
    keeptime._warm_up.__defaults__ = (counting_read, defaults[1])
    try:
        spin = keeptime.Sleeper("spin")
        for _ in range(20):
            deadline = time.monotonic_ns() + 300_000
            spin.sleep_until_ns(deadline)
            assert time.monotonic_ns() >= deadline
        assert 1 <= len(calls) <= 20  # at most once per sleep, before its final spin
        calls.clear()
        efficient = keeptime.Sleeper("efficient")  # no final spin, no warm-up
        for _ in range(5):
            efficient.sleep(0.0003)
        assert calls == []
        _keeptime._set_warm_up(None)  # switched off: the core's own hand-off only
        for _ in range(5):
            deadline = time.monotonic_ns() + 300_000
            spin.sleep_until_ns(deadline)
            assert time.monotonic_ns() >= deadline
        assert calls == []
    finally:
        keeptime._warm_up.__defaults__ = defaults
        _keeptime._set_warm_up(keeptime._warm_up)


def test_a_sleeper_counts_one_sleep_per_call_that_waited():
    s = keeptime.Sleeper()
    for ns in (300_000, 2_000_000, 10_000_000):
        deadline = time.monotonic_ns() + ns
        s.sleep_until_ns(deadline)
        assert time.monotonic_ns() >= deadline
    s.sleep_until_ns(0)  # a past deadline is no sleep
    st = s.stats()
    # One count per call at most (a call preempted past its deadline before
    # the core looked is no sleep), never one per core call inside it.
    assert 1 <= st.sleeps <= 3
    assert st.late <= st.sleeps
    assert st.cpu_estimate_ns >= st.spin_ns


def test_min_spin_is_a_sleeper_knob_and_never_early() -> None:
    s = keeptime.Sleeper(min_spin=60e-6)
    assert s.min_spin_ns == 60_000
    assert "min_spin=6e-05" in repr(s)
    for _ in range(50):
        deadline = time.monotonic_ns() + 300_000
        s.sleep_until_ns(deadline)
        assert time.monotonic_ns() >= deadline
    assert keeptime.Sleeper().min_spin_ns == 0


@pytest.mark.parametrize(
    ("value", "error"),
    [(-1e-6, ValueError), (float("nan"), ValueError), (1e30, OverflowError), ("1", TypeError)],
)
def test_min_spin_bad_input(value: object, error: type) -> None:
    with pytest.raises(error):
        keeptime.Sleeper(min_spin=value)  # type: ignore[arg-type]
