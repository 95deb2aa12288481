"""The pytest plugin: path coverage of a test suite (``pytest --pathprof``).

Registered through the ``pytest11`` entry point whenever pathprof is installed,
and off unless ``--pathprof`` is given. Measurement starts before pytest loads
the first ``conftest.py`` (as pytest-cov does), so modules the conftests import
are measured too; test modules under the source are measured with pytest's
assertion rewriting composed with pathprof's
(:meth:`PathprofPlugin.compose_assertion_rewriting`).

With pytest-xdist every worker saves its own data file beside the data file
(``D.xdist-<token>-<worker>...``, :mod:`pathprof.data.files`: the token the controller
puts in the environment before workers start); the controller adds its session's
into the data file at the end of the session, before reporting. With
``--pathprof-parallel K`` this process runs K copies of the session instead
(:mod:`pathprof.pytest.parallel`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import uuid
from typing import TYPE_CHECKING

import pytest

from pathprof.formats import COVERAGE_JSON_FILE, HTML_DIRECTORY, exports_help
from pathprof.pytest.session import (
    CoverageReports,
    report_kind,
    session_settings,
    source_in_effect,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Generator, Iterator
    from contextlib import AbstractContextManager
    from typing import ParamSpec

    from pathprof.config import Config

    _P = ParamSpec("_P")

__all__ = ["EventsFixture", "PathprofPlugin", "pathprof_events"]

#: Set by the controlling pytest process; inherited by xdist workers.
TOKEN_VARIABLE = "PATHPROF_PYTEST_TOKEN"
CONTEXTS = ("test",)
#: The key of an xdist worker's output that lists its sources that matched nothing
UNMATCHED = "pathprof_unmatched"
#: When a function stops counting (:data:`pathprof.measure.stopping.WHEN`)
STOP_COUNTING = ("never", "basis", "paths")


def _copies(text: str) -> int:
    try:
        copies = int(text)
    except ValueError:
        copies = 0
    if copies < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: the number of copies, at least 1")
    return copies


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pathprof", "path coverage (pathprof)")
    group.addoption("--pathprof", action="append", nargs="?", const=True, default=None,
                    dest="pathprof_source", metavar="SOURCE",
                    help="measure path coverage of SOURCE, a directory or package "
                    "(repeatable; default: tool.pathprof.source, or the current directory)")
    group.addoption("--no-pathprof", action="store_true", default=False,
                    dest="pathprof_disabled",
                    help="measure nothing, whatever --pathprof options addopts gives")
    group.addoption("--pathprof-report", action="append", default=None, type=report_kind,
                    dest="pathprof_report", metavar="TYPE",
                    help="report to show or write: term (default: a row per file), "
                    "term-missing (a row per function, and the missed paths), either with "
                    f":skip-covered, html[:DIR] (default {HTML_DIRECTORY}), json[:FILE] "
                    f"(default {COVERAGE_JSON_FILE}), {exports_help()}; repeatable; an "
                    "empty value reports nothing")
    group.addoption("--pathprof-append", action="store_true", default=False,
                    dest="pathprof_append",
                    help="add this session's paths to the data file instead of replacing it")
    group.addoption("--pathprof-fail-under", type=float, default=None,
                    dest="pathprof_fail_under", metavar="PERCENT",
                    help="fail the run if total basis path coverage is below PERCENT")
    group.addoption("--pathprof-fail-under-mcdc", type=float, default=None,
                    dest="pathprof_fail_under_mcdc", metavar="PERCENT",
                    help="with --pathprof-conditions: fail the run if total MC/DC (masking) "
                    "is below PERCENT")
    group.addoption("--pathprof-context", choices=CONTEXTS, default=None,
                    dest="pathprof_context",
                    help="record which tests ran each path (test: one context per test)")
    group.addoption("--pathprof-stop-counting", choices=STOP_COUNTING, default=None,
                    dest="pathprof_stop_counting",
                    help="send a function back to its original code, which costs nothing, "
                    "once the paths that ran span its basis (basis, the default) or are all "
                    "of its paths (paths); never: count every run (always so with "
                    "--pathprof-context)")
    group.addoption("--pathprof-conditions", action="store_true", default=None,
                    dest="pathprof_conditions",
                    help="also measure condition coverage and MC/DC: each way every decision "
                    "was evaluated (the report's conditions section)")
    group.addoption("--pathprof-data-file", default=None, dest="pathprof_data_file",
                    metavar="FILE", help="the data file (default: .pathprof)")
    group.addoption("--pathprof-parallel", type=_copies, default=None,
                    dest="pathprof_parallel", metavar="K",
                    help="with --pathprof: run K copies of the session, each measuring part "
                    "of the code, and report the path coverage of their merged profile")
    group.addoption("--pathprof-executor", choices=("local", "dask"), default=None,
                    dest="pathprof_executor",
                    help="with --pathprof-parallel: run the copies as processes here "
                    "(default) or as tasks on a Dask cluster")
    group.addoption("--pathprof-scheduler", default=None, dest="pathprof_scheduler",
                    metavar="ADDRESS",
                    help="with --pathprof-executor dask: the Dask scheduler's address")
    group.addoption("--pathprof-events", action="append", nargs="?", const=True, default=None,
                    dest="pathprof_events", metavar="SOURCE",
                    help="count the events (statements) SOURCE runs, for the pathprof_events "
                    "fixture's deterministic performance assertions (repeatable; not with "
                    "--pathprof)")
    group.addoption("--pathprof-events-kind", choices=("statements", "instructions"),
                    default="statements", dest="pathprof_events_kind",
                    help="with --pathprof-events: what an event is (default: statements)")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser,
                                  args: list[str]) -> None:
    options = early_config.known_args_namespace
    if getattr(options, "pathprof_disabled", False):
        return
    if getattr(options, "pathprof_events", None):
        if getattr(options, "pathprof_source", None):
            raise pytest.UsageError("pathprof: --pathprof and --pathprof-events cannot be "
                                    "used together (one kind of instrumentation per run)")
        _start_event_counting(options)
        return
    parallel = [name for name in ("parallel", "executor", "scheduler")
                if getattr(options, f"pathprof_{name}", None)]
    if not getattr(options, "pathprof_source", None):
        if parallel:
            raise pytest.UsageError(f"pathprof: --pathprof-{parallel[0]} needs --pathprof")
        return
    from pathprof import api
    from pathprof.exceptions import PathprofError

    if parallel and not options.pathprof_parallel:
        raise pytest.UsageError(f"pathprof: --pathprof-{parallel[0]} goes with "
                                "--pathprof-parallel K")
    if options.pathprof_executor == "dask" and not options.pathprof_scheduler:
        raise pytest.UsageError("pathprof: --pathprof-executor dask needs "
                                "--pathprof-scheduler ADDRESS")
    try:
        if options.pathprof_parallel and not os.environ.get(api.copy_environment()):
            from pathprof.pytest.parallel import start_parallel_session

            start_parallel_session(early_config, options)  # this process runs no tests
            return
        plugin = PathprofPlugin(options)
        plugin.compose_assertion_rewriting(early_config)
        plugin.start()
    except (PathprofError, argparse.ArgumentTypeError) as err:
        raise pytest.UsageError(f"pathprof: {err}") from err
    early_config.pluginmanager.register(plugin, "_pathprof")


def _start_event_counting(options: argparse.Namespace) -> None:
    from pathprof.config import configured_cache_dir, read_config
    from pathprof.events import EventCounter

    config = read_config()
    sources = [s for s in options.pathprof_events if s is not True] or config.source
    # (the fixture and budgets need totals only)
    EventCounter(source=sources, include=config.include, omit=config.omit,
                 default_dirs=[os.getcwd()], kind=options.pathprof_events_kind,
                 per_function=False, cache_dir=configured_cache_dir(config)).start()


class EventsFixture:
    """What the ``pathprof_events`` fixture gives a test: exact, deterministic counts
    of the events the code under test runs (``pytest --pathprof-events=SOURCE``)."""

    def read(self) -> int:
        """Events this thread has run so far."""
        from pathprof.api import thread_events

        return thread_events(sys._getframe(1))

    def assert_at_most(self, limit: int, fn: Callable[_P, object], *args: _P.args,
                       **kwargs: _P.kwargs) -> int:
        """Call ``fn`` and fail the test if it ran more than ``limit`` events; returns
        the count."""
        from pathprof.events import assert_events_at_most

        return assert_events_at_most(fn, limit, *args, **kwargs)

    @contextlib.contextmanager
    def at_most(self, limit: int) -> Iterator[argparse.Namespace]:
        """``with pathprof_events.at_most(n):`` fails the test if the block ran more
        than ``n`` events. Yields an object whose ``count`` is set at the end."""
        from pathprof.api import thread_events

        result = argparse.Namespace(count=None)
        before = thread_events(sys._getframe(2))
        yield result
        result.count = thread_events(sys._getframe(2)) - before
        if result.count > limit:
            raise AssertionError(f"the block ran {result.count:,} events, more than the "
                                 f"{limit:,} allowed")

    def budget(self, limit: int) -> AbstractContextManager[None]:
        """Raise :class:`~pathprof.events.EventBudgetExceeded` once the block has run
        more than ``limit`` events: a deterministic timeout."""
        from pathprof.events import budget

        return budget(limit)


@pytest.fixture
def pathprof_events(request: pytest.FixtureRequest) -> EventsFixture:
    """Exact event counts for deterministic performance tests; needs
    ``pytest --pathprof-events=SOURCE`` (the test fails with a usage hint otherwise)."""
    if not request.config.getoption("pathprof_events", None):
        pytest.fail("the pathprof_events fixture needs pytest --pathprof-events=SOURCE "
                    "(SOURCE: the code whose events to count)", pytrace=False)
    return EventsFixture()


class PathprofPlugin:
    """Measures the session and reports path coverage at its end. In a copy of a
    parallel session (``--pathprof-parallel``) it measures the copy's part and saves
    it where the controlling process reads it, and reports nothing."""

    def __init__(self, options: argparse.Namespace) -> None:
        from pathprof import api
        from pathprof.config import Threshold, configured_cache_dir

        config, sources, self.data_file, reports, fail_under = session_settings(options)
        try:
            copy = api.copy_plan()
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from err
        self.in_copy = copy is not None
        if copy is not None and copy.data_file:
            self.data_file = copy.data_file
        self.results = CoverageReports(self.data_file, reports, fail_under,
                                       source_in_effect(options, config), sources,
                                       config)
        #: each xdist worker's sources that matched nothing (:meth:`pytest_testnodedown`)
        self.unmatched_in_workers: list[list[str]] = []
        self.context = options.pathprof_context or config.context
        #: condition coverage and MC/DC measured too
        self.conditions = bool(options.pathprof_conditions or config.conditions)
        self.results.fail_under_mcdc = Threshold.choose(
            "--pathprof-fail-under-mcdc", options.pathprof_fail_under_mcdc, config,
            "fail_under_mcdc")
        self.worker = os.environ.get("PYTEST_XDIST_WORKER")
        #: said under the coverage table (pytest captures standard error meanwhile)
        self.notes: list[str] = []
        if config.mode == "edge":
            self.notes.append('mode = "edge" in the configuration is for pathprof run: '
                              "pytest --pathprof measures paths, which path coverage needs")
        if self.worker is None:
            self.token = uuid.uuid4().hex[:12]
            os.environ[TOKEN_VARIABLE] = self.token
        else:
            self.token = os.environ.get(TOKEN_VARIABLE, "unknown")
        self.profiler = api.profiler(data_file=self._own_data_file(), source=sources,
                                     include=config.include, omit=config.omit,
                                     default_dirs=[os.getcwd()], mode="path",
                                     metric=config.metric, argv=sys.argv,
                                     append=(bool(options.pathprof_append)
                                             and self.worker is None and not self.in_copy),
                                     stop_counting=self._stop_counting(options, config),
                                     conditions=self.conditions,
                                     cache_dir=configured_cache_dir(config),
                                     # said in the summary (a copy reports nothing)
                                     warn_unmatched=self.in_copy)

    def compose_assertion_rewriting(self, early_config: pytest.Config) -> None:
        """Test modules (and conftests) that pytest's assertion rewriting imports are
        measured too, with their asserts rewritten as pytest rewrites them, when the
        source takes them in (as coverage.py measures them: issue 50 counted them never
        imported, at 0%): pathprof's loader imports them, instruments their source,
        then has pytest rewrite the instrumented tree's ``assert`` statements. Nothing
        to do with ``--assert=plain`` (they are ordinary imports then)."""
        from pathlib import Path

        from pathprof import api

        try:
            from _pytest.assertion import rewrite
        except ImportError:  # (a pytest without it: its test modules stay unmeasured)
            return
        state = early_config.stash.get(rewrite.assertstate_key, None)
        hook = getattr(state, "hook", None)
        if hook is None:
            return
        passes = bool(early_config.getini("enable_assertion_pass_hook"))

        def loaded(name: str, path: str) -> None:
            hook._rewritten_names[name] = Path(path)  # (as its own exec_module notes)

        api.compose_rewriting(
            self.profiler, tag=f"pytest-{pytest.__version__}-{int(passes)}",
            owns=lambda loader: loader is hook,
            rewrite=lambda tree, source, path: rewrite.rewrite_asserts(
                tree, source, path, early_config),
            loaded=loaded,
            fallback=lambda name, path: rewrite._rewrite_test(Path(path), early_config)[1])

    def _stop_counting(self, options: argparse.Namespace, config: Config) -> str:
        """When functions stop counting: coverage needs to know whether each path
        ran, so by default once their basis is full; contexts and the time metric
        need every run, so never with them."""
        asked = options.pathprof_stop_counting or config.stop_counting
        if asked not in (None, *STOP_COUNTING):
            raise argparse.ArgumentTypeError(
                f"stop_counting must be one of {', '.join(STOP_COUNTING)}, not {asked!r}")
        needs_every_run = self.context is not None or config.metric is not None
        if asked not in (None, "never") and needs_every_run:
            why = "--pathprof-context" if self.context is not None else "metric = \"time\""
            raise argparse.ArgumentTypeError(
                f"{why} needs every run of every path: stop counting {asked!r} cannot go "
                "with it")
        return asked or ("never" if needs_every_run else "basis")

    def _own_data_file(self) -> str:
        if self.worker is None:
            return self.data_file
        from pathprof import api

        return api.xdist_data_file(self.data_file, self.token, self.worker)

    def start(self) -> None:
        from pathprof import api

        self.profiler.start()
        #: a SIGTERM (a CI job's timeout, a container stopping) saves what the tests
        #: ran so far, then ends pytest as it ends it without pathprof, as pytest-cov
        #: saves on SIGTERM with coverage.py's ``sigterm`` option (where SIGTERM is at
        #: its default); at the end of the session signals wait for the save
        self._saved = False
        self._config: pytest.Config | None = None
        self._end = api.run_end(self._terminated)

    def _terminated(self) -> None:
        """SIGTERM during the session: save what was measured (no report), and say so."""
        if self._saved:
            return
        self._saved = True
        self.profiler.stop()
        saved = self.profiler.save()
        if self.worker is None and not self.in_copy:
            capture = (self._config.pluginmanager.getplugin("capturemanager")
                       if self._config is not None else None)
            if capture is not None:  # (a test runs: what it writes is captured)
                with contextlib.suppress(Exception):
                    capture.suspend_global_capture(in_=False)
            sys.stderr.write(f"pathprof: terminated by SIGTERM: the paths the tests ran "
                             f"so far were saved to {os.path.relpath(saved)} (pathprof "
                             "coverage reports them)\n")

    def pytest_configure(self, config: pytest.Config) -> None:
        self._config = config

    # -- during the session ----------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None
                                ) -> Generator[None, object, None]:
        if self.context == "test":
            self.profiler.switch_context(item.nodeid)
        yield
        if self.context == "test":
            self.profiler.switch_context(None)

    # -- at the end ------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        from pathprof import api

        # SIGINT and SIGTERM wait for the save (and the workers' combining), then end
        # the process as they would have ended it then (pytest's own end of session
        # does not catch them); the reports come after
        end = api.run_end()
        end.begin()
        try:
            report = self._keep(session)
        finally:
            end.die()
            end.end()
        if report:
            if not self.results.problems:
                self.results.produce()
            session.exitstatus = self.results.exit_status(session.exitstatus)

    def _keep(self, session: pytest.Session) -> bool:
        """Save the session's data file (with the workers' added); whether this
        process reports it."""
        from pathprof import api
        from pathprof.exceptions import PathprofError

        self._saved = True
        self.profiler.stop()
        self.profiler.save()
        api.forget_decoded()
        if self.worker is not None:
            # for the controller, which imports no test's modules (as pytest-cov hands
            # its data over); xdist sends it once this hook is done
            output = getattr(session.config, "workeroutput", None)
            if output is not None:
                output[UNMATCHED] = self.profiler.unmatched()
            return False
        self.results.unmatched = [entry for entry in self.profiler.unmatched()
                                  if all(entry in w for w in self.unmatched_in_workers)]
        workers = api.xdist_data_files(self.data_file, self.token)
        if workers:
            try:
                api.combine(self.data_file, workers)
            except PathprofError as err:
                self.results.problems.append(str(err))
        return not self.in_copy

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        """An xdist worker is done: keep the sources that matched nothing in it."""
        output = getattr(node, "workeroutput", None) or {}
        if UNMATCHED in output:
            self.unmatched_in_workers.append(list(output[UNMATCHED]))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.worker is not None or self.in_copy:
            return
        if not (self.results.has_output() or self.notes):
            return  # --pathprof-report= and nothing to say
        terminalreporter.write_sep("-", "pathprof: path coverage")
        width: int | None = 100
        with contextlib.suppress(AttributeError):
            width = terminalreporter._tw.fullwidth
        if not getattr(terminalreporter, "isatty", True) and not os.environ.get("COLUMNS"):
            width = None  # a CI log: not fitted to 80 columns (CoverageReports.show)
        markup = bool(getattr(terminalreporter, "hasmarkup", False))
        self.results.show(terminalreporter.write_line, terminalreporter.write, width, markup)
        for note in self.notes:
            terminalreporter.write_line(f"pathprof: {note}")
        self.results.release()
