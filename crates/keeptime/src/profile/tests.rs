//! The profile's parser, writer and checks, on exact texts.

use super::*;

fn here() -> Fingerprint {
    Fingerprint::from_parts(
        Some("AuthenticAMD".into()),
        Some("AMD EPYC".into()),
        Some(2),
        Some("KVM".into()),
        Some("haltpoll".into()),
        Some("tsc".into()),
        Some("6.18.44".into()),
    )
}

#[test]
fn an_estimators_profile_answers_as_it_did() {
    let mut e = MarginEstimator::new();
    e.begin_sleep();
    for i in 0..1500u64 {
        e.observe(900_000, 20_000 + (i * 7_919) % 30_000);
        e.observe(120_000, 15_000 + (i * 104_729) % 9_000);
    }
    e.observe(40_000, 300_000);
    e.observe_cost(900_000, 9_000);
    e.observe_cost(20_000_000, 12_000);
    let p = Profile::from_estimator(&e, here());
    let back = Profile::parse(&p.to_text()).unwrap();
    assert_eq!(back, p);
    let f = back.estimator();
    for b in 0..BUCKETS {
        assert_eq!(f.live_samples(b), e.live_samples(b), "bucket {b}");
        assert_eq!(f.cost(b), e.cost(b));
        assert_eq!(f.compensation(b), e.compensation(b));
        for share in [50_000, 10_000, 5_000, 1_000] {
            assert_eq!(
                f.margin(b, share),
                e.margin(b, share),
                "bucket {b} at {share}"
            );
            assert_eq!(f.tail(b, share, 40_000), e.tail(b, share, 40_000));
        }
    }
}

#[test]
fn a_machine_mismatch_names_the_field_and_both_values() {
    let p = Profile::from_estimator(&MarginEstimator::new(), here());
    assert_eq!(p.check_machine(&here()), Ok(()));
    let other = Fingerprint::from_parts(
        Some("AuthenticAMD".into()),
        Some("AMD EPYC".into()),
        Some(4),
        Some("KVM".into()),
        Some("none".into()),
        Some("tsc".into()),
        Some("6.18.44".into()),
    );
    let e = p.check_machine(&other).unwrap_err();
    assert_eq!(e.kind(), ProfileErrorKind::MachineMismatch);
    assert_eq!(e.line(), 4);
    assert_eq!(e.mismatch(), Some(("cpus_online", "2", "4")));
    assert_eq!(
        e.to_string(),
        "line 4: made on another machine: cpus_online is \"2\" in the profile, \"4\" here (load it anyway with ignore_machine)"
    );
}

/// A trace row of round 0.
#[cfg(feature = "trace")]
fn row(os_wait_ns: u64, overshoot_ns: i64, thread_cpu_ns: u64) -> crate::trace::TraceRow {
    crate::trace::TraceRow {
        round: 0,
        os_wait_ns,
        overshoot_ns,
        thread_cpu_ns,
    }
}

#[cfg(feature = "trace")]
#[test]
fn a_traces_profile_keeps_the_last_rows_of_each_bucket() {
    use crate::trace::Trace;
    let mut rows = Vec::new();
    for i in 0..1_100u64 {
        rows.push(row(160_000, 5_000 + i as i64, 3_000 + i % 7));
        if i % 2 == 0 {
            rows.push(row(20_000, -3, 2_000));
        }
    }
    rows.push(row(640_000, 2_000_000_000, 2_000_000_000));
    let trace = Trace::from_rows(rows).unwrap();
    let p = Profile::from_trace(&trace, here());
    let n = p.samples();
    assert_eq!((n[1], n[4], n[6]), (550, WINDOW, 1));
    let text = p.to_text();
    // bucket 4's oldest kept row is the 77th (1 100 − 1 024 = 76 dropped).
    assert!(text.contains("bucket 4 1024\n160000 5076\n"), "{text}");
    assert!(text.contains("bucket 1 550\n20000 0\n"));
    assert!(text.contains("640000 1000000000\n"));
    // Lower medians of the kept rows' CPU, capped at 1 s.
    assert!(
        text.contains("cost 20000 2000\ncost 160000 3003\ncost 640000 1000000000\nend\n"),
        "{text}"
    );
    let small = Profile::from_trace_keeping(&trace, here(), 200);
    assert_eq!(small.samples()[4], 200);
    assert!(small.to_text().contains("bucket 4 200\n160000 5900\n"));
    assert_eq!(Profile::parse(&text).unwrap(), p);
}

#[cfg(feature = "trace")]
#[test]
fn the_waits_after_a_long_one_come_last_in_their_bucket() {
    use crate::trace::{AfterRow, Trace, TraceRow};
    let mut rows = Vec::new();
    for i in 0..1_100i64 {
        rows.push(row(160_000, 20_000 + i, 2_000));
    }
    rows.push(row(640_000, 30_000, 4_000));
    let after = (0..70i64)
        .map(|i| AfterRow {
            row: TraceRow {
                round: 3,
                ..row(160_000, 50_000 + i, 9_000)
            },
            after_ns: 10_240_000,
        })
        .collect();
    let trace = Trace::from_rows(rows)
        .unwrap()
        .with_after_rows(after)
        .unwrap();
    let p = Profile::from_trace(&trace, here());
    let text = p.to_text();
    // Bucket 4 (131–262 µs): the blocks' last 954 rows (146 dropped), then
    // the 70 after rows; its cost, the lower median of those 1 024.
    assert_eq!((p.samples()[4], p.samples()[6]), (WINDOW, 1));
    assert!(text.contains("bucket 4 1024\n160000 20146\n"), "{text}");
    assert!(text.contains("160000 21099\n160000 50000\n"), "{text}");
    assert!(text.contains("160000 50069\nbucket 6 1\n"), "{text}");
    assert!(
        text.contains("cost 160000 2000\ncost 640000 4000\n"),
        "{text}"
    );
    let small = Profile::from_trace_keeping(&trace, here(), 100);
    assert!(small.to_text().contains("bucket 4 100\n160000 21070\n"));
}

#[test]
fn values_no_line_can_hold_are_unknown() {
    let f = Fingerprint::from_parts(
        Some(" x".into()),
        Some("a\nb".into()),
        None,
        Some(String::new()),
        None,
        None,
        None,
    );
    assert!(f.fields().all(|(_, v)| v == "-"));
}

#[test]
fn errors_name_the_line_and_what_was_expected() {
    let text = Profile::from_estimator(&MarginEstimator::new(), here()).to_text();
    let e = Profile::parse(&text.replace("end\n", "bucket 6 2\n640000 5000\n")).unwrap_err();
    assert_eq!((e.code(), e.line()), ("truncated", 11));
    assert!(e.to_string().contains("sample 2 of 2 of bucket 6"), "{e}");
    let e = Profile::parse(&text.replace("end\n", "bucket 6 1\n640000 5e3\nend\n")).unwrap_err();
    assert_eq!((e.code(), e.line()), ("bad_number", 10));
    let e = Profile::parse_bytes(b"keeptime-profile 1\n\xff\n").unwrap_err();
    assert_eq!((e.code(), e.line()), ("not_text", 2));
    let e = Profile::parse("").unwrap_err();
    assert_eq!((e.code(), e.line()), ("truncated", 1));
    let e = Profile::parse("keeptime-prof").unwrap_err();
    assert_eq!((e.code(), e.line()), ("truncated", 1));
    let e = Profile::parse("hello").unwrap_err();
    assert_eq!((e.code(), e.line()), ("not_a_profile", 1));
    let cut = text.replace("end\n", "bucket 6 1\n64");
    let e = Profile::parse(&cut).unwrap_err();
    assert_eq!((e.code(), e.line()), ("truncated", 10));
    assert!(e.to_string().contains("cut short"), "{e}");
}
