"""pathprof.report.htmlfiles: the HTML reports' package data and what every HTML report
does with it: a template by name, JSON that can sit inside ``<script>``, the static
files copied beside the pages, and the lines of source files as Python decodes them
(or why they cannot be read)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pathprof.report.htmlfiles as htmlfiles
from pathprof.report.htmlfiles import (
    STATIC_FILES,
    copy_static_files,
    json_for_script,
    source_lines,
    template,
)

PACKAGE = Path(htmlfiles.__file__).parent


def test_a_template_names_the_fields_a_report_fills() -> None:
    page = template("subpath.html")
    assert sorted(page.get_identifiers()) == ["cycle", "figures", "functions", "rank",
                                              "route", "segments", "title", "version"]
    filled = page.substitute(cycle="", figures="<dt>ran</dt>", functions="f", rank="7",
                             route="f:1 → f:2", segments="SEGMENTS", title="Subpath 7",
                             version="9.9")
    assert "<h1>Subpath #7 <span class=\"where\">f</span></h1>" in filled
    assert "SEGMENTS" in filled
    assert "$" not in filled


def test_a_template_is_the_packaged_file() -> None:
    text = (PACKAGE / "function.html").read_text(encoding="utf-8")
    assert template("function.html").template == text


def test_an_unknown_template_is_an_error() -> None:
    with pytest.raises(FileNotFoundError):
        template("no-such-page.html")


def test_json_for_script_cannot_end_the_script_element() -> None:
    data = {"doc": "</script><script>alert(1)</script>", "and": "a & b > c"}
    text = json_for_script(data)
    assert "<" not in text
    assert ">" not in text
    assert "&" not in text
    assert "\\u003c/script\\u003e" in text
    assert json.loads(text) == data


def test_json_for_script_is_compact() -> None:
    assert json_for_script({"a": [1, 2], "b": None}) == '{"a":[1,2],"b":null}'


@settings(max_examples=50, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=10))
def test_json_for_script_reads_back_as_the_data(data: object) -> None:
    text = json_for_script(data)
    assert not set("<>&") & set(text)
    assert json.loads(text) == data


def test_the_static_files_are_copied_beside_the_pages(tmp_path: Path) -> None:
    copy_static_files(str(tmp_path))
    assert STATIC_FILES == ("style.css", "pathprof.js")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pathprof.js", "style.css"]
    for name in STATIC_FILES:
        assert (tmp_path / name).read_bytes() == (PACKAGE / name).read_bytes()


def test_copying_overwrites_an_older_copy(tmp_path: Path) -> None:
    (tmp_path / "style.css").write_text("old")
    copy_static_files(str(tmp_path))
    assert (tmp_path / "style.css").read_bytes() == (PACKAGE / "style.css").read_bytes()


def test_copying_into_a_missing_directory_fails(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        copy_static_files(str(tmp_path / "missing"))


def test_source_lines_are_the_files_lines_now(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("def f():\n    return 1\n\n# end\n", encoding="utf-8")
    assert source_lines([str(path)]) == {str(path): ["def f():", "    return 1", "", "# end"]}


def test_source_is_decoded_as_python_decodes_it(tmp_path: Path) -> None:
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\ns = '\xe9t\xe9'\n")
    bom = tmp_path / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbfx = 1\n")
    found = source_lines([str(latin), str(bom)])
    assert found[str(latin)] == ["# -*- coding: latin-1 -*-", "s = 'été'"]
    assert found[str(bom)] == ["x = 1"]  # the byte order mark is no character


def test_an_empty_file_has_no_lines(tmp_path: Path) -> None:
    path = tmp_path / "empty.py"
    path.write_bytes(b"")
    assert source_lines([str(path)]) == {str(path): []}


def test_a_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    missing = str(tmp_path / "gone.py")
    directory = str(tmp_path)
    found = source_lines([missing, directory])
    assert found[missing] == "No such file or directory"
    assert found[directory] == "Is a directory"


def test_a_file_python_cannot_decode_says_so(tmp_path: Path) -> None:
    invalid = tmp_path / "invalid.py"
    invalid.write_bytes(b"x = '\xff\xfe'\n")  # not UTF-8, and no coding cookie
    unknown = tmp_path / "unknown.py"
    unknown.write_bytes(b"# coding: no-such-codec\nx = 1\n")
    found = source_lines([str(invalid), str(unknown)])
    for file in (invalid, unknown):
        reason = found[str(file)]
        assert isinstance(reason, str)
        assert reason.startswith("not decodable: ")


def test_each_file_is_read_once_and_keyed_by_its_name(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("a\n")
    b.write_text("b\n")
    assert source_lines(iter([str(b), str(a), str(b)])) == {str(b): ["b"], str(a): ["a"]}
    assert source_lines([]) == {}
