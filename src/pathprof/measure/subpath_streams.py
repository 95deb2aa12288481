"""The streams OSP's sampler reads (:mod:`pathprof.measure.subpaths`): one per thread
and per generator or coroutine frame, each a stream of the sampler's (and, with
``exact``, of the exact counter's), opened when its first block comes and closed
when its frame ends or observation stops.

Invariant: every block id sent to a stream reaches its sampler stream, and, with
``exact``, its exact stream, in the order sent; with ``record`` (tests) it is kept
under the stream's key too.
"""

from __future__ import annotations

import _thread
from collections.abc import Hashable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, TypedDict

from pathprof.runtime.subpaths import ExactSubpathCounter, SubpathSampler

if TYPE_CHECKING:
    from pathprof.runtime.subpaths import StreamState, _Window

    class Moment(TypedDict):
        """One checkpoint (:attr:`Streams.moments`): the blocks seen so far, and the
        rank among the estimates of each of the exact top 5 (None: not in the sample)."""

        positions: int
        ranks: list[int | None]

__all__ = ["OWN_STREAM", "Streams", "stream_key"]

#: Code flags of the frames that have a stream of their own.
OWN_STREAM = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR


def stream_key(frame: FrameType | None) -> tuple[str, int]:
    """The stream ``frame``'s blocks go to: the nearest generator or coroutine frame
    from it down the stack, else its thread."""
    while frame is not None:
        if frame.f_code.co_flags & OWN_STREAM:
            return ("frame", id(frame))
        frame = frame.f_back
    return ("thread", _thread.get_ident())


class Streams:
    """The open streams, by key (:func:`stream_key`)."""

    def __init__(self, sampler: SubpathSampler, *, exact: bool = False,
                 record: bool = False, checkpoint_every: int = 0) -> None:
        self.sampler = sampler
        #: with ``record`` (tests): every block id each stream received, by stream
        self.record: dict[Hashable, list[int]] | None = {} if record else None
        #: with ``exact`` and ``checkpoint_every`` N: every N blocks, the exact top 5
        #: so far and each one's rank among the estimates (Oren's Table 4.11)
        self.checkpoint_every = checkpoint_every if exact else 0
        self.moments: list[Moment] = []
        self.exact = ExactSubpathCounter(sorted(sampler.lengths.probabilities),
                                         sampler.encoding) if exact else None
        self._open: dict[Hashable, tuple[StreamState, ExactSubpathCounter | None]] = {}

    def send(self, key: Hashable, idents: list[int]) -> None:
        """The blocks ``idents`` ran next in stream ``key``."""
        if not idents:
            return
        stream, exact = self._stream(key)
        if exact is None:
            stream.blocks(idents)
        elif not self.checkpoint_every:
            stream.blocks(idents)
            exact.blocks(idents)
        else:
            for ident in idents:
                stream.block(ident)
                exact.block(ident)
                if self.sampler.positions % self.checkpoint_every == 0 and exact.counts:
                    self._checkpoint()
        if self.record is not None:
            self.record[key].extend(idents)

    def close(self, key: Hashable) -> None:
        """Stream ``key`` ended (its frame did): its open windows end short."""
        found = self._open.pop(key, None)
        if found is not None:
            found[0].close()
            if found[1] is not None:
                found[1].close()

    def close_all(self) -> None:
        """Observation stops: every sampler stream ends (the exact ones go on)."""
        for stream, _exact in self._open.values():
            stream.close()
        self._open.clear()

    def windows(self) -> Iterator[_Window]:
        """The sample windows open in every stream."""
        for stream, _exact in self._open.values():
            yield from stream.windows

    def _stream(self, key: Hashable) -> tuple[StreamState, ExactSubpathCounter | None]:
        found = self._open.get(key)
        if found is None:
            exact = self.exact.stream() if self.exact is not None else None
            found = self._open[key] = (self.sampler.stream(), exact)
            if self.record is not None:
                self.record.setdefault(key, [])
        return found

    def _checkpoint(self) -> None:
        """The exact top 5 so far, and each one's rank among the estimates (None: not
        in the sample)."""
        from pathprof.analysis.subpaths import estimate_subpaths, rank_agreement

        assert self.exact is not None
        estimated = [e.blocks for e in estimate_subpaths(self.sampler.snapshot())]
        self.moments.append({"positions": self.sampler.positions,
                             "ranks": rank_agreement(estimated, self.exact.counts, k=5)})
