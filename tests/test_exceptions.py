"""The exceptions of :mod:`pathprof.exceptions`: one base class every error pathprof
raises on purpose derives from (so a face catches them all with one ``except``), and
a subclass per cause that is not any other cause's (catching one never catches
another), each an ordinary :class:`Exception` carrying its message."""

from __future__ import annotations

import itertools

import pytest

from pathprof.exceptions import CfgError, ConfigError, DataError, NoDataError, PathprofError

CAUSES = [CfgError, ConfigError, DataError, NoDataError]


def test_the_base_class_is_an_ordinary_exception() -> None:
    assert issubclass(PathprofError, Exception)
    # not a BaseException outside Exception: ``except Exception`` catches it
    assert PathprofError.__mro__[1] is Exception


@pytest.mark.parametrize("cause", CAUSES, ids=lambda c: c.__name__)
def test_every_cause_is_caught_by_the_base_class(cause: type[PathprofError]) -> None:
    with pytest.raises(PathprofError) as caught:
        raise cause("what went wrong")
    assert type(caught.value) is cause
    assert str(caught.value) == "what went wrong"


@pytest.mark.parametrize(("one", "other"), list(itertools.permutations(CAUSES, 2)),
                         ids=lambda c: c.__name__)
def test_no_cause_is_caught_as_another(one: type[PathprofError],
                                       other: type[PathprofError]) -> None:
    assert not issubclass(one, other)
    caught_as_other = False
    try:
        raise one("x")
    except other:
        caught_as_other = True
    except PathprofError:
        pass
    assert not caught_as_other


def test_every_cause_derives_from_the_base_class_directly() -> None:
    assert [c.__bases__ for c in CAUSES] == [(PathprofError,)] * len(CAUSES)
