//! Wake-up traces: loading (and every way a file can be wrong), writing,
//! nearest-length lookup, summaries, the oracle (against the exact output of
//! an independent Python implementation of the same model, given the same
//! draws) and the replay platform. Exact assertions on
//! recorded or hand-written data; the one real recording asserts invariants.

use keeptime::sim::SimWait;
use keeptime::trace::{
    self, AfterRow, Oracle, OracleChoice, OracleError, RecordOptions, Trace, TraceError,
    TracePlatform, TraceRow, ORACLE_PY_MARGINS_US,
};
use keeptime::{Mode, Platform, Sleeper};
use proptest::prelude::*;
use std::path::PathBuf;

fn data(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file)
}

fn parse(text: &str) -> Result<Trace, TraceError> {
    Trace::parse_bytes("t.csv", text.as_bytes(), false)
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

fn row(os_wait_ns: u64, overshoot_ns: i64, thread_cpu_ns: u64) -> TraceRow {
    TraceRow {
        round: 0,
        os_wait_ns,
        overshoot_ns,
        thread_cpu_ns,
    }
}

// ------------------------------------------------------------------ loading

#[test]
fn shared_traces_load_with_their_recorded_counts() {
    for file in [
        "amd-epyc-kvm-haltpoll.csv.gz",
        "amd-epyc-kvm-haltpoll-dma0.csv.gz",
    ] {
        let t = Trace::load(data(file)).unwrap();
        assert_eq!(t.lengths(), trace::default_lengths_ns(), "{file}");
        let counts: Vec<usize> = t.summary().iter().map(|s| s.n).collect();
        assert_eq!(
            counts,
            [4500, 4500, 4500, 4500, 4500, 4500, 2637, 1377, 702, 354, 180, 180, 180],
            "{file}"
        );
        assert_eq!(t.rows().len(), 32_610);
        assert!(t.rows().iter().all(|r| r.round < 3));
    }
}

#[test]
fn this_hosts_traces_load() {
    for (file, rows) in [
        ("amd-epyc-kvm-nocpuidle.csv.gz", 32_622),
        ("amd-epyc-kvm-nocpuidle-busy.csv.gz", 31_856),
    ] {
        let t = Trace::load(data(file)).unwrap();
        assert_eq!(t.lengths(), trace::default_lengths_ns());
        assert_eq!(t.rows().len(), rows);
        let counts: Vec<usize> = t.summary().iter().map(|s| s.n).collect();
        // 60..=1500 waits per block, 3 blocks per length
        assert!(
            counts.iter().all(|n| (180..=4500).contains(n)),
            "{counts:?}"
        );
        assert!(t.rows().iter().all(|r| r.overshoot_ns >= 0));
    }
}

#[test]
fn columns_may_come_in_any_order_with_blanks_crlf_and_blank_lines() {
    let t =
        parse("thread_cpu_ns, overshoot_ns ,os_wait_ns,round\r\n7,-3,5000,2\r\n\r\n9,4, 5000 ,1\n")
            .unwrap();
    assert_eq!(
        t.rows(),
        [
            TraceRow {
                round: 2,
                os_wait_ns: 5000,
                overshoot_ns: -3,
                thread_cpu_ns: 7
            },
            TraceRow {
                round: 1,
                os_wait_ns: 5000,
                overshoot_ns: 4,
                thread_cpu_ns: 9
            }
        ]
    );
}

#[test]
fn every_bad_file_is_one_line_naming_the_file_and_the_line() {
    let cases: [(&str, &str); 13] = [
        ("", "t.csv: line 1: the file is empty"),
        ("\n1,2,3,4\n", "t.csv: line 1: no header"),
        (
            "round,os_wait_ns,overshoot_ns\n",
            "t.csv: line 1: column 'thread_cpu_ns' is missing",
        ),
        (
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns,extra\n",
            "t.csv: line 1: unknown column 'extra'",
        ),
        (
            "round,round,os_wait_ns,overshoot_ns,thread_cpu_ns\n",
            "t.csv: line 1: column 'round' appears twice",
        ),
        (
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n",
            "t.csv: the trace has no rows",
        ),
        (
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,5000,1,2\n0,-5000,1,2\n",
            "t.csv: line 3: os_wait_ns is -5000; it must be a positive length in ns",
        ),
        (
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,0,1,2\n",
            "t.csv: line 2: os_wait_ns is 0; it must be a positive length in ns",
        ),
        (
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,5000,1,-2\n",
            "t.csv: line 2: thread_cpu_ns is -2; it must be ≥ 0 ns",
        ),
        (
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n-1,5000,1,2\n",
            "t.csv: line 2: round is -1; it must be ≥ 0",
        ),
        (
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,5000,1.5,2\n",
            "t.csv: line 2: overshoot_ns is '1.5', not an integer",
        ),
        (
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,5000,1\n",
            "t.csv: line 2: 3 fields where the header has 4",
        ),
        (
            "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n\n\n0,5us,1,2\n",
            "t.csv: line 4: os_wait_ns is '5us', not an integer",
        ),
    ];
    for (text, want) in cases {
        let got = err(text);
        assert!(got.starts_with(want), "{text:?}: {got}");
        assert!(!got.contains('\n'), "{got}");
    }
    let bad_utf8 = Trace::parse_bytes(
        "t.csv",
        b"round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,\xff,1,2\n",
        false,
    );
    assert_eq!(
        bad_utf8.unwrap_err().to_string(),
        "t.csv: line 2: not CSV text (not UTF-8)"
    );
}

#[test]
fn gzip_is_told_by_content_and_a_gz_name_must_hold_gzip() {
    let t = Trace::from_rows(vec![row(5000, 7, 100), row(10_000, -1, 50)]).unwrap();
    let mut gz = Vec::new();
    t.write_to(&mut gz, true).unwrap();
    // gzip recognised whatever the name says
    assert_eq!(Trace::parse_bytes("x.csv", &gz, false).unwrap(), t);
    assert_eq!(Trace::parse_bytes("x.csv.gz", &gz, true).unwrap(), t);
    let e = Trace::parse_bytes("x.csv.gz", b"round,os_wait_ns\n", true).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("x.csv.gz: not a gzip-compressed trace"),
        "{e}"
    );
    let e = Trace::parse_bytes("x.csv.gz", &gz[..gz.len() / 2], true).unwrap_err();
    assert!(matches!(e, TraceError::Gzip { .. }), "{e}");
}

#[test]
fn waits_recorded_after_a_long_one_are_kept_apart() {
    let t = parse(
        "round,os_wait_ns,overshoot_ns,thread_cpu_ns,after_ns\n\
         0,80000,3000,900,0\n\
         3,80000,51000,950,10240000\n\
         0,640000,20000,1000,0\n\
         3,80000,-2,970,10240000\n",
    )
    .unwrap();
    assert_eq!(
        t.rows(),
        [row(80_000, 3_000, 900), row(640_000, 20_000, 1_000)]
    );
    let after = |overshoot_ns, thread_cpu_ns| AfterRow {
        row: TraceRow {
            round: 3,
            ..row(80_000, overshoot_ns, thread_cpu_ns)
        },
        after_ns: 10_240_000,
    };
    assert_eq!(t.after_rows(), [after(51_000, 950), after(-2, 970)]);
    // Lengths and summaries are the blocks'; the after rows have their own.
    assert_eq!(t.lengths(), [80_000, 640_000]);
    assert_eq!(t.summary()[0].n, 1);
    let a = t.after_summary();
    assert_eq!(a.len(), 1);
    assert_eq!(
        (
            a[0].os_wait_ns,
            a[0].n,
            a[0].overshoot_p50_ns,
            a[0].overshoot_max_ns
        ),
        (80_000, 2, -2, 51_000)
    );
    // Written with the column, blocks first; without after rows, without it.
    let mut out = Vec::new();
    t.write_to(&mut out, false).unwrap();
    assert_eq!(
        String::from_utf8(out.clone()).unwrap(),
        "round,os_wait_ns,overshoot_ns,thread_cpu_ns,after_ns\n0,80000,3000,900,0\n\
         0,640000,20000,1000,0\n3,80000,51000,950,10240000\n3,80000,-2,970,10240000\n"
    );
    assert_eq!(Trace::parse_bytes("f", &out, false).unwrap(), t);
    let all_zero =
        parse("after_ns,round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,0,5000,1,2\n").unwrap();
    assert!(all_zero.after_rows().is_empty());
    assert_eq!(all_zero.rows(), [row(5_000, 1, 2)]);
    // Every row after a long one: no block to stand for a length.
    assert_eq!(
        err("round,os_wait_ns,overshoot_ns,thread_cpu_ns,after_ns\n0,5000,1,2,9000\n"),
        "t.csv: line 1: every row has an after_ns; a trace needs at least one row recorded in a block (after_ns 0)"
    );
    assert_eq!(
        err("round,os_wait_ns,overshoot_ns,thread_cpu_ns,after_ns\n0,5000,1,2,-1\n"),
        "t.csv: line 2: after_ns is -1; it must be ≥ 0 ns"
    );
    // Given in code, an after row must say what it followed.
    let zero = AfterRow {
        row: row(80_000, 1, 1),
        after_ns: 0,
    };
    assert!(matches!(
        t.clone().with_after_rows(vec![zero]),
        Err(TraceError::AfterRow)
    ));
}

#[test]
fn write_then_load_gives_the_same_trace_csv_and_gz() {
    let dir = std::env::temp_dir().join(format!("keeptime-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = Trace::from_rows(vec![
        row(5000, 7, 100),
        TraceRow {
            round: 2,
            os_wait_ns: 20_480_000,
            overshoot_ns: -12,
            thread_cpu_ns: 0,
        },
    ])
    .unwrap();
    for name in ["a.csv", "a.csv.gz"] {
        let p = dir.join(name);
        t.write(&p).unwrap();
        assert_eq!(Trace::load(&p).unwrap(), t, "{name}");
    }
    let plain = std::fs::read_to_string(dir.join("a.csv")).unwrap();
    assert_eq!(
        plain,
        "round,os_wait_ns,overshoot_ns,thread_cpu_ns\n0,5000,7,100\n2,20480000,-12,0\n"
    );
    let missing = dir.join("no-such.csv");
    let e = Trace::load(&missing).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}: cannot read the trace", missing.display())),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn no_input_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200), gz in any::<bool>()) {
        let _ = Trace::parse_bytes("f", &bytes, gz);
        let mut text = b"round,os_wait_ns,overshoot_ns,thread_cpu_ns\n".to_vec();
        text.extend_from_slice(&bytes);
        let _ = Trace::parse_bytes("f", &text, false);
    }

    #[test]
    fn rows_round_trip(rows in proptest::collection::vec(
        (any::<u32>(), 1..u64::MAX / 2, any::<i64>(), 0..i64::MAX as u64), 1..30)) {
        let rows: Vec<TraceRow> = rows.into_iter().map(|(round, os_wait_ns, overshoot_ns, thread_cpu_ns)|
            TraceRow { round, os_wait_ns, overshoot_ns, thread_cpu_ns }).collect();
        let t = Trace::from_rows(rows).unwrap();
        let mut out = Vec::new();
        t.write_to(&mut out, false).unwrap();
        prop_assert_eq!(Trace::parse_bytes("f", &out, false).unwrap(), t);
    }
}

// --------------------------------------------------------- lookup, summary

#[test]
fn nearest_length_cuts_at_the_geometric_mean_shorter_on_the_cut() {
    let t = Trace::from_rows(vec![
        row(10_000, 0, 0),
        row(40_000, 0, 0),
        row(90_000, 0, 0),
    ])
    .unwrap();
    // cuts: √(10·40) µs = 20 µs exactly, √(40·90) µs = 60 µs exactly
    assert_eq!(t.nearest_length(0), 10_000);
    assert_eq!(t.nearest_length(20_000), 10_000);
    assert_eq!(t.nearest_length(20_001), 40_000);
    assert_eq!(t.nearest_length(60_000), 40_000);
    assert_eq!(t.nearest_length(60_001), 90_000);
    assert_eq!(t.nearest_length(u64::MAX), 90_000);
    let t = Trace::from_rows(vec![row(5_000, 0, 0), row(10_000, 0, 0)]).unwrap();
    // √(5000·10000) = 7071.07
    assert_eq!(t.nearest_length(7_071), 5_000);
    assert_eq!(t.nearest_length(7_072), 10_000);
}

#[test]
fn summary_is_nearest_rank() {
    let mut rows: Vec<TraceRow> = (1..=1000)
        .map(|i| row(5_000, 1001 - i, i as u64 * 2))
        .collect();
    rows.push(row(80_000, -4, 9));
    let s = Trace::from_rows(rows).unwrap().summary();
    assert_eq!(s.len(), 2);
    let a = &s[0];
    assert_eq!((a.os_wait_ns, a.n), (5_000, 1000));
    assert_eq!(
        (
            a.overshoot_p50_ns,
            a.overshoot_p90_ns,
            a.overshoot_p99_ns,
            a.overshoot_p999_ns,
            a.overshoot_max_ns
        ),
        (500, 900, 990, 999, 1000)
    );
    assert_eq!(a.thread_cpu_p50_ns, 1000);
    assert_eq!(a.thread_cpu_mean_ns, 1001.0);
    let b = &s[1];
    assert_eq!(
        (
            b.n,
            b.overshoot_p50_ns,
            b.overshoot_max_ns,
            b.thread_cpu_p50_ns
        ),
        (1, -4, -4, 9)
    );
}

// ------------------------------------------------------------------- oracle

/// Python's `random.Random(1)`: MT19937 seeded by `init_by_array([1])`,
/// `random()` from two outputs (53 bits). Only here, to hand the oracle the
/// Python implementation's exact draws.
struct PyRandom {
    mt: [u32; 624],
    i: usize,
}

impl PyRandom {
    fn seeded_1() -> Self {
        let mut mt = [0u32; 624];
        mt[0] = 19_650_218;
        for i in 1..624 {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        let key = [1u32];
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..624 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..623 {
            mt[i] = (mt[i] ^ (mt[i - 1] ^ (mt[i - 1] >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= 624 {
                mt[0] = mt[623];
                i = 1;
            }
        }
        mt[0] = 0x8000_0000;
        PyRandom { mt, i: 624 }
    }

    fn next_u32(&mut self) -> u32 {
        if self.i >= 624 {
            for k in 0..624 {
                let y = (self.mt[k] & 0x8000_0000) | (self.mt[(k + 1) % 624] & 0x7fff_ffff);
                let mut v = self.mt[(k + 397) % 624] ^ (y >> 1);
                if y & 1 != 0 {
                    v ^= 0x9908_b0df;
                }
                self.mt[k] = v;
            }
            self.i = 0;
        }
        let mut y = self.mt[self.i];
        self.i += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    fn random(&mut self) -> f64 {
        let a = u64::from(self.next_u32() >> 5);
        let b = u64::from(self.next_u32() >> 6);
        (a as f64 * 67_108_864.0 + b as f64) / 9_007_199_254_740_992.0
    }
}

/// The Python implementation's line for a plan.
fn py_line(p: &trace::OraclePlan) -> String {
    let d = p.duration_ns as f64 / 1e3;
    let t = p.tail_share * 100.0;
    match p.plan {
        OracleChoice::Spin => format!("{d:>6.0}us {t:>6.1}% {:>7.1}  spin", 100.0),
        plan => format!(
            "{d:>6.0}us {t:>6.1}% {:>7.2}  {plan} (late {:.2}%)",
            p.cpu_share * 100.0,
            p.late_share * 100.0
        ),
    }
}

/// The oracle's lines for the Python implementation's defaults, on its draws.
fn with_python_draws(file: &str) -> String {
    let mut py = PyRandom::seeded_1();
    let draws: Vec<(f64, f64)> = (0..4000).map(|_| (py.random(), py.random())).collect();
    let t = Trace::load(data(file)).unwrap();
    let oracle = Oracle::with_draws(&t, &draws)
        .unwrap()
        .with_margins(&ORACLE_PY_MARGINS_US);
    let mut lines = Vec::new();
    for d in [100_000, 250_000, 1_000_000, 2_500_000, 10_000_000] {
        let outcomes = oracle.outcomes(d).unwrap();
        for tail in [0.05, 0.01, 0.001] {
            lines.push(py_line(&outcomes.best(tail).unwrap()));
        }
    }
    lines.join("\n")
}

/// With Python's draws the oracle prints what the Python implementation
/// printed for `tests/data/amd-epyc-kvm-haltpoll.csv.gz` (run by hand).
#[test]
fn the_oracle_reproduces_oracle_py_exactly_given_its_draws() {
    let expected = "   100us    5.0%   30.21  one OS wait, margin 35 (late 4.58%)
   100us    1.0%   45.28  long wait margin 0 + 50, short wait margin 30 (late 0.57%)
   100us    0.1%   87.45  long wait margin 40 + 50, short wait margin 70 (late 0.05%)
   250us    5.0%   13.63  one OS wait, margin 40 (late 4.42%)
   250us    1.0%   19.51  long wait margin 5 + 50, short wait margin 35 (late 0.97%)
   250us    0.1%   33.46  long wait margin 40 + 50, short wait margin 70 (late 0.07%)
  1000us    5.0%    3.99  long wait margin 0 + 50, short wait margin 25 (late 4.78%)
  1000us    1.0%    6.43  long wait margin 25 + 50, short wait margin 50 (late 1.00%)
  1000us    0.1%   100.0  spin
  2500us    5.0%    2.02  long wait margin 120 + 400, short wait margin 35 (late 4.30%)
  2500us    1.0%    2.29  long wait margin 25 + 100, short wait margin 40 (late 0.95%)
  2500us    0.1%    3.36  long wait margin 15 + 100, short wait margin 70 (late 0.03%)
 10000us    5.0%    0.72  long wait margin 150 + 400, short wait margin 35 (late 4.58%)
 10000us    1.0%    0.87  long wait margin 60 + 100, short wait margin 50 (late 0.78%)
 10000us    0.1%   100.0  spin";
    assert_eq!(with_python_draws("amd-epyc-kvm-haltpoll.csv.gz"), expected);
}

/// The same on a busy trace (`tests/data/amd-epyc-kvm-nocpuidle-busy.csv.gz`): a pure spin where no plan
/// meets the tail, and the first plan ("margin 100" at 100 µs: no OS wait
/// fits) where a pure spin is the cheapest that does.
#[test]
fn the_oracle_reproduces_oracle_py_on_this_hosts_busy_trace() {
    let expected = "   100us    5.0%   30.26  one OS wait, margin 30 (late 3.95%)
   100us    1.0%   74.98  long wait margin 25 + 50, short wait margin 70 (late 0.68%)
   100us    0.1%  100.00  one OS wait, margin 100 (late 0.00%)
   250us    5.0%   12.10  one OS wait, margin 30 (late 4.23%)
   250us    1.0%   71.14  long wait margin 80 + 100, short wait margin 200 (late 1.00%)
   250us    0.1%  100.00  one OS wait, margin 300 (late 0.00%)
  1000us    5.0%    7.44  long wait margin 5 + 100, short wait margin 60 (late 5.00%)
  1000us    1.0%   100.0  spin
  1000us    0.1%   100.0  spin
  2500us    5.0%   100.0  spin
  2500us    1.0%   100.0  spin
  2500us    0.1%   100.0  spin
 10000us    5.0%   100.0  spin
 10000us    1.0%   100.0  spin
 10000us    0.1%   100.0  spin";
    assert_eq!(
        with_python_draws("amd-epyc-kvm-nocpuidle-busy.csv.gz"),
        expected
    );
}

#[test]
fn the_oracle_on_a_hand_trace() {
    // One length: every OS wait wakes 10 µs late and costs 2 µs of CPU.
    let t = Trace::from_rows(vec![row(5_000, 10_000, 2_000)]).unwrap();
    let p = trace::oracle(&t, 1_000_000, 0.0, 100).unwrap();
    assert_eq!(p.plan, OracleChoice::OneWait { margin_ns: 10_000 });
    assert_eq!((p.late_share, p.cpu_share), (0.0, 0.002));

    // Two rows, drawn once each: overshoot 0 or 20 µs, 1 µs of CPU.
    let t = Trace::from_rows(vec![row(5_000, 0, 1_000), row(5_000, 20_000, 1_000)]).unwrap();
    let o = Oracle::with_draws(&t, &[(0.25, 0.25), (0.75, 0.75)]).unwrap();
    let out = o.outcomes(1_000_000).unwrap();
    // Half may be late: wait to the deadline, no spin.
    let p = out.best(0.5).unwrap();
    assert_eq!(p.plan, OracleChoice::OneWait { margin_ns: 0 });
    assert_eq!((p.late_share, p.cpu_share), (0.5, 0.001));
    // None may be late: a 20 µs margin; (1 + 20 + 1 + 0) µs / 2 per sleep.
    let p = out.best(0.49).unwrap();
    assert_eq!(p.plan, OracleChoice::OneWait { margin_ns: 20_000 });
    assert_eq!((p.late_share, p.cpu_share), (0.0, 0.011));

    // Every wait wakes 20 ms late: a 10 ms sleep leaves a wait under every
    // margin (at most 7 ms), each late: no plan is on time, a spin.
    let t = Trace::from_rows(vec![row(5_000, 20_000_000, 1_000)]).unwrap();
    let p = trace::oracle(&t, 10_000_000, 0.0, 10).unwrap();
    assert_eq!(p.plan, OracleChoice::Spin);
    assert_eq!((p.late_share, p.cpu_share), (0.0, 1.0));
    // With the reference implementation's margins (up to 300 µs) the same
    // holds at 1 ms ...
    let p = Oracle::new(&t, 10, 1)
        .unwrap()
        .with_margins(&ORACLE_PY_MARGINS_US)
        .outcomes(1_000_000)
        .unwrap()
        .best(0.0)
        .unwrap();
    assert_eq!(p.plan, OracleChoice::Spin);
    // ... where the full grid's 1 ms margin leaves no OS wait: the same pure
    // spin, found as the first plan that is on time.
    let p = trace::oracle(&t, 1_000_000, 0.0, 10).unwrap();
    assert_eq!(
        p.plan,
        OracleChoice::OneWait {
            margin_ns: 1_000_000
        }
    );
    assert_eq!((p.late_share, p.cpu_share), (0.0, 1.0));
    // ... and a sleep under every margin + 5 µs is a pure spin by the first plan.
    let p = trace::oracle(&t, 4_000, 0.0, 10).unwrap();
    assert_eq!(p.plan, OracleChoice::OneWait { margin_ns: 0 });
    assert_eq!(p.cpu_share, 1.0);
}

#[test]
fn the_oracles_second_wait_is_drawn_after_a_long_one_where_the_trace_has_such() {
    // 1 ms waits wake on time or 150 µs late; 100 µs waits 5 µs late in a row.
    let blocks = Trace::from_rows(vec![
        row(1_000_000, 0, 1_000),
        row(1_000_000, 150_000, 1_000),
        row(100_000, 5_000, 1_000),
    ])
    .unwrap();
    let draws = [(0.25, 0.25), (0.75, 0.75)];
    let best = |t: &Trace, d: u64| {
        Oracle::with_draws(t, &draws)
            .unwrap()
            .outcomes(d)
            .unwrap()
            .best(0.0)
            .unwrap()
    };
    let with_after = |overshoot_ns| {
        blocks
            .clone()
            .with_after_rows(vec![AfterRow {
                row: row(100_000, overshoot_ns, 1_000),
                after_ns: 1_000_000,
            }])
            .unwrap()
    };
    // After rows that wake as the block does: the same plans, exactly.
    for d in [150_000, 1_200_000, 2_500_000] {
        assert_eq!(best(&with_after(5_000), d), best(&blocks, d), "{d}");
    }
    // In a row: a long wait ending 150 µs early, then (when it woke on
    // time) a short wait with a 5 µs margin; when it woke late it ends on
    // the deadline. One or two waits' CPU, no spin.
    let p = best(&blocks, 1_200_000);
    let plan = |short_margin_ns| OracleChoice::TwoWaits {
        long_margin_ns: 50_000,
        split_ns: 100_000,
        short_margin_ns,
    };
    assert_eq!(p.plan, plan(5_000));
    assert_eq!((p.late_share, p.cpu_share), (0.0, 1_500.0 / 1_200_000.0));
    // Right after a long wait the short one wakes 50 µs late: priced so, its
    // margin is 50 µs (a 5 µs one would end that draw 45 µs late).
    let p = best(&with_after(50_000), 1_200_000);
    assert_eq!(p.plan, plan(50_000));
    assert_eq!((p.late_share, p.cpu_share), (0.0, 1_500.0 / 1_200_000.0));
    // One-wait plans and first waits read the blocks only.
    assert_eq!(best(&with_after(50_000), 150_000), best(&blocks, 150_000));
    // After rows that followed 10 ms waits stand for second waits after a
    // first wait of 5 ms or more: not after these ~1 ms ones.
    let after_10ms = blocks
        .clone()
        .with_after_rows(vec![AfterRow {
            row: row(100_000, 50_000, 1_000),
            after_ns: 10_000_000,
        }])
        .unwrap();
    assert_eq!(best(&after_10ms, 1_200_000), best(&blocks, 1_200_000));
}

#[test]
fn oracle_arguments_are_checked() {
    let t = Trace::from_rows(vec![row(5_000, 1, 1)]).unwrap();
    assert_eq!(
        trace::oracle(&t, 0, 0.01, 10),
        Err(OracleError::ZeroDuration)
    );
    assert_eq!(trace::oracle(&t, 1_000, 0.01, 0), Err(OracleError::NoDraws));
    assert!(matches!(
        trace::oracle(&t, 1_000, f64::NAN, 10),
        Err(OracleError::Tail(_))
    ));
    assert_eq!(
        trace::oracle(&t, 1_000, 1.5, 10),
        Err(OracleError::Tail(1.5))
    );
}

// ------------------------------------------------------------------- replay

fn hand_trace() -> Trace {
    Trace::from_rows(vec![
        row(10_000, 1_000, 100),
        row(100_000, 7_000, 50),
        row(10_000, -5, 200),
        row(10_000, 3_000, 300),
    ])
    .unwrap()
}

#[test]
fn a_replayed_short_wait_right_after_a_long_one_takes_an_after_row() {
    // 10 µs waits wake 1 µs late in their block, 40 or 50 µs late after a
    // 100 µs wait (after rows that followed 100 µs: "long" from 50 µs on).
    let t = hand_trace()
        .with_after_rows(vec![
            AfterRow {
                row: row(10_000, 40_000, 500),
                after_ns: 100_000,
            },
            AfterRow {
                row: row(10_000, 50_000, 600),
                after_ns: 100_000,
            },
        ])
        .unwrap();
    let p = TracePlatform::new(t, 0);
    let wait = |len| {
        let t0 = p.now_ns();
        p.os_wait_until(t0 + len);
        p.now_ns() - t0 - len
    };
    // 10 µs in a row: the block's rows; after the 100 µs one: the after
    // rows, each in turn, with a cursor of their own.
    assert_eq!(wait(10_000), 1_000);
    assert_eq!(wait(100_000), 7_000);
    assert_eq!(wait(10_000), 40_000);
    assert_eq!(wait(10_000), 0);
    assert_eq!(wait(100_000), 7_000);
    assert_eq!(wait(10_000), 50_000);
    assert_eq!(wait(100_000), 7_000);
    assert_eq!(wait(10_000), 40_000);
    assert_eq!(wait(10_000), 3_000);
    assert_eq!(
        p.thread_cpu_ns(),
        100 + 50 + 500 + 200 + 50 + 600 + 50 + 500 + 300
    );
    // Without after rows, the same waits replay the blocks only.
    let p = TracePlatform::new(hand_trace(), 0);
    p.os_wait_until(100_000);
    let t0 = p.now_ns();
    p.os_wait_until(t0 + 10_000);
    assert_eq!(p.now_ns() - t0 - 10_000, 1_000);
}

#[test]
fn replay_cycles_each_lengths_rows_in_file_order() {
    let p = TracePlatform::new(hand_trace(), 1_000_000);
    let mut woke = Vec::new();
    for _ in 0..4 {
        p.os_wait_until(p.now_ns() + 10_000);
        woke.push(p.now_ns());
    }
    // overshoots 1000, 0 (recorded -5), 3000, then 1000 again
    assert_eq!(woke, [1_011_000, 1_021_000, 1_034_000, 1_045_000]);
    assert_eq!(p.thread_cpu_ns(), 100 + 200 + 300 + 100);
    // 35 µs is past √(10·100) µs ≈ 31.6 µs: the 100 µs row
    p.os_wait_until(1_045_000 + 35_000);
    assert_eq!(p.now_ns(), 1_080_000 + 7_000);
    assert_eq!(p.thread_cpu_ns(), 750);
    // a target in the past: length 0, nearest 10 µs, its cursor's next row (0)
    p.os_wait_until(5);
    assert_eq!(p.now_ns(), 1_087_000);
    assert_eq!(p.thread_cpu_ns(), 950);
    assert_eq!(
        p.waits()[4],
        SimWait {
            issued_ns: 1_045_000,
            target_ns: 1_080_000,
            woke_ns: 1_087_000,
            interrupted: false
        }
    );
    assert_eq!(p.waits().len(), 6);
}

#[test]
fn a_default_recording_lets_a_profile_set_one_wake_up_aside_at_1_percent() {
    // Every length gets at least min_block_waits per round; the three
    // longest (5.12, 10.24, 20.48 ms) are alone in their buckets, so a
    // profile of the recording holds that many of them. At 1 % the margin
    // sets the largest aside from 199 samples on ((199 + 1) · 1 % = 2).
    let o = RecordOptions::default();
    let per_length = u64::from(o.min_block_waits) * u64::from(o.rounds);
    assert!(per_length >= 199, "{per_length} waits of a long length");
    let longest: Vec<usize> = o.lengths_ns[o.lengths_ns.len() - 3..]
        .iter()
        .map(|&l| keeptime::estimate::bucket_of(l))
        .collect();
    assert_eq!(longest, [9, 10, 11]);
    assert_eq!(
        keeptime::estimate::bucket_of(o.lengths_ns[o.lengths_ns.len() - 4]),
        8
    );
}

#[test]
fn replay_starts_part_of_the_way_through_each_lengths_rows() {
    // A simulated clock: each OS wait wakes by the hand trace's next recorded
    // overshoot, so these are the trace's own rows, read exactly, not timings.
    // 10 µs has three rows (overshoots 1000, 0, 3000), 100 µs one (7000).
    let overshoots = |part, parts| {
        let p = TracePlatform::starting_at(hand_trace(), 0, part, parts);
        let mut v = Vec::new();
        for _ in 0..4 {
            let t = p.now_ns() + 10_000;
            p.os_wait_until(t);
            v.push(p.now_ns() - t);
        }
        let t = p.now_ns() + 100_000;
        p.os_wait_until(t);
        v.push(p.now_ns() - t);
        v
    };
    // part / parts of 3 rows: ⌊3 · 1 / 3⌋ = 1, ⌊3 · 2 / 3⌋ = 2, ⌊3 · 1 / 2⌋ = 1;
    // the single 100 µs row is its own every time.
    assert_eq!(overshoots(0, 1), [1_000, 0, 3_000, 1_000, 7_000]);
    assert_eq!(overshoots(1, 3), [0, 3_000, 1_000, 0, 7_000]);
    assert_eq!(overshoots(2, 3), [3_000, 1_000, 0, 3_000, 7_000]);
    assert_eq!(overshoots(1, 2), overshoots(1, 3));
    // part ≥ parts wraps around, as the cursor does; parts = 0 reads as 1.
    assert_eq!(overshoots(4, 3), overshoots(1, 3));
    assert_eq!(overshoots(u64::MAX, u64::MAX), overshoots(0, 1));
    assert_eq!(overshoots(5, 0), overshoots(0, 1));
}

#[test]
fn replay_spins_and_yields_cost_their_steps() {
    let p = TracePlatform::new(hand_trace(), 0);
    p.relax();
    p.set_spin_step(7);
    p.relax();
    p.yield_now();
    p.set_yield_step(50);
    p.yield_now();
    assert_eq!(p.now_ns(), 100 + 7 + 1_000 + 50);
    assert_eq!(p.thread_cpu_ns(), 1_157);
    assert_eq!((p.relaxes(), p.yields()), (2, 2));
    p.advance(1_000);
    assert_eq!((p.now_ns(), p.thread_cpu_ns()), (2_157, 1_157));
    assert!(p.try_begin_spin());
    p.end_spin();
    p.set_spin_slots_free(false);
    assert!(!p.try_begin_spin());
}

#[test]
fn a_sleeper_on_the_shared_trace_is_never_early() {
    let t = Trace::load(data("amd-epyc-kvm-haltpoll.csv.gz")).unwrap();
    let p = TracePlatform::new(t, 1_000_000_000);
    let mut s = Sleeper::builder().mode(Mode::Exact).build_with(p.clone());
    let mut deadline = p.now_ns();
    for i in 0..2_000u64 {
        deadline += [250_000, 1_000_000, 2_500_000, 10_000_000][(i % 4) as usize];
        let woke = s.sleep_until_ns(deadline);
        assert!(
            woke >= deadline,
            "sleep {i}: woke {woke} < deadline {deadline}"
        );
    }
    assert!(!p.waits().is_empty());
    assert!(p.thread_cpu_ns() > 0);
}

// ---------------------------------------------------------------- recording

#[test]
fn round_orders_are_seeded_permutations() {
    let l = trace::default_lengths_ns();
    let a = trace::round_orders(&l, 3, 1);
    assert_eq!(a, trace::round_orders(&l, 3, 1));
    assert_ne!(a[0], a[1]);
    for order in &a {
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, l);
    }
}

#[test]
fn a_short_real_recording_keeps_the_format() {
    let options = RecordOptions {
        lengths_ns: vec![5_000, 20_000, 80_000],
        rounds: 2,
        total_ns: 3_000_000,
        min_block_waits: 2,
        max_block_waits: 4,
        seed: 7,
        after_lengths_ns: vec![20_000],
        after_long_ns: 100_000,
        after_waits: 3,
    };
    let mut calls = Vec::new();
    let t = trace::record(&options, |p| calls.push(p)).unwrap();
    assert_eq!(calls.len(), 7);
    assert_eq!(calls.last().unwrap().waits, t.rows().len() + 3);
    assert!(calls
        .iter()
        .enumerate()
        .all(|(i, p)| p.blocks_done == i + 1 && p.blocks == 7));
    // the short waits after a long one: apart from the blocks, as asked
    assert_eq!(t.after_rows().len(), 3);
    for a in t.after_rows() {
        assert_eq!(
            (a.row.round, a.row.os_wait_ns, a.after_ns),
            (2, 20_000, 100_000)
        );
        // never early (an invariant, not a timing): the first reading after
        // an absolute wait is at or past its target
        assert!(a.row.overshoot_ns >= 0, "{a:?}");
    }
    // blocks in each round's order, 2–4 waits each
    let orders = trace::round_orders(&options.lengths_ns, 2, 7);
    let mut blocks: Vec<(u32, u64, usize)> = Vec::new();
    for r in t.rows() {
        match blocks.last_mut() {
            Some(b) if b.0 == r.round && b.1 == r.os_wait_ns => b.2 += 1,
            _ => blocks.push((r.round, r.os_wait_ns, 1)),
        }
        // never early: the first reading after an absolute wait is past its target
        assert!(r.overshoot_ns >= 0, "{r:?}");
    }
    let seen: Vec<(u32, u64)> = blocks.iter().map(|b| (b.0, b.1)).collect();
    let want: Vec<(u32, u64)> = orders
        .iter()
        .enumerate()
        .flat_map(|(round, o)| o.iter().map(move |&l| (round as u32, l)))
        .collect();
    assert_eq!(seen, want);
    assert!(blocks.iter().all(|b| (2..=4).contains(&b.2)), "{blocks:?}");

    let bad = RecordOptions {
        rounds: 0,
        ..options.clone()
    };
    assert!(matches!(
        trace::record(&bad, |_| {}),
        Err(TraceError::Options(_))
    ));
    let bad = RecordOptions {
        after_long_ns: 0,
        ..options.clone()
    };
    assert!(matches!(
        trace::record(&bad, |_| {}),
        Err(TraceError::Options(_))
    ));
    let none_after = RecordOptions {
        after_long_ns: 0,
        after_waits: 0,
        ..options.clone()
    };
    assert!(trace::record(&none_after, |_| {})
        .unwrap()
        .after_rows()
        .is_empty());
    let bad = RecordOptions {
        lengths_ns: vec![0],
        ..options
    };
    assert!(matches!(
        trace::record(&bad, |_| {}),
        Err(TraceError::Options(_))
    ));
}
