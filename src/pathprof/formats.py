"""The report formats, one row each: which renderer shows a report, what file an
export writes unless told, and which ``pytest --pathprof-report`` kind shows or
writes which report.

The library renders by these names (:mod:`pathprof.reporting`, re-exported by
:mod:`pathprof.api`); the command line (``pathprof lcov``, ``pathprof xml``,
``pathprof html``) and the pytest plugin build their options, defaults and help
from them. So a new format is its renderer module in :mod:`pathprof.report` and its
rows here (docs/architecture.md).

Invariant: every name a row of :data:`SESSION_REPORTS` or :data:`EXPORTS` uses is a
report of :data:`RENDERERS`, and an export's session kind writes where its command
does (the rows below are built so; ``tests/test_formats.py`` checks them).

Imports nothing, of pathprof or else: the pytest plugin reads it as it loads, which
every pytest session pays for.
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = ["COVERAGE_JSON_FILE", "EXPORTS", "HTML_DIRECTORY", "RENDERERS", "SESSION_REPORTS",
           "Export", "Renderer", "exports_help"]


class Renderer(NamedTuple):
    """Where a report's renderer is: ``pathprof.report.<module>.<function>``, whose
    signature is the one :mod:`pathprof.report` describes."""

    module: str
    function: str = "render"


#: report name -> its renderer
RENDERERS: Final[dict[str, Renderer]] = {
    "paths": Renderer("paths_text"), "paths-json": Renderer("paths_json"),
    "coverage": Renderer("coverage_text"), "coverage-json": Renderer("coverage_json"),
    "conditions": Renderer("conditions_text"),
    "diff": Renderer("diff_text"), "diff-json": Renderer("diff_text", "render_json"),
    "html": Renderer("html"), "lcov": Renderer("lcov"), "xml": Renderer("cobertura"),
    "events": Renderer("events_text"), "subpaths": Renderer("subpaths_text"),
    "subpaths-html": Renderer("subpaths_html"), "plan": Renderer("plan"),
    "partition-plan": Renderer("partition_plan"),
}


class Export(NamedTuple):
    """A coverage format other tools read: its report (a key of :data:`RENDERERS`)
    is also the name of its command and of its ``--pathprof-report`` kind."""

    #: where ``pathprof NAME`` and ``--pathprof-report=NAME`` write, unless told
    #: (coverage.py's and pytest-cov's names)
    default_file: str
    #: what it is, in a sentence's words: "an LCOV tracefile"
    what: str
    #: its short name in the plugin's help, where the report's name does not say it
    #: ("" where it does)
    known_as: str = ""


#: export name -> the export
EXPORTS: Final[dict[str, Export]] = {
    "lcov": Export("coverage.lcov", "an LCOV tracefile"),
    "xml": Export("coverage.xml", "a Cobertura XML report", known_as="Cobertura"),
}

#: where ``pathprof html`` and ``--pathprof-report=html`` write, unless told
HTML_DIRECTORY: Final = "htmlpathprof"
#: where ``--pathprof-report=json`` writes, unless told
COVERAGE_JSON_FILE: Final = "pathprof.json"

#: ``--pathprof-report`` kind -> (the report of :data:`RENDERERS` it is, where it goes
#: unless ``KIND:DESTINATION`` says: None for the terminal)
SESSION_REPORTS: Final[dict[str, tuple[str, str | None]]] = {
    "term": ("coverage", None), "term-missing": ("coverage", None),
    "html": ("html", HTML_DIRECTORY), "json": ("coverage-json", COVERAGE_JSON_FILE),
    **{name: (name, export.default_file) for name, export in EXPORTS.items()},
}


def exports_help() -> str:
    """The exports as the plugin's help names them: ``lcov[:FILE] (default
    coverage.lcov), xml[:FILE] (Cobertura, default coverage.xml)``."""
    return ", ".join(
        f"{name}[:FILE] ({export.known_as + ', ' if export.known_as else ''}default "
        f"{export.default_file})" for name, export in EXPORTS.items())
