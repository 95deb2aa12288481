"""Load a source file instrumented in memory, and find its functions' code objects."""

from __future__ import annotations

import itertools
import os
import re
import sys
import types
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pathprof import runtime
from pathprof.python.instrument import InstrumentedModule, instrument_source

from .oracles import FunctionInfo, profile_paths

# Every load gets its own module key. (An id() of the source text is not unique:
# a freed string's id is reused, and a later load then shares an earlier load's
# key, and snapshot() found the earlier, already drained, state.)
_load_numbers = itertools.count()


def program_examples(full: int) -> int:
    """The example count of a property that instruments and runs random programs:
    ``full`` on the oldest and the newest Python, a third of it on those between
    (``make test`` runs them with ``HYPOTHESIS_PROFILE=ci-between``: each draws
    afresh, so the runs of one ``make test`` draw more than ``full`` in all, and
    what only one Python's code generation gets wrong still meets many programs)."""
    return full // 3 if os.environ.get("HYPOTHESIS_PROFILE") == "ci-between" else full


@dataclass
class Loaded:
    module: types.ModuleType
    instrumented: InstrumentedModule
    code: types.CodeType

    @property
    def metadata(self) -> dict[str, Any]:
        return self.instrumented.metadata

    def execute(self) -> None:
        exec(self.code, self.module.__dict__)

    def function_infos(self) -> list[FunctionInfo]:
        codes = list(_walk_codes(self.code))
        infos = []
        for meta in self.metadata.functions:
            matches = [c for c in codes if c.co_qualname == meta.qualname
                       and c.co_firstlineno == meta.code_line]
            assert len(matches) == 1, (meta.qualname, len(matches))
            infos.append(FunctionInfo(meta, matches[0]))
        return infos

    def snapshot(self) -> Any:
        for state, paths, cuts, raised, unattributed, _times, _closed, _vectors in (
                runtime.take_snapshot()):
            if state.key == self.metadata.key:
                return paths, cuts, raised, unattributed
        raise LookupError("module not registered")

    def recorded(self, infos: list[FunctionInfo]) -> dict[str, Any]:
        paths, cuts, _raised, unattributed = self.snapshot()
        assert not any(unattributed), unattributed
        return {info.meta.qualname: profile_paths(info.meta, paths[i], cuts[i], info.visible)
                for i, info in enumerate(infos)}


def _walk_codes(code: types.CodeType):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _walk_codes(const)


def all_codes(code: types.CodeType) -> list[types.CodeType]:
    """``code`` and every code object nested in it."""
    return [code, *_walk_codes(code)]


def load_instrumented(path: Path, name: str | None = None, *, mark_probes: bool = True,
                      mode: str = "path", metric: str | None = None,
                      events: str = "statements", placement: str = "tree",
                      registers_outside: bool = False, subpaths: bool = False,
                      switches: bool = False, totals_only: bool = False,
                      conditions: bool = False) -> Loaded:
    """Instrument ``path`` in memory. ``mark_probes`` locates inserted code on a
    marker line so the oracle can tell it apart; False is the production build."""
    source = path.read_text(encoding="utf-8")
    name = name or f"pathprof_corpus_{path.stem}"
    instrumented = instrument_source(source, str(path), module_key=f"{name}:{next(_load_numbers)}",
                                     mark_probes=mark_probes, mode=mode, metric=metric,
                                     events=events, placement=placement,
                                     registers_outside=registers_outside,
                                     subpaths=subpaths, switches=switches,
                                     totals_only=totals_only, conditions=conditions)
    code = instrumented.compile(str(path))
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    return Loaded(module, instrumented, code)


CORPUS = Path(__file__).resolve().parent / "corpus"
_REQUIRES = re.compile(r"#\s*requires Python (\d+)\.(\d+)")


def corpus_programs() -> list[Path]:
    """The corpus programs this Python can compile: a program whose first lines say
    ``# requires Python 3.N`` (new syntax) is left out of older versions."""
    programs = []
    for path in sorted(CORPUS.glob("*.py")):
        if path.name.startswith("_"):
            continue
        head = path.read_text(encoding="utf-8")[:500]
        needed = _REQUIRES.search(head)
        if needed and sys.version_info < (int(needed[1]), int(needed[2])):
            continue
        programs.append(path)
    return programs


def load_plain(path: Path, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec", dont_inherit=True),
         module.__dict__)
    return module


def recorded_all(loadeds: list[Loaded], infos: list[list[FunctionInfo]], since: int = 0
                 ) -> list[list[Any]]:
    """Decode, with one snapshot, what each of ``loadeds`` recorded, per function
    (in the order of ``infos``, one list per module).

    ``Loaded.snapshot`` resets every module's counts but returns one module's, so
    it cannot read several modules recorded by the same run. A module whose code is
    executed more than once (fresh imports of one compiled code object) registers
    one state per execution, all with the same key: their counts are summed. Only
    states registered from position ``since`` of ``runtime.modules()`` on are read.
    """
    snapshot = runtime.take_snapshot()[since:]
    result = []
    for loaded, module_infos in zip(loadeds, infos, strict=True):
        states = [s for s in snapshot if s[0].key == loaded.metadata.key]
        assert states, f"{loaded.module.__name__} was never executed"
        per_function = []
        for i, info in enumerate(module_infos):
            total: Counter[Any] = Counter()
            for entry in states:  # (state, paths, cuts, raised, unattributed, ...)
                paths, cuts, unattributed = entry[1], entry[2], entry[4]
                assert not unattributed[i], (info.meta.qualname, unattributed[i])
                # update, not +=, keeps counts that are zero or negative
                total.update(profile_paths(info.meta, paths[i], cuts[i], info.visible))
            per_function.append(total)
        result.append(per_function)
    return result
