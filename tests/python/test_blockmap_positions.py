"""The block map reads a code object's positions (``co_positions``) with the garbage
collector paused (:func:`pathprof.runtime.blockmap.code_positions`): the same
positions, and the collector as it was (running, or stopped by the program)."""

from __future__ import annotations

import gc
import os

import pytest

from pathprof.python.instrument import instrument_source
from pathprof.runtime.blockmap import code_positions

from ..loading import all_codes

MODULES = ("argparse", "json/decoder", "textwrap", "dataclasses", "asyncio/tasks")


@pytest.mark.parametrize("module", MODULES)
@pytest.mark.parametrize("collecting", [True, False], ids=["collector-on", "collector-off"])
def test_positions_are_co_positions_and_the_collector_is_left_as_it_was(
        module: str, collecting: bool) -> None:
    path = os.path.join(os.path.dirname(os.__file__), f"{module}.py")
    with open(path, "rb") as f:
        source = f.read()
    plain = compile(source, path, "exec", dont_inherit=True)
    instrumented = instrument_source(source, path, switches=True).compile_unbound(path)
    was = gc.isenabled()
    if not collecting:
        gc.disable()
    try:
        checked = 0
        for code in all_codes(plain) + all_codes(instrumented):
            assert code_positions(code) == list(code.co_positions()), code.co_qualname
            assert gc.isenabled() is collecting
            checked += len(code_positions(code))
        assert checked > 1000
    finally:
        if was:
            gc.enable()
