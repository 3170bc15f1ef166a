"""Statistics of one bench cell, as spec/bench-result.md defines them.

A port of the CLI's ``bench/stats.rs``: exact nearest-rank percentiles over
every sample, sample standard deviation, early returns, CPU share and the
log-linear error histogram, in integer arithmetic where it matters, so the
Python bench computes the same figures as the Rust one from the same samples.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

#: Per-mille ranks of the reported percentiles: p50, p90, p99, p99.9.
PERCENTILES_PER_MILLE = (500, 900, 990, 999)
#: Histogram edges keep this many significant bits (8 buckets per power of two).
SIGNIFICANT_BITS = 4

_I64_MAX = (1 << 63) - 1


def percentile(sorted_errors: Sequence[int], q_per_mille: int) -> int:
    """Nearest rank: ``sorted[max(ceil(q·n/1000), 1) − 1]``.

    >>> percentile(list(range(1, 21)), 500), percentile(list(range(1, 21)), 990)
    (10, 20)
    """
    n = len(sorted_errors)
    rank = max(-(-q_per_mille * n // 1000), 1)
    return sorted_errors[rank - 1]


def _low_mask(v: int) -> int:
    bits = v.bit_length()
    return 0 if bits <= SIGNIFICANT_BITS else (1 << (bits - SIGNIFICANT_BITS)) - 1


def _round_down_sig(v: int) -> int:
    return v & ~_low_mask(v)


def _round_up_sig(v: int) -> int:
    mask = _low_mask(v)
    return v if v & mask == 0 else (v | mask) + 1


def upper_edge(v: int) -> int:
    """The upper edge of the histogram bucket holding ``v``: the smallest edge ``>= v``.

    >>> [upper_edge(v) for v in (0, 17, -17, 54_321)]
    [0, 18, -16, 57344]
    """
    if v == 0:
        return 0
    if v > 0:
        return min(_round_up_sig(v), _I64_MAX)
    return -min(_round_down_sig(-v), _I64_MAX)


def lower_edge(le: int) -> int:
    """The edge just below edge ``le`` (the bucket's exclusive lower edge).

    >>> [lower_edge(le) for le in (18, -16, 0, 1, -1)]
    [16, -18, -1, 0, -2]
    """
    if le == 0:
        return -1
    if le > 0:
        return min(_round_down_sig(le - 1), _I64_MAX)
    return -min(_round_up_sig(-le + 1), _I64_MAX)


def histogram(sorted_errors: Sequence[int]) -> List[Dict[str, int]]:
    """The sorted errors in buckets ``gt_ns < error <= le_ns``; only non-empty buckets."""
    out: List[Dict[str, int]] = []
    for e in sorted_errors:
        le = upper_edge(e)
        if out and out[-1]["le_ns"] == le:
            out[-1]["count"] += 1
        else:
            out.append({"gt_ns": lower_edge(le), "le_ns": le, "count": 1})
    return out


def return_summary(returns: List[int]) -> Dict[str, int]:
    """A cell's return figures (``returns`` is sorted in place): the caller's
    reading minus the method's own returned reading, p50 and p90.

    >>> return_summary([300, 100, 200, 5_000])
    {'return_p50_ns': 200, 'return_p90_ns': 5000}
    """
    if not returns:
        raise ValueError("a cell needs at least one sample")
    returns.sort()
    return {"return_p50_ns": percentile(returns, 500), "return_p90_ns": percentile(returns, 900)}


def stats(errors: List[int], wall_ns: int, cpu_ns: int) -> Dict[str, Any]:
    """The statistics of a cell (``errors`` is sorted in place), in the result format's field order.

    >>> s = stats([3, -1, 2, 10, 1], 1_000, 250)
    >>> (s["min_ns"], s["p50_ns"], s["max_ns"], s["early"], s["mean_ns"], s["cpu_percent"])
    (-1, 2, 10, 1, 3.0, 25.0)
    """
    if not errors:
        raise ValueError("a cell needs at least one sample")
    errors.sort()
    n = len(errors)
    mean = sum(errors) / n
    stddev = math.sqrt(sum((e - mean) ** 2 for e in errors) / (n - 1)) if n > 1 else 0.0
    p50, p90, p99, p999 = (percentile(errors, q) for q in PERCENTILES_PER_MILLE)
    early = next((i for i, e in enumerate(errors) if e >= 0), n)
    return {
        "samples": n,
        "min_ns": errors[0],
        "mean_ns": mean,
        "stddev_ns": stddev,
        "p50_ns": p50,
        "p90_ns": p90,
        "p99_ns": p99,
        "p999_ns": p999,
        "max_ns": errors[-1],
        "early": early,
        "cpu_percent": 100.0 * cpu_ns / wall_ns if wall_ns else 0.0,
        "wall_ns": wall_ns,
        "cpu_ns": cpu_ns,
        "histogram": histogram(errors),
    }
