"""The stream of executed blocks, for online subpath sampling (Oren 2002, OSP).

Code instrumented with ``subpaths`` (:func:`pathprof.python.probecode.count_down`)
is Ball-Larus path profiling plus, where each path ends, a countdown in bulk:
``_@pp_Q[0] -= <blocks on the path>``. While no sample is near, that is all it
costs. When the countdown reaches 0 -- the sampler's gap to its next start is
within the *lead*: twice what the latest starts needed, at most :func:`horizon`
blocks -- the runtime calls :meth:`SubpathProfiler.path_end`
and the profiler starts *observing*: every path end, every call of an instrumented
function and every exception caught then reaches it. Path ends and calls are noted
by the code itself while the frame (for a call, its caller) holds a track:
``_@pp_note((track, path))`` and ``_@pp_note((blank track, ..., caller's track,
caller's offset, caller's register))``, a C-level list append with no Python frame
(see :func:`~pathprof.python.probecode.count_down` and
:func:`~pathprof.python.probecode.note_call`); the rest call the profiler. The notes
are decoded in bulk when they are taken: before each call into the profiler, and
when the countdown, set just above :data:`~pathprof.python.names.OBSERVED_FLOOR`,
falls to it, which it does after as many blocks as may pass before a sample window
opens or closes. The profiler
rebuilds the stream of blocks in the order they ran, a callee's blocks where the
call happened:

- a path's blocks come from its number (Ball-Larus regeneration);
- at a call, the caller's blocks so far come from its register and the block the
  call is in (the prefix a cut path decodes to), so they go out before the callee's;
- an exception caught in a frame ends its path where it arose (the prefix again).

Each frame remembers how many blocks of its current path went out. When no sample
window is open and the next start is beyond the lead again, observation stops
and the countdown takes over. With ``exact`` it never stops: every block goes to
an :class:`~pathprof.runtime.subpaths.ExactSubpathCounter` too (slow; for
evaluation and tests).

Streams are kept apart: a generator's or coroutine's frame has a stream of its own,
and every other frame is in the stream of the nearest such frame below it on the
stack, or else of its thread. Known limits: a path cut by an exception that leaves
its function is not in the stream (that exit is counted without calling Python); a
frame already running in another thread when observation starts joins the stream
at its next path end or call.

Invariant: while observing, the blocks each thread's stream receives are the blocks
its instrumented frames ran, in order (checked against an instruction-trace oracle
by ``tests/test_subpaths.py``). The sampler's ``positions`` count each block of the
stream once, whether counted down or observed: blocks observed of a path still
running when observation stops are taken back (the countdown counts the whole path
where it ends), a return counted before its value is not counted again at the calls
in its value, and the last stretch counted down is added at :meth:`~SubpathProfiler.stop`
(checked against ``exact`` by ``tests/test_hot.py``).

The profiler here is the runtime's callback surface and the notes' decoding; the
pure decoding of frames, paths and prefixes is :mod:`pathprof.measure.subpath_decoder`,
the streams the sampler reads :mod:`pathprof.measure.subpath_streams`.
"""

from __future__ import annotations

import _thread
import collections
import os
from types import FrameType
from typing import TYPE_CHECKING, Any

from pathprof import runtime
from pathprof.measure.subpath_decoder import (
    BlockInfo,
    PathDecoder,
    inside,
    jumps_out,
    track_of,
)
from pathprof.measure.subpath_streams import OWN_STREAM, Streams, stream_key
from pathprof.python.names import OBSERVED_FLOOR
from pathprof.runtime.passthrough import SafeLock, must_pass
from pathprof.runtime.subpaths import SubpathSampler
from pathprof.runtime.tracks import Hold, fill, fill_dropped, new_track
from pathprof.runtime.tracks import Track as _Track

if TYPE_CHECKING:
    from pathprof.runtime import ModuleState
    from pathprof.runtime.tracks import StreamKey

__all__ = ["BlockInfo", "SubpathProfiler", "horizon", "stream_key"]

def horizon() -> int:
    """The most blocks before a sample start at which observation begins: four times
    the longest path of the code instrumented so far (at least 32, at most 256), so
    that a path end seldom passes a start in bulk, even with the blocks of the
    paths still running below it (:attr:`SubpathProfiler.overshot` counts those).
    The profiler begins later once it has seen what the starts need
    (:meth:`SubpathProfiler._next_lead`)."""
    return min(max(4 * runtime.longest_path, 32), 256)


#: The fewest blocks before a start at which observation begins.
LEAST_LEAD = 16
#: How many of the latest starts' needs the lead is worked out from.
NEEDS_KEPT = 32
#: The most blocks noted before the notes are taken (bounds the notes kept).
NOTES_TAKEN = 4096


#: Not worked out yet (a call's prefix may be None: it cannot be told). Any: a
#: sentinel, which mypy cannot tell apart from the prefixes it stands among.
_UNKNOWN: Any = object()


#: A with statement's exit (see :meth:`SubpathProfiler._hold_exit`).
_EXIT = "__exit__"


class SubpathProfiler:
    """Feeds the sampler (and with ``exact``, the exact counter) the stream of the
    modules instrumented for subpaths (see the module docstring).

    What it cannot do, it gives up on without telling the program, but an exception
    a signal handler of the program's raised meanwhile goes on to the program
    (:func:`pathprof.runtime.passthrough.must_pass`)."""

    _passes = staticmethod(must_pass)

    def __init__(self, sampler: SubpathSampler, *, exact: bool = False,
                 record: bool = False, checkpoint_every: int = 0) -> None:
        self.sampler = sampler
        #: the streams the sampler reads, by thread and generator frame
        self.streams = Streams(sampler, exact=exact, record=record,
                               checkpoint_every=checkpoint_every)
        #: with ``record`` (tests): every block id each stream received, by stream
        self.record = self.streams.record
        #: with ``exact`` and ``checkpoint_every`` N: the exact top 5 every N blocks
        self.moments = self.streams.moments
        self.exact = self.streams.exact
        self.observing = False
        #: events pathprof could not decode (a path left out of the stream)
        self.failures = 0
        #: samples whose start a path end passed in bulk (taken late)
        self.overshot = 0
        #: frames, paths and prefixes decoded, and the stream's block ids
        self.decoder = PathDecoder(sampler)
        #: what each block id of the stream stands for
        self.blocks: list[BlockInfo] = self.decoder.blocks
        self._decoded: dict[tuple[int, int], dict[int, tuple[list[int], bool, int | None]]] = {}
        #: how many times observation began: a track from an earlier one is stale
        self._generation = 0
        #: (code, offset of a call, register) -> the caller's blocks through the call
        self._call_prefixes = self.decoder.call_prefixes
        self._frames: dict[int, _Track] = {}
        #: held ``__exit__`` streams -> the track of the frame that called it, and
        #: the hold (one of its ``held``)
        self._held: dict[StreamKey, tuple[_Track, Hold]] = {}
        self._lock = SafeLock()  # (no signal handler's exception leaves it held)
        self._busy = 0  #: the thread inside, so that pathprof's own code is not observed
        self._armed = runtime.FAR  #: what the countdown was set to last
        #: the blocks before a start at which observation begins now, and what the
        #: latest starts needed (the blocks their path ends passed them by in bulk)
        self._lead = self._coming_lead = horizon()
        self._needs: collections.deque[int] = collections.deque(maxlen=NEEDS_KEPT)

    # -- start and stop ----------------------------------------------------------

    def start(self) -> None:
        runtime.subpath_sampler = self
        if self.exact is not None:
            self._observe()
        else:
            self._count_down()

    def stop(self) -> None:
        with self._lock:
            if not self._busy:
                self.take_notes()
        for track, _hold in list(self._held.values()):
            self._release(track)
        if runtime.subpath_sampler is self:
            runtime.subpath_sampler = None
        runtime.observe_blocks(False)
        if not self.observing:
            # The blocks counted down since the countdown was last armed: the stream's
            # last stretch, which no start ended (up to a period of blocks).
            self.sampler.positions += max(self._armed - runtime.countdown[0], 0)
        self._armed = runtime.countdown[0] = runtime.FAR
        self.observing = False
        self._frames.clear()
        self._generation += 1

    def _count_down(self) -> None:
        """Back to bulk skipping: the countdown ends :meth:`_next_lead` blocks before
        the next start."""
        self.observing = False
        runtime.observe_blocks(False)
        for track, _hold in list(self._held.values()):
            self._release(track)
        # The frames still on their path went out as far as they ran; their path ends
        # count it down again in full: those blocks are taken back from the positions.
        self.sampler.positions -= sum(track.sent for track in self._frames.values())
        self._frames.clear()
        self._generation += 1  # the tracks frames hold are stale now
        self.streams.close_all()
        self._arm()

    def _arm(self) -> None:
        """The countdown to :meth:`_next_lead` blocks before the next start, or to FAR
        blocks on, whichever is nearer."""
        self._lead = self._coming_lead = self._next_lead()
        self._armed = runtime.countdown[0] = min(self.sampler.gap - self._lead, runtime.FAR)

    def _next_lead(self) -> int:
        """Blocks before a start to begin observing: twice the most the latest
        starts needed (at least LEAST_LEAD), or :func:`horizon` if that is less or
        nothing was seen yet. Observing costs per block, and half of it went on
        the lead with a fixed horizon; a start needing more than the lead is taken
        at the next block and counted in :attr:`overshot`, and the next lead covers
        twice what it needed."""
        most = horizon()
        if not self._needs:
            return most
        return min(most, max(LEAST_LEAD, 2 * max(self._needs)))

    def _observe(self) -> None:
        notes = runtime.osp_notes
        fill_dropped(notes[:])  # noted as observation stopped: counted down
        del notes[:]
        self.observing = True
        self._arm_notes()
        runtime.observe_blocks(True)

    # -- called by the runtime ---------------------------------------------------

    def path_end(self, state: ModuleState, index: int, number: int, frame: FrameType,
                 track: _Track | None = None) -> _Track | None:
        """Path ``number`` of ``frame`` ended (the notes are taken first). Returns the
        frame's track for it to note its next path ends with, or None."""
        with self._lock:
            if self._busy:
                return track
            self._busy = 1
            try:
                self.take_notes()
                return self._path_end(state, index, number, frame)
            except Exception as err:  # never let the sampler change the program
                if self._passes(err):  # a signal handler's: the program's
                    raise
                self._failed(frame)
                return None
            finally:
                self._busy = 0

    def _path_end(self, state: ModuleState, index: int, number: int, frame: FrameType
                  ) -> _Track | None:
        if not self.observing:
            # A path that ends the call (a return, counted before its value) leaves the
            # frame untracked, as below: calls in the return's value do not send its
            # blocks again.
            if self._start_observing(frame) and not self.decoder.path(state, index, number)[1]:
                return self._adopt(frame, state, index, stream_key(frame))
            return None
        track = self._track(frame, state, index)
        self._ended(track, number)
        self._observed()
        return track

    def _ended(self, track: _Track, number: int) -> None:
        """``track``'s frame ended path ``number``: its blocks not out yet go out."""
        blocks, ended = self.decoder.path(track.state, track.index, number)
        self._emit(track, blocks[track.emitted:])
        self._path_over(track)
        track.ended_at = blocks[-1] if blocks else None
        if ended:  # the call is over
            if self._frames.get(track.frame) is track:  # (its id may be reused)
                del self._frames[track.frame]
            if track.stream == ("frame", track.frame):
                self.streams.close(track.stream)

    def _observed(self) -> None:
        """After the events taken: back to the countdown once no window is open and
        the next start is beyond the lead, else the notes taken again when they may
        have opened or closed one (:meth:`_arm_notes`)."""
        if self.exact is None and self.sampler.gap > self._coming_lead \
                and not any(True for _ in self.streams.windows()):
            self._count_down()
        elif self.observing:
            self._arm_notes()

    def _arm_notes(self) -> None:
        """The countdown to the floor after as many blocks as may pass before a
        window opens or closes, so that observing stops soon after the last closes:
        the most an open window still takes, else the gap to the next start (with
        ``exact``, NOTES_TAKEN blocks)."""
        if self.exact is not None:
            due = NOTES_TAKEN
        else:
            due = max((w.length - len(w.blocks) for w in self.streams.windows()),
                      default=self.sampler.gap)
        runtime.countdown[0] = OBSERVED_FLOOR + min(max(due, 1), NOTES_TAKEN)

    def take_notes(self) -> None:
        """Decode what instrumented code noted since the notes were last taken
        (:data:`pathprof.runtime.osp_notes`), in the order it was noted: path ends
        ``(track, path number)``; calls, ``(blank track, state, index, frame id,
        code, caller's track, caller's offset, caller's register)``
        (:func:`pathprof.python.probecode.note_call`), which fill in the callee's
        track and send the caller's blocks up to the call. Notes left from an
        earlier observation are dropped: those paths were counted down.

        The common case -- a track of this observation, nothing held -- is decoded
        here, runs of blocks going to one stream sent together; any other note is
        taken on its own by :meth:`_take_note`, in its place."""
        notes = runtime.osp_notes
        if not notes:
            return
        taken = notes[:]
        del notes[:len(taken)]  # what another thread noted meanwhile stays
        if not self.observing:
            fill_dropped(taken)
            return
        frames = self._frames
        call_prefixes = self._call_prefixes
        run: list[int] = []  # blocks going to one stream, sent together
        run_stream: StreamKey | None = None
        generation = self._generation
        track: _Track
        for note in taken:
            if len(note) == 2:
                track, number = note
                stream = track.stream
                if (track.generation == generation and not track.held and not self._held
                        and stream[0] != "hold" and number.__class__ is int):
                    decoded = track.decoded
                    if decoded is None:
                        decoded = track.decoded = self._decoded.setdefault(
                            (id(track.state), track.index), {})
                    found = decoded.get(number)
                    if found is None:
                        try:
                            found = decoded[number] = self._decode_noted(track, number)
                        except Exception as err:  # never let the sampler change the program
                            if self._passes(err):  # a signal handler's: the program's
                                raise
                            self._failed_track(track)
                            continue
                    # As _ended does it: the blocks of the path not out yet go out,
                    # in one run with the next ones.
                    idents, ended, last = found
                    if stream != run_stream:
                        if run:
                            self.streams.send(run_stream, run)
                            run = []
                        run_stream = stream
                    run += idents[track.emitted:] if track.emitted else idents
                    track.emitted = track.sent = 0
                    track.ended_at = last
                    if ended:  # the call is over
                        if frames.get(track.frame) is track:  # (its id may be reused)
                            del frames[track.frame]
                        if stream == ("frame", track.frame):
                            if run:
                                self.streams.send(run_stream, run)
                                run = []
                            self.streams.close(stream)
                    continue
            else:
                callee, state, index, ident, code, track, offset, register = note
                stream = track.stream
                if (track.generation == generation and not track.held and not self._held
                        and stream[0] != "hold"):
                    # The callee's stream is its caller's (generators, coroutines and
                    # a with's __exit__ call the runtime instead), as in _enter;
                    # filled as fill() does, inline (one call fewer per call noted).
                    callee.state, callee.index, callee.frame = state, index, ident
                    callee.stream = callee.home = stream
                    callee.emitted = callee.sent = 0
                    callee.held = []
                    callee.ended_at = callee.decoded = None
                    callee.generation, callee.code = generation, code
                    frames[ident] = callee
                    found = (call_prefixes.get((track.code, offset, register), _UNKNOWN)
                             if register.__class__ is int else None)  # (PARKED: no path)
                    if found is _UNKNOWN:
                        found = self.decoder.call_prefix(track, offset, register)
                    if found is None:
                        continue
                    length, idents, _blocks = found
                    if frames.get(track.frame) is not track:
                        # A call in the value of a return counted before it: the
                        # path went out whole, and the frame joins again here.
                        track.join(generation)
                        frames.setdefault(track.frame, track)
                        track.emitted = length
                        continue
                    emitted = track.emitted
                    if length <= emitted:
                        continue
                    if stream != run_stream:
                        if run:
                            self.streams.send(run_stream, run)
                            run = []
                        run_stream = stream
                    run += idents[emitted:] if emitted else idents
                    track.sent += length - emitted
                    track.emitted = length
                    track.ended_at = None
                    continue
            if run:
                self.streams.send(run_stream, run)
                run = []
            self._take_note(note)
        if run:
            self.streams.send(run_stream, run)

    def _take_note(self, note: tuple[Any, ...]) -> None:
        """One note, on its own (see :meth:`take_notes`): a track from an earlier
        observation, a frame whose call a return ended, or something held."""
        # (Any: a :data:`pathprof.runtime.osp_notes` note, read as its kind's items;
        # ``number`` is a path number, a call's blocks or None, told apart by
        # ``__class__``, and a held caller's track has a ``home``: nothing mypy can
        # follow, where ``runtime.tracks.Note`` would need casts)
        generation = self._generation
        frames = self._frames
        number: Any
        if len(note) == 2:
            track, number = note
            callee = None
        else:
            callee, state, index, ident, code, track, offset, register = note
            found = (self._call_prefixes.get((track.code, offset, register), _UNKNOWN)
                     if register.__class__ is int else None)
            if found is _UNKNOWN:
                found = self.decoder.call_prefix(track, offset, register)
            number = found[2] if found is not None else None
        joined = False
        if track.generation != generation:
            # A track from an earlier observation: the frame's track now, if it
            # has one, else it joins the stream here.
            current = frames.get(track.frame)
            if current is not None and current.state is track.state \
                    and current.index == track.index:
                track = current
            else:
                track.join(generation)
                frames[track.frame] = track
                joined = number.__class__ is tuple  # as _flush_caller's join
        elif number.__class__ is tuple and frames.get(track.frame) is not track:
            # A call after a path that ended the frame's track (a return counted
            # before its value): it joins here, as _flush_caller's.
            track.join(generation)
            frames.setdefault(track.frame, track)
            joined = True
        if callee is not None:
            # The callee's stream is its caller's, held if the caller's is and the
            # caller's own is its thread's (as _enter).
            stream = home = track.stream
            if stream[0] == "hold":
                home = track.home
                if home[0] != "thread":
                    stream = home
                number = None  # a held caller's blocks wait for the exit's place
            frames[ident] = fill(callee, state, index, stream, frame=ident, home=home,
                                 generation=generation, code=code)
            if number is None:
                return
        if joined:
            track.emitted = len(number)
            return
        try:
            if number.__class__ is tuple:  # a call's blocks up to it
                emitted = track.emitted
                if len(number) > emitted:
                    self._emit(track, number[emitted:])
                    track.emitted = len(number)
                return
            self._ended(track, number)
        except Exception as err:  # never let the sampler change the program
            if self._passes(err):  # a signal handler's: the program's
                raise
            self._failed_track(track)

    def _decode_noted(self, track: _Track, number: int
                      ) -> tuple[list[int], bool, int | None]:
        blocks, ended = self.decoder.path(track.state, track.index, number)
        return (self.decoder.idents(track.state, track.index, blocks), ended,
                blocks[-1] if blocks else None)

    def enter(self, state: ModuleState, index: int, frame: FrameType) -> _Track | None:
        """A call of an instrumented function begins. Returns its frame's track, or
        None."""
        with self._lock:
            if not self.observing or self._busy:
                return None
            self._busy = 1
            try:
                return self._enter(state, index, frame)
            except Exception as err:  # never let the sampler change the program
                if self._passes(err):  # a signal handler's: the program's
                    raise
                self._failed(frame)
                return None
            finally:
                self._busy = 0

    def _enter(self, state: ModuleState, index: int, frame: FrameType) -> _Track:
        # The notes first: the frames they name are the ones they were made in,
        # which may be gone, their ids taken by this frame or its caller.
        self.take_notes()
        caller = frame.f_back
        found = None
        while caller is not None:
            found = self.decoder.function(caller)
            if found is not None:
                break
            caller = caller.f_back  # a comprehension, a wrapper pathprof does not measure
        caller_track = self._frames.get(id(caller)) if caller is not None else None
        if (caller_track is not None and caller is frame.f_back
                and caller_track.stream[0] != "hold"
                and not frame.f_code.co_flags & OWN_STREAM
                and found == (caller_track.state, caller_track.index)):
            stream = caller_track.stream  # stream_key(frame), without the walk
        else:
            stream = stream_key(frame)
        home = stream
        if caller_track is not None and caller_track.stream[0] == "hold" and (
                stream[0] == "thread" or stream == caller_track.stream):
            stream = caller_track.stream  # called by a held __exit__: held too
        elif caller is not None and frame.f_code.co_name == _EXIT and frame.f_back is caller:
            held = self._hold_exit(caller, frame)
            if held is not None:
                stream = held
        elif found is not None and caller is not None:  # (found: in a caller)
            self._flush_caller(caller, found)
        track = self._frames[id(frame)] = new_track(
            state, index, stream, frame=id(frame), home=home, generation=self._generation,
            code=frame.f_code)
        return track

    def _hold_exit(self, caller: FrameType, frame: FrameType) -> StreamKey | None:
        """A with statement's ``__exit__`` called by ``caller``: its blocks (and its
        callees') are held and go out at the caller's next blocks, before the first
        that is not in the with's body -- the block after the with, the one after
        the loop a break leaves, a handler, the next iteration -- or, if the caller
        has no more blocks (it returned, or an exception left it), before the blocks
        of the frame below. The call's instruction cannot tell which way out of the
        with it is (CPython writes a copy of the exit code for each), nor, so, how
        far the caller's path has run."""
        found = self.decoder.function(caller)
        track = self._frames.get(id(caller))
        if found is None or track is None or found != (track.state, track.index):
            return None
        state, index = found
        blockmap = state._blockmap(index, caller.f_code)
        span = blockmap.position(caller.f_lasti)
        compound = blockmap.with_code(caller.f_lasti, span) if span is not None else None
        if compound is None:
            return None
        key = ("hold", id(frame))
        lines = (compound.span.line, compound.span.end_line)
        before = self.decoder.exit_prefix(caller, state, index, blockmap, compound)
        if track.ended_at is not None and jumps_out(state.meta.functions[index],
                                                     track.ended_at, *lines):
            # A continue (a loop's back edge) out of the with: its path ended at the
            # jump, before the exit runs, and went out whole; the register holds the
            # next path's start, which tells nothing of the blocks before the exit.
            before = None
        hold: Hold = ([], lines, compound.with_exit, before)
        track.held.append(hold)  # after the exits of withs inside it, held already
        self._held[key] = (track, hold)
        return key

    def cut(self, state: ModuleState, index: int, frame: FrameType, located: tuple[int, str] | None,
            register: int) -> None:
        """An exception caught in ``frame`` ended its path where ``located`` says."""
        with self._lock:
            if located is None or self._busy:
                return
            self._busy = 1
            try:
                self.take_notes()
                self._cut(state, index, frame, located, register)
            except Exception as err:  # never let the sampler change the program
                if self._passes(err):  # a signal handler's: the program's
                    raise
                self._failed(frame)
            finally:
                self._busy = 0

    def _cut(self, state: ModuleState, index: int, frame: FrameType, located: tuple[int, str],
             register: int) -> None:
        block, how = located
        function = state.meta.functions[index]
        if how in ("return-exit", "continue-exit") or (
                how == "return-value" and block in function.early_returns):
            # The path ended (and went out) before the exception: a return counted
            # before its value, or a with's __exit__ after a return or continue.
            blocks: tuple[int, ...] = ()
        elif how == "raise":
            blocks = self.decoder.path(state, index, register)[0]
        else:
            blocks = self.decoder.prefix(state, index, block, register)
        if not self.observing:
            runtime.countdown[0] -= len(blocks)
            return
        track = self._track(frame, state, index)
        self._emit(track, blocks[track.emitted:])
        self._path_over(track)

    def path_length(self, state: ModuleState, index: int, number: int) -> int:
        with runtime.own_work:
            try:
                return len(self.decoder.path(state, index, number)[0])
            except Exception as err:  # never let the sampler change the program
                if self._passes(err):  # a signal handler's: the program's
                    raise
                self.failures += 1
                return 0

    def _failed(self, frame: FrameType) -> None:
        """Something pathprof could not decode: the frame's path leaves the stream
        (counted in :attr:`failures`, which tests expect to stay 0)."""
        self.failures += 1
        if os.environ.get("PATHPROF_DEBUG_SUBPATHS"):
            import traceback

            traceback.print_exc()
        self._frames.pop(id(frame), None)

    def _failed_track(self, track: _Track) -> None:
        """As :meth:`_failed`, for a noted path end."""
        self.failures += 1
        if os.environ.get("PATHPROF_DEBUG_SUBPATHS"):
            import traceback

            traceback.print_exc()
        self._frames.pop(track.frame, None)

    # -- the stream --------------------------------------------------------------

    def _start_observing(self, frame: FrameType) -> bool:
        """The countdown reached 0 at a path end in ``frame``: the next start is
        ``countdown + lead`` blocks away, less the blocks the frames below it
        on this thread's stack have run of their current paths (up to the call they
        are in), which went by uncounted: paths are counted where they end.
        False when the start is still far (the countdown stops at FAR): then the
        countdown goes on."""
        sampler = self.sampler
        far = sampler.gap - (self._armed - runtime.countdown[0])
        if far > self._lead:
            sampler.positions += sampler.gap - far
            sampler.gap = far
            self._arm()
            return False
        unseen = 0
        callers = []
        caller = frame.f_back
        while caller is not None:
            callers.append(caller)
            caller = caller.f_back
        key: StreamKey = ("thread", _thread.get_ident())
        for caller in reversed(callers):  # from the bottom: each one's stream_key
            if caller.f_code.co_flags & OWN_STREAM:
                key = ("frame", id(caller))
            found = self.decoder.function(caller)
            if found is not None:
                state, index = found
                if self.decoder.path_counted(caller, state, index):
                    continue  # as for a frame seen returning: it joins at its next call
                prefix = self.decoder.frame_prefix(caller, state, index)
                done = len(prefix) if prefix is not None else 0
                unseen += done
                # (a frame's track from an earlier observation is matched to
                # this one where its notes are taken: no read of its locals here)
                self._frames[id(caller)] = new_track(state, index, key, done, done,
                                                     frame=id(caller),
                                                     generation=self._generation,
                                                     code=caller.f_code)
        remaining = far - unseen
        self._needs.append(self._lead - remaining)
        self._coming_lead = self._next_lead()
        sampler.positions += max(sampler.gap - remaining, 0)
        if remaining < 1:
            self.overshot += 1  # the start went by: it is taken at the next block
        sampler.gap = max(remaining, 1)
        self._observe()
        return True

    def _flush_caller(self, caller: FrameType, found: tuple[ModuleState, int]) -> None:
        """A call from ``caller`` (``found``: its module state and function index): its
        blocks up to the one making the call go out before the callee's."""
        state, index = found
        prefix = self.decoder.frame_prefix(caller, state, index)
        if prefix is None:
            return
        track = self._frames.get(id(caller))
        if track is None or track.state is not state or track.index != index:
            # Not seen since observation began (another thread's frame): it joins here.
            self._adopt(caller, state, index, stream_key(caller), len(prefix))
            return
        self._emit(track, prefix[track.emitted:])
        track.emitted = max(track.emitted, len(prefix))

    def _path_over(self, track: _Track) -> None:
        """``track``'s path ended, every block of it out: so are the blocks before
        each exit it still holds (a prefix of that path), which :meth:`_release`
        must not send again (a ``break`` out of a ``with`` whose next blocks run no
        code, then the end of the call)."""
        track.emitted = track.sent = 0
        if not track.held:
            return
        renewed: list[Hold] = [(idents, span, after, None)
                                for idents, span, after, _ in track.held]
        for key, (holder, hold) in list(self._held.items()):
            if holder is track:
                position = next(i for i, h in enumerate(track.held) if h is hold)
                self._held[key] = (track, renewed[position])
        track.held = renewed

    def _track(self, frame: FrameType, state: ModuleState, index: int) -> _Track:
        track = self._frames.get(id(frame))
        if track is None or track.state is not state or track.index != index:
            track = self._adopt(frame, state, index, stream_key(frame))
        return track

    def _adopt(self, frame: FrameType, state: ModuleState, index: int, stream: StreamKey,
               done: int = 0, sent: int = 0) -> _Track:
        """The track of ``frame``, which joins the stream with ``done`` blocks of its
        path out (``sent`` of them counted in the positions): the one its code
        holds if it holds one, so that its notes and the profiler's own events
        name the same track, else a new one."""
        held = track_of(frame)
        if (isinstance(held, _Track) and getattr(held, "state", None) is state
                and held.index == index and held.frame == id(frame)):
            track = held
            track.join(self._generation)
            track.stream = stream
            track.code = frame.f_code
            track.emitted, track.sent = done, sent
        else:
            track = new_track(state, index, stream, done, sent, frame=id(frame),
                              generation=self._generation, code=frame.f_code)
        self._frames[id(frame)] = track
        return track

    def _emit(self, track: _Track, blocks: tuple[int, ...]) -> None:
        if not blocks and not track.held:
            return
        if blocks:
            track.ended_at = None
        track.emitted += len(blocks)
        track.sent += len(blocks)
        idents = self.decoder.idents(track.state, track.index, blocks)
        if track.stream[0] == "hold":
            found = self._held.get(track.stream)
            if found is not None:
                found[1][0].extend(idents)
            return
        if not self._held:  # nothing held anywhere (the common case): sent as it is
            self.streams.send(track.stream, idents)
            return
        self._below(track)
        function = track.state.meta.functions[track.index]
        start = 0
        while track.held:
            _idents, (first, last), after, _before = track.held[0]
            cut = next((i for i in range(start, len(blocks))
                        if blocks[i] == after or not inside(function, blocks[i], first, last)),
                       None)
            if cut is None:
                break
            self.streams.send(track.stream, idents[start:cut])
            self._release_first(track)
            start = cut
        self.streams.send(track.stream, idents[start:])

    def _below(self, track: _Track) -> None:
        """Blocks of ``track``'s frame go out: held exits of frames above it on the
        stack (which returned, or an exception left) go out first."""
        for holder, _hold in list(self._held.values()):
            if holder is not track and holder.stream == track.stream:
                self._release(holder)

    def _release_first(self, track: _Track) -> None:
        hold = track.held.pop(0)
        for key in [k for k, (_t, h) in self._held.items() if h is hold]:
            del self._held[key]
        self.streams.send(track.stream, hold[0])

    def _release(self, track: _Track) -> None:
        """The frame that held exits has no more blocks to tell where they go (an
        exception left it, or sampling stops): its blocks before each exit, as far
        as the exit's call could tell, then the exit's."""
        while track.held:
            before = track.held[0][3]
            if before is not None and len(before) > track.emitted:
                key = id(track.state)
                self.streams.send(track.stream,
                                  [self.decoder.block_id(track.state, track.index, b, key)
                                   for b in before[track.emitted:]])
                track.sent += len(before) - track.emitted
                track.emitted = len(before)
            self._release_first(track)
