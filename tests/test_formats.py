"""pathprof.formats, the one table of report formats: every name it gives is a report
the library renders, an export writes where its command and its pytest kind both say,
and the faces' options and help are built from it (so a new format is its renderer
and a row there)."""

from __future__ import annotations

import argparse
import importlib
import inspect

import pytest

from pathprof import api, formats
from pathprof.cli import _parser
from pathprof.pytest.session import REPORT_KINDS, report_kind


def test_every_report_names_a_renderer_with_the_one_signature() -> None:
    for name, (module, function) in formats.RENDERERS.items():
        found = getattr(importlib.import_module(f"pathprof.report.{module}"), function)
        parameters = list(inspect.signature(found).parameters.values())
        assert [p.kind for p in parameters] == [
            inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.POSITIONAL_OR_KEYWORD,
            inspect.Parameter.VAR_KEYWORD], name
        assert parameters[1].name == "out", name
        assert api.renderer(name) is found


def test_every_session_kind_and_export_is_a_report_the_library_renders() -> None:
    for kind, (name, destination) in formats.SESSION_REPORTS.items():
        assert name in formats.RENDERERS, kind
        if name in formats.EXPORTS:
            assert destination == formats.EXPORTS[name].default_file, kind
    assert set(formats.EXPORTS) <= set(formats.SESSION_REPORTS)
    assert set(formats.EXPORTS) <= set(formats.RENDERERS)
    assert [k for k, (_n, d) in formats.SESSION_REPORTS.items() if d is None] == [
        "term", "term-missing"]
    assert api.REPORTS is formats.RENDERERS
    assert api.EXPORTS == {"lcov": "coverage.lcov", "xml": "coverage.xml"}


def test_the_exports_help_names_each_export_its_default_and_other_name() -> None:
    assert formats.exports_help() == ("lcov[:FILE] (default coverage.lcov), xml[:FILE] "
                                      "(Cobertura, default coverage.xml)")


def _subcommand(name: str) -> argparse.ArgumentParser:
    return _parser()[1][name]


@pytest.mark.parametrize("name", sorted(formats.EXPORTS))
def test_each_export_has_a_command_writing_its_default_file(name: str) -> None:
    command = _subcommand(name)
    assert command.parse_args([]).output == formats.EXPORTS[name].default_file
    assert formats.EXPORTS[name].what in command.description


def test_the_html_command_and_kind_write_to_the_same_directory() -> None:
    assert _subcommand("html").parse_args([]).directory == formats.HTML_DIRECTORY
    assert formats.SESSION_REPORTS["html"] == ("html", formats.HTML_DIRECTORY)


def test_a_kind_the_table_lacks_is_refused_naming_every_kind_and_destination() -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        report_kind("svg")
    message = str(refused.value)
    assert f"choose from {', '.join(REPORT_KINDS)}" in message
    assert "html:DIR, json:FILE, lcov:FILE and xml:FILE name where to write" in message
    for kind in formats.SESSION_REPORTS:
        assert report_kind(kind) == kind
