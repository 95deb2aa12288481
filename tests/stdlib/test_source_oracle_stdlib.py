"""CPython's own tests of standard-library modules, judged by the oracle that knows
no CFG (:mod:`tests.source_oracle`): every function's path executions, and its path
counts wherever line events tell its paths apart, equal pathprof's.

The modules are others than those of :mod:`tests.stdlib.test_stdlib_differential`,
chosen for loops that catch exceptions (configparser, tempfile, mailbox, netrc,
optparse, argparse), generators (heapq.merge, graphlib, fileinput, plistlib,
tokenize-like scanners in _strptime and csv), ``with`` statements (contextlib,
tempfile, gzip, shutil), recursion (copy, pprint, minidom, reprlib, _py_abc) and
plain string processing. Each runs in well under a minute under the tracer on 3.11.

Marked ``stdlib_oracle``: ``make test`` runs them on the baseline Python only.
"""

from __future__ import annotations

import sys

import pytest

from .harness import excluding
from .source_harness import SourceTarget, describe, run_against_oracle

TARGETS = {
    "heapq": SourceTarget(("heapq",), "test.test_heapq"),
    "bisect": SourceTarget(("bisect",), "test.test_bisect"),
    "colorsys": SourceTarget(("colorsys",), "test.test_colorsys"),
    "configparser": SourceTarget(("configparser",), "test.test_configparser"),
    "getopt": SourceTarget(("getopt",), "test.test_getopt"),
    "gettext": SourceTarget(("gettext",), "test.test_gettext"),
    "string": SourceTarget(("string",), "test.test_string"),
    # Sorting unorderable keys compares in an order that depends on object ids.
    "pprint": SourceTarget(("pprint",), "test.test_pprint", shared_run=True),
    "reprlib": SourceTarget(("reprlib",), "test.test_reprlib"),
    "copy": SourceTarget(("copy",), "test.test_copy"),
    "graphlib": SourceTarget(("graphlib",), "test.test_graphlib"),
    "base64": SourceTarget(("base64",), "test.test_base64"),
    "quopri": SourceTarget(("quopri",), "test.test_quopri"),
    "urllib.parse": SourceTarget(("urllib.parse",), "test.test_urlparse"),
    "http.cookies": SourceTarget(("http.cookies",), "test.test_http_cookies",
                                 isolate=("http", "test.test_http_cookies")),
    "netrc": SourceTarget(("netrc",), "test.test_netrc"),
    # test_deep_nesting recurses until RecursionError, which switches any tracer off
    # for good (the oracle would judge nothing of the run).
    "plistlib": SourceTarget(("plistlib",), "test.test_plistlib",
                             select=excluding("TestBinaryPlistlib.test_deep_nesting")),
    "fnmatch": SourceTarget(("fnmatch",), "test.test_fnmatch"),
    # Globs over shared directories see what other processes create meanwhile.
    "glob": SourceTarget(("glob",), "test.test_glob", shared_run=True),
    "tempfile": SourceTarget(("tempfile",), "test.test_tempfile"),
    "filecmp": SourceTarget(("filecmp",), "test.test_filecmp"),
    "fileinput": SourceTarget(("fileinput",), "test.test_fileinput"),
    "mailbox": SourceTarget(("mailbox",), "test.test_mailbox"),
    "mimetypes": SourceTarget(("mimetypes",), "test.test_mimetypes"),
    "wave": SourceTarget(("wave",), "test.test_wave"),
    "optparse": SourceTarget(("optparse",), "test.test_optparse"),
    "argparse": SourceTarget(("argparse",), "test.test_argparse"),
    "_strptime": SourceTarget(("_strptime",), "test.test_strptime"),
    "zoneinfo": SourceTarget(
        ("zoneinfo._zoneinfo",), "test.test_zoneinfo",
        isolate=("zoneinfo", "test.test_zoneinfo"),
        skip_from=((3, 12), "3.12's test_zoneinfo also runs a copy of zoneinfo._zoneinfo that "
                            "this harness's import hook does not instrument (its calls reach "
                            "the oracle only)")),
    "minidom": SourceTarget(("xml.dom.minidom",), "test.test_minidom",
                            isolate=("xml.dom", "test.test_minidom")),
    "http.cookiejar": SourceTarget(("http.cookiejar",), "test.test_http_cookiejar"),
    "csv": SourceTarget(("csv",), "test.test_csv"),
    "contextlib": SourceTarget(("contextlib",), "test.test_contextlib"),
    "_py_abc": SourceTarget(("_py_abc",), "test.test_abc"),
    # How often a GzipFile's `closed` is asked depends on when the garbage collector
    # finalizes the file objects (3.12): the oracle watches the run pathprof counts.
    "gzip": SourceTarget(("gzip",), "test.test_gzip", shared_run=True),
    # autorange() loops until a time has passed: the oracle sees the run pathprof counts.
    "timeit": SourceTarget(("timeit",), "test.test_timeit", shared_run=True),
    "dbm.dumb": SourceTarget(("dbm.dumb",), "test.test_dbm_dumb"),
    # Directory listings of fresh temporary directories come in no fixed order.
    "shutil": SourceTarget(("shutil",), "test.test_shutil", shared_run=True),
}

#: Functions that ran, summed over the targets, below which the test proves little.
MIN_FUNCTIONS_RAN = 3


@pytest.mark.stdlib_oracle
@pytest.mark.parametrize("name", list(TARGETS))
def test_every_function_agrees_with_the_source_oracle(name: str) -> None:
    target = TARGETS[name]
    if target.skip_from is not None and sys.version_info >= target.skip_from[0]:
        pytest.skip(target.skip_from[1])
    report = run_against_oracle(target)
    assert report.instrumented == report.plain, report.instrumented.details
    assert report.instrumented.tests_run > 0
    assert None not in report.not_compared, report.not_compared[None]
    assert not report.disagreements, describe(report)
    ran = [r for r in report.compared if r.oracle]
    assert len(ran) >= MIN_FUNCTIONS_RAN, describe(report)


__all__ = ["TARGETS", "excluding"]
