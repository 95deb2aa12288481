"""Run a Python program as ``__main__``, the way ``python script.py`` or ``python -m`` does.

``sys.argv``, ``sys.path[0]`` and a fresh ``__main__`` module are set up as the
interpreter would; the script's own code object comes from a caller-supplied
compile function, so the script itself can be instrumented. A script that does
not parse raises the same :class:`SyntaxError` plain Python would.
"""

from __future__ import annotations

import builtins
import importlib.machinery
import os
import runpy
import shutil
import sys
import sysconfig
import types
from collections.abc import Callable, Sequence
from typing import Any

from pathprof.exceptions import ConfigError

__all__ = ["resolve_program", "run_module", "run_script"]

CompileFn = Callable[[bytes, str], Any]


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


def run_script(path: str, args: Sequence[str], compile_fn: CompileFn,
               argv0: str | None = None) -> None:
    """Execute ``path`` as ``__main__`` with ``sys.argv = [argv0 or path, *args]``.

    ``__main__`` gets what ``python script.py`` gives it: ``__file__`` (absolute),
    ``__builtins__`` (the :mod:`builtins` module), a source ``__loader__``,
    ``__spec__`` and ``__package__`` None, ``__cached__`` None."""
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as err:
        raise ConfigError(f"cannot read {path}: {err.strerror}") from err
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__cached__ = None  # type: ignore[attr-defined]
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    main.__spec__ = None
    main.__package__ = None
    old_main = sys.modules.get("__main__")
    old_argv, old_path0 = sys.argv, sys.path[0] if sys.path else None
    sys.modules["__main__"] = main
    sys.argv = [argv0 or path, *args]
    directory = os.path.dirname(os.path.abspath(path))
    if sys.path:
        sys.path[0] = directory
    else:
        sys.path.append(directory)
    try:
        code = compile_fn(source, path)
        exec(code, main.__dict__)
    finally:
        sys.argv = old_argv
        if old_path0 is not None:
            sys.path[0] = old_path0
        if old_main is not None:
            sys.modules["__main__"] = old_main


def run_module(name: str, args: Sequence[str]) -> None:
    """Execute module ``name`` as ``__main__`` (``python -m name``); the import
    hook, already installed, instruments it if it is selected."""
    old_argv = sys.argv
    sys.argv = [name, *args]
    if sys.path and sys.path[0] != os.getcwd():
        sys.path.insert(0, os.getcwd())
    try:
        runpy.run_module(name, run_name="__main__", alter_sys=True)
    except ImportError as err:
        # runpy says "No module named x" (no quotes) for the module itself; an import
        # the module makes says "No module named 'y'" and is the program's error.
        if (getattr(err, "name", None) == name
                or str(err) in (f"No module named {name}", f"No module named {name!r}")):
            raise ConfigError(f"no module named {name}") from None
        raise
    finally:
        sys.argv = old_argv
