#!/usr/bin/env python3
"""Checks a bench result written by examples/c/bench.c against the project's
format: spec/bench-result.schema.json (when the jsonschema module is there),
plus what a schema cannot say: the statistics are ordered, the histogram
counts add up and its edges are the ones spec/bench-result.md defines.

    check_bench_result.py RESULT.json SPEC_DIR
"""
import json
import sys


def bits(x):
    return x.bit_length()


def down(x):
    return x if bits(x) <= 4 else (x >> (bits(x) - 4)) << (bits(x) - 4)


def up(x):
    return down(x) if down(x) == x else down(x) + (1 << (bits(x) - 4))


def le_of(v):
    return 0 if v == 0 else up(v) if v > 0 else -down(-v)


def gt_of(le):
    return -1 if le == 0 else down(le - 1) if le > 0 else -up(-le + 1)


def main():
    result_path, spec_dir = sys.argv[1], sys.argv[2]
    # The runtime the bench ran in: C's own bench by default; the C# bench passes "csharp".
    language = sys.argv[3] if len(sys.argv) > 3 else "c"
    with open(result_path) as f:
        doc = json.load(f)
    problems = []
    try:
        import jsonschema
    except ImportError:
        print("check_bench_result: no jsonschema module; checking the structure by hand only")
    else:
        with open(f"{spec_dir}/bench-result.schema.json") as f:
            schema = json.load(f)
        validator = jsonschema.Draft202012Validator(schema)
        problems += [f"schema: {e.json_path}: {e.message}" for e in validator.iter_errors(doc)]

    assert doc["format"] == "keeptime-bench" and doc["version"] == 2
    assert doc["runtime"]["language"] == language
    names = {m["name"] for m in doc["methods"]}
    cells = doc["results"]
    if len(cells) != len(doc["parameters"]["methods"]) * len(doc["parameters"]["durations_ns"]):
        problems.append("not one cell per method and duration")
    for c in cells:
        where = f'{c["method"]} @ {c["duration_ns"]} ns'
        if c["method"] not in names:
            problems.append(f"{where}: method not described")
        order = [c["min_ns"], c["p50_ns"], c["p90_ns"], c["p99_ns"], c["p999_ns"], c["max_ns"]]
        if order != sorted(order):
            problems.append(f"{where}: statistics out of order {order}")
        if not c["min_ns"] <= c["mean_ns"] <= c["max_ns"]:
            problems.append(f"{where}: mean outside [min, max]")
        if not 0 <= c["early"] <= c["samples"] or (c["early"] > 0) != (c["min_ns"] < 0):
            problems.append(f"{where}: early count disagrees with min")
        hist = c["histogram"]
        if sum(b["count"] for b in hist) != c["samples"]:
            problems.append(f"{where}: histogram counts do not add up to samples")
        for b in hist:
            if b["le_ns"] != le_of(b["le_ns"]) or b["gt_ns"] != gt_of(b["le_ns"]) or b["count"] < 1:
                problems.append(f"{where}: bucket {b} is not on the spec's edges")
        if [b["le_ns"] for b in hist] != sorted({b["le_ns"] for b in hist}):
            problems.append(f"{where}: buckets not increasing")
        if hist and (le_of(c["min_ns"]) != hist[0]["le_ns"] or le_of(c["max_ns"]) != hist[-1]["le_ns"]):
            problems.append(f"{where}: min or max outside the histogram")
    for p in problems:
        print("check_bench_result:", p)
    if problems:
        sys.exit(1)
    print(f"check_bench_result: {result_path}: {len(cells)} cells follow spec/bench-result.md")


if __name__ == "__main__":
    main()
