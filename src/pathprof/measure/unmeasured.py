"""Files under the source that were never imported: their functions, from a parse.

coverage.py reports a file of the configured source that no test imported at 0%,
so that a suite that never touches a module cannot look complete. Path coverage
does the same: each such file is parsed and planned as an import would have it
(:func:`pathprof.python.instrument.planned_metadata`, nothing rewritten or run), and
each of its functions gets an empty profile, whose paths possible and basis dimension
are what a measured run would have found.

Invariant: a profile made here has no counts, and its metadata is what measuring
the file as it is now would record, less what only the runtime reads
(``early_returns``).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Collection, Sequence

from pathprof.constructs import FUNCTIONS
from pathprof.data.profile import FunctionProfile

__all__ = ["unmeasured_profiles"]


def unmeasured_profiles(files: Sequence[str], measured: Collection[str]
                        ) -> tuple[list[FunctionProfile], list[tuple[str, str]]]:
    """Empty profiles of the functions of each of ``files`` not in ``measured`` (file
    names compared as absolute paths), and the files that could not be read or
    parsed, with why."""
    from pathprof.hashing import source_hash

    known = {os.path.abspath(f) for f in measured}
    profiles: list[FunctionProfile] = []
    problems: list[tuple[str, str]] = []
    for file in files:
        if os.path.abspath(file) in known:
            continue
        try:
            with open(file, "rb") as f:
                data = f.read()
            tree = ast.parse(data, file)
            if not any(isinstance(node, FUNCTIONS)
                       for node in ast.walk(tree)):
                continue  # (no function: nothing to plan, and the planner not imported)
            from pathprof.python.instrument import planned_metadata

            metadata = planned_metadata(data, file)
        except OSError as err:
            problems.append((file, f"cannot read it: {err.strerror}"))
            continue
        except (SyntaxError, ValueError) as err:
            problems.append((file, f"does not parse: {err}"))
            continue
        except (RecursionError, MemoryError) as err:
            # (nested too deeply for Python's parser or for the planner's walk of it,
            # as pathprof.parallel.plan finds too)
            why = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
            problems.append((file, f"does not parse: nested too deeply ({why})"))
            continue
        digest = source_hash(data)
        profiles += [FunctionProfile.of(file, digest, meta)
                     for meta in metadata.functions]
    return profiles, problems
