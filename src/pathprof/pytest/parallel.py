"""``pytest --pathprof --pathprof-parallel K``: the path coverage of a test suite from K
copies of the session, each measuring part of the code (P3, :mod:`pathprof.parallel`).

The pytest process that is given ``--pathprof-parallel`` runs no tests itself: it
plans which copy profiles which function, starts K copies of the same pytest
command (same interpreter flags, arguments, working directory, environment and
``PYTHONHASHSEED``), shows copy 0's output as the session's, adds the copies'
profiles into the data file, reports path coverage from it as ``--pathprof`` does,
and ends with copy 0's exit status. In each copy the plugin measures as usual (test
contexts and pytest-xdist included) under the copy's plan and saves, without
reporting.

So that the copies do not trample each other's files, each has a temporary
directory of its own (``TMPDIR``, hence ``tmp_path``), and copies other than 0
read a snapshot of pytest's cache and write it apart, and get a ``--basetemp`` and
``--junitxml`` of their own when the command line names one. Other files a suite
writes to fixed places (pytest-cov's data file, a report plugin's output, files in
the project) are written by every copy: those a test reads back may make the copies
disagree, which the run then reports.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathprof.parallel.run import ParallelResult

__all__ = ["ParallelSession"]

#: options that make pytest show something instead of running a session
_INFORMATIONAL = ("help", "version", "showfixtures", "show_fixtures_per_test", "markers",
                  "collectonly")


class ParallelSession:
    """Runs the copies in place of the session (``pytest_cmdline_main``) and reports
    the path coverage of their merged profile."""

    def __init__(self, options: argparse.Namespace) -> None:
        from pathprof import api
        from pathprof.pytest.session import CoverageReports, session_settings, source_in_effect

        config, sources, data_file, reports, fail_under = session_settings(options)
        self.copies: int = options.pathprof_parallel
        self.executor: str = options.pathprof_executor or "local"
        self.scheduler: str | None = options.pathprof_scheduler
        self.selection = api.selection(sources, config.include, config.omit, [os.getcwd()])
        self.metric = config.metric
        self.append = bool(options.pathprof_append)
        self.results = CoverageReports(data_file, reports, fail_under,
                                       source_in_effect(options, config), sources,
                                       config)

    def pytest_cmdline_main(self, config: pytest.Config) -> int | None:
        if any(getattr(config.option, name, False) for name in _INFORMATIONAL):
            return None  # --help, --collect-only ...: pytest as usual, nothing measured
        from pathprof import api
        from pathprof.exceptions import PathprofError

        files = [path for _name, path in self.selection.files()]
        with tempfile.TemporaryDirectory(prefix="pathprof-pytest-") as aside:
            try:
                result = api.run_parallel_copies(copy_arguments(config, aside), files,
                                      copies=self.copies, data_file=self.results.data_file,
                                      executor=self.executor, scheduler=self.scheduler,
                                      partition=self.metric is None, kind="pytest",
                                      append=self.append)
            except PathprofError as err:
                raise pytest.UsageError(f"pathprof: {err}") from err
        self.results.produce()
        self._show(config, result)
        status = result.returncode
        status = 128 - status if status < 0 else status
        if result.signal is not None and not (result.interrupted and result.returncode >= 0):
            # Signalled, and copy 0 did not end by itself: the copies were stopped,
            # each saving what it measured, and their merge is reported; then the
            # session ends as plain pytest's would: SIGTERM kills it, SIGINT is
            # pytest's "interrupted".
            if result.signal == getattr(signal, "SIGTERM", None):
                api.die_of(result.signal)
            status = int(pytest.ExitCode.INTERRUPTED)
        return self.results.exit_status(status)

    def _show(self, config: pytest.Config, result: ParallelResult) -> None:
        from _pytest.config import create_terminal_writer

        from pathprof.api import parallel_summary

        writer = create_terminal_writer(config, sys.stdout)
        writer.sep("-", "pathprof: path coverage")
        for line in parallel_summary(result, self.results.data_file):
            writer.line(f"pathprof: {line}", red=not result.exact, bold=not result.exact)
        width: int | None = writer.fullwidth
        if not sys.stdout.isatty() and not os.environ.get("COLUMNS"):
            width = None  # a CI log: not fitted to 80 columns (CoverageReports.show)
        self.results.show(writer.line, writer.write, width, writer.hasmarkup)
        writer.flush()


def copy_arguments(config: pytest.Config, aside: str) -> Callable[[int], list[str]]:
    """Each copy's interpreter arguments: the command that started this session,
    with copies other than 0 given a cache, ``--basetemp`` and ``--junitxml`` of
    their own under ``aside``."""
    command = [*_interpreter_flags(), *_pytest_command(), *config.invocation_params.args]
    cache = _cache_dir(config)

    def arguments(index: int) -> list[str]:
        if index == 0:
            return list(command)
        own: list[str] = []
        if cache is not None:
            snapshot = os.path.join(aside, f"cache-{index}")
            if os.path.isdir(cache) and not os.path.exists(snapshot):
                with contextlib.suppress(OSError):
                    shutil.copytree(cache, snapshot)
            own += ["-o", f"cache_dir={snapshot}"]
        if getattr(config.option, "basetemp", None):
            own.append(f"--basetemp={os.path.join(aside, f'basetemp-{index}')}")
        if getattr(config.option, "xmlpath", None):
            own.append(f"--junitxml={os.path.join(aside, f'junit-{index}.xml')}")
        return _before_positional_only(command, own)

    return arguments


def _interpreter_flags() -> list[str]:
    """``-X``, ``-W``, ``-O``... as this interpreter was started with (the helper
    multiprocessing uses to start its children alike)."""
    flags = getattr(subprocess, "_args_from_interpreter_flags", None)
    return list(flags()) if flags is not None else []


def _pytest_command() -> list[str]:
    """How this pytest was started: its console script (``pytest``, ``py.test``),
    whose directory is ``sys.path[0]``, or ``-m pytest`` (whose ``sys.path[0]`` is
    the working directory; also for ``pytest.main()`` called from a program, whose
    plugin objects the copies do not get)."""
    main = sys.modules.get("__main__")
    script = sys.argv[0] if sys.argv else ""
    if (getattr(main, "__spec__", None) is None and os.path.isfile(script)
            and re.fullmatch(r"pytest|py\.test", os.path.basename(script))):
        return [script]
    return ["-m", "pytest"]


def _cache_dir(config: pytest.Config) -> str | None:
    """pytest's cache directory, as its cache provider finds it; None without it."""
    if not config.pluginmanager.has_plugin("cacheprovider"):
        return None
    name = os.path.expandvars(os.path.expanduser(str(config.getini("cache_dir"))))
    return os.path.join(str(config.rootpath), name)


def _before_positional_only(command: list[str], options: list[str]) -> list[str]:
    """``command`` with ``options`` added where they take effect over the user's: at
    the end, or before a ``--`` that ends the options."""
    if "--" in command:
        at = command.index("--")
        return [*command[:at], *options, *command[at:]]
    return [*command, *options]


def start_parallel_session(early_config: pytest.Config, options: argparse.Namespace
                           ) -> ParallelSession:
    """Register the session that runs the copies (the plugin's entry to this module)."""
    session = ParallelSession(options)
    early_config.pluginmanager.register(session, "_pathprof_parallel")
    return session
