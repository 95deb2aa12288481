"""pathprof.runtime.passthrough: which exceptions caught by pathprof's code inside the
program are the program's (``must_pass``): anything not an ``Exception``, one whose
traceback passes through a Python signal handler installed now (a function, a bound
method, a callable object) or through a frame called with the frame before it (how
Python calls a handler), and one raised from or while handling such an exception;
pathprof's own failures are not. And :class:`SafeLock`: reentrant, released on the way
out of ``with`` whatever the body raised, and never left held by an acquire that
raised. Handlers are installed for SIGUSR1 only, and put back after each test."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

import pytest

from pathprof.runtime.passthrough import SafeLock, must_pass

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGUSR1"), reason="needs SIGUSR1")


@pytest.fixture
def usr1() -> Iterator[None]:
    """SIGUSR1's handler as it was, after the test."""
    before = signal.getsignal(signal.SIGUSR1)
    yield
    signal.signal(signal.SIGUSR1, before)


def _caught(run: object) -> BaseException:
    try:
        run()  # type: ignore[operator]
    except BaseException as err:
        return err
    raise AssertionError("nothing raised")


def _failing() -> None:
    raise ValueError("pathprof's own failure")


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit, GeneratorExit])
def test_what_is_not_an_exception_always_passes(error: type[BaseException]) -> None:
    assert must_pass(error())
    assert must_pass(_caught(lambda: (_ for _ in ()).throw(error)))


def test_pathprofs_own_failure_does_not_pass() -> None:
    assert not must_pass(_caught(_failing))
    assert not must_pass(ValueError("never raised: no traceback"))


def test_an_exception_raised_by_an_installed_handler_passes(usr1: None) -> None:
    def handler(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError("the program's alarm")

    signal.signal(signal.SIGUSR1, handler)
    assert must_pass(_caught(lambda: signal.raise_signal(signal.SIGUSR1)))


def test_a_handler_that_is_a_bound_method_or_a_callable_object_is_known(usr1: None
                                                                        ) -> None:
    class Alarm:
        def ring(self, signum: int, frame: object) -> None:
            self.deeper()

        def deeper(self) -> None:
            raise TimeoutError("from a method")

        def __call__(self, signum: int, frame: object) -> None:
            raise TimeoutError("from an object")

    alarm = Alarm()
    for installed in (alarm.ring, alarm):
        signal.signal(signal.SIGUSR1, installed)
        err = _caught(lambda: signal.raise_signal(signal.SIGUSR1))
        assert isinstance(err, TimeoutError)
        assert must_pass(err)


def test_the_handler_is_told_apart_by_its_code_in_the_traceback(usr1: None) -> None:
    """The same function installed as a handler, called by pathprof's code directly
    (not as ``handler(signum, frame)``): its frame is a handler's all the same."""
    def handler(signum: int, frame: object) -> None:
        raise TimeoutError

    signal.signal(signal.SIGUSR1, handler)
    assert must_pass(_caught(lambda: handler(0, None)))
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    assert not must_pass(_caught(lambda: handler(0, None)))  # no longer installed


def test_a_frame_called_with_the_frame_before_it_is_a_handlers() -> None:
    """How Python calls a handler, ``handler(signum, frame)``: so a handler that put
    another in its place before raising is still known."""
    def handler(signum: int, frame: object) -> None:
        raise TimeoutError

    def varargs(*args: object) -> None:
        raise TimeoutError

    def caller() -> None:
        handler(signal.SIGUSR1, sys._getframe())

    def caller_of_varargs() -> None:
        varargs(signal.SIGUSR1, sys._getframe())

    def other_frame() -> None:
        handler(signal.SIGUSR1, sys._getframe().f_back)  # not the frame before it

    assert must_pass(_caught(caller))
    assert must_pass(_caught(caller_of_varargs))
    assert not must_pass(_caught(other_frame))


def test_an_exception_raised_from_or_while_handling_one_that_passes_passes() -> None:
    def from_interrupt() -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as err:
            raise RuntimeError("pathprof's, while handling it") from err

    def during_interrupt() -> None:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("pathprof's, while handling it") from None

    assert must_pass(_caught(from_interrupt))
    err = _caught(during_interrupt)
    assert err.__cause__ is None
    assert isinstance(err.__context__, KeyboardInterrupt)
    assert must_pass(err)


def test_a_chain_of_pathprofs_own_failures_does_not_pass_even_in_a_cycle() -> None:
    def chained() -> None:
        try:
            _failing()
        except ValueError as err:
            raise RuntimeError("again") from err

    err = _caught(chained)
    assert not must_pass(err)
    first, second = ValueError("a"), ValueError("b")
    first.__context__, second.__context__ = second, first
    assert not must_pass(first)


def test_a_safe_lock_is_reentrant_and_free_after_its_with() -> None:
    lock = SafeLock()
    with lock, lock:
        assert lock._is_owned()  # type: ignore[attr-defined]
    assert not lock._is_owned()  # type: ignore[attr-defined]
    got: list[bool] = []
    thread = threading.Thread(target=lambda: got.append(lock.acquire(blocking=False)))
    thread.start()
    thread.join()
    assert got == [True]  # another thread takes it: it was left free


def test_a_safe_lock_held_by_another_thread_is_not_taken() -> None:
    lock = SafeLock()
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        with lock:
            taken.set()
            release.wait()

    thread = threading.Thread(target=hold)
    thread.start()
    taken.wait()
    try:
        assert lock.acquire(blocking=False) is False
    finally:
        release.set()
        thread.join()
    assert lock.acquire(blocking=False) is True
    lock.release()


@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError])
def test_a_safe_lock_is_released_whatever_its_body_raised(error: type[BaseException]
                                                          ) -> None:
    lock = SafeLock()
    with pytest.raises(error), lock:
        raise error
    assert not lock._is_owned()  # type: ignore[attr-defined]


def test_an_acquire_that_raises_leaves_the_lock_as_it_was() -> None:
    lock = SafeLock()

    def interrupted(self: object) -> bool:  # a handler's exception as the acquire waits
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        lock.__enter__(acquire=interrupted)
    assert not lock._is_owned()  # type: ignore[attr-defined]
    assert lock.__enter__() is True
    lock.__exit__(None, None, None)
    assert not lock._is_owned()  # type: ignore[attr-defined]
