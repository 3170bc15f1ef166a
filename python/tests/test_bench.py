"""python -m keeptime bench: the result document follows spec/bench-result.md."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import keeptime
from keeptime import _bench, _bench_text, _format, _stats

SCHEMA = Path(__file__).resolve().parents[2] / "spec" / "bench-result.schema.json"


@pytest.fixture(scope="module")
def doc():
    config = _bench.Config(durations_ns=[20_000, 300_000], samples=30, warmup=3)
    return _bench.run(config)


def test_document_validates_against_the_spec_schema(doc):
    jsonschema = pytest.importorskip("jsonschema")
    if not SCHEMA.exists():
        pytest.skip("spec/bench-result.schema.json not found (not a repository checkout)")
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(
        json.loads(json.dumps(doc))
    )


def test_document_contents(doc):
    assert doc["runtime"]["language"] == "python"
    assert doc["tool"] == {"name": "keeptime-python", "version": keeptime.__version__}
    assert doc["parameters"]["samples"] == 30
    names = [m["name"] for m in doc["methods"]]
    assert names == [m.name for m in _bench.METHODS]
    cells = doc["results"]
    assert [(c["duration_ns"], c["method"]) for c in cells] == [(d, m) for d in (20_000, 300_000) for m in names]
    early_ok = {m["name"] for m in doc["methods"] if m["may_return_early"]}
    assert early_ok == {"keeptime-efficient"}
    for c in cells:
        assert c["samples"] == 30
        assert sum(b["count"] for b in c["histogram"]) == 30
        assert c["min_ns"] <= c["p50_ns"] <= c["p90_ns"] <= c["p99_ns"] <= c["p999_ns"] <= c["max_ns"]
        if c["method"] not in early_ok:
            assert c["early"] == 0, c["method"]  # the invariant; accuracy is the bench's business
        slack = c["timer_slack_ns"]
        if c["method"] == "time-sleep":
            assert slack == doc["machine"]["timer_slack_ns"]
        else:
            assert slack == 1


#: The rows that run a sleeper of their own (the free function's is the core's
#: thread sleeper, the ticker's is inside the ticker).
SLEEPER_ROWS = {"keeptime", "keeptime-efficient", "keeptime-spin", "keeptime-rust"}
#: The rows whose wait returns its own reading.
RETURN_ROWS = SLEEPER_ROWS | {"keeptime-ticker"}


def test_keeptime_rows_carry_their_sleepers_stats(doc):
    for c in doc["results"]:
        st = c.get("sleeper")
        if c["method"] not in SLEEPER_ROWS:
            assert st is None, c["method"]
            continue
        assert st["tail_target_ppm"] == 10_000
        assert 1 <= st["sleeps"] <= c["samples"]  # the warm-up is not counted
        assert 0 <= st["late"] <= st["sleeps"]
        assert st["os_waits"] >= 0 and st["cpu_estimate_ns"] >= st["spin_ns"] >= 0
        if c["method"] == "keeptime-spin":
            assert st["os_waits"] == 0
    text = _bench_text.render(doc)
    header = [line.split() for line in text.splitlines() if line.strip().startswith("sleeper stats")]
    assert header and header[0] == ["sleeper", "stats", "target", "late", "OS", "waits/sleep", "CPU", "est.", "CPU"]


def test_rows_whose_wait_returns_a_reading_carry_the_return_figures(doc):
    for c in doc["results"]:
        if c["method"] in RETURN_ROWS:
            # The caller reads the clock after the wait returned its reading.
            assert 0 <= c["return_p50_ns"] <= c["return_p90_ns"], c["method"]
        else:
            assert "return_p50_ns" not in c and "return_p90_ns" not in c, c["method"]


def test_targets_name_each_target_cell_met_or_missed():
    cells = [
        {"method": "keeptime-sleep", "duration_ns": 1_000_000, "p50_ns": 1_000, "early": 0},
        {"method": "keeptime-ticker", "duration_ns": 250_000, "p50_ns": 1_001, "early": 0},
        {"method": "keeptime-sleep", "duration_ns": 2_500_000, "p50_ns": 300, "early": 1},
        {"method": "keeptime-sleep", "duration_ns": 20_000, "p50_ns": 300, "early": 0},  # no target there
        {"method": "time-sleep", "duration_ns": 1_000_000, "p50_ns": 60_000, "early": 0},  # nor for it
    ]
    lines = _bench_text.targets({"results": cells})
    assert [line.split()[0] for line in lines] == ["keeptime-sleep", "keeptime-ticker", "keeptime-sleep"]
    assert [line.split()[-1] for line in lines] == ["met", "MISSED", "MISSED"]


def test_the_tail_target_reaches_the_keeptime_rows():
    config = _bench.Config(
        durations_ns=[300_000], methods=["keeptime", "keeptime-rust"], samples=5, warmup=1, tail_target=0.002
    )
    cells = _bench.run(config)["results"]
    assert [c["sleeper"]["tail_target_ppm"] for c in cells] == [2_000, 2_000]
    with pytest.raises(ValueError, match="tail_target must be"):
        _bench.run(_bench.Config(durations_ns=[300_000], samples=1, tail_target=1.5))


def test_tables_have_the_cli_columns(doc):
    text = _bench_text.render(doc)
    header = next(line for line in text.splitlines() if line.strip().startswith("method"))
    assert header.split() == [
        "method", "p50", "p90", "p99", "p99.9", "max", "mean", "±", "σ", "early", "CPU", "samples", "return", "p50/p90"
    ]
    assert "wait 20 µs" in text and "wait 300 µs" in text
    assert "keeptime: p99" in text
    md = _bench_text.markdown(doc)
    assert "| method | p50 | p90 | p99 | p99.9 | max | mean ± σ | early | CPU | samples | return p50/p90 |" in md
    assert md.count("| sleeper stats | target | late | OS waits/sleep | CPU est. | CPU |") == 2


@pytest.mark.parametrize(
    "error, bucket", [(17, (16, 18)), (0, (-1, 0)), (-17, (-18, -16)), (54_321, (53_248, 57_344)), (1, (0, 1))]
)
def test_histogram_edges_are_the_specs(error, bucket):
    le = _stats.upper_edge(error)
    assert (_stats.lower_edge(le), le) == bucket


def test_statistics_definitions():
    s = _stats.stats(list(range(1, 1001)), 1_000, 10)
    assert (s["p50_ns"], s["p90_ns"], s["p99_ns"], s["p999_ns"]) == (500, 900, 990, 999)
    s = _stats.stats([7], 10, 0)
    assert (s["p50_ns"], s["stddev_ns"], s["cpu_percent"]) == (7, 0.0, 0.0)
    with pytest.raises(ValueError):
        _stats.stats([], 1, 1)


def test_formatting_matches_the_cli():
    assert _format.ns(-1_204_000) == "-1.20 ms"
    assert _format.mean_sd(80.0, 1_500.0) == "0.08 ± 1.50 µs"
    assert _format.duration(1_000_000_001) == "1.000000001 s"
    assert _format.percent(0.051) == "0.05 %"


def test_command_line_exports_json_to_stdout_and_tables_to_stderr():
    out = subprocess.run(
        [sys.executable, "-m", "keeptime", "bench", "--durations", "20us", "--methods", "busy-loop,keeptime",
         "--samples", "5", "--warmup", "1", "--no-ffi", "--crowd", "0", "--export-json", "-"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    doc = json.loads(out.stdout)
    assert [c["method"] for c in doc["results"]] == ["busy-loop", "keeptime"]
    assert doc["results"][1]["sleeper"]["tail_target_ppm"] == 10_000
    assert "wait 20 µs" in out.stderr
    assert "crowd" not in out.stderr  # --crowd 0: no crowd row


def test_command_line_rejects_bad_arguments():
    for args in (["--durations", "10"], ["--methods", "nope"], ["--samples", "0"], ["--tail-target", "2"],
                 ["--tail-target", "nan"], ["--tail-target", "fast"], ["--tail-target", "0%"],
                 ["--crowd", "-1"], ["--crowd", "1.5"], ["--crowd", "many"], ["--crowd", "5000"]):
        out = subprocess.run([sys.executable, "-m", "keeptime", "bench", *args], capture_output=True, text=True)
        assert out.returncode == 2 and "error" in out.stderr


def test_ffi_cost_is_measured():
    costs = _bench.ffi_cost(calls=1_000, rounds=1)
    assert set(costs) == {"keeptime.sleep(0)", "keeptime.sleep_ns(0)", "time.monotonic_ns()"}
    assert all(v > 0 for v in costs.values())


@pytest.mark.parametrize("text, share", [("strict", 0.001), ("RELAXED", 0.05), ("0.002", 0.002), ("1%", 0.01), ("0.5 %", 0.005)])
def test_command_line_tail_target_forms(text, share):
    from keeptime.__main__ import parser

    args = parser().parse_args(["bench", "--tail-target", text])
    assert args.tail_target == share


def test_verdict_says_how_much_cpu_keeptime_saved_against_the_spin():
    def cell(method: str, p99_ns: int, cpu: float) -> dict:
        return {"method": method, "p99_ns": p99_ns, "cpu_percent": cpu, "early": 0}

    spin = cell(_format.SPIN[0], 2_000, 100.0)
    assert "at 1/2.0 of its CPU" in (_format.verdict([spin, cell("keeptime", 25_000, 50.0)]) or "")
    assert "but little CPU saved against the spin" in (
        _format.verdict([spin, cell("keeptime", 25_000, 73.0)]) or ""
    )
    assert "but no CPU saved against the spin" in (
        _format.verdict([spin, cell("keeptime", 25_000, 99.0)]) or ""
    )


def test_sleepers_that_learn_warm_up_about_a_second():
    # 1 s / (1 ms + the 60 µs planning overhead) = 943 waits; 50 ms for the others.
    assert _bench.default_warmup(1_000_000, "keeptime") == 943
    assert _bench.default_warmup(1_000_000, "time-sleep") == 47
    assert _bench.default_warmup(10_000, "keeptime-rust") == 3_000
    assert _bench.default_warmup(10_000_000, "keeptime-efficient") == 300  # 1 s is 99: the floor
    assert _bench.default_warmup(20_000_000, "keeptime") == 249  # 300 would take 6 s
    assert _bench.default_warmup(100_000_000, "keeptime") == 49  # 5 s / 100.06 ms
    assert _bench.default_warmup(2_500_000, "keeptime") == 390  # 1 s holds more
    assert _bench.default_warmup(10_000_000, "busy-loop") == 10


def test_verdict_names_a_better_p99_than_the_spin_as_the_cli_does():
    def cell(method: str, p99_ns: int, cpu: float) -> dict:
        return {"method": method, "p99_ns": p99_ns, "cpu_percent": cpu, "early": 0}

    spin = cell(_format.SPIN[0], 40_000, 100.0)  # a spin preempted at its p99
    v = _format.verdict([spin, cell("keeptime", 15_000, 20.0)]) or ""
    assert "a better p99 than the pure spin (busy-loop 40.0 µs)" in v, v
    # Within the spin's tolerance: spin-level, not better.
    v = _format.verdict([spin, cell("keeptime", 30_000, 20.0)]) or ""
    assert "spin-level accuracy" in v, v
