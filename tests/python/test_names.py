"""Unit tests of :mod:`pathprof.python.names`, the registry of the names inserted
code uses: every name holds ``@`` (so it can never be one of the program's), the
locals start with ``@pp_`` and the module's names with ``_@pp_`` (those live in the
holder), the vector counters and the decision value are dunder globals outside the
holder, and a generator may read once only the module names that never change
while the program runs (:func:`is_capturable`, :func:`captured_name`)."""

from __future__ import annotations

import keyword

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof.python import names
from pathprof.python.names import (
    DECISION_VALUE,
    GLOBAL_PREFIX,
    LOCAL_PREFIX,
    captured_name,
    conditions_switch_name,
    counter_name,
    flag_name,
    in_holder,
    is_capturable,
    lengths_name,
    loop_mode_name,
    loop_switch_name,
    slot_name,
    star_name,
    switch_name,
    timer_name,
    vector_name,
)


def _all_constant_names() -> list[str]:
    """Every string constant of the module that names something (upper-case
    attributes holding ``@``)."""
    return [value for key, value in vars(names).items()
            if key.isupper() and isinstance(value, str) and "@" in value]


def test_the_builders_spell_the_documented_names() -> None:
    # Each builder's docstring (and the module's) gives its spelling.
    assert counter_name(3) == "_@pp_c3"
    assert timer_name(0) == "_@pp_t0"
    assert lengths_name(12) == "_@pp_l12"
    assert flag_name(2) == "@pp_k2"
    assert switch_name(5) == "_@pp_i5"
    assert conditions_switch_name(5) == "_@pp_k5"
    assert loop_switch_name(1, 4) == "_@pp_j1_4"
    assert star_name(0) == "@pp_e0"
    assert loop_mode_name(7) == "@pp_o7"
    assert slot_name(9) == "_@pp_g9"
    assert vector_name(11) == "__@pp_v11__"
    assert DECISION_VALUE == "__@pp_d__"


def test_no_name_is_an_identifier_a_program_could_write() -> None:
    built = [counter_name(0), timer_name(1), lengths_name(2), flag_name(3), switch_name(4),
             conditions_switch_name(5), loop_switch_name(6, 7), star_name(8),
             loop_mode_name(9), slot_name(10), vector_name(11)]
    for name in [*_all_constant_names(), *built]:
        assert "@" in name, name
        assert not name.isidentifier(), name
        assert not keyword.iskeyword(name)


def test_locals_and_module_names_have_their_prefixes() -> None:
    assert LOCAL_PREFIX == "@pp_"
    assert GLOBAL_PREFIX == "_@pp_"
    for local in (names.REGISTER, names.RETURN_VALUE, names.PATH_START, names.NOW,
                  names.LOCAL_TABLE, names.COUNTDOWN_LEFT, names.TRACK, names.CALLER_LOCALS,
                  names.THREAD, names.BASE, names.DONE, names.TEMP, names.SENT, names.TOTAL,
                  flag_name(0), star_name(0), loop_mode_name(0)):
        assert local.startswith(LOCAL_PREFIX), local
    for module_name in (names.RUNTIME, names.HOLDER, names.MODULE, names.CLOCK,
                        names.COUNTDOWN, names.OBSERVING, names.NOTE, names.GETFRAME,
                        names.GETATTR, names.IDENTITY, names.NO_LOCALS, names.TRACK_TYPE,
                        names.PARKED, names.LOCAL, names.SINGLE, names.BUDGET, names.SELF,
                        counter_name(0), switch_name(0), slot_name(0)):
        assert module_name.startswith(GLOBAL_PREFIX), module_name


def test_parked_and_pending_share_one_name() -> None:
    # One module is instrumented in one mode, so a name serves two modes.
    assert names.PARKED == names.PENDING == "_@pp_P"


def test_the_holder_keeps_the_module_names_only() -> None:
    assert in_holder("_@pp_c0")
    assert in_holder(names.MODULE)
    assert in_holder(names.HOLDER)
    assert not in_holder(names.REGISTER)  # a local
    assert not in_holder(vector_name(0))  # a dunder global
    assert not in_holder(DECISION_VALUE)
    assert not in_holder("x")


def test_vector_counters_are_dunder_names() -> None:
    # ``import *`` and a loop deleting private names pass over names with two
    # underscores at both ends, and no class body mangles them.
    for slot in (0, 1, 99):
        name = vector_name(slot)
        assert name.startswith("__")
        assert name.endswith("__")
    assert DECISION_VALUE.startswith("__")
    assert DECISION_VALUE.endswith("__")


@pytest.mark.parametrize("name", ["_@pp_i3", "_@pp_j0_1", "_@pp_j12_40", "_@pp_k2",
                                  "_@pp_O", "_@pp_B", "_@pp_G", "_@pp_H"])
def test_names_that_change_while_the_program_runs_are_not_captured(name: str) -> None:
    assert not is_capturable(name)


@pytest.mark.parametrize("name", ["_@pp_c3", "_@pp_m", "_@pp_rt", "_@pp_Q", "_@pp_note",
                                  "_@pp_t0", "_@pp_l1", "_@pp_g4", "_@pp_P", "_@pp_S",
                                  "_@pp_L"])
def test_names_fixed_once_the_module_runs_are_captured(name: str) -> None:
    assert is_capturable(name)


@pytest.mark.parametrize("name", ["@pp_r", "x", "__@pp_v0__", "_@pp_i", "_@pp_j1",
                                  "_@pp_i3x"])
def test_capturable_is_decided_by_the_whole_name(name: str) -> None:
    # Locals and dunder globals are never captured; a name is mutable only if the
    # whole of it matches (``_@pp_i`` without a number, ``_@pp_j1`` without an
    # ordinal, ``_@pp_i3x`` are no switch names).
    expected = name.startswith(GLOBAL_PREFIX)
    assert is_capturable(name) is expected


def test_a_captured_name_is_a_local_with_a_g() -> None:
    assert captured_name("_@pp_c3") == "@pp_gc3"
    assert captured_name("_@pp_m") == "@pp_gm"
    assert captured_name("_@pp_rt").startswith(LOCAL_PREFIX)


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
               min_size=1, max_size=8))
def test_captured_names_are_distinct_locals(suffix: str) -> None:
    name = GLOBAL_PREFIX + suffix
    local = captured_name(name)
    assert local == LOCAL_PREFIX + "g" + suffix
    assert not in_holder(local)  # a local, not one of the holder's


def test_the_observed_floor_is_far_below_zero() -> None:
    # The countdown's floor while blocks are observed: -(2**29).
    assert names.OBSERVED_FLOOR == -536870912


def test_code_version_is_a_positive_integer() -> None:
    assert isinstance(names.CODE_VERSION, int)
    assert names.CODE_VERSION >= 38  # the docstring lists versions up to 38
