//! One definition of a percentile for every bench, example and report of the
//! project: the nearest-rank rule of the bench result format
//! (`spec/bench-result.md`).

/// The value at per-mille rank `q_per_mille` (500 = median, 990 = p99,
/// 999 = p99.9) of `sorted` (ascending) by the nearest-rank rule:
/// `sorted[max(ceil(q·n / 1000), 1) − 1]`, in integers. `None` for an empty
/// slice; a `q_per_mille` past 1000 is the maximum.
///
/// ```
/// use keeptime::stats::nearest_rank;
/// let sorted = [10, 20, 30, 40];
/// assert_eq!(nearest_rank(&sorted, 500), Some(20)); // ceil(0.5·4) = 2nd
/// assert_eq!(nearest_rank(&sorted, 990), Some(40));
/// assert_eq!(nearest_rank(&sorted, 0), Some(10));
/// assert_eq!(nearest_rank::<u64>(&[], 500), None);
/// ```
pub fn nearest_rank<T: Copy>(sorted: &[T], q_per_mille: u64) -> Option<T> {
    let n = sorted.len() as u128;
    if n == 0 {
        return None;
    }
    let rank = (u128::from(q_per_mille.min(1000)) * n)
        .div_ceil(1000)
        .max(1);
    Some(sorted[(rank - 1) as usize])
}

#[cfg(test)]
mod tests {
    use super::nearest_rank;

    #[test]
    fn nearest_rank_follows_the_bench_result_rule() {
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(nearest_rank(&v, 500), Some(500));
        assert_eq!(nearest_rank(&v, 900), Some(900));
        assert_eq!(nearest_rank(&v, 990), Some(990));
        assert_eq!(nearest_rank(&v, 999), Some(999));
        assert_eq!(nearest_rank(&v, 1000), Some(1000));
        assert_eq!(nearest_rank(&v, 5000), Some(1000));
        // n = 3: the median is the 2nd (ceil 1.5), p99 the 3rd (ceil 2.97).
        assert_eq!(nearest_rank(&[7i64, 8, 9], 500), Some(8));
        assert_eq!(nearest_rank(&[7i64, 8, 9], 990), Some(9));
        // n = 1: every rank is the one value.
        assert_eq!(nearest_rank(&[42u64], 1), Some(42));
    }
}
