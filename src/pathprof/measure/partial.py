"""One copy of a parallel run: the functions this process profiles, and the calls
it counts to check that every copy ran the same program.

A parallel run (:mod:`pathprof.parallel`) starts K copies of the program, each
told by the environment variable :data:`ENVIRONMENT` (a JSON object: the plan
file, the copy's index, where to write its call counts) which copy it is. The
plan names, per module source (by its hash) and per function (by its index in
:func:`~pathprof.python.cfg.iter_functions` order), the copy that profiles the
function; the other copies count its calls only. A module the plan does not know
(a file outside the planned selection, or changed since) is profiled by copy 0.

Invariant: every function is profiled by exactly one copy, the same in every copy
that runs the same program, so adding the copies' data files gives each
function's profile exactly once. Standard library only: it runs in the program.
"""

from __future__ import annotations

import json
import os
from collections.abc import Container, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from pathprof.data.files import parallel_name

if TYPE_CHECKING:
    class SplitOwners(TypedDict):
        """A function whose paths the copies split, as the plan gives it: each task's
        DAG edges, and the copy of each task."""

        tasks: list[list[int]]
        copies: list[int]

__all__ = ["ENVIRONMENT", "PLAN_FORMAT", "CopyPlan", "from_environment"]

ENVIRONMENT = "PATHPROF_COPY"
PLAN_FORMAT = 1


class _Everything:
    """Every function index: a module the plan does not know, in copies other than 0."""

    def __contains__(self, item: object) -> bool:
        return True


@dataclass(frozen=True, eq=False)
class CopyPlan:
    """What one copy profiles (see the module docstring)."""

    index: int
    copies: int
    #: module source hash -> per function (by index): the copy that profiles it, or
    #: for a function whose paths the copies split, ``{"tasks": [[dag edge, ...],
    #: ...], "copies": [copy of each task, ...]}``
    owners: Mapping[str, tuple[int | SplitOwners, ...]]
    #: where this copy writes the calls it counted (JSON), at the end of the run
    calls_file: str
    #: the data file a copy run by the pytest plugin writes (``pathprof run``
    #: copies are told theirs on the command line)
    data_file: str | None = None

    def calls_only(self, digest: str) -> Container[int]:
        """The functions of the module with source hash ``digest`` whose calls only
        this copy counts."""
        owners = self.owners.get(digest)
        if owners is None:
            return () if self.index == 0 else _Everything()
        return frozenset(i for i, owner in enumerate(owners)
                         if (self.index not in owner["copies"] if isinstance(owner, dict)
                             else owner != self.index))

    def shares(self, digest: str) -> dict[int, tuple[list[list[int]], list[int], int]]:
        """The functions of the module whose paths the copies split and this copy
        holds some of: index -> (tasks, each task's copy, this copy's index)."""
        return {i: (owner["tasks"], owner["copies"], self.index)
                for i, owner in enumerate(self.owners.get(digest, ()))
                if isinstance(owner, dict) and self.index in owner["copies"]}

    def write_calls(self, calls: Mapping[str, int]) -> None:
        """Write the calls this process counted, by ``file|qualname|line|source
        hash``, to a file of its own beside :attr:`calls_file`
        (``<calls_file>.copy-<k>of<K>.<host>.<pid>.<random>``,
        :mod:`pathprof.data.files`), whatever started the process (the copy itself,
        a fork, a Python subprocess, a pytest-xdist worker), so that no process
        overwrites another's; the same file at every save of the process (the
        counts so far replace it). The run adds them up."""
        target = parallel_name(self.calls_file, "copy", copy=(self.index, self.copies))
        temp = f"{target}.tmp"
        with open(temp, "w", encoding="utf-8") as f:
            json.dump(dict(sorted(calls.items())), f)
        os.replace(temp, target)


def from_environment(environ: Mapping[str, str] | None = None) -> CopyPlan | None:
    """The plan of this copy, or None when this process is not a copy of a parallel
    run. Raises ValueError (naming the variable) for a plan that cannot be read:
    not JSON, a file missing, or of another shape (a value of the wrong type
    anywhere in what is read)."""
    text = (os.environ if environ is None else environ).get(ENVIRONMENT)
    if not text:
        return None
    try:
        settings = _object(json.loads(text), "the variable")
        with open(_string(settings["plan"], "plan"), encoding="utf-8") as f:
            plan = _object(json.load(f), "the plan")
        if plan.get("format") != PLAN_FORMAT:
            raise ValueError(f"plan format {plan.get('format')!r}, not {PLAN_FORMAT}")
        owners = _object(plan["owners"], "owners")
        data = settings.get("data")
        return CopyPlan(_integer(settings["index"], "index"), _integer(plan["copies"], "copies"),
                        {digest: _owners(digest, functions)
                         for digest, functions in owners.items()},
                        _string(settings["calls"], "calls"),
                        None if data is None else _string(data, "data"))
    except (OSError, KeyError, TypeError, ValueError, RecursionError) as err:
        # (RecursionError: JSON nested too deeply for the decoder)
        raise ValueError(f"{ENVIRONMENT}: cannot read this copy's plan ({err})") from err


def _object(value: object, what: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not a JSON object but {type(value).__name__}")
    return value


def _string(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} is not a string but {type(value).__name__}")
    return value


def _integer(value: object, what: str) -> int:
    if isinstance(value, str):
        int(value)  # a string of no number says so ("invalid literal for int() ...")
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{what} is not an integer but {value!r}")
    return value


def _integers(value: object, what: str) -> list[int]:
    if not isinstance(value, list) or not all(
            isinstance(item, int) and not isinstance(item, bool) for item in value):
        raise ValueError(f"{what} is not a list of integers")
    return value


def _owners(digest: str, functions: object) -> tuple[int | SplitOwners, ...]:
    """A module's owners as the plan gives them, checked: per function, a copy's
    index or a split function's tasks and their copies."""
    if not isinstance(functions, list):
        raise ValueError(f"owners of {digest!r} are not a list but {type(functions).__name__}")
    checked: list[int | SplitOwners] = []
    for i, owner in enumerate(functions):
        what = f"owner {i} of {digest!r}"
        if isinstance(owner, int) and not isinstance(owner, bool):
            checked.append(owner)
        elif isinstance(owner, dict):
            tasks = owner.get("tasks")
            if not isinstance(tasks, list):
                raise ValueError(f"{what} has no list of tasks")
            for task in tasks:
                _integers(task, f"a task of {what}")
            copies = _integers(owner.get("copies"), f"the copies of {what}")
            if len(copies) != len(tasks):
                raise ValueError(f"{what} has {len(tasks)} tasks but {len(copies)} copies")
            checked.append(owner)  # type: ignore[arg-type]
        else:
            raise ValueError(f"{what} is neither a copy nor a split but {type(owner).__name__}")
    return tuple(checked)
