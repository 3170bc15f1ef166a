#!/usr/bin/env python3
"""`make check-latency`: keeptime latency --method clock-nanosleep against
rt-tests' cyclictest, interleaved in one run.

Both run with the same interval, thread count and duration, in alternating
rounds (ABBA order) so that drifting load on a shared machine hits both
alike. Both print cyclictest's histogram (1 us buckets, whole us truncated);
the figures of both sides are computed from those histograms the same way
(nearest rank over every sample, overflows counted as above the bound).

Checks:
  * medians within +-15 % of each other (relative to cyclictest's);
  * p99 of the same order: the larger at most P99_FACTOR (3x) the smaller;
  * the same handling of overruns: on keeptime's side, on each thread, every
    deadline of a round is either sampled or skipped after a late wake-up,
    never delivered in a catch-up burst: samples + sum(floor(latency /
    interval)) is at most duration / interval + 2 (the round's edges) plus
    floor(max latency / interval), and at least duration / interval - 1 %.
    The allowance is for the round's last wake-up: when it comes late, the
    deadlines it skips lie past the round's end, yet its latency counts them
    (a 6-7 ms stall on the last deadline gave 1 000 samples and 6 skipped in
    a 1 000-deadline round, once on each side). A catch-up burst after a
    stall of k intervals adds k * (k + 1) / 2, more than the allowance from
    k = 3 on (so a burst after a stall of 2 intervals is no longer caught).
    cyclictest's side is measured the same way and printed, not checked: it
    is the peer, not our loop, and its -D timer starts before its threads,
    so a slow thread start costs it a few deadlines. Each side's overrun
    count (latency >= one interval) is printed.
Exit 1 with the failing check named; every figure of both sides is printed.

With --figures-only (what `make test` runs) the medians and p99 are printed
as met or MISSED and do not fail the run: they are timings, and the project
never asserts timings on its shared, noisy machines. The overrun accounting,
which is the loops' logic, still fails it.
"""

import argparse
import os
import re
import subprocess
import sys

P50_TOLERANCE = 0.15
P99_FACTOR = 3.0
EDGE_SLACK = 2  # deadlines at a round's start/end either side may count differently


def parse_histogram(text):
    """cyclictest's -h output -> per thread: counts dict, overflows, max_us."""
    rows = []
    overflows = maxes = None
    for line in text.splitlines():
        if line.startswith("# Histogram Overflows:"):
            overflows = [int(v) for v in line.split(":")[1].split()]
        elif line.startswith("# Max Latencies:"):
            maxes = [int(v) for v in line.split(":")[1].split()]
        elif line and not line.startswith("#") and re.match(r"^\d{6} ", line):
            idx, rest = line.split(" ", 1)
            rows.append((int(idx), [int(v) for v in rest.split("\t")]))
    if not rows or overflows is None or maxes is None:
        raise SystemExit("check-latency: no histogram in output:\n" + text[-2000:])
    threads = len(rows[0][1])
    out = []
    for t in range(threads):
        counts = {idx: c[t] for idx, c in rows if c[t]}
        out.append({"counts": counts, "overflows": overflows[t], "max_us": maxes[t],
                    "bound": len(rows)})
    return out


def samples(h):
    return sum(h["counts"].values()) + h["overflows"]


def merged(hists):
    counts = {}
    for h in hists:
        for k, v in h["counts"].items():
            counts[k] = counts.get(k, 0) + v
    return counts, sum(h["overflows"] for h in hists)


def percentile(counts, overflows, q_per_mille):
    n = sum(counts.values()) + overflows
    rank = max(-(-q_per_mille * n // 1000), 1)
    seen = 0
    for k in sorted(counts):
        seen += counts[k]
        if seen >= rank:
            return k
    return float("inf")  # in the overflow


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise SystemExit(f"check-latency: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keeptime", required=True)
    ap.add_argument("--cyclictest", default="cyclictest")
    ap.add_argument("--interval-us", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--round-seconds", type=int, default=5)
    ap.add_argument("--out-dir", default=None, help="keep each round's raw outputs here")
    ap.add_argument("--figures-only", action="store_true",
                    help="print the median and p99 checks as met/MISSED instead of failing on them")
    a = ap.parse_args()

    bound = 10 * a.interval_us
    # cyclictest 2.x pins thread N to CPU N even without -a; pin both sides
    # explicitly, round-robin over the CPUs this process may use.
    cpus = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
    root = os.geteuid() == 0
    common_ct = ["-m", "-q", "-d", "0", "-i", str(a.interval_us), "-t", str(a.threads),
                 "-D", str(a.round_seconds), "-h", str(bound), "--latency", "0", "-a", cpus]
    common_kt = ["latency", "--method", "clock-nanosleep", "--mlock", "--quiet",
                 "--interval", f"{a.interval_us}us", "--threads", str(a.threads),
                 "--duration", f"{a.round_seconds}s", "--histogram", f"{bound}us",
                 "--dma-latency", "0", "--affinity", cpus]
    if root:
        common_ct += ["-p", "80"]
        common_kt += ["--priority", "80"]
    else:
        print("check-latency: not root: both sides run without SCHED_FIFO, mlock or dma latency"
              " (each may warn)")
    ct_cmd = [a.cyclictest] + common_ct
    kt_cmd = [a.keeptime] + common_kt
    print("check-latency: cyclictest:", " ".join(ct_cmd))
    print("check-latency: keeptime:  ", " ".join(kt_cmd))
    if a.out_dir:
        os.makedirs(a.out_dir, exist_ok=True)

    sides = {"cyclictest": [], "keeptime": []}
    failures = []
    peer_notes = []  # cyclictest's own accounting: printed, not checked
    expected = a.round_seconds * 1_000_000 // a.interval_us
    for r in range(a.rounds):
        order = ["cyclictest", "keeptime"] if r % 2 == 0 else ["keeptime", "cyclictest"]
        line = []
        for side in order:
            out, _ = run(ct_cmd if side == "cyclictest" else kt_cmd)
            if a.out_dir:
                with open(os.path.join(a.out_dir, f"round{r + 1}-{side}.txt"), "w") as f:
                    f.write(out)
            hists = parse_histogram(out)
            if len(hists) != a.threads:
                raise SystemExit(f"check-latency: {side} printed {len(hists)} threads")
            sides[side].extend(hists)
            counts, ovf = merged(hists)
            line.append(f"{side} p50 {percentile(counts, ovf, 500)} us")
            # Same handling of overruns: every deadline sampled or skipped.
            for t, h in enumerate(hists):
                inside = sum(k // a.interval_us * c for k, c in h["counts"].items())
                # Past the bound only the max is known: each overflow skipped at
                # least bound/interval deadlines and at most max/interval.
                smin = inside + h["overflows"] * (bound // a.interval_us)
                smax = inside + h["overflows"] * (h["max_us"] // a.interval_us)
                n = samples(h)
                # Never more than the round's deadlines (a catch-up burst would be),
                # except that the last wake-up of a round, if it was late, skips
                # deadlines past the round's end: at most max // interval of them.
                # Fewer by up to 1 %: cyclictest's -D clock starts before its threads do.
                high = expected + EDGE_SLACK + h["max_us"] // a.interval_us
                low = max(EDGE_SLACK, expected // 100)
                if n + smin > high or n + smax < expected - low:
                    msg = (f"round {r + 1} {side} thread {t}: {n} samples + {smin}..{smax}"
                           f" skipped deadlines != {expected} deadlines")
                    if side == "keeptime":
                        failures.append(msg)
                    else:
                        peer_notes.append(msg)
        print(f"check-latency: round {r + 1}/{a.rounds}:", ", ".join(line))

    def figures(side):
        counts, ovf = merged(sides[side])
        n = sum(counts.values()) + ovf
        over = sum(c for k, c in counts.items() if k >= a.interval_us) + ovf
        total = sum(k * c for k, c in counts.items())
        return {
            "samples": n,
            "min": min(counts) if counts else None,
            "avg": total / max(n - ovf, 1),
            "p50": percentile(counts, ovf, 500),
            "p99": percentile(counts, ovf, 990),
            "p999": percentile(counts, ovf, 999),
            "max": max(h["max_us"] for h in sides[side]),
            "overruns": over,
        }

    ct, kt = figures("cyclictest"), figures("keeptime")
    print(f"check-latency: all rounds, {a.threads} thread(s), interval {a.interval_us} us, "
          f"whole us (cyclictest's truncation):")
    print(f"  {'':16}{'samples':>9}{'min':>6}{'avg':>8}{'p50':>6}{'p99':>6}{'p99.9':>7}"
          f"{'max':>7}{'overruns':>10}")
    for name, f in (("cyclictest", ct), ("keeptime c-n", kt)):
        print(f"  {name:16}{f['samples']:>9}{f['min']:>6}{f['avg']:>8.1f}{f['p50']:>6}"
              f"{f['p99']:>6}{f['p999']:>7}{f['max']:>7}{f['overruns']:>10}")

    p50_dev = abs(kt["p50"] - ct["p50"]) / max(ct["p50"], 1)
    print(f"check-latency: median {kt['p50']} vs {ct['p50']} us: {100 * p50_dev:.1f} % apart "
          f"(limit {100 * P50_TOLERANCE:.0f} %)")
    timing = []
    if p50_dev > P50_TOLERANCE:
        timing.append(f"medians {kt['p50']} vs {ct['p50']} us differ by more than 15 %")
    lo, hi = sorted([kt["p99"], ct["p99"]])
    ratio = hi / max(lo, 1)
    print(f"check-latency: p99 {kt['p99']} vs {ct['p99']} us: ratio {ratio:.2f} "
          f"(limit {P99_FACTOR:.0f}x)")
    if ratio > P99_FACTOR:
        timing.append(f"p99 {kt['p99']} vs {ct['p99']} us: more than {P99_FACTOR}x apart")
    if a.figures_only:
        for t in timing:
            print("check-latency: MISSED (figures only, not failing):", t)
        print(f"check-latency: median and p99 targets: {'MISSED' if timing else 'met'}")
    else:
        failures.extend(timing)
    print(f"check-latency: overruns (latency >= 1 interval): keeptime {kt['overruns']}, "
          f"cyclictest {ct['overruns']}; every deadline sampled or skipped on keeptime's side: "
          f"{'no' if any('deadlines' in f for f in failures) else 'yes'}")
    for note in peer_notes:
        print("check-latency: note (cyclictest's accounting, not checked):", note)
    if failures:
        for f in failures:
            print("check-latency: FAIL:", f)
        return 1
    print("check-latency: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
