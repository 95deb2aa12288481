"""What every measuring class owns (:class:`Measuring`): the files it measures (a
:class:`~pathprof.python.selection.Selection`), the options they are instrumented with
and the import hook that instruments them as they are imported.

:class:`pathprof.Profiler` (paths and edges), :class:`pathprof.events.EventCounter`
(events) and :class:`pathprof.subpaths.SubpathSampling` (OSP) are each one, and a
context manager and decorator too: ``with`` starts and stops it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from typing import TypeVar

from pathprof.measure.importhook import ImportHook, InstrumentOptions
from pathprof.measure.interpreter import require_gil
from pathprof.python.selection import Selection

__all__ = ["Measuring"]

_M = TypeVar("_M", bound="Measuring")


class Measuring(contextlib.ContextDecorator):
    """The selection, the instrumenting options and the import hook of one measuring
    object; ``default_dirs`` None measures the current directory's files by default.
    Subclasses define :meth:`start` and :meth:`stop`."""

    def __init__(self, options: InstrumentOptions, *, source: Sequence[str] = (),
                 include: Sequence[str] = (), omit: Sequence[str] = (),
                 default_dirs: Sequence[str] | None = None) -> None:
        require_gil()
        self.options = options
        self.selection = Selection(source, include, omit,
                                   [os.getcwd()] if default_dirs is None else default_dirs)
        self.hook = ImportHook(self.selection, self.options)

    def start(self: _M) -> _M:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self: _M) -> _M:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def install_hook(self, doing: str, done: str) -> None:
        """Instrument the selected modules imported from now on; name on stderr those
        imported already, which are not ``done`` (``counted``, ``sampled``)."""
        from pathprof.messages import warn

        self.hook.install()
        late = [name for name, _module in self.hook.already_imported()]
        if late:
            warn(f"already imported before {doing} started, so not {done}: "
                 + ", ".join(late[:5]) + (f" and {len(late) - 5} more" if len(late) > 5 else ""))
