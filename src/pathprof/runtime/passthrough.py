"""What pathprof's code inside the program lets through to it: exceptions that a
signal handler raised (standard library only).

pathprof's code that runs inside the measured program (a path's first-run report,
the decoding of the path an exception cut, the subpath sampler, an import's
instrumenting) keeps its own failures from the program with broad ``except``
clauses: a bug of pathprof's, or a module's globals gone as the interpreter shuts
down, must not change what the program does. But Python runs a signal handler in
the main thread between two bytecodes (where it checks its eval breaker: calls,
backward jumps, function entry), whatever that thread runs then -- pathprof's code
too, inside such a ``try``. What the handler raises there (``KeyboardInterrupt``
from the default SIGINT handler, a ``Timeout`` an alarm's handler raises) is the
program's, and swallowing it would make Ctrl-C do nothing or an alarm fail to break
a loop.

Why not keep handlers out of pathprof's code instead: blocking signals with
``pthread_sigmask`` in the main thread only moves a process-directed signal to
another thread, whose C-level handler trips the flag the main thread checks at its
next bytecode -- the Python handler then runs in the main thread, inside pathprof's
code, all the same; and replacing the program's handlers around every report would
cost two system calls per signal per report on the fast path of first runs, and
delay the program's handler. So every broad ``except`` of pathprof's inside the
program asks :func:`must_pass` and re-raises (a bare ``raise``: traceback intact)
what it says, and keeps swallowing only the rest.

The rule: an exception passes if

* it is not an :class:`Exception` (``KeyboardInterrupt``, ``SystemExit`` from a
  handler that calls ``sys.exit``, ``GeneratorExit``): never one of pathprof's
  failures;
* or its traceback passes through the frame of a Python signal handler: a frame
  running the code of a handler installed now (:func:`signal.getsignal`, for every
  signal; a bound method's function, a callable object's ``__call__``), or a frame
  called with the frame before it in the traceback among its arguments -- the way
  Python calls a handler, ``handler(signum, frame)``, and a way no code of
  pathprof's calls anything (this one covers a handler that put another in its
  place before raising);
* or the exception it was raised from, or while handling (``__cause__``,
  ``__context__``), passes.

What it cannot tell: a handler written in C that raises an ``Exception`` (it has no
frame; Python's own raises ``KeyboardInterrupt``, which passes).

An exception that passes unwinds pathprof's code wherever it stood, so what that code
holds must not be left held: :class:`SafeLock` is the lock pathprof's code inside
the program takes. (On 3.14 ``with lock:`` on a ``threading`` lock leaves the lock
held when a handler raises just after ``__enter__`` returned, CPython issue
gh-148874; and a handler that runs, in the main thread, code that needs a lock the
main thread holds must not deadlock.)

Everything here runs in ``except`` clauses, so it holds no module global it needs
at call time (the interpreter sets them to None as it shuts down): what it uses is
bound as default arguments, and callers hold :func:`must_pass` as a class attribute.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # (no stub: signal.getsignal wraps it)
import _thread
import signal
from types import FrameType, FunctionType, MethodType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import CodeType

__all__ = ["SafeLock", "must_pass"]

#: The flag of a code object whose function takes ``*args``.
_VARARGS = 0x04
_SIGNALS = tuple(sorted(int(number) for number in signal.valid_signals()))


def _handler_codes(getsignal: Callable[[int], Any] = _signal.getsignal,
                   numbers: tuple[int, ...] = _SIGNALS, function: type = FunctionType,
                   method: type = MethodType) -> set[CodeType]:
    """The code objects of the Python signal handlers installed now. (``_signal``'s
    ``getsignal``, which :func:`signal.getsignal` wraps to turn ``SIG_DFL`` and
    ``SIG_IGN`` into enum members: asked for every signal at every exception a
    handler may have raised, the wrapping took three quarters of the time, measured.)"""
    # (getsignal's result is Any: a handler is told apart by its exact type, ``kind``
    # below, which mypy does not narrow ``handler`` by)
    codes = set()
    for number in numbers:
        try:
            handler = getsignal(number)
        except (ValueError, OSError):  # (a number this platform lists but refuses)
            continue
        if handler is None or type(handler) is int:
            continue  # SIG_DFL, SIG_IGN, or a handler not set from Python
        for _ in range(4):  # a method of a callable object...
            kind = type(handler)
            if kind is function:
                codes.add(handler.__code__)
                break
            if kind is method:
                handler = handler.__func__
                continue
            call = next((klass.__dict__["__call__"] for klass in kind.__mro__
                         if "__call__" in klass.__dict__), None)
            if call is None or kind.__module__ == "builtins":
                break  # SIG_DFL, SIG_IGN, None, a builtin such as default_int_handler
            handler = call
    return codes


def _called_with(frame: FrameType, caller: FrameType, varargs: int = _VARARGS) -> bool:
    """Whether ``frame``'s function was given ``caller`` (a frame) as an argument."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    names = code.co_varnames[:count + (1 if code.co_flags & varargs else 0)]
    values = frame.f_locals  # (a finished frame's: the traceback keeps them)
    for i, name in enumerate(names):
        value = values.get(name)
        if value is caller:
            return True
        if i == count and type(value) is tuple and any(v is caller for v in value):
            return True
    return False


def must_pass(exc: BaseException, _base: type[Exception] = Exception,
              _codes: Callable[[], set[CodeType]] = _handler_codes,
              _called: Callable[[FrameType, FrameType], bool] = _called_with) -> bool:
    """Whether ``exc``, caught by pathprof's code inside the program, is the program's
    and must be raised on (see the module docstring); else it is pathprof's own
    failure, which the caller keeps from the program."""
    if not isinstance(exc, _base):
        return True
    handlers = None
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo and len(seen) < 64:  # (the program may chain its exceptions in a cycle)
        current: BaseException | None = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if not isinstance(current, _base):
            return True
        tb = current.__traceback__
        caller = None
        while tb is not None:
            frame = tb.tb_frame
            if caller is not None:  # (not the first: the catching frame, still running)
                if handlers is None:
                    handlers = _codes()
                if frame.f_code in handlers or _called(frame, caller):
                    return True
            caller = frame
            tb = tb.tb_next
        todo.append(current.__cause__)
        todo.append(current.__context__)
    return False


_acquire = _thread.RLock.acquire
_release = _thread.RLock.release


class SafeLock(_thread.RLock):  # type: ignore[misc]  # (typeshed: final; it is not)
    """A reentrant lock that no signal handler's exception leaves held, however it
    comes: ``with lock:`` acquires it or raises having left it as it was, and
    releases it on the way out (``threading.RLock``'s C ``__exit__``).

    Where a handler may raise, and why this holds (on 3.11 to 3.14):

    * as ``__enter__`` starts (its frame's entry check): nothing is held yet;
    * while the acquire waits (it runs the handlers, and fails if one raises):
      nothing is held;
    * right after the acquire: the acquire is called from C, by ``map``, and its
      result stored by ``list.extend``, also in C, with no bytecode between them, so
      the ``except`` clause knows it holds the lock, and releases it;
    * as ``__enter__`` returns: a call of a Python function is not followed by an
      eval-breaker check (3.11 to 3.13: ``BEFORE_WITH`` calls it from C; 3.14: the
      call is inlined), so no handler runs before the body's protection starts --
      which is where a ``__enter__`` written in C leaves a lock held on 3.14;
    * on the way out: the C ``__exit__`` releases first; a handler runs after.

    Reentrant, so a handler that runs in the main thread while it holds the lock
    (between two bytecodes of the section) and needs the lock again does not
    deadlock."""

    __slots__ = ()

    # (Any: these stand where RLock.__enter__ has ``blocking: bool, timeout: float``,
    # so a precise type would fail the override check; they are bound here, never
    # passed: the RLock's acquire and release)
    def __enter__(self, acquire: Any = _acquire, release: Any = _release) -> bool:
        got: list[bool] = []
        try:
            got.extend(map(acquire, (self,)))
        except BaseException:
            if got:
                release(self)
            raise
        return True
