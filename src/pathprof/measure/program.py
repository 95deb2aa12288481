"""Run a program measured, as Python would run it: a script or a ``-m`` module,
between a measurement's start and stop, with Python's own ending (the uncaught
exception reported by ``sys.excepthook``, the threads waited for, the exit
handlers run) inside the measurement. Shared by ``pathprof run``, ``count`` and
``hot``; the faces reach it through :mod:`pathprof.api`."""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pathprof.exceptions import PathprofError
from pathprof.measure.ending import RunEnd
from pathprof.messages import warn
from pathprof.runtime.passthrough import must_pass

if TYPE_CHECKING:
    from types import CodeType, TracebackType

    from pathprof.measure.execfile import CompileFn
    from pathprof.measure.importhook import InstrumentOptions
    from pathprof.python.selection import Selection

__all__ = ["INTERRUPTED", "Program", "die_of_sigint", "exit_status", "main_compiler",
           "resolve", "run_program"]

#: The program ended by an uncaught KeyboardInterrupt: after saving, pathprof dies
#: of SIGINT, as Python does (so a shell sees 130 and stops a loop of commands).
INTERRUPTED = -2

OK, ERR = 0, 1

#: pathprof's own files: their frames are cut from the traceback of an uncaught
#: exception, which shows the program's frames only, as Python's would.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclass
class Program:
    """What to run: the name given (a script, a console script or, with ``module``,
    a module), the script's path (None for a module), its arguments, and the
    directories measured when no ``--source`` says otherwise."""

    name: str
    module: bool
    path: str | None
    args: list[str]
    default_dirs: list[str]


def resolve(name: str, args: list[str], module: bool) -> Program:
    """The program named on the command line (``--`` before it or its arguments is
    dropped), its script found as Python or the shell would find it."""
    from pathprof.measure.execfile import resolve_program

    program_args = args[1:] if args[:1] == ["--"] else args
    if name == "--":
        if not program_args:
            raise PathprofError("nothing to run after --")
        name, program_args = program_args[0], program_args[1:]
    if module:
        return Program(name, True, None, program_args, [os.getcwd()])
    path, on_path = resolve_program(name)
    return Program(name, False, path, program_args,
                   [os.getcwd() if on_path else os.path.dirname(path)])


def main_compiler(selection: Selection, options: InstrumentOptions) -> CompileFn:
    """Compile the main script instrumented if it is selected, plainly otherwise."""
    from pathprof.measure.execfile import compile_script
    from pathprof.measure.importhook import compile_instrumented

    def compile_main(source: bytes, filename: str) -> CodeType:
        plain = compile_script(source, filename)  # fails as Python does
        if selection.wants("__main__", filename):
            try:
                # (its warnings were just shown, by the plain compile)
                return compile_instrumented(source, filename, options, show_warnings=False)
            except Exception as err:  # a pathprof bug must not break the program
                if must_pass(err):  # (a signal handler's exception is the program's)
                    raise
                warn(f"could not instrument {filename} "
                     f"({type(err).__name__}: {err}); it runs unmeasured")
        return plain

    return compile_main


def run_program(program: Program, start: Callable[[], object], stop: Callable[[], object],
                compile_main: CompileFn, end: RunEnd | None = None) -> int:
    """Run the program between ``start()`` and ``stop()``; its exit status.

    Everything here is pathprof's own work (:data:`pathprof.runtime.own_work`: what
    it runs of a measured module is not counted) except the program's code: its
    body, then what Python runs after it, before the measurement stops (the threads
    it waits for, the ``atexit`` handlers).

    With ``end``, signals are held (:meth:`RunEnd.begin`) from the moment the
    program's last exit handler has returned, so that ``stop()`` and what the caller
    does next (the save, the report) run to their end; the caller then lets them go
    (``end.die()``, ``end.end()``). A ``KeyboardInterrupt`` that the default SIGINT
    handler raised between that moment and the holding is a SIGINT held, and the
    status is the program's."""
    from pathprof import runtime

    status = OK
    with runtime.own_work:
        start()
        try:
            status = _run_between(program, compile_main, end)
        except KeyboardInterrupt:
            if end is None or end.status is None:  # (not after the program's end)
                raise
            end.begin()
            end.hold_sigint()
            status = end.status
        finally:
            if end is not None:
                end.begin()
            stop()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
    return status


def _run_between(program: Program, compile_main: CompileFn, end: RunEnd | None = None) -> int:
    """:func:`run_program`'s part while the measurement runs: the program, then what
    Python does as it ends, in the program's ``__main__``, ``sys.argv`` and
    ``sys.path``: report an uncaught exception, wait for the threads, run the exit
    handlers (those registered before the program started as pathprof's own work)."""
    from pathprof import runtime
    from pathprof.measure.execfile import ExitBoundary, finish_as_python, run_module, run_script

    boundary = ExitBoundary(runtime.own_work)

    class Ending:
        """What Python does as the program ends (:class:`execfile.Ending`)."""

        def report(self, ended: BaseException | None) -> int:
            status = self._report(ended)
            if end is not None:  # (the program's status, should a signal come now)
                end.status = status
            return status

        def _report(self, ended: BaseException | None) -> int:
            if isinstance(ended, SystemExit):
                return exit_status(ended.code)
            if isinstance(ended, PathprofError):
                raise ended
            if ended is None:
                return OK
            tb = ended.__traceback__
            while tb is not None and tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
                tb = tb.tb_next
            ended.__traceback__ = tb  # the hook (and whatever it calls) reads it here
            with runtime.own_work.released():  # the program's hook, if it set one
                _report_uncaught(type(ended), ended, tb)
            return INTERRUPTED if isinstance(ended, KeyboardInterrupt) else ERR

        def finish(self) -> None:
            try:
                finish_as_python(runtime.own_work, boundary)
                if end is not None:  # the program has ended: pathprof's work is left
                    end.begin()
            except KeyboardInterrupt:  # after its last exit handler: a SIGINT held
                if end is None:
                    raise
                end.begin()
                end.hold_sigint()

    ending = Ending()
    status: int  # (what Ending.report returns)
    if program.module:
        status = run_module(program.name, program.args, program=runtime.own_work.released,
                            ending=ending)
        return status
    assert program.path is not None
    argv0 = program.name if os.path.exists(program.name) else program.path
    status = run_script(program.path, program.args, compile_main, argv0,
                        program=runtime.own_work.released, ending=ending)
    return status


def _report_uncaught(exc_type: type[BaseException], exc: BaseException,
                     tb: TracebackType | None) -> None:
    """What Python does with an exception the program did not catch: call
    ``sys.excepthook`` (the program's own, if it set one); should the hook itself
    raise, print both as Python does."""
    try:
        sys.excepthook(exc_type, exc, tb)
    except BaseException as failed:  # (SystemExit too: Python reports it so)
        hook_tb = failed.__traceback__
        while (hook_tb is not None
               and hook_tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR)):
            hook_tb = hook_tb.tb_next
        print("Error in sys.excepthook:", file=sys.stderr)
        traceback.print_exception(type(failed), failed, hook_tb)
        print("\nOriginal exception was:", file=sys.stderr)
        traceback.print_exception(exc_type, exc, tb)


def die_of_sigint() -> None:
    """End the process by SIGINT, as Python does after an uncaught KeyboardInterrupt."""
    signal = sys.modules.get("signal") or __import__("signal")  # (imports may not work)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)


def exit_status(code: object) -> int:
    """The exit status of ``SystemExit(code)``, as Python computes it (a message is
    printed on standard error and is status 1)."""
    if code is None:
        return OK
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return ERR
