"""pathprof's own work inside a measurement, kept out of the program's counts
(:data:`own_work`): instrumenting a module being imported, taking and saving counts,
decoding a contract. See :class:`OwnWork` for the invariant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pathprof.runtime.passthrough import SafeLock

if TYPE_CHECKING:
    from pathprof.runtime import ModuleState

__all__ = ["OwnWork", "own_work"]


class OwnWork:
    """``with own_work:`` around pathprof's own code that runs inside a measurement
    (instrumenting a module being imported, taking and saving counts).

    A module measured after it was imported may be one pathprof itself uses
    (``--source json``, ``--source ast``): while pathprof's code runs, that
    module's functions count into scratch tables, so the profile holds the
    program's calls only. :func:`pathprof.runtime.share` names such modules. The scratch tables
    are swapped into the module's holder (:mod:`pathprof.runtime.holder`), whose
    names the instrumented code reads, so what another thread runs in those modules
    meanwhile is not counted either (pathprof's own work is short: an import's
    analysis, a save).

    Invariant: outside every ``with own_work``, each shared module's holder
    holds its registered state's tables. Reentrant and thread-safe (a depth count
    under a lock): the swap happens on the first entry and is undone on the last
    exit.
    """

    def __init__(self) -> None:
        self._lock = SafeLock()  # (no signal handler's exception leaves it held)
        self._depth = 0
        #: (namespace, real names, scratch names) per shared module
        self._shared: list[tuple[dict[str, object], dict[str, object], dict[str, object]]] = []
        #: files pathprof's own work is importing: whether each is to be shared
        self._importing: dict[str, bool] = {}
        #: modules pathprof's own work imported, settled when it ends: (state, whether
        #: it is shared)
        self._imported: list[tuple[ModuleState, bool]] = []

    def importing(self, filename: str, shared: bool) -> None:
        """pathprof's own work (:attr:`active`) is importing the measured module
        ``filename``: what its body counts is not the program's, and with ``shared``
        the module is shared from then on (:meth:`share`). Settled when the work
        ends (the depth falls to 0), after the import: pathprof's calls into a
        module it imported are not the program's either."""
        with self._lock:
            self._importing[filename] = shared

    def _registered(self, state: ModuleState) -> None:
        """``state``'s module started to execute (:func:`register`)."""
        if not self._importing:
            return
        with self._lock:
            shared = self._importing.pop(state.filename, None)
            if shared is not None:
                self._imported.append((state, shared))

    def _settle(self) -> None:
        """The depth fell to 0: forget what the modules pathprof's work imported
        counted, and share those to be shared. Called with the lock not held."""
        with self._lock:
            if self._depth or not self._imported:
                return
            imported, self._imported = self._imported, []
        for state, shared in imported:
            state.zero()
            if shared:
                self.share(state)

    def share(self, state: ModuleState) -> None:
        namespace = state.names
        scratch = type(state)(state.name, state.filename, state.key,
                              tuple(-1 if isinstance(t, dict) else len(t)
                                    for t in state.counters),
                              state.meta_json, state.timed)
        scratch._meta = state._meta
        scratch_names: dict[str, object] = {"_@pp_m": scratch}
        for i in range(len(state.counters)):
            scratch_names[f"_@pp_c{i}"] = scratch.counters[i]
            if state.timed:
                scratch_names[f"_@pp_t{i}"] = scratch.times[i]
        scratch_names = {k: v for k, v in scratch_names.items() if k in namespace}
        with self._lock:
            real = {name: namespace[name] for name in scratch_names}
            self._shared.append((namespace, real, scratch_names))
            if self._depth:
                namespace.update(scratch_names)

    def __enter__(self) -> None:
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                for namespace, _real, scratch in self._shared:
                    namespace.update(scratch)

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth:
                return
            for namespace, real, _scratch in self._shared:
                namespace.update(real)
        if self._imported:
            self._settle()

    def released(self) -> _Released:
        """Inside a ``with own_work``: the program's own code runs in ``with
        own_work.released():`` (a script's body, the threads and exit handlers the
        interpreter waits for), so what it runs counts. pathprof's hooks inside it (an
        import, a save on a signal) enter ``own_work`` again as usual; the depth the
        caller held is back after. (A class of its own, not :mod:`contextlib`, which
        may be a measured module.)"""
        return _Released(self)

    def _release(self) -> int:
        with self._lock:
            held, self._depth = self._depth, 0
            if held:
                for namespace, real, _scratch in self._shared:
                    namespace.update(real)
        if held and self._imported:
            self._settle()
        return held

    def _hold_again(self, held: int) -> None:
        with self._lock:
            self._depth += held
            if held and self._depth == held:
                for namespace, _real, scratch in self._shared:
                    namespace.update(scratch)

    @property
    def active(self) -> bool:
        """Whether pathprof's own work is under way (in some thread)."""
        return self._depth > 0


class _Released:
    """See :meth:`OwnWork.released`."""

    def __init__(self, work: OwnWork) -> None:
        self._work = work
        #: the depth released, until it is held again (None: held again, or never released)
        self._held: int | None = None

    def __enter__(self) -> None:
        self._held = self._work._release()

    def __exit__(self, *exc: object) -> None:
        # (idempotent: a runner whose window's exit a signal's exception cut short
        # calls it again, pathprof.measure.execfile)
        held = self._held
        if held is not None:
            self._work._hold_again(held)
            self._held = None


own_work = OwnWork()
