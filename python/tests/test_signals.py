"""Ctrl-C during a long wait raises KeyboardInterrupt, like time.sleep.

Each case runs in a child process that starts a 30 s wait and gets a real
SIGINT. Only the outcome is asserted (KeyboardInterrupt, exit status), never
the timing: the machines are shared.
"""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: Clock ticks of CPU the child's main thread must use in a spin before it
#: counts as inside the wait (what precedes the wait takes far less).
SPIN_TICKS = 5


def _cpu_ticks_and_state(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12]), fields[0]  # utime + stime, state


def _wait_until_inside_the_wait(child, spins):
    """Until the child is inside its wait, as the kernel sees it: blocked in
    the OS wait (state S) or, for a spin, using CPU, not on a guess of how
    long it takes to get there."""
    start, _ = _cpu_ticks_and_state(child.pid)
    give_up = time.monotonic() + 20
    while time.monotonic() < give_up:
        assert child.poll() is None, child.communicate()
        ticks, state = _cpu_ticks_and_state(child.pid)
        if (ticks - start >= SPIN_TICKS) if spins else state == "S":
            return
        time.sleep(0.001)  # polling /proc, not synchronising
    pytest.fail("the child never entered its wait")

WAITS = {
    "sleep": "keeptime.sleep(30)",
    "sleep_ns": "keeptime.sleep_ns(30_000_000_000)",
    "sleep_until_ns": "keeptime.sleep_until_ns(time.monotonic_ns() + 30_000_000_000)",
    "exact": "keeptime.Sleeper().sleep(30)",
    "efficient": "keeptime.Sleeper(mode='efficient').sleep(30)",
    "spin": "keeptime.Sleeper(mode='spin').sleep(30)",
    "ticker": "keeptime.Ticker(30).tick()",
    "ticker_iter": "next(iter(keeptime.Ticker(30)))",
}

# A child starts with Python's own SIGINT handler (KeyboardInterrupt) even
# when this suite runs with SIGINT ignored, as a background job's commands
# do: Python keeps an ignored SIGINT ignored, and the children inherit it.
DEFAULT_SIGINT = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)"

CHILD = DEFAULT_SIGINT + """
import sys, time, keeptime
keeptime.sleep(0.001)  # warm up: import and first-use costs before the ready line
print("ready", flush=True)
try:
    {wait}
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(42)
print("finished", flush=True)
"""


@pytest.mark.parametrize("name", list(WAITS))
def test_sigint_raises_keyboard_interrupt(name):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(wait=WAITS[name])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        _wait_until_inside_the_wait(child, spins=name == "spin")
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 42, (out, err)
    assert "interrupted" in out


def test_uncaught_sigint_ends_the_program_like_time_sleep():
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            DEFAULT_SIGINT + "\nimport keeptime; print('ready', flush=True); keeptime.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "ready"
        _wait_until_inside_the_wait(child, spins=False)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert "KeyboardInterrupt" in err
    assert child.returncode != 0


def test_a_handler_that_does_not_raise_lets_the_wait_continue():
    # SIGUSR1 with a Python handler that only records it: the wait resumes
    # toward the same deadline and still never ends early.
    code = """
import os, signal, threading, time, keeptime
seen = []
signal.signal(signal.SIGUSR1, lambda *a: seen.append(1))
pid = os.getpid()
threading.Timer(0.05, lambda: os.kill(pid, signal.SIGUSR1)).start()
start = time.monotonic_ns()
keeptime.sleep(0.3)
elapsed = time.monotonic_ns() - start
print(len(seen), elapsed >= 300_000_000)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert out.stdout.split() == ["1", "True"], out.stderr
