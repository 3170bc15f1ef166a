"""``python -m keeptime``: the bench and the clock report from Python.

    python -m keeptime bench [--durations 10us,250us,1ms,2500us,10ms] [--crowd 16] [--export-json FILE]
    python -m keeptime clocks [--json]
    python -m keeptime bench-async [--scale 0.25] [--no-uvloop]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from decimal import Decimal, InvalidOperation
from typing import List, Optional

import keeptime
from keeptime import _bench, _bench_text, _crowd, _format

_UNITS_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000, "s": 1_000_000_000, "min": 60 * 10**9, "h": 3600 * 10**9}
_DURATION = re.compile(r"^\s*\+?(?P<num>[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(?P<unit>[a-zµμ]*)\s*$")


def parse_duration_ns(text: str, default_unit: Optional[str] = None) -> int:
    """``10ms``, ``2.5us``, ``250µs``, ``1e-3s`` → nanoseconds (the CLI's syntax).

    >>> parse_duration_ns("2.5ms"), parse_duration_ns("250µs"), parse_duration_ns("1e-3s")
    (2500000, 250000, 1000000)
    """
    m = _DURATION.match(text)
    if not m:
        raise argparse.ArgumentTypeError(
            f"invalid duration {text!r}: expected a number and a unit, e.g. 10ms or 2.5us (units: ns, us, ms, s)"
        )
    unit = m["unit"] or default_unit
    if unit not in _UNITS_NS:
        raise argparse.ArgumentTypeError(f"duration {text!r} needs a unit: ns, us (or µs), ms, s, min or h")
    try:
        value = Decimal(m["num"]) * _UNITS_NS[unit]
    except InvalidOperation:  # pragma: no cover - the regex admits only numbers
        raise argparse.ArgumentTypeError(f"invalid duration {text!r}") from None
    return int(value.to_integral_value(rounding="ROUND_CEILING"))


def _durations(text: str) -> List[int]:
    out = [parse_duration_ns(part) for part in text.split(",") if part.strip()]
    if not out or min(out) < 1:
        raise argparse.ArgumentTypeError("bench durations must be at least 1ns, e.g. 10us,1ms")
    return out


def _methods(text: str) -> List[str]:
    out = [part.strip() for part in text.split(",") if part.strip()]
    for name in out:
        if name not in _bench.METHODS_BY_NAME:
            raise argparse.ArgumentTypeError(
                f"unknown method {name!r}: expected some of {', '.join(_bench.METHODS_BY_NAME)}"
            )
    return out


def _positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, not {text!r}")
    return n


def _count(text: str) -> int:
    return 0 if text.strip() == "0" else _positive_int(text)


def _tail_target(text: str) -> float:
    """relaxed, balanced, strict, a share (0.01) or a percentage (1%)."""
    t = text.strip().lower()
    presets = {"relaxed": keeptime.TAIL_RELAXED, "balanced": keeptime.TAIL_BALANCED, "strict": keeptime.TAIL_STRICT}
    try:
        share = presets[t] if t in presets else float(t[:-1]) / 100 if t.endswith("%") else float(t)
        return keeptime.Sleeper(tail_target=share).tail_target
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"invalid tail target {text!r}: expected relaxed, balanced, strict, a share strictly between "
            "0 and 1 (e.g. 0.01) or a percentage (e.g. 1%)"
        ) from None


def _budget(text: str) -> float:
    ns = parse_duration_ns(text, default_unit="s")
    if ns < 1:
        raise argparse.ArgumentTypeError("the budget must be more than 0, e.g. 30s")
    return ns / 1e9


def _write(target: str, text: str) -> None:
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)


def bench(args: argparse.Namespace) -> int:
    exports = [(args.export_json, "json"), (args.export_markdown, "markdown")]
    for target, _ in exports:
        if target and target != "-":
            open(target, "a", encoding="utf-8").close()  # fail now, not after a minute of measuring
    to_stdout = any(t == "-" for t, _ in exports)
    out = sys.stderr if to_stdout else sys.stdout
    config = _bench.Config(
        durations_ns=args.durations or _bench.DEFAULT_DURATIONS_NS,
        methods=args.methods or [m.name for m in _bench.METHODS],
        samples=args.samples,
        warmup=args.warmup,
        budget_s=args.budget,
        tail_target=args.tail_target,
    )
    doc = _bench.run(config, progress=sys.stderr if sys.stderr.isatty() else None)
    out.write(_bench_text.render(doc))
    if not args.no_ffi:
        costs = _bench.ffi_cost()
        out.write(
            "\nFFI: keeptime.sleep(0) costs {} per call, keeptime.sleep_ns(0) {} (time.monotonic_ns() {}, for scale)\n".format(
                *(_format.ns(v) for v in costs.values())
            )
        )
    crowd = []
    if args.crowd:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r\x1b[Kcrowd: {args.crowd} threads × {_format.duration(_crowd.DEFAULT_DURATION_NS)} …")
            sys.stderr.flush()
        crowd = _crowd.run(args.crowd)
        if sys.stderr.isatty():
            sys.stderr.write("\r\x1b[K")
        out.write("\n" + _crowd.table(crowd))
    out.flush()
    if args.export_json:
        _write(args.export_json, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    if args.export_markdown:
        _write(args.export_markdown, _bench_text.markdown(doc) + (f"\n{_crowd.table_markdown(crowd)}" if crowd else ""))
    return 0


def _crowd_threads(text: str) -> int:
    try:
        return _crowd.parse_threads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def bench_async(args: argparse.Namespace) -> int:
    from keeptime import _bench_async

    _bench_async.run(scale=args.scale, use_uvloop=not args.no_uvloop, out=sys.stdout)
    return 0


def _scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {text!r}") from None
    if not 0 < value <= 100:
        raise argparse.ArgumentTypeError(f"the scale must be more than 0 and at most 100, not {text!r}")
    return value


def clocks(args: argparse.Namespace) -> int:
    report = keeptime.clocks()
    if args.json:
        print(report.to_json())
        return 0
    rows = [("clock", "clock_getres", "granularity", "read cost", "went back")]
    for c in report.clocks:
        if not c.available:
            rows.append((c.name, f"unavailable: {c.error}", "", "", ""))
            continue
        rows.append(
            (
                c.name,
                _format.ns(c.resolution_ns) if c.resolution_ns is not None else "—",
                _format.ns(c.granularity_ns) if c.granularity_ns is not None else "—",
                f"{c.read_cost_ns:.1f} ns",
                str(c.monotonic_violations),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        print(("  " + r[0].ljust(widths[0]) + "".join("  " + t.rjust(w) for t, w in zip(r[1:], widths[1:]))).rstrip())
    m = report.machine
    print(f"\n  system       {m.os} {m.arch}" + (f", kernel {m.kernel_release}" if m.kernel_release else ""))
    if m.clocksource:
        print(f"  clocksource  {m.clocksource}")
    if m.timer_slack_ns is not None:
        print(f"  timer slack  {_format.ns(m.timer_slack_ns)} (this thread)")
    print(f"  virtualized  {m.virtualization.hypervisor if m.virtualization else 'no sign of it'}")
    if report.findings:
        print()
        for f in report.findings:
            print(f"  {f}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m keeptime", description="Precise waiting for Python: bench and clocks.")
    p.add_argument("--version", action="version", version=f"keeptime {keeptime.__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser(
        "bench",
        help="compare time.sleep, a busy loop and keeptime on this machine",
        description=_bench.__doc__.split("\n\n")[1] if _bench.__doc__ else None,
    )
    b.add_argument("--durations", type=_durations, help="wait durations, comma-separated (default 10us,250us,1ms,2500us,10ms)")
    b.add_argument("--methods", type=_methods, help=f"methods, comma-separated (default all: {','.join(_bench.METHODS_BY_NAME)})")
    b.add_argument("--samples", type=_positive_int, help="exact samples per method and duration (default: fit the budget)")
    b.add_argument("--warmup", type=_count, help="warm-up waits per method and duration (default: about 50 ms worth; about 1 s, at least 300 where they take at most 5 s, at most 3000, for keeptime's sleepers, which learn)")
    b.add_argument("--budget", type=_budget, help=f"overall time budget, e.g. 30s (default {_bench.DEFAULT_BUDGET_S:.0f}s, none with --samples)")
    b.add_argument(
        "--tail-target",
        type=_tail_target,
        default=keeptime.TAIL_BALANCED,
        help="the keeptime rows' tail target: relaxed, balanced (default, 1%%), strict, or a share like 0.002",
    )
    b.add_argument("--export-json", metavar="FILE", help="write the bench result document (spec/bench-result.md); - for stdout")
    b.add_argument("--export-markdown", metavar="FILE", help="write the tables as Markdown; - for stdout")
    b.add_argument("--no-ffi", action="store_true", help="skip measuring the cost of one keeptime.sleep(0) call")
    b.add_argument(
        "--crowd",
        type=_crowd_threads,
        default=_crowd.DEFAULT_THREADS,
        metavar="N",
        help=f"N threads each sleeping {_format.duration(_crowd.DEFAULT_DURATION_NS)} in a loop, keeptime then "
        f"time.sleep, {_crowd.DEFAULT_SECONDS:g} s each (default {_crowd.DEFAULT_THREADS}; 0 for none)",
    )
    b.set_defaults(run=bench)
    a = sub.add_parser(
        "bench-async",
        help="compare asyncio.sleep and keeptime.asyncio.sleep (and blocking keeptime.sleep)",
        description="asyncio.sleep vs keeptime.asyncio.sleep on asyncio's loop (and uvloop's), blocking "
        "keeptime.sleep as the reference, single sleeps at 250us-10ms, then load rows (1,000-task bursts in "
        "two rounds, 10/100/1,000 tasks ticking at 1 kHz, a crowd) with the waiter's stated capacity and the "
        "targets. About 2-3 min.",
    )
    a.add_argument("--scale", type=_scale, default=1.0, help="sample counts × this (default 1; 0.25 is quicker, noisier)")
    a.add_argument("--no-uvloop", action="store_true", help="skip uvloop even if it is installed")
    a.set_defaults(run=bench_async)
    c = sub.add_parser("clocks", help="inspect the clocks and timers of this machine")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(run=clocks)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        status: int = args.run(args)
        return status
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
