"""Numbers, tables and verdicts for people: the CLI's ``output/`` in Python,
so ``python -m keeptime bench`` prints the same tables as ``keeptime bench``."""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

#: Column headers of the result table: the CLI's, then the return column.
HEADERS = ("method", "p50", "p90", "p99", "p99.9", "max", "mean ± σ", "early", "CPU", "samples", "return p50/p90")

Cell = Dict[str, Any]


def _sig3(x: float) -> str:
    a = abs(x)
    if a >= 99.95:
        return f"{x:.0f}"
    if a >= 9.995:
        return f"{x:.1f}"
    return f"{x:.2f}"


def _unit_for(abs_ns: float) -> Tuple[float, str]:
    if abs_ns < 999.5:
        return 1.0, "ns"
    if abs_ns < 999_500.0:
        return 1e3, "µs"
    if abs_ns < 999_500_000.0:
        return 1e6, "ms"
    return 1e9, "s"


def ns(v: float) -> str:
    """A signed time in ns with an automatic unit.

    >>> ns(212), ns(54_321), ns(-1_204_000), ns(999_999)
    ('212 ns', '54.3 µs', '-1.20 ms', '1.00 ms')
    """
    if not math.isfinite(v):
        return "n/a"
    div, unit = _unit_for(abs(v))
    if div == 1.0:
        return f"{v:.0f} {unit}"
    return f"{_sig3(v / div)} {unit}"


def mean_sd(mean: float, sd: float) -> str:
    """``mean ± σ`` in the unit of the larger of the two.

    >>> mean_sd(12_345.0, 4_500.0), mean_sd(80.4, 12.2)
    ('12.3 ± 4.50 µs', '80 ± 12 ns')
    """
    if not (math.isfinite(mean) and math.isfinite(sd)):
        return "n/a"
    div, unit = _unit_for(max(abs(mean), abs(sd)))
    if div == 1.0:
        return f"{mean:.0f} ± {sd:.0f} {unit}"
    return f"{_sig3(mean / div)} ± {_sig3(sd / div)} {unit}"


def duration(v: int) -> str:
    """A requested duration, exactly when it is round.

    >>> duration(10_000_000), duration(2_500_000), duration(250_000), duration(7)
    ('10 ms', '2.5 ms', '250 µs', '7 ns')
    """
    for div, unit in ((1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs"), (1, "ns")):
        if v >= div or div == 1:
            break
    whole, frac = divmod(v, div)
    if frac == 0:
        return f"{whole} {unit}"
    digits = len(str(div)) - 1
    return f"{whole}.{str(frac).zfill(digits).rstrip('0')} {unit}"


def percent(p: float) -> str:
    """A percentage.

    >>> percent(98.4), percent(2.12), percent(0.051)
    ('98 %', '2.1 %', '0.05 %')
    """
    if not math.isfinite(p):
        return "n/a"
    if p >= 9.95:
        return f"{p:.0f} %"
    if p >= 0.995:
        return f"{p:.1f} %"
    return f"{p:.2f} %"


def ratio(r: float) -> str:
    """A ratio for "N× …" and "1/N of …"."""
    return f"{r:.0f}" if r >= 9.5 else f"{r:.1f}"


def _best(cells: Sequence[Cell], key: Callable[[Cell], float]) -> List[bool]:
    keys = [key(c) for c in cells]
    low = min(keys)
    return [len(cells) > 1 and k == low for k in keys]


def _abs_of(key: str) -> Callable[[Cell], float]:
    return lambda c: abs(float(c[key]))


def table_rows(cells: Sequence[Cell]) -> List[List[Tuple[str, bool]]]:
    """Each cell's row as (text, best in its column) pairs, in :data:`HEADERS` order."""
    best = [
        _best(cells, _abs_of(k))
        for k in ("p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns", "mean_ns", "cpu_percent")
    ]
    return [
        [
            (c["method"], False),
            (ns(c["p50_ns"]), best[0][i]),
            (ns(c["p90_ns"]), best[1][i]),
            (ns(c["p99_ns"]), best[2][i]),
            (ns(c["p999_ns"]), best[3][i]),
            (ns(c["max_ns"]), best[4][i]),
            (mean_sd(c["mean_ns"], c["stddev_ns"]), best[5][i]),
            (str(c["early"]), False),
            (percent(c["cpu_percent"]), best[6][i]),
            (str(c["samples"]), False),
            (
                f"{ns(c['return_p50_ns'])} / {ns(c['return_p90_ns'])}" if "return_p50_ns" in c else "—",
                False,
            ),
        ]
        for i, c in enumerate(cells)
    ]


def table(cells: Sequence[Cell]) -> str:
    """One duration's cells as aligned text; the best figure of each column gets a ``*``."""
    rows = [[h if i == 0 else h + " " for i, h in enumerate(HEADERS)]]
    for row in table_rows(cells):
        rows.append([t if i == 0 else t + ("*" if b else " ") for i, (t, b) in enumerate(row)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    lines = []
    for r in rows:
        parts = [r[0].ljust(widths[0])] + [t.rjust(w) for t, w in zip(r[1:], widths[1:])]
        lines.append(("  " + "  ".join(parts)).rstrip())
    return "\n".join(lines) + "\n"


def table_markdown(cells: Sequence[Cell]) -> str:
    """One duration's cells as a Markdown table, best figures in bold."""
    out = ["| " + " | ".join(HEADERS) + " |", "|:---|" + "---:|" * (len(HEADERS) - 1)]
    for row in table_rows(cells):
        out.append("| " + " | ".join(f"**{t}**" if b else t for t, b in row) + " |")
    return "\n".join(out) + "\n"


#: Pure-spin baselines, most representative first.
SPIN = ("busy-loop", "keeptime-spin")
#: OS-sleep baselines.
OS_SLEEP = ("time-sleep",)
#: keeptime's p99 counts as spin-level within this many ns, or half the spin's own p99.
SPIN_LEVEL_SLACK_NS = 250


def _find(cells: Sequence[Cell], names: Sequence[str]) -> Optional[Cell]:
    for n in names:
        for c in cells:
            if c["method"] == n:
                return c
    return None


def verdict(cells: Sequence[Cell]) -> Optional[str]:
    """What keeptime bought at one duration, against the busy loop and time.sleep
    measured in the same run (the CLI's verdict, with Python's baselines)."""
    k = _find(cells, ["keeptime"])
    if k is None:
        return None
    line = f"keeptime: p99 {ns(k['p99_ns'])} at {percent(k['cpu_percent'])} CPU"
    s = _find(cells, SPIN)
    if s is not None:
        tolerance = max(abs(s["p99_ns"]) // 2, SPIN_LEVEL_SLACK_NS)
        if 2 * k["p99_ns"] < s["p99_ns"] and s["p99_ns"] > SPIN_LEVEL_SLACK_NS:
            accuracy = f"a better p99 than the pure spin ({s['method']} {ns(s['p99_ns'])})"
        elif k["p99_ns"] <= s["p99_ns"] + tolerance:
            accuracy = "spin-level accuracy"
        else:
            accuracy = (
                f"p99 {ratio(k['p99_ns'] / max(s['p99_ns'], 1))}× the pure spin's "
                f"({s['method']} {ns(s['p99_ns'])})"
            )
        if k["cpu_percent"] > 0 and k["cpu_percent"] * 1.5 <= s["cpu_percent"]:
            cpu = f"at 1/{ratio(s['cpu_percent'] / k['cpu_percent'])} of its CPU"
        elif k["cpu_percent"] < s["cpu_percent"] * 0.95:
            cpu = f"but little CPU saved against the spin ({percent(s['cpu_percent'])})"
        else:
            cpu = f"but no CPU saved against the spin ({percent(s['cpu_percent'])})"
        line += f" — {accuracy} {cpu}"
    o = _find(cells, OS_SLEEP)
    if o is not None:
        if k["p99_ns"] < o["p99_ns"]:
            versus = f"{ratio(max(o['p99_ns'], 1) / max(k['p99_ns'], 1))}× the accuracy of {o['method']}"
        else:
            versus = f"no more accurate than {o['method']}"
        line += f"; {versus} (p99 {ns(o['p99_ns'])} at {percent(o['cpu_percent'])} CPU)"
    if k["early"] > 0:
        line += f"; WARNING: {k['early']} early returns, which keeptime must never do"
    r = _find(cells, ["keeptime-rust"])
    if r is not None:
        line += (
            f"\nfrom Python vs the core's own loop: p50 {ns(k['p50_ns'])} vs {ns(r['p50_ns'])}, "
            f"CPU {percent(k['cpu_percent'])} vs {percent(r['cpu_percent'])}"
        )
    return line
