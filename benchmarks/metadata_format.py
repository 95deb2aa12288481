"""Size and decode time of the per-function contract's serialization (issue 35).

``python metadata_format.py [MODULE ...]`` instruments standard-library modules
(path mode) and compares, for the same content, two encodings of a module's
metadata: the contract's positional arrays (:meth:`pathprof.contract.ModuleInfo.encode`,
format 8, what the generated code and the data file hold) and a keyed JSON object per
function, block, compound and plan (the shape of format 7, rebuilt here from the same
:class:`~pathprof.contract.FunctionInfo`). Prints as JSON: total characters of each,
zlib-compressed bytes of each, and per module the best of 20 of ``json.loads`` of the
keyed form (all format 7's runtime did before reading through string keys) against
``ModuleInfo.decode`` (the JSON; each function is decoded when first asked for, as
the runtime asks for one when an exception cuts its path) and against decoding every
function into its typed objects (what reading a data file does), with median ratios.
"""

from __future__ import annotations

import json
import statistics
import sys
import sysconfig
import time
import zlib
from pathlib import Path
from typing import Any

from pathprof.contract import Compound, FunctionInfo, ModuleInfo
from pathprof.python.instrument import instrument_source

DEFAULT_MODULES = ("argparse", "ast", "configparser", "dataclasses", "difflib", "enum",
                   "inspect", "pathlib", "pickle", "shutil", "tarfile", "typing", "zipfile",
                   "_pydecimal", "tokenize", "textwrap", "statistics", "json/decoder")


def _keyed_compound(c: Compound) -> dict[str, Any]:
    found = {"kind": c.kind, "async": c.is_async, "span": list(c.span)}
    for role in ("for-iter", "for-next", "with-enter", "with-exit"):
        if c.block_of(role) is not None:
            found[role] = c.block_of(role)
    if c.header is not None:
        found["header"] = list(c.header)
    if c.iter is not None:
        found["iter"] = list(c.iter)
    return found


def keyed(f: FunctionInfo) -> dict[str, Any]:
    """The function as format 7 wrote it: an object with a key per field."""
    return {
        "qualname": f.qualname, "first_line": f.first_line, "last_line": f.last_line,
        "code_line": f.code_line, "is_async": f.is_async, "entry": f.entry, "exit": f.exit,
        "blocks": [{"kind": b.kind, "label": b.label, "pieces": [list(p) for p in b.pieces]}
                   for b in f.blocks],
        "edges": [list(e) for e in f.edges],
        "fall_off": {str(k): v for k, v in f.fall_off.items()},
        "restarts": [list(r) for r in f.restarts], "backedges": list(f.backedges),
        "num_paths": str(f.num_paths), "counter": f.counter, "query": list(f.query),
        "returns": {str(k): list(v) for k, v in f.returns.items()},
        "early_returns": sorted(f.early_returns),
        "compounds": [_keyed_compound(c) for c in f.compounds],
        "unreachable": list(f.unreachable), "mode": f.mode,
    }


def _best(action: Any, repeats: int = 20) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def main(names: list[str]) -> dict[str, Any]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    rows = []
    for name in names:
        path = stdlib / f"{name}.py"
        info = instrument_source(path.read_bytes(), str(path)).metadata
        compact = info.encode()
        old = json.dumps({"format": 7, "file": info.file, "key": info.key,
                          "source_hash": info.source_hash,
                          "functions": [keyed(f) for f in info.functions]},
                         separators=(",", ":"))
        assert ModuleInfo.decode(compact) == info
        rows.append({
            "module": name, "functions": len(info.functions),
            "keyed_chars": len(old), "compact_chars": len(compact),
            "keyed_zlib": len(zlib.compress(old.encode())),
            "compact_zlib": len(zlib.compress(compact.encode())),
            "keyed_loads_ms": _best(lambda text=old: json.loads(text)) * 1e3,
            "compact_decode_ms": _best(lambda text=compact: ModuleInfo.decode(text)) * 1e3,
            "compact_all_ms": _best(lambda text=compact: list(ModuleInfo.decode(text).functions)
                                    ) * 1e3,
        })
    total = {key: sum(r[key] for r in rows)
             for key in ("functions", "keyed_chars", "compact_chars", "keyed_zlib",
                         "compact_zlib")}
    return {
        "python": sys.version.split()[0],
        "modules": rows,
        "total": total,
        "size_ratio": round(total["compact_chars"] / total["keyed_chars"], 3),
        "zlib_ratio": round(total["compact_zlib"] / total["keyed_zlib"], 3),
        "median_decode_ratio": round(statistics.median(
            r["compact_decode_ms"] / r["keyed_loads_ms"] for r in rows), 3),
        "median_all_functions_ratio": round(statistics.median(
            r["compact_all_ms"] / r["keyed_loads_ms"] for r in rows), 3),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:] or list(DEFAULT_MODULES)), indent=1))
