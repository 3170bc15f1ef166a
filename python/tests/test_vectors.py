"""The spec's ticker vectors (spec/vectors/ticker.json), unchanged, through keeptime.Schedule."""

import json
from pathlib import Path

import pytest

import keeptime

VECTORS = Path(__file__).resolve().parents[2] / "spec" / "vectors" / "ticker.json"
CASES = json.loads(VECTORS.read_text())["cases"] if VECTORS.exists() else []


@pytest.mark.skipif(not CASES, reason="spec/vectors/ticker.json not found (not a repository checkout)")
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_ticker_vector(case):
    schedule = keeptime.Schedule(case["start_ns"], case["period_ns"], case["policy"])
    assert schedule.missed == case["policy"]
    for i, step in enumerate(case["steps"]):
        where = f"{case['name']} step {i}"
        if "tick_at" in step:
            expect = step["expect"]
            polled = schedule.poll(step["tick_at"])
            if isinstance(polled, int):
                assert polled == expect["wait_until_ns"], where
                tick = schedule.woke(step["wake_ns"])
            else:
                assert expect["wait_until_ns"] is None, where
                tick = polled
            got = {k: getattr(tick, k) for k in ("index", "scheduled_ns", "lateness_ns", "skipped")}
            want = {k: expect[k] for k in got}
            assert got == want, where
        elif "reset_at" in step:
            schedule.reset(step["reset_at"])
        elif "set_period" in step:
            before = schedule.period_ns
            if step["expect_error"]:
                with pytest.raises(ValueError):
                    schedule.period_ns = step["set_period"]
                assert schedule.period_ns == before, where
            else:
                schedule.period_ns = step["set_period"]
                assert schedule.period_ns == step["set_period"], where
        else:
            assert schedule.stats.to_dict() == step["expect_stats"], where


def test_vectors_present_in_a_checkout():
    # The repository always has them; only an installed copy of the tests may not.
    if (VECTORS.parents[2] / "Cargo.toml").exists():
        assert len(CASES) >= 5
