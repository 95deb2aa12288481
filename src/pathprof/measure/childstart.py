"""Run at interpreter start-up by the ``.pth`` file of :mod:`pathprof.measure.children`.

Where :data:`pathprof.measure.children.VARIABLE` is set, this process is a child of a
measured run that started a new interpreter: a profiler starts here with the
run's settings and token and saves, as the process ends, into a file of its own
that the run's parent adds into the data file. Where the variable is not set,
nothing happens (the import of this module is the whole cost).

A ``multiprocessing`` child (spawn, forkserver) runs the parent's main script
again as ``__mp_main__`` through :func:`runpy.run_path`, which no import hook
sees: that one script is compiled instrumented when it is selected. The main
script of a ``subprocess`` child (``python other.py``) is compiled by the
interpreter itself before anything of pathprof can run on it: it is not
measured (what it imports is), and the child says so.

The child announces itself (a ``running`` mark, :mod:`pathprof.measure.handover`),
so that the run's parent and a parallel run know it still runs, unless it is one of
``multiprocessing``'s helpers (the forkserver, the resource tracker), which end
only when the parent does.
"""

from __future__ import annotations

import os

_started = False


def start() -> None:
    global _started
    value = os.environ.get("PATHPROF_CHILD")
    if not value or _started:
        return
    _started = True
    try:
        _measure(value)
    except Exception as err:  # never keep the child from running
        import sys

        sys.stderr.write(f"pathprof: this child process is not measured "
                         f"({type(err).__name__}: {err})\n")


def _measure(value: str) -> None:
    import json
    import sys

    from pathprof.config import CacheDir
    from pathprof.measure.profiler import Profiler
    from pathprof.messages import warn

    settings = json.loads(value)
    cache_dir = settings.get("cache_dir")
    profiler = Profiler(data_file=settings["data_file"], source=settings["source"],
                        include=settings["include"], omit=settings["omit"],
                        default_dirs=settings["default_dirs"], mode=settings["mode"],
                        metric=settings["metric"], cache=settings["cache"],
                        stop_counting=settings.get("stop_counting", "never"),
                        conditions=bool(settings.get("conditions", False)),
                        cache_dir=CacheDir(*cache_dir) if cache_dir else None,
                        argv=list(sys.argv))
    profiler._token = settings["token"]
    profiler.start()
    # a file of its own, saved as the process ends
    profiler._after_fork_in_child(announce=not _helper())
    _instrument_mp_main(profiler)
    script = sys.argv[0] if sys.argv else ""
    if (script.endswith(".py") and os.path.isfile(script)
            and profiler.selection.wants("__main__", os.path.abspath(script))):
        warn(f"the main script of a child process is not measured (what it imports is): "
             f"{script}")


#: How ``multiprocessing`` starts its helper processes (``-c`` commands)
_HELPERS = ("from multiprocessing.forkserver import main",
            "from multiprocessing.resource_tracker import main")


def _helper() -> bool:
    """Whether this process is a helper of ``multiprocessing`` (see the module
    docstring), as its command line says."""
    import sys

    return any(isinstance(arg, str) and any(helper in arg for helper in _HELPERS)
               for arg in getattr(sys, "orig_argv", ()))


def _instrument_mp_main(profiler: object) -> None:
    """``multiprocessing`` runs the parent's main script again in a spawned child with
    :func:`runpy.run_path`: compile it instrumented when it is selected."""
    import builtins
    import runpy

    from pathprof.measure.importhook import compile_instrumented

    original = runpy.run_path
    selection = profiler.selection  # type: ignore[attr-defined]
    options = profiler.options  # type: ignore[attr-defined]

    def run_path(path_name: str, init_globals: dict[str, object] | None = None,
                 run_name: str | None = None) -> dict[str, object]:
        path = os.path.abspath(os.fspath(path_name))
        if not (path.endswith(".py") and os.path.isfile(path)
                and selection.wants("__main__", path)):
            return original(path_name, init_globals, run_name)
        with open(path, "rb") as f:
            source = f.read()
        try:
            code = compile_instrumented(source, path, options)
        except Exception:
            return original(path_name, init_globals, run_name)
        namespace: dict[str, object] = {}
        if init_globals is not None:
            namespace.update(init_globals)
        namespace.update(__name__=run_name or "<run_path>", __file__=path, __cached__=None,
                         __doc__=None, __loader__=None, __package__=None, __spec__=None,
                         __builtins__=builtins)
        exec(code, namespace)
        return namespace

    runpy.run_path = run_path
