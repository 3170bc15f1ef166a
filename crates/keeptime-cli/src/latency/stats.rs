//! Statistics of a periodic run: the bench format's [`Stats`] (exact, over
//! every sample) plus overruns, per thread and with all threads merged.

use super::runner::ThreadRun;
use crate::bench::stats::Stats;

/// Wake-ups later than one interval: `error > interval`.
pub fn overruns(errors: &[i64], interval_ns: u64) -> u64 {
    let limit = i64::try_from(interval_ns).unwrap_or(i64::MAX);
    errors.iter().filter(|&&e| e > limit).count() as u64
}

/// The figures of one thread, or of all threads merged (`thread: None`).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Thread index, or `None` for all threads.
    pub thread: Option<usize>,
    /// The CPU it was pinned to.
    pub cpu: Option<u32>,
    /// The statistics; `None` when there were no samples.
    pub stats: Option<Stats>,
    /// Wake-ups later than one interval.
    pub overruns: u64,
    /// Deadlines passed with no wake-up.
    pub skipped: u64,
    /// Timer slack in force (the thread's; for the merged row, thread 0's).
    pub timer_slack_ns: Option<u64>,
}

/// Per-thread summaries followed by the merged one.
pub fn summarize(runs: &[ThreadRun], cpus: &[Option<u32>], interval_ns: u64) -> Vec<Summary> {
    let mut out = Vec::with_capacity(runs.len() + 1);
    let mut all: Vec<i64> = Vec::with_capacity(runs.iter().map(|r| r.errors.len()).sum());
    for (i, r) in runs.iter().enumerate() {
        all.extend_from_slice(&r.errors);
        let mut e = r.errors.clone();
        out.push(Summary {
            thread: Some(i),
            cpu: cpus.get(i).copied().flatten(),
            overruns: overruns(&e, interval_ns),
            stats: Stats::from_errors(&mut e, r.wall_ns, r.cpu_ns),
            skipped: r.skipped,
            timer_slack_ns: r.timer_slack_ns,
        });
    }
    let wall = runs.iter().map(|r| r.wall_ns).max().unwrap_or(0);
    let cpu = runs.iter().map(|r| r.cpu_ns).sum();
    out.push(Summary {
        thread: None,
        cpu: None,
        overruns: overruns(&all, interval_ns),
        stats: Stats::from_errors(&mut all, wall, cpu),
        skipped: runs.iter().map(|r| r.skipped).sum(),
        timer_slack_ns: runs.first().and_then(|r| r.timer_slack_ns),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(errors: &[i64], skipped: u64, wall: u64, cpu: u64) -> ThreadRun {
        ThreadRun {
            errors: errors.to_vec(),
            skipped,
            cpu_ns: cpu,
            wall_ns: wall,
            timer_slack_ns: Some(50_000),
        }
    }

    #[test]
    fn overruns_are_strictly_later_than_one_interval() {
        assert_eq!(overruns(&[0, 999, 1_000, 1_001, 5_000, -3], 1_000), 2);
        assert_eq!(overruns(&[], 1_000), 0);
    }

    #[test]
    fn per_thread_and_merged_figures_are_exact() {
        // Thread 0: 10 samples 1..=10 µs; thread 1: 20 µs ×9 and one 2.5 ms overrun.
        let t0: Vec<i64> = (1..=10).map(|u| u * 1_000).collect();
        let mut t1 = vec![20_000; 9];
        t1.push(2_500_000);
        let runs = [
            run(&t0, 0, 10_000_000, 1_000_000),
            run(&t1, 2, 12_000_000, 3_000_000),
        ];
        let s = summarize(&runs, &[Some(0), Some(1)], 1_000_000);
        assert_eq!(s.len(), 3);
        let a = s[0].stats.as_ref().unwrap();
        assert_eq!(
            (a.min_ns, a.p50_ns, a.p99_ns, a.p999_ns, a.max_ns),
            (1_000, 5_000, 10_000, 10_000, 10_000)
        );
        assert_eq!(a.mean_ns, 5_500.0);
        assert_eq!((s[0].overruns, s[0].skipped, s[0].cpu), (0, 0, Some(0)));
        let b = s[1].stats.as_ref().unwrap();
        assert_eq!((b.p50_ns, b.max_ns), (20_000, 2_500_000));
        assert_eq!((s[1].overruns, s[1].skipped), (1, 2));
        let m = &s[2];
        assert_eq!((m.thread, m.overruns, m.skipped), (None, 1, 2));
        let ms = m.stats.as_ref().unwrap();
        // 20 samples sorted: 1..10 µs, 20 µs ×9, 2500 µs; nearest rank.
        assert_eq!(ms.samples, 20);
        assert_eq!(
            (ms.min_ns, ms.p50_ns, ms.p99_ns, ms.max_ns),
            (1_000, 10_000, 2_500_000, 2_500_000)
        );
        assert_eq!(ms.mean_ns, (55_000.0 + 180_000.0 + 2_500_000.0) / 20.0);
        assert_eq!((ms.wall_ns, ms.cpu_ns), (12_000_000, 4_000_000));
        assert!((ms.cpu_percent - 100.0 * 4.0 / 12.0).abs() < 1e-9);
    }

    #[test]
    fn a_thread_without_samples_has_no_stats() {
        let s = summarize(&[run(&[], 0, 0, 0)], &[None], 1_000);
        assert!(s[0].stats.is_none() && s[1].stats.is_none());
    }
}
