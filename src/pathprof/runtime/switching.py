"""One module's part of coverage that stops paying (standard library only).

With ``--stop-counting`` (docs/python.md), a function whose paths told everything
coverage can learn from it goes back to code that counts nothing:

* a function that carries its original body beside the measured one
  (:func:`pathprof.python.switches.add_switch`) takes it when its switch, the module
  name ``_@pp_i<index>``, is false; its conditions' switch is ``_@pp_k<index>``;
* a function of :attr:`Switching.swaps` goes back by its ``__code__`` to the code its
  module's loader compiles (:mod:`pathprof.measure.goback`);
* a loop that can go back alone (:class:`pathprof.python.plan.LoopSwitch`) runs its
  original body from the iteration after its switch ``_@pp_j<index>_<ordinal>`` turns
  true.

:mod:`pathprof.measure.stopping` decides when; a :class:`Switching` holds what each
function of the module can do and what it did, and turns the switches. A module
measured without ``--stop-counting`` has none
(:attr:`pathprof.runtime.ModuleState.switching` is None).

Invariant: :meth:`Switching.stopped` is true of a function exactly from the moment it
or one of its loops went back until :meth:`Switching.rearm`; a function that went back
has its switch, or its ``__code__``, set so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import weakref
    from types import CodeType, FunctionType
    from typing import TypeAlias

    #: A loop that can go back alone: ``(ranges, spanning)``, the paths its original
    #: body leaves uncounted being the numbers of the ``(first, count)`` ranges,
    #: spanned by the paths ``spanning`` (:class:`pathprof.python.plan.LoopSwitch`).
    LoopPlan: TypeAlias = tuple[tuple[tuple[int, int], ...], tuple[int, ...]]

__all__ = ["Switching"]


class Switching:
    """The stop-counting switches of one module (see the module docstring)."""

    __slots__ = ("loops", "loops_back", "names", "originals", "sent_back", "swapped",
                 "swaps", "switches")

    def __init__(self, names: dict[str, object], switches: tuple[int, ...],
                 swaps: tuple[int, ...], loops: tuple[tuple[int, tuple[LoopPlan, ...]], ...]
                 ) -> None:
        #: the module's names (its holder's), where the switches are
        self.names = names
        #: functions that go back to the code their module's loader compiles, by
        #: their ``__code__`` (:mod:`pathprof.measure.goback`)
        self.swaps = frozenset(swaps)
        #: functions that can stop counting: those that carry their original code
        #: beside the measured one and the ``swaps``; their tables report first runs
        self.switches = frozenset(switches) | self.swaps
        #: the function objects given the loader's code: (weak reference, instrumented
        #: code, the loader's code)
        self.swapped: list[tuple[weakref.ref[FunctionType], CodeType, CodeType]] = []
        #: (qualified name, first line) -> the loader's code, once compiled (None: not yet)
        self.originals: dict[tuple[str, int], CodeType] | None = None
        #: of the functions, those sent back to their original code (:meth:`send_back`)
        self.sent_back: set[int] = set()
        #: per function, its loops that can go back to their original body: for each,
        #: ``(ranges, spanning)``, the paths its original body leaves uncounted being
        #: the numbers of the ``(first, count)`` ranges, spanned by the paths
        #: ``spanning``
        self.loops: dict[int, tuple[LoopPlan, ...]] = dict(loops)
        #: (function, loop) pairs sent back to their original body
        self.loops_back: set[tuple[int, int]] = set()

    def send_back(self, index: int) -> None:
        """From its next call on, function ``index`` runs its original code: no
        probe, no count. A call under way ends measured. (A function of
        :attr:`swaps` is sent back by :func:`pathprof.measure.goback.send_back`.)"""
        if index in self.switches and index not in self.swaps:
            self.sent_back.add(index)
            self.names[f"_@pp_i{index}"] = False

    def send_conditions_back(self, index: int) -> None:
        """Conditions measured: once function ``index``'s decisions are all done, its
        calls that do not run measured code run its original code, whose decisions
        count nothing (see :func:`pathprof.python.switches.add_switch`)."""
        names = self.names
        if index in self.switches and f"_@pp_k{index}" in names:
            names[f"_@pp_k{index}"] = False

    def send_loop_back(self, index: int, ordinal: int) -> None:
        """From the next iteration after a measured one on, loop ``ordinal`` of
        function ``index`` runs its original body."""
        if index in self.loops:
            self.loops_back.add((index, ordinal))
            self.names[f"_@pp_j{index}_{ordinal}"] = True

    def stopped(self, index: int) -> bool:
        """Whether function ``index`` or one of its loops went back to original code."""
        return index in self.sent_back or any(i == index for i, _ in self.loops_back)

    def rearm(self) -> None:
        """Every function measured again (their tables are armed by the caller)."""
        names = self.names
        for index in self.switches:
            if index not in self.swaps:
                names[f"_@pp_i{index}"] = True
            if f"_@pp_k{index}" in names:
                names[f"_@pp_k{index}"] = True
            for ordinal in range(len(self.loops.get(index, ()))):
                names[f"_@pp_j{index}_{ordinal}"] = False
        for ref, instrumented, original in self.swapped:  # (measure/goback.py)
            function = ref()
            if function is not None and function.__code__ is original:
                function.__code__ = instrumented
        self.swapped.clear()
        self.sent_back.clear()
        self.loops_back.clear()
