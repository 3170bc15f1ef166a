"""Bad input gets the errors time.sleep users expect."""

import math
import time

import pytest

import keeptime

SLEEPS = [keeptime.sleep, keeptime.Sleeper().sleep]


@pytest.mark.parametrize("sleep", SLEEPS)
@pytest.mark.parametrize("bad", [-1, -0.5, -1e-9, -(10**30), -math.inf])
def test_negative_is_value_error(sleep, bad):
    with pytest.raises(ValueError, match="^sleep length must be non-negative$"):
        sleep(bad)


@pytest.mark.parametrize("sleep", SLEEPS)
def test_nan_is_value_error(sleep):
    with pytest.raises(ValueError, match="NaN"):
        sleep(math.nan)


@pytest.mark.parametrize("sleep", SLEEPS)
@pytest.mark.parametrize("bad", [math.inf, 1e300, 2.0**64 / 1e9, 10**30, 2**64])
def test_too_large_is_overflow_error(sleep, bad):
    with pytest.raises(OverflowError, match="too large"):
        sleep(bad)


@pytest.mark.parametrize("sleep", SLEEPS)
@pytest.mark.parametrize("bad", ["1", None, b"1", [1], 1j])
def test_wrong_type_is_type_error(sleep, bad):
    # time.sleep's own words since Python 3.10 (3.9 says "an integer is required").
    message = f"'{type(bad).__name__}' object cannot be interpreted as an integer"
    with pytest.raises(TypeError, match=f"^{message}$"):
        sleep(bad)
    with pytest.raises(TypeError):
        time.sleep(bad)


def test_zero_and_negative_zero_are_fine():
    keeptime.sleep(0)
    keeptime.sleep(-0.0)
    keeptime.sleep(False)
    keeptime.sleep_ns(0)


class Index:
    def __index__(self):
        return 0


def test_index_objects_are_ints_like_time_sleep():
    time.sleep(Index())
    keeptime.sleep(Index())
    keeptime.sleep_ns(Index())


@pytest.mark.parametrize(
    "sleep_ns", [keeptime.sleep_ns, keeptime.Sleeper().sleep_ns, keeptime.Sleeper().sleep_until_ns, keeptime.sleep_until_ns]
)
def test_nanosecond_functions_take_ints_only(sleep_ns):
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        sleep_ns(1.0)
    with pytest.raises(TypeError):
        sleep_ns("1")
    with pytest.raises(OverflowError, match="too large"):
        sleep_ns(2**64)


@pytest.mark.parametrize("sleep_ns", [keeptime.sleep_ns, keeptime.Sleeper().sleep_ns])
def test_negative_nanoseconds_is_value_error(sleep_ns):
    with pytest.raises(ValueError, match="^sleep length must be non-negative$"):
        sleep_ns(-1)


@pytest.mark.parametrize("sleep_until_ns", [keeptime.sleep_until_ns, keeptime.Sleeper().sleep_until_ns])
def test_negative_deadline_is_value_error(sleep_until_ns):
    with pytest.raises(ValueError, match="deadline must be non-negative"):
        sleep_until_ns(-1)


@pytest.mark.parametrize("period", [0, 0.0, -1, -0.001, 1e-10])
def test_ticker_period_must_be_positive(period):
    # 1e-10 s rounds up to 1 ns, which is positive: only the others fail.
    if period == 1e-10:
        assert keeptime.Ticker(period).period_ns == 1
        return
    with pytest.raises(ValueError, match="ticker period must be greater than zero"):
        keeptime.Ticker(period)


def test_ticker_zero_period_in_every_form():
    with pytest.raises(ValueError):
        keeptime.Ticker.from_ns(0)
    with pytest.raises(ValueError):
        keeptime.Schedule(0, 0)
    ticker = keeptime.Ticker(0.001)
    with pytest.raises(ValueError):
        ticker.period = 0
    with pytest.raises(ValueError):
        ticker.period_ns = 0
    assert ticker.period_ns == 1_000_000  # unchanged


def test_ticker_period_bad_types_and_values():
    with pytest.raises(ValueError, match="NaN"):
        keeptime.Ticker(math.nan)
    with pytest.raises(OverflowError):
        keeptime.Ticker(1e300)
    with pytest.raises(TypeError):
        keeptime.Ticker("1")
    with pytest.raises(TypeError):
        keeptime.Ticker.from_ns(1.5)


@pytest.mark.parametrize("make", [lambda m: keeptime.Sleeper(mode=m), lambda m: keeptime.Ticker(1, mode=m)])
def test_unknown_mode_is_value_error(make):
    with pytest.raises(ValueError, match="mode must be 'exact', 'efficient' or 'spin', not 'fast'"):
        make("fast")


def test_mode_setter_validates():
    s = keeptime.Sleeper()
    with pytest.raises(ValueError):
        s.mode = "fast"
    assert s.mode == "exact"
    s.mode = "SPIN"  # any case, like the CLI
    assert s.mode == "spin"


@pytest.mark.parametrize(
    "make", [lambda p: keeptime.Ticker(1, missed=p), lambda p: keeptime.Schedule(0, 1, p)]
)
def test_unknown_missed_policy_is_value_error(make):
    with pytest.raises(ValueError, match="missed must be 'skip', 'burst' or 'delay', not 'drop'"):
        make("drop")
