"""The names pathprof's inserted code uses, in every mode: one registry.

Every name holds ``@``, which no identifier can, so it never clashes with the
program's: locals start with ``@pp_`` (as pytest's own ``@py_*``, which ``pytest
-l`` does not show); the module's names start with ``_@pp_`` and live in the
module's *holder*, not its globals (:mod:`pathprof.runtime.holder`: the rewriter
reads and stores them through :func:`pathprof.python.nodes.load` and ``store``,
which make each an attribute of the holder). With ``--conditions`` the vector
counters and the decision value stay module globals (a decision assigns them in an
expression, which only a name can be): ``__@pp_v<slot>__`` and ``__@pp_d__``, names
with two underscores at both ends, which neither ``import *`` nor a loop deleting a
module's private names touches, and which no class body mangles. In measured
functions, ``locals()``, ``vars()`` and ``dir()`` show the program's names only
(:func:`pathprof.python.instrument.hide_own_names`).

A module is instrumented in one mode, so a name may serve two modes (``_@pp_P``:
:data:`PARKED` and :data:`PENDING`). :mod:`pathprof.runtime` imports nothing of
the instrumenter: where it reads or sets one of these names, it spells it out.
"""

from __future__ import annotations

import re

#: Version of the code the instrumentation writes: part of the cache tag, so that a
#: change to the probes never runs with a cached module the runtime no longer fits
#: (kept here, which a warm run imports, not in :mod:`pathprof.python.rewrite`).
#: 6: every edge from a loop's body to its header counts and restarts the path; a
#: finally that hands a return, break or continue on to an enclosing finally sets
#: that one's route flag.
#: 7: a return counted before its value is located at the value's first code.
#: 8: exception exits counted in a dict. 9: observers keep the frame's last
#: instruction (:mod:`pathprof.python.lasti`). 10: locals named ``@pp_*``, and
#: ``locals()``, ``vars()`` and ``dir()`` calls filtered. 11: OSP's countdown.
#: 12: with OSP's countdown, no path counts. 13: a generator's exit key says
#: whether it was closed. 14: a function with a loop holds its counter table in a
#: local. 15: in a coverage mode, a loop whose hidden paths are all known runs
#: its original body for the rest of the loop. 16: an exit reads a lasti from a
#: traceback entry of its own frame only (the program may clear or replace it).
#: 17: the end of an except* clause flows on; its hand-over is noted and counted later.
#: 18: the runtime reached through the module state only; generators read pathprof's
#: globals into locals as they start; inserted code located with no width.
#: 19: OSP's observed path ends noted in a list by the code (``@pp_track``). 20: calls
#: noted too. 21: only an instrumented caller's locals read, their snapshot let go.
#: 22: a re-raise after pathprof's code takes the line before it
#: (:mod:`pathprof.python.reraise_lines`). 23: ``--conditions``, each decision's
#: evaluation vectors counted (24 to 26 were never released). 27: on 3.13 and 3.14
#: an unfolded test is evaluated once, into a module global. 28: decisions under
#: stop-counting. 29: a one-condition branch test gets no code. 30: a module executed
#: again keeps its vectors' runs; a return whose registers live outside its frame
#: takes its value out as it returns it. 31: a function whose decisions need no code
#: keeps its loops' switches. 32: the paths an exception cuts where the function goes
#: on (an except clause, a finally, a with) noted by C calls (34 went back). 33: an
#: except* clause that ends in a try/finally, a match, a nested try with except* clauses
#: or a break through a finally flows on too (the edges out of its last statement join
#: in a block, the clause's end); before, every clause of such a try ended its path
#: there. 34: the module's names live in its holder, which its code holds as a constant
#: (:mod:`pathprof.runtime.holder`), the vector counters and the decision value of
#: ``--conditions`` are dunder names; a handler records its cut path by a call again,
#: guarded against a RecursionError (``FunctionRewriter.handler_entry``); a function
#: whose path numbers could not be written is left as written. 35: on 3.13 and later,
#: the unlocated counts of a function whose registers live outside its frame stand
#: under an ``if`` (:func:`pathprof.python.outside._guard_unlocated_calls`). 36: a
#: module's and a class's functions carry no copy of their body for stop-counting: they
#: go back by their ``__code__`` (:mod:`pathprof.measure.goback`, ``swaps`` of
#: ``register``). 37: such a module's cache entry keeps its code as Python compiles it,
#: marshalled, beside the instrumented code (what those functions go back to). 38: OSP's
#: countdown stored and kept in a local (``@pp_q``) that the test reads, and a path end
#: whose paths all have one length subtracts it as a constant.
CODE_VERSION = 38

#: The prefix of the locals inserted code uses.
LOCAL_PREFIX = "@pp_"
#: The prefix of the module globals inserted code uses.
GLOBAL_PREFIX = "_@pp_"

# ---------------------------------------------------------------------------
# Every mode

#: The runtime module (:mod:`pathprof.runtime`, or :mod:`pathprof.runtime.events`),
#: which :func:`pathprof.runtime.holder.new_holder` puts in the holder.
RUNTIME = "_@pp_rt"
#: Stands for the holder itself in the tree the rewriter builds: made the
#: :data:`PLACEHOLDER` constant that :func:`pathprof.runtime.holder.bind` replaces.
HOLDER = "_@pp_H"
#: :data:`pathprof.runtime.holder.PLACEHOLDER`, spelled out.
PLACEHOLDER = "\x00@pathprof: the module's names"
#: The module's state in the runtime, which :func:`~pathprof.runtime.register` returns.
MODULE = "_@pp_m"
#: The register: path mode's path number so far, event mode's events so far (a local).
REGISTER = "@pp_r"

# ---------------------------------------------------------------------------
# Path and edge mode

#: A return's value, kept while the return counts its path.
RETURN_VALUE = "@pp_v"
#: With ``metric="time"``: the clock, the time the current path started, a reading.
CLOCK = "_@pp_k"
PATH_START = "@pp_s"
NOW = "@pp_x"
#: A function with a loop holds its counter table in this local (set on entry), so
#: that each count loads a local instead of a module global.
LOCAL_TABLE = "@pp_c"
#: Subpath sampling (OSP, :mod:`pathprof.measure.subpaths`): the countdown list
#: shared by every module, and the flag that is true while blocks are observed.
COUNTDOWN = "_@pp_Q"
OBSERVING = "_@pp_O"
#: Where a path ends: the countdown as it was just stored, tested without reading
#: the list again (:func:`pathprof.python.probecode.count_down`).
COUNTDOWN_LEFT = "@pp_q"
#: While blocks are observed, each frame's handle in the observer (its track, set
#: by the runtime's calls), and the bound ``append`` of the list path ends are
#: noted in as ``(track, path)`` without a call into Python.
TRACK = "@pp_track"
NOTE = "_@pp_note"
#: A call that begins while blocks are observed is noted too, when its caller holds
#: a track (see :func:`pathprof.python.probecode.note_call`): the caller's locals
#: (set and cleared on entry), and the module globals the note is made with --
#: ``sys._getframe``, ``getattr``, ``id``, an empty mapping and the class of a
#: blank track (:class:`pathprof.runtime.tracks.Track`).
CALLER_LOCALS = "@pp_callers"
GETFRAME = "_@pp_getframe"
GETATTR = "_@pp_getattr"
IDENTITY = "_@pp_id"
NO_LOCALS = "_@pp_nolocals"
TRACK_TYPE = "_@pp_tracktype"
#: The countdown's floor while blocks are observed: above it path ends are noted;
#: at or below it the runtime is called to take the notes (see
#: :mod:`pathprof.measure.subpaths`).
OBSERVED_FLOOR = -(1 << 29)
#: Path mode's coverage that stops paying, loop by loop: the parked register (the
#: runtime's :data:`pathprof.runtime.stopping.PARKED`), a module global. Event mode:
#: the list of exits by exception noted but not counted yet
#: (:data:`pathprof.runtime.events.pending`).
PARKED = PENDING = "_@pp_P"


#: Conditions measured: the module global a rewritten decision's value is stored in
#: before it is tested (:func:`pathprof.python.conditioncode._tested_once`).
DECISION_VALUE = "__@pp_d__"


def vector_name(slot: int) -> str:
    """Conditions measured (:mod:`pathprof.python.conditioncode`): the module global
    that counts the runs of the vector at counter ``slot`` of the module (the runtime's
    ``ModuleState.vectors``)."""
    return f"__@pp_v{slot}__"


def in_holder(name: str) -> bool:
    """Whether ``name`` is one of the module's names the holder keeps (every
    ``_@pp_*`` name; not the vector counters nor the decision value)."""
    return name.startswith(GLOBAL_PREFIX)


def counter_name(index: int) -> str:
    """The module global holding function ``index``'s counter table."""
    return f"_@pp_c{index}"


def timer_name(index: int) -> str:
    """With ``metric="time"``: the module global holding function ``index``'s path
    times."""
    return f"_@pp_t{index}"


def lengths_name(index: int) -> str:
    """The module global holding function ``index``'s path lengths, in blocks."""
    return f"_@pp_l{index}"


def flag_name(index: int) -> str:
    """The local that says how the function's ``index``-th ``finally`` was entered
    (its route flag: a local, so the same names serve every function)."""
    return f"@pp_k{index}"


def switch_name(index: int) -> str:
    """The module global that is true while function ``index`` runs its measured
    code, false once the runtime has sent it back to its original code."""
    return f"_@pp_i{index}"


def conditions_switch_name(index: int) -> str:
    """Conditions measured: the module global that is true while function ``index``,
    sent back from its measured code, still runs its decisions' counting
    (:func:`pathprof.python.switches.add_switch`), false once each decision is done."""
    return f"_@pp_k{index}"


def loop_switch_name(index: int, ordinal: int) -> str:
    """The module global that the runtime sets true once the hidden paths of loop
    ``ordinal`` of function ``index`` are all known
    (:class:`~pathprof.python.plan.LoopSwitch`)."""
    return f"_@pp_j{index}_{ordinal}"


def star_name(ordinal: int) -> str:
    """The local that holds the count an ``except*`` clause of the function's
    ``ordinal``-th flowing ``try`` noted at its end (None: none pending), for the
    next clause's start or for the group leaving the ``try`` to make."""
    return f"@pp_e{ordinal}"


def loop_mode_name(ordinal: int) -> str:
    """The local that is true while loop ``ordinal`` runs its original body."""
    return f"@pp_o{ordinal}"


# ---------------------------------------------------------------------------
# Event mode (:mod:`pathprof.python.eventcode`)

#: The thread's table of counts (a local; ``[0]`` is the thread's total).
THREAD = "@pp_T"
#: The activation's base: the thread's total minus the function's inclusive count.
BASE = "@pp_a"
#: The frame's exact count, when already worked out (None otherwise).
DONE = "@pp_w"
#: What ``_@pp_m.enter`` returned, as a ``finally`` entered by an exception unpacks it.
TEMP = "@pp_h"
#: The awaited object, or the generator delegated to, during the hand-over.
SENT = "@pp_y"
#: The thread's total as a hand-over reads it.
TOTAL = "@pp_u"
#: The runtime's thread-local state, whose ``t`` is the calling thread's table.
LOCAL = "_@pp_L"
#: The table of the one thread there is (None once there are more).
SINGLE = "_@pp_G"
#: True while an event budget is active anywhere.
BUDGET = "_@pp_B"
#: The module's self counts, by function.
SELF = "_@pp_S"


def slot_name(index: int) -> str:
    """The module global holding function ``index``'s slot in the thread tables."""
    return f"_@pp_g{index}"


# ---------------------------------------------------------------------------
# Module globals a generator keeps in its frame


#: pathprof's module globals that change while the program runs: they are read
#: where they are tested, every time (switches, OSP's observing flag, event
#: budgets, the single thread's table, the vector counters). None of them fails when
#: None: what every one of them is as the interpreter shuts down.
_MUTABLE_GLOBAL = re.compile(r"_@pp_(i\d+|j\d+_\d+|k\d+|O|B|G|H)")


def is_capturable(name: str) -> bool:
    """Whether ``name`` is one of pathprof's module globals that a generator can
    read once, as it starts (:func:`captured_name`): all but those that change
    while the program runs."""
    return name.startswith(GLOBAL_PREFIX) and not _MUTABLE_GLOBAL.fullmatch(name)


def captured_name(name: str) -> str:
    """The local that holds module global ``name`` in a generator or coroutine
    (``_@pp_c3`` -> ``@pp_gc3``: :mod:`pathprof.python.generator_globals`)."""
    return LOCAL_PREFIX + "g" + name[len(GLOBAL_PREFIX):]
