"""Shared test configuration: hypothesis profiles, and which tests run on which Python."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# "ci" (the default) runs hundreds of graphs per property; "dev" is quicker.
settings.register_profile(
    "ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The corpus holds programs for the profiler to run, not tests (some use syntax
# newer than the running Python: tests.loading.corpus_programs() picks them).
collect_ignore = ["corpus"]


#: Test modules of the layers no interpreter version changes: graph algorithms on
#: abstract graphs, the data file's faults, reports read from data files, the
#: orchestration of parallel copies. ``make test`` runs them (marked
#: ``outer_pythons``) on the oldest and the newest Python, not on those between;
#: what instruments and runs programs runs on every Python.
OUTER_PYTHONS_MODULES = frozenset({
    "test_cli.py", "test_concurrent_writers.py", "test_config.py", "test_datafiles.py",
    "test_diff.py",
    "test_html.py", "test_parallel.py", "test_parallel_faults.py", "test_pytest_parallel.py",
    "test_report_width.py", "test_subpaths_html.py",
    "contract/test_data_survives.py", "contract/test_reports_survive.py",
})
_TESTS = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            module = item.path.relative_to(_TESTS).as_posix()
        except ValueError:  # the package's doctests
            continue
        if module.startswith("graph/") or module in OUTER_PYTHONS_MODULES:
            item.add_marker(pytest.mark.outer_pythons)
