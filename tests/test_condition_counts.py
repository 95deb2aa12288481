"""Condition coverage and MC/DC as pathprof measures them (issue 39), against answers
nobody computed with pathprof:

* the hand-counted corpus of ``tests/conditions_data/corpus.py`` (decisions of 1 to 6
  conditions, ``not``, walrus, side effects, exceptions inside a condition, ``while``,
  ``elif``, comprehensions, ``assert``, ``match`` guards, generators, methods): every
  vector's runs, the evaluations each condition ended by raising, and each condition's
  verdicts, written by hand;
* the traced oracle of ``tests/conditions_data/traced_oracle.py``: random decisions run
  over operands whose ``__bool__`` is traced, on random assignments (some raising);
  what Python evaluated must be what pathprof counted, vector for vector.

Both were written without reading pathprof's source. The oracle's verdicts come from a
truth-table definition; pathprof's from :func:`pathprof.analysis.conditions.mcdc`.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import itertools
import random
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from pathprof.analysis.conditioncoverage import decision_coverage
from pathprof.data import store
from pathprof.measure.profiler import Profiler
from pathprof.python.instrument import instrument_source

from .conditions_data.corpus import CASES
from .conditions_data.traced_oracle import (
    mcdc_by_definition,
    random_decision,
    traced_vectors,
)


def _measure(tmp_path: Path, source: str, run: Any, stop_counting: str = "never",
             conditions: bool = True) -> dict[str, Any]:
    """Import ``source`` as a fresh module measured with its conditions, call
    ``run(module)``, and return its functions' profiles by qualname."""
    name = f"cases_{uuid.uuid4().hex[:10]}"
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    sys.path.insert(0, str(tmp_path))
    data = tmp_path / f"{name}.pathprof"
    try:
        with Profiler(data_file=str(data), include=[str(path)], conditions=conditions,
                      cache=False,
                      stop_counting=stop_counting, warn_unmatched=False):
            module = importlib.import_module(name)
            run(module)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)
    return {fn.qualname: fn for fn in store.read(str(data)).functions}


def _resolve(module: Any, qualname: str) -> Any:
    target = module
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _recorded(profile: Any) -> list[dict[str, Any]]:
    """What pathprof recorded of each decision, in the corpus's terms."""
    found = []
    for entry in decision_coverage(profile):
        vectors = {(entry.vectors[k].values, entry.vectors[k].outcome): runs
                   for k, runs in entry.counts.items() if runs}
        found.append(dict(
            line=entry.info.span.line, conditions=entry.info.conditions, vectors=vectors,
            raised={c: n for c, n in entry.raised.items() if n},
            condition_covered=tuple(v.condition_covered for v in entry.verdicts),
            mcdc_unique=tuple(v.unique_cause is not None for v in entry.verdicts),
            mcdc_masking=tuple(v.masking is not None for v in entry.verdicts)))
    return found


#: Cases whose exception leaves the function from a comprehension's own frame, which
#: Python 3.11 gives comprehensions (3.12 inlines them): the raise is not attributed.
_COMPREHENSION_FRAME_RAISES: set[str] = set()


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_the_hand_counted_corpus(tmp_path: Path, case: dict[str, Any]) -> None:
    def run(module: Any) -> None:
        target = _resolve(module, case["function"])
        for args in case["calls"]:
            with contextlib.suppress(Exception):  # (the corpus counts what they raised)
                target(*args)

    if case["name"] in _COMPREHENSION_FRAME_RAISES and sys.version_info < (3, 12):
        pytest.xfail("3.11: a raise that leaves from a comprehension's frame")
    profiles = _measure(tmp_path, case["source"], run)
    profile = profiles.get(case["function"])
    expected = case["decisions"]
    recorded = _recorded(profile) if profile is not None else []
    if profile is None:  # never called: every decision with nothing recorded
        assert all(not d["vectors"] and not d["raised"] for d in expected)
        return
    assert [d["line"] for d in recorded] == [d["line"] for d in expected]
    for got, want in zip(recorded, expected, strict=True):
        assert got["conditions"] == tuple(want["conditions"]), want["line"]
        assert got["vectors"] == want["vectors"], want["line"]
        assert got["raised"] == want["raised"], want["line"]
        assert got["condition_covered"] == tuple(want["condition_covered"]), want["line"]
        assert got["mcdc_unique"] == tuple(want["mcdc_unique"]), want["line"]
        assert got["mcdc_masking"] == tuple(want["mcdc_masking"]), want["line"]


@pytest.mark.parametrize("seed", range(12))
def test_random_decisions_count_what_python_evaluated(tmp_path: Path, seed: int) -> None:
    """Per seed, 8 random decisions of up to 6 conditions, each run on every
    assignment of its conditions (and on some where a condition raises)."""
    rng = random.Random(seed)
    expressions = [random_decision(rng, 6) for _ in range(8)]
    runs: list[tuple[str, list[tuple[Any, ...]]]] = []
    for expression in expressions:
        count = sum(f"c{i}()" in expression for i in range(6))
        assignments: list[tuple[Any, ...]] = list(itertools.product((False, True),
                                                                    repeat=count))
        rng.shuffle(assignments)
        assignments = assignments[:rng.randint(1, len(assignments))]
        for _ in range(3):
            raising = list(rng.choice(assignments))
            raising[rng.randrange(count)] = "raise"
            assignments.append(tuple(raising))
        runs.append((expression, assignments))
    # each decision in a function of its own, over conditions that read a shared list
    lines = ["VALUES = []", "class Operand:", "    def __init__(self, value):",
             "        self.value = value", "    def __bool__(self):",
             "        return self.value", "def _condition(i):",
             "    value = VALUES[i]", "    if value == 'raise':",
             "        raise ValueError(i)", "    return Operand(value)"]
    for n in range(6):
        lines.append(f"def c{n}():\n    return _condition({n})")
    for index, (expression, _assignments) in enumerate(runs):
        lines.append(f"def decision_{index}():\n    if {expression}:\n        return True\n"
                     "    return False")
    source = "\n".join(lines) + "\n"

    def run(module: Any) -> None:
        for index, (_expression, assignments) in enumerate(runs):
            for assignment in assignments:
                module.VALUES[:] = list(assignment)
                with contextlib.suppress(ValueError):
                    getattr(module, f"decision_{index}")()

    profiles = _measure(tmp_path, source, run)
    for index, (expression, assignments) in enumerate(runs):
        oracle = traced_vectors(expression, assignments)
        recorded = _recorded(profiles[f"decision_{index}"])
        assert len(recorded) == 1
        assert recorded[0]["vectors"] == dict(oracle["vectors"]), expression
        assert recorded[0]["raised"] == dict(oracle["raised"]), expression
        verdicts = mcdc_by_definition(expression, list(oracle["vectors"]))
        assert recorded[0]["condition_covered"] == tuple(verdicts["condition_covered"])
        assert recorded[0]["mcdc_unique"] == tuple(verdicts["unique"]), expression
        assert recorded[0]["mcdc_masking"] == tuple(verdicts["masking"]), expression


def test_a_done_decision_goes_back_to_plain_code(tmp_path: Path) -> None:
    """With stop-counting, a function whose paths span its basis goes back to its
    original code with its decisions still counting; once they are done too (every
    vector, or MC/DC in both forms), to the original code as written: later runs are
    not counted. One with a decision short of MC/DC keeps counting its vectors,
    exactly, after its paths went back."""
    source = ("def done(a, b):\n    if a and b:\n        return 1\n    return 0\n"
              "def short(a, b):\n    if a or b:\n        return 1\n    return 0\n")

    def run(module: Any) -> None:
        for a, b in ((True, True), (True, False), (False, True)):
            module.done(a, b)
        for _ in range(5):
            module.done(True, True)  # after it went back: not counted
        for a, b in ((False, False), (True, False)) * 3:
            module.short(a, b)  # b is never shown: it keeps counting

    profiles = _measure(tmp_path, source, run, stop_counting="basis")
    done, short = profiles["done"], profiles["short"]
    assert done.stopped
    assert short.stopped
    assert sum(done.counts.values()) == 2  # its two paths, then back
    assert sum(short.counts.values()) == 2
    assert sum(decision_coverage(done)[0].counts.values()) == 3
    assert sum(decision_coverage(short)[0].counts.values()) == 6


def test_a_branch_after_an_unfolded_elif_runs_its_probes_once(tmp_path: Path) -> None:
    """argparse's ``HelpFormatter._expand_help``, cut down (its tests given a second
    condition, as one condition is counted by its branches and left as written): on
    CPython 3.13 and 3.14 an
    unfolded test jumped to the ``else`` branch from two places, and the compiler laid
    out that branch's path probe (code without a location) so that it ran twice: the
    path register overran its table (IndexError). The program must run as written,
    and its paths count as without conditions."""
    source = (
        "SUPPRESS = object()\n"
        "class Action:\n"
        "    pass\n"
        "def expand(action):\n"
        "    params = dict(vars(action))\n"  # (vars: its registers are kept outside)
        "    for name in list(params):\n"
        "        value = params[name]\n"
        "        if value is SUPPRESS and name:\n"
        "            del params[name]\n"
        "        elif hasattr(value, '__name__') and name:\n"
        "            params[name] = value.__name__\n"
        "    if params.get('choices') is not None and params:\n"
        "        params['choices'] = str(params['choices'])\n"
        "    return params\n")

    results = []

    def run(module: Any) -> None:
        action = module.Action()
        action.__dict__.update({"a": 1, "b": module.SUPPRESS, "c": int, "choices": None})
        results.append(module.expand(action))

    profiles = _measure(tmp_path, source, run)
    plain = _measure(tmp_path, source, run, conditions=False)
    assert results == [{"a": 1, "c": "int", "choices": None}] * 2
    assert profiles["expand"].counts == plain["expand"].counts
    # (F,-) (T,F) (T,T) of each: value is SUPPRESS false 3 times, then true once;
    # hasattr(...) false twice, true once; choices is not None false once
    assert [sorted(d.counts.items()) for d in decision_coverage(profiles["expand"])] == [
        [(0, 3), (2, 1)], [(0, 2), (2, 1)], [(0, 1)]]


def test_a_branch_test_of_one_condition_is_counted_by_its_branches() -> None:
    """An ``if``, ``elif`` or ``while`` test of one condition is left as written: its
    two vectors are its outcomes, which the path profile counts (the test block's true
    and false edges). A test of two conditions, or one in a conditional expression
    (which makes no branch of the CFG), is unfolded."""
    source = ("def f(x, y):\n    while x > 0:\n        x -= 1\n    if y:\n        return 1\n"
              "    elif x and y:\n        return 2\n    return 3 if y else 4\n")
    module = instrument_source(source, "f.py", conditions=True)
    (function,) = module.metadata.functions
    assert [(d.text, d.slot) for d in function.decisions] == [
        ("x > 0", -1), ("y", -1), ("x and y", 0), ("y", 3)]
    text = ast.unparse(module.tree)
    assert "while x > 0:" in text
    assert "if y:" in text
    assert "elif x and y:" not in text
