//! `keeptime report` and `keeptime bench --report`: the page's structure
//! from real (short) bench runs, version-1 files as other runtimes still
//! write them, and every bad-input case. The browser checks (rendering,
//! screenshot) are in mk/report.mk.

use assert_cmd::Command;
use keeptime_cli::bench::Family;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn keeptime() -> Command {
    Command::cargo_bin("keeptime").expect("the keeptime binary is built")
}

/// A real run: three methods, two durations, a few samples (well under a second).
fn bench_json(dir: &Path, name: &str, durations: &str) -> PathBuf {
    let path = dir.join(name);
    keeptime()
        .args([
            "bench",
            "-q",
            "--samples",
            "4",
            "--warmup",
            "1",
            "--methods",
            "spin-pause,sleep-default-slack,keeptime",
            "--durations",
            durations,
            "--export-json",
        ])
        .arg(&path)
        .assert()
        .success();
    path
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn write_json(p: &Path, v: &Value) {
    std::fs::write(p, serde_json::to_vec(v).unwrap()).unwrap();
}

/// Renames method `from` to `to` everywhere in `doc`.
fn rename(doc: &mut Value, from: &str, to: &str) {
    for m in doc["methods"].as_array_mut().unwrap() {
        if m["name"] == from {
            m["name"] = to.into();
        }
    }
    for n in doc["parameters"]["methods"].as_array_mut().unwrap() {
        if *n == from {
            *n = to.into();
        }
    }
    for c in doc["results"].as_array_mut().unwrap() {
        if c["method"] == from {
            c["method"] = to.into();
        }
    }
}

/// `doc` as a version-1 writer would have written it: `seed` instead of
/// `family`, no return column or late share, and the method `from` renamed
/// `to` everywhere (another runtime's own name for its OS sleep).
fn as_version_1(doc: &mut Value, from: &str, to: &str, seed: Option<&str>) {
    doc["version"] = 1.into();
    for m in doc["methods"].as_array_mut().unwrap() {
        let m = m.as_object_mut().unwrap();
        m.remove("family");
        let renamed = m["name"] == from;
        if renamed {
            m.insert("name".into(), to.into());
        }
        let seed = if renamed { seed.map(Value::from) } else { None };
        m.insert("seed".into(), seed.unwrap_or(Value::Null));
    }
    for n in doc["parameters"]["methods"].as_array_mut().unwrap() {
        if *n == from {
            *n = to.into();
        }
    }
    for c in doc["results"].as_array_mut().unwrap() {
        let c = c.as_object_mut().unwrap();
        for k in ["return_p50_ns", "return_p90_ns", "late_share"] {
            c.remove(k);
        }
        if c["method"] == from {
            c.insert("method".into(), to.into());
        }
    }
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// Runs `keeptime report FILES -o out` expecting exit `code`; returns stderr.
fn report_fails(files: &[&Path], out: &Path, code: i32) -> String {
    let assert = keeptime()
        .arg("report")
        .args(files)
        .arg("-o")
        .arg(out)
        .assert()
        .code(code);
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert_eq!(err.lines().count(), 1, "one line expected: {err}");
    err
}

/// Nothing but `keep` in `dir`: no page, no temporary file.
fn only_files(dir: &Path, keep: &[&str]) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut want: Vec<String> = keep.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(names, want);
}

#[test]
fn one_file_makes_a_self_contained_page() {
    let dir = TempDir::new().unwrap();
    let json = bench_json(dir.path(), "rust.json", "50us,20us");
    let out = dir.path().join("page.html");
    keeptime()
        .args(["report"])
        .arg(&json)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Two charts per duration, each an inline plotters SVG with its table.
    assert_eq!(count(&html, "<figure class=\"chart\""), 4);
    assert_eq!(count(&html, "data-kind=\"cdf\""), 2);
    assert_eq!(count(&html, "data-kind=\"tradeoff\""), 2);
    assert_eq!(count(&html, "<svg "), 4);
    assert_eq!(count(&html, "<table class=\"dist\">"), 2);
    assert_eq!(count(&html, "<table class=\"cost\">"), 2);
    // Self-contained: no script, no stylesheet or image links, no URL but
    // the SVG namespace.
    assert!(!html.contains("<script"));
    assert!(!html.contains("<link"));
    assert!(!html.contains("src="));
    assert_eq!(
        count(&html, "http"),
        count(&html, "http://www.w3.org/2000/svg")
    );
    // Header: machine, run, verdict lines; the clock report with findings.
    for part in [
        "clocksource",
        "virtualisation",
        "timer slack",
        "idle driver",
        "Verdict",
        "keeptime: p99",
        "<table class=\"clocks\">",
        "MONOTONIC",
        "50 µs",
        "20 µs",
    ] {
        assert!(html.contains(part), "missing {part}");
    }
    // Axis labels, and units chosen per tick (ns / µs).
    assert!(html.contains("p99 error (log)"));
    assert!(html.contains("share of waits with error"));
    let flat = html.replace('\n', "");
    assert!(flat.contains(" µs</text>") || flat.contains(" ns</text>"));
    // Every method has its colour in both charts of a duration.
    for m in ["spin-pause", "sleep-default-slack", "keeptime"] {
        assert!(
            count(&html, &format!("{{&quot;name&quot;:&quot;{m}&quot;")) >= 4,
            "{m}"
        );
    }
}

#[test]
fn bench_report_runs_then_writes_the_page() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("bench.html");
    let json = dir.path().join("bench.json");
    keeptime()
        .args([
            "bench",
            "-q",
            "--samples",
            "3",
            "--warmup",
            "1",
            "--methods",
            "keeptime,spin-pause",
            "--durations",
            "30us",
            "--export-json",
        ])
        .arg(&json)
        .arg("--report")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert_eq!(count(&html, "<figure class=\"chart\""), 2);
    // The result carries the clock report, valid against the schema's field.
    let doc = read_json(&json);
    assert!(doc["clocks"]["clocks"]
        .as_array()
        .is_some_and(|c| !c.is_empty()));
    only_files(dir.path(), &["bench.html", "bench.json"]);
}

#[test]
fn bench_report_to_an_unwritable_place_fails_before_measuring() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("missing-dir").join("x.html");
    let assert = keeptime()
        .args([
            "bench",
            "-q",
            "--samples",
            "1",
            "--durations",
            "10us",
            "--report",
        ])
        .arg(&out)
        .assert()
        .code(1);
    let err = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(err.contains("cannot write report"), "{err}");
    assert!(assert.get_output().stdout.is_empty(), "no bench ran: {err}");
}

#[test]
fn several_files_side_by_side_and_different_durations_named() {
    let dir = TempDir::new().unwrap();
    let a = bench_json(dir.path(), "a.json", "40us,20us");
    let b = bench_json(dir.path(), "b.json", "40us,10us");
    // Make b another runtime, whose OS sleep has its own name, writing the
    // format's version 1 as the other runtimes' benches still do.
    let mut doc = read_json(&b);
    doc["runtime"] = serde_json::json!({"language": "go", "name": "gc", "version": "go1.23.4"});
    as_version_1(&mut doc, "sleep-default-slack", "time-sleep", Some("003"));
    write_json(&b, &doc);
    let out = dir.path().join("all.html");
    keeptime()
        .arg("report")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("different durations"));
    // Which durations each file has, and the one drawn side by side.
    assert!(html.contains("40 µs, 20 µs"));
    assert!(html.contains("40 µs, 10 µs"));
    assert!(html.contains("<b class=\"shared\">40 µs</b>"));
    // 2 side-by-side charts, then 2 + 2 per file for each file's durations.
    assert_eq!(count(&html, "<figure class=\"chart\""), 2 + 4 + 4);
    assert!(html.contains("go gc go1.23.4: keeptime"));
    assert!(html.contains("go gc go1.23.4: time-sleep"));
    assert!(html.contains(": sleep-default-slack"));
    // The version-2 file has the return column; the version-1 file's cells
    // show a dash there.
    assert!(html.contains("<th>return p50 / p90</th>"));
    assert!(html.contains("<td>—</td>"));
}

#[test]
fn version_1_files_are_read_with_families_from_the_old_fields() {
    let dir = TempDir::new().unwrap();
    let path = bench_json(dir.path(), "old.json", "30us");
    let mut doc = read_json(&path);
    // A version-1 file of another runtime: its OS sleep under its own name,
    // with a seed (which says nothing of the family), and no pure spin of
    // the reference names but a busy loop of its own.
    as_version_1(&mut doc, "sleep-default-slack", "park-nanos", Some("000"));
    rename(&mut doc, "spin-pause", "go-spin");
    write_json(&path, &doc);
    let bytes = std::fs::read(&path).unwrap();
    let d = keeptime_cli::report::input::parse(&bytes, "old.json").unwrap();
    assert_eq!(d.version, 1);
    let families: Vec<(&str, Option<Family>)> = d
        .methods
        .iter()
        .map(|m| (m.name.as_str(), m.family))
        .collect();
    assert_eq!(
        families,
        [
            ("go-spin", None),
            ("park-nanos", Some(Family::OsSleep)),
            ("keeptime", Some(Family::Keeptime)),
        ]
    );
    assert!(d.results.iter().all(|c| c.ret.is_none()));
    let out = dir.path().join("old.html");
    keeptime()
        .arg("report")
        .arg(&path)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    // The verdict found the OS sleep by its family; the unknown method is
    // drawn but is no baseline.
    assert!(
        html.contains("the accuracy of park-nanos")
            || html.contains("no more accurate than park-nanos"),
        "verdict"
    );
    assert!(!html.contains("pure spin (go-spin)"));
    assert_eq!(count(&html, "<figure class=\"chart\""), 2);

    // The version-1 rule, one case per step.
    use keeptime_cli::report::input::family_of_v1;
    assert_eq!(family_of_v1("hybrid-1ms"), Some(Family::SleepThenSpin));
    assert_eq!(family_of_v1("busy-loop"), Some(Family::BusyLoop));
    assert_eq!(family_of_v1("keeptime-rust"), Some(Family::Keeptime));
    assert_eq!(family_of_v1("compensated"), Some(Family::CompensatedSleep));
    assert_eq!(family_of_v1("thread-sleep"), Some(Family::OsSleep));
    assert_eq!(family_of_v1("park-nanos"), Some(Family::OsSleep));
    assert_eq!(family_of_v1("go-spin"), None);
}

#[test]
fn not_json_is_one_line_exit_2_nothing_written() {
    let dir = TempDir::new().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "this is not json").unwrap();
    let out = dir.path().join("out.html");
    let err = report_fails(&[&bad], &out, 2);
    assert!(
        err.contains("bad.json") && err.contains("not JSON"),
        "{err}"
    );
    only_files(dir.path(), &["bad.json"]);
}

/// A change that breaks a good document.
type Edit = Box<dyn Fn(&mut Value)>;

#[test]
fn wrong_format_version_or_fields_are_named() {
    let dir = TempDir::new().unwrap();
    let good = bench_json(dir.path(), "good.json", "20us");
    let base = read_json(&good);
    let out = dir.path().join("out.html");
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "format.json",
            Box::new(|d| d["format"] = "hyperfine".into()),
            "format is \"hyperfine\"",
        ),
        (
            "noformat.json",
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("format");
            }),
            "no \"format\" field",
        ),
        (
            "version.json",
            Box::new(|d| d["version"] = 3.into()),
            "version 3 of the keeptime-bench format; this keeptime reads versions 1 and 2",
        ),
        (
            "nofamily.json",
            Box::new(|d| {
                d["methods"][0].as_object_mut().unwrap().remove("family");
            }),
            "methods[0]: missing field `family` (required from version 2)",
        ),
        (
            "family.json",
            Box::new(|d| d["methods"][1]["family"] = "teleport".into()),
            "methods[1]: unknown variant `teleport`",
        ),
        (
            "return.json",
            Box::new(|d| {
                d["results"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("return_p90_ns");
            }),
            "results[0]: return_p50_ns and return_p90_ns come together",
        ),
        (
            "nomachine.json",
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("machine");
            }),
            "missing field `machine`",
        ),
        (
            "nop99.json",
            Box::new(|d| {
                d["results"][1].as_object_mut().unwrap().remove("p99_ns");
            }),
            "results[1]: missing field `p99_ns`",
        ),
        (
            "counts.json",
            Box::new(|d| d["results"][0]["samples"] = 999.into()),
            "results[0]: histogram counts add up to 4, but samples is 999",
        ),
        (
            "empty.json",
            Box::new(|d| d["results"] = serde_json::json!([])),
            "\"results\" is empty",
        ),
        (
            "array.json",
            Box::new(|d| *d = serde_json::json!([1, 2])),
            "not a JSON object",
        ),
    ];
    for (name, edit, want) in cases {
        let mut doc = base.clone();
        edit(&mut doc);
        let path = dir.path().join(name);
        write_json(&path, &doc);
        // The bad file second: a good first file writes nothing either.
        let err = report_fails(&[&good, &path], &out, 2);
        assert!(err.contains(name), "{err}");
        assert!(err.contains(want), "{name}: {err}");
        assert!(!out.exists());
    }
    let missing = dir.path().join("nope.json");
    let err = report_fails(&[&missing], &out, 2);
    assert!(
        err.contains("nope.json") && err.contains("cannot read"),
        "{err}"
    );
}

#[test]
fn unwritable_output_is_exit_1_and_leaves_nothing() {
    let dir = TempDir::new().unwrap();
    let good = bench_json(dir.path(), "good.json", "20us");
    // A directory that does not exist.
    let out = dir.path().join("no-such-dir").join("out.html");
    let err = report_fails(&[&good], &out, 1);
    assert!(
        err.contains("cannot write report") && err.contains("out.html"),
        "{err}"
    );
    // A directory in the way of the file.
    let sub = dir.path().join("taken.html");
    std::fs::create_dir(&sub).unwrap();
    let err = report_fails(&[&good], &sub, 1);
    assert!(err.contains("is a directory"), "{err}");
    only_files(dir.path(), &["good.json", "taken.html"]);
    assert_eq!(std::fs::read_dir(&sub).unwrap().count(), 0);
}

#[test]
fn a_failed_report_keeps_the_old_page() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("page.html");
    std::fs::write(&out, "old page").unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    report_fails(&[&bad], &out, 2);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "old page");
}

#[test]
fn the_same_runtime_twice_is_told_apart() {
    let dir = TempDir::new().unwrap();
    let a = bench_json(dir.path(), "a.json", "20us");
    let b = dir.path().join("b.json");
    std::fs::copy(&a, &b).unwrap();
    let out = dir.path().join("two.html");
    for files in [[&a, &b], [&a, &a]] {
        keeptime()
            .arg("report")
            .args(files)
            .arg("-o")
            .arg(&out)
            .assert()
            .success();
    }
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(
        html.contains("(a.json): keeptime"),
        "first of the pair named"
    );
    assert!(
        html.contains("(a.json) #2: keeptime"),
        "second of the pair named"
    );
    // Same durations: no warning, everything drawn side by side.
    assert!(!html.contains("different durations"));
}

#[test]
fn crowd_rows_become_one_table() {
    let dir = TempDir::new().unwrap();
    let json = bench_json(dir.path(), "rust.json", "50us");
    let plain = dir.path().join("plain.html");
    keeptime()
        .arg("report")
        .arg(&json)
        .arg("-o")
        .arg(&plain)
        .assert()
        .success();
    let html = std::fs::read_to_string(&plain).unwrap();
    assert_eq!(count(&html, "<table class=\"crowd\">"), 0);

    // The optional crowd array (spec/bench-result.md), as `bench --crowd 16` writes it.
    let mut doc = read_json(&json);
    let row = |method: &str, early: u64| {
        serde_json::json!({
            "method": method, "threads": 16, "duration_ns": 1_000_000, "warmup": 47,
            "samples": 32_000, "p50_ns": 1_900, "p99_ns": 27_000, "max_ns": 610_000,
            "early": early, "late_share": 0.012, "cpu_percent": 41.0,
            "wall_ns": 2_000_000_000u64, "cpu_ns": 820_000_000u64
        })
    };
    doc["crowd"] = serde_json::json!([
        row("keeptime", 0),
        row("clock-nanosleep-abs", 0),
        row("spin-pause", 3)
    ]);
    // Another runtime may leave out the optional fields.
    doc["crowd"][1].as_object_mut().unwrap().remove("wall_ns");
    write_json(&json, &doc);
    let out = dir.path().join("crowd.html");
    keeptime()
        .arg("report")
        .arg(&json)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let html = std::fs::read_to_string(&out).unwrap();
    assert_eq!(count(&html, "<table class=\"crowd\">"), 1);
    assert!(html.contains("16 threads each sleeping 1 ms in a loop at once"));
    assert_eq!(count(&html, "<td>1.90 µs</td>"), 3);
    assert_eq!(count(&html, "<td class=\"bad\">3</td>"), 1);
    assert!(html.contains("<th>late &gt; 2 µs</th>") || html.contains("<th>late > 2 µs</th>"));
}
