//! cyclictest's histogram layout (`cyclictest -h US`, rt-tests 2.x), so its
//! plotting scripts read ours: one row per 1 µs bucket `i` from 0 to the
//! bound − 1, `%06d` then each thread's count as `%06lu`, tab-separated;
//! then `#` lines with totals, min, avg, max (whole µs), the overflow count
//! and the cycle numbers of the first overflows.
//!
//! A sample's bucket is its latency in whole µs, truncated toward zero as
//! cyclictest's `calcdiff` does; latencies at or past the bound are
//! overflows. A negative latency (only `keeptime-efficient` can wake early)
//! truncates into bucket 0 unless it is −1 µs or less, which cyclictest
//! cannot represent: those count in bucket 0 as well (and as `early` in the
//! statistics).

use std::fmt::Write;

/// The histogram of one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadHistogram {
    /// Count per 1 µs bucket, `bound_us` of them.
    pub counts: Vec<u64>,
    /// Samples at or past the bound.
    pub overflows: u64,
    /// Cycle numbers (0-based sample index) of the first `bound_us` overflows.
    pub overflow_cycles: Vec<u64>,
    /// Whole-µs latency of each sample: min, sum, max (over all samples).
    pub min_us: i64,
    /// Sum of whole-µs latencies.
    pub sum_us: i64,
    /// Largest whole-µs latency.
    pub max_us: i64,
    /// Samples.
    pub cycles: u64,
}

/// Whole µs of a latency in ns, truncated toward zero (cyclictest's `calcdiff`).
pub fn whole_us(ns: i64) -> i64 {
    ns / 1000
}

impl ThreadHistogram {
    /// The histogram of `errors_ns` (in sample order) with `bound_us` buckets.
    pub fn new(errors_ns: &[i64], bound_us: u64) -> Self {
        let mut h = ThreadHistogram {
            counts: vec![0; bound_us as usize],
            overflows: 0,
            overflow_cycles: Vec::new(),
            min_us: 0,
            sum_us: 0,
            max_us: 0,
            cycles: errors_ns.len() as u64,
        };
        let mut min = i64::MAX;
        let mut max = i64::MIN;
        for (cycle, &e) in errors_ns.iter().enumerate() {
            let us = whole_us(e);
            min = min.min(us);
            max = max.max(us);
            h.sum_us = h.sum_us.saturating_add(us);
            let bucket = us.max(0) as u64;
            if bucket >= bound_us {
                h.overflows += 1;
                if (h.overflow_cycles.len() as u64) < bound_us {
                    h.overflow_cycles.push(cycle as u64);
                }
            } else {
                h.counts[bucket as usize] += 1;
            }
        }
        if !errors_ns.is_empty() {
            h.min_us = min;
            h.max_us = max;
        }
        h
    }

    /// Samples inside the bound (cyclictest's `# Total:`).
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Average whole-µs latency, truncated (cyclictest prints it with `%05lu`).
    pub fn avg_us(&self) -> i64 {
        if self.cycles == 0 {
            0
        } else {
            self.sum_us / self.cycles as i64
        }
    }
}

/// cyclictest's text for `threads` (each thread's histogram, same bound).
pub fn render(threads: &[ThreadHistogram]) -> String {
    let mut out = String::from("# Histogram\n");
    let bound = threads.first().map_or(0, |t| t.counts.len());
    for i in 0..bound {
        let _ = write!(out, "{i:06} ");
        let cols: Vec<String> = threads
            .iter()
            .map(|t| format!("{:06}", t.counts[i]))
            .collect();
        out.push_str(&cols.join("\t"));
        out.push('\n');
    }
    let line = |out: &mut String, label: &str, f: &dyn Fn(&ThreadHistogram) -> String| {
        out.push_str(label);
        for t in threads {
            out.push(' ');
            out.push_str(&f(t));
        }
        out.push('\n');
    };
    line(&mut out, "# Total:", &|t| format!("{:09}", t.total()));
    line(&mut out, "# Min Latencies:", &|t| {
        format!("{:05}", t.min_us)
    });
    line(&mut out, "# Avg Latencies:", &|t| {
        format!("{:05}", t.avg_us())
    });
    line(&mut out, "# Max Latencies:", &|t| {
        format!("{:05}", t.max_us)
    });
    line(&mut out, "# Histogram Overflows:", &|t| {
        format!("{:05}", t.overflows)
    });
    out.push_str("# Histogram Overflow at cycle number:\n");
    for (i, t) in threads.iter().enumerate() {
        let _ = write!(out, "# Thread {i}:");
        for c in &t.overflow_cycles {
            let _ = write!(out, " {c:05}");
        }
        let others = t.overflows - t.overflow_cycles.len() as u64;
        if others > 0 {
            let _ = write!(out, " # {others:05} others");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_cyclictest() {
        // Thread 0: 0.5 µs, 1.999 µs, 2 µs, 3.2 µs (overflow at bound 3), 9 µs.
        let t0 = ThreadHistogram::new(&[500, 1_999, 2_000, 3_200, 9_000], 3);
        let t1 = ThreadHistogram::new(&[1_000, -1_500], 3);
        assert_eq!(t0.counts, [1, 1, 1]);
        assert_eq!((t0.overflows, t0.overflow_cycles.clone()), (2, vec![3, 4]));
        assert_eq!((t0.min_us, t0.avg_us(), t0.max_us), (0, 3, 9)); // (0+1+2+3+9)/5
        assert_eq!(t1.counts, [1, 1, 0]);
        assert_eq!((t1.min_us, t1.max_us), (-1, 1));
        let text = render(&[t0, t1]);
        assert_eq!(
            text,
            "# Histogram\n\
             000000 000001\t000001\n\
             000001 000001\t000001\n\
             000002 000001\t000000\n\
             # Total: 000000003 000000002\n\
             # Min Latencies: 00000 -0001\n\
             # Avg Latencies: 00003 00000\n\
             # Max Latencies: 00009 00001\n\
             # Histogram Overflows: 00002 00000\n\
             # Histogram Overflow at cycle number:\n\
             # Thread 0: 00003 00004\n\
             # Thread 1:\n"
        );
    }

    #[test]
    fn overflow_cycles_are_capped_at_the_bound() {
        let e = vec![5_000; 7];
        let h = ThreadHistogram::new(&e, 2);
        assert_eq!((h.overflows, h.overflow_cycles.len()), (7, 2));
        assert!(render(&[h]).contains("# Thread 0: 00000 00001 # 00005 others\n"));
    }
}
