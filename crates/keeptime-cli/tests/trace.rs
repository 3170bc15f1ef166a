//! `keeptime trace`: a short real recording (invariants only: the file loads
//! back with the asked lengths and rounds) and every way the input can be bad.

use assert_cmd::Command;
use keeptime::trace::Trace;
use predicates::prelude::*;
use std::path::PathBuf;

fn keeptime() -> Command {
    Command::cargo_bin("keeptime").expect("the keeptime binary is built")
}

fn shared(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../keeptime/tests/data")
        .join(file)
}

/// Exit status 2 and exactly one line on stderr containing every `needle`.
fn fails_with_one_line(cmd: &mut Command, needles: &[&str]) {
    let out = cmd.assert().code(2).get_output().clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in {err}");
    }
    assert!(out.stdout.is_empty());
}

#[test]
fn a_short_recording_loads_back_and_prints_summary_and_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.csv.gz");
    let out = keeptime()
        .args([
            "trace",
            "-q",
            "--seconds",
            "0.05",
            "--lengths",
            "5us,20us,80us",
            "--rounds",
            "2",
            "--after-waits",
            "2",
        ])
        .args([
            "--durations",
            "250us,1ms",
            "--tails",
            "5%,0.001",
            "--draws",
            "200",
            "-o",
        ])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let t = Trace::load(&file).unwrap();
    assert_eq!(t.lengths(), [5_000, 20_000, 80_000]);
    let mut rounds: Vec<u32> = t.rows().iter().map(|r| r.round).collect();
    rounds.dedup();
    assert_eq!(rounds, [0, 1]);
    // at least the default 67 waits per (round, length) block, at most 1500
    for s in t.summary() {
        assert!((134..=3000).contains(&s.n), "{s:?}");
        assert!(stdout.contains(&format!("{:>6}", s.n)));
    }
    // never early: every overshoot ≥ 0
    assert!(t.rows().iter().all(|r| r.overshoot_ns >= 0));
    let header = std::fs::read(&file).unwrap();
    assert_eq!(&header[..2], &[0x1f, 0x8b]);
    assert!(stdout.contains("over p50"), "{stdout}");
    assert!(stdout.contains("oracle (200 draws)"), "{stdout}");
    // after the oracle's two header lines, one line per duration and tail
    let table: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("oracle ("))
        .skip(2)
        .collect();
    assert_eq!(table.len(), 4, "{stdout}");
    assert!(table[0].starts_with("   250 µs    5.0%"), "{stdout}");
    assert!(table[3].starts_with("     1 ms    0.1%"), "{stdout}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!(
            "wrote {} waits to",
            t.rows().len() + t.after_rows().len()
        )),
        "{stderr}"
    );
    // two of each short length right after a 10.24 ms wait, kept apart
    let mut after: Vec<(u64, u64)> = t
        .after_rows()
        .iter()
        .map(|a| (a.row.os_wait_ns, a.after_ns))
        .collect();
    after.sort_unstable();
    let want: Vec<(u64, u64)> = [40_000, 80_000, 160_000, 320_000]
        .into_iter()
        .flat_map(|l| [(l, 10_240_000); 2])
        .collect();
    assert_eq!(after, want);
}

#[test]
fn the_oracle_of_a_shared_trace_matches_its_defaults() {
    let out = keeptime()
        .args(["trace", "--draws", "400", "--oracle"])
        .arg(shared("amd-epyc-kvm-haltpoll.csv.gz"))
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    // 13 lengths, then 5 durations × 3 tails
    assert!(stdout.contains("20.48 ms    180"), "{stdout}");
    for d in ["100 µs", "250 µs", "1 ms", "2.5 ms", "10 ms"] {
        for t in ["5.0%", "1.0%", "0.1%"] {
            let line = format!("{d:>9} {t:>7}");
            assert!(stdout.contains(&line), "{line:?} not in {stdout}");
        }
    }
}

#[test]
fn unreadable_or_malformed_traces_name_the_file_and_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.csv.gz");
    fails_with_one_line(
        keeptime().args(["trace", "--oracle"]).arg(&missing),
        &[&missing.display().to_string(), "cannot read the trace"],
    );

    let wrong = dir.path().join("wrong.csv");
    std::fs::write(
        &wrong,
        "round,os_wait,overshoot_ns,thread_cpu_ns\n0,5000,1,1\n",
    )
    .unwrap();
    fails_with_one_line(
        keeptime().args(["trace", "--oracle"]).arg(&wrong),
        &["wrong.csv: line 1: unknown column 'os_wait'"],
    );

    let negative = dir.path().join("neg.csv");
    std::fs::write(
        &negative,
        "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,5000,1,1\n0,-10000,1,1\n",
    )
    .unwrap();
    fails_with_one_line(
        keeptime().args(["trace", "--oracle"]).arg(&negative),
        &["neg.csv: line 3: os_wait_ns is -10000"],
    );

    let not_gz = dir.path().join("plain.csv.gz");
    std::fs::write(
        &not_gz,
        "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,5000,1,1\n",
    )
    .unwrap();
    fails_with_one_line(
        keeptime().args(["trace", "--oracle"]).arg(&not_gz),
        &["plain.csv.gz: not a gzip-compressed trace"],
    );
}

#[test]
fn bad_flags_are_one_line_and_exit_2() {
    let trace = shared("amd-epyc-kvm-haltpoll.csv.gz");
    for (flag, value, needle) in [
        ("--tails", "1.5", "'1.5' is not a share in (0, 1)"),
        ("--tails", "nan", "'nan' is not a share"),
        ("--tails", "0%", "'0%' is not a share"),
        ("--durations", "0ms", "at least 1ns"),
        ("--draws", "0", "draws '0'"),
    ] {
        fails_with_one_line(
            keeptime()
                .args(["trace", flag, value, "--oracle"])
                .arg(&trace),
            &[needle],
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.csv");
    for (flag, value, needle) in [
        ("--seconds", "0", "recording time '0' is out of range"),
        ("--seconds", "-1", "'-1'"),
        ("--lengths", "5us,-1ms", "'-1ms'"),
        ("--rounds", "0", "rounds '0'"),
        ("--after-waits", "-1", "after-waits '-1'"),
        (
            "--after-waits",
            "10001",
            "after-waits '10001': expected a whole number from 0 to 10000",
        ),
    ] {
        fails_with_one_line(
            keeptime().args(["trace", flag, value, "-o"]).arg(&out),
            &[needle],
        );
    }
    assert!(!out.exists());
    // an unwritable output fails before recording
    let nowhere = dir.path().join("no/such/dir/t.csv.gz");
    fails_with_one_line(
        keeptime()
            .args(["trace", "--seconds", "3600", "-o"])
            .arg(&nowhere),
        &["no/such/dir/t.csv.gz: cannot write the trace"],
    );
    // neither source, or both modes at once: clap's usage error, exit 2
    keeptime().arg("trace").assert().code(2);
    keeptime()
        .args(["trace", "--seconds", "1", "--oracle"])
        .arg(&trace)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--seconds"));
}

#[test]
fn a_profile_from_a_trace_or_a_recording_loads_on_this_machine() {
    use keeptime::profile::Profile;
    let dir = tempfile::tempdir().unwrap();
    // From an existing trace: the last 1024 waits of each bucket.
    let from_trace = dir.path().join("trace.profile");
    let out = keeptime()
        .args([
            "trace",
            "--draws",
            "100",
            "--durations",
            "1ms",
            "--tails",
            "1%",
        ])
        .arg("--oracle")
        .arg(shared("amd-epyc-kvm-haltpoll.csv.gz"))
        .arg("--profile")
        .arg(&from_trace)
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("wrote a profile of this machine"),
        "{stderr}"
    );
    // How to use it without code, with a path that works from anywhere.
    let hint = format!(
        "KEEPTIME_PROFILE={} starts keeptime's own sleepers from it",
        std::fs::canonicalize(&from_trace).unwrap().display()
    );
    assert!(stderr.contains(&hint), "{stderr}");
    // The shared trace has blocks only: said so, on one line of its own.
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with(
                "note: the trace holds no short waits recorded right after a long one"
            ))
            .count(),
        1,
        "{stderr}"
    );
    let p = Profile::load(&from_trace).unwrap();
    let trace = Trace::load(shared("amd-epyc-kvm-haltpoll.csv.gz")).unwrap();
    let mut per_bucket = [0usize; keeptime::estimate::BUCKETS];
    for r in trace.rows() {
        per_bucket[keeptime::estimate::bucket_of(r.os_wait_ns)] += 1;
    }
    assert_eq!(
        p.samples(),
        per_bucket.map(|n| n.min(keeptime::estimate::WINDOW))
    );
    assert_eq!(p, Profile::from_trace(&trace, p.machine().clone()));
    // From a recording made for it (no trace file kept).
    let recorded = dir.path().join("rec.profile");
    let out = keeptime()
        .args([
            "trace",
            "-q",
            "--seconds",
            "0.05",
            "--lengths",
            "20us,300us",
            "--rounds",
            "1",
            "--after-waits",
            "3",
        ])
        .args([
            "--durations",
            "1ms",
            "--tails",
            "1%",
            "--draws",
            "100",
            "--profile",
        ])
        .arg(&recorded)
        .assert()
        .success()
        .get_output()
        .clone();
    // A recording with them: no note.
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains("note:"), "{stderr}");
    let p = Profile::load(&recorded).unwrap();
    let n = p.samples();
    // The blocks (20 and 300 µs), and three each of 40, 80, 160 and 320 µs
    // right after a long wait (buckets 2, 3, 4 and, with the 300 µs, 5).
    assert!(n[1] > 0 && n[5] > 3, "{n:?}");
    assert_eq!((n[2], n[3], n[4]), (3, 3, 3), "{n:?}");
    assert_eq!(n.iter().filter(|&&k| k > 0).count(), 5, "{n:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn an_unwritable_profile_fails_before_anything_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("no/such/dir/p.profile");
    fails_with_one_line(
        keeptime()
            .args(["trace", "--seconds", "3600", "--profile"])
            .arg(&nowhere),
        &["no/such/dir/p.profile: cannot write the profile"],
    );
}

#[test]
fn a_failed_run_keeps_an_existing_profile_and_leaves_no_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_trace = dir.path().join("not-a-trace.csv");
    std::fs::write(&not_a_trace, "this is not a trace\n").unwrap();
    // An existing profile is kept as it was: the run checked it could write
    // there without truncating it, then failed before writing.
    let existing = dir.path().join("host.profile");
    std::fs::write(&existing, "an earlier profile\n").unwrap();
    fails_with_one_line(
        keeptime()
            .args(["trace", "--oracle"])
            .arg(&not_a_trace)
            .arg("--profile")
            .arg(&existing),
        &["not-a-trace.csv"],
    );
    assert_eq!(
        std::fs::read_to_string(&existing).unwrap(),
        "an earlier profile\n"
    );
    // A profile path that did not exist is not left behind, empty.
    let fresh = dir.path().join("new.profile");
    fails_with_one_line(
        keeptime()
            .args(["trace", "--oracle"])
            .arg(&not_a_trace)
            .arg("--profile")
            .arg(&fresh),
        &["not-a-trace.csv"],
    );
    assert!(!fresh.exists());
}
