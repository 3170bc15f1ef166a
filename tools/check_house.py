#!/usr/bin/env python3
"""The house check: no history and no dangling references in the repository.

Code, make files, specs and READMEs say what things do, not how or when they
were made. This script reads every file git tracks (binary and data files
aside) and reports, as FILE:LINE: KIND: TEXT, every line that

  * cites a tracker number (the word for a filed work item followed by a
    number: ISSUE below),
  * names one of the project's origin documents (SEED below),
  * cites a file the repository does not have: the design contract and the
    oracle script kept outside it, a spec/ or docs/ Markdown path that does
    not exist, a relative Markdown link whose target does not exist,
  * holds an absolute path of a particular machine (ABS_PATH anywhere;
    TMP_PATH in documentation),
  * gives a commit hash in prose (a 7-40 character hex word with a digit,
    next to the word "commit"),
  * talks about the session the work was done in (SESSION below).

Exit status 1 when anything is found, 0 otherwise.

  python3 tools/check_house.py              check the repository
  python3 tools/check_house.py FILE...      check these files only
  python3 tools/check_house.py --self-test  check the patterns themselves, on the
                                            cases in tools/check_house_cases.json

Python 3 standard library only.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Callable, Iterable, NamedTuple

# Files that must mention what the check looks for. Every entry says why;
# nothing is skipped silently.
EXCEPTIONS: dict[str, str] = {}

# Data, not prose: spec vectors, lock files, recorded traces, pictures.
DATA_SUFFIXES = (
    ".lock",
    ".gz",
    ".png",
    ".jpg",
    ".svg",
    ".ico",
    ".jar",
    ".bin",
)
# The self-test's cases (next to this script): data, like the names below.
CASES = "check_house_cases.json"
DATA_NAMES = {"package-lock.json", "go.sum", "Cargo.lock", CASES}
DATA_DIRS = ("spec/vectors/",)

DOC_SUFFIXES = (".md", ".txt", ".rst")


class Hit(NamedTuple):
    path: str
    line: int
    kind: str
    text: str


ISSUE = re.compile(r"\bissues?\s*#?\s*\d+", re.IGNORECASE)
SEED = re.compile(r"\bseeds?\s+\d{3}\b|\bseeds/", re.IGNORECASE)
OUTSIDE_FILE = re.compile(r"\bDESIGN\.md\b|\boracle\.py\b")
SESSION = re.compile(r"\b(?:this|that|the first|the previous|an earlier|the last) session\b", re.IGNORECASE)
# A machine's own top-level directories: not preceded by a word, a dot, a
# slash or a tilde, so relative paths and URLs' paths do not count (the
# self-test below pins both sides).
ABS_PATH = re.compile(r"(?<![\w./~:-])/(?:work|home|root)/")
TMP_PATH = re.compile(r"(?<![\w./~:-])/tmp/")
HEX_WORD = r"(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}"
COMMIT = re.compile(
    rf"\bcommit(?:s|ted)?\b\W+(?:\w+\W+)?{HEX_WORD}\b|\b{HEX_WORD}\b\W+(?:\w+\W+)?commit\b",
    re.IGNORECASE,
)
# A spec/ or docs/ Markdown path, with whatever directories lead to it.
SPEC_DOC_PATH = re.compile(r"(?<![\w-])((?:\.\.?/|[\w.-]+/)*(?:spec|docs)/[\w./-]*?[\w-]+\.md)\b")
# A Markdown link's target: [text](target) or [text](target#anchor).
MD_LINK = re.compile(r"\]\(([^)\s#]+)(?:#([^)\s]*))?\)")


def exists_from(root: str, path: str, target: str) -> bool:
    """Whether target names a file or directory, read from the repository
    root or from the directory of the file that cites it."""
    here = os.path.dirname(path)
    for base in (here, ""):
        candidate = os.path.normpath(os.path.join(root, base, target))
        if os.path.commonpath([os.path.abspath(root), os.path.abspath(candidate)]) != os.path.abspath(root):
            continue
        if os.path.exists(candidate):
            return True
    return False


def check_line(
    path: str,
    lineno: int,
    line: str,
    exists: Callable[[str, str], bool],
    anchors: Callable[[str, str], set[str] | None] | None = None,
) -> list[Hit]:
    """Every finding on one line of the file at path (repository-relative)."""
    hits: list[Hit] = []
    text = line.strip()

    def add(kind: str) -> None:
        hits.append(Hit(path, lineno, kind, text))

    if ISSUE.search(line):
        add("issue number")
    if SEED.search(line):
        add("seed document")
    if OUTSIDE_FILE.search(line):
        add("file outside the repository")
    if SESSION.search(line):
        add("session narrative")
    if ABS_PATH.search(line):
        add("absolute path")
    if path.endswith(DOC_SUFFIXES) and TMP_PATH.search(line):
        add("absolute path")
    if COMMIT.search(line):
        add("commit hash")
    missing: set[str] = set()
    for m in SPEC_DOC_PATH.finditer(line):
        target = m.group(1)
        if not exists(path, target):
            missing.add(target)
            add(f"no such file: {target}")
    if path.endswith(".md"):
        for m in MD_LINK.finditer(line):
            target, anchor = m.group(1), m.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # a URL
            if target in missing:
                continue  # reported above
            if not exists(path, target):
                add(f"broken link: {target}")
            elif anchor and anchors is not None and target.endswith(".md"):
                found = anchors(path, target)
                if found is not None and anchor not in found:
                    add(f"no such heading: {target}#{anchor}")
    return hits


def slug(heading: str) -> str:
    """A Markdown heading's anchor, as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings_of(content: str) -> set[str]:
    """The anchors of a Markdown file's headings (fenced code skipped)."""
    found: set[str] = set()
    fenced = False
    for line in content.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            name, n = base, 1
            while name in found:
                name, n = f"{base}-{n}", n + 1
            found.add(name)
    return found


def is_data(path: str) -> bool:
    name = os.path.basename(path)
    return (
        name in DATA_NAMES
        or path.endswith(DATA_SUFFIXES)
        or any(path.startswith(d) for d in DATA_DIRS)
    )


def check_file(root: str, path: str) -> list[Hit]:
    try:
        with open(os.path.join(root, path), "rb") as f:
            raw = f.read()
    except (FileNotFoundError, IsADirectoryError):
        return []  # deleted in the work tree, or a submodule
    if b"\0" in raw:
        return []  # binary
    try:
        content = raw.decode("utf-8")
    except UnicodeDecodeError:
        return []  # not text
    hits: list[Hit] = []
    exists = lambda p, t: exists_from(root, p, t)  # noqa: E731
    anchors = lambda p, t: anchors_from(root, p, t)  # noqa: E731
    for n, line in enumerate(content.splitlines(), start=1):
        hits.extend(check_line(path, n, line, exists, anchors))
    return hits


def anchors_from(root: str, path: str, target: str) -> set[str] | None:
    """The heading anchors of the Markdown file a link names (None if it
    cannot be read)."""
    for base in (os.path.dirname(path), ""):
        candidate = os.path.join(root, base, target)
        if os.path.isfile(candidate):
            with open(candidate, encoding="utf-8", errors="replace") as f:
                return headings_of(f.read())
    return None


def tracked_files(root: str) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True
    ).stdout
    return [p for p in out.decode("utf-8").split("\0") if p]


def check(root: str, paths: Iterable[str]) -> list[Hit]:
    hits: list[Hit] = []
    for path in paths:
        if path in EXCEPTIONS or is_data(path):
            continue
        hits.extend(check_file(root, path))
    return hits


def self_test() -> None:
    """The patterns on strings: what must be found and what must not."""
    have = {"spec/sleep.md", "docs/report.md", "docs", "python/README.md"}

    def exists(path: str, target: str) -> bool:
        norm = os.path.normpath(os.path.join(os.path.dirname(path), target))
        return target in have or norm in have

    def anchors(path: str, target: str) -> set[str] | None:
        return headings_of("# How it waits\n## Crowds (host kind C)\n```\n# not a heading\n```\n## Crowds (host kind C)\n")

    def kinds(line: str, path: str = "README.md") -> list[str]:
        return [h.kind for h in check_line(path, 1, line, exists, anchors)]

    # (file, line, the kinds expected, in check order), kept as data beside
    # this script: the lines are the very things the check reports.
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), CASES), encoding="utf-8") as f:
        cases = [(c["file"], c["line"], c["expect"]) for c in json.load(f)["cases"]]
    failed = 0
    for path, line, want in cases:
        got = kinds(line, path)
        if got != want:
            failed += 1
            print(f"self-test: {path}: {line!r}: expected {want}, got {got}")
    # Exceptions must name real files: a stale entry would hide nothing but
    # is still a claim about the tree.
    for path in EXCEPTIONS:
        if not os.path.exists(os.path.join(repo_root(), path)):
            failed += 1
            print(f"self-test: exception for a missing file: {path}")
    if failed:
        print(f"self-test: {failed} of {len(cases)} cases failed")
        sys.exit(1)
    print(f"check_house self-test: {len(cases)} cases passed")


def repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv: list[str]) -> int:
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    root = repo_root()
    paths = argv[1:] or tracked_files(root)
    hits = check(root, paths)
    for h in hits:
        print(f"{h.path}:{h.line}: {h.kind}: {h.text}")
    if hits:
        files = len({h.path for h in hits})
        print(f"check_house: {len(hits)} finding(s) in {files} file(s)")
        return 1
    print(f"check_house: {len(paths)} files, nothing found")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
