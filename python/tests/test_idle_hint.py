"""The opt-in idle-latency hint (spec/idle-hint.md): bad values get
Python's errors and request nothing; a held request writes the strictest
live value and ends with its last holder; a refusal warns once per process
(RuntimeWarning) and changes nothing else.

The real /dev/cpu_dma_latency is never touched: ``_set_idle_hint_device``
(for tests only) points the process's requests at a temporary file (held) or
a path that does not exist (refused)."""

import gc
import struct
import subprocess
import sys
import textwrap
import time
import warnings

import pytest

import keeptime
from keeptime import _keeptime

MAKERS = [
    pytest.param(lambda **kw: keeptime.Sleeper(**kw), id="Sleeper"),
    pytest.param(lambda **kw: keeptime.Ticker(0.001, **kw), id="Ticker"),
    pytest.param(lambda **kw: keeptime.Ticker.from_ns(1_000_000, **kw), id="Ticker.from_ns"),
]


@pytest.fixture
def device(tmp_path):
    """A regular file standing in for /dev/cpu_dma_latency for this test."""
    path = tmp_path / "cpu_dma_latency"
    path.write_bytes(b"")
    _keeptime._set_idle_hint_device(str(path))
    yield path
    gc.collect()
    _keeptime._set_idle_hint_device(None)


def written(path):
    """Every value written to the fake device, in order (native s32 each)."""
    data = path.read_bytes()
    return [v for (v,) in struct.iter_unpack("=i", data)]


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("bad", [-1, -(2**40), 2**31, 2**63, 2**100])
def test_out_of_range_is_value_error(make, bad, device):
    with pytest.raises(ValueError, match=r"^idle_hint_us must be from 0 to 2147483647 µs \(the kernel's range\), not "):
        make(idle_hint_us=bad)
    assert written(device) == []  # nothing requested


@pytest.mark.parametrize("make", MAKERS)
@pytest.mark.parametrize("bad", [0.0, 1.5, "0", True, b"0", [0]])
def test_non_int_is_type_error(make, bad, device):
    with pytest.raises(TypeError, match=r"^idle_hint_us must be an int \(whole µs\) or None, not '"):
        make(idle_hint_us=bad)
    assert written(device) == []


def test_setter_checks_like_the_constructor(device):
    s = keeptime.Sleeper(idle_hint_us=7)
    with pytest.raises(ValueError):
        s.idle_hint_us = -1
    with pytest.raises(TypeError):
        s.idle_hint_us = 2.0
    assert s.idle_hint_us == 7 and s.idle_hint_status.held  # unchanged
    assert written(device) == [7]


def test_not_asked_opens_nothing(device):
    s = keeptime.Sleeper()
    t = keeptime.Ticker(0.001, idle_hint_us=None)
    for obj in (s, t):
        assert obj.idle_hint_us is None
        st = obj.idle_hint_status
        assert (st.state, st.asked_us, st.in_force_us, st.reason, st.held) == ("not asked", None, None, None, False)
    assert repr(s) == "keeptime.Sleeper(mode='exact', timer_slack=True)"
    assert written(device) == []


def test_strictest_live_value_is_in_force_and_released_with_its_holder(device):
    a = keeptime.Sleeper(idle_hint_us=50)
    assert written(device) == [50]
    assert a.idle_hint_status == a.idle_hint_status  # compares by value
    st = a.idle_hint_status
    assert (st.state, st.asked_us, st.in_force_us, st.reason) == ("held", 50, 50, None)
    assert repr(st) == "keeptime.IdleHintStatus(state='held', asked_us=50, in_force_us=50, reason=None)"
    assert repr(a) == "keeptime.Sleeper(mode='exact', timer_slack=True, idle_hint_us=50)"

    t = keeptime.Ticker(0.0002, idle_hint_us=0)  # stricter: written
    assert written(device) == [50, 0]
    assert (a.idle_hint_status.in_force_us, t.idle_hint_status.in_force_us) == (0, 0)
    assert a.idle_hint_us == 50

    # They wait as ever: never early.
    for _ in range(10):
        deadline = time.monotonic_ns() + 200_000
        assert a.sleep_until_ns(deadline) >= deadline
        tick = t.tick()
        assert time.monotonic_ns() >= tick.scheduled_ns

    del t
    gc.collect()  # the ticker's share goes with it: relaxed to 50
    assert written(device) == [50, 0, 50]
    assert a.idle_hint_status.in_force_us == 50

    a.idle_hint_us = 5  # the new request before the old is released
    assert written(device) == [50, 0, 50, 5]
    a.idle_hint_us = None
    assert a.idle_hint_status.state == "not asked"
    a.idle_hint_us = 2**31 - 1  # the top of the range, on a freshly opened device
    assert written(device) == [2**31 - 1, 0, 50, 5]  # a reopened file is written from its start


def test_a_refusal_warns_once_per_process_and_changes_nothing_else():
    # A fresh interpreter: the warning is once per process, whoever asks first.
    script = textwrap.dedent(
        """
        import time, warnings, keeptime
        from keeptime import _keeptime
        _keeptime._set_idle_hint_device("/nonexistent-keeptime-test/cpu_dma_latency")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            s = keeptime.Sleeper(idle_hint_us=0)
            t = keeptime.Ticker(0.001, idle_hint_us=10)
            s.idle_hint_us = 3
        for w in caught:
            print("WARNING", w.category.__name__, w.filename.endswith("<string>"), w.message)
        st = s.idle_hint_status
        print("STATUS", st.state, st.asked_us, st.in_force_us)
        print("REASON", st.reason)
        print("TICKER", t.idle_hint_status.state, t.idle_hint_status.asked_us)
        early = 0
        for _ in range(20):
            deadline = time.monotonic_ns() + 100_000
            early += s.sleep_until_ns(deadline) < deadline
            tick = t.tick()
            early += time.monotonic_ns() < tick.scheduled_ns
        print("EARLY", early)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    lines = out.stdout.splitlines()
    warned = [l for l in lines if l.startswith("WARNING")]
    assert warned == [
        "WARNING RuntimeWarning True keeptime: idle-latency hint refused: "
        "/nonexistent-keeptime-test/cpu_dma_latency not held: no such device "
        "(no PM QoS CPU latency interface here); sleeping without it"
    ]
    assert "STATUS refused 3 None" in lines
    assert "REASON /nonexistent-keeptime-test/cpu_dma_latency not held: no such device " \
           "(no PM QoS CPU latency interface here)" in lines
    assert "TICKER refused 10" in lines
    assert "EARLY 0" in lines
    assert "keeptime: warning" not in out.stderr  # Python's idiom only, not the core's stderr line


def test_warnings_as_errors_raise_at_the_constructor():
    script = textwrap.dedent(
        """
        import warnings, keeptime
        from keeptime import _keeptime
        _keeptime._set_idle_hint_device("/nonexistent-keeptime-test/cpu_dma_latency")
        warnings.simplefilter("error")
        try:
            keeptime.Sleeper(idle_hint_us=0)
        except RuntimeWarning as e:
            print("RAISED", type(e).__name__)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "RAISED RuntimeWarning"


def test_status_is_readable_while_another_thread_sleeps(device):
    import threading

    s = keeptime.Sleeper(idle_hint_us=9)
    done = threading.Event()

    def sleeper():
        s.sleep(1)
        done.set()

    th = threading.Thread(target=sleeper)
    th.start()
    while not s._sleeping:  # until the other thread is inside its sleep
        assert th.is_alive()
    status = s.idle_hint_status  # its own lock, not the sleeper's: it does not wait for the sleep
    assert s._sleeping and not done.is_set()
    assert status.in_force_us == 9
    th.join()
    assert done.is_set()
