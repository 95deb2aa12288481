"""pathprof.runtime.tracks: a frame's track in OSP's stream of observed blocks. A
blank track (made by instrumented code, no ``__init__``) has no field until
:func:`fill` sets every one; :func:`new_track` makes one filled; ``join`` starts the
frame's path afresh in a new observation (a held ``__exit__``'s track going home);
:func:`fill_dropped` fills the blank tracks of call notes taken unread as from an
earlier observation, in the caller's stream, and leaves path notes alone."""

from __future__ import annotations

from typing import Any

import pytest

from pathprof.runtime.tracks import CALL_NOTE, Track, fill, fill_dropped, new_track

STATE: Any = object()  # the module state a track names; nothing of it is read here
FIELDS = ("code", "decoded", "emitted", "ended_at", "frame", "generation", "held", "home",
          "index", "sent", "state", "stream")


def _code() -> Any:
    return (lambda: None).__code__


def test_a_blank_track_has_no_field_and_shows_so() -> None:
    track = Track()
    for name in FIELDS:
        with pytest.raises(AttributeError):
            getattr(track, name)
    assert repr(track) == "<Track ? ?>"
    with pytest.raises(AttributeError):
        track.other = 1  # type: ignore[attr-defined]  # (slots: nothing else)


def test_fill_sets_every_field_and_returns_the_track() -> None:
    track = Track()
    code = _code()
    assert fill(track, STATE, 3, ("thread", 17), 4, 2, frame=99, home=("thread", 1),
                generation=5, code=code) is track
    assert {name: getattr(track, name) for name in FIELDS} == {
        "code": code, "decoded": None, "emitted": 4, "ended_at": None, "frame": 99,
        "generation": 5, "held": [], "home": ("thread", 1), "index": 3, "sent": 2,
        "state": STATE, "stream": ("thread", 17)}
    assert repr(track) == "<Track 99 ('thread', 17)>"


def test_fill_starts_a_used_track_over() -> None:
    track = new_track(STATE, 0, ("thread", 1), 6, 6, frame=1, generation=1)
    track.held.append(([1, 2], (3, 4), None, None))
    track.ended_at = 7
    track.decoded = {0: ([1], True, None)}
    fill(track, STATE, 2, ("frame", 8), frame=8, generation=2)
    assert (track.index, track.stream, track.emitted, track.sent) == (2, ("frame", 8), 0, 0)
    assert (track.held, track.ended_at, track.decoded, track.home, track.code) == (
        [], None, None, None, None)


def test_new_track_is_a_filled_track_of_its_own() -> None:
    first = new_track(STATE, 1, ("thread", 2), frame=3, generation=4)
    second = new_track(STATE, 1, ("thread", 2), frame=3, generation=4)
    assert first is not second
    assert first.held is not second.held  # each its own list
    assert {n: getattr(first, n) for n in FIELDS} == {n: getattr(second, n) for n in FIELDS}
    assert (first.emitted, first.sent, first.home, first.code) == (0, 0, None, None)


def test_joining_afresh_forgets_what_of_the_path_went_out() -> None:
    track = new_track(STATE, 0, ("thread", 5), 3, 2, frame=1, home=("thread", 9),
                      generation=1)
    track.held.append(([4], (1, 2), 5, (3,)))
    track.ended_at = 6
    track.join(8)
    assert (track.generation, track.emitted, track.sent, track.held, track.ended_at) == (
        8, 0, 0, [], None)
    assert track.stream == ("thread", 5)  # not a hold: its stream stays


def test_a_held_exits_track_joins_its_home_stream() -> None:
    track = new_track(STATE, 0, ("hold", 12), frame=12, home=("frame", 40), generation=1)
    track.join(2)
    assert track.stream == ("frame", 40)
    homeless = new_track(STATE, 0, ("hold", 13), frame=13, generation=1)
    homeless.join(2)
    assert homeless.stream == ("hold", 13)  # nowhere else to go


def test_a_call_note_taken_unread_fills_its_blank_track_in_the_callers_stream() -> None:
    code = _code()
    caller = new_track(STATE, 0, ("frame", 77), frame=77, generation=3)
    blank = Track()
    note = (blank, STATE, 4, 123, code, caller, 10, 0)
    assert len(note) == CALL_NOTE == 8
    fill_dropped([note])  # type: ignore[list-item]
    assert (blank.state, blank.index, blank.frame, blank.code) == (STATE, 4, 123, code)
    assert (blank.stream, blank.home, blank.generation) == (("frame", 77), ("frame", 77), -1)
    assert (blank.emitted, blank.sent, blank.held) == (0, 0, [])
    blank.join(4)  # a later note of the frame: it joins afresh
    assert (blank.generation, blank.stream) == (4, ("frame", 77))


def test_a_call_from_a_held_exit_goes_to_the_exits_home_or_the_first_thread() -> None:
    held = new_track(STATE, 0, ("hold", 5), frame=5, home=("thread", 2), generation=1)
    homeless = new_track(STATE, 0, ("hold", 6), frame=6, generation=1)
    first, second = Track(), Track()
    fill_dropped([(first, STATE, 0, 1, None, held, 0, 0),  # type: ignore[list-item]
                  (second, STATE, 0, 2, None, homeless, 0, 0)])
    assert first.stream == first.home == ("thread", 2)
    assert second.stream == second.home == ("thread", 0)


def test_a_call_whose_caller_is_blank_too_goes_to_the_first_thread() -> None:
    caller, callee = Track(), Track()
    notes: list[Any] = [(caller, STATE, 0, 1, None, None, 0, 0),
                        (callee, STATE, 1, 2, None, caller, 0, 0)]
    fill_dropped(notes)
    assert caller.stream == ("thread", 0)  # (no caller: a frame pathprof does not measure)
    assert callee.stream == ("thread", 0)  # filled by the note before, in order
    late = Track()
    fill_dropped([(late, STATE, 0, 3, None, Track(), 0, 0)])  # type: ignore[list-item]
    assert late.stream == ("thread", 0)


def test_path_notes_are_left_alone() -> None:
    track = new_track(STATE, 0, ("thread", 1), 5, 1, frame=1, generation=2)
    fill_dropped([(track, 3), (track, 4)])
    assert (track.emitted, track.sent, track.generation, track.stream) == (
        5, 1, 2, ("thread", 1))
