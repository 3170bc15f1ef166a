"""The ``python -m keeptime bench`` result as text and Markdown: a table and
verdict per duration, the keeptime rows' sleeper stats, and the targets
(:data:`TARGET_P50_NS` at :data:`TARGET_DURATIONS_NS`), met or MISSED, for
``keeptime.sleep`` and ``Ticker``. The measuring is in
:mod:`keeptime._bench`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

from keeptime import _format

#: The blocking waits held to a target, and where: caller-measured p50 at most
#: :data:`TARGET_P50_NS`, none early.
TARGET_METHODS = ("keeptime-sleep", "keeptime-ticker")
TARGET_DURATIONS_NS = (250_000, 1_000_000, 2_500_000, 10_000_000)
TARGET_P50_NS = 1_000


def render(doc: Dict[str, Any]) -> str:
    """The human-readable result: header, then one table and verdict per duration."""
    m = doc["machine"]
    where = f"{m['os']} {m['arch']}"
    if m.get("kernel"):
        where += f", kernel {m['kernel']}"
    if m.get("virtualization"):
        where += f", {m['virtualization']} guest"
    if m.get("clocksource"):
        where += f", clocksource {m['clocksource']}"
    if m.get("timer_slack_ns") is not None:
        where += f", default timer slack {_format.duration(m['timer_slack_ns'])}"
    groups = _by_duration(doc)
    methods = len(next(iter(groups.values()), []))
    rt = doc["runtime"]
    out = [
        f"keeptime bench (Python {rt['version']}): {methods} methods × {len(groups)} durations on {where}\n"
        "error = the caller's first clock reading after the wait − deadline (negative = early); "
        "return = that reading − the one the wait returned; "
        "CPU = thread CPU time ÷ wall time; * = best in column\n"
    ]
    for d, cells in groups.items():
        out.append(f"\nwait {_format.duration(d)}\n")
        out.append(_format.table(cells))
        v = _format.verdict(cells)
        if v:
            out.append(v + "\n")
        out.append(sleeper_table(cells))
    t = targets(doc)
    if t:
        out.append(f"\ntargets: p50 ≤ {_format.ns(TARGET_P50_NS)}, none early\n")
        out += [f"  {line}\n" for line in t]
    return "".join(out)


def targets(doc: Dict[str, Any]) -> List[str]:
    """One line per measured target cell (:data:`TARGET_METHODS` at
    :data:`TARGET_DURATIONS_NS`): its p50 and early count, met or MISSED.

    >>> cell = {"method": "keeptime-sleep", "duration_ns": 1_000_000, "p50_ns": 420, "early": 0}
    >>> targets({"results": [cell, dict(cell, method="keeptime-ticker", p50_ns=1_300)]})
    ['keeptime-sleep    1 ms  p50 420 ns  early 0  met', 'keeptime-ticker   1 ms  p50 1.30 µs  early 0  MISSED']
    """
    lines = []
    for c in doc["results"]:
        if c["method"] not in TARGET_METHODS or c["duration_ns"] not in TARGET_DURATIONS_NS:
            continue
        met = c["p50_ns"] <= TARGET_P50_NS and c["early"] == 0
        lines.append(
            f"{c['method']:<16} {_format.duration(c['duration_ns']):>6}  p50 {_format.ns(c['p50_ns'])}  "
            f"early {c['early']}  {'met' if met else 'MISSED'}"
        )
    return lines


def sleeper_rows(cells: Sequence[Dict[str, Any]]) -> List[List[str]]:
    """The keeptime rows' sleeper stats, header first: tail target, late share
    (ended late from an OS wait), OS waits per sleep, and the sleeper's CPU
    estimate ÷ wall time beside the CPU the thread clock measured. Only the
    header without keeptime rows."""
    rows = [["sleeper stats", "target", "late", "OS waits/sleep", "CPU est.", "CPU"]]
    for c in cells:
        s = c.get("sleeper")
        if s is None:
            continue
        sleeps = max(s["sleeps"], 1)
        exact = c["method"] in ("keeptime", "keeptime-rust")
        rows.append(
            [
                c["method"],
                _format.percent(s["tail_target_ppm"] / 1e4) if exact else "—",
                _format.percent(100 * s["late"] / sleeps),
                f"{s['os_waits'] / sleeps:.2f}",
                _format.percent(100 * s["cpu_estimate_ns"] / max(c["wall_ns"], 1)),
                _format.percent(c["cpu_percent"]),
            ]
        )
    return rows


def sleeper_table(cells: Sequence[Dict[str, Any]]) -> str:
    """:func:`sleeper_rows` as aligned text (empty without keeptime rows)."""
    rows = sleeper_rows(cells)
    if len(rows) == 1:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        ("  " + r[0].ljust(widths[0]) + "".join("  " + t.rjust(w) for t, w in zip(r[1:], widths[1:]))).rstrip()
        for r in rows
    ]
    return "\n".join(lines) + "\n"


def sleeper_table_markdown(cells: Sequence[Dict[str, Any]]) -> str:
    """:func:`sleeper_rows` as a Markdown table (empty without keeptime rows)."""
    rows = sleeper_rows(cells)
    if len(rows) == 1:
        return ""
    out = ["| " + " | ".join(rows[0]) + " |", "|:---|" + "---:|" * (len(rows[0]) - 1)]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out) + "\n"


def _by_duration(doc: Dict[str, Any]) -> Dict[int, List[Dict[str, Any]]]:
    groups: Dict[int, List[Dict[str, Any]]] = {}
    for r in doc["results"]:
        groups.setdefault(r["duration_ns"], []).append(r)
    return groups


def markdown(doc: Dict[str, Any]) -> str:
    """The result tables as Markdown (best figures in bold), one per duration."""
    return "\n".join(
        f"wait {_format.duration(d)}\n\n{_format.table_markdown(cells)}"
        + (f"\n{sleeper_table_markdown(cells)}" if len(sleeper_rows(cells)) > 1 else "")
        for d, cells in _by_duration(doc).items()
    )
