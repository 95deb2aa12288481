"""Shared test configuration: hypothesis profiles, and which tests run on which Python."""

from __future__ import annotations

import compileall
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# "ci" (the default) runs hundreds of graphs per property; "dev" is quicker.
# A property that names no count of its own is one of the graph algorithms of
# tests/graph or of the estimators of tests/test_subpath_sampler.py:
# `make test` runs those on two Pythons (``outer_pythons`` below), and "ci" gives
# them 150 examples on each, drawn afresh: the 300 of one run. "ci-full" gives them
# 300 on each, as the counts tests/graph names (tests.graph.strategies.examples).
settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci-full", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# "ci-between": what `make test` runs on the Pythons between the oldest and the newest;
# the properties that instrument and run random programs draw a third of their count
# there (tests.loading.program_examples), the others as under "ci".
settings.register_profile(
    "ci-between", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The corpus holds programs for the profiler to run, not tests (some use syntax
# newer than the running Python: tests.loading.corpus_programs() picks them).
collect_ignore = ["corpus"]


#: Test modules of the layers no interpreter version changes: graph algorithms on
#: abstract graphs, the data file and its faults, reports and exports read from
#: data files, the orchestration of parallel copies, the pytest plugin's options and
#: reports, the basis and the estimators of sampled subpaths (with ``pathprof hot``
#: end to end: the code OSP generates is checked on every Python by
#: tests/test_subpaths.py, stream for stream). ``make test`` runs them (marked
#: ``outer_pythons``) on the oldest and the newest Python, not on those between;
#: what instruments and runs programs runs on every Python.
OUTER_PYTHONS_MODULES = frozenset({
    "test_basis.py", "test_cli.py", "test_concurrent_writers.py", "test_config.py",
    "test_datafiles.py", "test_diff.py", "test_exports.py", "test_hot.py",
    "test_html.py", "test_parallel.py", "test_parallel_faults.py", "test_progress.py",
    "test_pytest_parallel.py", "test_pytest_plugin.py",
    "test_report_width.py", "test_store.py", "test_subpath_sampler.py",
    "test_subpaths_html.py",
    "contract/test_data_survives.py", "contract/test_reports_survive.py",
})
_TESTS = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    """One cache of instrumented code per session, in a temporary directory named by
    ``PATHPROF_CACHE_DIR``, which the xdist workers and every ``pathprof`` the tests
    start inherit: nothing is cached in the repository or in the tests' projects,
    and no session reads what an earlier one wrote. (Tests of the cache's places
    take the variable out of their environment.) A variable already set is kept."""
    if os.environ.get("PATHPROF_CACHE_DIR") or hasattr(config, "workerinput"):
        return
    directory = tempfile.mkdtemp(prefix="pathprof-cache-")
    os.environ["PATHPROF_CACHE_DIR"] = directory

    def remove() -> None:
        os.environ.pop("PATHPROF_CACHE_DIR", None)
        shutil.rmtree(directory, ignore_errors=True)

    config.add_cleanup(remove)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    """pathprof's own bytecode, written once, before the workers start: the tests start
    over 800 Python processes that import pathprof (``pathprof run``, pytest with
    the plugin), and under ``PYTHONDONTWRITEBYTECODE`` (set here and in CI) each
    compiled its 106 modules from source, 0.2 s of CPU a process, two fifths of a
    small program's whole ``pathprof run``. Python writes the same files wherever the
    variable is not set (some tests unset it, and wrote them midway)."""
    if hasattr(session.config, "workerinput"):
        return
    import pathprof

    compileall.compile_dir(Path(pathprof.__file__).parent, quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        try:
            module = item.path.relative_to(_TESTS).as_posix()
        except ValueError:  # the package's doctests
            continue
        if module.startswith("graph/") or module in OUTER_PYTHONS_MODULES:
            item.add_marker(pytest.mark.outer_pythons)
