"""OSP's block stream from real code: what the instrumented program feeds the sampler
is the blocks each stream ran, in order, callee blocks where the calls happened --
checked against an instruction trace (the block-trace oracle) on the corpus."""

from __future__ import annotations

import ast
import hashlib
import itertools
import sys
import weakref
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathprof import runtime
from pathprof.measure.subpaths import NOTES_TAKEN, SubpathProfiler, stream_key
from pathprof.runtime.subpaths import LengthDistribution, SubpathSampler
from pathprof.runtime.tracks import CALL_NOTE, Track, fill_dropped, new_track

from .loading import corpus_programs, load_instrumented, program_examples
from .oracles import BlockTraceOracle
from .python.random_programs import PRELUDE, functions
from .python.test_random_programs import _outcome

PROGRAMS = corpus_programs()
_runs = itertools.count()


class StreamOracle(BlockTraceOracle):
    """The visible blocks each stream ran, in order, from the instruction trace (a
    generator's or coroutine's frame is a stream of its own; other frames go to the
    nearest such frame below them, or their thread). A frame's blocks go out when it
    calls a traced function, when its path ends, and when an exception that cut its
    path is caught in it or passes a with statement's exit in it -- not when an
    exception leaves it otherwise: the blocks of that last path since its last call
    are what pathprof's stream leaves out (such an exit is noted without calling
    Python)."""

    def __init__(self, infos: list[Any]) -> None:
        super().__init__(infos)
        self.streams: dict[Any, list[tuple[str, int]]] = defaultdict(list)
        self._emitted: dict[int, int] = {}
        self._frame: Any = None
        self._alive: list[Any] = []  # frames kept, so that no id is reused
        #: per frame: the blocks of a path an exception cut, until it is caught
        self._pending: dict[int, tuple[Any, list[int]]] = {}

    def _event(self, info: Any, frame: Any, event: str, arg: Any) -> None:
        self._frame = frame
        if event == "call":
            self._alive.append(frame)
            caller = frame.f_back
            while caller is not None and caller.f_code not in self.by_code:
                caller = caller.f_back
            state = self.states.get(id(caller)) if caller is not None else None
            if state is not None and state.open:
                self._flush(self.by_code[caller.f_code], caller, state.blocks)
        self._frame = frame
        super()._event(info, frame, event, arg)
        pending = self._pending.get(id(frame))
        if pending is not None:
            state = self.states.get(id(frame))
            if event == "return" or state is None:  # it left the frame
                del self._pending[id(frame)]
                self._emitted[id(frame)] = 0
            elif state.open or state.with_exit is not None:
                # Caught here (a handler's path began), or a with's exit runs: pathprof
                # hears of it (the handler's call, the with body's observer).
                del self._pending[id(frame)]
                self._flush(pending[0], frame, pending[1])
                self._emitted[id(frame)] = 0

    def _flush(self, info: Any, frame: Any, blocks: list[int]) -> None:
        done = self._emitted.get(id(frame), 0)
        for block in blocks[done:]:
            if block in info.visible:
                self.streams[stream_key(frame)].append((info.meta.qualname, block))
        self._emitted[id(frame)] = max(done, len(blocks))

    def _end(self, info: Any, state: Any, how: str) -> None:
        located = info.blockmap.locate(self._frame.f_lasti) if how == "cut" else None
        # A return whose path pathprof counts before its value: out already.
        counted = located is not None and located[1] == "return-value" and (
            located[0] in info.meta.early_returns)
        if how in ("cut", "raise") and not counted:
            self._pending[id(self._frame)] = (info, list(state.blocks))
        else:
            self._flush(info, self._frame, state.blocks)
            self._emitted[id(self._frame)] = 0
        super()._end(info, state, how)


def pathprof_streams(profiler: SubpathProfiler, infos: list[Any]) -> list[tuple]:
    visible = {info.meta.qualname: info.visible for info in infos}
    streams = []
    assert profiler.record is not None
    for blocks in profiler.record.values():
        named = [(profiler.blocks[i].qualname, profiler.blocks[i].block) for i in blocks]
        shown = tuple(b for b in named if b[1] in visible[b[0]])
        if shown:
            streams.append(shown)
    return sorted(streams)


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_the_stream_is_the_blocks_that_ran_in_order(path: Path) -> None:
    loaded = load_instrumented(path, subpaths=True)
    infos = loaded.function_infos()
    oracle = StreamOracle(infos)
    profiler = SubpathProfiler(SubpathSampler(period=50, seed=1,
                                              lengths=LengthDistribution.geometric(3)),
                               exact=True, record=True)

    def run() -> object:
        loaded.execute()
        return loaded.module.drive()

    profiler.start()
    try:
        oracle.run(run)
    finally:
        profiler.stop()
    assert not oracle.errors, oracle.errors
    assert profiler.failures == 0
    expected = sorted(tuple(s) for s in oracle.streams.values() if s)
    assert pathprof_streams(profiler, infos) == expected


def _stream_both(loaded: Any, inputs: list[tuple[int, int]]) -> tuple[Any, Any, Any]:
    """Run ``f`` of ``loaded`` on ``inputs`` under the instruction-trace stream oracle
    and pathprof's exact subpath recorder; the oracle, the profiler, the infos."""
    infos = loaded.function_infos()
    loaded.execute()
    oracle = StreamOracle(infos)
    profiler = SubpathProfiler(SubpathSampler(period=7, seed=3), exact=True, record=True)
    profiler.start()
    try:
        oracle.run(lambda: [_outcome(loaded.module.f, s, n) for s, n in inputs])
    finally:
        profiler.stop()
        sys.modules.pop(loaded.module.__name__, None)
    return oracle, profiler, infos


BREAK_IN_FINALLY = PRELUDE + '''def f(c, n):
    x = 0
    try:
        while c():
            x += 1
        if c():
            x += 1
        if c():
            raise Boom()
    finally:
        while c():
            with Gate(c):
                break
    return x
'''

#: Found by CI's random programs on 3.13 (also so on 3.11 and 3.14, and at c6f735c):
#: a ``continue`` through a ``finally`` inside a ``with``, in a generator's loop.
CONTINUE_THROUGH_FINALLY_IN_WITH = PRELUDE + '''def f(c, n):
    x = 0
    yield x
    for i in range(n):
        with Gate(c):
            try:
                continue
            finally:
                x += 1
    else:
        yield x
    return x
'''

#: Found next (3.14; also so at c6f735c): a ``break`` out of a ``with`` in a loop, no
#: ``finally`` at all, in a function that then raises.
#: Not a jump out of the with: a break out of a loop inside it, after the loop's back
#: edge ended a path (the with's exit then follows blocks of the next path).
BREAK_OUT_OF_A_LOOP_IN_A_WITH = PRELUDE + '''def f(c, n):
    x = 0
    yield x
    with Gate(c):
        while True:
            if not c():
                break
            x += 1
    if c():
        raise Boom()
    return x
'''

BREAK_OUT_OF_A_WITH = PRELUDE + '''def f(c, n):
    x = 0
    while c():
        while c():
            x += 1
        while c():
            with Gate(c):
                break
    if c():
        raise Boom()
    return x
'''

#: A break through a finally inside a with: the with's exit follows the finally's
#: block, whose path the break ended.
BREAK_THROUGH_A_FINALLY_IN_A_WITH = PRELUDE + '''def f(c, n):
    x = 0
    while c():
        with Gate(c):
            try:
                break
            finally:
                x += 1
            x += 1
            x += 1
        x += 1
    if c():
        raise Boom()
    return x
'''

#: A return inside a with, inside a handler of a try with a finally (3.14).
RETURN_IN_A_WITH_IN_A_HANDLER = PRELUDE + '''def f(c, n):
    x = 0
    yield x
    try:
        if c():
            raise Boom()
    except Boom:
        with Gate(c):
            x += 1
            while True:
                if not c():
                    break
                x += 1
            return x
    finally:
        if c():
            raise Boom()
    return x
'''

#: A return inside a with inside a try whose finally yields: the return's path is
#: counted in the finally, after the with's exit, so the register at the exit is
#: the return's (the exit was decoded as the with's normal one: found at 7739a70).
RETURN_IN_A_WITH_COUNTED_IN_A_FINALLY = PRELUDE + '''def f(c, n):
    x = 0
    yield x
    try:
        with Gate(c):
            if c():
                x += 1
            if c():
                x += 1
            elif c():
                return x
    finally:
        yield x
    return x
'''


#: A return inside a try/finally inside a with: the return runs on through the
#: finally's copy into the with's exit, which was decoded as the normal one (the
#: blocks after the try went out, though they never ran: found at 97255ab).
RETURN_THROUGH_A_FINALLY_IN_A_WITH = PRELUDE + '''def f(c, n):
    x = 0
    try:
        with Gate(c):
            try:
                return x
            finally:
                x += 1
            x += 1
    except Boom:
        x += 1
    finally:
        if c():
            x += 1
        elif c():
            x += 1
        if c():
            raise Boom()
    return x
'''


@pytest.mark.parametrize(("program", "inputs"), [
    (RETURN_THROUGH_A_FINALLY_IN_A_WITH, [(0, 0), (1, 1), (2, 0), (3, 3)]),
    (BREAK_IN_FINALLY, [(0, 0)]), (CONTINUE_THROUGH_FINALLY_IN_WITH, [(2, 2)]),
    (BREAK_OUT_OF_A_WITH, [(1, 1)]), (BREAK_OUT_OF_A_LOOP_IN_A_WITH, [(3, 0)]),
    (BREAK_THROUGH_A_FINALLY_IN_A_WITH, [(4, 1)]), (RETURN_IN_A_WITH_IN_A_HANDLER, [(3, 0)]),
    (RETURN_IN_A_WITH_COUNTED_IN_A_FINALLY, [(2, 2)])],
    ids=["return-through-a-finally-in-a-with",
         "break-out-of-a-with-in-a-finally", "continue-through-a-finally-in-a-with",
         "break-out-of-a-with", "break-out-of-a-loop-in-a-with",
         "break-through-a-finally-in-a-with", "return-in-a-with-in-a-handler",
         "return-in-a-with-counted-in-a-finally"])
def test_a_loop_jump_out_of_a_with(tmp_path: Path, program: str,
                                                 inputs: list[tuple[int, int]]) -> None:
    """Found by the random programs (CI: 3.11, then 3.13, then 3.14 locally; each
    already so at c6f735c): the stream repeated ``f``'s blocks before ``Gate.__exit__``
    (the blocks before a held exit were sent again once the frame's path had ended)."""
    path = tmp_path / "loop_jump.py"
    path.write_text(program, encoding="utf-8")
    loaded = load_instrumented(path, f"pathprof_stream_finally_{next(_runs)}",
                               subpaths=True)
    oracle, profiler, infos = _stream_both(loaded, inputs)
    expected = sorted(tuple(s) for s in oracle.streams.values() if s)
    assert pathprof_streams(profiler, infos) == expected


@pytest.mark.parametrize("outside", [False, True], ids=["registers-in-frame",
                                                        "registers-outside"])
@settings(max_examples=program_examples(100), deadline=None)
@given(source=functions(), data=st.data())
def test_random_programs_stream_the_blocks_that_ran(tmp_path_factory: Any, outside: bool,
                                                    source: str, data: st.DataObject) -> None:
    """Random programs (loops, try, with, match, raise, break, continue, return) on
    random inputs: the stream equals the instruction trace's."""
    inputs = data.draw(st.lists(st.sampled_from([(s, s % 3) for s in range(8)]),
                                min_size=1, max_size=4))
    directory = tmp_path_factory.mktemp("random")
    path = directory / f"random_{hashlib.sha256(source.encode()).hexdigest()[:12]}.py"
    path.write_text(source, encoding="utf-8")
    loaded = load_instrumented(path, f"pathprof_stream_{path.stem}_{next(_runs)}",
                               registers_outside=outside, subpaths=True)
    oracle, profiler, infos = _stream_both(loaded, inputs)
    assert not oracle.errors, (oracle.errors, source)
    assert profiler.failures == 0, source
    expected = sorted(tuple(s) for s in oracle.streams.values() if s)
    assert pathprof_streams(profiler, infos) == expected, source



def test_a_stale_outside_register_does_not_mislead_a_frame_that_keeps_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The table of registers kept outside frames keeps the entries of frames that are
    gone, under ids that new frames may have (found by CI on 3.14: a random program
    whose caller's blocks came after its callee's, on the first run only). A frame
    with its register in its locals never reads it."""
    from pathprof import runtime

    class Stale(dict):
        def get(self, key: Any, default: Any = None) -> Any:
            return {"@pp_r": 12345}

    path = next(p for p in PROGRAMS if p.stem == "basics")
    loaded = load_instrumented(path, f"pathprof_stale_{next(_runs)}", subpaths=True)
    infos = loaded.function_infos()
    oracle = StreamOracle(infos)
    profiler = SubpathProfiler(SubpathSampler(period=50, seed=1), exact=True, record=True)
    monkeypatch.setattr(runtime.instrumented, "outside_registers", Stale())
    profiler.start()
    try:
        oracle.run(lambda: (loaded.execute(), loaded.module.drive()))
    finally:
        profiler.stop()
    assert profiler.failures == 0
    assert pathprof_streams(profiler, infos) == sorted(
        tuple(s) for s in oracle.streams.values() if s)


NOTED_LOOP = '''def total(n, step):
    t = 0
    for i in range(n):
        if i % 3 == 0:
            t += step(i)
        else:
            t -= 1
    return t


def step(i):
    return i % 7


def spin(n):
    t = 0
    for i in range(n):
        t += i
    return t


def main():
    return total(3_000, step) + spin(20_000)
'''


def test_path_ends_are_noted_and_decoded_in_bulk(tmp_path: Path) -> None:
    """While blocks are observed, a frame the profiler has met notes its path ends
    (a list append in its own code) instead of calling it. Under ``exact``, which
    observes the whole run: the notes are taken each time the countdown
    has fallen NOTES_TAKEN blocks, and at the stop; the stream is still the
    instruction trace's. Calls are noted too when the caller holds a track: only
    the first (main's, from code pathprof does not measure) reaches the profiler."""
    path = tmp_path / "noted.py"
    path.write_text(NOTED_LOOP, encoding="utf-8")
    loaded = load_instrumented(path, f"pathprof_noted_{next(_runs)}", subpaths=True)
    infos = loaded.function_infos()
    loaded.execute()
    oracle = StreamOracle(infos)
    profiler = SubpathProfiler(SubpathSampler(period=50, seed=1), exact=True, record=True)
    calls = {"path_end": 0, "enter": 0, "take_notes": 0}
    call_notes = 0

    def counted(name: str) -> Any:
        method = getattr(profiler, name)

        def call(*args: Any) -> Any:
            nonlocal call_notes
            calls[name] += 1
            if name == "take_notes":
                call_notes += sum(len(note) == CALL_NOTE for note in runtime.osp_notes)
            return method(*args)
        return call

    for name in calls:
        setattr(profiler, name, counted(name))
    profiler.start()
    try:
        oracle.run(loaded.module.main)
    finally:
        profiler.stop()
        sys.modules.pop(loaded.module.__name__, None)
    assert profiler.failures == 0
    assert calls["enter"] == 1  # main
    assert call_notes == 2 + 1_000  # noted: total, spin, and step 1,000 times
    # Every frame gets its track as it is entered: a path end calls only when the
    # countdown (path lengths, as they end) falls to the floor, every NOTES_TAKEN
    # blocks of the stream.
    blocks = profiler.sampler.positions
    assert blocks > 40_000
    assert blocks // NOTES_TAKEN - 1 <= calls["path_end"] <= blocks // NOTES_TAKEN
    # The notes are taken at each of those calls, at main's call and at the stop.
    assert calls["take_notes"] == calls["path_end"] + 2
    expected = sorted(tuple(s) for s in oracle.streams.values() if s)
    assert pathprof_streams(profiler, infos) == expected


CALLS_NOTED_OR_NOT = '''import sys


class Ctx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def helper(i):
    return i + 1


def gen(n):
    for i in range(n):
        yield helper(i)


def peek():
    return sys._getframe().f_lineno * 0 + helper(1)


def main():
    with Ctx():
        t = sum(gen(3))
    t += peek()
    t += sum([helper(i) for i in range(2)])
    return t
'''


def test_which_calls_are_noted(tmp_path: Path) -> None:
    """A call is noted by the callee's code when its caller holds a track; the
    profiler is called instead for a generator (a stream of its own), a with
    statement's ``__exit__`` (held: read from the caller's frame at once), and a
    caller with no track of its own in its frame: code pathprof does not measure
    (the test's; a list comprehension's frame before 3.12) or a function whose
    names live outside its frame (``peek`` reaches its own frame). The stream is
    the instruction trace's either way."""
    path = tmp_path / "noted_or_not.py"
    path.write_text(CALLS_NOTED_OR_NOT, encoding="utf-8")
    loaded = load_instrumented(path, f"pathprof_noted_or_not_{next(_runs)}", subpaths=True)
    infos = loaded.function_infos()
    loaded.execute()
    oracle = StreamOracle(infos)
    profiler = SubpathProfiler(SubpathSampler(period=50, seed=1), exact=True, record=True)
    entered: list[str] = []
    noted: list[str] = []
    enter, take_notes = profiler.enter, profiler.take_notes

    def counted_enter(state: Any, index: int, frame: Any) -> Any:
        entered.append(frame.f_code.co_name)
        return enter(state, index, frame)

    def counted_take_notes() -> None:
        noted.extend(state.meta.functions[index].qualname
                     for _track, state, index, *_ in (n for n in runtime.osp_notes
                                                       if len(n) == CALL_NOTE))
        take_notes()

    profiler.enter = counted_enter  # type: ignore[method-assign]
    profiler.take_notes = counted_take_notes  # type: ignore[method-assign]
    profiler.start()
    try:
        assert oracle.run(loaded.module.main) == (1 + 2 + 3) + 2 + (1 + 2)
    finally:
        profiler.stop()
        sys.modules.pop(loaded.module.__name__, None)
    assert profiler.failures == 0
    comprehension = ["helper", "helper"] if sys.version_info < (3, 12) else []
    assert sorted(entered) == sorted(["main", "__exit__", "gen", "helper", *comprehension])
    inlined = [] if comprehension else ["helper", "helper"]
    assert sorted(noted) == sorted(["Ctx.__enter__", "helper", "helper", "helper", "peek",
                                    *inlined])
    expected = sorted(tuple(s) for s in oracle.streams.values() if s)
    assert pathprof_streams(profiler, infos) == expected


def test_blank_tracks_in_dropped_notes_are_filled() -> None:
    """Notes taken unread (made as observation stopped) fill in the blank tracks of
    the calls they note, as from an earlier observation: the frame's later path
    ends join the stream afresh, in its caller's stream (its home, if the caller's
    is held)."""
    caller = new_track("state", 0, ("thread", 7), 3, 3, frame=11, generation=4)
    held = new_track("state", 1, ("hold", 12), frame=12, home=("frame", 5), generation=4)
    blank, blank_of_held = Track(), Track()
    path_end = (caller, 2)
    fill_dropped([(blank, "state", 2, 21, None, caller, 40, 1), path_end,
                  (blank_of_held, "state", 3, 22, None, held, 8, 0)])
    assert (blank.state, blank.index, blank.frame, blank.stream, blank.generation) == (
        "state", 2, 21, ("thread", 7), -1)
    assert (blank_of_held.index, blank_of_held.stream) == (3, ("frame", 5))
    blank.join(6)
    assert (blank.generation, blank.emitted, blank.sent, blank.held) == (6, 0, 0, [])
    assert caller.emitted == 3  # only blanks are touched


GHOST = '''def g(i):
    return i + 1


def main():
    t = 0
    if t == 0:
        t = g(1)
    return t + g(2)
'''


def test_a_call_the_profiler_hears_of_takes_the_notes_first(tmp_path: Path) -> None:
    """A note may name a frame that is gone, whose id a new frame has taken: the
    notes are decoded before the profiler reads or writes its frames for a call
    it hears of directly. Here a note made as if by a frame at main's id, before
    main's call reaches the profiler, comes first, and main's own track, made
    after it, stands: main's blocks before each call go out (before the fix, the
    stale note took main's place and its blocks went missing: a heisenbug of
    ``test_positions_count_each_block_once_across_calls`` under xdist)."""
    path = tmp_path / "ghost.py"
    path.write_text(GHOST, encoding="utf-8")
    loaded = load_instrumented(path, f"pathprof_ghost_{next(_runs)}", subpaths=True)
    infos = loaded.function_infos()
    loaded.execute()
    oracle = StreamOracle(infos)
    profiler = SubpathProfiler(SubpathSampler(period=50, seed=1), exact=True, record=True)
    enter = profiler.enter

    def enter_after_a_ghost(state: Any, index: int, frame: Any) -> Any:
        if frame.f_code.co_name == "main":
            gone = new_track(state, index, ("thread", 0), frame=id(frame) + 1,
                             generation=profiler._generation, code=frame.f_code)
            runtime.osp_notes.append((Track(), state, index, id(frame), frame.f_code,
                                      gone, -1, 0))
        return enter(state, index, frame)

    profiler.enter = enter_after_a_ghost  # type: ignore[method-assign]
    profiler.start()
    try:
        assert oracle.run(loaded.module.main) == 5
    finally:
        profiler.stop()
        sys.modules.pop(loaded.module.__name__, None)
    assert profiler.failures == 0
    expected = sorted(tuple(s) for s in oracle.streams.values() if s)
    assert pathprof_streams(profiler, infos) == expected


LIFETIMES = '''import weakref


class Big:
    pass


def use(x):
    return x


def let_go():
    big = Big()
    ref = weakref.ref(big)
    use(big)
    del big
    return ref() is None


def main():
    return let_go()
'''


def test_observing_keeps_no_value_alive(tmp_path: Path) -> None:
    """Reading a caller's register and track must not keep its values alive: before
    3.13 ``frame.f_locals`` is a snapshot the frame keeps, and a value the program
    deleted stayed in it (``let_go`` saw its object alive under ``exact`` on 3.11
    and 3.12, a caller pathprof measures or not)."""
    path = tmp_path / "lifetimes.py"
    path.write_text(LIFETIMES, encoding="utf-8")
    loaded = load_instrumented(path, f"pathprof_lifetimes_{next(_runs)}", subpaths=True)
    loaded.execute()
    module = loaded.module
    profiler = SubpathProfiler(SubpathSampler(period=50, seed=1), exact=True)
    profiler.start()
    try:
        measured = module.main()  # let_go's call of use is noted
        big = module.Big()
        ref = weakref.ref(big)
        module.use(big)  # called from this test: the runtime is called
        del big
        unmeasured = ref() is None
    finally:
        profiler.stop()
        sys.modules.pop(module.__name__, None)
    assert profiler.failures == 0
    assert (measured, unmeasured) == (True, True)


FOLDED = '''
def same(x):
    if x:
        y = 1
    else:
        y = 2
    return y


def uneven(x):
    y = 0
    if x:
        y = 1
    return y
'''


def test_a_path_end_whose_paths_have_one_length_counts_it_down_as_a_constant() -> None:
    """Where every path ending at a probe has one length, the countdown subtracts that
    constant: ``same``'s two paths are three blocks each (the test, an arm, the
    return); ``uneven``'s are two and three, so its path end looks its length up by
    the path's number. Either way the countdown is stored and tested through the
    local ``@pp_q``."""
    from pathprof.python.instrument import instrument_source

    tree = instrument_source(FOLDED, "folded.py", subpaths=True, swaps=False).tree
    steps = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            steps[node.name] = [
                ast.unparse(s.value) for s in ast.walk(node)
                if isinstance(s, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "@pp_q" for t in s.targets)]
    assert len(steps["same"]) == 1
    assert steps["same"][0].endswith("[0] - 3")
    assert len(steps["uneven"]) == 1
    assert "_@pp_l1[" in steps["uneven"][0]
