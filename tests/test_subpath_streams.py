"""OSP's streams (``measure/subpath_streams.py``): every block sent reaches its stream
in order, however the sends are split, and with ``exact`` the exact counter counts
exactly the subpaths of each stream's sequence."""

from __future__ import annotations

import collections
import sys
import threading
from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from pathprof.measure.subpath_streams import Streams, stream_key
from pathprof.runtime.subpaths import LengthDistribution, SubpathSampler

SENDS = st.lists(st.tuples(st.integers(0, 2), st.lists(st.integers(0, 5), max_size=12)),
                 max_size=20)


def _streams(record: bool = True) -> Streams:
    sampler = SubpathSampler(period=3, budget=1000, lengths=LengthDistribution.powers(3),
                             encoding="exact", seed=7)
    return Streams(sampler, exact=True, record=record)


def _subpaths(blocks: list[int], lengths: list[int]) -> collections.Counter[tuple[int, ...]]:
    found: collections.Counter[tuple[int, ...]] = collections.Counter()
    for length in lengths:
        for start in range(len(blocks) - length + 1):
            found[tuple(blocks[start:start + length])] += 1
    return found


@given(SENDS)
def test_each_stream_receives_its_blocks_in_order_and_exact_counts_its_subpaths(
        sends: list[tuple[int, list[int]]]) -> None:
    streams = _streams()
    joined: dict[tuple[str, int], list[int]] = {}
    for key, idents in sends:
        streams.send(("thread", key), idents)
        joined.setdefault(("thread", key), []).extend(idents)
    assert streams.record == {k: v for k, v in joined.items() if v}
    assert streams.sampler.positions == sum(len(v) for v in joined.values())
    expected: collections.Counter[tuple[int, ...]] = collections.Counter()
    for blocks in joined.values():
        expected += _subpaths(blocks, [2, 4, 8])
    assert streams.exact is not None
    assert dict(streams.exact.counts) == dict(expected)


def test_a_closed_stream_starts_afresh() -> None:
    streams = _streams()
    streams.send(("thread", 1), [1, 2, 3])
    streams.close(("thread", 1))
    streams.send(("thread", 1), [4, 5])
    assert streams.exact is not None
    # no subpath runs across the close: (3, 4) is not one
    assert (3, 4) not in streams.exact.counts
    assert streams.exact.counts[(4, 5)] == 1
    assert streams.record == {("thread", 1): [1, 2, 3, 4, 5]}


def test_nothing_sent_opens_no_stream() -> None:
    streams = _streams()
    streams.send(("thread", 1), [])
    assert streams.record == {}
    assert list(streams.windows()) == []


def test_a_generator_has_a_stream_of_its_own_and_a_plain_call_its_threads() -> None:
    def generator() -> Iterator[tuple[str, int]]:
        yield stream_key(sys._getframe())

    def plain() -> tuple[str, int]:
        return stream_key(sys._getframe())

    inside = generator()
    own = next(inside)
    assert own[0] == "frame"
    assert plain() == ("thread", threading.get_ident())
    seen: list[tuple[str, int]] = []
    worker = threading.Thread(target=lambda: seen.append(plain()))
    worker.start()
    worker.join()
    assert seen[0][0] == "thread"
    assert seen[0] != plain()
