"""Every module of the standard library instruments and compiles, in every mode.

Programs nobody here wrote: CPython's own library (its tests excluded), ~300,000 lines.
Instrumented code that CPython refuses to compile (an invalid source range, a misplaced
statement) would make pathprof fall back to running a module unmeasured.
"""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from pathprof.python.instrument import instrument_source

ROOT = Path(sysconfig.get_paths()["stdlib"])
SKIP_PARTS = {"site-packages", "test", "tests", "idle_test"}


def _sources() -> list[Path]:
    return [path for path in sorted(ROOT.rglob("*.py"))
            if not SKIP_PARTS.intersection(path.relative_to(ROOT).parts)]


def _python_compiles(source: bytes, path: Path) -> bool:
    try:
        compile(source, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError):  # lib2to3 test data, bad encodings on purpose
        return False
    return True


#: Every module of the library; one Python cannot compile as written is left out where
#: instrumenting it fails (on 3.11 to 3.14 every one compiles). Compiling them all
#: beforehand, at collection in every xdist worker, cost 4 s a worker.
SOURCES = _sources()


#: (mode, metric, every how many modules, instrument_source options), by name
MODES = {"path": ("path", None, 1, {}), "edge": ("edge", None, 4, {}),
         "time": ("path", "time", 4, {}), "events": ("events", None, 4, {}),
         "switches": ("path", None, 2, {"switches": True}),
         "events-totals": ("events", None, 8, {"totals_only": True})}
#: Each mode's modules in this many shares: the first runs on every Python, the
#: others on the oldest and newest (``outer_pythons``, see tests/conftest.py).
SHARES = 4


@pytest.mark.parametrize(("name", "share"), [
    pytest.param(name, share, id=f"{name}-{share + 1}of{SHARES}",
                 marks=[pytest.mark.outer_pythons] if share else [])
    for name in MODES for share in range(SHARES)])
def test_every_stdlib_module_instruments_and_compiles(name: str, share: int) -> None:
    """``switches``: functions carry their original body too (coverage that stops
    paying), so each such function's code is compiled twice over."""
    mode, metric, step, options = MODES[name]
    assert len(SOURCES) > 500
    failures = []
    for path in SOURCES[::step][share::SHARES]:
        source = path.read_bytes()
        try:
            instrument_source(source, str(path), mode=mode,
                              metric=metric, **options).compile(str(path))
        except Exception as err:  # collect all, report all
            if _python_compiles(source, path):
                failures.append(f"{path.relative_to(ROOT)}: {type(err).__name__}: {err}")
    assert failures == []
