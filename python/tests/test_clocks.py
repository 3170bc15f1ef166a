"""keeptime.clocks(): the core's clock report as typed Python objects."""

import json

import pytest

import keeptime
from keeptime import _keeptime

QUICK = dict(reads_per_batch=100, batches=3, granularity_reads=1000, time_limit_per_clock=0.02, tsc_calibration=0.005)


@pytest.fixture(scope="module")
def report():
    return keeptime.clocks(**QUICK)


def test_typed_objects_cover_every_field_of_the_core_report():
    # The objects mirror the core's serde types field for field: if the core
    # grows a field, this fails until the Python side has it too.
    raw = json.loads(_keeptime._clocks_json(100, 3, 1000, 20_000_000, 5_000_000))
    assert keeptime.ClockReport.from_dict(raw).to_dict() == raw


def test_monotonic_clock_is_measured(report):
    mono = report.clock("MONOTONIC")
    assert isinstance(mono, keeptime.ClockInfo)
    assert mono.available and mono.read_cost_ns > 0 and mono.monotonic_violations == 0
    assert report.clock("monotonic") is mono
    assert report.clock("no such clock") is None
    assert report.clocks[0] is mono


def test_machine_and_findings(report):
    m = report.machine
    assert isinstance(m, keeptime.MachineInfo)
    assert m.os and m.arch
    assert isinstance(m.available_clocksources, tuple)
    for f in report.findings:
        assert isinstance(f, keeptime.Finding)
        assert f.severity in ("warning", "info")
        assert str(f).startswith(f.severity + ": ")


def test_round_trips_through_json(report):
    d = json.loads(report.to_json())
    assert d == report.to_dict()
    assert keeptime.ClockReport.from_dict(d) == report


def test_report_is_immutable(report):
    with pytest.raises(AttributeError):
        report.machine = None


def test_bad_options():
    with pytest.raises(ValueError):
        keeptime.clocks(time_limit_per_clock=-1)
    with pytest.raises(TypeError):
        keeptime.clocks(batches="3")


def _spec_dir():
    import pathlib

    return pathlib.Path(__file__).resolve().parents[2] / "spec"


def test_findings_follow_the_spec_vectors():
    # spec/vectors/clocks.json: the report's parts in, the findings every
    # runtime makes out (severity and code, in order).
    vectors = json.loads((_spec_dir() / "vectors" / "clocks.json").read_text())
    assert vectors["version"] == 1 and len(vectors["cases"]) >= 15
    for case in vectors["cases"]:
        parts = {k: case.get(k) for k in ("clocks", "machine", "idle_latency")}
        made = json.loads(_keeptime._clock_findings_json(json.dumps(parts)))
        assert [{"severity": f["severity"], "code": f["code"]} for f in made] == case["findings"], case["name"]
        assert all(f["message"] for f in made)


def test_bad_report_parts_are_a_value_error():
    with pytest.raises(ValueError, match="report parts"):
        _keeptime._clock_findings_json('{"clocks": 3, "machine": {}}')
    with pytest.raises(ValueError, match="report parts"):
        _keeptime._clock_findings_json("not json")


def test_the_report_follows_the_schema(report):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((_spec_dir() / "clocks.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(report.to_json()))
    assert report.idle_latency is not None
    assert isinstance(report.idle_latency.may_request, bool)
