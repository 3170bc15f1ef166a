"""Every public name has a docstring, and every example in them runs."""

import doctest
import inspect

import pytest

import keeptime
from keeptime import _bench, _bench_text, _clocks, _crowd, _format, _stats

PUBLIC = [getattr(keeptime, name) for name in keeptime.__all__ if name != "__version__"]


def _members(obj):
    yield obj.__qualname__ if hasattr(obj, "__qualname__") else repr(obj), obj
    if inspect.isclass(obj):
        for name, member in vars(obj).items():
            if not name.startswith("_") and name not in ("from_dict",):
                yield f"{obj.__name__}.{name}", member


@pytest.mark.parametrize("obj", PUBLIC, ids=[getattr(o, "__name__", repr(o)) for o in PUBLIC])
def test_public_names_have_docstrings(obj):
    for name, member in _members(obj):
        doc = getattr(member, "__doc__", None)
        if inspect.isclass(obj) and obj.__module__ == "keeptime._clocks" and name != obj.__qualname__:
            continue  # dataclass fields: documented by the attribute docstrings in the source
        assert doc and doc.strip(), f"{name} has no docstring"


def test_version():
    assert isinstance(keeptime.__version__, str) and keeptime.__version__.count(".") >= 2


def _doctests():
    finder = doctest.DocTestFinder(exclude_empty=True)
    objs = [keeptime, _clocks, _format, _stats, _bench, _bench_text, _crowd] + PUBLIC
    seen = set()
    for obj in objs:
        targets = [obj] + ([m for _, m in _members(obj)] if inspect.isclass(obj) else [])
        for target in targets:
            doc = getattr(target, "__doc__", None)
            if not doc or ">>>" not in doc:
                if not inspect.ismodule(target):
                    continue
            name = getattr(target, "__qualname__", getattr(target, "__name__", repr(target)))
            globs = dict(vars(target)) if inspect.ismodule(target) else {}
            globs["keeptime"] = keeptime
            for test in finder.find(target, name, globs=globs):
                if test.examples and test.docstring not in seen:
                    seen.add(test.docstring)
                    yield test


DOCTESTS = list(_doctests())


@pytest.mark.parametrize("test", DOCTESTS, ids=[t.name for t in DOCTESTS])
def test_docstring_examples_run(test):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{test.name}: see the doctest output above"


def test_examples_found():
    names = {t.name.split(".")[-1] for t in DOCTESTS}
    assert {"sleep", "sleep_ns", "sleep_until_ns", "Sleeper", "Ticker", "Schedule", "clocks"} <= names
