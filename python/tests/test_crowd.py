"""The bench's crowd row: option parsing, the row's figures from given
errors, its formatting, and a tiny real crowd (invariants only, no timings)."""

import pytest

from keeptime import _crowd
from keeptime.__main__ import parser


def test_option_parsing():
    assert parser().parse_args(["bench"]).crowd == 16  # the default crowd
    for text, n in [("0", 0), ("4", 4), (" 64 ", 64), ("4096", 4096)]:
        assert parser().parse_args(["bench", "--crowd", text]).crowd == n
    for bad in ["-1", "1.5", "", "many", "0x10", "4097", "²"]:
        with pytest.raises(ValueError, match="--crowd"):
            _crowd.parse_threads(bad)


def test_row_figures_are_exact():
    errors = [300, -2, 2_000, 2_001, 50, 10_000_000] + [100] * 94
    r = _crowd.row_of("time-sleep", 4, 1_000_000, errors, wall_ns=2_000_000, cpu_ns=500_000)
    assert (r.samples, r.early, r.late, r.max_ns) == (100, 1, 2, 10_000_000)
    assert (r.p50_ns, r.p99_ns) == (100, 2_001)  # nearest rank, as the bench's other tables
    assert r.late_share == 0.02
    assert r.cpu_percent == 25.0
    empty = _crowd.row_of("keeptime", 1, 1_000, [], wall_ns=0, cpu_ns=0)
    assert (empty.samples, empty.late_share, empty.cpu_percent) == (0, 0.0, 0.0)


def test_rows_and_tables():
    rows = [
        _crowd.CrowdRow("keeptime", 16, 1_000_000, 20_000, 812, 9_300, 1_800_000, 0, 300, 141.26),
        _crowd.CrowdRow("time-sleep", 16, 1_000_000, 19_000, 61_000, 95_500, 2_500_000, 0, 19_000, 9.04),
    ]
    assert _crowd.rows(rows) == [
        ["crowd 16 × 1 ms", "p50", "p99", "max", "early", "late > 2 µs", "CPU", "sleeps"],
        ["keeptime", "812 ns", "9.30 µs", "1.80 ms", "0", "1.5 %", "141 %", "20000"],
        ["time-sleep", "61.0 µs", "95.5 µs", "2.50 ms", "0", "100 %", "9.0 %", "19000"],
    ]
    text = _crowd.table(rows).splitlines()
    assert text[0].split() == ["crowd", "16", "×", "1", "ms", "p50", "p99", "max", "early", "late", ">", "2", "µs", "CPU", "sleeps"]
    assert text[1].split()[0] == "keeptime" and text[2].split()[0] == "time-sleep"
    assert "process CPU time" in text[3]
    md = _crowd.table_markdown(rows).splitlines()
    assert md[0] == "| crowd 16 × 1 ms | p50 | p99 | max | early | late > 2 µs | CPU | sleeps |"
    assert md[1] == "|:---|---:|---:|---:|---:|---:|---:|---:|"
    assert md[2] == "| keeptime | 812 ns | 9.30 µs | 1.80 ms | 0 | 1.5 % | 141 % | 20000 |"


@pytest.mark.parametrize("method", _crowd.METHODS)
def test_a_small_real_crowd_runs_every_thread(method):
    r = _crowd.run_one(method, threads=3, duration_ns=200_000, seconds=0.05)
    assert r.method == method and r.threads == 3
    assert r.samples >= 3  # every thread sleeps at least once
    assert r.early == 0  # never early; accuracy is the bench's business
    assert r.p50_ns <= r.p99_ns <= r.max_ns
    assert r.cpu_percent >= 0


def test_bad_crowds_are_refused_before_any_thread_starts():
    with pytest.raises(ValueError, match="at least 1 thread"):
        _crowd.run_one("keeptime", threads=0)
    with pytest.raises(ValueError, match="unknown crowd method"):
        _crowd.run_one("busy-loop", threads=1)
