#!/usr/bin/env python3
"""No import circles between the modules of a Rust crate.

A module is a file: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `lib.rs`,
`main.rs` and `mod.rs` stand for their folder. Module `m` imports `n` when
its code (comments and `#[cfg(test)]` parts left out) names a path
`crate::n::…` or `super::…` that resolves to `n`, the longest existing
module the path starts with; a module's own ancestors and descendants do
not count (a parent holds its children, a child may use its parent). A
circle is a set of two or more modules each reachable from every other
(Tarjan's strongly connected components). Each is printed as
`CRATE: a -> b -> a` with the lines that make its edges, and the exit
status is 1.

  python3 tools/check_circles.py               the workspace's crates
  python3 tools/check_circles.py SRC_DIR...    these source folders
  python3 tools/check_circles.py --self-test   the resolution and the search on a made-up tree

Python 3 standard library only.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile

# Every source folder of the workspace whose modules must not form circles.
CRATES = (
    "crates/keeptime/src",
    "crates/keeptime-cli/src",
    "crates/keeptime-c/src",
    "python/src",
)

PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
TEST_CFG = re.compile(r"^\s*#\[cfg\(test\)\]")


def module_of(rel: str) -> tuple[str, ...]:
    """`a/b.rs` and `a/b/mod.rs` -> ("a", "b"); `lib.rs` -> ()."""
    parts = rel[: -len(".rs")].split("/")
    if parts[-1] in ("lib", "main", "mod"):
        parts = parts[:-1]
    return tuple(parts)


def code_lines(text: str) -> list[tuple[int, str]]:
    """The file's numbered lines up to its first `#[cfg(test)]`, comments dropped."""
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        if TEST_CFG.match(line):
            break
        code = line.split("//", 1)[0]
        if code.strip():
            out.append((no, code))
    return out


def edges(src: str) -> dict[tuple[str, ...], dict[tuple[str, ...], tuple[str, int]]]:
    """Module -> the modules it imports, each with one file and line that does."""
    files: dict[tuple[str, ...], tuple[str, str]] = {}
    for dirpath, _, names in os.walk(src):
        for name in sorted(names):
            if name.endswith(".rs"):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, src).replace(os.sep, "/")
                with open(path, encoding="utf-8") as f:
                    files[module_of(rel)] = (path, f.read())
    graph: dict[tuple[str, ...], dict[tuple[str, ...], tuple[str, int]]] = {m: {} for m in files}
    for mod, (path, text) in files.items():
        for no, line in code_lines(text):
            for m in PATH.finditer(line):
                segs = tuple(m.group(2).split("::")[1:])
                if m.group(1) == "crate":
                    full = segs
                else:
                    up = 1
                    while segs and segs[0] == "super":
                        up, segs = up + 1, segs[1:]
                    full = mod[: max(0, len(mod) - up)] + segs
                for k in range(len(full), 0, -1):
                    target = full[:k]
                    if target in files:
                        related = target[: len(mod)] == mod or mod[: len(target)] == target
                        if not related and target not in graph[mod]:
                            graph[mod][target] = (path, no)
                        break
    return graph


def circles(graph: dict) -> list[list]:
    """Strongly connected components of two or more nodes (Tarjan), sorted."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    found: list[list] = []
    counter = [0]

    def visit(v) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(max(1000, 10 * len(graph)))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def name(mod: tuple[str, ...]) -> str:
    return "::".join(mod) or "crate"


def check(srcs: list[str]) -> int:
    bad = 0
    modules = 0
    for src in srcs:
        graph = edges(src)
        modules += len(graph)
        for comp in circles(graph):
            bad += 1
            print(f"{src}: circle " + " -> ".join(name(m) for m in comp + comp[:1]))
            for a in comp:
                for b in comp:
                    if b in graph[a]:
                        path, no = graph[a][b]
                        print(f"  {path}:{no}: {name(a)} imports {name(b)}")
    if bad:
        print(f"{bad} import circle(s)")
        return 1
    print(f"check_circles: {len(srcs)} crates, {modules} modules, no import circle")
    return 0


def self_test() -> None:
    assert module_of("lib.rs") == ()
    assert module_of("a/mod.rs") == ("a",)
    assert module_of("a/b.rs") == ("a", "b")
    assert [n for n, _ in code_lines("x\n// c\ny // z\n#[cfg(test)]\nmod tests;\n")] == [1, 3]
    with tempfile.TemporaryDirectory() as d:
        def write(rel: str, text: str) -> None:
            path = os.path.join(d, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)

        write("lib.rs", "mod a;\nmod b;\nuse crate::a::x::Thing;\n")
        write("a/mod.rs", "mod x;\nuse super::b::f; // the parent's sibling\n")
        write("a/x.rs", "use super::super::b;\nuse super::y_missing;\n")
        write("b.rs", "/// [`crate::a`] in a doc comment is no import\nfn f() {}\n")
        g = edges(d)
        assert g[()] == {}, g[()]  # lib holds a: its child
        assert set(g[("a",)]) == {("b",)}, g[("a",)]
        assert set(g[("a", "x")]) == {("b",)}, g[("a", "x")]
        assert g[("b",)] == {}, g[("b",)]
        assert circles(g) == []
        write("b.rs", "use crate::a::x::Thing;\n#[cfg(test)]\nmod tests { use crate::a; }\n")
        g = edges(d)
        assert set(g[("b",)]) == {("a", "x")}, g[("b",)]
        # a -> b too, but nothing leads back to a: only a::x and b are a circle.
        assert circles(g) == [[("a", "x"), ("b",)]], circles(g)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert check([d]) == 1
        assert "circle a::x -> b -> a::x" in out.getvalue(), out.getvalue()
        assert "b.rs:1: b imports a::x" in out.getvalue(), out.getvalue()
    print("check_circles self-test: ok")


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    srcs = argv[1:] or [os.path.join(root, c) for c in CRATES]
    return check(srcs)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
