//! `keeptime latency` through the real binary: bad input, the cyclictest
//! histogram layout, the periodic JSON against the schema. Invariants only,
//! never timings.

use assert_cmd::Command;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

fn keeptime() -> Command {
    Command::cargo_bin("keeptime").expect("the keeptime binary is built")
}

fn spec(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../spec")
        .join(file)
}

fn validate(doc: &Value) {
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(spec("bench-result.schema.json")).unwrap())
            .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema violations: {errors:#?}");
}

#[test]
fn bad_input_exits_2_with_one_line_and_starts_nothing() {
    // Each case asks for an hour-long run: had any measuring thread started,
    // the command would not end before the hang guard below.
    let cases: &[(&[&str], &[&str])] = &[
        (&["--interval", "0"], &["'0'", "positive duration"]),
        (&["--interval", "0ms"], &["zero interval '0ms'"]),
        (&["--interval", "-1ms"], &["negative interval '-1ms'"]),
        (&["--interval", "NaN"], &["'NaN' is not a number"]),
        (&["--interval", "nanms"], &["'nanms' is not a number"]),
        (&["--duration", "a while"], &["'a while'", "units"]),
        (&["--threads", "0"], &["'0'", "1 to 1024"]),
        (&["--threads", "-2"], &["'-2'", "1 to 1024"]),
        (&["--priority", "0"], &["'0'", "1 to 99"]),
        (&["--priority", "100"], &["'100'", "1 to 99"]),
        (
            &["--method", "keeptime,cyclic"],
            &[
                "'cyclic'",
                "clock-nanosleep, keeptime, keeptime-efficient or spin",
            ],
        ),
        (
            &["--histogram", "400us", "--interval", "1ms"],
            &["histogram bound 400 µs", "below the interval 1 ms"],
        ),
        (&["--dma-latency", "-1"], &["'-1'", "0 to 2147483647"]),
        (&["--dma-latency", "4294967296"], &["0 to 2147483647"]),
        (&["--affinity", "4095"], &["CPU 4095", "allowed CPUs"]),
    ];
    for (args, needles) in cases {
        let hour: &[&str] = if args.contains(&"--duration") {
            &[]
        } else {
            &["--duration", "1h"]
        };
        let out = keeptime()
            .args(["latency", "--quiet"])
            .args(hour)
            .args(*args)
            .timeout(Duration::from_secs(60))
            .assert()
            .code(2);
        let o = out.get_output();
        let stderr = String::from_utf8(o.stderr.clone()).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(o.stdout.is_empty(), "{args:?}: printed results");
        for needle in *needles {
            assert!(
                stderr.contains(needle),
                "{args:?}: {stderr:?} lacks {needle:?}"
            );
        }
    }
}

#[test]
fn histogram_has_cyclictests_layout_and_json_validates() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("lat.json");
    let out = keeptime()
        .args([
            "latency",
            "--interval",
            "1ms",
            "--duration",
            "150ms",
            "--threads",
            "2",
        ])
        .args([
            "--method",
            "clock-nanosleep,keeptime",
            "--histogram",
            "2ms",
            "--quiet",
        ])
        .arg("--export-json")
        .arg(&json)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let stdout = String::from_utf8(out.get_output().stdout.clone()).unwrap();

    // Every line is a `#` comment or a row `%06d %06lu\t%06lu`; 2000 rows per method.
    let mut rows = Vec::new();
    for line in stdout.lines() {
        if line.starts_with('#') {
            continue;
        }
        let (idx, counts) = line.split_once(' ').expect("index, space, counts");
        assert_eq!(idx.len(), 6, "{line}");
        let c: Vec<&str> = counts.split('\t').collect();
        assert_eq!(c.len(), 2, "{line}");
        assert!(c
            .iter()
            .all(|v| v.len() == 6 && v.bytes().all(|b| b.is_ascii_digit())));
        rows.push((
            idx.parse::<usize>().unwrap(),
            c[0].parse::<u64>().unwrap(),
            c[1].parse::<u64>().unwrap(),
        ));
    }
    assert_eq!(rows.len(), 2 * 2000);
    assert_eq!(rows[0].0, 0);
    assert_eq!(rows[1999].0, 1999);
    assert!(stdout.contains("# Method: clock-nanosleep\n# Histogram\n"));
    assert_eq!(stdout.matches("# Histogram Overflows:").count(), 2);

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    validate(&doc);
    let p = &doc["parameters"];
    assert_eq!(p["schedule"], "periodic");
    assert_eq!(p["durations_ns"], serde_json::json!([1_000_000]));
    assert_eq!(
        (p["interval_ns"].as_u64(), p["threads"].as_u64()),
        (Some(1_000_000), Some(2))
    );
    assert_eq!(p["interrupted"], false);
    let cells = doc["results"].as_array().unwrap();
    assert_eq!(cells.len(), 6, "2 methods × (2 threads + all)");
    for (m, method) in ["clock-nanosleep", "keeptime"].iter().enumerate() {
        let c = &cells[3 * m..3 * m + 3];
        assert!(c
            .iter()
            .all(|x| x["method"] == *method && x["duration_ns"] == 1_000_000));
        assert_eq!(
            (c[0]["thread"].as_u64(), c[1]["thread"].as_u64()),
            (Some(0), Some(1))
        );
        assert!(c[2]["thread"].is_null());
        let n = |x: &Value| x["samples"].as_u64().unwrap();
        assert_eq!(n(&c[2]), n(&c[0]) + n(&c[1]));
        let o = |x: &Value| x["overruns"].as_u64().unwrap();
        assert_eq!(o(&c[2]), o(&c[0]) + o(&c[1]));
        // Histogram rows + overflows account for exactly every sample of each thread.
        let overflows: Vec<u64> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("# Histogram Overflows:"))
            .nth(m)
            .unwrap()
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        for (t, cell) in c[..2].iter().enumerate() {
            let rows_sum: u64 = rows[2000 * m..2000 * (m + 1)]
                .iter()
                .map(|r| if t == 0 { r.1 } else { r.2 })
                .sum();
            assert_eq!(rows_sum + overflows[t], n(cell));
        }
        // Never early: these two methods never wake before the deadline.
        assert!(c
            .iter()
            .all(|x| x["early"] == 0 && x["min_ns"].as_i64().unwrap() >= 0));
    }
}

#[test]
fn refused_knobs_warn_once_and_the_run_goes_on() {
    // As root the knobs are granted; either way the run finishes and the
    // document records what was in force.
    let out = keeptime()
        .args([
            "latency",
            "--interval",
            "2ms",
            "--duration",
            "40ms",
            "--threads",
            "2",
        ])
        .args([
            "--priority",
            "10",
            "--mlock",
            "--dma-latency",
            "0",
            "--quiet",
        ])
        .args(["--export-json", "-"])
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let o = out.get_output();
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    validate(&doc);
    let stderr = String::from_utf8(o.stderr.clone()).unwrap();
    let p = &doc["parameters"];
    let refused: Vec<&str> = p["refused"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for r in &refused {
        assert_eq!(stderr.matches(r).count(), 1, "warned once: {r}");
    }
    assert_eq!(
        p["priority"].is_null(),
        refused.iter().any(|r| r.starts_with("--priority"))
    );
    assert_eq!(
        p["mlock"] == false,
        refused.iter().any(|r| r.starts_with("--mlock"))
    );
    assert_eq!(
        p["dma_latency_us"].is_null(),
        refused.iter().any(|r| r.starts_with("--dma-latency"))
    );
}

#[test]
fn ctrl_c_ends_early_and_still_prints_and_exports() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("lat.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("keeptime"))
        .args(["latency", "--duration", "1h", "--threads", "2", "--quiet"])
        .args(["--method", "clock-nanosleep,keeptime"])
        .arg("--export-json")
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The export file is created after the SIGINT handler is installed.
    while !json.exists() {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    // SAFETY: kill with a valid pid and signal number.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) },
        0
    );
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("(interrupted)"), "{stdout}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    validate(&doc);
    assert_eq!(doc["parameters"]["interrupted"], true);
    // The second method never started: only the first one's cells.
    assert!(doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["method"] == "clock-nanosleep"));
}
