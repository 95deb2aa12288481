"""The data file's schema is written once (``data/schema.py``): its documentation, in
the SQL's comments, is the list docs/data-file.md shows, and what a file is created
with is that SQL."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from pathprof.data import schema, store
from pathprof.data.measurement import RunInfo

DOCS = Path(__file__).parent.parent / "docs" / "data-file.md"


def _documented() -> str:
    text = DOCS.read_text()
    found = re.search(r"<!-- schema: generated from src/pathprof/data/schema.py -->\n"
                      r"(.*?)<!-- schema: end -->", text, re.S)
    assert found, "docs/data-file.md has no generated schema block"
    return found[1]


def test_the_docs_list_the_tables_and_columns_the_schema_documents() -> None:
    assert _documented() == schema.markdown(), (
        "docs/data-file.md's tables differ from data/schema.py's: paste "
        "`python -c 'from pathprof.data import schema; print(schema.markdown(), end=\"\")'`")


def test_the_docs_name_the_schema_version() -> None:
    assert f"Schema version {schema.SCHEMA_VERSION} (`meta.schema_version`)" in DOCS.read_text()


def test_every_column_has_its_comment_and_every_table_its_row() -> None:
    tables = schema.tables()
    assert {"path", "vector", "context"} <= set(tables)
    for name, (what, columns) in tables.items():
        assert what, f"table {name} says nothing of its rows"
        for column, _kind, holds in columns:
            # keys and references say what they are by their names
            assert holds or column in {"id", "function_id", "module_id", "source_hash"}, (
                f"{name}.{column} has no comment")


def test_comments_are_not_written_into_a_data_file(tmp_path: Path) -> None:
    path = tmp_path / ".pathprof"
    store.write(str(path), RunInfo(0.0, ["x"], "3.11", "path", None, 1, "host"), [], {})
    db = sqlite3.connect(path)
    try:
        sql = [row[0] for row in db.execute("SELECT sql FROM sqlite_master "
                                            "WHERE type = 'table'")]
        columns = [row[1] for row in db.execute("PRAGMA table_info(path)")]
    finally:
        db.close()
    assert len(sql) == len(schema.tables())
    assert not any("--" in statement for statement in sql)
    assert columns == [c[0] for c in schema.tables()["path"][1]]


def test_a_column_the_comments_misread_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    documented = schema.DOCUMENTED_SCHEMA.replace("    count INTEGER NOT NULL,  -- its runs\n"
                                                  "    time_ns", "    time_ns", 1)
    assert documented != schema.DOCUMENTED_SCHEMA
    monkeypatch.setattr(schema, "DOCUMENTED_SCHEMA", documented)
    with pytest.raises(ValueError, match="table path"):
        schema.tables()
