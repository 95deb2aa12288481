"""Digests of the code pathprof generates, to show a refactoring changed none of it.

Run: ``PYTHONPATH=<tree>/src python scripts/generated_code_digest.py OUT.json [N]``
for two trees (e.g. a ``git worktree`` of the revision before, and this checkout),
then ``cmp`` the two files. Each entry is a digest of ``ast.dump`` (positions
included; the module's contract is a constant in the tree, so it is compared too) of
one file instrumented in one mode: the first ``N`` (default 120) modules of the
running Python's standard library and every program of ``tests/corpus``, in path mode
(plain, with loop switches, with switches and body copies), edge and event mode,
subpath sampling, conditions and ``--metric time``.
"""

from __future__ import annotations

import ast
import glob
import hashlib
import json
import os
import sys
import sysconfig
from pathlib import Path

from pathprof.python.instrument import instrument_source

MODES: dict[str, dict[str, object]] = {
    "path": {},
    "path-switches": {"switches": True},
    "path-copies": {"switches": True, "swaps": False},
    "edge": {"mode": "edge"},
    "events": {"mode": "events"},
    "subpaths": {"subpaths": True},
    "conditions": {"conditions": True, "switches": True},
    "time": {"metric": "time"},
}


def digests(count: int) -> dict[str, str]:
    stdlib = sysconfig.get_paths()["stdlib"]
    files = sorted(glob.glob(os.path.join(stdlib, "*.py")))[:count]
    corpus = Path(__file__).resolve().parent.parent / "tests" / "corpus"
    files += sorted(str(p) for p in corpus.glob("*.py"))
    found: dict[str, str] = {}
    for file in files:
        source = Path(file).read_bytes()
        for name, options in MODES.items():
            try:
                tree = instrument_source(source, file, **options).tree  # type: ignore[arg-type]
                digest = hashlib.sha256(
                    ast.dump(tree, include_attributes=True).encode()).hexdigest()[:16]
            except SyntaxError:
                digest = "syntax error"
            except Exception as err:  # a refactoring must not change these either
                digest = f"error: {type(err).__name__}"
            found[f"{os.path.basename(file)}:{name}"] = digest
    return found


def main() -> None:
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 120
    found = digests(count)
    Path(out).write_text(json.dumps(found, indent=0, sort_keys=True))
    print(f"{len(found)} digests -> {out}")


if __name__ == "__main__":
    main()
