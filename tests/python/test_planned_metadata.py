"""A never-imported file's metadata from its plans alone (``planned_metadata``): what
instrumenting it records, less the rewriter's ``early_returns``."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from pathprof.python.instrument import instrument_source, planned_metadata

from ..loading import corpus_programs

STDLIB = Path(os.__file__).parent
#: modules of many shapes: long ones, generators, classes in classes, match, try*
STDLIB_MODULES = ["argparse.py", "ast.py", "asyncio/base_events.py", "dataclasses.py",
                  "email/_header_value_parser.py", "inspect.py", "json/decoder.py",
                  "pydoc.py", "re/_parser.py", "tarfile.py", "typing.py", "zipfile.py"]


def _without_early_returns(source: bytes, file: str) -> object:
    metadata = instrument_source(source, file).metadata
    return dataclasses.replace(metadata, functions=tuple(
        dataclasses.replace(fn, early_returns=frozenset()) for fn in metadata.functions))


@pytest.mark.parametrize("path", [*corpus_programs(),
                                  *(STDLIB / name for name in STDLIB_MODULES
                                    if (STDLIB / name).exists())],
                         ids=lambda p: p.stem)
def test_the_plans_record_what_instrumenting_records(path: Path) -> None:
    source = path.read_bytes()
    planned = planned_metadata(source, str(path))
    assert planned == _without_early_returns(source, str(path))
    assert planned.functions or (b"def " not in source and b"lambda" not in source)


def test_some_return_is_counted_before_its_value_only_when_rewritten() -> None:
    """The one field left out is one instrumenting fills (so the comparison above is
    not of two empty sets)."""
    source = b"def f(x):\n    if x:\n        return x + 1\n    return x - 1\n"
    (fn,) = instrument_source(source, "f.py").metadata.functions
    assert fn.early_returns
    assert not planned_metadata(source, "f.py").functions[0].early_returns


def test_a_file_that_does_not_parse_raises_as_python_does() -> None:
    with pytest.raises(SyntaxError):
        planned_metadata(b"def f(:\n", "bad.py")
