"""Host profiles: written from a sleeper and loaded back, refused from another
machine (unless asked), bad and cut files refused with the line, the spec's
error vectors through Profile.load, and sleepers started from a profile
never early (by the caller's own clock)."""

import json
import time
import types
from pathlib import Path

import pytest

import keeptime

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "profile.json"
CASES = json.loads(VECTORS.read_text())["cases"] if VECTORS.exists() else []
# The spec's "this machine" differs from the one running the tests: compare
# parse errors only (they come before the machine check).
PARSE_CASES = [c for c in CASES if "text" in c and (c.get("expect_error") or {}).get("code") != "machine_mismatch"]


def learned() -> keeptime.Profile:
    s = keeptime.Sleeper()
    for _ in range(30):
        s.sleep(0.0003)
    return s.profile()


def never_early(s: "keeptime.Sleeper | types.ModuleType", seconds: float, n: int) -> int:
    """Caller-measured early returns of ``s.sleep_until_ns`` (a Sleeper, or the
    ``keeptime`` module for this thread's free-function sleeper)."""
    early = 0
    for _ in range(n):
        deadline = time.monotonic_ns() + int(seconds * 1e9)
        s.sleep_until_ns(deadline)
        early += time.monotonic_ns() < deadline
    return early


def test_a_sleepers_profile_loads_back_and_starts_sleepers(tmp_path):
    p = learned()
    assert sum(p.samples) > 0 and len(p.samples) == 12
    assert repr(p).startswith("Profile(")
    path = tmp_path / "host.profile"
    p.write(path)
    back = keeptime.Profile.load(path)
    assert back.samples == p.samples
    assert back.machine == p.machine
    assert back.text() == path.read_text() == p.text()
    for profile in (back, path, str(path)):
        t = keeptime.Ticker(0.0003, profile=profile)
        for _ in range(10):
            tick = t.tick()
            assert time.monotonic_ns() >= tick.scheduled_ns
        assert keeptime.Ticker.from_ns(300_000, profile=profile).tick().index >= 1
        s = keeptime.Sleeper(profile=profile)
        assert never_early(s, 0.0003, 20) == 0
        assert never_early(s, 0.001, 5) == 0
        assert never_early(s, 0.00002, 20) == 0


def test_a_profile_of_another_machine_is_refused(tmp_path):
    text = learned().text().splitlines(keepends=True)
    assert text[1].startswith("cpu_vendor ")
    text[1] = "cpu_vendor SomeOtherVendor\n"
    path = tmp_path / "other.profile"
    path.write_text("".join(text))
    with pytest.raises(keeptime.ProfileError) as e:
        keeptime.Profile.load(path)
    assert (e.value.code, e.value.line, e.value.key) == ("machine_mismatch", 2, "cpu_vendor")
    assert '"SomeOtherVendor" in the profile' in str(e.value)
    assert str(path) in str(e.value) and e.value.path == str(path)
    assert isinstance(e.value, ValueError)
    with pytest.raises(keeptime.ProfileError):
        keeptime.Sleeper(profile=path)
    p = keeptime.Profile.load(path, ignore_machine=True)
    assert p.machine["cpu_vendor"] == "SomeOtherVendor"
    assert never_early(keeptime.Sleeper(profile=p), 0.0003, 10) == 0


def test_bad_and_cut_files_name_the_line(tmp_path):
    text = learned().text()
    path = tmp_path / "bad.profile"
    path.write_text(text[: text.rindex("end")])
    with pytest.raises(keeptime.ProfileError) as e:
        keeptime.Profile.load(path)
    assert e.value.code == "truncated"
    assert e.value.line == text.count("\n")
    assert f"line {e.value.line}: the profile ends here, cut short" in str(e.value)
    path.write_text("round,os_wait_ns,overshoot_ns,thread_cpu_ns\n")
    with pytest.raises(keeptime.ProfileError, match="line 1: not a keeptime profile"):
        keeptime.Profile.load(path)
    with pytest.raises(FileNotFoundError, match="cannot read the profile"):
        keeptime.Profile.load(tmp_path / "none.profile")
    with pytest.raises(FileNotFoundError):
        keeptime.Sleeper(profile=tmp_path / "none.profile")
    with pytest.raises(TypeError, match="profile must be a keeptime.Profile or a path"):
        keeptime.Sleeper(profile=3)
    with pytest.raises(OSError, match="cannot write the profile"):
        learned().write(tmp_path / "no" / "such" / "dir")


@pytest.mark.skipif(not PARSE_CASES, reason="spec/vectors/profile.json not found (not a repository checkout)")
@pytest.mark.parametrize("case", PARSE_CASES, ids=[c["name"] for c in PARSE_CASES])
def test_profile_vector(case, tmp_path):
    path = tmp_path / "case.profile"
    path.write_bytes(case["text"].encode())
    want = case.get("expect_error")
    if want is None:
        p = keeptime.Profile.load(path, ignore_machine=True)
        assert len(p.samples) == 12
        return
    with pytest.raises(keeptime.ProfileError) as e:
        keeptime.Profile.load(path, ignore_machine=True)
    assert (e.value.code, e.value.line) == (want["code"], want["line"])


def test_the_default_profile_starts_the_free_functions_sleepers(tmp_path):
    p = learned()
    path = tmp_path / "host.profile"
    p.write(path)

    try:
        for profile in (p, path, str(path)):
            keeptime.set_default_profile(profile)
            assert never_early(keeptime, 0.0003, 20) == 0
            # A ticker made now starts from it.
            t = keeptime.Ticker(0.0003)
            for _ in range(10):
                tick = t.tick()
                assert time.monotonic_ns() >= tick.scheduled_ns
        keeptime.set_default_profile(None)
        assert never_early(keeptime, 0.0003, 10) == 0
        with pytest.raises(TypeError, match="keeptime.Profile or a path"):
            keeptime.set_default_profile(3)
        with pytest.raises(FileNotFoundError):
            keeptime.set_default_profile(tmp_path / "missing.profile")
        cut = tmp_path / "cut.profile"
        cut.write_text(p.text()[:40])
        with pytest.raises(keeptime.ProfileError):
            keeptime.set_default_profile(cut)
    finally:
        keeptime.set_default_profile(None)


# The child: sleeps with keeptime's own sleepers (free functions, a ticker),
# optionally after the program set the default, and checks none was early.
ENV_CHILD = """
import sys, time, keeptime
if sys.argv[1] == "program_first":
    keeptime.set_default_profile(None)
for _ in range(20):
    deadline = time.monotonic_ns() + 300_000
    keeptime.sleep_until_ns(deadline)
    assert time.monotonic_ns() >= deadline
t = keeptime.Ticker(0.0003)
for _ in range(10):
    tick = t.tick()
    assert time.monotonic_ns() >= tick.scheduled_ns
"""


def run_with_env(case: str, value: str) -> str:
    """Runs ``ENV_CHILD`` with ``KEEPTIME_PROFILE=value``; its stderr."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, KEEPTIME_PROFILE=value)
    out = subprocess.run(
        [sys.executable, "-c", ENV_CHILD, case], env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stderr


def test_keeptime_profile_in_the_environment_starts_the_default_sleepers(tmp_path):
    # The core's tests check exactly what the sleepers start from; here, that
    # Python's free functions and tickers reach it: a good file is read in
    # silence, a bad one is reported in one line and the sleeps go on fresh.
    good = tmp_path / "host.profile"
    learned().write(good)
    assert run_with_env("default", str(good)) == ""
    assert run_with_env("default", "") == ""
    missing = tmp_path / "missing.profile"
    line = run_with_env("default", str(missing))
    assert line.startswith(f"keeptime: KEEPTIME_PROFILE={missing}: {missing}: "), line
    assert line.endswith("; keeptime's own sleepers start fresh\n"), line
    assert line.count("\n") == 1, line
    cut = tmp_path / "cut.profile"
    cut.write_text(learned().text()[:40])
    with pytest.raises(keeptime.ProfileError) as why:
        keeptime.Profile.load(cut)
    assert run_with_env("default", str(cut)) == (
        f"keeptime: KEEPTIME_PROFILE={cut}: {why.value}; keeptime's own sleepers start fresh\n"
    )
    # The program's own choice, made first, wins: the variable is never read.
    assert run_with_env("program_first", str(missing)) == ""


def test_the_free_functions_sleeper_writes_what_it_learned(tmp_path):
    # Taken in a thread of its own: a thread that has not slept has learned
    # nothing (no default profile here); after sleeps, its wake-ups, as a
    # profile of this machine that loads back and starts a sleeper; taking it
    # resets nothing.
    import threading

    keeptime.set_default_profile(None)  # fresh, whatever KEEPTIME_PROFILE says
    out: "dict[str, keeptime.Profile]" = {}

    def run() -> None:
        out["before"] = keeptime.thread_profile()
        for _ in range(30):
            keeptime.sleep(0.0003)
        out["after"] = keeptime.thread_profile()
        out["again"] = keeptime.thread_profile()

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert sum(out["before"].samples) == 0
    assert sum(out["after"].samples) > 0
    assert out["again"].text() == out["after"].text()
    path = tmp_path / "app.profile"
    out["after"].write(path)
    loaded = keeptime.Profile.load(path)
    assert loaded.text() == out["after"].text()
    assert never_early(keeptime.Sleeper(profile=loaded), 0.0003, 10) == 0
