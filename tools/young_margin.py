#!/usr/bin/env python3
"""What a young model must pay on a recorded wake-up trace.

For each OS-wait length in TRACE (a `keeptime trace` recording, CSV or
CSV.gz), prints the p50 and p99 overshoot and the expected largest of n
overshoots drawn from that length's own wake-ups (exact, over the recorded
distribution: sum of x_(i) * ((i/N)^n - ((i-1)/N)^n)).

A model that keeps its late share at 1 % from its own samples cannot set any
sample aside before it holds 99 of them (spec/estimator.md, quantile), so
until then its margin is their largest: on a heavy tail that is several times
the p99 that `keeptime trace --oracle` plans with, and a young sleeper spins
that much more.

    python3 tools/young_margin.py TRACE [N ...]     (default N: 50 100 200)
"""
import csv
import gzip
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, ns = sys.argv[1], [int(a) for a in sys.argv[2:]] or [50, 100, 200]
    opener = gzip.open if path.endswith(".gz") else open
    by_len: dict[int, list[int]] = {}
    with opener(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            by_len.setdefault(int(row["os_wait_ns"]), []).append(max(0, int(row["overshoot_ns"])))
    print("os wait    waits     p50      p99  " + "  ".join(f"E[max of {n:>3}]" for n in ns))
    for length in sorted(by_len):
        xs = sorted(by_len[length])
        big_n = len(xs)
        p50, p99 = xs[(big_n - 1) // 2], xs[min(big_n - 1, (99 * big_n) // 100)]
        cells = []
        for n in ns:
            e = sum(x * ((i / big_n) ** n - ((i - 1) / big_n) ** n) for i, x in enumerate(xs, 1))
            cells.append(f"{e / 1e3:12.1f} µs")
        print(f"{length / 1e3:7.0f} µs {big_n:6d} {p50 / 1e3:6.1f} µs {p99 / 1e3:6.1f} µs " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
