"""Peak memory of a measured run grows with the code measured, not with how much of
it runs (issue 23 §1): ten times the exceptions, the same memory."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ..test_run import pathprof_cli

PROGRAM = """
    import resource, sys

    class Lazy:
        def __getattr__(self, name):
            raise AttributeError(name)     # leaves a measured frame, caught in C

    def parse(text):
        try:
            return int(text)
        except ValueError:                  # caught in a measured frame
            return -1

    n = int(sys.argv[1])
    lazy = Lazy()
    found = sum(hasattr(lazy, "missing") for _ in range(n))
    total = sum(parse("x") for _ in range(n // 10))
    print(found, total, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


@pytest.mark.parametrize("metric", [None, "time"])
def test_peak_memory_does_not_grow_with_the_exceptions_raised(tmp_path: Path,
                                                              metric: str | None) -> None:
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    extra = ["--metric", metric] if metric else []
    peaks = {}
    for n in (100_000, 1_000_000):
        result = pathprof_cli(tmp_path, "run", *extra, "prog.py", str(n))
        found, total, peak_kib = result.stdout.split()
        assert (int(found), int(total)) == (0, -(n // 10))
        peaks[n] = int(peak_kib)
    # A list of notes, one per exception, took ~100 bytes each: 90 MB more here.
    assert peaks[1_000_000] - peaks[100_000] < 8 * 1024, peaks
