"""Run a Python program as ``__main__``, the way ``python script.py`` or ``python -m`` does.

``sys.argv``, ``sys.path[0]`` and a fresh ``__main__`` module are set up as the
interpreter would; the script's own code object comes from a caller-supplied
compile function, so the script itself can be instrumented. A script that does
not parse raises the same :class:`SyntaxError` plain Python would.
"""

from __future__ import annotations

import atexit
import builtins
import importlib.machinery
import operator
import os
import re
import runpy
import shutil
import sys
import sysconfig
import threading
import traceback
import types
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, NoReturn, Protocol, TypeVar

from pathprof.exceptions import ConfigError

__all__ = ["Ending", "ExitBoundary", "compile_script", "finish_as_python",
           "reinstate_program", "resolve_program", "run_module", "run_script"]

CompileFn = Callable[[bytes, str], types.CodeType]
#: What the program's own code runs in: a context manager factory
#: (:meth:`pathprof.runtime.own_work.released` in a run, so that the runner's work
#: around it is pathprof's, not the program's).
ProgramWindow = Callable[[], AbstractContextManager[object]]
#: The run's result: what :meth:`Ending.report` returns.
_R = TypeVar("_R")
_R_co = TypeVar("_R_co", covariant=True)


def resolve_program(name: str) -> tuple[str, bool]:
    """The file to run for ``name``: a path, or a console script -- of this
    interpreter's environment first (beside ``sys.executable``, or its scripts
    directory), then on PATH, where a shim (pyenv's) may stand for another one.

    Returns the file and whether it was found as a console script (then the current
    directory, not the script's, is what the user means to measure).
    """
    if os.path.exists(name):
        return os.path.abspath(name), False
    own = os.pathsep.join(dict.fromkeys([os.path.dirname(sys.executable),
                                         sysconfig.get_path("scripts")]))
    found = None if os.sep in name else shutil.which(name, path=own)
    found = found or shutil.which(name)
    if found is not None:
        try:
            with open(found, "rb") as f:
                first = f.readline()
        except OSError as err:
            raise ConfigError(f"cannot read {found}: {err.strerror}") from err
        if first.startswith(b"#!") and b"python" not in first:
            raise ConfigError(f"{found} is not a Python program")
        return found, True
    raise ConfigError(f"no such file or program: {name}")


class Ending(Protocol[_R_co]):
    """What Python does once the program's code has ended, before ``sys.argv``,
    ``sys.path`` and ``__main__`` are put back."""

    def report(self, ended: BaseException | None) -> _R_co:
        """Report the exception that ended the program (None: it ran to its end), as
        Python does; the result is the run's result."""

    def finish(self) -> None:
        """Then, what the interpreter does before it exits (threads, exit handlers)."""


#: The program's ``sys.argv``, ``sys.path[0]`` and ``__main__`` as its run left
#: them (see :func:`reinstate_program`). (Any: three kinds of item, replaced in place.)
_last_program: list[Any] = []


def reinstate_program() -> None:
    """Put back the ``sys.argv``, ``sys.path[0]`` and ``__main__`` of the program that
    ran last, which running it took away when it ended (so that pathprof's own work
    after it, such as a save, imports nothing of the program's directory): called as
    the process is about to exit, so that what runs as the interpreter shuts down
    (``__del__`` methods, the clearing of ``__main__``'s globals) sees what it would
    see without pathprof."""
    if not _last_program:
        return
    argv, path0, main = _last_program
    sys.argv = argv
    if path0 is not None:
        if sys.path:
            sys.path[0] = path0
        else:
            sys.path.append(path0)
    if main is not None:
        sys.modules["__main__"] = main


def _main_module(**attributes: object) -> types.ModuleType:
    """A fresh ``__main__`` with what the interpreter gives its own: the
    :mod:`builtins` module as ``__builtins__`` and, before 3.14 (PEP 649), an empty
    ``__annotations__``."""
    main = types.ModuleType("__main__")
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    if sys.version_info < (3, 14):
        main.__annotations__ = {}
    for name, value in attributes.items():
        setattr(main, name, value)
    return main


def _run(run: Callable[[], object], program: ProgramWindow, ending: Ending[_R] | None,
         prepare: Callable[[], object] = lambda: None,
         settle: Callable[[BaseException | None], object] = lambda ended: None,
         depth_from_c: int = 0) -> _R | None:
    """``prepare()``, then ``run()`` inside ``program()``; then, outside it (``ending``
    opens it again for what is the program's) and outside any ``except`` clause (so
    that nothing after sees an exception being handled, as Python's exit handlers see
    none): ``ending.report``, ``settle`` (what the interpreter does to ``__main__``
    then) and ``ending.finish``. What ``prepare`` raises (a script that does not
    compile) ends the program as what ``run`` raises does."""
    room = _RecursionRoom(depth_from_c)
    try:
        return _run_within(run, program, ending, prepare, settle, room)
    finally:
        room.put_back()


def _run_within(run: Callable[[], object], program: ProgramWindow, ending: Ending[_R] | None,
                prepare: Callable[[], object],
                settle: Callable[[BaseException | None], object],
                room: _RecursionRoom) -> _R | None:
    # (Any: the probe's globals, whatever its code puts there; "reached" is an int)
    probed: dict[str, Any] = {"reached": room.limit - 2}
    try:  # noqa: SIM105 - no contextlib: it may be a measured module
        (lambda: exec(_PROBE, probed))()  # (called from here, as ``run`` is)
    except Exception:  # (never expected: the program then runs with the limit it has)
        pass
    room.make_room(probed["reached"])
    if ending is None:
        prepare()
        with program():
            run()
        return None
    ended: BaseException | None = None
    try:
        prepare()
    except Exception as exc:  # the program's: a SyntaxError, as Python reports it
        ended = exc
    else:
        window = program()
        try:
            with window:
                try:
                    run()
                except BaseException as exc:  # the program's: handed to ``ending``
                    ended = exc
        except BaseException as exc:  # a signal handler's, as the window closed after
            # the program's last line: the program's end, as it would be without
            # pathprof, with the window's exit finished (it may not have begun)
            window.__exit__(None, None, None)
            exc.__context__ = ended
            ended = exc
    try:
        result = ending.report(ended)
        settle(ended)
    finally:
        ended = None  # no cycle through the traceback's frames
    ending.finish()
    return result


#: How deep a module's body can recurse: a function that calls itself until a
#: RecursionError, noting how deep it got (``python script.py`` gets to the limit
#: less 2, on every Python pathprof supports).
_PROBE = compile("def probe(n):\n    global reached\n    reached = n\n    probe(n + 1)\n"
                 "try:\n    probe(0)\nexcept RecursionError:\n    pass\n",
                 "<pathprof recursion probe>", "exec")


class _RecursionRoom:
    """The program gets the recursion depth plain Python gives it: ``python
    script.py`` runs the script's body at the bottom of the stack and ``python -m``
    under runpy's two frames, where here pathprof's own frames lie below (the command
    line, the run, this runner). For the time the program runs, the recursion limit
    is raised by what those frames take (``taken``), measured (:data:`_PROBE`, run as
    the program will be, from a lambda at the same depth), so that a RecursionError
    comes at the depth it comes without pathprof; and the program reads and sets the
    limit as it would without them: ``sys.getrecursionlimit`` and
    ``sys.setrecursionlimit`` are wrapped meanwhile to take ``taken`` off and add it on
    (what they refuse, they refuse as the originals do). Then the limit is put back as
    the program left it. Threads the program starts, which have none of pathprof's frames
    below them, get ``taken`` levels more (docs/guarantees.md)."""

    def __init__(self, depth_from_c: int = 0) -> None:
        self.limit = sys.getrecursionlimit()
        self.taken = 0
        #: what plain Python's C code takes of the depth on the way to what ``run``
        #: calls (runpy's ``_run_module_as_main`` is called from C there, from a
        #: lambda here: one level on 3.11; from 3.12 C calls take none, measured)
        self.depth_from_c = depth_from_c
        self._get = sys.getrecursionlimit
        self._set = sys.setrecursionlimit

    def make_room(self, reached: int) -> None:
        """Raise the limit by what :data:`_PROBE` shows pathprof's frames take: it got
        ``reached`` deep, run as the program will be."""
        taken = self.limit - 2 - reached - self.depth_from_c
        if taken <= 0:
            return
        try:
            self._set(self.limit + taken)
        except (RecursionError, ValueError, OverflowError):  # (never expected)
            return
        self.taken = taken
        get, set_ = self._get, self._set

        def getrecursionlimit() -> int:
            return get() - taken

        def setrecursionlimit(limit: int, /) -> None:
            try:
                value = operator.index(limit)
            except TypeError:
                value = None
            if value is None or value < 1:
                set_(limit)  # (what the original refuses, refused as it does)
                return
            set_(value + taken)

        for wrapper, original in ((getrecursionlimit, get), (setrecursionlimit, set_)):
            wrapper.__name__ = wrapper.__qualname__ = original.__name__
            wrapper.__doc__ = original.__doc__
            wrapper.__module__ = original.__module__
        sys.getrecursionlimit = getrecursionlimit
        sys.setrecursionlimit = setrecursionlimit

    def put_back(self) -> None:
        """The limit as the program left it, read and set as ever."""
        if not self.taken:
            return
        sys.getrecursionlimit, sys.setrecursionlimit = self._get, self._set
        try:  # noqa: SIM105 - no contextlib: it may be a measured module
            self._set(self._get() - self.taken)
        except (RecursionError, ValueError):  # (deeper than that: keep it)
            pass


# (Any: ``ending``'s result, or None without one. Not typed by @overload: typing's
# registry of overloads would keep this module, and the program's __main__ it holds
# in _last_program, alive past the runtime's modules as the interpreter shuts down.)
def run_script(path: str, args: Sequence[str], compile_fn: CompileFn,
               argv0: str | None = None, program: ProgramWindow = nullcontext,
               ending: Ending[Any] | None = None) -> Any:
    """Execute ``path`` as ``__main__`` with ``sys.argv = [argv0 or path, *args]``.

    ``__main__`` gets what ``python script.py`` gives it: ``__file__`` (absolute),
    ``__builtins__`` (the :mod:`builtins` module), a source ``__loader__``,
    ``__spec__`` and ``__package__`` None, ``__cached__`` None, and
    ``__annotations__`` where Python gives one. Only the script's code (and
    ``ending``) runs inside ``program()``: ``python script.py`` runs no Python code
    of its own around it."""
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}") from err
    main = _main_module(__file__=path, __cached__=None, __spec__=None, __package__=None,
                        __loader__=importlib.machinery.SourceFileLoader("__main__", path))
    old_main = sys.modules.get("__main__")
    old_argv, old_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.modules["__main__"] = main
    sys.argv = [argv0 or path, *args]
    directory = os.path.dirname(os.path.abspath(path))
    if sys.path:
        sys.path[0] = directory
    else:
        sys.path.append(directory)
    compiled: list[types.CodeType] = []

    def settle(ended: BaseException | None) -> None:
        # Python takes __file__ and __cached__ out of __main__ once the script has
        # ended (not on SystemExit, which exits from inside): exit handlers see that.
        if not isinstance(ended, SystemExit):
            main.__dict__.pop("__file__", None)
            main.__dict__.pop("__cached__", None)

    try:
        return _run(lambda: exec(compiled[0], main.__dict__), program, ending,
                    lambda: compiled.append(compile_fn(source, path)), settle)
    finally:
        _last_program[:] = [sys.argv, sys.path[0] if sys.path else None, main]
        sys.argv = old_argv
        if old_path0 is not None:
            if sys.path:
                sys.path[0] = old_path0
            else:  # the program emptied it
                sys.path.append(old_path0)
        if old_main is not None:
            sys.modules["__main__"] = old_main


def run_module(name: str, args: Sequence[str], program: ProgramWindow = nullcontext,
               ending: Ending[Any] | None = None) -> Any:  # (Any: as run_script's)
    """Execute module ``name`` as ``__main__``, as ``python -m name`` does: through
    :mod:`runpy`'s own ``_run_module_as_main``, in a fresh ``__main__`` module, all
    of it inside ``program()``. The import hook, already installed, instruments the
    module if it is selected. A module that cannot be found is a
    :class:`~pathprof.exceptions.ConfigError`; what the module itself fails to
    import is the program's error."""
    old_main = sys.modules.get("__main__")
    old_argv = sys.argv
    sys.argv = ["-m", *args]
    sys.modules["__main__"] = _main_module()
    if sys.path and sys.path[0] != os.getcwd():
        sys.path.insert(0, os.getcwd())
    not_found = f"{sys.executable}: No module named {name}"

    class NotFound:
        """``ending``, except that a module not found is a usage error."""

        def report(self, ended: BaseException | None) -> Any:
            if isinstance(ended, SystemExit) and ended.code == not_found:
                raise ConfigError(f"no module named {name}")
            if ending is None:
                if ended is not None:
                    raise ended
                return None
            return ending.report(ended)

        def finish(self) -> None:
            if ending is not None:
                ending.finish()

    try:
        return _run(lambda: runpy._run_module_as_main(name),  # type: ignore[attr-defined]
                    program, NotFound(), depth_from_c=1 if sys.version_info < (3, 12) else 0)
    finally:
        _last_program[:] = [sys.argv, sys.path[0] if sys.path else None,
                            sys.modules.get("__main__")]
        sys.argv = old_argv
        if old_main is not None:
            sys.modules["__main__"] = old_main


#: A coding declaration (PEP 263) on one of a file's first two lines.
_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)


def compile_script(source: bytes, path: str) -> types.CodeType:
    """Compile a script's bytes as ``python script.py`` does, failing the same way.

    Python reads a script file with its file tokenizer, whose error for bytes that
    are not UTF-8 in a file with no coding declaration names the file and the line
    ("Non-UTF-8 code starting with '\\xe9' in file ... on line 1, but no encoding
    declared"); ``compile`` on the bytes says otherwise ("(unicode error) 'utf-8'
    codec can't decode ..."). That case is given Python's error: before 3.14 with no
    location, from 3.14 at the line and column ``compile`` found. (A file that
    declares an encoding it does not follow fails as ``compile`` says.)"""
    try:
        return compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as err:
        head = b"\n".join(source.split(b"\n", 2)[:2])
        if source.startswith(b"\xef\xbb\xbf") or _CODING.search(head):
            raise
        try:
            source.decode("utf-8")
        except UnicodeDecodeError as bad:
            line = source.count(b"\n", 0, bad.start) + 1
            message = (f"Non-UTF-8 code starting with '\\x{source[bad.start]:02x}' in file "
                       f"{path} on line {line}, but no encoding declared; see "
                       "https://peps.python.org/pep-0263/ for details")
            if sys.version_info >= (3, 14):
                located = SyntaxError(message, (path, err.lineno, err.offset, err.text,
                                                err.end_lineno, err.end_offset))
            else:
                located = SyntaxError(message)
            raise located from None
        raise


class _NoNewThreads:
    """On 3.12, the exit handlers run while the interpreter is finalizing, where a
    thread cannot start ("can't create new thread at interpreter shutdown"); a run
    runs them before that, so the refusal is made here. (3.11, 3.13 and 3.14 start
    such threads.)"""

    def __enter__(self) -> None:
        self.patched = sys.version_info[:2] == (3, 12)
        if self.patched:
            self.original = threading._start_new_thread  # type: ignore[attr-defined]
            threading._start_new_thread = _refuse_thread  # type: ignore[attr-defined]

    def __exit__(self, *exc: object) -> None:
        if self.patched:
            threading._start_new_thread = self.original  # type: ignore[attr-defined]


def _refuse_thread(*args: object, **kwargs: object) -> NoReturn:
    raise RuntimeError("can't create new thread at interpreter shutdown")


class OwnWork(Protocol):
    """What :func:`finish_as_python` needs of :data:`pathprof.runtime.own_work`."""

    def __enter__(self) -> object: ...

    def __exit__(self, *exc: object) -> object: ...

    def released(self) -> AbstractContextManager[object]: ...


class ExitBoundary:
    """Where the program's ``atexit`` handlers end and those registered before it
    started begin (by the interpreter's start-up, by pathprof and by the modules
    pathprof imported): registered as the program starts, it runs after every handler
    the program registered (handlers run last registered first) and enters
    ``own_work``, so that the handlers left are not counted as the program's."""

    def __init__(self, own_work: OwnWork) -> None:
        self._own_work = own_work
        self.crossed = False
        atexit.register(self)

    def __call__(self) -> None:
        self.crossed = True
        self._own_work.__enter__()


def finish_as_python(own_work: OwnWork, boundary: ExitBoundary) -> None:
    """What the interpreter does once ``__main__``'s code has ended, before it exits:
    wait for the threads that are not daemons (after the threading module's own exit
    calls, which stop ``concurrent.futures`` workers), then run the ``atexit``
    handlers, last registered first. Called by a run before it saves, so that the
    profile holds what these run; the interpreter's own calls of both, at exit,
    then find nothing left to do (both are idempotent). Called as pathprof's own
    work (``own_work`` held); it is released for what is the program's: the threads'
    shutdown where the program has threads to wait for or threading exit calls (the
    threading module itself may be there only because pathprof imported it), and
    the exit handlers the program registered (see :class:`ExitBoundary`).

    A KeyboardInterrupt while waiting for the threads is reported as Python reports
    it and the handlers still run. (Nothing is imported here: the program may have
    left the import system unusable.)"""
    current = threading.current_thread()
    waits = getattr(threading, "_threading_atexits", None) or any(
        thread is not current and not thread.daemon and thread.is_alive()
        for thread in threading.enumerate())
    if waits:
        try:
            with own_work.released():
                threading._shutdown()  # type: ignore[attr-defined]
        except KeyboardInterrupt:
            sys.stderr.write(f"Exception ignored in: {threading!r}\n")
            traceback.print_exc()
    try:
        with own_work.released(), _NoNewThreads():
            atexit._run_exitfuncs()
    finally:
        if boundary.crossed:
            boundary.crossed = False
            own_work.__exit__(None, None, None)
