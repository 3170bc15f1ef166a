//! Drives the real `keeptime` binary. Machines are noisy: these tests assert
//! invariants (formats, orderings, exit codes), never timings.

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::path::PathBuf;

fn keeptime() -> Command {
    Command::cargo_bin("keeptime").expect("the keeptime binary is built")
}

fn spec(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../spec")
        .join(file)
}

const METHODS: [&str; 11] = [
    "busy-loop",
    "spin-pause",
    "yield-loop",
    "sleep-default-slack",
    "sleep-slack-1ns",
    "clock-nanosleep-abs",
    "compensated",
    "hybrid-1ms",
    "keeptime",
    "keeptime-efficient",
    "keeptime-spin",
];

#[test]
fn help_names_the_subcommands() {
    keeptime()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("bench"))
        .stdout(predicate::str::contains("clocks"))
        .stdout(predicate::str::contains("sleep"));
}

#[test]
fn bench_help_defines_error_and_cpu() {
    keeptime()
        .args(["bench", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "error = the caller's first clock reading after the call returns − deadline",
        ))
        .stdout(predicate::str::contains("CPU % = thread CPU time"));
}

#[test]
fn list_explains_every_method_in_one_line() {
    let out = keeptime().args(["bench", "--list"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), METHODS.len(), "{text}");
    for (line, name) in lines.iter().zip(METHODS) {
        assert!(line.starts_with(name), "{line}");
        assert!(line.len() > name.len() + 10, "{line}");
    }
    // Each line names the method's family.
    assert!(lines[1].contains("spin with pause"), "{text}");
    assert!(lines[3].contains("OS sleep"), "{text}");
    assert!(lines[7].contains("sleep-then-spin hybrid"), "{text}");
}

fn validate(schema_file: &str, doc: &Value) {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(spec(schema_file)).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

fn int(v: &Value, key: &str) -> i64 {
    v[key]
        .as_i64()
        .unwrap_or_else(|| panic!("{key} is an integer in {v}"))
}

#[test]
fn tiny_bench_json_validates_and_is_ordered() {
    let out = keeptime()
        .args([
            "bench",
            "--durations",
            "50us",
            "--samples",
            "20",
            "--export-json",
            "-",
        ])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).expect("stdout is JSON");
    validate("bench-result.schema.json", &doc);

    assert_eq!(doc["format"], "keeptime-bench");
    assert_eq!(doc["version"], 2);
    assert_eq!(doc["runtime"]["language"], "rust");
    assert_eq!(
        doc["parameters"]["durations_ns"],
        serde_json::json!([50_000])
    );
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), METHODS.len());
    for (cell, name) in results.iter().zip(METHODS) {
        assert_eq!(cell["method"], name);
        assert_eq!(int(cell, "duration_ns"), 50_000);
        assert_eq!(int(cell, "samples"), 20);
        let ordered =
            ["min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"].map(|k| int(cell, k));
        assert!(
            ordered.windows(2).all(|w| w[0] <= w[1]),
            "{name}: {ordered:?}"
        );
        let mean = cell["mean_ns"].as_f64().unwrap();
        assert!(
            ordered[0] as f64 <= mean && mean <= ordered[5] as f64,
            "{name}"
        );
        let early = int(cell, "early");
        assert!((0..=20).contains(&early));
        let may_be_early = ["compensated", "keeptime-efficient"].contains(&name);
        if !may_be_early {
            assert_eq!(early, 0, "{name} returned early");
            assert!(ordered[0] >= 0, "{name}");
        }
        let histogram = cell["histogram"].as_array().unwrap();
        let total: i64 = histogram.iter().map(|b| int(b, "count")).sum();
        assert_eq!(total, 20, "{name}");
        for b in histogram {
            assert!(int(b, "gt_ns") < int(b, "le_ns"));
        }
        for w in histogram.windows(2) {
            assert!(int(&w[0], "le_ns") <= int(&w[1], "gt_ns"), "{name}");
        }
        assert!(
            int(&histogram[0], "gt_ns") < ordered[0] && ordered[0] <= int(&histogram[0], "le_ns")
        );
        let cpu = cell["cpu_percent"].as_f64().unwrap();
        assert!(cpu >= 0.0, "{name}");
        // Spins and keeptime end on a reading of their own: the return
        // column; the plain OS sleeps do not.
        let own_reading = !matches!(
            name,
            "sleep-default-slack" | "sleep-slack-1ns" | "clock-nanosleep-abs" | "compensated"
        );
        assert_eq!(cell.get("return_p50_ns").is_some(), own_reading, "{name}");
        if own_reading {
            let (p50, p90) = (int(cell, "return_p50_ns"), int(cell, "return_p90_ns"));
            assert!(0 <= p50 && p50 <= p90, "{name}: {p50} {p90}");
        }
        let late = cell["late_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&late), "{name}");
    }
    // Every method named in results is described.
    let described: Vec<&str> = doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(described, METHODS);
    let families: Vec<&str> = doc["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["family"].as_str().unwrap())
        .collect();
    assert_eq!(
        families,
        [
            "busy loop",
            "spin with pause",
            "yield loop",
            "OS sleep",
            "OS sleep",
            "OS sleep",
            "compensated sleep",
            "sleep-then-spin hybrid",
            "keeptime",
            "keeptime",
            "keeptime",
        ]
    );
    assert!(doc["methods"][0].get("seed").is_none());
}

#[test]
fn tables_csv_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let md = dir.path().join("r.md");
    let out = keeptime()
        .args([
            "bench",
            "--methods",
            "keeptime,spin-pause,sleep-default-slack",
        ])
        .args([
            "--durations",
            "20us,30us",
            "--samples",
            "10",
            "--warmup",
            "3",
        ])
        .arg("--export-csv")
        .arg(&csv)
        .arg("--export-markdown")
        .arg(&md)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("wait 20 µs") && text.contains("wait 30 µs"),
        "{text}"
    );
    assert!(
        text.contains("p99.9") && text.contains("mean ± σ"),
        "{text}"
    );
    assert_eq!(
        text.matches("keeptime: p99").count(),
        2,
        "one verdict per duration: {text}"
    );
    // One hand-off check per duration, against the same run's pure spin.
    assert_eq!(
        text.matches("keeptime p50 ≤ spin p50 + 150 ns: ").count(),
        2,
        "{text}"
    );
    assert!(text.contains("return p50 / p90"), "{text}");

    let csv = std::fs::read_to_string(csv).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 1 + 6);
    assert!(rows[0].starts_with("method,duration_ns,samples"));
    assert!(rows[0].ends_with(",return_p50_ns,return_p90_ns,late_share"));
    let columns = rows[0].split(',').count();
    assert!(rows.iter().all(|r| r.split(',').count() == columns));
    // keeptime and the spin have a return; the plain OS sleep's is empty.
    for r in &rows[1..] {
        let f: Vec<&str> = r.split(',').collect();
        let ret = &f[columns - 3..columns - 1];
        if f[0] == "sleep-default-slack" {
            assert_eq!(ret, ["", ""], "{r}");
        } else {
            assert!(ret.iter().all(|v| v.parse::<i64>().is_ok()), "{r}");
        }
    }

    let md = std::fs::read_to_string(md).unwrap();
    assert_eq!(md.matches("| method |").count(), 2, "{md}");
    assert!(md.contains("### wait 20 µs"));
    assert!(md.contains("| return p50 / p90 |"), "{md}");
}

#[test]
fn clocks_json_has_its_fields() {
    let out = keeptime().args(["clocks", "--json"]).assert().success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).expect("stdout is JSON");
    let clocks = doc["clocks"].as_array().expect("clocks is an array");
    assert!(!clocks.is_empty());
    for c in clocks {
        for key in [
            "name",
            "resolution_ns",
            "granularity_ns",
            "repeat_fraction",
            "read_cost_ns",
            "monotonic_violations",
            "available",
        ] {
            assert!(c.get(key).is_some(), "clock {c} lacks {key}");
        }
    }
    let mono = clocks
        .iter()
        .find(|c| c["name"] == "MONOTONIC")
        .expect("MONOTONIC is measured");
    assert_eq!(mono["available"], true);
    assert_eq!(mono["monotonic_violations"], 0);
    assert!(mono["read_cost_ns"].as_f64().unwrap() > 0.0);
    let machine = &doc["machine"];
    for key in [
        "os",
        "arch",
        "kernel_release",
        "clocksource",
        "timer_slack_ns",
        "virtualization",
    ] {
        assert!(machine.get(key).is_some(), "machine lacks {key}");
    }
    assert!(doc["findings"].is_array());
    // The idle-latency state, beside the core's report.
    let idle = &doc["idle_latency"];
    for key in [
        "driver",
        "governor",
        "in_force_us",
        "read_error",
        "may_request",
        "request_refused",
        "device",
        "euid",
        "groups",
    ] {
        assert!(idle.get(key).is_some(), "idle_latency lacks {key}: {idle}");
    }
    assert!(idle["may_request"].is_boolean());
    // Refused exactly when not permitted, with the reason.
    assert_eq!(
        idle["may_request"].as_bool(),
        Some(idle["request_refused"].is_null())
    );
    // The async waiter's capacity, measured by the probe it describes.
    let waiter = &doc["async_waiter"];
    assert!(waiter["capacity_per_s"].as_u64() >= Some(1), "{waiter}");
    assert!(waiter["cost_ns"].as_u64() >= Some(1), "{waiter}");
    assert_eq!(waiter["probe_waits"].as_u64(), Some(200));
    assert_eq!(waiter["probe_wait_ns"].as_u64(), Some(1_000_000));
    // The wake-ups, one entry per measured length, shortest first; the host
    // kind is a documented one or null, decided by the identity beside it.
    let wake = &doc["wake_ups"];
    let lengths: Vec<(u64, u64)> = wake["lengths"]
        .as_array()
        .expect("wake_ups.lengths is an array")
        .iter()
        .map(|l| {
            assert!(l["waits"].as_u64() >= Some(1), "{l}");
            let (p50, p90, max) = (&l["late_p50_ns"], &l["late_p90_ns"], &l["late_max_ns"]);
            assert!(
                p50.as_i64() <= p90.as_i64() && p90.as_i64() <= max.as_i64(),
                "{l}"
            );
            // The field's type only, not its value: CPU is the bench's to judge.
            assert!(l["cpu_p50_ns"].is_u64(), "{l}");
            (
                l["os_wait_ns"].as_u64().unwrap(),
                l["after_ns"].as_u64().unwrap(),
            )
        })
        .collect();
    // The three lengths in a row, then the short one right after a long one.
    assert_eq!(
        lengths,
        [
            (50_000, 0),
            (1_000_000, 0),
            (10_000_000, 0),
            (50_000, 10_240_000)
        ]
    );
    assert_eq!(wake["lengths"][3]["waits"].as_u64(), Some(25));
    assert!(wake["identity"].is_object(), "{wake}");
    let kind = &wake["host_kind"];
    assert!(
        kind.is_null() || ["A", "B", "C", "D"].contains(&kind["kind"].as_str().unwrap_or("")),
        "{kind}"
    );
    // The report (without the CLI's wake-ups and async waiter) follows spec/clocks.schema.json.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../spec/clocks.schema.json"
        ))
        .expect("spec/clocks.schema.json"),
    )
    .expect("the schema parses");
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn clocks_text_has_its_sections() {
    keeptime()
        .arg("clocks")
        .assert()
        .success()
        .stdout(predicate::str::contains("MONOTONIC"))
        .stdout(predicate::str::contains("clock_getres"))
        .stdout(predicate::str::contains("machine"))
        .stdout(predicate::str::contains("CPU latency QoS"))
        .stdout(predicate::str::contains("may request"))
        .stdout(predicate::str::contains("findings"))
        .stdout(predicate::str::contains("\nwake-ups (absolute OS waits"))
        .stdout(predicate::str::contains("\n  host kind        "))
        .stdout(predicate::str::contains("\n  identified by    "))
        .stdout(predicate::str::contains("\nasync waiter"));
}

#[test]
fn sleep_adds_up_and_reports() {
    keeptime()
        .args(["sleep", "1ms"])
        .assert()
        .success()
        .stdout("");
    keeptime().args(["sleep", "0"]).assert().success();
    keeptime()
        .args(["sleep", "--verbose", "100us", "0.0002"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("woke "))
        .stdout(predicate::str::contains(
            "after the deadline (asked for 300 µs",
        ));
}

/// Every bad input: exit 2, one line on stderr naming the value, no panic.
#[test]
fn bad_input_exits_2_with_one_clear_line() {
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["bench", "--methods", "warp-drive"],
            &["'warp-drive'", "accepted methods are", "busy-loop"],
        ),
        (
            &["bench", "--durations", "5parsecs"],
            &["'5parsecs'", "'parsecs'", "accepted units"],
        ),
        (&["bench", "--durations", "-5ms"], &["'-5ms'", "negative"]),
        (&["bench", "--durations", "1e30s"], &["'1e30s'", "too long"]),
        (&["bench", "--durations", "10"], &["'10'", "no unit"]),
        (&["bench", "--durations", "0ms"], &["'0ms'", "at least 1ns"]),
        (&["bench", "--durations", "10ms,,1ms"], &["empty duration"]),
        (&["bench", "--samples", "0"], &["'0'", "at least 1 sample"]),
        (&["bench", "--samples", "-3"], &["'-3'", "negative"]),
        (&["bench", "--samples", "lots"], &["'lots'", "whole number"]),
        (&["bench", "--warmup", "-1"], &["'-1'", "negative"]),
        (&["bench", "--budget", "0s"], &["'0s'", "more than 0"]),
        (&["bench", "--budget", "soon"], &["'soon'", "units"]),
        (&["bench", "--priority", "0"], &["'0'", "1 to 99"]),
        (
            &["bench", "--tail-target", "1.5"],
            &["'1.5'", "strictly between 0 and 1"],
        ),
        (
            &["bench", "--tail-target", "0"],
            &["'0'", "strictly between 0 and 1"],
        ),
        (&["bench", "--tail-target", "NaN"], &["'NaN'", "relaxed"]),
        (&["bench", "--tail-target", "-1%"], &["'-1%'", "percentage"]),
        (&["bench", "--tail-target", "tight"], &["'tight'", "strict"]),
        (
            &["bench", "--idle-hint", "-1"],
            &["'-1'", "0 to 2147483647"],
        ),
        (
            &["bench", "--idle-hint", "2147483648"],
            &["'2147483648'", "0 to 2147483647"],
        ),
        (
            &["bench", "--idle-hint", "5ms"],
            &["'5ms'", "whole number of µs"],
        ),
        (&["bench", "--priority", "100"], &["'100'", "1 to 99"]),
        (&["bench", "--pin", "4096"], &["4096", "allowed CPUs"]),
        (&["bench", "--pin", "-1"], &["'-1'", "negative"]),
        (
            &["bench", "--crowd", "-1"],
            &["'-1'", "negative crowd size"],
        ),
        (
            &["bench", "--crowd", "1025"],
            &["'1025'", "at most 1024 threads"],
        ),
        (&["bench", "--crowd", "lots"], &["'lots'", "whole number"]),
        (
            &["bench", "--crowd", "1000", "--samples", "5000"],
            &["--samples 5000 with --crowd 1000", "at most 4000000"],
        ),
        (
            &["bench", "--crowd", "4", "--priority", "50"],
            &["--crowd 4 with --priority 50", "without --priority"],
        ),
        (&["sleep", "5parsecs"], &["'5parsecs'", "accepted units"]),
        (&["sleep", "-5ms"], &["'-5ms'", "negative"]),
        (&["sleep", "-1"], &["'-1'", "negative"]),
        (&["sleep", "1e30s"], &["'1e30s'", "too long"]),
        (
            &["sleep", "18446744073709551615ns", "1ns"],
            &["add up to more than"],
        ),
    ];
    for (args, needles) in cases {
        let out = keeptime().args(*args).assert().code(2);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        for needle in *needles {
            assert!(
                stderr.contains(needle),
                "{args:?}: {stderr:?} lacks {needle:?}"
            );
        }
        assert!(!stderr.contains("panicked"));
    }
}

#[test]
fn export_to_an_unwritable_path_fails_before_measuring() {
    keeptime()
        .args([
            "bench",
            "--samples",
            "1",
            "--export-json",
            "/nonexistent-dir/r.json",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("cannot write export file"));
}

#[test]
fn schema_rejects_broken_documents() {
    let out = keeptime()
        .args(["bench", "--methods", "keeptime", "--durations", "20us"])
        .args(["--samples", "5", "--warmup", "1", "--export-json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    validate("bench-result.schema.json", &doc);
    // The keeptime cell carries its sleeper's own account of the 5 samples.
    let acct = &doc["results"][0]["sleeper"];
    assert_eq!(acct["tail_target_ppm"], 10_000);
    assert_eq!(acct["sleeps"], 5);
    assert!(acct["late"].as_u64().unwrap() <= 5);
    assert!(acct["cpu_estimate_ns"].as_u64().unwrap() >= acct["spin_ns"].as_u64().unwrap());
    assert!(acct["unproven_sleeps"].as_u64().unwrap() <= 5);
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(spec("bench-result.schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let broken: [fn(&mut Value); 10] = [
        |d| d["version"] = 3.into(),
        // Version 2 names a family, not a seed.
        |d| {
            d["methods"][0].as_object_mut().unwrap().remove("family");
        },
        |d| d["methods"][0]["seed"] = "000".into(),
        |d| d["methods"][0]["family"] = "teleport".into(),
        // A version-1 document names a seed.
        |d| d["version"] = 1.into(),
        |d| {
            d["results"][0]
                .as_object_mut()
                .unwrap()
                .remove("return_p90_ns");
        },
        |d| d["results"][0]["sleeper"]["tail_target_ppm"] = 0.into(),
        |d| d["results"][0]["histogram"] = serde_json::json!([]),
        |d| d["results"][0]["p99_ns"] = 1.5.into(),
        |d| {
            d["machine"].as_object_mut().unwrap().remove("clocksource");
        },
    ];
    for (i, breaking) in broken.iter().enumerate() {
        let mut d = doc.clone();
        breaking(&mut d);
        assert!(!validator.is_valid(&d), "broken document {i} validated");
    }
    // The same run as the old version's writers still write it: valid.
    let mut v1 = doc.clone();
    v1["version"] = 1.into();
    for m in v1["methods"].as_array_mut().unwrap() {
        let m = m.as_object_mut().unwrap();
        m.remove("family");
        m.insert("seed".into(), Value::Null);
    }
    for c in v1["results"].as_array_mut().unwrap() {
        let c = c.as_object_mut().unwrap();
        for k in ["return_p50_ns", "return_p90_ns", "late_share"] {
            c.remove(k);
        }
    }
    validate("bench-result.schema.json", &v1);
    v1["methods"][0]["seed"] = "000, 003".into();
    validate("bench-result.schema.json", &v1);
}

#[test]
fn crowd_rows_validate_count_right_and_are_never_early() {
    let out = keeptime()
        .args([
            "bench",
            "-q",
            "--methods",
            "keeptime",
            "--durations",
            "50us",
        ])
        .args(["--samples", "3", "--warmup", "1", "--crowd", "2"])
        .args(["--export-json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    validate("bench-result.schema.json", &doc);
    let rows = doc["crowd"].as_array().expect("crowd is an array");
    let names: Vec<&str> = rows.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(names, ["keeptime", "clock-nanosleep-abs", "spin-pause"]);
    for r in rows {
        // 2 threads × exactly 3 sleeps each, at the first --durations value.
        assert_eq!(
            (int(r, "threads"), int(r, "samples"), int(r, "duration_ns")),
            (2, 6, 50_000),
            "{r}"
        );
        assert_eq!(int(r, "early"), 0, "{r}");
        assert!(int(r, "p50_ns") <= int(r, "p99_ns") && int(r, "p99_ns") <= int(r, "max_ns"));
    }
    // The tables went to stderr (stdout has the JSON): the crowd block is there.
    let text = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        text.contains("crowd: 2 threads each sleeping 50 µs"),
        "{text}"
    );
    assert!(text.contains("late > 2 µs") && text.contains("CPU (process)"));

    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(spec("bench-result.schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let broken: [fn(&mut Value); 3] = [
        |d| d["crowd"][0]["late_share"] = 1.5.into(),
        |d| d["crowd"][0]["threads"] = 0.into(),
        |d| {
            d["crowd"][0].as_object_mut().unwrap().remove("cpu_percent");
        },
    ];
    for (i, breaking) in broken.iter().enumerate() {
        let mut d = doc.clone();
        breaking(&mut d);
        assert!(
            !validator.is_valid(&d),
            "broken crowd document {i} validated"
        );
    }
}

#[test]
fn crowd_zero_is_off() {
    let out = keeptime()
        .args([
            "bench",
            "-q",
            "--methods",
            "keeptime",
            "--durations",
            "20us",
        ])
        .args(["--samples", "2", "--warmup", "1", "--crowd", "0"])
        .args(["--export-json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(doc.get("crowd").is_none());
    let text = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(!text.contains("crowd:"), "{text}");
}

#[test]
fn idle_hint_is_recorded_in_parameters_and_never_fails_the_run() {
    // Held (root) or refused (a warning on stderr): either way the run goes on.
    let out = keeptime()
        .args([
            "bench",
            "-q",
            "--methods",
            "keeptime",
            "--durations",
            "50us",
        ])
        .args(["--samples", "3", "--warmup", "1", "--idle-hint", "0"])
        .args(["--export-json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    validate("bench-result.schema.json", &doc);
    assert_eq!(doc["parameters"]["idle_hint_us"], 0);
    assert_eq!(doc["results"][0]["early"], 0);
    // Without the knob the field is absent.
    let out = keeptime()
        .args([
            "bench",
            "-q",
            "--methods",
            "keeptime",
            "--durations",
            "50us",
        ])
        .args(["--samples", "3", "--warmup", "1", "--export-json", "-"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert!(doc["parameters"].get("idle_hint_us").is_none());
}
