//! `KEEPTIME_PROFILE`: the default profile from the environment
//! (`spec/estimator.md`, *Default sleepers*, *From the environment*).
//!
//! It is read once per process, so each case runs in a child process: this
//! test binary again, running only `child` with the case in the
//! environment. The child checks what keeptime's own sleepers start from
//! and exits; the parent checks that it passed and what it wrote to stderr.

use keeptime::profile::Profile;
use keeptime::sim::SimPlatform;
use keeptime::{Sleeper, Ticker, PROFILE_ENV};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const CASE: &str = "KEEPTIME_TEST_ENV_CASE";
const GOOD: &str = "KEEPTIME_TEST_ENV_GOOD";

/// What a model answers: live samples and 1 % margins, per bucket.
fn answers(s: &Sleeper) -> Vec<(usize, u64)> {
    let e = s.estimator();
    (0..keeptime::estimate::BUCKETS)
        .map(|b| (e.live_samples(b), e.margin(b, 10_000)))
        .collect()
}

/// A profile of this machine from a simulated sleeper whose OS waits woke
/// 7 µs late: a model no fresh sleeper has.
fn profile() -> Profile {
    let sim = SimPlatform::new(1_000_000);
    sim.set_default_overshoot(7_000);
    let mut s = Sleeper::builder().build_with(sim);
    for _ in 0..40 {
        s.sleep(Duration::from_micros(700));
    }
    s.profile()
}

/// What the default sleepers started from, as the child sees it: the
/// free functions' (through a sleep), a ticker's and a builder's that asks.
fn defaults() -> [Vec<(usize, u64)>; 2] {
    let ticker = Ticker::new(Duration::from_millis(1)).unwrap();
    let asked = Sleeper::builder().with_default_profile().build();
    assert_eq!(answers(ticker.sleeper()), answers(&asked));
    [answers(&asked), answers(&Sleeper::new())]
}

/// The child: one case, named by [`CASE`]. Not a test of its own (it
/// passes trivially without the environment its parent gives it).
#[test]
fn child() {
    let Ok(case) = std::env::var(CASE) else {
        return;
    };
    let good = Profile::load(std::env::var(GOOD).unwrap()).unwrap();
    let from_good = answers(&Sleeper::builder().profile(&good).build());
    let fresh = answers(&Sleeper::new());
    assert_ne!(from_good, fresh);
    match case.as_str() {
        "loads" => {
            // The first sleep of the free functions reads the variable.
            keeptime::sleep(Duration::from_micros(50));
            let [default, own] = defaults();
            assert_eq!(default, from_good);
            // A sleeper the program builds never reads it.
            assert_eq!(own, fresh);
            // A later setting replaces it as any change does.
            keeptime::set_default_profile(None);
            assert_eq!(defaults()[0], fresh);
        }
        "fresh" => {
            keeptime::sleep(Duration::from_micros(50));
            assert_eq!(defaults()[0], fresh);
        }
        "thread_profile" => {
            // Before its first sleep, the free functions' sleeper of this
            // thread is the environment's profile, as it would start.
            let before = keeptime::thread_profile();
            assert_eq!(
                answers(&Sleeper::builder().profile(&before).build()),
                from_good
            );
            for _ in 0..20 {
                keeptime::sleep(Duration::from_millis(1));
            }
            // After, what it learned: a profile of this machine that loads
            // back; taking it changes nothing. (A bucket whose own wake-ups
            // proved the profile stale, here one of a simulated host that
            // woke 7 µs late, holds only its own: spec/estimator.md, a stale
            // bucket; so the count may fall.)
            let after = keeptime::thread_profile();
            assert_ne!(after.to_text(), before.to_text());
            assert!(after.samples().iter().sum::<usize>() > 0);
            let text = after.to_text();
            Profile::parse(&text)
                .unwrap()
                .check_machine(&keeptime::profile::Fingerprint::this_machine())
                .unwrap();
            assert_eq!(keeptime::thread_profile().to_text(), text);
            // Another thread's sleeper has not slept: the default in force.
            let other = std::thread::spawn(keeptime::thread_profile).join().unwrap();
            assert_eq!(
                answers(&Sleeper::builder().profile(&other).build()),
                from_good
            );
        }
        "fresh_thread_profile" => {
            // No default: a thread that has not slept has learned nothing.
            assert_eq!(
                keeptime::thread_profile().samples(),
                [0; keeptime::estimate::BUCKETS]
            );
        }
        "program_first" => {
            // Set before a default sleeper was made: the variable (a good
            // profile here) is never read.
            keeptime::set_default_profile(None);
            keeptime::sleep(Duration::from_micros(50));
            assert_eq!(defaults()[0], fresh);
        }
        other => panic!("unknown case {other}"),
    }
}

/// Runs the child with `case` and `KEEPTIME_PROFILE` set to `value`; its
/// stderr, after checking that it passed.
fn run(case: &str, value: &str, good: &Path) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env(CASE, case)
        .env(GOOD, good)
        .env(PROFILE_ENV, value)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{case}: {stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{case}: {stdout}");
    stderr
}

fn temp_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("keeptime-env-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn keeptimes_own_sleepers_start_from_the_profile_the_environment_names() {
    let dir = temp_dir();
    let good = dir.join("host.profile");
    profile().write(&good).unwrap();
    let good_str = good.to_str().unwrap();

    assert_eq!(run("loads", good_str, &good), "");
    assert_eq!(run("thread_profile", good_str, &good), "");
    assert_eq!(run("fresh_thread_profile", "", &good), "");
    assert_eq!(run("program_first", good_str, &good), "");
    // Empty: as if unset.
    assert_eq!(run("fresh", "", &good), "");

    // Missing, malformed: one line each, and the sleepers start fresh.
    let text = profile().to_text();
    let cut = dir.join("cut.profile");
    std::fs::write(&cut, &text[..text.len() - 4]).unwrap();
    for bad in [dir.join("missing.profile"), cut] {
        let why = Profile::load(&bad).unwrap_err();
        assert_eq!(
            run("fresh", bad.to_str().unwrap(), &good),
            format!(
                "keeptime: KEEPTIME_PROFILE={}: {why}; keeptime's own sleepers start fresh\n",
                bad.display()
            )
        );
    }
    // A program that sets the default first never hears of a bad one.
    assert_eq!(
        run(
            "program_first",
            dir.join("missing.profile").to_str().unwrap(),
            &good
        ),
        ""
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
