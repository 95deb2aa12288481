"""A frame's track in the stream of observed blocks (OSP, :mod:`pathprof.measure.subpaths`).

Instrumented code makes a blank :class:`Track` for its frame when a call begins
while blocks are observed (``_@pp_T()``: the class has no ``__init__`` of its own,
so making one runs no Python frame) and notes it with what the call's caller was
doing; the profiler fills it in when it takes that note (:func:`fill`), before any
other note that names it. Everywhere else the profiler makes tracks with
:func:`new_track`.

Invariant: a track is read only after :func:`fill` or :func:`new_track` set every
field (the notes are taken in the order they were made, and notes dropped unread
fill the blanks in them: :func:`fill_dropped`).
"""

from __future__ import annotations

from types import CodeType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import Final, TypeAlias

    from pathprof.runtime import ModuleState
    from pathprof.runtime.stopping import Parked

    #: A note of a path end: ``(track, path number)`` (a register that is
    #: :data:`~pathprof.runtime.stopping.PARKED` gives no number: it stays PARKED).
    PathNote: TypeAlias = "tuple[Track, int | Parked]"
    #: A note of a call (:data:`CALL_NOTE` long): its frame's blank track, module
    #: state, function index, frame id, code, the caller's track, the caller's
    #: instruction offset, the caller's register. (Any: the register is an int or
    #: PARKED, and measure/subpaths.py, which tells them apart by ``__class__``, passes
    #: it on as an int.)
    CallNote: TypeAlias = tuple["Track", ModuleState, int, int, CodeType, "Track", int, Any]
    #: What instrumented code notes in :data:`pathprof.runtime.osp_notes`.
    Note: TypeAlias = PathNote | CallNote

__all__ = ["Hold", "StreamKey", "Track", "fill", "fill_dropped", "new_track"]

#: A stream's key: ``("thread", thread id)``, ``("frame", id of a generator's or
#: coroutine's frame)``, or ``("hold", id of a with's ``__exit__`` frame)``.
StreamKey = tuple[str, int]
#: A with statement's held exit: its held block ids, the with's line span, its
#: with-after block, and the blocks before the exit as far as its call tells.
Hold = tuple[list[int], tuple[int, int], "int | None", "tuple[int, ...] | None"]


class Track:
    """A frame being observed: its function, its stream, how many blocks of its
    current path are already in the stream, and the blocks of a with statement's
    ``__exit__`` it called that wait for their place."""

    __slots__ = ("code", "decoded", "emitted", "ended_at", "frame", "generation", "held",
                 "home", "index", "sent", "state", "stream")

    state: ModuleState
    index: int
    stream: StreamKey
    #: how many blocks of the frame's current path went out
    emitted: int
    #: of those, the blocks counted in the positions (sent, or counted unseen when
    #: observation began): the countdown counts them again where the path ends
    sent: int
    #: per with statement whose exit is held, innermost first: (held block ids, the
    #: with's line span, its with-after block, the blocks before the exit as far as
    #: its call tells)
    held: list[Hold]
    #: the last block of the path that ended last, until a block of the next goes out
    ended_at: int | None
    #: the frame's id: its key in the profiler's frames (the frame holds the track in
    #: a local, so the id is its own while the track is noted)
    frame: int
    #: the stream of a held ``__exit__``'s frame once nothing holds it
    home: StreamKey | None
    #: the function's paths as noted path ends need them (shared by its frames):
    #: path number -> (the stream ids of its blocks, whether it returns, its last
    #: block or None)
    #: (Any: a ``tuple[list[int], bool, int | None]``, but measure/subpaths.py reuses
    #: the name it reads one into for other tuples)
    decoded: dict[int, Any] | None
    #: the observation the track was made in (changes as each observation ends)
    generation: int
    #: the frame's code (what a call it makes is located in)
    #: (Any: a CodeType, or None for a track made without one, as tests make them;
    #: measure/subpath_decoder.py and measure/subpaths.py use it as a CodeType)
    code: Any

    def join(self, generation: int) -> None:
        """The frame joins the stream afresh (its track is from an earlier
        observation, or was dropped): nothing of its path went out."""
        self.generation = generation
        self.emitted = self.sent = 0
        self.held = []
        self.ended_at = None
        if self.stream[0] == "hold" and self.home is not None:  # (a hold has a home)
            self.stream = self.home

    def __repr__(self) -> str:
        return f"<Track {getattr(self, 'frame', '?')} {getattr(self, 'stream', '?')}>"


def fill(track: Track, state: ModuleState, index: int, stream: StreamKey, emitted: int = 0,
         sent: int = 0, *, frame: int, home: StreamKey | None = None, generation: int,
         code: CodeType | None = None) -> Track:
    """Set every field of ``track``; returns it."""
    track.state = state
    track.index = index
    track.stream = stream
    track.emitted = emitted
    track.sent = sent
    track.held = []
    track.ended_at = None
    track.frame = frame
    track.home = home
    track.decoded = None
    track.generation = generation
    track.code = code
    return track


def new_track(state: ModuleState, index: int, stream: StreamKey, emitted: int = 0,
              sent: int = 0, *, frame: int, home: StreamKey | None = None, generation: int,
              code: CodeType | None = None) -> Track:
    """A track with every field set."""
    return fill(Track(), state, index, stream, emitted, sent, frame=frame, home=home,
                generation=generation, code=code)


#: The length of a note a call makes (see :func:`pathprof.python.probecode.note_call`):
#: (its frame's blank track, module state, function index, frame id, code, the
#: caller's track, the caller's instruction offset, the caller's register).
CALL_NOTE: Final = 8


def fill_dropped(notes: list[Note]) -> None:
    """Notes taken unread (made as observation stopped, or before it began): the
    blank tracks calls made in them are filled in as from an earlier observation,
    so that the frames' later notes join the stream afresh."""
    for note in notes:
        if len(note) == CALL_NOTE:
            track, state, index, frame, code, caller = note[:6]
            stream = getattr(caller, "stream", None)
            if stream is None or stream[0] == "hold":
                stream = getattr(caller, "home", None) or ("thread", 0)
            fill(track, state, index, stream, frame=frame, home=stream, generation=-1,
                 code=code)
