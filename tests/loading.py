"""Load a source file instrumented in memory, and find its functions' code objects."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pathprof import runtime
from pathprof.python.instrument import InstrumentedModule, instrument_source

from .oracles import FunctionInfo, profile_paths


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
        for meta in self.metadata["functions"]:
            matches = [c for c in codes if c.co_qualname == meta["qualname"]
                       and c.co_firstlineno == meta["code_line"]]
            assert len(matches) == 1, (meta["qualname"], len(matches))
            infos.append(FunctionInfo(meta, matches[0]))
        return infos

    def snapshot(self) -> Any:
        for state, paths, cuts, raised, unattributed in runtime.take_snapshot():
            if state.key == self.metadata["key"]:
                return paths, cuts, raised, unattributed
        raise LookupError("module not registered")

    def recorded(self, infos: list[FunctionInfo]) -> dict[str, Any]:
        paths, cuts, _raised, unattributed = self.snapshot()
        assert not any(unattributed), unattributed
        return {info.meta["qualname"]: profile_paths(info.meta, paths[i], cuts[i], info.visible)
                for i, info in enumerate(infos)}


def _walk_codes(code: types.CodeType):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _walk_codes(const)


def load_instrumented(path: Path, name: str | None = None, *, mark_probes: bool = True
                      ) -> Loaded:
    """Instrument ``path`` in memory. ``mark_probes`` locates inserted code on a
    marker line so the oracle can tell it apart; False is the production build."""
    source = path.read_text(encoding="utf-8")
    name = name or f"pathprof_corpus_{path.stem}"
    instrumented = instrument_source(source, str(path), module_key=f"{name}:{id(source)}",
                                     mark_probes=mark_probes)
    code = instrumented.compile(str(path))
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    return Loaded(module, instrumented, code)


def load_plain(path: Path, name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = str(path)
    sys.modules[name] = module
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)
    return module
