"""A Sleeper's tail target and stats: bad input gets the stdlib's
errors with nothing clamped, the target round-trips, and the stats of real
sleeps hold their invariants (never their timing: the machines are shared)."""

import math
import threading
import time
from fractions import Fraction

import pytest

import keeptime

ACCEPTS = (
    "a share strictly between 0 and 1 (at least 1e-06, e.g. 0.01 for 1 %) or 'relaxed', 'balanced' or 'strict'"
)


def _set_in_constructor(target):
    return keeptime.Sleeper(tail_target=target)


def _set_on_property(target):
    s = keeptime.Sleeper()
    s.tail_target = target
    return s


SETTERS = [_set_in_constructor, _set_on_property]


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("set_target", SETTERS)
@pytest.mark.parametrize(
    "bad, shown",
    [
        (math.nan, "nan"),
        (0, "0"),
        (0.0, "0.0"),
        (-0.01, "-0.01"),
        (1, "1"),
        (1.0, "1.0"),
        (1.5, "1.5"),
        (5e-7, "5e-07"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (True, "True"),
        (10**400, str(10**400)),
        ("fast", "'fast'"),
        ("", "''"),
        ("0.01", "'0.01'"),
        ("1%", "'1%'"),
    ],
)
def test_out_of_range_nan_and_unknown_names_are_value_errors(set_target, bad, shown):
    with pytest.raises(ValueError) as e:
        set_target(bad)
    assert str(e.value) == f"tail_target must be {ACCEPTS}, not {shown}"


@pytest.mark.parametrize("set_target", SETTERS)
@pytest.mark.parametrize("bad", [b"strict", [0.01], 1j, object(), {"share": 0.01}])
def test_non_numbers_are_type_errors(set_target, bad):
    with pytest.raises(TypeError) as e:
        set_target(bad)
    assert str(e.value) == f"tail_target must be {ACCEPTS}, not '{type(bad).__name__}'"


def test_none_means_the_default_only_in_the_constructor():
    assert keeptime.Sleeper(tail_target=None).tail_target == keeptime.TAIL_BALANCED
    s = keeptime.Sleeper()
    with pytest.raises(TypeError, match="not 'NoneType'$"):
        s.tail_target = None
    with pytest.raises((AttributeError, TypeError)):
        del s.tail_target


def test_a_rejected_target_changes_nothing():
    s = keeptime.Sleeper(tail_target="strict")
    for bad in (math.nan, 2.0, "fastest", [1]):
        with pytest.raises((ValueError, TypeError)):
            s.tail_target = bad
        assert s.tail_target == keeptime.TAIL_STRICT


def test_tail_target_is_keyword_only():
    with pytest.raises(TypeError):
        keeptime.Sleeper("exact", True, None, 0.01)  # type: ignore[misc]


# ---------------------------------------------------------------- round trips


def test_presets_are_the_specs():
    assert (keeptime.TAIL_RELAXED, keeptime.TAIL_BALANCED, keeptime.TAIL_STRICT) == (0.05, 0.01, 0.001)
    assert keeptime.Sleeper().tail_target == keeptime.TAIL_BALANCED  # the default
    for name, share in [("relaxed", 0.05), ("balanced", 0.01), ("strict", 0.001), ("STRICT", 0.001), (" Relaxed ", 0.05)]:
        assert keeptime.Sleeper(tail_target=name).tail_target == share


@pytest.mark.parametrize("share", [0.05, 0.01, 0.001, 0.002, 0.25, 0.5, 1e-6, 0.999999, 0.123456])
def test_a_share_round_trips(share):
    assert keeptime.Sleeper(tail_target=share).tail_target == share
    s = keeptime.Sleeper()
    s.tail_target = share
    assert s.tail_target == share


def test_shares_are_held_in_ppm_as_the_spec_rounds_them():
    # spec/sleep.md: a share converts to ppm as round(share · 10⁶).
    assert keeptime.Sleeper(tail_target=0.0123456).tail_target == 0.012346
    assert keeptime.Sleeper(tail_target=1.4e-6).tail_target == 1e-6
    assert keeptime.Sleeper(tail_target=Fraction(1, 8)).tail_target == 0.125  # anything with __float__


def test_repr_shows_a_non_default_target_and_reads_back():
    assert repr(keeptime.Sleeper()) == "keeptime.Sleeper(mode='exact', timer_slack=True)"
    s = keeptime.Sleeper(tail_target="strict", min_spin=2e-05)
    assert repr(s) == "keeptime.Sleeper(mode='exact', timer_slack=True, min_spin=2e-05, tail_target=0.001)"
    again = eval(repr(s), {"keeptime": keeptime})
    assert again.tail_target == s.tail_target and again.min_spin_ns == s.min_spin_ns


def test_the_target_can_be_set_while_another_thread_sleeps():
    s = keeptime.Sleeper()
    t = threading.Thread(target=s.sleep, args=(0.3,))
    t.start()
    while not s._sleeping:  # until the other thread is inside its sleep
        assert t.is_alive(), "the sleeping thread ended before it was seen sleeping"
    s.tail_target = "relaxed"  # no lock wait, no RuntimeError
    st = s.stats()  # readable during the sleep too: the sleep counts when it ends
    assert s._sleeping
    t.join()
    assert s.tail_target == keeptime.TAIL_RELAXED
    assert st.sleeps == 0
    assert s.stats().sleeps == 1
    assert s.stats().sleeps == 1


# ---------------------------------------------------------------- stats


def _check_invariants(st, calls):
    # A sleep whose deadline passed before keeptime looked (the thread was
    # preempted in between) does not count, so a call need not be a sleep.
    assert 1 <= st.sleeps <= calls
    assert 0 <= st.late <= st.sleeps
    assert st.os_waits >= 0
    assert st.cpu_estimate_ns >= st.spin_ns >= 0
    assert st.late_share == (st.late / st.sleeps if st.sleeps else 0.0)


@pytest.mark.parametrize("target", ["relaxed", "balanced", "strict"])
def test_exact_stats_invariants_on_real_sleeps(target):
    s = keeptime.Sleeper(tail_target=target)
    lengths = [2e-6, 20e-6, 100e-6, 300e-6, 1e-3, 2.5e-3] * 5
    for seconds in lengths:
        before = time.monotonic_ns()
        s.sleep(seconds)  # the deadline is taken inside, so every one of these waits
        assert time.monotonic_ns() - before >= seconds * 1e9 - 1  # never early
    st = s.stats()
    _check_invariants(st, len(lengths))
    assert st.os_waits >= 1  # sleeps of a millisecond and more wait on the OS
    assert st.spin_ns > 0  # and at least the short ones spin


def test_spin_mode_spins_and_never_waits_on_the_os():
    s = keeptime.Sleeper("spin")
    for _ in range(20):
        s.sleep_ns(50_000)
    st = s.stats()
    _check_invariants(st, 20)
    assert st.os_waits == 0 and st.late == 0
    assert st.spin_ns > 0 and st.cpu_estimate_ns == st.spin_ns


def test_efficient_mode_never_spins_and_is_never_counted_late():
    s = keeptime.Sleeper("efficient")
    for _ in range(20):
        s.sleep_ns(200_000)
    st = s.stats()
    _check_invariants(st, 20)
    assert st.spin_ns == 0 and st.late == 0
    assert st.os_waits >= 1


def test_only_sleeps_that_wait_are_counted():
    s = keeptime.Sleeper()
    s.sleep(0)
    s.sleep_ns(0)
    s.sleep_until_ns(0)
    s.sleep_until_ns(time.monotonic_ns() - 1)
    assert s.stats() == keeptime.SleeperStats()
    s.sleep(0.05)  # no preemption outlasts 50 ms between two clock reads
    assert s.stats().sleeps == 1


def test_reset_stats_starts_afresh():
    s = keeptime.Sleeper()
    for _ in range(5):
        s.sleep(0.0002)
    _check_invariants(s.stats(), 5)
    s.reset_stats()
    assert s.stats() == keeptime.SleeperStats()
    assert s.stats().late_share == 0.0
    s.sleep(0.05)
    _check_invariants(s.stats(), 1)


def test_stats_from_many_threads_add_up():
    s = keeptime.Sleeper()
    done = []

    def work():
        for _ in range(20):
            try:
                s.sleep_ns(100_000)
                done.append(1)
            except RuntimeError:
                pass  # one thread at a time: a busy sleeper says so

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert done  # at least the first thread's sleeps got through
    _check_invariants(s.stats(), len(done))


def test_sleeper_stats_is_a_value():
    a = keeptime.SleeperStats(sleeps=4, late=1, os_waits=5, spin_ns=6, cpu_estimate_ns=7, unproven_sleeps=2)
    assert (a.sleeps, a.late, a.os_waits, a.spin_ns, a.cpu_estimate_ns, a.unproven_sleeps, a.late_share) == (
        4,
        1,
        5,
        6,
        7,
        2,
        0.25,
    )
    assert a == keeptime.SleeperStats(4, 1, 5, 6, 7, 2) and hash(a) == hash(keeptime.SleeperStats(4, 1, 5, 6, 7, 2))
    assert a != keeptime.SleeperStats(4, 0, 5, 6, 7, 2)
    assert a != keeptime.SleeperStats(4, 1, 5, 6, 7)
    assert a.to_dict() == {"sleeps": 4, "late": 1, "os_waits": 5, "spin_ns": 6, "cpu_estimate_ns": 7, "unproven_sleeps": 2}
    assert repr(a) == (
        "keeptime.SleeperStats(sleeps=4, late=1, os_waits=5, spin_ns=6, cpu_estimate_ns=7, unproven_sleeps=2)"
    )
    assert eval(repr(a), {"keeptime": keeptime}) == a
    assert keeptime.SleeperStats().late_share == 0.0
    with pytest.raises(AttributeError):
        a.late = 0  # type: ignore[misc]
    with pytest.raises(OverflowError):
        keeptime.SleeperStats(sleeps=-1)
