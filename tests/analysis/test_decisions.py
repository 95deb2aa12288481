"""Tests for pathprof.analysis.decisions: what a path decides -- the branch it takes at
each block with a choice (a fall-off branch named by what it is, the branch back to a
loop's header or out of the function included) -- and the path told on one line: by
its blocks' first lines (:func:`path_brief`) and as the steps a test writer takes, with
the deciding code quoted from the source (:func:`path_steps`, :func:`path_story`).
Functions are instrumented in memory; paths are written out by hand from the blocks
each function's comment lists."""

from __future__ import annotations

import textwrap

import pytest

from pathprof.analysis.decisions import (
    CODE_WIDTH,
    decisions,
    edge_label,
    path_brief,
    path_steps,
    path_story,
)
from pathprof.data.profile import FunctionProfile, Path
from pathprof.python.instrument import instrument_source

FILE = "/project/subject.py"

# Block numbers (ENTRY 0, EXIT 1) as the front end gives them, in the comments.
SOURCE = textwrap.dedent('''\
    def two(a, b):
        x = 0
        if a:
            x += 1
        if b:
            x += 2
        return x


    def total(items):
        n = 0
        for x in items:
            if x > 2:
                n += x
        return n


    def guarded(d, k):
        try:
            v = d[k]
        except KeyError:
            v = None
        return v


    def falls(x):
        if x:
            y = 1


    def check(x):
        if x: return 1
        raise ValueError("no")


    def straight(x):
        return x + 1


    def wide(first_argument, second_argument, third_argument_with_a_long_name):
        if first_argument and second_argument and third_argument_with_a_long_name:
            return 1
        return 0
    ''')
LINES = SOURCE.splitlines()
# two:      2 = `x = 0; if a` (lines 2-3), 3 = `x += 1`, 4 = `if b`, 5 = `x += 2`,
#           6 = `return x`; 2 -true-> 3, 2 -false-> 4, 4 -true-> 5, 4 -false-> 6
# total:    2 = `n = 0` + the iterable (lines 11-12), 3 = the next item (line 12),
#           4 = `if x > 2`, 5 = `n += x`, 6 = `return n`; backedges 5->3 and 4->3
# guarded:  2 = `v = d[k]`, 3 = the handler (`except at line 21`), 4 = `return v`
# falls:    2 = `if x` (line 27), 3 = `y = 1`; 2 -> EXIT is the false branch falling off the end
# check:    2 = `if x`, 3 = `return 1` (same line), 4 = `raise ValueError`
# straight: 2 = `return x + 1`
# wide:     2 = the long test (line 41), 3 = `return 1`, 4 = `return 0`


def _functions() -> dict[str, FunctionProfile]:
    module = instrument_source(SOURCE, FILE).metadata
    return {meta.qualname: FunctionProfile(FILE, meta.qualname, meta.code_line,
                                           module.source_hash, meta)
            for meta in module.functions}


FUNCTIONS = _functions()


def fn(name: str) -> FunctionProfile:
    return FUNCTIONS[name]


def path(blocks: tuple[int, ...], start: str = "entry", end: str = "return") -> Path:
    return Path(0, blocks, start, end, 1)


def test_the_blocks_are_those_the_comments_name() -> None:
    # the hand-written paths below rest on these
    two = fn("two")
    assert [two.block_lines(b) for b in range(2, 7)] == [(2, 3), (4, 4), (5, 5), (6, 6),
                                                          (7, 7)]
    assert fn("guarded").meta.blocks[3].label == "except at line 21"
    assert [(e.src, e.dst, e.label) for e in fn("falls").meta.edges] == [
        (0, 2, "call"), (2, 3, "true"), (3, 1, "return"), (2, 1, "return")]


# ---------------------------------------------------------------------------
# edge_label and decisions


def test_a_branch_falling_off_the_end_is_named_by_its_branch() -> None:
    falls = fn("falls").meta
    assert edge_label(falls, 3) == "false"  # the CFG calls it "return"
    assert edge_label(falls, 1) == "true"
    assert edge_label(falls, 2) == "return"  # a real return stays one


def test_each_block_with_a_choice_gives_the_branch_taken_and_its_last_line() -> None:
    assert decisions(fn("two"), path((2, 3, 4, 6))) == [
        {"block": 2, "line": 3, "taken": "true"},
        {"block": 4, "line": 5, "taken": "false"}]
    assert decisions(fn("two"), path((2, 4, 5, 6))) == [
        {"block": 2, "line": 3, "taken": "false"},
        {"block": 4, "line": 5, "taken": "true"}]


def test_a_straight_line_path_decides_nothing() -> None:
    assert decisions(fn("straight"), path((2,))) == []
    assert decisions(fn("guarded"), path((2, 4))) == []


def test_the_last_block_decides_the_way_out_of_the_function() -> None:
    # falls with x false: the test's false branch goes to EXIT
    assert decisions(fn("falls"), path((2,))) == [{"block": 2, "line": 27,
                                                   "taken": "false"}]
    # a raise: EXIT is appended as for a return
    assert decisions(fn("check"), path((2, 4), end="raise")) == [
        {"block": 2, "line": 32, "taken": "false"}]


def test_a_path_ending_on_a_backedge_decides_the_branch_back_to_the_header() -> None:
    total = fn("total")
    # an iteration that skips `n += x`: the test's false branch is the backedge 4->3
    assert decisions(total, path((3, 4), "loop-header", "loop-back")) == [
        {"block": 3, "line": 12, "taken": "next"},
        {"block": 4, "line": 13, "taken": "false"}]
    # one that adds: 5 -> 3 is 5's only way on, no decision there
    assert decisions(total, path((2, 3, 4, 5), end="loop-back")) == [
        {"block": 3, "line": 12, "taken": "next"},
        {"block": 4, "line": 13, "taken": "true"}]
    # the loop exhausted at once
    assert decisions(total, path((2, 3, 6))) == [
        {"block": 3, "line": 12, "taken": "exhausted"}]


def test_a_path_cut_short_decides_only_what_it_reached() -> None:
    # an exception in `x += 1`: no way out of block 3 is known
    assert decisions(fn("two"), path((2, 3), end="exception")) == [
        {"block": 2, "line": 3, "taken": "true"}]


# ---------------------------------------------------------------------------
# path_brief


def test_a_brief_gives_each_blocks_first_line_and_the_branches() -> None:
    assert path_brief(fn("two"), path((2, 3, 4, 6))) == "2 → true · 4 · 5 → false · 7"
    assert path_brief(fn("straight"), path((2,))) == "37"


def test_a_brief_says_how_a_path_starts_and_ends_when_it_is_not_entry_and_return(
        ) -> None:
    total = fn("total")
    assert path_brief(total, path((3, 4), "loop-header", "loop-back")) == (
        "(loop-header) · 12 → next · 13 → false · (loop-back)")
    assert path_brief(fn("guarded"), path((3, 4), "handler")) == "(handler) · 22 · 23"
    assert path_brief(fn("two"), path((2, 3), end="exception")) == (
        "2 → true · 4 · (exception)")


def test_blocks_on_one_line_are_one_step_of_the_brief() -> None:
    # `if x: return 1`: the test and the return share line 32
    assert path_brief(fn("check"), path((2, 3))) == "32 → true"
    assert path_brief(fn("check"), path((2, 4), end="raise")) == "32 → false · 33 · (raise)"


# ---------------------------------------------------------------------------
# path_steps and path_story


def test_steps_quote_the_deciding_code_with_the_branch_to_take() -> None:
    assert path_steps(fn("two"), path((2, 3, 4, 6)), LINES) == [
        {"line": 3, "code": "if a:", "taken": "true"},
        {"line": 5, "code": "if b:", "taken": "false"}]


def test_without_the_source_steps_have_no_code_and_the_story_line_numbers() -> None:
    steps = path_steps(fn("two"), path((2, 3, 4, 6)), None)
    assert steps == [{"line": 3, "code": None, "taken": "true"},
                     {"line": 5, "code": None, "taken": "false"}]
    assert path_story(fn("two"), path((2, 3, 4, 6)), None) == (
        "line 3 → true · line 5 → false")


def test_a_story_tells_the_steps_in_the_words_of_the_source() -> None:
    assert path_story(fn("two"), path((2, 4, 5, 6)), LINES) == (
        "if a: → false · if b: → true")


def test_an_iteration_starts_after_one_and_goes_round_again() -> None:
    total = fn("total")
    steps = path_steps(total, path((3, 4, 5), "loop-header", "loop-back"), LINES)
    assert steps == [
        {"line": None, "code": None, "taken": "after an iteration"},
        {"line": 12, "code": "for x in items:", "taken": "next"},
        {"line": 13, "code": "if x > 2:", "taken": "true"},
        {"line": None, "code": None, "taken": "round the loop again"}]
    assert path_story(total, path((3, 4, 5), "loop-header", "loop-back"), LINES) == (
        "(after an iteration) · for x in items: → next · if x > 2: → true · "
        "(round the loop again)")


def test_a_handler_path_starts_raised_into_at_the_except_line() -> None:
    guarded = fn("guarded")
    steps = path_steps(guarded, path((3, 4), "handler"), LINES)
    assert steps == [{"line": 21, "code": "except KeyError:", "taken": "raised into"}]
    # handlers often read alike: the story names the line too
    assert path_story(guarded, path((3, 4), "handler"), LINES) == (
        "except KeyError: (line 21) → raised into")
    assert path_story(guarded, path((3, 4), "handler"), None) == "line 21 → raised into"


def test_a_raise_is_the_last_step() -> None:
    check = fn("check")
    assert path_steps(check, path((2, 4), end="raise"), LINES) == [
        {"line": 32, "code": "if x: return 1", "taken": "false"},
        {"line": None, "code": None, "taken": "raises"}]
    assert path_story(check, path((2, 4), end="raise"), None) == "line 32 → false · (raises)"


def test_a_path_with_no_decision_is_straight_through() -> None:
    assert path_steps(fn("straight"), path((2,)), LINES) == []
    assert path_story(fn("straight"), path((2,)), LINES) == "(straight through)"


def test_long_code_is_cut_to_the_width_with_an_ellipsis() -> None:
    (step,) = path_steps(fn("wide"), path((2, 3)), LINES)
    code = step["code"]
    assert code is not None
    assert len(code) == CODE_WIDTH == 60
    assert code == LINES[40].strip()[:59] + "…"
    assert step["taken"] == "true"


@pytest.mark.parametrize("lines", [[], ["only one line"]])
def test_a_line_outside_the_source_at_hand_has_no_code(lines: list[str]) -> None:
    # source of another length (it changed): the line number stays, no code
    assert path_steps(fn("two"), path((2, 3, 4, 6)), lines) == [
        {"line": 3, "code": None, "taken": "true"},
        {"line": 5, "code": None, "taken": "false"}]
